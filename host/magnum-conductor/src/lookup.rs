//! Finding the resource a client names, with Magnum's answers: the rows a
//! caller may see, "UUID or name" identifiers (magnum/api/utils.py:99
//! `get_resource`) and the objects' `get()` that also takes a database id,
//! the 404 that names what the client sent, the 409 of an ambiguous name,
//! and the errors of a list page (unknown marker, bad sort key).
//!
//! Every resource module uses these the same way:
//!
//! ```ignore
//! let scope = lookup::scope(ctx);
//! let mut q = self.db().q();
//! match Ident::uuid_or_name(ident) {
//!     Ident::Uuid(u) => lookup::found(Kind::Cluster, ident, q.get_cluster_by_uuid(u, &scope).await),
//!     _ => lookup::single(Kind::Cluster, ident, q.get_clusters_by_name(ident, &scope).await),
//! }
//! ```

use magnum_domain::validation::is_uuid_like;
use magnum_domain::{MagnumError, RequestContext};

use super::Result;
use crate::db::{self, ListOptions, Scope};

/// How an identifier given by a client is looked up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ident<'a> {
    /// By database id.
    Id(i64),
    /// By the `uuid` column, with the string exactly as given: upper-case,
    /// brace-wrapped or dash-less UUIDs are UUID-like but never match.
    Uuid(&'a str),
    /// By name (names are not unique).
    Name(&'a str),
}

impl<'a> Ident<'a> {
    /// Path and body references of clusters, templates and federations
    /// (`magnum/api/utils.py:99`): a UUID-like string is a uuid, anything
    /// else a name, an integer included.
    pub fn uuid_or_name(s: &'a str) -> Ident<'a> {
        if is_uuid_like(s) {
            Ident::Uuid(s)
        } else {
            Ident::Name(s)
        }
    }

    /// The objects' `get()` (nodegroups, the template reference of a
    /// cluster create): an integer-like string (oslo.utils `is_int_like`:
    /// `str(int(s)) == s`, so `1` and `-1` but not `+1` or `01`) is a
    /// database id, then as [`Ident::uuid_or_name`]. A resource whose name
    /// is an integer or looks like a UUID cannot be reached by its name.
    pub fn id_uuid_or_name(s: &'a str) -> Ident<'a> {
        match s.parse::<i64>() {
            Ok(id) if id.to_string() == s => Ident::Id(id),
            _ => Ident::uuid_or_name(s),
        }
    }
}

/// The kinds of resource a client names, with Magnum's messages for them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Cluster,
    ClusterTemplate,
    NodeGroup,
    Federation,
    /// Quotas are never looked up by name; the kind gives the 404 of an
    /// unknown list marker (a quota id).
    Quota,
}

impl Kind {
    /// The 404 of `ident` (as the client sent it).
    pub fn not_found(self, ident: &str) -> MagnumError {
        match self {
            Kind::Cluster => MagnumError::cluster_not_found(ident),
            Kind::ClusterTemplate => MagnumError::cluster_template_not_found(ident),
            Kind::NodeGroup => MagnumError::node_group_not_found(ident),
            Kind::Federation => MagnumError::federation_not_found(ident),
            Kind::Quota => MagnumError::quota_not_found_by_id(ident),
        }
    }

    /// The 409 of a name that matches several visible resources.
    pub fn multiple(self) -> MagnumError {
        match self {
            Kind::Cluster => MagnumError::multiple_clusters(),
            Kind::ClusterTemplate => MagnumError::multiple_cluster_templates(),
            Kind::NodeGroup => MagnumError::multiple_node_groups(),
            Kind::Federation => MagnumError::multiple_federations(),
            Kind::Quota => MagnumError::conflict(""),
        }
    }
}

/// The row of a get by id or uuid: no row is the kind's 404 naming `ident`.
pub(crate) fn found<T>(kind: Kind, ident: &str, row: db::Result<T>) -> Result<T> {
    match row {
        Ok(t) => Ok(t),
        Err(db::Error::NotFound(_)) => Err(kind.not_found(ident).into()),
        Err(e) => Err(e.into()),
    }
}

/// The rows whose name matched `ident`: none is the kind's 404, one is the
/// answer, several are the kind's 409.
pub(crate) fn single<T>(kind: Kind, ident: &str, rows: db::Result<Vec<T>>) -> Result<T> {
    let mut rows = rows?;
    match rows.len() {
        0 => Err(kind.not_found(ident).into()),
        1 => Ok(rows.remove(0)),
        _ => Err(kind.multiple().into()),
    }
}

/// A page of a list read with `o`: an unknown marker is the kind's 404
/// naming the marker, a sort key that is not a column or a bad direction
/// Magnum's 400.
///
/// Magnum checks that the marker is visible to the caller before listing
/// (the list itself finds the marker row in any project): resource modules
/// look it up with the caller's scope first, with [`found`].
pub(crate) fn page<T>(kind: Kind, o: &ListOptions, rows: db::Result<Vec<T>>) -> Result<Vec<T>> {
    match rows {
        Ok(rows) => Ok(rows),
        Err(db::Error::InvalidSortKey(k)) => Err(MagnumError::invalid_sort_key(&k).into()),
        Err(db::Error::InvalidSortDir(d)) => Err(MagnumError::invalid_sort_dir(&d).into()),
        Err(db::Error::NotFound(_)) => {
            Err(kind.not_found(o.marker.as_deref().unwrap_or("")).into())
        }
        Err(e) => Err(e.into()),
    }
}

/// The rows the caller may see (Magnum's `_add_tenant_filters`): every
/// project for an admin whose `*_all_projects` rule passed (the handler
/// sets [`RequestContext::all_projects`]), else the caller's project, else
/// — a token without a project — the caller's user.
///
/// A context with neither a project nor a user (none of the
/// authenticators builds one) gets a scope the database refuses
/// ([`db::Error::EmptyScope`]) rather than rows of other callers.
pub fn scope(ctx: &RequestContext) -> Scope {
    if ctx.is_admin && ctx.all_projects {
        Scope::ALL_PROJECTS
    } else if !ctx.project_id.is_empty() {
        Scope::project(&ctx.project_id)
    } else {
        Scope::user(&ctx.user_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const U: &str = "4695611e-3049-49d0-8c7d-af52116c437b";

    #[test]
    fn identifiers() {
        assert_eq!(Ident::uuid_or_name(U), Ident::Uuid(U));
        assert_eq!(
            Ident::uuid_or_name("4695611E304949D08C7DAF52116C437B"),
            Ident::Uuid("4695611E304949D08C7DAF52116C437B"),
            "UUID-like, looked up as given"
        );
        assert_eq!(Ident::uuid_or_name("1"), Ident::Name("1"));
        assert_eq!(Ident::uuid_or_name("k8s"), Ident::Name("k8s"));
        assert_eq!(Ident::id_uuid_or_name("1"), Ident::Id(1));
        assert_eq!(Ident::id_uuid_or_name("-3"), Ident::Id(-3));
        assert_eq!(Ident::id_uuid_or_name("+1"), Ident::Name("+1"));
        assert_eq!(Ident::id_uuid_or_name("01"), Ident::Name("01"));
        assert_eq!(Ident::id_uuid_or_name(U), Ident::Uuid(U));
        assert_eq!(
            Ident::id_uuid_or_name("99999999999999999999"),
            Ident::Name("99999999999999999999")
        );
    }

    fn message<T: std::fmt::Debug>(r: Result<T>) -> (u16, String) {
        match r {
            Err(super::super::Error::Client(e)) => (e.status, e.message),
            other => panic!("not a client error: {other:?}"),
        }
    }

    #[test]
    fn answers_name_what_the_client_sent() {
        fn none<T>() -> db::Result<T> {
            Err(db::Error::NotFound("select cluster".into()))
        }
        assert_eq!(
            message(found::<()>(Kind::Cluster, "c1", none())),
            (404, "Cluster c1 could not be found.".into())
        );
        assert_eq!(
            message(found::<()>(Kind::NodeGroup, "ng", none())),
            (404, "Nodegroup ng could not be found.".into())
        );
        assert_eq!(
            message(single::<i32>(Kind::ClusterTemplate, "t", Ok(vec![]))),
            (404, "ClusterTemplate t could not be found.".into())
        );
        assert_eq!(single(Kind::Federation, "f", Ok(vec![7])).ok(), Some(7));
        assert_eq!(
            message(single(Kind::Federation, "f", Ok(vec![7, 8]))),
            (
                409,
                "Multiple federations exist with same name. Please use the federation uuid instead."
                    .into()
            )
        );
        let o = ListOptions {
            marker: Some("m1".into()),
            ..ListOptions::default()
        };
        assert_eq!(
            message(page::<()>(Kind::Cluster, &o, none())),
            (404, "Cluster m1 could not be found.".into())
        );
        assert_eq!(
            message(page::<()>(Kind::Quota, &o, none())),
            (404, "Quota could not be found: quota id m1 .".into())
        );
        assert_eq!(
            message(page::<()>(
                Kind::Cluster,
                &o,
                Err(db::Error::InvalidSortKey("node_count".into()))
            )),
            (
                400,
                "The sort_key value \"node_count\" is an invalid field for sorting".into()
            )
        );
        assert!(matches!(
            found::<()>(Kind::Cluster, "c", Err(db::Error::EmptyScope)),
            Err(super::super::Error::Db(db::Error::EmptyScope))
        ));
    }

    #[test]
    fn scopes() {
        let member = RequestContext {
            project_id: "p1".into(),
            user_id: "u1".into(),
            all_projects: true,
            ..RequestContext::default()
        };
        assert_eq!(scope(&member), Scope::project("p1"), "not an admin");
        let admin = RequestContext {
            is_admin: true,
            ..member.clone()
        };
        assert_eq!(scope(&admin), Scope::ALL_PROJECTS);
        let own = RequestContext {
            all_projects: false,
            ..admin
        };
        assert_eq!(scope(&own), Scope::project("p1"));
        let no_project = RequestContext {
            user_id: "u1".into(),
            ..RequestContext::default()
        };
        assert_eq!(scope(&no_project), Scope::user("u1"));
    }
}
