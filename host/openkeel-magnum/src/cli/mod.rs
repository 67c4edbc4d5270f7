//! The command line: one subcommand per Magnum process or management tool.
//! Flag parsing and printing only; the work is in [`crate::app`] and the
//! modules it wires.

mod db;
mod driver;
mod driver_test;
mod serve;
mod status;
mod table;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::options::{self, Options};

/// openkeel-magnum: the OpenStack Magnum container-infra API, with cluster
/// drivers as sandboxed WebAssembly components.
#[derive(Debug, Parser)]
#[command(name = "openkeel-magnum", version, about)]
pub struct Cli {
    /// A configuration file (repeatable; later files win). Default:
    /// /etc/magnum/magnum.conf when it exists.
    #[arg(long = "config-file", value_name = "PATH", global = true)]
    config_file: Vec<PathBuf>,
    /// A directory whose *.conf files are read after the configuration
    /// files, in name order (repeatable). Default: /etc/magnum/magnum.conf.d
    /// when it exists.
    #[arg(long = "config-dir", value_name = "DIR", global = true)]
    config_dir: Vec<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the API server (magnum-api).
    Api,
    /// Run the API and the background work in one process on the embedded
    /// default: unless the configuration says otherwise, the SQLite file
    /// openkeel-magnum.sqlite in the working directory (created and migrated
    /// on start), no authentication (identity from the X-Project-Id,
    /// X-User-Id and X-Roles headers), and the built-in fake driver.
    AllInOne {
        /// The drivers' Kubernetes: `memory` for an in-memory Kubernetes API
        /// inside the process (to try a driver without a cluster; the
        /// objects are lost at exit), or a kubeconfig file. Overrides
        /// [capi]/management_cluster and [capi]/kubeconfig.
        #[arg(long, value_name = "memory|KUBECONFIG")]
        kube: Option<String>,
    },
    /// Run the background work of magnum-conductor: the service heartbeat
    /// that `openstack coe service list` shows.
    Reconciler,
    /// Manage the database schema (magnum-db-manage).
    #[command(subcommand)]
    Db(DbCommand),
    /// The installed cluster drivers (magnum-driver-manage).
    #[command(subcommand)]
    Driver(DriverCommand),
    /// Deployment checks (magnum-status).
    #[command(subcommand)]
    Status(StatusCommand),
    /// Check the configuration files.
    #[command(subcommand)]
    Config(ConfigCommand),
    /// Check the policy files.
    #[command(subcommand)]
    Policy(PolicyCommand),
}

#[derive(Debug, Subcommand)]
enum DbCommand {
    /// Create the schema or migrate it to the latest version.
    Upgrade,
    /// Print our schema version and the Alembic revision.
    Version,
    /// Take over an existing Magnum database (Alembic head b3e1cf4a2d5e)
    /// without changing its rows.
    Adopt,
}

#[derive(Debug, Subcommand)]
enum DriverCommand {
    /// List the installed drivers (magnum-driver-manage list-drivers), with
    /// their version, WIT version, source, state and health.
    List {
        /// Also show the (server_type, os, coe) each entry point provides,
        /// the component's SHA-256, its grants and limits.
        #[arg(short, long)]
        details: bool,
    },
    /// Show a driver package or component: its WIT world, manifest and what
    /// this host would grant it.
    Inspect {
        /// A driver.toml, its directory, or a component file.
        file: String,
    },
    /// Whether this host would load a driver package, and if not, why
    /// (exit 0 or 1).
    Validate {
        /// A driver.toml, its directory, or a component file.
        file: String,
    },
    /// Test a driver package before shipping it: the conformance kit, then
    /// a cluster's lifecycle (template, refused labels, create, resize,
    /// delete) through the API of this binary started as `all-in-one
    /// --kube memory`. Exit 0 when both pass, 1 otherwise.
    Test {
        /// The package directory (its driver.toml and component).
        package: PathBuf,
        /// A label the driver must refuse with a 400, as LABEL=VALUE
        /// (repeatable: one refused create each).
        #[arg(long = "refuses", value_name = "LABEL=VALUE", value_parser = driver_test::parse_label)]
        refuses: Vec<(String, String)>,
        /// The entry point the lifecycle's template names (default: the
        /// manifest's first).
        #[arg(long = "entry-point", value_name = "NAME")]
        entry_point: Option<String>,
        /// The bound of each wait of the lifecycle (the server's start,
        /// each status), in seconds.
        #[arg(long, value_name = "SECONDS", default_value_t = 120)]
        timeout: u64,
        /// Run the conformance kit only.
        #[arg(long)]
        skip_lifecycle: bool,
    },
}

#[derive(Debug, Subcommand)]
enum StatusCommand {
    /// Check that this deployment can run this release (magnum-status
    /// upgrade check): exit 0 success, 1 warning, 2 failure.
    UpgradeCheck,
}

#[derive(Debug, Subcommand)]
enum ConfigCommand {
    /// Read the configuration, print every warning and the effective
    /// options (secrets masked) with where each value comes from.
    Check,
}

#[derive(Debug, Subcommand)]
enum PolicyCommand {
    /// Load the policy files and report rules that are unknown, unparsable,
    /// deprecated or redundant: exit 0 when there is none, 1 otherwise.
    Check,
}

/// A command's failure: its exit status and the one line to print.
#[derive(Debug)]
pub struct Failure {
    pub code: u8,
    pub message: Option<String>,
}

