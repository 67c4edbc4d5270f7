//! Builds the guest workspace (`guest/`: the built-in drivers, the guest
//! SDK and the sandbox test components) for `wasm32-wasip2`, so that a
//! plain `cargo build` or `cargo test` of the host embeds the built-in
//! drivers and finds the test components.
//!
//! The guests are built by a nested cargo into a target directory of their
//! own (the outer build holds the lock of its own one), in release (small,
//! fast components), with the outer build's compiler flags removed: they
//! are meant for the host, not for wasm.
//!
//! The nested cargo is the outer build's, unless `OKM_GUEST_TOOLCHAIN` names
//! a rustup toolchain (`1.95.0`): then the guests are built by `rustup run
//! <toolchain> cargo`, for a host build whose toolchain has no
//! `wasm32-wasip2` standard library (the nightly of the fuzz targets).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

#[path = "build/contract.rs"]
mod contract;

/// Guest crates whose components the host uses: (env var, file stem).
const ARTIFACTS: &[(&str, &str)] = &[
    ("OKM_GUEST_FAKE", "openkeel_magnum_driver_fake"),
    ("OKM_GUEST_CAPI", "openkeel_magnum_driver_capi"),
    ("OKM_GUEST_SANDBOX", "okm_sandbox_component"),
    ("OKM_GUEST_V2", "okm_v2_component"),
    ("OKM_GUEST_CONFORMANCE", "okm_conformance_component"),
    ("OKM_GUEST_WATCHER", "okm_watcher_component"),
];

const TARGET: &str = "wasm32-wasip2";

fn main() {
    let manifest_dir = PathBuf::from(env("CARGO_MANIFEST_DIR"));
    let root = manifest_dir.join("../..");
    for dir in ["guest", "wit"] {
        println!("cargo:rerun-if-changed={}", root.join(dir).display());
    }
    println!("cargo:rerun-if-env-changed=OKM_GUEST_CARGO_FLAGS");
    println!("cargo:rerun-if-env-changed=OKM_GUEST_TOOLCHAIN");
    println!("cargo:rerun-if-env-changed=OKM_GUEST_DRIVERS_ONLY");

    let out_dir = PathBuf::from(env("OUT_DIR"));
    generate_contract(&root.join("wit"), &out_dir);
    let target_dir = outer_target_dir(&out_dir)
        .unwrap_or_else(|| out_dir.clone())
        .join("wasm-guests");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let toolchain = std::env::var("OKM_GUEST_TOOLCHAIN").unwrap_or_default();
    ensure_target(&root, &toolchain);

    // The built-in drivers first, on their own: built with the test
    // components, they would share the SDK features those enable (cargo
    // unifies the features of one build), which they do not need. The
    // components of contract 1.1 last, for the same reason.
    //
    // OKM_GUEST_DRIVERS_ONLY=1 (the benchmark's build of the service alone)
    // builds only the drivers the binary embeds: the test components' paths
    // are still set, and name files that a later test build provides.
    let drivers_only = std::env::var("OKM_GUEST_DRIVERS_ONLY").is_ok_and(|v| v == "1");
    let builds = if drivers_only { &BUILDS[..2] } else { BUILDS };
    for packages in builds {
        build(&cargo, &toolchain, &root, &target_dir, packages);
    }
    let release = target_dir.join(TARGET).join("release");
    for (var, stem) in ARTIFACTS {
        let path = release.join(format!("{stem}.wasm"));
        let embedded = matches!(*var, "OKM_GUEST_FAKE" | "OKM_GUEST_CAPI");
        if !path.is_file() && (embedded || !drivers_only) {
            panic!("the guest build did not produce {}", path.display());
        }
        println!("cargo:rustc-env={var}={}", path.display());
    }
}

/// The package selections of the guest builds, in order: the built-in
/// drivers first (the fake driver for contract 1.0, the Cluster API driver
/// for 1.1), then the test components. The components built for contract
/// 1.1 (the SDK's feature `contract-1-1`) are built on their own, so that
/// the feature does not reach those built for 1.0.
const BUILDS: &[&[&str]] = &[
    &["-p", "openkeel-magnum-driver-fake"],
    &["-p", "openkeel-magnum-driver-capi"],
    &[
        "--workspace",
        "--exclude",
        "openkeel-magnum-driver-fake",
        "--exclude",
        "openkeel-magnum-driver-capi",
        "--exclude",
        "okm-watcher-component",
    ],
    &["-p", "okm-watcher-component"],
];

/// A command running `tool` (`cargo`, `rustc`) of the guests' toolchain:
/// `default` (the outer build's own), or the rustup toolchain `toolchain`.
fn guest_tool(toolchain: &str, tool: &str, default: &str) -> Command {
    if toolchain.is_empty() {
        return Command::new(default);
    }
    let mut c = Command::new("rustup");
    c.args(["run", toolchain, tool]);
    // The outer toolchain's selection and compiler stay with it.
    for var in ["RUSTUP_TOOLCHAIN", "RUSTC", "RUSTDOC", "CARGO"] {
        c.env_remove(var);
    }
    c
}

