//! The composition root: from the options to a database, a policy
//! enforcer, an authenticator and the HTTP application, and serving it.
//! Nothing else builds these parts, and each part's settings are read from
//! the options in the module that builds it.

use std::fmt;
use std::future::IntoFuture;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use driver_host::{DriverConfig, DriverHost, DriverSettings, HostServices};

use crate::api::{self, Api, ApiOptions, CorsOptions};
use crate::auth;
use crate::certs::{self, X509Options};
use crate::conductor::{self, Conductor, Heartbeat};
use crate::db::{self, Db, DbTarget, Dialect};
use crate::notify::{self, Notifier, NotifierSettings};
use crate::openstack::{self, Lookup};
use crate::options::{AuthStrategy, Options};
use crate::policy::{self, Enforcer, PolicySettings};

// One module per part, each building its part's settings from the options
// beside the part itself.
mod database;
mod drivers;
mod enforcer;
mod metrics;
mod use_cases;
mod web;

pub use self::{database::*, drivers::*, enforcer::*, metrics::*, use_cases::*, web::*};

/// How long a graceful stop waits for requests in flight.
const DRAIN: Duration = Duration::from_secs(15);

/// How the process runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `openkeel-magnum api`: configured entirely by the files.
    Api,
    /// `openkeel-magnum all-in-one`: the embedded default (SQLite file,
    /// fake driver, no Keystone), schema created on start.
    AllInOne,
}

/// A start-up failure: one line naming its cause (never a secret).
#[derive(Debug)]
pub struct StartError(String);

impl StartError {
    /// A failure with `message`, made one line.
    pub fn new(message: impl fmt::Display) -> StartError {
        let text = message.to_string();
        StartError(text.split_whitespace().collect::<Vec<_>>().join(" "))
    }
}

impl fmt::Display for StartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for StartError {}

/// Starts traces from `[tracing]` (none without an endpoint).
pub fn start_traces(options: &Options) -> Result<Option<crate::traces::Traces>, StartError> {
    let t = &options.tracing;
    let settings = crate::traces::TraceSettings {
        otlp_endpoint: t.otlp_endpoint.clone(),
        export_timeout: std::time::Duration::from_secs(t.export_timeout.max(1).unsigned_abs()),
        sample_ratio: t.sample_ratio,
        service_name: t.service_name.clone(),
    };
    crate::traces::start(&settings).map_err(StartError::new)
}

/// The machine's host name, as Magnum's `[DEFAULT]/host` default.
fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "localhost".into())
}

/// Serves `app` on the `[api]` address until SIGINT or SIGTERM, then drains
/// requests in flight for at most 15 seconds.
pub async fn serve(options: &Options, app: axum::Router) -> Result<(), StartError> {
    let addr = listen_address(options)?;
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| StartError::new(format!("listen on {addr}: {e}")))?;
    tracing::info!(address = %addr, "serving the Magnum API");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let mut server = tokio::spawn(
        axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                let _ = stopped.await;
            })
            .into_future(),
    );
    tokio::select! {
        done = &mut server => return served(done),
        () = shutdown_signal() => {}
    }
    tracing::info!("stopping: draining requests in flight");
    let _ = stop.send(());
    match tokio::time::timeout(DRAIN, server).await {
        Ok(done) => served(done),
        Err(_) => {
            tracing::warn!("requests still in flight after the drain period: stopping anyway");
            Ok(())
        }
    }
}

fn served(done: Result<std::io::Result<()>, tokio::task::JoinError>) -> Result<(), StartError> {
    match done {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(StartError::new(format!("serve: {e}"))),
        Err(e) => Err(StartError::new(format!("serve: {e}"))),
    }
}

/// Resolves on SIGINT or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = term => {}
    }
}
