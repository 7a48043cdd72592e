// SPDX-License-Identifier: GPL-2.0-only
//
// compare's output: an aligned text table, a GitHub table, or one JSON
// object. Each says what was compared, how to read it, and where the sign
// test's answer is weaker than it looks.

use serde_json::{json, Value};

use super::signtest::{one_sided_p, pairs_needed, BlockTest, MarginTest, Tally, ALPHA};
use super::{Comparison, FigureResult, MAX_DURATION_RATIO};
use crate::read::Run;

/// Marks a p that cannot be below ALPHA with this few untied pairs.
const UNREACHABLE: &str = "^";
/// Marks a lag-1 autocorrelation too high for independent pairs.
const DEPENDENT: &str = "!";

fn fmt_p(p: f64) -> String {
    if p >= 0.001 {
        format!("{p:.4}")
    } else {
        format!("{p:.2e}")
    }
}

fn fmt_ratio(r: Option<f64>) -> String {
    match r {
        None => "-".to_string(),
        Some(r) if r.is_infinite() => "inf".to_string(),
        Some(r) => format!("{r:.3}"),
    }
}

fn columns(c: &Comparison) -> Vec<&'static str> {
    let mut cols = vec![
        "figure",
        "round",
        "pairs",
        "A better",
        "B better",
        "ties",
        "skipped",
        "sign test p",
        "Holm p",
        "median ratio A/B",
        "lag-1 r",
    ];
    if c.block.is_some() {
        cols.extend(["blocks A:B", "block p"]);
    }
    if c.margin.is_some() {
        cols.extend(["B within margin", "margin p", "margin Holm p"]);
    }
    cols
}

fn figure_label(f: &FigureResult) -> String {
    if f.per_second {
        format!("{}/s", f.name.as_str())
    } else {
        f.name.as_str().to_string()
    }
}

fn row(figure: &str, round: &str, t: &Tally, block: bool, margin: bool) -> Vec<String> {
    let mut p = fmt_p(t.p);
    if t.unreachable() {
        p += UNREACHABLE;
    }
    let mut lag = t.lag1.map_or("-".to_string(), |r| format!("{r:.2}"));
    if t.lag1_high() {
        lag += DEPENDENT;
    }
    let mut r = vec![
        figure.to_string(),
        round.to_string(),
        t.pairs.to_string(),
        t.a_better.to_string(),
        t.b_better.to_string(),
        t.ties.to_string(),
        t.skipped.to_string(),
        p,
        fmt_p(t.holm_p),
        fmt_ratio(t.median_ratio),
        lag,
    ];
    if block {
        match &t.block {
            Some(b) => r.extend([
                format!("{}:{} of {}", b.a_better, b.b_better, b.blocks),
                fmt_p(b.p) + if min_p_blocks(b) { UNREACHABLE } else { "" },
            ]),
            None => r.extend(["-".to_string(), "-".to_string()]),
        }
    }
    if margin {
        match &t.margin {
            Some(m) => r.extend([
                format!("{} of {}", m.within, m.within + m.beyond),
                fmt_p(m.p)
                    + if margin_unreachable(m) {
                        UNREACHABLE
                    } else {
                        ""
                    },
                fmt_p(m.holm_p),
            ]),
            None => r.extend(["-".to_string(), "-".to_string(), "-".to_string()]),
        }
    }
    r
}

/// A one-sided p reaches below ALPHA with one pair fewer than a two-sided
/// one; this many untied pairs cannot get there.
fn margin_unreachable(m: &MarginTest) -> bool {
    one_sided_p(0, (m.within + m.beyond) as u64) >= ALPHA
}

fn min_p_blocks(b: &BlockTest) -> bool {
    ((b.a_better + b.b_better) as u64) < pairs_needed()
}

/// Per-round rows, then the pooled row when there is more than one round.
fn rows(c: &Comparison) -> Vec<Vec<String>> {
    let (block, margin) = (c.block.is_some(), c.margin.is_some());
    let mut out = Vec::new();
    for f in &c.figures {
        let label = figure_label(f);
        for (i, t) in f.rounds.iter().enumerate() {
            if let Some(t) = t {
                out.push(row(&label, &(i + 1).to_string(), t, block, margin));
            }
        }
        if f.rounds.len() > 1 {
            out.push(row(&label, "pooled", &f.pooled, block, margin));
        }
    }
    out
}

