//! The certificates of clusters: the three CAs and the admin client
//! certificate made for a cluster (and removed with it), the CA served by
//! `GET /v1/certificates`, the CSR signing of `POST /v1/certificates` and
//! the CA rotation of `PATCH /v1/certificates`.
//!
//! Magnum: magnum/conductor/handlers/common/cert_manager.py,
//! magnum/conductor/handlers/ca_conductor.py.

use magnum_domain::models::Cluster;
use magnum_domain::{MagnumError, RequestContext, Status};
use tokio::sync::oneshot;

use super::cluster_state::{call_context, driver_error};
use super::error::{Error, Result};
use super::Conductor;
use crate::certs::{
    CLIENT_CERT_NAME, CaKind, ClusterCertificates, KeyPair, Owner, SignError, Store, StoreError,
    sign_csr_with_key_pair,
};
use crate::notify::{Action, Outcome};

/// The cluster columns that hold certificate references, for a caller that
/// saves what [`Conductor::generate_cluster_certificates`] set.
pub const CERTIFICATE_COLUMNS: [&str; 4] = [
    "ca_cert_ref",
    "etcd_ca_cert_ref",
    "front_proxy_ca_cert_ref",
    "magnum_cert_ref",
];

/// Where a cluster's certificates were stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CertificateRefs {
    /// The Kubernetes CA (`ca_cert_ref`).
    pub kubernetes: String,
    /// The etcd CA (`etcd_ca_cert_ref`).
    pub etcd: String,
    /// The front-proxy CA (`front_proxy_ca_cert_ref`).
    pub front_proxy: String,
    /// The admin client certificate (`magnum_cert_ref`).
    pub client: String,
}

impl CertificateRefs {
    /// Sets the four reference columns of `cluster`.
    pub fn apply(&self, cluster: &mut Cluster) {
        cluster.ca_cert_ref = Some(self.kubernetes.clone());
        cluster.etcd_ca_cert_ref = Some(self.etcd.clone());
        cluster.front_proxy_ca_cert_ref = Some(self.front_proxy.clone());
        cluster.magnum_cert_ref = Some(self.client.clone());
    }

    fn all(&self) -> [&str; 4] {
        [&self.kubernetes, &self.etcd, &self.front_proxy, &self.client]
    }
}

/// The subject of a cluster's CAs: its name, or its UUID when it has none.
///
/// Magnum: cert_manager.py `_get_issuer_name`.
fn issuer(cluster: &Cluster) -> &str {
    if cluster.name.is_empty() {
        &cluster.uuid
    } else {
        &cluster.name
    }
}

/// The reference of the CA `kind` of `cluster`.
fn ca_ref(cluster: &Cluster, kind: CaKind) -> Option<&str> {
    match kind {
        CaKind::Kubernetes => cluster.ca_cert_ref.as_deref(),
        CaKind::Etcd => cluster.etcd_ca_cert_ref.as_deref(),
        CaKind::FrontProxy => cluster.front_proxy_ca_cert_ref.as_deref(),
    }
}

/// Stores the four certificates in Magnum's order for `owner`; on a
/// failure the ones already stored are removed again.
async fn put_all(
    store: &dyn Store,
    owner: Owner<'_>,
    issuer: &str,
    certs: &ClusterCertificates,
) -> std::result::Result<CertificateRefs, StoreError> {
    let mut refs: Vec<String> = Vec::with_capacity(4);
    let parts: [(&KeyPair, &str); 4] = [
        (&certs.kubernetes, issuer),
        (&certs.etcd, issuer),
        (&certs.front_proxy, issuer),
        (&certs.client, CLIENT_CERT_NAME),
    ];
    for (kp, name) in parts {
        match store.put(owner, kp, name).await {
            Ok(r) => refs.push(r),
            Err(e) => {
                // Deviation: Magnum leaves the rows it stored before the
                // failure.
                remove_all(store, refs.iter().map(String::as_str)).await;
                return Err(e);
            }
        }
    }
    let [kubernetes, etcd, front_proxy, client]: [String; 4] = refs
        .try_into()
        .map_err(|_| StoreError::Backend("four certificates were not stored".into()))?;
    Ok(CertificateRefs {
        kubernetes,
        etcd,
        front_proxy,
        client,
    })
}

