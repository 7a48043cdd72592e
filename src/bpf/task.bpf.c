/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * scx_soryu: a task's own figures: its level, what is left of its slice,
 * charging its runtime (the boost's penalty for a used-up slice), its
 * vtime under --vtime, where ops.enqueue puts it (enum requeue), and what
 * the task a CPU runs now is (curr_is()).
 * Included by main.bpf.c, after its globals and maps.
 */

static bool is_pcpu_kthread(const struct task_struct *p)
{
	return (p->flags & PF_KTHREAD) && p->nr_cpus_allowed == 1;
}

/* The task's nice plus its cgroups' offset (cgroup.bpf.c); soryu_level() clamps. */
static u32 task_level(const struct task_struct *p, const struct soryu_task_ctx *tctx)
{
	return soryu_level(p->policy, is_pcpu_kthread(p),
			   (int)p->static_prio - 120 + tctx->cg_nice, tctx->boost);
}

/* The kernel's priorities below this belong to the classes above sched_ext. */
#define MAX_RT_PRIO	100

/* What a CPU's current task may be (curr_is()). */
enum curr_trait {
	CURR_PINNED = 1 << 0,		/* it may run nowhere else */
	CURR_ABOVE_EXT = 1 << 1,	/* of a class above sched_ext: stop, deadline, RT */
};

/*
 * Does @cpu's current task have each trait of @traits? Read under RCU
 * without the CPU's lock: the CPU may switch tasks right after, which each
 * caller allows for.
 */
static bool curr_is(s32 cpu, u32 traits)
{
	struct task_struct *curr;
	u32 t = 0;

	bpf_rcu_read_lock();
	curr = __COMPAT_scx_bpf_cpu_curr(cpu);
	if (curr && curr->nr_cpus_allowed == 1)
		t |= CURR_PINNED;
	if (curr && curr->prio < MAX_RT_PRIO)
		t |= CURR_ABOVE_EXT;
	bpf_rcu_read_unlock();
	return traits && (t & traits) == traits;
}

/* What is left of the task's slice; a used-up slice was refilled in charge(). */
static u64 slice_left(const struct soryu_task_ctx *tctx)
{
	return tctx->used_ns < slice_ns ? slice_ns - tctx->used_ns : slice_ns;
}

/*
 * Is @p still waiting on a queue, and, if so, the start of its age (*at)?
 * ops.running zeroes queued_at when a task runs: a head with 0 there is
 * leaving its DSQ and tells nothing about the tasks behind it. Lockless:
 * either field may change just after the read, which each caller allows
 * for where it decides.
 */
static __always_inline bool waiting_age(struct task_struct *p, u64 *at)
{
	struct soryu_task_ctx *tctx = lookup_task_ctx(p);

	if (!tctx || !READ_ONCE(tctx->queued_at))
		return false;
	*at = READ_ONCE(tctx->age_at);
	return true;
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
		/* the daemon's threads keep the floor (soryu_init_task()) */
		if (p->tgid != daemon_tgid)
			tctx->boost = soryu_boost_after_expiry(tctx->boost, p->policy);
		tctx->granted = false;	/* the grant's slice was used */
	}
}

/* --vtime: @p's place in its level. A sleeper's credit is worth at most one slice. */
static u64 clamped_vtime(const struct task_struct *p)
{
	u64 vt = p->scx.dsq_vtime, floor = READ_ONCE(vtime_now) - slice_ns;

	return time_before(vt, floor) ? floor : vt;
}

/*
 * --vtime: a key that puts @p in front of the head of DSQ @dsq, which is what a
 * FIFO level does with SCX_ENQ_HEAD (a vtime DSQ takes no head insert):
 * its own key if that is first already, else one below the head's. The
 * insert writes the key into its vtime, a credit of at most the gap to
 * the head. The peek is lockless: a task inserted in between may still
 * go first, which costs @p one task's turn, not its place.
 */
static u64 front_vtime(const struct task_struct *p, u64 dsq)
{
	struct task_struct *head = __COMPAT_scx_bpf_dsq_peek(dsq);
	u64 vt = p->scx.dsq_vtime;

	if (head && !time_before(vt, head->scx.dsq_vtime))
		vt = head->scx.dsq_vtime - 1;
	return vt;
}

/*
 * Where ops.enqueue puts a task, from the least owed to the most. On a
 * shared level and on a CPU's own queue alike (queue_on_level(),
 * pin_key()).
 */
enum requeue {
	REQUEUE_TAIL,	/* a new wait: the tail of its level */
	REQUEUE_RESUME,	/* preempted with slice left: the head, unless its level starves */
	REQUEUE_FRONT,	/* handed back before it ran: the head, where it was taken from */
	REQUEUE_OWED,	/* robbed of a starvation serve: the head, and served at once */
};

/*
 * Is @p's wait over? Preempted (REQUEUE_RESUME) before it ran half a slice
 * since it last left a queue, it was not served yet: a stint that short
 * is what a task gets when a better one wakes right after it was picked,
 * not the service the starvation rule owes it. So it keeps its age, and a
 * task that is preempted again and again early in its stints still goes
 * stale on time. Half a slice is also where tests/vm/starve.sh counts a
 * stint as service. Without it, a task picked and cut short at once waits
 * a whole round again with a fresh stamp, past the bound
 * (docs/design-starvation.md).
 */
static bool served(const struct task_struct *p, const struct soryu_task_ctx *tctx)
{
	return p->se.sum_exec_runtime - tctx->served_exec >= slice_ns / 2;
}

/*
 * ops.cpu_release hands a CPU's local tasks back (SCX_ENQ_REENQ) when a
 * higher class takes the CPU. Each of them was taken from the head of a
 * queue (dispatch moves heads; a stale pinned task is the oldest of its
 * queue), so it goes back in front: at the tail it would wait behind
 * every task it had already waited out. A task still holding a grant was
 * served for starving and is owed the rest of that serve; the grant is
 * void on another CPU (and here the higher class runs), so it is served
 * again (owe_serve()).
 */
static enum requeue requeue_how(struct soryu_task_ctx *tctx, u64 enq_flags)
{
	if (enq_flags & SCX_ENQ_REENQ) {
		if (tctx->granted) {
			tctx->granted = false;
			return REQUEUE_OWED;
		}
		if (tctx->queued_at)
			return REQUEUE_FRONT;
	}
	return tctx->resume ? REQUEUE_RESUME : REQUEUE_TAIL;
}
