/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * scx_soryu: anti-starvation, per task. A level whose oldest queued task
 * has waited --starve-ms is served ahead of every better level, by every
 * CPU that dispatches, until its head is fresh again; the served task
 * holds a grant: a whole slice that no wakeup takes away (kept across a
 * stray kick in ops.enqueue). The bound this gives, and its price, are
 * argued in docs/design-starvation.md ("The bound", "The price").
 * Included by main.bpf.c, after its globals and maps.
 */

/*
 * The task just served from a starving level is the worst-level task on any
 * CPU, so the next wakeup anywhere would kick it off again, often before it
 * ran at all, and back at the tail of its level it would wait a whole round
 * again. Likewise the rest of an old slice may end at the very next tick.
 * So the served task gets a whole fresh slice, and ops.running shows this
 * CPU to try_preempt() as running the best level until the task stops.
 */
static void grant_slice(void)
{
	u32 zero = 0;
	struct cpu_ctx *cctx = bpf_map_lookup_elem(&cpu_ctxs, &zero);

	if (cctx)
		cctx->starve_grant = true;
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
	struct soryu_task_ctx *hctx;
	u64 at;

	if (!head)
		return true;
	if (!(hctx = lookup_task_ctx(head)) || !READ_ONCE(hctx->queued_at))
		return false;
	at = READ_ONCE(hctx->age_at);
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
	struct soryu_task_ctx *tctx;

	if (!head || !(tctx = lookup_task_ctx(head)))
		return false;
	/* 0 once it ran: a head that is leaving */
	if (!READ_ONCE(tctx->queued_at))
		return false;
	*at = READ_ONCE(tctx->age_at);
	/* clocks of other CPUs may run a little ahead: wrap-safe compare */
	return *at && time_after(now, *at + starve_ns);
}

/*
 * Is @lvl of LLC @llc (queues @q) starving? If so, *at is since when: its
 * head's queue stamp, or the level's last serve. Two rules:
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
static __always_inline bool level_starving(struct llc_queues *q, u32 llc, u32 lvl, u64 now,
					   bool look, u64 *at)
{
	u64 bit = 1ULL << lvl;
	bool marked = READ_ONCE(q->starving) & bit, stale = false;
	s64 nr;

	if (!marked && !look)
		return false;
	nr = READ_ONCE(*QV(q->nr, lvl));
	if (nr <= 0) {
		note_served(q, lvl, now);
	} else if (head_stale(LEVEL_DSQ(llc, lvl), now, at)) {
		stale = true;
	} else {
		*at = READ_ONCE(*QV(q->last_served, lvl));
		stale = time_after(now, *at + starve_ns);
	}
	if (stale && !marked)
		__sync_fetch_and_or(&q->starving, bit);
	else if (!stale && marked)
		__sync_fetch_and_and(&q->starving, ~bit);
	return stale;
}

/* Serve @lvl of LLC @llc as starving: a task from it, on a grant. */
static bool serve_level(struct llc_queues *q, u32 llc, u32 lvl, u64 now,
			struct soryu_stats *st)
{
	if (!probe_level(q, llc, lvl, st))
		return false;
	WRITE_ONCE(*QV(q->last_served, lvl), now);
	stat_add(st, SORYU_CNT_STARVE_SERVE, 1);
	grant_slice();
	return true;
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
 * LLCs only ever take tasks off these queues earlier (scan_levels()).
 */
__verified_once bool serve_starved(s32 cpu, struct cpu_ctx *cctx, u64 now, struct soryu_stats *st)
{
	u64 mask = 0, oldest = 0, at = 0, pin_at = 0;
	u32 lvl, pick = SORYU_NR_LEVELS, llc = cctx ? cctx->llc : 0;
	bool pin = cctx && pin_stale(cpu, cctx, now, &pin_at), look;
	struct llc_queues *q = queues_of(llc);

	if (!q)
		return false;
	/*
	 * Nothing marked starving and no look due: nothing can be found.
	 * Most dispatch calls end here. Walking the LLC's 33 levels on each
	 * of them, as before, dispatch took 10.8 us a call under hackbench,
	 * and 7.7 us without (one profile each, docs/performance-history.md). Racing
	 * CPUs may both look: harmless, and rare.
	 */
	look = time_after(now, READ_ONCE(q->next_look));
	if (!look && !pin && !READ_ONCE(q->starving))
		return false;
	if (look)
		WRITE_ONCE(q->next_look, now + (starve_ns >> 4));
	bpf_for(lvl, 0, SORYU_NR_LEVELS) {
		if (!level_starving(q, llc, lvl, now, look, &at))
			continue;
		mask |= 1ULL << lvl;
		if (pick == SORYU_NR_LEVELS || time_before(at, oldest)) {
			pick = lvl;
			oldest = at;
		}
	}
	if (pin && (!mask || !time_after(pin_at, oldest)) && take_pinned_aged(cpu, pin_at))
		goto granted;
	if (!mask)
		return false;
	if (pick < SORYU_NR_LEVELS && serve_level(q, llc, pick, now, st))
		return true;
	bpf_for(lvl, 0, SORYU_NR_LEVELS) {
		if (lvl != pick && (mask & (1ULL << lvl)) && serve_level(q, llc, lvl, now, st))
			return true;
	}
	if (!pin || !take_pinned_aged(cpu, pin_at))
		return false;
granted:
	stat_add(st, SORYU_CNT_STARVE_SERVE, 1);
	grant_slice();
	return true;
}
