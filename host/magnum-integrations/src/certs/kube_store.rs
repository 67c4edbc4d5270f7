//! The kubernetes certificate store (`[certificates]/cert_manager_type =
//! kubernetes`): one Opaque Secret per certificate in the management
//! namespace (`[capi]/namespace`), named `okm-cert-<uuid>`; the name is the
//! reference the cluster row keeps.
//!
//! Only Secrets carrying the store's label and name prefix are read or
//! deleted: any other reference is unknown ([`StoreError::NotFound`]), as
//! the delete of a certificate already gone is, matching the x509keypair
//! store.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{DeleteParams, PostParams, Preconditions};
use kube::{Api, Client};

use super::KeyPair;
use super::store::{Owner, Store, StoreError, Stored};

/// Prefixes the name of every certificate Secret; the rest is a random
/// UUID.
pub const CERT_SECRET_PREFIX: &str = "okm-cert-";
/// The label marking the Secrets the store owns, and its value.
pub const LABEL_MANAGED_BY: &str = "app.kubernetes.io/managed-by";
pub const MANAGED_BY: &str = "openkeel-magnum";
/// The namespace when `[capi]/namespace` is empty.
pub const DEFAULT_NAMESPACE: &str = "magnum-system";

// The data keys of a certificate Secret: the PEM certificate, the encrypted
// PKCS#8 PEM key as Magnum stores it, and its passphrase.
const KEY_CERT: &str = "tls.crt";
const KEY_KEY: &str = "tls.key";
const KEY_PASSPHRASE: &str = "passphrase";

// The name Magnum gives the certificate, and the caller that stored it
// (what the x509keypair rows record).
const ANNOTATION_NAME: &str = "magnum.openstack.org/certificate-name";
const ANNOTATION_PROJECT: &str = "magnum.openstack.org/project-id";
const ANNOTATION_USER: &str = "magnum.openstack.org/user-id";

/// The bound of each call to the API server.
const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// The kubernetes certificate store.
pub struct KubernetesStore {
    secrets: Api<Secret>,
    namespace: String,
    new_name: fn() -> String,
}

fn random_uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}

impl KubernetesStore {
    /// The store on the Secrets of `namespace` ([`DEFAULT_NAMESPACE`] when
    /// empty) reached through `client`, naming new Secrets with random
    /// version 4 UUIDs.
    pub fn new(client: Client, namespace: &str) -> KubernetesStore {
        let namespace = if namespace.is_empty() {
            DEFAULT_NAMESPACE
        } else {
            namespace
        };
        KubernetesStore {
            secrets: Api::namespaced(client, namespace),
            namespace: namespace.to_owned(),
            new_name: random_uuid,
        }
    }

    /// The same store making the `<uuid>` part of new names with `f` (for
    /// tests).
    pub fn with_names(mut self, f: fn() -> String) -> KubernetesStore {
        self.new_name = f;
        self
    }

    /// The store's Secret named `reference`: [`StoreError::NotFound`] when
    /// there is none, when `reference` is not a name the store writes, or
    /// when the Secret does not carry the store's label.
    async fn read(&self, reference: &str) -> Result<Secret, StoreError> {
        if !is_cert_secret_name(reference) {
            return Err(StoreError::NotFound(reference.to_owned()));
        }
        let got = bounded(self.secrets.get_opt(reference))
            .await
            .map_err(|e| self.backend("read", reference, e))?;
        match got {
            Some(s) if managed(&s) => Ok(s),
            _ => Err(StoreError::NotFound(reference.to_owned())),
        }
    }

    fn backend(&self, what: &str, name: &str, e: CallError) -> StoreError {
        StoreError::Backend(format!("{what} secret {}/{name}: {e}", self.namespace).into())
    }
}

/// Why a call to the API server failed (its text carries no data of the
/// Secret: the server's messages name objects, never their content).
#[derive(Debug, thiserror::Error)]
enum CallError {
    #[error("{0}")]
    Kube(#[from] kube::Error),
    #[error("no answer within {}s", CALL_TIMEOUT.as_secs())]
    Timeout,
}

async fn bounded<T>(
    f: impl std::future::Future<Output = Result<T, kube::Error>>,
) -> Result<T, CallError> {
    match tokio::time::timeout(CALL_TIMEOUT, f).await {
        Ok(r) => r.map_err(CallError::Kube),
        Err(_) => Err(CallError::Timeout),
    }
}

fn managed(s: &Secret) -> bool {
    s.metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(LABEL_MANAGED_BY))
        .is_some_and(|v| v == MANAGED_BY)
}

/// Whether `reference` can name a certificate Secret: the prefix, then a
/// non-empty part of lower-case letters, digits and dashes that does not
/// end with a dash, 253 characters at most.
pub fn is_cert_secret_name(reference: &str) -> bool {
    let Some(rest) = reference.strip_prefix(CERT_SECRET_PREFIX) else {
        return false;
    };
    !rest.is_empty()
        && reference.len() <= 253
        && rest
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !rest.ends_with('-')
}

