/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * scx_soryu: preemption. A task queued at a level better than what
 * some CPU runs takes that CPU, after the wakeup granularity.
 * Included by main.bpf.c, after its globals and maps.
 */

/*
 * The level a preemption target counts as running: its own, or better if
 * a kick already promised it to a task (cpu_ctx.claim1). A CPU claimed
 * for level L will run a task of level L or better next, so a second
 * wakee of level L or worse must look elsewhere: a burst of wakeups
 * spreads over the CPUs running worse levels instead of all kicking the
 * same one. The CPU clears its claim when it next dispatches or starts a
 * task: the promise is then kept, or was for a task another CPU took.
 */
static u32 target_level(const struct cpu_ctx *cctx)
{
	u32 l = READ_ONCE(cctx->level), c = READ_ONCE(cctx->claim1);

	return c && c - 1 < l ? c - 1 : l;
}

/*
 * Lower *@slot, 1 + a level (0: none), to 1 + @lvl if that is better.
 * Lock-free; a lost race leaves the other writer's level, and the loser
 * still has the next slice end (claims are hints, see target_level()).
 */
static void lower_level1(u32 *slot, u32 lvl)
{
	u32 old = READ_ONCE(*slot);

	if (!old || old > lvl + 1)
		__sync_val_compare_and_swap(slot, old, lvl + 1);
}

/*
 * Preempt @cpu, believed to run level @seen. The belief is written before
 * the kick, so that its landing finds it (note_kick_landed()).
 */
static void send_kick(s32 cpu, struct cpu_ctx *vctx, u32 seen)
{
	WRITE_ONCE(vctx->kick_level1, seen + 1);
	scx_bpf_kick_cpu(cpu, SCX_KICK_PREEMPT);
}

/*
 * The deferred kick's timer: the CPU's task has now had its wakeup
 * granularity. Kick it if it still runs a level worse than the best task
 * that waited for it. Taken with an exchange, so a deferral that comes in
 * while this runs re-arms the timer for itself.
 */
static int kick_timer_fn(void *map, int *key, struct kick_timer *kt)
{
	struct cpu_ctx *cctx;
	u32 zero = 0, want, l;
	s32 cpu = *key;

	want = __sync_lock_test_and_set(&kt->lvl1, 0);
	if (!want || !(cctx = bpf_map_lookup_percpu_elem(&cpu_ctxs, &zero, cpu)))
		return 0;
	l = READ_ONCE(cctx->level);
	if (l > want - 1)
		send_kick(cpu, cctx, l);
	return 0;
}

/*
 * Kick @cpu, which runs a level worse than @lvl, for a task of level
 * @lvl. Its claim shows the promise to other kickers at once, whether the
 * kick is sent now or later. The wakeup granularity (@gran not 0): a task
 * that started running on it less than --wakeup-gran-us ago keeps the CPU
 * until then, and the kick is sent by a timer at that moment. Message
 * passing needs it: a sender that every woken receiver preempts at once
 * writes one message per context switch. The added
 * wait is at most the granularity. Only for a sync wakeup (the waker is
 * about to sleep, as a pipe or socket writer says it is) or a new task
 * (other enqueues without a wakeup kick no busy CPU: victim_bar()): a
 * task woken by a timer or an interrupt, an interactive task's usual
 * wakeup, would wait out the granularity beside CPU hogs for nothing
 * (docs/design-wakeups.md). A CPU going idle (SORYU_LVL_NONE) is kicked at
 * once: it runs nothing to protect.
 */
/*
 * How long a kick of @vctx's CPU, believed to run level @seen, must wait
 * for the wakeup granularity (kick_victim()): 0 to kick now.
 */
static u64 gran_wait(struct cpu_ctx *vctx, u32 seen, u64 gran)
{
	u64 ran;

	if (!gran || !wakeup_gran_ns || seen == SORYU_LVL_NONE)
		return 0;
	ran = scx_bpf_now() - READ_ONCE(vctx->started_at);
	/* a stamp from the future (another CPU's clock) counts as 0 */
	if ((s64)ran < 0)
		ran = 0;
	return ran < wakeup_gran_ns ? wakeup_gran_ns - ran : 0;
}

