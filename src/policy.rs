// SPDX-License-Identifier: GPL-2.0-only
//
// Safe wrappers over src/bpf/policy.h, compiled for the host from the very
// text the BPF program runs (build.rs, src/bpf/policy_host.c). The unit tests
// below therefore test the scheduler's own arithmetic, not a Rust rewrite.

use std::os::raw::c_int;

mod ffi {
    use std::os::raw::c_int;
    extern "C" {
        pub fn soryu_c_boost_after_expiry(boost: c_int, policy: c_int) -> c_int;
        pub fn soryu_c_boost_after_sleep(boost: c_int, policy: c_int) -> c_int;
        pub fn soryu_c_boost_on_wake(boost: c_int, policy: c_int, slept_ns: u64) -> c_int;
        pub fn soryu_c_wakeup(
            boost: c_int,
            policy: c_int,
            slept_ns: u64,
            wake_boost: c_int,
            class: *mut u32,
        ) -> c_int;
        pub fn soryu_c_cgroup_nice(cgweight: u32) -> c_int;
        pub fn soryu_c_cgroup_nice_sum(sum: c_int, cgroup_nice: c_int) -> c_int;
        pub fn soryu_c_level(policy: c_int, pcpu_kthread: c_int, nice: c_int, boost: c_int) -> u32;
        pub fn soryu_c_lat_bucket(ns: u64) -> u32;
        pub fn soryu_c_lat_bucket_lower(idx: u32) -> u64;
        pub fn soryu_c_pin_key(lvl: u32, ord: u64) -> u64;
    }
}

/// uapi scheduling policies, as the kernel numbers them.
#[allow(dead_code)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    Normal = 0,
    Batch = 3,
    Idle = 5,
}

#[allow(dead_code)]
pub fn boost_after_expiry(boost: i32, policy: Policy) -> i32 {
    unsafe { ffi::soryu_c_boost_after_expiry(boost as c_int, policy as c_int) }
}

#[allow(dead_code)]
pub fn boost_after_sleep(boost: i32, policy: Policy) -> i32 {
    unsafe { ffi::soryu_c_boost_after_sleep(boost as c_int, policy as c_int) }
}

#[allow(dead_code)]
pub fn boost_on_wake(boost: i32, policy: Policy, slept_ns: u64) -> i32 {
    unsafe { ffi::soryu_c_boost_on_wake(boost as c_int, policy as c_int, slept_ns) }
}

/// A wakeup as ops.runnable handles it: (the latency class it is counted
/// in, the boost it wakes with). `wake_boost`: --boost-on-wake is on.
#[allow(dead_code)]
pub fn wakeup(boost: i32, policy: Policy, slept_ns: u64, wake_boost: bool) -> (u32, i32) {
    let mut class = 0u32;
    let b = unsafe {
        ffi::soryu_c_wakeup(
            boost as c_int,
            policy as c_int,
            slept_ns,
            wake_boost as c_int,
            &mut class,
        )
    };
    (class, b)
}

/// A cgroup's cpu.weight as the nice the kernel shows in cpu.weight.nice.
#[allow(dead_code)]
pub fn cgroup_nice(cgweight: u32) -> i32 {
    unsafe { ffi::soryu_c_cgroup_nice(cgweight) }
}

/// The nice offset of nested cgroups: their nices summed, within +-39.
#[allow(dead_code)]
pub fn cgroup_nice_sum(nices: &[i32]) -> i32 {
    nices
        .iter()
        .fold(0, |sum, &n| unsafe { ffi::soryu_c_cgroup_nice_sum(sum, n) })
}

#[allow(dead_code)]
pub fn level(policy: Policy, pcpu_kthread: bool, nice: i32, boost: i32) -> u32 {
    unsafe { ffi::soryu_c_level(policy as c_int, pcpu_kthread as c_int, nice, boost) }
}

/// level() for a policy number as the kernel reports it (/proc/PID/stat);
/// policy.h treats anything but BATCH and IDLE as NORMAL.
pub fn level_of(policy: i32, pcpu_kthread: bool, nice: i32, boost: i32) -> u32 {
    unsafe { ffi::soryu_c_level(policy as c_int, pcpu_kthread as c_int, nice, boost) }
}

