/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * scx_soryu: statistics. Counters and histograms live in a per-CPU array, so
 * counting never shares a cache line between CPUs; the daemon sums CPUs and
 * differences intervals.
 * Included by main.bpf.c, after its globals and maps.
 */

static struct soryu_stats *this_stats(void)
{
	u32 zero = 0;

	return bpf_map_lookup_elem(&stats, &zero);
}

static void stat_add(struct soryu_stats *st, enum soryu_counter c, u64 n)
{
	if (st && c < SORYU_NR_COUNTERS)
		st->cnt[c] += n;	/* this CPU's copy: no atomics needed */
}

static void stat_inc(enum soryu_counter c)
{
	stat_add(this_stats(), c, 1);
}

_Static_assert(SORYU_NR_WAITS == 3, "note_wait() resets three slots");

/*
 * Keep the per-CPU longest wait of the current epoch, in that epoch's slot.
 * One slot would lose the closed epoch's value whenever a wait of the new
 * epoch came between the daemon's bump and its read of this CPU (at
 * thousands of wakeups a second, often): the reset below would wipe it.
 * With two, the closed slot is only reset two epochs later, long after the
 * daemon read it.
 */
static void note_wait(struct soryu_stats *st, u32 which, u64 wait)
{
	u64 epoch = READ_ONCE(stats_epoch);
	u32 s = epoch & 1;

	if (st->max_wait_epoch[s] != epoch) {
		st->max_wait_epoch[s] = epoch;
		st->max_wait_ns[s][0] = 0;
		st->max_wait_ns[s][1] = 0;
		st->max_wait_ns[s][2] = 0;
	}
	if (which < SORYU_NR_WAITS && wait > st->max_wait_ns[s][which])
		st->max_wait_ns[s][which] = wait;
}
