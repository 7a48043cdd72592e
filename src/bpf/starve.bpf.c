/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * scx_soryu: anti-starvation, per task. A level whose oldest queued task
 * has waited --starve-ms is served ahead of every better level, by every
 * CPU that dispatches, until its head is fresh again; the served task
 * holds a grant: a whole slice that no wakeup takes away (kept across a
 * stray kick in ops.enqueue). The bound this gives, and its price, are
 * argued in docs/design-starvation.md ("The bound", "The price").
 *
 * Each LLC's CPUs look after its queues (serve_starved()); when an LLC's
 * CPUs do not dispatch at all (a higher class holds every one of them),
 * the other LLCs' CPUs look at its queues for it and serve what they may
 * run (serve_foreign()), so a task that may run elsewhere never waits on
 * an LLC no soryu CPU is left in.
 * Included by main.bpf.c, after its globals and maps.
 */

/*
 * Machine-wide starvation state, on a line of its own, read by a dispatch
 * only when its own LLC has nothing starving to serve:
 *  - llcs: bit l set while LLC l's `starving` word may not be 0
 *    (mark_starving() keeps it, with the re-check of llc_move());
 *  - next_look: when some CPU next checks that every LLC's own look
 *    happened (look_for_idle_llcs()).
 */
struct starve_global {
	u64 llcs[SORYU_MAX_LLCS / 64];
	u64 next_look;
} __attribute__((aligned(64)));

struct starve_global starve_global SEC(".data.starve_global");

/*
 * The task just served from a starving level is the worst-level task on any
 * CPU, so the next wakeup anywhere would kick it off again, often before it
 * ran at all, and back at the tail of its level it would wait a whole round
 * again. Likewise the rest of an old slice may end at the very next tick.
 * So the served task, @pid, gets a whole fresh slice when it starts here,
 * and ops.running shows this CPU to find_victim() as running the best
 * level until the task stops. The grant names the task: another task that
 * starts here first (a wakee put on the local DSQ) does not take it.
 */
static void grant_slice(s32 pid)
{
	u32 zero = 0;
	struct cpu_ctx *cctx = bpf_map_lookup_elem(&cpu_ctxs, &zero);

	if (cctx)
		cctx->grant_pid = pid;
}

/*
 * @tctx's task was served for starving, and a higher class took its CPU
 * before the grant's slice was up (ops.enqueue, SCX_ENQ_REENQ). Its wait
 * was not over: it keeps its age and goes in front of its level's head
 * (requeue_how()), and here the level is made to starve at once:
 * last_served[] goes back to the task's age, or to just over starve_ns
 * ago if that is later. The next dispatch on any CPU it may use then
 * serves the level's head, this task, and oldest first still orders it by
 * its age. Without this it waited a whole round again: the serve had just
 * stamped the level, and its age would have restarted. The store races
 * only with CPUs taking from this level, and a later stamp from one of
 * them means it took the level's head: this task, or one put in front of
 * it since (front_vtime()).
 */
static void owe_serve(struct llc_queues *q, u32 lvl, struct soryu_task_ctx *tctx, u64 now)
{
	u64 *ls = QV(q->last_served, lvl);
	u64 at = now - starve_ns - 1;

	if (time_before(tctx->age_at, at))
		at = tctx->age_at;
	if (time_before(at, READ_ONCE(*ls)))
		WRITE_ONCE(*ls, at);
}

/*
 * May @tctx's task, preempted with slice left, go back in front of the
 * head of level DSQ @dsq (ops.enqueue)? Not when that head has waited starve_ns and is older
 * than the task: the level is starving, its waiting tasks are owed a turn
 * first, and a task that has just run goes to the tail as if it had not
 * been preempted. (A task preempted before it was served keeps its age,
 * served(), and may be the older one: then it goes first, as oldest first
 * would serve it.) Otherwise it
 * takes the head's age when that is older than its own, so that a FIFO
 * level's head still carries the oldest age in the level, which is all
 * head_stale() relies on: it may be served early for it, never late, and
 * its own wait (queued_at) is measured as it was. Each resumed task holds
 * what is left of one slice, so the tasks behind it wait at most that much
 * longer. The peek is lockless: a head that leaves after we read its age
 * was no younger than the tasks behind it, so the age taken is still the
 * oldest; one that already ran (queued_at 0) tells nothing about the tasks
 * behind it, and the task goes to the tail, which is always safe.
 */
