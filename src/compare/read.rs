// SPDX-License-Identifier: GPL-2.0-only
//
// Reading --report-json files into runs, for compare and plot. A file holds
// one or more runs: each header record starts one (the daemon appends a
// header at every start), and the interval and exit records after it
// belong to it. Every line is checked; an error names the file and line.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use anyhow::{bail, Context, Result};
use serde_json::Value;

use crate::record::{ExitRecord, Header, IntervalRecord, Record};
use crate::stats::Metrics;

/// What a run measured: its identity is (scheduler, knobs, config label).
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub scheduler: String,
    pub knobs: BTreeMap<String, Value>,
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

/// One run: a header and the records after it, up to the next header.
#[derive(Debug, Clone)]
pub struct Run {
    pub path: PathBuf,
    /// 1-based position among the runs of its file, and how many there are.
    pub number: usize,
    pub of: usize,
    /// The header's line.
    pub line: usize,
    pub header: Header,
    pub config: Config,
    /// Sorted by index.
    pub intervals: Vec<IntervalRecord>,
    pub exits: Vec<ExitRecord>,
}

impl Run {
    /// The file, and which run of it when it holds several.
    pub fn name(&self) -> String {
        if self.of == 1 {
            self.path.display().to_string()
        } else {
            format!(
                "{} run {} of {} (line {})",
                self.path.display(),
                self.number,
                self.of,
                self.line
            )
        }
    }

    /// The intervals left once the first `warmup` are dropped.
    pub fn after_warmup(&self, warmup: usize) -> &[IntervalRecord] {
        &self.intervals[warmup.min(self.intervals.len())..]
    }

    pub fn lat_bounds_ns(&self) -> Option<&[u64]> {
        self.header.lat_bucket_lower_ns.as_deref()
    }
}

/// soryu's figure names: the fields of stats::Metrics.
pub fn metrics_figures() -> &'static BTreeSet<String> {
    static NAMES: OnceLock<BTreeSet<String>> = OnceLock::new();
    NAMES.get_or_init(|| match serde_json::to_value(Metrics::default()) {
        Ok(Value::Object(o)) => o.keys().cloned().collect(),
        _ => BTreeSet::new(),
    })
}

/// A name compare can compare: one of soryu's figures or an outside
/// measurement (ext_*).
pub fn is_figure(name: &str) -> bool {
    name.starts_with("ext_") || metrics_figures().contains(name)
}

/// Read and check one --report-json file: its runs, in file order.
pub fn load(path: &Path) -> Result<Vec<Run>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read --report-json file {}", path.display()))?;
    parse_runs(path, &text)
}

/// Check every line of a --report-json file's text; `path` names it in
/// errors.
pub fn parse_runs(path: &Path, text: &str) -> Result<Vec<Run>> {
    let at = |no: usize| format!("{} line {no}", path.display());
    let mut runs: Vec<Run> = Vec::new();
    let mut seen: BTreeMap<u64, usize> = BTreeMap::new();
    for (no, line) in text.lines().enumerate().map(|(i, l)| (i + 1, l)) {
        if line.trim().is_empty() {
            continue;
        }
        let rec = parse_record(line).with_context(|| at(no))?;
        match (rec, runs.last_mut()) {
            (Record::Header(header), _) => {
                seen.clear();
                runs.push(new_run(path, no, header).with_context(|| at(no))?);
            }
            (_, None) => bail!(
                "{}: the first record is not a header (\"type\":\"header\"): is this a --report-json file?",
                at(no)
            ),
            (Record::Interval(iv), Some(run)) => {
                check_interval(&iv, run.lat_bounds_ns()).with_context(|| at(no))?;
                if let Some(prev) = seen.insert(iv.index, no) {
                    bail!(
                        "{}: interval index {} already appeared on line {prev} in this run; each index must appear once per run",
                        at(no),
                        iv.index
                    );
                }
                run.intervals.push(iv);
            }
            (Record::Exit(e), Some(run)) => run.exits.push(e),
        }
    }
    if runs.is_empty() {
        bail!(
            "{} is empty: a --report-json file starts with a header line",
            path.display()
        );
    }
    let of = runs.len();
    for (i, run) in runs.iter_mut().enumerate() {
        run.number = i + 1;
        run.of = of;
        run.intervals.sort_by_key(|iv| iv.index);
    }
    Ok(runs)
}

