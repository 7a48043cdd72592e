// SPDX-License-Identifier: GPL-2.0-only
//
// Command line: every knob, its default, and the checks that reject a bad
// combination before anything is loaded into the kernel; then the plain
// configuration values (config.rs) the rest of the daemon takes.

use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::Parser;
use scx_soryu::bpf_intf::soryu_consts_SORYU_TIMEOUT_MS;
use scx_soryu::policy;
use scx_utils::libbpf_clap_opts::LibbpfOpts;

use crate::config::{ReportConfig, SchedConfig, Target};

/// scx_soryu: BMQ (BitMap Queue) priority levels as a sched_ext scheduler.
///
/// Tasks sit in 33 levels (nice plus a boost that rewards sleeping and
/// punishes used-up slices), strict priority between levels, preemption of
/// CPUs running a worse level, and an anti-starvation probe.
#[derive(Debug, Clone, Parser)]
#[command(name = "scx_soryu", version = None, disable_version_flag = true, args_conflicts_with_subcommands = true)]
pub struct Opts {
    /// Tools that work on recorded --report-json files; load nothing.
    #[command(subcommand)]
    pub tool: Option<Tool>,

    /// Time slice in microseconds; a task that uses it up is deboosted one step.
    #[arg(short = 's', long, default_value_t = 1000, value_name = "US")]
    pub slice_us: u64,

    /// A task queued this many milliseconds is served ahead of every better
    /// level (anti-starvation); must exceed the slice.
    #[arg(long, default_value_t = 100, value_name = "MS")]
    pub starve_ms: u64,

    /// A task that started running less than this many microseconds ago is
    /// preempted for a sync wakeup (a pipe or socket write) or a requeued
    /// task only once it has run that long (0: at once; other wakeups
    /// preempt at once); at most the slice [default: the slice]. Lets
    /// message passing batch.
    #[arg(long, value_name = "US")]
    pub wakeup_gran_us: Option<u64>,