static bool resume_at_head(u64 dsq, struct soryu_task_ctx *tctx, u64 now)
{
	struct task_struct *head = __COMPAT_scx_bpf_dsq_peek(dsq);
	u64 at;

	if (!head)
		return true;
	if (!waiting_age(head, &at))
		return false;
	/* a stale head goes first, unless this task is older (served()) */
	if (time_after(now, at + starve_ns) && !time_before(tctx->age_at, at))
		return false;
	if (time_before(at, tctx->age_at))
		tctx->age_at = at;
	return true;
}

/*
 * Has the first task of level DSQ @dsq been queued for longer than starve_ns? A FIFO
 * level's head carries its oldest age (tasks join at the tail, a resumed
 * task takes the head's age: resume_at_head()), so a fresh head means
 * nobody there starves. (With --vtime the head is the smallest vtime
 * instead; the per-level stamp in serve_starved() covers a stale task
 * behind a fresh head.) The peek is lockless: the head may leave before we read its
 * context, which only makes this look one dispatch late or early.
 */
static bool head_stale(u64 dsq, u64 now, u64 *at)
{
	struct task_struct *head = __COMPAT_scx_bpf_dsq_peek(dsq);

	if (!head || !waiting_age(head, at))
		return false;
	/* clocks of other CPUs may run a little ahead: wrap-safe compare */
	return *at && time_after(now, *at + starve_ns);
}

/*
 * Set (@on) or clear the bits @bit of LLC @llc's `starving` word (queues
 * @q), and keep the LLC's bit in starve_global.llcs: set when its word
 * leaves 0, cleared when it reaches 0, and set again if a bit came in
 * between (every step a fully ordered RMW whose result is used, the
 * argument of llc_move()), so an LLC with a starving level always ends
 * with its bit set. A bit left set over a word of 0 costs a reader one
 * look, never a task.
 */
static void mark_starving(struct llc_queues *q, u32 llc, u64 bit, bool on)
{
	u64 *w = &starve_global.llcs[masked(llc / 64, SORYU_MAX_LLCS / 64 - 1)];
	u64 lbit = 1ULL << (llc & 63);

	if (on) {
		if (!__sync_fetch_and_or(&q->starving, bit))
			__sync_fetch_and_or(w, lbit);
		return;
	}
	if (__sync_fetch_and_and(&q->starving, ~bit) == bit &&
	    (__sync_fetch_and_and(w, ~lbit) & lbit) && READ_ONCE(q->starving))
		__sync_fetch_and_or(w, lbit);
}

/*
 * Is @lvl of LLC @llc starving? If so, since when (else 0): its head's
 * queue stamp, or the level's last serve. Two rules:
 *  - per task: its head waited past starve_ns;
 *  - per level: it was not served for starve_ns (last_served[]), which
 *    covers a --vtime level whose stale task sits behind a fresh head.
 * A level found starving is marked in `starving`, and a marked level is
 * checked on every dispatch of the LLC's CPUs until neither rule holds
 * (it was served, or emptied). The others are checked only on a look
 * (@look), which serve_starved() makes once per starve_ns / 16 per LLC:
 * detection is late by at most that. A level counted empty
 * (count_level(): the count is never below the DSQ's) is not peeked at;
 * its stamp is moved to now instead, so that a task arriving there later
 * is not taken for one that waited since the level's last serve (a check
 * may then fire up to a sixteenth early, as note_served() allows, never
 * late).
 */
