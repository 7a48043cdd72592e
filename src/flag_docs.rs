// SPDX-License-Identifier: GPL-2.0-only
//
// The flag lists written for people, held against the flag definitions
// (cli.rs): README.md's table and the service's /etc/default comments name
// only flags that exist, each with the default the daemon uses. `--help`
// and the manual page are made from the definitions themselves.

use clap::{Arg, ArgAction, CommandFactory};
use scx_utils::libbpf_clap_opts::LibbpfOpts;

use crate::cli::Opts;

const README: &str = include_str!("../README.md");
const ENV_DEFAULT: &str = include_str!("../service/scx_soryu.default");

/// Flags that load nothing or only print: not for the service's SCX_FLAGS.
const NOT_FOR_THE_SERVICE: &[&str] = &["help", "version", "monitor", "help-stats", "check-flags"];

/// A flag's default as the docs spell it: clap's default value; the help's
/// own "[default: ...]" when the default is computed; "off" for a switch;
/// "none" for a value that is not set unless given.
fn default_of(a: &Arg) -> String {
    if matches!(a.get_action(), ArgAction::SetTrue) {
        return "off".into();
    }
    let d: Vec<String> = a
        .get_default_values()
        .iter()
        .map(|v| v.to_string_lossy().into_owned())
        .collect();
    if !d.is_empty() {
        return d.join(",");
    }
    let help = a
        .get_long_help()
        .or(a.get_help())
        .map(|h| h.to_string())
        .unwrap_or_default();
    if let Some(rest) = help.split("[default: ").nth(1) {
        return rest.split(']').next().unwrap_or_default().to_string();
    }
    "none".into()
}

fn flag(long: &str) -> Option<Arg> {
    Opts::command()
        .get_arguments()
        .find(|a| a.get_long() == Some(long))
        .cloned()
}

/// The long name in a flag spec such as "-s, --slice-us US" or
/// "--clear-bitmap[=BOOL]".
fn long_of(spec: &str) -> Option<&str> {
    let rest = spec.split("--").nth(1)?;
    rest.split(|c: char| c == '[' || c == ' ').next()
}

/// (flag, default) of each row of README.md's flag table.
fn readme_rows() -> Vec<(String, String)> {
    README
        .lines()
        .filter(|l| l.starts_with("| `-"))
        .map(|l| {
            let spec = l.split('`').nth(1).unwrap_or_default();
            let after = l.splitn(3, '`').nth(2).unwrap_or_default();
            let default = after
                .trim_start_matches(" | ")
                .split(" | ")
                .next()
                .unwrap_or_default();
            (
                long_of(spec).unwrap_or_default().to_string(),
                default.trim().to_string(),
            )
        })
        .collect()
}

/// (flag, default) of each flag line of /etc/default's comment: "#   FLAG
/// SPEC   DEFAULT   what it does", the columns two spaces or more apart.
fn env_default_rows() -> Vec<(String, String)> {
    ENV_DEFAULT
        .lines()
        .filter_map(|l| l.strip_prefix('#'))
        .map(str::trim_start)
        .filter(|l| l.starts_with('-'))
        .map(|l| {
            let mut cols = l.split("  ").map(str::trim).filter(|c| !c.is_empty());
            let spec = cols.next().unwrap_or_default();
            let default = cols.next().unwrap_or_default();
            (
                long_of(spec).unwrap_or_default().to_string(),
                default.to_string(),
            )
        })
        .collect()
}

fn check(source: &str, rows: &[(String, String)]) {
    assert!(!rows.is_empty(), "{source}: no flag rows found");
    for (name, default) in rows {
        let a = flag(name).unwrap_or_else(|| panic!("{source} lists --{name}, which is no flag"));
        assert!(!a.is_hide_set(), "{source} lists the hidden --{name}");
        assert_eq!(
            default,
            &default_of(&a),
            "{source}: --{name}'s default is not the daemon's"
        );
    }
}

#[test]
fn readme_flag_table_matches_the_definitions() {
    check("README.md", &readme_rows());
}

#[test]
fn env_default_lists_every_flag_with_its_default() {
    let rows = env_default_rows();
    check("service/scx_soryu.default", &rows);
    // libbpf's own flags (scx_utils' LibbpfOpts) are scx_utils' to document
    let libbpf = <LibbpfOpts as clap::Args>::augment_args(clap::Command::new("libbpf"));
    let libbpf: Vec<&str> = libbpf
        .get_arguments()
        .filter_map(|a| a.get_long())
        .collect();
    let cmd = Opts::command();
    for a in cmd.get_arguments().filter(|a| !a.is_hide_set()) {
        let Some(long) = a.get_long() else { continue };
        if NOT_FOR_THE_SERVICE.contains(&long) || libbpf.contains(&long) {
            continue;
        }
        assert!(
            rows.iter().any(|(n, _)| n == long),
            "service/scx_soryu.default does not list --{long}"
        );
    }
}

#[test]
fn a_changed_default_is_caught() {
    let mut rows = readme_rows();
    rows[0].1.push('0');
    let caught = std::panic::catch_unwind(|| check("README.md", &rows));
    assert!(caught.is_err(), "a wrong default passed");
}
