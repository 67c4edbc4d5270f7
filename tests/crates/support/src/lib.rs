//! What the tests of every crate share: where the repository and the spec
//! are, and the rule for what a test needs from outside (a service, the
//! spec): skipped with a message when it is missing, a failure when
//! `CI=true`.

use std::path::PathBuf;

pub mod kube;
pub mod logs;
pub mod oracle;
pub mod rng;
pub mod rows;

/// Whether this run is CI, where no test may skip for a missing service.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// The repository root.
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../..")
}

/// `${OKM_SPEC_DIR:-../shared/spec}`; a relative directory is taken from
/// the repository root.
pub fn spec_dir() -> PathBuf {
    match std::env::var("OKM_SPEC_DIR") {
        Ok(d) if !d.is_empty() => repo_root().join(d),
        _ => repo_root().join("../shared/spec"),
    }
}

/// [`spec_dir`] when it exists; `None` (with a message) when it does not,
/// outside CI.
pub fn spec_dir_present() -> Option<PathBuf> {
    let dir = spec_dir();
    if dir.is_dir() {
        return Some(dir);
    }
    missing(&format!(
        "spec directory {} (set OKM_SPEC_DIR)",
        dir.display()
    ));
    None
}

/// The text of a file of the spec, or `None` (with a message) when it is
/// not there, outside CI.
pub fn spec_file(rel: &str) -> Option<String> {
    let path = spec_dir().join(rel);
    match std::fs::read_to_string(&path) {
        Ok(text) => Some(text),
        Err(e) => {
            missing(&format!("spec file {}: {e}", path.display()));
            None
        }
    }
}

/// The value of an environment variable naming an external service or
/// tool, or `None` (with a message) when it is unset, outside CI.
pub fn need_env(name: &str) -> Option<String> {
    match std::env::var(name) {
        Ok(v) if !v.is_empty() => Some(v),
        _ => {
            missing(&format!("{name} is not set"));
            None
        }
    }
}

/// A free loopback port, never one handed out before in this test binary:
/// the kernel may offer a port again once its probe listener is closed, and
/// two servers starting at once on one port would each answer the other's
/// requests.
pub fn free_port() -> u16 {
    static GIVEN: std::sync::Mutex<Vec<u16>> = std::sync::Mutex::new(Vec::new());
    let mut given = GIVEN.lock().unwrap_or_else(|p| p.into_inner());
    loop {
        let port = match std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()) {
            Ok(a) => a.port(),
            Err(e) => panic!("a free port: {e}"),
        };
        if !given.contains(&port) {
            given.push(port);
            return port;
        }
    }
}

/// Says that a test skips for want of `what`; under CI it fails instead.
pub fn missing(what: &str) {
    assert!(!in_ci(), "required when CI=true: {what}");
    eprintln!("skipped: {what}");
}

/// Where the tests keep the compiled built-in drivers: beside the test
/// binary, so that every driver host a test starts loads the components the
/// first one compiled instead of compiling them again. Keyed by each
/// component's sha256 and the engine's settings, as the service's own
/// `precompiled_cache_dir` is.
pub fn compiled_drivers_dir() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    Some(exe.parent()?.join("okm-compiled-drivers"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_repository_root_holds_the_workspace() {
        let manifest = std::fs::read_to_string(repo_root().join("Cargo.toml")).unwrap();
        assert!(manifest.contains("[workspace]"), "{manifest}");
    }
}
