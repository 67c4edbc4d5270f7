//! Comparison of built objects with the goldens of the Go driver
//! (`testdata/go-reference/unit/`, see the README there), for tests.
//!
//! The Go test rendered each object with `sigs.k8s.io/yaml` and compared
//! the text byte for byte. Here both sides are parsed into JSON values and
//! compared as values, so that key order, quoting and line folding of the
//! YAML do not matter, and a mismatch is reported by its JSON pointer.
//!
//! The Go test normalised one thing: its conversion of typed objects
//! (`toUnstructured`) dropped `status` and `metadata.creationTimestamp`,
//! which a Go struct always carries. The same two fields are dropped from
//! both sides here; the goldens have neither, and the Rust builders never
//! write them, so this only keeps the comparison as the Go one was.

use std::fmt::Write as _;
use std::path::PathBuf;

use serde_json::Value;

/// The golden `name` of the Go unit tests, parsed.
pub(crate) fn load(name: &str) -> Value {
    let path: PathBuf = [
        env!("CARGO_MANIFEST_DIR"),
        "testdata/go-reference/unit",
        name,
    ]
    .iter()
    .collect();
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("parse {}: {e}", path.display()))
}

/// Drops what the Go test dropped before its comparison.
fn normalise(mut object: Value) -> Value {
    if let Some(o) = object.as_object_mut() {
        o.remove("status");
        if let Some(m) = o.get_mut("metadata").and_then(Value::as_object_mut) {
            m.remove("creationTimestamp");
        }
    }
    object
}

/// The differences between `want` and `got`, one line per JSON pointer.
pub(crate) fn differences(want: &Value, got: &Value) -> Vec<String> {
    let mut out = Vec::new();
    walk("", want, got, &mut out);
    out
}

/// Appends the differences under `path` to `out`.
fn walk(path: &str, want: &Value, got: &Value, out: &mut Vec<String>) {
    match (want, got) {
        (Value::Object(w), Value::Object(g)) => {
            for (key, wv) in w {
                let here = format!("{path}/{}", escape(key));
                match g.get(key) {
                    Some(gv) => walk(&here, wv, gv, out),
                    None => out.push(format!("{here}: missing, want {}", short(wv))),
                }
            }
            for (key, gv) in g {
                if !w.contains_key(key) {
                    let here = format!("{path}/{}", escape(key));
                    out.push(format!("{here}: unexpected {}", short(gv)));
                }
            }
        }
        (Value::Array(w), Value::Array(g)) => {
            for (i, (wv, gv)) in w.iter().zip(g).enumerate() {
                walk(&format!("{path}/{i}"), wv, gv, out);
            }
            if w.len() != g.len() {
                out.push(format!("{path}: {} items, want {}", g.len(), w.len()));
            }
        }
        _ if want != got => out.push(format!(
            "{}: got {}, want {}",
            if path.is_empty() { "/" } else { path },
            short(got),
            short(want)
        )),
        _ => {}
    }
}

/// A JSON pointer token (RFC 6901).
fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// A value as compact JSON, cut after 200 characters.
fn short(v: &Value) -> String {
    let s = v.to_string();
    match s.char_indices().nth(200) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s,
    }
}

/// Fails with the list of differences when `got` is not the golden `name`.
pub(crate) fn assert_matches(got: &Value, name: &str) {
    assert_matches_with(got, name, |_| {});
}

/// The variable the Rust driver adds to the Go driver's class and to
/// every Cluster: `apiServerLoadBalancerAllowedCIDRs` (the label
/// `api_master_lb_allowed_cidrs`), declared and patched as the class
/// builder does it, and set to the golden cluster's (empty) list.
const ADDED_VARIABLE: &str = "apiServerLoadBalancerAllowedCIDRs";

/// Puts into the golden `name` what the Rust driver adds to it (each a
/// row of docs/compatibility.md): the variable of [`ADDED_VARIABLE`], in
/// the sorted list of declarations or values, and its patch after the
/// load balancer's.
fn additions(name: &str, want: &mut Value) {
    let insert_sorted = |list: &mut Value, item: Value| {
        let list = list.as_array_mut().expect("a list of variables");
        let at = list
            .iter()
            .position(|v| v["name"].as_str().is_some_and(|n| n > ADDED_VARIABLE))
            .unwrap_or(list.len());
        list.insert(at, item);
    };
    match name {
        "cluster.yaml" => insert_sorted(
            &mut want["spec"]["topology"]["variables"],
            serde_json::json!({ "name": ADDED_VARIABLE, "value": [] }),
        ),
        "clusterclass.yaml" => {
            let declared = crate::variables::class_variables()
                .as_array()
                .and_then(|vs| vs.iter().find(|v| v["name"] == ADDED_VARIABLE).cloned())
                .expect("the declaration");
            insert_sorted(&mut want["spec"]["variables"], declared);
            let patch = crate::patches::class_patches()
                .as_array()
                .and_then(|ps| ps.iter().find(|p| p["name"] == ADDED_VARIABLE).cloned())
                .expect("the patch");
            let patches = want["spec"]["patches"].as_array_mut().expect("patches");
            let lb = patches
                .iter()
                .position(|p| p["name"] == "apiServerLoadBalancer")
                .expect("the load balancer's patch");
            patches.insert(lb + 1, patch);
        }
        _ => {}
    }
}

/// [`assert_matches`] against the golden as `fix` changes it: where the
/// Rust driver differs from the Go one on purpose (each such change is a
/// row of docs/compatibility.md).
pub(crate) fn assert_matches_with(got: &Value, name: &str, fix: impl FnOnce(&mut Value)) {
    let mut want = load(name);
    additions(name, &mut want);
    fix(&mut want);
    let want = normalise(want);
    let got = normalise(got.clone());
    let diffs = differences(&want, &got);
    if !diffs.is_empty() {
        let mut msg = format!("{name}: {} difference(s) with the Go golden\n", diffs.len());
        for d in &diffs {
            let _ = writeln!(msg, "  {d}");
        }
        panic!("{msg}");
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn differences_are_named_by_pointer() {
        let want = json!({ "a": { "b/c": [1, 2] }, "k": "v", "gone": true });
        let got = json!({ "a": { "b/c": [1, 3, 4] }, "k": "v", "extra": null });
        assert_eq!(
            differences(&want, &got),
            vec![
                "/a/b~1c/1: got 3, want 2",
                "/a/b~1c: 3 items, want 2",
                "/gone: missing, want true",
                "/extra: unexpected null",
            ]
        );
        assert!(differences(&want, &want).is_empty());
    }

    #[test]
    fn the_go_normalisation_drops_status_and_creation_time() {
        let v = json!({ "metadata": { "name": "x", "creationTimestamp": null }, "status": {} });
        assert_eq!(normalise(v), json!({ "metadata": { "name": "x" } }));
    }

    #[test]
    fn yaml_scalars_keep_their_types() {
        let v: Value = serde_saphyr::from_str(
            "a: \"0644\"\nb: 300\nc: 80%\nd: \"False\"\ne: true\nf: '{{ x }}'\ng: |\n  line\n",
        )
        .unwrap();
        assert_eq!(
            v,
            json!({ "a": "0644", "b": 300, "c": "80%", "d": "False", "e": true, "f": "{{ x }}", "g": "line\n" })
        );
    }
}
