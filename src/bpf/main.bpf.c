/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * scx_soryu: BMQ's bitmap queue as a sched_ext scheduler.
 *
 * Tasks sit in 33 levels, one DSQ per level shared by all CPUs. A task's
 * level folds its nice value and a dynamic boost (policy.h): sleeping
 * improves the boost, using up slices worsens it. Lower levels run first,
 * strictly; inside a level, FIFO (or vtime with --vtime). The one-word
 * lvl_bitmap says which levels may hold tasks, so dispatch only probes
 * those. A level not served for --starve-ms is served ahead of everything,
 * which BMQ itself never does. A queued task that outranks the level running
 * on some CPU kicks that CPU.
 *
 * The design, with the race arguments in full, is in docs/design.md.
 */
#include <scx/common.bpf.h>
#include "intf.h"
#include "policy.h"

char _license[] SEC("license") = "GPL";

UEI_DEFINE(uei);

#define PF_KTHREAD	0x00200000

/* Knobs, written by the daemon before load and read-only after. */
const volatile u64 slice_ns = 1000ULL * 1000;
const volatile u64 starve_ns = 100ULL * 1000 * 1000;
const volatile bool clear_bitmap;
const volatile bool boost_on_wake;
const volatile bool vtime_on;
/* --no-hist clears it: no wake stamps, latency, boost or level histograms. */
const volatile bool hist_on = true;
/*
 * Fault injection for the tests (hidden --inject-error-ms): the first
 * dispatch this long after load ends the scheduler with scx_bpf_error(), the
 * way a real BPF-side failure would. 0, the default, lets the verifier
 * prune the check away.
 */
const volatile u64 inject_error_ns;
u64 loaded_at;
/*
 * More fault injection (hidden flags, tests only; zero by default, and the
 * verifier then prunes every use):
 * --inject-stall COMM: tasks named COMM are never queued once they get to
 * ops.enqueue, so the kernel's watchdog must eject the scheduler with a
 * "runnable task stall" naming one of them.
 * --inject-verifier-reject: init takes a path with an unchecked map value,
 * which the verifier refuses, as it would a real bug.
 */
const volatile char stall_comm[16];
const volatile bool inject_verifier_reject;

/*
 * The three shared words below each live in a section of their own, hence a
 * map and a cache line of their own: a write to one never invalidates a
 * CPU's copy of another.
 *
 * Bit n set: level n may hold tasks. Set-only by default, so after warm-up
 * every CPU holds its line shared and reads it for free. With --clear-bitmap
 * dispatch also clears bits (see probe_level()).
 */
u64 lvl_bitmap SEC(".data.lvl_bitmap");

/*
 * When each level last gave a task to a CPU (or was last found empty by the
 * anti-starvation pass). Rate-limited writes keep these lines read-mostly.
 */
u64 last_served[SORYU_NR_LEVELS] SEC(".data.last_served");

/* --vtime: the reference clock, the largest vtime that has started to run. */
u64 vtime_now SEC(".data.vtime_now");

/* Bumped by the daemon once per report; resets the per-CPU interval maxima. */
u64 stats_epoch;

/* The kernel's HZ, for reporting waits in jiffies (0: config not readable). */
extern unsigned int CONFIG_HZ __kconfig __weak;
u32 kernel_hz;

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct soryu_task_ctx);
} task_ctxs SEC(".maps");

/* Per-CPU state: the level this CPU is running, which other CPUs read. */
struct cpu_ctx {
	u32 level;
	/* the next task to run here was served by the anti-starvation pass */
	bool starve_grant;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct cpu_ctx);
} cpu_ctxs SEC(".maps");

