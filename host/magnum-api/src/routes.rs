//! The v1 route table (`spec/api/routes.md` §2) as data, and the dispatcher
//! that reproduces pecan's routing: which handler a (method, path) reaches,
//! with which path arguments, or which 404/405 answers it.
//!
//! A row of the table is a route's declaration ([`Route`]: method, pattern,
//! microversions, success status, query and body arguments, policy rules)
//! and its handler ([`Route::to`]): a row cannot be written without one.
//! The handler receives the path arguments its pattern declares, typed
//! ([`PathArgs`]), in [`Call::path`].

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use axum::response::Response;
use futures::future::BoxFuture;
use http::{Method, StatusCode};
use magnum_domain::microversion::Version;

use crate::views::Form;
use crate::{ApiError, Call, Services};
use crate::{certificates, credentials, errors, mservices, stats, versions};
use crate::{cluster_templates, clusters, federations, nodegroups, quotas};

/// The WSME type of a declared query parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamType {
    /// `wtypes.text`: any value.
    Text,
    /// `int`: Python `int()` of the value.
    Int,
    /// `types.uuid`: a UUID-like string.
    Uuid,
    /// `types.boolean`: a strict oslo boolean string.
    Bool,
}

/// A declared query parameter of a handler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Param {
    pub name: &'static str,
    pub kind: ParamType,
}

const fn p(name: &'static str, kind: ParamType) -> Param {
    Param { name, kind }
}

/// The declaration of one handler of the v1 API. Several routes share a
/// method and pattern when the handler has microversion variants.
#[derive(Clone, Debug)]
pub struct Route {
    /// `<controller>.<method>` as in Magnum, with the variant's minimum
    /// version appended when there are several (`cluster.patch@1.3`).
    pub id: &'static str,
    /// The row of routes.md (`6'` for a variant).
    pub number: &'static str,
    pub method: Method,
    /// The path; `{name}` segments are path arguments named as the WSME
    /// arguments of the Magnum handler (they appear in "Missing argument").
    pub pattern: &'static str,
    /// The microversions served, inclusive; `None` for unversioned handlers.
    pub versions: Option<(Version, Version)>,
    /// The success status.
    pub status: u16,
    /// The declared query parameters in the handler's signature order; any
    /// other one is refused with 400 `Unknown argument`.
    pub query: &'static [Param],
    /// The WSME body argument, named in "Missing argument" messages.
    pub body_arg: Option<&'static str>,
    /// The policy rules the handler evaluates, in order (documentation).
    pub policy: &'static [&'static str],
}

impl Route {
    /// A route of every microversion without query, body or policy, with
    /// the usual success status of its method: 200 for GET, 204 for
    /// DELETE, 202 otherwise ([`Route::status`] changes it).
    pub fn new(
        id: &'static str,
        number: &'static str,
        method: Method,
        pattern: &'static str,
    ) -> Route {
        let status = match method {
            Method::GET => 200,
            Method::DELETE => 204,
            _ => 202,
        };
        Route {
            id,
            number,
            method,
            pattern,
            versions: None,
            status,
            query: &[],
            body_arg: None,
            policy: &[],
        }
    }

    /// A GET route.
    pub fn get(id: &'static str, number: &'static str, pattern: &'static str) -> Route {
        Route::new(id, number, Method::GET, pattern)
    }

    /// A POST route with its WSME body argument.
    pub fn post(
        id: &'static str,
        number: &'static str,
        pattern: &'static str,
        body_arg: &'static str,
    ) -> Route {
        Route::new(id, number, Method::POST, pattern).body(body_arg)
    }

    /// A PATCH route.
    pub fn patch(id: &'static str, number: &'static str, pattern: &'static str) -> Route {
        Route::new(id, number, Method::PATCH, pattern)
    }

    /// A DELETE route.
    pub fn delete(id: &'static str, number: &'static str, pattern: &'static str) -> Route {
        Route::new(id, number, Method::DELETE, pattern)
    }

    /// Served from microversion `lo` to `hi`, inclusive.
    pub fn versions(self, lo: Version, hi: Version) -> Route {
        Route {
            versions: Some((lo, hi)),
            ..self
        }
    }

    /// Answering `status` on success.
    pub fn status(self, status: u16) -> Route {
        Route { status, ..self }
    }

    /// With the declared query parameters `query`.
    pub fn query(self, query: &'static [Param]) -> Route {
        Route { query, ..self }
    }

    /// With the WSME body argument `arg`.
    pub fn body(self, arg: &'static str) -> Route {
        Route {
            body_arg: Some(arg),
            ..self
        }
    }

