//! Kubernetes objects from and to JSON (feature `json`), and typed ones
//! through k8s-openapi (feature `k8s`).

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::error::HostError;
use crate::types::K8sObject;

fn invalid(m: String) -> HostError {
    HostError::Invalid(m)
}

impl K8sObject {
    /// The envelope and body of a JSON object that carries `apiVersion`,
    /// `kind` and `metadata.name` (and `metadata.namespace` for a
    /// namespaced kind).
    pub fn from_value(v: &serde_json::Value) -> Result<K8sObject, HostError> {
        let s = |p: &str| v.pointer(p).and_then(serde_json::Value::as_str);
        let (Some(api_version), Some(kind), Some(name)) =
            (s("/apiVersion"), s("/kind"), s("/metadata/name"))
        else {
            return Err(invalid(
                "a Kubernetes object needs apiVersion, kind and metadata.name".to_string(),
            ));
        };
        Ok(K8sObject {
            api_version: api_version.to_string(),
            kind: kind.to_string(),
            namespace: s("/metadata/namespace").map(str::to_string),
            name: name.to_string(),
            json: v.to_string(),
        })
    }

    /// An object from anything that serializes to one (a k8s-openapi
    /// type, a struct of a custom resource).
    pub fn from_serialize<T: Serialize>(obj: &T) -> Result<K8sObject, HostError> {
        let v = serde_json::to_value(obj)
            .map_err(|e| invalid(format!("the object does not serialize: {e}")))?;
        K8sObject::from_value(&v)
    }

    /// The body as a JSON value.
    pub fn value(&self) -> Result<serde_json::Value, HostError> {
        serde_json::from_str(&self.json).map_err(|e| {
            invalid(format!(
                "the body of {} {} is not JSON: {e}",
                self.kind, self.name
            ))
        })
    }

    /// The body as `T`.
    pub fn parse<T: DeserializeOwned>(&self) -> Result<T, HostError> {
        serde_json::from_str(&self.json).map_err(|e| {
            invalid(format!(
                "the body of {} {} does not parse: {e}",
                self.kind, self.name
            ))
        })
    }
}

/// Typed Kubernetes objects: the k8s-openapi types (`latest` API
/// version) applied, read, listed and deleted through the host.
///
/// ```ignore
/// use openkeel_magnum_driver::k8s::{self, api::core::v1::ConfigMap};
/// let cm = ConfigMap { metadata: k8s::meta("magnum-system", "c1-info"), ..Default::default() };
/// let stored: ConfigMap = k8s::apply(&cm)?;
/// ```
#[cfg(feature = "k8s")]
pub mod k8s {
    pub use k8s_openapi::api;
    pub use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    pub use k8s_openapi::{self, Metadata, Resource};

    use super::*;
    use crate::host::kube;
    use crate::types::{Labels, ObjectRef, Selector};

    /// Metadata with a namespace and a name.
    pub fn meta(namespace: &str, name: &str) -> ObjectMeta {
        ObjectMeta {
            namespace: Some(namespace.to_string()),
            name: Some(name.to_string()),
            ..Default::default()
        }
    }

    /// The reference of a `K` named `name` (`namespace` `None` for a
    /// cluster-scoped kind).
    pub fn object_ref<K: Resource>(namespace: Option<&str>, name: &str) -> ObjectRef {
        ObjectRef {
            api_version: K::API_VERSION.to_string(),
            kind: K::KIND.to_string(),
            namespace: namespace.map(str::to_string),
            name: name.to_string(),
        }
    }

    /// The objects of kind `K` in `namespace` carrying every label.
    pub fn selector<K: Resource>(namespace: Option<&str>, labels: Labels) -> Selector {
        Selector {
            api_version: K::API_VERSION.to_string(),
            kind: K::KIND.to_string(),
            namespace: namespace.map(str::to_string),
            labels,
        }
    }

