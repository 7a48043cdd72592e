/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * scx_soryu: the interface shared by the BPF program and the Rust daemon.
 *
 * Every constant that both sides need lives here, once. The Rust side sees
 * it through bindgen (src/bpf_intf.rs); nothing in Rust restates a number
 * that is defined here.
 */
#ifndef __SORYU_INTF_H
#define __SORYU_INTF_H

#ifndef __VMLINUX_H__
typedef unsigned char u8;
typedef unsigned int u32;
typedef int s32;
typedef unsigned long long u64;
typedef long long s64;
#endif

enum soryu_consts {
	/* BMQ's MAX_PRIORITY_ADJ: boost lives in [-12, +12], negative is better. */
	SORYU_MAX_BOOST = 12,
	SORYU_BOOST_SPAN = 2 * SORYU_MAX_BOOST + 1,	/* 25 boost values */

	/*
	 * Levels. Level 0 holds per-CPU kernel threads (ksoftirqd, bound
	 * kworkers): they gate the rest of the system's progress and cannot run
	 * anywhere else. Levels 1..32 are BMQ's 32 levels for SCHED_NORMAL,
	 * SCHED_BATCH and SCHED_IDLE, (nice + 20 + boost + 12) / 2 + 1.
	 * SCHED_IDLE tasks always sit at the worst level.
	 */
	SORYU_LVL_PCPU_KTHREAD = 0,
	SORYU_LVL_FIRST_NORMAL = 1,
	SORYU_NR_NORMAL_LEVELS = 32,
	SORYU_NR_LEVELS = SORYU_LVL_FIRST_NORMAL + SORYU_NR_NORMAL_LEVELS, /* 33 */
	SORYU_LVL_WORST = SORYU_NR_LEVELS - 1,
	/* cpu_ctx.level of a CPU that has not run a soryu task yet, or that found
	 * nothing to run (a preemption target while it goes idle). */
	SORYU_LVL_NONE = SORYU_NR_LEVELS,

	/*
	 * cgroup weights: the deepest cgroup level whose cpu.weight counts
	 * (systemd nests services four or five deep; containers add a few).
	 */
	SORYU_CGROUP_MAX_DEPTH = 16,

	/* --boost-on-wake: one boost step per 2^22 ns slept, at most 24 steps. */
	SORYU_WAKE_BOOST_SHIFT = 22,
	SORYU_WAKE_BOOST_MAX_STEPS = 24,

	/*
	 * Probes per dispatch call the histogram tells apart: with one LLC the
	 * anti-starvation pass probes at most every level once, the bitmap
	 * scan at most every level once. With more LLCs a scan may probe a
	 * level in each; calls of this many probes or more share the last
	 * entry.
	 */
	SORYU_MAX_PROBES = 2 * SORYU_NR_LEVELS,

	/*
	 * Wake-to-run latency histogram, log-linear in nanoseconds: every power
	 * of two from 2^LAT_MIN_SHIFT to 2^LAT_MAX_SHIFT is split into
	 * 2^LAT_SUB_SHIFT equal sub-buckets. Bucket 0 holds everything below
	 * 2^10 ns (~1 us), the last bucket everything at or above 2^32 ns
	 * (~4.3 s). Powers of two are bucket edges, so 2^20, 2^22 and 2^24 ns
	 * (1.05 ms, 4.19 ms, 16.8 ms) are exact thresholds.
	 */
	SORYU_LAT_MIN_SHIFT = 10,
	SORYU_LAT_MAX_SHIFT = 32,
	SORYU_LAT_SUB_SHIFT = 2,
	SORYU_LAT_SUBS = 1 << SORYU_LAT_SUB_SHIFT,
	SORYU_NR_LAT_BUCKETS =
		(SORYU_LAT_MAX_SHIFT - SORYU_LAT_MIN_SHIFT) * SORYU_LAT_SUBS + 2,

