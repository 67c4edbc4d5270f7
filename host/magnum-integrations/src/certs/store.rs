//! Where cluster certificates are kept (Magnum's cert manager backend,
//! `[certificates]/cert_manager_type`). A reference returned by
//! [`Store::put`] is what the cluster row stores in `ca_cert_ref`,
//! `magnum_cert_ref`, `etcd_ca_cert_ref` and `front_proxy_ca_cert_ref`.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use chrono::NaiveDateTime;
use futures::future::BoxFuture;
use magnum_domain::RequestContext;
use magnum_domain::models::X509KeyPair;

use super::KeyPair;

/// The name Magnum gives the admin client certificate in its certificate
/// store (`CONDUCTOR_CLIENT_NAME` in
/// magnum/conductor/handlers/common/cert_manager.py).
pub const CLIENT_CERT_NAME: &str = "Magnum-Conductor";

/// The supported values of `[certificates]/cert_manager_type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoreType {
    /// Certificates in the `x509keypair` table of the Magnum database.
    X509KeyPair,
    /// Each certificate as a Secret in the management namespace of the
    /// Cluster API driver.
    Kubernetes,
}

/// A `cert_manager_type` that cannot be served; the message names the
/// option and the supported values.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct StoreTypeError(String);

const SUPPORTED: &str = "set it to x509keypair (cluster certificates in the x509keypair table of the \
     database) or kubernetes (cluster certificates as Secrets in the management namespace of the \
     Cluster API driver)";

impl StoreType {
    /// The option's value for this store.
    pub fn as_str(self) -> &'static str {
        match self {
            StoreType::X509KeyPair => "x509keypair",
            StoreType::Kubernetes => "kubernetes",
        }
    }

    /// Decides which store serves `[certificates]/cert_manager_type`;
    /// `value` is `None` when no configuration file sets the option.
    ///
    /// Magnum's default is barbican. When the option is not set, the
    /// database store is used instead and the warning returned explains it;
    /// an explicit `barbican` or `local`, or an unknown value, is an error.
    pub fn resolve(
        value: Option<&str>,
    ) -> Result<(StoreType, Option<&'static str>), StoreTypeError> {
        let Some(value) = value else {
            // Deviation: Magnum's default (barbican) needs a Barbican
            // service; the database keeps the certificates instead.
            return Ok((
                StoreType::X509KeyPair,
                Some(
                    "[certificates]/cert_manager_type is not set: Magnum's default (barbican) is not \
                     supported, cluster certificates are stored in the database (x509keypair); set \
                     cert_manager_type = x509keypair to silence this warning",
                ),
            ));
        };
        match value {
            "x509keypair" => Ok((StoreType::X509KeyPair, None)),
            "kubernetes" => Ok((StoreType::Kubernetes, None)),
            "barbican" => Err(StoreTypeError(format!(
                "[certificates]/cert_manager_type = barbican is not supported: {SUPPORTED}"
            ))),
            "local" => Err(StoreTypeError(format!(
                "[certificates]/cert_manager_type = local is not supported (it keeps keys in files of \
                 one host): {SUPPORTED}"
            ))),
            other => Err(StoreTypeError(format!(
                "[certificates]/cert_manager_type = {other:?} is not a known certificate store: the \
                 supported values are x509keypair and kubernetes"
            ))),
        }
    }
}

/// Who a stored certificate belongs to: the caller of the request that
/// made it (Magnum stores `context.project_id` and `context.user_id`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Owner<'a> {
    pub project_id: &'a str,
    pub user_id: &'a str,
}

impl<'a> Owner<'a> {
    /// The caller of `ctx`.
    pub fn of(ctx: &'a RequestContext) -> Self {
        Owner {
            project_id: &ctx.project_id,
            user_id: &ctx.user_id,
        }
    }
}

/// An error of the storage behind a store (the database, the Kubernetes
/// API). Its text must not carry key material.
pub type RowsError = Box<dyn std::error::Error + Send + Sync>;

