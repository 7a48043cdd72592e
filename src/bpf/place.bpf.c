/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Where ops.enqueue puts a task that may use more than one CPU: straight
 * onto an idle CPU it can claim (nearest first, claim_idle_cpu()), else the
 * DSQ of its shared level. Included by main.bpf.c after the mechanisms it
 * uses: the level counts (levels.bpf.c), the starvation rules
 * (starve.bpf.c) and the claim (preempt.bpf.c).
 */

/*
 * Stamp @tctx's task as queued now, unless it was queued before and has
 * not run since: re-queued off a CPU a higher class took, or by a nice or
 * affinity change, it keeps its stamps, as the starvation rule counts from
 * when it first waited, not from the last requeue. So does the age (age_at)
 * of a task robbed of its serve, or preempted before it was served
 * (served()): its wait was not over.
 */
static void stamp_queued(struct task_struct *p, struct soryu_task_ctx *tctx, enum requeue how)
{
	if (tctx->queued_at)
		return;
	tctx->queued_at = scx_bpf_now();
	if (how == REQUEUE_TAIL || (how == REQUEUE_RESUME && served(p, tctx)))
		tctx->age_at = tctx->queued_at;
}

/*
 * A task still holding a starvation grant is back before its slice ran
 * out: a kick aimed at this CPU before the grant showed in cpu_ctx
 * (find_victim() reads it without a lock), or a higher class took the
 * CPU. It resumes where it was, ahead of everything else there, on what
 * is left of its slice. Sending it back through its level instead would
 * need a second serve, which restarts the level's starvation clock: every
 * other task starving there would wait one more round. (Not when
 * ops.cpu_release handed it back, SCX_ENQ_REENQ: requeue_how() took the
 * grant away, as this CPU now belongs to a higher class.)
 */
static void resume_granted(struct task_struct *p, struct soryu_task_ctx *tctx, u64 slice,
			   u64 enq_flags, struct soryu_stats *st)
{
	count_level(tctx, 0);
	if (scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, slice, enq_flags | SCX_ENQ_HEAD))
		stat_add(st, SORYU_CNT_DIRECT, 1);
	else
		stat_add(st, SORYU_CNT_INSERT_FAIL, 1);
}

/*
 * Count @p, queued at @lvl, where it is about to wait (its LLC's level, or
 * its one CPU's own queue when @pinned), with its level's bit set, before
 * ops.enqueue reads a single CPU; then a full barrier. A CPU going idle
 * does the mirror image: shows itself idle, a full barrier, then reads the
 * counts (go_idle()). With both sides ordered, the victim search sees that
 * CPU idle and kicks it, or that CPU's second look finds @p: a task never
 * waits beside a CPU that went idle while it was being queued. The count
 * is raised before the insert lands, as count_level() allows; a wakee put
 * straight on a CPU instead takes it back (preempt_local()).
 */
static void count_waiting(struct task_struct *p, struct soryu_task_ctx *tctx, u32 lvl, bool pinned)
{
	struct llc_queues *q;
	u32 llc;
	s32 cpu;

	if (pinned) {
		count_level(tctx, 0);
		cpu = bpf_cpumask_first(p->cpus_ptr);
		/* the vtime the queue's key will stand in for (pin_enqueue()) */
		if (vtime_on && !tctx->pin_cpu1)
			tctx->pin_vtime = clamped_vtime(p);
		if (cpu >= 0 && cpu < SORYU_MAX_CPUS)
			pin_count(tctx, cpu + 1);
	} else {
		pin_leave(p, tctx);
		llc = queue_llc(p);
		if ((q = queues_of(llc)))
			mark_level(q, lvl);
		count_level(tctx, LEVEL_DSQ(llc, lvl) + 1);
	}
	full_barrier();
}

