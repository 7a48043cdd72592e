// SPDX-License-Identifier: GPL-2.0-only
//
// Every figure soryu reports, defined once: the table at the end of this
// file gives each one its name, type, kind, unit, class, help text, how it
// combines across intervals, its place in the text report and in the
// Prometheus file, whether compare tests it by default, and how it is
// computed from an interval's counters and histograms (Inputs). The
// `figures!` macro turns the table into:
//
//   - `Fig`, one variant per figure, so that a misspelt figure does not
//     compile (`Fig::int_p99_us`), with its name and spec;
//   - `Metrics`, the figures of one interval: the flat part of a JSON
//     interval record, what scx_stats serves, what the text report and
//     Prometheus read (by `Fig`, never by a string);
//   - `Metrics::compute`, every figure from one interval's Inputs.
//
// Adding a figure is one entry in the table. A figure the interval cannot
// define (a percentile of a class without wakeups) is NaN in memory and
// null in JSON: unknown, never 0.

use std::collections::BTreeMap;

use serde::de::Error as _;
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::bpf_intf::*;
use crate::hist;
use crate::spec::Prom::{Counter, CounterBy, Gauge, GaugeBy};
use crate::spec::{count, duration, percentile, ratio, state};
use crate::spec::{Class, Combine, FigSpec, Line, Unit};

/// Longest waits of an interval, ns: wake to run per latency class, then
/// queued to run of any task (intf.h: SORYU_WAIT_*).
pub const NR_WAITS: usize = soryu_consts_SORYU_NR_WAITS as usize;
pub const WAIT_QUEUED: usize = soryu_consts_SORYU_WAIT_QUEUED as usize;
pub type Waits = [u64; NR_WAITS];

/// Wake-to-run figures of one latency class, from its histogram and its
/// longest wait. Without a wakeup every figure but the count is NaN.
#[derive(Clone, Debug, Default)]
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
            let n = f64::NAN;
            return LatFigures {
                count,
                p50_us: n,
                p99_us: n,
                p999_us: n,
                max_us: n,
                max_jiffies: n,
                over_1ms_pct: n,
                over_4ms_pct: n,
                over_16ms_pct: n,
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

/// What one interval's figures are computed from: the counters and
/// histograms differenced over the interval (summed over CPUs), the
/// longest waits in it, and the constants of the run.
pub struct Inputs<'a> {
    pub duration_s: f64,
    /// The BPF side's counters (intf.h: enum soryu_counter).
    pub cnt: &'a [u64],
    pub probes: &'a [u64],
    /// Index = boost + SORYU_MAX_BOOST.
    pub boost: &'a [u64],
    pub max_wait_ns: Waits,
    /// Per class (Class::index): the wake-to-run figures.
    pub lat: [LatFigures; 2],
    /// The starvation bound for one starving task per CPU (us); 0 unknown.
    pub starve_bound_us: u64,
    pub tasks_running: u64,
}

impl Inputs<'_> {
    pub fn cnt(&self, c: soryu_counter) -> u64 {
        self.cnt.get(c as usize).copied().unwrap_or(0)
    }

    pub fn lat(&self, c: Class) -> &LatFigures {
        &self.lat[c.index()]
    }

    fn boosts(&self) -> u64 {
        self.boost.iter().sum()
    }

    fn boost_floor(&self) -> u64 {
        self.boost.first().copied().unwrap_or(0)
    }

    fn boost_ceiling(&self) -> u64 {
        self.boost.last().copied().unwrap_or(0)
    }
}

/// A share in percent; NaN (unknown) of nothing.
pub fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        f64::NAN
    } else {
        100.0 * part as f64 / whole as f64
    }
}

/// A wait in us; NaN (unknown) for 0 ns: nothing waited.
fn us_or_unknown(ns: u64) -> f64 {
    match ns {
        0 => f64::NAN,
        ns => ns as f64 / 1000.0,
    }
}