/// Removes certificates nothing references any more; failures are logged.
async fn remove_all<'a>(store: &dyn Store, refs: impl IntoIterator<Item = &'a str>) {
    for r in refs {
        match store.delete(r).await {
            Ok(()) | Err(StoreError::NotFound(_)) => {}
            Err(e) => {
                tracing::warn!(reference = r, error = %e, "remove an unreferenced certificate");
            }
        }
    }
}

impl Conductor {
    /// Makes the cluster's three CAs (Kubernetes, etcd, front-proxy) and the
    /// admin client certificate as Magnum does at cluster creation, stores
    /// them for the caller of `ctx`, and sets `ca_cert_ref`,
    /// `etcd_ca_cert_ref`, `front_proxy_ca_cert_ref` and `magnum_cert_ref`
    /// on `cluster`. It does not write the cluster row: the caller saves
    /// [`CERTIFICATE_COLUMNS`].
    ///
    /// The keys are generated on the low-priority key threads. Dropping the
    /// returned future (a delete of the cluster while it is being created)
    /// stops the generation before its next key; certificates stored by the
    /// time it is dropped are removed again. Any failure is the 500
    /// `CertificatesToClusterFailed`, and nothing stays stored.
    ///
    /// Magnum: cert_manager.py `generate_certificates_to_cluster`.
    pub async fn generate_cluster_certificates(
        &self,
        ctx: &RequestContext,
        cluster: &mut Cluster,
    ) -> Result<()> {
        let refs = self.new_certificates(ctx, cluster).await?;
        refs.apply(cluster);
        Ok(())
    }

    async fn new_certificates(
        &self,
        ctx: &RequestContext,
        cluster: &Cluster,
    ) -> Result<CertificateRefs> {
        let failed = || Error::Client(MagnumError::certificates_to_cluster_failed(&cluster.uuid));
        let c = self.certificates();
        let issuer = issuer(cluster).to_owned();
        let generated = c
            .keys
            .cluster_certificates(issuer.clone(), c.x509.clone())
            .await
            .map_err(|e| {
                tracing::error!(cluster_uuid = %cluster.uuid, error = %e, "generate cluster certificates");
                failed()
            })?;
        // The four writes run to their end in a task of their own: a caller
        // that stops waiting cannot leave some of them half done, and what
        // was stored for it is removed.
        let store = c.store.clone();
        let (project_id, user_id) = (ctx.project_id.clone(), ctx.user_id.clone());
        let (tx, rx) = oneshot::channel();
        tokio::spawn(async move {
            let owner = Owner {
                project_id: &project_id,
                user_id: &user_id,
            };
            let stored = put_all(store.as_ref(), owner, &issuer, &generated).await;
            if let Err(Ok(refs)) = tx.send(stored) {
                remove_all(store.as_ref(), refs.all()).await;
            }
        });
        match rx.await {
            Ok(Ok(refs)) => Ok(refs),
            Ok(Err(e)) => {
                tracing::error!(cluster_uuid = %cluster.uuid, error = %e, "store cluster certificates");
                Err(failed())
            }
            Err(_) => {
                tracing::error!(cluster_uuid = %cluster.uuid, "the certificate store task ended without an answer");
                Err(failed())
            }
        }
    }

    /// Removes every certificate the cluster references (the three CAs and
    /// the client certificate) and clears the references on `cluster`
    /// (the caller saves the row, or deletes it). A reference whose
    /// certificate is already gone is cleared; a failure to delete one is
    /// logged, the others are still deleted, its reference stays, and the
    /// error says how many failed.
    ///
    /// Deviation: Magnum (`delete_certificates_from_cluster`) deletes only
    /// the Kubernetes CA and the client certificate, leaving the etcd and
    /// front-proxy CAs behind.
    pub async fn delete_cluster_certificates(&self, cluster: &mut Cluster) -> Result<()> {
        let store = self.certificates().store.clone();
        let uuid = cluster.uuid.clone();
        let mut failed = 0;
        for slot in [
            &mut cluster.ca_cert_ref,
            &mut cluster.magnum_cert_ref,
            &mut cluster.etcd_ca_cert_ref,
            &mut cluster.front_proxy_ca_cert_ref,
        ] {
            let Some(r) = slot.as_deref().filter(|r| !r.is_empty()) else {
                *slot = None;
                continue;
            };
            match store.delete(r).await {
                Ok(()) | Err(StoreError::NotFound(_)) => *slot = None,
                Err(e) => {
                    tracing::warn!(cluster_uuid = %uuid, error = %e, "delete a cluster certificate");
                    failed += 1;
                }
            }
        }
        if failed > 0 {
            return Err(Error::internal(
                format!("delete the certificates of cluster {uuid}"),
                format!("{failed} of them could not be deleted"),
            ));
        }
        Ok(())
    }