	/* Latency classes: tasks boosted (boost < 0) when they woke, and the rest. */
	SORYU_CLASS_INTERACTIVE = 0,
	SORYU_CLASS_OTHER = 1,
	SORYU_NR_CLASSES = 2,
	/*
	 * Longest waits kept per interval: one per latency class (wake to run),
	 * then the longest time any task sat queued before it ran (enqueue to
	 * run, wakeups and preemptions alike: the starvation bound's figure).
	 */
	SORYU_WAIT_QUEUED = SORYU_NR_CLASSES,
	SORYU_NR_WAITS = SORYU_NR_CLASSES + 1,

	/*
	 * --clear-bitmap safety net: every SORYU_REPAIR_PERIOD_NS a timer sets
	 * the bit of every non-empty level whose bit reads clear, and wakes an
	 * idle CPU. 4 ms keeps a task stranded by the enqueue race (see
	 * docs/design-queues.md) below the 4.19 ms latency band.
	 */
	SORYU_REPAIR_PERIOD_NS = 4 * 1000 * 1000,

	/*
	 * CPUs that get a deferred-kick timer (--wakeup-gran-us). A CPU with a
	 * higher id is kicked at once, as with --wakeup-gran-us 0.
	 */
	SORYU_MAX_CPUS = 1024,

	/* SMT threads of one core smt.bpf.c walks (POWER has 8) */
	SORYU_MAX_SMT = 8,

	/*
	 * Tasks of a level a dispatch reads, head first, for one that last
	 * ran on its CPU (levels.bpf.c: take_cache_hot()).
	 */
	SORYU_HOT_LOOK = 4,

	/*
	 * LLCs the victim search tells apart (llc.bpf.c). The daemon folds a
	 * machine with more into this many groups: a search then reads more
	 * CPUs, never misses one.
	 */
	SORYU_MAX_LLCS = 256,

	/*
	 * The DSQ id of CPU 0's own queue (pinned.bpf.c); CPU c's is
	 * SORYU_PIN_DSQ + c. The level DSQs are below it: level v of LLC l
	 * is l * SORYU_NR_LEVELS + v, at most 8,447 with SORYU_MAX_LLCS.
	 */
	SORYU_PIN_DSQ = 1 << 16,
	/*
	 * An own queue's key: the level above this bit, the place in the
	 * level below it (policy.h: soryu_pin_key(), which says why 57).
	 */
	SORYU_PIN_LVL_SHIFT = 57,

	/* Kernel watchdog: a task runnable this long without running ejects us. */
	SORYU_TIMEOUT_MS = 10000,
};

/*
 * The kernel interfaces soryu falls back from on older kernels (the scx
 * headers' compat.bpf.h): a bit of `compat_paths` (main.bpf.c) is set when
 * the loaded program uses the fallback. The daemon logs them at attach.
 */
enum soryu_compat {
	/* a DSQ's first task read through a DSQ iterator: scx_bpf_dsq_peek() before 7.1 */
	SORYU_COMPAT_PEEK_ITER = 1 << 0,
	/* a slice set by writing p->scx.slice: no scx_bpf_task_set_slice() before 6.19 */
	SORYU_COMPAT_SLICE_WRITE = 1 << 1,
	/* the clock is bpf_ktime_get_ns(): no scx_bpf_now() before 6.14 */
	SORYU_COMPAT_KTIME = 1 << 2,
	/* the 6.12 names: scx_bpf_dispatch*(), scx_bpf_consume(), *_from_dsq() */
	SORYU_COMPAT_DISPATCH = 1 << 3,
	/* own queues allocated on node 0: no scx_bpf_cpu_node() before 6.15 */
	SORYU_COMPAT_NODE0 = 1 << 4,
	/* a CPU's current task read off its runqueue: no scx_bpf_cpu_curr() before 6.18 */
	SORYU_COMPAT_CPU_RQ = 1 << 5,
	SORYU_NR_COMPAT = 6,
};