fn text(data: &BTreeMap<String, ByteString>, key: &str) -> String {
    data.get(key)
        .map(|b| String::from_utf8_lossy(&b.0).into_owned())
        .unwrap_or_default()
}

fn is_api(e: &CallError, pred: fn(&kube::core::Status) -> bool) -> bool {
    matches!(e, CallError::Kube(kube::Error::Api(s)) if pred(s))
}

impl Store for KubernetesStore {
    fn put<'a>(&'a self, owner: Owner<'a>, kp: &'a KeyPair, name: &'a str) -> Stored<'a, String> {
        Box::pin(async move {
            let mut annotations = BTreeMap::from([(ANNOTATION_NAME.to_owned(), name.to_owned())]);
            if !owner.project_id.is_empty() {
                annotations.insert(ANNOTATION_PROJECT.into(), owner.project_id.into());
            }
            if !owner.user_id.is_empty() {
                annotations.insert(ANNOTATION_USER.into(), owner.user_id.into());
            }
            let secret_name = format!("{CERT_SECRET_PREFIX}{}", (self.new_name)());
            let bytes = |s: &str| ByteString(s.as_bytes().to_vec());
            let secret = Secret {
                metadata: ObjectMeta {
                    name: Some(secret_name.clone()),
                    namespace: Some(self.namespace.clone()),
                    labels: Some(BTreeMap::from([(
                        LABEL_MANAGED_BY.to_owned(),
                        MANAGED_BY.to_owned(),
                    )])),
                    annotations: Some(annotations),
                    ..ObjectMeta::default()
                },
                type_: Some("Opaque".into()),
                data: Some(BTreeMap::from([
                    (KEY_CERT.to_owned(), bytes(&kp.certificate)),
                    (KEY_KEY.to_owned(), bytes(&kp.private_key)),
                    (KEY_PASSPHRASE.to_owned(), bytes(&kp.passphrase)),
                ])),
                ..Secret::default()
            };
            bounded(self.secrets.create(&PostParams::default(), &secret))
                .await
                .map_err(|e| self.backend("create", &secret_name, e))?;
            Ok(secret_name)
        })
    }

    fn get<'a>(&'a self, reference: &'a str) -> Stored<'a, KeyPair> {
        Box::pin(async move {
            let s = self.read(reference).await?;
            let data = s.data.unwrap_or_default();
            Ok(KeyPair {
                certificate: text(&data, KEY_CERT),
                private_key: text(&data, KEY_KEY),
                passphrase: text(&data, KEY_PASSPHRASE),
            })
        })
    }

    fn delete<'a>(&'a self, reference: &'a str) -> Stored<'a, ()> {
        Box::pin(async move {
            let s = self.read(reference).await?;
            // Conditional on the UID read: a Secret that is not the one
            // read (replaced under the same name) is never removed.
            let dp = DeleteParams {
                preconditions: Some(Preconditions {
                    uid: s.metadata.uid.clone(),
                    resource_version: None,
                }),
                ..DeleteParams::default()
            };
            match bounded(self.secrets.delete(reference, &dp)).await {
                Ok(_) => Ok(()),
                Err(e)
                    if is_api(&e, kube::core::Status::is_not_found)
                        || is_api(&e, kube::core::Status::is_conflict) =>
                {
                    Err(StoreError::NotFound(reference.to_owned()))
                }
                Err(e) => Err(self.backend("delete", reference, e)),
            }
        })
    }
}

/// A client of the management cluster from `[capi]/kubeconfig` (a
/// kubeconfig file), or, when it is empty, the in-cluster service account
/// or the environment's kubeconfig (`KUBECONFIG`, `~/.kube/config`).
pub async fn management_client(kubeconfig: &str) -> Result<Client, String> {
    let config = if kubeconfig.is_empty() {
        kube::Config::infer()
            .await
            .map_err(|e| format!("Kubernetes client configuration: {e}"))?
    } else {
        let kc = kube::config::Kubeconfig::read_from(kubeconfig)
            .map_err(|e| format!("[capi]/kubeconfig {kubeconfig}: {e}"))?;
        kube::Config::from_custom_kubeconfig(kc, &kube::config::KubeConfigOptions::default())
            .await
            .map_err(|e| format!("[capi]/kubeconfig {kubeconfig}: {e}"))?
    };
    let mut config = config;
    // Named in the API server's audit log.
    config.headers.push((
        http::header::USER_AGENT,
        http::HeaderValue::from_static(concat!("openkeel-magnum/", env!("CARGO_PKG_VERSION"))),
    ));
    Client::try_from(config).map_err(|e| format!("Kubernetes client: {e}"))
}

#[cfg(test)]
#[path = "kube_store_tests.rs"]
mod tests;