static void kick_victim(s32 cpu, struct cpu_ctx *vctx, u32 lvl, u32 seen, u64 gran)
{
	struct soryu_stats *st = this_stats();
	struct kick_timer *kt;
	u64 wait;
	u32 key = cpu;

	lower_level1(&vctx->claim1, lvl);
	if ((wait = gran_wait(vctx, seen, gran)) && (kt = bpf_map_lookup_elem(&kick_timers, &key))) {
		/*
		 * The level first, then the timer: a callback already
		 * running has taken the old level and will not see this
		 * one, but the re-armed timer will. Re-arming moves the
		 * expiry to this run's end of protection; an older expiry
		 * was for an earlier run.
		 */
		lower_level1(&kt->lvl1, lvl);
		bpf_timer_start(&kt->timer, wait, 0);
		stat_add(st, SORYU_CNT_PREEMPT_DEFER, 1);
		return;
	}
	send_kick(cpu, vctx, seen);
	stat_add(st, SORYU_CNT_PREEMPT_KICK, 1);
}

/* A victim search in progress: the best candidate so far. */
struct victim {
	s32 cpu;		/* -1: none yet */
	u32 level;		/* its level; the queued task's level while none */
	struct cpu_ctx *cctx;	/* its cpu_ctx */
	u32 from;		/* read CPUs from the one after this position */
};

/*
 * Read the CPUs of LLC @llc, starting after position @v->from, so that
 * equal candidates are taken in a different order by tasks last run on
 * different CPUs; keep in @v the one @p may use that runs the worst level
 * worse than @v->level. Counts each CPU read (victim_reads).
 */
static void scan_llc(struct task_struct *p, struct victim *v, s32 llc)
{
	u32 base = LLC_FIRST(llc), nr = LLC_FIRST(llc + 1) - base, zero = 0, i, l, reads = 0;
	struct cpu_ctx *cctx;
	s32 cpu;

	bpf_for(i, 0, nr) {
		if (base + i >= SORYU_MAX_CPUS)
			break;
		cpu = LLC_CPU(base + (v->from + 1 + i) % nr);
		if (!bpf_cpumask_test_cpu(cpu, p->cpus_ptr))
			continue;
		reads++;
		cctx = bpf_map_lookup_percpu_elem(&cpu_ctxs, &zero, cpu);
		if (cctx && (l = target_level(cctx)) > v->level) {
			v->level = l;
			v->cpu = cpu;
			v->cctx = cctx;
		}
	}
	stat_add(this_stats(), SORYU_CNT_VICTIM_READS, reads);
}

/*
 * An idle CPU of LLC @llc that @p may use and @idle shows, claimed, or -1.
 * Read from the LLC's list (llc_cpus), starting after position @from so
 * that wakeups from different CPUs spread over the LLC's idle CPUs. The
 * mask may be a moment old: the claim (test-and-clear) is what decides.
 */
static s32 claim_in_llc(struct task_struct *p, const struct cpumask *idle, u32 llc, u32 from)
{
	u32 base = LLC_FIRST(llc), nr = LLC_FIRST(llc + 1) - base, i;
	s32 cpu;

	bpf_for(i, 0, nr) {
		if (base + i >= SORYU_MAX_CPUS)
			break;
		cpu = LLC_CPU(base + (from + i) % nr);
		if (bpf_cpumask_test_cpu(cpu, idle) && bpf_cpumask_test_cpu(cpu, p->cpus_ptr) &&
		    scx_bpf_test_and_clear_cpu_idle(cpu))
			return cpu;
	}
	return -1;
}

/*
 * An idle CPU @p may use, claimed, or a negative value: nearest first,
 * whole SMT cores first at each distance. In order: @prev if its whole
 * core is idle; a whole idle core in @prev's LLC; a whole idle core
 * anywhere; @prev alone; an idle CPU in @prev's LLC; any idle CPU. The
 * order of the kernel's own placement for a waking task
 * (scx_bpf_select_cpu_dfl() in ops.select_cpu), so a task queued without
 * a wakeup (its slice ended, it was preempted or handed back, or dispatch
 * let it leave a shared core: smt.bpf.c) lands where a wakeup would have.
 * Without SMT the idle-core mask is the idle mask, and the steps fold
 * into @prev, its LLC, anywhere. Nothing idle, the common case under
 * load, costs one read of the idle mask.
 * Verified once, on its own: inlined, its branches made the verifier walk
 * the victim search after it once per path, 12,000 more instructions for
 * soryu_enqueue (35,632 in all), and one load under the CI load took 44 s
 * (tests/vm/cycles.sh).
 */
