//! Federations (magnum/api/controllers/v1/federation.py): stored, listed,
//! patched (members and properties) and deleted per project. No driver
//! implements them: Magnum's federation conductor raises
//! `NotImplementedError` for every operation after the API has answered.
//!
//! Deviation: Magnum never stores a federation (the cast fails in the
//! conductor, so a POST answers 202 and nothing is created); we store the
//! object the API built, save patches and delete rows at once, as Magnum's
//! own API tests simulate, so that the resource is usable.
//!
//! There is no all-projects rule for federations: every lookup is scoped
//! to the caller's project, admins included.

use magnum_domain::models::{Cluster, Federation, StringMap};
use magnum_domain::{MagnumError, RequestContext, Status};
use python_semantics::{Dict, PyValue};

use super::Conductor;
use super::error::Result;
use super::generate_name;
use super::lookup::{self, Ident, Kind};
use crate::db::{self, ListOptions};

/// What a federation POST gives, after the body checks: the attributes the
/// client set (`uuid` is validated by the API and discarded).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FederationCreate {
    pub name: Option<String>,
    pub hostcluster_id: Option<String>,
    pub member_ids: Option<Vec<String>>,
    pub status: Option<Status>,
    pub status_reason: Option<String>,
    pub properties: Option<StringMap>,
}

/// The federation's `as_dict()`: every column, in the object's field order,
/// as a JSON patch applies to it.
pub fn federation_doc(f: &Federation) -> Dict {
    let text = |s: &Option<String>| PyValue::from(s.clone());
    let members: Vec<PyValue> = f
        .member_ids
        .iter()
        .flatten()
        .map(|m| PyValue::from(m.as_str()))
        .collect();
    let properties: Dict = f
        .properties
        .iter()
        .flatten()
        .map(|(k, v)| (k.as_str(), PyValue::from(v.as_str())))
        .collect();
    [
        ("id", PyValue::from(f.id)),
        ("uuid", PyValue::from(f.uuid.as_str())),
        ("name", PyValue::from(f.name.as_str())),
        ("project_id", PyValue::from(f.project_id.as_str())),
        ("hostcluster_id", text(&f.hostcluster_id)),
        ("member_ids", PyValue::List(members)),
        ("status", PyValue::from(f.status.map(|s| s.as_str()))),
        ("status_reason", text(&f.status_reason)),
        ("properties", PyValue::Dict(properties)),
        ("created_at", time_value(Some(f.created_at))),
        ("updated_at", time_value(f.updated_at)),
    ]
    .into_iter()
    .collect()
}

/// A timestamp of a resource dictionary, as the API renders it.
fn time_value(t: Option<chrono::NaiveDateTime>) -> PyValue {
    PyValue::from(t.map(|t| {
        t.and_utc()
            .to_rfc3339_opts(chrono::SecondsFormat::AutoSi, false)
    }))
}

impl Conductor {
    /// The federation the caller names by uuid (a UUID-like identifier) or
    /// name, in the caller's project: none → 404 `Federation <ident> could
    /// not be found.`, a name used twice → 409.
    pub async fn get_federation(&self, ctx: &RequestContext, ident: &str) -> Result<Federation> {
        let scope = lookup::scope(ctx);
        let mut q = self.db().q();
        match Ident::uuid_or_name(ident) {
            Ident::Uuid(u) => lookup::found(
                Kind::Federation,
                ident,
                q.get_federation_by_uuid(u, &scope).await,
            ),
            _ => lookup::single(
                Kind::Federation,
                ident,
                q.get_federations_by_name(ident, &scope).await,
            ),
        }
    }

    /// The caller's federations with Magnum's pagination; the marker must
    /// be one of them (404 otherwise).
    pub async fn list_federations(
        &self,
        ctx: &RequestContext,
        page: &ListOptions,
    ) -> Result<Vec<Federation>> {
        let scope = lookup::scope(ctx);
        let mut q = self.db().q();
        if let Some(m) = page.marker.as_deref() {
            lookup::found(
                Kind::Federation,
                m,
                q.get_federation_by_uuid(m, &scope).await,
            )?;
        }
        lookup::page(
            Kind::Federation,
            page,
            q.list_federations(&scope, page).await,
        )
    }

