// SPDX-License-Identifier: GPL-2.0-only
//
// Statistics collection: sum the per-CPU `stats` map into a Snapshot;
// interval.rs turns two Snapshots into the figures of the interval between
// them. Every figure is differenced; nothing reported is cumulative.
//
// Longest waits cannot be differenced: the BPF side keeps a per-CPU maximum
// per epoch (reset lazily when the daemon bumps `stats_epoch`). The daemon
// closes an epoch at every loop tick and folds its maxima into one
// accumulator per consumer (MaxWaits): the periodic report and each
// scx_stats client, so each one's longest wait covers its own interval.
//
// This file reads the maps; the figures of an interval are interval.rs.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use libbpf_rs::{MapCore, MapFlags};

use scx_soryu::bpf_intf::*;
use scx_soryu::figures::{Waits, NR_WAITS};

const NR_CNT: usize = soryu_counter_SORYU_NR_COUNTERS as usize;

/// Everything the BPF side has counted since attach, summed over CPUs.
#[derive(Clone, Debug)]
pub struct Snapshot {
    pub at: Instant,
    pub cnt: Vec<u64>,
    pub probe_hist: Vec<u64>,
    pub lat_hist: [Vec<u64>; 2],
    pub boost_hist: Vec<u64>,
    pub level_hist: Vec<u64>,
    /// Longest wait per class in the epoch that was read (see
    /// Snapshot::read): fold it into MAX_WAITS.
    pub max_wait_ns: Waits,
    pub kernel_events: BTreeMap<String, u64>,
    /// (run count, total ns) of each soryu BPF program, when the kernel
    /// keeps them (sysctl kernel.bpf_stats_enabled=1); empty otherwise.
    pub bpf_progs: BTreeMap<String, (u64, u64)>,
}

impl Snapshot {
    /// Sum the per-CPU values. Only maxima recorded during `epoch` count.
    pub fn from_percpu(per_cpu: &[soryu_stats], epoch: u64) -> Self {
        let z = |n: usize| vec![0u64; n];
        let mut s = Snapshot {
            at: Instant::now(),
            cnt: z(NR_CNT),
            probe_hist: z(soryu_consts_SORYU_MAX_PROBES as usize + 1),
            lat_hist: [
                z(soryu_consts_SORYU_NR_LAT_BUCKETS as usize),
                z(soryu_consts_SORYU_NR_LAT_BUCKETS as usize),
            ],
            boost_hist: z(soryu_consts_SORYU_BOOST_SPAN as usize),
            level_hist: z(soryu_consts_SORYU_NR_LEVELS as usize),
            max_wait_ns: [0; NR_WAITS],
            kernel_events: BTreeMap::new(),
            bpf_progs: BTreeMap::new(),
        };
        let add = |acc: &mut Vec<u64>, v: &[u64]| {
            for (a, x) in acc.iter_mut().zip(v) {
                *a = a.wrapping_add(*x);
            }
        };
        for c in per_cpu {
            add(&mut s.cnt, &c.cnt);
            add(&mut s.probe_hist, &c.probe_hist);
            add(&mut s.lat_hist[0], &c.lat_hist[0]);
            add(&mut s.lat_hist[1], &c.lat_hist[1]);
            add(&mut s.boost_hist, &c.boost_hist);
            add(&mut s.level_hist, &c.level_hist);
        }
        s.max_wait_ns = max_waits_of(per_cpu, epoch);
        s
    }

    /// Read the `stats` map of a loaded scheduler. `epoch` is the epoch of
    /// the per-CPU maxima to take: the one just closed by bumping
    /// `stats_epoch` (waits filed after the bump belong to the next one).
    pub fn read(map: &dyn MapCore, epoch: u64) -> Result<Self> {
        let mut s = Self::from_percpu(&read_percpu(map)?, epoch);
        s.kernel_events = read_kernel_events();
        s.bpf_progs = read_bpf_prog_stats();
        Ok(s)
    }
}

fn read_percpu(map: &dyn MapCore) -> Result<Vec<soryu_stats>> {
    let key = 0u32.to_ne_bytes();
    let vals = map
        .lookup_percpu(&key, MapFlags::ANY)
        .context("reading the per-CPU stats map")?
        .context("the per-CPU stats map has no entry 0")?;
    let mut per_cpu = Vec::with_capacity(vals.len());
    for v in &vals {
        if v.len() < std::mem::size_of::<soryu_stats>() {
            bail!(
                "per-CPU stats value is {} bytes, expected {}",
                v.len(),
                std::mem::size_of::<soryu_stats>()
            );
        }
        // SAFETY: the map value is a struct soryu_stats laid out by the
        // same intf.h these bindings were generated from.
        per_cpu.push(unsafe { std::ptr::read_unaligned(v.as_ptr() as *const soryu_stats) });
    }
    Ok(per_cpu)
}