/// The two types a figure may have.
pub trait FigValue: Copy {
    /// Before a record says otherwise (an older record lacks the figure).
    const UNKNOWN: Self;
    const STATS_KIND: scx_stats::StatsKind;
    fn to_f64(self) -> f64;
    fn to_json(self) -> Value;
    /// None when `v` is not of this type; null is the unknown value.
    fn from_json(v: &Value) -> Option<Self>;
}

impl FigValue for u64 {
    const UNKNOWN: Self = 0;
    const STATS_KIND: scx_stats::StatsKind = scx_stats::StatsKind::U64;
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn to_json(self) -> Value {
        self.into()
    }
    fn from_json(v: &Value) -> Option<Self> {
        v.as_u64()
    }
}

impl FigValue for f64 {
    const UNKNOWN: Self = f64::NAN;
    const STATS_KIND: scx_stats::StatsKind = scx_stats::StatsKind::Float;
    fn to_f64(self) -> f64 {
        self
    }
    fn to_json(self) -> Value {
        serde_json::Number::from_f64(self).map_or(Value::Null, Value::Number)
    }
    fn from_json(v: &Value) -> Option<Self> {
        match v {
            Value::Null => Some(f64::NAN),
            v => v.as_f64(),
        }
    }
}

macro_rules! figures {
    ($( $name:ident : $ty:ident = $spec:expr , |$x:ident| $from:expr ; )*) => {
        /// Every figure, by name: `Fig::int_p99_us` compiles, a misspelt
        /// one does not.
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Fig {
            $($name,)*
        }

        /// The spec of each figure, in the table's order.
        pub const SPECS: &[FigSpec] = &[$($spec,)*];

        impl Fig {
            /// In the table's order.
            pub const ALL: &'static [Fig] = &[$(Fig::$name,)*];

            /// As JSON records, scx_stats and --figure name it.
            pub const fn name(self) -> &'static str {
                match self {
                    $(Fig::$name => stringify!($name),)*
                }
            }

            pub fn spec(self) -> &'static FigSpec {
                &SPECS[self as usize]
            }

            fn stats_kind(self) -> scx_stats::StatsKind {
                match self {
                    $(Fig::$name => <$ty as FigValue>::STATS_KIND,)*
                }
            }
        }

        /// The figures of one interval.
        #[derive(Clone, Debug, Default, PartialEq)]
        pub struct Metrics {
            $(pub $name: $ty,)*
        }

        impl Metrics {
            /// Every figure of the interval `inputs` describe.
            pub fn compute(inputs: &Inputs) -> Self {
                Metrics {
                    $($name: {
                        let $x = inputs;
                        $from
                    },)*
                }
            }

            /// Every figure unknown (NaN) or 0: what a record that carries
            /// none of them reads as.
            pub fn unknown() -> Self {
                Metrics {
                    $($name: <$ty as FigValue>::UNKNOWN,)*
                }
            }

            /// A figure's value (a count as a float).
            pub fn get(&self, f: Fig) -> f64 {
                match f {
                    $(Fig::$name => FigValue::to_f64(self.$name),)*
                }
            }

            /// A figure's value as a JSON record holds it (null when
            /// unknown).
            pub fn json(&self, f: Fig) -> Value {
                match f {
                    $(Fig::$name => FigValue::to_json(self.$name),)*
                }
            }

            /// Set a figure from a JSON record's value; false when the
            /// value is not of the figure's type.
            fn set_json(&mut self, f: Fig, v: &Value) -> bool {
                match f {
                    $(Fig::$name => match FigValue::from_json(v) {
                        Some(x) => {
                            self.$name = x;
                            true
                        }
                        None => false,
                    },)*
                }
            }
        }
    };
}

/// The newest minor format version any figure needs (spec: since).
pub const NEWEST_SINCE: u32 = {
    let (mut i, mut m) = (0, 0);
    while i < SPECS.len() {
        if SPECS[i].since > m {
            m = SPECS[i].since;
        }
        i += 1;
    }
    m
};

impl Fig {
    pub fn from_name(name: &str) -> Option<Fig> {
        Fig::ALL.iter().copied().find(|f| f.name() == name)
    }

