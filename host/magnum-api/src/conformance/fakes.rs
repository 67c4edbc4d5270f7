//! The stand-ins for what Magnum's API tests mock (spec/exchanges/README.md,
//! "The test environment"): the caller, keystonemiddleware in the paste
//! records, Glance/Nova/Neutron validation, the template driver selection
//! and the Keystone project lookup.

use std::sync::Mutex;

use axum::response::Response;
use driver_host::{Entry, Target, TemplateDriverInput};
use futures::future::BoxFuture;
use http::HeaderMap;
use magnum_domain::{MagnumError, RequestContext};
use openkeel_magnum_exchanges::{Mock, RecordedContext};
use serde_json::Value;

use crate::Authenticator;
use crate::conductor::TemplateDrivers;
use crate::openstack::{
    ErrorKind, Flavor, Image, Keypair, Lookup, LookupError, Network, OpenStackError, Subnet,
};

/// Magnum's unit-test application: no Keystone, the identity comes from
/// X-Roles / X-Project-Id / X-User-Id, and is_admin is false unless the test
/// injected an admin context. When the test injected a real context, its
/// project, user and roles are used; a MagicMock context is an admin.
pub(super) struct TestAppAuth {
    pub(super) ctx: Option<RecordedContext>,
}

impl TestAppAuth {
    pub(super) fn context(&self, headers: &HeaderMap) -> RequestContext {
        let get = |name: &str| {
            headers
                .get(name)
                .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        };
        let mut rc = RequestContext {
            project_id: get("x-project-id")
                .filter(|v| !v.is_empty())
                .unwrap_or_else(|| "fake_project".into()),
            user_id: get("x-user-id")
                .filter(|v| !v.is_empty())
                .unwrap_or_else(|| "fake_user".into()),
            // Split on "," without stripping, as Magnum's ContextHook does.
            roles: get("x-roles")
                .unwrap_or_default()
                .split(',')
                .map(str::to_string)
                .collect(),
            ..RequestContext::default()
        };
        if let Some(c) = &self.ctx {
            rc.is_admin = c.is_admin == Value::Bool(true) || is_magic_mock(&c.is_admin);
            let real = |v: &Value| {
                v.as_str()
                    .filter(|s| !s.is_empty() && *s != "<MagicMock>")
                    .map(str::to_string)
            };
            if let Some(p) = real(&c.project_id) {
                rc.project_id = p;
            }
            if let Some(u) = real(&c.user_id) {
                rc.user_id = u;
            }
            if let Some(l) = c.roles.as_array() {
                rc.roles = l
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect();
            }
        }
        rc
    }
}

fn is_magic_mock(v: &Value) -> bool {
    v.as_str() == Some("<MagicMock>")
}

impl Authenticator for TestAppAuth {
    fn authenticate<'a>(
        &'a self,
        headers: &'a HeaderMap,
    ) -> BoxFuture<'a, Result<RequestContext, Response>> {
        Box::pin(async move { Ok(self.context(headers)) })
    }
}

/// keystonemiddleware in the paste records: the recorded requests carry no
/// token, so they are refused with its 401.
pub(super) struct KeystoneLikeAuth;

impl Authenticator for KeystoneLikeAuth {
    fn authenticate<'a>(
        &'a self,
        headers: &'a HeaderMap,
    ) -> BoxFuture<'a, Result<RequestContext, Response>> {
        Box::pin(async move {
            if headers.get("x-auth-token").is_none_or(|t| t.is_empty()) {
                return Err(crate::auth::responses::unauthorized(
                    "http://localhost:5000",
                ));
            }
            Ok(RequestContext {
                user_id: "u".into(),
                project_id: "p".into(),
                roles: vec!["reader".into()],
                ..RequestContext::default()
            })
        })
    }
}

/// The template driver selection while `Driver.get_driver` is mocked and
/// no driver is installed: every tuple is accepted, the stored driver is
/// the request's, else the image's `magnum_driver`, else none (the default
/// driver lookup finds no driver).
pub(super) struct MockedGetDriver;

impl TemplateDrivers for MockedGetDriver {
    fn resolve_template_driver(&self, input: &TemplateDriverInput) -> Result<String, MagnumError> {
        Ok(if input.request_driver.is_empty() {
            input.image_driver.clone()
        } else {
            input.request_driver.clone()
        })
    }

    fn default_name(&self) -> Result<Option<String>, MagnumError> {
        Ok(None)
    }
}

/// What a mocked `Driver.get_driver` returns: an entry point claiming
/// every cluster type, under one name.
#[derive(Clone, Debug)]
pub(super) struct PermissiveEntry {
    pub(super) name: String,
    pub(super) provides: Vec<Target>,
}

impl Entry for PermissiveEntry {
    fn name(&self) -> &str {
        &self.name
    }
    fn beta(&self) -> bool {
        false
    }
    fn provides(&self) -> &[Target] {
        &self.provides
    }
}