/// Longest wait per class of the (closed) `epoch`, over all CPUs: the cheap
/// read of every loop tick (no sysfs, no program list).
pub fn read_max_waits(map: &dyn MapCore, epoch: u64) -> Result<Waits> {
    Ok(max_waits_of(&read_percpu(map)?, epoch))
}

/// The longest waits of the closed `epoch`, from its slot (see intf.h).
fn max_waits_of(per_cpu: &[soryu_stats], epoch: u64) -> Waits {
    let slot = (epoch & 1) as usize;
    let mut m = [0u64; NR_WAITS];
    for c in per_cpu.iter().filter(|c| c.max_wait_epoch[slot] == epoch) {
        for (acc, &v) in m.iter_mut().zip(&c.max_wait_ns[slot]) {
            *acc = (*acc).max(v);
        }
    }
    m
}

/// Longest waits per class, folded in from every closed epoch and kept for
/// each consumer until it takes them: the periodic report holds one
/// subscription, each scx_stats client another.
#[derive(Default)]
pub struct MaxWaits {
    subs: Mutex<Vec<Weak<Mutex<Waits>>>>,
}

/// One consumer's longest waits since it last took them.
pub struct MaxWaitSub(Arc<Mutex<Waits>>);

/// The daemon's: its loop folds into it, reports and clients subscribe.
pub static MAX_WAITS: MaxWaits = MaxWaits::new();

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl MaxWaits {
    pub const fn new() -> Self {
        MaxWaits {
            subs: Mutex::new(Vec::new()),
        }
    }

    pub fn subscribe(&self) -> MaxWaitSub {
        let sub = Arc::new(Mutex::new([0; NR_WAITS]));
        lock(&self.subs).push(Arc::downgrade(&sub));
        MaxWaitSub(sub)
    }

    /// Whether anyone would see a fold (when not, the tick can skip it).
    pub fn wanted(&self) -> bool {
        lock(&self.subs).iter().any(|w| w.strong_count() > 0)
    }

    /// Fold the maxima of one closed epoch into every live subscription.
    pub fn fold(&self, m: Waits) {
        lock(&self.subs).retain(|w| match w.upgrade() {
            Some(sub) => {
                let mut acc = lock(&sub);
                for (a, &v) in acc.iter_mut().zip(&m) {
                    *a = (*a).max(v);
                }
                true
            }
            None => false,
        });
    }
}

impl MaxWaitSub {
    /// The longest waits folded in since the last take; starts over.
    pub fn take(&self) -> Waits {
        std::mem::take(&mut *lock(&self.0))
    }
}

/// The kernel's own sched_ext event counters, where it exposes them
/// (/sys/kernel/sched_ext/root/events on recent kernels): "NAME VALUE" lines.
pub fn read_kernel_events() -> BTreeMap<String, u64> {
    let Ok(text) = std::fs::read_to_string("/sys/kernel/sched_ext/root/events") else {
        return BTreeMap::new();
    };
    text.lines()
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            let (k, v) = (it.next()?, it.next()?.parse().ok()?);
            Some((k.to_string(), v))
        })
        .collect()
}

/// Run counts and run times of soryu's BPF programs. The kernel only keeps
/// them while kernel.bpf_stats_enabled is 1 (it costs a clock read per
/// call), so nothing is read otherwise.
pub fn read_bpf_prog_stats() -> BTreeMap<String, (u64, u64)> {
    let enabled = std::fs::read_to_string("/proc/sys/kernel/bpf_stats_enabled")
        .map(|s| s.trim() == "1")
        .unwrap_or(false);
    if !enabled {
        return BTreeMap::new();
    }
    libbpf_rs::query::ProgInfoIter::default()
        .filter_map(|p| {
            let name = p.name.to_string_lossy().into_owned();
            name.starts_with("soryu_")
                .then_some((name, (p.run_cnt, p.run_time_ns)))
        })
        .collect()
}

/// Tasks on a run queue right now (procs_running of /proc/stat).
pub fn tasks_running() -> u64 {
    std::fs::read_to_string("/proc/stat")
        .ok()
        .and_then(|s| {
            s.lines().find_map(|l| {
                l.strip_prefix("procs_running ")
                    .and_then(|v| v.trim().parse().ok())
            })
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests;
