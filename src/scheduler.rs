// SPDX-License-Identifier: GPL-2.0-only
//
// Scheduler lifecycle: checks before loading, open -> knobs into rodata ->
// load -> attach, the report loop, and detach with the kernel's exit reason
// (the interval it stopped in reported first).

use std::collections::VecDeque;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use crossbeam_channel::TryRecvError;
use libbpf_rs::skel::Skel;
use libbpf_rs::{OpenObject, PrintLevel};
use log::{info, warn};
use scx_soryu::about::{kernel_release, version};
use scx_soryu::figures::Metrics;
use scx_soryu::record::ExitRecord;
use scx_stats::prelude::*;
use scx_utils::{scx_ops_attach, scx_ops_load, scx_ops_open, uei_exited, uei_read, UserExitInfo};

use crate::bpf_skel::*;
use crate::config::SchedConfig;
use crate::interval::{ClientView, RunConsts};
use crate::logger::say;
use crate::open_opts::OpenOpts;
use crate::report::{self, Attach, Reporter};
use crate::stats::{self, Snapshot, MAX_WAITS};

const SCX_SYSFS: &str = "/sys/kernel/sched_ext";

/// Refuse to start, with one clear line, when the scheduler cannot run here.
/// Nothing has been loaded when this fails.
pub fn preflight() -> Result<()> {
    if unsafe { libc::geteuid() } != 0 {
        bail!("must run as root (loading a sched_ext scheduler needs CAP_SYS_ADMIN and CAP_BPF); try: sudo scx_soryu");
    }
    if !std::path::Path::new(SCX_SYSFS).is_dir() {
        bail!(
            "this kernel ({}) has no sched_ext: it was built without CONFIG_SCHED_CLASS_EXT; boot a kernel with it (Linux 6.12+), or try soryu in a VM with scripts/demo.sh",
            kernel_release()
        );
    }
    let state = std::fs::read_to_string(format!("{SCX_SYSFS}/state")).unwrap_or_default();
    if state.trim() != "disabled" {
        let ops = std::fs::read_to_string(format!("{SCX_SYSFS}/root/ops")).unwrap_or_default();
        let ops = ops.trim();
        bail!(
            "another sched_ext scheduler is {} ({}); stop it first (e.g. systemctl stop scx, or kill it)",
            state.trim(),
            if ops.is_empty() { "name unknown" } else { ops }
        );
    }
    Ok(())
}

/// For tools that read the running scheduler (inspect): root, and soryu
/// enabled in the kernel; one line saying which is missing.
pub fn require_running_soryu() -> Result<()> {
    if unsafe { libc::geteuid() } != 0 {
        bail!("must run as root to read the running scheduler's BPF maps; try: sudo scx_soryu");
    }
    let state = std::fs::read_to_string(format!("{SCX_SYSFS}/state")).unwrap_or_default();
    let ops = std::fs::read_to_string(format!("{SCX_SYSFS}/root/ops")).unwrap_or_default();
    if state.trim() != "enabled" || !ops.trim().starts_with("soryu") {
        bail!(
            "scx_soryu is not running (sched_ext state '{}', ops '{}'); start it first",
            state.trim(),
            ops.trim()
        );
    }
    Ok(())
}

/// The last lines libbpf printed (the verifier's log among them), kept so a
/// failed load can show why without -v.
static LIBBPF_TAIL: Mutex<VecDeque<String>> = Mutex::new(VecDeque::new());
static VERBOSE: AtomicBool = AtomicBool::new(false);
const LIBBPF_TAIL_LINES: usize = 30;

fn libbpf_print(level: PrintLevel, msg: String) {
    if VERBOSE.load(Ordering::Relaxed) {
        say(&format!("libbpf: {}", msg.trim_end_matches('\n')));
    }
    // libbpf prints the verifier's log at warning level; debug is chatter.
    if level == PrintLevel::Debug {
        return;
    }
    let mut tail = LIBBPF_TAIL.lock().unwrap_or_else(|e| e.into_inner());
    for line in msg.lines() {
        if tail.len() == LIBBPF_TAIL_LINES {
            tail.pop_front();
        }
        tail.push_back(line.to_string());
    }
}

