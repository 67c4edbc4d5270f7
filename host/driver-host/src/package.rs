//! A loaded driver package: its manifest, its compiled and pre-linked
//! component, its effective capabilities and limits, its breaker, and the
//! one function that runs a call in a fresh sandboxed instance.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use magnum_domain::MagnumError;
use magnum_domain::models::Cluster;
use semver::Version;
use wasmtime::component::{Component, ComponentExportIndex, Instance, InstancePre};
use wasmtime::{Store, Trap, UpdateDeadline};

use crate::access::Credentials;
use crate::bindings::v1_0::openkeel::magnum_driver::types as wt10;
use crate::bindings::v1_1::exports::openkeel::magnum_driver::{
    driver as wd, lifecycle as wl, status as ws,
};
use crate::bindings::v1_1::openkeel::magnum_driver::types as wt;
use crate::bindings::{v1_0, v1_1};
use crate::breaker::{Admission, Breaker, BreakerSettings, Health, Opened};
use crate::capabilities::{Capabilities, capability_of_interface, grants_interface};
use crate::contract::{self, Contract};
use crate::convert::{self, Budget, Refused};
use crate::error::{CallError, DriverFault, FaultKind, LoadError, intern_kind};
use crate::imports::{CallState, PackageCtx, Services};
use crate::lowering::StateRef;
use crate::manifest::Manifest;
use crate::sandbox::{Sandbox, one_line, sha256_hex};
use crate::settings::{DriverConfig, DriverSettings, Limits};
use crate::types::{StatusAnswer, Target, Update};

/// The WIT package the host implements.
pub const WIT_PACKAGE: &str = "openkeel:magnum-driver";

/// The versions of the contract this host implements, oldest first.
pub const SUPPORTED_WIT: [Version; 2] = [Version::new(1, 0, 0), Version::new(1, 1, 0)];

/// The range of contract versions this host accepts, for messages.
pub fn supported_wit_range() -> String {
    let newest = &SUPPORTED_WIT[SUPPORTED_WIT.len() - 1];
    let implemented: Vec<String> = SUPPORTED_WIT.iter().map(Version::to_string).collect();
    format!(
        ">={}, <{}.0.0 (implements {})",
        SUPPORTED_WIT[0],
        newest.major + 1,
        implemented.join(" and ")
    )
}

/// Where a driver package comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// Compiled in the workspace and embedded in the binary.
    BuiltIn,
    /// Found in `[drivers]/drivers_path`, or named on the command line.
    Path(PathBuf),
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::BuiltIn => f.write_str("built-in"),
            Origin::Path(p) => write!(f, "{}", p.display()),
        }
    }
}

/// A driver package before it is loaded: its manifest and component.
#[derive(Clone)]
pub struct PackageSource {
    pub manifest: String,
    pub component: Arc<[u8]>,
    pub origin: Origin,
}

/// One entry point as the manifest (and the component) declare it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct EntryPointInfo {
    pub name: String,
    pub beta: bool,
    pub provides: Vec<Target>,
    pub description: String,
}

impl EntryPointInfo {
    /// The entry points `manifest` declares.
    pub(crate) fn declared(manifest: &Manifest) -> Vec<EntryPointInfo> {
        manifest
            .entry_points
            .iter()
            .map(|e| EntryPointInfo {
                name: e.name.clone(),
                beta: e.beta,
                provides: e.provides.iter().map(Target::from).collect(),
                description: e.description.clone(),
            })
            .collect()
    }
}

/// The imports and exports of a component, by name.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct World {
    pub imports: Vec<String>,
    pub exports: Vec<String>,
}

/// What loading a package found before it was refused or accepted.
pub(crate) struct Examined {
    pub(crate) manifest: Manifest,
    pub(crate) sha256: String,
    pub(crate) requested: Capabilities,
    pub(crate) granted: Capabilities,
    pub(crate) world: Option<World>,
    pub(crate) wit_version: Option<Version>,
    pub(crate) limits: Option<Limits>,
}

pub(crate) struct Package {
    pub(crate) ctx: Arc<PackageCtx>,
    pub(crate) manifest: Manifest,
    pub(crate) origin: Origin,
    pub(crate) sha256: String,
    pub(crate) wit_version: Version,
    /// The contract version its calls follow.
    pub(crate) contract: Contract,
    pub(crate) world: World,
    pub(crate) entry_points: Vec<EntryPointInfo>,
    pre: InstancePre<CallState>,
    exports: Exports,
    engine: wasmtime::Engine,
    breaker: Breaker,
}

include!(concat!(env!("OUT_DIR"), "/contract_request.rs"));

impl Request<'_> {
    /// Whether the driver may use its imports during the call: not during
    /// `derive-status`, which the contract declares pure.
    pub(crate) fn pure(&self) -> bool {
        matches!(self, Request::DeriveStatus(..))
    }
}