    /// Clear a level's bit when dispatch finds it empty (off: measured to cost
    /// interactive latency; knob-clear-bitmap.md in the documentation).
    #[arg(long, default_value_t = false, num_args = 0..=1, default_missing_value = "true",
          value_name = "BOOL", action = clap::ArgAction::Set)]
    pub clear_bitmap: bool,

    /// Boost a waking task by how long it slept, as BMQ meant to (off: BMQ as
    /// shipped measured better; knob-boost-on-wake.md in the documentation).
    #[arg(long, default_value_t = false, num_args = 0..=1, default_missing_value = "true",
          value_name = "BOOL", action = clap::ArgAction::Set)]
    pub boost_on_wake: bool,

    /// Order tasks inside a level by virtual time instead of FIFO (off:
    /// measured no different; knob-vtime.md in the documentation).
    #[arg(long, default_value_t = false, num_args = 0..=1, default_missing_value = "true",
          value_name = "BOOL", action = clap::ArgAction::Set)]
    pub vtime: bool,

    /// Add each task's cgroup cpu.weight, as the nice the kernel shows in
    /// cpu.weight.nice (summed over nested cgroups), to its own nice.
    #[arg(long, default_value_t = true, num_args = 0..=1, default_missing_value = "true",
          value_name = "BOOL", action = clap::ArgAction::Set)]
    pub cgroup_weight: bool,

    /// Do not keep the wake-to-run, boost and level histograms (their cost is
    /// in measuring.md in the documentation); counters and health figures stay.
    #[arg(long)]
    pub no_hist: bool,

    /// Print one report of the last interval every this many seconds (0: off).
    #[arg(long, default_value_t = 10, value_name = "SECS")]
    pub report_sec: u64,

    /// Also append every interval report as one JSON object per line to PATH.
    #[arg(long, value_name = "PATH")]
    pub report_json: Option<PathBuf>,

    /// Every --report-sec interval, write the figures in the Prometheus text
    /// format to PATH (replaced whole), for node_exporter's textfile
    /// collector; counters count from the daemon's start. "auto":
    /// /var/lib/prometheus/node-exporter/scx_soryu.prom whenever that
    /// directory exists, nothing while it does not.
    #[arg(long, value_name = "PATH|auto")]
    pub prometheus: Option<PathBuf>,

    /// Name this run: the run_id label of the Prometheus info metric and of
    /// the JSON header [default: <ms since the epoch>-<pid>].
    #[arg(long, value_name = "ID")]
    pub run_id: Option<String>,

    /// Run the scheduler and print scx_stats figures every SECS seconds.
    #[arg(long, value_name = "SECS")]
    pub stats: Option<f64>,

    /// Print scx_stats figures of a running scx_soryu every SECS seconds; load nothing.
    #[arg(long, value_name = "SECS")]
    pub monitor: Option<f64>,

    /// Describe the scx_stats figures and exit.
    #[arg(long)]
    pub help_stats: bool,

    /// Bytes of the kernel's debug dump to keep when the scheduler exits on
    /// error (0: the kernel's default, 32 KiB).
    #[arg(long, default_value_t = 0, value_name = "BYTES")]
    pub exit_dump_len: u32,

    /// Verbose output, including libbpf's and the verifier's messages.
    #[arg(short = 'v', long)]
    pub verbose: bool,

    /// Print the version and exit.
    #[arg(short = 'V', long)]
    pub version: bool,

    /// Print the manual page (roff, made from these definitions) and exit.
    #[arg(long, hide = true)]
    pub man: bool,

    /// Check the other flags and exit without loading anything: status 0
    /// if the scheduler would accept them, else the one-line error it would
    /// give (for a flags file before a restart, and the benchmark's names).
    #[arg(long)]
    pub check_flags: bool,

    /// Print the wake-to-run histogram's bucket lower bounds (ns) as JSON and
    /// exit, for tools that file outside measurements in soryu's layout.
    #[arg(long, hide = true)]
    pub lat_buckets: bool,

    /// Print the header --report-json would write with the other flags, as
    /// one JSON line, and exit (no scheduler is loaded); with a name, the
    /// header of an outside scheduler's run on this machine: no knobs, no
    /// soryu build. For the benchmark's files.
    #[arg(long, hide = true, value_name = "SCHEDULER", num_args = 0..=1,
          default_missing_value = "")]
    pub report_header: Option<String>,

    /// Write the --prometheus file of three intervals of synthetic figures to
    /// PATH and exit (the format's tests; no scheduler is loaded).
    #[arg(long, hide = true, value_name = "PATH")]
    pub prometheus_sample: Option<PathBuf>,

    /// Test only: make the BPF program fail with scx_bpf_error() this many
    /// milliseconds after load, to exercise the error-exit path.
    #[arg(long, hide = true, value_name = "MS")]
    pub inject_error_ms: Option<u64>,

    /// Test only: never queue tasks named COMM once they reach ops.enqueue,
    /// so that the kernel's watchdog ejects the scheduler.
    #[arg(long, hide = true, value_name = "COMM")]
    pub inject_stall: Option<String>,

    /// Test only: load a program the verifier refuses.
    #[arg(long, hide = true)]
    pub inject_verifier_reject: bool,

    /// Test only: spin this many microseconds in ops.enqueue between the
    /// victim search and the insert, widening the window a CPU going
    /// idle meanwhile must not strand the task in (tests/vm/holes.sh).
    #[arg(long, hide = true, value_name = "US", default_value_t = 0, value_parser = clap::value_parser!(u64).range(0..=1000))]
    pub inject_enqueue_delay_us: u64,

    #[clap(flatten, next_help_heading = "Libbpf Options")]
    pub libbpf: LibbpfOpts,
}

#[derive(Debug, Clone, clap::Subcommand)]
pub enum Tool {
    /// Pair two configurations' --report-json runs interval by interval and
    /// sign-test every figure.
    Compare(scx_soryu::compare::CompareArgs),
    /// Draw the wake-to-run distributions and tail series of --report-json runs as SVG.
    Plot(scx_soryu::plot::PlotArgs),
    /// Show what the running scx_soryu holds for some tasks: boost, level,
    /// slice used (read from the loaded BPF program).
    Inspect(crate::inspect::InspectArgs),
}

/// Largest slice accepted: one second. Longer slices make strict priority
/// meaningless for interactive work and push waits toward the watchdog.
pub const MAX_SLICE_US: u64 = 1_000_000;

