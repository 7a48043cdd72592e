// SPDX-License-Identifier: GPL-2.0-only
//
// scx_soryu: BMQ (BitMap Queue) priority levels as a sched_ext scheduler.
// Entry point: parse and check the command line into plain configuration
// (cli.rs, config.rs), then run what it asks for: an offline tool of the
// library (compare, plot), inspect, a hidden helper, a monitor of a running
// instance (--monitor), or the daemon: load, attach and run the scheduler,
// restarting it when the kernel asks (CPU hotplug).
//
// The modules below import one another only downward (tests/modules.rs
// checks that no two reach each other): this root, which uses them all,
// is used by none; the library's modules are named here only to keep
// their `crate::` paths (bpf_intf, policy).

mod bpf_skel;
mod cli;
mod config;
#[cfg(test)]
mod flag_docs;
mod inspect;
mod interval;
mod logger;
mod open_opts;
mod prometheus;
mod report;
mod scheduler;
mod stats;
mod topology;

use scx_soryu::{bpf_intf, policy};

use std::mem::MaybeUninit;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Parser;
use log::{info, warn};

use cli::Opts;
use config::{ReportConfig, SchedConfig};
use scheduler::Scheduler;

fn run(
    sched: &SchedConfig,
    reports: ReportConfig,
    monitor: Option<f64>,
    stats: Option<f64>,
    verbose: bool,
) -> Result<()> {
    let shutdown = Arc::new(AtomicBool::new(false));
    let flag = shutdown.clone();
    ctrlc::set_handler(move || flag.store(true, Ordering::Relaxed))
        .context("cannot install the SIGINT/SIGTERM handler")?;

    if let Some(secs) = monitor {
        return scheduler::monitor(Duration::from_secs_f64(secs), shutdown);
    }

    // Refused before anything is checked or loaded: a --kconfig file that
    // cannot be read.
    let open_opts = open_opts::OpenOpts::new(&sched.libbpf)?;
    scheduler::preflight()?;
    scheduler::install_libbpf_logger(verbose);
    scx_utils::try_set_rlimit_infinity();

    if let Some(secs) = stats {
        let flag = shutdown.clone();
        std::thread::spawn(move || {
            if let Err(e) = scheduler::monitor(Duration::from_secs_f64(secs), flag) {
                warn!("stats monitor stopped: {e:#}");
            }
        });
    }

    // Created before the first load: a bad --report-json path is refused
    // with nothing attached.
    let mut reporter = report::Reporter::new(reports)?;
    let mut open_object = MaybeUninit::uninit();
    loop {
        let mut sched = Scheduler::init(sched, &open_opts, &mut open_object)?;
        let exit = sched.run(&shutdown, &mut reporter)?;
        if !exit.should_restart() || shutdown.load(Ordering::Relaxed) {
            return Ok(());
        }
        info!("the kernel asked for a restart (e.g. CPU hotplug): reloading");
    }
}

/// What to do when a write meets a closed pipe (`scx_soryu ... | head`).
/// The tools, --monitor and everything that loads nothing end quietly on
/// SIGPIPE, like any filter. The daemon ignores it (Rust's default): its
/// reports see the write error, say so once, and scheduling goes on; its
/// log lines are dropped (logger.rs).
fn on_broken_pipe(end_quietly: bool) {
    let action = if end_quietly {
        libc::SIG_DFL
    } else {
        libc::SIG_IGN
    };
    // SAFETY: setting a signal's disposition to a predefined action.
    unsafe { libc::signal(libc::SIGPIPE, action) };
}

fn main() -> ExitCode {
    on_broken_pipe(true);
    let opts = Opts::parse();
    if opts.version {
        println!("scx_soryu {}", scx_soryu::about::version());
        return ExitCode::SUCCESS;
    }
    if opts.man {
        return finish(cli::print_man());
    }
    if let Some(tool) = &opts.tool {
        let res = match tool {
            cli::Tool::Compare(args) => scx_soryu::compare::tool::run(args),
            cli::Tool::Plot(args) => scx_soryu::plot::run(args),
            cli::Tool::Inspect(args) => inspect::run(args),
        };
        return finish(res);
    }
    if opts.lat_buckets {
        println!("{}", serde_json::json!(report::lat_bucket_bounds()));
        return ExitCode::SUCCESS;
    }
    if let Err(e) = opts.validate() {
        return finish(Err(e));
    }
    let reports = opts.report_config(report::new_run_id);
    if let Some(path) = &opts.prometheus_sample {
        return finish(prometheus::sample::write_sample(&reports, path));
    }
    if let Some(scheduler) = &opts.report_header {
        return finish(print_header(scheduler, &reports));
    }
    if opts.check_flags {
        return ExitCode::SUCCESS;
    }
    if opts.help_stats {
        let data = scheduler::server_data(interval::RunConsts::default());
        return finish(data.describe_meta(&mut std::io::stdout(), None));
    }
    logger::init(opts.verbose);
    on_broken_pipe(opts.monitor.is_some());

    let sched = opts.sched_config();
    finish(run(&sched, reports, opts.monitor, opts.stats, opts.verbose))
}

/// --report-header: the header --report-json would write (soryu's, or an
/// outside scheduler's run on this machine), as one line.
fn print_header(scheduler: &str, reports: &ReportConfig) -> Result<()> {
    let header = if scheduler.is_empty() {
        let attach = report::Attach {
            llcs: topology::read().describe(),
            ..Default::default()
        };
        let mut h = report::header_record(reports, Some(&attach));
        h.kernel_hz = None; // known once loaded
        h
    } else {
        report::machine_header(scheduler, reports)
    };
    let rec = scx_soryu::record::Record::Header(header);
    report::stdout_line(&serde_json::to_string(&rec)?)?;
    Ok(())
}

/// One line on stderr, no backtrace, non-zero exit: the error paths are as
/// much the interface as the reports are.
fn finish(res: anyhow::Result<()>) -> ExitCode {
    match res {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            logger::say(&format!("scx_soryu: {e:#}"));
            ExitCode::FAILURE
        }
    }
}
