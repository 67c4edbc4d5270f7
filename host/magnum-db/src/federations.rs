//! `federation`: Magnum's federations (stored, never completed by Magnum's
//! conductor).

use magnum_domain::models::Federation;

use super::Result;
use super::columns::table;
use super::queries::{Columns, Cond, ListOptions, Queries, Scope};

table! {
    /// The `federation` table.
    static TABLE: Federation = "federation", marker "uuid" {
        created_at: time,
        updated_at: opt_time,
        project_id: string,
        uuid: string,
        name: string,
        hostcluster_id: text,
        member_ids: json_list,
        status: status,
        status_reason: text,
        properties: json_map,
    }
}

/// Federations have no `user_id`: a caller without a project sees none.
fn scoped(scope: &Scope) -> Result<Cond> {
    Cond::of_scope(scope, false)
}

impl Queries<'_> {
    /// The federation with `uuid`.
    pub async fn get_federation_by_uuid(
        &mut self,
        uuid: &str,
        scope: &Scope,
    ) -> Result<Federation> {
        self.get_by(&TABLE, scoped(scope)?, "uuid", uuid).await
    }

    /// The federations in scope whose name matches (case-insensitively, as
    /// on MariaDB), by id.
    pub async fn get_federations_by_name(
        &mut self,
        name: &str,
        scope: &Scope,
    ) -> Result<Vec<Federation>> {
        self.all_named(&TABLE, scoped(scope)?, name).await
    }

    /// Lists federations with Magnum's pagination.
    pub async fn list_federations(
        &mut self,
        scope: &Scope,
        o: &ListOptions,
    ) -> Result<Vec<Federation>> {
        self.list(&TABLE, Columns::All, scoped(scope)?, o).await
    }

    /// Inserts `v` (`member_ids` `[]` and `properties` `{}` when unset) and
    /// sets its id and `created_at`.
    pub async fn create_federation(&mut self, v: &mut Federation) -> Result<()> {
        v.member_ids.get_or_insert_with(Vec::new);
        v.properties.get_or_insert_with(Default::default);
        self.insert(&TABLE, v).await
    }

    /// Writes the named columns of `v` and sets `updated_at`.
    pub async fn update_federation(&mut self, v: &mut Federation, cols: &[&str]) -> Result<()> {
        self.update(&TABLE, v, cols).await
    }

    /// Deletes the federation with `uuid`.
    pub async fn delete_federation(&mut self, uuid: &str) -> Result<()> {
        self.delete_by("federation", "uuid", uuid).await
    }
}

#[cfg(test)]
mod tests {
    use magnum_domain::Status;
    use magnum_domain::models::{Federation, X509KeyPair};

    use crate::exec::Kind;
    use crate::testing::{Check, dialect_tests, migrated, string_map};
    use crate::{Dialect, Error, ListOptions, Scope};

    dialect_tests!(federations_and_key_pairs);

    /// Go `TestFederationsAndKeyPairs`.
    async fn federations_and_key_pairs(d: Dialect) {
        let db = migrated(d).await;
        let mut f = Federation {
            uuid: "f-1".into(),
            name: "fed-eu".into(),
            project_id: "p1".into(),
            hostcluster_id: Some("c-1".into()),
            status: Some(Status::CreateInProgress),
            properties: Some(string_map(&[("dns-zone", "example.com.")])),
            ..Federation::default()
        };
        db.q().create_federation(&mut f).await.check("create");
        let mut r = db
            .q()
            .rows(
                "raw",
                "SELECT member_ids, properties FROM federation",
                vec![],
                &[Kind::Text; 2],
            )
            .await
            .check("raw");
        assert_eq!(r.string().check("members"), "[]");
        assert_eq!(
            r.string().check("properties"),
            r#"{"dns-zone": "example.com."}"#
        );
        f.member_ids = Some(vec!["c-2".into(), "c-3".into()]);
        db.q()
            .update_federation(&mut f, &["member_ids"])
            .await
            .check("update");
        let p1 = Scope::project("p1");
        let got = db.q().get_federation_by_uuid("f-1", &p1).await.check("get");
        assert_eq!(got, f, "federation read back differs");
        let r = db
            .q()
            .get_federation_by_uuid("f-1", &Scope::project("p2"))
            .await;
        assert!(matches!(r, Err(Error::NotFound(_))), "other project: {r:?}");
        let r = db
            .q()
            .get_federation_by_uuid("f-1", &Scope::user("u"))
            .await;
        assert!(
            matches!(r, Err(Error::NotFound(_))),
            "caller without project: {r:?}"
        );
        let listed = db
            .q()
            .list_federations(&p1, &ListOptions::default())
            .await
            .check("list");
        assert_eq!(listed.len(), 1);
        db.q().delete_federation("f-1").await.check("delete");
        let r = db.q().delete_federation("f-1").await;
        assert!(matches!(r, Err(Error::NotFound(_))), "{r:?}");

        let mut kp = X509KeyPair {
            uuid: "kp-1".into(),
            project_id: "p1".into(),
            user_id: "u1".into(),
            certificate: Some(
                "-----BEGIN CERTIFICATE-----\nMII…\n-----END CERTIFICATE-----\n".into(),
            ),
            private_key: Some("-----BEGIN ENCRYPTED PRIVATE KEY-----\n…\n".into()),
            private_key_passphrase: Some("pass".into()),
            ..X509KeyPair::default()
        };
        db.q().create_x509keypair(&mut kp).await.check("create");
        let got = db
            .q()
            .get_x509keypair_by_uuid("kp-1", &Scope::ALL_PROJECTS)
            .await
            .check("get");
        assert_eq!(got, kp, "key pair read back differs");
        kp.intermediates = Some("chain".into());
        db.q()
            .update_x509keypair(&mut kp, &["intermediates"])
            .await
            .check("update");
        let got = db
            .q()
            .get_x509keypair_by_uuid("kp-1", &Scope::user("u1"))
            .await
            .check("by user");
        assert_eq!(got.intermediates.as_deref(), Some("chain"));
        db.q().delete_x509keypair("kp-1").await.check("delete");
        let r = db.q().delete_x509keypair("kp-1").await;
        assert!(matches!(r, Err(Error::NotFound(_))), "second delete: {r:?}");
    }
}
