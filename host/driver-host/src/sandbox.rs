//! The one wasmtime `Engine` of the process and what depends on it only:
//! its configuration, the epoch ticker, the linker of every import the
//! host provides, and turning bytes into a compiled component (validated
//! first, then compiled or loaded from the precompiled cache).

use std::hash::{Hash, Hasher};
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::thread;
use std::time::Duration;

use sha2::{Digest, Sha256};
use wasmtime::component::{Component, HasSelf, Linker};
use wasmtime::{Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};

use crate::bindings::{v1_0, v1_1};
use crate::error::LoadError;
use crate::imports::CallState;
use crate::settings::MAX_MEMORY_BYTES;

/// How often the epoch advances. A running guest yields to the executor
/// at every tick and is interrupted at the first tick past its deadline.
pub(crate) const EPOCH_TICK: Duration = Duration::from_millis(10);

/// How much of a reused memory slot is reset by memset.
const KEEP_RESIDENT: usize = 128 << 10;

/// The engine, its linker and whether instances come from a pool.
pub(crate) struct Sandbox {
    pub(crate) engine: Engine,
    pub(crate) linker: Linker<CallState>,
    pub(crate) pooling: bool,
    cache_dir: Option<PathBuf>,
    compat: String,
}

fn config(pooling: bool) -> Config {
    let mut c = Config::new();
    c.wasm_component_model(true);
    c.epoch_interruption(true);
    if pooling {
        let mut p = PoolingAllocationConfig::new();
        // Concurrent calls are bounded by these slots; beyond them an
        // instantiation fails (reported, not queued).
        p.total_component_instances(256);
        p.total_core_instances(2048);
        p.total_memories(256);
        p.total_tables(1024);
        p.total_stacks(256);
        p.max_memory_size(usize::try_from(MAX_MEMORY_BYTES).unwrap_or(usize::MAX));
        // A fresh instance per call: the first pages of a reused slot are
        // reset by memset instead of page faults (a Rust guest's stack
        // top, data and first heap pages), the rest given back to the
        // kernel as soon as the instance is dropped: in batches, slots a
        // call filled would stay resident until the batch is full (32
        // calls of a driver that allocates its limit would hold 32 times
        // its memory).
        p.linear_memory_keep_resident(KEEP_RESIDENT);
        p.table_keep_resident(0);
        p.async_stack_keep_resident(64 << 10);
        p.decommit_batch_size(1);
        c.allocation_strategy(InstanceAllocationStrategy::Pooling(p));
    }
    c
}