__verified_once s32 claim_idle_cpu(struct task_struct *p __arg_trusted, s32 prev, bool prev_ok)
{
	const struct cpumask *idle;
	u32 llc = prev >= 0 ? LLC_OF(prev) : 0, from = prev >= 0 ? prev : 0;
	s32 cpu = -1;
	bool any;

	if (llc >= nr_llcs)
		llc = 0;
	idle = scx_bpf_get_idle_cpumask();
	any = !bpf_cpumask_empty(idle);
	scx_bpf_put_idle_cpumask(idle);
	if (!any)
		return -1;

	idle = scx_bpf_get_idle_smtmask();
	if (prev_ok && bpf_cpumask_test_cpu(prev, idle) && scx_bpf_test_and_clear_cpu_idle(prev))
		cpu = prev;
	if (cpu < 0)
		cpu = claim_in_llc(p, idle, llc, from);
	scx_bpf_put_idle_cpumask(idle);
	if (cpu >= 0)
		return cpu;
	if ((cpu = scx_bpf_pick_idle_cpu(p->cpus_ptr, SCX_PICK_IDLE_CORE)) >= 0)
		return cpu;
	if (prev_ok && scx_bpf_test_and_clear_cpu_idle(prev))
		return prev;
	idle = scx_bpf_get_idle_cpumask();
	cpu = claim_in_llc(p, idle, llc, from);
	scx_bpf_put_idle_cpumask(idle);
	if (cpu >= 0)
		return cpu;
	return scx_bpf_pick_idle_cpu(p->cpus_ptr, 0);
}

/*
 * Claim an idle CPU for @p (claim_idle_cpu()) and kick it, for a task
 * already queued: its own CPU's queue, or a level the repair sweep found
 * behind a clear bit. The kick is deferred by the kernel to an irq_work
 * that runs after it has put @p on its DSQ, so the woken CPU finds it.
 * A task bound for a shared level does not get here: ops.enqueue puts it
 * straight on the CPU it claims (place_on_idle()).
 */
static bool kick_idle(struct task_struct *p, struct soryu_stats *st)
{
	s32 prev = scx_bpf_task_cpu(p), cpu;

	cpu = claim_idle_cpu(p, prev, bpf_cpumask_test_cpu(prev, p->cpus_ptr));
	if (cpu < 0)
		return false;
	scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
	stat_add(st, SORYU_CNT_PREEMPT_IDLE, 1);
	return true;
}

/*
 * find_victim()'s answer in one scalar: the victim CPU in the low word
 * and the level it was seen running in the high word, or VICTIM_NONE. A
 * verified-once function cannot hand a map pointer back through its
 * caller's stack, so the caller looks the CPU's cpu_ctx up again.
 */
#define VICTIM_NONE	(-1LL)

static s64 victim_pack(s32 cpu, u32 level)
{
	return ((s64)level << 32) | (u32)cpu;
}

static s32 victim_cpu(s64 v)
{
	return (s32)(u32)v;
}

static u32 victim_level(s64 v)
{
	return (u64)v >> 32;
}

/*
 * A CPU for @p, queued (or about to be) at @lvl, that no idle CPU took:
 * its last CPU if that runs a worse level, else the CPU running the worst
 * level strictly worse than @lvl (BMQ lets an equal level finish its
 * slice), packed (victim_pack()); VICTIM_NONE when there is none. The
 * last CPU first keeps a woken task where its cache is, and usually saves
 * the search. The search reads the LLC summaries (pick_llc(), nearest LLC
 * first on a tie) and then the CPUs of the LLC chosen; when that LLC
 * offers no victim (its CPUs claimed by other wakeups, the summary a
 * moment old, or its worst CPU one @p may not use), the CPUs of the next
 * worst LLC, and no more: a victim left in a third LLC only costs @p the
 * wait for a slice end, which the starvation bound already counts. A task
 * that may not use every CPU (a cpuset container, isolcpus) looks only at
 * the LLCs holding a CPU it may use (task_llcs()), and reads there only
 * those CPUs: never more than two LLCs' CPUs per search.
 * Verified once, on its own: inlined into ops.enqueue beside the local
 * preemption (preempt_local()), the verifier walked 195,810 instructions
 * for soryu_enqueue, and each load took 10-12 s (tests/vm/cycles.sh).
 */