    /// Creates a federation of the caller's project, with Magnum's checks
    /// in its order: a host cluster is named (400), it is a cluster the
    /// caller sees by uuid or name (404), `properties` are given (400) and
    /// hold a `dns-zone` (400). Without a name one is generated; the uuid
    /// is new; a status the client did not send is `CREATE_IN_PROGRESS`.
    ///
    /// Magnum: magnum/api/controllers/v1/federation.py:270-298.
    pub async fn create_federation(
        &self,
        ctx: &RequestContext,
        req: FederationCreate,
    ) -> Result<Federation> {
        let Some(host) = req.hostcluster_id.as_deref() else {
            return Err(MagnumError::federation_no_host_cluster().into());
        };
        self.get_cluster(ctx, host).await?;
        let Some(properties) = req.properties else {
            return Err(MagnumError::federation_no_properties().into());
        };
        if !properties.contains_key("dns-zone") {
            return Err(MagnumError::federation_no_dns_zone().into());
        }
        let mut f = Federation {
            uuid: self.new_uuid(),
            name: req.name.unwrap_or_else(|| generate_name("federation")),
            project_id: ctx.project_id.clone(),
            hostcluster_id: req.hostcluster_id,
            member_ids: req.member_ids,
            status: Some(req.status.unwrap_or(Status::CreateInProgress)),
            status_reason: req.status_reason,
            properties: Some(properties),
            ..Federation::default()
        };
        match self.db().q().create_federation(&mut f).await {
            Ok(()) => Ok(f),
            Err(db::Error::Duplicate { .. }) => {
                Err(MagnumError::federation_already_exists(&f.uuid).into())
            }
            Err(e) => Err(e.into()),
        }
    }

    /// The cluster a federation join or unjoin names: by uuid only (a name
    /// is not found), in the caller's project.
    pub async fn federation_member(&self, ctx: &RequestContext, uuid: &str) -> Result<Cluster> {
        let scope = lookup::scope(ctx);
        lookup::found(
            Kind::Cluster,
            uuid,
            self.db().q().get_cluster_by_uuid(uuid, &scope).await,
        )
    }

    /// Saves the members and properties of a patched federation (the only
    /// fields a PATCH may change) and returns the saved row; the federation
    /// must still be the caller's (404).
    pub async fn update_federation(
        &self,
        ctx: &RequestContext,
        uuid: &str,
        member_ids: Option<Vec<String>>,
        properties: Option<StringMap>,
    ) -> Result<Federation> {
        let scope = lookup::scope(ctx);
        self.db()
            .in_tx(|tx| {
                let (member_ids, properties) = (member_ids.clone(), properties.clone());
                let scope = scope.clone();
                Box::pin(async move {
                    let mut q = tx.for_update();
                    let mut f = lookup::found(
                        Kind::Federation,
                        uuid,
                        q.get_federation_by_uuid(uuid, &scope).await,
                    )?;
                    f.member_ids = member_ids;
                    f.properties = properties;
                    q.update_federation(&mut f, &["member_ids", "properties"])
                        .await?;
                    Ok(f)
                })
            })
            .await
    }

    /// Deletes the caller's federation `uuid` (404 when it is gone).
    pub async fn delete_federation(&self, ctx: &RequestContext, uuid: &str) -> Result<()> {
        let scope = lookup::scope(ctx);
        self.db()
            .in_tx(|tx| {
                let scope = scope.clone();
                Box::pin(async move {
                    let mut q = tx.for_update();
                    lookup::found(
                        Kind::Federation,
                        uuid,
                        q.get_federation_by_uuid(uuid, &scope).await,
                    )?;
                    lookup::found(Kind::Federation, uuid, q.delete_federation(uuid).await)
                })
            })
            .await
    }
}

#[cfg(test)]
mod tests {
    use magnum_domain::{RequestContext, Status};

    use super::FederationCreate;
    use crate::db::ListOptions;
    use crate::testing::TestConductor;

    fn member(project: &str) -> RequestContext {
        RequestContext {
            project_id: project.into(),
            user_id: "u1".into(),
            roles: vec!["member".into()],
            ..RequestContext::default()
        }
    }

    fn status<T: std::fmt::Debug>(r: super::Result<T>) -> (u16, String) {
        match r {
            Err(super::super::Error::Client(e)) => (e.status, e.message),
            other => panic!("want a client error, got {other:?}"),
        }
    }

    async fn with_cluster() -> TestConductor {
        let t = TestConductor::new().await;
        t.add_cluster().await;
        t
    }

    fn request() -> FederationCreate {
        FederationCreate {
            hostcluster_id: Some("c1".into()),
            properties: Some([("dns-zone".to_string(), "z.".to_string())].into()),
            ..FederationCreate::default()
        }
    }

