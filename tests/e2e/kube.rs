//! A real kube-apiserver over an etcd, from the binaries
//! `TEST_ASSET_KUBE_APISERVER` and `TEST_ASSET_ETCD` name
//! (`scripts/ci/kube-apiserver.sh`), with a static admin token, a
//! kubeconfig file for the binary under test and an audit log of every
//! request (metadata only); restartable, stopped when dropped. With
//! [`capi_api_server`], the same server with the Cluster API and CAPO
//! CustomResourceDefinitions of `TEST_ASSET_CAPI_CRDS` installed.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::runtime::wait::{await_condition, conditions};
use serde::Deserialize;
use test_support::kube::KubeApiServer;

use crate::harness::in_ci;

/// A running API server.
pub struct ApiServer {
    pub url: String,
    server: KubeApiServer,
}

/// The API server, or `None` (skipped, with a message) when the binaries
/// are not configured; unset when `CI=true` is a failure. It authorizes
/// every request.
pub fn api_server() -> Option<ApiServer> {
    api_server_with("AlwaysAllow")
}

/// [`api_server`] with the given `--authorization-mode` (`RBAC`: the admin
/// token, in `system:masters`, may still do anything, and a client that
/// impersonates a service account gets that account's rights).
pub fn api_server_with(authorization_mode: &str) -> Option<ApiServer> {
    let server = KubeApiServer::start(authorization_mode)?;
    Some(ApiServer {
        url: server.url.clone(),
        server,
    })
}

/// One request as the API server's audit log has it.
#[derive(Clone, Debug)]
pub struct Audited {
    pub verb: String,
    pub uri: String,
    pub resource: String,
    pub user_agent: String,
    /// The user a request impersonated, or empty.
    pub impersonated: String,
}

impl ApiServer {
    /// A kube client for the server, with the admin token. It needs a
    /// Tokio runtime; the blocking helpers of this type (`call`, `get`,
    /// `create_namespace`, …) must not run on one.
    pub fn kube_client(&self) -> kube::Client {
        let url: http::Uri = self.url.parse().expect("API server URL");
        let mut config = kube::Config::new(url);
        // The server's certificate is self-signed in its temporary
        // directory: loopback only.
        config.accept_invalid_certs = true;
        config.auth_info.token = Some(self.server.token.clone().into());
        kube::Client::try_from(config).expect("kube client")
    }

    /// [`Self::kube_client`] impersonating `user` in `groups` (the admin
    /// may impersonate anyone): with `RBAC` authorization, what `user`
    /// may do.
    pub fn kube_client_as(&self, user: &str, groups: &[&str]) -> kube::Client {
        let url: http::Uri = self.url.parse().expect("API server URL");
        let mut config = kube::Config::new(url);
        config.accept_invalid_certs = true;
        config.auth_info.token = Some(self.server.token.clone().into());
        config.auth_info.impersonate = Some(user.to_owned());
        config.auth_info.impersonate_groups =
            Some(groups.iter().map(|g| (*g).to_owned()).collect());
        kube::Client::try_from(config).expect("kube client")
    }

    fn client() -> reqwest::blocking::Client {
        reqwest::blocking::Client::builder()
            .danger_accept_invalid_certs(true)
            .timeout(Duration::from_secs(10))
            .build()
            .expect("client")
    }

    /// `method path` with the admin token: the status and the body.
    pub fn call(&self, method: &str, path: &str, body: Option<&str>) -> (u16, String) {
        let m = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
        let mut req = Self::client()
            .request(m, format!("{}{path}", self.url))
            .bearer_auth(&self.server.token);
        if let Some(b) = body {
            req = req
                .header("content-type", "application/json")
                .body(b.to_owned());
        }
        match req.send() {
            Ok(r) => {
                let status = r.status().as_u16();
                (status, r.text().unwrap_or_default())
            }
            Err(e) => (0, e.to_string()),
        }
    }

