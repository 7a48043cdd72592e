// SPDX-License-Identifier: GPL-2.0-only
//
// Which CPUs share a last-level cache, as the kernel reports it in sysfs:
// the layout the BPF side's preemption victim search reads per LLC
// (src/bpf/llc.bpf.c). Read anew at every load, so that a restart after
// CPU hotplug sees the CPUs as they are now.

use std::path::Path;

use crate::bpf_intf::*;

/// CPUs grouped by last-level cache: each group's CPUs ascending, groups in
/// the order of their first CPU. Every CPU id below the kernel's
/// nr_cpu_ids is in exactly one group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    pub llcs: Vec<Vec<usize>>,
    /// Per CPU id, the next SMT sibling of its core in a ring (the CPU
    /// itself when it has none): following it from any CPU visits each
    /// thread of that core once (src/bpf/smt.bpf.c).
    pub siblings: Vec<usize>,
}

impl Layout {
    /// "0-3 | 4-7": the groups as CPU lists, for logs and the report header.
    pub fn describe(&self) -> Vec<String> {
        self.llcs.iter().map(|c| cpu_list(c)).collect()
    }
}

/// The layout of this machine as sysfs shows it now. Read at every load:
/// CPUs that come online after a hotplug restart join their own LLC.
pub fn read() -> Layout {
    let nr = libbpf_rs::num_possible_cpus().unwrap_or(1).max(1);
    let sys = Path::new("/sys/devices/system/cpu");
    let keys: Vec<(usize, usize)> = (0..nr)
        .filter_map(|cpu| llc_key(sys, cpu).map(|k| (cpu, k)))
        .collect();
    let mut layout = group(&keys, nr, soryu_consts_SORYU_MAX_LLCS as usize);
    let threads: Vec<Option<Vec<usize>>> = (0..nr)
        .map(|cpu| {
            let f = sys.join(format!("cpu{cpu}/topology/thread_siblings_list"));
            std::fs::read_to_string(f)
                .ok()
                .and_then(|s| parse_cpu_list(&s))
        })
        .collect();
    layout.siblings = sibling_ring(&threads);
    layout
}

/// Per CPU, the next CPU of its core's thread list (ascending, wrapping),
/// from each CPU's thread_siblings_list; itself when its list is unknown
/// (an offline CPU), malformed or does not hold it.
pub fn sibling_ring(threads: &[Option<Vec<usize>>]) -> Vec<usize> {
    (0..threads.len())
        .map(|cpu| {
            let Some(list) = &threads[cpu] else {
                return cpu;
            };
            let mut t: Vec<usize> = list
                .iter()
                .copied()
                .filter(|&c| c < threads.len())
                .collect();
            t.sort_unstable();
            t.dedup();
            match t.iter().position(|&c| c == cpu) {
                Some(i) => t[(i + 1) % t.len()],
                None => cpu,
            }
        })
        .collect()
}

/// The key of @cpu's last-level cache: the lowest CPU that shares it. None
/// when sysfs shows no cache for it (an offline CPU, a platform without
/// cache information).
fn llc_key(sys: &Path, cpu: usize) -> Option<usize> {
    let dir = sys.join(format!("cpu{cpu}/cache"));
    let mut best: Option<(u32, usize)> = None;
    for e in std::fs::read_dir(dir).ok()?.flatten() {
        let read = |f: &str| std::fs::read_to_string(e.path().join(f)).ok();
        if read("type").is_some_and(|t| t.trim() == "Instruction") {
            continue;
        }
        let (Some(level), Some(shared)) = (read("level"), read("shared_cpu_list")) else {
            continue;
        };
        let (Ok(level), Some(first)) = (
            level.trim().parse::<u32>(),
            parse_cpu_list(&shared)?.first().copied(),
        ) else {
            continue;
        };
        if best.is_none_or(|(l, _)| level > l) {
            best = Some((level, first));
        }
    }
    best.map(|(_, k)| k)
}

