/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * scx_soryu: the levels the CPUs run, summarised per LLC, so that the
 * preemption victim search (find_victim()) reads one word per LLC and then
 * the CPUs of one LLC, L + N/L reads for N CPUs in L LLCs, instead of every
 * CPU's cpu_ctx, whatever CPUs the task may use (task_llcs()). Each CPU
 * shows the level it runs in its cpu_ctx
 * (show_level()); every change also moves the CPU's count in its LLC's
 * llc_ctx from the old level to the new one, and a bit per level says
 * which counts may be non-zero.
 *
 * The summary is a hint, as the levels it sums are: a CPU may switch tasks
 * right after another CPU read it. It can mislead a search for a moment,
 * never hide a CPU for longer (see find_victim() for how far a search
 * reads).
 * Included by main.bpf.c, after its globals and maps.
 */

/*
 * The layout, written by the daemon before load (src/topology.rs): the
 * LLC of each CPU, and the CPUs of LLC l at llc_cpus[llc_first[l]] up to
 * llc_cpus[llc_first[l + 1]]. A CPU the daemon did not list (not present
 * at load: a CPU brought online later restarts soryu, which lists it)
 * counts in LLC 0 and no victim search reads it.
 */
const volatile u32 nr_llcs = 1;
const volatile u32 cpu_llc[SORYU_MAX_CPUS];
const volatile u32 llc_cpus[SORYU_MAX_CPUS];
/* twice the size needed: an index masked with 2 * SORYU_MAX_LLCS - 1 is in bounds */
const volatile u32 llc_first[2 * SORYU_MAX_LLCS];

/*
 * The arrays above indexed with a mask the verifier can follow: it loses
 * the range of a compared index once the compiler widens it. The callers
 * check the ranges; the masks only make them provable, and barrier_var()
 * keeps the compiler from dropping a mask it knows to be redundant.
 */
static u32 masked(u32 i, u32 mask)
{
	barrier_var(i);
	return i & mask;
}
#define LLC_OF(cpu)	cpu_llc[masked(cpu, SORYU_MAX_CPUS - 1)]
#define LLC_CPU(i)	llc_cpus[masked(i, SORYU_MAX_CPUS - 1)]
#define LLC_FIRST(l)	llc_first[masked(l, 2 * SORYU_MAX_LLCS - 1)]
#define NR_AT(lc, l)	(&(lc)->nr_at[masked(l, 63)])

/* The LLCs: nr_llcs, as the daemon wrote it, in range. */
static u32 llc_count(void)
{
	u32 n = nr_llcs;

	return n >= 1 && n <= SORYU_MAX_LLCS ? n : 1;
}

/*
 * The @i-th of @n LLCs counted from @own, wrapping: the order in which a
 * CPU of LLC @own looks at them (the daemon numbers LLCs in CPU order, so
 * neighbours, which share a package or node, come first).
 */
static __always_inline u32 llc_nth(u32 own, u32 i, u32 n)
{
	return own + i < n ? own + i : own + i - n;
}

struct llc_ctx {
	/* bit l: nr_at[l] may be above 0 (exactly: see llc_move()) */
	u64 running;
	/*
	 * CPUs of this LLC showing each level, SORYU_LVL_NONE included; 64
	 * entries, one per bit of `running`, so that any bit index masked to
	 * 6 bits (NR_AT()) is provably in bounds
	 */
	s32 nr_at[64];
} __attribute__((aligned(64)));	/* each LLC's summary on lines of its own */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SORYU_MAX_LLCS);
	__type(key, u32);
	__type(value, struct llc_ctx);
} llc_ctxs SEC(".maps");

