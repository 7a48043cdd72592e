// SPDX-License-Identifier: GPL-2.0-only
//
// --prometheus-sample: the file as the daemon writes it, from made-up but
// plausible figures run through the daemon's own differencing, for tests
// and for looking at the format on a machine without sched_ext.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use scx_soryu::bpf_intf::*;
use scx_soryu::figures::{NR_WAITS, WAIT_QUEUED};
use scx_soryu::policy;
use scx_soryu::record::Interval;

use super::render::{render, RunInfo, Totals};
use super::sink::write_atomic;
use crate::config::ReportConfig;
use crate::interval::{self, RunConsts};
use crate::stats::Snapshot;

/// A small deterministic generator for the sample's figures.
struct Lcg(u64);

impl Lcg {
    fn unit(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    /// Log-normal: median `median`, spread `sigma` (natural log).
    fn lognormal(&mut self, median: f64, sigma: f64) -> f64 {
        let (u, v) = (self.unit(), self.unit());
        let z = (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos();
        median * (sigma * z).exp()
    }
}

/// `n` intervals of 2 s on 2 CPUs with made-up but plausible figures, run
/// through the same differencing as the daemon's readings (stats.rs).
pub fn synthetic_intervals(n: usize) -> Vec<Interval> {
    let mut rng = Lcg(0x0050_5952_5955);
    // SAFETY: soryu_stats is plain integers; all-zero is a valid value.
    let mut cpus: Vec<soryu_stats> = (0..2).map(|_| unsafe { std::mem::zeroed() }).collect();
    let base = Instant::now();
    let snap = |cpus: &[soryu_stats], k: u64| {
        let mut s = Snapshot::from_percpu(cpus, 0);
        s.at = base + Duration::from_secs(2 * k);
        s.kernel_events = [
            ("SCX_EV_SELECT_CPU_FALLBACK", 3 * k),
            ("SCX_EV_DISPATCH_LOCAL_DSQ_OFFLINE", 0),
            ("SCX_EV_DISPATCH_KEEP_LAST", 40 * k),
            ("SCX_EV_ENQ_SKIP_EXITING", k),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), *v))
        .collect();
        s.bpf_progs = [
            ("soryu_enqueue", (900 * k, 900 * k * 1200)),
            ("soryu_dispatch", (1000 * k, 1000 * k * 2500)),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), *v))
        .collect();
        s
    };
    // the defaults' bound at HZ 250, as the scheduler sets it at attach
    let consts = RunConsts {
        kernel_hz: 250,
        starve_bound_us: policy::starve_bound_us(100, 1000, 250, 1, 1),
    };
    let mut prev = snap(&cpus, 0);
    let mut out = Vec::with_capacity(n);
    for k in 1..=n as u64 {
        let mut max = [0u64; NR_WAITS];
        for (ci, st) in cpus.iter_mut().enumerate() {
            for (class, median, sigma, waits) in [(0usize, 30e3, 1.0, 400u64), (1, 90e3, 1.4, 60)] {
                for _ in 0..waits + 20 * ci as u64 {
                    let ns = rng.lognormal(median, sigma) as u64;
                    st.lat_hist[class][policy::lat_bucket(ns)] += 1;
                    max[class] = max[class].max(ns);
                    st.cnt[soryu_counter_SORYU_CNT_WAKEUPS as usize] += 1;
                }
            }
            let c = |i: soryu_counter| i as usize;
            let enq = 450 + 10 * k;
            st.cnt[c(soryu_counter_SORYU_CNT_ENQUEUE)] += enq;
            st.cnt[c(soryu_counter_SORYU_CNT_DIRECT)] += 30;
            st.cnt[c(soryu_counter_SORYU_CNT_KEEP)] += 25;
            st.cnt[c(soryu_counter_SORYU_CNT_DISPATCH_EMPTY)] += 5;
            st.cnt[c(soryu_counter_SORYU_CNT_SMT_MOVE)] += k % 2;
            st.cnt[c(soryu_counter_SORYU_CNT_SYNC_LOCAL)] += 2 * k;
            st.cnt[c(soryu_counter_SORYU_CNT_STARVE_SERVE)] += k % 2;
            st.cnt[c(soryu_counter_SORYU_CNT_PREEMPT_ATTEMPT)] += enq;
            st.cnt[c(soryu_counter_SORYU_CNT_PREEMPT_IDLE)] += enq / 3;
            st.cnt[c(soryu_counter_SORYU_CNT_PREEMPT_KICK)] += enq / 4;
            st.cnt[c(soryu_counter_SORYU_CNT_PREEMPT_DEFER)] += enq / 2 - enq / 4;
            st.cnt[c(soryu_counter_SORYU_CNT_PREEMPT_NONE)] += enq - enq / 3 - enq / 2;
            st.cnt[c(soryu_counter_SORYU_CNT_STALE_KICK)] += k % 3;
            for _ in 0..enq {
                let boost = ((rng.unit() * 25.0) as usize).min(24);
                st.boost_hist[boost] += 1;
                let level = 1 + (10 + boost / 2).min(31);
                st.level_hist[level] += 1;
                let probes = 1 + (rng.unit() * rng.unit() * 12.0) as usize;
                st.probe_hist[probes] += 1;
                st.cnt[c(soryu_counter_SORYU_CNT_DISPATCH)] += 1;
                st.cnt[c(soryu_counter_SORYU_CNT_PROBES)] += probes as u64;
            }
            st.probe_hist[0] += 5; // the empty calls probed nothing here
            st.probe_hist[1] += 25;
            st.cnt[c(soryu_counter_SORYU_CNT_PROBES)] += 25;
        }
        max[WAIT_QUEUED] = max[0].max(max[1]);
        let cur = snap(&cpus, k);
        out.push(interval::between(&prev, &cur, max, &consts));
        prev = cur;
    }
    out
}

/// --prometheus-sample PATH: the file as the daemon writes it after three
/// intervals of synthetic figures, through the same writer; for tests and
/// for looking at the format on a machine without sched_ext.
pub fn write_sample(cfg: &ReportConfig, path: &Path) -> Result<()> {
    let mut totals = Totals::default();
    let ivs = synthetic_intervals(3);
    for iv in &ivs {
        totals.add(iv);
    }
    let text = render(&RunInfo::new(cfg), &totals, &ivs[ivs.len() - 1]);
    write_atomic(path, &text).with_context(|| format!("cannot write {}", path.display()))
}
