/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * scx_soryu: each CPU's own queue, for the tasks that may run on that CPU
 * only: per-CPU kthreads (ksoftirqd, bound kworkers) and tasks pinned to
 * one CPU (taskset, a one-CPU cpuset). On a shared level such a task is
 * seen by every CPU that probes the level, skipped under the level's lock
 * by all but one, and its count makes them probe in vain. On its CPU's
 * own queue only that CPU ever looks at it, as in BMQ, which keeps a
 * queue per CPU for every task.
 *
 * The queue is one DSQ per CPU, SORYU_PIN_DSQ + cpu, ordered by pin_key():
 * level first, then the order a shared level would give (FIFO with a
 * preempted task back at the head, or vtime with --vtime), so the policy
 * a task meets does not depend on which queue holds it. Its first task is
 * its best level's, and dispatch compares that level with the shared
 * ones, so strict priority holds across both (soryu_dispatch()). The
 * starvation rule reads the whole queue for its oldest task (pin_stale()):
 * the order hides a stale task behind better ones.
 * Included by main.bpf.c, after its globals and maps.
 */

/* FIFO places: tails count up from here, heads down (2^56 each way). */
#define PIN_FIFO_MID	(1ULL << (SORYU_PIN_LVL_SHIFT - 1))

static bool pins_to_one_cpu(const struct task_struct *p)
{
	return p->nr_cpus_allowed == 1;
}

/*
 * The place of @p in the own queue of @cctx's CPU: its level, then within
 * the level what a shared level's DSQ does with SCX_ENQ_HEAD and tail
 * inserts (a vtime DSQ has no head insert): tails take rising numbers,
 * heads falling ones, from two counters of that CPU. A preempted task
 * (REQUEUE_RESUME) goes to the head unless a task of the queue starves
 * (the rule of resume_at_head()); one handed back by cpu_release goes to
 * the head, or with --vtime before every vtime (requeue_how()); otherwise
 * with --vtime the place is its vtime, clamped as
 * on a shared level (saved by pin_enqueue()). The key puts every level
 * before every worse one (soryu_pin_key()). The counters are written by
 * ops.enqueue under the runqueue lock of the task's CPU, which for a task
 * with one CPU is that CPU's, so they do not race; they would wrap after
 * 2^56 inserts, and a vtime past 2^57 ns (4.5 years of CPU time) would
 * wrap within its level.
 */
static u64 pin_key(const struct soryu_task_ctx *tctx, u32 lvl, enum requeue how,
		   struct cpu_ctx *cctx)
{
	u64 ord;

	if (how >= REQUEUE_FRONT)
		ord = vtime_on ? 0 : PIN_FIFO_MID - ++cctx->pin_heads;
	else if (vtime_on)
		ord = tctx->pin_vtime;
	else if (how == REQUEUE_RESUME && !cctx->pin_starving)
		ord = PIN_FIFO_MID - ++cctx->pin_heads;
	else
		ord = PIN_FIFO_MID + ++cctx->pin_tails;
	return soryu_pin_key(lvl, ord);
}

/*
 * Count @tctx's task on the own queue of CPU @cpu1 - 1 (0: on none), in
 * that CPU's nr_pinned. The rule of count_level(), for the same reason:
 * raised in ops.enqueue before the insert lands, lowered by the task
 * itself only after it left the queue (it runs, is queued elsewhere, or
 * leaves sched_ext), so nr_pinned is never below the tasks on the queue
 * and dispatch skips a queue counted 0 without a kfunc call. Other CPUs
 * may move a task's count (an affinity change), hence the atomics.
 */
static void pin_count(struct soryu_task_ctx *tctx, u32 cpu1)
{
	u32 old = tctx->pin_cpu1, zero = 0;
	struct cpu_ctx *c;

	if (old == cpu1)
		return;
	if (old && (c = bpf_map_lookup_percpu_elem(&cpu_ctxs, &zero, old - 1)))
		__sync_fetch_and_sub(&c->nr_pinned, 1);
	if (cpu1 && (c = bpf_map_lookup_percpu_elem(&cpu_ctxs, &zero, cpu1 - 1)))
		__sync_fetch_and_add(&c->nr_pinned, 1);
	tctx->pin_cpu1 = cpu1;
}

/*
 * Queue @p on its CPU's own queue (ops.enqueue). The DSQ insert writes the
 * key into p->scx.dsq_vtime; with --vtime the task's own vtime, clamped as
 * a shared level would, is kept in its context and put back when it leaves
 * the queue (pin_leave()).
 */