/// What a call answered, and how the breaker admitted it (settled once the
/// answer is taken).
pub(crate) struct Answer {
    response: Response,
    admission: Admission,
}

/// What the component answered, in the latest WIT form (a 1.0 answer is
/// mapped onto it). Built once per call and consumed at once, so its size
/// does not matter.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Response {
    Describe(Vec<wd::EntryPoint>),
    Unit(Result<(), wt::DriverError>),
    Update(Result<wt::Update, wt::DriverError>),
    Status(Result<ws::StatusAnswer, wt::DriverError>),
    Watches(Vec<wt::Selector>),
}

/// A response as [`FromResponse::read`] reads it: the value or its
/// refusal, the driver's error, or `None` for a response of another
/// function's kind.
type Read<T> = Option<Result<Result<T, Refused>, wt::DriverError>>;

/// What a call answers, read from the component's response with the call's
/// output budget ([`Package::take`]).
pub(crate) trait FromResponse: Sized {
    fn read(response: Response, b: &mut Budget) -> Read<Self>;
}

/// The checks, which answer nothing.
impl FromResponse for () {
    fn read(response: Response, _: &mut Budget) -> Read<Self> {
        match response {
            Response::Unit(answer) => Some(answer.map(Ok)),
            _ => None,
        }
    }
}

impl FromResponse for Update {
    fn read(response: Response, b: &mut Budget) -> Read<Self> {
        match response {
            Response::Update(answer) => Some(answer.map(|u| convert::update_from(u, b))),
            _ => None,
        }
    }
}

impl FromResponse for StatusAnswer {
    fn read(response: Response, b: &mut Budget) -> Read<Self> {
        match response {
            Response::Status(answer) => Some(answer.map(|s| convert::status_answer_from(s, b))),
            _ => None,
        }
    }
}

/// The selectors of `watches`.
impl FromResponse for Vec<crate::access::Selector> {
    fn read(response: Response, b: &mut Budget) -> Read<Self> {
        let Response::Watches(l) = response else {
            return None;
        };
        Some(Ok(l
            .into_iter()
            .map(|s| convert::selector_from(s, b))
            .collect()))
    }
}

/// The export indices of the contract's functions in one component, found
/// once at load from the table of its version: a call looks up and
/// type-checks only the function it makes.
pub(crate) struct Exports {
    indices: BTreeMap<&'static str, ComponentExportIndex>,
}

impl Exports {
    fn find(
        name: &str,
        c: &Component,
        world: &World,
        contract: Contract,
    ) -> Result<Exports, LoadError> {
        let mut interfaces = BTreeMap::new();
        for wanted in contract::EXPORTED_INTERFACES {
            let export = world
                .exports
                .iter()
                .find(|e| contract_item(e).is_some_and(|(i, _)| i == wanted))
                .ok_or_else(|| {
                    LoadError::new(format!(
                        "driver {name}: does not export {WIT_PACKAGE}/{wanted}"
                    ))
                })?;
            let idx = c
                .get_export_index(None, export)
                .ok_or_else(|| LoadError::new(format!("driver {name}: no export {export}")))?;
            interfaces.insert(wanted, idx);
        }
        let mut indices = BTreeMap::new();
        for f in contract::functions(contract) {
            let idx = c
                .get_export_index(Some(&interfaces[f.interface]), f.name)
                .ok_or_else(|| {
                    LoadError::new(format!(
                        "driver {name}: does not export the function {}",
                        f.name
                    ))
                })?;
            indices.insert(f.name, idx);
        }
        Ok(Exports { indices })
    }

    fn index(&self, function: &str) -> wasmtime::Result<&ComponentExportIndex> {
        self.indices.get(function).ok_or_else(|| {
            wasmtime::Error::msg(format!(
                "the component's contract has no function {function}"
            ))
        })
    }
}

type Ctx<'a> = &'a wt::CallContext;
type Ctx10<'a> = &'a wt10::CallContext;
type State<'a> = &'a StateRef<'a>;

/// A 1.1 call context as 1.0 has it (without `now`).
fn ctx10(c: &wt::CallContext) -> wt10::CallContext {
    wt10::CallContext {
        entry_point: c.entry_point.clone(),
        caller: wt10::Caller {
            user_id: c.caller.user_id.clone(),
            project_id: c.caller.project_id.clone(),
            admin: c.caller.admin,
        },
        request_id: c.request_id.clone(),
    }
}

/// A 1.0 driver error in the latest form.
fn error10(e: wt10::DriverError) -> wt::DriverError {
    match e {
        wt10::DriverError::Client(m) => wt::DriverError::Client(wt::MagnumError {
            status: m.status,
            kind: m.kind,
            message: m.message,
        }),
        wt10::DriverError::Failed(s) => wt::DriverError::Failed(s),
    }
}