/* Per-CPU so that counting never shares a cache line between CPUs. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct soryu_stats);
} stats SEC(".maps");

struct repair_timer {
	struct bpf_timer timer;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct repair_timer);
} repair_timers SEC(".maps");

static struct soryu_task_ctx *lookup_task_ctx(const struct task_struct *p)
{
	return bpf_task_storage_get(&task_ctxs, (struct task_struct *)p, 0, 0);
}

static struct soryu_stats *this_stats(void)
{
	u32 zero = 0;

	return bpf_map_lookup_elem(&stats, &zero);
}

static void stat_add(struct soryu_stats *st, enum soryu_counter c, u64 n)
{
	if (st && c < SORYU_NR_COUNTERS)
		st->cnt[c] += n;	/* this CPU's copy: no atomics needed */
}

static void stat_inc(enum soryu_counter c)
{
	stat_add(this_stats(), c, 1);
}

static bool is_pcpu_kthread(const struct task_struct *p)
{
	return (p->flags & PF_KTHREAD) && p->nr_cpus_allowed == 1;
}

static u32 task_level(const struct task_struct *p, const struct soryu_task_ctx *tctx)
{
	return soryu_level(p->policy, is_pcpu_kthread(p),
			   (int)p->static_prio - 120, tctx->boost);
}

/* What is left of the task's slice; a used-up slice was refilled in charge(). */
static u64 slice_left(const struct soryu_task_ctx *tctx)
{
	return tctx->used_ns < slice_ns ? slice_ns - tctx->used_ns : slice_ns;
}

/*
 * Charge the runtime since the last charge against the slice (and, with
 * --vtime, against the task's virtual time). se.sum_exec_runtime is the clock
 * the kernel itself burns p->scx.slice with, so "slice used up" here agrees
 * with the kernel even when a preemption kick zeroed p->scx.slice early:
 * such a task keeps the rest of its slice and is not deboosted.
 */
static void charge(struct task_struct *p, struct soryu_task_ctx *tctx)
{
	u64 exec = p->se.sum_exec_runtime;
	u64 ran = exec - tctx->exec_base;

	tctx->exec_base = exec;
	if (vtime_on)
		p->scx.dsq_vtime += ran;	/* unweighted: nice lives in the level */
	tctx->used_ns += ran;
	if (tctx->used_ns >= slice_ns) {
		tctx->used_ns = 0;
		tctx->boost = soryu_boost_after_expiry(tctx->boost, p->policy);
		tctx->granted = false;	/* the grant's slice was used */
	}
}

/*
 * Advertise that @lvl holds tasks. Read first: once warm the bit is almost
 * always set already, and a plain load keeps the line shared on every CPU
 * where an unconditional atomic OR would bounce it between them.
 */
static void mark_level(u32 lvl)
{
	u64 bit = 1ULL << lvl;

	if (!(READ_ONCE(lvl_bitmap) & bit))
		__sync_fetch_and_or(&lvl_bitmap, bit);
}

static void note_served(u32 lvl, u64 now)
{
	u64 *ls = MEMBER_VPTR(last_served, [lvl]);

	/*
	 * Only store when the stamp is stale by a sixteenth of the threshold:
	 * a starvation check may then fire up to 1/16 early, never late, and
	 * the line is written at most 16 times per threshold per level.
	 */
	if (ls && time_after(now, READ_ONCE(*ls) + (starve_ns >> 4)))
		WRITE_ONCE(*ls, now);
}

/*
 * Try to move one task of @lvl onto this CPU. With --clear-bitmap, a probe
 * that finds the level empty clears its bit and then re-checks the queued
 * count:
 *
 *   dispatcher (this CPU)             enqueuer (another CPU)
 *   clear bit L     (store)           task lands in DSQ L (nr_queued++)
 *   smp_mb()                          ...
 *   read nr_queued(L) (load)          set bit L (or find it set)
 *
 * The clear is a store and the re-check a load of another location: exactly
 * the pair a store buffer may reorder, even on x86. __sync_fetch_and_and()
 * with its result used compiles to BPF_FETCH, a fully ordered RMW, so the
 * re-check cannot be satisfied before the clear is visible: a task already
 * counted in the DSQ when we clear is always seen, and its bit set again.
 *
 * What no barrier here can close: ops.enqueue() sets (or sees) the bit
 * *before* the kernel puts the task on the DSQ (scx_bpf_dsq_insert() from
 * ops.enqueue() only records the target). A clear that falls between the
 * two leaves a queued task behind a clear bit. Two mechanisms bound how long
 * it waits: the repair timer (every SORYU_REPAIR_PERIOD_NS it sets the bit
 * of every non-empty level and wakes an idle CPU) and the anti-starvation
 * pass, which reads DSQ counts without consulting the bitmap.
 */
