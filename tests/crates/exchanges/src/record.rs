//! The corpus reader and the comparison of spec/exchanges/README.md ("How
//! to compare").

use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};

/// One recorded exchange.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct Record {
    pub id: String,
    pub test_id: String,
    pub seq: i64,
    pub app: String,
    pub request: RecordedRequest,
    pub response: RecordedResponse,
    pub context: Option<RecordedContext>,
    /// db_before, every row kept as recorded (the key order of a JSON
    /// column is the order Magnum stored it in).
    pub db_before: BTreeMap<String, Vec<Map<String, Value>>>,
    pub mocks: Option<Vec<Mock>>,
    pub policy_overrides: Option<BTreeMap<String, String>>,
    pub conf_overrides: Option<BTreeMap<String, Value>>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct RecordedRequest {
    pub method: String,
    pub path: String,
    pub query: String,
    pub headers: BTreeMap<String, String>,
    pub body: Value,
    pub body_text: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct RecordedResponse {
    pub status: u16,
    pub headers: BTreeMap<String, String>,
    pub body: Value,
    pub body_text: Option<String>,
}

/// The request context Magnum built.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct RecordedContext {
    pub project_id: Value,
    pub user_id: Value,
    pub roles: Value,
    pub is_admin: Value,
    pub all_tenants: Value,
}

/// A mock.patch active during the request.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct Mock {
    pub target: String,
    pub return_value: Value,
    pub side_effect: Option<String>,
}

/// Reads an exchanges file.
pub fn load(path: &std::path::Path) -> Result<Vec<Record>, String> {
    let data = std::fs::read(path).map_err(|e| format!("read {}: {e}", path.display()))?;
    serde_json::from_slice(&data).map_err(|e| format!("parse {}: {e}", path.display()))
}

fn lookup<'a>(h: &'a BTreeMap<String, String>, name: &str) -> Option<&'a str> {
    h.iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

impl RecordedRequest {
    pub fn header(&self, name: &str) -> Option<&str> {
        lookup(&self.headers, name)
    }
}

impl RecordedResponse {
    pub fn header(&self, name: &str) -> Option<&str> {
        lookup(&self.headers, name)
    }
}

impl Record {
    /// The mock of `target`, when the test patched it.
    pub fn mock(&self, target: &str) -> Option<&Mock> {
        self.mocks.iter().flatten().find(|m| m.target == target)
    }

    /// The Magnum test module of the record ("test_cluster").
    pub fn module(&self) -> &str {
        let parts: Vec<&str> = self.test_id.split('.').collect();
        if parts.len() >= 3 {
            parts[parts.len() - 3]
        } else {
            &self.test_id
        }
    }
}

/// What the service answered.
#[derive(Debug, Default)]
pub struct Response {
    pub status: u16,
    /// Header names lower-case, every value in order.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    fn values(&self, name: &str) -> Vec<&str> {
        self.headers
            .iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
            .collect()
    }

    fn get(&self, name: &str) -> &str {
        self.values(name).first().copied().unwrap_or("")
    }
}

/// The uuids (8-4-4-4-12 hex digits) in `s`, as (start, end).
fn find_uuids(s: &str) -> Vec<(usize, usize)> {
    const GROUPS: [usize; 5] = [8, 4, 4, 4, 12];
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    'outer: while i + 36 <= b.len() {
        let mut j = i;
        for (n, len) in GROUPS.iter().enumerate() {
            if n > 0 {
                if b[j] != b'-' {
                    i += 1;
                    continue 'outer;
                }
                j += 1;
            }
            if !b[j..j + len].iter().all(u8::is_ascii_hexdigit) {
                i += 1;
                continue 'outer;
            }
            j += len;
        }
        out.push((i, j));
        i = j;
    }
    out
}

/// `s` with every uuid replaced by what `f` makes of it.
fn replace_uuids(s: &str, f: impl Fn(&str) -> String) -> String {
    let mut out = String::new();
    let mut last = 0;
    for (a, b) in find_uuids(s) {
        out.push_str(&s[last..a]);
        out.push_str(&f(&s[a..b]));
        last = b;
    }
    out.push_str(&s[last..]);
    out
}

/// A name Magnum generates ("pi-12-template").
fn generated_name(s: &str) -> bool {
    let mut parts = s.splitn(3, '-');
    let (Some(a), Some(n), Some(kind)) = (parts.next(), parts.next(), parts.next()) else {
        return false;
    };
    !a.is_empty()
        && a.bytes().all(|c| c.is_ascii_lowercase())
        && !n.is_empty()
        && n.bytes().all(|c| c.is_ascii_digit())
        && (kind == "template" || kind == "cluster")
}

