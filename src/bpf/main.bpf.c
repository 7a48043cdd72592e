/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * scx_soryu: BMQ's bitmap queue as a sched_ext scheduler.
 *
 * Tasks sit in 33 levels, one DSQ per level in each LLC, shared by the
 * CPUs (a task that may use one CPU only waits on that CPU's own queue).
 * A task's level folds its nice value and a dynamic boost (policy.h):
 * sleeping improves the boost, using up slices worsens it. Lower levels
 * run first, strictly, across LLCs; inside a level, FIFO (or vtime with
 * --vtime), the CPU's own LLC first. Each LLC's one-word bitmap says which
 * of its levels may hold tasks, and its counts how many they hold, so
 * dispatch only probes levels with tasks. A task queued for
 * --starve-ms is served ahead of everything, which BMQ itself never does.
 * A queued task that outranks the level running on some CPU kicks that
 * CPU; a task preempted with slice left resumes at the head of its level.
 *
 * This file holds the knobs, the shared state and the callbacks that place
 * and pick tasks (select_cpu, enqueue, dispatch) and set them up; each
 * mechanism has a file of its own, included below: stats.bpf.c, task.bpf.c
 * (a task's level, slice and requeue place), llc.bpf.c and preempt.bpf.c
 * (victims), levels.bpf.c (each LLC's level queues), pinned.bpf.c (own
 * queues), starve.bpf.c, cgroup.bpf.c (cpu.weight), place.bpf.c (a
 * level DSQ or a claimed idle CPU for ops.enqueue), stint.bpf.c (the
 * callbacks that begin and end a stint on a CPU), dump.bpf.c and
 * sections.bpf.c (timed sections, in profiling builds only). The
 * design, with the race arguments in full, is in docs/design.md and
 * the pages it links.
 */
#include <scx/common.bpf.h>
#include "intf.h"
#include "policy.h"

char _license[] SEC("license") = "GPL";

UEI_DEFINE(uei);

#define PF_KTHREAD	0x00200000

/*
 * A global function: not static and never inlined, so the verifier checks
 * it once, on its own, with its arguments as any value of their type
 * (pointers possibly NULL, which it checks), instead of walking its body
 * again at every call site and along every path that reaches one.
 * soryu_dispatch() reaches the level scans twice and the starvation pass
 * first: with those static, verifying dispatch costs an order of magnitude
 * more, and the load takes seconds longer (docs/design.md, "Verified
 * once").
 */
#define __verified_once __noinline

/* Knobs, written by the daemon before load and read-only after. */
const volatile u64 slice_ns = 1000ULL * 1000;
const volatile u64 starve_ns = 100ULL * 1000 * 1000;
/* --wakeup-gran-us: how long a task runs before a wakeup may preempt it. */
const volatile u64 wakeup_gran_ns;
const volatile bool clear_bitmap;
const volatile bool boost_on_wake;
const volatile bool vtime_on;
/* --no-hist clears it: no wake stamps, latency, boost or level histograms. */
const volatile bool hist_on = true;
/* The daemon's own process: its threads hold the floor boost (soryu_init_task()). */
const volatile u32 daemon_tgid;
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
 * --inject-enqueue-delay-us: ops.enqueue spins this long between the
 * victim search and the insert (inject_delay()), so that a CPU going idle
 * meanwhile happens often enough to test (tests/vm/holes.sh idle).
 */
const volatile u64 inject_enqueue_delay_ns;

/* --vtime: the reference clock, the largest vtime that has started to run. */
u64 vtime_now SEC(".data.vtime_now");

/* Bumped by the daemon once per report; resets the per-CPU interval maxima. */
u64 stats_epoch;

/* The kernel's HZ, for reporting waits in jiffies (0: config not readable). */
extern unsigned int CONFIG_HZ __kconfig __weak;
u32 kernel_hz;
/* The compat fallbacks this kernel makes soryu use (intf.h, enum soryu_compat). */
u32 compat_paths;

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct soryu_task_ctx);
} task_ctxs SEC(".maps");

/*
 * Per-CPU state: the level this CPU is running and when its task started,
 * which other CPUs read to choose a preemption victim (preempt.bpf.c).
 */
