//! The CPython oracles: scripts that run the real Python library (oslo.config,
//! oslo.policy, `ast.literal_eval`…) on the inputs a test generates, so
//! that the test compares our answers with Python's.

use std::ffi::OsStr;
use std::io::Write as _;
use std::process::{Command, Stdio};

/// The interpreter with the oracles' libraries installed
/// (`OPENKEEL_TEST_PYTHON`), or `None` to skip outside CI.
pub fn python() -> Option<String> {
    crate::need_env("OPENKEEL_TEST_PYTHON")
}

/// Runs `python` with `args` (a script's path, or `-c` and its text) and
/// `input` on its standard input, and returns what it wrote on its standard
/// output. A script that cannot start or exits with a failure fails the
/// test, with its standard error.
pub fn run(python: &str, args: &[&OsStr], input: &[u8]) -> Vec<u8> {
    let mut child = Command::new(python)
        .args(args)
        .env("PYTHONUTF8", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("start {python}: {e}"));
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(input)
            .unwrap_or_else(|e| panic!("oracle stdin: {e}"));
    }
    let out = child
        .wait_with_output()
        .unwrap_or_else(|e| panic!("oracle: {e}"));
    assert!(
        out.status.success(),
        "oracle failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}
