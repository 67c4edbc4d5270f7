//! The certificates of clusters: the three CAs and the admin client
//! certificate made for a cluster (and removed with it), the CA served by
//! `GET /v1/certificates`, the CSR signing of `POST /v1/certificates` and
//! the CA rotation of `PATCH /v1/certificates`.
//!
//! Magnum: magnum/conductor/handlers/common/cert_manager.py,
//! magnum/conductor/handlers/ca_conductor.py.

use driver_host::{ClusterState, Update};
use magnum_domain::models::Cluster;
use magnum_domain::transitions::Operation;
use magnum_domain::{MagnumError, RequestContext, Status};
use tokio::sync::oneshot;

use super::Conductor;
use super::cluster_state::failure;
use super::clusters::{Saved, call_ctx, call_error};
use super::driver_answers::{Call, Checked};
use super::error::{Error, Result};
use super::jobs::run_hook;
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
        [
            &self.kubernetes,
            &self.etcd,
            &self.front_proxy,
            &self.client,
        ]
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
        // was stored for it is removed. The caller acknowledges the
        // references it took, so that a caller dropped between the task's
        // answer and its reading leaves nothing stored either.
        let store = c.store.clone();
        let (project_id, user_id) = (ctx.project_id.clone(), ctx.user_id.clone());
        let (tx, rx) = oneshot::channel();
        let (ack_tx, ack_rx) = oneshot::channel::<()>();
        tokio::spawn(async move {
            let owner = Owner {
                project_id: &project_id,
                user_id: &user_id,
            };
            match put_all(store.as_ref(), owner, &issuer, &generated).await {
                Ok(refs) => {
                    if tx.send(Ok(refs.clone())).is_err() || ack_rx.await.is_err() {
                        remove_all(store.as_ref(), refs.all()).await;
                    }
                }
                Err(e) => {
                    let _ = tx.send(Err(e));
                }
            }
        });
        match rx.await {
            Ok(Ok(refs)) => {
                // Nothing awaits between the answer and its acknowledgement.
                let _ = ack_tx.send(());
                Ok(refs)
            }
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
            return Err(failure(
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
            Err(e) => Err(failure(format!("read a CA of cluster {}", cluster.uuid), e)),
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
        sign_csr_with_key_pair(&ca, csr.as_bytes(), &self.certificates().x509).map_err(
            |e| match e {
                SignError::Client(m) => Error::Client(m),
                SignError::Internal(reason) => failure(
                    format!("sign a certificate for cluster {}", cluster.uuid),
                    reason,
                ),
            },
        )
    }

    /// The cluster's three CAs and its admin client certificate, with their
    /// keys: what a driver that runs the control plane itself is handed. A
    /// missing reference or certificate is an error naming it.
    pub async fn cluster_key_pairs(&self, cluster: &Cluster) -> Result<ClusterCertificates> {
        let store = &self.certificates().store;
        let load = async |what: &str, r: &Option<String>| -> Result<KeyPair> {
            let Some(r) = r.as_deref().filter(|r| !r.is_empty()) else {
                return Err(failure(
                    format!("cluster {}", cluster.uuid),
                    format!("it has no {what} certificate"),
                ));
            };
            store
                .get(r)
                .await
                .map_err(|e| failure(format!("cluster {} {what} certificate", cluster.uuid), e))
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
                    None => {
                        MagnumError::not_supported("Updating a cluster when status is \"None\"")
                    }
                }
                .into());
            }
        }
        let driver = self.driver_of(&st.template)?;
        let call = call_ctx(ctx);
        if let Err(e) = driver.can_rotate_ca(&call, &st).await {
            failure(&st.cluster, &st.nodegroups);
            return Err(call_error(&driver, e));
        }
        let uuid = st.cluster.uuid.clone();
        let refs = match self.new_certificates(ctx, &st.cluster).await {
            Ok(r) => r,
            Err(e) => {
                // Only while the cluster is as it was read: a delete or an
                // update meanwhile keeps its status.
                self.mark_failed_if(
                    &uuid,
                    Status::UpdateFailed,
                    &e.to_string(),
                    st.cluster.status,
                )
                .await;
                failure(&st.cluster, &st.nodegroups);
                return Err(e);
            }
        };
        refs.apply(&mut st.cluster);
        let answer = driver.rotate_ca(&call, &st).await;
        let rotation = Call::new(Operation::RotateCa, "rotate-ca");
        match self.gate(&driver, rotation, &st, answer) {
            Err(e) => {
                tracing::error!(cluster_uuid = %uuid, error = %e, "rotate the cluster's CAs");
                let mut row = st.cluster.clone();
                row.status = Some(Status::UpdateFailed);
                row.status_reason = Some(e.status_reason());
                let upd = Checked::host(Update {
                    cluster: Some(row.clone()),
                    ..Update::default()
                });
                // The rotation's error is what the caller gets, whatever
                // the save does.
                let _ = self.save_rotation(&upd, &st, &refs).await;
                failure(&row, &st.nodegroups);
                Err(call_error(&driver, e))
            }
            Ok(upd) => {
                let mut upd = upd.into_update();
                let mut row = upd.cluster.take().unwrap_or_else(|| st.cluster.clone());
                refs.apply(&mut row);
                row.status = Some(Status::UpdateInProgress);
                row.status_reason = None;
                upd.cluster = Some(row.clone());
                self.save_rotation(&Checked::host(upd), &st, &refs).await?;
                tracing::info!(cluster_uuid = %uuid, "cluster CA rotation started");
                Ok(row)
            }
        }
    }

    /// Saves what the rotation of the CAs of `st` ends with (`upd`, which
    /// references the new certificates `refs`) with the clusters module's
    /// compare-and-swap ([`Conductor::save_update`]): when the cluster's
    /// status or `updated_at` changed since `st` was read (a delete, an
    /// update), nothing is written, the new certificates, referenced by
    /// nothing, are removed, and the error says the cluster changed. A
    /// failure to write removes them too.
    async fn save_rotation(
        &self,
        upd: &Checked,
        st: &ClusterState,
        refs: &CertificateRefs,
    ) -> Result<()> {
        let uuid = st.cluster.uuid.as_str();
        run_hook(&self.hooks().before_rotation_save, uuid).await;
        let e = match self.save_update(upd, st).await {
            Ok(Saved::Written(_) | Saved::Nothing) => return Ok(()),
            Ok(Saved::Stale) => failure(
                format!("rotate the CAs of cluster {uuid}"),
                "the cluster changed meanwhile; the rotation was not saved",
            ),
            Err(e) => e,
        };
        tracing::error!(cluster_uuid = %uuid, error = %e, "save a CA rotation");
        remove_all(self.certificates().store.as_ref(), refs.all()).await;
        Err(e)
    }
}

