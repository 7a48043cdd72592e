// SPDX-License-Identifier: GPL-2.0-only
//
// `scx_soryu inspect PID...`: what the running soryu thinks of a task, read
// from the loaded program itself: the task's boost and slice state from the
// task storage map `task_ctxs` (looked up by pidfd, as the kernel allows for
// task storage), its nice and policy from /proc, and the level they make.
// For a user asking "why does my task wait?", and for the tests, which check
// the boost rules against the loaded program rather than against a model.

use std::mem::size_of;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use libbpf_rs::query::MapInfoIter;
use libbpf_rs::{MapCore, MapFlags, MapHandle, MapType};
use serde::Serialize;

use crate::bpf_intf::{soryu_consts_SORYU_LVL_NONE, soryu_task_ctx};
use crate::policy;

#[derive(Debug, Clone, clap::Args)]
pub struct InspectArgs {
    /// Print one JSON object per task instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Tasks (thread ids) to show.
    #[arg(required = true, value_name = "PID")]
    pub pids: Vec<i32>,
}

#[derive(Debug, Serialize)]
pub struct TaskView {
    pub pid: i32,
    pub comm: String,
    pub policy: i32,
    pub nice: i32,
    /// The nice offset of its cgroups' cpu.weight, as the BPF side holds it.
    pub cgroup_nice: i32,
    pub boost: i32,
    /// The level nice + cgroup_nice and boost make now.
    pub level: u32,
    /// The level the BPF side queued it at last (None: never queued).
    pub queued_level: Option<u32>,
    pub used_ns: u64,
    pub granted: bool,
}

const TASK_MAP: &str = "task_ctxs";

/// The task storage map of the running soryu: the newest map of that name,
/// type and value size (only one sched_ext scheduler runs at a time, and the
/// caller has checked it is soryu).
fn task_map() -> Result<MapHandle> {
    let id = MapInfoIter::default()
        .filter(|m| {
            m.name.to_str() == Some(TASK_MAP)
                && m.ty == MapType::TaskStorage
                && m.value_size as usize == size_of::<soryu_task_ctx>()
        })
        .map(|m| m.id)
        .max()
        .context("no soryu task map is loaded (is scx_soryu running?)")?;
    MapHandle::from_map_id(id).with_context(|| format!("cannot open BPF map {id}"))
}

const PF_KTHREAD: u64 = 0x0020_0000;

/// comm, nice, policy and "per-CPU kthread" of a task, from /proc. Fields
/// of /proc/PID/stat from the 3rd on start after the last ')' (the command
/// name may hold any character).
fn proc_stat(pid: i32) -> Result<(String, i32, i32, bool)> {
    let path = PathBuf::from(format!("/proc/{pid}/stat"));
    let text = std::fs::read_to_string(&path).with_context(|| format!("no task {pid}"))?;
    let open = text.find('(').context("malformed /proc stat")?;
    let close = text.rfind(')').context("malformed /proc stat")?;
    let comm = text[open + 1..close].to_string();
    let f: Vec<&str> = text[close + 1..].split_whitespace().collect();
    // after ')': state(0) ... nice is field 19 of stat, policy field 41
    let nice = f
        .get(16)
        .and_then(|v| v.parse().ok())
        .context("no nice in /proc stat")?;
    let pol = f
        .get(38)
        .and_then(|v| v.parse().ok())
        .context("no policy in /proc stat")?;
    let flags: u64 = f
        .get(6)
        .and_then(|v| v.parse().ok())
        .context("no flags in /proc stat")?;
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let one_cpu = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .is_some_and(|v| !v.contains([',', '-']));
    Ok((comm, nice, pol, flags & PF_KTHREAD != 0 && one_cpu))
}

fn lookup(map: &MapHandle, pid: i32) -> Result<soryu_task_ctx> {
    // SAFETY: plain syscall; the fd it returns is owned and closed below.
    let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) } as i32;
    if pidfd < 0 {
        bail!("no task {pid}: {}", std::io::Error::last_os_error());
    }
    let res = map.lookup(&pidfd.to_ne_bytes(), MapFlags::ANY);
    // SAFETY: pidfd is ours and not used after this.
    unsafe { libc::close(pidfd) };
    let bytes = res
        .with_context(|| format!("cannot look task {pid} up in the soryu task map"))?
        .with_context(|| format!("task {pid} has no soryu state (not a SCHED_EXT task yet?)"))?;
    if bytes.len() != size_of::<soryu_task_ctx>() {
        bail!(
            "task map value is {} bytes, expected {}",
            bytes.len(),
            size_of::<soryu_task_ctx>()
        );
    }
    // SAFETY: the size matches and soryu_task_ctx is plain integers.
    Ok(unsafe { std::ptr::read_unaligned(bytes.as_ptr() as *const soryu_task_ctx) })
}

pub fn view(map: &MapHandle, pid: i32) -> Result<TaskView> {
    let (comm, nice, pol, pcpu_kthread) = proc_stat(pid)?;
    let t = lookup(map, pid)?;
    Ok(TaskView {
        pid,
        comm,
        policy: pol,
        nice,
        cgroup_nice: t.cg_nice,
        boost: t.boost,
        level: policy::level_of(pol, pcpu_kthread, nice + t.cg_nice, t.boost),
        queued_level: (t.enq_level != soryu_consts_SORYU_LVL_NONE).then_some(t.enq_level),
        used_ns: t.used_ns,
        granted: t.granted != 0,
    })
}

pub fn run(args: &InspectArgs) -> Result<()> {
    crate::scheduler::require_running_soryu()?;
    let map = task_map()?;
    if !args.json {
        println!(
            "{:>7} {:<16} {:>6} {:>4} {:>6} {:>5} {:>5} {:>6} {:>10} granted",
            "pid", "comm", "policy", "nice", "cgnice", "boost", "level", "queued", "used_us"
        );
    }
    let mut failed = 0;
    for &pid in &args.pids {
        match view(&map, pid) {
            Ok(v) if args.json => println!("{}", serde_json::to_string(&v)?),
            Ok(v) => println!(
                "{:>7} {:<16} {:>6} {:>4} {:>6} {:>5} {:>5} {:>6} {:>10} {}",
                v.pid,
                v.comm,
                v.policy,
                v.nice,
                v.cgroup_nice,
                v.boost,
                v.level,
                v.queued_level.map_or("-".to_string(), |l| l.to_string()),
                v.used_ns / 1000,
                v.granted
            ),
            Err(e) => {
                eprintln!("scx_soryu: inspect {pid}: {e:#}");
                failed += 1;
            }
        }
    }
    if failed > 0 {
        bail!(
            "{failed} of {} tasks could not be inspected",
            args.pids.len()
        );
    }
    Ok(())
}