/*
 * Move one CPU's count from level @old to level @new. The bit of a level
 * is set when its count leaves 0 and cleared when it reaches 0; the two
 * can race between CPUs:
 *
 *   CPU A (leaves level l)            CPU B (enters level l)
 *   nr_at[l]: 1 -> 0                  nr_at[l]: 0 -> 1
 *   clear bit l                       set bit l
 *   re-read nr_at[l]: > 0, set bit l
 *
 * Every step is a fully ordered RMW (BPF_FETCH: each result is used),
 * so if B's set lands before A's clear, B's increment is visible to A's
 * re-read, and A sets the bit again; if after, B's own set stands. So a
 * level with CPUs always ends with its bit set. A bit may stay set with
 * its count at 0 (B's set after a later 1 -> 0 of someone else's):
 * llc_worst() checks the count of the bit it picks.
 */
static void llc_move(struct llc_ctx *lc, u32 old, u32 new)
{
	if (old > SORYU_LVL_NONE || new > SORYU_LVL_NONE)
		return;
	if (!__sync_fetch_and_add(NR_AT(lc, new), 1))
		__sync_fetch_and_or(&lc->running, 1ULL << new);
	if (__sync_fetch_and_sub(NR_AT(lc, old), 1) == 1 &&
	    (__sync_fetch_and_and(&lc->running, ~(1ULL << old)) & (1ULL << old)) &&
	    READ_ONCE(*NR_AT(lc, old)) > 0)
		__sync_fetch_and_or(&lc->running, 1ULL << old);
}

/*
 * Show this CPU as running level @lvl, in its cpu_ctx and its LLC's
 * summary. Only the CPU itself writes its level, from callbacks that hold
 * its runqueue lock (dispatch, running, cpu_release), so the old level
 * read here is exact and every CPU counts once, in one LLC, at all times.
 */
static void show_level(struct cpu_ctx *cctx, u32 lvl)
{
	u32 old = cctx->level, llc = cctx->llc;
	struct llc_ctx *lc;

	if (old == lvl)
		return;
	WRITE_ONCE(cctx->level, lvl);
	if ((lc = bpf_map_lookup_elem(&llc_ctxs, &llc)))
		llc_move(lc, old, lvl);
}

/*
 * The index of the highest bit set in @x (not 0). Without a branch: the
 * verifier would walk each branch of a binary search on every pass of the
 * caller's loop, and never finish. Smear the highest bit down, isolate it,
 * and look its index up by de Bruijn multiplication.
 */
static const u8 debruijn_bit[64] = {
	0, 1, 48, 2, 57, 49, 28, 3, 61, 58, 50, 42, 38, 29, 17, 4,
	62, 55, 59, 36, 53, 51, 43, 22, 45, 39, 33, 30, 24, 18, 12, 5,
	63, 47, 56, 27, 60, 41, 37, 16, 54, 35, 52, 21, 44, 32, 23, 11,
	46, 26, 40, 15, 34, 20, 31, 10, 25, 14, 19, 9, 13, 8, 7, 6,
};

static u32 highest_bit(u64 x)
{
	x |= x >> 1;
	x |= x >> 2;
	x |= x >> 4;
	x |= x >> 8;
	x |= x >> 16;
	x |= x >> 32;
	return debruijn_bit[((x ^ (x >> 1)) * 0x03f79d71b4cb0a89ULL) >> 58];
}

/* The index of the lowest bit set in @x (not 0). */
static u32 lowest_bit(u64 x)
{
	return highest_bit(x & -x);
}

/*
 * The worst level worse than @lvl that some CPU of @lc shows, or @lvl if
 * none does. The highest bit whose count is above 0: a bit left set with
 * a count of 0 (llc_move()) costs one more look, never a wrong answer.
 */
static u32 llc_worst(struct llc_ctx *lc, u32 lvl)
{
	u64 bm = READ_ONCE(lc->running);
	u32 i, l;

	if (lvl >= SORYU_LVL_NONE)
		return lvl;
	bm &= ~((2ULL << lvl) - 1);	/* levels worse than lvl only */
	bpf_for(i, 0, SORYU_LVL_NONE + 1) {
		if (!bm)
			break;
		l = highest_bit(bm);
		if (READ_ONCE(*NR_AT(lc, l)) > 0)
			return l;
		bm &= ~(1ULL << l);
	}
	return lvl;
}

