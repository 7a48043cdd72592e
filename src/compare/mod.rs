// SPDX-License-Identifier: GPL-2.0-only
//
// scx_soryu compare: pair two configurations' --report-json runs interval
// by interval and sign-test every figure.
//
// Reading the files is read.rs (the library's), the statistics
// signtest.rs, the output render.rs, the command itself tool.rs; this file
// checks that the runs can be compared, pairs them and counts. A run is
// one header of a --report-json file and the records after it (a file
// holds one run per start of the daemon). Round i pairs the i-th run of
// side A with the i-th run of side B, runs counted across the side's files
// in the order given; within a round two intervals pair when they carry
// the same index, after each run's first --warmup intervals are dropped.
// For every figure the sign test counts which side was better in each pair
// (ties dropped, unknown values skipped) and asks how likely so lopsided a
// split would be if neither side were better; Holm's adjustment then says
// how likely so small a p is among all the figures tested. With --margin
// it also asks whether B stays within that margin of A.

pub mod render;
pub mod signtest;
pub mod tool;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use anyhow::{bail, Result};

use signtest::{holm, margin_test, tally, Tally};

use crate::figures::Fig;
use crate::read::{ext_figures, Run};
use crate::record::{FigName, Figure, IntervalRecord, FORMAT};

/// Two intervals whose lengths differ by more than this factor (the longer
/// over the shorter) are not paired: one of them was cut short (a reload)
/// or ran long.
pub const MAX_DURATION_RATIO: f64 = 1.25;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// An aligned text table
    Text,
    /// A GitHub table
    Markdown,
    /// One JSON object with every number
    Json,
}

#[derive(Debug, Clone, clap::Args)]
#[command(
    override_usage = "scx_soryu compare [OPTIONS] A.jsonl B.jsonl\n       \
        scx_soryu compare [OPTIONS] -a A1.jsonl -b B1.jsonl [-a A2.jsonl -b B2.jsonl ...]",
    after_help = "Every header in a file starts a run (the daemon appends one per start). \
        Round i pairs the i-th run of side A with the i-th run of side B, runs counted across \
        a side's files in the order given; runs without interval records are left out. A \
        pooled row per figure follows the rounds. Within a round, intervals pair by index once \
        the first --warmup intervals of each run are dropped, and not when their lengths \
        differ by more than 25%. All A runs must share one configuration (scheduler, knobs, \
        config label), and so must all B runs; runs that differ in --report-sec, --no-hist, \
        record format (its major version), kernel or CPU count are refused unless \
        --allow-mismatch names that check. Lower is better for every \
        figure except ext_* figures ending in _per_s or _ops; counts per interval (e.g. \
        starve_serve) are compared per second. The sign test is exact and two-sided, ties \
        dropped, unknown (null) values skipped; ratio = A / B per pair, < 1 means A is lower. \
        Holm p adjusts each p for the number of figures tested together. Consecutive \
        intervals are not independent: see the lag-1 r column and --block."
)]
pub struct CompareArgs {
    /// Two --report-json files: A, then B
    #[arg(value_name = "FILE", conflicts_with_all = ["a", "b"])]
    pub files: Vec<PathBuf>,

    /// A file of side A; repeat for more rounds
    #[arg(short = 'a', long = "a", value_name = "FILE")]
    pub a: Vec<PathBuf>,

    /// A file of side B; repeat for more rounds
    #[arg(short = 'b', long = "b", value_name = "FILE")]
    pub b: Vec<PathBuf>,

    /// Intervals dropped at the start of every run (the first one includes loading)
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub warmup: usize,

    /// Refuse to compare fewer interval pairs than this, over all rounds (6 is the
    /// fewest with which p < 0.05 can be reached at all)
    #[arg(long, default_value_t = 6, value_name = "N")]
    pub min_pairs: usize,

    /// Compare only this figure (repeatable)
    #[arg(long = "figure", value_name = "NAME")]
    pub figures: Vec<String>,