/*
 * Queue @p on level @lvl of its LLC's queues (queue_llc()), counted there
 * (count_level()), at the place @how says (requeue_how()).
 *
 * Preempted before its slice ran out (REQUEUE_RESUME, from ops.stopping): back to
 * the head of its level, where BMQ leaves a preempted task, not the tail.
 * The preemptor is usually a short wakeup; when it is done, the task it
 * displaced resumes on what is left of its slice, on the CPU whose cache
 * it warmed, instead of the level rotating (and, with shared levels,
 * migrating) once per preemption. Its slice is charged across preemptions,
 * so it still leaves for the tail after one slice of CPU. With --vtime the
 * level is ordered by vtime, where the task's own vtime already puts it
 * near the front. Not ahead of a level that starves (resume_at_head()).
 * Handed back by cpu_release: in front of the head, starving or not, and
 * a robbed serve makes the level starve at once (owe_serve()).
 */
static __always_inline bool queue_on_level(struct task_struct *p, struct soryu_task_ctx *tctx, u32 lvl,
					   u64 slice, enum requeue how, u64 enq_flags)
{
	u32 llc = queue_llc(p);
	struct llc_queues *q = queues_of(llc);
	u64 now = scx_bpf_now(), dsq = LEVEL_DSQ(llc, lvl);
	bool ok;

	if (!q)
		return false;	/* never: queue_llc() is below SORYU_MAX_LLCS */
	if (how == REQUEUE_OWED)
		owe_serve(q, lvl, tctx, now);
	if (!vtime_on && (how >= REQUEUE_FRONT ||
			  (how == REQUEUE_RESUME && resume_at_head(dsq, tctx, now))))
		enq_flags |= SCX_ENQ_HEAD;
	mark_level(q, lvl);

	if (vtime_on)
		ok = scx_bpf_dsq_insert_vtime(p, dsq, slice, how >= REQUEUE_FRONT ?
					      front_vtime(p, dsq) : clamped_vtime(p), enq_flags);
	else
		ok = scx_bpf_dsq_insert(p, dsq, slice, enq_flags);
	/* before the insert lands: see count_level() */
	count_level(tctx, ok ? dsq + 1 : 0);
	return ok;
}

/*
 * One task placed by ops.enqueue under its level (grants resumed aside):
 * on a level DSQ, its CPU's own queue or a claimed idle CPU. The level and
 * boost histograms count exactly these, so each sums to the enqueue
 * counter (tests/vm/check_report.py).
 */
static void count_enqueue(struct soryu_stats *st, struct soryu_task_ctx *tctx, u32 lvl)
{
	u32 b;

	stat_add(st, SORYU_CNT_ENQUEUE, 1);
	if (!st || !hist_on)
		return;
	if (lvl < SORYU_NR_LEVELS)
		st->level_hist[lvl]++;
	/* unsigned index: one bounds check the verifier can follow */
	b = (u32)(tctx->boost + SORYU_MAX_BOOST);
	if (b < SORYU_BOOST_SPAN)
		st->boost_hist[b]++;
}

/*
 * Put @p straight on an idle CPU's local DSQ, if it can claim one
 * (claim_idle_cpu(): nearest first, whole cores first), as ops.select_cpu
 * does for a wakeup. An idle CPU means no queued task could run there (or
 * it would not be idle), so @p passes no one; and it runs where the claim
 * chose. Queued on a shared level instead and the claimed CPU merely
 * kicked, @p would go to whichever CPU dispatched first: a task leaving a
 * shared SMT core crossed to the other LLC in about half the moves
 * (tests/vm/topology.sh near). A grant it was robbed of (REQUEUE_OWED)
 * is void: it runs at once. The insert is a local DSQ, whose task the
 * kernel runs before any dispatch, so it is counted on no level. The
 * claim read @p's CPUs under its runqueue lock, and a task with migration
 * disabled never reaches ops.enqueue (the ops do not set
 * SCX_OPS_ENQ_MIGRATION_DISABLED): the CPU is always one it may move to.
 */
