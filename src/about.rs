// SPDX-License-Identifier: GPL-2.0-only
//
// What the build and the machine are, as --version, the report header and
// the Prometheus info metric name them.

/// The build: version, git commit of the tree it was built from (-dirty
/// when that tree had changes to the sources), target, and /debug for a
/// debug build (scx_utils' build id).
pub fn version() -> String {
    let semver = match option_env!("SORYU_GIT") {
        Some(git) if !git.is_empty() => format!("{}-{git}", env!("CARGO_PKG_VERSION")),
        _ => env!("CARGO_PKG_VERSION").to_string(),
    };
    scx_utils::build_id::full_version(&semver)
}

/// The running kernel's release (uname -r), "unknown" if unreadable.
pub fn kernel_release() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

#[cfg(test)]
mod tests {
    #[test]
    fn version_names_the_build() {
        let v = super::version();
        assert!(v.starts_with(env!("CARGO_PKG_VERSION")), "{v}");
        assert_eq!(v.ends_with("/debug"), cfg!(debug_assertions), "{v}");
    }
}