/// The LLC layout into rodata (src/bpf/llc.bpf.c): each CPU's LLC, and the
/// CPUs of LLC l at llc_cpus[llc_first[l]..llc_first[l + 1]]. CPUs past
/// the BPF side's arrays are left out: only the fallback search reads them.
/// And each CPU's next SMT sibling (src/bpf/smt.bpf.c), itself by default.
fn set_layout(rodata: &mut crate::bpf_skel::types::rodata, layout: &crate::topology::Layout) {
    let max_cpus = rodata.llc_cpus.len();
    let mut at = 0;
    rodata.nr_llcs = layout.llcs.len() as u32;
    for (l, cpus) in layout.llcs.iter().enumerate() {
        rodata.llc_first[l] = at as u32;
        for &cpu in cpus.iter().filter(|&&c| c < max_cpus) {
            rodata.cpu_llc[cpu] = l as u32;
            rodata.llc_cpus[at] = cpu as u32;
            at += 1;
        }
    }
    rodata.llc_first[layout.llcs.len()] = at as u32;
    for (cpu, s) in rodata.cpu_sibling.iter_mut().enumerate() {
        *s = layout
            .siblings
            .get(cpu)
            .map_or(cpu, |&n| if n < max_cpus { n } else { cpu }) as u32;
    }
}

pub fn install_libbpf_logger(verbose: bool) {
    VERBOSE.store(verbose, Ordering::Relaxed);
    libbpf_rs::set_print(Some((PrintLevel::Debug, libbpf_print)));
}

/// The kfunc libbpf found declared differently in the kernel's BTF, if that
/// is why the load failed ("extern (func ksym) 'NAME': func_proto [N]
/// incompatible with vmlinux [M]"): the kernel's API, not a verifier
/// refusal.
fn kfunc_mismatch() -> Option<String> {
    let tail = LIBBPF_TAIL.lock().unwrap_or_else(|e| e.into_inner());
    tail.iter().find_map(|l| kfunc_of_mismatch(l))
}

fn kfunc_of_mismatch(line: &str) -> Option<String> {
    if !line.contains("incompatible with vmlinux") {
        return None;
    }
    let rest = line.split("extern (func ksym) '").nth(1)?;
    rest.split('\'').next().map(str::to_string)
}

fn libbpf_tail() -> String {
    let tail = LIBBPF_TAIL.lock().unwrap_or_else(|e| e.into_inner());
    tail.iter().map(|l| format!("  | {l}\n")).collect()
}

/// Instructions the kernel's verifier walked to load the scheduler, over
/// all its programs, and the program that took the most: what the load's
/// time grows with (measured under emulation). A program whose info cannot be
/// read counts 0: this is a figure for the log, not a check.
fn verified_insns(skel: &BpfSkel) -> (u64, String, u32) {
    use std::os::fd::{AsFd, AsRawFd};
    let (mut total, mut top, mut top_insns) = (0u64, String::new(), 0u32);
    for prog in skel.object().progs() {
        let mut info = libbpf_sys::bpf_prog_info::default();
        let mut len = std::mem::size_of_val(&info) as u32;
        // SAFETY: the fd is the loaded program's, open for the call; info
        // is a bpf_prog_info of the size passed, with no pointer fields set.
        let ret = unsafe {
            libbpf_sys::bpf_obj_get_info_by_fd(
                prog.as_fd().as_raw_fd(),
                (&mut info as *mut libbpf_sys::bpf_prog_info).cast(),
                &mut len,
            )
        };
        if ret != 0 {
            continue;
        }
        total += u64::from(info.verified_insns);
        if info.verified_insns > top_insns {
            top_insns = info.verified_insns;
            top = prog.name().to_string_lossy().into_owned();
        }
    }
    (total, top, top_insns)
}

/// The compat fallbacks the loaded program uses on this kernel, by the
/// names the log shows (src/bpf/intf.h, enum soryu_compat, says what each
/// stands for); "none" on a kernel with every interface soryu calls.
fn compat_names(mask: u32) -> String {
    use crate::bpf_intf::*;
    const NAMES: [(u32, &str); soryu_compat_SORYU_NR_COMPAT as usize] = [
        (soryu_compat_SORYU_COMPAT_PEEK_ITER, "peek_iter"),
        (soryu_compat_SORYU_COMPAT_SLICE_WRITE, "slice_write"),
        (soryu_compat_SORYU_COMPAT_KTIME, "ktime"),
        (soryu_compat_SORYU_COMPAT_DISPATCH, "dispatch"),
        (soryu_compat_SORYU_COMPAT_NODE0, "node0"),
        (soryu_compat_SORYU_COMPAT_CPU_RQ, "cpu_rq"),
    ];
    let on: Vec<&str> = NAMES
        .iter()
        .filter(|(bit, _)| mask & bit != 0)
        .map(|&(_, n)| n)
        .collect();
    if on.is_empty() {
        "none".into()
    } else {
        on.join(" ")
    }
}

