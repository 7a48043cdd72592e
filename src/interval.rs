// SPDX-License-Identifier: GPL-2.0-only
//
// The figures of one interval, from the two Snapshots around it
// (between()): counters and histograms differenced, then every figure
// computed as the figure table says (scx_soryu::figures). And an scx_stats
// client's view, which keeps its own previous Snapshot and longest waits.

use std::collections::BTreeMap;

use scx_soryu::figures::{Inputs, LatFigures, Metrics, Waits};
use scx_soryu::hist;
use scx_soryu::record::{BpfCost, Hists, Interval};
use scx_soryu::spec::Class;

use crate::stats::{tasks_running, MaxWaitSub, Snapshot};

/// What an attach fixes for every interval after it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RunConsts {
    /// The kernel's tick rate (0: unknown; jiffies are then unknown).
    pub kernel_hz: u32,
    /// The starvation bound for one starving task per CPU (us; 0: unknown),
    /// printed beside the longest queued wait.
    pub starve_bound_us: u64,
}

/// Figures of the interval from `prev` to `cur`. `max_wait_ns` is the
/// longest wait per class over the same interval (a MaxWaitSub's take,
/// never a value of `cur` alone).
pub fn between(prev: &Snapshot, cur: &Snapshot, max_wait_ns: Waits, k: &RunConsts) -> Interval {
    let cnt = hist::diff(&cur.cnt, &prev.cnt);
    let probes = hist::diff(&cur.probe_hist, &prev.probe_hist);
    let lat = |c: Class| hist::diff(&cur.lat_hist[c.index()], &prev.lat_hist[c.index()]);
    let (lat_i, lat_o) = (lat(Class::Interactive), lat(Class::Other));
    let boost = hist::diff(&cur.boost_hist, &prev.boost_hist);
    let levels = hist::diff(&cur.level_hist, &prev.level_hist);
    let mut lats: [LatFigures; 2] = Default::default();
    for (c, counts) in [(Class::Interactive, &lat_i), (Class::Other, &lat_o)] {
        lats[c.index()] = LatFigures::from_hist(counts, max_wait_ns[c.index()], k.kernel_hz);
    }
    let metrics = Metrics::compute(&Inputs {
        duration_s: cur.at.saturating_duration_since(prev.at).as_secs_f64(),
        cnt: &cnt,
        probes: &probes,
        boost: &boost,
        max_wait_ns,
        lat: lats,
        starve_bound_us: k.starve_bound_us,
        tasks_running: tasks_running(),
    });
    let kernel_events = cur
        .kernel_events
        .iter()
        .map(|(k, v)| {
            (
                k.clone(),
                v.wrapping_sub(*prev.kernel_events.get(k).unwrap_or(&0)),
            )
        })
        .collect();
    let bpf_cost: BTreeMap<String, BpfCost> = cur
        .bpf_progs
        .iter()
        .filter_map(|(k, &(cnt, ns))| {
            let (pcnt, pns) = prev.bpf_progs.get(k).copied().unwrap_or((0, 0));
            let calls = cnt.wrapping_sub(pcnt);
            let ns_per_call = ns.wrapping_sub(pns) as f64 / calls.max(1) as f64;
            (calls > 0).then(|| (k.clone(), BpfCost { calls, ns_per_call }))
        })
        .collect();
    Interval {
        metrics,
        hists: Hists {
            lat_interactive: lat_i,
            lat_other: lat_o,
            probes,
            boost,
            levels,
        },
        kernel_events,
        bpf_cost,
    }
}

/// An scx_stats client's view: the figures of the interval since its own
/// previous request, longest waits included.
pub struct ClientView {
    prev: Snapshot,
    maxima: MaxWaitSub,
    consts: RunConsts,
}

impl ClientView {
    /// `maxima` must be subscribed before `first` was read.
    pub fn new(first: Snapshot, maxima: MaxWaitSub, consts: RunConsts) -> Self {
        maxima.take();
        ClientView {
            prev: first,
            maxima,
            consts,
        }
    }

    pub fn next(&mut self, cur: Snapshot) -> Interval {
        let iv = between(&self.prev, &cur, self.maxima.take(), &self.consts);
        self.prev = cur;
        iv
    }
}
