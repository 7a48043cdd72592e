// SPDX-License-Identifier: GPL-2.0-only
//
// Unit tests of src/prometheus.rs.

use scx_soryu::bpf_intf::*;
use scx_soryu::policy;
use scx_soryu::record::Interval;

use super::render::*;
use super::sample::{synthetic_intervals, write_sample};
use super::sink::{write_atomic, PromSink};
use crate::config::{Target, AUTO_FILE};
use crate::report::tests::{opts, temp_dir, Captured};

fn info() -> RunInfo {
    RunInfo {
        run_id: "r1".into(),
        version: "0.1.0".into(),
        kernel: "7.3.4".into(),
        knobs: vec![("vtime".into(), "false".into())],
        hist: true,
        start_time_s: 1.5e9,
    }
}

/// (name, labels, value) of every sample line.
fn samples(text: &str) -> Vec<(String, String, String)> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let (series, v) = l.rsplit_once(' ').unwrap();
            let (name, labels) = series.split_once('{').unwrap_or((series, ""));
            (
                name.to_string(),
                labels.trim_end_matches('}').to_string(),
                v.to_string(),
            )
        })
        .collect()
}

fn get(text: &str, name: &str, labels: &str) -> f64 {
    samples(text)
        .into_iter()
        .find(|(n, l, _)| n == name && l == labels)
        .unwrap_or_else(|| panic!("no {name}{{{labels}}} in\n{text}"))
        .2
        .parse()
        .unwrap()
}

#[test]
fn le_is_what_prometheus_prints() {
    assert_eq!(le_value(1023e-9), "1.023e-06");
    assert_eq!(le_value(1_048_575e-9), "0.001048575");
    assert_eq!(le_value(1e-4), "0.0001");
    assert_eq!(le_value(4.294967295), "4.294967295");
    assert_eq!(le_value(0.0), "0");
    assert_eq!(le_value(3.0), "3");
    assert_eq!(le_value(1e6), "1e+06");
    assert_eq!(le_value(123456.0), "123456");
    assert_eq!(le_value(f64::INFINITY), "+Inf");
    let le = lat_le();
    assert_eq!(le.len(), soryu_consts_SORYU_NR_LAT_BUCKETS as usize - 1);
    assert_eq!(le[0], "1.023e-06");
    // the bucket that ends just below 2^20 ns: "under 1 ms" is exact
    let edge = policy::lat_bucket(1 << 20);
    assert_eq!(le[edge - 1], "0.001048575");
    assert_eq!(le.last().unwrap(), "4.294967295");
}