static bool place_on_idle(struct task_struct *p, struct soryu_task_ctx *tctx, u64 slice,
			  u64 enq_flags, struct soryu_stats *st)
{
	s32 prev = scx_bpf_task_cpu(p), cpu;

	cpu = claim_idle_cpu(p, prev, bpf_cpumask_test_cpu(prev, p->cpus_ptr));
	if (cpu < 0)
		return false;
	count_level(tctx, 0);
	stat_add(st, SORYU_CNT_PREEMPT_ATTEMPT, 1);
	stat_add(st, SORYU_CNT_PREEMPT_IDLE, 1);
	if (scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL_ON | cpu, slice, enq_flags)) {
		stat_add(st, SORYU_CNT_DIRECT, 1);
		count_enqueue(st, tctx, tctx->enq_level);
	} else {
		stat_add(st, SORYU_CNT_INSERT_FAIL, 1);
	}
	/* the kernel wakes a CPU it inserts to; this only makes sure */
	scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
	return true;
}

/*
 * A sync wakeup (a pipe or socket write, SCX_WAKE_SYNC: the waker is about
 * to sleep) of @p, from ops.select_cpu when it found no idle CPU: run @p
 * next on the waker's CPU, whose cache holds what the waker just wrote.
 * Through a shared level, whichever CPU dispatches first takes it, and a
 * message-passing pair migrates far more than under the default
 * scheduler, which puts the partner on the waker's CPU in the same way
 * (docs/design-wakeups.md). Only where @p passes no better task, as a task
 * on a local DSQ runs before any dispatch on its CPU:
 *  - no task is counted on a shared level better than @p's, in any LLC
 *    (queued_above()), nor is one as good first on this CPU's own queue,
 *    whose tasks can run nowhere else;
 *  - nothing is on this CPU's local DSQ already;
 *  - the waker is a sched_ext task running here, not exiting: under a
 *    higher class or the idle task, @p would wait unwatched.
 * Strict priority holds; FIFO inside a level does not across CPUs: @p may
 * run before a task of its own level queued earlier, as in BMQ, whose
 * queues are per CPU. @p's level is read before ops.runnable applies
 * --boost-on-wake, so it is never better than the level @p queues at: the
 * test can only err towards no.
 *
 * The starvation bound (docs/design-starvation.md, "The bound") pays for
 * this: a chain of such wakeups (two tasks at ping-pong) keeps this CPU's
 * local DSQ fed, and the kernel calls ops.dispatch, where levels are looked
 * at and starving tasks served, only when it is empty. So a chain stops
 * starve_ns / 8 after the CPU's last dispatch (sync_since), the period of
 * those looks, and at once while a level of this CPU's LLC (whose starving
 * tasks this CPU serves) or its own queue is marked starving; then the next
 * sync wakeup goes through its level and the CPU dispatches when the wakee
 * already here has run (docs/design-wakeups.md: how often the pair moves
 * with a longer chain). A waker that does not sleep after all keeps its
 * CPU to the end of its slice and @p waits that long, counted as a queued
 * wait (queued_at) like a wait on a level.
 *
 * Races: select_cpu runs on the waker's CPU and dispatch on its own, so
 * only this CPU touches its sync_since. The local DSQ's count and the
 * level counts are read without a lock: a task that lands on the local
 * DSQ meanwhile runs first, one stint more for @p; a better task counted
 * just after the read is one ops.enqueue was placing at the same moment,
 * which a wakeup on another CPU may pass as well.
 */
static bool wake_on_waker(struct task_struct *p, struct soryu_task_ctx *tctx)
{
	struct task_struct *waker = bpf_get_current_task_btf();
	s32 cpu = bpf_get_smp_processor_id();
	struct llc_queues *q;
	struct cpu_ctx *cctx;
	u32 zero = 0, lvl;
	u64 now;

	if (!(waker->scx.flags & SCX_TASK_QUEUED) || (waker->flags & PF_EXITING) ||
	    !bpf_cpumask_test_cpu(cpu, p->cpus_ptr) || scx_bpf_dsq_nr_queued(SCX_DSQ_LOCAL))
		return false;
	if (!(cctx = bpf_map_lookup_elem(&cpu_ctxs, &zero)) || !(q = queues_of(cctx->llc)) ||
	    READ_ONCE(q->starving) || cctx->pin_starving)
		return false;
	now = scx_bpf_now();
	if (cctx->sync_since && now - cctx->sync_since > (starve_ns >> 3))
		return false;
	lvl = task_level(p, tctx);
	if (pin_level(cpu, cctx) <= lvl || queued_above(lvl))
		return false;
	if (!scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, slice_left(tctx), 0)) {
		stat_inc(SORYU_CNT_INSERT_FAIL);
		return false;
	}
	if (!cctx->sync_since)
		cctx->sync_since = now;
	/* a new wait, measured like one on a level (ops.runnable starts its age) */
	if (!tctx->queued_at)
		tctx->queued_at = now;
	stat_inc(SORYU_CNT_SYNC_LOCAL);
	return true;
}

