// SPDX-License-Identifier: GPL-2.0-only
//
// Report output: the human report (a few aligned lines per interval, units
// on every figure) and the records of --report-json (record.rs). Reports
// are best-effort and scheduling is not: a failed write (a closed pipe on
// stdout, a full disk) is reported once on stderr, that output stops, and
// the scheduler keeps running.

use std::fmt::Write as _;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result};

use crate::bpf_intf::*;
use crate::cli::Opts;
use crate::policy;
use crate::prometheus::{PromSink, RunInfo, Target};
use crate::record::{self, ExitRecord, Header, IntervalRecord, Record};
use crate::stats::{Interval, MaxWaitSub, Metrics, Snapshot, MAX_WAITS};

/// The build, as --version and every header say it: version, git commit of
/// the tree it was built from (-dirty when that tree had changes to the
/// sources), target, and /debug for a debug build (scx_utils' build id).
pub fn version() -> String {
    let semver = match option_env!("SORYU_GIT") {
        Some(git) if !git.is_empty() => format!("{}-{git}", env!("CARGO_PKG_VERSION")),
        _ => env!("CARGO_PKG_VERSION").to_string(),
    };
    scx_utils::build_id::full_version(&semver)
}

/// One line on stdout; a closed stdout is an error, not a panic.
pub fn stdout_line(s: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{s}")?;
    out.flush()
}

/// A figure for the text report: "-" when unknown (NaN).
fn fixed(v: f64, decimals: usize) -> String {
    if v.is_nan() {
        "-".into()
    } else {
        format!("{v:.decimals$}")
    }
}

fn us(v: f64) -> String {
    if v.is_nan() {
        "-".into()
    } else if v >= 1000.0 {
        format!("{:.2} ms", v / 1000.0)
    } else {
        format!("{v:.0} us")
    }
}

fn pct(v: f64, decimals: usize) -> String {
    if v.is_nan() {
        "-".into()
    } else {
        format!("{v:.decimals$}%")
    }
}

/// The human report of one interval. Unknown figures (a class without
/// wakeups) print as "-".
pub fn format_text(index: u64, m: &Metrics) -> String {
    let mut s = String::new();
    let calls = m.dispatch + m.dispatch_empty + m.dispatch_keep + m.smt_moves;
    let _ = writeln!(
        s,
        "[soryu] #{index:<4} {:>5.1} s | dispatch {:>8} empty {:>7} keep {:>7} smt-move {} cache-hot {} | probes/call mean {:>5} p50 {:>2} p99 {:>2} max {:>2} | starve_serve {}",
        m.duration_s, m.dispatch, m.dispatch_empty, m.dispatch_keep, m.smt_moves, m.cache_hot, fixed(m.probes_mean, 2),
        fixed(m.probes_p50, 0), fixed(m.probes_p99, 0), fixed(m.probes_max, 0), m.starve_serve
    );
    for (name, n, p50, p99, p999, max, j, t1, t4, t16) in [
        (
            "interactive",
            m.int_count,
            m.int_p50_us,
            m.int_p99_us,
            m.int_p999_us,
            m.int_max_us,
            m.int_max_jiffies,
            m.int_over_1ms_pct,
            m.int_over_4ms_pct,
            m.int_over_16ms_pct,
        ),
        (
            "other",
            m.oth_count,
            m.oth_p50_us,
            m.oth_p99_us,
            m.oth_p999_us,
            m.oth_max_us,
            m.oth_max_jiffies,
            m.oth_over_1ms_pct,
            m.oth_over_4ms_pct,
            m.oth_over_16ms_pct,
        ),
    ] {
        let _ = writeln!(
            s,
            "        wake->run {name:<11} n {n:>7} | p50 {:>9} p99 {:>9} p99.9 {:>9} max {:>9} ({} j) | >1ms {} >4.2ms {} >16.8ms {}",
            us(p50), us(p99), us(p999), us(max), fixed(j, 1), pct(t1, 3), pct(t4, 3), pct(t16, 3)
        );
    }
    let _ = writeln!(
        s,
        "        preempt attempts {} idle {} kick {} (local {}) deferred {} none {} ({}) scans {} fallback {} | boost floor {} between {} ceiling {}",
        m.preempt_attempts, m.preempt_idle, m.preempt_kicks, m.preempt_local, m.preempt_deferred, m.preempt_none, pct(m.preempt_none_pct, 1), m.preempt_scans, m.preempt_fallbacks,
        pct(m.boost_floor_pct, 1), pct(m.boost_between_pct, 1), pct(m.boost_ceiling_pct, 1)
    );
    let _ = writeln!(
        s,
        "        health insert_fail {} | bitmap clear {} repair {} | stale kicks {} | enqueue {} (pinned {}) direct {} sync-local {} | running {} | {} dispatch calls",
        m.insert_fail, m.bitmap_clear, m.bitmap_repair, m.stale_kicks, m.enqueue, m.pinned, m.direct, m.sync_local, m.tasks_running, calls
    );
    let _ = write!(
        s,
        "        starvation: longest queued wait {} | bound {} (one starving task per CPU)",
        us(m.queued_max_us),
        us(m.starve_bound_us)
    );
    s
}

