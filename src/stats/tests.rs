// SPDX-License-Identifier: GPL-2.0-only
//
// Unit tests of src/stats.rs.

use super::*;
use crate::interval::{between, ClientView, RunConsts};
use crate::policy;
use scx_soryu::figures::Metrics;
use scx_soryu::spec::Class;

const CLASS_OTHER: usize = Class::Other.index();

fn hz(kernel_hz: u32) -> RunConsts {
    RunConsts {
        kernel_hz,
        starve_bound_us: 0,
    }
}

fn zero_cpu() -> soryu_stats {
    // SAFETY: soryu_stats is plain integers; all-zero is a valid value.
    unsafe { std::mem::zeroed() }
}

#[test]
fn interval_is_differenced_and_summed_over_cpus() {
    let mut a = zero_cpu();
    let mut b = zero_cpu();
    a.cnt[soryu_counter_SORYU_CNT_DISPATCH as usize] = 10;
    b.cnt[soryu_counter_SORYU_CNT_DISPATCH as usize] = 5;
    a.probe_hist[2] = 10;
    b.probe_hist[4] = 5;
    let prev = Snapshot::from_percpu(&[a, b], 0);

    a.cnt[soryu_counter_SORYU_CNT_DISPATCH as usize] = 30;
    b.cnt[soryu_counter_SORYU_CNT_DISPATCH as usize] = 25;
    a.probe_hist[2] = 30; // +20 dispatches of 2 probes
    b.probe_hist[4] = 25; // +20 dispatches of 4 probes
    a.lat_hist[0][policy::lat_bucket(1 << 20)] = 3;
    a.lat_hist[0][policy::lat_bucket(1000)] = 297;
    a.max_wait_epoch[1] = 1;
    a.max_wait_ns[1][0] = 1_500_000;
    b.max_wait_epoch[1] = 3; // another epoch in that slot: ignored
    b.max_wait_ns[1][0] = 9_000_000;
    a.boost_hist[0] = 6;
    a.boost_hist[12] = 1;
    a.boost_hist[24] = 3;
    let cur = Snapshot::from_percpu(&[a, b], 1);

    assert_eq!(cur.max_wait_ns, [1_500_000, 0, 0]);
    let i = between(&prev, &cur, cur.max_wait_ns, &hz(250));
    let m = &i.metrics;
    assert_eq!(m.dispatch, 40);
    assert!((m.probes_mean - 3.0).abs() < 1e-12);
    assert_eq!((m.probes_p50, m.probes_max), (2.0, 4.0));
    assert_eq!(m.int_count, 300);
    assert!((m.int_over_1ms_pct - 1.0).abs() < 1e-9);
    assert_eq!(m.int_max_us, 1500.0);
    assert!((m.int_max_jiffies - 0.375).abs() < 1e-9);
    assert_eq!(m.oth_count, 0);
    assert_eq!(
        (m.boost_floor_pct, m.boost_between_pct, m.boost_ceiling_pct),
        (60.0, 10.0, 30.0)
    );
}

/// What note_wait() and soryu_running() do on one CPU, for the tests.
fn file_wait(st: &mut soryu_stats, epoch: u64, class: usize, ns: u64) {
    let s = (epoch & 1) as usize;
    if st.max_wait_epoch[s] != epoch {
        st.max_wait_epoch[s] = epoch;
        st.max_wait_ns[s] = [0; NR_WAITS];
    }
    st.max_wait_ns[s][class] = st.max_wait_ns[s][class].max(ns);
    st.lat_hist[class][policy::lat_bucket(ns)] += 1;
}

/// The daemon closes epoch 4 (bumps to 5), and before it reads this CPU a
/// wait of epoch 5 comes in: epoch 4's longest wait must still be read.
#[test]
fn a_wait_of_the_next_epoch_keeps_the_closed_one() {
    let mut cpu = zero_cpu();
    file_wait(&mut cpu, 4, CLASS_OTHER, 3_000_000);
    file_wait(&mut cpu, 5, CLASS_OTHER, 10_000);
    assert_eq!(max_waits_of(&[cpu], 4), [0, 3_000_000, 0]);
    assert_eq!(max_waits_of(&[cpu], 5), [0, 10_000, 0]);
}