/*
 * Does a class above sched_ext (stop, deadline, RT, or a task boosted into
 * RT by priority inheritance) run on @cpu? A task put on that CPU's local
 * DSQ would wait until sched_ext gets the CPU back: ops.cpu_release hands
 * back what the local DSQ holds when the CPU is taken, not what lands
 * there later, and a kernel without the sched_ext deadline server (6.12)
 * never gives the CPU back while the higher class keeps it busy, so the
 * watchdog ends soryu (docs/kernels.md). The CPU's level cannot say so:
 * ops.cpu_release does not run when the higher class takes an idle CPU.
 * A class that takes the CPU after this read (curr_is()) can still strand
 * the task, until sched_ext next runs there.
 */
static bool higher_class_runs(s32 cpu)
{
	return curr_is(cpu, CURR_ABOVE_EXT);
}

/*
 * Preempt victim @v (find_victim()) by putting @p, woken at the level it
 * was just queued for (tctx->enq_level), straight on its local DSQ with
 * SCX_ENQ_PREEMPT, and have the task it displaces resume right behind @p
 * on that same local DSQ (resume_behind_wakee()). Through the level
 * queues, the same preemption costs the victim two dispatch calls with
 * their level scans, one to take @p and one to take the displaced task
 * back from its level's head; a waker ticking every millisecond beside a
 * compile (bench/run.sh -w build) makes a thousand such preemptions a
 * second per CPU. Both tasks run next on the victim anyway when
 * nothing better is queued, which is what is checked first:
 *  - a wakeup (another enqueue is a requeue, which the levels order), and
 *    the kick would go at once: a kick deferred by the wakeup granularity
 *    leaves @p on its level, where another CPU may take it sooner;
 *  - nothing queued above @lvl on a shared level, in any LLC
 *    (queued_above()), nor as good first on the victim's own queue;
 *  - nothing on the victim's local DSQ already, so @p runs next, and no
 *    class above sched_ext holds the victim (higher_class_runs());
 *  - the starvation pass may not be held off: a local DSQ kept fed skips
 *    ops.dispatch, where starving tasks are served, so not while the
 *    victim's LLC or own queue is marked starving, and not once the
 *    victim has not dispatched for starve_ns / 8, the same chain limit as
 *    wake_on_waker()'s; the displaced task's slice runs out within one
 *    slice of CPU time in any case, and the victim then dispatches.
 * The claim and the kick's belief are written as kick_victim() writes
 * them, before the insert, so that other wakers see the promise and the
 * landing can be checked. All of the victim's state is read without its
 * lock: if it switched tasks meanwhile, SCX_ENQ_PREEMPT still preempts
 * whatever runs there, a stale kick (counted in stale_kicks), as a kick
 * through the levels would be; the levels would then have let a better
 * task displaced that way run again first, here it waits behind @p for
 * one stint. A task better than @p that arrives during @p's stint may
 * also wait behind the displaced task for the rest of that task's slice
 * instead of taking the CPU at once.
 * Verified once, on its own, as find_victim() is: both inlined into
 * ops.enqueue made the verifier walk 195,810 instructions for it.
 */
