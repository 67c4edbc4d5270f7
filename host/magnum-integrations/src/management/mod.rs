//! The management cluster as the drivers' `kube` import: the driver host
//! has checked the grants and the envelope; this module does the call with
//! kube-rs over any kind (discovered once per api version and kind) and
//! maps the server's answers onto the host's errors. [`memory`] is the
//! in-memory cluster of `all-in-one --kube memory`.

pub mod memory;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use driver_host::{HostError, HostFuture, KubeAccess, KubeObject, ObjectRef, Selector};
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams};
use kube::core::GroupVersionKind;
use kube::discovery::{ApiResource, Scope};
use kube::{Client, ResourceExt};

/// How long one call to the management cluster may take, discovery
/// included.
const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// A kind as the server serves it: its resource (plural) and scope.
#[derive(Clone)]
struct Served {
    resource: ApiResource,
    namespaced: bool,
}

/// The drivers' Kubernetes: one client, the kinds discovered so far.
pub struct ManagementCluster {
    client: Client,
    kinds: Mutex<HashMap<(String, String), Served>>,
    /// The in-memory cluster `client` reaches, which serves a kind once
    /// it is asked about.
    memory: Option<Arc<memory::MemoryCluster>>,
}

impl ManagementCluster {
    /// The management cluster reached by `client`.
    pub fn new(client: Client) -> Arc<ManagementCluster> {
        Arc::new(ManagementCluster {
            client,
            kinds: Mutex::new(HashMap::new()),
            memory: None,
        })
    }

    /// The in-memory cluster `memory`.
    pub fn in_memory(memory: Arc<memory::MemoryCluster>) -> Arc<ManagementCluster> {
        Arc::new(ManagementCluster {
            client: memory.client(),
            kinds: Mutex::new(HashMap::new()),
            memory: Some(memory),
        })
    }

    /// The client reaching the cluster.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The served resource of `api_version`/`kind`, or `None` when the
    /// server does not serve it.
    async fn discover(&self, api_version: &str, kind: &str) -> Result<Option<Served>, HostError> {
        let key = (api_version.to_owned(), kind.to_owned());
        if let Some(s) = lock(&self.kinds).get(&key) {
            return Ok(Some(s.clone()));
        }
        if let Some(m) = &self.memory {
            m.serve(api_version, kind);
        }
        let (group, version) = match api_version.split_once('/') {
            Some((g, v)) => (g, v),
            None => ("", api_version),
        };
        let gvk = GroupVersionKind::gvk(group, version, kind);
        match kube::discovery::pinned_kind(&self.client, &gvk).await {
            Ok((resource, caps)) => {
                let s = Served {
                    resource,
                    namespaced: caps.scope == Scope::Namespaced,
                };
                lock(&self.kinds).insert(key, s.clone());
                Ok(Some(s))
            }
            Err(kube::Error::Api(s)) if s.is_not_found() => Ok(None),
            // Discovery answers a served group without the kind this way.
            Err(kube::Error::Discovery(_)) => Ok(None),
            Err(e) => Err(host_error("discover", api_version, kind, e)),
        }
    }

    /// The kind's API for `namespace`, or a refusal naming what is not
    /// served or what does not fit its scope.
    async fn api(
        &self,
        api_version: &str,
        kind: &str,
        namespace: Option<&str>,
    ) -> Result<Option<Api<DynamicObject>>, HostError> {
        let Some(s) = self.discover(api_version, kind).await? else {
            return Ok(None);
        };
        match (s.namespaced, namespace) {
            (true, Some(ns)) => Ok(Some(Api::namespaced_with(
                self.client.clone(),
                ns,
                &s.resource,
            ))),
            (false, None) => Ok(Some(Api::all_with(self.client.clone(), &s.resource))),
            (true, None) => Err(HostError::Invalid(format!(
                "{api_version}/{kind} is namespaced: a namespace is required"
            ))),
            (false, Some(_)) => Err(HostError::Invalid(format!(
                "{api_version}/{kind} is cluster-scoped: no namespace may be given"
            ))),
        }
    }
}