    /// The cluster's CA chosen by `ca_cert_type` (`etcd`, `front_proxy` or
    /// `front-proxy`; anything else is the Kubernetes CA) with its key. A
    /// missing reference or certificate is 404 `X509KeyPairNotFound`, as in
    /// Magnum.
    async fn load_ca(&self, cluster: &Cluster, ca_cert_type: Option<&str>) -> Result<KeyPair> {
        let kind = CaKind::from_ca_cert_type(ca_cert_type);
        let Some(r) = ca_ref(cluster, kind) else {
            return Err(MagnumError::x509_key_pair_not_found("None").into());
        };
        match self.certificates().store.get(r).await {
            Ok(kp) => Ok(kp),
            Err(StoreError::NotFound(_)) => Err(MagnumError::x509_key_pair_not_found(r).into()),
            Err(e) => Err(Error::internal(
                format!("read a CA of cluster {}", cluster.uuid),
                e,
            )),
        }
    }

    /// The PEM of the cluster's CA chosen by `ca_cert_type`, byte for byte
    /// as stored.
    ///
    /// Magnum: ca_conductor.py `get_ca_certificate`.
    pub async fn get_ca_certificate(
        &self,
        cluster: &Cluster,
        ca_cert_type: Option<&str>,
    ) -> Result<String> {
        Ok(self.load_ca(cluster, ca_cert_type).await?.certificate)
    }

    /// Signs the PEM CSR `csr` with the cluster's CA chosen by
    /// `ca_cert_type` under the `[x509]` options and returns the
    /// certificate PEM (no trailing newline). A malformed CSR is 400
    /// `InvalidCsr`, a refused critical extension 400
    /// `CertificateValidationError`.
    ///
    /// Magnum: ca_conductor.py `sign_certificate`, cert_manager.py
    /// `sign_node_certificate`.
    pub async fn sign_certificate(
        &self,
        cluster: &Cluster,
        csr: &str,
        ca_cert_type: Option<&str>,
    ) -> Result<String> {
        let ca = self.load_ca(cluster, ca_cert_type).await?;
        sign_csr_with_key_pair(&ca, csr.as_bytes(), &self.certificates().x509).map_err(|e| match e {
            SignError::Client(m) => Error::Client(m),
            SignError::Internal(reason) => Error::internal(
                format!("sign a certificate for cluster {}", cluster.uuid),
                reason,
            ),
        })
    }

    /// The cluster's three CAs and its admin client certificate, with their
    /// keys: what a driver that runs the control plane itself is handed. A
    /// missing reference or certificate is an error naming it.
    pub async fn cluster_key_pairs(&self, cluster: &Cluster) -> Result<ClusterCertificates> {
        let store = &self.certificates().store;
        let load = async |what: &str, r: &Option<String>| -> Result<KeyPair> {
            let Some(r) = r.as_deref().filter(|r| !r.is_empty()) else {
                return Err(Error::internal(
                    format!("cluster {}", cluster.uuid),
                    format!("it has no {what} certificate"),
                ));
            };
            store.get(r).await.map_err(|e| {
                Error::internal(format!("cluster {} {what} certificate", cluster.uuid), e)
            })
        };
        Ok(ClusterCertificates {
            kubernetes: load("Kubernetes CA", &cluster.ca_cert_ref).await?,
            etcd: load("etcd CA", &cluster.etcd_ca_cert_ref).await?,
            front_proxy: load("front-proxy CA", &cluster.front_proxy_ca_cert_ref).await?,
            client: load("client", &cluster.magnum_cert_ref).await?,
        })
    }