__verified_once bool preempt_local(struct task_struct *p __arg_trusted, s64 v, u64 gran, u64 enq_flags)
{
	struct soryu_stats *st = this_stats();
	struct soryu_task_ctx *tctx;
	struct cpu_ctx *vctx;
	struct llc_queues *q;
	s32 cpu = victim_cpu(v);
	u32 zero = 0, seen = victim_level(v), lvl;

	if (v == VICTIM_NONE || !(enq_flags & SCX_ENQ_WAKEUP) || seen == SORYU_LVL_NONE ||
	    !(tctx = lookup_task_ctx(p)) ||
	    !(vctx = bpf_map_lookup_percpu_elem(&cpu_ctxs, &zero, cpu)) || gran_wait(vctx, seen, gran))
		return false;
	lvl = tctx->enq_level;
	if (scx_bpf_now() - READ_ONCE(vctx->dispatched_at) > (starve_ns >> 3) ||
	    READ_ONCE(vctx->pin_starving) || !(q = queues_of(READ_ONCE(vctx->llc))) ||
	    READ_ONCE(q->starving))
		return false;
	if (scx_bpf_dsq_nr_queued(SCX_DSQ_LOCAL_ON | cpu) || pin_level(cpu, vctx) <= lvl ||
	    queued_above(lvl) || higher_class_runs(cpu))
		return false;

	lower_level1(&vctx->claim1, lvl);
	WRITE_ONCE(vctx->resume_behind, true);
	WRITE_ONCE(vctx->kick_level1, seen + 1);
	/* on a local DSQ, counted on no queue (count_waiting() counted it) */
	count_level(tctx, 0);
	pin_leave(p, tctx);
	if (!scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL_ON | cpu, slice_left(tctx), enq_flags | SCX_ENQ_PREEMPT)) {
		WRITE_ONCE(vctx->resume_behind, false);
		WRITE_ONCE(vctx->kick_level1, 0);
		return false;
	}
	stat_add(st, SORYU_CNT_PREEMPT_KICK, 1);
	stat_add(st, SORYU_CNT_PREEMPT_LOCAL, 1);
	count_enqueue(st, tctx, lvl);
	return true;
}

/*
 * The task that preempt_local() displaced, back in ops.enqueue on its CPU
 * with slice left (REQUEUE_RESUME): onto this CPU's local DSQ, behind the
 * wakee that took the CPU, where it resumes when the wakee stops, with no
 * dispatch call in between. The flag that says so (resume_behind) is set
 * by the waker and cleared here or by the next task to start on this CPU
 * (soryu_running()), so it only ever covers the task running when the
 * wakee landed. Not when the local DSQ is empty: the wakee went elsewhere
 * (the kernel moves a task it cannot run there to the global DSQ). Nor
 * with --vtime, whose levels put the task that waited longer first after
 * a preemption, nor when this LLC's levels were marked starving since the
 * wakee was placed: a preempted task does not resume ahead of a starving
 * level (resume_at_head()). In those cases the displaced task goes back
 * to its level as any preempted task does.
 * Verified once, on its own, as preempt_local() is.
 */
__verified_once bool resume_behind_wakee(struct task_struct *p __arg_trusted)
{
	struct soryu_stats *st = this_stats();
	struct soryu_task_ctx *tctx;
	struct cpu_ctx *cctx;
	struct llc_queues *q;
	u32 zero = 0;

	if (!(cctx = bpf_map_lookup_elem(&cpu_ctxs, &zero)) || !READ_ONCE(cctx->resume_behind))
		return false;
	WRITE_ONCE(cctx->resume_behind, false);
	if (!(tctx = lookup_task_ctx(p)) || vtime_on || scx_bpf_task_cpu(p) != bpf_get_smp_processor_id() ||
	    !scx_bpf_dsq_nr_queued(SCX_DSQ_LOCAL) || !(q = queues_of(cctx->llc)) ||
	    READ_ONCE(q->starving))
		return false;
	count_level(tctx, 0);
	pin_leave(p, tctx);
	if (!scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, slice_left(tctx), 0))
		return false;	/* never: to its level, then */
	stat_add(st, SORYU_CNT_DIRECT, 1);
	count_enqueue(st, tctx, tctx->enq_level);
	return true;
}