/// The cluster types the permissive driver claims: the common ones and every
/// type the record's templates and body name.
pub(super) fn driver_targets(rows: &[&serde_json::Map<String, Value>]) -> Vec<Target> {
    let mut out: Vec<Target> = Vec::new();
    let mut add = |t: Target| {
        if !out.contains(&t) {
            out.push(t);
        }
    };
    for st in ["vm", "bm"] {
        for os in [
            "ubuntu",
            "fedora-atomic",
            "fedora-coreos",
            "coreos",
            "centos",
            "mock_os",
        ] {
            for coe in ["kubernetes", "swarm", "swarm-mode", "mesos", "dcos"] {
                add(Target::new(st, os, coe));
            }
        }
    }
    for m in rows {
        let s = |k: &str, def: &str| m.get(k).and_then(Value::as_str).unwrap_or(def).to_string();
        add(Target::new(
            &s("server_type", "vm"),
            &s("cluster_distro", "ubuntu"),
            &s("coe", "kubernetes"),
        ));
    }
    out
}

/// The exception a mock's side effect raises (`raise ImageNotFound(test-img)`):
/// the test passes the message positionally, so the message is the
/// argument; the status is the catalogue's. An exception outside the
/// catalogue is an unexpected failure (a 500).
pub(super) fn mock_error(m: &Mock) -> Option<LookupError> {
    let side = m.side_effect.as_deref()?;
    let rest = side.strip_prefix("raise ")?.strip_suffix(')')?;
    let (name, arg) = rest.split_once('(')?;
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return None;
    }
    let mut e = match name {
        "ImageNotFound" => MagnumError::image_not_found(arg),
        "ImageNotAuthorized" => MagnumError::image_not_authorized(arg),
        "OSDistroFieldNotFound" => MagnumError::os_distro_field_not_found(arg),
        "FlavorNotFound" => MagnumError::flavor_not_found(arg),
        "KeyPairNotFound" => MagnumError::key_pair_not_found(arg),
        "ExternalNetworkNotFound" => MagnumError::external_network_not_found(arg),
        "FixedNetworkNotFound" => MagnumError::fixed_network_not_found(arg),
        "FixedSubnetNotFound" => MagnumError::fixed_subnet_not_found(arg),
        "Conflict" => MagnumError::conflict(arg),
        "InvalidParameterValue" => MagnumError::invalid_parameter_value(arg),
        "FlavorZeroRootVolumeNotSupported" => {
            return Some(MagnumError::flavor_zero_root_volume_not_supported().into());
        }
        _ => {
            return Some(LookupError::Failed(OpenStackError::new(
                "mock",
                ErrorKind::Invalid(side.to_string()),
            )));
        }
    };
    e.message = arg.to_string();
    Some(e.into())
}

fn kind_of(e: &Option<LookupError>) -> &'static str {
    match e {
        Some(LookupError::Client(m)) => m.kind,
        _ => "",
    }
}

/// The lookup a validate_os_resources exception comes from.
fn osres_method(e: &Option<LookupError>) -> &'static str {
    match kind_of(e) {
        "FlavorNotFound" => "flavor",
        "KeyPairNotFound" => "keypair",
        "ExternalNetworkNotFound" => "external",
        "FixedNetworkNotFound" => "fixed",
        "FixedSubnetNotFound" => "subnet",
        _ => "image",
    }
}

/// What an unmocked Glance call meets in the unit tests (no Keystone): a
/// generic failure, not a NotFound.
fn unmocked_glance() -> LookupError {
    LookupError::Failed(OpenStackError::new(
        "glance",
        ErrorKind::Transport("glance is not reachable in the unit tests".into()),
    ))
}

/// How the record's mocks of magnum.api.attr_validator make the lookups
/// answer.
#[derive(Default)]
pub(super) struct FakeSetup {
    /// The request is a /v1/clustertemplates one.
    pub(super) template: bool,
    /// The first Image call is the unmocked one of enforce_driver_supported.
    pub(super) decorator_pending: bool,
    /// The next Image call is validate_os_resources'.
    pub(super) osres_image: bool,
    /// validate_os_resources raises this.
    pub(super) osres_err: Option<LookupError>,
    /// validate_image answers this image, or raises.
    pub(super) image: Image,
    pub(super) image_err: Option<LookupError>,
    /// validate_flavor_root_volume_size raises this.
    pub(super) root_err: Option<LookupError>,
    /// Keystone does not know the project (the tests configure the mocked
    /// client so that the project lookup fails).
    pub(super) missing_projects: bool,
}

/// The lookups, answering as the record's mocks make them answer. The
/// conductor makes the same calls in the same order as Magnum's validators:
///
/// - template POST: enforce_driver_supported's own Glance call (unmocked: a
///   generic error, swallowed) when the body lacks cluster_distro or driver;
///   then validate_os_resources (image, flavors, networks); then
///   validate_image; then validate_flavor_root_volume_size;
/// - template PATCH: validate_os_resources, then the root-disk check;
/// - cluster POST: the root-disk check and validate_os_resources (image,
///   flavors, networks, keypair), in either order;
/// - nodegroup and cluster PATCH: the root-disk check.
///
/// A mocked validate_os_resources that raises fails its first lookup; one
/// that passes makes every lookup succeed (image os_distro "ubuntu").
/// validate_image answers the mock's image or raises. A raising
/// validate_flavor_root_volume_size fails the root-disk check.
pub(super) struct FakeOpenStack {
    setup: FakeSetup,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    decorator_pending: bool,
    osres_image: bool,
    osres_done: bool,
    /// validate_image has run.
    phase_image_done: bool,
}