__verified_once u64 level_starving(u32 llc, u32 lvl, u64 now, bool look)
{
	struct llc_queues *q = queues_of(llc);
	u64 bit = 1ULL << (lvl & 63), at = 0;
	bool marked, stale = false;
	s64 nr;

	if (!q || lvl >= SORYU_NR_LEVELS)
		return 0;
	marked = READ_ONCE(q->starving) & bit;
	if (!marked && !look)
		return 0;
	nr = READ_ONCE(*QV(q->nr, lvl));
	if (nr <= 0) {
		note_served(q, lvl, now);
	} else if (head_stale(LEVEL_DSQ(llc, lvl), now, &at)) {
		stale = true;
	} else {
		at = READ_ONCE(*QV(q->last_served, lvl));
		stale = time_after(now, at + starve_ns);
	}
	if (stale != marked)
		mark_starving(q, llc, bit, stale);
	/* a stamp of 0 is never stale (head_stale()) */
	return stale ? at : 0;
}

/*
 * Serve @lvl of LLC @llc as starving: its first task this CPU may run,
 * moved here on a grant that names it. Verified once, on its own, as
 * level_starving() is: both run in loops of loops.
 */
__verified_once bool serve_level(u32 llc, u32 lvl, u64 now)
{
	struct soryu_stats *st = this_stats();
	s32 cpu = bpf_get_smp_processor_id();
	struct llc_queues *q = queues_of(llc);
	struct task_struct *p;

	if (!q)
		return false;
	stat_add(st, SORYU_CNT_PROBES, 1);
	bpf_for_each(scx_dsq, p, LEVEL_DSQ(llc, lvl), 0) {
		if (!bpf_cpumask_test_cpu(cpu, p->cpus_ptr))
			continue;
		if (!scx_bpf_dsq_move(BPF_FOR_EACH_ITER, p, SCX_DSQ_LOCAL, 0))
			return false;	/* it left meanwhile: the next dispatch looks again */
		WRITE_ONCE(*QV(q->last_served, lvl), now);
		stat_add(st, SORYU_CNT_STARVE_SERVE, 1);
		grant_slice(p->pid);
		return true;
	}
	return false;
}

/* The starving levels of one LLC: which (mask), the oldest (pick) and since when. */
struct starving {
	u64 mask;
	u64 oldest;
	u32 pick;	/* SORYU_NR_LEVELS: none */
};

/*
 * Fill @sv with the starving levels of LLC @llc (queues @q): on a look
 * (@look) every level is checked, otherwise only those marked starving.
 */
static __always_inline void find_starving(struct llc_queues *q, u32 llc, u64 now, bool look,
					  struct starving *sv)
{
	u64 cand = look ? below(SORYU_NR_LEVELS) : READ_ONCE(q->starving), at;
	u32 i, lvl;

	sv->mask = 0;
	sv->oldest = 0;
	sv->pick = SORYU_NR_LEVELS;
	cand &= below(SORYU_NR_LEVELS);
	bpf_for(i, 0, SORYU_NR_LEVELS) {
		if (!cand)
			break;
		lvl = lowest_bit(cand);
		cand &= cand - 1;
		if (!(at = level_starving(llc, lvl, now, look)))
			continue;
		sv->mask |= 1ULL << lvl;
		if (sv->pick == SORYU_NR_LEVELS || time_before(at, sv->oldest)) {
			sv->pick = lvl;
			sv->oldest = at;
		}
	}
}

/*
 * Serve the level @sv picked in LLC @llc, else the other starving levels
 * of @sv best first: the first this CPU may run a task of.
 */
static __always_inline bool serve_picked(u32 llc, struct starving *sv, u64 now)
{
	u64 rest = sv->mask;
	u32 i, lvl;

	if (sv->pick < SORYU_NR_LEVELS && serve_level(llc, sv->pick, now))
		return true;
	rest &= ~(1ULL << (sv->pick & 63));
	bpf_for(i, 0, SORYU_NR_LEVELS) {
		if (!rest)
			break;
		lvl = lowest_bit(rest);
		rest &= rest - 1;
		if (serve_level(llc, lvl, now))
			return true;
	}
	return false;
}

/*
 * Once per starve_ns / 16, machine-wide: look at the levels of every LLC
 * whose own CPUs have not looked for a whole period (they do not dispatch:
 * a higher class holds them all), marking what starves there, so that
 * serve_foreign() finds it. Racing CPUs may both look: harmless, and rare.
 */
