//! `okm-osfake`: serves the OpenStack test double on a loopback port for the
//! black-box suites.
//!
//! ```text
//! okm-osfake [--port N] [--seed FILE] [--exit-on-stdin-eof]
//! ```
//!
//! `--port` is the loopback port (0, the default, picks a free one), `--seed`
//! a JSON file holding the resources served (see `Seed`). Once listening it
//! prints one line of JSON on stdout, `{"url": …, "endpoints": {"image": …,
//! "compute": …, …}, "catalog": […]}`, and serves until SIGINT or SIGTERM
//! (or, with `--exit-on-stdin-eof`, until its standard input closes, so that
//! it never outlives the suite that started it). The control API is under
//! `{url}/_osfake/`: `GET calls`, `POST faults`, `POST reset`, `PUT seed`.

use std::io::{Read, Write};
use std::net::SocketAddr;
use std::process::ExitCode;

use openkeel_magnum_osfake::{OsFake, Seed};

struct Args {
    port: u16,
    seed: Option<String>,
    exit_on_stdin_eof: bool,
}

fn usage() -> String {
    "usage: okm-osfake [--port N] [--seed FILE] [--exit-on-stdin-eof]".to_owned()
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        port: 0,
        seed: None,
        exit_on_stdin_eof: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) => (f.to_owned(), Some(v.to_owned())),
            None => (a.clone(), None),
        };
        let mut value = |name: &str| {
            inline
                .clone()
                .or_else(|| it.next())
                .ok_or_else(|| format!("{name} needs a value\n{}", usage()))
        };
        match flag.as_str() {
            "--port" => {
                let v = value("--port")?;
                args.port = v
                    .parse()
                    .map_err(|_| format!("--port {v:?} is not a port number"))?;
            }
            "--seed" => args.seed = Some(value("--seed")?),
            "--exit-on-stdin-eof" => args.exit_on_stdin_eof = true,
            "-h" | "--help" => return Err(usage()),
            other => return Err(format!("unknown argument {other:?}\n{}", usage())),
        }
    }
    Ok(args)
}

fn read_seed(path: Option<&str>) -> Result<Seed, String> {
    let Some(path) = path else {
        return Ok(Seed::default());
    };
    let raw = std::fs::read(path).map_err(|e| format!("read seed {path}: {e}"))?;
    serde_json::from_slice(&raw).map_err(|e| format!("seed {path}: {e}"))
}

async fn stopped(exit_on_stdin_eof: bool) {
    let stdin_closed = async {
        if !exit_on_stdin_eof {
            return std::future::pending::<()>().await;
        }
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        std::thread::spawn(move || {
            let mut stdin = std::io::stdin();
            let mut buf = [0u8; 256];
            while matches!(stdin.read(&mut buf), Ok(n) if n > 0) {}
            let _ = tx.send(());
        });
        let _ = rx.await;
    };
    let terminated = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        () = terminated => {}
        () = stdin_closed => {}
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("okm-osfake: {e}");
            return ExitCode::from(2);
        }
    };
    let seed = match read_seed(args.seed.as_deref()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("okm-osfake: {e}");
            return ExitCode::from(2);
        }
    };
    let fake = match OsFake::bind(SocketAddr::from(([127, 0, 0, 1], args.port)), seed).await {
        Ok(f) => f,
        Err(e) => {
            eprintln!("okm-osfake: listen on 127.0.0.1:{}: {e}", args.port);
            return ExitCode::FAILURE;
        }
    };
    let mut out = std::io::stdout().lock();
    if writeln!(out, "{}", fake.description())
        .and_then(|()| out.flush())
        .is_err()
    {
        return ExitCode::FAILURE;
    }
    drop(out);
    stopped(args.exit_on_stdin_eof).await;
    drop(fake);
    ExitCode::SUCCESS
}