    /// Also sign-test blocks of K consecutive interval pairs (each block votes by
    /// majority), a check against dependence between neighbouring intervals
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u64).range(2..))]
    pub block: Option<u64>,

    /// Also test whether B is worse than A by at most PCT percent per pair (a
    /// one-sided non-inferiority sign test), e.g. --margin 5: "B within 5% of A"
    #[arg(long, value_name = "PCT", value_parser = parse_margin)]
    pub margin: Option<f64>,

    /// Compare runs that differ in this one respect, printing the difference
    /// instead of refusing (repeatable; the others are still checked)
    #[arg(long, value_name = "CHECK", value_enum, value_delimiter = ',')]
    pub allow_mismatch: Vec<Check>,

    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

/// --margin: a percentage above 0 and below 100.
fn parse_margin(s: &str) -> std::result::Result<f64, String> {
    match s.trim_end_matches('%').parse::<f64>() {
        Ok(p) if p > 0.0 && p < 100.0 => Ok(p),
        _ => Err(format!(
            "'{s}' is not a percentage between 0 and 100 (e.g. --margin 5)"
        )),
    }
}

/// The figures to compare: --figure's, or the default list plus every
/// ext_* figure found in any run.
fn figure_list(wanted: &[String], runs: &[&Run]) -> Result<Vec<FigName>> {
    if !wanted.is_empty() {
        let mut out: Vec<FigName> = Vec::new();
        for w in wanted {
            let Some(f) = FigName::parse(w) else {
                let defaults: Vec<&str> = Fig::compared().map(Fig::name).collect();
                bail!(
                    "unknown figure \"{w}\" for --figure: choose a field of soryu's interval records (e.g. {}) or an ext_* figure",
                    defaults.join(", ")
                );
            };
            if !out.contains(&f) {
                out.push(f);
            }
        }
        return Ok(out);
    }
    Ok(Fig::compared()
        .map(FigName::Soryu)
        .chain(
            ext_figures(runs.iter().copied())
                .into_iter()
                .map(FigName::Ext),
        )
        .collect())
}

// ---------------------------------------------------------------------------
// What may be compared with what

/// A check of what may be compared with what; --allow-mismatch names one
/// to override.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum)]
pub enum Check {
    /// The interval length (--report-sec)
    ReportSec,
    /// Histograms on or off (--no-hist)
    Hist,
    /// The record format's major version
    Format,
    /// The kernel release
    Kernel,
    /// The number of CPUs
    Cpus,
}

impl Check {
    /// As --allow-mismatch takes it.
    pub fn flag(self) -> &'static str {
        match self {
            Check::ReportSec => "report-sec",
            Check::Hist => "hist",
            Check::Format => "format",
            Check::Kernel => "kernel",
            Check::Cpus => "cpus",
        }
    }
}

/// One difference between runs that makes their intervals measure
/// different things.
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    pub check: Check,
    pub what: String,
}

/// Differences between runs that make their intervals measure different
/// things, one per check. Runs that do not say are not judged.
pub fn mismatches(runs: &[&Run]) -> Vec<Mismatch> {
    let mut out = Vec::new();
    let mut check = |c: Check, what: &str, value: &dyn Fn(&Run) -> Option<String>| {
        let mut by: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for r in runs {
            if let Some(v) = value(r) {
                by.entry(v).or_default().push(r.name());
            }
        }
        if by.len() > 1 {
            let parts: Vec<String> = by
                .iter()
                .map(|(v, names)| format!("{v} in {}", names.join(", ")))
                .collect();
            out.push(Mismatch {
                check: c,
                what: format!("{what} differs: {}", parts.join("; ")),
            });
        }
    };
    check(
        Check::ReportSec,
        "--report-sec (the interval length)",
        &|r| r.header.report_sec.map(|s| format!("{s} s")),
    );
    check(Check::Hist, "histograms (--no-hist)", &|r| {
        r.header
            .hist
            .map(|h| if h { "on" } else { "off" }.to_string())
    });
    // Formats before 11 changed what figures mean; from 11 on a field is
    // only ever added (a minor version), and a figure a file lacks is
    // skipped, never read as 0.
    check(Check::Format, "the record format", &|r| {
        r.header.format.map(|f| format!("format {f}"))
    });
    check(Check::Kernel, "the kernel", &|r| r.header.kernel.clone());
    check(Check::Cpus, "the CPU count", &|r| {
        r.header.nr_cpus.map(|n| format!("{n} CPUs"))
    });
    out
}