/*
 * The LLCs holding a CPU @p may use, one bit each, or NULL for "every
 * LLC" (no task context). Read from its cpumask once per change of it
 * (ops.set_cpumask and ops.disable forget the last reading): a walk of the
 * listed CPUs, none of whose state it reads. A reading a moment old only
 * misleads: the victim search tests each CPU against the cpumask itself.
 */
static const u64 *task_llcs(struct task_struct *p)
{
	struct soryu_task_ctx *tctx = lookup_task_ctx(p);
	u32 i, cpu, l, n = LLC_FIRST(llc_count());

	if (!tctx)
		return NULL;
	if (tctx->llcs_known)
		return tctx->llcs;
	bpf_for(i, 0, SORYU_MAX_LLCS / 64)
		tctx->llcs[masked(i, SORYU_MAX_LLCS / 64 - 1)] = 0;
	bpf_for(i, 0, n) {
		if (i >= SORYU_MAX_CPUS)
			break;
		cpu = LLC_CPU(i);
		if (!bpf_cpumask_test_cpu(cpu, p->cpus_ptr))
			continue;
		l = LLC_OF(cpu);
		tctx->llcs[masked(l / 64, SORYU_MAX_LLCS / 64 - 1)] |= 1ULL << (l % 64);
	}
	tctx->llcs_known = true;
	return tctx->llcs;
}

/* Is LLC @l in @llcs (task_llcs(); NULL: every LLC)? */
static bool llc_in(const u64 *llcs, u32 l)
{
	return !llcs || (llcs[masked(l / 64, SORYU_MAX_LLCS / 64 - 1)] >> (l % 64)) & 1;
}

/*
 * The LLC of @llcs (task_llcs()) other than @skip that shows the worst
 * level worse than @lvl, nearest first on a tie: @near's own LLC, then the
 * others in index order from there. -1 when none shows a level worse than
 * @lvl: then no CPU there runs one.
 */
static s32 pick_llc(u32 lvl, s32 near, s32 skip, const u64 *llcs)
{
	u32 i, l, w, worst = lvl, n = llc_count(), first;
	s32 pick = -1;
	struct llc_ctx *lc;

	first = near >= 0 && near < SORYU_MAX_CPUS ? LLC_OF(near) : 0;
	bpf_for(i, 0, n) {
		l = (first + i) % n;
		if ((s32)l == skip || !llc_in(llcs, l) || !(lc = bpf_map_lookup_elem(&llc_ctxs, &l)))
			continue;
		w = llc_worst(lc, lvl);
		if (w > worst) {
			worst = w;
			pick = l;
			if (w == SORYU_LVL_NONE)
				break;	/* nothing is worse */
		}
	}
	return pick;
}

/* At load: every CPU counts in its LLC, at the level its cpu_ctx shows. */
static s32 init_llcs(void)
{
	struct cpu_ctx *cctx;
	struct llc_ctx *lc;
	u32 cpu, zero = 0, llc;

	bpf_for(cpu, 0, scx_bpf_nr_cpu_ids()) {
		if (cpu >= SORYU_MAX_CPUS)
			break;
		llc = LLC_OF(cpu);
		if (llc >= nr_llcs)
			llc = 0;
		if (!(cctx = bpf_map_lookup_percpu_elem(&cpu_ctxs, &zero, cpu)) ||
		    !(lc = bpf_map_lookup_elem(&llc_ctxs, &llc)) ||
		    cctx->level > SORYU_LVL_NONE)
			return -ENOENT;
		cctx->llc = llc;
		__sync_fetch_and_add(NR_AT(lc, cctx->level), 1);
		__sync_fetch_and_or(&lc->running, 1ULL << cctx->level);
	}
	return 0;
}
