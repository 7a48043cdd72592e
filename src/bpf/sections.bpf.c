/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * scx_soryu: timed sections, for profiling builds only. bpf_stats gives
 * each callback's time as a whole; a build with -DSORYU_SECTIONS
 * (bench/sections.sh) also adds the time and count of the sections of
 * intf.h's enum soryu_section to the map `sections`. In every other
 * build TIMED(sec, expr) is just expr, and nothing here exists.
 * bpf_ktime_get_ns() is read twice per section, so the figures include
 * that cost (under emulation, a few hundred nanoseconds); what they tell
 * is where a callback's time goes, not its exact cost.
 * Included by main.bpf.c before the mechanisms that use it.
 */
#ifdef SORYU_SECTIONS
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2 * SORYU_NR_SECTIONS);
	__type(key, u32);
	__type(value, u64);
} sections SEC(".maps");

static void section_add(u32 sec, u64 t0)
{
	u64 d = bpf_ktime_get_ns() - t0, *v;
	u32 n = sec + SORYU_NR_SECTIONS;

	if ((v = bpf_map_lookup_elem(&sections, &sec)))
		__sync_fetch_and_add(v, d);
	if ((v = bpf_map_lookup_elem(&sections, &n)))
		__sync_fetch_and_add(v, 1);
}

/* @expr's value, its time added to section @sec */
#define TIMED(sec, expr) ({						\
	u32 __sec = (sec);						\
	u64 __t0 = bpf_ktime_get_ns();					\
	typeof(expr) __r = (expr);					\
	section_add(__sec, __t0);					\
	__r;								\
})

/* the section a move of @dsq's head to this CPU falls in */
static u32 move_section(u64 dsq)
{
	struct task_struct *head = __COMPAT_scx_bpf_dsq_peek(dsq);

	return head && scx_bpf_task_cpu(head) == bpf_get_smp_processor_id() ?
		SORYU_SEC_MOVE_LOCAL : SORYU_SEC_MOVE_REMOTE;
}
#else
#define TIMED(sec, expr) (expr)
#define move_section(dsq) 0
#endif