fn all_tallies(c: &Comparison) -> impl Iterator<Item = &Tally> {
    c.figures
        .iter()
        .flat_map(|f| f.rounds.iter().flatten().chain([&f.pooled]))
}

fn side_line(side: &str, runs: &[Run]) -> String {
    let names: Vec<String> = runs.iter().map(Run::name).collect();
    format!("{side} = {}: {}", runs[0].config.name(), names.join(", "))
}

fn header_lines(c: &Comparison) -> Vec<String> {
    let higher: Vec<&str> = c
        .figures
        .iter()
        .filter(|f| f.higher_better)
        .map(|f| f.name.as_str())
        .collect();
    let n = c.figures.len();
    let mut lines = vec![
        side_line("A", &c.a),
        side_line("B", &c.b),
        format!(
            "{} round(s), {} interval pairs (paired by index within a round, first {} interval(s) of each run dropped, lengths within {:.0}% of each other)",
            c.a.len(),
            c.pairs_per_round.iter().sum::<usize>(),
            c.warmup,
            (MAX_DURATION_RATIO - 1.0) * 100.0
        ),
        "ratio = A / B; < 1 means A is lower. sign test p: exact two-sided binomial, ties dropped".to_string(),
        "median ratio: over every pair, 0/0 = 1, x/0 = inf, 0/x = 0; for an even count the geometric mean of the middle two".to_string(),
        "skipped: pairs where the figure is unknown (null: e.g. no wakeups of that class in the interval) or missing on a side".to_string(),
        if n == 1 {
            "Holm p: the sign test p adjusted for the figures tested together; with one figure, the p itself".to_string()
        } else {
            format!(
                "Holm p: the sign test p adjusted (Holm) for the {n} figures tested together, per round and over the pooled rows; below {ALPHA} it says this figure differs even counting the chance that one of {n} does by luck, which the raw p does not (with {n} independent figures and no difference at all, some raw p falls below {ALPHA} in {:.0}% of comparisons)",
                100.0 * (1.0 - (1.0 - ALPHA).powi(n as i32))
            )
        },
    ];
    if higher.is_empty() {
        lines.push("A better / B better: lower is better for every figure".to_string());
    } else {
        lines.push(format!(
            "A better / B better: lower is better, except higher for {}",
            higher.join(", ")
        ));
    }
    if c.figures.iter().any(|f| f.per_second) {
        lines.push(
            "name/s: a count per interval, compared per second of its interval (count / duration_s)"
                .to_string(),
        );
    }
    for m in &c.mismatches {
        lines.push(format!(
            "MISMATCH (--allow-mismatch {}): {}",
            m.check.flag(),
            m.what
        ));
    }
    lines
}

/// How many figures are below ALPHA, raw and adjusted: over the pooled
/// rows when there is more than one round, else the round's.
fn below_alpha(c: &Comparison) -> String {
    let rows: Vec<&Tally> = c
        .figures
        .iter()
        .filter_map(|f| match f.rounds.as_slice() {
            [one] => one.as_ref(),
            _ => Some(&f.pooled),
        })
        .collect();
    let raw = rows.iter().filter(|t| t.p < ALPHA).count();
    let held = rows.iter().filter(|t| t.holm_p < ALPHA).count();
    format!(
        "{} of {} figure(s) with sign test p < {ALPHA}{}; {held} after Holm's adjustment for testing {} at once",
        raw,
        rows.len(),
        if c.figures.iter().any(|f| f.rounds.len() > 1) {
            " (pooled rows)"
        } else {
            ""
        },
        rows.len()
    )
}

/// The lines under the table: how many figures differ, what the markers
/// mean, and the limits of the sign test.
fn footnotes(c: &Comparison) -> Vec<String> {
    let mut lines = vec![below_alpha(c)];
    if all_tallies(c).any(Tally::unreachable) {
        lines.push(format!(
            "{UNREACHABLE} p < {ALPHA} is out of reach here: with n untied pairs the smallest two-sided p is 2/2^n, so it takes n >= {}",
            pairs_needed()
        ));
    }
    if all_tallies(c).any(Tally::lag1_high) {
        lines.push(format!(
            "{DEPENDENT} lag-1 r above 2/sqrt(pairs): neighbouring intervals move together here, so the sign test's p is too small{}",
            if c.block.is_some() {
                "; read the block p instead"
            } else {
                "; check it with --block K"
            }
        ));
    }
    if let Some(pct) = c.margin {
        lines.push(format!(
            "B within margin: the pairs in which B was worse than A by less than {pct}% (lower-is-better: B < A x {f:.4}; higher-is-better: B x {f:.4} > A), of the pairs not on the margin exactly; margin p: one-sided sign test of the hypothesis that B is worse by {pct}% or more, so p < {ALPHA} says B is within {pct}% of A; {UNREACHABLE} after a margin p: out of reach with this few pairs (one-sided, the smallest p is 1/2^n, so it takes n >= 5); margin Holm p: the margin p adjusted for the figures tested, as Holm p is",
            f = 1.0 + pct / 100.0
        ));
    }
    lines.push("Intervals are not independent samples: neighbouring intervals share drift, bursts and queued work, and the sign test assumes independent pairs, so its p is optimistic when they are correlated. lag-1 r: autocorrelation of the ranked A-B differences between consecutive pairs of a round (near 0 when independent). --block K sign-tests blocks of K consecutive pairs instead.".to_string());
    lines
}

