//! Logs: `tracing` events as JSON lines on stderr, with stable snake_case
//! fields (`request_id`, `project_id`, `cluster_uuid`, `driver`).

use tracing_subscriber::EnvFilter;

use crate::options::Options;

/// Installs the process's subscriber: `info` for a server (`warn` for the
/// management commands), `debug` with `[DEFAULT]/debug`, refined by
/// `RUST_LOG` when set.
pub fn init(options: &Options, serving: bool) {
    let level = match (options.default.debug, serving) {
        (true, _) => "debug",
        (false, true) => "info",
        (false, false) => "warn",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(level));
    let _ = tracing_subscriber::fmt()
        .json()
        .flatten_event(true)
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}