__verified_once s64 find_victim(struct task_struct *p __arg_trusted, u32 lvl)
{
	struct soryu_stats *st = this_stats();
	struct victim v = { .cpu = -1, .level = lvl };
	s32 prev = scx_bpf_task_cpu(p), llc;
	const u64 *llcs = NULL;
	u32 zero = 0, l;
	struct cpu_ctx *cctx;
	bool prev_ok = bpf_cpumask_test_cpu(prev, p->cpus_ptr);

	if (prev_ok && (cctx = bpf_map_lookup_percpu_elem(&cpu_ctxs, &zero, prev)) &&
	    (l = target_level(cctx)) > lvl)
		return victim_pack(prev, l);
	/* its one CPU, judged just now: nowhere else to look */
	if (prev_ok && p->nr_cpus_allowed == 1)
		return VICTIM_NONE;

	stat_add(st, SORYU_CNT_PREEMPT_SCAN, 1);
	/* prev's place in an LLC's list is not known: its id spreads ties as well */
	v.from = prev;
	if (p->nr_cpus_allowed < scx_bpf_nr_cpu_ids()) {
		stat_add(st, SORYU_CNT_PREEMPT_FALLBACK, 1);
		llcs = task_llcs(p);
	}
	if ((llc = pick_llc(lvl, prev, -1, llcs)) >= 0) {
		scan_llc(p, &v, llc);
		if (v.cpu < 0 && (llc = pick_llc(lvl, prev, llc, llcs)) >= 0)
			scan_llc(p, &v, llc);
	}
	return v.cpu >= 0 && v.cctx ? victim_pack(v.cpu, v.level) : VICTIM_NONE;
}

/*
 * Kick the victim find_victim() returned (@v) for a task of level @lvl
 * (kick_victim()), or count that there was none.
 */
static void kick_found(s64 v, u32 lvl, u64 gran, struct soryu_stats *st)
{
	struct cpu_ctx *vctx;
	u32 zero = 0;

	if (v != VICTIM_NONE && (vctx = bpf_map_lookup_percpu_elem(&cpu_ctxs, &zero, victim_cpu(v))))
		kick_victim(victim_cpu(v), vctx, lvl, victim_level(v), gran);
	else
		stat_add(st, SORYU_CNT_PREEMPT_NONE, 1);
}

/*
 * The level a CPU must run worse than for @p's enqueue at @lvl to take it
 * from its task. A wakeup (SCX_ENQ_WAKEUP) or a new task's first enqueue
 * (it never ran: the kernel's wakeup of a forked task carries no wakeup
 * flag): any worse level, BMQ's preemption, which is what puts a woken
 * task ahead of CPU hogs. Any other enqueue is a requeue (a slice used
 * up, a preempted task, a task handed back): only a CPU going idle
 * (SORYU_LVL_NONE), which has nothing to lose and may otherwise sleep
 * with @p queued. A requeued task better than what another CPU runs waits
 * for the next CPU to look (a slice end, a task blocking) instead, as in
 * BMQ, which checks for preemption when a task wakes or is new and not
 * when one is put back. Kicking for requeues let every preemption spread:
 * the task a waker displaced kicked another CPU's worse task off in turn
 * (tests/vm/policy.sh requeue). The wait this adds is at most a slice
 * end, which the starvation bound already counts.
 */
static u32 victim_bar(const struct task_struct *p, u32 lvl, u64 enq_flags)
{
	return (enq_flags & SCX_ENQ_WAKEUP) || !p->se.sum_exec_runtime ? lvl : SORYU_LVL_WORST;
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

/* One deferred-kick timer per CPU, when --wakeup-gran-us is not 0. */
static s32 init_kick_timers(void)
{
	struct kick_timer *kt;
	u32 cpu;

	if (!wakeup_gran_ns)
		return 0;
	bpf_for(cpu, 0, scx_bpf_nr_cpu_ids()) {
		if (cpu >= SORYU_MAX_CPUS)
			break;
		if (!(kt = bpf_map_lookup_elem(&kick_timers, &cpu)))
			return -ENOENT;
		bpf_timer_init(&kt->timer, &kick_timers, CLOCK_MONOTONIC);
		bpf_timer_set_callback(&kt->timer, kick_timer_fn);
	}
	return 0;
}
