// SPDX-License-Identifier: GPL-2.0-only
//
// The --prometheus file's text: what the figures are and how they are
// rendered (render()), from the totals of the intervals so far (Totals).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::{SystemTime, UNIX_EPOCH};

use scx_soryu::about::{kernel_release, version};
use scx_soryu::bpf_intf::*;
use scx_soryu::figures::{Fig, Metrics};
use scx_soryu::policy;
use scx_soryu::record::Interval;
use scx_soryu::spec::{Combine, Prom, Unit};

use crate::config::ReportConfig;

/// What stays the same for a whole run: the labels of scx_soryu_info.
#[derive(Debug, Clone, Default)]
pub struct RunInfo {
    pub run_id: String,
    pub version: String,
    pub kernel: String,
    /// (name, value) of each knob, as in the JSON header.
    pub knobs: Vec<(String, String)>,
    /// false under --no-hist: no histogram families are written.
    pub hist: bool,
    /// When the daemon started, seconds since the Unix epoch.
    pub start_time_s: f64,
}

impl RunInfo {
    pub fn new(cfg: &ReportConfig) -> Self {
        RunInfo {
            run_id: cfg.run_id.clone(),
            version: version(),
            kernel: kernel_release(),
            knobs: cfg
                .knobs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            hist: cfg.hist,
            start_time_s: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0.0, |d| d.as_secs_f64()),
        }
    }
}

/// Everything counted since the daemon started: the sum of the intervals
/// reported so far.
#[derive(Debug, Clone, Default)]
pub struct Totals {
    pub intervals: u64,
    /// The figures that add up across intervals (Combine::Sum), summed.
    pub sums: BTreeMap<Fig, f64>,
    /// Wake-to-run bucket counts, [interactive, other].
    pub lat: [Vec<u64>; 2],
    pub probes: Vec<u64>,
    pub boost: Vec<u64>,
    pub levels: Vec<u64>,
    pub kernel_events: BTreeMap<String, u64>,
    /// Per BPF callback: calls and ns spent.
    pub bpf: BTreeMap<String, (u64, f64)>,
}

fn add_into(acc: &mut Vec<u64>, v: &[u64]) {
    if acc.len() < v.len() {
        acc.resize(v.len(), 0);
    }
    for (a, x) in acc.iter_mut().zip(v) {
        *a = a.wrapping_add(*x);
    }
}

impl Totals {
    pub fn add(&mut self, iv: &Interval) {
        self.intervals += 1;
        for &f in Fig::ALL {
            if f.spec().combine == Combine::Sum {
                *self.sums.entry(f).or_insert(0.0) += iv.metrics.get(f);
            }
        }
        add_into(&mut self.lat[0], &iv.hists.lat_interactive);
        add_into(&mut self.lat[1], &iv.hists.lat_other);
        add_into(&mut self.probes, &iv.hists.probes);
        add_into(&mut self.boost, &iv.hists.boost);
        add_into(&mut self.levels, &iv.hists.levels);
        for (k, v) in &iv.kernel_events {
            let t = self.kernel_events.entry(k.clone()).or_insert(0);
            *t = t.wrapping_add(*v);
        }
        for (k, c) in &iv.bpf_cost {
            let t = self.bpf.entry(k.clone()).or_insert((0, 0.0));
            t.0 += c.calls;
            t.1 += c.calls as f64 * c.ns_per_call;
        }
    }
}

/// A label value or HELP text, escaped as the text format wants.
fn escape(s: &str, quote: bool) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            '"' if quote => o.push_str("\\\""),
            c => o.push(c),
        }
    }
    o
}

/// A float as Prometheus' Go code prints it (strconv 'g', shortest): the
/// `le` that node_exporter serves when it passes the file on, so the file
/// and the scrape say the same. (Prometheus 3 writes a whole number with
/// ".0" when it ingests either; no `le` of the latency histogram is whole.)
pub fn le_value(v: f64) -> String {
    if v.is_infinite() {
        return if v > 0.0 { "+Inf" } else { "-Inf" }.into();
    }
    if v == 0.0 {
        return "0".into();
    }
    let sci = format!("{v:e}");
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..6).contains(&exp) {
        format!(
            "{mant}e{}{:02}",
            if exp < 0 { '-' } else { '+' },
            exp.unsigned_abs()
        )
    } else {
        format!("{v}")
    }
}