/// Longest report, stats or monitor interval: one day. Longer ones are a
/// typo, and overflow the clocks they are added to.
pub const MAX_INTERVAL_S: u64 = 86_400;

/// Longest --run-id: a label value, not a document.
pub const MAX_RUN_ID_LEN: usize = 128;

/// Largest kernel debug dump kept on an error exit: 16 MiB.
pub const MAX_EXIT_DUMP_LEN: u32 = 16 << 20;

/// Largest starvation threshold: it must stay well below the kernel
/// watchdog, which ejects the scheduler when a task waits that long.
pub fn max_starve_ms() -> u64 {
    soryu_consts_SORYU_TIMEOUT_MS as u64 / 5
}

impl Opts {
    /// What the scheduler loads with.
    pub fn sched_config(&self) -> SchedConfig {
        SchedConfig {
            slice_us: self.slice_us,
            starve_ms: self.starve_ms,
            wakeup_gran_us: self.wakeup_gran_us,
            clear_bitmap: self.clear_bitmap,
            boost_on_wake: self.boost_on_wake,
            vtime: self.vtime,
            cgroup_weight: self.cgroup_weight,
            no_hist: self.no_hist,
            exit_dump_len: self.exit_dump_len,
            inject_error_ms: self.inject_error_ms,
            inject_stall: self.inject_stall.clone(),
            inject_verifier_reject: self.inject_verifier_reject,
            inject_enqueue_delay_us: self.inject_enqueue_delay_us,
            libbpf: self.libbpf.clone(),
        }
    }

    /// Where and how often the reports go; `new_run_id` names the run
    /// unless --run-id does.
    pub fn report_config(&self, new_run_id: impl FnOnce() -> String) -> ReportConfig {
        ReportConfig {
            report_sec: self.report_sec,
            json: self.report_json.clone(),
            prometheus: self.prometheus.as_deref().map(Target::from_arg),
            run_id: self.run_id.clone().unwrap_or_else(new_run_id),
            knobs: self.sched_config().knobs(),
            hist: !self.no_hist,
        }
    }

    /// The wakeup granularity in effect: as given, else the slice.
    fn wakeup_gran_us(&self) -> u64 {
        self.wakeup_gran_us.unwrap_or(self.slice_us)
    }

