// SPDX-License-Identifier: GPL-2.0-only
//
// Reading --report-json files into runs, for compare and plot. A file holds
// one or more runs: each header record starts one (the daemon appends a
// header at every start), and the interval and exit records after it
// belong to it. Every line is checked; a line that is not a valid record
// (a torn last line of a file still being written, a line cut or garbled)
// is skipped and counted, and the reader says which, instead of refusing
// the whole file. Records before the first header (a file that logrotate's
// copytruncate emptied while the daemon kept appending) are read as a run
// of unknown configuration, with a note.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde_json::Value;

use crate::record::{ExitRecord, FigName, Header, IntervalRecord, Record};

/// What a run measured: its identity is (scheduler, knobs, config label).
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub scheduler: String,
    pub knobs: BTreeMap<String, Value>,
    pub label: Option<String>,
}

/// The scheduler name of a run whose header is not in the file.
pub const NO_HEADER: &str = "(no header)";

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
    /// The header's line (of the first record, for a run without one).
    pub line: usize,
    pub header: Header,
    /// Its records came before any header: what produced them is unknown.
    pub headerless: bool,
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

/// The runs of one file, and what the reader has to say about it.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub runs: Vec<Run>,
    /// Lines skipped: (line number, why).
    pub skipped: Vec<(usize, String)>,
    /// Lines in the file that hold anything.
    pub lines: usize,
}

impl Loaded {
    /// One line per thing the reader did not take as it stood.
    pub fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        let path = self.runs.first().map(|r| r.path.display().to_string());
        let path = path.unwrap_or_default();
        if !self.skipped.is_empty() {
            let shown: Vec<String> = self
                .skipped
                .iter()
                .take(3)
                .map(|(no, why)| format!("line {no} ({why})"))
                .collect();
            let more = match self.skipped.len() {
                n if n > 3 => format!(" and {} more", n - 3),
                _ => String::new(),
            };
            notes.push(format!(
                "{path}: {} of {} lines skipped, torn or invalid: {}{more}",
                self.skipped.len(),
                self.lines,
                shown.join("; ")
            ));
        }
        if let Some(r) = self.runs.first().filter(|r| r.headerless) {
            notes.push(format!(
                "{path} starts without a header (cut by logrotate's copytruncate?): its first {} interval record(s) are read as a run of unknown configuration",
                r.intervals.len()
            ));
        }
        notes
    }
}

/// Read and check one --report-json file: its runs, in file order.
pub fn load(path: &Path) -> Result<Loaded> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read --report-json file {}", path.display()))?;
    parse_runs(path, &text)
}

/// Check every line of a --report-json file's text; `path` names it in
/// notes and errors.
pub fn parse_runs(path: &Path, text: &str) -> Result<Loaded> {
    let mut runs: Vec<Run> = Vec::new();
    let mut skipped = Vec::new();
    let mut seen: BTreeMap<u64, usize> = BTreeMap::new();
    let mut lines = 0;
    for (no, line) in text.lines().enumerate().map(|(i, l)| (i + 1, l)) {
        if line.trim().is_empty() {
            continue;
        }
        lines += 1;
        let rec = match parse_record(line) {
            Ok(r) => r,
            Err(e) => {
                skipped.push((no, format!("{e:#}")));
                continue;
            }
        };
        if let Record::Header(header) = rec {
            seen.clear();
            runs.push(new_run(path, no, header, false));
            continue;
        }
        if runs.is_empty() {
            runs.push(new_run(path, no, Header::default(), true));
        }
        let run = runs.last_mut().expect("a run was started above");
        match rec {
            Record::Interval(iv) => {
                if let Err(e) = check_interval(&iv, run.lat_bounds_ns()) {
                    skipped.push((no, format!("{e:#}")));
                    continue;
                }
                if let Some(prev) = seen.insert(iv.index, no) {
                    skipped.push((
                        no,
                        format!(
                            "interval index {} already on line {prev} of this run",
                            iv.index
                        ),
                    ));
                    continue;
                }
                run.intervals.push(iv);
            }
            Record::Exit(e) => run.exits.push(e),
            Record::Header(_) => unreachable!("a header starts a run above"),
        }
    }
    if lines == 0 {
        bail!(
            "{} is empty: a --report-json file starts with a header line",
            path.display()
        );
    }
    if runs.is_empty() {
        bail!(
            "{}: none of its {lines} lines is a --report-json record (line {}: {}): is this a --report-json file?",
            path.display(),
            skipped[0].0,
            skipped[0].1
        );
    }
    let of = runs.len();
    for (i, run) in runs.iter_mut().enumerate() {
        run.number = i + 1;
        run.of = of;
        run.intervals.sort_by_key(|iv| iv.index);
    }
    Ok(Loaded {
        runs,
        skipped,
        lines,
    })
}

