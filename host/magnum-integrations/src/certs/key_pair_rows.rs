//! The `x509keypair` table as the certificate store reads and writes it.

use futures::future::BoxFuture;
use magnum_domain::models::X509KeyPair;

use super::{KeyPairRows, RowsError};
use magnum_db::{Db, Error, Scope};

impl KeyPairRows for Db {
    fn insert_key_pair(&self, row: X509KeyPair) -> BoxFuture<'_, Result<(), RowsError>> {
        Box::pin(async move {
            let mut row = row;
            self.q()
                .create_x509keypair(&mut row)
                .await
                .map_err(|e| Box::new(e) as RowsError)
        })
    }

    fn key_pair_by_uuid<'a>(
        &'a self,
        uuid: &'a str,
    ) -> BoxFuture<'a, Result<Option<X509KeyPair>, RowsError>> {
        Box::pin(async move {
            match self
                .q()
                .get_x509keypair_by_uuid(uuid, &Scope::ALL_PROJECTS)
                .await
            {
                Ok(row) => Ok(Some(row)),
                Err(Error::NotFound(_)) => Ok(None),
                Err(e) => Err(Box::new(e) as RowsError),
            }
        })
    }

    fn delete_key_pair<'a>(&'a self, uuid: &'a str) -> BoxFuture<'a, Result<bool, RowsError>> {
        Box::pin(async move {
            match self.q().delete_x509keypair(uuid).await {
                Ok(()) => Ok(true),
                Err(Error::NotFound(_)) => Ok(false),
                Err(e) => Err(Box::new(e) as RowsError),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::certs::{KeyPair, Owner, Store, X509KeyPairStore};
    use std::sync::Arc;

    #[tokio::test]
    async fn the_x509keypair_store_works_on_the_table() {
        let dir = tempfile::tempdir().unwrap();
        let target = magnum_db::DbTarget::new(
            magnum_db::Dialect::Sqlite,
            format!("sqlite://{}", dir.path().join("m.db").display()),
        );
        let db = Db::open(&target).await.unwrap();
        magnum_db::upgrade(&db).await.unwrap();
        let store = X509KeyPairStore::new(Arc::new(db.clone()));
        let kp = KeyPair {
            certificate: "CERT".into(),
            private_key: "KEY".into(),
            passphrase: "PASS".into(),
        };
        let owner = Owner {
            project_id: "p1",
            user_id: "u1",
        };
        let r = store.put(owner, &kp, "ca").await.unwrap();
        let got = store.get(&r).await.unwrap();
        assert_eq!(
            (
                got.certificate.as_str(),
                got.private_key.as_str(),
                got.passphrase.as_str()
            ),
            ("CERT", "KEY", "PASS")
        );
        let row = db
            .q()
            .get_x509keypair_by_uuid(&r, &Scope::ALL_PROJECTS)
            .await
            .unwrap();
        assert_eq!(
            (row.project_id.as_str(), row.user_id.as_str()),
            ("p1", "u1")
        );
        store.delete(&r).await.unwrap();
        assert!(db.key_pair_by_uuid(&r).await.unwrap().is_none());
        assert!(!db.delete_key_pair(&r).await.unwrap());
    }
}
