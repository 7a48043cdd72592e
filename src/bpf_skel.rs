// SPDX-License-Identifier: GPL-2.0-only
//
// The BPF skeleton generated from src/bpf/main.bpf.c by build.rs.
include!(concat!(env!("OUT_DIR"), "/bpf_skel.rs"));
