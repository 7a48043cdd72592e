/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * scx_soryu: the level queues of each LLC (struct llc_queues): where a task
 * queues, advertising and counting a level, probing it, walking the levels
 * best first across LLCs, and the --clear-bitmap safety nets (the count
 * sweep of an empty dispatch, the repair timer). The race argument for
 * clearing is at probe_level().
 * Included by main.bpf.c, after its globals and maps and llc.bpf.c (whose
 * masked() and LLC_OF() it uses).
 */

/*
 * The level queues of one LLC: DSQ LEVEL_DSQ(llc, lvl) for each level, and
 * the state that advertises, counts, and ages them. A task waits on the
 * queues of one LLC (queue_llc()); a CPU takes the best level queued in any
 * LLC, its own first on a tie and then the nearest (scan_levels()). Each
 * field group sits on cache lines of its own: the bitmap is read by every
 * dispatch and, set-only, almost never written; the counts are written by
 * every enqueue and run in the LLC; the starvation stamps a few times per
 * threshold. Arrays hold 64 entries, one per bitmap bit, so that an index
 * masked to 6 bits (QV()) is provably in bounds; levels 33 to 63 stay 0.
 */
struct llc_queues {
	/*
	 * Bit n set: level n may hold tasks. Set-only by default, so after
	 * warm-up every CPU holds its line shared and reads it for free. With
	 * --clear-bitmap dispatch also clears bits (see probe_level()).
	 */
	u64 bitmap;
	/*
	 * The per-task starvation rule (starve.bpf.c): bit n set: level n's
	 * head was found waiting past --starve-ms.
	 */
	u64 starving __attribute__((aligned(64)));
	/*
	 * Tasks counted on each level: inserted into its DSQ and not yet run
	 * (count_level()). Never lower than the DSQ's own count, so a level
	 * counted 0 holds no task and dispatch skips it without a probe.
	 */
	s64 nr[64] __attribute__((aligned(64)));
	/*
	 * When each level last gave a task to a CPU (or was last found empty
	 * by the anti-starvation pass). Rate-limited writes keep these lines
	 * read-mostly.
	 */
	u64 last_served[64] __attribute__((aligned(64)));
	/*
	 * When the anti-starvation pass next looks at every level of this
	 * LLC (serve_starved()); between looks it reads only `starving`.
	 */
	u64 next_look __attribute__((aligned(64)));
} __attribute__((aligned(64)));

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SORYU_MAX_LLCS);
	__type(key, u32);
	__type(value, struct llc_queues);
} queues SEC(".maps");

/* The DSQ of level @lvl in LLC @llc (intf.h: SORYU_PIN_DSQ is above them all). */
#define LEVEL_DSQ(llc, lvl)	((u64)(llc) * SORYU_NR_LEVELS + (lvl))

/* An entry of a per-level array of struct llc_queues, provably in bounds. */
#define QV(arr, lvl)	(&(arr)[masked(lvl, 63)])

static struct llc_queues *queues_of(u32 llc)
{
	return bpf_map_lookup_elem(&queues, &llc);
}

/*
 * The LLC whose queues @p waits on: that of the CPU it last ran on, whose
 * cache it warmed, or of the first CPU it may use if that one is not (an
 * affinity change). Either way a CPU of that LLC may run it, so the
 * starvation rule, which each LLC's CPUs apply to their own queues
 * (serve_starved()), always has a CPU that serves it.
 */
static u32 queue_llc(const struct task_struct *p)
{
	s32 cpu = scx_bpf_task_cpu(p);
	u32 llc;

	if (!bpf_cpumask_test_cpu(cpu, p->cpus_ptr))
		cpu = bpf_cpumask_first(p->cpus_ptr);
	if (cpu < 0 || cpu >= SORYU_MAX_CPUS)
		return 0;
	llc = LLC_OF(cpu);
	return llc < llc_count() ? llc : 0;
}