    /// Documents the policy rules the handler evaluates, in order.
    pub fn policy(self, rules: &'static [&'static str]) -> Route {
        Route {
            policy: rules,
            ..self
        }
    }

    /// The row of the table: this route served by `handler`, which receives
    /// the state `S` its rows share and the call with the path arguments
    /// `P` of the pattern. Panics (at start-up, when the table is built)
    /// when `P` does not take as many arguments as the pattern declares.
    pub fn to<S, P, F, Fut>(self, handler: F) -> Row<S>
    where
        P: PathArgs,
        F: Fn(S, Call<P>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Response, ApiError>> + Send + 'static,
    {
        let declared = self.path_args().count();
        assert_eq!(
            declared,
            P::COUNT,
            "route {}: the handler takes {} path arguments, {} declares {declared}",
            self.id,
            P::COUNT,
            self.pattern
        );
        self.untyped(move |state, call: Call<Vec<String>>| {
            handler(state, call.with_path(P::from_values))
        })
    }

    /// The row served by `handler`, which receives the values of the path
    /// arguments as they are, in pattern order ([`Route::to`] types them).
    pub(crate) fn untyped<S, F, Fut>(self, handler: F) -> Row<S>
    where
        F: Fn(S, Call<Vec<String>>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Response, ApiError>> + Send + 'static,
    {
        Row {
            route: self,
            handler: Arc::new(move |state, call| Box::pin(handler(state, call))),
        }
    }

    /// The Magnum method name of the handler (`get_all`).
    pub fn method_name(&self) -> &'static str {
        let name = self.id.split_once('.').map_or(self.id, |(_, n)| n);
        name.split_once('@').map_or(name, |(n, _)| n)
    }

    /// The names of the path arguments, in path order.
    pub fn path_args(&self) -> impl Iterator<Item = &'static str> {
        segments(self.pattern).filter_map(param_name)
    }

    /// Whether `name` is an argument of the handler: WSME checks query and
    /// form keys against every argument (path, query and body).
    pub fn knows_arg(&self, name: &str) -> bool {
        self.query.iter().any(|q| q.name == name)
            || self.path_args().any(|a| a == name)
            || self.body_arg == Some(name)
    }

    fn serves(&self, v: Version) -> bool {
        match self.versions {
            None => true,
            Some((lo, hi)) => lo <= v && v <= hi,
        }
    }
}

/// The path arguments a handler receives: the values of the `{name}`
/// segments of its route's pattern, in path order, with their number
/// checked against the pattern when the row is built.
pub trait PathArgs: Sized + Send + 'static {
    /// How many `{name}` segments the pattern declares.
    const COUNT: usize;
    /// The arguments from the values of those segments (`COUNT` of them;
    /// the pipeline has filled every one).
    fn from_values(values: Vec<String>) -> Self;
}

/// No path argument (`/v1/clusters`).
impl PathArgs for () {
    const COUNT: usize = 0;
    fn from_values(_: Vec<String>) {}
}

/// One identifier (`/v1/clusters/{cluster_ident}`).
impl PathArgs for String {
    const COUNT: usize = 1;
    fn from_values(values: Vec<String>) -> String {
        values.into_iter().next().unwrap_or_default()
    }
}

/// Two, in path order (`/v1/quotas/{project_id}/{resource}`).
impl PathArgs for (String, String) {
    const COUNT: usize = 2;
    fn from_values(values: Vec<String>) -> (String, String) {
        let mut v = values.into_iter();
        (v.next().unwrap_or_default(), v.next().unwrap_or_default())
    }
}

/// The future of a handler's answer.
pub type Answering = BoxFuture<'static, Result<Response, ApiError>>;

/// A handler over the state `S`, given the values of the path arguments.
type RowHandler<S> = Arc<dyn Fn(S, Call<Vec<String>>) -> Answering + Send + Sync>;

/// A row of a route table: a route's declaration and its handler.
pub struct Row<S> {
    /// The declaration.
    pub route: Route,
    handler: RowHandler<S>,
}

impl<S: Clone + Send + Sync + 'static> Row<S> {
    /// The row's handler with `state` given to every call.
    pub(crate) fn bind(self, state: S) -> (Route, crate::BoundHandler) {
        let handler = self.handler;
        let bound: crate::BoundHandler = Arc::new(move |call| handler(state.clone(), call));
        (self.route, bound)
    }
}

const PAGINATION: &[Param] = &[
    p("marker", ParamType::Uuid),
    p("limit", ParamType::Int),
    p("sort_key", ParamType::Text),
    p("sort_dir", ParamType::Text),
];
const NODEGROUP_LIST: &[Param] = &[
    p("marker", ParamType::Uuid),
    p("limit", ParamType::Int),
    p("sort_key", ParamType::Text),
    p("sort_dir", ParamType::Text),
    p("role", ParamType::Text),
];
const QUOTA_LIST: &[Param] = &[
    p("marker", ParamType::Int),
    p("limit", ParamType::Int),
    p("sort_key", ParamType::Text),
    p("sort_dir", ParamType::Text),
    p("all_tenants", ParamType::Bool),
];
const ROLLBACK: &[Param] = &[p("rollback", ParamType::Bool)];
const CA_CERT_TYPE: &[Param] = &[p("ca_cert_type", ParamType::Text)];
const STATS: &[Param] = &[p("project_id", ParamType::Text), p("type", ParamType::Text)];

const CLUSTER_UPDATE: &[&str] = &[
    "cluster:update_all_projects",
    "cluster:update",
    "cluster:update_health_status",
];

fn v(major: u16, minor: u16) -> Version {
    Version::new(major, minor)
}

/// routes.md §2: 43 handlers on 38 (method, path) routes, including the two
/// version documents, each row with its handler.
pub fn table() -> Vec<Row<Services>> {
    let mut rows = documents();
    rows.extend(resources());
    rows
}

