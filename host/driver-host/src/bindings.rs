//! The generated bindings of each WIT version the host implements, one
//! module per version. The host implements the imports of the latest
//! (`v1_1`); a 1.0 component's imports resolve to them by semver (wasmtime's
//! linker takes `…/log@1.1.0` for an import of `…/log@1.0.0` when the types
//! agree), except `cluster-secrets`, whose record changed: its 1.0 version
//! is linked on its own. Calls into a component use the latest types where
//! the records agree, and the 1.0 ones where they differ (`call-context`,
//! `driver-error`, the status functions' answers); see `package::dispatch`.

/// `openkeel:magnum-driver@1.0.0`, frozen.
pub mod v1_0 {
    wasmtime::component::bindgen!({
        path: "../../wit/magnum-driver@1.0.0",
        world: "cluster-driver",
        imports: { default: async },
        exports: { default: async },
    });
}

/// `openkeel:magnum-driver@1.1.0`.
pub mod v1_1 {
    wasmtime::component::bindgen!({
        path: "../../wit/magnum-driver@1.1.0",
        world: "cluster-driver",
        imports: { default: async },
        exports: { default: async },
    });
}
