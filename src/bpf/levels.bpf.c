/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * scx_soryu: the level DSQs, lvl_bitmap and lvl_nr[]: advertising and
 * counting a level, probing it, walking the levels best first, and the
 * --clear-bitmap safety nets (the count sweep of an empty dispatch, the
 * repair timer). The race argument for clearing is at
 * probe_level().
 * Included by main.bpf.c, after its globals and maps.
 */

/*
 * Advertise that @lvl holds tasks. Read first: once warm the bit is almost
 * always set already, and a plain load keeps the line shared on every CPU
 * where an unconditional atomic OR would bounce it between them.
 */
static void mark_level(u32 lvl)
{
	u64 bit = 1ULL << lvl;

	if (!(READ_ONCE(lvl_bitmap) & bit))
		__sync_fetch_and_or(&lvl_bitmap, bit);
}

/*
 * Move @tctx's task's count in lvl_nr[] to 1 + level @lvl1 (0: uncounted).
 * ops.enqueue counts a task on the level DSQ it inserts it into, and
 * ops.running (or ops.disable, or an enqueue elsewhere) uncounts it: only
 * after it has left the DSQ. So a level's count is never below the number
 * of tasks in its DSQ, and dispatch may skip a level counted 0 without
 * probing it. The count is raised in ops.enqueue, before the kernel
 * inserts the task: unlike clearing a bit, nothing can make a queued task
 * uncounted. It may run high for a moment (a task taken off the DSQ that
 * has not started yet), which costs one probe, never a task. Calls for one
 * task are serialized by its runqueue lock.
 */
static void count_level(struct soryu_task_ctx *tctx, u32 lvl1)
{
	u32 old = tctx->counted1;
	s64 *nr;

	if (old == lvl1)
		return;
	if (old && (nr = MEMBER_VPTR(lvl_nr, [old - 1])))
		__sync_fetch_and_sub(nr, 1);
	if (lvl1 && (nr = MEMBER_VPTR(lvl_nr, [lvl1 - 1])))
		__sync_fetch_and_add(nr, 1);
	tctx->counted1 = lvl1;
}

static void note_served(u32 lvl, u64 now)
{
	u64 *ls = MEMBER_VPTR(last_served, [lvl]);

	/*
	 * Only store when the stamp is stale by a sixteenth of the threshold:
	 * a starvation check may then fire up to 1/16 early, never late, and
	 * the line is written at most 16 times per threshold per level.
	 */
	if (ls && time_after(now, READ_ONCE(*ls) + (starve_ns >> 4)))
		WRITE_ONCE(*ls, now);
}

/*
 * Try to move one task of @lvl onto this CPU. With --clear-bitmap, a probe
 * that finds the level empty clears its bit and then re-checks the queued
 * count:
 *
 *   dispatcher (this CPU)             enqueuer (another CPU)
 *   clear bit L     (store)           task lands in DSQ L (nr_queued++)
 *   smp_mb()                          ...
 *   read nr_queued(L) (load)          set bit L (or find it set)
 *
 * The clear is a store and the re-check a load of another location: exactly
 * the pair a store buffer may reorder, even on x86. __sync_fetch_and_and()
 * with its result used compiles to BPF_FETCH, a fully ordered RMW, so the
 * re-check cannot be satisfied before the clear is visible: a task already
 * counted in the DSQ when we clear is always seen, and its bit set again.
 *
 * What no barrier here can close: ops.enqueue() sets (or sees) the bit
 * *before* the kernel puts the task on the DSQ (scx_bpf_dsq_insert() from
 * ops.enqueue() only records the target). A clear that falls between the
 * two leaves a queued task behind a clear bit. Three mechanisms bound how
 * long it waits: a dispatch that found nothing reads the counts before it
 * gives up (sweep_levels()), the repair timer (every SORYU_REPAIR_PERIOD_NS
 * it sets the bit of every non-empty level and finds the level's first task
 * a CPU), and the anti-starvation pass, which never consults the bitmap.
 */
