//! `x509keypair`: certificates and their encrypted keys
//! (`[certificates]/cert_manager_type = x509keypair`).

use magnum_domain::models::X509KeyPair;

use super::Result;
use super::columns::{self as c, Col, Reader, col};
use super::exec::{Arg, Kind};
use super::queries::{Cond, ListOptions, Queries, Scope, Table};

const COLS: &[Col] = &[
    col("created_at", Kind::Time),
    col("updated_at", Kind::Time),
    col("uuid", Kind::Text),
    col("certificate", Kind::Text),
    col("private_key", Kind::Text),
    col("project_id", Kind::Text),
    col("user_id", Kind::Text),
    col("intermediates", Kind::Text),
    col("private_key_passphrase", Kind::Text),
];

fn read(r: &mut Reader) -> Result<X509KeyPair> {
    Ok(X509KeyPair {
        id: r.id()?,
        created_at: r.time()?,
        updated_at: r.opt_time()?,
        uuid: r.string()?,
        certificate: r.text()?,
        private_key: r.text()?,
        project_id: r.string()?,
        user_id: r.string()?,
        intermediates: r.text()?,
        private_key_passphrase: r.text()?,
    })
}

fn write(v: &X509KeyPair) -> Vec<Arg> {
    vec![
        c::time(v.created_at),
        c::opt_time(v.updated_at),
        c::string(&v.uuid),
        c::text(&v.certificate),
        c::text(&v.private_key),
        c::string(&v.project_id),
        c::string(&v.user_id),
        c::text(&v.intermediates),
        c::text(&v.private_key_passphrase),
    ]
}

static TABLE: Table<X509KeyPair> = Table {
    name: "x509keypair",
    cols: COLS,
    marker_col: "uuid",
    read,
    write,
    id: |v| &mut v.id,
    created_at: |v| &mut v.created_at,
    updated_at: |v| &mut v.updated_at,
};

fn scoped(scope: &Scope) -> Result<Cond> {
    let mut c = Cond::default();
    c.scope(scope, true)?;
    Ok(c)
}

impl Queries<'_> {
    /// The key pair with `uuid`.
    pub async fn get_x509keypair_by_uuid(
        &mut self,
        uuid: &str,
        scope: &Scope,
    ) -> Result<X509KeyPair> {
        let mut c = scoped(scope)?;
        c.add("uuid = ?", [Arg::from(uuid)]);
        self.get_one(&TABLE, c).await
    }

    /// Lists key pairs with Magnum's pagination.
    pub async fn list_x509keypairs(
        &mut self,
        scope: &Scope,
        o: &ListOptions,
    ) -> Result<Vec<X509KeyPair>> {
        let c = scoped(scope)?;
        self.list(&TABLE, &TABLE.all(), c, o).await
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
        let mut c = Cond::default();
        c.add("uuid = ?", [Arg::from(uuid)]);
        self.delete_one("x509keypair", c).await
    }
}