/// Why a store operation failed. No variant carries key material.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// `get` or `delete` of a reference that names nothing.
    #[error("certificate {0} not found")]
    NotFound(String),
    #[error("certificate store: {0}")]
    Backend(#[source] RowsError),
}

/// The future of a [`Store`] call: its answer, or why the store failed.
pub type Stored<'a, T> = BoxFuture<'a, Result<T, StoreError>>;

/// Keeps the certificates of clusters.
pub trait Store: Send + Sync {
    /// Stores `kp` for `owner` and returns its reference. `name` is the
    /// name Magnum gives the certificate (the issuer name for a CA,
    /// [`CLIENT_CERT_NAME`] for the admin client certificate); stores that
    /// have no use for it ignore it.
    fn put<'a>(&'a self, owner: Owner<'a>, kp: &'a KeyPair, name: &'a str) -> Stored<'a, String>;

    /// The certificate stored under `reference`.
    fn get<'a>(&'a self, reference: &'a str) -> Stored<'a, KeyPair>;

    /// Removes the certificate stored under `reference`.
    fn delete<'a>(&'a self, reference: &'a str) -> Stored<'a, ()>;
}

/// The `x509keypair` table as the x509keypair store needs it; the database
/// layer implements it. Lookups are by UUID only, in every project.
pub trait KeyPairRows: Send + Sync {
    /// Inserts `row` (its `id` is assigned by the table).
    fn insert_key_pair(&self, row: X509KeyPair) -> BoxFuture<'_, Result<(), RowsError>>;

    /// The row with `uuid`, if there is one.
    fn key_pair_by_uuid<'a>(
        &'a self,
        uuid: &'a str,
    ) -> BoxFuture<'a, Result<Option<X509KeyPair>, RowsError>>;

    /// Deletes the row with `uuid`; whether there was one.
    fn delete_key_pair<'a>(&'a self, uuid: &'a str) -> BoxFuture<'a, Result<bool, RowsError>>;
}

/// The x509keypair store: one row per certificate, as Magnum's x509keypair
/// cert manager writes them
/// (magnum/common/cert_manager/x509keypair_cert_manager.py): the PEM
/// certificate, the encrypted PKCS#8 key, its passphrase, no intermediates,
/// the owner's project and user, and a random UUID that is the reference.
pub struct X509KeyPairStore {
    rows: Arc<dyn KeyPairRows>,
    new_uuid: fn() -> String,
    now: fn() -> NaiveDateTime,
}

fn random_uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}

fn utc_now() -> NaiveDateTime {
    chrono::Utc::now().naive_utc()
}

impl X509KeyPairStore {
    /// The store over `rows`, with random version 4 UUIDs and `created_at`
    /// from the UTC clock.
    pub fn new(rows: Arc<dyn KeyPairRows>) -> Self {
        X509KeyPairStore {
            rows,
            new_uuid: random_uuid,
            now: utc_now,
        }
    }

    /// The same store making its UUIDs with `new_uuid` and its `created_at`
    /// with `now` (for tests).
    pub fn with_ids(mut self, new_uuid: fn() -> String, now: fn() -> NaiveDateTime) -> Self {
        self.new_uuid = new_uuid;
        self.now = now;
        self
    }
}

impl Store for X509KeyPairStore {
    fn put<'a>(&'a self, owner: Owner<'a>, kp: &'a KeyPair, _name: &'a str) -> Stored<'a, String> {
        Box::pin(async move {
            let uuid = (self.new_uuid)();
            let row = X509KeyPair {
                id: 0,
                uuid: uuid.clone(),
                project_id: owner.project_id.to_owned(),
                user_id: owner.user_id.to_owned(),
                certificate: Some(kp.certificate.clone()),
                private_key: Some(kp.private_key.clone()),
                intermediates: None,
                private_key_passphrase: Some(kp.passphrase.clone()),
                created_at: (self.now)(),
                updated_at: None,
            };
            self.rows
                .insert_key_pair(row)
                .await
                .map_err(StoreError::Backend)?;
            Ok(uuid)
        })
    }