static __always_inline bool pin_enqueue(struct task_struct *p, struct soryu_task_ctx *tctx, u32 lvl,
			u64 slice, enum requeue how, u64 enq_flags)
{
	s32 cpu = bpf_cpumask_first(p->cpus_ptr);
	struct cpu_ctx *cctx;
	u32 zero = 0;
	bool ok;

	if (!(cctx = bpf_map_lookup_percpu_elem(&cpu_ctxs, &zero, cpu)))
		return false;
	/* not once more when queued again: the field holds the key by then */
	if (vtime_on && !tctx->pin_cpu1)
		tctx->pin_vtime = clamped_vtime(p);
	/*
	 * Robbed of a serve (requeue_how()): this CPU, the task's only one,
	 * hands it back from its own cpu_release, so writing pin_starving
	 * here keeps it this CPU's own field. The next dispatch here reads
	 * the queue for its oldest task, which this one is again.
	 */
	if (how == REQUEUE_OWED)
		cctx->pin_starving = true;
	/* a vtime DSQ takes no head insert: pin_key() places the task */
	ok = scx_bpf_dsq_insert_vtime(p, SORYU_PIN_DSQ + cpu, slice,
				      pin_key(tctx, lvl, how, cctx), enq_flags & ~SCX_ENQ_HEAD);
	/* before the insert lands, as count_level() */
	pin_count(tctx, ok ? cpu + 1 : 0);
	return ok;
}

/* Off the own queue (it runs, is queued elsewhere, leaves): uncounted, its vtime back. */
static void pin_leave(struct task_struct *p, struct soryu_task_ctx *tctx)
{
	if (!tctx->pin_cpu1)
		return;
	pin_count(tctx, 0);
	if (vtime_on)
		p->scx.dsq_vtime = tctx->pin_vtime;
}

/*
 * The level of the first task on @cpu's own queue, SORYU_LVL_NONE when it
 * is empty. Only @cpu takes from its queue, and it calls this from its own
 * ops.dispatch, so the answer holds for the call: a task can only leave in
 * between by a dequeue (an affinity or property change), and then the
 * take finds the next one or nothing (soryu_dispatch() falls back to the
 * shared levels).
 */
static u32 pin_level(s32 cpu, struct cpu_ctx *cctx)
{
	struct task_struct *head;
	struct soryu_task_ctx *tctx;

	/* counted 0: empty (pin_count()); the common case costs one read */
	if (!cctx || READ_ONCE(cctx->nr_pinned) <= 0)
		return SORYU_LVL_NONE;
	head = __COMPAT_scx_bpf_dsq_peek(SORYU_PIN_DSQ + cpu);
	if (!head || !(tctx = lookup_task_ctx(head)))
		return SORYU_LVL_NONE;
	return tctx->enq_level;
}

/* Run the first task of @cpu's own queue here. */
static bool take_pinned(s32 cpu, struct soryu_stats *st)
{
	stat_add(st, SORYU_CNT_PROBES, 1);
	return scx_bpf_dsq_move_to_local(SORYU_PIN_DSQ + cpu, 0);
}

/*
 * Has a task on @cpu's own queue waited starve_ns? *at: the oldest age
 * there. The queue is read whole, since a stale task may sit behind better
 * levels; like a shared level it is read once per starve_ns / 8
 * (pin_next_look), and on every dispatch while a stale task was seen
 * (pin_starving), until the oldest is fresh again. Only @cpu reads or
 * writes these two fields, from its own dispatch: no race.
 */
static bool pin_stale(s32 cpu, struct cpu_ctx *cctx, u64 now, u64 *at)
{
	struct task_struct *p;
	bool found = false;
	u64 a;

	if (!cctx->pin_starving) {
		if (!time_after(now, cctx->pin_next_look))
			return false;
		cctx->pin_next_look = now + (starve_ns >> 3);
	}
	bpf_for_each(scx_dsq, p, SORYU_PIN_DSQ + cpu, 0) {
		/* one that already ran is no longer waiting */
		if (!waiting_age(p, &a))
			continue;
		if (!found || time_before(a, *at)) {
			*at = a;
			found = true;
		}
	}
	cctx->pin_starving = found && time_after(now, *at + starve_ns);
	return cctx->pin_starving;
}

/*
 * Move the task of @cpu's own queue aged @at (found by pin_stale()) to this
 * CPU, from the middle of the queue if need be: scx_bpf_dsq_move() takes
 * the very task the iterator stands on. Returns its pid, 0 if none moved;
 * serve_starved() grants it.
 */
static s32 take_pinned_aged(s32 cpu, u64 at)
{
	struct task_struct *p;
	u64 a;

	bpf_for_each(scx_dsq, p, SORYU_PIN_DSQ + cpu, 0) {
		if (!waiting_age(p, &a) || time_after(a, at))
			continue;
		if (scx_bpf_dsq_move(BPF_FOR_EACH_ITER, p, SCX_DSQ_LOCAL, 0))
			return p->pid;
	}
	return 0;
}

/* One own queue per possible CPU, on the CPU's NUMA node. */
static s32 init_pin_dsqs(void)
{
	u32 cpu, nr = scx_bpf_nr_cpu_ids();
	s32 ret;

	bpf_for(cpu, 0, nr) {
		ret = scx_bpf_create_dsq(SORYU_PIN_DSQ + cpu, __COMPAT_scx_bpf_cpu_node(cpu));
		if (ret) {
			scx_bpf_error("soryu: cannot create the own queue of CPU %u: %d", cpu, ret);
			return ret;
		}
	}
	return 0;
}