/// Runs of one major format whose minor versions differ: fine to compare,
/// worth a note.
fn minor_note(runs: &[&Run]) -> Option<String> {
    let minors: BTreeSet<String> = runs
        .iter()
        .filter(|r| r.header.format == Some(FORMAT))
        .map(|r| format!("{FORMAT}.{}", r.header.format_minor.unwrap_or(0)))
        .collect();
    (minors.len() > 1).then(|| {
        format!(
            "the runs are of record formats {}: a figure added since is skipped where a run lacks it",
            minors.into_iter().collect::<Vec<_>>().join(", ")
        )
    })
}

/// Notes on the builds: different versions, debug builds.
fn build_notes(runs: &[&Run]) -> Vec<String> {
    let versions: BTreeSet<&str> = runs
        .iter()
        .filter_map(|r| r.header.version.as_deref())
        .collect();
    let mut notes = Vec::new();
    if versions.len() > 1 {
        notes.push(format!(
            "the runs come from different builds: {}",
            versions.into_iter().collect::<Vec<_>>().join(", ")
        ));
    }
    let debug: Vec<String> = runs
        .iter()
        .filter(|r| {
            r.header
                .version
                .as_deref()
                .is_some_and(|v| v.ends_with("/debug"))
        })
        .map(|r| r.name())
        .collect();
    if !debug.is_empty() {
        notes.push(format!(
            "from a debug build (a slower daemon): {}",
            debug.join(", ")
        ));
    }
    notes
}

// ---------------------------------------------------------------------------
// Pairing and comparing

/// The interval pairs of one round.
#[derive(Debug, Clone)]
pub struct Round<'r> {
    pub pairs: Vec<(&'r IntervalRecord, &'r IntervalRecord)>,
    /// Pairs not made because the two intervals' lengths differ too much.
    pub dropped: usize,
}

fn duration(iv: &IntervalRecord) -> Option<f64> {
    match iv.get(Fig::duration_s) {
        Figure::Value(d) if d > 0.0 => Some(d),
        _ => None,
    }
}

/// Intervals of two runs with the same index, after warm-up, whose lengths
/// are comparable.
fn paired<'r>(a: &'r Run, b: &'r Run, warmup: usize) -> Round<'r> {
    let b_by_index: BTreeMap<u64, &IntervalRecord> = b
        .after_warmup(warmup)
        .iter()
        .map(|iv| (iv.index, iv))
        .collect();
    let mut round = Round {
        pairs: Vec::new(),
        dropped: 0,
    };
    for ia in a.after_warmup(warmup) {
        let Some(&ib) = b_by_index.get(&ia.index) else {
            continue;
        };
        match (duration(ia), duration(ib)) {
            (Some(da), Some(db)) if da.max(db) / da.min(db) > MAX_DURATION_RATIO => {
                round.dropped += 1
            }
            _ => round.pairs.push((ia, ib)),
        }
    }
    round
}

/// A figure's values in each pair, in interval order, and how many pairs
/// were skipped (unknown or missing on a side; for a count, no length).
fn values(round: &Round, figure: &FigName) -> (Vec<(f64, f64)>, usize) {
    let rate = figure.per_second();
    let one = |iv: &IntervalRecord| match iv.figure(figure) {
        Figure::Value(x) if rate => duration(iv).map(|d| x / d),
        Figure::Value(x) => Some(x),
        Figure::Absent | Figure::Unknown => None,
    };
    let mut out = Vec::new();
    for (a, b) in &round.pairs {
        if let (Some(x), Some(y)) = (one(a), one(b)) {
            out.push((x, y));
        }
    }
    let skipped = round.pairs.len() - out.len();
    (out, skipped)
}

fn carries(run: &Run, warmup: usize, figure: &FigName) -> bool {
    run.after_warmup(warmup)
        .iter()
        .any(|iv| iv.figure(figure) != Figure::Absent)
}

/// Why a round cannot compare a figure: None when both sides carry it.
fn missing_side(a: &Run, b: &Run, warmup: usize, figure: &FigName) -> Option<&'static str> {
    match (carries(a, warmup, figure), carries(b, warmup, figure)) {
        (true, true) => None,
        (false, true) => Some("not in A's run"),
        (true, false) => Some("not in B's run"),
        (false, false) => Some("in neither run"),
    }
}