    /// The figures compare tests when --figure names none.
    pub fn compared() -> impl Iterator<Item = Fig> {
        Fig::ALL.iter().copied().filter(|f| f.spec().compared)
    }
}

/// One JSON object, a field per figure (null when unknown), in the
/// table's order.
impl Serialize for Metrics {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(Fig::ALL.len()))?;
        for &f in Fig::ALL {
            m.serialize_entry(f.name(), &self.json(f))?;
        }
        m.end()
    }
}

/// From one JSON object: a figure it lacks is unknown (NaN, or 0 for a
/// count), other fields are left alone.
impl<'de> Deserialize<'de> for Metrics {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let map = BTreeMap::<String, Value>::deserialize(d)?;
        let mut m = Metrics::unknown();
        for &f in Fig::ALL {
            if let Some(v) = map.get(f.name()) {
                if !m.set_json(f, v) {
                    return Err(D::Error::custom(format!(
                        "figure \"{}\" is {v}, not a {}",
                        f.name(),
                        if matches!(f.stats_kind(), scx_stats::StatsKind::U64) {
                            "non-negative integer"
                        } else {
                            "number or null"
                        }
                    )));
                }
            }
        }
        Ok(m)
    }
}

/// For scx_stats: each figure with its type and description.
impl scx_stats::Meta for Metrics {
    fn meta() -> scx_stats::StatsMeta {
        let fields = Fig::ALL
            .iter()
            .map(|&f| {
                let field = scx_stats::StatsField {
                    data: scx_stats::StatsData::Datum(f.stats_kind()),
                    attrs: scx_stats::StatsFieldAttrs {
                        desc: Some(f.spec().describe()),
                        user: BTreeMap::new(),
                    },
                };
                (f.name().to_string(), field)
            })
            .collect();
        scx_stats::StatsMeta {
            name: "Metrics".into(),
            attrs: scx_stats::StatsStructAttrs {
                top: Some("true".into()),
                ..Default::default()
            },
            fields,
        }
    }
}

use Class::{Interactive as INT, Other as OTH};
use Combine::{Last, Max, Sum};
use Line::{Head, Health, Interactive, Other, Preempt, Starvation};
use Unit::{Jiffies, Micros, Percent, Probes, Seconds};