/// The rows of the resources, after the version documents.
pub(crate) fn resources() -> Vec<Row<Services>> {
    [
        cluster_rows(),
        nodegroup_rows(),
        template_rows(),
        quota_rows(),
        other_rows(),
        federation_rows(),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// #1 and #2, the version documents; they read no state. The root (first
/// row of every table) is answered outside v1, without microversions.
pub(crate) fn documents<S>() -> Vec<Row<S>> {
    vec![
        Route::get("root.get", "1", "/").to(|_, call: Call| async move {
            let doc = versions::root_document(&call.base_url);
            Ok(errors::json_response(StatusCode::OK, &doc))
        }),
        Route::get("v1.get", "2", "/v1").to(|_, call: Call| async move {
            let doc = versions::v1_document(&call.base_url);
            Ok(errors::json_response(StatusCode::OK, &doc))
        }),
    ]
}

const CL: &str = "/v1/clusters";
const CL_ID: &str = "/v1/clusters/{cluster_ident}";
const RESIZE: &str = "/v1/clusters/{cluster_ident}/actions/resize";
const UPGRADE: &str = "/v1/clusters/{cluster_ident}/actions/upgrade";
const NG: &str = "/v1/clusters/{cluster_id}/nodegroups";
const NG_ID: &str = "/v1/clusters/{cluster_id}/nodegroups/{nodegroup_id}";
const CT: &str = "/v1/clustertemplates";
const CT_ID: &str = "/v1/clustertemplates/{cluster_template_ident}";
const QU: &str = "/v1/quotas";
const QU_ID: &str = "/v1/quotas/{project_id}/{resource}";
const CERT_ID: &str = "/v1/certificates/{cluster_ident}";
const FE: &str = "/v1/federations";
const FE_ID: &str = "/v1/federations/{federation_ident}";

/// #3–#10: clusters and their actions.
fn cluster_rows() -> Vec<Row<Services>> {
    use clusters::{create, delete, get_one, list, resize, update, upgrade, upgrade_refused};
    vec![
        Route::get("cluster.get_all", "3", CL)
            .query(PAGINATION)
            .policy(&["cluster:get_all", "cluster:get_all_all_projects"])
            .to(|s, call| list(s, call, Form::Summary)),
        Route::get("cluster.detail", "4", "/v1/clusters/detail")
            .query(PAGINATION)
            .policy(&["cluster:detail", "cluster:detail_all_projects"])
            .to(|s, call| list(s, call, Form::Detail)),
        Route::get("cluster.get_one", "5", CL_ID)
            .policy(&["cluster:get_one_all_projects", "cluster:get"])
            .to(get_one),
        Route::post("cluster.post@1.1", "6", CL, "cluster")
            .versions(v(1, 1), v(1, 9))
            .policy(&["cluster:create"])
            .to(create),
        Route::post("cluster.post@1.10", "6'", CL, "cluster")
            .versions(v(1, 10), v(1, 14))
            .policy(&["cluster:create"])
            .to(create),
        Route::patch("cluster.patch@1.1", "7", CL_ID)
            .versions(v(1, 1), v(1, 2))
            .body("patch")
            .policy(CLUSTER_UPDATE)
            .to(update),
        Route::patch("cluster.patch@1.3", "7'", CL_ID)
            .versions(v(1, 3), v(1, 9))
            .query(ROLLBACK)
            .body("patch")
            .policy(CLUSTER_UPDATE)
            .to(update),
        Route::patch("cluster.patch@1.10", "7''", CL_ID)
            .versions(v(1, 10), v(1, 14))
            .query(ROLLBACK)
            .body("patch")
            .policy(CLUSTER_UPDATE)
            .to(update),
        Route::delete("cluster.delete", "8", CL_ID)
            .policy(&["cluster:delete_all_projects", "cluster:delete"])
            .to(delete),
        Route::post(
            "cluster_actions.resize@1.7",
            "9",
            RESIZE,
            "cluster_resize_req",
        )
        .versions(v(1, 7), v(1, 9))
        .policy(&["cluster:resize"])
        .to(resize),
        Route::post(
            "cluster_actions.resize@1.10",
            "9'",
            RESIZE,
            "cluster_resize_req",
        )
        .versions(v(1, 10), v(1, 14))
        .policy(&["cluster:resize"])
        .to(resize),
        Route::post(
            "cluster_actions.upgrade@1.7",
            "10",
            UPGRADE,
            "cluster_upgrade_req",
        )
        .versions(v(1, 7), v(1, 7))
        .status(400)
        .to(upgrade_refused),
        Route::post(
            "cluster_actions.upgrade@1.8",
            "10'",
            UPGRADE,
            "cluster_upgrade_req",
        )
        .versions(v(1, 8), v(1, 14))
        .policy(&["cluster:upgrade_all_projects", "cluster:upgrade"])
        .to(upgrade),
    ]
}

/// #11–#15: the nodegroups of a cluster, from 1.9.
fn nodegroup_rows() -> Vec<Row<Services>> {
    use nodegroups::{delete, get_all, get_one, patch_one, post};
    let ng = |route: Route| route.versions(v(1, 9), v(1, 14));
    vec![
        ng(Route::get("nodegroup.get_all", "11", NG))
            .query(NODEGROUP_LIST)
            .policy(&["nodegroup:get_all", "nodegroup:get_all_all_projects"])
            .to(get_all),
        ng(Route::get("nodegroup.get_one", "12", NG_ID))
            .policy(&["nodegroup:get", "nodegroup:get_one_all_projects"])
            .to(get_one),
        ng(Route::post("nodegroup.post", "13", NG, "nodegroup"))
            .policy(&["nodegroup:create"])
            .to(post),
        ng(Route::patch("nodegroup.patch", "14", NG_ID))
            .body("patch")
            .policy(&["nodegroup:update"])
            .to(patch_one),
        ng(Route::delete("nodegroup.delete", "15", NG_ID))
            .policy(&["nodegroup:delete"])
            .to(delete),
    ]
}

/// #16–#21: cluster templates.
fn template_rows() -> Vec<Row<Services>> {
    use cluster_templates::{delete, detail, get_all, get_one, patch, post};
    vec![
        Route::get("cluster_template.get_all", "16", CT)
            .query(PAGINATION)
            .policy(&[
                "clustertemplate:get_all",
                "clustertemplate:get_all_all_projects",
            ])
            .to(get_all),
        Route::get(
            "cluster_template.detail",
            "17",
            "/v1/clustertemplates/detail",
        )
        .query(PAGINATION)
        .policy(&[
            "clustertemplate:detail",
            "clustertemplate:detail_all_projects",
        ])
        .to(detail),
        Route::get("cluster_template.get_one", "18", CT_ID)
            .policy(&[
                "clustertemplate:get_one_all_projects",
                "clustertemplate:get",
            ])
            .to(get_one),
        Route::post("cluster_template.post", "19", CT, "cluster_template")
            .status(201)
            .policy(&["clustertemplate:create", "clustertemplate:publish"])
            .to(post),
        Route::patch("cluster_template.patch", "20", CT_ID)
            .status(200)
            .body("patch")
            .policy(&[
                "clustertemplate:update_all_projects",
                "clustertemplate:update",
                "clustertemplate:publish",
            ])
            .to(patch),
        Route::delete("cluster_template.delete", "21", CT_ID)
            .policy(&[
                "clustertemplate:delete_all_projects",
                "clustertemplate:delete",
            ])
            .to(delete),
    ]
}

/// #22–#26: quotas.
fn quota_rows() -> Vec<Row<Services>> {
    use quotas::{delete, get_all, get_one, patch, post};
    vec![
        Route::get("quota.get_all", "22", QU)
            .query(QUOTA_LIST)
            .policy(&["quota:get_all"])
            .to(get_all),
        Route::get("quota.get_one", "23", QU_ID)
            .policy(&["quota:get"])
            .to(get_one),
        Route::post("quota.post", "24", QU, "quota")
            .status(201)
            .policy(&["quota:create"])
            .to(post),
        Route::patch("quota.patch", "25", QU_ID)
            .body("quotapatch")
            .policy(&["quota:update"])
            .to(patch),
        Route::delete("quota.delete", "26", QU_ID)
            .policy(&["quota:delete"])
            .to(delete),
    ]
}

/// #27–#32: certificates, credentials, stats and the services.
fn other_rows() -> Vec<Row<Services>> {
    vec![
        Route::get("certificate.get_one", "27", CERT_ID)
            .query(CA_CERT_TYPE)
            .policy(&["certificate:get"])
            .to(certificates::get_one),
        Route::post("certificate.post", "28", "/v1/certificates", "certificate")
            .status(201)
            .policy(&["certificate:create"])
            .to(certificates::post),
        Route::patch("certificate.patch", "29", CERT_ID)
            .policy(&["certificate:rotate_ca"])
            .to(certificates::patch),
        Route::patch("credential.patch", "30", "/v1/credentials/{cluster_ident}")
            .versions(v(1, 12), v(1, 14))
            .policy(&["credential:rotate"])
            .to(credentials::patch),
        Route::get("stats.get_all", "31", "/v1/stats")
            .query(STATS)
            .policy(&["stats:get_all"])
            .to(stats::get_all),
        Route::get("magnum_service.get_all", "32", "/v1/mservices")
            .policy(&["magnum-service:get_all"])
            .to(mservices::get_all),
    ]
}

/// #33–#38: federations.
fn federation_rows() -> Vec<Row<Services>> {
    use federations::{delete, get_one, list, patch_one, post};
    vec![
        Route::get("federation.get_all", "33", FE)
            .query(PAGINATION)
            .policy(&["federation:get_all"])
            .to(|s, call| list(s, call, Form::Summary)),
        Route::get("federation.detail", "34", "/v1/federations/detail")
            .query(PAGINATION)
            .policy(&["federation:detail"])
            .to(|s, call| list(s, call, Form::Detail)),
        Route::get("federation.get_one", "35", FE_ID)
            .policy(&["federation:get"])
            .to(get_one),
        Route::post("federation.post", "36", FE, "federation")
            .policy(&["federation:create"])
            .to(post),
        Route::patch("federation.patch", "37", FE_ID)
            .query(ROLLBACK)
            .body("patch")
            .policy(&["federation:update"])
            .to(patch_one),
        Route::delete("federation.delete", "38", FE_ID)
            .policy(&["federation:delete"])
            .to(delete),
    ]
}

/// The Allow header of Magnum's controllers: a 405 lists the methods of the
/// controller that owns the path, not of the path itself.
const ALLOW_CRUD: &str = "DELETE, GET, PATCH, POST";
const ALLOW_GET: &str = "GET";

/// A controller: its paths and the Allow header of its 405. Some paths exist
/// only to answer 405 (the actions sub-controller, stats members). A final
/// `**` segment matches any non-empty remainder.
struct PathGroup {
    allow: &'static str,
    patterns: &'static [&'static str],
    /// A sub-controller owns its paths even when a parent handler could take
    /// the segments as arguments.
    sub: bool,
}

const PATH_GROUPS: &[PathGroup] = &[
    PathGroup {
        allow: ALLOW_GET,
        patterns: &["/v1"],
        sub: false,
    },
    PathGroup {
        allow: ALLOW_CRUD,
        patterns: &[
            "/v1/clusters",
            "/v1/clusters/detail",
            "/v1/clusters/{cluster_ident}",
        ],
        sub: false,
    },
    PathGroup {
        allow: "",
        patterns: &[
            "/v1/clusters/{cluster_ident}/actions",
            "/v1/clusters/{cluster_ident}/actions/resize",
            "/v1/clusters/{cluster_ident}/actions/upgrade",
            "/v1/clusters/{cluster_ident}/actions/**",
        ],
        sub: true,
    },
    PathGroup {
        allow: ALLOW_CRUD,
        patterns: &[
            "/v1/clusters/{cluster_id}/nodegroups",
            "/v1/clusters/{cluster_id}/nodegroups/{nodegroup_id}",
        ],
        sub: true,
    },
    PathGroup {
        allow: ALLOW_CRUD,
        patterns: &[
            "/v1/clustertemplates",
            "/v1/clustertemplates/detail",
            "/v1/clustertemplates/{cluster_template_ident}",
        ],
        sub: false,
    },
    PathGroup {
        allow: ALLOW_CRUD,
        patterns: &[
            "/v1/quotas",
            "/v1/quotas/{project_id}",
            "/v1/quotas/{project_id}/{resource}",
        ],
        sub: false,
    },
    PathGroup {
        allow: "GET, PATCH, POST",
        patterns: &["/v1/certificates", "/v1/certificates/{cluster_ident}"],
        sub: false,
    },
    PathGroup {
        allow: "PATCH",
        patterns: &["/v1/credentials", "/v1/credentials/{cluster_ident}"],
        sub: false,
    },
    PathGroup {
        allow: ALLOW_GET,
        patterns: &["/v1/stats", "/v1/stats/{x}"],
        sub: false,
    },
    PathGroup {
        allow: ALLOW_GET,
        patterns: &["/v1/mservices", "/v1/mservices/{x}"],
        sub: false,
    },
    PathGroup {
        allow: ALLOW_CRUD,
        patterns: &[
            "/v1/federations",
            "/v1/federations/detail",
            "/v1/federations/{federation_ident}",
        ],
        sub: false,
    },
];

/// The WSME body types of the create handlers, named in the 400 of a POST on
/// a member path.
pub fn body_type(arg: &str) -> &'static str {
    match arg {
        "cluster" => "Cluster",
        "cluster_template" => "ClusterTemplate",
        "nodegroup" => "NodeGroup",
        "quota" => "Quota",
        "certificate" => "Certificate",
        "federation" => "Federation",
        "cluster_resize_req" => "ClusterResizeRequest",
        "cluster_upgrade_req" => "ClusterUpgradeRequest",
        _ => "object",
    }
}