/// One line of BPF callback costs, when kernel.bpf_stats_enabled is on.
pub fn format_cost(iv: &Interval) -> Option<String> {
    if iv.bpf_cost.is_empty() {
        return None;
    }
    let mut s = String::from("        bpf ns/call");
    for (name, c) in &iv.bpf_cost {
        let _ = write!(
            s,
            " {}={:.0}",
            name.trim_start_matches("soryu_"),
            c.ns_per_call
        );
    }
    Some(s)
}

/// Wake-to-run bucket lower bounds in ns, as the BPF side files waits.
pub fn lat_bucket_bounds() -> Vec<u64> {
    (0..soryu_consts_SORYU_NR_LAT_BUCKETS as usize)
        .map(policy::lat_bucket_lower)
        .collect()
}

/// The header of a run: what produced the records that follow.
pub fn header_record(opts: &Opts, kernel_hz: u32, run_id: &str) -> Header {
    Header {
        scheduler: "scx_soryu".into(),
        format: Some(record::FORMAT),
        version: Some(version()),
        run_id: Some(run_id.to_string()),
        kernel: Some(kernel_release()),
        kernel_hz: Some(kernel_hz),
        nr_cpus: Some(libbpf_rs::num_possible_cpus().unwrap_or(0) as u64),
        llcs: Some(crate::topology::read().describe()),
        knobs: opts
            .knobs()
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
        hist: Some(!opts.no_hist),
        report_sec: Some(opts.report_sec as f64),
        percentile_convention: Some("bucket lower bound".into()),
        lat_bucket_lower_ns: Some(lat_bucket_bounds()),
        nr_levels: Some(soryu_consts_SORYU_NR_LEVELS),
        boost_min: Some(-(soryu_consts_SORYU_MAX_BOOST as i64)),
        ..Header::default()
    }
}

pub fn kernel_release() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

/// "<ms since the Unix epoch>-<pid>": unique per start (a pid is not
/// reused within the same millisecond). --run-id sets another.
pub fn new_run_id() -> String {
    let ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    format!("{ms}-{}", std::process::id())
}

/// Appends records to the --report-json file, one line each, written with
/// one write call so that a reader (or a crash) sees whole lines.
pub struct JsonSink {
    out: Box<dyn Write + Send>,
    /// The file did not end with a newline (a torn last line): start on a
    /// fresh one.
    newline_first: bool,
}

impl JsonSink {
    /// Open for appending: the runs already in the file stay.
    pub fn open(path: &Path) -> Result<Self> {
        let f = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .with_context(|| format!("cannot open --report-json file {}", path.display()))?;
        Ok(JsonSink {
            out: Box::new(f),
            newline_first: !ends_with_newline(path),
        })
    }

    pub fn write(&mut self, rec: &Record) -> std::io::Result<()> {
        let mut line = Vec::with_capacity(4096);
        if self.newline_first {
            line.push(b'\n');
        }
        serde_json::to_writer(&mut line, rec)?;
        line.push(b'\n');
        self.out.write_all(&line)?;
        self.out.flush()?;
        self.newline_first = false;
        Ok(())
    }
}

/// True for an empty or missing file and for one whose last byte is '\n'.
fn ends_with_newline(path: &Path) -> bool {
    let Ok(mut f) = File::open(path) else {
        return true;
    };
    if f.seek(SeekFrom::End(-1)).is_err() {
        return true; // empty, or not seekable
    }
    let mut last = [0u8];
    f.read_exact(&mut last).map_or(true, |()| last[0] == b'\n')
}

/// Where interval reports go: stdout, the --report-json file and the
/// --prometheus file. It
/// outlives a scheduler restart (CPU hotplug): the run keeps its header,
/// interval indices keep counting, and the report schedule keeps its beat.
/// A new start of the daemon appends a new run (a new header, indices from
/// 0) to the same file.
pub struct Reporter<'a> {
    opts: &'a Opts,
    text: Option<Box<dyn Write + Send>>,
    json: Option<JsonSink>,
    json_path: PathBuf,
    prom: Option<PromSink>,
    /// Where the one message about a failed output goes.
    errors: Box<dyn Write + Send>,
    run_id: String,
    header_written: bool,
    index: u64,
    /// The reading the next interval starts from.
    prev: Option<Snapshot>,
    /// Longest waits since the last report.
    maxima: MaxWaitSub,
    /// When the next report is due.
    pub next: Instant,
    /// The first attach has started the beat.
    started: bool,
}