/*
 * Advertise that @lvl of @q holds tasks. Read first: once warm the bit is
 * almost always set already, and a plain load keeps the line shared on
 * every CPU where an unconditional atomic OR would bounce it between them.
 */
static void mark_level(struct llc_queues *q, u32 lvl)
{
	u64 bit = 1ULL << lvl;

	if (!(READ_ONCE(q->bitmap) & bit))
		__sync_fetch_and_or(&q->bitmap, bit);
}

/* Add @d to the count of level DSQ @dsq (LEVEL_DSQ()), and move the index. */
static void count_add(u32 dsq, s64 d)
{
	u32 l = dsq / SORYU_NR_LEVELS, lvl = dsq % SORYU_NR_LEVELS;
	struct llc_queues *q = queues_of(l);
	s64 *nr, old;

	if (!q)
		return;
	nr = QV(q->nr, lvl);
	old = __sync_fetch_and_add(nr, d);
	index_count(nr, l, lvl, old, d);
}

/*
 * Move @tctx's task's count to 1 + level DSQ @dsq1 (0: uncounted).
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
static void count_level(struct soryu_task_ctx *tctx, u32 dsq1)
{
	u32 old = tctx->counted1;

	if (old == dsq1)
		return;
	if (old)
		count_add(old - 1, -1);
	if (dsq1)
		count_add(dsq1 - 1, 1);
	tctx->counted1 = dsq1;
}

static void note_served(struct llc_queues *q, u32 lvl, u64 now)
{
	u64 *ls = QV(q->last_served, lvl);

	/*
	 * Only store when the stamp is stale by a sixteenth of the threshold:
	 * a starvation check may then fire up to 1/16 early, never late, and
	 * the line is written at most 16 times per threshold per level.
	 */
	if (time_after(now, READ_ONCE(*ls) + (starve_ns >> 4)))
		WRITE_ONCE(*ls, now);
}

/*
 * Try to move one task of @lvl of LLC @llc (queues @q) onto this CPU. With
 * --clear-bitmap, a probe that finds the level empty clears its bit and
 * then re-checks the queued count:
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
 *
 * A task of another LLC's queue that this CPU may not run is skipped by
 * the kernel's move, so such a probe finds the level "empty": with
 * clearing, the re-check sees the task and sets the bit again.
 */
static bool probe_level(struct llc_queues *q, u32 llc, u32 lvl, struct soryu_stats *st)
{
	u64 bit = 1ULL << lvl, dsq = LEVEL_DSQ(llc, lvl);
	u64 old;

	stat_add(st, SORYU_CNT_PROBES, 1);
	if (TIMED(move_section(dsq), scx_bpf_dsq_move_to_local(dsq, 0)))
		return true;
	if (!clear_bitmap)
		return false;

	old = __sync_fetch_and_and(&q->bitmap, ~bit);
	if (!(old & bit))
		return false;	/* another CPU cleared it: its re-check covers us */
	if (scx_bpf_dsq_nr_queued(dsq) > 0)
		__sync_fetch_and_or(&q->bitmap, bit);
	else
		stat_add(st, SORYU_CNT_BITMAP_CLEAR, 1);
	return false;
}

/*
 * Take from level @lvl of this CPU's LLC @llc a task that last ran on this
 * CPU (its cache is here, and the kernel's move needs no second runqueue
 * lock), when one is among the level's first SORYU_HOT_LOOK tasks behind a
 * head that is not one. An LLC's level is shared by its CPUs: taken head
 * first, a task queued by one CPU is as likely to go to another, and
 * migrates (docs/design-queues.md counts it under a compile). False: the
 * caller takes the head.
 *
 * What this costs the order within a level, and why the guarantees hold:
 *  - the head is passed over only while its wait (its age, age_at, the
 *    starvation rule's clock) is under starve_ns / 8; older, the next
 *    dispatch in the LLC takes it, as before (a stamp from another CPU's
 *    clock a little ahead of this one reads as old: the head is taken).
 *    So a head is passed over until that age at most, and the per-task
 *    starvation rule, which reads the head's age (head_stale()), still
 *    serves it at starve_ns whatever is taken behind it: the bound in
 *    docs/design-starvation.md does not move;
 *  - tasks are only ever taken out from behind the head, so a FIFO
 *    level's head still carries its oldest age;
 *  - the task taken is of the same level: strict priority between levels
 *    is untouched;
 *  - not with --vtime, whose order within a level is the knob's point.
 * The walk is lockless and the move checks again under the DSQ's lock: a
 * task gone meanwhile fails the move (false), and the head is taken.
 * A task whose CPU is this one is on this CPU's runqueue, so the move is
 * never the kernel's fallback to the global DSQ for a task that may not
 * run here.
 */