/// What the certificate tests of the conductor and of the API share: a
/// conductor over any database, clusters with their certificates, CSRs.
#[cfg(any(test, feature = "testing"))]
pub mod test_support {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};

    use driver_host::{DriverHost, DriverSettings, HostServices};
    use magnum_domain::models::{Cluster, ClusterTemplate, StringMap};
    use magnum_domain::{RequestContext, Status};
    use openssl::ec::{EcGroup, EcKey};
    use openssl::hash::MessageDigest;
    use openssl::nid::Nid;
    use openssl::pkey::PKey;
    use openssl::x509::{X509, X509NameBuilder, X509Req, X509ReqBuilder};

    use super::CERTIFICATE_COLUMNS;
    use crate::certs::{KeyGenerator, X509KeyPairStore, X509Options};
    use crate::db::{Db, ListOptions, Scope};
    use crate::notify::{Notifier, Sources};
    use crate::openstack::Static;
    use crate::{Certificates, Conductor, Parts, Settings};

    /// A conductor over `db` with the fake driver, certificates in `db`'s
    /// x509keypair table and numbered UUIDs.
    pub async fn conductor_over(db: Db) -> Conductor {
        let drivers = Arc::new(
            DriverHost::start(
                DriverSettings {
                    enabled_beta_drivers: vec!["fake".into()],
                    precompiled_cache_dir: test_support::compiled_drivers_dir(),
                    ..DriverSettings::default()
                },
                HostServices::default(),
            )
            .await
            .expect("the built-in drivers load"),
        );
        let counter = Arc::new(AtomicU64::new(0));
        let (notifier, _) = Notifier::recording("container-infra.test", Sources::default());
        Conductor::new(Parts {
            db: db.clone(),
            template_drivers: drivers.clone(),
            drivers,
            lookup: Arc::new(Static::new(true)),
            certificates: Certificates {
                store: Arc::new(X509KeyPairStore::new(Arc::new(db))),
                keys: Arc::new(KeyGenerator::start(1).expect("key generator")),
                x509: X509Options::default(),
            },
            notifier,
            settings: Settings::default(),
            clock: crate::wall_clock(),
            new_uuid: Arc::new(move || {
                let n = counter.fetch_add(1, Ordering::SeqCst) + 1;
                format!("00000000-0000-4000-8000-{n:012x}")
            }),
        })
    }

    /// A member of `project`.
    pub fn member(project: &str, user: &str) -> RequestContext {
        RequestContext {
            project_id: project.into(),
            user_id: user.into(),
            roles: vec!["member".into()],
            ..RequestContext::default()
        }
    }

    /// Labels from pairs.
    pub fn labels(pairs: &[(&str, &str)]) -> Option<StringMap> {
        Some(
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        )
    }

    /// Inserts a template of the fake driver and a cluster `name` of
    /// p1/u1, without certificates.
    pub async fn insert_cluster(
        c: &Conductor,
        name: &str,
        status: Status,
        tls_disabled: bool,
        labels: Option<StringMap>,
    ) -> Cluster {
        let mut q = c.db().q();
        let mut tpl = ClusterTemplate {
            uuid: c.new_uuid(),
            name: format!("tpl-{name}"),
            project_id: "p1".into(),
            user_id: "u1".into(),
            coe: Some("kubernetes".into()),
            server_type: Some("vm".into()),
            cluster_distro: Some("ubuntu".into()),
            driver: Some("fake".into()),
            tls_disabled: Some(tls_disabled),
            ..ClusterTemplate::default()
        };
        q.create_cluster_template(&mut tpl).await.expect("template");
        let mut cl = Cluster {
            uuid: c.new_uuid(),
            name: name.into(),
            project_id: "p1".into(),
            user_id: "u1".into(),
            cluster_template_id: tpl.uuid,
            status: Some(status),
            labels,
            ..Cluster::default()
        };
        q.create_cluster(&mut cl).await.expect("cluster");
        cl
    }

    /// [`insert_cluster`], then its certificates generated for p1/u1 and
    /// their references saved.
    pub async fn cluster_with_certificates(
        c: &Conductor,
        name: &str,
        status: Status,
        tls_disabled: bool,
        labels: Option<StringMap>,
    ) -> Cluster {
        let mut cl = insert_cluster(c, name, status, tls_disabled, labels).await;
        c.generate_cluster_certificates(&member("p1", "u1"), &mut cl)
            .await
            .expect("generate certificates");
        c.db()
            .q()
            .update_cluster(&mut cl, &CERTIFICATE_COLUMNS)
            .await
            .expect("save the references");
        cl
    }

    /// The cluster row as stored.
    pub async fn reload(c: &Conductor, uuid: &str) -> Cluster {
        c.db()
            .q()
            .get_cluster_by_uuid(uuid, &Scope::ALL_PROJECTS)
            .await
            .expect("cluster row")
    }

    /// The number of x509keypair rows.
    pub async fn key_pair_rows(db: &Db) -> usize {
        db.q()
            .list_x509keypairs(&Scope::ALL_PROJECTS, &ListOptions::default())
            .await
            .expect("list key pairs")
            .len()
    }

    /// A PEM CSR for `CN=cn` with a P-256 key.
    pub fn csr(cn: &str) -> String {
        let group = EcGroup::from_curve_name(Nid::X9_62_PRIME256V1).expect("P-256");
        let key = PKey::from_ec_key(EcKey::generate(&group).expect("EC key")).expect("key");
        let mut name = X509NameBuilder::new().expect("name");
        name.append_entry_by_nid(Nid::COMMONNAME, cn).expect("CN");
        let mut b = X509ReqBuilder::new().expect("request");
        b.set_subject_name(&name.build()).expect("subject");
        b.set_pubkey(&key).expect("public key");
        b.sign(&key, MessageDigest::sha256()).expect("sign");
        String::from_utf8(b.build().to_pem().expect("PEM")).expect("ASCII")
    }

    /// `csr` with a byte of its signature flipped.
    pub fn corrupt(csr: &str) -> String {
        let mut der = X509Req::from_pem(csr.as_bytes())
            .expect("CSR")
            .to_der()
            .expect("DER");
        let n = der.len();
        der[n - 3] ^= 0xff;
        let b64 = openssl::base64::encode_block(&der);
        let mut pem = String::from("-----BEGIN CERTIFICATE REQUEST-----\n");
        for chunk in b64.as_bytes().chunks(64) {
            pem.push_str(std::str::from_utf8(chunk).expect("base64"));
            pem.push('\n');
        }
        pem.push_str("-----END CERTIFICATE REQUEST-----\n");
        pem
    }

    /// The certificate of `cert_pem`, checked to be signed by `ca_pem`.
    pub fn verify(cert_pem: &str, ca_pem: &str) -> X509 {
        let cert = X509::from_pem(cert_pem.as_bytes()).expect("certificate PEM");
        let ca = X509::from_pem(ca_pem.as_bytes()).expect("CA PEM");
        let key = ca.public_key().expect("CA key");
        assert!(
            cert.verify(&key).expect("verify"),
            "the certificate is not signed by the CA"
        );
        cert
    }

    /// The first `nid` entry of a name, as text.
    pub fn name_entry(name: &openssl::x509::X509NameRef, nid: Nid) -> String {
        name.entries_by_nid(nid)
            .next()
            .map(|e| String::from_utf8_lossy(e.data().as_slice()).into_owned())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use magnum_domain::Status;
    use magnum_domain::models::{Cluster, X509KeyPair};
    use openssl::nid::Nid;

    use super::test_support::*;
    use super::*;
    use crate::certs::{X509KeyPairStore, X509Options, generate_ca};
    use crate::db::testing::{self as dbt, dialect_tests};
    use crate::db::{Dialect, Scope};
    use crate::jobs::JobHooks;
    use crate::testing::{TestConductor, outcomes};

    fn client_error<T: std::fmt::Debug>(r: Result<T>) -> MagnumError {
        match r {
            Err(Error::Client(e)) => e,
            other => panic!("not a client error: {other:?}"),
        }
    }

    fn expect_400<T: std::fmt::Debug>(r: Result<T>, message: &str) {
        let e = client_error(r);
        assert_eq!((e.status, e.message.as_str()), (400, message));
    }

    // Go TestCertificateStoreRoundTrip (per dialect).
    async fn store_round_trip(d: Dialect) {
        let db = dbt::migrated(d).await;
        let store = X509KeyPairStore::new(Arc::new(db.db.clone()));
        let ca = generate_ca("round-trip", &X509Options::default()).expect("CA");
        let owner = Owner {
            project_id: "proj-1",
            user_id: "user-1",
        };
        let r = store.put(owner, &ca, "round-trip").await.expect("put");
        assert!(magnum_domain::validation::is_uuid_like(&r), "{r}");
        let row: X509KeyPair = db
            .q()
            .get_x509keypair_by_uuid(&r, &Scope::ALL_PROJECTS)
            .await
            .expect("row");
        assert_eq!(
            (row.project_id.as_str(), row.user_id.as_str()),
            ("proj-1", "user-1")
        );
        assert_eq!(row.intermediates, None);
        assert_eq!(row.certificate.as_deref(), Some(ca.certificate.as_str()));
        assert_eq!(row.private_key.as_deref(), Some(ca.private_key.as_str()));
        assert_eq!(
            row.private_key_passphrase.as_deref(),
            Some(ca.passphrase.as_str())
        );
        assert!(
            ca.private_key
                .starts_with("-----BEGIN ENCRYPTED PRIVATE KEY-----"),
            "the key is not encrypted PKCS#8"
        );
        let got = store.get(&r).await.expect("get");
        assert_eq!(got, ca);
        got.key().expect("the stored key decrypts");
        store.delete(&r).await.expect("delete");
        assert!(matches!(store.get(&r).await, Err(StoreError::NotFound(_))));
        assert!(matches!(
            store.delete(&r).await,
            Err(StoreError::NotFound(_))
        ));
    }

    // Go TestSampleCertificates (per dialect): the x509keypair rows Python
    // Magnum wrote (spec/db/sample-data-mariadb.sql) are served byte for
    // byte, their keys decrypt and sign, and a delete removes four rows.
    async fn sample_certificates(d: Dialect) {
        let Some(spec) = dbt::spec_dir() else { return };
        let db = dbt::migrated(d).await;
        // The sample brings its own alembic_version row.
        dbt::exec_script(&db, "DELETE FROM alembic_version", dbt::no_skip).await;
        dbt::load_sample_rows(&db, &spec).await;
        let c = conductor_over(db.db.clone()).await;
        let mut q = db.q();
        let clusters = q
            .list_clusters(
                &crate::db::ClusterFilter::scope(Scope::ALL_PROJECTS),
                &Default::default(),
            )
            .await
            .expect("clusters");
        let rows = q
            .list_x509keypairs(&Scope::ALL_PROJECTS, &Default::default())
            .await
            .expect("key pairs");
        assert_eq!((clusters.len(), rows.len()), (3, 12), "the sample's rows");
        let by_uuid: std::collections::BTreeMap<&str, &X509KeyPair> =
            rows.iter().map(|r| (r.uuid.as_str(), r)).collect();
        let mut checked = 0;
        for cl in &clusters {
            for (ca_type, r) in [
                (None, &cl.ca_cert_ref),
                (Some("kubernetes"), &cl.ca_cert_ref),
                (Some("etcd"), &cl.etcd_ca_cert_ref),
                (Some("front_proxy"), &cl.front_proxy_ca_cert_ref),
                (Some("front-proxy"), &cl.front_proxy_ca_cert_ref),
            ] {
                let Some(want) = r.as_deref().and_then(|r| by_uuid.get(r)) else {
                    continue;
                };
                let got = c.get_ca_certificate(cl, ca_type).await.expect("CA");
                assert_eq!(
                    Some(got.as_str()),
                    want.certificate.as_deref(),
                    "{}",
                    cl.name
                );
                c.load_ca(cl, ca_type)
                    .await
                    .expect("CA")
                    .key()
                    .expect("Magnum's key decrypts");
                let signed = c
                    .sign_certificate(cl, &csr("node-1"), ca_type)
                    .await
                    .expect("sign");
                let cert = verify(&signed, &got);
                assert_eq!(name_entry(cert.issuer_name(), Nid::COMMONNAME), cl.name);
                assert_eq!(name_entry(cert.subject_name(), Nid::COMMONNAME), "node-1");
                checked += 1;
            }
        }
        assert_eq!(checked, 15, "(cluster, ca_cert_type) pairs checked");
        let mut first = clusters
            .iter()
            .find(|c| {
                c.magnum_cert_ref
                    .as_deref()
                    .is_some_and(|r| by_uuid.contains_key(r))
            })
            .cloned()
            .expect("a cluster with its four rows");
        let refs = [first.ca_cert_ref.clone(), first.etcd_ca_cert_ref.clone()];
        let before = key_pair_rows(&db).await;
        c.delete_cluster_certificates(&mut first)
            .await
            .expect("delete");
        assert_eq!(key_pair_rows(&db).await, before - 4);
        assert_eq!(cert_refs(&first), [&None; 4], "references cleared");
        for r in refs.iter().flatten() {
            assert!(matches!(
                db.q()
                    .get_x509keypair_by_uuid(r, &Scope::ALL_PROJECTS)
                    .await,
                Err(crate::db::Error::NotFound(_))
            ));
        }
    }

    dialect_tests!(store_round_trip, sample_certificates);

    // Go TestMagnumDatabaseCertificates: Magnum's own schema and rows in
    // MariaDB, adopted, serve the stored CAs and sign with them.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn magnum_database_certificates() {
        if !dbt::available(Dialect::MySql) {
            return;
        }
        let Some(db) = dbt::magnum_db(Dialect::MySql).await else {
            return;
        };
        crate::db::adopt(&db).await.expect("adopt");
        let c = conductor_over(db.db.clone()).await;
        let ctx = member(
            "8c1f4b2ba1c94e5c9a5d1f0e3b7a6d21",
            "2f0a6c9e3d8b4f1aa7e5c6d4b3a29180",
        );
        let cl = c.get_cluster(&ctx, "k8s-prod-1").await.expect("cluster");
        for ca_type in [None, Some("etcd"), Some("front_proxy")] {
            let got = c.get_ca_certificate(&cl, ca_type).await.expect("CA");
            let r = ca_ref(&cl, CaKind::from_ca_cert_type(ca_type)).expect("reference");
            let row = db
                .q()
                .get_x509keypair_by_uuid(r, &Scope::ALL_PROJECTS)
                .await
                .expect("row");
            assert_eq!(Some(got.as_str()), row.certificate.as_deref());
            let signed = c
                .sign_certificate(&cl, &csr("kubelet"), ca_type)
                .await
                .expect("sign");
            verify(&signed, &got);
        }
    }

    // Go TestGenerateClusterCertificates.
    #[tokio::test]
    async fn cluster_certificates_are_generated_stored_and_deleted() {
        let t = TestConductor::new().await;
        let c = &t.conductor;
        let mut cl = insert_cluster(c, "gen-1", Status::CreateInProgress, false, None).await;
        c.generate_cluster_certificates(&member("p1", "u1"), &mut cl)
            .await
            .expect("generate");
        let refs = [
            cl.ca_cert_ref.clone(),
            cl.etcd_ca_cert_ref.clone(),
            cl.front_proxy_ca_cert_ref.clone(),
            cl.magnum_cert_ref.clone(),
        ];
        let distinct: std::collections::BTreeSet<_> = refs.iter().flatten().collect();
        assert_eq!(distinct.len(), 4, "{refs:?}");
        assert_eq!(key_pair_rows(&t.db).await, 4);
        let mut cas = Vec::new();
        for ty in ["kubernetes", "etcd", "front-proxy"] {
            let pem = c.get_ca_certificate(&cl, Some(ty)).await.expect("CA");
            let ca = verify(&pem, &pem);
            assert_eq!(name_entry(ca.subject_name(), Nid::COMMONNAME), "gen-1");
            cas.push(pem);
        }
        assert!(cas[0] != cas[1] && cas[1] != cas[2], "three distinct CAs");
        let client = c
            .certificates()
            .store
            .get(cl.magnum_cert_ref.as_deref().unwrap_or_default())
            .await
            .expect("client certificate");
        let cc = verify(&client.certificate, &cas[0]);
        assert_eq!(name_entry(cc.subject_name(), Nid::COMMONNAME), "admin");
        assert_eq!(
            name_entry(cc.subject_name(), Nid::ORGANIZATIONNAME),
            "system:masters"
        );
        let row =
            t.db.q()
                .get_x509keypair_by_uuid(
                    cl.ca_cert_ref.as_deref().unwrap_or_default(),
                    &Scope::ALL_PROJECTS,
                )
                .await
                .expect("row");
        assert_eq!(
            (row.project_id.as_str(), row.user_id.as_str()),
            ("p1", "u1")
        );
        let pairs = c.cluster_key_pairs(&cl).await.expect("key pairs");
        assert_eq!(pairs.client.certificate, client.certificate);
        c.delete_cluster_certificates(&mut cl)
            .await
            .expect("delete");
        assert_eq!(key_pair_rows(&t.db).await, 0);
        c.delete_cluster_certificates(&mut cl)
            .await
            .expect("a second delete has nothing to do");
        assert!(
            c.cluster_key_pairs(&cl).await.is_err(),
            "no references, no key pairs"
        );
    }

    // Go TestGetCACertificateMissing.
    #[tokio::test]
    async fn a_missing_ca_is_magnums_404() {
        let t = TestConductor::new().await;
        let c = &t.conductor;
        let mut cl = insert_cluster(c, "nocerts", Status::CreateComplete, false, None).await;
        let e = client_error(c.get_ca_certificate(&cl, None).await);
        assert_eq!(
            (e.status, e.message.as_str()),
            (404, "A key pair None could not be found.")
        );
        let r = "3b6c8a52-1b0e-4bd7-9f0a-2a4b2b4c5d6e";
        cl.etcd_ca_cert_ref = Some(r.into());
        let e = client_error(c.get_ca_certificate(&cl, Some("etcd")).await);
        assert_eq!(
            (e.status, e.message),
            (404, format!("A key pair {r} could not be found."))
        );
    }

    // Go TestSignCertificateErrors.
    #[tokio::test]
    async fn bad_csrs_are_magnums_400() {
        let t = TestConductor::new().await;
        let c = &t.conductor;
        let cl = cluster_with_certificates(c, "sign-1", Status::CreateComplete, false, None).await;
        let e = client_error(c.sign_certificate(&cl, "fake-csr", None).await);
        assert_eq!(
            (e.status, e.kind, e.message.as_str()),
            (400, "InvalidCsr", "Received invalid csr b'fake-csr'.")
        );
        let e = client_error(c.sign_certificate(&cl, &corrupt(&csr("x")), None).await);
        assert_eq!(e.status, 400, "wrong signature: {}", e.message);
        assert!(
            e.message.starts_with("Received invalid csr "),
            "{}",
            e.message
        );
    }

    /// A conductor with one cluster of p1 named `name`, in `status`, with
    /// TLS, its certificates and the fake driver's `labels`.
    async fn rotation_cluster(
        name: &str,
        status: Status,
        driver: &[(&str, &str)],
    ) -> (TestConductor, Cluster) {
        let t = TestConductor::new().await;
        let driver = if driver.is_empty() {
            None
        } else {
            labels(driver)
        };
        let cl = cluster_with_certificates(&t.conductor, name, status, false, driver).await;
        (t, cl)
    }

    /// The fake driver's labels for a CA rotation it does not support.
    const NO_ROTATION: &[(&str, &str)] = &[("fake_no_ca_rotation", "true")];
    /// The fake driver's labels for a CA rotation that fails.
    const FAILING_ROTATION: &[(&str, &str)] = &[("fake_error", "rotate_ca")];

    /// The CA rotation of `cl` by its owner, u1 of p1.
    async fn rotate(t: &TestConductor, cl: &Cluster) -> Result<Cluster> {
        t.conductor.rotate_ca(&member("p1", "u1"), cl).await
    }

    /// Asserts that a CA rotation of `cl` is refused with a 400 `message`
    /// and stores no certificate.
    async fn expect_refused_rotation(t: &TestConductor, cl: &Cluster, message: &str) {
        let before = key_pair_rows(&t.db).await;
        expect_400(rotate(t, cl).await, message);
        assert_eq!(key_pair_rows(&t.db).await, before);
    }

    /// The four certificate references of a cluster, in
    /// [`CERTIFICATE_COLUMNS`] order.
    fn cert_refs(c: &Cluster) -> [&Option<String>; 4] {
        [
            &c.ca_cert_ref,
            &c.etcd_ca_cert_ref,
            &c.front_proxy_ca_cert_ref,
            &c.magnum_cert_ref,
        ]
    }

    // Go TestRotateCA: "success regenerates every certificate".
    #[tokio::test]
    async fn rotation_regenerates_every_certificate() {
        let (t, cl) = rotation_cluster("rot-ok", Status::CreateComplete, &[]).await;
        let c = &t.conductor;
        let rotated = rotate(&t, &cl).await.expect("rotation");
        let got = reload(c, &cl.uuid).await;
        assert_eq!(got.status, Some(Status::UpdateInProgress));
        assert_eq!(got.status_reason, None);
        assert_eq!(rotated.ca_cert_ref, got.ca_cert_ref);
        for (old, new) in cert_refs(&cl).into_iter().zip(cert_refs(&got)) {
            assert!(new.is_some() && new != old, "reference replaced");
        }
        c.get_ca_certificate(&got, None).await.expect("the new CA");
    }

    // Go TestRotateCA: "a driver that cannot rotate changes nothing".
    #[tokio::test]
    async fn a_driver_that_cannot_rotate_changes_nothing() {
        let (t, cl) = rotation_cluster("rot-no", Status::UpdateComplete, NO_ROTATION).await;
        let c = &t.conductor;
        expect_refused_rotation(
            &t,
            &cl,
            "'rotate_ca_certificate' is not supported by this driver.",
        )
        .await;
        let got = reload(c, &cl.uuid).await;
        assert_eq!(got.status, Some(Status::UpdateComplete));
        assert_eq!(cert_refs(&got), cert_refs(&cl), "references unchanged");
    }

    // Go TestRotateCA: "state guard" and "TLS disabled".
    #[tokio::test]
    async fn rotation_is_refused_in_progress_and_without_tls() {
        let t = TestConductor::new().await;
        for (name, status, tls_disabled, message, events) in [
            (
                "rot-busy",
                Status::CreateInProgress,
                false,
                "Updating a cluster when status is \"CREATE_IN_PROGRESS\" is not supported.",
                // The refusal is an update that failed, as Magnum notifies it.
                &["magnum.cluster.update failure"][..],
            ),
            (
                "rot-notls",
                Status::CreateComplete,
                true,
                "Rotating the CA certificate on a non-TLS cluster is not supported",
                &[],
            ),
        ] {
            let cl =
                cluster_with_certificates(&t.conductor, name, status, tls_disabled, None).await;
            expect_refused_rotation(&t, &cl, message).await;
            assert_eq!(outcomes(&t.notifications.take()), events, "{name}");
        }
    }

    // Go TestRotateCA: "driver failure leaves UPDATE_FAILED".
    #[tokio::test]
    async fn a_driver_failure_leaves_update_failed_with_the_new_cas() {
        let (t, cl) = rotation_cluster("rot-fail", Status::CreateComplete, FAILING_ROTATION).await;
        let c = &t.conductor;
        assert!(rotate(&t, &cl).await.is_err());
        assert_eq!(
            outcomes(&t.notifications.take()),
            ["magnum.cluster.update failure"]
        );
        let got: Cluster = reload(c, &cl.uuid).await;
        assert_eq!(got.status, Some(Status::UpdateFailed));
        assert!(got.status_reason.is_some_and(|r| !r.is_empty()));
        assert!(got.ca_cert_ref.is_some() && got.ca_cert_ref != cl.ca_cert_ref);
    }

    /// A hook that, between the rotation's read and its save, sets the
    /// cluster to `status` with `reason` (a delete or an update of another
    /// request).
    fn change_before_save(db: crate::db::Db, status: Status, reason: &'static str) -> JobHooks {
        JobHooks {
            before_rotation_save: Some(Arc::new(move |uuid: String| {
                let db = db.clone();
                Box::pin(async move {
                    db.q()
                        .set_cluster_status(&uuid, status, Some(reason))
                        .await
                        .expect("the concurrent change");
                }) as futures::future::BoxFuture<'static, ()>
            })),
            ..JobHooks::default()
        }
    }

    // A delete or an update between the CA rotation's read and its save is
    // never overwritten, whether the driver rotated or failed: the row
    // keeps that status, its reason and its certificate references, and
    // the new certificates, referenced by nothing, are removed.
    #[tokio::test]
    async fn a_change_during_a_ca_rotation_is_not_overwritten() {
        for (status, driver) in [
            (Status::DeleteInProgress, &[][..]),
            (Status::UpdateInProgress, &[]),
            (Status::DeleteInProgress, FAILING_ROTATION),
        ] {
            let (t, cl) = rotation_cluster("rot-race", Status::CreateComplete, driver).await;
            let c = &t.conductor;
            c.set_create_job_hooks(change_before_save(t.db.clone(), status, "meanwhile"));
            let rows = key_pair_rows(&t.db).await;
            let read = reload(c, &cl.uuid).await;
            assert!(rotate(&t, &cl).await.is_err());
            let got = reload(c, &cl.uuid).await;
            assert_eq!(
                (got.status, got.status_reason.as_deref()),
                (Some(status), Some("meanwhile")),
                "the change was overwritten"
            );
            assert_eq!(
                cert_refs(&got),
                cert_refs(&read),
                "certificate references replaced"
            );
            assert_eq!(key_pair_rows(&t.db).await, rows, "new certificates left");
            assert_eq!(
                c.get_ca_certificate(&got, None).await.expect("the CA"),
                c.get_ca_certificate(&read, None).await.expect("the CA")
            );
        }
    }

    // The credential rotation saves the driver's answer with the same
    // compare-and-swap: a delete between its read and its save keeps its
    // status; and an answer computed from rows read before a change
    // (as a driver that writes rows would give) writes nothing but the
    // driver's cluster id.
    #[tokio::test]
    async fn a_change_during_a_credential_rotation_is_not_overwritten() {
        let (t, cl) = rotation_cluster("cred-race", Status::CreateComplete, &[]).await;
        let c = &t.conductor;
        c.set_create_job_hooks(change_before_save(
            t.db.clone(),
            Status::DeleteInProgress,
            "meanwhile",
        ));
        c.rotate_credential(&member("p1", "u1"), &cl)
            .await
            .expect("rotation");
        let got = reload(c, &cl.uuid).await;
        assert_eq!(got.status, Some(Status::DeleteInProgress));
        assert_eq!(got.status_reason.as_deref(), Some("meanwhile"));

        let st = c.cluster_state(&cl.uuid).await.expect("rows");
        t.db.q()
            .set_cluster_status(&cl.uuid, Status::UpdateInProgress, Some("resizing"))
            .await
            .expect("the concurrent change");
        let mut answer = st.cluster.clone();
        answer.status = Some(Status::UpdateComplete);
        answer.api_address = Some("https://203.0.113.9:6443".into());
        answer.stack_id = Some("driver-id-1".into());
        c.save_answer(
            &st,
            Checked::host(Update {
                cluster: Some(answer),
                ..Update::default()
            }),
        )
        .await;
        let got = reload(c, &cl.uuid).await;
        assert_eq!(
            (got.status, got.status_reason.as_deref(), got.api_address),
            (
                Some(Status::UpdateInProgress),
                Some("resizing"),
                st.cluster.api_address
            ),
            "the newer row was overwritten"
        );
        assert_eq!(got.stack_id.as_deref(), Some("driver-id-1"));
    }

    /// The second line of a PEM block: 64 characters of its base64 body.
    fn pem_body_line(pem: &str) -> String {
        pem.lines().nth(1).unwrap_or_default().to_owned()
    }

    // No private key, passphrase or CSR is ever logged, at any level: the
    // generation, a signing, a refused CSR and a CA rotation whose driver
    // fails (which logs its error) log none of them.
    #[tokio::test]
    async fn no_key_passphrase_or_csr_is_logged() {
        let logs = ::test_support::logs::capture(tracing::Level::TRACE);
        let (t, cl) = rotation_cluster("logs", Status::CreateComplete, FAILING_ROTATION).await;
        let c = &t.conductor;
        let request = csr("node-1");
        c.sign_certificate(&cl, &request, None).await.expect("sign");
        assert!(
            c.sign_certificate(&cl, &corrupt(&request), None)
                .await
                .is_err()
        );
        let rotation = rotate(&t, &cl).await;
        assert!(rotation.is_err());
        let rows =
            t.db.q()
                .list_x509keypairs(&Scope::ALL_PROJECTS, &Default::default())
                .await
                .expect("key pairs");
        assert_eq!(rows.len(), 8, "the first four and the rotation's");
        let text = logs.text();
        assert!(
            text.contains("rotate the cluster's CAs"),
            "the driver's failure was not logged: the capture is broken ({rotation:?}):\n{text}"
        );
        for marker in ["PRIVATE KEY", "CERTIFICATE REQUEST"] {
            assert!(!text.contains(marker), "{marker} logged");
        }
        assert!(!text.contains(&pem_body_line(&request)), "the CSR logged");
        for r in &rows {
            let key = r.private_key.as_deref().unwrap_or_default();
            let pass = r.private_key_passphrase.as_deref().unwrap_or_default();
            assert!(!key.is_empty() && !pass.is_empty());
            assert!(!text.contains(&pem_body_line(key)), "a private key logged");
            assert!(!text.contains(pass), "a passphrase logged");
        }
    }
}