// The table. Per entry: name: type = spec, |x| how it is computed from x
// (Inputs). The order is the order of the JSON fields, of the text
// report's lines and of the Prometheus families.
figures! {
    duration_s: f64 = duration(Seconds, Sum, "Length of the interval")
        .text(Head, 0, "").width(5),
        |x| x.duration_s;

    dispatch: u64 = count("Dispatch calls that moved a task to their CPU")
        .text(Head, 1, "dispatch").width(8)
        .prom(CounterBy("dispatch_calls", "result", "moved")),
        |x| x.cnt(soryu_counter_SORYU_CNT_DISPATCH);
    dispatch_empty: u64 = count("Dispatch calls that found nothing")
        .text(Head, 1, "empty").width(7)
        .prom(CounterBy("dispatch_calls", "result", "empty")),
        |x| x.cnt(soryu_counter_SORYU_CNT_DISPATCH_EMPTY);
    dispatch_keep: u64 = count("Dispatch calls that kept the previous task running")
        .text(Head, 1, "keep").width(7)
        .prom(CounterBy("dispatch_calls", "result", "kept")),
        |x| x.cnt(soryu_counter_SORYU_CNT_KEEP);
    smt_moves: u64 = count("Dispatch calls that let a task sharing its SMT core go, for a whole idle core")
        .text(Head, 1, "smt-move")
        .prom(Counter("smt_moves")),
        |x| x.cnt(soryu_counter_SORYU_CNT_SMT_MOVE);
    cache_hot: u64 = count("Dispatch calls that took, from behind its level's head, a task last run on their CPU")
        .text(Head, 1, "cache-hot")
        .prom(Counter("cache_hot_dispatches")),
        |x| x.cnt(soryu_counter_SORYU_CNT_CACHE_HOT);

    probes: u64 = count("Level DSQs probed by dispatch calls")
        .text(Head, 2, "probes")
        .prom(Counter("dispatch_probes")),
        |x| x.cnt(soryu_counter_SORYU_CNT_PROBES);
    probes_mean: f64 = ratio(Probes, "Probes per dispatch call, mean")
        .unknown("without dispatch calls")
        .text(Head, 2, "per call mean").width(5)
        .compared(),
        |x| hist::index_mean(x.probes).unwrap_or(f64::NAN);
    probes_p50: f64 = percentile(Probes, "Probes per dispatch call, median")
        .unknown("without dispatch calls")
        .text(Head, 2, "p50").width(2).decimals(0),
        |x| bucket(hist::quantile_bucket(x.probes, 0.5));
    probes_p99: f64 = percentile(Probes, "Probes per dispatch call, 99th percentile")
        .unknown("without dispatch calls")
        .text(Head, 2, "p99").width(2).decimals(0),
        |x| bucket(hist::quantile_bucket(x.probes, 0.99));
    probes_max: f64 = percentile(Probes, "Probes per dispatch call, maximum")
        .combine(Max)
        .unknown("without dispatch calls")
        .text(Head, 2, "max").width(2).decimals(0),
        |x| bucket(hist::max_bucket(x.probes));
    remote_reads: u64 = count("Cache lines of other LLCs' level queues, or of the machine-wide level index, that dispatch read")
        .text(Head, 2, "remote reads")
        .prom(Counter("dispatch_remote_reads"))
        .since(3),
        |x| x.cnt(soryu_counter_SORYU_CNT_REMOTE_READS);

    starve_serve: u64 = count("Tasks served by the anti-starvation pass: a level left waiting longer than --starve-ms")
        .text(Head, 3, "starve_serve")
        .prom(Counter("starve_serves"))
        .compared(),
        |x| x.cnt(soryu_counter_SORYU_CNT_STARVE_SERVE);

    int_count: u64 = count("Interactive wakeups: boost below 0 when the task woke")
        .class(INT)
        .text(Interactive, 0, "wake->run interactive n").width(7),
        |x| x.lat(INT).count;
    int_p50_us: f64 = percentile(Micros, "Interactive wake-to-run time, median (bucket lower bound)")
        .class(INT).unknown("without wakeups")
        .text(Interactive, 1, "p50").width(9),
        |x| x.lat(INT).p50_us;
    int_p99_us: f64 = percentile(Micros, "Interactive wake-to-run time, 99th percentile (bucket lower bound)")
        .class(INT).unknown("without wakeups")
        .text(Interactive, 1, "p99").width(9)
        .compared(),
        |x| x.lat(INT).p99_us;
    int_p999_us: f64 = percentile(Micros, "Interactive wake-to-run time, 99.9th percentile (bucket lower bound)")
        .class(INT).unknown("without wakeups")
        .text(Interactive, 1, "p99.9").width(9)
        .compared(),
        |x| x.lat(INT).p999_us;
    int_max_us: f64 = duration(Micros, Max, "Interactive wake-to-run time, longest")
        .class(INT).unknown("without wakeups")
        .text(Interactive, 1, "max").width(9)
        .prom(GaugeBy("wake_to_run_max_seconds", "class", "interactive"))
        .compared(),
        |x| x.lat(INT).max_us;
    int_max_jiffies: f64 = duration(Jiffies, Max, "Interactive wake-to-run time, longest, in scheduler ticks")
        .class(INT).unknown("without wakeups")
        .text(Interactive, 1, ""),
        |x| x.lat(INT).max_jiffies;
    int_over_1ms_pct: f64 = ratio(Percent, "Interactive wakeups that waited 2^20 ns or more")
        .class(INT).unknown("without wakeups")
        .text(Interactive, 2, ">1ms").decimals(3)
        .compared(),
        |x| x.lat(INT).over_1ms_pct;
    int_over_4ms_pct: f64 = ratio(Percent, "Interactive wakeups that waited 2^22 ns or more")
        .class(INT).unknown("without wakeups")
        .text(Interactive, 2, ">4.2ms").decimals(3)
        .compared(),
        |x| x.lat(INT).over_4ms_pct;
    int_over_16ms_pct: f64 = ratio(Percent, "Interactive wakeups that waited 2^24 ns or more")
        .class(INT).unknown("without wakeups")
        .text(Interactive, 2, ">16.8ms").decimals(3)
        .compared(),
        |x| x.lat(INT).over_16ms_pct;

    oth_count: u64 = count("Other wakeups: boost 0 or above when the task woke")
        .class(OTH)
        .text(Other, 0, "wake->run other       n").width(7),
        |x| x.lat(OTH).count;
    oth_p50_us: f64 = percentile(Micros, "Other wake-to-run time, median (bucket lower bound)")
        .class(OTH).unknown("without wakeups")
        .text(Other, 1, "p50").width(9),
        |x| x.lat(OTH).p50_us;
    oth_p99_us: f64 = percentile(Micros, "Other wake-to-run time, 99th percentile (bucket lower bound)")
        .class(OTH).unknown("without wakeups")
        .text(Other, 1, "p99").width(9)
        .compared(),
        |x| x.lat(OTH).p99_us;
    oth_p999_us: f64 = percentile(Micros, "Other wake-to-run time, 99.9th percentile (bucket lower bound)")
        .class(OTH).unknown("without wakeups")
        .text(Other, 1, "p99.9").width(9),
        |x| x.lat(OTH).p999_us;
    oth_max_us: f64 = duration(Micros, Max, "Other wake-to-run time, longest")
        .class(OTH).unknown("without wakeups")
        .text(Other, 1, "max").width(9)
        .prom(GaugeBy("wake_to_run_max_seconds", "class", "other"))
        .compared(),
        |x| x.lat(OTH).max_us;
    oth_max_jiffies: f64 = duration(Jiffies, Max, "Other wake-to-run time, longest, in scheduler ticks")
        .class(OTH).unknown("without wakeups")
        .text(Other, 1, ""),
        |x| x.lat(OTH).max_jiffies;
    oth_over_1ms_pct: f64 = ratio(Percent, "Other wakeups that waited 2^20 ns or more")
        .class(OTH).unknown("without wakeups")
        .text(Other, 2, ">1ms").decimals(3)
        .compared(),
        |x| x.lat(OTH).over_1ms_pct;
    oth_over_4ms_pct: f64 = ratio(Percent, "Other wakeups that waited 2^22 ns or more")
        .class(OTH).unknown("without wakeups")
        .text(Other, 2, ">4.2ms").decimals(3),
        |x| x.lat(OTH).over_4ms_pct;
    oth_over_16ms_pct: f64 = ratio(Percent, "Other wakeups that waited 2^24 ns or more")
        .class(OTH).unknown("without wakeups")
        .text(Other, 2, ">16.8ms").decimals(3),
        |x| x.lat(OTH).over_16ms_pct;

    preempt_attempts: u64 = count("Preemption attempts (try_preempt calls)")
        .text(Preempt, 0, "preempt attempts"),
        |x| x.cnt(soryu_counter_SORYU_CNT_PREEMPT_ATTEMPT);
    preempt_idle: u64 = count("Preemption attempts that woke an idle CPU")
        .text(Preempt, 0, "idle")
        .prom(CounterBy("preempt_attempts", "result", "idle")),
        |x| x.cnt(soryu_counter_SORYU_CNT_PREEMPT_IDLE);
    preempt_kicks: u64 = count("Preemption attempts that kicked a CPU running a worse level")
        .text(Preempt, 0, "kick")
        .prom(CounterBy("preempt_attempts", "result", "kick")),
        |x| x.cnt(soryu_counter_SORYU_CNT_PREEMPT_KICK);
    preempt_local: u64 = count("Wakeups that preempted straight onto their victim CPU's local DSQ, the task displaced resuming behind them (also counted as kicks)")
        .text(Preempt, 0, "local")
        .prom(Counter("preempt_local_wakeups")),
        |x| x.cnt(soryu_counter_SORYU_CNT_PREEMPT_LOCAL);
    preempt_deferred: u64 = count("Preemption attempts whose kick a timer sends once the victim has run --wakeup-gran-us")
        .text(Preempt, 0, "deferred")
        .prom(CounterBy("preempt_attempts", "result", "deferred")),
        |x| x.cnt(soryu_counter_SORYU_CNT_PREEMPT_DEFER);
    preempt_none: u64 = count("Preemption attempts that found no CPU to take the task")
        .text(Preempt, 0, "none")
        .prom(CounterBy("preempt_attempts", "result", "none")),
        |x| x.cnt(soryu_counter_SORYU_CNT_PREEMPT_NONE);
    preempt_none_pct: f64 = ratio(Percent, "Preemption attempts that found no CPU to take the task, as a share of attempts")
        .unknown("without attempts")
        .text(Preempt, 0, "")
        .compared(),
        |x| pct(x.cnt(soryu_counter_SORYU_CNT_PREEMPT_NONE), x.cnt(soryu_counter_SORYU_CNT_PREEMPT_ATTEMPT));
    preempt_scans: u64 = count("Preemption attempts that searched for a victim: no idle CPU, and the task's last CPU ran no worse level")
        .text(Preempt, 0, "scans")
        .prom(Counter("preempt_scans")),
        |x| x.cnt(soryu_counter_SORYU_CNT_PREEMPT_SCAN);
    preempt_fallbacks: u64 = count("Victim searches of tasks that may not use every CPU: they look only at the LLCs holding a CPU the task may use")
        .text(Preempt, 0, "fallback")
        .prom(Counter("preempt_fallbacks")),
        |x| x.cnt(soryu_counter_SORYU_CNT_PREEMPT_FALLBACK);
    victim_reads: u64 = count("CPUs whose level victim searches read: the CPUs of one LLC per search, of two when the first offers no victim")
        .text(Preempt, 0, "cpus read")
        .prom(Counter("victim_reads"))
        .since(2),
        |x| x.cnt(soryu_counter_SORYU_CNT_VICTIM_READS);

    boost_floor_pct: f64 = ratio(Percent, "Tasks queued at the boost floor, -12 (best), as a share of tasks queued")
        .unknown("without enqueues or histograms")
        .text(Preempt, 1, "boost floor"),
        |x| pct(x.boost_floor(), x.boosts());
    boost_between_pct: f64 = ratio(Percent, "Tasks queued between the boost floor and ceiling, as a share of tasks queued")
        .unknown("without enqueues or histograms")
        .text(Preempt, 1, "between"),
        |x| pct(x.boosts().saturating_sub(x.boost_floor() + x.boost_ceiling()), x.boosts());
    boost_ceiling_pct: f64 = ratio(Percent, "Tasks queued at the boost ceiling, +12 (worst), as a share of tasks queued")
        .unknown("without enqueues or histograms")
        .text(Preempt, 1, "ceiling"),
        |x| pct(x.boost_ceiling(), x.boosts());

    insert_fail: u64 = count("DSQ inserts the kernel refused; must stay 0")
        .text(Health, 0, "health insert_fail")
        .prom(Counter("insert_failures")),
        |x| x.cnt(soryu_counter_SORYU_CNT_INSERT_FAIL);
    bitmap_clear: u64 = count("Level bits cleared when found empty (--clear-bitmap only)")
        .text(Health, 1, "bitmap clear")
        .prom(Counter("bitmap_clears")),
        |x| x.cnt(soryu_counter_SORYU_CNT_BITMAP_CLEAR);
    bitmap_repair: u64 = count("Level bits the repair sweep had to set again (--clear-bitmap only)")
        .text(Health, 1, "repair")
        .prom(Counter("bitmap_repairs")),
        |x| x.cnt(soryu_counter_SORYU_CNT_BITMAP_REPAIR);
    stale_kicks: u64 = count("Preemption kicks whose victim CPU ran another level when the kick landed than when it was chosen")
        .text(Health, 2, "stale kicks")
        .prom(Counter("stale_kicks")),
        |x| x.cnt(soryu_counter_SORYU_CNT_STALE_KICK);
    stale_kick_pct: f64 = ratio(Percent, "Preemption kicks whose victim CPU ran another level when the kick landed, as a share of kicks")
        .unknown("without kicks")
        .text(Health, 2, "").decimals(2).since(1),
        |x| pct(x.cnt(soryu_counter_SORYU_CNT_STALE_KICK), x.cnt(soryu_counter_SORYU_CNT_PREEMPT_KICK));
    wakeups: u64 = count("Wakeups whose wake-to-run time was recorded")
        .text(Health, 3, "wakeups")
        .prom(Counter("wakeups")),
        |x| x.cnt(soryu_counter_SORYU_CNT_WAKEUPS);
    enqueue: u64 = count("Tasks placed under their level: on a level DSQ, a CPU's own queue or a claimed idle CPU")
        .text(Health, 3, "enqueue")
        .prom(Counter("enqueues")),
        |x| x.cnt(soryu_counter_SORYU_CNT_ENQUEUE);
    pinned: u64 = count("Tasks that may use one CPU only, queued on that CPU's own queue (also in enqueue)")
        .text(Health, 3, "pinned")
        .prom(Counter("pinned_enqueues")),
        |x| x.cnt(soryu_counter_SORYU_CNT_PINNED);
    direct: u64 = count("Tasks inserted straight onto a CPU: wakeups onto an idle one, starvation grants resumed, tasks resumed behind a wakee that preempted them")
        .text(Health, 3, "direct")
        .prom(Counter("direct_dispatches")),
        |x| x.cnt(soryu_counter_SORYU_CNT_DIRECT);
    sync_local: u64 = count("Sync wakeups (a pipe or socket write) run next on the waker's CPU")
        .text(Health, 3, "sync-local")
        .prom(Counter("sync_local_wakeups")),
        |x| x.cnt(soryu_counter_SORYU_CNT_SYNC_LOCAL);
    tasks_running: u64 = state("Tasks on a run queue at the end of the interval (procs_running of /proc/stat)")
        .text(Health, 4, "running")
        .prom(Gauge("tasks_running")),
        |x| x.tasks_running;

    queued_max_us: f64 = duration(Micros, Max, "Longest time any task waited queued before it ran, exact")
        .unknown("if no task ran from a queue")
        .text(Starvation, 0, "starvation: longest queued wait")
        .prom(Gauge("queued_wait_max_seconds")),
        |x| us_or_unknown(x.max_wait_ns[WAIT_QUEUED]);
    starve_bound_us: f64 = duration(Micros, Last, "The starvation bound for one starving task per CPU (docs/design-starvation.md): the longest queued wait stays below it unless more tasks starve at once or a higher class holds the CPUs")
        .unknown("if unknown")
        .text(Starvation, 1, "bound")
        .prom(Gauge("starve_bound_seconds")),
        |x| match x.starve_bound_us {
            0 => f64::NAN,
            us => us as f64,
        };
}

