//! The certificates drivers read (the `cluster-secrets` import of the
//! driver contract): [`DriverSecrets`] implements
//! [`driver_host::SecretsAccess`] over the conductor's certificate
//! [`Store`], by the references in the cluster row, as the conductor reads
//! them (`ca_cert_ref`, `etcd_ca_cert_ref`, `front_proxy_ca_cert_ref`, and
//! `magnum_cert_ref` for the admin client certificate).
//!
//! The key pairs are handed over as stored: the PKCS#8 key encrypted, with
//! its passphrase. The driver host decrypts them for the drivers of
//! contract 1.1 and gives them as they are to those of 1.0.

use std::sync::Arc;

use driver_host::{ClusterCas, HostError, KeyPair as DriverKeyPair, Reply, SecretsAccess};
use magnum_domain::models::Cluster;

use super::{KeyPair, Store, StoreError};

/// A cluster's certificates from the certificate store. Cheap to clone.
#[derive(Clone)]
pub struct DriverSecrets {
    store: Arc<dyn Store>,
}

impl DriverSecrets {
    /// The certificates kept in `store`, the conductor's.
    pub fn new(store: Arc<dyn Store>) -> Self {
        DriverSecrets { store }
    }

    /// The certificate `what` of `cluster`, stored under `reference`. A
    /// missing reference or certificate is [`HostError::NotFound`]; the
    /// errors name the certificate, never its content.
    async fn load(
        &self,
        cluster: &Cluster,
        what: &str,
        reference: &Option<String>,
    ) -> Result<DriverKeyPair, HostError> {
        let Some(r) = reference.as_deref().filter(|r| !r.is_empty()) else {
            return Err(HostError::NotFound(format!(
                "cluster {} has no {what} certificate",
                cluster.uuid
            )));
        };
        match self.store.get(r).await {
            Ok(kp) => Ok(driver_key_pair(kp)),
            Err(StoreError::NotFound(_)) => Err(HostError::NotFound(format!(
                "the {what} certificate of cluster {} ({r})",
                cluster.uuid
            ))),
            Err(e) => Err(HostError::Other(format!(
                "read the {what} certificate of cluster {}: {e}",
                cluster.uuid
            ))),
        }
    }
}

impl SecretsAccess for DriverSecrets {
    fn cluster_cas<'a>(&'a self, cluster: &'a Cluster) -> Reply<'a, ClusterCas> {
        Box::pin(async move {
            Ok(ClusterCas {
                kubernetes: self
                    .load(cluster, "Kubernetes CA", &cluster.ca_cert_ref)
                    .await?,
                etcd: self
                    .load(cluster, "etcd CA", &cluster.etcd_ca_cert_ref)
                    .await?,
                front_proxy: self
                    .load(cluster, "front-proxy CA", &cluster.front_proxy_ca_cert_ref)
                    .await?,
                admin: self
                    .load(cluster, "admin client", &cluster.magnum_cert_ref)
                    .await?,
            })
        })
    }
}

/// A stored key pair as a driver reads it.
pub fn driver_key_pair(kp: KeyPair) -> DriverKeyPair {
    DriverKeyPair {
        cert_pem: kp.certificate,
        key_pem: kp.private_key,
        passphrase: kp.passphrase,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use magnum_domain::RequestContext;
    use magnum_domain::models::Cluster;

    use super::*;
    use crate::certs::{MemoryKeyPairRows, Owner, RowsError, Stored, X509KeyPairStore};

    fn owner() -> RequestContext {
        RequestContext {
            project_id: "p1".into(),
            user_id: "u1".into(),
            ..RequestContext::default()
        }
    }

    fn key_pair(n: u8) -> KeyPair {
        KeyPair {
            certificate: format!("-----BEGIN CERTIFICATE-----\n{n}\n-----END CERTIFICATE-----"),
            private_key: format!(
                "-----BEGIN ENCRYPTED PRIVATE KEY-----\n{n}\n-----END ENCRYPTED PRIVATE KEY-----\n"
            ),
            passphrase: format!("passphrase-{n}"),
        }
    }

    #[tokio::test]
    async fn pairs_are_read_by_the_references_of_the_row() {
        let rows = Arc::new(MemoryKeyPairRows::default());
        let store: Arc<dyn Store> = Arc::new(X509KeyPairStore::new(rows));
        let ctx = owner();
        let mut refs = Vec::new();
        for n in 1..=4 {
            let r = store
                .put(Owner::of(&ctx), &key_pair(n), "k8s")
                .await
                .expect("put");
            refs.push(Some(r));
        }
        let cluster = Cluster {
            uuid: "c1".into(),
            ca_cert_ref: refs[0].clone(),
            etcd_ca_cert_ref: refs[1].clone(),
            front_proxy_ca_cert_ref: refs[2].clone(),
            magnum_cert_ref: refs[3].clone(),
            ..Cluster::default()
        };
        let secrets = DriverSecrets::new(store.clone());
        assert_eq!(
            secrets.cluster_cas(&cluster).await,
            Ok(ClusterCas {
                kubernetes: driver_key_pair(key_pair(1)),
                etcd: driver_key_pair(key_pair(2)),
                front_proxy: driver_key_pair(key_pair(3)),
                admin: driver_key_pair(key_pair(4)),
            })
        );

        // A cluster without references.
        let bare = Cluster {
            uuid: "c2".into(),
            ..Cluster::default()
        };
        assert_eq!(
            secrets.cluster_cas(&bare).await,
            Err(HostError::NotFound(
                "cluster c2 has no Kubernetes CA certificate".into()
            ))
        );
        // One reference missing, or empty.
        for missing in [None, Some(String::new())] {
            let partial = Cluster {
                magnum_cert_ref: missing,
                ..cluster.clone()
            };
            assert_eq!(
                secrets.cluster_cas(&partial).await,
                Err(HostError::NotFound(
                    "cluster c1 has no admin client certificate".into()
                ))
            );
        }
        // A reference whose certificate is gone.
        let etcd = refs[1].clone().unwrap_or_default();
        store.delete(&etcd).await.expect("delete");
        assert_eq!(
            secrets.cluster_cas(&cluster).await,
            Err(HostError::NotFound(format!(
                "the etcd CA certificate of cluster c1 ({etcd})"
            )))
        );
    }

    /// A store whose backend fails.
    struct Broken;

    #[derive(Debug, thiserror::Error)]
    #[error("connection refused")]
    struct Refused;

    impl Store for Broken {
        fn put<'a>(
            &'a self,
            _owner: Owner<'a>,
            _kp: &'a KeyPair,
            _name: &'a str,
        ) -> Stored<'a, String> {
            Box::pin(async { Err(StoreError::Backend(Box::new(Refused) as RowsError)) })
        }

        fn get<'a>(&'a self, _reference: &'a str) -> Stored<'a, KeyPair> {
            Box::pin(async { Err(StoreError::Backend(Box::new(Refused) as RowsError)) })
        }

        fn delete<'a>(&'a self, _reference: &'a str) -> Stored<'a, ()> {
            Box::pin(async { Err(StoreError::Backend(Box::new(Refused) as RowsError)) })
        }
    }

    #[tokio::test]
    async fn a_store_failure_names_the_certificate() {
        let secrets = DriverSecrets::new(Arc::new(Broken));
        let cluster = Cluster {
            uuid: "c3".into(),
            ca_cert_ref: Some("r1".into()),
            ..Cluster::default()
        };
        assert_eq!(
            secrets.cluster_cas(&cluster).await,
            Err(HostError::Other(
                "read the Kubernetes CA certificate of cluster c3: certificate store: connection refused"
                    .into()
            ))
        );
    }
}
