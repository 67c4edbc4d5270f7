//! `quotas`: one hard limit per (project, resource).

use magnum_domain::models::Quota;

use super::Result;
use super::columns::{self as c, Col, Reader, col};
use super::exec::{Arg, Kind};
use super::queries::{Cond, ListOptions, Queries, Table};

const COLS: &[Col] = &[
    col("created_at", Kind::Time),
    col("updated_at", Kind::Time),
    col("project_id", Kind::Text),
    col("resource", Kind::Text),
    col("hard_limit", Kind::Int),
];

fn read(r: &mut Reader) -> Result<Quota> {
    Ok(Quota {
        id: r.id()?,
        created_at: r.time()?,
        updated_at: r.opt_time()?,
        project_id: r.string()?,
        resource: r.string()?,
        hard_limit: r.int_or_zero()?,
    })
}

fn write(v: &Quota) -> Vec<Arg> {
    vec![
        c::time(v.created_at),
        c::opt_time(v.updated_at),
        c::string(&v.project_id),
        c::string(&v.resource),
        c::int(Some(v.hard_limit)),
    ]
}

static TABLE: Table<Quota> = Table {
    name: "quotas",
    cols: COLS,
    marker_col: "id",
    read,
    write,
    id: |v| &mut v.id,
    created_at: |v| &mut v.created_at,
    updated_at: |v| &mut v.updated_at,
};

/// Selects quota rows; no project lists every project (admin with
/// `all_tenants`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QuotaFilter {
    /// Keeps the quotas of this project.
    pub project_id: Option<String>,
}

fn project_resource(project_id: &str, resource: &str) -> Cond {
    let mut c = Cond::default();
    c.add(
        "project_id = ? AND resource = ?",
        [Arg::from(project_id), Arg::from(resource)],
    );
    c
}

impl Queries<'_> {
    /// The quota of (project, resource).
    pub async fn get_quota(&mut self, project_id: &str, resource: &str) -> Result<Quota> {
        self.get_one(&TABLE, project_resource(project_id, resource))
            .await
    }

    /// The quota with `id`.
    pub async fn get_quota_by_id(&mut self, id: i64) -> Result<Quota> {
        let mut c = Cond::default();
        c.add("id = ?", [Arg::Int(id)]);
        self.get_one(&TABLE, c).await
    }

    /// Lists quotas; the marker is a quota id in decimal.
    pub async fn list_quotas(&mut self, f: &QuotaFilter, o: &ListOptions) -> Result<Vec<Quota>> {
        let mut c = Cond::default();
        if let Some(p) = &f.project_id {
            c.add("project_id = ?", [Arg::from(p)]);
        }
        self.list(&TABLE, &TABLE.all(), c, o).await
    }

    /// Inserts `v` and sets its id and `created_at`; a second quota for
    /// (project, resource) → [`super::Error::Duplicate`].
    pub async fn create_quota(&mut self, v: &mut Quota) -> Result<()> {
        self.insert(&TABLE, v).await
    }

    /// Writes the named columns of `v` (normally `hard_limit`) and sets
    /// `updated_at`.
    pub async fn update_quota(&mut self, v: &mut Quota, cols: &[&str]) -> Result<()> {
        self.update(&TABLE, v, cols).await
    }

    /// Deletes the quota of (project, resource).
    pub async fn delete_quota(&mut self, project_id: &str, resource: &str) -> Result<()> {
        self.delete_one("quotas", project_resource(project_id, resource))
            .await
    }
}