/// Calls the function `req` names in `instance`, with the argument and
/// answer types of the component's contract version.
async fn dispatch(
    x: &Exports,
    contract: Contract,
    instance: &Instance,
    store: &mut Store<CallState>,
    req: Request<'_>,
) -> wasmtime::Result<Response> {
    macro_rules! call {
        ($name:expr, ($($p:ty),*), $r:ty, ($($a:expr),*)) => {{
            let idx = x.index($name)?;
            let f = instance.get_typed_func::<($($p,)*), ($r,)>(&mut *store, idx)?;
            // Boxed: the forty call sites of both contract versions would
            // otherwise each add their future's state to this one.
            Box::pin(f.call_async(&mut *store, ($($a,)*))).await?.0
        }};
    }
    // A function whose answer is `result<_, driver-error>` or
    // `result<update, driver-error>`: the context and the error are the
    // version's.
    macro_rules! versioned {
        ($wrap:ident, $name:expr, $ok:ty, ($c:expr $(, $p:ty, $a:expr)*)) => {{
            if contract == Contract::V1_0 {
                let c = ctx10(&$c);
                Response::$wrap(call!(
                    $name,
                    (Ctx10 $(, $p)*),
                    Result<$ok, wt10::DriverError>,
                    (&c $(, $a)*)
                ).map_err(error10))
            } else {
                Response::$wrap(call!(
                    $name,
                    (Ctx $(, $p)*),
                    Result<$ok, wt::DriverError>,
                    (&$c $(, $a)*)
                ))
            }
        }};
    }
    let name = req.function();
    Ok(match req {
        Request::Describe => Response::Describe(call!(name, (), Vec<wd::EntryPoint>, ())),
        Request::ValidateMasterSize(e, n) | Request::ValidateMasterResize(e, n) => {
            if contract == Contract::V1_0 {
                Response::Unit(
                    call!(name, (&str, i32), Result<(), wt10::DriverError>, (&e, n))
                        .map_err(error10),
                )
            } else {
                Response::Unit(call!(name, (&str, i32), Result<(), wt::DriverError>, (&e, n)))
            }
        }
        Request::ValidateCreate(c, s) | Request::CanRotateCa(c, s) => {
            versioned!(Unit, name, (), (c, State, &s))
        }
        Request::ValidateUpgrade(c, s, t) => {
            versioned!(Unit, name, (), (c, State, &s, &wt::ClusterTemplate, &t))
        }
        Request::ValidateNodegroup(c, s, n) => {
            // New in 1.1: a 1.0 driver has no checks of its own.
            if contract == Contract::V1_0 {
                Response::Unit(Ok(()))
            } else {
                versioned!(Unit, name, (), (c, State, &s, &wt::Nodegroup, &n))
            }
        }
        Request::CreateCluster(c, s, t) => {
            versioned!(Update, name, wt::Update, (c, State, &s, u32, t))
        }
        Request::UpdateCluster(c, s)
        | Request::DeleteCluster(c, s)
        | Request::RotateCa(c, s)
        | Request::RotateCredential(c, s) => {
            versioned!(Update, name, wt::Update, (c, State, &s))
        }
        Request::ResizeCluster(c, s, r) => {
            versioned!(Update, name, wt::Update, (c, State, &s, &wl::Resize, &r))
        }
        Request::UpgradeCluster(c, s, u) => {
            versioned!(Update, name, wt::Update, (c, State, &s, &wl::Upgrade, &u))
        }
        Request::CreateNodegroup(c, s, n)
        | Request::UpdateNodegroup(c, s, n)
        | Request::DeleteNodegroup(c, s, n) => {
            versioned!(Update, name, wt::Update, (c, State, &s, &wt::Nodegroup, &n))
        }
        Request::Watches(c, s) => {
            if contract == Contract::V1_0 {
                let c = ctx10(&c);
                Response::Watches(call!(name, (Ctx10, State), Vec<wt::Selector>, (&c, &s)))
            } else {
                Response::Watches(call!(name, (Ctx, State), Vec<wt::Selector>, (&c, &s)))
            }
        }
        Request::DeriveStatus(c, s, snapshot) => {
            if contract == Contract::V1_0 {
                // 1.0 takes the objects alone.
                let c = ctx10(&c);
                let objects: Vec<wt::K8sObject> =
                    snapshot.into_iter().flat_map(|o| o.objects).collect();
                status10(call!(
                    name,
                    (Ctx10, State, &[wt::K8sObject]),
                    Result<wt::Update, wt10::DriverError>,
                    (&c, &s, &objects)
                ))
            } else {
                Response::Status(call!(
                    name,
                    (Ctx, State, &[ws::Observation]),
                    Result<ws::StatusAnswer, wt::DriverError>,
                    (&c, &s, &snapshot)
                ))
            }
        }
        Request::PollStatus(c, s) => {
            if contract == Contract::V1_0 {
                let c = ctx10(&c);
                status10(call!(
                    name,
                    (Ctx10, State),
                    Result<wt::Update, wt10::DriverError>,
                    (&c, &s)
                ))
            } else {
                Response::Status(call!(
                    name,
                    (Ctx, State),
                    Result<ws::StatusAnswer, wt::DriverError>,
                    (&c, &s)
                ))
            }
        }
        Request::ApplyEffects(c, s, effects) => {
            // A 1.0 driver never asks for effects.
            if contract == Contract::V1_0 || effects.is_empty() {
                Response::Unit(Ok(()))
            } else {
                Response::Unit(call!(
                    name,
                    (Ctx, State, &[ws::Effect]),
                    Result<(), wt::DriverError>,
                    (&c, &s, &effects)
                ))
            }
        }
    })
}

