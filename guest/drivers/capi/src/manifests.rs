//! The streams of Kubernetes objects the add-ons are made of: a manifest
//! (embedded or the operator's) is parsed into objects, changed
//! structurally (never by text substitution), and written back as the
//! stream a ClusterResourceSet applies.
//!
//! Manifests are read with the scalar rules of Kubernetes' own YAML reader
//! (YAML 1.1: `yes` and `on` are booleans, `0644` is octal), so that an
//! object means what it means to `kubectl apply`. They are written as JSON, one
//! document per line between `---` separators: JSON is YAML, the
//! ClusterResourceSet controller reads either, and a JSON string cannot
//! change the structure around it, so no value needs quoting rules.

use serde_json::{Map, Value};

/// A parsed Kubernetes object: a JSON object with `apiVersion` and `kind`.
pub(crate) type Object = Map<String, Value>;

/// The objects of a multi-document manifest, in order. Empty documents
/// are dropped, the items of a `List` take its place, and every object
/// must have an `apiVersion` and a `kind`. The error names the document.
pub(crate) fn parse(text: &str) -> Result<Vec<Object>, String> {
    let options = serde_saphyr::options! { legacy_octal_numbers: true };
    let documents: Vec<Value> =
        serde_saphyr::from_multiple_with_options(text, options).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for (i, document) in documents.into_iter().enumerate() {
        let document = match document {
            Value::Null => continue,
            Value::Object(o) if o.is_empty() => continue,
            Value::Object(o) => o,
            _ => return Err(format!("document {} is not an object", i + 1)),
        };
        let items = if document.get("kind").and_then(Value::as_str) == Some("List") {
            list_items(document)
        } else {
            vec![document]
        };
        for item in items {
            if text_of(&item, "apiVersion").is_empty() || text_of(&item, "kind").is_empty() {
                return Err(format!("document {} has no apiVersion or kind", i + 1));
            }
            out.push(item);
        }
    }
    Ok(out)
}

/// The non-empty object items of a `List`.
fn list_items(mut list: Object) -> Vec<Object> {
    let Some(Value::Array(items)) = list.remove("items") else {
        return Vec::new();
    };
    items
        .into_iter()
        .filter_map(|item| match item {
            Value::Object(o) if !o.is_empty() => Some(o),
            _ => None,
        })
        .collect()
}

/// The stream of `objects`: each as one line of JSON, separated by `---`.
// Deviation: the Go driver wrote YAML (sigs.k8s.io/yaml). JSON is YAML and
// the ClusterResourceSet controller reads both; without a YAML writer in
// the guest, JSON leaves no quoting rule to get wrong.
pub(crate) fn render(objects: &[Object]) -> String {
    let documents: Vec<String> = objects
        .iter()
        .map(|o| format!("{}\n", Value::Object(o.clone())))
        .collect();
    documents.join("---\n")
}

/// The string at `key` of an object, "" when absent or not a string.
pub(crate) fn text_of<'a>(o: &'a Object, key: &str) -> &'a str {
    o.get(key).and_then(Value::as_str).unwrap_or("")
}

/// `<kind>/<name>` of an object.
pub(crate) fn kind_name(o: &Object) -> String {
    let name = o
        .get("metadata")
        .and_then(|m| m.get("name"))
        .and_then(Value::as_str)
        .unwrap_or("");
    format!("{}/{name}", text_of(o, "kind"))
}

/// Calls `f` on every init container and container of a workload (a Pod,
/// a CronJob, or anything with a pod template at `spec.template`, such as
/// a Deployment or a DaemonSet).
pub(crate) fn for_each_container(o: &mut Object, mut f: impl FnMut(&mut Object)) {
    let path: &[&str] = match text_of(o, "kind") {
        "Pod" => &["spec"],
        "CronJob" => &["spec", "jobTemplate", "spec", "template", "spec"],
        _ => &["spec", "template", "spec"],
    };
    let mut pod = o;
    for key in path {
        match pod.get_mut(*key) {
            Some(Value::Object(next)) => pod = next,
            _ => return,
        }
    }
    for key in ["initContainers", "containers"] {
        if let Some(Value::Array(list)) = pod.get_mut(key) {
            for c in list.iter_mut().filter_map(Value::as_object_mut) {
                f(c);
            }
        }
    }
}

/// Whether a container has the environment variable `name`.
pub(crate) fn has_env(c: &Object, name: &str) -> bool {
    c.get("env").and_then(Value::as_array).is_some_and(|env| {
        env.iter()
            .any(|e| e.get("name").and_then(Value::as_str) == Some(name))
    })
}

