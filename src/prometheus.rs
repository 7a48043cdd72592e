// SPDX-License-Identifier: GPL-2.0-only
//
// --prometheus: the figures in the Prometheus text exposition format, for
// node_exporter's textfile collector. Every report interval the whole file
// is written anew to a temporary file in the same directory and renamed
// over PATH, so a reader sees the old file or the new one, never half.
//
// Unlike the text report and --report-json, which give each interval's own
// figures, counters here are cumulative since the daemon started (the sum
// of every interval reported so far, across scheduler reloads): Prometheus
// computes rates itself and reads a drop as a restart. Every series carries
// the run's `run_id` label, so a new start of the daemon is a new series.
// docs/operations.md lists the metrics.
//
// Writing is best-effort, like every output of the daemon: a failure is
// reported once on stderr, retried every interval, and never stops the
// scheduler. The file is removed when the daemon exits, so that
// node_exporter does not go on serving the figures of a scheduler that is
// gone.
//
// This file: what the figures are and how they are rendered (render()).
// Writing the file as the daemon runs: prometheus/sink.rs; the sample file
// of --prometheus-sample: prometheus/sample.rs.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::bpf_intf::*;
use crate::cli::Opts;
use crate::policy;
use crate::stats::Interval;

/// Debian's node_exporter textfile directory (prometheus-node-exporter's
/// --collector.textfile.directory), where `--prometheus auto` writes.
pub const TEXTFILE_DIR: &str = "/var/lib/prometheus/node-exporter";
/// The file name `--prometheus auto` writes in TEXTFILE_DIR. node_exporter
/// reads only files ending in .prom.
pub const AUTO_FILE: &str = "scx_soryu.prom";
/// The value of --prometheus that means TEXTFILE_DIR/AUTO_FILE.
pub const AUTO: &str = "auto";

/// Where the metrics go.
#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    /// This file; its directory is checked when the daemon starts.
    File(PathBuf),
    /// AUTO_FILE in this directory whenever the directory exists (it may
    /// appear later, when node_exporter is installed); nothing while not.
    Dir(PathBuf),
}

impl Target {
    /// The --prometheus argument: "auto" or a file path.
    pub fn from_arg(arg: &Path) -> Self {
        if arg.as_os_str() == AUTO {
            Target::Dir(PathBuf::from(TEXTFILE_DIR))
        } else {
            Target::File(arg.to_path_buf())
        }
    }

    pub fn path(&self) -> PathBuf {
        match self {
            Target::File(p) => p.clone(),
            Target::Dir(d) => d.join(AUTO_FILE),
        }
    }

