/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * scx_soryu: anti-starvation. A level not served for --starve-ms is
 * served ahead of every better level, and the served task holds a grant:
 * a whole slice that no wakeup takes away (kept across a stray kick in
 * ops.enqueue). The bound is argued in docs/design.md.
 * Included by main.bpf.c, after its globals and maps.
 */

/*
 * The task just served from a starving level is the worst-level task on any
 * CPU, so the next wakeup anywhere would kick it off again, often before it
 * ran at all, and back at the tail of its level it would wait a whole round
 * again. Likewise the rest of an old slice may end at the very next tick.
 * So the served task gets a whole fresh slice, and ops.running shows this
 * CPU to try_preempt() as running the best level until the task stops.
 */
static void grant_slice(void)
{
	u32 zero = 0;
	struct cpu_ctx *cctx = bpf_map_lookup_elem(&cpu_ctxs, &zero);

	if (cctx)
		cctx->starve_grant = true;
}

/*
 * Anti-starvation: a level not served for starve_ns gets a CPU ahead of
 * every better level. The timestamp compare is free; only a stale level
 * costs an nr_queued read, and the bitmap is not asked (with clearing on,
 * its bit may be wrong, see probe_level()).
 */
static bool serve_starved(u64 now, struct soryu_stats *st)
{
	u32 lvl;

	bpf_for(lvl, 0, SORYU_NR_LEVELS) {
		u64 *ls = MEMBER_VPTR(last_served, [lvl]);

		/*
		 * Stamps come from every CPU's clock, which may run a little
		 * ahead of ours: compare wrap-safe, never by subtraction.
		 */
		if (!ls || !time_after(now, READ_ONCE(*ls) + starve_ns))
			continue;
		if (scx_bpf_dsq_nr_queued(lvl) <= 0) {
			/* empty: nothing starves here, look again in starve_ns */
			WRITE_ONCE(*ls, now);
			continue;
		}
		if (probe_level(lvl, st)) {
			WRITE_ONCE(*ls, now);
			stat_add(st, SORYU_CNT_STARVE_SERVE, 1);
			grant_slice();
			return true;
		}
	}
	return false;
}