fn segments(path: &str) -> impl Iterator<Item = &str> {
    split_path(path).into_iter()
}

/// Splits `/v1/a/b` into `["v1","a","b"]`; `/` gives nothing. One trailing
/// slash is ignored, as pecan does for collections; further ones leave empty
/// segments (`/v1/clusters//` is get_one with an empty, i.e. missing,
/// identifier).
pub fn split_path(path: &str) -> Vec<&str> {
    let p = path.strip_prefix('/').unwrap_or(path);
    let p = p.strip_suffix('/').unwrap_or(p);
    if p.is_empty() {
        Vec::new()
    } else {
        p.split('/').collect()
    }
}

fn param_name(seg: &str) -> Option<&str> {
    seg.strip_prefix('{').and_then(|s| s.strip_suffix('}'))
}

/// The controller that owns a path no route matched (its `Allow` for the
/// 405), or nothing (404). With `too_many` positional arguments only a
/// sub-controller may own it.
fn owning_group(segs: &[&str], too_many: bool) -> Match {
    for (gi, g) in PATH_GROUPS.iter().enumerate() {
        if too_many && !g.sub {
            continue;
        }
        for pattern in g.patterns {
            let ps = split_path(pattern);
            if ps.last() == Some(&"**") {
                // Any path below the prefix belongs to the controller.
                // Observed: deeper unknown paths answer 405 even where
                // the controller's own paths answer the method-level 406.
                let n = ps.len() - 1;
                if segs.len() > n && match_segments(&ps[..n], &segs[..n]).is_some() {
                    return Match {
                        allow: Some(g.allow),
                        ..Match::default()
                    };
                }
                continue;
            }
            if match_segments(&ps, segs).is_some() {
                return Match {
                    allow: Some(g.allow),
                    group: Some(gi),
                    ..Match::default()
                };
            }
        }
    }
    Match::default()
}