static bool probe_level(u32 lvl, struct soryu_stats *st)
{
	u64 bit = 1ULL << lvl;
	u64 old;

	stat_add(st, SORYU_CNT_PROBES, 1);
	if (scx_bpf_dsq_move_to_local(lvl, 0))
		return true;
	if (!clear_bitmap)
		return false;

	old = __sync_fetch_and_and(&lvl_bitmap, ~bit);
	if (!(old & bit))
		return false;	/* another CPU cleared it: its re-check covers us */
	if (scx_bpf_dsq_nr_queued(lvl) > 0)
		__sync_fetch_and_or(&lvl_bitmap, bit);
	else
		stat_add(st, SORYU_CNT_BITMAP_CLEAR, 1);
	return false;
}

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

/* Walk the levels the bitmap advertises, best first, below @limit. */
static bool scan_levels(u32 limit, u64 now, struct soryu_stats *st)
{
	u64 bm = READ_ONCE(lvl_bitmap);
	u32 lvl;

	bpf_for(lvl, 0, SORYU_NR_LEVELS) {
		if (lvl >= limit)
			break;
		if (!(bm & (1ULL << lvl)))
			continue;
		if (probe_level(lvl, st)) {
			note_served(lvl, now);
			return true;
		}
	}
	return false;
}

/*
 * After queueing @p at @lvl, find it a CPU: an idle one, else the one
 * running the worst level that is strictly worse than @lvl (BMQ lets an
 * equal level finish its slice).
 */
static void try_preempt(struct task_struct *p, u32 lvl, struct soryu_stats *st)
{
	s32 cpu, victim = -1;
	u32 worst = lvl, zero = 0;

	stat_add(st, SORYU_CNT_PREEMPT_ATTEMPT, 1);

	cpu = scx_bpf_pick_idle_cpu(p->cpus_ptr, 0);
	if (cpu >= 0) {
		/*
		 * The kick is deferred to an irq_work that runs after the
		 * kernel has put @p on its DSQ, so the woken CPU finds it.
		 */
		scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
		stat_add(st, SORYU_CNT_PREEMPT_IDLE, 1);
		return;
	}

	bpf_for(cpu, 0, scx_bpf_nr_cpu_ids()) {
		struct cpu_ctx *cctx;
		u32 l;

		if (!bpf_cpumask_test_cpu(cpu, p->cpus_ptr))
			continue;
		cctx = bpf_map_lookup_percpu_elem(&cpu_ctxs, &zero, cpu);
		if (!cctx)
			continue;
		l = READ_ONCE(cctx->level);
		/* SORYU_LVL_NONE: never ran a soryu task, treat as worst */
		if (l > worst) {
			worst = l;
			victim = cpu;
		}
	}

	if (victim >= 0) {
		scx_bpf_kick_cpu(victim, SCX_KICK_PREEMPT);
		stat_add(st, SORYU_CNT_PREEMPT_KICK, 1);
	} else {
		stat_add(st, SORYU_CNT_PREEMPT_NONE, 1);
	}
}

