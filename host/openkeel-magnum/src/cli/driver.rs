//! `driver list [--details]`, `driver inspect FILE`, `driver validate FILE`
//! (magnum-driver-manage, and more).

use std::io::Write;
use std::path::Path;

use super::{DriverCommand, Failure};
use crate::app;
use crate::options::Options;

pub(super) async fn run(
    options: &Options,
    command: DriverCommand,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    let host = app::start_drivers(options).await?;
    let (text, code) = match command {
        DriverCommand::List { details } => {
            // What each driver would watch, against its grants.
            host.probe_watches().await;
            (host.list_table(details).render(), 0)
        }
        DriverCommand::Inspect { file } => {
            let r = host.inspect(Path::new(&file)).await;
            (r.render(), r.exit_code())
        }
        DriverCommand::Validate { file } => {
            let r = host.validate(Path::new(&file)).await;
            (format!("{}\n", r.render_verdict()), r.exit_code())
        }
        // Dispatched before the host starts (cli::run).
        DriverCommand::Test { .. } => return Err(Failure::new("driver test: not dispatched")),
    };
    write!(out, "{text}").map_err(Failure::new)?;
    match u8::try_from(code) {
        Ok(0) => Ok(()),
        Ok(c) => Err(Failure::status(c)),
        Err(_) => Err(Failure::status(1)),
    }
}
