//! Magnum's JSON Patch for the PATCH handlers of clusters, templates,
//! nodegroups and federations (spec `api/patch.md`): the body is read and
//! each operation checked against the resource's attribute lists before
//! anything is looked up ([`parse`]), then applied to the resource's
//! dictionary (its `as_dict()`, every column in the object's field order)
//! with Magnum's rules ([`apply`]). Errors are Magnum's, through
//! `magnum_jsonpatch::patch`.
//!
//! ```ignore
//! let ops = patch::parse(call.require_body()?, &patch::CLUSTER)?;
//! // … look up, policy …
//! let patched = patch::apply(&doc_of(&row), &ops, &patch::CLUSTER)?;
//! let delta = patch::changed(&doc_of(&row), &patched);
//! ```

use magnum_domain::MagnumError;
pub use magnum_jsonpatch::patch::{
    CLUSTER, CLUSTER_TEMPLATE, FEDERATION, NODE_GROUP, Op, Operation, Rules,
};
use python_semantics::Dict;

/// Reads a PATCH body into its operations as WSME does, each checked
/// against `rules` in order (internal attributes, non-removable
/// attributes, a value for `add`/`replace`). An absent or `null` body is
/// 400 `Missing argument: "patch"`.
pub fn parse(body: &[u8], rules: &Rules) -> Result<Vec<Operation>, MagnumError> {
    Ok(magnum_jsonpatch::patch::parse_and_check(body, rules)?)
}

/// Applies `ops` to the resource dictionary `doc` with Magnum's rules
/// (top-level `add` only on an existing unset attribute, Python-literal
/// values for `replace` of the structured fields, RFC 6902 otherwise) and
/// returns the patched copy.
pub fn apply(doc: &Dict, ops: &[Operation], rules: &Rules) -> Result<Dict, MagnumError> {
    Ok(magnum_jsonpatch::patch::apply(doc, ops, rules)?)
}

/// The top-level keys whose value differs between `before` and `after`
/// (present in one only included), in `before`'s order then `after`'s:
/// Magnum's "delta" of a patch.
pub fn changed(before: &Dict, after: &Dict) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (k, v) in before.iter() {
        let Some(k) = k.as_str() else { continue };
        if after.get(k) != Some(v) {
            out.push(k.to_string());
        }
    }
    for (k, _) in after.iter() {
        let Some(k) = k.as_str() else { continue };
        if !before.contains_key(k) {
            out.push(k.to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use python_semantics::PyValue;

    use super::*;

    /// The operations of a template patch `body`, which must parse.
    fn parsed(body: &[u8]) -> Vec<Operation> {
        parse(body, &CLUSTER_TEMPLATE).expect("valid operations")
    }

    /// The refusal of a template patch `body`.
    fn refused(body: &[u8]) -> MagnumError {
        parse(body, &CLUSTER_TEMPLATE).expect_err("refused operations")
    }

    fn doc() -> Dict {
        [
            ("id", PyValue::from(1)),
            ("uuid", PyValue::from("u1")),
            ("name", PyValue::from("a")),
            ("keypair_id", PyValue::None),
            ("labels", PyValue::Dict(Dict::new())),
        ]
        .into_iter()
        .collect()
    }

    #[test]
    fn operations_are_checked_before_anything_else() {
        let e = refused(br#"[{"op": "replace", "path": "/uuid", "value": "x"}]"#);
        assert_eq!(
            (e.status, e.kind, e.message.as_str()),
            (
                400,
                "ClientSideError",
                "'/uuid' is an internal attribute and can not be updated"
            )
        );
        let e = refused(b"");
        assert_eq!(e.message, "Missing argument: \"patch\"");
        let e = refused(br#"{"op": "replace"}"#);
        assert_eq!(
            e.message,
            "Invalid input for field/attribute patch. Value: '{'op': 'replace'}'. Value not a valid list: {'op': 'replace'}"
        );
        let e = refused(br#"[{"op": "remove", "path": "/image_id"}]"#);
        assert_eq!(
            e.message,
            "'/image_id' is a mandatory attribute and can not be removed"
        );
    }

    #[test]
    fn application_and_delta() {
        let ops = parsed(
            br#"[{"op": "replace", "path": "/name", "value": "b"},
                 {"op": "add", "path": "/keypair_id", "value": "k"},
                 {"op": "replace", "path": "/labels", "value": "{'x': 'y'}"}]"#,
        );
        let before = doc();
        let after = apply(&before, &ops, &CLUSTER_TEMPLATE).unwrap();
        assert_eq!(after.get("name"), Some(&PyValue::from("b")));
        assert_eq!(changed(&before, &after), ["name", "keypair_id", "labels"]);
        assert!(changed(&before, &before).is_empty());
        let ops = parsed(br#"[{"op": "add", "path": "/name", "value": "b"}]"#);
        let e = apply(&before, &ops, &CLUSTER_TEMPLATE).unwrap_err();
        assert_eq!(
            e.message,
            "The attribute /name has existed, please use 'replace' operation instead."
        );
        let ops = parsed(br#"[{"op": "remove", "path": "/nothing"}]"#);
        let e = apply(&before, &ops, &CLUSTER_TEMPLATE).unwrap_err();
        assert_eq!(
            (e.kind, e.message.as_str()),
            (
                "PatchError",
                "Couldn't apply patch '[{'path': '/nothing', 'op': 'remove'}]'. Reason: can't remove a non-existent object 'nothing'"
            )
        );
        let mut removed = before.clone();
        removed.remove("keypair_id");
        assert_eq!(changed(&before, &removed), ["keypair_id"]);
    }
}