    /// Creates the namespace `name`, waiting (at most 90 s) for the server
    /// to serve.
    pub fn create_namespace(&self, name: &str) {
        let body =
            format!(r#"{{"apiVersion":"v1","kind":"Namespace","metadata":{{"name":"{name}"}}}}"#);
        let deadline = Instant::now() + Duration::from_secs(90);
        loop {
            let (status, text) = self.call("POST", "/api/v1/namespaces", Some(&body));
            if status == 201 || status == 409 {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "kube-apiserver did not become ready in 90 s: {status} {text}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The object at `path`, or `None` when it does not exist.
    pub fn get(&self, path: &str) -> Option<serde_json::Value> {
        match self.call("GET", path, None) {
            (200, text) => serde_json::from_str(&text).ok(),
            (404, _) => None,
            (status, text) => panic!("GET {path}: {status} {text}"),
        }
    }

    /// The kubeconfig naming the server and the admin token.
    pub fn kubeconfig_path(&self) -> PathBuf {
        self.server.kubeconfig()
    }

    /// A JSON merge patch of the object at `path`; the status.
    pub fn merge_patch(&self, path: &str, body: &serde_json::Value) -> u16 {
        let r = Self::client()
            .patch(format!("{}{path}", self.url))
            .bearer_auth(&self.server.token)
            .header("content-type", "application/merge-patch+json")
            .body(body.to_string())
            .send();
        r.map_or(0, |r| r.status().as_u16())
    }

    /// The requests the server has audited so far, in order (one entry per
    /// request: its completion, or the start of a watch).
    pub fn audited(&self) -> Vec<Audited> {
        let text = std::fs::read_to_string(self.server.audit_log()).unwrap_or_default();
        let mut seen = std::collections::HashSet::new();
        text.lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter(|e| seen.insert(e["auditID"].as_str().unwrap_or_default().to_string()))
            .map(|e| Audited {
                verb: e["verb"].as_str().unwrap_or_default().to_string(),
                uri: e["requestURI"].as_str().unwrap_or_default().to_string(),
                resource: e["objectRef"]["resource"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                user_agent: e["userAgent"].as_str().unwrap_or_default().to_string(),
                impersonated: e["impersonatedUser"]["username"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            })
            .collect()
    }

    /// The process id of etcd.
    #[allow(dead_code)] // the fault suite's (tests/clients/faults)
    pub fn etcd_pid(&self) -> u32 {
        self.server.etcd_pid()
    }

    /// Stops the API server (etcd stays), waits `down`, and starts it
    /// again on the same port, waiting until it serves.
    pub fn restart(&mut self, down: Duration) {
        self.server.stop_apiserver();
        std::thread::sleep(down);
        self.server.start_apiserver();
        let deadline = Instant::now() + Duration::from_secs(90);
        while self.call("GET", "/readyz", None).0 != 200 {
            assert!(
                Instant::now() < deadline,
                "kube-apiserver did not come back in 90 s"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// How long the server may take to serve after its start, and the CRDs to
/// become Established, on a loaded 2-core machine.
const READY_TIMEOUT: Duration = Duration::from_secs(90);
const ESTABLISHED_TIMEOUT: Duration = Duration::from_secs(60);

/// The field manager that installs the CRDs.
const CRD_FIELD_MANAGER: &str = "openkeel-magnum-tests";

/// An API server with the Cluster API and CAPO CRDs installed, each
/// Established.
pub struct CapiApiServer {
    pub server: ApiServer,
    /// A client with the admin token.
    pub client: kube::Client,
    /// The folder the CRDs came from (`TEST_ASSET_CAPI_CRDS`).
    pub crds_dir: PathBuf,
    /// The installed CRDs as the server returned them once Established,
    /// in the order of [`crd_manifests`].
    pub crds: Vec<CustomResourceDefinition>,
}

/// The folder of CRD manifests `TEST_ASSET_CAPI_CRDS` names
/// (`scripts/ci/kube-apiserver.sh`), or `None` (skipped, with a message)
/// when it is unset; unset when `CI=true` is a failure.
pub fn capi_crds_dir() -> Option<PathBuf> {
    match std::env::var_os("TEST_ASSET_CAPI_CRDS") {
        Some(d) if !d.is_empty() => Some(PathBuf::from(d)),
        _ => {
            assert!(!in_ci(), "TEST_ASSET_CAPI_CRDS must be set when CI=true");
            eprintln!(
                "skipped: TEST_ASSET_CAPI_CRDS is not set; run: eval \"$(scripts/ci/kube-apiserver.sh)\""
            );
            None
        }
    }
}

/// The CRD manifests of `dir`: every `*.yaml` file of its sub-folders (one
/// per release), in path order, each as the JSON value of its documents
/// (each file holds one CRD). Unmodified: what is installed is what the
/// releases ship.
pub fn crd_manifests(dir: &Path) -> Vec<(PathBuf, serde_json::Value)> {
    let mut files = Vec::new();
    let entries = |d: &Path| -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(d)
            .unwrap_or_else(|e| panic!("read {}: {e}", d.display()))
            .map(|e| e.expect("directory entry").path())
            .collect();
        v.sort();
        v
    };
    for sub in entries(dir).into_iter().filter(|p| p.is_dir()) {
        for file in entries(&sub) {
            if file.extension().is_some_and(|e| e == "yaml") {
                files.push(file);
            }
        }
    }
    let mut out = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file)
            .unwrap_or_else(|e| panic!("read {}: {e}", file.display()));
        for doc in serde_norway::Deserializer::from_str(&text) {
            let value = serde_json::Value::deserialize(doc)
                .unwrap_or_else(|e| panic!("parse {}: {e}", file.display()));
            if !value.is_null() {
                out.push((file.clone(), value));
            }
        }
    }
    out
}

/// [`api_server`] with the CRDs of `TEST_ASSET_CAPI_CRDS` applied (server-side
/// apply, as they are in the files) and Established; `None` (skipped, with a
/// message) when the binaries or the CRDs are not configured, a failure when
/// `CI=true`.
pub async fn capi_api_server() -> Option<CapiApiServer> {
    capi_api_server_with("AlwaysAllow").await
}

/// [`capi_api_server`] with the given `--authorization-mode` (see
/// [`api_server_with`]).
pub async fn capi_api_server_with(authorization_mode: &str) -> Option<CapiApiServer> {
    let crds_dir = capi_crds_dir()?;
    let server = api_server_with(authorization_mode)?;
    let client = server.kube_client();
    wait_ready(&client).await;
    let manifests = crd_manifests(&crds_dir);
    assert!(
        !manifests.is_empty(),
        "no CRD manifest in {}",
        crds_dir.display()
    );
    let crds = install_crds(&client, &manifests).await;
    Some(CapiApiServer {
        server,
        client,
        crds_dir,
        crds,
    })
}

/// Waits (at most [`READY_TIMEOUT`]) until the server answers `/readyz`
/// (which includes the CRD informers' sync).
async fn wait_ready(client: &kube::Client) {
    let deadline = Instant::now() + READY_TIMEOUT;
    loop {
        let req = http::Request::get("/readyz")
            .body(Vec::new())
            .expect("request");
        let err = match client.request_text(req).await {
            Ok(_) => return,
            Err(e) => e,
        };
        assert!(
            Instant::now() < deadline,
            "kube-apiserver did not become ready in {READY_TIMEOUT:?}: {err}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Applies every manifest and waits until each CRD is Established; the
/// CRDs as the server has them then.
pub async fn install_crds(
    client: &kube::Client,
    manifests: &[(PathBuf, serde_json::Value)],
) -> Vec<CustomResourceDefinition> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let params = PatchParams::apply(CRD_FIELD_MANAGER).force();
    let applies = manifests.iter().map(|(file, value)| {
        let (api, params) = (&api, &params);
        async move {
            let name = value["metadata"]["name"]
                .as_str()
                .unwrap_or_else(|| panic!("{}: a CRD without a name", file.display()));
            api.patch(name, params, &Patch::Apply(value))
                .await
                .unwrap_or_else(|e| panic!("apply the CRD {name} of {}: {e}", file.display()));
            let established = await_condition(api.clone(), name, conditions::is_crd_established());
            match tokio::time::timeout(ESTABLISHED_TIMEOUT, established).await {
                Ok(Ok(Some(crd))) => crd,
                Ok(Ok(None)) => panic!("the CRD {name} disappeared"),
                Ok(Err(e)) => panic!("watch the CRD {name}: {e}"),
                Err(_) => panic!("the CRD {name} was not Established in {ESTABLISHED_TIMEOUT:?}"),
            }
        }
    });
    futures::future::join_all(applies).await
}

impl CapiApiServer {
    /// Creates the namespace `name` (an existing one is fine).
    pub async fn create_namespace(&self, name: &str) {
        let api: Api<Namespace> = Api::all(self.client.clone());
        let ns: Namespace = serde_json::from_value(serde_json::json!({
            "metadata": { "name": name }
        }))
        .expect("namespace");
        match api.create(&PostParams::default(), &ns).await {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 409 => {}
            Err(e) => panic!("create the namespace {name}: {e}"),
        }
    }
}