#[test]
fn counters_are_cumulative_and_histograms_consistent() {
    let ivs = synthetic_intervals(3);
    let mut t = Totals::default();
    t.add(&ivs[0]);
    let one = render(&info(), &t, &ivs[0]);
    t.add(&ivs[1]);
    t.add(&ivs[2]);
    let three = render(&info(), &t, &ivs[2]);
    let wakeups: u64 = ivs.iter().map(|iv| iv.metrics.wakeups).sum();
    assert_eq!(get(&three, "scx_soryu_wakeups_total", ""), wakeups as f64);
    assert!(
        get(&one, "scx_soryu_wakeups_total", "") < wakeups as f64,
        "counters grow"
    );
    assert_eq!(get(&three, "scx_soryu_reports_total", ""), 3.0);
    // every counter of the third file is at least that of the first
    for (n, l, v) in samples(&one) {
        if n.ends_with("_total") || n.ends_with("_bucket") || n.ends_with("_count") {
            let v3 = get(&three, &n, &l);
            assert!(v3 >= v.parse::<f64>().unwrap(), "{n}{{{l}}} went down");
        }
    }
    // histogram: cumulative, +Inf = _count = the class's wakeups
    for (class, count) in CLASSES.iter().zip([
        ivs.iter().map(|i| i.metrics.int_count).sum::<u64>(),
        ivs.iter().map(|i| i.metrics.oth_count).sum::<u64>(),
    ]) {
        let sel = format!(r#"class="{class}""#);
        let buckets: Vec<f64> = samples(&three)
            .into_iter()
            .filter(|(n, l, _)| n == "scx_soryu_wake_to_run_seconds_bucket" && l.starts_with(&sel))
            .map(|(_, _, v)| v.parse().unwrap())
            .collect();
        assert_eq!(buckets.len(), soryu_consts_SORYU_NR_LAT_BUCKETS as usize);
        assert!(buckets.windows(2).all(|w| w[0] <= w[1]), "{class}");
        assert_eq!(*buckets.last().unwrap(), count as f64);
        assert_eq!(
            get(&three, "scx_soryu_wake_to_run_seconds_count", &sel),
            count as f64
        );
        let sum = get(&three, "scx_soryu_wake_to_run_seconds_sum", &sel);
        assert!(sum > 0.0 && sum < count as f64, "{sum}");
    }
    // the under-1ms bucket agrees with the report's share over 1 ms
    let sel = r#"class="interactive",le="0.001048575""#;
    let under = get(&three, "scx_soryu_wake_to_run_seconds_bucket", sel);
    let all: u64 = ivs.iter().map(|i| i.metrics.int_count).sum();
    let over: f64 = ivs
        .iter()
        .map(|i| i.metrics.int_over_1ms_pct * i.metrics.int_count as f64 / 100.0)
        .sum();
    assert!((all as f64 - under - over).abs() < 1e-6, "{under} {over}");
    // probes: exact sum
    assert_eq!(
        get(&three, "scx_soryu_dispatch_probes_per_call_sum", ""),
        get(&three, "scx_soryu_dispatch_probes_total", "")
    );
    // every sample names the run first
    for (n, l, _) in samples(&three) {
        assert!(l.starts_with(""), "{n}{{{l}}}");
    }
}

#[test]
fn every_family_has_help_and_type_once_and_is_contiguous() {
    let ivs = synthetic_intervals(1);
    let mut t = Totals::default();
    t.add(&ivs[0]);
    let text = render(&info(), &t, &ivs[0]);
    let mut seen = Vec::<String>::new();
    let mut current = String::new();
    for l in text.lines() {
        if let Some(rest) = l.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').unwrap();
            assert!(!seen.contains(&name.to_string()), "{name} twice");
            assert!(["counter", "gauge", "histogram"].contains(&kind));
            assert_eq!(kind == "counter", name.ends_with("_total"), "{name}");
            seen.push(name.to_string());
            current = name.to_string();
        } else if !l.starts_with('#') {
            let name = l.split(['{', ' ']).next().unwrap();
            let base = name
                .strip_suffix("_bucket")
                .or(name.strip_suffix("_sum"))
                .or(name.strip_suffix("_count"))
                .filter(|b| *b == current)
                .unwrap_or(name);
            assert_eq!(base, current, "{l} outside its family");
        }
    }
    assert!(seen.len() >= 20, "{seen:?}");
}

