// SPDX-License-Identifier: GPL-2.0-only
//
// The daemon's stderr: its log lines and its one-line messages. Writing to
// a closed stderr (`scx_soryu ... 2>&1 | head -3` once head has exited) is
// not an error worth dying for: eprintln! panics on it, and a panic in the
// daemon detaches the scheduler. Here a failed write is dropped, and stderr
// is pointed at /dev/null from then on, so that a library's own eprintln!
// (scx_utils prints the kernel's exit reason that way) cannot panic either.

use std::io::Write;

use log::{Level, LevelFilter, Log, Metadata, Record};

/// Write one line to stderr; never fails, never panics.
pub fn say(line: &str) {
    if !write_line(&mut std::io::stderr().lock(), line) {
        silence_stderr();
    }
}

/// `line` and a newline to `out` in one write: false when it failed.
fn write_line(out: &mut dyn Write, line: &str) -> bool {
    let mut buf = Vec::with_capacity(line.len() + 1);
    buf.extend_from_slice(line.as_bytes());
    buf.push(b'\n');
    out.write_all(&buf).and_then(|()| out.flush()).is_ok()
}

/// Point fd 2 at /dev/null: nobody reads it any more.
fn silence_stderr() {
    // SAFETY: plain syscalls on fds this process owns; dup2 replaces fd 2
    // atomically, so a concurrent writer writes to one file or the other.
    unsafe {
        let fd = libc::open(c"/dev/null".as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd >= 0 {
            libc::dup2(fd, libc::STDERR_FILENO);
            libc::close(fd);
        }
    }
}

/// "LEVEL [target] message", as the log crate's records come.
struct StderrLog {
    level: LevelFilter,
}

impl Log for StderrLog {
    fn enabled(&self, m: &Metadata) -> bool {
        m.level() <= self.level
    }

    fn log(&self, r: &Record) {
        if self.enabled(r.metadata()) {
            say(&format_record(r.level(), r.target(), &r.args().to_string()));
        }
    }

    fn flush(&self) {}
}

fn format_record(level: Level, target: &str, msg: &str) -> String {
    format!("{:<5} [{target}] {msg}", level.to_string())
}

/// Install the logger: debug lines too when `verbose`.
pub fn init(verbose: bool) {
    let level = if verbose {
        LevelFilter::Debug
    } else {
        LevelFilter::Info
    };
    if log::set_boxed_logger(Box::new(StderrLog { level })).is_ok() {
        log::set_max_level(level);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_look_as_before() {
        assert_eq!(
            format_record(Level::Info, "scx_soryu::scheduler", "attached"),
            "INFO  [scx_soryu::scheduler] attached"
        );
    }

    /// A write that fails (a closed pipe) is dropped without a panic; what
    /// say() does then, on the daemon itself with a closed stderr, is
    /// checked by tests/vm/report-edges.sh.
    #[test]
    fn a_failed_write_does_not_panic() {
        struct Closed;
        impl Write for Closed {
            fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
                Err(std::io::ErrorKind::BrokenPipe.into())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        assert!(!write_line(&mut Closed, "x"));
        assert!(write_line(&mut Vec::new(), "x"));
    }
}
