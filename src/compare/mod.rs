// SPDX-License-Identifier: GPL-2.0-only
//
// scx_soryu compare: pair two configurations' --report-json runs interval
// by interval and sign-test every figure.
//
// A run is one --report-json file: a header record naming the configuration
// (scheduler, knobs, optional config label), then one record per interval.
// Round i pairs the i-th A file with the i-th B file; within a round two
// intervals pair when they carry the same index, after each file's first
// --warmup intervals are dropped. For every figure the sign test counts
// which side was better in each pair (ties dropped) and asks how likely so
// lopsided a split would be if neither side were better. The loading code
// here is shared with `scx_soryu plot`.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde_json::{json, Map, Value};

/// Figures compared by default, besides every `ext_*` figure the files carry.
pub const FIGURES: [&str; 12] = [
    "int_over_1ms_pct",
    "int_over_4ms_pct",
    "int_over_16ms_pct",
    "int_p99_us",
    "int_p999_us",
    "int_max_us",
    "oth_over_1ms_pct",
    "oth_p99_us",
    "oth_max_us",
    "probes_mean",
    "starve_serve",
    "preempt_none_pct",
];

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
    after_help = "Round i pairs the i-th -a file with the i-th -b file; a pooled row per \
        figure follows the rounds. Within a round, intervals pair by index once the first \
        --warmup intervals of each file are dropped. All A files must share one \
        configuration (scheduler, knobs, config label), and so must all B files. Lower is \
        better for every figure except ext_* figures ending in _per_s or _ops. The sign test \
        is exact and two-sided, ties dropped; ratio = A / B per pair, < 1 means A is lower."
)]
pub struct CompareArgs {
    /// Two --report-json files: A, then B (one round)
    #[arg(value_name = "FILE", conflicts_with_all = ["a", "b"])]
    pub files: Vec<PathBuf>,

    /// A file of side A; repeat for more rounds
    #[arg(short = 'a', long = "a", value_name = "FILE")]
    pub a: Vec<PathBuf>,

    /// A file of side B; repeat for more rounds
    #[arg(short = 'b', long = "b", value_name = "FILE")]
    pub b: Vec<PathBuf>,

    /// Intervals dropped at the start of every file (the first one includes loading)
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub warmup: usize,

    /// Refuse to compare fewer interval pairs than this, over all rounds
    #[arg(long, default_value_t = 5, value_name = "N")]
    pub min_pairs: usize,

    /// Compare only this figure (repeatable)
    #[arg(long = "figure", value_name = "NAME")]
    pub figures: Vec<String>,

    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

// ---------------------------------------------------------------------------
// Reading --report-json files

/// What a file measured: its identity is (scheduler, knobs, config label).
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub scheduler: String,
    pub knobs: Map<String, Value>,
    pub label: Option<String>,
}

impl Config {
    /// "scx_soryu {clear_bitmap=true ...}", with "[label]" when there is one.
    pub fn name(&self) -> String {
        let mut s = self.scheduler.clone();
        if let Some(label) = &self.label {
            let _ = write!(s, " [{label}]");
        }
        if !self.knobs.is_empty() {
            let knobs: Vec<String> = self.knobs.iter().map(|(k, v)| format!("{k}={v}")).collect();
            let _ = write!(s, " {{{}}}", knobs.join(" "));
        }
        s
    }
}

/// One interval record: its numeric top-level fields, and the interactive
/// class's wake-to-run histogram when the record has one.
#[derive(Debug, Clone)]
pub struct Interval {
    pub index: u64,
    pub figures: BTreeMap<String, f64>,
    pub lat_interactive: Option<Vec<u64>>,
}

/// One --report-json file, its intervals sorted by index.
#[derive(Debug, Clone)]
pub struct Run {
    pub path: PathBuf,
    pub config: Config,
    pub lat_bounds_ns: Option<Vec<u64>>,
    pub intervals: Vec<Interval>,
}

impl Run {
    /// The intervals left once the first `warmup` are dropped.
    pub fn after_warmup(&self, warmup: usize) -> &[Interval] {
        &self.intervals[warmup.min(self.intervals.len())..]
    }
}

/// Read and check one --report-json file.
pub fn load(path: &Path) -> Result<Run> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read --report-json file {}", path.display()))?;
    parse_run(path, &text)
}

