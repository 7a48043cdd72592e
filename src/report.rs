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
    let calls = m.dispatch + m.dispatch_empty + m.dispatch_keep;
    let _ = writeln!(
        s,
        "[soryu] #{index:<4} {:>5.1} s | dispatch {:>8} empty {:>7} keep {:>7} | probes/call mean {:>5} p50 {:>2} p99 {:>2} max {:>2} | starve_serve {}",
        m.duration_s, m.dispatch, m.dispatch_empty, m.dispatch_keep, fixed(m.probes_mean, 2),
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
        "        preempt attempts {} idle {} kick {} none {} ({}) | boost floor {} between {} ceiling {}",
        m.preempt_attempts, m.preempt_idle, m.preempt_kicks, m.preempt_none, pct(m.preempt_none_pct, 1),
        pct(m.boost_floor_pct, 1), pct(m.boost_between_pct, 1), pct(m.boost_ceiling_pct, 1)
    );
    let _ = write!(
        s,
        "        health insert_fail {} | bitmap clear {} repair {} | level_mismatch {} | enqueue {} direct {} | running {} | {} dispatch calls",
        m.insert_fail, m.bitmap_clear, m.bitmap_repair, m.level_mismatch, m.enqueue, m.direct, m.tasks_running, calls
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
    use serde_json::Value;
    Header {
        scheduler: "scx_soryu".into(),
        format: Some(record::FORMAT),
        version: Some(version()),
        run_id: Some(run_id.to_string()),
        kernel: Some(kernel_release()),
        kernel_hz: Some(kernel_hz),
        nr_cpus: Some(libbpf_rs::num_possible_cpus().unwrap_or(0) as u64),
        knobs: [
            ("clear_bitmap", Value::from(opts.clear_bitmap)),
            ("boost_on_wake", Value::from(opts.boost_on_wake)),
            ("vtime", Value::from(opts.vtime)),
            ("slice_us", Value::from(opts.slice_us)),
            ("starve_ms", Value::from(opts.starve_ms)),
        ]
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
        })
    }

    /// A (re)attached scheduler's first reading: the next interval starts
    /// here, its longest waits too.
    pub fn start(&mut self, first: Snapshot) {
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
pub mod tests {
    use super::*;
    use clap::Parser;
    use std::sync::{Arc, Mutex};

    pub fn opts(args: &[&str]) -> Opts {
        Opts::parse_from(std::iter::once("scx_soryu").chain(args.iter().copied()))
    }

    pub fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("scx_soryu-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// A Write whose bytes a test can read after handing it over.
    #[derive(Clone, Default)]
    pub struct Captured(Arc<Mutex<Vec<u8>>>);

    impl Write for Captured {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Captured {
        pub fn text(&self) -> String {
            String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
        }
    }

    /// The write end of a pipe whose read end is closed: EPIPE, as under
    /// `scx_soryu | head` once head has exited.
    fn broken_pipe() -> File {
        use std::os::fd::FromRawFd;
        let mut fds = [0; 2];
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        unsafe { libc::close(fds[0]) };
        unsafe { File::from_raw_fd(fds[1]) }
    }

    /// A Reporter as the daemon makes it, its stdout and stderr captured.
    pub fn reporter<'a>(o: &'a Opts) -> (Reporter<'a>, Captured, Captured) {
        let mut r = Reporter::new(o).unwrap();
        let (out, err) = (Captured::default(), Captured::default());
        r.text = Some(Box::new(out.clone()));
        r.errors = Box::new(err.clone());
        (r, out, err)
    }

    /// An interval with some wakeups in both classes.
    pub fn synthetic(seed: f64) -> Interval {
        let mut iv = Interval::default();
        let m = &mut iv.metrics;
        m.duration_s = 2.0;
        m.int_count = 100;
        m.int_p99_us = 100.0 * seed;
        m.int_over_1ms_pct = seed;
        m.oth_count = 10;
        m.oth_p99_us = 200.0 * seed;
        m.starve_serve = (4.0 * seed) as u64;
        iv.hists.lat_interactive = vec![1; lat_bucket_bounds().len()];
        iv
    }

    #[test]
    fn unknown_figures_print_as_a_dash() {
        let mut m = synthetic(1.0).metrics;
        m.int_count = 0;
        m.int_p50_us = f64::NAN;
        m.int_max_jiffies = f64::NAN;
        m.int_over_1ms_pct = f64::NAN;
        m.probes_mean = f64::NAN;
        let t = format_text(3, &m);
        assert!(t.contains("n       0 | p50         - p99"), "{t}");
        assert!(t.contains("(- j) | >1ms - >4.2ms"), "{t}");
        assert!(t.contains("mean     - p50"), "{t}");
        assert_eq!(t.lines().count(), 5);
    }

    #[test]
    fn json_appends_a_run_per_start() {
        let dir = temp_dir("report-append");
        let path = dir.join("r.jsonl");
        let p = path.to_str().unwrap();
        let o = opts(&["--report-json", p]);
        for _ in 0..2 {
            let (mut r, _, _) = reporter(&o);
            r.write_interval(&synthetic(1.0), 250);
            r.write_interval(&synthetic(2.0), 250);
            r.exit(ExitRecord::from_uei(64, 0, &[], &[]), 250);
        }
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let recs: Vec<Record> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let kinds: Vec<String> = recs
            .iter()
            .map(|r| match r {
                Record::Header(_) => "h".to_string(),
                Record::Interval(i) => i.index.to_string(),
                Record::Exit(e) => format!("x{}", e.intervals),
            })
            .collect();
        assert_eq!(kinds, ["h", "0", "1", "x2", "h", "0", "1", "x2"]);
        let Record::Header(h) = &recs[0] else {
            panic!()
        };
        assert_eq!(h.report_sec, Some(10.0));
        assert_eq!(h.format, Some(record::FORMAT));
        assert!(h
            .version
            .as_deref()
            .unwrap()
            .contains(env!("CARGO_PKG_VERSION")));
        // the fields the VM tests and the benchmark read keep their names
        let first: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        for key in [
            "type",
            "knobs",
            "kernel_hz",
            "nr_cpus",
            "lat_bucket_lower_ns",
        ] {
            assert!(first.get(key).is_some(), "header lacks {key}");
        }
        assert_eq!(first["knobs"]["vtime"], false);
        let iv: serde_json::Value = serde_json::from_str(text.lines().nth(1).unwrap()).unwrap();
        for key in [
            "type",
            "index",
            "insert_fail",
            "int_p99_us",
            "int_count",
            "wakeups",
            "hist",
            "kernel_events",
        ] {
            assert!(iv.get(key).is_some(), "interval lacks {key}");
        }
    }

    #[test]
    fn a_torn_last_line_is_ended_before_appending() {
        let dir = temp_dir("report-torn");
        let path = dir.join("r.jsonl");
        std::fs::write(&path, "{\"type\":\"interval\",\"ind").unwrap();
        let o = opts(&["--report-json", path.to_str().unwrap()]);
        let (mut r, _, _) = reporter(&o);
        r.write_interval(&synthetic(1.0), 250);
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert!(lines[1].starts_with(r#"{"type":"header""#), "{text}");
    }

    // Before: File::create truncated the file when the daemon started, so
    // a restart (e.g. systemd's restart-on-failure) wiped the run that
    // failed.
    #[test]
    fn a_restart_keeps_the_previous_run() {
        let dir = temp_dir("report-keep");
        let path = dir.join("r.jsonl");
        let o = opts(&["--report-json", path.to_str().unwrap()]);
        let (mut r, _, _) = reporter(&o);
        r.write_interval(&synthetic(1.0), 250);
        drop(r);
        let before = std::fs::read_to_string(&path).unwrap();
        let _again = Reporter::new(&o).unwrap();
        let after = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(before, after);
    }

    // Before: println! panicked on a closed stdout, and the panic unwound
    // through the scheduler, which detached it.
    #[test]
    fn a_closed_stdout_is_reported_once_and_reports_go_on() {
        let dir = temp_dir("report-pipe");
        let path = dir.join("r.jsonl");
        let o = opts(&["--report-json", path.to_str().unwrap()]);
        let (mut r, _, err) = reporter(&o);
        r.text = Some(Box::new(broken_pipe()));
        for i in 0..3 {
            r.write_interval(&synthetic(i as f64), 250);
        }
        let json = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let e = err.text();
        assert_eq!(e.lines().count(), 1, "{e}");
        assert!(
            e.contains("broken pipe") && e.contains("keeps running"),
            "{e}"
        );
        assert_eq!(json.lines().count(), 4, "the JSON records go on");
    }

    // Before: a failed JSON write returned an error up through the report
    // loop, and the daemon detached the scheduler.
    #[test]
    fn a_full_disk_is_reported_once_and_scheduling_goes_on() {
        let full = Path::new("/dev/full");
        if !full.exists() {
            return;
        }
        let o = opts(&["--report-json", "/dev/full"]);
        let (mut r, out, err) = reporter(&o);
        for i in 0..3 {
            r.write_interval(&synthetic(i as f64), 250);
        }
        r.exit(ExitRecord::default(), 250);
        let e = err.text();
        assert_eq!(e.lines().count(), 1, "{e}");
        assert!(
            e.contains("/dev/full") && e.contains("keeps running"),
            "{e}"
        );
        assert_eq!(out.text().matches("[soryu] #").count(), 3);
    }

    #[test]
    fn run_id_names_the_json_run_and_every_series() {
        let dir = temp_dir("report-runid");
        let json = dir.join("r.jsonl");
        let prom = dir.join("m.prom");
        let o = opts(&[
            "--report-json",
            json.to_str().unwrap(),
            "--prometheus",
            prom.to_str().unwrap(),
            "--run-id",
            "bench-a1",
        ]);
        let (mut r, _, err) = reporter(&o);
        r.write_interval(&synthetic(1.0), 250);
        let text = std::fs::read_to_string(&json).unwrap();
        let metrics = std::fs::read_to_string(&prom).unwrap();
        drop(r);
        assert!(!prom.exists(), "the metrics file goes with the daemon");
        std::fs::remove_dir_all(&dir).unwrap();
        let Record::Header(h) = serde_json::from_str(text.lines().next().unwrap()).unwrap() else {
            panic!("{text}")
        };
        assert_eq!(h.run_id.as_deref(), Some("bench-a1"));
        let series: Vec<&str> = metrics.lines().filter(|l| !l.starts_with('#')).collect();
        assert!(series.len() > 20);
        for l in series {
            assert!(l.contains(r#"{run_id="bench-a1""#), "{l}");
        }
        assert_eq!(err.text(), "");
        // without --run-id: "<ms>-<pid>"
        let o = opts(&[]);
        let (r, _, _) = reporter(&o);
        let (ms, pid) = r.run_id.split_once('-').unwrap();
        assert!(ms.parse::<u64>().unwrap() > 1_600_000_000_000);
        assert_eq!(pid, std::process::id().to_string());
    }

    /// The scheduler reloads (CPU hotplug): its maps start from zero, the
    /// Prometheus counters of the run do not.
    #[test]
    fn prometheus_counters_survive_a_reload() {
        use crate::bpf_intf::{soryu_counter_SORYU_CNT_WAKEUPS as WAKEUPS, soryu_stats};
        let dir = temp_dir("report-reload");
        let prom = dir.join("m.prom");
        let o = opts(&["--prometheus", prom.to_str().unwrap(), "--run-id", "r"]);
        let (mut r, _, _) = reporter(&o);
        let snap = |wakeups: u64| {
            // SAFETY: plain integers; all-zero is valid.
            let mut st: soryu_stats = unsafe { std::mem::zeroed() };
            st.cnt[WAKEUPS as usize] = wakeups;
            Snapshot::from_percpu(&[st], 0)
        };
        r.start(snap(0));
        r.interval(snap(10), 250);
        r.start(snap(0)); // reloaded: new maps
        r.interval(snap(5), 250);
        let text = std::fs::read_to_string(&prom).unwrap();
        drop(r);
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(
            text.contains("scx_soryu_wakeups_total{run_id=\"r\"} 15\n"),
            "{text}"
        );
        assert!(text.contains("scx_soryu_reports_total{run_id=\"r\"} 2\n"));
    }

    #[test]
    fn version_names_the_build() {
        let v = version();
        assert!(v.starts_with(env!("CARGO_PKG_VERSION")), "{v}");
        assert_eq!(v.ends_with("/debug"), cfg!(debug_assertions), "{v}");
    }
}