s32 BPF_STRUCT_OPS(soryu_select_cpu, struct task_struct *p, s32 prev_cpu, u64 wake_flags)
{
	struct soryu_task_ctx *tctx;
	bool is_idle = false;
	s32 cpu;

	cpu = scx_bpf_select_cpu_dfl(p, prev_cpu, wake_flags, &is_idle);
	if (!is_idle || !(tctx = lookup_task_ctx(p)))
		return cpu;

	/* An idle CPU needs no ordering decision: run there right away. */
	if (scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, slice_left(tctx), 0))
		stat_inc(SORYU_CNT_DIRECT);
	else
		stat_inc(SORYU_CNT_INSERT_FAIL);
	return cpu;
}

/*
 * A task became runnable. On a wakeup: stamp the wake time and class for the
 * wake-to-run histogram, then apply --boost-on-wake.
 */
void BPF_STRUCT_OPS(soryu_runnable, struct task_struct *p, u64 enq_flags)
{
	struct soryu_task_ctx *tctx;
	u64 now;

	if (!(enq_flags & SCX_ENQ_WAKEUP) || !(hist_on || boost_on_wake) ||
	    !(tctx = lookup_task_ctx(p)))
		return;

	now = scx_bpf_now();
	/*
	 * The class is taken before --boost-on-wake moves the boost, so that
	 * the knob on and off sort the same wakeups into the same classes and
	 * an on/off comparison compares like with like.
	 */
	if (hist_on) {
		tctx->wake_at = now;
		tctx->wake_class = tctx->boost < 0 ? SORYU_CLASS_INTERACTIVE : SORYU_CLASS_OTHER;
	}
	if (boost_on_wake && tctx->last_ran)
		tctx->boost = soryu_boost_on_wake(tctx->boost, p->policy,
						  now - tctx->last_ran);
}

/* --inject-stall: is @p one of the tasks to strand? */
static bool stall_injected(const struct task_struct *p)
{
	int i;

	if (!stall_comm[0])
		return false;
	/* unrolled: constant offsets into p->comm, as the verifier requires */
#pragma unroll
	for (i = 0; i < sizeof(stall_comm); i++) {
		if (stall_comm[i] != p->comm[i])
			return false;
		if (!stall_comm[i])
			break;
	}
	return true;
}

void BPF_STRUCT_OPS(soryu_enqueue, struct task_struct *p, u64 enq_flags)
{
	struct soryu_stats *st = this_stats();
	struct soryu_task_ctx *tctx;
	u64 slice, vt, floor;
	bool ok;
	u32 lvl, b;

	if (!(tctx = lookup_task_ctx(p))) {
		scx_bpf_error("soryu: no task context for %s[%d]", p->comm, p->pid);
		return;
	}

	lvl = task_level(p, tctx);
	tctx->enq_level = lvl;
	tctx->queued_at = scx_bpf_now();
	if (stall_injected(p))
		return;	/* stranded on purpose: the watchdog must notice */
	slice = slice_left(tctx);
	/*
	 * A task still holding a starvation grant is back before its slice ran
	 * out: a kick aimed at this CPU before the grant showed in cpu_ctx
	 * (try_preempt() reads it without a lock), or a higher class took the
	 * CPU. It resumes where it was, ahead of everything else there, on
	 * what is left of its slice. Sending it back through its level instead
	 * would need a second serve, which restarts the level's starvation
	 * clock: every other task starving there would wait one more round.
	 */
	if (tctx->granted) {
		if (scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, slice, enq_flags | SCX_ENQ_HEAD))
			stat_add(st, SORYU_CNT_DIRECT, 1);
		else
			stat_add(st, SORYU_CNT_INSERT_FAIL, 1);
		return;
	}
	mark_level(lvl);

	if (vtime_on) {
		/* A sleeper's credit is worth at most one slice. */
		vt = p->scx.dsq_vtime;
		floor = READ_ONCE(vtime_now) - slice_ns;
		if (time_before(vt, floor))
			vt = floor;
		ok = scx_bpf_dsq_insert_vtime(p, lvl, slice, vt, enq_flags);
	} else {
		ok = scx_bpf_dsq_insert(p, lvl, slice, enq_flags);
	}

	if (!ok) {
		stat_add(st, SORYU_CNT_INSERT_FAIL, 1);
		return;
	}
	stat_add(st, SORYU_CNT_ENQUEUE, 1);
	if (st && hist_on) {
		if (lvl < SORYU_NR_LEVELS)
			st->level_hist[lvl]++;
		/* unsigned index: one bounds check the verifier can follow */
		b = (u32)(tctx->boost + SORYU_MAX_BOOST);
		if (b < SORYU_BOOST_SPAN)
			st->boost_hist[b]++;
	}
	try_preempt(p, lvl, st);
}