/// A sample value: whole numbers as integers, others in full.
fn value(v: f64) -> String {
    if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else {
        format!("{v}")
    }
}

/// Seconds of `ns` nanoseconds, exactly as far as an f64 goes.
fn secs(ns: u128) -> f64 {
    (ns / 1_000_000_000) as f64 + (ns % 1_000_000_000) as f64 / 1e9
}

/// Builds the text of one file: families in a fixed order.
struct Text {
    s: String,
}

impl Text {
    fn family(&mut self, name: &str, kind: &str, help: &str) {
        let _ = writeln!(self.s, "# HELP {name} {}", escape(help, false));
        let _ = writeln!(self.s, "# TYPE {name} {kind}");
    }

    fn sample(&mut self, name: &str, labels: &[(&str, &str)], v: &str) {
        let _ = write!(self.s, "{name}");
        for (i, (k, val)) in labels.iter().enumerate() {
            let sep = if i == 0 { '{' } else { ',' };
            let _ = write!(self.s, "{sep}{k}=\"{}\"", escape(val, true));
        }
        if !labels.is_empty() {
            self.s.push('}');
        }
        let _ = writeln!(self.s, " {v}");
    }

    /// A counter family with one sample.
    fn counter(&mut self, name: &str, help: &str, v: u64) {
        self.family(name, "counter", help);
        self.sample(name, &[], &v.to_string());
    }

    /// The samples of one histogram: `counts[i]` observations in bucket i,
    /// `le[i]` the largest value bucket i holds (the last bucket may have
    /// none: it goes to +Inf only).
    fn histogram(
        &mut self,
        name: &str,
        labels: &[(&str, &str)],
        le: &[String],
        counts: &[u64],
        sum: f64,
    ) {
        let mut cum = 0u64;
        let bucket = format!("{name}_bucket");
        for (i, c) in counts.iter().enumerate() {
            cum = cum.wrapping_add(*c);
            if let Some(le) = le.get(i) {
                let mut l = labels.to_vec();
                l.push(("le", le));
                self.sample(&bucket, &l, &cum.to_string());
            }
        }
        let mut l = labels.to_vec();
        l.push(("le", "+Inf"));
        self.sample(&bucket, &l, &cum.to_string());
        self.sample(&format!("{name}_sum"), labels, &value(sum));
        self.sample(&format!("{name}_count"), labels, &cum.to_string());
    }
}

/// The `le` of each wake-to-run bucket but the last: its last nanosecond
/// (waits are whole ns, and bucket i holds lower(i) <= ns < lower(i + 1)),
/// in seconds. The last bucket (2^32 ns and up) is +Inf's alone.
pub fn lat_le() -> Vec<String> {
    let n = soryu_consts_SORYU_NR_LAT_BUCKETS as usize;
    (1..n)
        .map(|i| le_value(secs(policy::lat_bucket_lower(i) as u128 - 1)))
        .collect()
}

/// A lower bound of the sum of the waits in `counts`: each at its bucket's
/// lower bound (never more than 20% low for waits of 2^10 ns and more: a
/// bucket is at most a quarter of its lower bound wide).
pub fn lat_sum_lower_bound(counts: &[u64]) -> f64 {
    let ns: u128 = counts
        .iter()
        .enumerate()
        .map(|(i, &c)| c as u128 * policy::lat_bucket_lower(i) as u128)
        .sum();
    secs(ns)
}

pub const CLASSES: [&str; 2] = ["interactive", "other"];

/// A figure's series: its family's exposed name and TYPE, its label.
struct Series {
    family: String,
    kind: &'static str,
    label: Option<(&'static str, &'static str)>,
}