    /// Server-side apply of a typed object; the object as stored.
    pub fn apply<K>(obj: &K) -> Result<K, HostError>
    where
        K: Resource + Metadata<Ty = ObjectMeta> + Serialize + DeserializeOwned,
    {
        let m = obj.metadata();
        let Some(name) = m.name.clone() else {
            return Err(invalid(format!(
                "a {} to apply needs metadata.name",
                K::KIND
            )));
        };
        let mut v = serde_json::to_value(obj)
            .map_err(|e| invalid(format!("{} {name} does not serialize: {e}", K::KIND)))?;
        // k8s-openapi writes apiVersion and kind; a hand-built value may not.
        if let Some(o) = v.as_object_mut() {
            o.insert("apiVersion".into(), K::API_VERSION.into());
            o.insert("kind".into(), K::KIND.into());
        }
        let envelope = K8sObject {
            api_version: K::API_VERSION.to_string(),
            kind: K::KIND.to_string(),
            namespace: m.namespace.clone(),
            name,
            json: v.to_string(),
        };
        kube::apply(&envelope)?.parse()
    }

    /// The `K` named `name`, or `None`.
    pub fn get<K: Resource + DeserializeOwned>(
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Option<K>, HostError> {
        kube::get(&object_ref::<K>(namespace, name))?
            .map(|o| o.parse())
            .transpose()
    }

    /// The `K`s in `namespace` carrying every label.
    pub fn list<K: Resource + DeserializeOwned>(
        namespace: Option<&str>,
        labels: Labels,
    ) -> Result<Vec<K>, HostError> {
        kube::list(&selector::<K>(namespace, labels))?
            .iter()
            .map(K8sObject::parse)
            .collect()
    }

    /// Deletes the `K` named `name`; `false` when it was already gone.
    pub fn delete<K: Resource>(namespace: Option<&str>, name: &str) -> Result<bool, HostError> {
        kube::delete(&object_ref::<K>(namespace, name))
    }

    /// Reads an observed object (from `derive_status`) as `K`, when it is
    /// one.
    pub fn as_typed<K: Resource + DeserializeOwned>(
        obj: &K8sObject,
    ) -> Option<Result<K, HostError>> {
        (obj.api_version == K::API_VERSION && obj.kind == K::KIND).then(|| obj.parse())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_envelope_is_read_from_the_body() {
        let v = serde_json::json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "cm", "namespace": "ns"}, "data": {"k": "v"}
        });
        let o = K8sObject::from_value(&v).unwrap_or_default();
        assert_eq!(
            (
                o.api_version.as_str(),
                o.kind.as_str(),
                o.namespace.as_deref(),
                o.name.as_str()
            ),
            ("v1", "ConfigMap", Some("ns"), "cm")
        );
        assert_eq!(o.value().ok(), Some(v));
        assert!(K8sObject::from_value(&serde_json::json!({"kind": "ConfigMap"})).is_err());
    }

    #[cfg(feature = "k8s")]
    #[test]
    fn typed_objects_carry_their_kind() {
        use k8s::api::core::v1::ConfigMap;
        let r = k8s::object_ref::<ConfigMap>(Some("ns"), "cm");
        assert_eq!(
            (r.api_version.as_str(), r.kind.as_str()),
            ("v1", "ConfigMap")
        );
        let cm = ConfigMap {
            metadata: k8s::meta("ns", "cm"),
            data: Some([("k".to_string(), "v".to_string())].into()),
            ..Default::default()
        };
        let o = K8sObject::from_serialize(&cm).unwrap_or_default();
        assert_eq!(
            (o.kind.as_str(), o.namespace.as_deref()),
            ("ConfigMap", Some("ns"))
        );
        let back: ConfigMap = o.parse().unwrap_or_default();
        assert_eq!(back, cm);
        assert!(k8s::as_typed::<ConfigMap>(&o).is_some());
        assert!(k8s::as_typed::<k8s::api::core::v1::Secret>(&o).is_none());
    }
}