impl Sandbox {
    /// The engine and linker. With `pooling`, instances come from a
    /// pre-reserved pool; when the reservation fails (a small address
    /// space), on-demand allocation is used instead.
    pub(crate) fn new(pooling: bool, cache_dir: Option<PathBuf>) -> Result<Sandbox, LoadError> {
        let (engine, pooling) = match pooling.then(|| Engine::new(&config(true))) {
            Some(Ok(e)) => (e, true),
            Some(Err(e)) => {
                tracing::warn!(error = %e, "pooling allocator unavailable; instances are allocated on demand");
                (engine_on_demand()?, false)
            }
            None => (engine_on_demand()?, false),
        };
        start_ticker(&engine);
        let mut linker = Linker::<CallState>::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut linker)
            .map_err(|e| LoadError::new(format!("linking WASI: {e}")))?;
        // The latest contract's imports serve every 1.x component (a 1.0
        // import resolves to its 1.1 version by semver), but for 1.0's
        // `cluster-secrets`, whose record changed, and the type-only
        // `types` it uses.
        v1_1::ClusterDriver::add_to_linker::<CallState, HasSelf<CallState>>(&mut linker, |s| s)
            .map_err(|e| LoadError::new(format!("linking the driver imports: {e}")))?;
        v1_0::openkeel::magnum_driver::types::add_to_linker::<CallState, HasSelf<CallState>>(
            &mut linker,
            |s| s,
        )
        .map_err(|e| LoadError::new(format!("linking the 1.0 driver imports: {e}")))?;
        v1_0::openkeel::magnum_driver::cluster_secrets::add_to_linker::<
            CallState,
            HasSelf<CallState>,
        >(&mut linker, |s| s)
        .map_err(|e| LoadError::new(format!("linking the 1.0 driver imports: {e}")))?;
        let mut h = std::collections::hash_map::DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut h);
        let compat = format!("{:016x}", h.finish());
        Ok(Sandbox {
            engine,
            linker,
            pooling,
            cache_dir,
            compat,
        })
    }

    /// Validates `bytes` as a WebAssembly component, then compiles it, or
    /// loads what an earlier start compiled (keyed by the component's
    /// sha256 and the engine's compatibility hash). Blocking: call it off
    /// the request path.
    pub(crate) fn compile(
        &self,
        name: &str,
        bytes: &[u8],
        sha256: &str,
    ) -> Result<Component, LoadError> {
        validate(name, bytes)?;
        let cached = self
            .cache_dir
            .as_ref()
            .map(|d| d.join(format!("{sha256}-{}.cwasm", self.compat)));
        if let Some(path) = &cached
            && path.is_file()
        {
            // SAFETY: the file is one this host wrote into its own cache
            // directory (below), named by the sha256 of the component it
            // was compiled from and the engine's compatibility hash;
            // deserialize_file checks the engine's version and settings
            // again.
            match unsafe { Component::deserialize_file(&self.engine, path) } {
                Ok(c) => return Ok(c),
                Err(e) => {
                    tracing::warn!(driver = name, error = %e, path = %path.display(),
                        "cannot load the precompiled driver; compiling it again");
                }
            }
        }
        let engine = &self.engine;
        let compiled =
            std::panic::catch_unwind(AssertUnwindSafe(|| engine.precompile_component(bytes)))
                .map_err(|_| {
                    LoadError::new(format!(
                        "driver {name}: the compiler panicked on the component"
                    ))
                })?
                .map_err(|e| {
                    LoadError::new(format!(
                        "driver {name}: cannot compile the component: {}",
                        one_line(&e)
                    ))
                })?;
        if let Some(path) = &cached {
            match write_cache(path, &compiled) {
                // Loaded from the file just written, as later starts load
                // it: the code is then the file's pages, shared with every
                // other process that loads it, not a private copy.
                // SAFETY: as for the cached file above; this one was
                // written just now from `compiled`.
                Ok(()) => match unsafe { Component::deserialize_file(&self.engine, path) } {
                    Ok(c) => return Ok(c),
                    Err(e) => tracing::warn!(driver = name, error = %e, path = %path.display(),
                        "cannot load the precompiled driver just written; loading it from memory"),
                },
                Err(e) => tracing::warn!(driver = name, error = %e, path = %path.display(),
                    "cannot write the precompiled driver cache"),
            }
        }
        // SAFETY: `compiled` was produced just above by this engine.
        unsafe { Component::deserialize(&self.engine, &compiled) }.map_err(|e| {
            LoadError::new(format!(
                "driver {name}: cannot load the compiled component: {}",
                one_line(&e)
            ))
        })
    }
}

fn engine_on_demand() -> Result<Engine, LoadError> {
    Engine::new(&config(false)).map_err(|e| LoadError::new(format!("cannot start wasmtime: {e}")))
}

/// Advances the engine's epoch every tick until the engine is dropped. A
/// thread of its own: it must tick even when every executor thread is busy.
fn start_ticker(engine: &Engine) {
    let weak = engine.weak();
    let spawned = thread::Builder::new()
        .name("driver-epoch".to_string())
        .spawn(move || {
            loop {
                thread::sleep(EPOCH_TICK);
                match weak.upgrade() {
                    Some(e) => e.increment_epoch(),
                    None => return,
                }
            }
        });
    if let Err(e) = spawned {
        // Without the ticker no deadline fires inside a guest; the outer
        // timeout still ends the call.
        tracing::error!(error = %e, "cannot start the driver epoch ticker");
    }
}

/// Refuses anything but a valid component, before the compiler sees it.
pub(crate) fn validate(name: &str, bytes: &[u8]) -> Result<(), LoadError> {
    use wasmtime::wasmparser::{Parser, Validator, WasmFeatures};
    if !Parser::is_component(bytes) {
        if Parser::is_core_wasm(bytes) {
            return Err(LoadError::new(format!(
                "driver {name}: the file is a core WebAssembly module, not a component (build for wasm32-wasip2)"
            )));
        }
        return Err(LoadError::new(format!(
            "driver {name}: the file is not a WebAssembly component"
        )));
    }
    let mut v = Validator::new_with_features(WasmFeatures::all());
    v.validate_all(bytes).map_err(|e| {
        LoadError::new(format!(
            "driver {name}: the component is not valid WebAssembly: {} (at byte {})",
            e.message(),
            e.offset()
        ))
    })?;
    Ok(())
}

fn write_cache(path: &Path, compiled: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    std::io::Write::write_all(&mut tmp, compiled)?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// The sha256 of a component, in hexadecimal.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// The first line of an error, without wasmtime's backtrace.
pub(crate) fn one_line(e: &wasmtime::Error) -> String {
    let s = format!("{e:#}");
    s.lines().next().unwrap_or_default().to_string()
}
