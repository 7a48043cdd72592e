// SPDX-License-Identifier: GPL-2.0-only
//
// The --report-json format, defined once: the writer (the daemon's
// report.rs) builds these records, and every reader (read.rs, for compare
// and plot) parses them back with the same types. A file is a sequence of
// runs; each run is a header record followed by its interval records and,
// when the scheduler ended, exit records. The figures of an interval
// record are the fields of figures::Metrics. docs/measuring.md describes
// every field.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::figures::{Fig, Metrics, NEWEST_SINCE};

/// The format's major version: bumped when a record changes in a way that
/// makes older files mean something else (compare refuses to pair files of
/// two majors). 1: one header per file, intervals numbered across
/// restarts, 0 for an empty latency class. 2: one header per start
/// (appended), null for an empty class, exit records. 3: `stale_kicks`
/// (kicks that acted on a stale level) replaces `level_mismatch`, 0 by
/// construction. 4: `queued_max_us` (longest wait of any queued task) and
/// `starve_bound_us`. 5: `preempt_deferred` (kicks left to the wakeup
/// granularity's timer), `preempt_scans` and the `wakeup_gran_us` knob. 6:
/// `preempt_fallbacks` (victim searches of tasks that may not use every CPU) and the
/// header's `llcs`. 7: `pinned` (tasks queued on their one CPU's own
/// queue). 8: `smt_moves` (tasks let go from a shared SMT core for a whole
/// idle one). 9: `sync_local` (sync wakeups run next on the waker's CPU).
/// 10: `preempt_local` (wakeups that preempted onto their victim's local
/// DSQ). 11: `cache_hot` (dispatch calls that took a task last run on their
/// CPU from behind its level's head).
pub const FORMAT: u32 = 11;

/// The minor version of the record fields other than figures: 1, the
/// header's `format_minor` and an interval's `final`.
const RECORD_MINOR: u32 = 1;

/// The format's minor version, bumped by every field added: files of the
/// same major stay comparable, a figure an older file lacks is skipped (a
/// figure's spec says which minor version first carried it). 2:
/// `victim_reads` (CPUs the victim searches read). 3: `remote_reads`
/// (lines of other LLCs' queues, or of the level index, dispatch read).
pub const FORMAT_MINOR: u32 = if NEWEST_SINCE > RECORD_MINOR {
    NEWEST_SINCE
} else {
    RECORD_MINOR
};

/// One line of a --report-json file.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Record {
    Header(Header),
    Interval(IntervalRecord),
    Exit(ExitRecord),
}

/// The first record of a run: what produced the records that follow.
/// Every field but `scheduler` is optional for a reader, so that files
/// written by other tools in this shape (bench/guest.py) read too.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub scheduler: String,
    /// A benchmark's name for the configuration; part of its identity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<String>,
    #[serde(default)]
    pub knobs: BTreeMap<String, Value>,
    /// The major version (FORMAT).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<u32>,
    /// The minor version (FORMAT_MINOR); none before 11.1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format_minor: Option<u32>,
    /// The build: version, git commit (-dirty for a modified tree), target,
    /// and /debug for a debug build.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Unique per start: "<start time, ms since the Unix epoch>-<pid>".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_hz: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nr_cpus: Option<u64>,
    /// The CPUs of each LLC as the victim search groups them ("0-3").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llcs: Option<Vec<String>>,
    /// false under --no-hist: no latency, boost or level histograms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hist: Option<bool>,
    /// The nominal interval length in seconds (`interval_s` in benchmark
    /// files).
    #[serde(default, alias = "interval_s", skip_serializing_if = "Option::is_none")]
    pub report_sec: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub percentile_convention: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lat_bucket_lower_ns: Option<Vec<u64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nr_levels: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boost_min: Option<i64>,
    /// Anything else a writer adds (a benchmark's workload, round, order).
    #[serde(flatten)]
    pub extra: BTreeMap<String, Value>,
}

/// The raw distributions of one interval (bucket counts, differenced).
/// Readers take a record that carries only some of them (a benchmark's
/// file has lat_interactive alone).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Hists {
    pub lat_interactive: Vec<u64>,
    pub lat_other: Vec<u64>,
    pub probes: Vec<u64>,
    /// index = boost + 12
    pub boost: Vec<u64>,
    pub levels: Vec<u64>,
}

/// Calls of one BPF callback in an interval and their mean cost.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BpfCost {
    pub calls: u64,
    pub ns_per_call: f64,
}

/// One interval as the daemon measured it: scalar figures, distributions,
/// the kernel's event counters, BPF callback costs.
#[derive(Clone, Debug, Default)]
pub struct Interval {
    pub metrics: Metrics,
    pub hists: Hists,
    pub kernel_events: BTreeMap<String, u64>,
    pub bpf_cost: BTreeMap<String, BpfCost>,
}

