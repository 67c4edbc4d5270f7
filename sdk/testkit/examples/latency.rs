//! Per-call latency of a built driver package in the real host:
//!
//!     cargo run -p openkeel-magnum-driver-testkit --example latency -- <package dir> [calls]
//!
//! Prints the component's size, the load time (validation, compilation,
//! linking, the describe call) and the wall time of `create-cluster` and
//! `poll-status` on the fixture rows (each call on a fresh instance, as
//! the host always runs them): median and 90th percentile.

use std::time::{Duration, Instant};

use openkeel_magnum_driver_testkit::{Kit, Package, fixtures};

fn percentile(v: &mut [Duration], p: f64) -> Duration {
    v.sort();
    let i = ((v.len() as f64 - 1.0) * p).round() as usize;
    v.get(i).copied().unwrap_or_default()
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let dir = args.next().ok_or("usage: latency <package dir> [calls]")?;
    let n: usize = match args.next() {
        Some(s) => s.parse().map_err(|e| format!("calls: {e}"))?,
        None => 200,
    };
    let pkg = Package::from_dir(&dir)?;
    let size = pkg.component.len();
    let t = Instant::now();
    let kit = Kit::load(pkg).await?;
    let load = t.elapsed();
    let d = kit
        .drivers()?
        .into_iter()
        .next()
        .ok_or("the package has no entry point")?;
    let target = d.provides().first().cloned().ok_or("no cluster type")?;
    let st = fixtures::new_cluster(d.name(), &target, &Default::default());
    let user = fixtures::user();
    let admin = fixtures::admin();
    let mut create = Vec::with_capacity(n);
    let mut poll = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        d.create_cluster(&user, &st, 60)
            .await
            .map_err(|e| e.to_string())?;
        create.push(t.elapsed());
        let t = Instant::now();
        d.poll_status(&admin, &st)
            .await
            .map_err(|e| e.to_string())?;
        poll.push(t.elapsed());
    }
    println!("package:        {dir}");
    println!("component:      {size} bytes");
    println!("load:           {load:.1?}");
    println!(
        "create-cluster: p50 {:.1?}, p90 {:.1?} ({n} calls)",
        percentile(&mut create, 0.5),
        percentile(&mut create, 0.9)
    );
    println!(
        "poll-status:    p50 {:.1?}, p90 {:.1?} ({n} calls)",
        percentile(&mut poll, 0.5),
        percentile(&mut poll, 0.9)
    );
    Ok(())
}