struct cpu_ctx {
	/* written through show_level() only, which keeps the LLC summary */
	u32 level;
	u32 llc;	/* index of this CPU's LLC in llc_ctxs (llc.bpf.c) */
	/*
	 * 1 + the best level a kick promised this CPU to (0: none). Written by
	 * kicking CPUs, cleared here by ops.dispatch and ops.running.
	 */
	u32 claim1;
	u64 started_at;
	/*
	 * 1 + the level a preemption kick aimed at this CPU believed it ran
	 * (0: no kick outstanding). Written by the kicking CPU, read and
	 * cleared here when the next task stops: see note_kick_landed().
	 */
	u32 kick_level1;
	/*
	 * The task the anti-starvation pass moved to this CPU's local DSQ,
	 * which gets the grant when it starts here (0: none). Only this CPU
	 * writes it: set by the serve, cleared by every dispatch (the local
	 * DSQ is empty then: the task ran or left) and by cpu_release.
	 */
	s32 grant_pid;
	/* this CPU's own queue held a stale task at the last look (pinned.bpf.c) */
	bool pin_starving;
	u64 pin_next_look;
	/* places handed out in this CPU's own queue, at tails and at heads */
	u64 pin_tails;
	u64 pin_heads;
	/* tasks counted on this CPU's own queue (pin_count()), written by any CPU */
	s32 nr_pinned;
	/* the first sync wakeup run here since the last dispatch (wake_on_waker()) */
	u64 sync_since;
	/* this CPU's last ops.dispatch; written here only (preempt_local()) */
	u64 dispatched_at;
	/*
	 * A wakee was put on this CPU's local DSQ to preempt it: the task it
	 * displaces resumes behind it (resume_behind_wakee()). Set by the
	 * waking CPU, cleared here.
	 */
	bool resume_behind;
	/* go_idle()'s look found a task counted, not yet inserted (note_in_flight()) */
	bool in_flight;
	/* the target of full_barrier(), written by this CPU only */
	u64 fence;
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

/*
 * One timer per CPU for kicks deferred by the wakeup granularity; lvl1 is
 * 1 + the best level waiting for the kick (0: none).
 */
struct kick_timer {
	struct bpf_timer timer;
	u32 lvl1;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SORYU_MAX_CPUS);
	__type(key, u32);
	__type(value, struct kick_timer);
} kick_timers SEC(".maps");

static struct soryu_task_ctx *lookup_task_ctx(const struct task_struct *p)
{
	return bpf_task_storage_get(&task_ctxs, (struct task_struct *)p, 0, 0);
}

/*
 * Atomic RMWs that are fully ordered: clang compiles a __sync RMW whose
 * result goes unused to one without BPF_FETCH, which orders nothing on a
 * weakly ordered CPU; using the result keeps the fetch form.
 */
static u64 ordered_add(u64 *p, u64 v)
{
	u64 old = __sync_fetch_and_add(p, v);

	barrier_var(old);
	return old;
}

static u64 ordered_or(u64 *p, u64 v)
{
	u64 old = __sync_fetch_and_or(p, v);

	barrier_var(old);
	return old;
}

static u64 ordered_and(u64 *p, u64 v)
{
	u64 old = __sync_fetch_and_and(p, v);

	barrier_var(old);
	return old;
}

/*
 * A full memory barrier: an ordered RMW on a line only this CPU writes.
 * See count_waiting() and go_idle() for the pair it orders.
 */
static void full_barrier(void)
{
	struct cpu_ctx *cctx;
	u32 zero = 0;

	if ((cctx = bpf_map_lookup_elem(&cpu_ctxs, &zero)))
		ordered_add(&cctx->fence, 1);
}

/* Timed sections, in profiling builds only (TIMED()). */
#include "sections.bpf.c"

/* Statistics: per-CPU counters and histograms. */
#include "stats.bpf.c"

/* A task's level, slice, runtime charge, vtime and requeue place. */
#include "task.bpf.c"

/* The levels running, per LLC, for the victim search. */
#include "llc.bpf.c"

/* SMT: moving a task that shares its core while a whole core idles. */
#include "smt.bpf.c"

/* Preemption: a CPU for a newly queued task. */
#include "preempt.bpf.c"

/* The level index: which LLCs hold each level, machine-wide. */
#include "index.bpf.c"

/* Levels: each LLC's level queues, their bitmap and counts, probing, the repair sweep. */
#include "levels.bpf.c"

/* Each CPU's own queue, for tasks that may run on that CPU only. */
#include "pinned.bpf.c"

/* Anti-starvation: serving a level whose oldest task waited --starve-ms. */
#include "starve.bpf.c"

/* cgroup cpu.weight as a nice offset. */
#include "cgroup.bpf.c"

