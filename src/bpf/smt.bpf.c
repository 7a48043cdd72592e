/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * scx_soryu: one busy task per SMT core while whole cores sit idle.
 *
 * A task that never sleeps is placed once, at fork or at its last wakeup,
 * and dispatch then keeps it slice after slice: nothing queued competes
 * with it. If it was placed beside a busy sibling while another core had
 * no busy thread (a burst of forks or wakeups raced for the last whole
 * cores), it would stay there, two tasks sharing one core's execution
 * units while a core idles. The default scheduler's load balancing moves
 * such a task; soryu moves it at its next slice end: dispatch lets it go
 * (smt_crowded()), the kernel hands it to ops.enqueue with SCX_ENQ_LAST
 * (the ops set SCX_OPS_ENQ_LAST for this), and place_on_idle() claims a
 * whole idle core for it (claim_idle_cpu()).
 * Measured with tests/vm/topology.sh spread (docs/design-wakeups.md).
 *
 * Included by main.bpf.c, after llc.bpf.c (masked()).
 */

/*
 * Each CPU's next SMT sibling in a ring over its core's threads, itself
 * without SMT; written by the daemon before load (src/topology.rs).
 */
const volatile u32 cpu_sibling[SORYU_MAX_CPUS];
#define SIBLING_OF(cpu)	cpu_sibling[masked(cpu, SORYU_MAX_CPUS - 1)]

/*
 * Does @cpu run a task that may run nowhere else? Its current task, read
 * under RCU: a flag kept by ops.running would miss an affinity widened
 * while the task runs, and then both threads of a core would leave.
 */
static bool runs_stuck(s32 cpu)
{
	return curr_is(cpu, CURR_PINNED);
}

/*
 * Should @p, on @cpu, leave its core for a whole idle one? Yes when it
 * shares the core with a busy thread while a whole core @p may use is
 * idle, and of the two it is the one to go: the thread with the higher
 * id, unless the other runs a task that may not leave. Both going at once
 * would have the second find the first's new core no longer whole, and
 * take one further away (tests/vm/topology.sh near). Read without a lock
 * from the kernel's idle masks,
 * so the answer can be a moment old. A wrong yes costs one trip through
 * the queue: enqueue then finds no whole core, takes any idle CPU, or
 * kicks this one, which shows the worst level once dispatch let @p go. A
 * wrong no costs one more slice beside the sibling. A task alone on its
 * core never moves, so two tasks do not trade places back and forth.
 */
static __noinline bool smt_crowded(struct task_struct *p, s32 cpu)
{
	const struct cpumask *mask;
	bool busy = false, crowded;
	u32 i, s = cpu;

	if (SIBLING_OF(cpu) == cpu)
		return false;	/* no SMT sibling: nothing to spread */
	mask = scx_bpf_get_idle_cpumask();
	bpf_for(i, 0, SORYU_MAX_SMT) {
		s = SIBLING_OF(s);
		if (s == cpu)
			break;
		if (!bpf_cpumask_test_cpu(s, mask) && (s < cpu || runs_stuck(s))) {
			busy = true;
			break;
		}
	}
	scx_bpf_put_idle_cpumask(mask);
	if (!busy)
		return false;
	mask = scx_bpf_get_idle_smtmask();
	crowded = bpf_cpumask_intersects(mask, p->cpus_ptr);
	scx_bpf_put_idle_cpumask(mask);
	return crowded;
}