/// One interval record. `figures` holds every scalar figure at the top
/// level of the record: soryu's are the fields of figures::Metrics (null
/// when unknown, e.g. the percentiles of a latency class that had no
/// wakeups), a benchmark's are named ext_*.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct IntervalRecord {
    /// 0, 1, ... within its run.
    pub index: u64,
    /// The interval the scheduler stopped in (SIGTERM, an error, a stall, a
    /// restart): it ends early, and an exit record follows.
    #[serde(rename = "final", default, skip_serializing_if = "std::ops::Not::not")]
    pub last: bool,
    #[serde(flatten)]
    pub figures: BTreeMap<String, Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hist: Option<Hists>,
    #[serde(default)]
    pub kernel_events: BTreeMap<String, u64>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub bpf_cost: BTreeMap<String, BpfCost>,
}

/// A figure of an interval record, as a reader sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Figure {
    /// The record does not carry it.
    Absent,
    /// Carried as null: unknown in that interval.
    Unknown,
    Value(f64),
}

/// A figure a reader asks for: one of soryu's, or an outside measurement
/// a benchmark filed beside them (ext_*).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FigName {
    Soryu(Fig),
    Ext(String),
}

/// The prefix of every outside measurement's name.
pub const EXT_PREFIX: &str = "ext_";

/// The benchmark's outside measurement of int_over_1ms_pct (cyclictest).
pub const EXT_WAKE_OVER_1MS_PCT: &str = "ext_wake_over_1ms_pct";

impl FigName {
    /// A name given on the command line or found in a record: None when it
    /// is neither soryu's nor ext_*.
    pub fn parse(name: &str) -> Option<FigName> {
        if name.starts_with(EXT_PREFIX) {
            return Some(FigName::Ext(name.to_string()));
        }
        Fig::from_name(name).map(FigName::Soryu)
    }

    pub fn as_str(&self) -> &str {
        match self {
            FigName::Soryu(f) => f.name(),
            FigName::Ext(s) => s,
        }
    }

    /// A count per interval: compared per second of interval.
    pub fn per_second(&self) -> bool {
        matches!(self, FigName::Soryu(f) if f.spec().per_second())
    }

    /// Lower is better, except outside rates and counts of work done.
    pub fn higher_is_better(&self) -> bool {
        match self {
            FigName::Soryu(_) => false,
            FigName::Ext(n) => n.ends_with("_per_s") || n.ends_with("_ops"),
        }
    }
}

impl IntervalRecord {
    /// The record of one measured interval; `last` for the one the
    /// scheduler stopped in.
    pub fn new(index: u64, last: bool, iv: &Interval) -> Self {
        let figures = Fig::ALL
            .iter()
            .map(|&f| (f.name().to_string(), iv.metrics.json(f)))
            .collect();
        IntervalRecord {
            index,
            last,
            figures,
            hist: Some(iv.hists.clone()),
            kernel_events: iv.kernel_events.clone(),
            bpf_cost: iv.bpf_cost.clone(),
        }
    }

    pub fn figure(&self, name: &FigName) -> Figure {
        self.figure_named(name.as_str())
    }

    /// One of soryu's figures.
    pub fn get(&self, f: Fig) -> Figure {
        self.figure_named(f.name())
    }

    fn figure_named(&self, name: &str) -> Figure {
        match self.figures.get(name) {
            None => Figure::Absent,
            Some(v) => v.as_f64().map_or(Figure::Unknown, Figure::Value),
        }
    }

    /// The interactive class's wake-to-run histogram, when there is one.
    pub fn lat_interactive(&self) -> Option<&[u64]> {
        self.hist
            .as_ref()
            .map(|h| h.lat_interactive.as_slice())
            .filter(|h| !h.is_empty())
    }
}

/// The kernel ended the scheduler: its exit kind and reason. When the
/// kernel asked for a restart (CPU hotplug) the run goes on after it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ExitRecord {
    /// The kernel's enum scx_exit_kind.
    pub kind: i64,
    /// Its name: done, unreg, unreg_bpf, unreg_kern, sysrq, error,
    /// error_bpf, error_stall (or "unknown").
    pub kind_name: String,
    /// An error exit (kind >= 1024): the daemon exits non-zero.
    pub error: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub msg: Option<String>,
    pub exit_code: i64,
    /// The kernel asked for a restart; the daemon reloads the scheduler.
    pub restart: bool,
    /// Interval records of this run written before it.
    pub intervals: u64,
}

// Written by Scheduler::run once the link is dropped and the kernel has
// filled in the exit info.
impl ExitRecord {
    /// From the fields of the BPF side's struct user_exit_info (`uei` in
    /// the skeleton's data section): `reason` and `msg` are its C strings.
    pub fn from_uei(kind: i32, exit_code: i64, reason: &[i8], msg: &[i8]) -> Self {
        let text = |b: &[i8]| {
            let bytes: Vec<u8> = b
                .iter()
                .take_while(|&&c| c != 0)
                .map(|&c| c as u8)
                .collect();
            Some(String::from_utf8_lossy(&bytes).into_owned()).filter(|s| !s.is_empty())
        };
        use scx_utils::ScxExitKind as K;
        // what UserExitInfo::should_restart() says
        let graceful = kind == K::UnregBPF as i32 || kind == K::UnregKern as i32;
        let restart = graceful && exit_code & *scx_utils::SCX_ECODE_ACT_RESTART as i64 != 0;
        ExitRecord {
            kind: kind as i64,
            kind_name: exit_kind_name(kind).to_string(),
            error: kind >= K::Error as i32,
            reason: text(reason),
            msg: text(msg),
            exit_code,
            restart,
            intervals: 0,
        }
    }
}