    fn get<'a>(&'a self, reference: &'a str) -> Stored<'a, KeyPair> {
        Box::pin(async move {
            let row = self
                .rows
                .key_pair_by_uuid(reference)
                .await
                .map_err(StoreError::Backend)?
                .ok_or_else(|| StoreError::NotFound(reference.to_owned()))?;
            Ok(KeyPair {
                certificate: row.certificate.unwrap_or_default(),
                private_key: row.private_key.unwrap_or_default(),
                passphrase: row.private_key_passphrase.unwrap_or_default(),
            })
        })
    }

    fn delete<'a>(&'a self, reference: &'a str) -> Stored<'a, ()> {
        Box::pin(async move {
            if self
                .rows
                .delete_key_pair(reference)
                .await
                .map_err(StoreError::Backend)?
            {
                Ok(())
            } else {
                Err(StoreError::NotFound(reference.to_owned()))
            }
        })
    }
}

/// An in-memory `x509keypair` table (tests, and wiring without a
/// database): ids from 1 up, a unique `uuid`.
#[derive(Default)]
pub struct MemoryKeyPairRows {
    rows: Mutex<(i64, BTreeMap<String, X509KeyPair>)>,
}

impl MemoryKeyPairRows {
    /// Every row, by UUID.
    pub fn rows(&self) -> Vec<X509KeyPair> {
        self.lock().1.values().cloned().collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, (i64, BTreeMap<String, X509KeyPair>)> {
        // The data stays consistent: no code panics while holding the lock.
        self.rows.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The uniqueness error of [`MemoryKeyPairRows`].
#[derive(Debug, thiserror::Error)]
#[error("A key pair with UUID {0} already exists.")]
struct DuplicateUuid(String);

impl KeyPairRows for MemoryKeyPairRows {
    fn insert_key_pair(&self, mut row: X509KeyPair) -> BoxFuture<'_, Result<(), RowsError>> {
        let result = {
            let mut guard = self.lock();
            let (next_id, rows) = &mut *guard;
            if rows.contains_key(&row.uuid) {
                Err(Box::new(DuplicateUuid(row.uuid.clone())) as RowsError)
            } else {
                *next_id += 1;
                row.id = *next_id;
                rows.insert(row.uuid.clone(), row);
                Ok(())
            }
        };
        Box::pin(async move { result })
    }

    fn key_pair_by_uuid<'a>(
        &'a self,
        uuid: &'a str,
    ) -> BoxFuture<'a, Result<Option<X509KeyPair>, RowsError>> {
        let row = self.lock().1.get(uuid).cloned();
        Box::pin(async move { Ok(row) })
    }

