// SPDX-License-Identifier: GPL-2.0-only
//
// compare's tests: pairing, the checks on what may be compared, and a round
// trip through the daemon's own --report-json writer.

use std::path::Path;

use clap::Parser;
use serde_json::{json, Map, Value};

use super::signtest::pairs_needed;
use super::*;
use crate::read::{parse_runs, same_config};

fn header(knobs: &str) -> String {
    format!(r#"{{"type":"header","scheduler":"scx_soryu","knobs":{knobs}}}"#)
}

fn interval(index: u64, figures: &[(&str, Value)]) -> String {
    let mut o = Map::new();
    o.insert("type".into(), json!("interval"));
    o.insert("index".into(), json!(index));
    for (k, v) in figures {
        o.insert(k.to_string(), v.clone());
    }
    Value::Object(o).to_string()
}

/// A run whose intervals carry int_over_1ms_pct only.
fn run_of(name: &str, knobs: &str, points: &[(u64, f64)]) -> Run {
    let mut text = header(knobs) + "\n";
    for &(i, v) in points {
        text += &(interval(i, &[("int_over_1ms_pct", json!(v))]) + "\n");
    }
    parse_runs(Path::new(name), &text).unwrap().runs.remove(0)
}

fn run_text(name: &str, text: &str) -> Run {
    parse_runs(Path::new(name), text).unwrap().runs.remove(0)
}

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    args: CompareArgs,
}

/// compare's arguments as the command line gives them.
fn parse_args(argv: &[&str]) -> CompareArgs {
    Cli::parse_from(std::iter::once("compare").chain(argv.iter().copied())).args
}

fn args() -> CompareArgs {
    parse_args(&["--figure", "int_over_1ms_pct"])
}

fn err_of<T: std::fmt::Debug>(r: Result<T>) -> String {
    format!("{:#}", r.unwrap_err())
}

fn close(got: f64, want: f64) -> bool {
    (got - want).abs() <= 1e-9 * want.abs()
}

fn pts(vals: &[f64]) -> Vec<(u64, f64)> {
    vals.iter()
        .enumerate()
        .map(|(i, &v)| (i as u64, v))
        .collect()
}

