// SPDX-License-Identifier: GPL-2.0-only
//
// Unit tests of src/report.rs, and a round trip of its files through the
// library's compare and plot.

use super::*;
use crate::cli::Opts;
use clap::Parser;
use scx_soryu::figures::LatFigures;
use scx_soryu::spec::Line;
use std::path::PathBuf;
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
pub fn reporter(o: &Opts) -> (Reporter, Captured, Captured) {
    let mut r = Reporter::new(o.report_config(new_run_id)).unwrap();
    let (out, err) = (Captured::default(), Captured::default());
    r.text = Some(Box::new(out.clone()));
    r.errors = Box::new(err.clone());
    (r, out, err)
}

/// A reading of one CPU whose counters are all 0 but the wakeups.
fn snap(wakeups: u64) -> Snapshot {
    use scx_soryu::bpf_intf::{soryu_counter_SORYU_CNT_WAKEUPS as WAKEUPS, soryu_stats};
    // SAFETY: plain integers; all-zero is valid.
    let mut st: soryu_stats = unsafe { std::mem::zeroed() };
    st.cnt[WAKEUPS as usize] = wakeups;
    Snapshot::from_percpu(&[st], 0)
}

fn attach() -> Attach {
    Attach {
        consts: RunConsts {
            kernel_hz: 250,
            starve_bound_us: 240_000,
        },
        llcs: vec!["0-1".into()],
    }
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

fn records(text: &str) -> Vec<Record> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn the_text_report_lays_the_figures_out_as_the_table_says() {
    let mut m = synthetic(1.0).metrics;
    m.dispatch = 15405;
    m.dispatch_keep = 174;
    m.probes_mean = 7.734;
    m.int_p50_us = 98.0;
    m.int_p99_us = 1048.576;
    m.int_max_jiffies = 4.2;
    m.oth_count = 0;
    m.oth_p50_us = f64::NAN;
    m.oth_max_jiffies = f64::NAN;
    m.preempt_none_pct = 41.23;
    m.queued_max_us = 115_890.0;
    m.starve_bound_us = f64::NAN;
    let t = format_text(2, false, &m);
    let lines: Vec<&str> = t.lines().collect();
    assert_eq!(lines.len(), Line::ALL.len(), "{t}");
    assert!(
        lines[0].starts_with("[soryu] #2      2.0 s | dispatch    15405 empty       0 keep     174 smt-move 0 cache-hot 0 | probes 0 per call mean  7.73 p50  0"),
        "{t}"
    );
    assert!(
        lines[1]
            .starts_with("        wake->run interactive n     100 | p50     98 us p99   1.05 ms"),
        "{t}"
    );
    assert!(
        lines[1].contains("(4.2 j) | >1ms 1.000% >4.2ms 0.000%"),
        "{t}"
    );
    assert!(
        lines[2].starts_with("        wake->run other       n       0 | p50         - p99"),
        "{t}"
    );
    assert!(lines[2].contains("(- j) | >1ms"), "{t}");
    assert!(lines[3].contains("none 0 41.2% scans 0"), "{t}");
    assert_eq!(
        lines[5],
        "        starvation: longest queued wait 115.89 ms | bound -"
    );
    // every figure the table places is printed, with its label
    for &f in Fig::ALL {
        if let Some(tx) = f.spec().text {
            assert!(t.contains(tx.label), "{} ({})", f.name(), tx.label);
        }
    }
    assert!(format_text(7, true, &m).starts_with("[soryu] #7    final   2.0 s |"));
}

#[test]
fn json_appends_a_run_per_start() {
    let dir = temp_dir("report-append");
    let path = dir.join("r.jsonl");
    let p = path.to_str().unwrap();
    let o = opts(&["--report-json", p]);
    for _ in 0..2 {
        let (mut r, _, _) = reporter(&o);
        r.start(snap(0), attach());
        r.write_interval(&synthetic(1.0), false);
        r.write_interval(&synthetic(2.0), false);
        r.stop(None, ExitRecord::from_uei(64, 0, &[], &[]));
    }
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let recs = records(&text);
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
    assert_eq!(h.format_minor, Some(record::FORMAT_MINOR));
    assert_eq!(h.kernel_hz, Some(250));
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

// Before: the interval in which the scheduler stopped (SIGTERM, a stall,
// an error) was never reported: the exit record followed the last full
// interval, and up to --report-sec of figures, the stall's among them,
// were lost.
#[test]
fn the_interval_the_scheduler_stops_in_comes_before_the_exit_record() {
    let dir = temp_dir("report-final");
    let path = dir.join("r.jsonl");
    let o = opts(&["--report-json", path.to_str().unwrap(), "--report-sec", "5"]);
    let (mut r, out, _) = reporter(&o);
    r.start(snap(0), attach());
    r.interval(snap(10));
    let stall = ExitRecord::from_uei(scx_utils::ScxExitKind::ErrorStall as i32, 0, &[], &[]);
    r.stop(Some(snap(13)), stall);
    // a restart (hotplug) goes on in the same run
    r.start(snap(0), attach());
    r.interval(snap(4));
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let recs = records(&text);
    let ivs: Vec<(u64, bool, f64)> = recs
        .iter()
        .filter_map(|r| match r {
            Record::Interval(i) => {
                let w = match i.get(Fig::wakeups) {
                    record::Figure::Value(v) => v,
                    _ => f64::NAN,
                };
                Some((i.index, i.last, w))
            }
            _ => None,
        })
        .collect();
    assert_eq!(ivs, [(0, false, 10.0), (1, true, 3.0), (2, false, 4.0)]);
    let Record::Exit(e) = &recs[3] else {
        panic!("{text}")
    };
    assert_eq!((e.kind_name.as_str(), e.intervals), ("error_stall", 2));
    assert!(out.text().contains("[soryu] #1    final"), "{}", out.text());
    // with reports off there is no interval to finish: the exit alone
    let (mut r, out, _) = reporter(&opts(&["--report-sec", "0"]));
    r.start(snap(0), attach());
    r.stop(Some(snap(5)), ExitRecord::default());
    assert_eq!(out.text(), "");
}

#[test]
fn a_torn_last_line_is_ended_before_appending() {
    let dir = temp_dir("report-torn");
    let path = dir.join("r.jsonl");
    std::fs::write(&path, "{\"type\":\"interval\",\"ind").unwrap();
    let o = opts(&["--report-json", path.to_str().unwrap()]);
    let (mut r, _, _) = reporter(&o);
    r.write_interval(&synthetic(1.0), false);
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(lines[1].starts_with(r#"{"type":"header""#), "{text}");
}

// Before: after logrotate's copytruncate emptied the file, the daemon went
// on appending interval records under no header, and the file could not
// be read at all.
#[test]
fn an_emptied_file_gets_its_header_again() {
    let dir = temp_dir("report-truncated");
    let path = dir.join("r.jsonl");
    let o = opts(&["--report-json", path.to_str().unwrap()]);
    let (mut r, _, _) = reporter(&o);
    r.start(snap(0), attach());
    r.write_interval(&synthetic(1.0), false);
    r.write_interval(&synthetic(1.0), false);
    // copytruncate: copied away, then truncated in place
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(0)
        .unwrap();
    r.write_interval(&synthetic(1.0), false);
    r.write_interval(&synthetic(1.0), false);
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let kinds: Vec<String> = records(&text)
        .iter()
        .map(|r| match r {
            Record::Header(h) => format!("h{}", h.run_id.as_deref().unwrap_or("")),
            Record::Interval(i) => i.index.to_string(),
            Record::Exit(_) => "x".into(),
        })
        .collect();
    assert_eq!(kinds.len(), 3, "{text}");
    assert!(
        kinds[0].starts_with('h') && kinds[1..] == ["2", "3"],
        "{kinds:?}"
    );
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
    r.write_interval(&synthetic(1.0), false);
    drop(r);
    let before = std::fs::read_to_string(&path).unwrap();
    let _again = Reporter::new(o.report_config(new_run_id)).unwrap();
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
        r.write_interval(&synthetic(i as f64), false);
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
        r.write_interval(&synthetic(i as f64), false);
    }
    r.stop(None, ExitRecord::default());
    let e = err.text();
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(
        e.contains("/dev/full") && e.contains("keeps running"),
        "{e}"
    );
    assert_eq!(out.text().matches("[soryu] #").count(), 3);
}

// Before: the run_id was a label of every Prometheus series, so every
// start of the daemon made a new set of series (and a new set of rate()
// results) for each figure.
#[test]
fn run_id_names_the_json_run_and_the_info_metric_only() {
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
    r.write_interval(&synthetic(1.0), false);
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
        assert_eq!(
            l.contains(r#"run_id="bench-a1""#),
            l.starts_with("scx_soryu_info{"),
            "{l}"
        );
    }
    assert_eq!(err.text(), "");
    // without --run-id: "<ms>-<pid>"
    let cfg = opts(&[]).report_config(new_run_id);
    let (ms, pid) = cfg.run_id.split_once('-').unwrap();
    assert!(ms.parse::<u64>().unwrap() > 1_600_000_000_000);
    assert_eq!(pid, std::process::id().to_string());
}

/// The scheduler reloads (CPU hotplug): its maps start from zero, the
/// Prometheus counters of the run do not.
#[test]
fn prometheus_counters_survive_a_reload() {
    let dir = temp_dir("report-reload");
    let prom = dir.join("m.prom");
    let o = opts(&["--prometheus", prom.to_str().unwrap(), "--run-id", "r"]);
    let (mut r, _, _) = reporter(&o);
    r.start(snap(0), attach());
    r.interval(snap(10));
    r.start(snap(0), attach()); // reloaded: new maps
    r.interval(snap(5));
    let text = std::fs::read_to_string(&prom).unwrap();
    drop(r);
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(text.contains("scx_soryu_wakeups_total 15\n"), "{text}");
    assert!(text.contains("scx_soryu_reports_total 2\n"));
}

/// The report beat starts at the first attach, not when the Reporter was
/// made (before the load, which can take longer than a period); a restart
/// keeps it, or attaches shorter than a period would never report.
#[test]
fn the_beat_starts_at_the_first_attach() {
    let o = opts(&["--report-sec", "2"]);
    let (mut r, _, _) = reporter(&o);
    r.next = Instant::now(); // as if a slow load used up the period
    let attached = Instant::now();
    r.start(snap(0), attach());
    assert!(r.next >= attached + Duration::from_secs(2));
    let due = Instant::now();
    r.next = due; // a beat due while the kernel restarted the scheduler
    r.start(snap(0), attach());
    assert_eq!(r.next, due);
}

/// The daemon's writer, unchanged, on synthetic figures: A and B files as
/// `scx_soryu --report-json` writes them, read back by compare and plot.
#[test]
fn round_trip_through_compare_and_plot() {
    use scx_soryu::compare::{compare, CompareArgs};
    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: CompareArgs,
    }
    let dir = temp_dir("compare-round-trip");
    let (pa, pb) = (dir.join("a.jsonl"), dir.join("b.jsonl"));
    let oa = opts(&["--report-json", pa.to_str().unwrap()]);
    let ob = opts(&["--report-json", pb.to_str().unwrap(), "--vtime"]);
    // two starts of each: two runs per file, so two rounds
    for round in 0..2 {
        for (o, scale) in [(&oa, 1.0), (&ob, 2.0)] {
            let (mut r, _, _) = reporter(o);
            for i in 0..8 {
                let mut iv = synthetic(scale * (1.0 + i as f64 / 10.0));
                if i == 3 && round == 0 {
                    // no interactive wakeups in this interval
                    let lf = LatFigures::from_hist(&[0; 4], 0, 250);
                    iv.metrics.int_count = lf.count;
                    iv.metrics.int_p99_us = lf.p99_us;
                    iv.metrics.int_over_1ms_pct = lf.over_1ms_pct;
                }
                r.write_interval(&iv, false);
            }
            r.stop(None, ExitRecord::from_uei(64, 0, &[], &[]));
        }
    }
    let read = |p: &PathBuf| {
        scx_soryu::read::load_side(std::slice::from_ref(p), "A")
            .unwrap()
            .0
    };
    let (a, b) = (read(&pa), read(&pb));
    assert_eq!((a.len(), a[0].intervals.len(), a[0].exits.len()), (2, 8, 1));
    assert_eq!(a[0].header.knobs["vtime"], false);
    assert_eq!(b[0].header.knobs["vtime"], true);
    let args = Cli::parse_from([
        "compare",
        "--figure",
        "int_p99_us",
        "--figure",
        "starve_serve",
        "--figure",
        "oth_p99_us",
    ])
    .args;
    let c = compare(a, b, &args).unwrap();
    assert_eq!(c.pairs_per_round, vec![7, 7]);
    let p99 = &c.figures[0];
    // the empty interval is skipped in round 1, not counted as A's win
    let r1 = p99.rounds[0].as_ref().unwrap();
    assert_eq!((r1.pairs, r1.a_better, r1.skipped), (6, 6, 1));
    assert_eq!((p99.pooled.pairs, p99.pooled.a_better), (13, 13));
    assert!(p99.pooled.p < 0.001);
    assert!((p99.pooled.median_ratio.unwrap() - 0.5).abs() < 1e-9);
    assert!(c.figures[1].per_second);
    // and plot draws the same files
    let out = dir.join("ab.svg");
    scx_soryu::plot::run(&scx_soryu::plot::PlotArgs {
        files: vec![pa, pb],
        output: out.clone(),
        warmup: 1,
    })
    .unwrap();
    let svg = std::fs::read_to_string(&out).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(svg.contains("vtime=false") && svg.contains("vtime=true"));
}