/// Matches path segments against pattern segments: the number of literal
/// segments matched (higher wins), or `None`.
fn match_segments(pattern: &[&str], path: &[&str]) -> Option<usize> {
    if pattern.len() != path.len() {
        return None;
    }
    let mut literal = 0;
    for (p, s) in pattern.iter().zip(path) {
        if param_name(p).is_some() {
            continue;
        }
        if p != s {
            return None;
        }
        literal += 1;
    }
    Some(literal)
}

/// How a request was routed.
#[derive(Debug, Default)]
pub struct Match {
    /// The variants of the matched (method, pattern), or of the member
    /// handler a collection request fell through to (indices in the table).
    pub candidates: Vec<usize>,
    /// The path arguments.
    pub params: BTreeMap<String, String>,
    /// The first path argument absent from a request pecan dispatched to a
    /// member handler without its identifier (400 Missing argument).
    pub missing: Option<String>,
    /// Set for `<collection>/<marker>/detail`.
    pub marker_in_path: bool,
    /// The extra path segment of a POST on a member path, which WSME tries
    /// to convert to the body type (400).
    pub post_arg: Option<String>,
    /// Set when the path exists for other methods: the Allow header value.
    pub allow: Option<&'static str>,
    /// The controller owning a path answered with 405 (index in the
    /// controller list), for the method-level 406 check.
    group: Option<usize>,
}