static bool take_cache_hot(u32 llc, u32 lvl, u64 now, struct soryu_stats *st)
{
	struct task_struct *p;
	s32 cpu = bpf_get_smp_processor_id();
	u32 i = 0;
	u64 at;

	if (vtime_on)
		return false;
	bpf_for_each(scx_dsq, p, LEVEL_DSQ(llc, lvl), 0) {
		if (scx_bpf_task_cpu(p) == cpu) {
			/* the head: the ordinary move takes it */
			if (!i || !scx_bpf_dsq_move(BPF_FOR_EACH_ITER, p, SCX_DSQ_LOCAL, 0))
				return false;
			stat_add(st, SORYU_CNT_PROBES, 1);
			stat_add(st, SORYU_CNT_CACHE_HOT, 1);
			return true;
		}
		/* a head passed over only while it waits and is fresh */
		if (!i && (!waiting_age(p, &at) || now - at >= (starve_ns >> 3)))
			return false;
		if (++i >= SORYU_HOT_LOOK)
			return false;
	}
	return false;
}

/* Levels below @limit, as a mask. */
static u64 below(u32 limit)
{
	return limit >= 64 ? ~0ULL : (1ULL << limit) - 1;
}

/*
 * A probe of level @lvl of LLC @l (queues @q) gave this CPU no task. If
 * the level's count is above its DSQ's tasks, a task is counted whose
 * insert has not landed: ops.enqueue counts it before its victim search
 * (count_waiting()), and the kernel inserts it only after ops.enqueue
 * returns. Noted for go_idle(), which then kicks this CPU. The count also
 * reads high for a moment after a task is moved to a CPU and before it
 * runs: one kick too many, never a task missed. A task queued that this
 * CPU may not run is on its DSQ, counted no higher, and never reads so.
 */
static void note_in_flight(struct llc_queues *q, u32 l, u32 lvl)
{
	struct cpu_ctx *cctx;
	u32 zero = 0;

	if (READ_ONCE(*QV(q->nr, lvl)) > scx_bpf_dsq_nr_queued(LEVEL_DSQ(l, lvl)) &&
	    (cctx = bpf_map_lookup_elem(&cpu_ctxs, &zero)))
		cctx->in_flight = true;
}

/* Where take_level() looks beyond the CPU's own LLC. */
enum take_how {
	TAKE_EVERY,	/* every other LLC advertising the level, by its lines */
	TAKE_INDEXED,	/* the LLCs the index says hold it (take_indexed()) */
	TAKE_OWN,	/* nowhere: the index says no other LLC holds it */
	/* or'ed in: a CPU going idle, which must not miss a task (go_idle()) */
	TAKE_IDLE = 0x10,
};

/* What take_indexed() found. */
enum indexed {
	INDEXED_NONE,	/* no LLC the index names gave a task */
	INDEXED_TAKEN,
	INDEXED_MOVING,	/* none, but a clear was moving the level's bits */
};

/*
 * The LLCs the index says hold level @lvl, other than @own, nearest
 * first: the bits above @own in its word, the other words, then the bits
 * below @own. Takes a task from the first whose level DSQ gives one
 * (probe_level(): none when each task there may not run on this CPU).
 * Reads one word of the index per word looked at, no line of an LLC that
 * holds no task of the level. With @idle, an answer of none is only given
 * when no clear moved the level's bits during the reads (index_clear()).
 */