/* Where ops.enqueue puts a task: its shared level, or an idle CPU it claims. */
#include "place.bpf.c"

s32 BPF_STRUCT_OPS(soryu_select_cpu, struct task_struct *p, s32 prev_cpu, u64 wake_flags)
{
	struct soryu_task_ctx *tctx;
	bool is_idle = false;
	s32 cpu;

	cpu = TIMED(SORYU_SEC_SELECT_DFL, scx_bpf_select_cpu_dfl(p, prev_cpu, wake_flags, &is_idle));
	if (!(tctx = lookup_task_ctx(p)))
		return cpu;
	/*
	 * For the wakeup granularity (kick_victim()): read and cleared by the
	 * ops.enqueue that follows, which an idle CPU's direct insert below
	 * skips, so the flag is only set when that enqueue will come.
	 */
	tctx->sync_wake = !is_idle && (wake_flags & SCX_WAKE_SYNC);
	if (!is_idle) {
		if (tctx->sync_wake && TIMED(SORYU_SEC_WAKE_ON_WAKER, wake_on_waker(p, tctx))) {
			tctx->sync_wake = 0;	/* no ops.enqueue follows */
			return bpf_get_smp_processor_id();
		}
		return cpu;
	}

	/* An idle CPU needs no ordering decision: run there right away. */
	if (scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, slice_left(tctx), 0))
		stat_inc(SORYU_CNT_DIRECT);
	else
		stat_inc(SORYU_CNT_INSERT_FAIL);
	return cpu;
}

/*
 * A task became runnable. On a wakeup: start its age, stamp the wake time
 * and class for the wake-to-run histogram, then apply --boost-on-wake.
 *
 * A wakeup starts a new wait wherever the task goes. ops.enqueue stamps a
 * task queued at a level's tail (stamp_queued()), but a wakee put straight
 * onto an idle CPU or its waker's CPU skips ops.enqueue, and one preempted
 * before it was served keeps its age (served()): without this stamp it
 * kept the age of its last wait on a level, however long ago, and was
 * served as starving the moment it queued (tests/vm/holes.sh syncage,
 * kdamond).
 */
void BPF_STRUCT_OPS(soryu_runnable, struct task_struct *p, u64 enq_flags)
{
	struct soryu_task_ctx *tctx;
	u32 class;
	u64 now;

	if (!(enq_flags & SCX_ENQ_WAKEUP) || !(tctx = lookup_task_ctx(p)))
		return;
	now = scx_bpf_now();
	tctx->age_at = now;
	if (!(hist_on || boost_on_wake))
		return;
	/* the class from the boost before the wake boost: see policy.h */
	tctx->boost = soryu_wakeup(tctx->boost, p->policy, now - tctx->last_ran,
				   boost_on_wake && tctx->last_ran, &class);
	if (hist_on) {
		tctx->wake_at = now;
		tctx->wake_class = class;
	}
}