fn new_run(path: &Path, line: usize, header: Header, headerless: bool) -> Run {
    let config = Config {
        scheduler: if headerless {
            NO_HEADER.to_string()
        } else {
            header.scheduler.clone()
        },
        knobs: header.knobs.clone(),
        label: header.config.clone(),
    };
    Run {
        path: path.to_path_buf(),
        number: 0,
        of: 0,
        line,
        header,
        headerless,
        config,
        intervals: Vec::new(),
        exits: Vec::new(),
    }
}

/// One line as a record, with errors that name what is wrong.
fn parse_record(line: &str) -> Result<Record> {
    let v = match serde_json::from_str::<Value>(line) {
        Ok(v @ Value::Object(_)) => v,
        Ok(_) => bail!("not a JSON object"),
        Err(e) => bail!("not valid JSON: {e}"),
    };
    let kind = match v.get("type") {
        Some(Value::String(t)) => t.clone(),
        _ => bail!("no \"type\" string"),
    };
    match kind.as_str() {
        "header" => {
            if v.get("scheduler")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
            {
                bail!("a header without a \"scheduler\" string");
            }
        }
        "interval" => {
            if !v.get("index").is_some_and(Value::is_u64) {
                bail!("an interval record without a non-negative integer \"index\"");
            }
            if let Some((name, _)) = v
                .as_object()
                .into_iter()
                .flatten()
                .find(|(k, x)| FigName::parse(k).is_some() && !(x.is_number() || x.is_null()))
            {
                bail!("figure \"{name}\" is neither a number nor null");
            }
        }
        "exit" => {}
        t => bail!("unknown record type \"{t}\""),
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
/// the other), all of one configuration, and the reader's notes.
pub fn load_side(paths: &[PathBuf], side: &str) -> Result<(Vec<Run>, Vec<String>)> {
    let (mut runs, mut notes) = (Vec::new(), Vec::new());
    for p in paths {
        let loaded = load(p)?;
        notes.extend(loaded.notes());
        runs.extend(loaded.runs);
    }
    same_config(&runs, side)?;
    Ok((runs, notes))
}

/// All runs of a side measured one configuration; a run without a header
/// is taken to be of the side's.
pub fn same_config(runs: &[Run], side: &str) -> Result<()> {
    let mut known = runs.iter().filter(|r| !r.headerless);
    let Some(first) = known.next() else {
        return Ok(());
    };
    if let Some(other) = known.find(|r| r.config != first.config) {
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

/// Every ext_* figure any of the runs carries, by name.
pub fn ext_figures<'r>(runs: impl Iterator<Item = &'r Run>) -> BTreeSet<String> {
    runs.flat_map(|r| &r.intervals)
        .flat_map(|iv| iv.figures.keys())
        .filter(|k| k.starts_with(crate::record::EXT_PREFIX))
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figures::Fig;
    use crate::record::Figure;

    fn err_of<T: std::fmt::Debug>(r: Result<T>) -> String {
        format!("{:#}", r.unwrap_err())
    }

    const H: &str = r#"{"type":"header","scheduler":"scx_soryu","knobs":{}}"#;

    fn iv(index: u64) -> String {
        format!(r#"{{"type":"interval","index":{index},"int_p99_us":1.5}}"#)
    }

    fn runs(name: &str, text: &str) -> Vec<Run> {
        parse_runs(Path::new(name), text).unwrap().runs
    }

    #[test]
    fn config_label_is_part_of_the_identity() {
        let plain = r#"{"type":"header","scheduler":"eevdf","knobs":{}}"#;
        let labelled = r#"{"type":"header","scheduler":"eevdf","config":"hz1000"}"#;
        let p = &runs("p", plain)[0];
        let l = &runs("l", labelled)[0];
        assert_ne!(p.config, l.config);
        assert_eq!(l.config.name(), "eevdf [hz1000]");
    }

    // Before: a second header was refused ("give each run its own file"),
    // while the daemon now appends a run per start.
    #[test]
    fn each_header_starts_a_run() {
        let text = [H, &iv(0), &iv(1), r#"{"type":"exit","kind":1024,"kind_name":"error","error":true,"exit_code":0,"restart":false,"intervals":2}"#, H, &iv(0)]
            .join("\n");
        let runs = runs("f.jsonl", &text);
        assert_eq!(runs.len(), 2);
        assert_eq!((runs[0].intervals.len(), runs[0].exits.len()), (2, 1));
        assert_eq!((runs[1].intervals.len(), runs[1].line), (1, 5));
        assert_eq!(runs[1].name(), "f.jsonl run 2 of 2 (line 5)");
        // an index may repeat in another run, not in the same one: the
        // second is skipped
        let l = parse_runs(Path::new("f"), &[H, &iv(3), &iv(3)].join("\n")).unwrap();
        assert_eq!(l.runs[0].intervals.len(), 1);
        assert_eq!(l.skipped.len(), 1);
        assert!(
            l.notes()[0].contains("already on line 2"),
            "{:?}",
            l.notes()
        );
    }

    // Before: one torn or invalid line anywhere refused the whole file
    // ("f line 7: not valid JSON"), so a run still being written, or a
    // file with one garbled line, could not be compared at all.
    #[test]
    fn skips_torn_and_invalid_lines_and_says_so() {
        let bad = [
            (r#"{"type":"interval""#, "not valid JSON"),
            ("[1]", "not a JSON object"),
            (
                r#"{"type":"interval"}"#,
                "without a non-negative integer \"index\"",
            ),
            (r#"{"index":0}"#, "no \"type\" string"),
            (r#"{"type":"summary"}"#, "unknown record type \"summary\""),
            (
                r#"{"type":"interval","index":9,"int_p99_us":"x"}"#,
                "\"int_p99_us\" is neither a number nor null",
            ),
            (r#"{"type":"header"}"#, "without a \"scheduler\" string"),
            (
                r#"{"type":"exit","kind":"x"}"#,
                "a malformed \"exit\" record",
            ),
        ];
        for (line, why) in bad {
            let text = [H, &iv(0), line, &iv(1)].join("\n");
            let l = parse_runs(Path::new("f"), &text).unwrap();
            assert_eq!(l.runs.len(), 1, "{line}");
            assert_eq!(l.runs[0].intervals.len(), 2, "{line}");
            let notes = l.notes();
            assert_eq!(notes.len(), 1, "{notes:?}");
            assert!(
                notes[0].starts_with("f: 1 of 4 lines skipped, torn or invalid: line 3 (")
                    && notes[0].contains(why),
                "{notes:?} should name line 3 and {why:?}"
            );
        }
        // a torn last line, as a reader of a running daemon's file sees it
        let text = format!("{H}\n{}\n{{\"type\":\"interval\",\"ind", iv(0));
        let l = parse_runs(Path::new("f"), &text).unwrap();
        assert_eq!((l.runs[0].intervals.len(), l.skipped.len()), (1, 1));
        // more than three: the first three named, the rest counted
        let text = [H, "x", "y", "z", "w", &iv(0)].join("\n");
        let n = parse_runs(Path::new("f"), &text).unwrap().notes();
        assert!(
            n[0].contains("4 of 6 lines skipped") && n[0].ends_with("and 1 more"),
            "{n:?}"
        );
        // what is still refused: nothing to read
        let e = err_of(parse_runs(Path::new("f"), ""));
        assert!(e.contains("f is empty"), "{e}");
        let e = err_of(parse_runs(Path::new("f"), "x\ny"));
        assert!(
            e.contains("none of its 2 lines is a --report-json record"),
            "{e}"
        );
    }

    // Before: "the first record is not a header": a file that logrotate's
    // copytruncate emptied, and the daemon went on appending to, could
    // not be read.
    #[test]
    fn a_file_without_a_header_is_read_with_a_note() {
        let text = [&iv(7), &iv(8), H, &iv(0)].join("\n");
        let l = parse_runs(Path::new("r.jsonl"), &text).unwrap();
        assert_eq!(l.runs.len(), 2);
        let r = &l.runs[0];
        assert!(r.headerless && r.intervals.len() == 2 && r.config.scheduler == NO_HEADER);
        assert!(!l.runs[1].headerless);
        let n = l.notes();
        assert!(
            n.len() == 1
                && n[0].starts_with("r.jsonl starts without a header")
                && n[0].contains("first 2 interval record(s)"),
            "{n:?}"
        );
        // it takes its side's configuration: not a mix
        let other = runs("o", &[H, &iv(0)].join("\n"));
        same_config(&[l.runs[0].clone(), other[0].clone()], "A").unwrap();
    }

    #[test]
    fn null_figures_read_as_unknown() {
        let text = format!(
            "{H}\n{{\"type\":\"interval\",\"index\":0,\"int_p99_us\":null,\"note\":\"x\"}}"
        );
        let run = &runs("f", &text)[0];
        assert_eq!(run.intervals[0].get(Fig::int_p99_us), Figure::Unknown);
        assert_eq!(run.intervals[0].get(Fig::int_p50_us), Figure::Absent);
    }

    #[test]
    fn skips_a_histogram_of_the_wrong_length() {
        let text = r#"{"type":"header","scheduler":"s","lat_bucket_lower_ns":[0,1024,2048]}
{"type":"interval","index":0,"hist":{"lat_interactive":[1,2]}}"#;
        let l = parse_runs(Path::new("f"), text).unwrap();
        assert!(l.runs[0].intervals.is_empty());
        let n = l.notes();
        assert!(
            n[0].contains("line 2") && n[0].contains("has 2 buckets") && n[0].contains("has 3"),
            "{n:?}"
        );
    }

    #[test]
    fn refuses_mixed_configurations() {
        let run = |name: &str, knobs: &str| {
            let h = format!(r#"{{"type":"header","scheduler":"scx_soryu","knobs":{knobs}}}"#);
            runs(name, &h).remove(0)
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
