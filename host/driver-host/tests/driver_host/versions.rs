//! The versioning promise: a driver built against the frozen 1.0 contract
//! keeps loading on a host that implements a 1.1 which adds an optional
//! import and an optional export. The 1.1 here is a test fixture
//! (`tests/wit/magnum-driver@1.1.0`: the 1.0 files at 1.1.0 plus
//! `host-info` and `extensions`); the host under test is built on its
//! bindings, as the real one will be, and loads the fake driver's
//! component, which the SDK built against 1.0.0.

use std::path::Path;

use wasmtime::component::{Component, HasSelf, Linker, ResourceTable};
use wasmtime::{Engine, Store};
use wasmtime_wasi::{WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

mod v1_1 {
    wasmtime::component::bindgen!({
        path: "tests/wit/magnum-driver@1.1.0",
        world: "cluster-driver",
    });
}

use v1_1::openkeel::magnum_driver as w;

/// The 1.1 host's store: deny-all WASI and what the driver logged.
struct Host11 {
    wasi: WasiCtx,
    table: ResourceTable,
    logs: Vec<String>,
}

impl WasiView for Host11 {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

fn unavailable() -> w::types::HostError {
    w::types::HostError::Unavailable("not in this test host".into())
}

impl w::types::Host for Host11 {}

impl w::log::Host for Host11 {
    fn write(&mut self, _level: w::log::Level, message: String, _fields: Vec<(String, String)>) {
        self.logs.push(message);
    }
    fn max_level(&mut self) -> w::log::Level {
        w::log::Level::Trace
    }
}

impl w::config::Host for Host11 {
    fn get(&mut self, _key: String) -> Option<String> {
        None
    }
    fn all(&mut self) -> Vec<(String, String)> {
        Vec::new()
    }
    fn read_file(&mut self, _path: String) -> Result<String, w::types::HostError> {
        Err(unavailable())
    }
}

impl w::state::Host for Host11 {
    fn get(&mut self, _key: String) -> Option<String> {
        None
    }
    fn set(&mut self, _key: String, _value: String) -> Result<(), w::types::HostError> {
        Ok(())
    }
    fn remove(&mut self, _key: String) {}
    fn clear(&mut self) {}
}

impl w::kube::Host for Host11 {
    fn apply(
        &mut self,
        _obj: w::types::K8sObject,
    ) -> Result<w::types::K8sObject, w::types::HostError> {
        Err(unavailable())
    }
    fn get(
        &mut self,
        _r: w::types::ObjectRef,
    ) -> Result<Option<w::types::K8sObject>, w::types::HostError> {
        Err(unavailable())
    }
    fn list_by_label(
        &mut self,
        _sel: w::types::Selector,
    ) -> Result<Vec<w::types::K8sObject>, w::types::HostError> {
        Err(unavailable())
    }
    fn delete(&mut self, _r: w::types::ObjectRef) -> Result<bool, w::types::HostError> {
        Err(unavailable())
    }
}

type R<T> = Result<T, w::types::HostError>;

impl w::openstack::Host for Host11 {
    fn resolve_flavor_name(&mut self, _r: String) -> R<String> {
        Err(unavailable())
    }
    fn resolve_image(&mut self, _r: String) -> R<w::openstack::Image> {
        Err(unavailable())
    }
    fn resolve_network_id(&mut self, _r: String) -> R<String> {
        Err(unavailable())
    }
    fn resolve_subnet_id(&mut self, _r: String) -> R<String> {
        Err(unavailable())
    }
    fn ensure_server_group(&mut self, _name: String, _policy: String) -> R<String> {
        Err(unavailable())
    }
    fn delete_server_group(&mut self, _name: String) -> R<()> {
        Err(unavailable())
    }
    fn create_application_credential(
        &mut self,
        _name: String,
        _description: String,
    ) -> R<w::openstack::ApplicationCredential> {
        Err(unavailable())
    }
    fn delete_application_credential(&mut self, _user: String, _id: String) -> R<()> {
        Err(unavailable())
    }
    fn load_balancers(&mut self, _project: String) -> R<Option<Vec<w::openstack::LoadBalancer>>> {
        Err(unavailable())
    }
    fn delete_load_balancer(&mut self, _lb: w::openstack::LoadBalancer) -> R<()> {
        Err(unavailable())
    }
    fn volume_types(&mut self) -> R<Option<Vec<w::openstack::VolumeType>>> {
        Err(unavailable())
    }
}

impl w::cluster_secrets::Host for Host11 {
    fn cas(&mut self) -> R<w::cluster_secrets::ClusterCas> {
        Err(unavailable())
    }
}

impl w::host_info::Host for Host11 {
    fn contract_version(&mut self) -> String {
        "1.1.0".into()
    }
}

/// The 1.1 host: an engine and a linker with deny-all WASI and every
/// import of the 1.1 world, defined under their 1.1.0 names.
fn host11() -> (Engine, Linker<Host11>) {
    let engine = Engine::default();
    let mut linker = Linker::<Host11>::new(&engine);
    wasmtime_wasi::p2::add_to_linker_sync(&mut linker).expect("link WASI");
    v1_1::ClusterDriver::add_to_linker::<Host11, HasSelf<Host11>>(&mut linker, |s| s)
        .expect("link the 1.1 imports");
    (engine, linker)
}

fn store(engine: &Engine) -> Store<Host11> {
    Store::new(
        engine,
        Host11 {
            wasi: WasiCtxBuilder::new().build(),
            table: ResourceTable::new(),
            logs: Vec::new(),
        },
    )
}

/// The contract interfaces a component imports or exports, with versions.
fn contract_names(engine: &Engine, c: &Component, exports: bool) -> Vec<String> {
    let ty = c.component_type();
    let names: Vec<String> = if exports {
        ty.exports(engine).map(|(n, _)| n.to_owned()).collect()
    } else {
        ty.imports(engine).map(|(n, _)| n.to_owned()).collect()
    };
    names
        .into_iter()
        .filter(|n| n.starts_with("openkeel:magnum-driver/"))
        .collect()
}

#[test]
fn a_1_0_driver_loads_on_a_host_that_implements_1_1() {
    let (engine, linker) = host11();
    let fake = driver_host::builtin_sources()
        .into_iter()
        .next()
        .expect("the fake driver");
    let component = Component::new(&engine, &fake.component).expect("compile the fake driver");
    // The component really is a 1.0 one.
    let imports = contract_names(&engine, &component, false);
    assert!(
        imports.contains(&"openkeel:magnum-driver/log@1.0.0".to_string()),
        "{imports:?}"
    );
    assert!(imports.iter().all(|n| n.ends_with("@1.0.0")), "{imports:?}");
    let exports = contract_names(&engine, &component, true);
    assert!(
        exports.contains(&"openkeel:magnum-driver/driver@1.0.0".to_string()),
        "{exports:?}"
    );

    // Its 1.0 imports are satisfied by the 1.1 definitions (semver), and
    // the 1.1 bindings find its 1.0 exports.
    let mut store = store(&engine);
    let driver = v1_1::ClusterDriver::instantiate(&mut store, &component, &linker)
        .expect("the 1.1 host instantiates the 1.0 driver");
    let described = driver
        .openkeel_magnum_driver_driver()
        .call_describe(&mut store)
        .expect("describe");
    let names: Vec<&str> = described.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["fake"]);
    assert!(
        described[0]
            .provides
            .iter()
            .any(|t| t.os == "ubuntu" && t.coe == "kubernetes")
    );
    let ok = driver
        .openkeel_magnum_driver_driver()
        .call_validate_master_size(&mut store, "fake", 1)
        .expect("validate-master-size");
    assert!(ok.is_ok(), "{ok:?}");

    // The optional export is probed and absent: the host goes without.
    assert!(
        component
            .get_export_index(None, "openkeel:magnum-driver/extensions@1.1.0")
            .is_none()
    );
    assert!(
        component
            .get_export_index(None, "openkeel:magnum-driver/driver@1.1.0")
            .is_some(),
        "the 1.0 export answers a lookup by its 1.1 name"
    );
}

/// A component of another major version answers none of the 1.1
/// bindings' lookups: semver matching stops at the major version.
#[test]
fn a_2_0_driver_is_refused_by_the_1_1_host() {
    let (engine, linker) = host11();
    let bytes = std::fs::read(driver_host::test_components::V2).expect("the 2.0 component");
    let component = Component::new(&engine, &bytes).expect("compile");
    let exports = contract_names(&engine, &component, true);
    assert_eq!(exports, ["openkeel:magnum-driver/driver@2.0.0"]);
    assert!(
        component
            .get_export_index(None, "openkeel:magnum-driver/driver@1.1.0")
            .is_none()
    );
    let mut store = store(&engine);
    let err = v1_1::ClusterDriver::instantiate(&mut store, &component, &linker)
        .err()
        .expect("the 1.1 bindings must not take a 2.0 driver");
    assert!(format!("{err:#}").contains("driver@1.1.0"), "{err:#}");
}

/// The fixture is the frozen 1.0 contract at 1.1.0 plus its two new
/// interfaces: nothing of 1.0 changed or went.
#[test]
fn the_1_1_fixture_only_adds_to_1_0() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let v10 = root.join("../../wit/magnum-driver@1.0.0");
    let v11 = root.join("tests/wit/magnum-driver@1.1.0");
    let mut files: Vec<_> = std::fs::read_dir(&v10)
        .expect("1.0 WIT")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert!(files.len() >= 10, "{files:?}");
    for f in &files {
        let old = std::fs::read_to_string(v10.join(f)).expect("read");
        let new = std::fs::read_to_string(v11.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
        let old = old.replace(
            "package openkeel:magnum-driver@1.0.0;",
            "package openkeel:magnum-driver@1.1.0;",
        );
        if f == "world.wit" {
            // Only lines added: 1.0's lines are a subsequence of 1.1's.
            let mut added = new.lines();
            for line in old.lines() {
                assert!(
                    added.any(|l| l == line),
                    "{f}: 1.0's line {line:?} is missing or moved in 1.1"
                );
            }
        } else {
            assert_eq!(new, old, "{f} differs from 1.0");
        }
    }
}