/* --inject-enqueue-delay-us: spin that long (bounded: at most 1 ms). */
static void inject_delay(void)
{
	u64 start;
	u32 i;

	if (!inject_enqueue_delay_ns)
		return;
	/*
	 * The wall clock: scx_bpf_now() returns the runqueue's clock, which
	 * does not move while ops.enqueue holds the runqueue's lock.
	 */
	start = bpf_ktime_get_ns();
	bpf_for(i, 0, 1 << 20) {
		if (bpf_ktime_get_ns() - start >= inject_enqueue_delay_ns)
			break;
	}
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
	enum requeue how;
	bool pinned, ok;
	u32 lvl;
	u64 slice, gran;
	s64 v;

	if (!(tctx = lookup_task_ctx(p))) {
		scx_bpf_error("soryu: no task context for %s[%d]", p->comm, p->pid);
		return;
	}

	refresh_cgroup_nice(p, tctx);
	lvl = task_level(p, tctx);
	tctx->enq_level = lvl;
	how = requeue_how(tctx, enq_flags);
	tctx->resume = false;
	/*
	 * The wakeup granularity protects a waker that is about to sleep
	 * (a sync wakeup: a pipe or socket write) and a parent from its new
	 * child, not a task woken by a timer, an interrupt or a futex
	 * (kick_victim()). (Other enqueues without the wakeup flag are
	 * requeues, which kick no busy CPU at all: victim_bar().)
	 * select_cpu, which sets the flag, is not called for every wakeup
	 * (never for a task that may use one CPU): cleared here, it never
	 * outlives the enqueue it was meant for.
	 * Not 0 when either holds. Bit operations, not a branch: the verifier
	 * would walk the rest of ops.enqueue once for each value.
	 */
	gran = (~enq_flags & SCX_ENQ_WAKEUP) | tctx->sync_wake;
	tctx->sync_wake = 0;
	stamp_queued(p, tctx, how);
	if (stall_injected(p)) {
		count_level(tctx, 0);
		pin_leave(p, tctx);
		return;	/* stranded on purpose: the watchdog must notice */
	}
	slice = slice_left(tctx);

	/* placements that need no victim: the grant's CPU, behind a wakee, an idle CPU */
	if (tctx->granted) {
		resume_granted(p, tctx, slice, enq_flags, st);
		return;
	}
	if (how == REQUEUE_RESUME && TIMED(SORYU_SEC_RESUME_BEHIND, resume_behind_wakee(p)))
		return;
	pinned = pins_to_one_cpu(p);
	if (!pinned && TIMED(SORYU_SEC_PLACE_IDLE, place_on_idle(p, tctx, slice, enq_flags, st)))
		return;

	/*
	 * A queue and a victim: counted where it will wait first, then the
	 * CPUs read (count_waiting()); a wakeup that may preempt the victim
	 * goes straight onto its local DSQ (preempt_local()), else the task
	 * waits on its level (or its one CPU's own queue) and the victim, if
	 * any, is kicked.
	 */
	count_waiting(p, tctx, lvl, pinned);
	stat_add(st, SORYU_CNT_PREEMPT_ATTEMPT, 1);
	v = TIMED(SORYU_SEC_FIND_VICTIM, find_victim(p, victim_bar(p, lvl, enq_flags)));
	inject_delay();
	if (TIMED(SORYU_SEC_PREEMPT_LOCAL, preempt_local(p, v, gran, enq_flags)))
		return;
	if (pinned)
		ok = pin_enqueue(p, tctx, lvl, slice, how, enq_flags);
	else
		ok = TIMED(SORYU_SEC_QUEUE_LEVEL, queue_on_level(p, tctx, lvl, slice, how, enq_flags));
	if (!ok) {
		stat_add(st, SORYU_CNT_INSERT_FAIL, 1);
		return;
	}
	if (pinned)
		stat_add(st, SORYU_CNT_PINNED, 1);
	count_enqueue(st, tctx, lvl);
	/* a pinned task's one CPU may idle: claim it; else the victim, kicked */
	if (!pinned || !kick_idle(p, st))
		kick_found(v, lvl, gran, st);
}

/*
 * The best task queued for this CPU, below level @limit (@limit itself
 * when a tie should round-robin): this CPU's own queue (pinned.bpf.c)
 * against the shared levels, strictly better shared levels first, then
 * the own queue's first task, which wins a tie (its tasks can run nowhere
 * else), then the shared levels again if that task left meanwhile.
 */
static __always_inline bool take_best(s32 cpu, struct cpu_ctx *cctx, u32 limit, bool idle,
				      u64 now, struct soryu_stats *st)
{
	u32 pin = pin_level(cpu, cctx), lim = pin < limit ? pin : limit, llc = cctx ? cctx->llc : 0;

	if (TIMED(SORYU_SEC_SCAN_LEVELS, scan_levels(llc, lim, idle, now, st)) ||
	    (clear_bitmap && sweep_levels(llc, lim, now, st)))
		return true;
	if (lim == limit)
		return false;
	return take_pinned(cpu, st) || scan_levels(llc, limit, idle, now, st) ||
	       (clear_bitmap && sweep_levels(llc, limit, now, st));
}

/*
 * Nothing to run here: show this CPU going idle (SORYU_LVL_NONE: until the
 * kernel marks it idle, a waking task finds it neither idle nor running a
 * level it could preempt, so find_victim() takes it for the worst level),
 * then look once more. The show, a full barrier and the second look pair
 * with ops.enqueue's count, barrier and victim search (count_waiting()):
 * a task queued meanwhile either finds this CPU shown idle and kicks it,
 * or is counted when this CPU looks again, and found then or, if its
 * insert has not landed, by the dispatch a kick of this CPU brings. The
 * second look reads the level index only where no clear moved it during
 * the reads (scan_levels()): a count never reads low, an index bit may
 * for a moment. True: the second look found one.
 */