pub struct Scheduler<'a> {
    skel: BpfSkel<'a>,
    link: Option<libbpf_rs::Link>,
    stats_server: StatsServer<(), Snapshot>,
    consts: RunConsts,
    /// The LLCs the victim search groups CPUs by, for the report header.
    llcs: Vec<String>,
}

impl<'a> Scheduler<'a> {
    pub fn init(
        opts: &SchedConfig,
        open_opts: &OpenOpts,
        open_object: &'a mut MaybeUninit<OpenObject>,
    ) -> Result<Self> {
        // Not obj_builder.debug(): it would replace the logger installed by
        // install_libbpf_logger(), which keeps the verifier's last lines.
        let builder = BpfSkelBuilder::default();
        let open_opts = open_opts.get();
        let mut skel = scx_ops_open!(builder, open_object, soryu_ops, open_opts)
            .context("cannot open the BPF object")?;

        skel.struct_ops.soryu_ops_mut().exit_dump_len = opts.exit_dump_len;
        // Knobs go into rodata now; after load the verifier has baked them in.
        let rodata = skel
            .maps
            .rodata_data
            .as_mut()
            .context("BPF object has no rodata")?;
        rodata.slice_ns = opts.slice_us * 1000;
        rodata.starve_ns = opts.starve_ms * 1_000_000;
        rodata.wakeup_gran_ns = opts.wakeup_gran_us() * 1000;
        rodata.clear_bitmap = opts.clear_bitmap;
        rodata.boost_on_wake = opts.boost_on_wake;
        rodata.vtime_on = opts.vtime;
        rodata.cgroup_weight_on = opts.cgroup_weight;
        rodata.hist_on = !opts.no_hist;
        rodata.daemon_tgid = std::process::id();
        rodata.inject_error_ns = opts.inject_error_ms.map_or(0, |ms| ms * 1_000_000);
        rodata.inject_verifier_reject = opts.inject_verifier_reject;
        rodata.inject_enqueue_delay_ns = opts.inject_enqueue_delay_us * 1000;
        let layout = crate::topology::read();
        set_layout(rodata, &layout);
        if let Some(comm) = &opts.inject_stall {
            for (dst, src) in rodata.stall_comm.iter_mut().zip(comm.bytes()) {
                *dst = src as _;
            }
        }

        // Load (the verifier) and attach (the kernel's enable, which moves
        // every task to sched_ext) are timed apart: under load either can
        // take seconds, and the attached line says which one did.
        let load_start = Instant::now();
        let mut skel = scx_ops_load!(skel, soryu_ops, uei).map_err(|e| {
            if let Some(kfunc) = kfunc_mismatch() {
                return anyhow!("kernel {} is not supported: its BTF gives the sched_ext kfunc {kfunc} other arguments than this scheduler passes (a 7.x kernel needs BTF from pahole 1.26 or later; kernels.md in the docs lists the tested kernels; -v shows libbpf's lines)", kernel_release());
            }
            let tail = libbpf_tail();
            anyhow!("the BPF scheduler failed to load (refused by libbpf or the kernel verifier): {e:#}\nlast libbpf/verifier lines (run with -v for all):\n{tail}")
        })?;
        // If anything below fails, `link` is dropped on the way out and the
        // scheduler detached: never left half set up.
        let loaded = load_start.elapsed();
        let link = scx_ops_attach!(skel, soryu_ops)
            .map_err(|e| anyhow!("cannot attach the scheduler: {e:#}"))?;
        let attached = load_start.elapsed() - loaded;
        let (insns, top, top_insns) = verified_insns(&skel);
        let kernel_hz = skel.maps.bss_data.as_ref().map_or(0, |b| b.kernel_hz);
        let compat = skel.maps.bss_data.as_ref().map_or(0, |b| b.compat_paths);
        // One starving task per CPU: the bound every report prints beside
        // the longest queued wait (docs/design-starvation.md).
        let consts = RunConsts {
            kernel_hz,
            starve_bound_us: crate::policy::starve_bound_us(
                opts.starve_ms,
                opts.slice_us,
                kernel_hz,
                1,
                1,
            ),
        };
        let stats_server = StatsServer::new(server_data(consts))
            .launch()
            .context("cannot start the scx_stats server")?;

        info!(
            "kernel {}: compat fallbacks in use: {}",
            kernel_release(),
            compat_names(compat)
        );
        let llcs = layout.describe();
        info!(
            "topology: {} LLC{} for the victim search: {}",
            llcs.len(),
            if llcs.len() == 1 { "" } else { "s" },
            llcs.join(" | ")
        );
        info!(
            "scx_soryu {} attached: load {} ms ({} instructions verified, {} of them {}), attach {} ms, slice {} us, starve {} ms, wakeup granularity {} us, clear_bitmap={} boost_on_wake={} vtime={} cgroup_weight={}",
            version(),
            loaded.as_millis(),
            insns,
            top_insns,
            top,
            attached.as_millis(),
            opts.slice_us,
            opts.starve_ms,
            opts.wakeup_gran_us(),
            opts.clear_bitmap,
            opts.boost_on_wake,
            opts.vtime,
            opts.cgroup_weight
        );
        Ok(Scheduler {
            skel,
            link: Some(link),
            stats_server,
            consts,
            llcs,
        })
    }

