//! The layer rule of the API, held by cargo (docs/architecture.md,
//! "Layers"): the API names no type of the database. It does not depend on
//! `magnum-db`, and no crate it depends on hands a database type out
//! (re-export, public type alias or public function), outside what those
//! crates build only for tests (the feature `testing`).

use std::path::{Path, PathBuf};

fn manifest(dir: &Path) -> toml::Table {
    let path = dir.join("Cargo.toml");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.parse()
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Whether a line of a public declaration names the database crate or its
/// handle.
fn names_the_database(line: &str) -> bool {
    line.contains("magnum_db")
        || line.contains("db::")
        || line
            .split(|c: char| !c.is_alphanumeric() && c != '_')
            .any(|word| word == "Db")
}

/// The public declarations of `src` that name the database, outside test
/// files and items built only for tests.
fn handed_out(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut found = Vec::new();
    for file in files {
        let name = file
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if name == "testing.rs" || name.ends_with("tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&file).expect("source file");
        // Test modules close the production part of a file.
        let production = text
            .split("#[cfg(test)]\nmod tests")
            .next()
            .unwrap_or_default();
        let mut for_tests = false;
        for (n, line) in production.lines().enumerate() {
            let l = line.trim_start();
            if l.starts_with("#[cfg(") {
                for_tests = l.contains("feature = \"testing\"") || l == "#[cfg(test)]";
                continue;
            }
            // An inline module built for tests closes the production part,
            // as `mod tests` does.
            if for_tests && l.contains("mod ") && l.ends_with('{') {
                break;
            }
            let public = [
                "pub use",
                "pub type",
                "pub fn",
                "pub async fn",
                "pub const",
                "pub static",
            ]
            .iter()
            .any(|p| l.starts_with(p));
            if public && !for_tests && names_the_database(l) {
                found.push(format!("{}:{}: {}", file.display(), n + 1, l));
            }
            if !l.starts_with("#[") && !l.starts_with("///") && !l.is_empty() {
                for_tests = false;
            }
        }
    }
    found
}

#[test]
fn the_api_cannot_name_the_database() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let deps = manifest(here)["dependencies"]
        .as_table()
        .cloned()
        .expect("[dependencies]");
    assert!(
        !deps.contains_key("magnum-db"),
        "the API depends on the database crate"
    );
    let host = here.parent().expect("host/");
    let mut below: Vec<&String> = deps
        .keys()
        .filter(|k| host.join(k.as_str()).join("Cargo.toml").is_file())
        .collect();
    below.sort();
    assert!(below.iter().any(|k| *k == "magnum-conductor"), "{below:?}");
    for name in below {
        let found = handed_out(&host.join(name).join("src"));
        assert!(
            found.is_empty(),
            "{name} hands the database out:\n{}",
            found.join("\n")
        );
    }
}

#[test]
fn the_check_sees_a_public_database_handle() {
    assert!(names_the_database("pub fn db(&self) -> &Db {"));
    assert!(names_the_database("pub use magnum_db as db;"));
    assert!(names_the_database(
        "pub async fn list(&self) -> db::Result<Vec<Row>> {"
    ));
    assert!(!names_the_database("pub fn dbg_name(&self) -> &str {"));
    let dir = tempfile::tempdir().expect("temporary directory");
    std::fs::write(
        dir.path().join("lib.rs"),
        "#[cfg(any(test, feature = \"testing\"))]\npub fn db(&self) -> &Db {}\n\npub fn leak(&self) -> &Db {}\n",
    )
    .expect("write");
    let found = handed_out(dir.path());
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].ends_with("pub fn leak(&self) -> &Db {}"),
        "{found:?}"
    );
}