/// Check every line of a --report-json file's text; `path` names it in errors.
pub fn parse_run(path: &Path, text: &str) -> Result<Run> {
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l))
        .filter(|(_, l)| !l.trim().is_empty());
    let Some((first_no, first)) = lines.next() else {
        bail!(
            "{} is empty: a --report-json file starts with a header line",
            path.display()
        );
    };
    let at = |no: usize| format!("{} line {no}", path.display());
    let header = parse_line(first).with_context(|| at(first_no))?;
    if record_type(&header) != Some("header") {
        bail!("{}: the first record is not a header (\"type\":\"header\"): is this a --report-json file?", at(first_no));
    }
    let (config, lat_bounds_ns) = parse_header(&header).with_context(|| at(first_no))?;
    let mut run = Run {
        path: path.to_path_buf(),
        config,
        lat_bounds_ns,
        intervals: Vec::new(),
    };
    let mut seen: BTreeMap<u64, usize> = BTreeMap::new();
    for (no, line) in lines {
        let iv = parse_record(line, run.lat_bounds_ns.as_deref()).with_context(|| at(no))?;
        if let Some(prev) = seen.insert(iv.index, no) {
            bail!("{}: interval index {} already appeared on line {prev}; each index must appear once", at(no), iv.index);
        }
        run.intervals.push(iv);
    }
    run.intervals.sort_by_key(|iv| iv.index);
    Ok(run)
}

fn parse_line(line: &str) -> Result<Map<String, Value>> {
    match serde_json::from_str::<Value>(line) {
        Ok(Value::Object(o)) => Ok(o),
        Ok(_) => bail!("not a JSON object"),
        Err(e) => bail!("not valid JSON ({e})"),
    }
}

fn record_type(o: &Map<String, Value>) -> Option<&str> {
    o.get("type").and_then(Value::as_str)
}

fn parse_header(o: &Map<String, Value>) -> Result<(Config, Option<Vec<u64>>)> {
    let Some(scheduler) = o.get("scheduler").and_then(Value::as_str) else {
        bail!("the header has no \"scheduler\" string");
    };
    let knobs = match o.get("knobs") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(k)) => k.clone(),
        Some(_) => bail!("the header's \"knobs\" is not an object"),
    };
    let label = match o.get("config") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => bail!("the header's \"config\" is not a string"),
    };
    let bounds = match o.get("lat_bucket_lower_ns") {
        None | Some(Value::Null) => None,
        Some(v) => Some(u64_array(v).context("the header's \"lat_bucket_lower_ns\"")?),
    };
    let config = Config {
        scheduler: scheduler.to_string(),
        knobs,
        label,
    };
    Ok((config, bounds))
}

/// One record after the header: an interval (anything else is refused).
fn parse_record(line: &str, bounds: Option<&[u64]>) -> Result<Interval> {
    let o = parse_line(line)?;
    match record_type(&o) {
        Some("interval") => parse_interval(&o, bounds),
        Some("header") => bail!("a second header record; give each run its own file"),
        Some(t) => bail!("unknown record type \"{t}\" (expected \"interval\")"),
        None => bail!("the record has no \"type\" string"),
    }
}

fn parse_interval(o: &Map<String, Value>, bounds: Option<&[u64]>) -> Result<Interval> {
    let Some(index) = o.get("index").and_then(Value::as_u64) else {
        bail!("the interval record has no non-negative integer \"index\"");
    };
    let mut figures = BTreeMap::new();
    for (name, v) in o {
        match v {
            Value::Number(n) => {
                let Some(x) = n.as_f64().filter(|x| x.is_finite()) else {
                    bail!("figure \"{name}\" is not a finite number");
                };
                figures.insert(name.clone(), x);
            }
            Value::Null => {}
            _ if is_figure(name) => bail!("figure \"{name}\" is not a number"),
            _ => {}
        }
    }
    let lat_interactive = lat_interactive(o, bounds)?;
    Ok(Interval {
        index,
        figures,
        lat_interactive,
    })
}

fn lat_interactive(o: &Map<String, Value>, bounds: Option<&[u64]>) -> Result<Option<Vec<u64>>> {
    let Some(v) = o.get("hist").and_then(|h| h.get("lat_interactive")) else {
        return Ok(None);
    };
    let counts = u64_array(v).context("\"hist.lat_interactive\"")?;
    if let Some(b) = bounds {
        if b.len() != counts.len() {
            bail!("\"hist.lat_interactive\" has {} buckets but the header's \"lat_bucket_lower_ns\" has {}", counts.len(), b.len());
        }
    }
    Ok(Some(counts))
}

fn u64_array(v: &Value) -> Result<Vec<u64>> {
    let Some(items) = v.as_array() else {
        bail!("is not an array");
    };
    items
        .iter()
        .map(|x| {
            x.as_u64()
                .context("holds a value that is not a non-negative integer")
        })
        .collect()
}