static __always_inline int take_indexed(u32 own, u32 lvl, bool idle, u64 now,
					struct soryu_stats *st)
{
	u32 n = llc_count(), nw = (n + 63) / 64, ow = own / 64, i, j, w, l;
	u64 bits, seq = idle ? index_seq_begin(INDEX_SEQ(lvl)) : 0;
	struct llc_queues *q;

	bpf_for(i, 0, SORYU_MAX_LLCS / 64 + 1) {
		if (i > nw)
			break;
		w = ow + i < nw ? ow + i : ow + i - nw;
		bits = READ_ONCE(*INDEX_WORD(lvl, w * 64));
		stat_add(st, SORYU_CNT_REMOTE_READS, 1);
		if (w == ow)
			bits &= i ? below(own % 64) : ~below(own % 64 + 1);
		bpf_for(j, 0, 64) {
			if (!bits)
				break;
			l = w * 64 + lowest_bit(bits);
			bits &= bits - 1;
			if (l >= n || !(q = queues_of(l)))
				continue;
			if (probe_level(q, l, lvl, st)) {
				note_served(q, lvl, now);
				return INDEXED_TAKEN;
			}
			if (idle) {
				stat_add(st, SORYU_CNT_REMOTE_READS, 1);
				note_in_flight(q, l, lvl);
			}
		}
	}
	return idle && !index_seq_still(INDEX_SEQ(lvl), seq) ? INDEXED_MOVING : INDEXED_NONE;
}

/*
 * Take a task of level @lvl from LLC @l when its bitmap and count
 * advertise one: on this CPU's own LLC (@own) a task that last ran on this
 * CPU first (take_cache_hot()). With @idle, a failed probe notes a task in
 * flight (note_in_flight()).
 */
static __always_inline bool take_advertised(u32 l, u32 lvl, bool own, bool idle, u64 now,
					    struct soryu_stats *st)
{
	struct llc_queues *q = queues_of(l);

	if (!q)
		return false;
	if (!own)
		stat_add(st, SORYU_CNT_REMOTE_READS, 1);
	if (!(READ_ONCE(q->bitmap) & (1ULL << lvl)))
		return false;
	if (!own)
		stat_add(st, SORYU_CNT_REMOTE_READS, 1);
	if (READ_ONCE(*QV(q->nr, lvl)) <= 0)
		return false;
	if ((own && TIMED(SORYU_SEC_CACHE_HOT, take_cache_hot(l, lvl, now, st))) ||
	    probe_level(q, l, lvl, st)) {
		note_served(q, lvl, now);
		return true;
	}
	if (idle)
		note_in_flight(q, l, lvl);
	return false;
}

/*
 * Take a task of level @lvl, @own's LLC first, then as @how says: with
 * TAKE_EVERY from each other LLC whose lines advertise the level, nearest
 * first (llc_nth()); with TAKE_INDEXED from the LLCs the index says hold
 * it, and, with TAKE_IDLE, as with TAKE_EVERY when a clear moved the
 * index meanwhile.
 */
__verified_once bool take_level(u32 own, u32 lvl, u32 how, u64 now, struct soryu_stats *st)
{
	u32 i, n = llc_count();
	bool idle = how & TAKE_IDLE;
	int found;

	how &= ~TAKE_IDLE;
	if (own >= n)
		own = 0;
	if (take_advertised(own, lvl, true, idle, now, st))
		return true;
	if (how == TAKE_OWN)
		return false;
	if (how == TAKE_INDEXED) {
		found = take_indexed(own, lvl, idle, now, st);
		if (found != INDEXED_MOVING)
			return found == INDEXED_TAKEN;
		/* moving: read every LLC's lines */
	}
	bpf_for(i, 1, n) {
		if (take_advertised(llc_nth(own, i, n), lvl, false, idle, now, st))
			return true;
	}
	return false;
}

