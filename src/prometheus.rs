// SPDX-License-Identifier: GPL-2.0-only
//
// --prometheus: the figures in the Prometheus text exposition format, for
// node_exporter's textfile collector. Every report interval the whole file
// is written anew to a temporary file in the same directory and renamed
// over PATH, so a reader sees the old file or the new one, never half.
//
// Unlike the text report and --report-json, which give each interval's own
// figures, counters here are cumulative since the daemon started (the sum
// of every interval reported so far, across scheduler reloads): Prometheus
// computes rates itself and reads a drop as a restart. The run's `run_id`
// is a label of scx_soryu_info only (with the start time, it tells one
// start of the daemon from the next; on every series it would make each
// start a new set of series). Which figure goes to which family, and its
// help text, is the figure table's (scx_soryu::figures); the histograms,
// the kernel's events and the BPF costs are this file's.
// docs/operations.md lists the metrics.
//
// Writing is best-effort, like every output of the daemon: a failure is
// reported once on stderr, retried every interval, and never stops the
// scheduler. The file is removed when the daemon exits, so that
// node_exporter does not go on serving the figures of a scheduler that is
// gone.
//
// What the figures are and how they are rendered: prometheus/render.rs.
// Writing the file as the daemon runs: prometheus/sink.rs; the sample file
// of --prometheus-sample: prometheus/sample.rs. This file only names them.

pub mod render;
pub mod sample;
pub mod sink;

#[cfg(test)]
mod tests;
