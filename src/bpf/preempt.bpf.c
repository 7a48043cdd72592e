/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * scx_soryu: preemption. A task queued at a level better than what
 * some CPU runs takes that CPU.
 * Included by main.bpf.c, after its globals and maps.
 */

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
		struct cpu_ctx *vctx;

		/* before the kick, so that its landing finds the belief */
		if ((vctx = bpf_map_lookup_percpu_elem(&cpu_ctxs, &zero, victim)))
			WRITE_ONCE(vctx->kick_level1, worst + 1);
		scx_bpf_kick_cpu(victim, SCX_KICK_PREEMPT);
		stat_add(st, SORYU_CNT_PREEMPT_KICK, 1);
	} else {
		stat_add(st, SORYU_CNT_PREEMPT_NONE, 1);
	}
}

/*
 * Called when a task stops on this CPU. The first task to stop after a
 * preemption kick tells whether the kicker's belief held: this CPU's
 * level is then that of the task the kick displaced (or that blocked
 * before it landed). Another level than the kicker read means the CPU
 * had switched tasks between the read and the kick: the choice of victim
 * was made on a stale level. Racing kickers overwrite each other's
 * belief and the last one is compared, so a sample can be lost, never
 * invented.
 */
static void note_kick_landed(struct soryu_stats *st)
{
	struct cpu_ctx *cctx;
	u32 zero = 0, k;

	if (!(cctx = bpf_map_lookup_elem(&cpu_ctxs, &zero)))
		return;
	k = READ_ONCE(cctx->kick_level1);
	if (!k)
		return;
	WRITE_ONCE(cctx->kick_level1, 0);
	if (k - 1 != cctx->level)
		stat_add(st, SORYU_CNT_STALE_KICK, 1);
}