/*
 * The best level first, below @limit, across every LLC, and take_level()
 * which LLC gives one, @own first. Which levels to try: @own's bitmap and
 * the index's word of levels held anywhere (two reads, whatever the number
 * of LLCs); with one LLC, its bitmap. Strict priority holds between LLCs
 * as within one: a CPU does not take a level while a better one is
 * counted anywhere it could run it (but for the moment an index bit is
 * being moved: index_clear()), and a kick from another LLC's enqueue
 * (find_victim()) is answered with that LLC's task.
 *
 * @idle (go_idle()): not even for that moment. The index is trusted only
 * when no clear moved it during the reads (index_seq_still()); else the
 * levels are those of every LLC's bitmap, and each LLC is read.
 */
__verified_once bool scan_levels(u32 own, u32 limit, bool idle, u64 now,
				 struct soryu_stats *st)
{
	u64 any = 0, held = 0, seq = 0;
	bool every = !index_on();
	u32 i, lvl, how;
	struct llc_queues *q;

	if (!every) {
		if ((q = queues_of(own)))
			any = READ_ONCE(q->bitmap);
		seq = idle ? index_seq_begin(&level_index.seq) : 0;
		held = READ_ONCE(level_index.levels);
		stat_add(st, SORYU_CNT_REMOTE_READS, 1);
		every = idle && !index_seq_still(&level_index.seq, seq);
		any |= held;
	}
	if (every) {
		bpf_for(i, 0, llc_count()) {
			if ((q = queues_of(i)))
				any |= READ_ONCE(q->bitmap);
		}
		stat_add(st, SORYU_CNT_REMOTE_READS, llc_count() - 1);
	}
	any &= below(limit);
	bpf_for(i, 0, SORYU_NR_LEVELS) {
		if (!any)
			break;
		lvl = lowest_bit(any);
		any &= any - 1;
		how = every ? TAKE_EVERY : (held >> lvl) & 1 ? TAKE_INDEXED : TAKE_OWN;
		if (take_level(own, lvl, how | (idle ? TAKE_IDLE : 0), now, st))
			return true;
	}
	return false;
}

/*
 * Is a task counted on any shared level better than @lvl, in any LLC? The
 * counts, or with more than one LLC the index that follows them, not the
 * bitmaps: a count is never below its DSQ's tasks (count_level()), where
 * a bit may read clear over a queued task with --clear-bitmap. So a false
 * answer means no such task was counted when the counts (or the index's
 * word) were read, but for a count leaving 0 at that moment, whose enqueue
 * is still placing its task; one counted high for a moment only says true.
 */
__verified_once bool queued_above(u32 lvl)
{
	struct llc_queues *q;
	u32 l;

	if (index_on())
		return READ_ONCE(level_index.levels) & below(lvl);
	if (!(q = queues_of(0)))
		return false;
	bpf_for(l, 0, SORYU_NR_LEVELS) {
		if (l >= lvl)
			break;
		if (READ_ONCE(*QV(q->nr, l)) > 0)
			return true;
	}
	return false;
}

/*
 * --clear-bitmap: the last resort of a dispatch that found nothing through
 * the bitmaps. Read every level's queued count below @limit, LLC by LLC
 * from @own, and take a task from a non-empty one whose bit reads clear
 * (the enqueue race in probe_level()), setting its bit again. Without it a
 * CPU could go idle, or, worse, give its time back while a task it could
 * run sits behind a clear bit: when a higher class holds every CPU,
 * soryu's tasks only run through the kernel's deadline server, which
 * stops for good when its pick comes back empty while tasks are queued on
 * its CPU. So: dispatch never returns empty while a level holds a task
 * this CPU may run.
 */