fn new_run(path: &Path, line: usize, header: Header) -> Result<Run> {
    if header.scheduler.is_empty() {
        bail!("the header has no \"scheduler\" string");
    }
    let config = Config {
        scheduler: header.scheduler.clone(),
        knobs: header.knobs.clone(),
        label: header.config.clone(),
    };
    Ok(Run {
        path: path.to_path_buf(),
        number: 0,
        of: 0,
        line,
        header,
        config,
        intervals: Vec::new(),
        exits: Vec::new(),
    })
}

/// One line as a record, with errors that name what is wrong.
fn parse_record(line: &str) -> Result<Record> {
    let v = match serde_json::from_str::<Value>(line) {
        Ok(v @ Value::Object(_)) => v,
        Ok(_) => bail!("not a JSON object"),
        Err(e) => bail!("not valid JSON ({e})"),
    };
    let kind = match v.get("type") {
        Some(Value::String(t)) => t.clone(),
        _ => bail!("the record has no \"type\" string"),
    };
    match kind.as_str() {
        "header" => {
            if !v.get("scheduler").is_some_and(Value::is_string) {
                bail!("the header has no \"scheduler\" string");
            }
        }
        "interval" => {
            if !v.get("index").is_some_and(Value::is_u64) {
                bail!("the interval record has no non-negative integer \"index\"");
            }
            if let Some((name, _)) = v
                .as_object()
                .into_iter()
                .flatten()
                .find(|(k, x)| is_figure(k) && !(x.is_number() || x.is_null()))
            {
                bail!("figure \"{name}\" is neither a number nor null");
            }
        }
        "exit" => {}
        t => bail!("unknown record type \"{t}\" (expected \"header\", \"interval\" or \"exit\")"),
    }
    serde_json::from_value(v).with_context(|| format!("a malformed \"{kind}\" record"))
}

fn check_interval(iv: &IntervalRecord, bounds: Option<&[u64]>) -> Result<()> {
    let (Some(h), Some(b)) = (&iv.hist, bounds) else {
        return Ok(());
    };
    for (name, counts) in [
        ("lat_interactive", &h.lat_interactive),
        ("lat_other", &h.lat_other),
    ] {
        if !counts.is_empty() && counts.len() != b.len() {
            bail!(
                "\"hist.{name}\" has {} buckets but the header's \"lat_bucket_lower_ns\" has {}",
                counts.len(),
                b.len()
            );
        }
    }
    Ok(())
}

/// Load one side's files: their runs in order (a file's runs one after
/// the other), all of one configuration.
pub fn load_side(paths: &[PathBuf], side: &str) -> Result<Vec<Run>> {
    let mut runs = Vec::new();
    for p in paths {
        runs.extend(load(p)?);
    }
    same_config(&runs, side)?;
    Ok(runs)
}

