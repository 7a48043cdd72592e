// SPDX-License-Identifier: GPL-2.0-only
//
// The figures of one interval, from the two Snapshots around it
// (Interval::between): counters differenced, latency percentiles from the
// differenced histograms, longest waits from the epoch maxima. These are
// the types --report-json files (src/record.rs) and the scx_stats server
// hands out; a figure the interval cannot define is NaN, null in JSON.

use std::collections::BTreeMap;

use scx_stats_derive::{stat_doc, Stats};
use serde::{Deserialize, Serialize};

use super::{
    tasks_running, Snapshot, Waits, CLASS_INTERACTIVE, CLASS_OTHER, STARVE_BOUND_US, WAIT_QUEUED,
};
use crate::bpf_intf::*;
use crate::hist;

/// Wake-to-run figures of one latency class over one interval. Without a
/// wakeup every figure but the count is NaN (unknown).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct LatFigures {
    pub count: u64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub max_us: f64,
    pub max_jiffies: f64,
    pub over_1ms_pct: f64,
    pub over_4ms_pct: f64,
    pub over_16ms_pct: f64,
}

impl LatFigures {
    pub fn from_hist(counts: &[u64], max_ns: u64, hz: u32) -> Self {
        let count: u64 = counts.iter().sum();
        if count == 0 {
            return LatFigures {
                count,
                p50_us: f64::NAN,
                p99_us: f64::NAN,
                p999_us: f64::NAN,
                max_us: f64::NAN,
                max_jiffies: f64::NAN,
                over_1ms_pct: f64::NAN,
                over_4ms_pct: f64::NAN,
                over_16ms_pct: f64::NAN,
            };
        }
        let us = |ns: Option<u64>| ns.map_or(f64::NAN, |v| v as f64 / 1000.0);
        let pct = |edge| hist::lat_pct_at_or_above(counts, edge).unwrap_or(f64::NAN);
        LatFigures {
            count,
            p50_us: us(hist::lat_quantile_ns(counts, 0.50)),
            p99_us: us(hist::lat_quantile_ns(counts, 0.99)),
            p999_us: us(hist::lat_quantile_ns(counts, 0.999)),
            max_us: max_ns as f64 / 1000.0,
            max_jiffies: if hz > 0 {
                max_ns as f64 * hz as f64 / 1e9
            } else {
                f64::NAN
            },
            over_1ms_pct: pct(1 << 20),
            over_4ms_pct: pct(1 << 22),
            over_16ms_pct: pct(1 << 24),
        }
    }
}