impl<'a> Reporter<'a> {
    pub fn new(opts: &'a Opts) -> Result<Self> {
        let json = opts
            .report_json
            .as_deref()
            .map(JsonSink::open)
            .transpose()?;
        let run_id = opts.run_id.clone().unwrap_or_else(new_run_id);
        let prom = opts
            .prometheus
            .as_deref()
            .map(|p| PromSink::new(Target::from_arg(p), RunInfo::new(opts, &run_id)));
        Ok(Reporter {
            opts,
            text: Some(Box::new(std::io::stdout())),
            json,
            json_path: opts.report_json.clone().unwrap_or_default(),
            prom,
            errors: Box::new(std::io::stderr()),
            run_id,
            header_written: false,
            index: 0,
            prev: None,
            maxima: MAX_WAITS.subscribe(),
            next: Instant::now() + Duration::from_secs(opts.report_sec),
            started: false,
        })
    }

    /// A (re)attached scheduler's first reading: the next interval starts
    /// here, its longest waits too. The first attach also starts the
    /// report beat: one set before the load made the first interval end
    /// as soon as a load took longer than one period, and the second one
    /// short (0.15 s and 0.43 s for --report-sec 2 after a slow load). A
    /// restart keeps the beat, so that attaches shorter than a period (a
    /// CPU hotplug storm restarts soryu every few seconds) still report.
    pub fn start(&mut self, first: Snapshot) {
        if !self.started {
            self.started = true;
            self.next = Instant::now() + Duration::from_secs(self.opts.report_sec);
        }
        self.prev = Some(first);
        self.maxima.take();
    }

    /// Report the interval from the previous reading to `cur`. Never fails:
    /// an output that cannot be written is reported once and dropped.
    pub fn interval(&mut self, cur: Snapshot, kernel_hz: u32) {
        if let Some(prev) = &self.prev {
            let iv = Interval::between(prev, &cur, self.maxima.take(), kernel_hz);
            self.write_interval(&iv, kernel_hz);
        }
        self.prev = Some(cur);
    }

    /// One interval's text lines, JSON record and Prometheus file.
    pub fn write_interval(&mut self, iv: &Interval, kernel_hz: u32) {
        let mut text = format_text(self.index, &iv.metrics);
        if let Some(cost) = format_cost(iv) {
            text.push('\n');
            text += &cost;
        }
        self.write_text(&text);
        let rec = Record::Interval(IntervalRecord::new(self.index, iv));
        self.write_json(&rec, kernel_hz);
        if let Some(prom) = self.prom.as_mut() {
            prom.interval(iv, &mut *self.errors);
        }
        self.index += 1;
    }

    /// The scheduler ended (detached by the daemon, or ejected by the
    /// kernel): one exit record with the kernel's reason.
    pub fn exit(&mut self, mut e: ExitRecord, kernel_hz: u32) {
        e.intervals = self.index;
        self.write_json(&Record::Exit(e), kernel_hz);
    }

    fn write_text(&mut self, s: &str) {
        let Some(out) = self.text.as_mut() else {
            return;
        };
        if let Err(e) = writeln!(out, "{s}").and_then(|()| out.flush()) {
            self.text = None;
            let why = if e.kind() == std::io::ErrorKind::BrokenPipe {
                "stdout was closed (broken pipe)".to_string()
            } else {
                format!("cannot write the report to stdout ({e})")
            };
            let _ = writeln!(
                self.errors,
                "scx_soryu: {why}: no more text reports, the scheduler keeps running"
            );
        }
    }

    fn write_json(&mut self, rec: &Record, kernel_hz: u32) {
        let Some(sink) = self.json.as_mut() else {
            return;
        };
        let mut res = Ok(());
        if !self.header_written {
            let h = header_record(self.opts, kernel_hz, &self.run_id);
            res = sink.write(&Record::Header(h));
            self.header_written = res.is_ok();
        }
        if let Err(e) = res.and_then(|()| sink.write(rec)) {
            self.json = None;
            let _ = writeln!(
                self.errors,
                "scx_soryu: cannot write --report-json {} ({e}): no more records go to it, the scheduler keeps running",
                self.json_path.display()
            );
        }
    }
}

#[cfg(test)]
pub mod tests;
