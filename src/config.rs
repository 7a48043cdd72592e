// SPDX-License-Identifier: GPL-2.0-only
//
// The daemon's configuration as plain values, made from the command line
// once it is checked (cli.rs): what the scheduler loads with, and where its
// reports go. The scheduler, the reports and Prometheus each take the part
// they need; none of them sees the command line.

use std::path::{Path, PathBuf};

use scx_utils::libbpf_clap_opts::LibbpfOpts;
use serde_json::Value;

/// Debian's node_exporter textfile directory (prometheus-node-exporter's
/// --collector.textfile.directory), where `--prometheus auto` writes.
pub const TEXTFILE_DIR: &str = "/var/lib/prometheus/node-exporter";
/// The file name `--prometheus auto` writes in TEXTFILE_DIR. node_exporter
/// reads only files ending in .prom.
pub const AUTO_FILE: &str = "scx_soryu.prom";
/// The value of --prometheus that means TEXTFILE_DIR/AUTO_FILE.
pub const AUTO: &str = "auto";

/// What the BPF program is loaded with: the knobs baked into its rodata
/// and the test-only faults. The field names are the flags'.
#[derive(Debug, Clone)]
pub struct SchedConfig {
    pub slice_us: u64,
    pub starve_ms: u64,
    /// As given; wakeup_gran_us() is the value in effect.
    pub wakeup_gran_us: Option<u64>,
    pub clear_bitmap: bool,
    pub boost_on_wake: bool,
    pub vtime: bool,
    pub cgroup_weight: bool,
    pub no_hist: bool,
    pub exit_dump_len: u32,
    pub inject_error_ms: Option<u64>,
    pub inject_stall: Option<String>,
    pub inject_verifier_reject: bool,
    pub inject_enqueue_delay_us: u64,
    pub libbpf: LibbpfOpts,
}

impl SchedConfig {
    /// The wakeup granularity in effect: as given, else the slice.
    pub fn wakeup_gran_us(&self) -> u64 {
        self.wakeup_gran_us.unwrap_or(self.slice_us)
    }

    /// The scheduling knobs of this run, named as the report's header and
    /// the Prometheus info metric name them: one list for both.
    pub fn knobs(&self) -> Vec<(&'static str, Value)> {
        vec![
            ("clear_bitmap", self.clear_bitmap.into()),
            ("boost_on_wake", self.boost_on_wake.into()),
            ("vtime", self.vtime.into()),
            ("cgroup_weight", self.cgroup_weight.into()),
            ("slice_us", self.slice_us.into()),
            ("starve_ms", self.starve_ms.into()),
            ("wakeup_gran_us", self.wakeup_gran_us().into()),
        ]
    }
}

/// Where the --prometheus metrics go.
#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    /// This file; its directory is checked when the daemon starts.
    File(PathBuf),
    /// AUTO_FILE in this directory whenever the directory exists (it may
    /// appear later, when node_exporter is installed); nothing while not.
    Dir(PathBuf),
}

impl Target {
    /// The --prometheus argument: "auto" or a file path.
    pub fn from_arg(arg: &Path) -> Self {
        if arg.as_os_str() == AUTO {
            Target::Dir(PathBuf::from(TEXTFILE_DIR))
        } else {
            Target::File(arg.to_path_buf())
        }
    }

    pub fn path(&self) -> PathBuf {
        match self {
            Target::File(p) => p.clone(),
            Target::Dir(d) => d.join(AUTO_FILE),
        }
    }

    /// How the user named it, for messages.
    pub fn flag(&self) -> String {
        match self {
            Target::File(p) => format!("--prometheus {}", p.display()),
            Target::Dir(_) => format!("--prometheus {AUTO}"),
        }
    }
}

/// Where and how often the reports go.
#[derive(Debug, Clone)]
pub struct ReportConfig {
    /// Seconds per interval; 0: no reports.
    pub report_sec: u64,
    pub json: Option<PathBuf>,
    pub prometheus: Option<Target>,
    /// Names this start of the daemon in the JSON header and the info
    /// metric.
    pub run_id: String,
    /// As SchedConfig::knobs() lists them.
    pub knobs: Vec<(&'static str, Value)>,
    /// The histograms are kept (not --no-hist).
    pub hist: bool,
}