/// The scalar figures of one interval: what the text report prints, what
/// scx_stats serves, and the flat part of a JSON record. A float figure the
/// interval cannot define is NaN, which serializes as null: the percentiles
/// and shares of a class without wakeups, probes per call without dispatch
/// calls, preempt_none_pct without attempts, boost shares without enqueues
/// (or without histograms).
#[stat_doc]
#[derive(Clone, Debug, Default, Serialize, Deserialize, Stats)]
#[stat(top)]
pub struct Metrics {
    #[stat(desc = "Length of the interval (s)")]
    #[serde(deserialize_with = "nullable")]
    pub duration_s: f64,
    #[stat(desc = "Wakeups whose wake-to-run time was recorded")]
    pub wakeups: u64,
    #[stat(
        desc = "Tasks placed under their level: on a level DSQ, a CPU's own queue or a claimed idle CPU"
    )]
    pub enqueue: u64,
    #[stat(desc = "Of them, tasks that may use one CPU only, queued on that CPU's own queue")]
    #[serde(default)]
    pub pinned: u64,
    #[stat(desc = "Dispatch calls that let a task sharing its SMT core go, for a whole idle core")]
    #[serde(default)]
    pub smt_moves: u64,
    #[stat(desc = "Wakeups placed straight on an idle CPU")]
    pub direct: u64,
    #[stat(desc = "Sync wakeups (pipe, socket) run next on the waker's CPU")]
    #[serde(default)]
    pub sync_local: u64,
    #[stat(
        desc = "Wakeups that preempted straight onto their victim CPU's local DSQ, the task displaced resuming behind them"
    )]
    #[serde(default)]
    pub preempt_local: u64,
    #[stat(
        desc = "Dispatch calls that took, from behind its level's head, a task last run on their CPU"
    )]
    #[serde(default)]
    pub cache_hot: u64,
    #[stat(desc = "Dispatch calls that moved a task to their CPU")]
    pub dispatch: u64,
    #[stat(desc = "Dispatch calls that found nothing")]
    pub dispatch_empty: u64,
    #[stat(desc = "Dispatch calls that kept the previous task running")]
    pub dispatch_keep: u64,
    #[stat(desc = "Level DSQs probed")]
    pub probes: u64,
    #[stat(desc = "Probes per dispatch call, mean; null without dispatch calls")]
    #[serde(deserialize_with = "nullable")]
    pub probes_mean: f64,
    #[stat(desc = "Probes per dispatch call, median; null without dispatch calls")]
    #[serde(deserialize_with = "nullable")]
    pub probes_p50: f64,
    #[stat(desc = "Probes per dispatch call, 99th percentile; null without dispatch calls")]
    #[serde(deserialize_with = "nullable")]
    pub probes_p99: f64,
    #[stat(desc = "Probes per dispatch call, maximum; null without dispatch calls")]
    #[serde(deserialize_with = "nullable")]
    pub probes_max: f64,
    #[stat(desc = "Tasks served by the anti-starvation probe")]
    pub starve_serve: u64,
    #[stat(desc = "Preemption attempts (try_preempt calls)")]
    pub preempt_attempts: u64,
    #[stat(desc = "Attempts that woke an idle CPU")]
    pub preempt_idle: u64,
    #[stat(desc = "Attempts that kicked a CPU running a worse level")]
    pub preempt_kicks: u64,
    #[stat(desc = "Attempts that found no CPU to take the task")]
    pub preempt_none: u64,
    #[stat(desc = "Attempts whose kick a timer sends when the victim has run --wakeup-gran-us")]
    #[serde(default)]
    pub preempt_deferred: u64,
    #[stat(desc = "Attempts that searched for a victim (no idle CPU, the last CPU no victim)")]
    #[serde(default)]
    pub preempt_scans: u64,
    #[stat(desc = "Searches that read every CPU's level: tasks that may not use every CPU")]
    #[serde(default)]
    pub preempt_fallbacks: u64,
    #[stat(desc = "preempt_none as a percentage of attempts; null without attempts")]
    #[serde(deserialize_with = "nullable")]
    pub preempt_none_pct: f64,
    #[stat(desc = "DSQ inserts the kernel refused (must be 0)")]
    pub insert_fail: u64,
    #[stat(desc = "Level bits cleared (--clear-bitmap)")]
    pub bitmap_clear: u64,
    #[stat(desc = "Level bits set again by the repair sweep")]
    pub bitmap_repair: u64,
    #[stat(
        desc = "Preemption kicks whose victim had switched to another level before the kick landed"
    )]
    pub stale_kicks: u64,
    #[stat(
        desc = "Longest time any task waited queued before it ran (us); null if none ran from a queue"
    )]
    #[serde(default = "nan", deserialize_with = "nullable")]
    pub queued_max_us: f64,
    #[stat(
        desc = "The starvation bound for one starving task per CPU (us), docs/design-starvation.md; null if unknown"
    )]
    #[serde(default = "nan", deserialize_with = "nullable")]
    pub starve_bound_us: f64,
    #[stat(desc = "Tasks on a run queue at the end of the interval")]
    pub tasks_running: u64,
    #[stat(desc = "Interactive wakeups (boost < 0 at wakeup)")]
    pub int_count: u64,
    #[stat(desc = "Interactive wake-to-run p50 (us, bucket lower bound); null without wakeups")]
    #[serde(deserialize_with = "nullable")]
    pub int_p50_us: f64,
    #[stat(desc = "Interactive wake-to-run p99 (us, bucket lower bound); null without wakeups")]
    #[serde(deserialize_with = "nullable")]
    pub int_p99_us: f64,
    #[stat(desc = "Interactive wake-to-run p99.9 (us, bucket lower bound); null without wakeups")]
    #[serde(deserialize_with = "nullable")]
    pub int_p999_us: f64,
    #[stat(desc = "Interactive longest wait (us); null without wakeups")]
    #[serde(deserialize_with = "nullable")]
    pub int_max_us: f64,
    #[stat(desc = "Interactive longest wait (jiffies); null without wakeups")]
    #[serde(deserialize_with = "nullable")]
    pub int_max_jiffies: f64,
    #[stat(desc = "Interactive wakeups waiting >= 2^20 ns (%); null without wakeups")]
    #[serde(deserialize_with = "nullable")]
    pub int_over_1ms_pct: f64,
    #[stat(desc = "Interactive wakeups waiting >= 2^22 ns (%); null without wakeups")]
    #[serde(deserialize_with = "nullable")]
    pub int_over_4ms_pct: f64,
    #[stat(desc = "Interactive wakeups waiting >= 2^24 ns (%); null without wakeups")]
    #[serde(deserialize_with = "nullable")]
    pub int_over_16ms_pct: f64,
    #[stat(desc = "Other wakeups")]
    pub oth_count: u64,
    #[stat(desc = "Other wake-to-run p50 (us, bucket lower bound); null without wakeups")]
    #[serde(deserialize_with = "nullable")]
    pub oth_p50_us: f64,
    #[stat(desc = "Other wake-to-run p99 (us, bucket lower bound); null without wakeups")]
    #[serde(deserialize_with = "nullable")]
    pub oth_p99_us: f64,
    #[stat(desc = "Other wake-to-run p99.9 (us, bucket lower bound); null without wakeups")]
    #[serde(deserialize_with = "nullable")]
    pub oth_p999_us: f64,
    #[stat(desc = "Other longest wait (us); null without wakeups")]
    #[serde(deserialize_with = "nullable")]
    pub oth_max_us: f64,
    #[stat(desc = "Other longest wait (jiffies); null without wakeups")]
    #[serde(deserialize_with = "nullable")]
    pub oth_max_jiffies: f64,
    #[stat(desc = "Other wakeups waiting >= 2^20 ns (%); null without wakeups")]
    #[serde(deserialize_with = "nullable")]
    pub oth_over_1ms_pct: f64,
    #[stat(desc = "Other wakeups waiting >= 2^22 ns (%); null without wakeups")]
    #[serde(deserialize_with = "nullable")]
    pub oth_over_4ms_pct: f64,
    #[stat(desc = "Other wakeups waiting >= 2^24 ns (%); null without wakeups")]
    #[serde(deserialize_with = "nullable")]
    pub oth_over_16ms_pct: f64,
    #[stat(desc = "Enqueued tasks at the boost floor, -12 (%); null without enqueues")]
    #[serde(deserialize_with = "nullable")]
    pub boost_floor_pct: f64,
    #[stat(desc = "Enqueued tasks between floor and ceiling (%); null without enqueues")]
    #[serde(deserialize_with = "nullable")]
    pub boost_between_pct: f64,
    #[stat(desc = "Enqueued tasks at the boost ceiling, +12 (%); null without enqueues")]
    #[serde(deserialize_with = "nullable")]
    pub boost_ceiling_pct: f64,
}