/// A 1.0 status answer: an update and no effects.
fn status10(r: Result<wt::Update, wt10::DriverError>) -> Response {
    Response::Status(
        r.map(|update| ws::StatusAnswer {
            update,
            effects: Vec::new(),
        })
        .map_err(error10),
    )
}

/// The component's imports and exports.
pub(crate) fn world_of(engine: &wasmtime::Engine, c: &Component) -> World {
    let ty = c.component_type();
    let mut imports: Vec<String> = ty.imports(engine).map(|(n, _)| n.to_string()).collect();
    let mut exports: Vec<String> = ty.exports(engine).map(|(n, _)| n.to_string()).collect();
    imports.sort();
    exports.sort();
    World { imports, exports }
}

/// Splits `openkeel:magnum-driver/kube@1.0.0` into ("kube", 1.0.0).
fn contract_item(name: &str) -> Option<(&str, Option<Version>)> {
    let rest = name.strip_prefix(WIT_PACKAGE)?.strip_prefix('/')?;
    match rest.split_once('@') {
        Some((iface, v)) => Some((iface, Version::parse(v).ok())),
        None => Some((rest, None)),
    }
}

/// The contract version a component implements, from its `driver` export.
fn implemented_version(name: &str, world: &World) -> Result<Version, LoadError> {
    let found = world
        .exports
        .iter()
        .filter_map(|e| contract_item(e))
        .find(|(iface, _)| *iface == "driver");
    match found {
        Some((_, Some(v))) => Ok(v),
        Some((_, None)) => Err(LoadError::new(format!(
            "driver {name}: its component exports an unversioned {WIT_PACKAGE}/driver; this host supports {}",
            supported_wit_range()
        ))),
        None => Err(LoadError::new(format!(
            "driver {name}: its component exports no {WIT_PACKAGE}/driver interface (exports: {})",
            if world.exports.is_empty() {
                "none".to_string()
            } else {
                world.exports.join(", ")
            }
        ))),
    }
}

/// Refuses a contract version outside what this host implements.
fn check_version(name: &str, v: &Version) -> Result<(), LoadError> {
    let newest = &SUPPORTED_WIT[SUPPORTED_WIT.len() - 1];
    if !SUPPORTED_WIT.iter().any(|s| s.major == v.major) || !v.pre.is_empty() {
        return Err(LoadError::new(format!(
            "driver {name} is built for {WIT_PACKAGE}@{v}; this host supports {}",
            supported_wit_range()
        )));
    }
    if v > newest {
        return Err(LoadError::new(format!(
            "driver {name} is built for {WIT_PACKAGE}@{v}, newer than this host's {newest}; this host supports {}",
            supported_wit_range()
        )));
    }
    Ok(())
}

/// Refuses an import the driver was not granted, or one the host does not
/// provide.
fn check_imports(name: &str, world: &World, caps: &Capabilities) -> Result<(), LoadError> {
    for import in &world.imports {
        if import.starts_with("wasi:") {
            // Linked deny-all; the linker refuses a WASI interface this
            // host does not provide.
            continue;
        }
        let Some((iface, version)) = contract_item(import) else {
            return Err(LoadError::new(format!(
                "driver {name} imports {import}, which this host does not provide"
            )));
        };
        if let Some(v) = &version {
            check_version(name, v)?;
        }
        if let Some(cap) = capability_of_interface(iface)
            && !grants_interface(caps, cap)
        {
            return Err(LoadError::new(format!(
                "driver {name} imports {import} but is not granted {cap} (request it in driver.toml [capabilities] and grant it in [driver:{name}])"
            )));
        }
    }
    Ok(())
}

