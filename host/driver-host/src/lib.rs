//! The driver host: loads drivers as sandboxed WebAssembly components through
//! the `openkeel:magnum-driver` WIT contract. The only crate that knows wasmtime.