/// Load one side's files, all of one configuration.
pub fn load_side(paths: &[PathBuf], side: &str) -> Result<Vec<Run>> {
    let runs = paths
        .iter()
        .map(|p| load(p))
        .collect::<Result<Vec<Run>>>()?;
    same_config(&runs, side)?;
    Ok(runs)
}

fn same_config(runs: &[Run], side: &str) -> Result<()> {
    let Some(first) = runs.first() else {
        return Ok(());
    };
    if let Some(other) = runs.iter().find(|r| r.config != first.config) {
        bail!(
            "side {side} mixes configurations: {} is {} but {} is {}; give each side files of one configuration",
            first.path.display(),
            first.config.name(),
            other.path.display(),
            other.config.name()
        );
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Figures and their direction

fn is_figure(name: &str) -> bool {
    FIGURES.contains(&name) || name.starts_with("ext_")
}

/// Lower is better, except external rates and counts of work done.
pub fn higher_is_better(name: &str) -> bool {
    name.starts_with("ext_") && (name.ends_with("_per_s") || name.ends_with("_ops"))
}

/// The figures to compare: --figure's, or the default list plus every
/// ext_* figure found in any file.
fn figure_list(wanted: &[String], runs: &[&Run]) -> Result<Vec<String>> {
    if let Some(bad) = wanted.iter().find(|f| !is_figure(f)) {
        bail!(
            "unknown figure \"{bad}\" for --figure: choose from {} or an ext_* figure",
            FIGURES.join(", ")
        );
    }
    if !wanted.is_empty() {
        let mut seen = BTreeSet::new();
        return Ok(wanted.iter().filter(|f| seen.insert(*f)).cloned().collect());
    }
    let ext: BTreeSet<&String> = runs
        .iter()
        .flat_map(|r| &r.intervals)
        .flat_map(|iv| iv.figures.keys())
        .filter(|k| k.starts_with("ext_"))
        .collect();
    Ok(FIGURES
        .iter()
        .map(|s| s.to_string())
        .chain(ext.into_iter().cloned())
        .collect())
}

// ---------------------------------------------------------------------------
// Statistics

/// ln(e^x + e^y) without overflow.
fn ln_add_exp(x: f64, y: f64) -> f64 {
    let (hi, lo) = if x > y { (x, y) } else { (y, x) };
    hi + (lo - hi).exp().ln_1p()
}

/// ln of sum_{i<=k} C(n, i), summed in log space: ln C(n, i) grows by
/// ln((n-i+1)/i) per step.
fn ln_binomial_head(n: u64, k: u64) -> f64 {
    let (mut ln_c, mut acc) = (0.0f64, 0.0f64);
    for i in 1..=k {
        ln_c += ((n - i + 1) as f64).ln() - (i as f64).ln();
        acc = ln_add_exp(acc, ln_c);
    }
    acc
}

/// Exact two-sided sign test of a split of `a` against `b` (ties already
/// dropped): p = min(1, 2 * P(X <= min(a, b))) for X ~ Binomial(a + b, 1/2).
pub fn sign_test_p(a: u64, b: u64) -> f64 {
    let n = a + b;
    if n == 0 {
        return 1.0;
    }
    let ln_p = std::f64::consts::LN_2 * (1.0 - n as f64) + ln_binomial_head(n, a.min(b));
    ln_p.exp().min(1.0)
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    Some(if v.len() % 2 == 1 {
        v[mid]
    } else {
        (v[mid - 1] + v[mid]) / 2.0
    })
}

/// Median of the ratios A/B: 0/0 counts as 1; a pair with B = 0 and A != 0
/// has no finite ratio and is left out (the second value counts them).
pub fn median_ratio(pairs: &[(f64, f64)]) -> (Option<f64>, usize) {
    let ratios: Vec<f64> = pairs
        .iter()
        .filter_map(|&(a, b)| match (a, b) {
            (_, b) if b != 0.0 => Some(a / b),
            (a, _) if a == 0.0 => Some(1.0),
            _ => None,
        })
        .collect();
    let left_out = pairs.len() - ratios.len();
    (median(ratios), left_out)
}

/// One row of the result table.
#[derive(Debug, Clone, PartialEq)]
pub struct Tally {
    pub pairs: usize,
    pub a_better: usize,
    pub b_better: usize,
    pub ties: usize,
    pub p: f64,
    pub median_ratio: Option<f64>,
    pub no_ratio: usize,
}

pub fn tally(pairs: &[(f64, f64)], higher_better: bool) -> Tally {
    let better = |x: f64, y: f64| if higher_better { x > y } else { x < y };
    let a_better = pairs.iter().filter(|&&(a, b)| better(a, b)).count();
    let b_better = pairs.iter().filter(|&&(a, b)| better(b, a)).count();
    let (median_ratio, no_ratio) = median_ratio(pairs);
    Tally {
        pairs: pairs.len(),
        a_better,
        b_better,
        ties: pairs.len() - a_better - b_better,
        p: sign_test_p(a_better as u64, b_better as u64),
        median_ratio,
        no_ratio,
    }
}

// ---------------------------------------------------------------------------
// Pairing and comparing

/// Intervals of two runs with the same index, after warm-up.
fn paired<'r>(a: &'r Run, b: &'r Run, warmup: usize) -> Vec<(&'r Interval, &'r Interval)> {
    let b_by_index: BTreeMap<u64, &Interval> = b
        .after_warmup(warmup)
        .iter()
        .map(|iv| (iv.index, iv))
        .collect();
    a.after_warmup(warmup)
        .iter()
        .filter_map(|ia| b_by_index.get(&ia.index).map(|ib| (ia, *ib)))
        .collect()
}

fn values(pairs: &[(&Interval, &Interval)], figure: &str) -> Vec<(f64, f64)> {
    pairs
        .iter()
        .filter_map(|(a, b)| Some((*a.figures.get(figure)?, *b.figures.get(figure)?)))
        .collect()
}

fn carries(run: &Run, warmup: usize, figure: &str) -> bool {
    run.after_warmup(warmup)
        .iter()
        .any(|iv| iv.figures.contains_key(figure))
}

/// Why a round cannot compare a figure: None when both sides carry it.
fn missing_side(a: &Run, b: &Run, warmup: usize, figure: &str) -> Option<&'static str> {
    match (carries(a, warmup, figure), carries(b, warmup, figure)) {
        (true, true) => None,
        (false, true) => Some("not in A's file"),
        (true, false) => Some("not in B's file"),
        (false, false) => Some("in neither file"),
    }
}

