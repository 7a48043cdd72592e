/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * scx_soryu: a stint on a CPU, from the callbacks that begin and end it.
 * ops.running ends a wait (the figures the starvation bound and the
 * wake-to-run histograms are about), hands over a starvation grant and
 * shows the CPU's level; ops.stopping charges the stint and decides
 * whether the task resumes at its level's head; ops.cpu_release hands a
 * CPU's queued tasks back when a higher class takes it; ops.quiescent
 * gives the sleep boost; ops.yield sends a yielder to its level's tail.
 * Included by main.bpf.c, after the files whose helpers these call.
 */

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
	count_level(tctx, 0);	/* off its level's DSQ: it runs */
	pin_leave(p, tctx);
	now = scx_bpf_now();
	/* the figure the starvation bound is about: every task, every wait */
	if (tctx->queued_at) {
		if (st)
			note_wait(st, SORYU_WAIT_QUEUED, now - tctx->queued_at);
		tctx->served_exec = tctx->exec_base;	/* for served() */
	}
	tctx->queued_at = 0;
	refresh_cgroup_nice(p, tctx);	/* a task placed on an idle CPU skips enqueue */
	lvl = task_level(p, tctx);
	if ((cctx = bpf_map_lookup_elem(&cpu_ctxs, &zero))) {
		cctx->started_at = now;
		if (cctx->claim1)
			WRITE_ONCE(cctx->claim1, 0);
		/* the wakee, or whatever started instead: the displacing is over */
		if (cctx->resume_behind)
			WRITE_ONCE(cctx->resume_behind, false);
		/*
		 * The task a starvation serve moved here: a whole slice,
		 * unpreemptible (grant_slice()). Another task starting first
		 * leaves the grant to it.
		 */
		if (cctx->grant_pid && cctx->grant_pid == p->pid) {
			cctx->grant_pid = 0;
			tctx->granted = true;
			tctx->used_ns = 0;
			scx_bpf_task_set_slice(p, slice_ns);
		}
		show_level(cctx, tctx->granted ? SORYU_LVL_PCPU_KTHREAD : lvl);
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

	if (!tctx->wake_at)
		return;
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

	struct soryu_stats *st;

	if ((st = this_stats()))
		note_kick_landed(st);
	if (!(tctx = lookup_task_ctx(p)))
		return;
	charge(p, tctx);
	tctx->last_ran = scx_bpf_now();
	/*
	 * Still runnable with slice left (charge() zeroes used_ns when the
	 * slice is spent): a kick or a higher class preempted it, and
	 * ops.enqueue puts it back at its level's head. A yield is no
	 * preemption: the yielder goes to the tail.
	 */
	tctx->resume = runnable && tctx->used_ns && !tctx->yielded;
	tctx->yielded = false;
}

/*
 * A higher class (RT, deadline, stop) took this CPU. Tasks already on its
 * local DSQ would wait behind it, so hand them back to their levels, where
 * any CPU can take them; and show this CPU as running the best level, so
 * that find_victim() does not waste kicks on a CPU soryu does not hold. It
 * shows its real level again when a soryu task next runs here.
 */
void BPF_STRUCT_OPS(soryu_cpu_release, s32 cpu, struct scx_cpu_release_args *args)
{
	struct cpu_ctx *cctx;
	u32 zero = 0;

	if ((cctx = bpf_map_lookup_elem(&cpu_ctxs, &zero))) {
		show_level(cctx, SORYU_LVL_PCPU_KTHREAD);
		/*
		 * A grant not yet taken was for a task on the local DSQ, which
		 * is handed back now and served again elsewhere (requeue_how()).
		 */
		cctx->grant_pid = 0;
		/* the wakee on the local DSQ goes back to its level too */
		cctx->resume_behind = false;
	}
	scx_bpf_reenqueue_local();
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

/*
 * sched_yield(): back to the tail of the task's own level, boost and charged
 * runtime untouched, so tasks of that level and better run first. Not BMQ's
 * default (+12, the ceiling): under strict priority the ceiling means waiting
 * for a starvation serve, up to --starve-ms per yield whenever better levels
 * fill the CPUs, and spin-then-block code (Rust's channels, this daemon's
 * own loop among them) yields a few times on every wait. A yield spinner is
 * not let off either: its runtime keeps adding up in charge() and costs a
 * step per slice, as any task's does.
 */
bool BPF_STRUCT_OPS(soryu_yield, struct task_struct *from, struct task_struct *to)
{
	/*
	 * The kernel only zeroes the slice itself when ops.yield is absent; a
	 * zero slice sends the task back through ops.enqueue. A directed
	 * yield (@to, KVM's) is declined but ends the slice all the same.
	 */
	struct soryu_task_ctx *tctx = lookup_task_ctx(from);

	if (tctx)
		tctx->yielded = true;	/* to the tail, not back to the head */
	scx_bpf_task_set_slice(from, 0);
	return false;
}