impl Failure {
    /// A failure printed as `openkeel-magnum: <message>`, exit 1.
    pub fn new(message: impl std::fmt::Display) -> Failure {
        Failure {
            code: 1,
            message: Some(one_line(&message.to_string())),
        }
    }

    /// An exit status whose outcome was printed already.
    pub fn status(code: u8) -> Failure {
        Failure {
            code,
            message: None,
        }
    }
}

impl From<crate::app::StartError> for Failure {
    fn from(e: crate::app::StartError) -> Failure {
        Failure::new(e)
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Runs the command line and returns the process exit status. Errors are
/// one line on stderr naming the cause, never a stack trace.
pub fn main() -> ExitCode {
    crate::memory::configure();
    let cli = Cli::parse();
    let code = match run(cli) {
        Ok(()) => 0,
        Err(f) => {
            if let Some(m) = f.message {
                eprintln!("openkeel-magnum: {m}");
            }
            f.code
        }
    };
    ExitCode::from(code)
}

fn run(cli: Cli) -> Result<(), Failure> {
    let options = load(&cli)?;
    // The servers log what they do; the management commands only problems.
    let serving = matches!(
        cli.command,
        Command::Api | Command::AllInOne { .. } | Command::Reconciler
    );
    crate::telemetry::init(&options, serving);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::new(format!("start the runtime: {e}")))?;
    let mut stdout = std::io::stdout().lock();
    match cli.command {
        Command::Api => runtime.block_on(serve::api(options)),
        Command::AllInOne { .. } => runtime.block_on(serve::all_in_one(options)),
        Command::Reconciler => runtime.block_on(serve::reconciler(options)),
        Command::Db(c) => runtime.block_on(db::run(&options, c, &mut stdout)),
        Command::Driver(DriverCommand::Test {
            package,
            refuses,
            entry_point,
            timeout,
            skip_lifecycle,
        }) => {
            let args = driver_test::Args {
                package,
                refuses,
                entry_point,
                timeout: std::time::Duration::from_secs(timeout.max(1)),
                skip_lifecycle,
                config_files: cli.config_file.clone(),
                config_dirs: cli.config_dir.clone(),
            };
            runtime.block_on(driver_test::run(&options, args, &mut stdout))
        }
        Command::Driver(c) => runtime.block_on(driver::run(&options, c, &mut stdout)),
        Command::Status(StatusCommand::UpgradeCheck) => {
            runtime.block_on(status::upgrade_check(&options, &mut stdout))
        }
        Command::Config(ConfigCommand::Check) => config_check(&options, &mut stdout),
        Command::Policy(PolicyCommand::Check) => {
            let settings = crate::app::policy_settings(&options);
            match crate::policy::check(&settings, &mut stdout) {
                Ok(0) => Ok(()),
                Ok(code) => Err(Failure::status(code)),
                Err(e) => Err(Failure::new(e)),
            }
        }
    }
}

/// Reads the configuration once, before any subcommand runs. Configuration
/// errors exit with status 2; warnings go to stderr.
fn load(cli: &Cli) -> Result<Options, Failure> {
    let (mut files, mut dirs) = (cli.config_file.clone(), cli.config_dir.clone());
    let all_in_one = matches!(cli.command, Command::AllInOne { .. });
    // `driver test` reads only the files it is given (as all-in-one), and
    // passes them on to the server it starts.
    let driver_test = matches!(cli.command, Command::Driver(DriverCommand::Test { .. }));
    if files.is_empty() && dirs.is_empty() && !all_in_one && !driver_test {
        if Path::new(options::DEFAULT_CONFIG_FILE).is_file() {
            files.push(PathBuf::from(options::DEFAULT_CONFIG_FILE));
        }
        if Path::new(options::DEFAULT_CONFIG_DIR).is_dir() {
            dirs.push(PathBuf::from(options::DEFAULT_CONFIG_DIR));
        }
    }
    let files: Vec<PathBuf> = files
        .into_iter()
        .map(|f| std::path::absolute(&f).unwrap_or(f))
        .collect();
    let loaded = options::load(&files, &dirs).map_err(|e| Failure {
        code: 2,
        message: Some(one_line(&e.to_string())),
    })?;
    for w in &loaded.warnings {
        eprintln!("openkeel-magnum: warning: {}", one_line(w));
    }
    let mut options = loaded.options;
    if all_in_one {
        let cwd =
            std::env::current_dir().map_err(|e| Failure::new(format!("working directory: {e}")))?;
        options.apply_all_in_one_defaults(&cwd);
    }
    if let Command::AllInOne { kube: Some(kube) } = &cli.command {
        match kube.trim() {
            "memory" => options.capi.management_cluster = "memory".into(),
            path => {
                options.capi.management_cluster = "kubeconfig".into();
                options.capi.kubeconfig = path.into();
            }
        }
    }
    // The [driver:<package>] groups are configuration too: a key the
    // driver host does not know is a configuration error.
    crate::app::driver_settings(&options).map_err(|e| Failure {
        code: 2,
        message: Some(e.to_string()),
    })?;
    Ok(options)
}

/// `config check`: the effective options and where they come from.
fn config_check(options: &Options, out: &mut dyn Write) -> Result<(), Failure> {
    let rows: Vec<Vec<String>> = options
        .effective()
        .into_iter()
        .map(|o| vec![o.group, o.name, o.value, o.source])
        .collect();
    match table::print(out, &["Group", "Option", "Value", "Source"], &rows) {
        // A reader that stopped early (`| head`) is not a failure.
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(Failure::new(e)),
        _ => Ok(()),
    }
}