/// A figure's rows: one per round (None when skipped there), then pooled.
#[derive(Debug, Clone)]
pub struct FigureResult {
    pub name: String,
    pub higher_better: bool,
    pub rounds: Vec<Option<Tally>>,
    pub pooled: Tally,
}

#[derive(Debug, Clone)]
pub struct Comparison {
    pub a: Vec<Run>,
    pub b: Vec<Run>,
    pub warmup: usize,
    pub pairs_per_round: Vec<usize>,
    pub figures: Vec<FigureResult>,
    pub notes: Vec<String>,
}

/// Pair, count and test; refuses too few pairs.
pub fn compare(a: Vec<Run>, b: Vec<Run>, args: &CompareArgs) -> Result<Comparison> {
    if a.len() != b.len() {
        bail!("side A has {} file(s) but side B has {}: round i pairs the i-th A file with the i-th B file, so give both sides as many", a.len(), b.len());
    }
    let rounds: Vec<_> = a
        .iter()
        .zip(&b)
        .map(|(ra, rb)| paired(ra, rb, args.warmup))
        .collect();
    let pairs_per_round: Vec<usize> = rounds.iter().map(Vec::len).collect();
    let total: usize = pairs_per_round.iter().sum();
    if total < args.min_pairs {
        bail!("only {total} interval pair(s) after dropping {} warm-up interval(s) per file, fewer than --min-pairs {}: record longer runs or lower --warmup", args.warmup, args.min_pairs);
    }
    let all: Vec<&Run> = a.iter().chain(&b).collect();
    let mut notes = empty_round_notes(&pairs_per_round);
    let mut figures = Vec::new();
    for name in figure_list(&args.figures, &all)? {
        let misses: Vec<Option<&str>> = a
            .iter()
            .zip(&b)
            .map(|(ra, rb)| missing_side(ra, rb, args.warmup, &name))
            .collect();
        // A figure no file carries (soryu's own figures in a benchmark of
        // outside measurements) is not worth a note unless asked for.
        let nowhere = misses.iter().all(|m| *m == Some("in neither file"));
        if nowhere && args.figures.is_empty() {
            continue;
        }
        notes.extend(skip_note(&name, &misses));
        if misses.iter().all(Option::is_some) {
            continue;
        }
        figures.push(figure_result(&name, &rounds, &misses));
    }
    if figures.is_empty() {
        bail!("no figure to compare is on both sides ({}): check the files, or choose others with --figure", notes.join("; "));
    }
    Ok(Comparison {
        a,
        b,
        warmup: args.warmup,
        pairs_per_round,
        figures,
        notes,
    })
}