fn text_table(header: &[&str], rows: &[Vec<String>]) -> String {
    let widths: Vec<usize> = (0..header.len())
        .map(|i| {
            rows.iter()
                .map(|r| r[i].chars().count())
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

pub fn text(c: &Comparison) -> String {
    let mut s = header_lines(c).join("\n") + "\n\n";
    s += &text_table(&columns(c), &rows(c));
    s += "\n";
    for l in footnotes(c) {
        s += &format!("{l}\n");
    }
    for n in &c.notes {
        s += &format!("note: {n}\n");
    }
    s
}

pub fn markdown(c: &Comparison) -> String {
    let mut s: String = header_lines(c).iter().map(|l| format!("- {l}\n")).collect();
    s += "\n";
    s += &markdown_table(&columns(c), &rows(c));
    s += "\n";
    for l in footnotes(c) {
        s += &format!("{}\n\n", l.replace('^', "\\^"));
    }
    for n in &c.notes {
        s += &format!("- note: {n}\n");
    }
    s
}

/// A ratio in JSON: a number, "inf", or null when undefined.
fn ratio_json(r: Option<f64>) -> Value {
    match r {
        Some(r) if r.is_infinite() => json!("inf"),
        Some(r) => json!(r),
        None => Value::Null,
    }
}

fn tally_json(t: &Tally) -> Value {
    let mut v = json!({
        "pairs": t.pairs,
        "a_better": t.a_better,
        "b_better": t.b_better,
        "ties": t.ties,
        "skipped": t.skipped,
        "sign_test_p": t.p,
        "holm_p": t.holm_p,
        "min_p": t.min_p,
        "p_below_alpha_reachable": !t.unreachable(),
        "median_ratio": ratio_json(t.median_ratio),
        "lag1_r": t.lag1,
        "lag1_high": t.lag1_high(),
    });
    if let Some(m) = &t.margin {
        v["margin"] = json!({
            "margin_pct": m.margin * 100.0,
            "b_within": m.within,
            "b_beyond": m.beyond,
            "ties": m.ties,
            "one_sided_p": m.p,
            "holm_p": m.holm_p,
        });
    }
    if let Some(b) = &t.block {
        v["block"] = json!({
            "k": b.k,
            "blocks": b.blocks,
            "a_better": b.a_better,
            "b_better": b.b_better,
            "sign_test_p": b.p,
        });
    }
    v
}

fn side_json(runs: &[Run]) -> Value {
    let c = &runs[0].config;
    json!({
        "scheduler": c.scheduler,
        "knobs": c.knobs,
        "config": c.label,
        "runs": runs.iter().map(Run::name).collect::<Vec<_>>(),
    })
}

pub fn json(c: &Comparison) -> Value {
    let figures: Vec<Value> = c
        .figures
        .iter()
        .map(|f| {
            json!({
                "figure": f.name.as_str(),
                "per_second": f.per_second,
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
        "pairs_dropped_for_length": c.dropped_per_round,
        "ratio": "A / B",
        "sign_test": "exact two-sided binomial, ties dropped, unknown values skipped",
        "alpha": ALPHA,
        "block": c.block,
        "margin_pct": c.margin,
        "figures": figures,
        "holm": "each row's p adjusted (Holm) for the figures tested together: per round, and over the pooled rows",
        "mismatches": c.mismatches.iter().map(|m| json!({"check": m.check.flag(), "what": m.what})).collect::<Vec<_>>(),
        "notes": c.notes,
        "footnotes": footnotes(c),
    })
}