pub fn same_config(runs: &[Run], side: &str) -> Result<()> {
    let Some(first) = runs.first() else {
        return Ok(());
    };
    if let Some(other) = runs.iter().find(|r| r.config != first.config) {
        bail!(
            "side {side} mixes configurations: {} is {} but {} is {}; give each side runs of one configuration",
            first.name(),
            first.config.name(),
            other.name(),
            other.config.name()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err_of<T: std::fmt::Debug>(r: Result<T>) -> String {
        format!("{:#}", r.unwrap_err())
    }

    const H: &str = r#"{"type":"header","scheduler":"scx_soryu","knobs":{}}"#;

    fn iv(index: u64) -> String {
        format!(r#"{{"type":"interval","index":{index},"int_p99_us":1.5}}"#)
    }

    #[test]
    fn config_label_is_part_of_the_identity() {
        let plain = r#"{"type":"header","scheduler":"eevdf","knobs":{}}"#;
        let labelled = r#"{"type":"header","scheduler":"eevdf","config":"hz1000"}"#;
        let p = &parse_runs(Path::new("p"), plain).unwrap()[0];
        let l = &parse_runs(Path::new("l"), labelled).unwrap()[0];
        assert_ne!(p.config, l.config);
        assert_eq!(l.config.name(), "eevdf [hz1000]");
    }

    // Before: a second header was refused ("give each run its own file"),
    // while the daemon now appends a run per start.
    #[test]
    fn each_header_starts_a_run() {
        let text = [H, &iv(0), &iv(1), r#"{"type":"exit","kind":1024,"kind_name":"error","error":true,"exit_code":0,"restart":false,"intervals":2}"#, H, &iv(0)]
            .join("\n");
        let runs = parse_runs(Path::new("f.jsonl"), &text).unwrap();
        assert_eq!(runs.len(), 2);
        assert_eq!((runs[0].intervals.len(), runs[0].exits.len()), (2, 1));
        assert_eq!((runs[1].intervals.len(), runs[1].line), (1, 5));
        assert_eq!(runs[1].name(), "f.jsonl run 2 of 2 (line 5)");
        // an index may repeat in another run, not in the same one
        let e = err_of(parse_runs(Path::new("f"), &[H, &iv(3), &iv(3)].join("\n")));
        assert!(
            e.contains("f line 3") && e.contains("already appeared on line 2"),
            "{e}"
        );
    }

    #[test]
    fn refuses_malformed_files() {
        let cases = [
            (String::new(), "f is empty"),
            (iv(0), "f line 1: the first record is not a header"),
            (
                format!("{H}\n{{\"type\":\"interval\""),
                "f line 2: not valid JSON",
            ),
            (format!("{H}\n\n[1]"), "f line 3: not a JSON object"),
            (
                format!("{H}\n{{\"type\":\"interval\"}}"),
                "no non-negative integer \"index\"",
            ),
            (format!("{H}\n{{\"index\":0}}"), "no \"type\" string"),
            (
                format!("{H}\n{{\"type\":\"summary\"}}"),
                "unknown record type \"summary\"",
            ),
            (
                format!("{H}\n{{\"type\":\"interval\",\"index\":0,\"int_p99_us\":\"x\"}}"),
                "\"int_p99_us\" is neither a number nor null",
            ),
            (
                r#"{"type":"header"}"#.to_string(),
                "no \"scheduler\" string",
            ),
            (
                format!("{H}\n{{\"type\":\"exit\",\"kind\":\"x\"}}"),
                "f line 2: a malformed \"exit\" record",
            ),
        ];
        for (text, want) in cases {
            let e = err_of(parse_runs(Path::new("f"), &text));
            assert!(e.contains(want), "{e:?} should contain {want:?}");
        }
    }

    #[test]
    fn null_figures_read_as_unknown() {
        let text = format!(
            "{H}\n{{\"type\":\"interval\",\"index\":0,\"int_p99_us\":null,\"note\":\"x\"}}"
        );
        let run = &parse_runs(Path::new("f"), &text).unwrap()[0];
        use crate::record::Figure;
        assert_eq!(run.intervals[0].figure("int_p99_us"), Figure::Unknown);
        assert_eq!(run.intervals[0].figure("int_p50_us"), Figure::Absent);
    }

    #[test]
    fn refuses_histogram_of_the_wrong_length() {
        let text = r#"{"type":"header","scheduler":"s","lat_bucket_lower_ns":[0,1024,2048]}
{"type":"interval","index":0,"hist":{"lat_interactive":[1,2]}}"#;
        let e = err_of(parse_runs(Path::new("f"), text));
        assert!(
            e.contains("f line 2") && e.contains("has 2 buckets") && e.contains("has 3"),
            "{e}"
        );
    }

    #[test]
    fn refuses_mixed_configurations() {
        let run = |name: &str, knobs: &str| {
            let h = format!(r#"{{"type":"header","scheduler":"scx_soryu","knobs":{knobs}}}"#);
            parse_runs(Path::new(name), &h).unwrap().remove(0)
        };
        let a1 = run("one.jsonl", r#"{"clear_bitmap":false}"#);
        let a2 = run("two.jsonl", r#"{"clear_bitmap":true}"#);
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
}