__verified_once bool sweep_levels(u32 own, u32 limit, u64 now, struct soryu_stats *st)
{
	u32 i, l, lvl, n = llc_count();
	struct llc_queues *q;

	if (own >= n)
		own = 0;
	bpf_for(lvl, 0, SORYU_NR_LEVELS) {
		if (lvl >= limit)
			break;
		bpf_for(i, 0, n) {
			l = llc_nth(own, i, n);
			if (!(q = queues_of(l)) ||
			    scx_bpf_dsq_nr_queued(LEVEL_DSQ(l, lvl)) <= 0)
				continue;
			if (!(READ_ONCE(q->bitmap) & (1ULL << lvl))) {
				__sync_fetch_and_or(&q->bitmap, 1ULL << lvl);
				stat_add(st, SORYU_CNT_BITMAP_REPAIR, 1);
			}
			if (probe_level(q, l, lvl, st)) {
				note_served(q, lvl, now);
				return true;
			}
		}
	}
	return false;
}

/*
 * The repair sweep found @p, first of level @lvl of LLC @llc, behind a
 * clear bit: kick a CPU of that LLC that may run it, an idle one first,
 * else the one running the worst level worse than @lvl. Inlined here, not
 * through claim_idle_cpu() and find_victim(): those are verified on their
 * own, where a task's cpumask is only readable in a callback that cannot
 * sleep, and the timer belongs to ops.init's program, which may. The
 * caller holds the RCU read lock that makes @p's cpumask readable here.
 */
static __always_inline void repair_kick(struct task_struct *p, u32 llc, u32 lvl)
{
	const struct cpumask *idle = scx_bpf_get_idle_cpumask();
	struct victim v = { .cpu = -1, .level = lvl };
	s32 cpu = claim_in_llc(p, idle, llc, 0);

	scx_bpf_put_idle_cpumask(idle);
	if (cpu >= 0) {
		scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
		return;
	}
	scan_llc(p, &v, llc);
	if (v.cpu >= 0 && v.cctx)
		kick_victim(v.cpu, v.cctx, lvl, v.level, 0);
}

/*
 * --clear-bitmap safety net for the CPUs that do not dispatch: in every
 * LLC, set the bit of any non-empty level that reads clear, and find the
 * level's first task a CPU of its LLC (repair_kick()). A CPU busy with an
 * equal or better level reaches sweep_levels() when its slice ends.
 */
static int repair_sweep(void *map, int *key, struct bpf_timer *timer)
{
	struct task_struct *head;
	struct llc_queues *q;
	u32 l, lvl;
	u64 bm;

	bpf_for(l, 0, llc_count()) {
		if (!(q = queues_of(l)))
			continue;
		bm = READ_ONCE(q->bitmap);
		bpf_for(lvl, 0, SORYU_NR_LEVELS) {
			if ((bm & (1ULL << lvl)) ||
			    scx_bpf_dsq_nr_queued(LEVEL_DSQ(l, lvl)) <= 0)
				continue;
			__sync_fetch_and_or(&q->bitmap, 1ULL << lvl);
			/* counted in the map, not a local: keeps the loop verifiable */
			stat_inc(SORYU_CNT_BITMAP_REPAIR);
			bpf_rcu_read_lock();
			head = __COMPAT_scx_bpf_dsq_peek(LEVEL_DSQ(l, lvl));
			if (head)
				repair_kick(head, l, lvl);
			bpf_rcu_read_unlock();
		}
	}
	bpf_timer_start(timer, SORYU_REPAIR_PERIOD_NS, 0);
	return 0;
}

/*
 * At load: every LLC's level DSQs, each level's serve stamp at @now. The
 * DSQs of an LLC the daemon did not list are never used (queue_llc()).
 */
static s32 init_queues(u64 now)
{
	struct llc_queues *q;
	u32 l, lvl;
	s32 ret;

	bpf_for(l, 0, llc_count()) {
		if (!(q = queues_of(l)))
			return -ENOENT;
		bpf_for(lvl, 0, SORYU_NR_LEVELS) {
			ret = scx_bpf_create_dsq(LEVEL_DSQ(l, lvl), -1);
			if (ret) {
				scx_bpf_error("soryu: cannot create level DSQ %u of LLC %u: %d",
					      lvl, l, ret);
				return ret;
			}
			*QV(q->last_served, lvl) = now;
		}
	}
	return 0;
}