/* Per-CPU event counters; user space sums CPUs and differences intervals. */
enum soryu_counter {
	SORYU_CNT_ENQUEUE,		/* tasks placed under their level: on a level DSQ,
					 * a CPU's own queue or a claimed idle CPU */
	SORYU_CNT_DIRECT,		/* tasks inserted straight onto a CPU: wakeups
					 * onto an idle one, grants resumed, tasks
					 * resumed behind a wakee that preempted them */
	SORYU_CNT_DISPATCH,		/* dispatch calls that moved a task to the CPU */
	SORYU_CNT_DISPATCH_EMPTY,	/* dispatch calls that found nothing */
	SORYU_CNT_KEEP,			/* dispatch calls that kept prev running */
	SORYU_CNT_PROBES,		/* level DSQs probed by dispatch */
	SORYU_CNT_STARVE_SERVE,		/* tasks served by the anti-starvation probe */
	SORYU_CNT_PREEMPT_ATTEMPT,	/* try_preempt() calls */
	SORYU_CNT_PREEMPT_IDLE,		/* ... that woke an idle CPU */
	SORYU_CNT_PREEMPT_KICK,		/* ... that preempted a CPU on a worse level */
	SORYU_CNT_PREEMPT_NONE,		/* ... that found no CPU to take the task */
	SORYU_CNT_PREEMPT_DEFER,	/* ... whose kick waited for the wakeup granularity */
	SORYU_CNT_PREEMPT_SCAN,		/* ... that searched for a victim (not idle, last CPU no victim) */
	SORYU_CNT_PREEMPT_FALLBACK,	/* ... searches of a task that may not use every CPU */
	SORYU_CNT_INSERT_FAIL,		/* DSQ inserts the kernel refused: must stay 0 */
	SORYU_CNT_BITMAP_CLEAR,		/* level bits cleared (--clear-bitmap) */
	SORYU_CNT_BITMAP_REPAIR,	/* bits the repair sweep had to set again */
	SORYU_CNT_STALE_KICK,		/* preemption kicks that found another level than believed */
	SORYU_CNT_WAKEUPS,		/* wakeups whose wake-to-run time was recorded */
	SORYU_CNT_PINNED,		/* tasks queued on their one CPU's own queue */
	SORYU_CNT_SMT_MOVE,		/* dispatch calls that let prev go to a whole idle core */
	SORYU_CNT_SYNC_LOCAL,		/* sync wakeups run next on the waker's CPU */
	SORYU_CNT_PREEMPT_LOCAL,	/* wakeups that preempted straight onto their
					 * victim's local DSQ (also counted as kicks) */
	SORYU_CNT_CACHE_HOT,		/* dispatch calls that took, from behind its
					 * level's head, a task last run on their CPU */
	SORYU_CNT_VICTIM_READS,		/* CPUs whose level victim searches read */
	SORYU_CNT_REMOTE_READS,		/* lines of other LLCs' queues (or of the
					 * machine-wide level index) dispatch read */
	SORYU_NR_COUNTERS,
};

/*
 * Timed sections of the callbacks, for profiling builds only
 * (-DSORYU_SECTIONS, bench/sections.sh; sections.bpf.c). A section's
 * nanoseconds sit at its index in the map `sections`, its count at index
 * + SORYU_NR_SECTIONS. bench/sections.sh reads the names from here.
 */
enum soryu_section {
	SORYU_SEC_SERVE_STARVED,	/* dispatch: the anti-starvation pass, its serves included */
	SORYU_SEC_SCAN_LEVELS,		/* dispatch: the level scan, its moves included */
	SORYU_SEC_CACHE_HOT,		/* dispatch: take_cache_hot(), its moves included */
	SORYU_SEC_MOVE_LOCAL,		/* a level's head moved here from this CPU's runqueue */
	SORYU_SEC_MOVE_REMOTE,		/* ... from another CPU's runqueue (or found gone) */
	SORYU_SEC_PLACE_IDLE,		/* enqueue: claim an idle CPU and insert there */
	SORYU_SEC_FIND_VICTIM,		/* enqueue: the victim search */
	SORYU_SEC_PREEMPT_LOCAL,	/* enqueue: a wakee onto its victim's local DSQ */
	SORYU_SEC_QUEUE_LEVEL,		/* enqueue: the insert into a level DSQ */
	SORYU_SEC_SELECT_DFL,		/* select_cpu: the kernel's idle CPU pick */
	SORYU_SEC_WAKE_ON_WAKER,	/* select_cpu: a sync wakeup onto the waker's CPU */
	SORYU_SEC_PIN_VICTIM,		/* enqueue: a one-CPU task's victim check */
	SORYU_SEC_PIN_PREEMPT,		/* enqueue: ... and its wakee onto that CPU's local DSQ */
	SORYU_SEC_RESUME_BEHIND,	/* enqueue: a displaced task back behind its wakee */
	SORYU_NR_SECTIONS,
};

