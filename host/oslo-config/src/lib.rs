//! An oslo.config-compatible reader of INI configuration files.
//!
//! It knows nothing of a particular service: the option table (a
//! [`Schema`]) is given to it. What it reproduces of oslo.config:
//!
//! - the file syntax ([`ini`]): whole-line `#`/`;` comments only, `=` or `:`
//!   whichever comes first, continuation lines, quotes stripped only when the
//!   first and last characters are the same quote, section names lower-cased
//!   except `DEFAULT`, repeated keys kept;
//! - the option types ([`OptType`]) with Python's `int()`, `float()` and
//!   oslo.config's boolean rules, bounds and choices;
//! - deprecated names and groups, multi-valued options, `$name` /
//!   `${group.name}` substitution with `$$` (or `\$`) for a literal dollar;
//! - several `--config-file`s then `--config-dir`s (sorted `*.conf`), later
//!   files winning, and **no `[DEFAULT]` fallback** for options of other
//!   groups ([`load`]);
//! - `OS_<GROUP>__<NAME>` environment variables winning over the files
//!   ([`load_with_environment`]).
//!
//! Unlike oslo.config it validates every checked option at load time,
//! returns [`Warning`]s for unknown groups and options, deprecated names and
//! ignored options, and never puts a secret value or a malformed line in an
//! error. It also translates oslo.db's `[database]/connection` into a sqlx
//! URL ([`database`]) and renders sample files ([`sample`]).
//!
//! ```
//! use std::sync::Arc;
//! use oslo_config::{ini, Config, Opt, OptType, Schema, Value};
//!
//! let mut schema = Schema::new();
//! schema.register(Opt::new("api", "port", OptType::Port).default("9511"))?;
//! let file = ini::parse("magnum.conf", b"[API]\nport = 8080\n")?;
//! let (config, warnings) = Config::from_files(Arc::new(schema), vec![file])
//!     .map_err(|errors| errors[0].clone())?;
//! assert_eq!(config.get("api", "port"), Some(Ok(&Value::Integer(8080))));
//! assert!(warnings.is_empty());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

mod config;
pub mod database;
mod declare;
#[doc(hidden)]
pub mod fuzzing;
pub mod ini;
mod load;
#[cfg(test)]
mod proptests;
mod python;
pub mod sample;
mod schema;
mod secret;
mod types;

pub use config::{
    Config, EffectiveOption, MASK, Source, ValueError, Warning, WarningKind, environment_variable,
};
pub use declare::{Accepted, Group, ReadValue, Reader, Registration};
pub use load::{LoadError, config_paths, load, load_with_environment};
pub use schema::{DuplicateOpt, Key, Opt, Schema};
pub use secret::Secret;
pub use types::{OptType, Value};
