// SPDX-License-Identifier: GPL-2.0-only
//
// scx_soryu: BMQ (BitMap Queue) priority levels as a sched_ext scheduler.
// Entry point: parse and check the command line, then either read a running
// instance (--monitor) or load, attach and run the scheduler, restarting it
// when the kernel asks (CPU hotplug).

mod bpf_intf;
mod bpf_skel;
mod cli;
mod compare;
mod hist;
mod inspect;
mod plot;
mod policy;
mod prometheus;
mod record;
mod report;
mod scheduler;
mod stats;
mod topology;

use std::mem::MaybeUninit;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Parser;
use log::{info, warn};

use cli::Opts;
use scheduler::Scheduler;

fn run(opts: &Opts) -> Result<()> {
    let shutdown = Arc::new(AtomicBool::new(false));
    let flag = shutdown.clone();
    ctrlc::set_handler(move || flag.store(true, Ordering::Relaxed))
        .context("cannot install the SIGINT/SIGTERM handler")?;

    if let Some(secs) = opts.monitor {
        return scheduler::monitor(Duration::from_secs_f64(secs), shutdown);
    }

    scheduler::preflight()?;
    scheduler::install_libbpf_logger(opts.verbose);
    scx_utils::try_set_rlimit_infinity();

    if let Some(secs) = opts.stats {
        let flag = shutdown.clone();
        std::thread::spawn(move || {
            if let Err(e) = scheduler::monitor(Duration::from_secs_f64(secs), flag) {
                warn!("stats monitor stopped: {e:#}");
            }
        });
    }

    // Created before the first load: a bad --report-json path is refused
    // with nothing attached.
    let mut reporter = report::Reporter::new(opts)?;
    let mut open_object = MaybeUninit::uninit();
    loop {
        let mut sched = Scheduler::init(opts, &mut open_object)?;
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
/// reports see the write error, say so once, and scheduling goes on.
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
        println!("scx_soryu {}", report::version());
        return ExitCode::SUCCESS;
    }
    if let Some(tool) = &opts.tool {
        let res = match tool {
            cli::Tool::Compare(args) => compare::run(args),
            cli::Tool::Plot(args) => plot::run(args),
            cli::Tool::Inspect(args) => inspect::run(args),
        };
        return finish(res);
    }
    if opts.lat_buckets {
        println!("{}", serde_json::json!(report::lat_bucket_bounds()));
        return ExitCode::SUCCESS;
    }
    if let Some(path) = &opts.prometheus_sample {
        let run_id = opts.run_id.clone().unwrap_or_else(report::new_run_id);
        return finish(
            opts.validate()
                .and_then(|()| prometheus::write_sample(&opts, path, &run_id)),
        );
    }
    if opts.check_flags {
        return finish(opts.validate());
    }
    if opts.help_stats {
        let data = scheduler::server_data(0);
        return finish(data.describe_meta(&mut std::io::stdout(), None));
    }
    let level = if opts.verbose {
        log::LevelFilter::Debug
    } else {
        log::LevelFilter::Info
    };
    let _ = simple_logger::SimpleLogger::new()
        .with_level(level)
        .without_timestamps()
        .init();
    on_broken_pipe(opts.monitor.is_some());

    finish(opts.validate().and_then(|()| run(&opts)))
}

/// One line on stderr, no backtrace, non-zero exit: the error paths are as
/// much the interface as the reports are.
fn finish(res: anyhow::Result<()>) -> ExitCode {
    match res {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("scx_soryu: {e:#}");
            ExitCode::FAILURE
        }
    }
}