/// Group (cpu, llc key) pairs into a layout of the CPUs 0..@nr_cpu_ids.
/// CPUs without a key join the first group (the BPF side counts a CPU it
/// was not told about in LLC 0). Past @max groups, group i folds into
/// group i % @max: a search then reads more CPUs, never misses one.
pub fn group(keys: &[(usize, usize)], nr_cpu_ids: usize, max: usize) -> Layout {
    let mut order: Vec<usize> = Vec::new(); // keys, in order of first CPU
    let mut sorted = keys.to_vec();
    sorted.sort_unstable();
    let mut llcs: Vec<Vec<usize>> = Vec::new();
    let mut placed = vec![false; nr_cpu_ids];
    for &(cpu, key) in &sorted {
        if cpu >= nr_cpu_ids || placed[cpu] {
            continue;
        }
        let i = match order.iter().position(|&k| k == key) {
            Some(i) => i,
            None => {
                order.push(key);
                order.len() - 1
            }
        };
        let g = i % max.max(1);
        if g == llcs.len() {
            llcs.push(Vec::new());
        }
        llcs[g].push(cpu);
        placed[cpu] = true;
    }
    if llcs.is_empty() {
        llcs.push(Vec::new());
    }
    for (cpu, done) in placed.iter().enumerate() {
        if !done {
            llcs[0].push(cpu);
        }
    }
    for l in &mut llcs {
        l.sort_unstable();
    }
    Layout {
        llcs,
        siblings: (0..nr_cpu_ids).collect(),
    }
}

/// Parse a kernel CPU list ("0-3,8,10-11"). None if malformed.
pub fn parse_cpu_list(s: &str) -> Option<Vec<usize>> {
    let mut out = Vec::new();
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (a.parse::<usize>().ok()?, b.parse::<usize>().ok()?);
                if b < a {
                    return None;
                }
                out.extend(a..=b);
            }
            None => out.push(part.parse().ok()?),
        }
    }
    Some(out)
}

/// The inverse: ascending CPUs as a kernel CPU list.
pub fn cpu_list(cpus: &[usize]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(if i == j {
            cpus[i].to_string()
        } else {
            format!("{}-{}", cpus[i], cpus[j])
        });
        i = j + 1;
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_round_trip() {
        assert_eq!(
            parse_cpu_list("0-3,8,10-11\n"),
            Some(vec![0, 1, 2, 3, 8, 10, 11])
        );
        assert_eq!(cpu_list(&[0, 1, 2, 3, 8, 10, 11]), "0-3,8,10-11");
        assert_eq!(parse_cpu_list("3-1"), None);
        assert_eq!(parse_cpu_list("a"), None);
        assert_eq!(cpu_list(&[]), "");
    }

    #[test]
    fn groups_by_key_in_order_of_first_cpu() {
        // two sockets with SMT siblings numbered apart: 0,1,4,5 and 2,3,6,7
        let keys = [
            (0, 0),
            (1, 0),
            (2, 2),
            (3, 2),
            (4, 0),
            (5, 0),
            (6, 2),
            (7, 2),
        ];
        let l = group(&keys, 8, 256);
        assert_eq!(l.llcs, vec![vec![0, 1, 4, 5], vec![2, 3, 6, 7]]);
        assert_eq!(l.describe(), vec!["0-1,4-5", "2-3,6-7"]);
    }

    #[test]
    fn siblings_form_a_ring_per_core() {
        // SMT2 numbered apart (0,4 1,5 ...), an SMT4 core, an offline CPU
        let two = |a, b| Some(vec![a, b]);
        let t = vec![two(0, 4), two(1, 5), None, two(3, 7), two(0, 4), two(1, 5)];
        assert_eq!(sibling_ring(&t), vec![4, 5, 2, 3, 0, 1]);
        let four = Some(vec![0, 1, 2, 3]);
        assert_eq!(sibling_ring(&vec![four; 4]), vec![1, 2, 3, 0]);
        // no SMT: each CPU its own ring; a list without the CPU: itself
        assert_eq!(sibling_ring(&[Some(vec![0]), Some(vec![0])]), vec![0, 1]);
    }

    #[test]
    fn cpus_without_a_cache_join_the_first_llc() {
        // CPUs 6 and 7 possible but offline: no sysfs cache entry
        let keys = [(0, 0), (1, 0), (2, 2), (3, 2), (4, 4), (5, 4)];
        let l = group(&keys, 8, 256);
        assert_eq!(l.llcs, vec![vec![0, 1, 6, 7], vec![2, 3], vec![4, 5]]);
        // no cache information at all: one LLC of every CPU
        assert_eq!(group(&[], 3, 256).llcs, vec![vec![0, 1, 2]]);
    }

    #[test]
    fn too_many_llcs_fold_and_lose_no_cpu() {
        let keys: Vec<(usize, usize)> = (0..10).map(|c| (c, c)).collect();
        let l = group(&keys, 10, 4);
        assert_eq!(
            l.llcs,
            vec![vec![0, 4, 8], vec![1, 5, 9], vec![2, 6], vec![3, 7]]
        );
        let mut all: Vec<usize> = l.llcs.concat();
        all.sort_unstable();
        assert_eq!(all, (0..10).collect::<Vec<_>>());
    }
}