/// `s` without a leading `http(s)://host`.
fn strip_host(s: &str) -> &str {
    for scheme in ["http://", "https://"] {
        if let Some(rest) = s.strip_prefix(scheme)
            && !rest.is_empty()
            && !rest.starts_with('/')
        {
            return rest.find('/').map_or("", |i| &rest[i..]);
        }
    }
    s
}

fn media_type(ct: &str) -> String {
    ct.split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

fn trunc(b: &[u8]) -> String {
    let s = String::from_utf8_lossy(b);
    if s.chars().count() > 300 {
        format!("{}…", s.chars().take(300).collect::<String>())
    } else {
        s.into_owned()
    }
}

/// Every difference between the recorded response and `got`.
pub fn compare(rec: &Record, got: &Response) -> Vec<String> {
    let mut out = Vec::new();
    let want = &rec.response;
    if got.status != want.status {
        let mut msg = format!("status: got {}, want {}", got.status, want.status);
        if let Ok(v) = serde_json::from_slice::<Value>(&got.body)
            && let Some(d) = v["errors"][0]["detail"].as_str()
            && !d.is_empty()
        {
            msg.push_str(&format!(" (got error {d:?})"));
        }
        out.push(msg);
    }
    for name in [
        "OpenStack-API-Minimum-Version",
        "OpenStack-API-Maximum-Version",
        "OpenStack-API-Version",
        "WWW-Authenticate",
    ] {
        let wv = want.header(name);
        let gvals = got.values(name);
        let gv = gvals.first().copied().unwrap_or("");
        if wv.is_some() == gvals.is_empty() || wv.unwrap_or("") != gv {
            out.push(format!(
                "header {name}: got {gv:?} (present {}), want {:?} (present {})",
                !gvals.is_empty(),
                wv.unwrap_or(""),
                wv.is_some()
            ));
        }
    }
    let wvary = want.header("Vary").unwrap_or("");
    let gvary = got.values("Vary").join(",");
    if wvary.contains("OpenStack-API-Version") != gvary.contains("OpenStack-API-Version") {
        out.push(format!("header Vary: got {gvary:?}, want {wvary:?}"));
    }
    let wct = want.header("Content-Type");
    let gct = got.get("Content-Type");
    if wct.is_some() == gct.is_empty() || media_type(wct.unwrap_or("")) != media_type(gct) {
        out.push(format!(
            "header Content-Type: got {gct:?}, want {:?}",
            wct.unwrap_or("")
        ));
    }
    let wloc = want.header("Location");
    let gloc = got.get("Location");
    let norm = |s: &str| strip_host(&replace_uuids(s, |_| "<uuid>".to_string())).to_string();
    if wloc.is_some() == gloc.is_empty() || norm(wloc.unwrap_or("")) != norm(gloc) {
        out.push(format!(
            "header Location: got {gloc:?}, want {:?}",
            wloc.unwrap_or("")
        ));
    }
    if want.header("x-openstack-request-id").is_some()
        && got.get("x-openstack-request-id").is_empty()
    {
        out.push("header x-openstack-request-id missing".to_string());
    }
    // Bodies.
    if let Some(text) = &want.body_text {
        if got.body != text.as_bytes() {
            out.push(format!("body: got {:?}, want {text:?}", trunc(&got.body)));
        }
        return out;
    }
    if want.body.is_null() {
        if !String::from_utf8_lossy(&got.body).trim().is_empty() {
            out.push(format!("body: got {:?}, want empty", trunc(&got.body)));
        }
        return out;
    }
    let gb: Value = match serde_json::from_slice(&got.body) {
        Ok(v) => v,
        Err(_) => {
            out.push(format!("body is not JSON: {:?}", trunc(&got.body)));
            return out;
        }
    };
    let known = known_values(rec);
    if let Some(errs) = want.body.get("errors") {
        out.extend(compare_errors(errs, &gb));
        return out;
    }
    compare_value("$", &want.body, &gb, &known, &mut out);
    out
}

/// The uuids of the request and db_before (any other uuid in a response
/// was generated during the run) and the timestamps of db_before (a
/// created_at / updated_at equal to one of them belongs to an existing row
/// and must be answered exactly; others are new and ignored).
fn known_values(rec: &Record) -> BTreeSet<String> {
    let raw = serde_json::json!({
        "Q": {"Method": rec.request.method, "Path": rec.request.path, "Query": rec.request.query,
              "Headers": rec.request.headers, "Body": rec.request.body, "BodyText": rec.request.body_text},
        "DB": rec.db_before,
    })
    .to_string();
    let mut out: BTreeSet<String> = find_uuids(&raw)
        .into_iter()
        .map(|(a, b)| raw[a..b].to_ascii_lowercase())
        .collect();
    for rows in rec.db_before.values() {
        for row in rows {
            for c in ["created_at", "updated_at"] {
                if let Some(v) = row.get(c).and_then(Value::as_str)
                    && !v.is_empty()
                {
                    out.insert(time_key(v));
                }
            }
        }
    }
    out
}

/// The key of a timestamp among the known values: db_before holds naive
/// UTC ISO strings, responses add "+00:00".
fn time_key(v: &str) -> String {
    let v = v.strip_suffix("+00:00").unwrap_or(v);
    format!("time:{}", v.replacen(' ', "T", 1))
}

fn mask_uuids(s: &str, known: &BTreeSet<String>) -> String {
    replace_uuids(s, |u| {
        if known.contains(&u.to_ascii_lowercase()) {
            u.to_string()
        } else {
            "<uuid>".to_string()
        }
    })
}

fn compare_errors(want: &Value, got: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let Some(gm) = got.as_object() else {
        return vec!["body: want an errors envelope".to_string()];
    };
    let wl = want.as_array().cloned().unwrap_or_default();
    let gl = match gm.get("errors").and_then(Value::as_array) {
        Some(l) if l.len() == wl.len() => l.clone(),
        other => {
            return vec![format!(
                "errors: got {} elements, want {}",
                other.map_or(0, Vec::len),
                wl.len()
            )];
        }
    };
    let none = BTreeSet::new();
    for (i, (we, ge)) in wl.iter().zip(&gl).enumerate() {
        let empty = Map::new();
        let we = we.as_object().unwrap_or(&empty);
        let ge = ge.as_object().unwrap_or(&empty);
        let mut keys: BTreeSet<&String> = we.keys().collect();
        keys.extend(ge.keys().filter(|k| k.as_str() != "description"));
        for k in keys {
            match (we.get(k), ge.get(k)) {
                (Some(wv), Some(gv)) => {
                    if k == "detail" {
                        let ws = wv.as_str().unwrap_or("");
                        let gs = gv.as_str().unwrap_or("");
                        if mask_uuids(ws, &none) != mask_uuids(gs, &none) {
                            out.push(format!("errors[{i}].detail: got {gs:?}, want {ws:?}"));
                        }
                    } else if wv != gv {
                        out.push(format!("errors[{i}].{k}: got {gv}, want {wv}"));
                    }
                }
                (w, g) => out.push(format!(
                    "errors[{i}].{k}: present {}, want {}",
                    g.is_some(),
                    w.is_some()
                )),
            }
        }
    }
    out
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Compares shapes, types and values, ignoring generated uuids, timestamps,
/// generated names and link hosts.
fn compare_value(
    path: &str,
    want: &Value,
    got: &Value,
    known: &BTreeSet<String>,
    out: &mut Vec<String>,
) {
    match want {
        Value::Object(w) => {
            let Some(g) = got.as_object() else {
                out.push(format!("{path}: got {}, want object", type_name(got)));
                return;
            };
            let mut keys: BTreeSet<&String> = w.keys().collect();
            keys.extend(g.keys());
            for k in keys {
                let (wv, gv) = match (w.get(k), g.get(k)) {
                    (Some(wv), Some(gv)) => (wv, gv),
                    (wv, gv) => {
                        out.push(format!(
                            "{path}.{k}: present {}, want {}",
                            gv.is_some(),
                            wv.is_some()
                        ));
                        continue;
                    }
                };
                if k == "created_at" || k == "updated_at" {
                    let ws = wv.as_str().unwrap_or("");
                    if wv.is_null() != gv.is_null()
                        || (!ws.is_empty() && known.contains(&time_key(ws)) && gv != wv)
                    {
                        out.push(format!("{path}.{k}: got {gv}, want {wv}"));
                    }
                    continue;
                }
                compare_value(&format!("{path}.{k}"), wv, gv, known, out);
            }
        }
        Value::Array(w) => {
            let Some(g) = got.as_array() else {
                out.push(format!("{path}: got {}, want array", type_name(got)));
                return;
            };
            if g.len() != w.len() {
                out.push(format!(
                    "{path}: got {} elements, want {}",
                    g.len(),
                    w.len()
                ));
                return;
            }
            for (i, (wv, gv)) in w.iter().zip(g).enumerate() {
                compare_value(&format!("{path}[{i}]"), wv, gv, known, out);
            }
        }
        Value::String(w) => {
            let Some(g) = got.as_str() else {
                out.push(format!("{path}: got {}, want string", type_name(got)));
                return;
            };
            if generated_name(w) && generated_name(g) {
                return;
            }
            let (wm, gm) = (mask_uuids(w, known), mask_uuids(g, known));
            let (ws, gs) = (strip_host(&wm), strip_host(&gm));
            if ws != gs {
                out.push(format!("{path}: got {g:?}, want {w:?}"));
            }
        }
        _ => {
            // Numbers compare by value as Go's float64 decoding does (1 and
            // 1.0 are the same).
            let same = match (want, got) {
                (Value::Number(a), Value::Number(b)) => a.as_f64() == b.as_f64(),
                _ => want == got,
            };
            if !same {
                out.push(format!("{path}: got {got}, want {want}"));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn response(status: u16, headers: &[(&str, &str)], body: &str) -> Response {
        Response {
            status,
            headers: headers
                .iter()
                .map(|(k, v)| (k.to_ascii_lowercase(), v.to_string()))
                .collect(),
            body: body.as_bytes().to_vec(),
        }
    }

    #[test]
    fn compare_detects_differences() {
        let rec = Record {
            response: RecordedResponse {
                status: 200,
                headers: [
                    ("Content-Type", "application/json"),
                    ("vary", "OpenStack-API-Version"),
                    (
                        "OpenStack-API-Version",
                        "container-infrastructure-management 1.1",
                    ),
                ]
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
                body: serde_json::json!({"a": [{"href": "http://localhost/v1/x/", "rel": "self"}], "created_at": "x"}),
                body_text: None,
            },
            ..Record::default()
        };
        let h = [
            ("Content-Type", "application/json; charset=UTF-8"),
            ("Vary", "OpenStack-API-Version"),
            (
                "OpenStack-API-Version",
                "container-infrastructure-management 1.1",
            ),
        ];
        let d = compare(
            &rec,
            &response(
                200,
                &h,
                r#"{"a":[{"href":"https://other:9511/v1/x/","rel":"self"}],"created_at":"y"}"#,
            ),
        );
        assert!(d.is_empty(), "unexpected differences: {d:?}");
        let d = compare(
            &rec,
            &response(
                200,
                &h,
                r#"{"a":[{"href":"http://localhost/v1/y/","rel":"self"}],"created_at":null}"#,
            ),
        );
        assert_eq!(d.len(), 2, "{d:?}");
        let d = compare(&rec, &response(201, &h[..1], "{}"));
        assert!(
            d.len() >= 3,
            "want status, vary and body differences, got {d:?}"
        );
    }

    #[test]
    fn uuids_names_and_hosts_are_recognised() {
        assert_eq!(
            replace_uuids("a 11111111-2222-3333-4444-55555555555f b", |_| "<u>".into()),
            "a <u> b"
        );
        assert_eq!(
            replace_uuids("11111111-2222-3333-4444-5555555555", |_| "<u>".into()).len(),
            34
        );
        assert!(generated_name("pi-12-template") && generated_name("x-1-cluster"));
        assert!(!generated_name("Pi-12-template") && !generated_name("pi--cluster"));
        assert_eq!(strip_host("http://localhost/v1/x"), "/v1/x");
        assert_eq!(strip_host("https://h:9511"), "");
        assert_eq!(strip_host("/v1/x"), "/v1/x");
    }

    #[test]
    fn generated_uuids_are_masked_and_known_ones_kept() {
        let rec = Record {
            request: RecordedRequest {
                path: "/v1/clusters/11111111-2222-3333-4444-555555555555".to_string(),
                ..RecordedRequest::default()
            },
            response: RecordedResponse {
                status: 200,
                body: serde_json::json!({"uuid": "aaaaaaaa-2222-3333-4444-555555555555",
                    "cluster_id": "11111111-2222-3333-4444-555555555555"}),
                ..RecordedResponse::default()
            },
            ..Record::default()
        };
        let ok = r#"{"uuid":"bbbbbbbb-2222-3333-4444-555555555555","cluster_id":"11111111-2222-3333-4444-555555555555"}"#;
        assert!(compare(&rec, &response(200, &[], ok)).is_empty());
        let bad = r#"{"uuid":"bbbbbbbb-2222-3333-4444-555555555555","cluster_id":"cccccccc-2222-3333-4444-555555555555"}"#;
        assert_eq!(compare(&rec, &response(200, &[], bad)).len(), 1);
    }
}