    /// How the user named it, for messages.
    fn flag(&self) -> String {
        match self {
            Target::File(p) => format!("--prometheus {}", p.display()),
            Target::Dir(_) => format!("--prometheus {AUTO}"),
        }
    }
}

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
    pub fn new(opts: &Opts, run_id: &str) -> Self {
        RunInfo {
            run_id: run_id.to_string(),
            version: crate::report::version(),
            kernel: crate::report::kernel_release(),
            knobs: opts
                .knobs()
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            hist: !opts.no_hist,
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
    /// Metrics::COUNTS by name.
    pub counts: BTreeMap<&'static str, u64>,
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
        let m = serde_json::to_value(&iv.metrics).unwrap_or_default();
        for name in crate::stats::Metrics::COUNTS {
            let v = m.get(name).and_then(|v| v.as_u64()).unwrap_or(0);
            let t = self.counts.entry(name).or_insert(0);
            *t = t.wrapping_add(v);
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

    fn count(&self, name: &str) -> u64 {
        self.counts.get(name).copied().unwrap_or(0)
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

/// Builds the text of one file: families in a fixed order, every sample
/// with the run_id label first.
struct Text {
    s: String,
    run_id: String,
}

impl Text {
    fn family(&mut self, name: &str, kind: &str, help: &str) {
        let _ = writeln!(self.s, "# HELP {name} {}", escape(help, false));
        let _ = writeln!(self.s, "# TYPE {name} {kind}");
    }

    fn sample(&mut self, name: &str, labels: &[(&str, &str)], v: &str) {
        let _ = write!(self.s, "{name}{{run_id=\"{}\"", self.run_id);
        for (k, val) in labels {
            let _ = write!(self.s, ",{k}=\"{}\"", escape(val, true));
        }
        let _ = writeln!(self.s, "}} {v}");
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

/// The whole file for the figures so far. `last` is the interval just
/// reported (for the gauges: tasks running, longest waits).
pub fn render(info: &RunInfo, t: &Totals, last: &Interval) -> String {
    let mut o = Text {
        s: String::with_capacity(32 << 10),
        run_id: escape(&info.run_id, true),
    };
    let m = &last.metrics;

    o.family(
        "scx_soryu_info",
        "gauge",
        "Always 1; its labels name the build, the kernel and the knobs of this run of scx_soryu.",
    );
    let mut labels: Vec<(&str, &str)> = vec![
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

    o.counter(
        "scx_soryu_wakeups_total",
        "Wakeups whose wake-to-run time was recorded.",
        t.count("wakeups"),
    );
    o.counter(
        "scx_soryu_enqueues_total",
        "Tasks queued on a level DSQ or a CPU's own queue.",
        t.count("enqueue"),
    );
    o.counter(
        "scx_soryu_pinned_enqueues_total",
        "Tasks that may use one CPU only, queued on that CPU's own queue.",
        t.count("pinned"),
    );
    o.counter(
        "scx_soryu_smt_moves_total",
        "Dispatch calls that let a task sharing its SMT core go, for a whole idle core.",
        t.count("smt_moves"),
    );
    o.counter(
        "scx_soryu_direct_dispatches_total",
        "Wakeups placed straight on an idle CPU, bypassing the levels.",
        t.count("direct"),
    );
    o.counter(
        "scx_soryu_sync_local_wakeups_total",
        "Sync wakeups (pipe, socket) run next on the waker's CPU.",
        t.count("sync_local"),
    );
    o.counter(
        "scx_soryu_preempt_local_wakeups_total",
        "Wakeups that preempted straight onto their victim CPU's local DSQ.",
        t.count("preempt_local"),
    );
    o.counter(
        "scx_soryu_cache_hot_dispatches_total",
        "Dispatch calls that took, from behind its level's head, a task last run on their CPU.",
        t.count("cache_hot"),
    );
    o.family(
        "scx_soryu_dispatch_calls_total",
        "counter",
        "Dispatch calls, by result: moved a task to the CPU, found nothing (empty), kept the previous task running (kept).",
    );
    for (result, name) in [
        ("moved", "dispatch"),
        ("empty", "dispatch_empty"),
        ("kept", "dispatch_keep"),
    ] {
        o.sample(
            "scx_soryu_dispatch_calls_total",
            &[("result", result)],
            &t.count(name).to_string(),
        );
    }
    o.counter(
        "scx_soryu_dispatch_probes_total",
        "Level DSQs probed by dispatch calls.",
        t.count("probes"),
    );
    o.counter(
        "scx_soryu_starve_serves_total",
        "Tasks served by the anti-starvation pass (a level left waiting longer than --starve-ms).",
        t.count("starve_serve"),
    );
    o.family(
        "scx_soryu_preempt_attempts_total",
        "counter",
        "Preemption attempts (try_preempt calls), by result: woke an idle CPU (idle), kicked a CPU running a worse level (kick), left that kick to a timer for the wakeup granularity (deferred), found no CPU (none).",
    );
    for (result, name) in [
        ("idle", "preempt_idle"),
        ("kick", "preempt_kicks"),
        ("deferred", "preempt_deferred"),
        ("none", "preempt_none"),
    ] {
        o.sample(
            "scx_soryu_preempt_attempts_total",
            &[("result", result)],
            &t.count(name).to_string(),
        );
    }
    o.counter(
        "scx_soryu_preempt_scans_total",
        "Preemption attempts that searched for a victim: no idle CPU, and the task's last CPU ran no worse level.",
        t.count("preempt_scans"),
    );
    o.counter(
        "scx_soryu_preempt_fallbacks_total",
        "Victim searches that read every CPU's level: tasks that may not use every CPU.",
        t.count("preempt_fallbacks"),
    );
    o.counter(
        "scx_soryu_insert_failures_total",
        "DSQ inserts the kernel refused; must stay 0.",
        t.count("insert_fail"),
    );
    o.counter(
        "scx_soryu_bitmap_clears_total",
        "Level bits cleared when found empty (--clear-bitmap only).",
        t.count("bitmap_clear"),
    );
    o.counter(
        "scx_soryu_bitmap_repairs_total",
        "Level bits the repair sweep had to set again (--clear-bitmap only).",
        t.count("bitmap_repair"),
    );
    o.counter(
        "scx_soryu_stale_kicks_total",
        "Tasks that started running at another level than they were queued at.",
        t.count("stale_kicks"),
    );
    o.family(
        "scx_soryu_tasks_running",
        "gauge",
        "Tasks on a run queue at the end of the last interval (procs_running of /proc/stat).",
    );
    o.sample("scx_soryu_tasks_running", &[], &m.tasks_running.to_string());

    o.family(
        "scx_soryu_wake_to_run_max_seconds",
        "gauge",
        "Longest wake-to-run wait of the last interval, exact, by class; absent when the class had no wakeup in it.",
    );
    for (class, max_us) in CLASSES.iter().zip([m.int_max_us, m.oth_max_us]) {
        if max_us.is_finite() {
            o.sample(
                "scx_soryu_wake_to_run_max_seconds",
                &[("class", class)],
                &value(max_us / 1e6),
            );
        }
    }

    // (each family only with its sample: a figure the interval cannot
    // define is left out, family and all)
    if m.queued_max_us.is_finite() {
        o.family(
            "scx_soryu_queued_wait_max_seconds",
            "gauge",
            "Longest time any task sat queued before it ran in the last interval, exact.",
        );
        o.sample(
            "scx_soryu_queued_wait_max_seconds",
            &[],
            &value(m.queued_max_us / 1e6),
        );
    }
    if m.starve_bound_us.is_finite() {
        o.family(
            "scx_soryu_starve_bound_seconds",
            "gauge",
            "The starvation bound for one starving task per CPU (docs/design-starvation.md): queued_wait_max stays below it unless more tasks starve at once or a higher class holds the CPUs.",
        );
        o.sample(
            "scx_soryu_starve_bound_seconds",
            &[],
            &value(m.starve_bound_us / 1e6),
        );
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

mod sample;
mod sink;
pub use sample::write_sample;
pub use sink::PromSink;
#[cfg(test)]
use {sample::synthetic_intervals, sink::write_atomic};

#[cfg(test)]
mod tests;
