// SPDX-License-Identifier: GPL-2.0-only
//
// Unit tests of src/report.rs.

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
    assert_eq!(t.lines().count(), 6);
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

/// The report beat starts at the first attach, not when the Reporter was
/// made (before the load, which can take longer than a period); a restart
/// keeps it, or attaches shorter than a period would never report.
#[test]
fn the_beat_starts_at_the_first_attach() {
    use std::time::{Duration, Instant};
    let o = opts(&["--report-sec", "2"]);
    let (mut r, _, _) = reporter(&o);
    // SAFETY: plain integers; all-zero is valid.
    let snap = || Snapshot::from_percpu(&[unsafe { std::mem::zeroed() }], 0);
    r.next = Instant::now(); // as if a slow load used up the period
    let attached = Instant::now();
    r.start(snap());
    assert!(r.next >= attached + Duration::from_secs(2));
    let due = Instant::now();
    r.next = due; // a beat due while the kernel restarted the scheduler
    r.start(snap());
    assert_eq!(r.next, due);
}

#[test]
fn version_names_the_build() {
    let v = version();
    assert!(v.starts_with(env!("CARGO_PKG_VERSION")), "{v}");
    assert_eq!(v.ends_with("/debug"), cfg!(debug_assertions), "{v}");
}