impl Metrics {
    /// Figures that count events over the whole interval: comparable
    /// between intervals only per second of interval (compare divides them
    /// by duration_s). Every other integer figure is a state
    /// (tasks_running), not a sum over time.
    pub const COUNTS: [&'static str; 26] = [
        "wakeups",
        "enqueue",
        "pinned",
        "smt_moves",
        "direct",
        "sync_local",
        "preempt_local",
        "cache_hot",
        "dispatch",
        "dispatch_empty",
        "dispatch_keep",
        "probes",
        "starve_serve",
        "preempt_attempts",
        "preempt_idle",
        "preempt_kicks",
        "preempt_none",
        "preempt_deferred",
        "preempt_scans",
        "preempt_fallbacks",
        "insert_fail",
        "bitmap_clear",
        "bitmap_repair",
        "stale_kicks",
        "int_count",
        "oth_count",
    ];
}

/// A figure older records do not carry reads as unknown.
fn nan() -> f64 {
    f64::NAN
}

/// Reads null (an unknown figure) back as NaN.
fn nullable<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

/// The raw distributions of one interval (bucket counts, differenced).
/// Readers take a record that carries only some of them (a benchmark's
/// file has lat_interactive alone).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Hists {
    pub lat_interactive: Vec<u64>,
    pub lat_other: Vec<u64>,
    pub probes: Vec<u64>,
    /// index = boost + 12
    pub boost: Vec<u64>,
    pub levels: Vec<u64>,
}