/// Sets a container's environment variable `name` to `value`, replacing
/// its value (or `valueFrom`) when it has one, else appending it.
pub(crate) fn set_env(c: &mut Object, name: &str, value: &str) {
    let env = c.entry("env").or_insert_with(|| Value::Array(Vec::new()));
    if !env.is_array() {
        *env = Value::Array(Vec::new());
    }
    let Value::Array(env) = env else {
        return;
    };
    let existing = env
        .iter_mut()
        .filter_map(Value::as_object_mut)
        .find(|e| e.get("name").and_then(Value::as_str) == Some(name));
    match existing {
        Some(e) => {
            e.remove("valueFrom");
            e.insert("value".into(), Value::String(value.into()));
        }
        None => {
            let mut e = Map::new();
            e.insert("name".into(), Value::String(name.into()));
            e.insert("value".into(), Value::String(value.into()));
            env.push(Value::Object(e));
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn object(v: Value) -> Object {
        match v {
            Value::Object(o) => o,
            other => panic!("not an object: {other}"),
        }
    }

    #[test]
    fn lists_are_flattened_and_empty_documents_dropped() {
        let text = "---\n---\napiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n- {}\n---\n{}\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: b}\n";
        let objs = parse(text).unwrap();
        let names: Vec<String> = objs.iter().map(kind_name).collect();
        assert_eq!(names, ["ConfigMap/a", "Secret/b"]);
    }

    #[test]
    fn an_object_needs_an_api_version_and_a_kind() {
        let err = parse("apiVersion: v1\nkind: Secret\n---\nkind: Secret\n").unwrap_err();
        assert_eq!(err, "document 2 has no apiVersion or kind");
        assert!(parse("- a\n- b\n").unwrap_err().contains("not an object"));
        assert!(parse("a: [\n").is_err());
    }

    #[test]
    fn yaml_scalars_keep_kubernetes_types() {
        let objs = parse(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {a: \"true\", b: \"0644\"}\nimmutable: yes\nn: 420\nmode: 0644\n",
        )
        .unwrap();
        assert_eq!(
            Value::Object(objs[0].clone()),
            json!({ "apiVersion": "v1", "kind": "ConfigMap", "metadata": { "name": "x" },
                    "data": { "a": "true", "b": "0644" }, "immutable": true, "n": 420, "mode": 420 })
        );
    }

    #[test]
    fn the_stream_round_trips() {
        let objs = parse("apiVersion: v1\nkind: A\nmetadata: {name: a}\n---\napiVersion: v1\nkind: B\nmetadata: {name: \"x: y # z\"}\n").unwrap();
        let text = render(&objs);
        assert_eq!(text.matches("\n---\n").count(), 1);
        assert_eq!(parse(&text).unwrap(), objs);
    }

    #[test]
    fn containers_of_every_workload_kind() {
        for (kind, pod) in [
            ("Pod", json!({ "spec": {} })),
            (
                "DaemonSet",
                json!({ "spec": { "template": { "spec": {} } } }),
            ),
            (
                "CronJob",
                json!({ "spec": { "jobTemplate": { "spec": { "template": { "spec": {} } } } } }),
            ),
        ] {
            let mut o = object(pod);
            o.insert("kind".into(), json!(kind));
            let spec = match kind {
                "Pod" => &mut o["spec"],
                "CronJob" => &mut o["spec"]["jobTemplate"]["spec"]["template"]["spec"],
                _ => &mut o["spec"]["template"]["spec"],
            };
            *spec = json!({ "initContainers": [{ "name": "i" }], "containers": [{ "name": "c" }] });
            let mut seen = Vec::new();
            for_each_container(&mut o, |c| seen.push(text_of(c, "name").to_string()));
            assert_eq!(seen, ["i", "c"], "{kind}");
        }
        let mut cm = object(json!({ "kind": "ConfigMap", "data": {} }));
        for_each_container(&mut cm, |_| panic!("a ConfigMap has no containers"));
    }

    #[test]
    fn env_values_replace_value_from() {
        let mut c = object(json!({ "name": "c", "env": [
            { "name": "A", "valueFrom": { "fieldRef": { "fieldPath": "x" } } },
        ] }));
        assert!(has_env(&c, "A"));
        assert!(!has_env(&c, "B"));
        set_env(&mut c, "A", "1");
        set_env(&mut c, "B", "2");
        assert_eq!(
            c["env"],
            json!([{ "name": "A", "value": "1" }, { "name": "B", "value": "2" }])
        );
        let mut bare = object(json!({ "name": "c" }));
        set_env(&mut bare, "A", "1");
        assert_eq!(bare["env"], json!([{ "name": "A", "value": "1" }]));
    }
}