static bool go_idle(s32 cpu, struct cpu_ctx *cctx, u64 now, struct soryu_stats *st)
{
	if (cctx) {
		show_level(cctx, SORYU_LVL_NONE);
		cctx->in_flight = false;
	}
	full_barrier();
	if (take_best(cpu, cctx, SORYU_NR_LEVELS, true, now, st))
		return true;
	/*
	 * Counted, not yet inserted: the enqueue's victim search ran before
	 * this CPU showed idle, and its insert lands after this look. Kick
	 * this CPU: the kick is sent after this dispatch, and its next one
	 * finds the task (note_in_flight()).
	 */
	if (cctx && cctx->in_flight)
		scx_bpf_kick_cpu(cpu, 0);
	return false;
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
	cctx = bpf_map_lookup_elem(&cpu_ctxs, &zero);
	if (cctx) {
		/* whatever a kick promised, this call takes the best queued level */
		if (cctx->claim1)
			WRITE_ONCE(cctx->claim1, 0);
		cctx->sync_since = 0;	/* ends a chain of wakeups run here */
		/* the local DSQ is empty: a task served earlier ran or left */
		cctx->grant_pid = 0;
		WRITE_ONCE(cctx->dispatched_at, now);
	}
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

	if (TIMED(SORYU_SEC_SERVE_STARVED, serve_starved(cpu, cctx, now, st)) ||
	    take_best(cpu, cctx, limit, false, now, st)) {
		stat_add(st, SORYU_CNT_DISPATCH, 1);
	} else if (pctx && !pctx->granted && smt_crowded(prev, cpu)) {
		/*
		 * Nothing better queued, but @prev shares its core while a
		 * whole core is idle: let it go, with its slice spent, so
		 * that the kernel queues it (SCX_ENQ_LAST) and place_on_idle()
		 * claims it a whole idle core (smt.bpf.c). Shown as going
		 * idle: if that claim fails, the victim search kicks this CPU
		 * back to take @prev again (a CPU going idle is the one victim
		 * a requeue may kick: victim_bar()), so @prev never waits
		 * unwatched.
		 */
		if (cctx)
			show_level(cctx, SORYU_LVL_NONE);
		stat_add(st, SORYU_CNT_SMT_MOVE, 1);
	} else if (pctx) {
		/*
		 * Nothing better queued: keep @prev on the rest of its slice. A
		 * grant stays shown as unpreemptible: a kick that cut it short
		 * was aimed before the grant showed in cpu_ctx.
		 */
		scx_bpf_task_set_slice(prev, slice_left(pctx));
		if (cctx)
			show_level(cctx, pctx->granted ? SORYU_LVL_PCPU_KTHREAD : lvl);
		stat_add(st, SORYU_CNT_KEEP, 1);
	} else if (go_idle(cpu, cctx, now, st)) {
		stat_add(st, SORYU_CNT_DISPATCH, 1);
	} else {
		stat_add(st, SORYU_CNT_DISPATCH_EMPTY, 1);
	}

	/*
	 * Probes of this call, read back from the map rather than counted in a
	 * local: a local used as an index would make the verifier track its
	 * exact value through both level loops and never converge.
	 */
	probes = st->cnt[SORYU_CNT_PROBES] - probes_before;
	/* the last entry counts calls with that many probes or more (LLCs > 1) */
	st->probe_hist[probes < SORYU_MAX_PROBES ? probes : SORYU_MAX_PROBES]++;
}

/* A stint on a CPU: running, stopping, cpu_release, quiescent, yield */
#include "stint.bpf.c"

/* Leaving sched_ext (another class, or soryu unloading) while counted. */
void BPF_STRUCT_OPS(soryu_disable, struct task_struct *p)
{
	struct soryu_task_ctx *tctx = lookup_task_ctx(p);

	if (!tctx)
		return;
	count_level(tctx, 0);
	pin_leave(p, tctx);
	/*
	 * Its wait, grant and placement end here: should it come back (a
	 * policy switched back to SCHED_NORMAL), it starts afresh rather
	 * than with the stamps of a wait that ended under another class.
	 */
	tctx->queued_at = 0;
	tctx->age_at = 0;
	tctx->wake_at = 0;
	tctx->granted = false;
	tctx->resume = false;
	tctx->yielded = false;
	tctx->sync_wake = 0;
	tctx->llcs_known = false;	/* its cpumask may change while away */
}