#[test]
fn pairs_by_index_after_warmup() {
    // A: 0..=6; B: 1..=7 without 3. Warm-up drops A's 0 and B's 1.
    let a = run_of("a", "{}", &(0..=6).map(|i| (i, 1.0)).collect::<Vec<_>>());
    let b_points: Vec<_> = (1..=7).filter(|&i| i != 3).map(|i| (i, 2.0)).collect();
    let b = run_of("b", r#"{"x":1}"#, &b_points);
    let mut args = args();
    args.min_pairs = 1;
    let c = compare(vec![a], vec![b], &args).unwrap();
    // Indices 2, 4, 5, 6 are on both sides.
    assert_eq!(c.pairs_per_round, vec![4]);
    let t = c.figures[0].rounds[0].as_ref().unwrap();
    assert_eq!((t.pairs, t.a_better, t.median_ratio), (4, 4, Some(0.5)));
}

#[test]
fn pools_over_rounds() {
    let a1 = run_of("a1", "{}", &pts(&[9.0, 1.0, 1.0, 1.0, 1.0, 1.0]));
    let b1 = run_of("b1", r#"{"x":1}"#, &pts(&[0.0, 2.0, 2.0, 2.0, 2.0, 2.0]));
    let a2 = run_of("a2", "{}", &pts(&[9.0, 1.0, 1.0, 1.0, 1.0, 3.0]));
    let b2 = run_of("b2", r#"{"x":1}"#, &pts(&[0.0, 2.0, 2.0, 2.0, 2.0, 2.0]));
    let c = compare(vec![a1, a2], vec![b1, b2], &args()).unwrap();
    let f = &c.figures[0];
    assert_eq!(f.rounds[0].as_ref().unwrap().a_better, 5);
    assert_eq!(f.rounds[1].as_ref().unwrap().b_better, 1);
    assert_eq!(
        (f.pooled.pairs, f.pooled.a_better, f.pooled.b_better),
        (10, 9, 1)
    );
    // n=10, k=1: 2 * (1 + 10) / 1024.
    assert!(close(f.pooled.p, 0.021484375));
    assert!(render::text(&c).contains("pooled"));
}

#[test]
fn refuses_too_few_pairs() {
    // 6 intervals, the first dropped: 5 pairs, below the default 6
    let a = run_of("a", "{}", &(0..6).map(|i| (i, 1.0)).collect::<Vec<_>>());
    let e = err_of(compare(vec![a.clone()], vec![a], &args()));
    assert!(
        e.contains("only 5 interval pair(s)") && e.contains("--warmup"),
        "{e}"
    );
}

// Before: --min-pairs defaulted to 5, and 5 pairs cannot give p < 0.05
// even when one side wins all of them (p = 0.0625).
#[test]
fn the_default_minimum_of_pairs_can_reach_five_percent() {
    let d = parse_args(&[]);
    assert_eq!(d.min_pairs as u64, pairs_needed());
    assert_eq!(d.min_pairs, 6);
    // 6 pairs all won by A: p = 0.03125, and nothing marked
    let a = run_of("a", "{}", &pts(&[0.0; 7]));
    let b = run_of("b", r#"{"x":1}"#, &pts(&[1.0; 7]));
    let c = compare(vec![a.clone()], vec![b.clone()], &args()).unwrap();
    let t = c.figures[0].rounds[0].as_ref().unwrap();
    assert!(t.p < 0.05 && !t.unreachable());
    assert!(!render::text(&c).contains("out of reach"));
    // half of them tied: 3 untied pairs can never reach it, and the
    // output says so at the row and under the table
    let b = run_of(
        "b",
        r#"{"x":1}"#,
        &pts(&[1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0]),
    );
    let c = compare(vec![a], vec![b], &args()).unwrap();
    let text = render::text(&c);
    assert!(text.contains("0.2500^"), "{text}");
    assert!(
        text.contains("^ p < 0.05 is out of reach here") && text.contains("n >= 6"),
        "{text}"
    );
}

#[test]
fn refuses_unequal_rounds() {
    let a = run_of("a", "{}", &[(0, 1.0)]);
    let e = err_of(compare(vec![a.clone(), a.clone()], vec![a], &args()));
    assert!(
        e.contains("side A has 2 run(s) (a, a) but side B has 1"),
        "{e}"
    );
}

// Before: an interval where a latency class had no wakeups carried 0 for
// its percentiles, and 0 won every "lower is better" pair.
#[test]
fn unknown_values_are_skipped_not_won() {
    let text = |vals: &[Value]| {
        let mut t = header("{}") + "\n";
        for (i, v) in vals.iter().enumerate() {
            t += &(interval(i as u64, &[("int_p99_us", v.clone())]) + "\n");
        }
        t
    };
    let n = Value::Null;
    // A: three intervals without interactive wakeups (null), B: known
    let a = run_text(
        "a",
        &text(&[
            json!(9),
            n.clone(),
            n.clone(),
            n,
            json!(5),
            json!(5),
            json!(5),
            json!(5),
        ]),
    );
    let b = run_text(
        "b",
        &text(&[
            json!(9),
            json!(4),
            json!(4),
            json!(4),
            json!(4),
            json!(4),
            json!(4),
            json!(4),
        ]),
    );
    let mut args = args();
    args.figures = vec!["int_p99_us".into()];
    let c = compare(vec![a], vec![b], &args).unwrap();
    let t = c.figures[0].rounds[0].as_ref().unwrap();
    assert_eq!(
        (t.pairs, t.a_better, t.b_better, t.skipped),
        (4, 0, 4, 3),
        "{t:?}"
    );
    let md = render::markdown(&c);
    assert!(
        md.contains("| int_p99_us | 1 | 4 | 0 | 4 | 0 | 3 |"),
        "{md}"
    );
    assert!(
        md.contains("skipped: pairs where the figure is unknown"),
        "{md}"
    );
}

fn run_with(name: &str, extra: &str, n: u64) -> Run {
    let mut t =
        format!(r#"{{"type":"header","scheduler":"scx_soryu","knobs":{{}}{extra}}}"#) + "\n";
    for i in 0..n {
        t += &(interval(
            i,
            &[
                ("int_over_1ms_pct", json!(1.0)),
                ("duration_s", json!(10.0)),
            ],
        ) + "\n");
    }
    run_text(name, &t)
}

// Before: compare paired runs of different --report-sec, --no-hist with
// hist, other kernels and CPU counts without a word.
#[test]
fn refuses_runs_measured_under_different_conditions() {
    let base = r#","report_sec":10,"hist":true,"kernel":"6.12","nr_cpus":8,"format":11"#;
    for (other, check, want) in [
        (
            r#","report_sec":5,"hist":true,"kernel":"6.12","nr_cpus":8"#,
            Check::ReportSec,
            "--report-sec (the interval length) differs: 10 s in a; 5 s in b",
        ),
        (
            r#","report_sec":10,"hist":false,"kernel":"6.12","nr_cpus":8"#,
            Check::Hist,
            "histograms (--no-hist) differs: off in b; on in a",
        ),
        (
            r#","report_sec":10,"hist":true,"kernel":"6.13","nr_cpus":8"#,
            Check::Kernel,
            "the kernel differs",
        ),
        (
            r#","report_sec":10,"hist":true,"kernel":"6.12","nr_cpus":4"#,
            Check::Cpus,
            "the CPU count differs: 4 CPUs in b; 8 CPUs in a",
        ),
        // a benchmark's header says interval_s
        (
            r#","interval_s":3"#,
            Check::ReportSec,
            "10 s in a; 3 s in b",
        ),
        // format 10 had no cache_hot
        (
            r#","report_sec":10,"hist":true,"kernel":"6.12","nr_cpus":8,"format":10"#,
            Check::Format,
            "the record format differs: format 10 in b; format 11 in a",
        ),
    ] {
        let (a, b) = (run_with("a", base, 8), run_with("b", other, 8));
        let e = err_of(compare(vec![a.clone()], vec![b.clone()], &args()));
        let flag = format!("--allow-mismatch {}", check.flag());
        assert!(e.contains(want) && e.contains(&flag), "{e}");
        // --allow-mismatch of that check compares, and flags the difference
        let mut allow = args();
        allow.allow_mismatch = vec![check];
        let c = compare(vec![a], vec![b], &allow).unwrap();
        let text = render::text(&c);
        assert!(
            text.contains(&format!("MISMATCH ({flag})")) && text.contains(want),
            "{text}"
        );
    }
    // runs that do not say are not judged
    compare(
        vec![run_with("a", base, 8)],
        vec![run_with("b", "", 8)],
        &args(),
    )
    .unwrap();
}

// Before: --allow-mismatch let every difference through at once, so a
// check meant for one (another kernel) hid another (another CPU count).
#[test]
fn allow_mismatch_overrides_one_check_at_a_time() {
    let base = r#","kernel":"6.12","nr_cpus":8"#;
    let other = r#","kernel":"6.13","nr_cpus":4"#;
    let (a, b) = (run_with("a", base, 8), run_with("b", other, 8));
    let e = err_of(compare(
        vec![a.clone()],
        vec![b.clone()],
        &parse_args(&["--allow-mismatch", "kernel"]),
    ));
    assert!(
        e.contains("the CPU count differs") && e.contains("--allow-mismatch cpus"),
        "{e}"
    );
    assert!(!e.contains("the kernel differs"), "{e}");
    // both, repeated or comma-separated
    for argv in [
        &["--allow-mismatch", "kernel", "--allow-mismatch", "cpus"][..],
        &["--allow-mismatch", "kernel,cpus"],
    ] {
        let c = compare(vec![a.clone()], vec![b.clone()], &parse_args(argv)).unwrap();
        assert_eq!(c.mismatches.len(), 2);
    }
    let e = Cli::try_parse_from(["compare", "--allow-mismatch"]);
    assert!(e.is_err(), "a bare --allow-mismatch names no check");
}

// Before: any two format numbers refused each other, so a figure added to
// the records made every older file incomparable.
#[test]
fn a_newer_minor_format_compares_with_an_older_one() {
    let old = r#","format":11"#;
    let new = r#","format":11,"format_minor":1"#;
    let (a, b) = (run_with("a", old, 8), run_with("b", new, 8));
    let c = compare(vec![a], vec![b], &args()).unwrap();
    assert!(
        c.notes
            .iter()
            .any(|n| n.contains("record formats 11.0, 11.1")),
        "{:?}",
        c.notes
    );
    // a figure the older file lacks is skipped, not read as 0
    let mut t = header("{}") + "\n";
    for i in 0..8 {
        t += &(interval(i, &[("int_over_1ms_pct", json!(1.0))]) + "\n");
    }
    let older = run_text("old", &t);
    let mut t = header("{}") + "\n";
    for i in 0..8 {
        t += &(interval(
            i,
            &[("int_over_1ms_pct", json!(1.0)), ("cache_hot", json!(5))],
        ) + "\n");
    }
    let newer = run_text("new", &t);
    let c = compare(
        vec![older],
        vec![newer],
        &parse_args(&["--figure", "int_over_1ms_pct", "--figure", "cache_hot"]),
    )
    .unwrap();
    assert_eq!(c.figures.len(), 1);
    assert!(c
        .notes
        .contains(&"cache_hot skipped: not in A's run".to_string()));
}

// Before: intervals of any length were paired, and a count per interval
// (starve_serve) of a short interval beat that of a long one.
#[test]
fn counts_are_rates_and_lengths_must_match() {
    let run = |name: &str, rows: &[(f64, u64)]| {
        let mut t = header("{}") + "\n";
        for (i, &(d, n)) in rows.iter().enumerate() {
            t += &(interval(
                i as u64,
                &[("duration_s", json!(d)), ("starve_serve", json!(n))],
            ) + "\n");
        }
        run_text(name, &t)
    };
    // A serves 10 per 10 s (1/s); B 6 per 5 s (1.2/s) in its first pairs,
    // then an interval cut to 1 s by a reload in A
    let a = run(
        "a",
        &[
            (10.0, 10),
            (10.0, 10),
            (10.0, 10),
            (10.0, 10),
            (10.0, 10),
            (10.0, 10),
            (10.0, 10),
            (1.0, 1),
            (10.0, 10),
        ],
    );
    let b = run(
        "b",
        &[
            (5.0, 6),
            (5.0, 6),
            (5.0, 6),
            (5.0, 6),
            (5.0, 6),
            (5.0, 6),
            (5.0, 6),
            (10.0, 12),
            (10.0, 12),
        ],
    );
    let mut args = args();
    args.figures = vec!["starve_serve".into()];
    // 5 s against 10 s: not paired at all
    let e = err_of(compare(vec![a.clone()], vec![b.clone()], &args));
    assert!(e.contains("only 1 interval pair(s)"), "{e}");
    args.min_pairs = 1;
    let c = compare(vec![a], vec![b], &args).unwrap();
    assert_eq!((c.pairs_per_round[0], c.dropped_per_round[0]), (1, 7));
    let t = c.figures[0].rounds[0].as_ref().unwrap();
    // the pair left: 10 in 10 s against 12 in 10 s, as rates
    assert_eq!((t.a_better, t.median_ratio), (1, Some(1.0 / 1.2)));
    let text = render::text(&c);
    assert!(text.contains("starve_serve/s"), "{text}");
    assert!(
        text.contains("7 interval pair(s) not compared: their lengths"),
        "{text}"
    );
}

// Before: the output said nothing of the dependence between neighbouring
// intervals, which makes the sign test's p too small.
#[test]
fn the_output_warns_of_dependent_intervals() {
    // A's advantage drifts from large to none over the run: every pair
    // is an A win, and neighbours are alike
    let a = run_of("a", "{}", &pts(&[0.0; 13]));
    let b_vals: Vec<f64> = (0..13).map(|i| 13.0 - i as f64).collect();
    let b = run_of("b", r#"{"x":1}"#, &pts(&b_vals));
    let c = compare(vec![a.clone()], vec![b.clone()], &args()).unwrap();
    let t = c.figures[0].rounds[0].as_ref().unwrap();
    assert!(t.lag1_high(), "{t:?}");
    let text = render::text(&c);
    assert!(
        text.contains("Intervals are not independent samples"),
        "{text}"
    );
    assert!(
        text.contains("lag-1 r above 2/sqrt(pairs)") && text.contains("--block K"),
        "{text}"
    );
    // blocks of 4: 3 blocks, all A, p = 0.25 against the pairs' 4.9e-4
    let mut args = args();
    args.block = Some(4);
    let c = compare(vec![a], vec![b], &args).unwrap();
    let t = c.figures[0].rounds[0].as_ref().unwrap();
    let blk = t.block.as_ref().unwrap();
    assert_eq!((blk.blocks, blk.a_better), (3, 3));
    assert!(close(blk.p, 0.25));
    let text = render::text(&c);
    assert!(
        text.contains("3:0 of 3") && text.contains("read the block p instead"),
        "{text}"
    );
    let j = render::json(&c);
    assert_eq!(j["figures"][0]["rounds"][0]["block"]["blocks"], 3);
}

// Before: a file with a second header was refused; now each start of the
// daemon appends a run, and each run is its own round.
#[test]
fn runs_of_one_file_are_rounds_of_their_own() {
    let file = |knobs: &str, runs: &[&[f64]]| {
        let mut t = String::new();
        for vals in runs {
            t += &(header(knobs) + "\n");
            for (i, v) in vals.iter().enumerate() {
                t += &(interval(i as u64, &[("int_over_1ms_pct", json!(v))]) + "\n");
            }
        }
        t
    };
    let a = parse_runs(
        Path::new("a.jsonl"),
        &file(
            "{}",
            &[&[0.0, 1.0, 1.0, 1.0, 1.0], &[0.0, 1.0, 1.0, 1.0, 1.0], &[]],
        ),
    )
    .unwrap()
    .runs;
    let b = parse_runs(
        Path::new("b.jsonl"),
        &file(
            r#"{"x":1}"#,
            &[&[0.0, 2.0, 2.0, 2.0, 2.0], &[0.0, 2.0, 2.0, 2.0, 2.0]],
        ),
    )
    .unwrap()
    .runs;
    assert_eq!((a.len(), b.len()), (3, 2));
    let c = compare(a, b, &args()).unwrap();
    assert_eq!(c.pairs_per_round, vec![4, 4]);
    let text = render::text(&c);
    assert!(
        text.contains("A = scx_soryu: a.jsonl run 1 of 3 (line 1), a.jsonl run 2 of 3 (line 7)"),
        "{text}"
    );
    assert!(
        text.contains("a.jsonl run 3 of 3 (line 13) has no interval records; left out"),
        "{text}"
    );
}

#[test]
fn skips_a_figure_one_side_lacks() {
    let text = |figs: &[(&str, Value)]| {
        let mut t = header("{}") + "\n";
        for i in 0..7 {
            t += &(interval(i, figs) + "\n");
        }
        t
    };
    let both = [
        ("int_p99_us", json!(1.0)),
        ("ext_throughput_ops_per_s", json!(5.0)),
    ];
    let a = run_text("a", &text(&both));
    let b = run_text("b", &text(&both[1..]));
    let mut args = args();
    args.figures.clear();
    let c = compare(vec![a], vec![b], &args).unwrap();
    let names: Vec<&str> = c.figures.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["ext_throughput_ops_per_s"]);
    assert!(c.figures[0].higher_better);
    assert!(c
        .notes
        .contains(&"int_p99_us skipped: not in B's run".to_string()));
    // a default figure no run carries is left out without a note
    assert!(!c.notes.iter().any(|n| n.contains("int_over_1ms_pct")));
}

#[test]
fn notes_name_the_rounds_a_figure_is_skipped_in() {
    let misses = [None, Some("not in B's run"), Some("not in B's run")];
    let note = skip_note("oth_p99_us", &misses);
    assert_eq!(
        note.as_deref(),
        Some("oth_p99_us skipped: not in B's run in round 2, 3")
    );
    assert_eq!(skip_note("oth_p99_us", &[None, None]), None);
}

#[test]
fn refuses_when_no_figure_is_on_both_sides() {
    let a = run_of("a", "{}", &(0..7).map(|i| (i, 1.0)).collect::<Vec<_>>());
    let mut args = args();
    args.figures = vec!["ext_wake_p99_us".into()];
    let e = err_of(compare(vec![a.clone()], vec![a], &args));
    assert!(
        e.contains("no figure to compare") && e.contains("ext_wake_p99_us skipped"),
        "{e}"
    );
}

#[test]
fn refuses_unknown_figures() {
    let a = run_of("a", "{}", &(0..7).map(|i| (i, 1.0)).collect::<Vec<_>>());
    let mut args = args();
    args.figures = vec!["nonsense".into()];
    let e = err_of(compare(vec![a.clone()], vec![a], &args));
    assert!(e.contains("unknown figure \"nonsense\""), "{e}");
}

#[test]
fn the_default_figures_are_the_tables() {
    let names: Vec<&str> = Fig::compared().map(Fig::name).collect();
    assert_eq!(names.len(), 12, "{names:?}");
    assert!(names.contains(&"int_over_1ms_pct") && names.contains(&"starve_serve"));
}

#[test]
fn output_names_both_configurations_and_the_ratio() {
    let a = run_of(
        "a.jsonl",
        r#"{"k":1}"#,
        &(0..7).map(|i| (i, 1.0)).collect::<Vec<_>>(),
    );
    let b = run_of(
        "b.jsonl",
        r#"{"k":2}"#,
        &(0..7).map(|i| (i, 2.0)).collect::<Vec<_>>(),
    );
    let c = compare(vec![a], vec![b], &args()).unwrap();
    let text = render::text(&c);
    assert!(text.contains("A = scx_soryu {k=1}: a.jsonl"), "{text}");
    assert!(text.contains("B = scx_soryu {k=2}: b.jsonl"), "{text}");
    assert!(
        text.contains("ratio = A / B; < 1 means A is lower"),
        "{text}"
    );
    let md = render::markdown(&c);
    assert!(
        md.contains("| int_over_1ms_pct | 1 | 6 | 6 | 0 | 0 | 0 | 0.0312 | 0.0312 | 0.500 | - |"),
        "{md}"
    );
    let j = render::json(&c);
    assert_eq!(j["figures"][0]["rounds"][0]["a_better"], 6);
    assert_eq!(j["figures"][0]["pooled"]["median_ratio"], 0.5);
    assert!(j["footnotes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f.as_str().unwrap().contains("not independent")));
}

#[test]
fn refuses_mixed_configurations_on_a_side() {
    let a1 = run_of("one.jsonl", r#"{"clear_bitmap":false}"#, &[(0, 1.0)]);
    let a2 = run_of("two.jsonl", r#"{"clear_bitmap":true}"#, &[(0, 1.0)]);
    assert!(same_config(&[a1, a2], "A").is_err());
}

#[test]
fn margin_tests_whether_b_stays_within_it() {
    // B 3% above A (worse: lower is better) in each of 2 x 6 pairs
    let a_vals = [9.0, 10.0, 11.0, 12.0, 10.0, 9.5, 10.5];
    let b_vals: Vec<f64> = a_vals.iter().map(|v| v * 1.03).collect();
    let a = || run_of("a", "{}", &pts(&a_vals));
    let b = || run_of("b", r#"{"x":1}"#, &pts(&b_vals));
    let c = compare(
        vec![a(), a()],
        vec![b(), b()],
        &parse_args(&["--figure", "int_over_1ms_pct", "--margin", "5"]),
    )
    .unwrap();
    let f = &c.figures[0];
    // A is better in every pair, yet B is within 5% in every pair:
    // one-sided p = 1/2^12
    assert_eq!(f.pooled.a_better, 12);
    let m = f.pooled.margin.as_ref().unwrap();
    assert_eq!((m.within, m.beyond), (12, 0));
    assert!(close(m.p, 1.0 / 4096.0));
    let text = render::text(&c);
    assert!(
        text.contains("B within margin") && text.contains("12 of 12"),
        "{text}"
    );
    let v = render::json(&c);
    assert_eq!(v["margin_pct"], 5.0);
    assert_eq!(v["figures"][0]["pooled"]["margin"]["b_within"], 12);
    // within 2% it is not: every pair beyond, p = 1
    let c = compare(
        vec![a(), a()],
        vec![b(), b()],
        &parse_args(&["--figure", "int_over_1ms_pct", "--margin", "2%"]),
    )
    .unwrap();
    let m = c.figures[0].pooled.margin.as_ref().unwrap();
    assert_eq!((m.within, m.beyond, m.p), (0, 12, 1.0));
    // without --margin, no column and no test
    let c = compare(vec![a()], vec![b()], &args()).unwrap();
    assert!(c.figures[0].pooled.margin.is_none());
    assert!(!render::text(&c).contains("B within margin"));
}

#[test]
fn margin_refuses_what_is_not_a_percentage() {
    for bad in ["0", "-5", "100", "five", "nan"] {
        let flag = format!("--margin={bad}");
        let e = Cli::try_parse_from(["compare", flag.as_str()])
            .err()
            .unwrap_or_else(|| panic!("--margin {bad} accepted"))
            .to_string();
        assert!(e.contains("is not a percentage between 0 and 100"), "{e}");
    }
}

// Before: each figure's p stood alone, so with a dozen figures an A/A
// pair showed one "significant" about half the time, and nothing said so.
#[test]
fn holm_adjusts_each_p_for_the_figures_tested_with_it() {
    let run = |name: &str, vals: [f64; 3]| {
        let mut t = header("{}") + "\n";
        for i in 0..7 {
            let figs = [
                ("ext_a_us", json!(vals[0])),
                ("ext_b_us", json!(vals[1])),
                ("ext_c_us", json!(vals[2] + i as f64 % 2.0)),
            ];
            t += &(interval(i, &figs) + "\n");
        }
        run_text(name, &t)
    };
    // ext_a: A lower in all 6 pairs (p = 2/64); ext_b: all ties; ext_c:
    // A lower in all 6 too
    let a = run("a", [1.0, 5.0, 1.0]);
    let b = run("b", [2.0, 5.0, 3.0]);
    let mut args = parse_args(&[]);
    args.figures.clear();
    let c = compare(vec![a], vec![b], &args).unwrap();
    let p: Vec<(f64, f64)> = c
        .figures
        .iter()
        .map(|f| {
            let t = f.rounds[0].as_ref().unwrap();
            (t.p, t.holm_p)
        })
        .collect();
    // sorted 1/32, 1/32, 1: times 3, 2, 1 -> 3/32, then held at 3/32, 1
    assert_eq!(
        p,
        [
            (1.0 / 32.0, 3.0 / 32.0),
            (1.0, 1.0),
            (1.0 / 32.0, 3.0 / 32.0)
        ]
    );
    let text = render::text(&c);
    assert!(text.contains("Holm p"), "{text}");
    assert!(
        text.contains("2 of 3 figure(s) with sign test p < 0.05; 0 after Holm's adjustment for testing 3 at once"),
        "{text}"
    );
    let j = render::json(&c);
    assert_eq!(j["figures"][0]["rounds"][0]["holm_p"], 3.0 / 32.0);
}