    fn delete_key_pair<'a>(&'a self, uuid: &'a str) -> BoxFuture<'a, Result<bool, RowsError>> {
        let removed = self.lock().1.remove(uuid).is_some();
        Box::pin(async move { Ok(removed) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uuids() -> String {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static N: AtomicUsize = AtomicUsize::new(0);
        // Each test that needs fixed UUIDs builds its own store; the counter
        // only has to differ between calls.
        let n = N.fetch_add(1, Ordering::Relaxed) + 1;
        format!("{n:08}-1111-4111-8111-111111111111")
    }

    fn epoch() -> NaiveDateTime {
        NaiveDateTime::default()
    }

    fn key_pair() -> KeyPair {
        KeyPair {
            certificate: "-----BEGIN CERTIFICATE-----\nA\n-----END CERTIFICATE-----".into(),
            private_key:
                "-----BEGIN ENCRYPTED PRIVATE KEY-----\nB\n-----END ENCRYPTED PRIVATE KEY-----\n"
                    .into(),
            passphrase: "abcdefghijkl".into(),
        }
    }

    /// Ports TestX509KeyPairStore.
    #[tokio::test]
    async fn x509keypair_store_writes_magnums_rows() {
        let rows = Arc::new(MemoryKeyPairRows::default());
        let store = X509KeyPairStore::new(rows.clone()).with_ids(uuids, epoch);
        let kp = key_pair();
        let ctx = RequestContext {
            project_id: "p1".into(),
            user_id: "u1".into(),
            ..RequestContext::default()
        };
        let reference = store.put(Owner::of(&ctx), &kp, "cluster-1").await.unwrap();
        assert!(
            reference.ends_with("-1111-4111-8111-111111111111"),
            "{reference}"
        );
        let all = rows.rows();
        assert_eq!(all.len(), 1);
        let want = X509KeyPair {
            id: 1,
            uuid: reference.clone(),
            project_id: "p1".into(),
            user_id: "u1".into(),
            certificate: Some(kp.certificate.clone()),
            private_key: Some(kp.private_key.clone()),
            intermediates: None,
            private_key_passphrase: Some("abcdefghijkl".into()),
            created_at: epoch(),
            updated_at: None,
        };
        assert_eq!(all[0], want);
        // Without a request context the owner is empty.
        let second = store
            .put(Owner::default(), &kp, CLIENT_CERT_NAME)
            .await
            .unwrap();
        let row = rows.rows().into_iter().find(|r| r.uuid == second).unwrap();
        assert_eq!(
            (row.project_id.as_str(), row.user_id.as_str(), row.id),
            ("", "", 2)
        );
        assert_eq!(store.get(&reference).await.unwrap(), kp);
        store.delete(&reference).await.unwrap();
        assert!(
            matches!(store.get(&reference).await, Err(StoreError::NotFound(r)) if r == reference)
        );
        assert!(matches!(
            store.delete(&reference).await,
            Err(StoreError::NotFound(_))
        ));
        store.get(&second).await.unwrap();
    }

    #[tokio::test]
    async fn backend_errors_pass_through_and_show_no_key() {
        let rows = Arc::new(MemoryKeyPairRows::default());
        fn same() -> String {
            "22222222-2222-4222-8222-222222222222".into()
        }
        let store = X509KeyPairStore::new(rows).with_ids(same, epoch);
        let kp = key_pair();
        store.put(Owner::default(), &kp, "c").await.unwrap();
        let err = store.put(Owner::default(), &kp, "c").await.unwrap_err();
        let text = format!("{err} {err:?}");
        assert!(matches!(err, StoreError::Backend(_)), "{text}");
        assert!(
            !text.contains("BEGIN") && !text.contains("abcdefghijkl"),
            "{text}"
        );
        // A row written by another tool without a passphrase reads as an
        // empty one.
        let rows = Arc::new(MemoryKeyPairRows::default());
        rows.insert_key_pair(X509KeyPair {
            uuid: "u".into(),
            certificate: Some("c".into()),
            ..X509KeyPair::default()
        })
        .await
        .unwrap();
        let got = X509KeyPairStore::new(rows).get("u").await.unwrap();
        assert_eq!(
            (got.certificate.as_str(), got.passphrase.as_str()),
            ("c", "")
        );
    }

    /// Ports TestResolveStoreType.
    #[test]
    fn store_type_resolution() {
        assert!(matches!(
            StoreType::resolve(None),
            Ok((StoreType::X509KeyPair, Some(w))) if w.contains("barbican")
        ));
        assert_eq!(
            StoreType::resolve(Some("x509keypair")),
            Ok((StoreType::X509KeyPair, None))
        );
        assert_eq!(
            StoreType::resolve(Some("kubernetes")),
            Ok((StoreType::Kubernetes, None))
        );
        for (value, part) in [
            ("barbican", "cert_manager_type = barbican is not supported"),
            ("local", "cert_manager_type = local is not supported"),
            ("vault", r#""vault" is not a known certificate store"#),
        ] {
            let err = StoreType::resolve(Some(value)).unwrap_err().to_string();
            assert!(
                err.contains(part) && err.contains("x509keypair") && err.contains("kubernetes"),
                "{value}: {err}"
            );
        }
        assert_eq!(StoreType::Kubernetes.as_str(), "kubernetes");
        assert_eq!(StoreType::X509KeyPair.as_str(), "x509keypair");
    }
}
