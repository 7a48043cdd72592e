// SPDX-License-Identifier: GPL-2.0-only
//
// scx_soryu compare: not written yet.

use anyhow::{bail, Result};

#[derive(Debug, Clone, clap::Args)]
pub struct CompareArgs {
    /// --report-json files
    pub files: Vec<std::path::PathBuf>,
}

pub fn run(_args: &CompareArgs) -> Result<()> {
    bail!("scx_soryu compare is not implemented yet")
}
