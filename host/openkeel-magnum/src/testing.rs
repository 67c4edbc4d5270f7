//! Test support shared by the unit tests of this crate: where the spec is,
//! and the rule for external services (skip with a message when unset, fail
//! when `CI=true`).

use std::path::PathBuf;

/// Whether this run is CI, where no test may skip for a missing service.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// Where the unit tests keep the compiled built-in drivers: beside the test
/// binary, so that every driver host a test starts loads the components
/// the first one compiled instead of compiling them again (the Cluster API
/// component alone takes seconds). Keyed by each component's sha256 and the
/// engine's settings, as the service's own `precompiled_cache_dir` is.
pub fn compiled_drivers_dir() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    Some(exe.parent()?.join("okm-compiled-drivers"))
}

/// `${OKM_SPEC_DIR:-../shared/spec}`, relative to the repository root.
pub fn spec_dir() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    match std::env::var("OKM_SPEC_DIR") {
        Ok(d) if !d.is_empty() => root.join(d),
        _ => root.join("../shared/spec"),
    }
}

/// The text of a spec file, or `None` (with a message) when the spec is not
/// available outside CI.
pub fn spec_file(rel: &str) -> Option<String> {
    let p = spec_dir().join(rel);
    match std::fs::read_to_string(&p) {
        Ok(t) => Some(t),
        Err(e) if !in_ci() => {
            eprintln!("skipped: spec file {} not available: {e}", p.display());
            None
        }
        Err(e) => panic!("spec file {} not available: {e}", p.display()),
    }
}
