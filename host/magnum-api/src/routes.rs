//! The v1 route table (`spec/api/routes.md` §2) as data, and the dispatcher
//! that reproduces pecan's routing: which handler a (method, path) reaches,
//! with which path arguments, or which 404/405 answers it.

use std::collections::BTreeMap;

use http::Method;
use magnum_domain::microversion::Version;

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

/// One handler of the v1 API. Several routes share a method and pattern when
/// the handler has microversion variants.
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

#[allow(clippy::too_many_arguments)]
fn route(
    id: &'static str,
    number: &'static str,
    method: Method,
    pattern: &'static str,
    versions: Option<(Version, Version)>,
    status: u16,
    query: &'static [Param],
    body_arg: Option<&'static str>,
    policy: &'static [&'static str],
) -> Route {
    Route {
        id,
        number,
        method,
        pattern,
        versions,
        status,
        query,
        body_arg,
        policy,
    }
}

/// routes.md §2: 43 handlers on 38 (method, path) routes, including the two
/// version documents.
pub fn table() -> Vec<Route> {
    use Method as M;
    const CL: &str = "/v1/clusters";
    const CL_ID: &str = "/v1/clusters/{cluster_ident}";
    const NG: &str = "/v1/clusters/{cluster_id}/nodegroups";
    const NG_ID: &str = "/v1/clusters/{cluster_id}/nodegroups/{nodegroup_id}";
    const CT: &str = "/v1/clustertemplates";
    const CT_ID: &str = "/v1/clustertemplates/{cluster_template_ident}";
    const QU: &str = "/v1/quotas";
    const QU_ID: &str = "/v1/quotas/{project_id}/{resource}";
    const FE: &str = "/v1/federations";
    const FE_ID: &str = "/v1/federations/{federation_ident}";
    let ng = Some((v(1, 9), v(1, 14)));
    vec![
        route("root.get", "1", M::GET, "/", None, 200, &[], None, &[]),
        route("v1.get", "2", M::GET, "/v1", None, 200, &[], None, &[]),
        route(
            "cluster.get_all",
            "3",
            M::GET,
            CL,
            None,
            200,
            PAGINATION,
            None,
            &["cluster:get_all", "cluster:get_all_all_projects"],
        ),
        route(
            "cluster.detail",
            "4",
            M::GET,
            "/v1/clusters/detail",
            None,
            200,
            PAGINATION,
            None,
            &["cluster:detail", "cluster:detail_all_projects"],
        ),
        route(
            "cluster.get_one",
            "5",
            M::GET,
            CL_ID,
            None,
            200,
            &[],
            None,
            &["cluster:get_one_all_projects", "cluster:get"],
        ),
        route(
            "cluster.post@1.1",
            "6",
            M::POST,
            CL,
            Some((v(1, 1), v(1, 9))),
            202,
            &[],
            Some("cluster"),
            &["cluster:create"],
        ),
        route(
            "cluster.post@1.10",
            "6'",
            M::POST,
            CL,
            Some((v(1, 10), v(1, 14))),
            202,
            &[],
            Some("cluster"),
            &["cluster:create"],
        ),
        route(
            "cluster.patch@1.1",
            "7",
            M::PATCH,
            CL_ID,
            Some((v(1, 1), v(1, 2))),
            202,
            &[],
            Some("patch"),
            CLUSTER_UPDATE,
        ),
        route(
            "cluster.patch@1.3",
            "7'",
            M::PATCH,
            CL_ID,
            Some((v(1, 3), v(1, 9))),
            202,
            ROLLBACK,
            Some("patch"),
            CLUSTER_UPDATE,
        ),
        route(
            "cluster.patch@1.10",
            "7''",
            M::PATCH,
            CL_ID,
            Some((v(1, 10), v(1, 14))),
            202,
            ROLLBACK,
            Some("patch"),
            CLUSTER_UPDATE,
        ),
        route(
            "cluster.delete",
            "8",
            M::DELETE,
            CL_ID,
            None,
            204,
            &[],
            None,
            &["cluster:delete_all_projects", "cluster:delete"],
        ),
        route(
            "cluster_actions.resize@1.7",
            "9",
            M::POST,
            "/v1/clusters/{cluster_ident}/actions/resize",
            Some((v(1, 7), v(1, 9))),
            202,
            &[],
            Some("cluster_resize_req"),
            &["cluster:resize"],
        ),
        route(
            "cluster_actions.resize@1.10",
            "9'",
            M::POST,
            "/v1/clusters/{cluster_ident}/actions/resize",
            Some((v(1, 10), v(1, 14))),
            202,
            &[],
            Some("cluster_resize_req"),
            &["cluster:resize"],
        ),
        route(
            "cluster_actions.upgrade@1.7",
            "10",
            M::POST,
            "/v1/clusters/{cluster_ident}/actions/upgrade",
            Some((v(1, 7), v(1, 7))),
            400,
            &[],
            Some("cluster_upgrade_req"),
            &[],
        ),
        route(
            "cluster_actions.upgrade@1.8",
            "10'",
            M::POST,
            "/v1/clusters/{cluster_ident}/actions/upgrade",
            Some((v(1, 8), v(1, 14))),
            202,
            &[],
            Some("cluster_upgrade_req"),
            &["cluster:upgrade_all_projects", "cluster:upgrade"],
        ),
        route(
            "nodegroup.get_all",
            "11",
            M::GET,
            NG,
            ng,
            200,
            NODEGROUP_LIST,
            None,
            &["nodegroup:get_all", "nodegroup:get_all_all_projects"],
        ),
        route(
            "nodegroup.get_one",
            "12",
            M::GET,
            NG_ID,
            ng,
            200,
            &[],
            None,
            &["nodegroup:get", "nodegroup:get_one_all_projects"],
        ),
        route(
            "nodegroup.post",
            "13",
            M::POST,
            NG,
            ng,
            202,
            &[],
            Some("nodegroup"),
            &["nodegroup:create"],
        ),
        route(
            "nodegroup.patch",
            "14",
            M::PATCH,
            NG_ID,
            ng,
            202,
            &[],
            Some("patch"),
            &["nodegroup:update"],
        ),
        route(
            "nodegroup.delete",
            "15",
            M::DELETE,
            NG_ID,
            ng,
            204,
            &[],
            None,
            &["nodegroup:delete"],
        ),
        route(
            "cluster_template.get_all",
            "16",
            M::GET,
            CT,
            None,
            200,
            PAGINATION,
            None,
            &[
                "clustertemplate:get_all",
                "clustertemplate:get_all_all_projects",
            ],
        ),
        route(
            "cluster_template.detail",
            "17",
            M::GET,
            "/v1/clustertemplates/detail",
            None,
            200,
            PAGINATION,
            None,
            &[
                "clustertemplate:detail",
                "clustertemplate:detail_all_projects",
            ],
        ),
        route(
            "cluster_template.get_one",
            "18",
            M::GET,
            CT_ID,
            None,
            200,
            &[],
            None,
            &[
                "clustertemplate:get_one_all_projects",
                "clustertemplate:get",
            ],
        ),
        route(
            "cluster_template.post",
            "19",
            M::POST,
            CT,
            None,
            201,
            &[],
            Some("cluster_template"),
            &["clustertemplate:create", "clustertemplate:publish"],
        ),
        route(
            "cluster_template.patch",
            "20",
            M::PATCH,
            CT_ID,
            None,
            200,
            &[],
            Some("patch"),
            &[
                "clustertemplate:update_all_projects",
                "clustertemplate:update",
                "clustertemplate:publish",
            ],
        ),
        route(
            "cluster_template.delete",
            "21",
            M::DELETE,
            CT_ID,
            None,
            204,
            &[],
            None,
            &[
                "clustertemplate:delete_all_projects",
                "clustertemplate:delete",
            ],
        ),
        route(
            "quota.get_all",
            "22",
            M::GET,
            QU,
            None,
            200,
            QUOTA_LIST,
            None,
            &["quota:get_all"],
        ),
        route(
            "quota.get_one",
            "23",
            M::GET,
            QU_ID,
            None,
            200,
            &[],
            None,
            &["quota:get"],
        ),
        route(
            "quota.post",
            "24",
            M::POST,
            QU,
            None,
            201,
            &[],
            Some("quota"),
            &["quota:create"],
        ),
        route(
            "quota.patch",
            "25",
            M::PATCH,
            QU_ID,
            None,
            202,
            &[],
            Some("quotapatch"),
            &["quota:update"],
        ),
        route(
            "quota.delete",
            "26",
            M::DELETE,
            QU_ID,
            None,
            204,
            &[],
            None,
            &["quota:delete"],
        ),
        route(
            "certificate.get_one",
            "27",
            M::GET,
            "/v1/certificates/{cluster_ident}",
            None,
            200,
            CA_CERT_TYPE,
            None,
            &["certificate:get"],
        ),
        route(
            "certificate.post",
            "28",
            M::POST,
            "/v1/certificates",
            None,
            201,
            &[],
            Some("certificate"),
            &["certificate:create"],
        ),
        route(
            "certificate.patch",
            "29",
            M::PATCH,
            "/v1/certificates/{cluster_ident}",
            None,
            202,
            &[],
            None,
            &["certificate:rotate_ca"],
        ),
        route(
            "credential.patch",
            "30",
            M::PATCH,
            "/v1/credentials/{cluster_ident}",
            Some((v(1, 12), v(1, 14))),
            202,
            &[],
            None,
            &["credential:rotate"],
        ),
        route(
            "stats.get_all",
            "31",
            M::GET,
            "/v1/stats",
            None,
            200,
            STATS,
            None,
            &["stats:get_all"],
        ),
        route(
            "magnum_service.get_all",
            "32",
            M::GET,
            "/v1/mservices",
            None,
            200,
            &[],
            None,
            &["magnum-service:get_all"],
        ),
        route(
            "federation.get_all",
            "33",
            M::GET,
            FE,
            None,
            200,
            PAGINATION,
            None,
            &["federation:get_all"],
        ),
        route(
            "federation.detail",
            "34",
            M::GET,
            "/v1/federations/detail",
            None,
            200,
            PAGINATION,
            None,
            &["federation:detail"],
        ),
        route(
            "federation.get_one",
            "35",
            M::GET,
            FE_ID,
            None,
            200,
            &[],
            None,
            &["federation:get"],
        ),
        route(
            "federation.post",
            "36",
            M::POST,
            FE,
            None,
            202,
            &[],
            Some("federation"),
            &["federation:create"],
        ),
        route(
            "federation.patch",
            "37",
            M::PATCH,
            FE_ID,
            None,
            202,
            ROLLBACK,
            Some("patch"),
            &["federation:update"],
        ),
        route(
            "federation.delete",
            "38",
            M::DELETE,
            FE_ID,
            None,
            204,
            &[],
            None,
            &["federation:delete"],
        ),
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
    /// The router over `table()`. Panics on a duplicate route ID: a
    /// programmer error found at start-up.
    pub fn new() -> Router {
        let routes = table();
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

impl Default for Router {
    fn default() -> Self {
        Router::new()
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

    #[test]
    fn forty_three_handlers_on_thirty_eight_routes() {
        let t = table();
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
        for r in table() {
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

    #[test]
    fn splitting_keeps_inner_empty_segments() {
        assert!(split_path("/").is_empty());
        assert_eq!(split_path("/v1/clusters/"), vec!["v1", "clusters"]);
        assert_eq!(split_path("/v1/clusters//"), vec!["v1", "clusters", ""]);
    }

    #[test]
    fn method_names_drop_the_variant() {
        let r = Router::new();
        let names: Vec<_> = r.routes().iter().map(Route::method_name).collect();
        assert!(
            names.contains(&"patch")
                && names.contains(&"get_all")
                && !names.iter().any(|n| n.contains('@'))
        );
    }
}