/// The series a figure is, as the table places it; None when not
/// exported.
fn series_of(f: Fig) -> Option<Series> {
    let s = |n: &str, kind: &'static str, label| Series {
        family: format!(
            "scx_soryu_{n}{}",
            if kind == "counter" { "_total" } else { "" }
        ),
        kind,
        label,
    };
    match f.spec().prom {
        Prom::None => None,
        Prom::Counter(n) => Some(s(n, "counter", None)),
        Prom::CounterBy(n, k, v) => Some(s(n, "counter", Some((k, v)))),
        Prom::Gauge(n) => Some(s(n, "gauge", None)),
        Prom::GaugeBy(n, k, v) => Some(s(n, "gauge", Some((k, v)))),
    }
}

/// A figure's sample value: a counter's total so far, a gauge's value in
/// the last interval (seconds for a figure in us); None when unknown.
fn sample_value(f: Fig, t: &Totals, last: &Metrics) -> Option<f64> {
    let spec = f.spec();
    let v = match spec.prom {
        Prom::Counter(_) | Prom::CounterBy(..) => t.sums.get(&f).copied().unwrap_or(0.0),
        _ => last.get(f),
    };
    let v = if spec.unit == Unit::Micros {
        v / 1e6
    } else {
        v
    };
    v.is_finite().then_some(v)
}

/// A family's HELP: its figure's help, or for a family of several series
/// each series' label value and help; a gauge says whether it is the last
/// interval's longest, its unit, and that it is absent while unknown.
fn family_help(members: &[Fig]) -> String {
    let mut help = match members {
        [f] if !matches!(f.spec().prom, Prom::CounterBy(..) | Prom::GaugeBy(..)) => {
            f.spec().help.to_string()
        }
        _ => {
            let (key, parts): (&str, Vec<String>) = {
                let mut key = "";
                let parts = members
                    .iter()
                    .filter_map(|f| match f.spec().prom {
                        Prom::CounterBy(_, k, v) | Prom::GaugeBy(_, k, v) => {
                            key = k;
                            Some(format!("{v}: {}", f.spec().help))
                        }
                        _ => None,
                    })
                    .collect();
                (key, parts)
            };
            format!("By {key}. {}", parts.join(". "))
        }
    };
    let spec = members[0].spec();
    if matches!(spec.prom, Prom::Gauge(_) | Prom::GaugeBy(..)) {
        let mut notes = Vec::new();
        if spec.combine == Combine::Max {
            notes.push("in the last interval");
        }
        if spec.unit == Unit::Micros {
            notes.push("in seconds");
        }
        if spec.unknown.is_some() {
            notes.push("absent while unknown");
        }
        if !notes.is_empty() {
            help += "; ";
            help += &notes.join(", ");
        }
    }
    help + "."
}

