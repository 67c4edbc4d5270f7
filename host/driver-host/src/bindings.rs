//! The generated bindings of each WIT version the host implements: one
//! module per version (only 1.0.0 so far). Host-side code converts between
//! these types and the crate's own at the edges (`convert`, `imports`).

/// `openkeel:magnum-driver@1.0.0`.
pub mod v1 {
    wasmtime::component::bindgen!({
        path: "../../wit/magnum-driver@1.0.0",
        world: "cluster-driver",
        imports: { default: async },
        exports: { default: async },
    });
}
