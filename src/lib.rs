// SPDX-License-Identifier: GPL-2.0-only
//
// The part of scx_soryu that loads nothing: every figure and how it is
// computed (figures.rs, the one table), the --report-json records
// (record.rs) and reading them back (read.rs), and the offline tools that
// work on recorded files (compare, plot). The daemon (src/main.rs) builds
// on it; nothing here reaches the BPF skeleton.
//
// This root only names the modules: it imports nothing, so no module can
// reach another through it.

pub mod about;
pub mod bpf_intf;
pub mod compare;
pub mod figures;
pub mod hist;
pub mod plot;
pub mod policy;
pub mod read;
pub mod record;
pub mod spec;