/// The whole file for the figures so far. `last` is the interval just
/// reported (for the gauges: tasks running, longest waits).
pub fn render(info: &RunInfo, t: &Totals, last: &Interval) -> String {
    let mut o = Text {
        s: String::with_capacity(32 << 10),
    };

    o.family(
        "scx_soryu_info",
        "gauge",
        "Always 1; its labels name this run of scx_soryu (run_id), the build, the kernel and the knobs.",
    );
    let mut labels: Vec<(&str, &str)> = vec![
        ("run_id", &info.run_id),
        ("version", &info.version),
        ("kernel", &info.kernel),
        ("hist", if info.hist { "true" } else { "false" }),
    ];
    labels.extend(info.knobs.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    o.sample("scx_soryu_info", &labels, "1");

    o.family(
        "scx_soryu_start_time_seconds",
        "gauge",
        "When this run of the daemon started, in seconds since the Unix epoch.",
    );
    o.sample(
        "scx_soryu_start_time_seconds",
        &[],
        &value(info.start_time_s),
    );
    o.counter(
        "scx_soryu_reports_total",
        "Report intervals since the daemon started (the file is written once per interval).",
        t.intervals,
    );

    // The figures' families, in the order of the table, each with its
    // members' series; a series whose figure is unknown is left out, and
    // a family left without a series is left out whole.
    let mut families: Vec<(String, &str, Vec<Fig>)> = Vec::new();
    for &f in Fig::ALL {
        let Some(s) = series_of(f) else {
            continue;
        };
        match families.iter_mut().find(|(n, _, _)| *n == s.family) {
            Some((_, _, members)) => members.push(f),
            None => families.push((s.family, s.kind, vec![f])),
        }
    }
    for (name, kind, members) in &families {
        let samples: Vec<(Option<(&str, &str)>, f64)> = members
            .iter()
            .filter_map(|&f| Some((series_of(f)?.label, sample_value(f, t, &last.metrics)?)))
            .collect();
        if samples.is_empty() {
            continue;
        }
        o.family(name, kind, &family_help(members));
        for (label, v) in samples {
            let labels: Vec<(&str, &str)> = label.into_iter().collect();
            o.sample(name, &labels, &value(v));
        }
    }

    if info.hist {
        o.family(
            "scx_soryu_wake_to_run_seconds",
            "histogram",
            "Wake-to-run time, from a wakeup to running, by class (interactive: boost below 0 when it woke). Buckets are soryu's, four per power of two of ns; le is a bucket's last ns. _sum is a lower bound: each wait counted at its bucket's lower bound, at most 20% low for waits of 1 us and more.",
        );
        let le = lat_le();
        for (class, counts) in CLASSES.iter().zip(&t.lat) {
            o.histogram(
                "scx_soryu_wake_to_run_seconds",
                &[("class", class)],
                &le,
                counts,
                lat_sum_lower_bound(counts),
            );
        }

        o.family(
            "scx_soryu_dispatch_probes_per_call",
            "histogram",
            "Level DSQs probed per dispatch call, calls that found nothing included; exact (_sum is the probes of the calls counted).",
        );
        let le: Vec<String> = (0..t.probes.len()).map(|i| le_value(i as f64)).collect();
        let sum: u64 = t
            .probes
            .iter()
            .enumerate()
            .map(|(i, &c)| i as u64 * c)
            .sum();
        o.histogram(
            "scx_soryu_dispatch_probes_per_call",
            &[],
            &le,
            &t.probes,
            sum as f64,
        );

        o.family(
            "scx_soryu_enqueues_by_level_total",
            "counter",
            "Tasks queued, by the level they were queued at (0: per-CPU kernel threads, 1 best to 32 worst).",
        );
        for (level, c) in t.levels.iter().enumerate() {
            o.sample(
                "scx_soryu_enqueues_by_level_total",
                &[("level", &level.to_string())],
                &c.to_string(),
            );
        }
        o.family(
            "scx_soryu_enqueues_by_boost_total",
            "counter",
            "Tasks queued, by their boost when queued (-12 best to +12 worst).",
        );
        let min = -(soryu_consts_SORYU_MAX_BOOST as i64);
        for (i, c) in t.boost.iter().enumerate() {
            o.sample(
                "scx_soryu_enqueues_by_boost_total",
                &[("boost", &(min + i as i64).to_string())],
                &c.to_string(),
            );
        }
    }

    if !t.kernel_events.is_empty() {
        o.family(
            "scx_soryu_kernel_events_total",
            "counter",
            "The kernel's own sched_ext event counters (/sys/kernel/sched_ext/root/events), by event.",
        );
        for (event, c) in &t.kernel_events {
            o.sample(
                "scx_soryu_kernel_events_total",
                &[("event", event)],
                &c.to_string(),
            );
        }
    }
    if !t.bpf.is_empty() {
        o.family(
            "scx_soryu_bpf_calls_total",
            "counter",
            "Calls of each BPF callback, counted while kernel.bpf_stats_enabled is 1.",
        );
        for (prog, (calls, _)) in &t.bpf {
            let cb = prog.trim_start_matches("soryu_");
            o.sample(
                "scx_soryu_bpf_calls_total",
                &[("callback", cb)],
                &calls.to_string(),
            );
        }
        o.family(
            "scx_soryu_bpf_run_seconds_total",
            "counter",
            "Time spent in each BPF callback, counted while kernel.bpf_stats_enabled is 1.",
        );
        for (prog, (_, ns)) in &t.bpf {
            let cb = prog.trim_start_matches("soryu_");
            o.sample(
                "scx_soryu_bpf_run_seconds_total",
                &[("callback", cb)],
                &value(ns / 1e9),
            );
        }
    }
    o.s
}