static void look_for_idle_llcs(u32 own, u64 now)
{
	struct llc_queues *q;
	struct starving sv;
	u32 l;

	if (!time_after(now, READ_ONCE(starve_global.next_look)))
		return;
	WRITE_ONCE(starve_global.next_look, now + (starve_ns >> 4));
	bpf_for(l, 0, llc_count()) {
		if (l == own || !(q = queues_of(l)) ||
		    !time_after(now, READ_ONCE(q->next_look) + (starve_ns >> 4)))
			continue;
		WRITE_ONCE(q->next_look, now + (starve_ns >> 4));
		find_starving(q, l, now, true, &sv);
	}
}

/*
 * This CPU's own LLC has nothing starving it may run: serve a starving
 * level of another LLC, when this CPU may run one of its tasks, LLCs in
 * index order. Costs the read of one line (starve_global) when no other
 * LLC starves. Verified once, on its own, as serve_starved() is.
 */
__verified_once bool serve_foreign(u32 own, u64 now)
{
	struct llc_queues *q;
	struct starving sv;
	u32 w, i, l;
	u64 bits;

	look_for_idle_llcs(own, now);
	bpf_for(w, 0, SORYU_MAX_LLCS / 64) {
		if (w * 64 >= llc_count())
			break;
		bits = READ_ONCE(starve_global.llcs[w]);
		if (own / 64 == w)
			bits &= ~(1ULL << (own & 63));
		bpf_for(i, 0, 64) {
			if (!bits)
				break;
			l = w * 64 + lowest_bit(bits);
			bits &= bits - 1;
			if (!(q = queues_of(l)))
				continue;
			find_starving(q, l, now, false, &sv);
			if (sv.mask && serve_picked(l, &sv, now))
				return true;
		}
	}
	return false;
}

/*
 * Serve the starving level that has waited longest, not the best one:
 * when a better level starves again and again (a threshold near the slice,
 * or many tasks above), best first would keep a worse starving level
 * waiting without bound. Oldest first makes starving tasks one queue, in
 * the order they went stale, whatever their level: the bound in
 * docs/design-starvation.md counts every task ahead in that queue. This
 * CPU's own queue (pinned.bpf.c) takes part with its oldest task, as one
 * more level that only this CPU serves. If this CPU may run no task of the
 * level picked, the other starving levels, best first. The bitmap is not
 * asked: with clearing on, its bit may be wrong (see probe_level()).
 *
 * The levels looked at are those of this CPU's LLC: each LLC's CPUs
 * guarantee its queues, where every task queues on an LLC with a CPU it
 * may use (queue_llc()). The bound's k and n are then the starving tasks
 * and the CPUs of one LLC (docs/design-starvation.md); CPUs of other
 * LLCs only ever take tasks off these queues earlier (scan_levels(),
 * serve_foreign()).
 */
__verified_once bool serve_starved(s32 cpu, struct cpu_ctx *cctx, u64 now, struct soryu_stats *st)
{
	u64 pin_at = 0;
	u32 llc = cctx ? cctx->llc : 0;
	bool pin = cctx && pin_stale(cpu, cctx, now, &pin_at), look;
	struct llc_queues *q = queues_of(llc);
	struct starving sv = { .pick = SORYU_NR_LEVELS };
	s32 pid;

	if (!q)
		return false;
	/*
	 * Nothing marked starving and no look due: nothing of this LLC can
	 * be found. Most dispatch calls end here, and in serve_foreign()'s
	 * one read. Racing CPUs may both look: harmless, and rare.
	 */
	look = time_after(now, READ_ONCE(q->next_look));
	if (look)
		WRITE_ONCE(q->next_look, now + (starve_ns >> 4));
	if (look || READ_ONCE(q->starving))
		find_starving(q, llc, now, look, &sv);
	if (pin && (!sv.mask || !time_after(pin_at, sv.oldest)) && (pid = take_pinned_aged(cpu, pin_at)))
		goto granted;
	if (sv.mask && serve_picked(llc, &sv, now))
		return true;
	if (pin && (pid = take_pinned_aged(cpu, pin_at)))
		goto granted;
	return serve_foreign(llc, now);
granted:
	stat_add(st, SORYU_CNT_STARVE_SERVE, 1);
	grant_slice(pid);
	return true;
}
