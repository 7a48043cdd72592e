// SPDX-License-Identifier: GPL-2.0-only
//
// `scx_soryu compare`, the command: read both sides' files, compare them,
// print the result in the format asked for.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{bail, Result};

use super::{compare, render, CompareArgs, Format};
use crate::read::load_side;

/// The A and B files from the command line.
fn sides(args: &CompareArgs) -> Result<(Vec<PathBuf>, Vec<PathBuf>)> {
    if args.a.is_empty() && args.b.is_empty() {
        if args.files.len() != 2 {
            bail!("give two --report-json files (A then B), or rounds with -a FILE -b FILE; got {} file(s)", args.files.len());
        }
        return Ok((vec![args.files[0].clone()], vec![args.files[1].clone()]));
    }
    if args.a.len() != args.b.len() {
        bail!("-a was given {} time(s) and -b {}: round i pairs the i-th -a file with the i-th -b file, so give both as often", args.a.len(), args.b.len());
    }
    Ok((args.a.clone(), args.b.clone()))
}

pub fn run(args: &CompareArgs) -> Result<()> {
    let (a_paths, b_paths) = sides(args)?;
    let (a, mut notes) = load_side(&a_paths, "A")?;
    let (b, b_notes) = load_side(&b_paths, "B")?;
    notes.extend(b_notes);
    let mut c = compare(a, b, args)?;
    notes.append(&mut c.notes);
    c.notes = notes;
    let out = match args.format {
        Format::Text => render::text(&c),
        Format::Markdown => render::markdown(&c),
        Format::Json => serde_json::to_string_pretty(&render::json(&c))? + "\n",
    };
    std::io::stdout().write_all(out.as_bytes())?;
    Ok(())
}
