/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * scx_soryu: BMQ's policy arithmetic as pure functions.
 *
 * This header is compiled twice from the same text: into the BPF program
 * (main.bpf.c), and into the daemon through src/bpf/policy_host.c, where
 * `cargo test` exercises it and the reports use it to label histogram
 * buckets. There is no second copy of any of these rules.
 *
 * No kernel types, no helpers: integers in, integers out.
 */
#ifndef __SORYU_POLICY_H
#define __SORYU_POLICY_H

#include "intf.h"

/* uapi scheduling policies (include/uapi/linux/sched.h), a stable ABI. */
#define SORYU_SCHED_NORMAL	0
#define SORYU_SCHED_BATCH	3
#define SORYU_SCHED_IDLE	5

static inline int soryu_min(int a, int b) { return a < b ? a : b; }
static inline int soryu_max(int a, int b) { return a > b ? a : b; }

/* BMQ never boosts SCHED_BATCH below 0. */
static inline int soryu_boost_floor(int policy)
{
	return policy == SORYU_SCHED_BATCH ? 0 : -SORYU_MAX_BOOST;
}

/* A task used up its slice: one step worse (BMQ's deboost). */
static inline int soryu_boost_after_expiry(int boost, int policy)
{
	if (policy == SORYU_SCHED_IDLE)
		return boost;
	return soryu_min(boost + 1, SORYU_MAX_BOOST);
}

/* A task blocked voluntarily: one step better, down to its floor. */
static inline int soryu_boost_after_sleep(int boost, int policy)
{
	if (policy == SORYU_SCHED_IDLE)
		return boost;
	return soryu_max(boost - 1, soryu_boost_floor(policy));
}

/*
 * --boost-on-wake: what BMQ's sched_task_ttwu() meant to do, one step per
 * 2^22 ns since the task last ran, at most 24 steps, never below the floor.
 */
static inline int soryu_boost_on_wake(int boost, int policy, u64 slept_ns)
{
	u64 steps = slept_ns >> SORYU_WAKE_BOOST_SHIFT;

	if (policy == SORYU_SCHED_IDLE)
		return boost;
	if (steps > SORYU_WAKE_BOOST_MAX_STEPS)
		steps = SORYU_WAKE_BOOST_MAX_STEPS;
	return soryu_max(boost - (int)steps, soryu_boost_floor(policy));
}

/*
 * A wakeup: the class its wake-to-run time is counted in (*@class), and the
 * boost the task wakes with (the return value). The class comes from the
 * boost before any wake boost, so that --boost-on-wake on and off sort the
 * same wakeups into the same classes and a comparison of the two compares
 * like with like. @wake_boost: --boost-on-wake is on and the task has run
 * before (@slept_ns is then the time since it last ran).
 */
static inline int soryu_wakeup(int boost, int policy, u64 slept_ns, int wake_boost,
			       u32 *class)
{
	*class = boost < 0 ? SORYU_CLASS_INTERACTIVE : SORYU_CLASS_OTHER;
	return wake_boost ? soryu_boost_on_wake(boost, policy, slept_ns) : boost;
}

/*
 * The level a task is queued at. Lower runs first. nice is -20..19, boost
 * -12..12; one boost step is half a level, as in BMQ.
 */
static inline u32 soryu_level(int policy, int pcpu_kthread, int nice, int boost)
{
	if (pcpu_kthread)
		return SORYU_LVL_PCPU_KTHREAD;
	if (policy == SORYU_SCHED_IDLE)
		return SORYU_LVL_WORST;
	nice = soryu_max(soryu_min(nice, 19), -20);
	boost = soryu_max(soryu_min(boost, SORYU_MAX_BOOST), soryu_boost_floor(policy));
	return SORYU_LVL_FIRST_NORMAL + (u32)(nice + 20 + boost + SORYU_MAX_BOOST) / 2;
}

/* The kernel's sched_prio_to_weight[] (kernel/sched/core.c): nice -20..19. */
static const unsigned int soryu_nice_weight[40] = {
	88761, 71755, 56483, 46273, 36291,
	29154, 23254, 18705, 14949, 11916,
	9548, 7620, 6100, 4904, 3906,
	3121, 2501, 1991, 1586, 1277,
	1024, 820, 655, 526, 423,
	335, 272, 215, 172, 137,
	110, 87, 70, 56, 45,
	36, 29, 23, 18, 15,
};

