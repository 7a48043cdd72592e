// SPDX-License-Identifier: GPL-2.0-only
//
// scx_soryu plot: not written yet.

use anyhow::{bail, Result};

#[derive(Debug, Clone, clap::Args)]
pub struct PlotArgs {
    /// --report-json files
    pub files: Vec<std::path::PathBuf>,
}

pub fn run(_args: &PlotArgs) -> Result<()> {
    bail!("scx_soryu plot is not implemented yet")
}
