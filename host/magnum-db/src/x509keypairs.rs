//! `x509keypair`: certificates and their encrypted keys
//! (`[certificates]/cert_manager_type = x509keypair`).

use magnum_domain::models::X509KeyPair;

use super::Result;
use super::columns::table;
use super::queries::{Columns, Cond, ListOptions, Queries, Scope};

table! {
    /// The `x509keypair` table.
    static TABLE: X509KeyPair = "x509keypair", marker "uuid" {
        created_at: time,
        updated_at: opt_time,
        uuid: string,
        certificate: text,
        private_key: text,
        project_id: string,
        user_id: string,
        intermediates: text,
        private_key_passphrase: text,
    }
}

/// Key pairs have a `user_id`: a caller without a project sees its own.
fn scoped(scope: &Scope) -> Result<Cond> {
    Cond::of_scope(scope, true)
}

impl Queries<'_> {
    /// The key pair with `uuid`.
    pub async fn get_x509keypair_by_uuid(
        &mut self,
        uuid: &str,
        scope: &Scope,
    ) -> Result<X509KeyPair> {
        self.get_by(&TABLE, scoped(scope)?, "uuid", uuid).await
    }

    /// Lists key pairs with Magnum's pagination.
    pub async fn list_x509keypairs(
        &mut self,
        scope: &Scope,
        o: &ListOptions,
    ) -> Result<Vec<X509KeyPair>> {
        self.list(&TABLE, Columns::All, scoped(scope)?, o).await
    }

    /// Inserts `v` and sets its id and `created_at`.
    pub async fn create_x509keypair(&mut self, v: &mut X509KeyPair) -> Result<()> {
        self.insert(&TABLE, v).await
    }

    /// Writes the named columns of `v` and sets `updated_at`.
    pub async fn update_x509keypair(&mut self, v: &mut X509KeyPair, cols: &[&str]) -> Result<()> {
        self.update(&TABLE, v, cols).await
    }

    /// Deletes the key pair with `uuid`.
    pub async fn delete_x509keypair(&mut self, uuid: &str) -> Result<()> {
        self.delete_by("x509keypair", "uuid", uuid).await
    }
}