/// The route table with its patterns split once.
pub struct Router {
    routes: Vec<Route>,
    segments: Vec<Vec<&'static str>>,
}

impl Router {
    /// The router over the declarations of a table's rows, in table order.
    /// Panics on a duplicate route ID, or when the first row is not the
    /// root document (`/` is answered by the first row): programmer errors
    /// found at start-up.
    pub fn new(routes: Vec<Route>) -> Router {
        assert_eq!(
            routes.first().map(|r| r.pattern),
            Some("/"),
            "the first row of a route table is the root document"
        );
        let mut seen = std::collections::HashSet::new();
        for r in &routes {
            assert!(seen.insert(r.id), "duplicate route ID {}", r.id);
        }
        let segments = routes.iter().map(|r| split_path(r.pattern)).collect();
        Router { routes, segments }
    }

    /// The routes, in table order.
    pub fn routes(&self) -> &[Route] {
        &self.routes
    }

    /// The route at `index` (from `Match::candidates`).
    pub fn get(&self, index: usize) -> &Route {
        &self.routes[index]
    }

    /// The first candidate serving `version`.
    pub fn select(&self, m: &Match, version: Version) -> Option<usize> {
        m.candidates
            .iter()
            .copied()
            .find(|&i| self.routes[i].serves(version))
    }

    /// The candidate with the lowest minimum microversion that does the
    /// route's work, and that version: a variant whose success status is an
    /// error (upgrade at 1.7, Magnum's "not supported") is passed over.
    pub fn lowest(&self, m: &Match) -> Option<(usize, Version)> {
        m.candidates
            .iter()
            .filter(|&&i| self.routes[i].status < 400)
            .filter_map(|&i| self.routes[i].versions.map(|(lo, _)| (i, lo)))
            .min_by_key(|&(_, lo)| lo)
    }

    fn same_pattern(&self, method: &Method, pattern: &str) -> Vec<usize> {
        (0..self.routes.len())
            .filter(|&i| self.routes[i].method == method && self.routes[i].pattern == pattern)
            .collect()
    }

    /// Finds the handlers for `method` and the normalised path segments:
    /// a route of the table, else what pecan makes of the path (a marker
    /// in a detail path, a POST argument, a member's missing argument),
    /// else the controller that owns it (405) or nothing (404).
    pub fn route(&self, method: &Method, segs: &[&str]) -> Match {
        if let Some(m) = self.exact(method, segs) {
            return m;
        }
        if let Some(m) = self.detail_marker(method, segs) {
            return m;
        }
        let (post, too_many) = self.post_argument(method, segs);
        if let Some(m) = post {
            return m;
        }
        if let Some(m) = self.member_missing_argument(method, segs) {
            return m;
        }
        owning_group(segs, too_many)
    }

    /// The route of the table that matches, the one with the most literal
    /// segments first.
    fn exact(&self, method: &Method, segs: &[&str]) -> Option<Match> {
        let mut best: Option<(usize, usize)> = None;
        for (i, r) in self.routes.iter().enumerate() {
            if r.method != method {
                continue;
            }
            if let Some(lit) = match_segments(&self.segments[i], segs)
                && best.is_none_or(|(_, b)| lit > b)
            {
                best = Some((i, lit));
            }
        }
        let (i, _) = best?;
        let mut m = Match {
            candidates: self.same_pattern(method, self.routes[i].pattern),
            ..Match::default()
        };
        for (seg, value) in self.segments[i].iter().zip(segs) {
            let Some(name) = param_name(seg) else {
                continue;
            };
            // An empty identifier is a missing argument for WSME.
            if value.is_empty() {
                if m.missing.is_none() {
                    m.missing = Some(name.to_string());
                }
                continue;
            }
            m.params.insert(name.to_string(), (*value).to_string());
        }
        Some(m)
    }

    /// GET <collection>/<x>/detail reaches the detail handler with <x> as
    /// its first positional argument, the marker (routes.md #4, #17).
    fn detail_marker(&self, method: &Method, segs: &[&str]) -> Option<Match> {
        if method != Method::GET || segs.len() != 4 || segs[3] != "detail" {
            return None;
        }
        let i = (0..self.routes.len()).find(|&i| {
            let s = &self.segments[i];
            self.routes[i].method == Method::GET
                && s.len() == 3
                && s[2] == "detail"
                && s[1] == segs[1]
        })?;
        let mut params = BTreeMap::new();
        params.insert("marker".to_string(), segs[2].to_string());
        Some(Match {
            candidates: vec![i],
            params,
            marker_in_path: true,
            ..Match::default()
        })
    }

