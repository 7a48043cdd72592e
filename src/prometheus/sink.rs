// SPDX-License-Identifier: GPL-2.0-only
//
// The --prometheus file of a running daemon: written after every interval,
// in one step (a new file renamed over the old), best-effort: a failure is
// said once and tried again the next interval, and never stops the
// scheduler. The file is removed when the daemon exits.

use std::io::Write;
use std::path::{Path, PathBuf};

use scx_soryu::record::Interval;

use super::render::{render, RunInfo, Totals};
use crate::config::{Target, AUTO};

/// Replace `path` with `text` in one step: write a new file beside it, then
/// rename it over `path`. A reader sees the old file or the new one. The
/// temporary name does not end in .prom, so node_exporter skips it.
pub fn write_atomic(path: &Path, text: &str) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file path"))?;
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    let open = || {
        // create_new: never follow a link someone left at that name
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o644)
            .open(&tmp)
    };
    let mut f = match open() {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            std::fs::remove_file(&tmp)?;
            open()?
        }
        r => r?,
    };
    let res = f
        .write_all(text.as_bytes())
        .and_then(|()| f.flush())
        .and_then(|()| std::fs::rename(&tmp, path));
    if res.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    res
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum State {
    /// Nothing said yet.
    Quiet,
    /// The last write worked (and, for auto, was announced).
    Writing,
    /// Said that the auto directory does not exist.
    NoDir,
    /// Said that a write failed.
    Failing,
}

/// The --prometheus file of a running daemon: it accumulates the intervals
/// and writes the file after each one.
pub struct PromSink {
    target: Target,
    info: RunInfo,
    totals: Totals,
    state: State,
    /// The file this daemon wrote: removed when the sink is dropped.
    written: Option<PathBuf>,
}

impl PromSink {
    pub fn new(target: Target, info: RunInfo) -> Self {
        PromSink {
            target,
            info,
            totals: Totals::default(),
            state: State::Quiet,
            written: None,
        }
    }

    /// One interval: add it to the totals and write the file. Never fails;
    /// what goes wrong is said once on `errors`, and the next interval
    /// tries again.
    pub fn interval(&mut self, iv: &Interval, errors: &mut dyn Write) {
        self.totals.add(iv);
        let path = self.target.path();
        if let Target::Dir(dir) = &self.target {
            if !dir.is_dir() {
                if self.state != State::NoDir {
                    let _ = writeln!(
                        errors,
                        "scx_soryu: --prometheus {AUTO}: {} does not exist (no node_exporter textfile collector here): no metrics file until it does; the scheduler keeps running",
                        dir.display()
                    );
                    self.state = State::NoDir;
                }
                return;
            }
        }
        match write_atomic(&path, &render(&self.info, &self.totals, iv)) {
            Ok(()) => {
                self.written = Some(path.clone());
                let announce = match self.state {
                    State::Writing => None,
                    State::Quiet if matches!(self.target, Target::File(_)) => None,
                    State::Quiet | State::NoDir => Some("writing it every report interval"),
                    State::Failing => Some("written again"),
                };
                if let Some(what) = announce {
                    let _ = writeln!(
                        errors,
                        "scx_soryu: {}: {}: {what}",
                        self.target.flag(),
                        path.display()
                    );
                }
                self.state = State::Writing;
            }
            Err(e) => {
                if self.state != State::Failing {
                    let _ = writeln!(
                        errors,
                        "scx_soryu: cannot write {} ({e}): trying again every interval; the scheduler keeps running",
                        self.target.flag()
                    );
                    self.state = State::Failing;
                }
            }
        }
    }
}

impl Drop for PromSink {
    fn drop(&mut self) {
        if let Some(p) = self.written.take() {
            let _ = std::fs::remove_file(p);
        }
    }
}