/// The first difference between the manifest's entry points and what the
/// component describes.
fn compare_entry_points(
    name: &str,
    manifest: &[EntryPointInfo],
    described: &[EntryPointInfo],
) -> Result<(), LoadError> {
    let by_name = |l: &[EntryPointInfo]| -> BTreeMap<String, EntryPointInfo> {
        l.iter()
            .map(|e| {
                let mut e = e.clone();
                e.provides.sort();
                (e.name.clone(), e)
            })
            .collect()
    };
    let (m, d) = (by_name(manifest), by_name(described));
    let m_names: Vec<&String> = m.keys().collect();
    let d_names: Vec<&String> = d.keys().collect();
    if m_names != d_names {
        return Err(LoadError::new(format!(
            "driver {name}: the manifest's entry points ({}) differ from the component's ({})",
            m.keys().cloned().collect::<Vec<_>>().join(", "),
            d.keys().cloned().collect::<Vec<_>>().join(", ")
        )));
    }
    for (ep, me) in &m {
        let de = &d[ep];
        if me.beta != de.beta {
            return Err(LoadError::new(format!(
                "driver {name}: entry point {ep} is {} in the manifest but {} in the component",
                if me.beta { "beta" } else { "not beta" },
                if de.beta { "beta" } else { "not beta" }
            )));
        }
        if me.provides != de.provides {
            return Err(LoadError::new(format!(
                "driver {name}: entry point {ep} provides {} in the manifest but {} in the component",
                me.provides
                    .iter()
                    .map(Target::to_string)
                    .collect::<Vec<_>>()
                    .join(", "),
                de.provides
                    .iter()
                    .map(Target::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    }
    Ok(())
}

/// The checks before compiling a package: the component is the one the
/// manifest names, its contract range is one this host serves, every
/// capability it asks for is granted, and its limits resolve (capped by the
/// operator's maxima).
fn admit(
    manifest: &Manifest,
    sha256: &str,
    requested: &Capabilities,
    granted: &Capabilities,
    config: &DriverConfig,
    settings: &DriverSettings,
) -> Result<Limits, LoadError> {
    let name = &manifest.driver.name;
    if let Some(want) = &manifest.driver.sha256
        && !want.eq_ignore_ascii_case(sha256)
    {
        return Err(LoadError::new(format!(
            "driver {name}: the component's sha256 is {sha256}, the manifest expects {want}"
        )));
    }
    if !SUPPORTED_WIT.iter().any(|v| manifest.driver.wit.matches(v)) {
        return Err(LoadError::new(format!(
            "driver {name} requires {WIT_PACKAGE} {}; this host supports {}",
            manifest.driver.wit,
            supported_wit_range()
        )));
    }
    if let Some(missing) = requested.first_not_covered_by(granted) {
        return Err(LoadError::new(format!(
            "driver {name} asks for {missing}, which is not granted (grant it in [driver:{name}] of magnum.conf)"
        )));
    }
    match Limits::resolve(&manifest.limits, &config.limits, &settings.maxima) {
        Ok((l, capped)) => {
            for c in capped {
                tracing::warn!(driver = %name, "driver limits: {c}");
            }
            Ok(l)
        }
        Err(e) => Err(LoadError::new(format!("driver {name}: {e}"))),
    }
}

/// Links a compiled component whose imports its capabilities allow, and
/// type-checks its exports against the generated bindings of its contract
/// version.
fn link(
    sandbox: &Sandbox,
    name: &str,
    component: &Component,
    world: &World,
    caps: &Capabilities,
    wit_version: &Version,
) -> Result<(Contract, InstancePre<CallState>, Exports), LoadError> {
    check_imports(name, world, caps)?;
    let pre = sandbox.linker.instantiate_pre(component).map_err(|e| {
        LoadError::new(format!("driver {name}: cannot be linked: {}", one_line(&e)))
    })?;
    let Some(contract) = Contract::of(wit_version) else {
        return Err(LoadError::new(format!(
            "driver {name} is built for {WIT_PACKAGE}@{wit_version}; this host supports {}",
            supported_wit_range()
        )));
    };
    // The generated bindings of its version type-check every export of
    // the contract.
    let checked = match contract {
        Contract::V1_0 => v1_0::ClusterDriverPre::new(pre).map(|p| p.instance_pre().clone()),
        Contract::V1_1 => v1_1::ClusterDriverPre::new(pre).map(|p| p.instance_pre().clone()),
    };
    let pre = checked.map_err(|e| {
        LoadError::new(format!(
            "driver {name}: does not export the functions of {WIT_PACKAGE}@{}: {}",
            contract.as_str(),
            one_line(&e)
        ))
    })?;
    let exports = Exports::find(name, component, world, contract)?;
    Ok((contract, pre, exports))
}

/// Examines and loads a package: manifest, integrity, contract version,
/// grants, limits, compilation, imports, linking, and the component's own
/// description. On refusal, what was found so far comes back with the
/// reason (for `driver inspect`).
pub(crate) async fn load(
    sandbox: &Arc<Sandbox>,
    services: &Arc<Services>,
    settings: &DriverSettings,
    breaker: &BreakerSettings,
    src: PackageSource,
) -> Result<Package, (LoadError, Option<Box<Examined>>)> {
    let manifest = Manifest::parse(&src.manifest).map_err(|e| (e, None))?;
    let name = manifest.driver.name.clone();
    let sha256 = sha256_hex(&src.component);
    let config = settings.driver(&name);
    let builtin = src.origin == Origin::BuiltIn;
    let requested = manifest.capabilities.clone();
    let granted = if config.grant_requested.unwrap_or(builtin) {
        requested.clone()
    } else {
        config.grants.clone()
    };
    let mut ex = Box::new(Examined {
        manifest: manifest.clone(),
        sha256: sha256.clone(),
        requested: requested.clone(),
        granted: granted.clone(),
        world: None,
        wit_version: None,
        limits: None,
    });
    macro_rules! refuse {
        ($e:expr) => {
            return Err(($e, Some(ex)))
        };
    }
    let limits = match admit(&manifest, &sha256, &requested, &granted, &config, settings) {
        Ok(l) => l,
        Err(e) => refuse!(e),
    };
    ex.limits = Some(limits.clone());

    let sb = sandbox.clone();
    let bytes = src.component.clone();
    let (n, s) = (name.clone(), sha256.clone());
    let component = match tokio::task::spawn_blocking(move || sb.compile(&n, &bytes, &s)).await {
        Ok(Ok(c)) => c,
        Ok(Err(e)) => refuse!(e),
        Err(e) => refuse!(LoadError::new(format!(
            "driver {name}: compilation did not finish: {e}"
        ))),
    };
    let world = world_of(&sandbox.engine, &component);
    ex.world = Some(world.clone());
    let wit_version = match implemented_version(&name, &world) {
        Ok(v) => v,
        Err(e) => refuse!(e),
    };
    ex.wit_version = Some(wit_version.clone());
    if let Err(e) = check_version(&name, &wit_version) {
        refuse!(e);
    }
    if !manifest.driver.wit.matches(&wit_version) {
        refuse!(LoadError::new(format!(
            "driver {name}: the manifest requires {WIT_PACKAGE} {} but the component is built for {wit_version}",
            manifest.driver.wit
        )));
    }
    // The effective capabilities are what was requested, all of it granted.
    let caps = requested;
    let (contract, pre, exports) =
        match link(sandbox, &name, &component, &world, &caps, &wit_version) {
            Ok(linked) => linked,
            Err(e) => refuse!(e),
        };
    let mut options = manifest.options.clone();
    options.extend(config.options.clone());
    let ctx = Arc::new(PackageCtx {
        name: name.clone(),
        caps,
        options,
        files_dir: config.files_dir.clone(),
        limits,
        services: services.clone(),
        denials: Default::default(),
        watch_refusal: Default::default(),
    });
    let entry_points = EntryPointInfo::declared(&manifest);
    let pkg = Package {
        ctx,
        manifest,
        origin: src.origin,
        sha256,
        wit_version,
        contract,
        world,
        entry_points,
        pre,
        exports,
        engine: sandbox.engine.clone(),
        breaker: Breaker::new(breaker.clone()),
    };
    let described = match pkg.describe().await {
        Ok(d) => d,
        Err(e) => refuse!(LoadError::new(format!(
            "driver {name}: describe failed: {e}"
        ))),
    };
    if let Err(e) = compare_entry_points(&name, &pkg.entry_points, &described) {
        refuse!(e);
    }
    Ok(pkg)
}

impl Package {
    pub(crate) fn name(&self) -> &str {
        &self.ctx.name
    }

    pub(crate) fn health(&self) -> Health {
        self.breaker.health(self.ctx.services.clock.monotonic())
    }

    fn fault(&self, function: &'static str, kind: FaultKind, message: String) -> DriverFault {
        DriverFault {
            driver: self.ctx.name.clone(),
            function,
            kind,
            message,
        }
    }

    /// Runs one request in a fresh instance: memory capped, an epoch
    /// deadline inside the guest and a timeout around everything (host
    /// calls included); what the guest printed goes to the log.
    ///
    /// The call's future is boxed: every driver call awaits it, and its
    /// state (the instance's set-up, the dispatch of both contract
    /// versions) would otherwise be carried by each caller's future.
    pub(crate) async fn invoke(
        &self,
        cluster: Option<&Cluster>,
        credentials: Credentials,
        request_id: String,
        req: Request<'_>,
    ) -> Result<Answer, DriverFault> {
        Box::pin(async move {
            let function = req.function();
            let admission = self.admit(function)?;
            let state =
                CallState::new(self.ctx.clone(), cluster, credentials, request_id).pure(req.pure());
            let mut store = Store::new(&self.engine, state);
            store.limiter(|s| &mut s.limits);
            let deadline = self.ctx.limits.call_timeout;
            let started = Instant::now();
            store.set_epoch_deadline(1);
            store.epoch_deadline_callback(move |_| {
                Ok(if started.elapsed() >= deadline {
                    UpdateDeadline::Interrupt
                } else {
                    UpdateDeadline::Yield(1)
                })
            });
            let (pre, exports, contract) = (&self.pre, &self.exports, self.contract);
            let outcome = tokio::time::timeout(deadline, async {
                let instance = pre
                    .instantiate_async(&mut store)
                    .await
                    .map_err(|e| (true, e))?;
                dispatch(exports, contract, &instance, &mut store, req)
                    .await
                    .map_err(|e| (false, e))
            })
            .await;
            let elapsed = started.elapsed();
            let stderr = store.data().stderr_summary();
            store.data().flush_output(function);
            let result = match outcome {
                Ok(Ok(r)) => Ok(r),
                Err(_) => Err(self.fault(
                    function,
                    FaultKind::Timeout,
                    format!(
                        "no answer within its deadline of {} s",
                        deadline.as_secs_f64()
                    ),
                )),
                Ok(Err((instantiating, e))) => {
                    Err(self.classify(function, instantiating, &e, stderr))
                }
            };
            if let Some(o) = self.ctx.services.observer.get() {
                o.call(
                    &self.ctx.name,
                    function,
                    store.data().request_id(),
                    elapsed,
                    result.as_ref().err().map(|f| f.kind),
                );
            }
            drop(store);
            match result {
                Ok(response) => Ok(Answer {
                    response,
                    admission,
                }),
                Err(f) => {
                    self.record_fault(&f, admission);
                    Err(f)
                }
            }
        })
        .await
    }

    /// Lets a call of `function` through the breaker, or refuses it while
    /// the breaker is open.
    fn admit(&self, function: &'static str) -> Result<Admission, DriverFault> {
        let left = match self.breaker.admit(self.ctx.services.clock.monotonic()) {
            Ok(a) => return Ok(a),
            Err(left) => left,
        };
        // Not logged: the opening was, once.
        if let Some(o) = self.ctx.services.observer.get() {
            o.fault(&self.ctx.name, function, FaultKind::BreakerOpen);
        }
        let h = self.health();
        Err(self.fault(
            function,
            FaultKind::BreakerOpen,
            format!(
                "the driver is shut off for {} s more after repeated faults (last: {})",
                left.as_secs().max(1),
                h.last_fault.unwrap_or_default()
            ),
        ))
    }

    /// Settles a call the component answered once its answer is taken (or
    /// not): a success closes a probing breaker, an answer that could not
    /// be taken is a fault.
    fn settle<T>(&self, admission: Admission, r: Result<T, CallError>) -> Result<T, CallError> {
        match &r {
            Err(CallError::Fault(f)) => self.record_fault(f, admission),
            _ => self.breaker.success(admission),
        }
        r
    }

    /// Logs a fault once and counts it against the breaker, which logs
    /// when it opens.
    pub(crate) fn record_fault(&self, f: &DriverFault, admission: Admission) {
        tracing::warn!(driver = %f.driver, function = f.function, fault = f.kind.as_str(), "driver fault: {}", f.message);
        if let Some(o) = self.ctx.services.observer.get() {
            o.fault(&f.driver, f.function, f.kind);
        }
        let now = self.ctx.services.clock.monotonic();
        if let Opened::For(d) = self.breaker.fault(now, admission, &f.message) {
            let h = self.breaker.health(now);
            tracing::error!(driver = %f.driver, open_for_seconds = d.as_secs(),
                opened_in_a_row = h.opened_in_a_row,
                "driver shut off for {} s after repeated faults; one call will probe it then (last: {})",
                d.as_secs(), f);
        }
    }

    fn classify(
        &self,
        function: &'static str,
        instantiating: bool,
        e: &wasmtime::Error,
        stderr: Option<String>,
    ) -> DriverFault {
        if let Some(trap) = e.downcast_ref::<Trap>() {
            if *trap == Trap::Interrupt {
                return self.fault(
                    function,
                    FaultKind::Timeout,
                    format!(
                        "stopped at its deadline of {} s",
                        self.ctx.limits.call_timeout.as_secs_f64()
                    ),
                );
            }
            let mut msg = format!("trapped: {trap}");
            if let Some(s) = stderr {
                msg.push_str(&format!(" ({s})"));
            }
            return self.fault(function, FaultKind::Trap, msg);
        }
        let kind = if instantiating {
            FaultKind::Instantiate
        } else {
            FaultKind::Trap
        };
        let mut msg = one_line(e);
        if let Some(s) = stderr {
            msg.push_str(&format!(" ({s})"));
        }
        self.fault(function, kind, msg)
    }

    /// A fault for an answer that could not be taken ([`Package::settle`]
    /// counts it).
    fn refused(&self, function: &'static str, r: Refused) -> DriverFault {
        match r {
            Refused::Oversized { limit } => self.fault(
                function,
                FaultKind::Oversized,
                format!("answered more than its output limit of {limit} bytes"),
            ),
            Refused::Malformed(m) => self.fault(
                function,
                FaultKind::Malformed,
                format!("malformed answer: {m}"),
            ),
        }
    }

    fn driver_error(
        &self,
        function: &'static str,
        e: wt::DriverError,
        b: &mut Budget,
    ) -> CallError {
        match e {
            wt::DriverError::Client(m) => {
                if !(400..=499).contains(&m.status) {
                    return CallError::Fault(self.refused(
                        function,
                        Refused::Malformed(format!("a client error with status {}", m.status)),
                    ));
                }
                let message = match b.pairs(vec![(m.kind.clone(), m.message)]) {
                    Ok(mut v) => v.pop().map(|(_, m)| m).unwrap_or_default(),
                    Err(r) => return CallError::Fault(self.refused(function, r)),
                };
                CallError::Client(MagnumError::new(m.status, intern_kind(&m.kind), message))
            }
            wt::DriverError::Failed(s) => match b.pairs(vec![(String::new(), s)]) {
                Ok(mut v) => CallError::Failed(v.pop().map(|(_, s)| s).unwrap_or_default()),
                Err(r) => CallError::Fault(self.refused(function, r)),
            },
            wt::DriverError::FailedAfter(f) => {
                let reason = match b.pairs(vec![(String::new(), f.reason)]) {
                    Ok(mut v) => v.pop().map(|(_, s)| s).unwrap_or_default(),
                    Err(r) => return CallError::Fault(self.refused(function, r)),
                };
                match convert::update_from(f.update, b) {
                    Ok(u) => CallError::FailedAfter {
                        reason,
                        update: Box::new(u),
                    },
                    Err(r) => CallError::Fault(self.refused(function, r)),
                }
            }
        }
    }

    /// Takes the answer of `function` as `T`, read with the output budget.
    pub(crate) fn take<T: FromResponse>(
        &self,
        function: &'static str,
        r: Result<Answer, DriverFault>,
    ) -> Result<T, CallError> {
        let a = r.map_err(CallError::Fault)?;
        let mut b = Budget::new(self.ctx.limits.max_output_bytes);
        let out = match T::read(a.response, &mut b) {
            Some(Ok(Ok(v))) => Ok(v),
            Some(Ok(Err(refused))) => Err(CallError::Fault(self.refused(function, refused))),
            Some(Err(e)) => Err(self.driver_error(function, e, &mut b)),
            None => Err(self.unexpected(function)),
        };
        self.settle(a.admission, out)
    }

    /// The fault of an answer of another function's kind.
    fn unexpected(&self, function: &'static str) -> CallError {
        CallError::Fault(self.refused(function, Refused::Malformed("unexpected answer".into())))
    }

    /// A driver's answer the host refused after taking it (the conductor's
    /// gate): a fault of `function`, logged once and counted against the
    /// breaker.
    pub(crate) fn violation(&self, function: &'static str, message: String) -> DriverFault {
        let f = self.fault(function, FaultKind::Violation, message);
        self.record_fault(&f, Admission::Call);
        f
    }

    /// The component's own entry points.
    pub(crate) async fn describe(&self) -> Result<Vec<EntryPointInfo>, CallError> {
        let a = self
            .invoke(None, Credentials::admin(), String::new(), Request::Describe)
            .await
            .map_err(CallError::Fault)?;
        let out = self.describe_answer(a.response);
        self.settle(a.admission, out)
    }

    fn describe_answer(&self, r: Response) -> Result<Vec<EntryPointInfo>, CallError> {
        let mut b = Budget::new(self.ctx.limits.max_output_bytes);
        let Response::Describe(eps) = r else {
            return Err(self.unexpected("describe"));
        };
        let mut out = Vec::new();
        for e in eps {
            let provides = e
                .provides
                .into_iter()
                .map(|t| convert::target_from(t, &mut b))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|r| CallError::Fault(self.refused("describe", r)))?;
            let (name, description) = match b.pairs(vec![(e.name, e.description)]) {
                Ok(mut v) => v.pop().unwrap_or_default(),
                Err(r) => return Err(CallError::Fault(self.refused("describe", r))),
            };
            out.push(EntryPointInfo {
                name,
                beta: e.beta,
                provides,
                description,
            });
        }
        Ok(out)
    }
}