void BPF_STRUCT_OPS(soryu_dispatch, s32 cpu, struct task_struct *prev)
{
	struct soryu_stats *st = this_stats();
	struct soryu_task_ctx *pctx = NULL;
	struct cpu_ctx *cctx;
	u32 limit = SORYU_NR_LEVELS, zero = 0, lvl = SORYU_LVL_NONE;
	u64 now = scx_bpf_now(), probes_before, probes;

	if (!st)
		return;	/* never: a per-CPU array always has entry 0 */
	probes_before = st->cnt[SORYU_CNT_PROBES];
	if (inject_error_ns && now - loaded_at > inject_error_ns) {
		scx_bpf_error("soryu: error injected by --inject-error-ms");
		return;
	}

	/*
	 * The kernel calls us while @prev, its slice used up, is still on the
	 * CPU and in no DSQ. It competes with the queue: charge it (deboosting
	 * it if the slice is spent), then only take a task from a level at
	 * least as good, so an equal level round-robins and a worse one waits.
	 */
	if (prev && (prev->scx.flags & SCX_TASK_QUEUED) && (pctx = lookup_task_ctx(prev))) {
		charge(prev, pctx);
		lvl = task_level(prev, pctx);
		/* a starvation grant is not taken away by better levels */
		limit = pctx->granted ? 0 : lvl + 1;
	}

	if (serve_starved(now, st) || scan_levels(limit, now, st)) {
		stat_add(st, SORYU_CNT_DISPATCH, 1);
	} else if (pctx) {
		/* Nothing better queued: keep @prev on the rest of its slice. */
		scx_bpf_task_set_slice(prev, slice_left(pctx));
		if ((cctx = bpf_map_lookup_elem(&cpu_ctxs, &zero)))
			cctx->level = lvl;
		stat_add(st, SORYU_CNT_KEEP, 1);
	} else {
		stat_add(st, SORYU_CNT_DISPATCH_EMPTY, 1);
	}

	/*
	 * Probes of this call, read back from the map rather than counted in a
	 * local: a local used as an index would make the verifier track its
	 * exact value through both level loops and never converge.
	 */
	probes = st->cnt[SORYU_CNT_PROBES] - probes_before;
	if (probes <= SORYU_MAX_PROBES)
		st->probe_hist[probes]++;
}

/* Keep the per-CPU longest wait of the current epoch. */
static void note_wait(struct soryu_stats *st, u32 class, u64 wait)
{
	u64 epoch = READ_ONCE(stats_epoch);

	if (st->max_wait_epoch != epoch) {
		st->max_wait_epoch = epoch;
		st->max_wait_ns[0] = 0;
		st->max_wait_ns[1] = 0;
	}
	if (class < SORYU_NR_CLASSES && wait > st->max_wait_ns[class])
		st->max_wait_ns[class] = wait;
}

