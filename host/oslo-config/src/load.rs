//! Reading `--config-file`s and `--config-dir`s.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::config::{Config, ValueError, Warning};
use crate::ini::{self, ParseError};
use crate::schema::Schema;

/// Why a configuration could not be loaded. Its `Display` is one line.
#[derive(Debug)]
pub enum LoadError {
    /// A `--config-file` does not exist.
    FileNotFound(PathBuf),
    /// A `--config-dir` does not exist.
    DirNotFound(PathBuf),
    /// A file or directory could not be read.
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
    /// A malformed line.
    Parse(ParseError),
    /// Invalid values (at least one), in registration order.
    Invalid(Vec<ValueError>),
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::FileNotFound(p) => write!(f, "config file {}: not found", p.display()),
            LoadError::DirNotFound(p) => write!(f, "config dir {}: not found", p.display()),
            LoadError::Io { path, source } => write!(f, "read {}: {source}", path.display()),
            LoadError::Parse(e) => e.fmt(f),
            LoadError::Invalid(errors) => {
                for (i, e) in errors.iter().enumerate() {
                    if i > 0 {
                        f.write_str("; ")?;
                    }
                    e.fmt(f)?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for LoadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            LoadError::Io { source, .. } => Some(source),
            LoadError::Parse(e) => Some(e),
            _ => None,
        }
    }
}

/// The files a load reads, in order: `files`, then for each directory of
/// `dirs` its `*.conf` files (hidden files and directories excepted) sorted
/// by name — oslo.config's `sorted(glob(dir + "/*.conf"))` after the
/// `--config-file`s, whatever their order on the command line.
pub fn config_paths(files: &[PathBuf], dirs: &[PathBuf]) -> Result<Vec<PathBuf>, LoadError> {
    let mut paths = files.to_vec();
    for dir in dirs {
        paths.extend(conf_files_in(dir)?);
    }
    Ok(paths)
}

fn conf_files_in(dir: &Path) -> Result<Vec<PathBuf>, LoadError> {
    let io_error = |source: io::Error| {
        if source.kind() == io::ErrorKind::NotFound {
            LoadError::DirNotFound(dir.to_path_buf())
        } else {
            LoadError::Io {
                path: dir.to_path_buf(),
                source,
            }
        }
    };
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io_error)? {
        let entry = entry.map_err(io_error)?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if name.starts_with('.') || !name.ends_with(".conf") {
            continue;
        }
        let path = entry.path();
        if path.is_dir() {
            continue;
        }
        out.push(path);
    }
    // Python sorts the joined paths as str, by code point; within one
    // directory that is the byte order of the UTF-8 names.
    out.sort();
    Ok(out)
}

/// Reads and parses the files of [`config_paths`] and merges them into a
/// configuration of `schema`, with its warnings.
pub fn load(
    schema: Arc<Schema>,
    files: &[PathBuf],
    dirs: &[PathBuf],
) -> Result<(Config, Vec<Warning>), LoadError> {
    load_with_environment(schema, files, dirs, std::iter::empty())
}

/// Like [`load`], with environment variables (`OS_<GROUP>__<NAME>`, which
/// win over the files, as in oslo.config): pass `std::env::vars()` to read
/// the process's.
pub fn load_with_environment(
    schema: Arc<Schema>,
    files: &[PathBuf],
    dirs: &[PathBuf],
    environment: impl IntoIterator<Item = (String, String)>,
) -> Result<(Config, Vec<Warning>), LoadError> {
    let mut parsed = Vec::new();
    for path in config_paths(files, dirs)? {
        let data = std::fs::read(&path).map_err(|source| {
            if source.kind() == io::ErrorKind::NotFound {
                LoadError::FileNotFound(path.clone())
            } else {
                LoadError::Io {
                    path: path.clone(),
                    source,
                }
            }
        })?;
        let name = path.display().to_string();
        parsed.push(ini::parse(&name, &data).map_err(LoadError::Parse)?);
    }
    Config::from_sources(schema, parsed, environment).map_err(LoadError::Invalid)
}