/// Histogram bucket of a wake-to-run wait, as the BPF side files it.
pub fn lat_bucket(ns: u64) -> usize {
    unsafe { ffi::soryu_c_lat_bucket(ns) as usize }
}

/// Smallest wait in latency bucket `idx` (ns).
pub fn lat_bucket_lower(idx: usize) -> u64 {
    unsafe { ffi::soryu_c_lat_bucket_lower(idx as u32) }
}

/// The key of a task on a CPU's own queue: level `lvl`, place `ord`.
#[allow(dead_code)]
pub fn pin_key(lvl: u32, ord: u64) -> u64 {
    unsafe { ffi::soryu_c_pin_key(lvl, ord) }
}

/// The per-task starvation bound (docs/design-starvation.md, "The bound"),
/// in us: the longest a queued task waits before it runs, when `ahead`
/// tasks that may use its CPUs starve with it (itself included) and it may
/// use `cpus` CPUs. `hz` is the kernel's tick rate (0: unknown, 100 is
/// assumed, the slowest tick a kernel offers). The terms: its threshold,
/// an eighth more for the rate-limited look at the levels (a sixteenth
/// since the look became one per LLC, starve.bpf.c), one slice
/// (run to the next tick) for every CPU-round of starving tasks ahead of
/// it and one more for a CPU to reach its next dispatch; an eighth of the
/// threshold and one round more for chains of sync wakeups run on their
/// waker's CPU, which put off that CPU's dispatch (place.bpf.c,
/// wake_on_waker()); and one more threshold, because the starvation
/// matrix measures a served task sometimes waiting one more round (cause
/// not yet found, see the doc).
pub fn starve_bound_us(starve_ms: u64, slice_us: u64, hz: u32, ahead: u64, cpus: u64) -> u64 {
    let tick_us = 1_000_000 / u64::from(if hz == 0 { 100 } else { hz });
    let rounds = ahead.div_ceil(cpus.max(1)) + 2;
    starve_ms * 1000 * 9 / 4 + rounds * (slice_us + tick_us)
}