    /// Read the stats map, closing the epoch of the per-CPU maxima: they
    /// go to every consumer's accumulator (stats::MaxWaits).
    fn snapshot(&mut self) -> Result<Snapshot> {
        let epoch = self.bump_epoch();
        let s = Snapshot::read(&self.skel.maps.stats, epoch)?;
        MAX_WAITS.fold(s.max_wait_ns);
        Ok(s)
    }

    /// Every loop tick: close the epoch and fold its maxima, so that each
    /// consumer's longest wait covers its own interval.
    fn fold_max_waits(&mut self) -> Result<()> {
        if MAX_WAITS.wanted() {
            let epoch = self.bump_epoch();
            MAX_WAITS.fold(stats::read_max_waits(&self.skel.maps.stats, epoch)?);
        }
        Ok(())
    }

    /// Start a new epoch for the per-CPU maxima (see note_wait() in BPF);
    /// returns the one just closed.
    fn bump_epoch(&mut self) -> u64 {
        let Some(bss) = self.skel.maps.bss_data.as_mut() else {
            return 0;
        };
        let closed = bss.stats_epoch;
        bss.stats_epoch = closed.wrapping_add(1);
        closed
    }

    /// Run until SIGINT/SIGTERM or until the kernel ends the scheduler.
    /// Returns the kernel's exit info; an error exit is an Err.
    pub fn run(&mut self, shutdown: &AtomicBool, reporter: &mut Reporter) -> Result<UserExitInfo> {
        let (res_ch, req_ch) = self.stats_server.channels();
        let period = reporter.period();
        // After a restart the maps are new: the first report covers the
        // time since this instance attached.
        let attach = Attach {
            consts: self.consts,
            llcs: self.llcs.clone(),
        };
        reporter.start(self.snapshot()?, attach);

        while !shutdown.load(Ordering::Relaxed) && !uei_exited!(&self.skel, uei) {
            // A sleep, not recv_timeout() on the request channel: crossbeam
            // spins and calls sched_yield() four times before it blocks and
            // four more once the timeout is up, and each yield sends this
            // thread behind every runnable task of its level: 412 yields in
            // 15 s under pipe and futex load, which left 20 to 40 ms of each
            // 100 ms asleep (measured under emulation). A client now waits up to
            // one tick for its figures.
            std::thread::sleep(TICK);
            // Answer scx_stats clients; they difference snapshots themselves.
            let mut answered = false;
            loop {
                match req_ch.try_recv() {
                    Ok(()) => {
                        res_ch.send(self.snapshot()?)?;
                        answered = true;
                    }
                    Err(TryRecvError::Empty) => break,
                    Err(e) => return Err(e).context("scx_stats server channel"),
                }
            }
            if !answered {
                self.fold_max_waits()?;
            }
            let Some(period) = period else {
                continue;
            };
            if Instant::now() < reporter.next {
                continue;
            }
            reporter.interval(self.snapshot()?);
            // Keep the beat; beats missed while restarting are skipped, not
            // caught up with a burst of tiny intervals.
            reporter.next += period;
            if reporter.next <= Instant::now() {
                reporter.next = Instant::now() + period;
            }
        }

        // Detach before reading the exit info: the kernel fills it in on
        // unregister, and the system is back on its default scheduler.
        self.link.take();
        // The interval the scheduler stopped in, up to now: the one an
        // operator most needs after a stall or an error. Best-effort.
        let last = period.and_then(|_| {
            self.snapshot()
                .map_err(|e| warn!("cannot read the figures of the last interval: {e:#}"))
                .ok()
        });
        let u = &self
            .skel
            .maps
            .data_data
            .as_ref()
            .context("BPF object has no data")?
            .uei;
        let rec = ExitRecord::from_uei(u.kind, u.exit_code, &u.reason, &u.msg);
        reporter.stop(last, rec.clone());
        let uei = uei_read!(&self.skel, uei);
        report_exit(&uei, &rec)?;
        Ok(uei)
    }
}