#[test]
fn unknown_is_absent_and_no_hist_writes_no_histograms() {
    let mut iv = synthetic_intervals(1).remove(0);
    iv.metrics.int_max_us = f64::NAN;
    let mut i = info();
    i.hist = false;
    let mut t = Totals::default();
    t.add(&iv);
    let text = render(&i, &t, &iv);
    assert!(!text.contains(r#"max_seconds{class="interactive"}"#));
    assert!(text.contains(r#"max_seconds{class="other"}"#));
    assert!(!text.contains("histogram"), "{text}");
    assert!(!text.contains("by_level"), "{text}");
    assert!(text.contains(r#"hist="false""#));
}

#[test]
fn labels_and_help_are_escaped() {
    let mut i = info();
    i.run_id = "a\"b\\c".into();
    i.kernel = "x\ny".into();
    let iv = Interval::default();
    let text = render(&i, &Totals::default(), &iv);
    assert!(text.contains(r#"{run_id="a\"b\\c""#), "{text}");
    assert!(text.contains(r#"kernel="x\ny""#), "{text}");
    assert_eq!(text.lines().filter(|l| l.starts_with('y')).count(), 0);
}

#[test]
fn the_file_is_replaced_whole_and_removed_at_exit() {
    let dir = temp_dir("prom-atomic");
    let path = dir.join("m.prom");
    std::fs::write(&path, "old").unwrap();
    let err = Captured::default();
    let mut sink = PromSink::new(Target::File(path.clone()), info());
    for iv in synthetic_intervals(2) {
        sink.interval(&iv, &mut err.clone());
    }
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with("# HELP scx_soryu_info"), "{text}");
    assert!(text.contains("scx_soryu_reports_total 2\n"));
    let names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["m.prom"], "no temporary file left");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o044, 0o044, "node_exporter must read it: {mode:o}");
    assert_eq!(err.text(), "");
    drop(sink);
    assert!(!path.exists(), "removed when the daemon exits");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_stale_temporary_file_or_link_is_not_followed() {
    let dir = temp_dir("prom-link");
    let victim = dir.join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let path = dir.join("m.prom");
    let tmp = dir.join(format!(".m.prom.{}.tmp", std::process::id()));
    std::os::unix::fs::symlink(&victim, &tmp).unwrap();
    write_atomic(&path, "x 1\n").unwrap();
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "x 1\n");
    std::fs::remove_dir_all(&dir).unwrap();
}

// A failed write (the directory gone, a full disk) is said once, the
// next intervals try again, and the first that works says so.
#[test]
fn a_failing_write_is_reported_once_and_retried() {
    let dir = temp_dir("prom-fail");
    let sub = dir.join("gone");
    std::fs::create_dir(&sub).unwrap();
    let path = sub.join("m.prom");
    let err = Captured::default();
    let mut sink = PromSink::new(Target::File(path.clone()), info());
    let ivs = synthetic_intervals(5);
    sink.interval(&ivs[0], &mut err.clone());
    std::fs::remove_dir_all(&sub).unwrap();
    for iv in &ivs[1..4] {
        sink.interval(iv, &mut err.clone());
    }
    let e = err.text();
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(e.contains("cannot write --prometheus") && e.contains("keeps running"));
    std::fs::create_dir(&sub).unwrap();
    sink.interval(&ivs[4], &mut err.clone());
    let e = err.text();
    assert_eq!(e.lines().count(), 2, "{e}");
    assert!(e.lines().nth(1).unwrap().contains("written again"), "{e}");
    // the counters kept counting through the failures
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("scx_soryu_reports_total 5\n"));
    drop(sink);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn auto_writes_only_while_the_textfile_directory_exists() {
    let dir = temp_dir("prom-auto");
    let textfile = dir.join("node-exporter");
    let err = Captured::default();
    let mut sink = PromSink::new(Target::Dir(textfile.clone()), info());
    let ivs = synthetic_intervals(3);
    sink.interval(&ivs[0], &mut err.clone());
    sink.interval(&ivs[1], &mut err.clone());
    let e = err.text();
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(e.contains("does not exist"), "{e}");
    std::fs::create_dir(&textfile).unwrap();
    sink.interval(&ivs[2], &mut err.clone());
    let e = err.text();
    assert_eq!(e.lines().count(), 2, "{e}");
    let text = std::fs::read_to_string(textfile.join(AUTO_FILE)).unwrap();
    assert!(text.contains("scx_soryu_reports_total 3\n"));
    drop(sink);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_sample_is_the_writers_output() {
    let dir = temp_dir("prom-sample");
    let path = dir.join("s.prom");
    let o = opts(&["--vtime", "--run-id", "sample-1"]);
    write_sample(&o.report_config(|| unreachable!()), &path).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(text.contains("scx_soryu_reports_total 3\n"));
    assert!(text.contains(r#"scx_soryu_info{run_id="sample-1""#));
    assert!(text.contains(r#"vtime="true""#), "{text}");
    assert!(text.contains("scx_soryu_kernel_events_total{"));
    assert!(text.contains(r#"scx_soryu_bpf_calls_total{callback="dispatch"} 3000"#));
}

// Before: the help texts were written out a second time here, and
// disagreed with scx_stats' (stale_kicks: "tasks that started running at
// another level" here, "kicks whose victim switched level" there).
#[test]
fn help_is_the_figure_tables() {
    use scx_soryu::figures::Fig;
    let ivs = synthetic_intervals(1);
    let mut t = Totals::default();
    t.add(&ivs[0]);
    let text = render(&info(), &t, &ivs[0]);
    let help = |family: &str| {
        let prefix = format!("# HELP {family} ");
        text.lines()
            .find_map(|l| l.strip_prefix(prefix.as_str()))
            .unwrap_or_else(|| panic!("no {family} in\n{text}"))
            .to_string()
    };
    assert_eq!(
        help("scx_soryu_stale_kicks_total"),
        format!("{}.", Fig::stale_kicks.spec().help)
    );
    let dispatch = help("scx_soryu_dispatch_calls_total");
    for f in [Fig::dispatch, Fig::dispatch_empty, Fig::dispatch_keep] {
        assert!(dispatch.contains(f.spec().help), "{dispatch}");
    }
    let queued = help("scx_soryu_queued_wait_max_seconds");
    assert!(queued.ends_with("in the last interval, in seconds, absent while unknown."));
}