void BPF_STRUCT_OPS(soryu_running, struct task_struct *p)
{
	struct soryu_stats *st = this_stats();
	struct soryu_task_ctx *tctx;
	struct cpu_ctx *cctx;
	u32 zero = 0, lvl, class, b;
	u64 now, wait;

	if (!(tctx = lookup_task_ctx(p)))
		return;

	tctx->exec_base = p->se.sum_exec_runtime;
	tctx->queued_at = 0;
	lvl = task_level(p, tctx);
	if ((cctx = bpf_map_lookup_elem(&cpu_ctxs, &zero))) {
		cctx->level = lvl;
		if (cctx->starve_grant) {
			/* a starvation serve: a whole slice, unpreemptible */
			cctx->starve_grant = false;
			tctx->granted = true;
			tctx->used_ns = 0;
			scx_bpf_task_set_slice(p, slice_ns);
		}
		if (tctx->granted)
			cctx->level = SORYU_LVL_PCPU_KTHREAD;
	}

	/*
	 * vtime_now only moves forward. Racing CPUs may lose an update to each
	 * other; the clock then lags by one task's vtime at most, which only
	 * shifts the sleeper-credit floor a little.
	 */
	if (vtime_on && time_before(READ_ONCE(vtime_now), p->scx.dsq_vtime))
		WRITE_ONCE(vtime_now, p->scx.dsq_vtime);

	if (!st)
		return;
	if (tctx->enq_level != SORYU_LVL_NONE && tctx->enq_level != lvl)
		stat_add(st, SORYU_CNT_LEVEL_MISMATCH, 1);
	tctx->enq_level = SORYU_LVL_NONE;

	if (!tctx->wake_at)
		return;
	now = scx_bpf_now();
	wait = now - tctx->wake_at;
	tctx->wake_at = 0;
	class = tctx->wake_class;
	b = soryu_lat_bucket(wait);
	if (class < SORYU_NR_CLASSES && b < SORYU_NR_LAT_BUCKETS) {
		st->lat_hist[class][b]++;
		stat_add(st, SORYU_CNT_WAKEUPS, 1);
		note_wait(st, class, wait);
	}
}

void BPF_STRUCT_OPS(soryu_stopping, struct task_struct *p, bool runnable)
{
	struct soryu_task_ctx *tctx;

	if (!(tctx = lookup_task_ctx(p)))
		return;
	charge(p, tctx);
	tctx->last_ran = scx_bpf_now();
}

/* The task left the runqueue; only a sleep is a voluntary block. */
void BPF_STRUCT_OPS(soryu_quiescent, struct task_struct *p, u64 deq_flags)
{
	struct soryu_task_ctx *tctx;

	if ((deq_flags & SCX_DEQ_SLEEP) && (tctx = lookup_task_ctx(p))) {
		tctx->boost = soryu_boost_after_sleep(tctx->boost, p->policy);
		tctx->granted = false;	/* no longer waiting for a CPU */
	}
}

/* sched_yield(): BMQ sends the task to its worst boost on a fresh slice. */
bool BPF_STRUCT_OPS(soryu_yield, struct task_struct *from, struct task_struct *to)
{
	struct soryu_task_ctx *tctx;

	if (!to && (tctx = lookup_task_ctx(from))) {
		tctx->boost = soryu_boost_after_yield(tctx->boost, from->policy);
		tctx->used_ns = 0;
		tctx->exec_base = from->se.sum_exec_runtime;
	}
	/* the kernel only zeroes the slice itself when ops.yield is absent */
	scx_bpf_task_set_slice(from, 0);
	return false;
}

s32 BPF_STRUCT_OPS(soryu_init_task, struct task_struct *p, struct scx_init_task_args *args)
{
	struct soryu_task_ctx *tctx, *parent;

	tctx = bpf_task_storage_get(&task_ctxs, p, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!tctx)
		return -ENOMEM;
	tctx->enq_level = SORYU_LVL_NONE;

	/* BMQ: a child starts with its parent's boost. */
	if (args->fork) {
		parent = lookup_task_ctx(bpf_get_current_task_btf());
		if (parent)
			tctx->boost = parent->boost;
	}
	return 0;
}

void BPF_STRUCT_OPS(soryu_enable, struct task_struct *p)
{
	/* Start at the clock: vtime 0 would read as a huge credit. */
	p->scx.dsq_vtime = READ_ONCE(vtime_now);
}

