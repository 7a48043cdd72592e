// SPDX-License-Identifier: GPL-2.0-only
//
// 1. src/bpf/main.bpf.c -> BPF skeleton, src/bpf/intf.h -> Rust bindings
//    (the one source of truth for constants shared by BPF and Rust); the
//    same program with -DSORYU_SECTIONS (bench/sections.sh), compiled only.
// 2. src/bpf/policy_host.c -> a host library holding the same policy.h
//    functions the BPF program runs, for the daemon and its unit tests.
use std::process::Command;

/// scx_cargo compiles BPF with $BPF_CLANG, else `clang`. Debian 12 has no
/// plain `clang`, only clang-19: use it when nothing else is said.
fn default_bpf_clang() {
    println!("cargo:rerun-if-env-changed=BPF_CLANG");
    let works = |c: &str| Command::new(c).arg("--version").output().is_ok();
    if std::env::var_os("BPF_CLANG").is_none() && !works("clang") && works("clang-19") {
        std::env::set_var("BPF_CLANG", "clang-19");
    }
}

/// The tree the binary is built from, for --version and the --report-json
/// headers: SORYU_GIT = "g<commit>", with "-dirty" when the sources differ
/// from that commit. Nothing outside a git checkout (a source tarball).
fn git_version() {
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let sources = ["src", "build.rs", "Cargo.toml", "Cargo.lock"];
    for p in sources {
        if std::path::Path::new(p).exists() {
            println!("cargo:rerun-if-changed={p}");
        }
    }
    let Some(sha) = git(&["rev-parse", "--short=12", "HEAD"]) else {
        return;
    };
    if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
        for f in ["HEAD", "index", "logs/HEAD"] {
            let p = std::path::Path::new(&dir).join(f);
            if p.exists() {
                println!("cargo:rerun-if-changed={}", p.display());
            }
        }
    }
    let mut status = vec!["status", "--porcelain", "--"];
    status.extend(sources);
    let dirty = git(&status).is_some_and(|s| !s.is_empty());
    let suffix = if dirty { "-dirty" } else { "" };
    println!("cargo:rustc-env=SORYU_GIT=g{sha}{suffix}");
}

/// The profiling build of bench/sections.sh (-DSORYU_SECTIONS: sections.bpf.c
/// times the sections TIMED() marks) is compiled on every build too, into an
/// object and skeleton nothing uses, so a change that breaks that build
/// fails here rather than at the next profiling run. It is not loaded, so
/// the verifier sees it only when bench/sections.sh runs it.
fn sections_build() {
    scx_cargo::BpfBuilder::new()
        .expect("scx_cargo: cannot set up the BPF build (is BPF_CLANG=clang-19 installed?)")
        .add_cflag("-DSORYU_SECTIONS")
        .enable_skel("src/bpf/main.bpf.c", "sections")
        .build()
        .expect("scx_cargo: the -DSORYU_SECTIONS build of bench/sections.sh failed");
}

fn main() {
    default_bpf_clang();
    git_version();
    scx_cargo::BpfBuilder::new()
        .expect("scx_cargo: cannot set up the BPF build (is BPF_CLANG=clang-19 installed?)")
        .enable_intf("src/bpf/intf.h", "bpf_intf.rs")
        .enable_skel("src/bpf/main.bpf.c", "bpf")
        .build()
        .expect("scx_cargo: BPF build failed");
    sections_build();

    cc::Build::new()
        .file("src/bpf/policy_host.c")
        .include("src/bpf")
        .warnings(true)
        .compile("soryu_policy");
    println!("cargo:rerun-if-changed=src/bpf/policy_host.c");
    println!("cargo:rerun-if-changed=src/bpf/policy.h");
    println!("cargo:rerun-if-changed=src/bpf/intf.h");
}