    /// POST <collection>/<x> calls the create handler with <x> as its body
    /// argument, which WSME fails to convert (routes.md §1 "Methods"). The
    /// flag: more positional arguments than the handler takes (404, unless
    /// a sub-controller owns the path).
    fn post_argument(&self, method: &Method, segs: &[&str]) -> (Option<Match>, bool) {
        if method != Method::POST || segs.len() <= 1 {
            return (None, false);
        }
        let mut create: Option<usize> = None;
        for (i, r) in self.routes.iter().enumerate() {
            let s = &self.segments[i];
            if r.method != *method
                || r.body_arg.is_none()
                || r.pattern.contains("/actions/")
                || s.len() >= segs.len()
            {
                continue;
            }
            if match_segments(s, &segs[..s.len()]).is_some()
                && create.is_none_or(|c| s.len() > self.segments[c].len())
            {
                create = Some(i);
            }
        }
        let Some(c) = create else {
            return (None, false);
        };
        let s = &self.segments[c];
        if segs.len() != s.len() + 1 {
            return (None, true);
        }
        let mut m = Match {
            candidates: self.same_pattern(method, self.routes[c].pattern),
            post_arg: Some(segs[segs.len() - 1].to_string()),
            ..Match::default()
        };
        for (seg, value) in s.iter().zip(segs) {
            if let Some(name) = param_name(seg) {
                m.params.insert(name.to_string(), (*value).to_string());
            }
        }
        (Some(m), false)
    }

    /// Pecan sends DELETE and PATCH on a collection, and GET with only part
    /// of a member's identifiers, to the member handler, which then misses
    /// an argument (routes.md §1 "Methods").
    fn member_missing_argument(&self, method: &Method, segs: &[&str]) -> Option<Match> {
        if !matches!(*method, Method::DELETE | Method::PATCH | Method::GET) {
            return None;
        }
        for (i, r) in self.routes.iter().enumerate() {
            let s = &self.segments[i];
            if r.method != *method || segs.len() >= s.len() {
                continue;
            }
            let prefix = &s[..segs.len()];
            if match_segments(prefix, segs).is_none() {
                continue;
            }
            let rest = &s[segs.len()..];
            if !rest.iter().all(|x| param_name(x).is_some()) {
                continue;
            }
            if *method == Method::GET && !has_param_after_collection(s, segs.len()) {
                continue;
            }
            let mut m = Match {
                candidates: self.same_pattern(method, r.pattern),
                missing: param_name(rest[0]).map(str::to_string),
                ..Match::default()
            };
            for (seg, value) in prefix.iter().zip(segs) {
                if let Some(name) = param_name(seg) {
                    m.params.insert(name.to_string(), (*value).to_string());
                }
            }
            return Some(m);
        }
        None
    }

    /// The name of a versioned handler of the controller that owns a path
    /// answered with 405 that has no variant for `version`. Pecan touches the
    /// controller's methods while computing a 405, and touching such a method
    /// raises the method-level 406 instead (`GET /v1/credentials/x` at 1.1 is
    /// a 406; at 1.12 a 405).
    pub fn uncovered_method(&self, m: &Match, version: Version) -> Option<&'static str> {
        let g = &PATH_GROUPS[m.group?];
        let mut names: Vec<(&'static str, bool)> = Vec::new();
        for r in &self.routes {
            if r.versions.is_none() || !g.patterns.contains(&r.pattern) {
                continue;
            }
            let name = r.method_name();
            let covered = r.serves(version);
            match names.iter_mut().find(|(n, _)| *n == name) {
                Some((_, c)) => *c |= covered,
                None => names.push((name, covered)),
            }
        }
        names
            .into_iter()
            .find(|(_, covered)| !covered)
            .map(|(n, _)| n)
    }
}