/// A figure's rows: one per round (None when skipped there), then pooled.
#[derive(Debug, Clone)]
pub struct FigureResult {
    pub name: FigName,
    pub higher_better: bool,
    /// A count, compared per second of interval.
    pub per_second: bool,
    pub rounds: Vec<Option<Tally>>,
    pub pooled: Tally,
}

#[derive(Debug, Clone)]
pub struct Comparison {
    pub a: Vec<Run>,
    pub b: Vec<Run>,
    pub warmup: usize,
    pub block: Option<usize>,
    /// --margin, in percent.
    pub margin: Option<f64>,
    pub pairs_per_round: Vec<usize>,
    /// Per round, pairs not made because their lengths differ too much.
    pub dropped_per_round: Vec<usize>,
    pub figures: Vec<FigureResult>,
    /// Differences between the runs, compared anyway (--allow-mismatch).
    pub mismatches: Vec<Mismatch>,
    pub notes: Vec<String>,
}

/// Leave out runs without a single interval record (a start that failed
/// before its first report), with a note for each.
fn drop_empty(runs: Vec<Run>, side: &str, notes: &mut Vec<String>) -> Vec<Run> {
    let (kept, empty): (Vec<Run>, Vec<Run>) =
        runs.into_iter().partition(|r| !r.intervals.is_empty());
    for r in empty {
        notes.push(format!(
            "side {side}: {} has no interval records; left out of the rounds",
            r.name()
        ));
    }
    kept
}

fn run_list(runs: &[Run]) -> String {
    runs.iter().map(Run::name).collect::<Vec<_>>().join(", ")
}

/// Check, pair, count and test.
pub fn compare(a: Vec<Run>, b: Vec<Run>, args: &CompareArgs) -> Result<Comparison> {
    let mut notes = Vec::new();
    let a = drop_empty(a, "A", &mut notes);
    let b = drop_empty(b, "B", &mut notes);
    if a.len() != b.len() {
        bail!("side A has {} run(s) ({}) but side B has {} ({}): round i pairs the i-th run of A with the i-th run of B, so give both sides as many (every header in a file starts a run)", a.len(), run_list(&a), b.len(), run_list(&b));
    }
    let all: Vec<&Run> = a.iter().chain(&b).collect();
    let mismatches = mismatches(&all);
    let refused: Vec<String> = mismatches
        .iter()
        .filter(|m| !args.allow_mismatch.contains(&m.check))
        .map(|m| {
            format!(
                "{}; pass --allow-mismatch {} to compare anyway",
                m.what,
                m.check.flag()
            )
        })
        .collect();
    if !refused.is_empty() {
        bail!(
            "these runs measured under different conditions: {}; compare like with like",
            refused.join("; ")
        );
    }
    notes.extend(minor_note(&all));
    notes.extend(build_notes(&all));
    let rounds: Vec<Round> = a
        .iter()
        .zip(&b)
        .map(|(ra, rb)| paired(ra, rb, args.warmup))
        .collect();
    let pairs_per_round: Vec<usize> = rounds.iter().map(|r| r.pairs.len()).collect();
    let dropped_per_round: Vec<usize> = rounds.iter().map(|r| r.dropped).collect();
    let total: usize = pairs_per_round.iter().sum();
    if total < args.min_pairs {
        bail!("only {total} interval pair(s) after dropping {} warm-up interval(s) per run, fewer than --min-pairs {}: record longer runs or lower --warmup", args.warmup, args.min_pairs);
    }
    let dropped: usize = dropped_per_round.iter().sum();
    if dropped > 0 {
        notes.push(format!(
            "{dropped} interval pair(s) not compared: their lengths (duration_s) differ by more than {:.0}% (an interval cut short by a reload, or a late report)",
            (MAX_DURATION_RATIO - 1.0) * 100.0
        ));
    }
    notes.extend(empty_round_notes(&pairs_per_round));
    let block = args.block.map(|k| k as usize);
    let mut figures = Vec::new();
    for name in figure_list(&args.figures, &all)? {
        let misses: Vec<Option<&str>> = a
            .iter()
            .zip(&b)
            .map(|(ra, rb)| missing_side(ra, rb, args.warmup, &name))
            .collect();
        // A figure no run carries (soryu's own figures in a benchmark of
        // outside measurements) is not worth a note unless asked for.
        let nowhere = misses.iter().all(|m| *m == Some("in neither run"));
        if nowhere && args.figures.is_empty() {
            continue;
        }
        notes.extend(skip_note(name.as_str(), &misses));
        if misses.iter().all(Option::is_some) {
            continue;
        }
        figures.push(figure_result(&name, &rounds, &misses, block, args.margin));
    }
    if figures.is_empty() {
        bail!("no figure to compare is on both sides ({}): check the files, or choose others with --figure", notes.join("; "));
    }
    adjust_for_many(&mut figures);
    Ok(Comparison {
        a,
        b,
        warmup: args.warmup,
        block,
        margin: args.margin,
        pairs_per_round,
        dropped_per_round,
        figures,
        mismatches,
        notes,
    })
}