/*
 * --clear-bitmap safety net: set the bit of any non-empty level that reads
 * clear (the enqueue race in probe_level()), then wake an idle CPU so the
 * repaired level is served even if every CPU had gone idle.
 */
static int repair_sweep(void *map, int *key, struct bpf_timer *timer)
{
	u64 bm = READ_ONCE(lvl_bitmap);
	bool repaired = false;
	u32 lvl, cpu;

	bpf_for(lvl, 0, SORYU_NR_LEVELS) {
		if ((bm & (1ULL << lvl)) || scx_bpf_dsq_nr_queued(lvl) <= 0)
			continue;
		__sync_fetch_and_or(&lvl_bitmap, 1ULL << lvl);
		/* counted in the map, not a local: keeps the loop verifiable */
		stat_inc(SORYU_CNT_BITMAP_REPAIR);
		repaired = true;
	}
	if (repaired) {
		const struct cpumask *idle = scx_bpf_get_idle_cpumask();

		cpu = bpf_cpumask_any_distribute(idle);
		scx_bpf_put_idle_cpumask(idle);
		/* no idle CPU: every CPU will dispatch when its slice ends */
		if (cpu < scx_bpf_nr_cpu_ids())
			scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
	}
	bpf_timer_start(timer, SORYU_REPAIR_PERIOD_NS, 0);
	return 0;
}

s32 BPF_STRUCT_OPS_SLEEPABLE(soryu_init)
{
	struct repair_timer *rt;
	u64 now = scx_bpf_now();
	u32 lvl, zero = 0;
	s32 ret;

	kernel_hz = CONFIG_HZ;
	loaded_at = now;
	if (inject_verifier_reject) {
		struct soryu_task_ctx *t = bpf_task_storage_get(&task_ctxs,
				bpf_get_current_task_btf(), 0, 0);

		t->boost = 0;	/* no NULL check: the verifier must refuse */
	}
	bpf_for(lvl, 0, SORYU_NR_LEVELS) {
		u64 *ls = MEMBER_VPTR(last_served, [lvl]);

		ret = scx_bpf_create_dsq(lvl, -1);
		if (ret) {
			scx_bpf_error("soryu: cannot create level DSQ %u: %d", lvl, ret);
			return ret;
		}
		if (ls)
			*ls = now;
	}

	if (!clear_bitmap)
		return 0;
	rt = bpf_map_lookup_elem(&repair_timers, &zero);
	if (!rt)
		return -ENOENT;
	bpf_timer_init(&rt->timer, &repair_timers, CLOCK_MONOTONIC);
	bpf_timer_set_callback(&rt->timer, repair_sweep);
	return bpf_timer_start(&rt->timer, SORYU_REPAIR_PERIOD_NS, 0);
}

void BPF_STRUCT_OPS(soryu_exit, struct scx_exit_info *ei)
{
	UEI_RECORD(uei, ei);
}

/* ops.dump, ops.dump_cpu, ops.dump_task: the state behind an ejection */
#include "dump.bpf.c"

SCX_OPS_DEFINE(soryu_ops,
	       .select_cpu	= (void *)soryu_select_cpu,
	       .runnable	= (void *)soryu_runnable,
	       .enqueue		= (void *)soryu_enqueue,
	       .dispatch	= (void *)soryu_dispatch,
	       .running		= (void *)soryu_running,
	       .stopping	= (void *)soryu_stopping,
	       .quiescent	= (void *)soryu_quiescent,
	       .yield		= (void *)soryu_yield,
	       .init_task	= (void *)soryu_init_task,
	       .enable		= (void *)soryu_enable,
	       .init		= (void *)soryu_init,
	       .exit		= (void *)soryu_exit,
	       .dump		= (void *)soryu_dump,
	       .dump_cpu	= (void *)soryu_dump_cpu,
	       .dump_task	= (void *)soryu_dump_task,
	       .timeout_ms	= SORYU_TIMEOUT_MS,
	       .name		= "soryu");