fn figure_result(
    name: &str,
    rounds: &[Vec<(&Interval, &Interval)>],
    misses: &[Option<&str>],
) -> FigureResult {
    let higher_better = higher_is_better(name);
    let mut pooled = Vec::new();
    let mut per_round = Vec::new();
    for (pairs, miss) in rounds.iter().zip(misses) {
        if miss.is_some() {
            per_round.push(None);
            continue;
        }
        let v = values(pairs, name);
        per_round.push(Some(tally(&v, higher_better)));
        pooled.extend(v);
    }
    FigureResult {
        name: name.to_string(),
        higher_better,
        rounds: per_round,
        pooled: tally(&pooled, higher_better),
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

/// "oth_p99_us skipped: not in B's file in round 1, 2" (None when never skipped).
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

// ---------------------------------------------------------------------------
// Output

fn fmt_p(p: f64) -> String {
    if p >= 0.001 {
        format!("{p:.4}")
    } else {
        format!("{p:.2e}")
    }
}

fn fmt_ratio(r: Option<f64>) -> String {
    r.map_or("-".to_string(), |r| format!("{r:.3}"))
}

const COLUMNS: [&str; 9] = [
    "figure",
    "round",
    "pairs",
    "A better",
    "B better",
    "ties",
    "sign test p",
    "median ratio A/B",
    "no ratio",
];

fn row(figure: &str, round: &str, t: &Tally) -> Vec<String> {
    vec![
        figure.to_string(),
        round.to_string(),
        t.pairs.to_string(),
        t.a_better.to_string(),
        t.b_better.to_string(),
        t.ties.to_string(),
        fmt_p(t.p),
        fmt_ratio(t.median_ratio),
        t.no_ratio.to_string(),
    ]
}

/// Per-round rows, then the pooled row when there is more than one round.
fn rows(c: &Comparison) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for f in &c.figures {
        for (i, t) in f.rounds.iter().enumerate() {
            if let Some(t) = t {
                out.push(row(&f.name, &(i + 1).to_string(), t));
            }
        }
        if f.rounds.len() > 1 {
            out.push(row(&f.name, "pooled", &f.pooled));
        }
    }
    out
}

fn side_line(side: &str, runs: &[Run]) -> String {
    let files: Vec<String> = runs.iter().map(|r| r.path.display().to_string()).collect();
    format!("{side} = {}: {}", runs[0].config.name(), files.join(", "))
}

fn header_lines(c: &Comparison) -> Vec<String> {
    let higher: Vec<&str> = c
        .figures
        .iter()
        .filter(|f| f.higher_better)
        .map(|f| f.name.as_str())
        .collect();
    let mut lines = vec![
        side_line("A", &c.a),
        side_line("B", &c.b),
        format!(
            "{} round(s), {} interval pairs (paired by index, first {} interval(s) of each file dropped)",
            c.a.len(),
            c.pairs_per_round.iter().sum::<usize>(),
            c.warmup
        ),
        "ratio = A / B; < 1 means A is lower. sign test p: exact two-sided binomial, ties dropped".to_string(),
        "no ratio: pairs with B = 0 and A > 0, left out of the median ratio".to_string(),
    ];
    if higher.is_empty() {
        lines.push("A better / B better: lower is better for every figure".to_string());
    } else {
        lines.push(format!(
            "A better / B better: lower is better, except higher for {}",
            higher.join(", ")
        ));
    }
    lines
}

fn text_table(header: &[&str], rows: &[Vec<String>]) -> String {
    let widths: Vec<usize> = (0..header.len())
        .map(|i| {
            rows.iter()
                .map(|r| r[i].len())
                .chain([header[i].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: Vec<&str>| -> String {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (c, w))| {
                if i < 2 {
                    format!("{c:<w$}")
                } else {
                    format!("{c:>w$}")
                }
            })
            .collect();
        padded.join("  ").trim_end().to_string() + "\n"
    };
    let mut s = line(header.to_vec());
    for r in rows {
        s += &line(r.iter().map(String::as_str).collect());
    }
    s
}

fn markdown_table(header: &[&str], rows: &[Vec<String>]) -> String {
    let align: Vec<&str> = (0..header.len())
        .map(|i| if i < 2 { "---" } else { "---:" })
        .collect();
    let mut s = format!("| {} |\n| {} |\n", header.join(" | "), align.join(" | "));
    for r in rows {
        s += &format!("| {} |\n", r.join(" | "));
    }
    s
}

pub fn render_text(c: &Comparison) -> String {
    let mut s = header_lines(c).join("\n") + "\n\n";
    s += &text_table(&COLUMNS, &rows(c));
    for n in &c.notes {
        s += &format!("note: {n}\n");
    }
    s
}

pub fn render_markdown(c: &Comparison) -> String {
    let mut s: String = header_lines(c).iter().map(|l| format!("- {l}\n")).collect();
    s += "\n";
    s += &markdown_table(&COLUMNS, &rows(c));
    if !c.notes.is_empty() {
        s += "\n";
        s += &c
            .notes
            .iter()
            .map(|n| format!("- note: {n}\n"))
            .collect::<String>();
    }
    s
}

fn tally_json(t: &Tally) -> Value {
    json!({
        "pairs": t.pairs,
        "a_better": t.a_better,
        "b_better": t.b_better,
        "ties": t.ties,
        "sign_test_p": t.p,
        "median_ratio": t.median_ratio,
        "no_ratio": t.no_ratio,
    })
}

fn side_json(runs: &[Run]) -> Value {
    let c = &runs[0].config;
    json!({
        "scheduler": c.scheduler,
        "knobs": c.knobs,
        "config": c.label,
        "files": runs.iter().map(|r| r.path.display().to_string()).collect::<Vec<_>>(),
    })
}

pub fn render_json(c: &Comparison) -> Value {
    let figures: Vec<Value> = c
        .figures
        .iter()
        .map(|f| {
            json!({
                "figure": f.name,
                "better": if f.higher_better { "higher" } else { "lower" },
                "rounds": f.rounds.iter().map(|t| t.as_ref().map(tally_json)).collect::<Vec<_>>(),
                "pooled": tally_json(&f.pooled),
            })
        })
        .collect();
    json!({
        "a": side_json(&c.a),
        "b": side_json(&c.b),
        "warmup": c.warmup,
        "pairs_per_round": c.pairs_per_round,
        "ratio": "A / B",
        "sign_test": "exact two-sided binomial, ties dropped",
        "figures": figures,
        "notes": c.notes,
    })
}

// ---------------------------------------------------------------------------

/// The A and B files from the command line.
fn sides(args: &CompareArgs) -> Result<(Vec<PathBuf>, Vec<PathBuf>)> {
    if args.a.is_empty() && args.b.is_empty() {
        if args.files.len() != 2 {
            bail!("give two --report-json files (A then B), or rounds with -a FILE -b FILE; got {} file(s)", args.files.len());
        }
        return Ok((vec![args.files[0].clone()], vec![args.files[1].clone()]));
    }
    if args.a.len() != args.b.len() {
        bail!("-a was given {} time(s) and -b {}: round i pairs the i-th -a file with the i-th -b file, so give both as often", args.a.len(), args.b.len());
    }
    Ok((args.a.clone(), args.b.clone()))
}

pub fn run(args: &CompareArgs) -> Result<()> {
    let (a_paths, b_paths) = sides(args)?;
    let a = load_side(&a_paths, "A")?;
    let b = load_side(&b_paths, "B")?;
    let c = compare(a, b, args)?;
    match args.format {
        Format::Text => print!("{}", render_text(&c)),
        Format::Markdown => print!("{}", render_markdown(&c)),
        Format::Json => println!("{}", serde_json::to_string_pretty(&render_json(&c))?),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(knobs: &str) -> String {
        format!(r#"{{"type":"header","scheduler":"scx_soryu","knobs":{knobs}}}"#)
    }

    fn interval(index: u64, figures: &[(&str, f64)]) -> String {
        let mut o = Map::new();
        o.insert("type".into(), json!("interval"));
        o.insert("index".into(), json!(index));
        for (k, v) in figures {
            o.insert(k.to_string(), json!(v));
        }
        Value::Object(o).to_string()
    }

    /// A run whose intervals carry int_over_1ms_pct only.
    fn run_of(name: &str, knobs: &str, points: &[(u64, f64)]) -> Run {
        let mut text = header(knobs) + "\n";
        for &(i, v) in points {
            text += &(interval(i, &[("int_over_1ms_pct", v)]) + "\n");
        }
        parse_run(Path::new(name), &text).unwrap()
    }

    fn args() -> CompareArgs {
        CompareArgs {
            files: vec![],
            a: vec![],
            b: vec![],
            warmup: 1,
            min_pairs: 5,
            figures: vec!["int_over_1ms_pct".into()],
            format: Format::Text,
        }
    }

    fn err_of<T: std::fmt::Debug>(r: Result<T>) -> String {
        format!("{:#}", r.unwrap_err())
    }

    fn close(got: f64, want: f64) -> bool {
        (got - want).abs() <= 1e-9 * want.abs()
    }

    // Expected values are exact binomial sums, 2 * sum_{i<=k} C(n,i) / 2^n,
    // worked out with integer arithmetic (Python's math.comb and Fraction).
    #[test]
    fn sign_test_matches_exact_binomial_sums() {
        // n=10, k=0: 2 / 1024.
        assert_eq!(sign_test_p(0, 10), 0.001953125);
        assert_eq!(sign_test_p(10, 0), 0.001953125);
        // n=5, k=0: 2 / 32.
        assert!(close(sign_test_p(5, 0), 0.0625));
        // n=34 split 31/3: 2 * 6580 / 2^34 (docs: about 7.7e-07).
        assert!(close(sign_test_p(31, 3), 7.660128176212311e-07));
        // n=68 split 63/5: 2 * 11290976 / 2^68 (about 7.7e-14).
        assert!(close(sign_test_p(63, 5), 7.651062942926057e-14));
        // The splits in docs/knob-clear-bitmap.md: p = 0.058, 0.024, 0.008.
        assert!(close(sign_test_p(23, 11), 0.05761267291381955));
        assert!(close(sign_test_p(24, 10), 0.024306510109454393));
        assert!(close(sign_test_p(46, 23), 0.007620521855025697));
        // An even split of an odd n sums past one half: clamped to 1.
        assert_eq!(sign_test_p(4, 5), 1.0);
    }

    #[test]
    fn sign_test_without_pairs_is_one() {
        assert_eq!(sign_test_p(0, 0), 1.0);
    }

    #[test]
    fn sign_test_stays_finite_for_large_n() {
        assert!((sign_test_p(5000, 5000) - 1.0).abs() < 1e-9);
        // n=10000 split 6000/4000: ln p = -204.37594012433692 (p ~ 1.74e-89).
        let p = sign_test_p(6000, 4000);
        assert!(p > 0.0 && p.is_finite());
        assert!((p.ln() - -204.37594012433692).abs() < 1e-6);
    }

    #[test]
    fn tally_drops_ties_and_follows_direction() {
        let pairs = [(1.0, 2.0), (1.0, 2.0), (3.0, 3.0), (3.0, 3.0), (5.0, 4.0)];
        let lower = tally(&pairs, false);
        assert_eq!(
            (lower.pairs, lower.a_better, lower.b_better, lower.ties),
            (5, 2, 1, 2)
        );
        // n = 3 (ties dropped), k = 1: 2 * (1 + 3) / 8, clamped to 1.
        assert_eq!(lower.p, 1.0);
        let higher = tally(&pairs, true);
        assert_eq!((higher.a_better, higher.b_better, higher.ties), (1, 2, 2));
    }

    #[test]
    fn median_ratio_handles_zero_denominators() {
        // 0/0 counts as 1, 2/0 is left out: ratios 1, 0.5, 3.
        assert_eq!(
            median_ratio(&[(0.0, 0.0), (2.0, 0.0), (1.0, 2.0), (3.0, 1.0)]),
            (Some(1.0), 1)
        );
        // Even count: mean of the two middle ratios.
        assert_eq!(median_ratio(&[(1.0, 2.0), (3.0, 2.0)]), (Some(1.0), 0));
        assert_eq!(median_ratio(&[(1.0, 0.0), (2.0, 0.0)]), (None, 2));
        assert_eq!(median_ratio(&[]), (None, 0));
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
        let pts = |vals: &[f64]| {
            vals.iter()
                .enumerate()
                .map(|(i, &v)| (i as u64, v))
                .collect::<Vec<_>>()
        };
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
        assert!(render_text(&c).contains("pooled"));
    }

    #[test]
    fn refuses_too_few_pairs() {
        let a = run_of("a", "{}", &(0..5).map(|i| (i, 1.0)).collect::<Vec<_>>());
        let b = run_of("b", "{}", &(0..5).map(|i| (i, 1.0)).collect::<Vec<_>>());
        let e = err_of(compare(vec![a], vec![b], &args()));
        assert!(
            e.contains("only 4 interval pair(s)") && e.contains("--warmup"),
            "{e}"
        );
    }

    #[test]
    fn refuses_unequal_rounds() {
        let a = run_of("a", "{}", &[(0, 1.0)]);
        let e = err_of(compare(vec![a.clone(), a.clone()], vec![a], &args()));
        assert!(e.contains("side A has 2 file(s) but side B has 1"), "{e}");
    }

    #[test]
    fn refuses_mixed_configurations() {
        let a1 = run_of("one.jsonl", r#"{"clear_bitmap":false}"#, &[(0, 1.0)]);
        let a2 = run_of("two.jsonl", r#"{"clear_bitmap":true}"#, &[(0, 1.0)]);
        let e = err_of(same_config(&[a1.clone(), a2], "A"));
        assert!(
            e.contains("one.jsonl") && e.contains("clear_bitmap=false"),
            "{e}"
        );
        assert!(
            e.contains("two.jsonl") && e.contains("clear_bitmap=true"),
            "{e}"
        );
        assert!(same_config(&[a1.clone(), a1], "A").is_ok());
    }

    #[test]
    fn config_label_is_part_of_the_identity() {
        let plain = r#"{"type":"header","scheduler":"eevdf","knobs":{}}"#;
        let labelled = r#"{"type":"header","scheduler":"eevdf","config":"hz1000"}"#;
        let p = parse_run(Path::new("p"), plain).unwrap();
        let l = parse_run(Path::new("l"), labelled).unwrap();
        assert_ne!(p.config, l.config);
        assert_eq!(l.config.name(), "eevdf [hz1000]");
    }

    #[test]
    fn refuses_malformed_files() {
        let h = header("{}");
        let cases = [
            (String::new(), "f is empty"),
            (
                interval(0, &[]),
                "f line 1: the first record is not a header",
            ),
            (
                format!("{h}\n{{\"type\":\"interval\""),
                "f line 2: not valid JSON",
            ),
            (format!("{h}\n\n[1]"), "f line 3: not a JSON object"),
            (
                format!("{h}\n{{\"type\":\"interval\"}}"),
                "no non-negative integer \"index\"",
            ),
            (format!("{h}\n{{\"index\":0}}"), "no \"type\" string"),
            (
                format!("{h}\n{{\"type\":\"summary\"}}"),
                "unknown record type \"summary\"",
            ),
            (format!("{h}\n{h}"), "f line 2: a second header record"),
            (
                format!("{h}\n{}\n{}", interval(3, &[]), interval(3, &[])),
                "index 3 already appeared on line 2",
            ),
            (
                format!("{h}\n{{\"type\":\"interval\",\"index\":0,\"int_p99_us\":\"x\"}}"),
                "\"int_p99_us\" is not a number",
            ),
            (
                r#"{"type":"header"}"#.to_string(),
                "no \"scheduler\" string",
            ),
        ];
        for (text, want) in cases {
            let e = err_of(parse_run(Path::new("f"), &text));
            assert!(e.contains(want), "{e:?} should contain {want:?}");
        }
    }

    #[test]
    fn refuses_histogram_of_the_wrong_length() {
        let text = r#"{"type":"header","scheduler":"s","lat_bucket_lower_ns":[0,1024,2048]}
{"type":"interval","index":0,"hist":{"lat_interactive":[1,2]}}"#;
        let e = err_of(parse_run(Path::new("f"), text));
        assert!(
            e.contains("f line 2") && e.contains("has 2 buckets") && e.contains("has 3"),
            "{e}"
        );
    }

    #[test]
    fn skips_a_figure_one_side_lacks() {
        let text = |figs: &[(&str, f64)]| {
            let mut t = header("{}") + "\n";
            for i in 0..7 {
                t += &(interval(i, figs) + "\n");
            }
            t
        };
        let both = [("int_p99_us", 1.0), ("ext_throughput_ops_per_s", 5.0)];
        let a = parse_run(Path::new("a"), &text(&both)).unwrap();
        let b = parse_run(Path::new("b"), &text(&both[1..])).unwrap();
        let mut args = args();
        args.figures.clear();
        let c = compare(vec![a], vec![b], &args).unwrap();
        let names: Vec<&str> = c.figures.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["ext_throughput_ops_per_s"]);
        assert!(c.figures[0].higher_better);
        assert!(c
            .notes
            .contains(&"int_p99_us skipped: not in B's file".to_string()));
        // a default figure no file carries is left out without a note
        assert!(!c.notes.iter().any(|n| n.contains("int_over_1ms_pct")));
    }

    #[test]
    fn notes_name_the_rounds_a_figure_is_skipped_in() {
        let misses = [None, Some("not in B's file"), Some("not in B's file")];
        let note = skip_note("oth_p99_us", &misses);
        assert_eq!(
            note.as_deref(),
            Some("oth_p99_us skipped: not in B's file in round 2, 3")
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
        let text = render_text(&c);
        assert!(text.contains("A = scx_soryu {k=1}: a.jsonl"), "{text}");
        assert!(text.contains("B = scx_soryu {k=2}: b.jsonl"), "{text}");
        assert!(
            text.contains("ratio = A / B; < 1 means A is lower"),
            "{text}"
        );
        assert!(render_markdown(&c)
            .contains("| int_over_1ms_pct | 1 | 6 | 6 | 0 | 0 | 0.0312 | 0.500 | 0 |"));
        let j = render_json(&c);
        assert_eq!(j["figures"][0]["rounds"][0]["a_better"], 6);
        assert_eq!(j["figures"][0]["pooled"]["median_ratio"], 0.5);
    }
}