/// What scx_utils' UserExitInfo::report() prints, through say(): its
/// eprintln! panics on a closed stderr, and the daemon with it (a restart
/// after `2>&1 | head` ended the daemon). The kernel's debug dump when it
/// left one, then "EXIT: reason (msg) on CPU n"; past an unregister by the
/// kernel (an error, a stall, sysrq) that line is the error returned.
fn report_exit(uei: &UserExitInfo, rec: &ExitRecord) -> Result<()> {
    if rec.kind == 0 {
        return Ok(());
    }
    let dump = {
        let ptr = scx_utils::UEI_DUMP_PTR_MUTEX
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .ptr;
        // SAFETY: the pointer is the skeleton's dump map's value, which
        // the kernel ends with a NUL; null when there is none.
        (!ptr.is_null())
            .then(|| {
                unsafe { std::ffi::CStr::from_ptr(ptr) }
                    .to_string_lossy()
                    .into_owned()
            })
            .filter(|d| !d.is_empty())
    };
    if let Some(dump) = dump {
        let rule = "=".repeat(80);
        say("\nDEBUG DUMP");
        say(&format!("{rule}\n"));
        say(&dump);
        say(&format!("{rule}\n"));
    }
    let cpu = uei
        .exit_cpu()
        .map_or(String::new(), |c| format!(" on CPU {c}"));
    let why = match (&rec.reason, &rec.msg) {
        (Some(reason), None) => format!("EXIT: {reason}{cpu}"),
        (Some(reason), Some(msg)) => format!("EXIT: {reason} ({msg}){cpu}"),
        _ => format!("<UNKNOWN>{cpu}"),
    };
    if rec.kind <= scx_utils::ScxExitKind::UnregKern as i64 {
        say(&why);
        Ok(())
    } else {
        bail!("{why}")
    }
}

impl Drop for Scheduler<'_> {
    fn drop(&mut self) {
        if self.link.take().is_some() {
            info!("detached scx_soryu");
        }
    }
}

/// The main loop's beat: the per-CPU longest waits are folded this often,
/// and scx_stats clients are answered within it.
const TICK: Duration = Duration::from_millis(100);

/// scx_stats: each client connection keeps its own previous snapshot and
/// longest waits, and gets the figures of the interval since its last
/// request.
pub fn server_data(consts: RunConsts) -> StatsServerData<(), Snapshot> {
    let open: Box<dyn StatsOpener<(), Snapshot>> = Box::new(move |(req_ch, res_ch)| {
        let maxima = MAX_WAITS.subscribe();
        req_ch.send(())?;
        let mut view = ClientView::new(res_ch.recv()?, maxima, consts);
        let read: Box<dyn StatsReader<(), Snapshot>> = Box::new(move |_args, (req_ch, res_ch)| {
            req_ch.send(())?;
            view.next(res_ch.recv()?).metrics.to_json()
        });
        Ok(read)
    });
    StatsServerData::new()
        .add_meta(Metrics::meta())
        .add_ops("top", StatsOps { open, close: None })
}

/// Where scx_stats serves a running scheduler's figures.
const STATS_SOCKET: &str = "/var/run/scx/root/stats";

/// --monitor / --stats: print the figures of a running scx_soryu. Waits
/// (and says so) while none is running, like the ecosystem's monitors.
pub fn monitor(intv: Duration, shutdown: Arc<AtomicBool>) -> Result<()> {
    if !std::path::Path::new(STATS_SOCKET).exists() {
        say(&format!("scx_soryu: no scheduler is serving stats at {STATS_SOCKET} yet; waiting for one (Ctrl-C to stop)"));
    }
    let mut index = 0u64;
    scx_utils::monitor_stats::<Metrics>(
        &[],
        intv,
        || shutdown.load(Ordering::Relaxed),
        |m| {
            // an error (a closed stdout) ends the monitor, not the scheduler
            report::stdout_line(&report::format_text(index, false, &m))?;
            index += 1;
            Ok(())
        },
    )
}

#[cfg(test)]
mod tests {
    use super::kfunc_of_mismatch;

    #[test]
    fn kfunc_mismatch_is_read_off_libbpf() {
        let line = "libbpf: extern (func ksym) 'scx_bpf_get_idle_cpumask': func_proto [426] incompatible with vmlinux [51375]";
        assert_eq!(
            kfunc_of_mismatch(line).as_deref(),
            Some("scx_bpf_get_idle_cpumask")
        );
        let ok = "libbpf: extern (func ksym) 'scx_bpf_cpu_rq': resolved to vmlinux [110256]";
        assert_eq!(kfunc_of_mismatch(ok), None);
    }
}