static bool probe_level(u32 lvl, struct soryu_stats *st)
{
	u64 bit = 1ULL << lvl;
	u64 old;

	stat_add(st, SORYU_CNT_PROBES, 1);
	if (scx_bpf_dsq_move_to_local(lvl, 0))
		return true;
	if (!clear_bitmap)
		return false;

	old = __sync_fetch_and_and(&lvl_bitmap, ~bit);
	if (!(old & bit))
		return false;	/* another CPU cleared it: its re-check covers us */
	if (scx_bpf_dsq_nr_queued(lvl) > 0)
		__sync_fetch_and_or(&lvl_bitmap, bit);
	else
		stat_add(st, SORYU_CNT_BITMAP_CLEAR, 1);
	return false;
}

/*
 * Walk the levels the bitmap advertises, best first, below @limit, and
 * probe those counted non-empty (count_level()).
 */
__verified_once bool scan_levels(u32 limit, u64 now, struct soryu_stats *st)
{
	u64 bm = READ_ONCE(lvl_bitmap);
	u32 lvl;

	bpf_for(lvl, 0, SORYU_NR_LEVELS) {
		if (lvl >= limit)
			break;
		if (!(bm & (1ULL << lvl)) || READ_ONCE(lvl_nr[lvl]) <= 0)
			continue;
		if (probe_level(lvl, st)) {
			note_served(lvl, now);
			return true;
		}
	}
	return false;
}

/*
 * Is a task counted on any shared level better than @lvl? The
 * counts, not the bitmap: a count is never below its DSQ's tasks
 * (count_level()), where a bit may read clear over a queued task with
 * --clear-bitmap. So a false answer means no such task was queued when
 * each count was read; one counted high for a moment only says true.
 */
__verified_once bool queued_above(u32 lvl)
{
	u32 l;

	bpf_for(l, 0, SORYU_NR_LEVELS) {
		if (l >= lvl)
			break;
		if (READ_ONCE(lvl_nr[l]) > 0)
			return true;
	}
	return false;
}

/*
 * --clear-bitmap: the last resort of a dispatch that found nothing through
 * the bitmap. Read every level's count below @limit and take a task from a
 * non-empty one whose bit reads clear (the enqueue race in probe_level()),
 * setting its bit again. Without it a CPU could go idle, or, worse, give
 * its time back while a task it could run sits behind a clear bit: when a
 * higher class holds every CPU, soryu's tasks only run through the
 * kernel's deadline server, which stops for good when its pick comes back
 * empty while tasks are queued on its CPU. So: dispatch never returns
 * empty while a level holds a task this CPU may run.
 */
__verified_once bool sweep_levels(u32 limit, u64 now, struct soryu_stats *st)
{
	u32 lvl;

	bpf_for(lvl, 0, SORYU_NR_LEVELS) {
		if (lvl >= limit)
			break;
		if (scx_bpf_dsq_nr_queued(lvl) <= 0)
			continue;
		if (!(READ_ONCE(lvl_bitmap) & (1ULL << lvl))) {
			__sync_fetch_and_or(&lvl_bitmap, 1ULL << lvl);
			stat_add(st, SORYU_CNT_BITMAP_REPAIR, 1);
		}
		if (probe_level(lvl, st)) {
			note_served(lvl, now);
			return true;
		}
	}
	return false;
}

/*
 * --clear-bitmap safety net for the CPUs that do not dispatch: set the bit
 * of any non-empty level that reads clear, and find the level's first task
 * a CPU as a new arrival would get one (try_preempt(): an idle CPU it may
 * use, else one it may use that runs a worse level). A CPU busy with an
 * equal or better level reaches sweep_levels() when its slice ends.
 */
static int repair_sweep(void *map, int *key, struct bpf_timer *timer)
{
	u64 bm = READ_ONCE(lvl_bitmap);
	struct task_struct *head;
	u32 lvl;

	bpf_for(lvl, 0, SORYU_NR_LEVELS) {
		if ((bm & (1ULL << lvl)) || scx_bpf_dsq_nr_queued(lvl) <= 0)
			continue;
		__sync_fetch_and_or(&lvl_bitmap, 1ULL << lvl);
		/* counted in the map, not a local: keeps the loop verifiable */
		stat_inc(SORYU_CNT_BITMAP_REPAIR);
		bpf_rcu_read_lock();
		head = __COMPAT_scx_bpf_dsq_peek(lvl);
		if (head)
			try_preempt(head, lvl, true, true, this_stats());
		bpf_rcu_read_unlock();
	}
	bpf_timer_start(timer, SORYU_REPAIR_PERIOD_NS, 0);
	return 0;
}