    /// Go `TestFederationUseCases`.
    #[tokio::test]
    async fn federations_are_stored_found_updated_and_deleted() {
        let t = with_cluster().await;
        let c = &t.conductor;
        let p1 = member("p1");
        let f = c.create_federation(&p1, request()).await.unwrap();
        let (letter, rest) = f.name.split_once('-').unwrap();
        assert!(
            !letter.is_empty() && rest.ends_with("-federation"),
            "{}",
            f.name
        );
        assert_eq!(f.status, Some(Status::CreateInProgress));
        assert_eq!(f.uuid, "00000000-0000-4000-8000-000000000001");
        assert_eq!((f.project_id.as_str(), f.id > 0), ("p1", true));
        let got = c.get_federation(&p1, &f.name).await.unwrap();
        assert_eq!(got, f);
        assert_eq!(
            status(c.get_federation(&member("p2"), &f.uuid).await).0,
            404
        );
        let saved = c
            .update_federation(&p1, &f.uuid, Some(vec!["m1".into()]), f.properties.clone())
            .await
            .unwrap();
        assert_eq!(saved.member_ids, Some(vec!["m1".to_string()]));
        assert_eq!(saved.updated_at, Some(t.now()));
        assert_eq!(
            c.get_federation(&p1, &f.uuid).await.unwrap().member_ids,
            saved.member_ids
        );
        assert_eq!(
            status(c.delete_federation(&member("p2"), &f.uuid).await).0,
            404,
            "another project's"
        );
        c.delete_federation(&p1, &f.uuid).await.unwrap();
        assert_eq!(
            status(c.delete_federation(&p1, &f.uuid).await),
            (
                404,
                "Federation 00000000-0000-4000-8000-000000000001 could not be found.".into()
            )
        );
    }

    #[tokio::test]
    async fn create_checks_in_magnums_order() {
        let t = with_cluster().await;
        let c = &t.conductor;
        let p1 = member("p1");
        let none = FederationCreate {
            hostcluster_id: None,
            properties: None,
            ..request()
        };
        assert_eq!(
            status(c.create_federation(&p1, none).await).1,
            "No hostcluster specified. Please specify a hostcluster_id."
        );
        let unknown = FederationCreate {
            hostcluster_id: Some("nope".into()),
            properties: None,
            ..request()
        };
        assert_eq!(
            status(c.create_federation(&p1, unknown).await),
            (404, "Cluster nope could not be found.".into()),
            "the cluster before the properties"
        );
        let elsewhere = FederationCreate {
            hostcluster_id: Some("c1".into()),
            ..request()
        };
        assert_eq!(
            status(c.create_federation(&member("p2"), elsewhere).await).0,
            404
        );
        let no_props = FederationCreate {
            properties: None,
            ..request()
        };
        assert_eq!(
            status(c.create_federation(&p1, no_props).await).1,
            "Please specify a `properties` dict for the federation."
        );
        let no_zone = FederationCreate {
            properties: Some(Default::default()),
            ..request()
        };
        assert_eq!(
            status(c.create_federation(&p1, no_zone).await).1,
            "No DNS zone specified. Please specify a `dns-zone`."
        );
        let named = FederationCreate {
            name: Some("f1".into()),
            status: Some(Status::UpdateComplete),
            ..request()
        };
        let f = c.create_federation(&p1, named).await.unwrap();
        assert_eq!(
            (f.name.as_str(), f.status),
            ("f1", Some(Status::UpdateComplete))
        );
        assert_eq!(f.member_ids, Some(vec![]), "stored as []");
    }

    #[tokio::test]
    async fn members_by_uuid_only_and_lists_per_project() {
        let t = with_cluster().await;
        let c = &t.conductor;
        let p1 = member("p1");
        let uuid = "c1000000-0000-4000-8000-000000000001";
        assert_eq!(c.federation_member(&p1, uuid).await.unwrap().name, "c1");
        assert_eq!(status(c.federation_member(&p1, "c1").await).0, 404);
        for name in ["f1", "f2"] {
            let r = FederationCreate {
                name: Some(name.into()),
                ..request()
            };
            c.create_federation(&p1, r).await.unwrap();
        }
        let all = c
            .list_federations(&p1, &ListOptions::default())
            .await
            .unwrap();
        assert_eq!(all.len(), 2);
        let admin_elsewhere = RequestContext {
            is_admin: true,
            all_projects: false,
            ..member("p0")
        };
        let none = c
            .list_federations(&admin_elsewhere, &ListOptions::default())
            .await
            .unwrap();
        assert!(none.is_empty(), "admins see their own project only");
        let after = ListOptions {
            marker: Some(all[0].uuid.clone()),
            ..ListOptions::default()
        };
        let rest = c.list_federations(&p1, &after).await.unwrap();
        assert_eq!(
            rest.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(),
            ["f2"]
        );
        let unknown = ListOptions {
            marker: Some("00000000-0000-4000-8000-00000000ffff".into()),
            ..ListOptions::default()
        };
        assert_eq!(
            status(c.list_federations(&p1, &unknown).await).1,
            "Federation 00000000-0000-4000-8000-00000000ffff could not be found."
        );
        let dup = FederationCreate {
            name: Some("f1".into()),
            ..request()
        };
        c.create_federation(&p1, dup).await.unwrap();
        assert_eq!(status(c.get_federation(&p1, "f1").await).0, 409);
    }
}