fn figure_result(
    name: &FigName,
    rounds: &[Round],
    misses: &[Option<&str>],
    block: Option<usize>,
    margin: Option<f64>,
) -> FigureResult {
    let higher_better = name.higher_is_better();
    let with_margin = |mut t: Tally, pairs: &[Vec<(f64, f64)>]| {
        let all: Vec<(f64, f64)> = pairs.iter().flatten().copied().collect();
        t.margin = margin.map(|pct| margin_test(&all, higher_better, pct / 100.0));
        t
    };
    let (mut pooled, mut pooled_skipped) = (Vec::new(), 0);
    let mut per_round = Vec::new();
    for (round, miss) in rounds.iter().zip(misses) {
        if miss.is_some() {
            per_round.push(None);
            continue;
        }
        let (v, skipped) = values(round, name);
        let one = std::slice::from_ref(&v);
        per_round.push(Some(with_margin(
            tally(one, higher_better, skipped, block),
            one,
        )));
        pooled.push(v);
        pooled_skipped += skipped;
    }
    FigureResult {
        name: name.clone(),
        higher_better,
        per_second: name.per_second(),
        rounds: per_round,
        pooled: with_margin(
            tally(&pooled, higher_better, pooled_skipped, block),
            &pooled,
        ),
    }
}

fn empty_round_notes(pairs_per_round: &[usize]) -> Vec<String> {
    pairs_per_round
        .iter()
        .enumerate()
        .filter(|(_, &n)| n == 0)
        .map(|(i, _)| {
            format!(
                "round {}: no interval index after warm-up is on both sides",
                i + 1
            )
        })
        .collect()
}

/// "oth_p99_us skipped: not in B's run in round 1, 2" (None when never skipped).
fn skip_note(name: &str, misses: &[Option<&str>]) -> Option<String> {
    let mut by_reason: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for (i, m) in misses.iter().enumerate() {
        if let Some(reason) = m {
            by_reason
                .entry(reason)
                .or_default()
                .push((i + 1).to_string());
        }
    }
    if by_reason.is_empty() {
        return None;
    }
    let parts: Vec<String> = by_reason
        .iter()
        .map(|(reason, r)| match misses.len() {
            1 => reason.to_string(),
            _ => format!("{reason} in round {}", r.join(", ")),
        })
        .collect();
    Some(format!("{name} skipped: {}", parts.join("; ")))
}

/// Holm's adjustment of every row's p for the figures tested with it:
/// each round's rows are one family, the pooled rows another. The sign
/// test's p and, with --margin, the margin test's p.
fn adjust_for_many(figures: &mut [FigureResult]) {
    let rounds = figures.first().map_or(0, |f| f.rounds.len());
    let mut families: Vec<Vec<&mut Tally>> = (0..=rounds).map(|_| Vec::new()).collect();
    for f in figures.iter_mut() {
        for (i, t) in f.rounds.iter_mut().enumerate() {
            if let Some(t) = t {
                families[i].push(t);
            }
        }
        families[rounds].push(&mut f.pooled);
    }
    for family in &mut families {
        let ps: Vec<f64> = family.iter().map(|t| t.p).collect();
        for (t, h) in family.iter_mut().zip(holm(&ps)) {
            t.holm_p = h;
        }
        let margins: Vec<f64> = family
            .iter()
            .filter_map(|t| t.margin.as_ref().map(|m| m.p))
            .collect();
        let mut adjusted = holm(&margins).into_iter();
        for t in family.iter_mut() {
            if let (Some(m), Some(h)) = (t.margin.as_mut(), adjusted.next()) {
                m.holm_p = h;
            }
        }
    }
}

#[cfg(test)]
mod tests;
