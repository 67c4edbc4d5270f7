//! The routes of spec/api/routes.md the Rust host does not serve yet.
//!
//! The suites replay the reference's recorded answers against every route;
//! a route still being written answers 404 today. Each suite keeps its
//! enforcement strict: a record on a not-yet route must still fail (so the
//! list only shrinks: remove a route when it is served), and a record on a
//! served route must pass. The list describes the Rust host only: it applies
//! when the binary under test is the one cargo built (`OKM_BINARY` unset),
//! or when `OKM_NOT_YET=1`; `OKM_NOT_YET=0` (or another `OKM_BINARY`, such
//! as the Go implementation's) holds every route to the full standard.

/// (method, path template) of every route of spec/api/routes.md that is not
/// served yet; `{…}` matches one path segment.
pub const ROUTES: &[(&str, &str)] = &[("PATCH", "/v1/clusters/{cluster_ident}")];

/// Whether the not-yet lists apply to this run.
pub fn applies() -> bool {
    match std::env::var("OKM_NOT_YET").as_deref() {
        Ok("1") => true,
        Ok("0") => false,
        _ => std::env::var_os("OKM_BINARY").is_none_or(|p| p.is_empty()),
    }
}

/// Whether `method path` (query ignored, trailing slash ignored) is on a
/// not-yet route.
pub fn route(method: &str, path: &str) -> bool {
    let path = path.split('?').next().unwrap_or_default();
    let segs: Vec<&str> = path.trim_end_matches('/').split('/').collect();
    ROUTES.iter().any(|(m, t)| {
        let tsegs: Vec<&str> = t.split('/').collect();
        m.eq_ignore_ascii_case(method)
            && tsegs.len() == segs.len()
            && tsegs
                .iter()
                .zip(&segs)
                .all(|(t, s)| (t.starts_with('{') && !s.is_empty()) || t == s)
    })
}

#[test]
fn routes_match_by_segment() {
    assert!(route("PATCH", "/v1/clusters/abc"));
    assert!(route("PATCH", "/v1/clusters/abc/"));
    assert!(route("patch", "/v1/clusters/abc?x=1"));
    assert!(!route("PATCH", "/v1/clusters"));
    assert!(!route("PATCH", "/v1/clusters/"));
    assert!(!route("GET", "/v1/clusters/abc"));
    assert!(!route("PUT", "/v1/clusters/abc"));
    assert!(!route("PATCH", "/v1/clusters/a/b"));
}
