/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Host build of policy.h: the exact functions the BPF program runs, given
 * external linkage so that the daemon (src/policy.rs) and its unit tests call
 * them instead of restating BMQ's arithmetic in Rust.
 */
#include <stdint.h>

typedef uint8_t u8;
typedef uint32_t u32;
typedef int32_t s32;
typedef uint64_t u64;
typedef int64_t s64;
#define __VMLINUX_H__	/* the typedefs above stand in for vmlinux.h's */

#include "policy.h"

int soryu_c_boost_after_expiry(int boost, int policy) { return soryu_boost_after_expiry(boost, policy); }
int soryu_c_boost_after_sleep(int boost, int policy) { return soryu_boost_after_sleep(boost, policy); }
int soryu_c_boost_on_wake(int boost, int policy, u64 slept_ns) { return soryu_boost_on_wake(boost, policy, slept_ns); }
int soryu_c_wakeup(int boost, int policy, u64 slept_ns, int wake_boost, u32 *class) { return soryu_wakeup(boost, policy, slept_ns, wake_boost, class); }
int soryu_c_cgroup_nice(u32 cgweight) { return soryu_cgroup_nice(cgweight); }
int soryu_c_cgroup_nice_sum(int sum, int cgroup_nice) { return soryu_cgroup_nice_sum(sum, cgroup_nice); }
u32 soryu_c_level(int policy, int pcpu_kthread, int nice, int boost) { return soryu_level(policy, pcpu_kthread, nice, boost); }
u32 soryu_c_lat_bucket(u64 ns) { return soryu_lat_bucket(ns); }
u64 soryu_c_lat_bucket_lower(u32 idx) { return soryu_lat_bucket_lower(idx); }
u64 soryu_c_pin_key(u32 lvl, u64 ord) { return soryu_pin_key(lvl, ord); }