impl FakeOpenStack {
    pub(super) fn new(setup: FakeSetup) -> FakeOpenStack {
        let state = State {
            decorator_pending: setup.decorator_pending,
            osres_image: setup.osres_image,
            ..State::default()
        };
        FakeOpenStack {
            setup,
            state: Mutex::new(state),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The validate_os_resources error, once, on the first call it covers.
    fn osres(&self) -> Result<(), LookupError> {
        let mut st = self.state();
        if st.phase_image_done || st.osres_done {
            return Ok(());
        }
        st.osres_done = true;
        match &self.setup.osres_err {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }

    fn image_now(&self, ident: &str) -> Result<Image, LookupError> {
        let ok = Image {
            id: ident.to_string(),
            name: "mock_name".into(),
            os_distro: Some("ubuntu".into()),
            ..Image::default()
        };
        if !self.setup.template {
            if osres_method(&self.setup.osres_err) == "image" {
                self.osres()?;
            }
            return Ok(ok);
        }
        {
            let mut st = self.state();
            if st.decorator_pending {
                st.decorator_pending = false;
                return Err(unmocked_glance());
            }
            if st.osres_image {
                st.osres_image = false;
                drop(st);
                self.osres()?;
                return Ok(ok);
            }
            st.phase_image_done = true;
        }
        if let Some(e) = &self.setup.image_err {
            return Err(e.clone());
        }
        let mut img = self.setup.image.clone();
        img.id = ident.to_string();
        Ok(img)
    }

    fn flavor_now(&self, ident: &str) -> Result<Flavor, LookupError> {
        let mut ok = Flavor {
            id: ident.to_string(),
            name: ident.to_string(),
            vcpus: 1,
            ram: 2048,
            disk: 20,
        };
        if self.setup.root_err.is_some() {
            ok.disk = 0;
        }
        if !self.setup.template {
            if osres_method(&self.setup.osres_err) == "flavor" {
                self.osres()?;
            }
            return Ok(ok);
        }
        self.osres()?;
        if self.state().phase_image_done
            && let Some(e) = &self.setup.root_err
        {
            return Err(e.clone());
        }
        Ok(ok)
    }

    fn network_now(&self, ident: &str, method: &str) -> Result<Network, LookupError> {
        let n = Network {
            id: ident.to_string(),
            name: ident.to_string(),
            external: method == "external",
        };
        if !self.setup.template && osres_method(&self.setup.osres_err) != method {
            return Ok(n);
        }
        self.osres()?;
        Ok(n)
    }
}

impl Lookup for FakeOpenStack {
    fn image<'a>(
        &'a self,
        _ctx: &'a RequestContext,
        ident: &'a str,
    ) -> BoxFuture<'a, Result<Image, LookupError>> {
        Box::pin(async move { self.image_now(ident) })
    }

    fn flavor<'a>(
        &'a self,
        _ctx: &'a RequestContext,
        ident: &'a str,
    ) -> BoxFuture<'a, Result<Flavor, LookupError>> {
        Box::pin(async move { self.flavor_now(ident) })
    }

    fn keypair<'a>(
        &'a self,
        _ctx: &'a RequestContext,
        name: &'a str,
    ) -> BoxFuture<'a, Result<Keypair, LookupError>> {
        Box::pin(async move {
            if !self.setup.template && osres_method(&self.setup.osres_err) == "keypair" {
                self.osres()?;
            }
            Ok(Keypair {
                name: name.to_string(),
                key_type: "ssh".into(),
                fingerprint: String::new(),
            })
        })
    }

    fn external_network<'a>(
        &'a self,
        _ctx: &'a RequestContext,
        ident: &'a str,
    ) -> BoxFuture<'a, Result<Network, LookupError>> {
        Box::pin(async move { self.network_now(ident, "external") })
    }

    fn fixed_network<'a>(
        &'a self,
        _ctx: &'a RequestContext,
        ident: &'a str,
    ) -> BoxFuture<'a, Result<Network, LookupError>> {
        Box::pin(async move { self.network_now(ident, "fixed") })
    }

    fn fixed_subnet<'a>(
        &'a self,
        _ctx: &'a RequestContext,
        ident: &'a str,
    ) -> BoxFuture<'a, Result<Subnet, LookupError>> {
        Box::pin(async move {
            let n = self.network_now(ident, "subnet")?;
            Ok(Subnet {
                id: n.id,
                name: n.name,
                network_id: String::new(),
            })
        })
    }

    fn project_exists<'a>(
        &'a self,
        _ctx: &'a RequestContext,
        _project_id: &'a str,
    ) -> BoxFuture<'a, Result<bool, LookupError>> {
        Box::pin(async move { Ok(!self.setup.missing_projects) })
    }
}