impl ManagementCluster {
    /// The API of `api_version`/`kind` in `namespace` for a watch, or
    /// `None` when the server does not serve the kind. Discovery is bounded
    /// like every call; the watch itself is not (it lasts).
    pub async fn watch_api(
        &self,
        api_version: &str,
        kind: &str,
        namespace: Option<&str>,
    ) -> Result<Option<Api<DynamicObject>>, HostError> {
        bounded("discover", self.api(api_version, kind, namespace)).await
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // The map only caches discovery: a panic elsewhere cannot corrupt it.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The server's answer as the host's error. The server's message names
/// the object and the field, never a value of the driver's body.
fn host_error(verb: &str, api_version: &str, kind: &str, e: kube::Error) -> HostError {
    let what = format!("{verb} {api_version}/{kind}");
    match e {
        kube::Error::Api(s) => match s.code {
            404 => HostError::NotFound(format!("{what}: {}", s.message)),
            409 => HostError::Conflict(format!("{what}: {}", s.message)),
            400 | 422 => HostError::Invalid(format!("{what}: {}", s.message)),
            401 | 403 => HostError::Unavailable(format!(
                "{what}: the management cluster refused the service: {}",
                s.message
            )),
            _ => HostError::Other(format!("{what}: {} ({})", s.message, s.code)),
        },
        e => HostError::Unavailable(format!("{what}: {e}")),
    }
}

/// Runs `f` within [`CALL_TIMEOUT`].
async fn bounded<T>(
    what: &str,
    f: impl std::future::Future<Output = Result<T, HostError>>,
) -> Result<T, HostError> {
    match tokio::time::timeout(CALL_TIMEOUT, f).await {
        Ok(r) => r,
        Err(_) => Err(HostError::Unavailable(format!(
            "{what}: the management cluster did not answer within {} s",
            CALL_TIMEOUT.as_secs()
        ))),
    }
}

/// `obj` as the host's object, with the envelope the driver asked about
/// (a list's items carry no apiVersion or kind of their own).
pub fn to_object(
    api_version: &str,
    kind: &str,
    mut obj: DynamicObject,
) -> Result<KubeObject, HostError> {
    let namespace = obj.namespace();
    let name = obj.name_any();
    obj.types = Some(kube::core::TypeMeta {
        api_version: api_version.to_owned(),
        kind: kind.to_owned(),
    });
    let json = serde_json::to_string(&obj)
        .map_err(|e| HostError::Other(format!("encode {api_version}/{kind} {name}: {e}")))?;
    Ok(KubeObject {
        api_version: api_version.to_owned(),
        kind: kind.to_owned(),
        namespace,
        name,
        json,
    })
}

impl KubeAccess for ManagementCluster {
    fn apply<'a>(
        &'a self,
        obj: KubeObject,
        field_manager: &'a str,
    ) -> HostFuture<'a, Result<KubeObject, HostError>> {
        Box::pin(bounded("apply", async move {
            let (av, kind) = (obj.api_version.as_str(), obj.kind.as_str());
            let Some(api) = self.api(av, kind, obj.namespace.as_deref()).await? else {
                return Err(HostError::Invalid(format!(
                    "apply {av}/{kind}: the management cluster does not serve this kind"
                )));
            };
            let body: serde_json::Value = serde_json::from_str(&obj.json)
                .map_err(|e| HostError::Invalid(format!("apply {av}/{kind}: {e}")))?;
            let params = PatchParams::apply(field_manager).force();
            let stored = api
                .patch(&obj.name, &params, &Patch::Apply(&body))
                .await
                .map_err(|e| host_error("apply", av, kind, e))?;
            to_object(av, kind, stored)
        }))
    }

    fn get(&self, reference: ObjectRef) -> HostFuture<'_, Result<Option<KubeObject>, HostError>> {
        Box::pin(bounded("get", async move {
            let (av, kind) = (reference.api_version.as_str(), reference.kind.as_str());
            let Some(api) = self.api(av, kind, reference.namespace.as_deref()).await? else {
                return Ok(None);
            };
            match api.get_opt(&reference.name).await {
                Ok(Some(o)) => to_object(av, kind, o).map(Some),
                Ok(None) => Ok(None),
                Err(e) => Err(host_error("get", av, kind, e)),
            }
        }))
    }

    fn list(&self, selector: Selector) -> HostFuture<'_, Result<Vec<KubeObject>, HostError>> {
        Box::pin(bounded("list", async move {
            let (av, kind) = (selector.api_version.as_str(), selector.kind.as_str());
            let Some(api) = self.api(av, kind, selector.namespace.as_deref()).await? else {
                return Ok(Vec::new());
            };
            let labels = selector
                .labels
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(",");
            let list = api
                .list(&ListParams::default().labels(&labels))
                .await
                .map_err(|e| host_error("list", av, kind, e))?;
            list.items
                .into_iter()
                .map(|o| to_object(av, kind, o))
                .collect()
        }))
    }

    fn delete(&self, reference: ObjectRef) -> HostFuture<'_, Result<bool, HostError>> {
        Box::pin(bounded("delete", async move {
            let (av, kind) = (reference.api_version.as_str(), reference.kind.as_str());
            let Some(api) = self.api(av, kind, reference.namespace.as_deref()).await? else {
                return Ok(false);
            };
            match api
                .delete(&reference.name, &DeleteParams::background())
                .await
            {
                Ok(_) => Ok(true),
                Err(kube::Error::Api(s)) if s.is_not_found() => Ok(false),
                Err(e) => Err(host_error("delete", av, kind, e)),
            }
        }))
    }

    fn served<'a>(
        &'a self,
        api_version: &'a str,
        kind: &'a str,
    ) -> HostFuture<'a, Result<bool, HostError>> {
        Box::pin(bounded("discover", async move {
            Ok(self.discover(api_version, kind).await?.is_some())
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn api_error(code: u16) -> kube::Error {
        kube::Error::Api(
            kube::core::Status::failure("configmaps \"x\" is bad", "Reason")
                .with_code(code)
                .boxed(),
        )
    }

    #[test]
    fn server_answers_become_the_hosts_errors() {
        let e = |code| host_error("apply", "v1", "ConfigMap", api_error(code));
        assert!(
            matches!(e(404), HostError::NotFound(m) if m == "apply v1/ConfigMap: configmaps \"x\" is bad")
        );
        assert!(matches!(e(409), HostError::Conflict(_)));
        assert!(matches!(e(422), HostError::Invalid(_)));
        assert!(matches!(e(400), HostError::Invalid(_)));
        assert!(matches!(e(403), HostError::Unavailable(m) if m.contains("refused the service")));
        assert!(matches!(e(500), HostError::Other(m) if m.ends_with("(500)")));
    }

    #[test]
    fn list_items_get_the_envelope_asked_about() {
        let resource = ApiResource::erase::<k8s_openapi::api::core::v1::ConfigMap>(&());
        let mut o = DynamicObject::new("cm", &resource);
        o.metadata.namespace = Some("magnum-system".into());
        o.types = None;
        let k = to_object("v1", "ConfigMap", o).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(k.namespace.as_deref(), Some("magnum-system"));
        assert_eq!(k.name, "cm");
        let v: serde_json::Value = serde_json::from_str(&k.json).unwrap_or_default();
        assert_eq!(v["apiVersion"], "v1");
        assert_eq!(v["kind"], "ConfigMap");
        assert_eq!(v["metadata"]["name"], "cm");
    }
}