fn exit_kind_name(kind: i32) -> &'static str {
    use scx_utils::ScxExitKind as K;
    [
        (K::None as i32, "none"),
        (K::Done as i32, "done"),
        (K::Unreg as i32, "unreg"),
        (K::UnregBPF as i32, "unreg_bpf"),
        (K::UnregKern as i32, "unreg_kern"),
        (K::SysRq as i32, "sysrq"),
        (K::Error as i32, "error"),
        (K::ErrorBPF as i32, "error_bpf"),
        (K::ErrorStall as i32, "error_stall"),
    ]
    .iter()
    .find(|(k, _)| *k == kind)
    .map_or("unknown", |(_, n)| n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_figure_added_bumps_the_minor_version_only() {
        for &f in Fig::ALL {
            assert!(f.spec().since <= FORMAT_MINOR, "{}", f.name());
        }
    }

    #[test]
    fn records_carry_their_type_and_read_back() {
        let mut iv = Interval::default();
        iv.metrics.int_count = 0;
        iv.metrics.int_p99_us = f64::NAN;
        iv.metrics.oth_count = 3;
        iv.metrics.oth_p99_us = 12.0;
        let line =
            serde_json::to_string(&Record::Interval(IntervalRecord::new(4, false, &iv))).unwrap();
        assert!(line.contains(r#""type":"interval""#), "{line}");
        assert!(line.contains(r#""int_p99_us":null"#), "{line}");
        assert!(line.contains(r#""index":4"#), "{line}");
        let Record::Interval(back) = serde_json::from_str(&line).unwrap() else {
            panic!("not an interval: {line}")
        };
        assert_eq!(back.index, 4);
        assert_eq!(back.get(Fig::int_p99_us), Figure::Unknown);
        assert_eq!(back.get(Fig::oth_p99_us), Figure::Value(12.0));
        let ext = FigName::parse("ext_nothing").unwrap();
        assert_eq!(back.figure(&ext), Figure::Absent);
        assert!(!back.last && !line.contains("final"), "{line}");
        // the interval the scheduler stopped in says so
        let fin = serde_json::to_string(&IntervalRecord::new(5, true, &iv)).unwrap();
        assert!(fin.contains(r#""final":true"#), "{fin}");
        let back: IntervalRecord = serde_json::from_str(&fin).unwrap();
        assert!(back.last && !back.figures.contains_key("final"));
        // no key is written twice (the flattened figures and the fields)
        for key in ["\"type\":", "\"index\":", "\"hist\":", "\"duration_s\":"] {
            assert_eq!(line.matches(key).count(), 1, "{key} in {line}");
        }
    }

    #[test]
    fn a_benchmark_header_reads_with_its_own_fields() {
        let line = r#"{"type":"header","scheduler":"eevdf","config":"eevdf","knobs":{},"kernel":"7.3.4","workload":"saturate","interval_s":5,"round":1,"lat_bucket_lower_ns":[0,1024]}"#;
        let Record::Header(h) = serde_json::from_str(line).unwrap() else {
            panic!()
        };
        assert_eq!(h.report_sec, Some(5.0));
        assert_eq!(h.config.as_deref(), Some("eevdf"));
        assert_eq!(h.extra["workload"], "saturate");
        assert_eq!(h.nr_cpus, None);
    }

    #[test]
    fn exit_record_from_the_kernel_fields() {
        let mut reason = [0i8; 16];
        for (d, s) in reason.iter_mut().zip(b"stalled") {
            *d = *s as i8;
        }
        let e = ExitRecord::from_uei(
            scx_utils::ScxExitKind::ErrorStall as i32,
            0,
            &reason,
            &[0i8; 4],
        );
        assert_eq!(e.kind_name, "error_stall");
        assert!(e.error && !e.restart);
        assert_eq!(e.reason.as_deref(), Some("stalled"));
        assert_eq!(e.msg, None);
        let line = serde_json::to_string(&Record::Exit(e.clone())).unwrap();
        assert!(line.starts_with(r#"{"type":"exit""#), "{line}");
        let Record::Exit(back) = serde_json::from_str(&line).unwrap() else {
            panic!()
        };
        assert_eq!(back, e);
        let e = ExitRecord::from_uei(scx_utils::ScxExitKind::Unreg as i32, 0, &[], &[]);
        assert_eq!((e.kind_name.as_str(), e.error), ("unreg", false));
    }
}