/*
 * One CPU's statistics, the value of the per-CPU array `stats`. Counters and
 * histograms only ever grow. The longest waits are kept per epoch, which
 * the daemon bumps `stats_epoch` to close (see stats.bpf.c: note_wait()),
 * in two slots: epoch E fills slot E & 1, so the daemon reads a closed
 * epoch's slot while waits of the next one go to the other slot.
 */
struct soryu_stats {
	u64 cnt[SORYU_NR_COUNTERS];
	/* probes per dispatch call, index = probe count */
	u64 probe_hist[SORYU_MAX_PROBES + 1];
	u64 lat_hist[SORYU_NR_CLASSES][SORYU_NR_LAT_BUCKETS];
	/* boost of each enqueued task, index = boost + SORYU_MAX_BOOST */
	u64 boost_hist[SORYU_BOOST_SPAN];
	u64 level_hist[SORYU_NR_LEVELS];
	/* longest waits (SORYU_WAIT_* index) of the epoch in the same slot */
	u64 max_wait_epoch[2];
	u64 max_wait_ns[2][SORYU_NR_WAITS];
};

/*
 * Per-task state, the value of the task storage map `task_ctxs`. Shared so
 * that `scx_soryu inspect PID` can read a running task's boost from the
 * loaded program (a task storage map is looked up by pidfd from user space).
 */
struct soryu_task_ctx {
	s32 boost;		/* BMQ boost_prio, [-12, +12] */
	u32 enq_level;		/* level at the last enqueue, SORYU_LVL_NONE if none */
	u64 used_ns;		/* runtime charged against the current slice */
	u64 exec_base;		/* se.sum_exec_runtime when last charged */
	u64 last_ran;		/* when the task last stopped running */
	u64 wake_at;		/* when it woke, 0 once its wait was recorded */
	u64 queued_at;		/* when it was last queued on a level, 0 once it ran */
	u64 age_at;		/* the stamp the starvation rule ages: its wakeup or
				 * queued_at, or the older stamp of the head it resumed
				 * in front of; kept while not yet served (requeue_how()) */
	u64 served_exec;	/* se.sum_exec_runtime when its last queued wait ended */
	u32 wake_class;		/* SORYU_CLASS_* it woke in */
	s32 cg_nice;		/* nice offset of its cgroups' cpu.weight */
	u64 cg_gen;		/* cg_gen when cg_nice was computed, 0: never */
	u32 counted1;		/* 1 + the level DSQ whose count holds it, 0: none */
	u8 granted;		/* holds an unfinished starvation grant */
	u8 resume;		/* preempted with slice left: back to its level's head */
	u8 yielded;		/* called sched_yield(): its next stop is no preemption */
	u8 sync_wake;		/* its last wakeup was a sync one (SCX_WAKE_SYNC) */
	u32 pin_cpu1;		/* 1 + the CPU whose own queue counts it (its vtime
				 * then saved in pin_vtime), 0: none */
	u64 pin_vtime;		/* --vtime: its vtime while the queue's key holds the field */
	u64 llcs[SORYU_MAX_LLCS / 64];	/* bit l: it may use a CPU of LLC l (task_llcs()) */
	u8 llcs_known;		/* llcs was read from its current cpumask */
};

#endif /* __SORYU_INTF_H */