/*
 * A cgroup's cpu.weight (1..10000, 100 the default) as a nice: the value the
 * kernel itself shows in the cgroup's cpu.weight.nice. The weight becomes a
 * load weight (weight x 1024 / 100, rounded), and the nice is the one whose
 * load weight is nearest, searching from nice -20 as the kernel does. So
 * 100 is 0, each factor of about 1.25 one step, 10000 is -20 and 1 is 19.
 */
static inline int soryu_cgroup_nice(u32 cgweight)
{
	s64 w = ((u64)cgweight * 1024 + 50) / 100, last = -1, d;
	int i;

	for (i = 0; i < 40; i++) {
		d = (s64)soryu_nice_weight[i] - w;
		if (d < 0)
			d = -d;
		if (last >= 0 && d >= last)
			break;
		last = d;
	}
	return i - 1 - 20;
}

/*
 * Nested cgroups: a task's nice offset is the sum of the cgroup nices from
 * its cgroup up to (not including) the root, which is the product of the
 * weights relative to 100 on the kernel's 1.25x-per-step scale. Kept within
 * the span of nice (39 steps) so that a sum cannot overflow; soryu_level()
 * then clamps nice + offset to -20..19.
 */
static inline int soryu_cgroup_nice_sum(int sum, int cgroup_nice)
{
	return soryu_max(soryu_min(sum + cgroup_nice, 39), -39);
}

/* Index of the most significant set bit of a non-zero value. */
static inline u32 soryu_msb(u64 v)
{
	u32 r = 0;

	if (v >> 32) { v >>= 32; r += 32; }
	if (v >> 16) { v >>= 16; r += 16; }
	if (v >> 8)  { v >>= 8;  r += 8; }
	if (v >> 4)  { v >>= 4;  r += 4; }
	if (v >> 2)  { v >>= 2;  r += 2; }
	if (v >> 1)  { r += 1; }
	return r;
}

/* Wake-to-run latency histogram bucket of a wait of @ns nanoseconds. */
static inline u32 soryu_lat_bucket(u64 ns)
{
	u32 msb, sub;

	if (ns < (1ULL << SORYU_LAT_MIN_SHIFT))
		return 0;
	if (ns >= (1ULL << SORYU_LAT_MAX_SHIFT))
		return SORYU_NR_LAT_BUCKETS - 1;
	msb = soryu_msb(ns);
	/* the SUB_SHIFT bits below the leading one pick the sub-bucket */
	sub = (u32)(ns >> (msb - SORYU_LAT_SUB_SHIFT)) & (SORYU_LAT_SUBS - 1);
	return 1 + (msb - SORYU_LAT_MIN_SHIFT) * SORYU_LAT_SUBS + sub;
}

/*
 * Smallest wait that falls in bucket @idx (0 for bucket 0). A bucket holds
 * [lower(idx), lower(idx + 1)); the last one has no upper bound.
 */
static inline u64 soryu_lat_bucket_lower(u32 idx)
{
	u32 msb, sub;

	if (idx == 0)
		return 0;
	if (idx >= SORYU_NR_LAT_BUCKETS - 1)
		return 1ULL << SORYU_LAT_MAX_SHIFT;
	msb = SORYU_LAT_MIN_SHIFT + (idx - 1) / SORYU_LAT_SUBS;
	sub = (idx - 1) % SORYU_LAT_SUBS;
	return (1ULL << msb) + (u64)sub * (1ULL << (msb - SORYU_LAT_SUB_SHIFT));
}

/*
 * The key of a task on a CPU's own queue (pinned.bpf.c), a vtime DSQ: its
 * level @lvl above bit SORYU_PIN_LVL_SHIFT, its place @ord in the level
 * below it. The kernel orders such a DSQ by time_before64(), the sign of
 * the 64-bit difference of two keys: that is the keys' own order only
 * while no two keys are 2^63 or more apart. The largest key is below
 * (SORYU_NR_LEVELS + 1) << SORYU_PIN_LVL_SHIFT, 34 << 57 < 2^63, so
 * every level sorts before every worse one whatever the places, and the
 * order is total. A place is cut to the bits below the level (2^57).
 */
static inline u64 soryu_pin_key(u32 lvl, u64 ord)
{
	return ((u64)lvl << SORYU_PIN_LVL_SHIFT) | (ord & ((1ULL << SORYU_PIN_LVL_SHIFT) - 1));
}

#endif /* __SORYU_POLICY_H */