/// Adds the wasm32-wasip2 standard library to the guests' toolchain when
/// it has none: rustup installs the targets `rust-toolchain.toml` lists
/// only when it installs the toolchain, so a machine that already had the
/// toolchain lacks the target, and the README's two commands must work
/// there too. When rustup is absent or fails, the build below reports the
/// missing target with the command that adds it.
fn ensure_target(root: &Path, toolchain: &str) {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
    let libdir = guest_tool(toolchain, "rustc", &rustc)
        .args(["--print", "target-libdir", "--target", TARGET])
        .stderr(Stdio::null())
        .output();
    let installed = match libdir {
        Ok(out) if out.status.success() => {
            Path::new(String::from_utf8_lossy(&out.stdout).trim()).is_dir()
        }
        // Cannot tell: leave it to the build.
        _ => return,
    };
    if installed {
        return;
    }
    // From the repository, so that rustup picks the toolchain of
    // rust-toolchain.toml (or RUSTUP_TOOLCHAIN, which rustup sets for the
    // outer build) when no other toolchain is named.
    let mut add = Command::new("rustup");
    add.current_dir(root).args(["target", "add", TARGET]);
    if !toolchain.is_empty() {
        add.args(["--toolchain", toolchain]);
    }
    add.stdout(Stdio::from(std::io::stderr()));
    if add.status().is_ok_and(|s| s.success()) {
        println!(
            "cargo:warning=added the {TARGET} target to the Rust toolchain \
             (rustup target add {TARGET}), which the driver components need"
        );
    }
}

fn build(cargo: &str, toolchain: &str, root: &Path, target_dir: &Path, packages: &[&str]) {
    let mut cmd = guest_tool(toolchain, "cargo", cargo);
    // From the guest workspace, so that its .cargo/config.toml applies.
    cmd.current_dir(root.join("guest"));
    cmd.arg("build")
        .arg("--release")
        .arg("--target")
        .arg(TARGET)
        .arg("--manifest-path")
        .arg(root.join("guest/Cargo.toml"))
        .arg("--target-dir")
        .arg(target_dir)
        .args(packages);
    if let Ok(extra) = std::env::var("OKM_GUEST_CARGO_FLAGS") {
        cmd.args(extra.split_whitespace());
    }
    // The outer build's flags and target are for the host.
    for var in [
        "CARGO_ENCODED_RUSTFLAGS",
        "RUSTFLAGS",
        "CARGO_BUILD_RUSTFLAGS",
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET",
        "RUSTC_WRAPPER",
        "RUSTC_WORKSPACE_WRAPPER",
        "CARGO_PRIMARY_PACKAGE",
    ] {
        cmd.env_remove(var);
    }
    for (key, _) in std::env::vars() {
        if key.starts_with("CARGO_PROFILE_") || key.starts_with("CARGO_CFG_") {
            cmd.env_remove(key);
        }
    }
    // Cargo shows a build script's stderr when it fails.
    cmd.stdout(Stdio::from(std::io::stderr()));
    let status = match cmd.status() {
        Ok(s) => s,
        Err(e) => panic!("cannot run cargo to build the driver components: {e}"),
    };
    if !status.success() {
        panic!(
            "building the driver components for {TARGET} failed ({status}); \
             if the target is missing: rustup target add {TARGET}"
        );
    }
}

/// The host's declarations of the exported functions, from the WIT:
/// `contract_functions.rs` (included by `contract.rs`) and
/// `contract_request.rs` (by `package.rs`).
fn generate_contract(wit: &Path, out_dir: &Path) {
    let exports = contract::exports(wit)
        .unwrap_or_else(|e| panic!("reading the contract's exports from the WIT: {e}"));
    for (file, text) in [
        ("contract_functions.rs", contract::functions_rs(&exports)),
        ("contract_request.rs", contract::request_rs(&exports)),
    ] {
        let path = out_dir.join(file);
        if let Err(e) = std::fs::write(&path, text) {
            panic!("{}: {e}", path.display());
        }
    }
}

fn env(key: &str) -> String {
    std::env::var(key).unwrap_or_else(|_| panic!("{key} is not set by cargo"))
}

/// The outer build's target directory, so that every build of the host
/// (check, test, release, clippy) shares one guest build: the parent of
/// the profile directory, the nearest ancestor of OUT_DIR holding cargo's
/// `.fingerprint` (`target/debug` of `target/debug/build/<pkg>/out`).
///
/// Not cargo's CACHEDIR.TAG: cargo writes it only into a target directory
/// it creates itself, and `target/` created by another build's
/// `--target-dir target/<name>` has none.
fn outer_target_dir(out_dir: &Path) -> Option<PathBuf> {
    out_dir
        .ancestors()
        .find(|p| p.join(".fingerprint").is_dir())
        .and_then(Path::parent)
        .map(Path::to_path_buf)
}