/// A bucket index as a figure; NaN (unknown) for an empty histogram.
fn bucket(b: Option<usize>) -> f64 {
    b.map_or(f64::NAN, |b| b as f64)
}

/// Checks on the table that the type system does not make.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{Kind, Prom};

    #[test]
    fn names_are_unique_and_round_trip() {
        let mut seen = std::collections::BTreeSet::new();
        for &f in Fig::ALL {
            assert!(seen.insert(f.name()), "{} twice", f.name());
            assert_eq!(Fig::from_name(f.name()), Some(f));
        }
        assert_eq!(Fig::from_name("nonsense"), None);
    }

    #[test]
    fn the_spec_fits_the_type() {
        let m = Metrics::unknown();
        for &f in Fig::ALL {
            let s = f.spec();
            let is_int = matches!(f.stats_kind(), scx_stats::StatsKind::U64);
            // counts and states are integers, never unknown; the rest are
            // floats, and a float that can be unknown says when
            assert_eq!(
                is_int,
                matches!(s.kind, Kind::Count | Kind::State),
                "{}",
                f.name()
            );
            assert_eq!(is_int, m.get(f) == 0.0, "{}", f.name());
            assert!(!s.help.ends_with('.') && !s.help.is_empty(), "{}", f.name());
            // a counter family must add up across intervals; a gauge must not
            match s.prom {
                Prom::Counter(_) | Prom::CounterBy(..) => {
                    assert_eq!(s.combine, Combine::Sum, "{}", f.name())
                }
                Prom::Gauge(n) | Prom::GaugeBy(n, ..) => {
                    assert_ne!(s.combine, Combine::Sum, "{}", f.name());
                    assert_eq!(
                        s.unit == Unit::Micros,
                        n.ends_with("_seconds"),
                        "{}: a gauge of us is written in seconds",
                        f.name()
                    );
                }
                Prom::None => {}
            }
        }
    }

    #[test]
    fn json_round_trip_keeps_unknown_apart_from_zero() {
        let mut m = Metrics::unknown();
        m.int_count = 0;
        m.oth_count = 3;
        m.oth_p99_us = 12.0;
        let text = serde_json::to_string(&m).unwrap();
        assert!(text.contains(r#""int_p99_us":null"#), "{text}");
        assert!(text.contains(r#""oth_p99_us":12.0"#), "{text}");
        assert!(text.contains(r#""oth_count":3"#), "{text}");
        let back: Metrics = serde_json::from_str(&text).unwrap();
        assert!(back.int_p99_us.is_nan());
        assert_eq!((back.oth_count, back.oth_p99_us), (3, 12.0));
        // a figure of the wrong type is refused, naming it
        let e = serde_json::from_str::<Metrics>(r#"{"wakeups":-1}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("\"wakeups\""), "{e}");
        // an older record without a figure: unknown
        let back: Metrics = serde_json::from_str(r#"{"wakeups":5}"#).unwrap();
        assert!(back.queued_max_us.is_nan() && back.wakeups == 5);
    }

    #[test]
    fn stats_meta_describes_every_figure() {
        let meta = <Metrics as scx_stats::Meta>::meta();
        assert_eq!(meta.fields.len(), Fig::ALL.len());
        let d = meta.fields["int_p99_us"].attrs.desc.clone().unwrap();
        assert!(
            d.contains("(us)") && d.ends_with("null without wakeups"),
            "{d}"
        );
        let d = meta.fields["stale_kicks"].attrs.desc.clone().unwrap();
        assert_eq!(d, Fig::stale_kicks.spec().help);
    }

    #[test]
    fn figures_of_an_interval() {
        let mut cnt = vec![0u64; soryu_counter_SORYU_NR_COUNTERS as usize];
        cnt[soryu_counter_SORYU_CNT_PREEMPT_ATTEMPT as usize] = 8;
        cnt[soryu_counter_SORYU_CNT_PREEMPT_NONE as usize] = 2;
        let boost = [6, 0, 1, 3];
        let x = Inputs {
            duration_s: 2.0,
            cnt: &cnt,
            probes: &[0, 0, 10, 0, 10],
            boost: &boost,
            max_wait_ns: [0; NR_WAITS],
            lat: [
                LatFigures::from_hist(&[0; 4], 0, 250),
                LatFigures::from_hist(&[0; 4], 0, 250),
            ],
            starve_bound_us: 0,
            tasks_running: 3,
        };
        let m = Metrics::compute(&x);
        assert_eq!(m.preempt_none_pct, 25.0);
        assert_eq!((m.probes_mean, m.probes_p50, m.probes_max), (3.0, 2.0, 4.0));
        assert_eq!(
            (m.boost_floor_pct, m.boost_between_pct, m.boost_ceiling_pct),
            (60.0, 10.0, 30.0)
        );
        assert!(m.queued_max_us.is_nan() && m.starve_bound_us.is_nan());
        assert!(m.int_p99_us.is_nan() && m.int_count == 0);
        assert_eq!((m.duration_s, m.tasks_running), (2.0, 3));
    }
}
