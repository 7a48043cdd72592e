// SPDX-License-Identifier: GPL-2.0-only
//
// Report output: the human report (a few aligned lines per interval, units
// on every figure, laid out as the figure table says) and the records of
// --report-json (scx_soryu::record). Reports are best-effort and
// scheduling is not: a failed write (a closed pipe on stdout, a full disk)
// is reported once on stderr, that output stops, and the scheduler keeps
// running. The interval the scheduler stops in is reported too, short and
// marked final, before the exit record.

use std::fmt::Write as _;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result};
use scx_soryu::about::{kernel_release, version};
use scx_soryu::bpf_intf::*;
use scx_soryu::figures::{Fig, Metrics};
use scx_soryu::policy;
use scx_soryu::record::{self, ExitRecord, Header, Interval, IntervalRecord, Record};
use scx_soryu::spec::{FigSpec, Kind, Line, Text, Unit};

use crate::config::ReportConfig;
use crate::interval::{self, RunConsts};
use crate::prometheus::render::RunInfo;
use crate::prometheus::sink::PromSink;
use crate::stats::{MaxWaitSub, Snapshot, MAX_WAITS};

/// One line on stdout; a closed stdout is an error, not a panic.
pub fn stdout_line(s: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{s}")?;
    out.flush()
}

fn us(v: f64) -> String {
    if v >= 1000.0 {
        format!("{:.2} ms", v / 1000.0)
    } else {
        format!("{v:.0} us")
    }
}

/// A figure's value as the text report prints it: in its unit, "-" when
/// unknown (NaN), right-aligned to its width (seconds: the number alone).
fn text_value(spec: &FigSpec, t: &Text, v: f64) -> String {
    let (d, w) = (t.decimals, t.width);
    if spec.unit == Unit::Seconds && !v.is_nan() {
        return format!("{v:>w$.d$} s");
    }
    let s = match spec.unit {
        Unit::Jiffies if v.is_nan() => "(- j)".to_string(),
        Unit::Jiffies => format!("({v:.d$} j)"),
        _ if v.is_nan() => "-".to_string(),
        Unit::Number if matches!(spec.kind, Kind::Count | Kind::State) => format!("{v:.0}"),
        Unit::Number | Unit::Probes => format!("{v:.d$}"),
        Unit::Seconds => format!("{v:.d$} s"),
        Unit::Micros => us(v),
        Unit::Percent => format!("{v:.d$}%"),
    };
    format!("{s:>w$}")
}

