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
 * level first, then age. Its first task is therefore its best level's
 * oldest, and dispatch compares that level with the shared ones, so strict
 * priority holds across both (soryu_dispatch()). The starvation rule reads
 * the whole queue for its oldest task (pin_stale()): level order hides a
 * stale task behind better ones.
 *
 * What the own queue does not do: resume a preempted task at the head of
 * its level (it stays on its CPU's cache anyway, the point of resuming),
 * or order a level by vtime under --vtime (a pinned task competes only
 * with the tasks pinned to the same CPU, first come first served).
 * Included by main.bpf.c, after its globals and maps.
 */

/* Age bits of pin_key(): 2^58 ns is over nine years of uptime. */
#define PIN_AGE_BITS	58
#define PIN_AGE_MASK	((1ULL << PIN_AGE_BITS) - 1)

static bool pins_to_one_cpu(const struct task_struct *p)
{
	return p->nr_cpus_allowed == 1;
}

/* The own queue of @p's one CPU. */
static u64 pin_dsq_of(const struct task_struct *p)
{
	return SORYU_PIN_DSQ + bpf_cpumask_first(p->cpus_ptr);
}

/*
 * Queue order: level, then the stamp the starvation rule ages (age_at), so
 * a task queued again before it ran keeps its place, and a level's first
 * task is its oldest.
 */
static u64 pin_key(u32 lvl, const struct soryu_task_ctx *tctx)
{
	return ((u64)lvl << PIN_AGE_BITS) | (tctx->age_at & PIN_AGE_MASK);
}

/*
 * Queue @p on its CPU's own queue (ops.enqueue). The DSQ insert writes the
 * key into p->scx.dsq_vtime; with --vtime the task's own vtime is kept in
 * its context and put back when it runs or joins a shared level
 * (pin_restore_vtime()).
 */
static bool pin_enqueue(struct task_struct *p, struct soryu_task_ctx *tctx, u32 lvl,
			u64 slice, u64 enq_flags)
{
	if (vtime_on && !tctx->pin_queued)
		tctx->pin_vtime = p->scx.dsq_vtime;
	tctx->pin_queued = 1;
	return scx_bpf_dsq_insert_vtime(p, pin_dsq_of(p), slice, pin_key(lvl, tctx),
					enq_flags & ~SCX_ENQ_HEAD);
}

/* Off the own queue (it runs, or joins a shared level): its vtime back. */
static void pin_restore_vtime(struct task_struct *p, struct soryu_task_ctx *tctx)
{
	if (!tctx->pin_queued)
		return;
	tctx->pin_queued = 0;
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
static u32 pin_level(s32 cpu)
{
	struct task_struct *head;
	struct soryu_task_ctx *tctx;

	if (scx_bpf_dsq_nr_queued(SORYU_PIN_DSQ + cpu) <= 0)
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
	struct soryu_task_ctx *tctx;
	struct task_struct *p;
	bool found = false;
	u64 a;

	if (!cctx->pin_starving) {
		if (!time_after(now, cctx->pin_next_look))
			return false;
		cctx->pin_next_look = now + (starve_ns >> 3);
	}
	bpf_for_each(scx_dsq, p, SORYU_PIN_DSQ + cpu, 0) {
		/* queued_at 0: it already ran, its wait is over */
		if (!(tctx = lookup_task_ctx(p)) || !READ_ONCE(tctx->queued_at))
			continue;
		a = READ_ONCE(tctx->age_at);
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
 * the very task the iterator stands on. serve_starved() grants it.
 */
static bool take_pinned_aged(s32 cpu, u64 at)
{
	struct soryu_task_ctx *tctx;
	struct task_struct *p;

	bpf_for_each(scx_dsq, p, SORYU_PIN_DSQ + cpu, 0) {
		if (!(tctx = lookup_task_ctx(p)) || !READ_ONCE(tctx->queued_at) ||
		    time_after(READ_ONCE(tctx->age_at), at))
			continue;
		if (scx_bpf_dsq_move(BPF_FOR_EACH_ITER, p, SCX_DSQ_LOCAL, 0))
			return true;
	}
	return false;
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
