// SPDX-License-Identifier: GPL-2.0-only
//
// Report formatting: the human report (a few aligned lines per interval,
// units on every figure) and the JSON lines of --report-json (a header
// record, then one record per interval).

use std::fmt::Write as _;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde_json::{json, Value};

use crate::bpf_intf::*;
use crate::cli::Opts;
use crate::policy;
use crate::stats::{Interval, Metrics};

fn us(v: f64) -> String {
    if v >= 1000.0 {
        format!("{:.2} ms", v / 1000.0)
    } else {
        format!("{v:.0} us")
    }
}

/// The human report of one interval.
pub fn format_text(index: u64, m: &Metrics) -> String {
    let mut s = String::new();
    let calls = m.dispatch + m.dispatch_empty + m.dispatch_keep;
    let _ = writeln!(
        s,
        "[soryu] #{index:<4} {:>5.1} s | dispatch {:>8} empty {:>7} keep {:>7} | probes/call mean {:>5.2} p50 {:>2} p99 {:>2} max {:>2} | starve_serve {}",
        m.duration_s, m.dispatch, m.dispatch_empty, m.dispatch_keep, m.probes_mean, m.probes_p50, m.probes_p99, m.probes_max, m.starve_serve
    );
    for (name, n, p50, p99, p999, max, j, t1, t4, t16) in [
        (
            "interactive",
            m.int_count,
            m.int_p50_us,
            m.int_p99_us,
            m.int_p999_us,
            m.int_max_us,
            m.int_max_jiffies,
            m.int_over_1ms_pct,
            m.int_over_4ms_pct,
            m.int_over_16ms_pct,
        ),
        (
            "other",
            m.oth_count,
            m.oth_p50_us,
            m.oth_p99_us,
            m.oth_p999_us,
            m.oth_max_us,
            m.oth_max_jiffies,
            m.oth_over_1ms_pct,
            m.oth_over_4ms_pct,
            m.oth_over_16ms_pct,
        ),
    ] {
        let _ = writeln!(
            s,
            "        wake->run {name:<11} n {n:>7} | p50 {:>9} p99 {:>9} p99.9 {:>9} max {:>9} ({j:.1} j) | >1ms {t1:.3}% >4.2ms {t4:.3}% >16.8ms {t16:.3}%",
            us(p50), us(p99), us(p999), us(max)
        );
    }
    let _ = writeln!(
        s,
        "        preempt attempts {} idle {} kick {} none {} ({:.1}%) | boost floor {:.1}% between {:.1}% ceiling {:.1}%",
        m.preempt_attempts, m.preempt_idle, m.preempt_kicks, m.preempt_none, m.preempt_none_pct,
        m.boost_floor_pct, m.boost_between_pct, m.boost_ceiling_pct
    );
    let _ = write!(
        s,
        "        health insert_fail {} | bitmap clear {} repair {} | level_mismatch {} | enqueue {} direct {} | running {} | {} dispatch calls",
        m.insert_fail, m.bitmap_clear, m.bitmap_repair, m.level_mismatch, m.enqueue, m.direct, m.tasks_running, calls
    );
    s
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

/// The first line of a --report-json file: what produced the records.
pub fn header_record(opts: &Opts, kernel_hz: u32) -> Value {
    json!({
        "type": "header",
        "scheduler": "scx_soryu",
        "version": env!("CARGO_PKG_VERSION"),
        "kernel": kernel_release(),
        "kernel_hz": kernel_hz,
        "nr_cpus": libbpf_rs::num_possible_cpus().unwrap_or(0),
        "knobs": {
            "clear_bitmap": opts.clear_bitmap,
            "boost_on_wake": opts.boost_on_wake,
            "vtime": opts.vtime,
            "slice_us": opts.slice_us,
            "starve_ms": opts.starve_ms,
        },
        "hist": !opts.no_hist,
        "report_sec": opts.report_sec,
        "percentile_convention": "bucket lower bound",
        "lat_bucket_lower_ns": lat_bucket_bounds(),
        "nr_levels": soryu_consts_SORYU_NR_LEVELS,
        "boost_min": -(soryu_consts_SORYU_MAX_BOOST as i64),
    })
}

/// One interval as a JSON record: every scalar figure, then the raw
/// distributions and the kernel's event counters.
pub fn interval_record(index: u64, iv: &Interval) -> Value {
    let mut v = serde_json::to_value(&iv.metrics).expect("Metrics serialize");
    let o = v.as_object_mut().expect("Metrics is an object");
    o.insert("type".into(), json!("interval"));
    o.insert("index".into(), json!(index));
    o.insert(
        "hist".into(),
        serde_json::to_value(&iv.hists).expect("Hists serialize"),
    );
    o.insert("kernel_events".into(), json!(iv.kernel_events));
    if !iv.bpf_cost.is_empty() {
        o.insert("bpf_cost".into(), json!(iv.bpf_cost));
    }
    v
}

pub fn kernel_release() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

/// Appends JSON records to the --report-json file, one per line, flushed
/// after each so a reader (or a crash) never sees half a record.
pub struct JsonSink {
    out: BufWriter<File>,
}

impl JsonSink {
    pub fn create(path: &Path) -> Result<Self> {
        let f = File::create(path)
            .with_context(|| format!("cannot create --report-json file {}", path.display()))?;
        Ok(JsonSink {
            out: BufWriter::new(f),
        })
    }

    pub fn write(&mut self, v: &Value) -> Result<()> {
        serde_json::to_writer(&mut self.out, v)?;
        self.out.write_all(b"\n")?;
        self.out.flush().context("writing --report-json")
    }
}

/// Where interval reports go: stdout, and the --report-json file. It
/// outlives a scheduler restart (CPU hotplug), so the file keeps one header,
/// interval indices keep counting, and the report schedule keeps its beat:
/// restarts closer together than --report-sec still get reported.
pub struct Reporter<'a> {
    opts: &'a Opts,
    json: Option<JsonSink>,
    header_written: bool,
    index: u64,
    /// When the next report is due.
    pub next: Instant,
}

impl<'a> Reporter<'a> {
    pub fn new(opts: &'a Opts) -> Result<Self> {
        let json = opts
            .report_json
            .as_deref()
            .map(JsonSink::create)
            .transpose()?;
        Ok(Reporter {
            opts,
            json,
            header_written: false,
            index: 0,
            next: Instant::now() + Duration::from_secs(opts.report_sec),
        })
    }

    pub fn interval(&mut self, iv: &Interval, kernel_hz: u32) -> Result<()> {
        println!("{}", format_text(self.index, &iv.metrics));
        if let Some(cost) = format_cost(iv) {
            println!("{cost}");
        }
        let _ = std::io::stdout().flush();
        if let Some(sink) = self.json.as_mut() {
            if !self.header_written {
                sink.write(&header_record(self.opts, kernel_hz))?;
                self.header_written = true;
            }
            sink.write(&interval_record(self.index, iv))?;
        }
        self.index += 1;
        Ok(())
    }
}
