//! `driver list [--details]`, `driver inspect FILE` and `driver validate
//! FILE` on the built-in drivers (and `OKM_DRIVERS_PATH`, a directory of
//! packages), as the binary's subcommands print them:
//!
//! ```sh
//! cargo run -p driver-host --example drivers -- list --details
//! cargo run -p driver-host --example drivers -- validate path/to/driver.toml
//! ```

use driver_host::{DriverHost, DriverSettings, HostServices};

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let settings = DriverSettings {
        enabled_beta_drivers: vec!["fake".into()],
        drivers_path: std::env::var_os("OKM_DRIVERS_PATH")
            .map(|p| vec![p.into()])
            .unwrap_or_default(),
        ..Default::default()
    };
    let host = match DriverHost::start(settings, HostServices::default()).await {
        Ok(h) => h,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    let code = match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["list"] => {
            print!("{}", host.list_table(false).render());
            0
        }
        ["list", "--details"] => {
            print!("{}", host.list_table(true).render());
            0
        }
        ["inspect", file] => {
            let r = host.inspect(std::path::Path::new(file)).await;
            print!("{}", r.render());
            r.exit_code()
        }
        ["validate", file] => {
            let r = host.validate(std::path::Path::new(file)).await;
            println!("{}", r.render_verdict());
            r.exit_code()
        }
        _ => {
            eprintln!("usage: drivers list [--details] | inspect FILE | validate FILE");
            2
        }
    };
    std::process::exit(code);
}
