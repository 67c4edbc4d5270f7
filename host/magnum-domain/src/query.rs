//! The shape of a read: whose rows a caller sees ([`Scope`],
//! [`TemplateScope`]), which page ([`ListOptions`]) and which columns of a
//! cluster list ([`ClusterView`]). The API builds them from a request, the
//! use cases pass them on, the database turns them into SQL.

/// The rows a caller may see.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Scope {
    /// Disables the project/user filter.
    pub all_projects: bool,
    /// Filters on `project_id`.
    pub project_id: String,
    /// Filters on `user_id` when `project_id` is empty (a token without a
    /// project, as Magnum's `_add_tenant_filters` does).
    pub user_id: String,
}

impl Scope {
    /// The scope of internal callers (conductor, reconciler).
    pub const ALL_PROJECTS: Scope = Scope {
        all_projects: true,
        project_id: String::new(),
        user_id: String::new(),
    };

    /// The scope of one project.
    pub fn project(project_id: impl Into<String>) -> Scope {
        Scope {
            project_id: project_id.into(),
            ..Scope::default()
        }
    }

    /// The scope of a user without a project.
    pub fn user(user_id: impl Into<String>) -> Scope {
        Scope {
            user_id: user_id.into(),
            ..Scope::default()
        }
    }
}

/// The pagination parameters of a list (Magnum's `marker`, `limit`,
/// `sort_key`, `sort_dir`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ListOptions {
    /// The uuid of the last row of the previous page (for quotas: the
    /// decimal id). Unknown: not found.
    pub marker: Option<String>,
    /// Caps the rows returned.
    pub limit: Option<u64>,
    /// A column of the table (default `id`); others are refused.
    pub sort_key: Option<String>,
    /// `asc` (default) or `desc`; others are refused.
    pub sort_dir: Option<String>,
}

/// The visibility of cluster templates for one caller (Magnum's template
/// queries, spec `api/logic.md` §3).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TemplateScope {
    /// The caller's own rows; `Scope::ALL_PROJECTS` shows every template
    /// (admin with an `*_all_projects` rule).
    pub scope: Scope,
    /// Adds public templates that are hidden (admins in requests without
    /// the all-projects rule). Public templates that are not hidden are
    /// always visible.
    pub public_hidden: bool,
}

impl TemplateScope {
    /// The templates `scope` owns, plus the public ones that are not
    /// hidden.
    pub fn new(scope: Scope) -> TemplateScope {
        TemplateScope {
            scope,
            public_hidden: false,
        }
    }
}

/// The columns a cluster list reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ClusterView {
    /// What `GET /v1/clusters` shows: uuid, name, cluster_template_id,
    /// keypair, docker_volume_size, labels, master_flavor_id, flavor_id,
    /// create_timeout, stack_id, status and health_status.
    Summary,
    /// What `GET /v1/clusters/detail` shows: every column but the four
    /// certificate references.
    Detail,
}
