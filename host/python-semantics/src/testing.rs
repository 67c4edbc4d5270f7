//! What the tests of several modules share: a deterministic generator and
//! the runner of the CPython oracle.

use std::ffi::OsString;
use std::io::Write as _;
use std::process::{Command, Stdio};

/// A deterministic source of test inputs (no clock, no global state).
pub(crate) struct Lcg(pub(crate) u64);

impl Lcg {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() as usize) % n
    }

    pub(crate) fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

/// The Python interpreter of the oracle tests (`OPENKEEL_TEST_PYTHON`), or
/// `None` to skip `what`; in CI the variable must be set.
pub(crate) fn oracle_python(what: &str) -> Option<OsString> {
    let python = std::env::var_os("OPENKEEL_TEST_PYTHON");
    if python.is_none() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "OPENKEEL_TEST_PYTHON must be set in CI"
        );
        eprintln!("skipping {what}: OPENKEEL_TEST_PYTHON is not set");
    }
    python
}

/// Runs `script` with `python -c` and `args`, the strings of `input` as a
/// JSON array on its standard input, and returns the JSON it writes.
pub(crate) fn run_oracle(
    python: OsString,
    script: &str,
    args: &[String],
    input: &[String],
) -> serde_json::Value {
    let mut child = Command::new(python)
        .arg("-c")
        .arg(script)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the Python oracle");
    {
        let mut stdin = child.stdin.take().expect("oracle stdin");
        stdin
            .write_all(&serde_json::to_vec(input).expect("encode cases"))
            .expect("write cases");
    }
    let output = child.wait_with_output().expect("run the Python oracle");
    assert!(output.status.success(), "oracle failed");
    serde_json::from_slice(&output.stdout).expect("oracle answer is JSON")
}