    /// Reject values and combinations the scheduler cannot honour. Each
    /// error is one line: what is wrong and what to do instead.
    pub fn validate(&self) -> Result<()> {
        if self.slice_us == 0 {
            bail!("--slice-us must be at least 1 (microseconds); the default is 1000");
        }
        if self.slice_us > MAX_SLICE_US {
            bail!(
                "--slice-us {} is above the limit of {MAX_SLICE_US} (one second); use a shorter slice",
                self.slice_us
            );
        }
        if self.wakeup_gran_us() > self.slice_us {
            bail!(
                "--wakeup-gran-us {} is longer than the slice ({} us): no task runs longer than its slice before others get a turn; use at most the slice",
                self.wakeup_gran_us(),
                self.slice_us
            );
        }
        if self.starve_ms.saturating_mul(1000) <= self.slice_us {
            bail!(
                "--starve-ms {} must be longer than the slice ({} us): a level cannot starve in less than one slice",
                self.starve_ms,
                self.slice_us
            );
        }
        if self.starve_ms > max_starve_ms() {
            bail!(
                "--starve-ms {} is above {} ms, a fifth of the kernel watchdog's {} ms; use a lower threshold",
                self.starve_ms,
                max_starve_ms(),
                soryu_consts_SORYU_TIMEOUT_MS
            );
        }
        let per_cpu = policy::BOUND_REF_TASKS_PER_CPU;
        let bound_ms = policy::starve_bound_us(self.starve_ms, self.slice_us, 0, per_cpu, 1) / 1000;
        let watchdog_ms = soryu_consts_SORYU_TIMEOUT_MS as u64;
        if bound_ms > watchdog_ms / 2 {
            bail!(
                "--slice-us {} with --starve-ms {}: a task starving behind {per_cpu} others per CPU could wait {bound_ms} ms, over half the kernel watchdog's {watchdog_ms} ms; use a shorter slice or threshold",
                self.slice_us,
                self.starve_ms
            );
        }
        for (flag, v) in [("--stats", self.stats), ("--monitor", self.monitor)] {
            if let Some(secs) = v {
                if !(secs.is_finite() && secs > 0.0) {
                    bail!("{flag} takes a positive number of seconds, got {secs}");
                }
                if secs > MAX_INTERVAL_S as f64 {
                    bail!("{flag} {secs} is above {MAX_INTERVAL_S} seconds (a day); use a shorter interval");
                }
            }
        }
        if self.report_sec > MAX_INTERVAL_S {
            bail!(
                "--report-sec {} is above {MAX_INTERVAL_S} seconds (a day); use a shorter interval, or 0 for no reports",
                self.report_sec
            );
        }
        if self.exit_dump_len > MAX_EXIT_DUMP_LEN {
            bail!(
                "--exit-dump-len {} is above {MAX_EXIT_DUMP_LEN} bytes; the kernel's dump is a few KiB per CPU",
                self.exit_dump_len
            );
        }
        if let Some(ms) = self.inject_error_ms {
            if ms == 0 || ms > MAX_INTERVAL_S * 1000 {
                bail!("--inject-error-ms must be 1..={}", MAX_INTERVAL_S * 1000);
            }
        }
        if let Some(comm) = &self.inject_stall {
            if comm.is_empty() || comm.len() > 15 {
                bail!("--inject-stall takes a task name of 1 to 15 bytes");
            }
        }
        if let Some(id) = &self.run_id {
            if id.is_empty()
                || id.len() > MAX_RUN_ID_LEN
                || !id.bytes().all(|b| b.is_ascii_graphic())
            {
                bail!("--run-id takes 1 to {MAX_RUN_ID_LEN} printable ASCII characters without spaces, got {id:?}");
            }
        }
        if self.monitor.is_some() && self.prometheus.is_some() {
            bail!(
                "--monitor only reads a running scx_soryu; it cannot be combined with --prometheus"
            );
        }
        if let Some(path) = &self.prometheus {
            if path.as_os_str().is_empty() {
                bail!("--prometheus needs a file path, or auto");
            }
            if let Target::File(path) = Target::from_arg(path) {
                let dir = match path.parent() {
                    Some(d) if !d.as_os_str().is_empty() => d,
                    _ => std::path::Path::new("."),
                };
                if !dir.is_dir() {
                    bail!(
                        "--prometheus {}: directory {} does not exist (auto writes only when node_exporter's directory exists)",
                        path.display(),
                        dir.display()
                    );
                }
                if path.is_dir() {
                    bail!("--prometheus {}: is a directory; give a file path such as {}/scx_soryu.prom", path.display(), path.display());
                }
            }
            if self.report_sec == 0 {
                bail!("--prometheus writes its file every --report-sec interval; --report-sec 0 turns reports off");
            }
        }
        if self.monitor.is_some() && (self.stats.is_some() || self.report_json.is_some()) {
            bail!("--monitor only reads a running scx_soryu; it cannot be combined with --stats or --report-json");
        }
        if let Some(path) = &self.report_json {
            if path.as_os_str().is_empty() {
                bail!("--report-json needs a file path");
            }
            let dir = match path.parent() {
                Some(d) if !d.as_os_str().is_empty() => d,
                _ => std::path::Path::new("."),
            };
            if !dir.is_dir() {
                bail!(
                    "--report-json {}: directory {} does not exist",
                    path.display(),
                    dir.display()
                );
            }
            if self.report_sec == 0 {
                bail!("--report-json writes one record per --report-sec interval; --report-sec 0 turns reports off");
            }
        }
        Ok(())
    }
}