/// Calls of one BPF callback in an interval and their mean cost.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct BpfCost {
    pub calls: u64,
    pub ns_per_call: f64,
}

/// One interval: scalar figures, distributions, kernel events.
#[derive(Clone, Debug, Default)]
pub struct Interval {
    pub metrics: Metrics,
    pub hists: Hists,
    pub kernel_events: BTreeMap<String, u64>,
    pub bpf_cost: BTreeMap<String, BpfCost>,
}

/// A share in percent; NaN (unknown) of nothing.
fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        f64::NAN
    } else {
        100.0 * part as f64 / whole as f64
    }
}

impl Interval {
    /// Figures of the interval from `prev` to `cur`. `max_wait_ns` is the
    /// longest wait per class over the same interval (a MaxWaitSub's take,
    /// never a value of `cur` alone). `hz` is the kernel's tick rate (0 if
    /// unknown: jiffies are then unknown).
    pub fn between(prev: &Snapshot, cur: &Snapshot, max_wait_ns: Waits, hz: u32) -> Self {
        let d = hist::diff(&cur.cnt, &prev.cnt);
        let c = |i: soryu_counter| d[i as usize];
        let probes = hist::diff(&cur.probe_hist, &prev.probe_hist);
        let lat_i = hist::diff(
            &cur.lat_hist[CLASS_INTERACTIVE],
            &prev.lat_hist[CLASS_INTERACTIVE],
        );
        let lat_o = hist::diff(&cur.lat_hist[CLASS_OTHER], &prev.lat_hist[CLASS_OTHER]);
        let boost = hist::diff(&cur.boost_hist, &prev.boost_hist);
        let levels = hist::diff(&cur.level_hist, &prev.level_hist);
        let li = LatFigures::from_hist(&lat_i, max_wait_ns[CLASS_INTERACTIVE], hz);
        let lo = LatFigures::from_hist(&lat_o, max_wait_ns[CLASS_OTHER], hz);
        let bucket = |b: Option<usize>| b.map_or(f64::NAN, |b| b as f64);
        let boosts: u64 = boost.iter().sum();
        let (floor, ceiling) = (boost[0], boost[boost.len() - 1]);
        let attempts = c(soryu_counter_SORYU_CNT_PREEMPT_ATTEMPT);

        let metrics = Metrics {
            duration_s: cur.at.saturating_duration_since(prev.at).as_secs_f64(),
            wakeups: c(soryu_counter_SORYU_CNT_WAKEUPS),
            enqueue: c(soryu_counter_SORYU_CNT_ENQUEUE),
            pinned: c(soryu_counter_SORYU_CNT_PINNED),
            smt_moves: c(soryu_counter_SORYU_CNT_SMT_MOVE),
            direct: c(soryu_counter_SORYU_CNT_DIRECT),
            sync_local: c(soryu_counter_SORYU_CNT_SYNC_LOCAL),
            preempt_local: c(soryu_counter_SORYU_CNT_PREEMPT_LOCAL),
            cache_hot: c(soryu_counter_SORYU_CNT_CACHE_HOT),
            dispatch: c(soryu_counter_SORYU_CNT_DISPATCH),
            dispatch_empty: c(soryu_counter_SORYU_CNT_DISPATCH_EMPTY),
            dispatch_keep: c(soryu_counter_SORYU_CNT_KEEP),
            probes: c(soryu_counter_SORYU_CNT_PROBES),
            probes_mean: hist::index_mean(&probes).unwrap_or(f64::NAN),
            probes_p50: bucket(hist::quantile_bucket(&probes, 0.5)),
            probes_p99: bucket(hist::quantile_bucket(&probes, 0.99)),
            probes_max: bucket(hist::max_bucket(&probes)),
            starve_serve: c(soryu_counter_SORYU_CNT_STARVE_SERVE),
            preempt_attempts: attempts,
            preempt_idle: c(soryu_counter_SORYU_CNT_PREEMPT_IDLE),
            preempt_kicks: c(soryu_counter_SORYU_CNT_PREEMPT_KICK),
            preempt_none: c(soryu_counter_SORYU_CNT_PREEMPT_NONE),
            preempt_deferred: c(soryu_counter_SORYU_CNT_PREEMPT_DEFER),
            preempt_scans: c(soryu_counter_SORYU_CNT_PREEMPT_SCAN),
            preempt_fallbacks: c(soryu_counter_SORYU_CNT_PREEMPT_FALLBACK),
            preempt_none_pct: pct(c(soryu_counter_SORYU_CNT_PREEMPT_NONE), attempts),
            insert_fail: c(soryu_counter_SORYU_CNT_INSERT_FAIL),
            bitmap_clear: c(soryu_counter_SORYU_CNT_BITMAP_CLEAR),
            bitmap_repair: c(soryu_counter_SORYU_CNT_BITMAP_REPAIR),
            stale_kicks: c(soryu_counter_SORYU_CNT_STALE_KICK),
            queued_max_us: match max_wait_ns[WAIT_QUEUED] {
                0 => f64::NAN,
                ns => ns as f64 / 1000.0,
            },
            starve_bound_us: match STARVE_BOUND_US.load(std::sync::atomic::Ordering::Relaxed) {
                0 => f64::NAN,
                us => us as f64,
            },
            tasks_running: tasks_running(),
            int_count: li.count,
            int_p50_us: li.p50_us,
            int_p99_us: li.p99_us,
            int_p999_us: li.p999_us,
            int_max_us: li.max_us,
            int_max_jiffies: li.max_jiffies,
            int_over_1ms_pct: li.over_1ms_pct,
            int_over_4ms_pct: li.over_4ms_pct,
            int_over_16ms_pct: li.over_16ms_pct,
            oth_count: lo.count,
            oth_p50_us: lo.p50_us,
            oth_p99_us: lo.p99_us,
            oth_p999_us: lo.p999_us,
            oth_max_us: lo.max_us,
            oth_max_jiffies: lo.max_jiffies,
            oth_over_1ms_pct: lo.over_1ms_pct,
            oth_over_4ms_pct: lo.over_4ms_pct,
            oth_over_16ms_pct: lo.over_16ms_pct,
            boost_floor_pct: pct(floor, boosts),
            boost_between_pct: pct(boosts - floor - ceiling, boosts),
            boost_ceiling_pct: pct(ceiling, boosts),
        };
        let kernel_events = cur
            .kernel_events
            .iter()
            .map(|(k, v)| {
                (
                    k.clone(),
                    v.wrapping_sub(*prev.kernel_events.get(k).unwrap_or(&0)),
                )
            })
            .collect();
        let bpf_cost = cur
            .bpf_progs
            .iter()
            .filter_map(|(k, &(cnt, ns))| {
                let (pcnt, pns) = prev.bpf_progs.get(k).copied().unwrap_or((0, 0));
                let calls = cnt.wrapping_sub(pcnt);
                let ns_per_call = ns.wrapping_sub(pns) as f64 / calls.max(1) as f64;
                (calls > 0).then(|| (k.clone(), BpfCost { calls, ns_per_call }))
            })
            .collect();
        Interval {
            metrics,
            hists: Hists {
                lat_interactive: lat_i,
                lat_other: lat_o,
                probes,
                boost,
                levels,
            },
            kernel_events,
            bpf_cost,
        }
    }
}