/// How many starving tasks per CPU the daemon's limits are set for: a
/// setting whose bound at this depth exceeds half the kernel watchdog is
/// refused (cli.rs).
pub const BOUND_REF_TASKS_PER_CPU: u64 = 32;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpf_intf::*;
    use Policy::*;

    const MAX: i32 = soryu_consts_SORYU_MAX_BOOST as i32;
    const NR_BUCKETS: usize = soryu_consts_SORYU_NR_LAT_BUCKETS as usize;

    /// The kernel's order of a vtime DSQ (kernel/sched/ext.c,
    /// scx_dsq_priq_less(): time_before64(a, b)).
    fn kernel_before(a: u64, b: u64) -> bool {
        (a.wrapping_sub(b) as i64) < 0
    }

    #[test]
    fn pin_key_order_is_the_kernels() {
        let shift = soryu_consts_SORYU_PIN_LVL_SHIFT;
        let place_max = (1u64 << shift) - 1;
        let mid = 1u64 << (shift - 1);
        // Places at the extremes and around the FIFO middle, where head
        // inserts count down and tail inserts up.
        let places = [
            0,
            1,
            mid - 1_000_000,
            mid - 1,
            mid,
            mid + 1,
            mid + 1_000_000,
            place_max - 1,
            place_max,
        ];
        let levels: Vec<u32> = (0..soryu_consts_SORYU_NR_LEVELS).collect();
        let mut keys = Vec::new();
        for &l in &levels {
            for &o in &places {
                keys.push(((l, o), pin_key(l, o)));
            }
        }
        for &(a, ka) in &keys {
            for &(b, kb) in &keys {
                assert_eq!(
                    kernel_before(ka, kb),
                    a < b,
                    "level {} place {:#x} against level {} place {:#x}: the kernel's order is not (level, place)",
                    a.0,
                    a.1,
                    b.0,
                    b.1
                );
            }
        }
    }

    #[test]
    fn level_mapping_follows_bmq() {
        // (nice + 20 + boost + 12) / 2, shifted by the kthread level.
        assert_eq!(level(Normal, false, 0, 0), 1 + 16);
        assert_eq!(level(Normal, false, -20, -MAX), 1);
        assert_eq!(level(Normal, false, 19, MAX), soryu_consts_SORYU_LVL_WORST);
        // one boost step is half a level
        assert_eq!(level(Normal, false, 0, -1), level(Normal, false, 0, 0) - 1);
        assert_eq!(level(Normal, false, 0, -2), level(Normal, false, 0, 0) - 1);
        assert_eq!(level(Normal, false, 0, -3), level(Normal, false, 0, 0) - 2);
        // per-CPU kthreads above everything, SCHED_IDLE below everything
        assert_eq!(
            level(Normal, true, 19, MAX),
            soryu_consts_SORYU_LVL_PCPU_KTHREAD
        );
        assert_eq!(level(Idle, false, -20, -MAX), soryu_consts_SORYU_LVL_WORST);
        // SCHED_BATCH never benefits from a negative boost
        assert_eq!(level(Batch, false, 0, -MAX), level(Normal, false, 0, 0));
        // every (nice, boost) lands on a normal level
        for nice in -20..=19 {
            for boost in -MAX..=MAX {
                let l = level(Normal, false, nice, boost);
                assert!(
                    (1..soryu_consts_SORYU_NR_LEVELS).contains(&l),
                    "{nice} {boost} -> {l}"
                );
            }
        }
        // out-of-range inputs are clamped, never wrap
        assert_eq!(level(Normal, false, 100, 100), soryu_consts_SORYU_LVL_WORST);
        assert_eq!(level(Normal, false, -100, -100), 1);
    }

    #[test]
    fn boost_arithmetic() {
        assert_eq!(boost_after_expiry(0, Normal), 1);
        assert_eq!(boost_after_expiry(MAX, Normal), MAX);
        assert_eq!(boost_after_sleep(0, Normal), -1);
        assert_eq!(boost_after_sleep(-MAX, Normal), -MAX);
        assert_eq!(
            boost_after_sleep(0, Batch),
            0,
            "batch is never boosted below 0"
        );
        assert_eq!(boost_after_sleep(3, Batch), 2);
        assert_eq!(boost_after_expiry(0, Idle), 0, "idle tasks are not boosted");
        assert_eq!(boost_after_sleep(0, Idle), 0);
    }

    #[test]
    fn wake_boost_steps_every_2_22_ns() {
        let step = 1u64 << soryu_consts_SORYU_WAKE_BOOST_SHIFT;
        assert_eq!(step, 4_194_304);
        assert_eq!(boost_on_wake(5, Normal, step - 1), 5);
        assert_eq!(boost_on_wake(5, Normal, step), 4);
        assert_eq!(boost_on_wake(5, Normal, 3 * step + 7), 2);
        // at most 24 steps, and never below -12
        assert_eq!(boost_on_wake(MAX, Normal, 24 * step), -MAX);
        assert_eq!(boost_on_wake(MAX, Normal, 23 * step), -MAX + 1);
        assert_eq!(boost_on_wake(MAX, Normal, u64::MAX), -MAX);
        assert_eq!(boost_on_wake(0, Batch, u64::MAX), 0);
        assert_eq!(boost_on_wake(4, Idle, u64::MAX), 4);
    }

    #[test]
    fn a_wakeup_is_classed_by_its_boost_before_the_wake_boost() {
        let (int, oth) = (
            soryu_consts_SORYU_CLASS_INTERACTIVE,
            soryu_consts_SORYU_CLASS_OTHER,
        );
        let long = 24u64 << soryu_consts_SORYU_WAKE_BOOST_SHIFT;
        // A hog (boost 0) waking after a long sleep: the knob takes it to
        // the floor, and it is still counted as "other", knob on or off.
        assert_eq!(wakeup(0, Normal, long, true), (oth, -MAX));
        assert_eq!(wakeup(0, Normal, long, false), (oth, 0));
        // An interactive task stays interactive either way.
        assert_eq!(wakeup(-1, Normal, long, true), (int, -MAX));
        assert_eq!(wakeup(-1, Normal, long, false), (int, -1));
        // Over every boost and sleep, the class never depends on the knob.
        for b in -MAX..=MAX {
            for steps in [0u64, 1, 5, 24, 100] {
                let slept = steps << soryu_consts_SORYU_WAKE_BOOST_SHIFT;
                assert_eq!(
                    wakeup(b, Normal, slept, true).0,
                    wakeup(b, Normal, slept, false).0
                );
            }
        }
    }

    #[test]
    fn cgroup_weight_is_the_kernels_cpu_weight_nice() {
        // What the kernel prints in cpu.weight.nice for these cpu.weight
        // values (the same search over sched_prio_to_weight[]).
        for (w, nice) in [
            (100, 0),
            (1, 19),
            (10000, -20),
            (200, -3),
            (50, 3),
            (125, -1),
            (80, 1),
            (1000, -10),
            (10, 10),
        ] {
            assert_eq!(cgroup_nice(w), nice, "cpu.weight {w}");
        }
        // monotonic: a heavier cgroup is never a worse nice
        for w in 1..10000 {
            assert!(cgroup_nice(w + 1) <= cgroup_nice(w), "cpu.weight {w}");
        }
        // nested: the sum, kept within the span of nice
        assert_eq!(cgroup_nice_sum(&[-3, -3]), -6);
        assert_eq!(cgroup_nice_sum(&[-20, -20, -20]), -39);
        assert_eq!(cgroup_nice_sum(&[19, 19, 19, -5]), 34);
        // and the level clamps nice + offset to -20..19
        assert_eq!(
            level(Normal, false, 10 - 39, 0),
            level(Normal, false, -20, 0)
        );
        assert_eq!(
            level(Normal, false, -10 + 39, 0),
            level(Normal, false, 19, 0)
        );
    }

    #[test]
    fn latency_buckets_have_power_of_two_edges() {
        assert_eq!(lat_bucket(0), 0);
        assert_eq!(lat_bucket(1023), 0);
        assert_eq!(lat_bucket(1024), 1);
        assert_eq!(lat_bucket_lower(1), 1024);
        for shift in [20u32, 22, 24] {
            let edge = 1u64 << shift;
            let b = lat_bucket(edge);
            assert_eq!(lat_bucket_lower(b), edge, "2^{shift} is an edge");
            assert_eq!(lat_bucket(edge - 1), b - 1);
        }
        assert_eq!(lat_bucket((1 << 32) - 1), NR_BUCKETS - 2);
        assert_eq!(lat_bucket(1 << 32), NR_BUCKETS - 1);
        assert_eq!(lat_bucket(u64::MAX), NR_BUCKETS - 1);
    }

    #[test]
    fn latency_buckets_are_consistent_both_ways() {
        // every bucket's lower bound maps back to it, and bounds increase
        for i in 1..NR_BUCKETS {
            let lo = lat_bucket_lower(i);
            assert_eq!(lat_bucket(lo), i, "lower({i}) = {lo}");
            assert!(lo > lat_bucket_lower(i - 1));
            if i + 1 < NR_BUCKETS {
                assert_eq!(lat_bucket(lat_bucket_lower(i + 1) - 1), i);
            }
        }
        // 4 sub-buckets per power of two
        assert_eq!(
            lat_bucket_lower(lat_bucket(1 << 20) + 1),
            (1 << 20) + (1 << 18)
        );
    }

    #[test]
    fn starve_bound() {
        // defaults at HZ 250: 225 ms + 3 rounds of (1 ms + 4 ms)
        assert_eq!(starve_bound_us(100, 1000, 250, 2, 2), 240_000);
        // a hundred starving tasks on 2 CPUs: 52 rounds
        assert_eq!(starve_bound_us(100, 1000, 250, 100, 2), 225_000 + 52 * 5000);
        // unknown HZ: a 10 ms tick; no CPUs counts as one
        assert_eq!(starve_bound_us(100, 1000, 0, 1, 0), 225_000 + 3 * 11_000);
    }
}