    /// Regenerates the cluster's CAs and client certificate and asks its
    /// driver to roll the cluster onto them (`PATCH /v1/certificates`);
    /// returns the cluster as saved.
    ///
    /// Checks, in order: the template's `tls_disabled` (400), the state
    /// guard (`*_COMPLETE`, else 400 `Updating a cluster when status is
    /// "<S>" is not supported.`), then the driver's `can_rotate_ca` (400
    /// `'rotate_ca_certificate' is not supported by this driver.`). Only
    /// then are the certificates generated and stored and the driver's
    /// `rotate_ca` called; its failure leaves the cluster UPDATE_FAILED
    /// with the error as `status_reason`, with the new certificates, and is
    /// returned. Success leaves it UPDATE_IN_PROGRESS. A refusal for the
    /// status and a failure send `magnum.cluster.update` with outcome
    /// `failure`.
    ///
    /// Deviation: Magnum regenerates and stores the new CAs before it asks
    /// the driver, so a driver that cannot rotate leaves the cluster
    /// UPDATE_FAILED with replaced CAs; here that refusal (same 400, same
    /// message) changes nothing.
    ///
    /// Magnum: ca_conductor.py `rotate_ca_certificate`.
    pub async fn rotate_ca(&self, ctx: &RequestContext, cluster: &Cluster) -> Result<Cluster> {
        let mut st = self.cluster_state(&cluster.uuid).await?;
        if st.template.tls_disabled == Some(true) {
            return Err(MagnumError::rotate_ca_non_tls().into());
        }
        let failure = |c: &Cluster, ngs: &[_]| {
            self.notifier()
                .cluster_event(ctx, c, ngs, Action::Update, Outcome::Failure);
        };
        match st.cluster.status {
            Some(s) if s.can_rotate_ca() => {}
            status => {
                failure(&st.cluster, &st.nodegroups);
                return Err(match status {
                    Some(s) => MagnumError::update_status_not_supported(s),
                    None => MagnumError::not_supported("Updating a cluster when status is \"None\""),
                }
                .into());
            }
        }
        let driver = self.driver_of(&st.template)?;
        let call = call_context(ctx);
        if let Err(e) = driver.can_rotate_ca(&call, &st).await {
            failure(&st.cluster, &st.nodegroups);
            return Err(driver_error(e));
        }
        let uuid = st.cluster.uuid.clone();
        let refs = match self.new_certificates(ctx, &st.cluster).await {
            Ok(r) => r,
            Err(e) => {
                self.mark_cluster_failed(&uuid, Status::UpdateFailed, &e.to_string())
                    .await;
                failure(&st.cluster, &st.nodegroups);
                return Err(e);
            }
        };
        refs.apply(&mut st.cluster);
        match driver.rotate_ca(&call, &st).await {
            Err(e) => {
                tracing::error!(cluster_uuid = %uuid, error = %e, "rotate the cluster's CAs");
                let mut row = st.cluster.clone();
                row.status = Some(Status::UpdateFailed);
                row.status_reason = Some(e.status_reason());
                self.save_rotation(&mut row).await;
                failure(&row, &st.nodegroups);
                Err(driver_error(e))
            }
            Ok(mut upd) => {
                let mut row = upd.cluster.take().unwrap_or_else(|| st.cluster.clone());
                refs.apply(&mut row);
                row.status = Some(Status::UpdateInProgress);
                row.status_reason = None;
                upd.cluster = Some(row.clone());
                self.save_driver_update(&upd).await?;
                tracing::info!(cluster_uuid = %uuid, "cluster CA rotation started");
                Ok(row)
            }
        }
    }

    /// Writes the new certificate references with the status and reason of
    /// `row` (a failed rotation keeps the new CAs, as Magnum saves them). A
    /// failure to write is logged: the rotation's error is what the caller
    /// gets.
    async fn save_rotation(&self, row: &mut Cluster) {
        let mut cols: Vec<&str> = CERTIFICATE_COLUMNS.to_vec();
        cols.extend(["status", "status_reason"]);
        if let Err(e) = self.db().q().update_cluster(row, &cols).await {
            tracing::error!(cluster_uuid = %row.uuid, error = %e, "save a failed CA rotation");
        }
    }
}