/* The LLCs @p may use are read again at its next victim search (task_llcs()). */
void BPF_STRUCT_OPS(soryu_set_cpumask, struct task_struct *p, const struct cpumask *cpumask)
{
	struct soryu_task_ctx *tctx = lookup_task_ctx(p);

	if (tctx)
		tctx->llcs_known = false;
}

s32 BPF_STRUCT_OPS(soryu_init_task, struct task_struct *p, struct scx_init_task_args *args)
{
	struct soryu_task_ctx *tctx, *parent;

	tctx = bpf_task_storage_get(&task_ctxs, p, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!tctx)
		return -ENOMEM;
	tctx->enq_level = SORYU_LVL_NONE;

	/*
	 * The daemon's own threads (the report loop, the scx_stats server)
	 * start at the floor boost and charge() never deboosts them. Each
	 * report is a burst of a few slices that would cost it boost steps it
	 * then wins back one sleep at a time, and at a worse level than a
	 * saturating interactive load it runs only on starvation serves, one
	 * a round, and its reports come seconds late (docs/design.md,
	 * "Boost"). Its nice still counts, and it uses a few milliseconds a
	 * second.
	 */
	if (p->tgid == daemon_tgid)
		tctx->boost = soryu_boost_floor(p->policy);
	/* BMQ: a child starts with its parent's boost. */
	else if (args->fork) {
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
 * Which fallbacks of compat.bpf.h the program runs on this kernel: the
 * same tests the headers' macros make, resolved by libbpf at load.
 */
static u32 compat_in_use(void)
{
	bool v1, v2;
	u32 c = 0;

	if (!bpf_ksym_exists(scx_bpf_dsq_peek) || LINUX_KERNEL_VERSION < KERNEL_VERSION(7, 1, 0))
		c |= SORYU_COMPAT_PEEK_ITER;
	if (!bpf_ksym_exists(scx_bpf_task_set_slice___new))
		c |= SORYU_COMPAT_SLICE_WRITE;
	if (!bpf_ksym_exists(scx_bpf_now))
		c |= SORYU_COMPAT_KTIME;
	/* two tests as two scalars: clang would OR the two addresses */
	v2 = bpf_ksym_exists(scx_bpf_dsq_insert___v2___compat);
	v1 = bpf_ksym_exists(scx_bpf_dsq_insert___v1);
	barrier_var(v2);
	barrier_var(v1);
	if (!v2 && !v1)
		c |= SORYU_COMPAT_DISPATCH;
	if (!bpf_ksym_exists(scx_bpf_cpu_node))
		c |= SORYU_COMPAT_NODE0;
	if (!bpf_ksym_exists(scx_bpf_cpu_curr))
		c |= SORYU_COMPAT_CPU_RQ;
	return c;
}

s32 BPF_STRUCT_OPS_SLEEPABLE(soryu_init)
{
	struct repair_timer *rt;
	u64 now = scx_bpf_now();
	u32 zero = 0;
	s32 ret;

	kernel_hz = CONFIG_HZ;
	compat_paths = compat_in_use();
	loaded_at = now;
	if (inject_verifier_reject) {
		struct soryu_task_ctx *t = bpf_task_storage_get(&task_ctxs,
				bpf_get_current_task_btf(), 0, 0);

		t->boost = 0;	/* no NULL check: the verifier must refuse */
	}
	if ((ret = init_queues(now)) || (ret = init_pin_dsqs()) || (ret = init_llcs()) ||
	    (ret = init_kick_timers()))
		return ret;
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
	       .cpu_release	= (void *)soryu_cpu_release,
	       .yield		= (void *)soryu_yield,
	       .set_cpumask	= (void *)soryu_set_cpumask,
	       .init_task	= (void *)soryu_init_task,
	       .cgroup_init	= (void *)soryu_cgroup_init,
	       .cgroup_set_weight = (void *)soryu_cgroup_set_weight,
	       .cgroup_move	= (void *)soryu_cgroup_move,
	       .tick		= (void *)soryu_tick,
	       .enable		= (void *)soryu_enable,
	       .disable		= (void *)soryu_disable,
	       .init		= (void *)soryu_init,
	       .exit		= (void *)soryu_exit,
	       .dump		= (void *)soryu_dump,
	       .dump_cpu	= (void *)soryu_dump_cpu,
	       .dump_task	= (void *)soryu_dump_task,
	       /* prev let go by dispatch reaches enqueue: see smt.bpf.c */
	       .flags		= SCX_OPS_ENQ_LAST,
	       .timeout_ms	= SORYU_TIMEOUT_MS,
	       .name		= "soryu");