/// The manual page, in roff, made from the flag definitions above: one
/// source for `--help` and `man scx_soryu` (`make install` writes it).
pub fn print_man() -> Result<()> {
    use clap::CommandFactory;
    let mut out = std::io::stdout().lock();
    clap_mangen::Man::new(Opts::command())
        .section("8")
        .source(format!("scx_soryu {}", scx_soryu::about::version()))
        .render(&mut out)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Opts> {
        let opts = Opts::try_parse_from(std::iter::once("scx_soryu").chain(args.iter().copied()))?;
        opts.validate()?;
        Ok(opts)
    }

    #[test]
    fn defaults_match_the_design() {
        let o = parse(&[]).unwrap();
        assert_eq!(o.slice_us, 1000);
        assert_eq!(o.starve_ms, 100);
        assert_eq!(o.wakeup_gran_us(), 1000);
        assert_eq!(
            parse(&["--slice-us", "3000"]).unwrap().wakeup_gran_us(),
            3000
        );
        assert_eq!(
            parse(&["--wakeup-gran-us", "0"]).unwrap().wakeup_gran_us(),
            0
        );
        assert!(!o.clear_bitmap && !o.boost_on_wake && !o.vtime);
        assert_eq!(o.report_sec, 10);
    }

    #[test]
    fn knobs_take_both_forms() {
        let o = parse(&["--vtime", "--clear-bitmap=true", "--boost-on-wake=false"]).unwrap();
        assert!(o.vtime && o.clear_bitmap && !o.boost_on_wake);
        let o = parse(&["--boost-on-wake", "true", "--vtime=false"]).unwrap();
        assert!(o.boost_on_wake && !o.vtime);
        assert!(parse(&["--vtime=yes"]).is_err());
        assert!(parse(&["--vtime=1"]).is_err());
    }

    #[test]
    fn bad_values_are_refused() {
        for args in [
            &["--slice-us", "0"][..],
            &["--slice-us", "-5"],
            &["--slice-us", "abc"],
            &["--slice-us", "2000000"],
            &["--starve-ms", "0"],
            &["--starve-ms", "1", "--slice-us", "1000"],
            &["--starve-ms", "5", "--slice-us", "5000"],
            &["--starve-ms", "999999"],
            &["--stats", "0"],
            &["--monitor", "nan"],
            &["--monitor", "1", "--stats", "1"],
            &["--report-json", "x.jsonl", "--report-sec", "0"],
            &["--report-json", "/nonexistent-dir/x.jsonl"],
            &["--no-such-flag"],
            &["--monitor", "1e30"],
            &["--stats", "1e30"],
            &["--report-sec", "18446744073709551615"],
            &["--report-sec", "86401"],
            &["--exit-dump-len", "4294967295"],
            &["--prometheus", "x.prom", "--report-sec", "0"],
            &["--prometheus", "/nonexistent-dir/x.prom"],
            &["--prometheus", "/tmp"],
            &["--prometheus", ""],
            &["--prometheus", "auto", "--monitor", "1"],
            &["--run-id", ""],
            &["--wakeup-gran-us", "1001"],
            &["--wakeup-gran-us", "-1"],
            &["--wakeup-gran-us", "3000", "--slice-us", "2000"],
            // the starvation bound at 32 starving tasks per CPU passes
            // half the watchdog
            &["--slice-us", "200000"],
            &["--slice-us", "80000", "--starve-ms", "2500"],
            &["--run-id", "a b"],
            &["--run-id", "tab\there"],
            &["--run-id", &"x".repeat(MAX_RUN_ID_LEN + 1)],
        ] {
            assert!(parse(args).is_err(), "accepted {args:?}");
        }
    }

    #[test]
    fn edges_are_accepted() {
        parse(&["--slice-us", "1", "--starve-ms", "1"]).unwrap();
        parse(&["--slice-us", "50000", "--starve-ms", "1001"]).unwrap();
        parse(&["--slice-us", "99999"]).unwrap();
        parse(&["--wakeup-gran-us", "1000"]).unwrap();
        parse(&["--starve-ms", &max_starve_ms().to_string()]).unwrap();
        parse(&["--report-sec", "0"]).unwrap();
        parse(&["--prometheus", "auto", "--run-id", "bench-a_1:x"]).unwrap();
        parse(&[
            "--prometheus",
            "m.prom",
            "--run-id",
            &"x".repeat(MAX_RUN_ID_LEN),
        ])
        .unwrap();
    }

    #[test]
    fn error_messages_are_one_line() {
        for args in [
            &["--slice-us", "0"][..],
            &["--starve-ms", "1", "--slice-us", "1000"],
        ] {
            let e = parse(args).unwrap_err().to_string();
            assert!(!e.contains('\n'), "{e}");
        }
    }
}