#[test]
fn empty_class_is_unknown_not_zero() {
    let (prev, mut cpu) = (zero_cpu(), zero_cpu());
    file_wait(&mut cpu, 0, CLASS_OTHER, 5_000);
    let i = between(
        &Snapshot::from_percpu(&[prev], 0),
        &Snapshot::from_percpu(&[cpu], 0),
        [0, 5_000, 0],
        &hz(250),
    );
    let m = &i.metrics;
    assert_eq!(m.int_count, 0);
    for v in [
        m.int_p50_us,
        m.int_p99_us,
        m.int_p999_us,
        m.int_max_us,
        m.int_max_jiffies,
        m.int_over_1ms_pct,
        m.int_over_4ms_pct,
        m.int_over_16ms_pct,
        // nothing enqueued, no dispatch call, no preemption attempt
        m.boost_floor_pct,
        m.probes_mean,
        m.probes_p99,
        m.preempt_none_pct,
    ] {
        assert!(v.is_nan(), "{m:?}");
    }
    assert_eq!(m.oth_count, 1);
    assert_eq!(m.oth_over_1ms_pct, 0.0);
    // JSON: null, and null reads back as unknown (what --monitor does
    // with the scx_stats server's answer)
    let v = serde_json::to_value(m).unwrap();
    assert!(v["int_p99_us"].is_null() && v["int_over_1ms_pct"].is_null());
    assert_eq!(v["oth_over_1ms_pct"], 0.0);
    let back: Metrics = serde_json::from_value(v).unwrap();
    assert!(back.int_p99_us.is_nan() && back.oth_count == 1);
}

/// The daemon's loop tick: close the epoch, fold its maxima.
fn tick(hub: &MaxWaits, cpus: &[soryu_stats], epoch: &mut u64) {
    let closed = *epoch;
    *epoch += 1;
    hub.fold(max_waits_of(cpus, closed));
}

// Before: a client's longest wait was that of the current --report-sec
// epoch, so it could hold a wait from before the client's interval, and
// lose one of its own interval when a report bumped the epoch (then
// p99.9 > max).
#[test]
fn each_consumer_gets_the_longest_wait_of_its_own_interval() {
    let hub = MaxWaits::new();
    let report = hub.subscribe();
    let client = hub.subscribe();
    let mut cpu = [zero_cpu()];
    let mut epoch = 0;
    let snap = |cpu: &[soryu_stats]| Snapshot::from_percpu(cpu, 0);

    // a 9 ms wait, then the client starts its interval
    file_wait(&mut cpu[0], epoch, CLASS_OTHER, 9_000_000);
    tick(&hub, &cpu, &mut epoch);
    let mut view = ClientView::new(snap(&cpu), client, hz(1000));
    // a 2 ms wait; a report ends its interval (9 ms is its longest)
    file_wait(&mut cpu[0], epoch, CLASS_OTHER, 2_000_000);
    tick(&hub, &cpu, &mut epoch);
    assert_eq!(report.take(), [0, 9_000_000, 0]);
    // a 1 ms wait; the client reads: its interval holds 2 ms and 1 ms
    file_wait(&mut cpu[0], epoch, CLASS_OTHER, 1_000_000);
    tick(&hub, &cpu, &mut epoch);
    let m = view.next(snap(&cpu)).metrics;
    assert_eq!(m.oth_count, 2);
    assert_eq!(m.oth_max_us, 2000.0);
    assert!(m.oth_p999_us <= m.oth_max_us, "{m:?}");
    // the report's next interval holds the 1 ms wait only
    assert_eq!(report.take(), [0, 1_000_000, 0]);
    // nothing new: the client's next interval has no wakeup
    tick(&hub, &cpu, &mut epoch);
    let m = view.next(snap(&cpu)).metrics;
    assert_eq!(m.oth_count, 0);
    assert!(m.oth_max_us.is_nan());
}

#[test]
fn a_closed_client_is_dropped_from_the_folds() {
    let hub = MaxWaits::new();
    assert!(!hub.wanted());
    let sub = hub.subscribe();
    assert!(hub.wanted());
    drop(sub);
    assert!(!hub.wanted());
    hub.fold([1, 2, 3]);
    assert!(lock(&hub.subs).is_empty());
}

#[test]
fn the_longest_queued_wait_is_its_own_figure() {
    let (a, b) = (zero_cpu(), zero_cpu());
    let (prev, cur) = (
        Snapshot::from_percpu(&[a], 0),
        Snapshot::from_percpu(&[b], 0),
    );
    // no task ran from a queue: unknown, not 0
    let none = between(&prev, &cur, [0, 0, 0], &hz(250));
    assert!(none.metrics.queued_max_us.is_nan());
    // the queued slot, not a class's, in us
    let some = between(&prev, &cur, [1_000, 2_000, 150_000_000], &hz(250));
    assert_eq!(some.metrics.queued_max_us, 150_000.0);
    // and the classes keep their own: no wakeup was recorded
    assert!(some.metrics.int_max_us.is_nan() && some.metrics.oth_max_us.is_nan());
}