/// The human report of one interval: a line per Line, each figure on its
/// line as the table places it; groups are separated by " | ". `last`:
/// the interval the scheduler stopped in.
pub fn format_text(index: u64, last: bool, m: &Metrics) -> String {
    let mut out = Vec::new();
    for line in Line::ALL {
        let mut groups: Vec<String> = Vec::new();
        let mut group = None;
        for &f in Fig::ALL {
            let spec = f.spec();
            let Some(t) = spec.text.filter(|t| t.line == line) else {
                continue;
            };
            let value = text_value(spec, &t, m.get(f));
            let item = match t.label {
                "" => value,
                label => format!("{label} {value}"),
            };
            match groups.last_mut() {
                Some(g) if group == Some(t.group) => {
                    g.push(' ');
                    g.push_str(&item);
                }
                _ => groups.push(item),
            }
            group = Some(t.group);
        }
        let prefix = match line {
            Line::Head if last => format!("[soryu] #{index:<4} final"),
            Line::Head => format!("[soryu] #{index:<4}"),
            _ => "       ".to_string(),
        };
        out.push(format!("{prefix} {}", groups.join(" | ")));
    }
    out.join("\n")
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

/// The header of a run: what produced the records that follow. `attach`:
/// what the scheduler's attach fixed (None when nothing is loaded).
pub fn header_record(cfg: &ReportConfig, attach: Option<&Attach>) -> Header {
    Header {
        scheduler: "scx_soryu".into(),
        version: Some(version()),
        kernel_hz: attach.map(|a| a.consts.kernel_hz),
        llcs: attach.map(|a| a.llcs.clone()),
        knobs: cfg
            .knobs
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect(),
        hist: Some(cfg.hist),
        nr_levels: Some(soryu_consts_SORYU_NR_LEVELS),
        boost_min: Some(-(soryu_consts_SORYU_MAX_BOOST as i64)),
        ..machine_header("scx_soryu", cfg)
    }
}

/// The header of a run of any scheduler on this machine, as the benchmark
/// files an outside scheduler's run: what the machine and the format are,
/// no knobs, no soryu build.
pub fn machine_header(scheduler: &str, cfg: &ReportConfig) -> Header {
    Header {
        scheduler: scheduler.into(),
        format: Some(record::FORMAT),
        format_minor: Some(record::FORMAT_MINOR),
        run_id: Some(cfg.run_id.clone()),
        kernel: Some(kernel_release()),
        nr_cpus: Some(libbpf_rs::num_possible_cpus().unwrap_or(0) as u64),
        report_sec: Some(cfg.report_sec as f64),
        percentile_convention: Some("bucket lower bound".into()),
        lat_bucket_lower_ns: Some(lat_bucket_bounds()),
        ..Header::default()
    }
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
    out: File,
    /// The file did not end with a newline (a torn last line): start on a
    /// fresh one.
    newline_first: bool,
    /// The file's length after the last write: a shorter file was emptied
    /// under the daemon (logrotate's copytruncate).
    len: u64,
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
            len: f.metadata().map_or(0, |m| m.len()),
            out: f,
            newline_first: !ends_with_newline(path),
        })
    }

    /// The file is shorter than this sink left it: someone emptied it
    /// (copytruncate), and the records after its header are gone with it.
    pub fn emptied(&self) -> bool {
        self.out.metadata().is_ok_and(|m| m.len() < self.len)
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
        self.len = self.out.metadata().map_or(0, |m| m.len());
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

/// What the scheduler's attach gives the reports: the constants of its
/// intervals and the LLCs its victim search groups CPUs by.
#[derive(Clone, Debug, Default)]
pub struct Attach {
    pub consts: RunConsts,
    pub llcs: Vec<String>,
}

/// Where interval reports go: stdout, the --report-json file and the
/// --prometheus file. It outlives a scheduler restart (CPU hotplug): the
/// run keeps its header, interval indices keep counting, and the report
/// schedule keeps its beat. A new start of the daemon appends a new run (a
/// new header, indices from 0) to the same file.
pub struct Reporter {
    cfg: ReportConfig,
    text: Option<Box<dyn Write + Send>>,
    json: Option<JsonSink>,
    prom: Option<PromSink>,
    /// Where the one message about a failed output goes.
    errors: Box<dyn Write + Send>,
    header_written: bool,
    index: u64,
    /// The current attach's; the header takes the first one's.
    attach: Option<Attach>,
    /// The reading the next interval starts from.
    prev: Option<Snapshot>,
    /// Longest waits since the last report.
    maxima: MaxWaitSub,
    /// When the next report is due.
    pub next: Instant,
    /// The first attach has started the beat.
    started: bool,
}

impl Reporter {
    pub fn new(cfg: ReportConfig) -> Result<Self> {
        let json = cfg.json.as_deref().map(JsonSink::open).transpose()?;
        let prom = cfg
            .prometheus
            .clone()
            .map(|t| PromSink::new(t, RunInfo::new(&cfg)));
        Ok(Reporter {
            text: Some(Box::new(std::io::stdout())),
            json,
            prom,
            errors: Box::new(std::io::stderr()),
            header_written: false,
            index: 0,
            attach: None,
            prev: None,
            maxima: MAX_WAITS.subscribe(),
            next: Instant::now() + Duration::from_secs(cfg.report_sec),
            started: false,
            cfg,
        })
    }

    /// The report interval; None when reports are off (--report-sec 0).
    pub fn period(&self) -> Option<Duration> {
        (self.cfg.report_sec > 0).then(|| Duration::from_secs(self.cfg.report_sec))
    }

    /// A (re)attached scheduler's first reading: the next interval starts
    /// here, its longest waits too. The first attach also starts the
    /// report beat: one set before the load made the first interval end
    /// as soon as a load took longer than one period, and the second one
    /// short (0.15 s and 0.43 s for --report-sec 2 after a slow load). A
    /// restart keeps the beat.
    pub fn start(&mut self, first: Snapshot, attach: Attach) {
        if !self.started {
            self.started = true;
            self.next = Instant::now() + Duration::from_secs(self.cfg.report_sec);
        }
        self.attach = Some(attach);
        self.prev = Some(first);
        self.maxima.take();
    }

    /// Report the interval from the previous reading to `cur`. Never fails:
    /// an output that cannot be written is reported once and dropped.
    pub fn interval(&mut self, cur: Snapshot) {
        self.report(cur, false);
    }

    fn report(&mut self, cur: Snapshot, last: bool) {
        if let Some(prev) = &self.prev {
            let consts = self.attach.as_ref().map(|a| a.consts).unwrap_or_default();
            let iv = interval::between(prev, &cur, self.maxima.take(), &consts);
            self.write_interval(&iv, last);
        }
        self.prev = Some(cur);
    }

    /// The scheduler ended (detached by the daemon, or ejected by the
    /// kernel): the interval it stopped in, from the last report to
    /// `last` (when reports are on and it could be read), marked final;
    /// then one exit record with the kernel's reason. The next attach
    /// starts a new interval.
    pub fn stop(&mut self, last: Option<Snapshot>, mut e: ExitRecord) {
        if let (Some(cur), Some(_)) = (last, self.period()) {
            self.report(cur, true);
        }
        self.prev = None;
        e.intervals = self.index;
        self.write_json(&Record::Exit(e));
    }

    /// One interval's text lines, JSON record and Prometheus file.
    pub fn write_interval(&mut self, iv: &Interval, last: bool) {
        let mut text = format_text(self.index, last, &iv.metrics);
        if let Some(cost) = format_cost(iv) {
            text.push('\n');
            text += &cost;
        }
        self.write_text(&text);
        let rec = Record::Interval(IntervalRecord::new(self.index, last, iv));
        self.write_json(&rec);
        if let Some(prom) = self.prom.as_mut() {
            prom.interval(iv, &mut *self.errors);
        }
        self.index += 1;
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

    /// A record to the --report-json file, after the run's header when the
    /// file does not have it: the first record of the run, and the first
    /// after someone emptied the file (the records before are then in the
    /// rotated copy, and this one starts a run of the rest).
    fn write_json(&mut self, rec: &Record) {
        let Some(sink) = self.json.as_mut() else {
            return;
        };
        let mut res = Ok(());
        if !self.header_written || sink.emptied() {
            let h = header_record(&self.cfg, self.attach.as_ref());
            res = sink.write(&Record::Header(h));
            self.header_written = res.is_ok();
        }
        if let Err(e) = res.and_then(|()| sink.write(rec)) {
            self.json = None;
            let path = self.cfg.json.as_deref().unwrap_or(Path::new(""));
            let _ = writeln!(
                self.errors,
                "scx_soryu: cannot write --report-json {} ({e}): no more records go to it, the scheduler keeps running",
                path.display()
            );
        }
    }
}

#[cfg(test)]
pub mod tests;