/// Whether the first `n` segments of a member pattern already include one of
/// the member's own identifiers (the parameters after the last literal
/// segment), so that a GET is a get_one with missing arguments and not a
/// get_all.
fn has_param_after_collection(pattern: &[&str], n: usize) -> bool {
    let last_literal = pattern.iter().rposition(|s| param_name(s).is_none());
    match last_literal {
        Some(l) => n > l + 1,
        None => n > 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{HashMap, HashSet};

    /// The declarations of the table, in its order.
    fn declarations() -> Vec<Route> {
        table().into_iter().map(|r| r.route).collect()
    }

    #[test]
    fn forty_three_handlers_on_thirty_eight_routes() {
        let t = declarations();
        let routes: HashSet<_> = t.iter().map(|r| (r.method.clone(), r.pattern)).collect();
        assert_eq!((t.len(), routes.len()), (43, 38));
    }

    /// The route table against the tables of spec/api/routes.md: number,
    /// method, path, version range and status.
    #[test]
    fn route_table_matches_the_spec() {
        let Some(text) = test_support::spec_file("api/routes.md") else {
            return;
        };
        let row = regex_lite_row;
        let mut want: HashMap<String, (String, String, String, String, String)> = HashMap::new();
        let mut last_path = String::new();
        for line in text.lines() {
            let Some((number, method, rest)) = row(line) else {
                continue;
            };
            let cells: Vec<&str> = rest.split(" | ").collect();
            let mut path = cells[0].trim().to_string();
            if path == "same" {
                path = last_path.clone();
            } else {
                path = path
                    .split_whitespace()
                    .next()
                    .unwrap_or("")
                    .trim_matches('`')
                    .to_string();
            }
            last_path = path.clone();
            let (mut min, mut max, mut status) = (String::new(), String::new(), String::new());
            for c in &cells[2..] {
                let c = c.trim();
                if min.is_empty()
                    && let Some((lo, hi)) = version_cell(c)
                {
                    (min, max) = (lo, hi);
                    continue;
                }
                let digits: String = c
                    .trim_start_matches('*')
                    .chars()
                    .take_while(char::is_ascii_digit)
                    .collect();
                if digits.len() == 3 && status.is_empty() {
                    status = digits;
                    break;
                }
            }
            want.insert(number, (method, params_erased(&path), min, max, status));
        }
        assert_eq!(want.len(), 43, "rows parsed from routes.md");
        let mut got = HashMap::new();
        for r in declarations() {
            let (min, max) = r.versions.map_or((String::new(), String::new()), |(a, b)| {
                (a.to_string(), b.to_string())
            });
            // Row 10 always answers 400: the spec gives it no success status.
            let status = if r.number == "10" {
                String::new()
            } else {
                r.status.to_string()
            };
            got.insert(
                r.number.to_string(),
                (
                    r.method.to_string(),
                    params_erased(r.pattern),
                    min,
                    max,
                    status,
                ),
            );
        }
        for (k, w) in &want {
            assert_eq!(got.get(k), Some(w), "route {k}: table vs routes.md");
        }
        assert_eq!(got.len(), want.len());
    }

    /// `| 6' | POST | rest` → ("6'", "POST", "rest").
    fn regex_lite_row(line: &str) -> Option<(String, String, String)> {
        let rest = line.strip_prefix("| ")?;
        let (number, rest) = rest.split_once(" | ")?;
        let digits = number.trim_end_matches('\'');
        if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
            return None;
        }
        let (method, rest) = rest.split_once(" | ")?;
        if !["GET", "POST", "PATCH", "DELETE", "PUT"].contains(&method) {
            return None;
        }
        Some((number.to_string(), method.to_string(), rest.to_string()))
    }

    /// `1.9–1.14` or `1.7 only`.
    fn version_cell(c: &str) -> Option<(String, String)> {
        let is_ver = |s: &str| {
            s.split_once('.').is_some_and(|(a, b)| {
                !a.is_empty()
                    && !b.is_empty()
                    && a.chars().all(|x| x.is_ascii_digit())
                    && b.chars().all(|x| x.is_ascii_digit())
            })
        };
        if let Some(v) = c.strip_suffix(" only")
            && is_ver(v)
        {
            return Some((v.to_string(), v.to_string()));
        }
        let (a, b) = c.split_once('–')?;
        (is_ver(a) && is_ver(b)).then(|| (a.to_string(), b.to_string()))
    }

    fn params_erased(path: &str) -> String {
        let mut out = String::new();
        let mut in_param = false;
        for ch in path.chars() {
            match ch {
                '{' => {
                    in_param = true;
                    out.push_str("{}");
                }
                '}' => in_param = false,
                _ if in_param => {}
                _ => out.push(ch),
            }
        }
        out
    }

    /// The recipe "Adding a route" of docs/architecture.md, followed: one
    /// row declaring the route with its handler, the handler beside it; the
    /// request goes through the whole pipeline, and the handler gets the
    /// services and the path argument its pattern declares.
    #[tokio::test]
    async fn adding_a_route() {
        use crate::conductor::certificate_test_support::insert_cluster;
        use crate::conductor::testing::TestConductor;
        use crate::testing::{MEMBER, TestApp};
        use magnum_domain::Status;
        use serde_json::json;

        /// `GET /v1/clusters/{cluster_ident}/owner`: the cluster of the
        /// path, `cluster:get` on it, then its project.
        async fn owner(s: Services, call: Call<String>) -> Result<Response, ApiError> {
            let cl = clusters::authorized_cluster(&s, &call.ctx, &call.path, "cluster:get").await?;
            let doc = json!({ "ident": call.path, "project_id": cl.project_id });
            Ok(errors::json_response(StatusCode::OK, &doc))
        }
        let mut rows = table();
        rows.push(
            Route::get("cluster.owner", "39", "/v1/clusters/{cluster_ident}/owner")
                .policy(&["cluster:get"])
                .to(owner),
        );
        let app = TestApp::serving(TestConductor::new().await, rows);
        let c = &app.t.conductor;
        insert_cluster(c, "c1", Status::CreateComplete, false, None).await;
        let a = app.call("GET /v1/clusters/c1/owner", "", MEMBER).await;
        assert_eq!(a.status, StatusCode::OK, "{}", a.text());
        assert_eq!(a.json(), json!({ "ident": "c1", "project_id": "p1" }));
        let stranger = ["X-Project-Id: p2", "X-User-Id: u2", "X-Roles: member"];
        let a = app.call("GET /v1/clusters/c1/owner", "", &stranger).await;
        assert_eq!(a.status, StatusCode::NOT_FOUND, "{}", a.text());
    }

    /// A handler taking fewer path arguments than its pattern declares is
    /// refused when the table is built.
    #[test]
    #[should_panic(expected = "the handler takes 0 path arguments")]
    fn a_handler_takes_the_path_arguments_its_pattern_declares() {
        let _: Row<()> = Route::get("cluster.get_one", "5", CL_ID)
            .to(|(), _: Call| async { Ok(errors::json_response(StatusCode::OK, &())) });
    }

    #[test]
    fn splitting_keeps_inner_empty_segments() {
        assert!(split_path("/").is_empty());
        assert_eq!(split_path("/v1/clusters/"), vec!["v1", "clusters"]);
        assert_eq!(split_path("/v1/clusters//"), vec!["v1", "clusters", ""]);
    }

    #[test]
    fn method_names_drop_the_variant() {
        let r = Router::new(declarations());
        let names: Vec<_> = r.routes().iter().map(Route::method_name).collect();
        assert!(
            names.contains(&"patch")
                && names.contains(&"get_all")
                && !names.iter().any(|n| n.contains('@'))
        );
    }
}
