/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * scx_soryu: the level index, machine-wide: for each level, the LLCs whose
 * queues count a task on it, and one word of the levels counted in any
 * LLC. With it a dispatch finds the best level queued anywhere, and the
 * LLCs that hold it, in a number of reads that does not depend on how many
 * LLCs there are (scan_levels()), and queued_above() answers with one
 * word. A bit follows a count across 0 (count_add()), so the index is
 * exact once the counts settle, unlike the set-only level bitmaps. With one
 * LLC the index is neither written nor read: that LLC's own bitmap and
 * counts already describe the whole machine.
 * Included by main.bpf.c, after llc.bpf.c (masked(), llc_count()) and
 * before levels.bpf.c, whose counts move it and whose dispatch reads it.
 */

struct level_index {
	/* bit n: some LLC's count of level n may be above 0 (index_clear()) */
	u64 levels;
	/* clears of `levels` in progress and begun (index_seq_begin()) */
	u64 seq;
	/*
	 * For each level, on a line of its own: bit l % 64 of word l / 64,
	 * LLC l counts a task on that level, and the clears of those bits in
	 * progress and begun. 64 entries, one per bit of `levels`, so that an
	 * index masked to 6 bits is in bounds.
	 */
	struct {
		u64 llcs[SORYU_MAX_LLCS / 64];
		u64 seq;
	} __attribute__((aligned(64))) at[64];
} __attribute__((aligned(64)));

struct level_index level_index SEC(".data.level_index");

/* The word of level @lvl's LLC set that holds LLC @l. */
#define INDEX_WORD(lvl, l) \
	(&level_index.at[masked(lvl, 63)].llcs[masked((l) / 64, SORYU_MAX_LLCS / 64 - 1)])

/* Level @lvl's clear sequence (index_seq_begin()). */
#define INDEX_SEQ(lvl) (&level_index.at[masked(lvl, 63)].seq)

/* Is the index kept? Only with more than one LLC. */
static bool index_on(void)
{
	return llc_count() > 1;
}

/*
 * LLC @l's count of level @lvl left 0: set its bit, and the level's. The
 * level's bit is read first: set already, as it is while any LLC holds the
 * level, it costs no write to the line every dispatch reads.
 */
static void index_set(u32 l, u32 lvl)
{
	u64 lb = 1ULL << (lvl & 63);

	ordered_or(INDEX_WORD(lvl, l), 1ULL << (l % 64));
	if (!(READ_ONCE(level_index.levels) & lb))
		ordered_or(&level_index.levels, lb);
}

/*
 * The clears of index bits, for a reader that must not miss a counted
 * level (go_idle()): a clear may hide a counted level for a moment
 * (index_clear()), a set never does. Several CPUs may clear at once, so
 * not a seqcount's odd bit but a pair of counts in one word: the low 32
 * bits are the clears in progress, the high 32 bits the clears begun. A
 * reader that saw none in progress and the same word after its reads (no
 * clear begun meanwhile) read what no clear was moving. Each step is a
 * fully ordered RMW, so the begin is visible before the clear and the end
 * after the re-check's set.
 */
#define INDEX_SEQ_BEGIN ((1ULL << 32) + 1)
#define INDEX_SEQ_END (~0ULL)

/*
 * A reader's first read of @seq, ordered before the index reads after it
 * (full_barrier(): a plain load may pass another on weakly ordered CPUs).
 */
static u64 index_seq_begin(u64 *seq)
{
	u64 v = READ_ONCE(*seq);

	full_barrier();
	return v;
}

/* Did the reads since index_seq_begin()'s @v see no clear half done? */
static bool index_seq_still(u64 *seq, u64 v)
{
	full_barrier();
	return !(v & 0xffffffffULL) && READ_ONCE(*seq) == v;
}

/* Does the index show any LLC holding level @lvl? */
static bool index_any(u32 lvl)
{
	u32 w;

	bpf_for(w, 0, SORYU_MAX_LLCS / 64) {
		if (w * 64 >= llc_count())
			break;
		if (READ_ONCE(*INDEX_WORD(lvl, w * 64)))
			return true;
	}
	return false;
}

/*
 * LLC @l's count of level @lvl (@nr) reached 0: clear its bit, and the
 * level's when no LLC is left holding it. Each step races with a count
 * leaving 0 elsewhere, and each is followed by a re-check, as llc_move()'s
 * clears are:
 *
 *   this CPU (count 1 -> 0)           another CPU (count 0 -> 1)
 *   clear LLC bit                     set LLC bit       (index_set())
 *   [no LLC left: clear level bit]    read level bit, set it if clear
 *   re-read the count and the words
 *
 * Every RMW is fully ordered (ordered_or() and the like). If the other
 * CPU's set lands before this clear, its count is visible to the re-read,
 * which sets the bit again; if after, its set stands. The same pairing of
 * the level bit's clear with the other CPU's read of it: one of the two
 * sees the other's write. So a level some LLC counts always ends with both
 * bits set. Between the clear and the re-set a reader may see a counted
 * level's bits clear for a moment: a dispatch then takes another task; a
 * CPU going idle sees the clear in progress in the level's sequence (or,
 * for the level bit, the index's) and reads every LLC instead (go_idle()).
 */
static void index_clear(s64 *nr, u32 l, u32 lvl)
{
	u64 lb = 1ULL << (lvl & 63), bit = 1ULL << (l % 64);
	bool hide = false;

	ordered_add(INDEX_SEQ(lvl), INDEX_SEQ_BEGIN);
	if (!(ordered_and(INDEX_WORD(lvl, l), ~bit) & ~bit) && !index_any(lvl)) {
		hide = true;
		ordered_add(&level_index.seq, INDEX_SEQ_BEGIN);
		ordered_and(&level_index.levels, ~lb);
		if (index_any(lvl))
			ordered_or(&level_index.levels, lb);
	}
	if (READ_ONCE(*nr) > 0)
		index_set(l, lvl);
	if (hide)
		ordered_add(&level_index.seq, INDEX_SEQ_END);
	ordered_add(INDEX_SEQ(lvl), INDEX_SEQ_END);
}

/*
 * Move the index with a count of level @lvl in LLC @l that went from
 * @old by @d.
 */
static void index_count(s64 *nr, u32 l, u32 lvl, s64 old, s64 d)
{
	if (!index_on())
		return;
	if (d > 0 && old <= 0 && old + d > 0)
		index_set(l, lvl);
	else if (d < 0 && old > 0 && old + d <= 0)
		index_clear(nr, l, lvl);
}
