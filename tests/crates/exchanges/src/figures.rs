//! The figures a suite reports (how many cases ran, passed, differed):
//! printed, and appended to the file named by `$OKM_FIGURES` when it is set,
//! so that CI prints every suite's figures after one test run instead of
//! running the suites again with their output shown.

use std::io::Write;

/// Prints `line` and appends it to `$OKM_FIGURES` when that is set. Several
/// test threads and binaries may append at once: each line is one `write`
/// on a file opened for appending, which the kernel keeps whole.
pub fn report(line: &str) {
    println!("{line}");
    let Some(path) = std::env::var_os("OKM_FIGURES").filter(|p| !p.is_empty()) else {
        return;
    };
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .unwrap_or_else(|e| panic!("open the figures file {}: {e}", path.display()));
    file.write_all(format!("{line}\n").as_bytes())
        .unwrap_or_else(|e| panic!("write the figures file {}: {e}", path.display()));
}
