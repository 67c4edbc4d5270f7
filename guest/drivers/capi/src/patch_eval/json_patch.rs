//! JSON Patch (RFC 6902) operations `add`, `replace` and `remove`, the ones
//! a ClusterClass patch may use, as Cluster API applies them
//! (evanphx/json-patch v5 with its default options).
//!
//! What matters for the class: `add` never creates the parents of its
//! path, so appending to a list (`…/-`) needs the list to exist, which is
//! why `addEmptyLists` runs first; `add` on an existing object key
//! replaces the value; `replace` and `remove` need the target to exist.
//! Array indices are RFC 6901's (digits without leading zeros); the
//! negative indices json-patch also accepts are not used by the class and
//! are refused here.

use serde_json::Value;

use super::EvalError;

/// An operation of a ClusterClass JSON patch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    Add,
    Replace,
    Remove,
}

impl Op {
    /// The operation named `name`; the others of RFC 6902 (`move`, `copy`,
    /// `test`) are not allowed in a ClusterClass.
    pub(crate) fn parse(name: &str) -> Result<Op, EvalError> {
        match name {
            "add" => Ok(Op::Add),
            "replace" => Ok(Op::Replace),
            "remove" => Ok(Op::Remove),
            _ => Err(EvalError::new(format!(
                "unsupported JSON patch op {name:?}"
            ))),
        }
    }
}

/// The reference tokens of a JSON pointer (RFC 6901), unescaped.
fn tokens(pointer: &str) -> Result<Vec<String>, EvalError> {
    if pointer.is_empty() {
        return Ok(Vec::new());
    }
    let Some(rest) = pointer.strip_prefix('/') else {
        return Err(EvalError::new(format!(
            "JSON pointer {pointer:?} does not start with /"
        )));
    };
    rest.split('/')
        .map(|token| {
            // `~1` is `/` and `~0` is `~`; any other `~` is malformed.
            let mut out = String::with_capacity(token.len());
            let mut chars = token.chars();
            while let Some(c) = chars.next() {
                if c != '~' {
                    out.push(c);
                    continue;
                }
                match chars.next() {
                    Some('0') => out.push('~'),
                    Some('1') => out.push('/'),
                    _ => {
                        return Err(EvalError::new(format!(
                            "JSON pointer {pointer:?} has a bad escape"
                        )));
                    }
                }
            }
            Ok(out)
        })
        .collect()
}

/// An array index token: `0` or digits without a leading zero.
fn array_index(token: &str) -> Option<usize> {
    let canonical = token == "0"
        || (!token.is_empty()
            && !token.starts_with('0')
            && token.bytes().all(|b| b.is_ascii_digit()));
    canonical.then(|| token.parse().ok()).flatten()
}

/// Applies one operation to `doc`. `value` is the operation's value
/// (None for `remove`). On error `doc` is unchanged.
pub(crate) fn apply(
    doc: &mut Value,
    op: Op,
    path: &str,
    value: Option<Value>,
) -> Result<(), EvalError> {
    let fail = |why: &str| EvalError::new(format!("{op:?} {path}: {why}"));
    let tokens = tokens(path)?;
    let Some((last, parents)) = tokens.split_last() else {
        // The whole document.
        return match (op, value) {
            (Op::Remove, _) => Err(fail("cannot remove the document")),
            (_, Some(v)) => {
                *doc = v;
                Ok(())
            }
            (_, None) => Err(fail("no value")),
        };
    };
    let mut parent = &mut *doc;
    for token in parents {
        parent = match parent {
            Value::Object(map) => map.get_mut(token),
            Value::Array(items) => array_index(token).and_then(|i| items.get_mut(i)),
            _ => None,
        }
        .ok_or_else(|| fail("missing path"))?;
    }
    match (parent, op) {
        (Value::Object(map), Op::Add) => {
            map.insert(last.clone(), value.ok_or_else(|| fail("no value"))?);
        }
        (Value::Object(map), Op::Replace) => {
            let slot = map.get_mut(last).ok_or_else(|| fail("missing key"))?;
            *slot = value.ok_or_else(|| fail("no value"))?;
        }
        (Value::Object(map), Op::Remove) => {
            map.remove(last).ok_or_else(|| fail("missing key"))?;
        }
        (Value::Array(items), Op::Add) => {
            let value = value.ok_or_else(|| fail("no value"))?;
            if last == "-" {
                items.push(value);
            } else {
                let i = array_index(last)
                    .filter(|&i| i <= items.len())
                    .ok_or_else(|| fail("index out of bounds"))?;
                items.insert(i, value);
            }
        }
        (Value::Array(items), Op::Replace) => {
            let slot = array_index(last)
                .and_then(|i| items.get_mut(i))
                .ok_or_else(|| fail("index out of bounds"))?;
            *slot = value.ok_or_else(|| fail("no value"))?;
        }
        (Value::Array(items), Op::Remove) => {
            let i = array_index(last)
                .filter(|&i| i < items.len())
                .ok_or_else(|| fail("index out of bounds"))?;
            items.remove(i);
        }
        _ => return Err(fail("parent is not a container")),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn applied(op: Op, path: &str, value: Option<Value>) -> Result<Value, EvalError> {
        let mut doc = json!({ "a": { "list": [1, 2], "k": "v", "x/y": 0, "t~": 1 } });
        apply(&mut doc, op, path, value).map(|()| doc)
    }

    #[test]
    fn add_appends_inserts_and_sets() {
        assert_eq!(
            applied(Op::Add, "/a/list/-", Some(json!(3))).unwrap()["a"]["list"],
            json!([1, 2, 3])
        );
        assert_eq!(
            applied(Op::Add, "/a/list/0", Some(json!(0))).unwrap()["a"]["list"],
            json!([0, 1, 2])
        );
        assert_eq!(
            applied(Op::Add, "/a/list/2", Some(json!(3))).unwrap()["a"]["list"],
            json!([1, 2, 3])
        );
        assert_eq!(
            applied(Op::Add, "/a/k", Some(json!("w"))).unwrap()["a"]["k"],
            "w"
        );
        assert_eq!(
            applied(Op::Add, "/a/new", Some(json!([]))).unwrap()["a"]["new"],
            json!([])
        );
        assert_eq!(
            applied(Op::Add, "/a/x~1y", Some(json!(1))).unwrap()["a"]["x/y"],
            1
        );
        assert_eq!(
            applied(Op::Add, "/a/t~0", Some(json!(2))).unwrap()["a"]["t~"],
            2
        );
    }

    /// `add` does not create parents: the reason for `addEmptyLists`.
    #[test]
    fn add_needs_the_parent() {
        for path in [
            "/a/missing/-",
            "/b/c",
            "/a/list/3",
            "/a/list/01",
            "/a/k/x",
            "a",
        ] {
            assert!(applied(Op::Add, path, Some(json!(1))).is_err(), "{path}");
        }
    }

    #[test]
    fn replace_and_remove_need_the_target() {
        assert_eq!(
            applied(Op::Replace, "/a/k", Some(json!("w"))).unwrap()["a"]["k"],
            "w"
        );
        assert_eq!(
            applied(Op::Replace, "/a/list/1", Some(json!(9))).unwrap()["a"]["list"],
            json!([1, 9])
        );
        assert_eq!(
            applied(Op::Remove, "/a/list/0", None).unwrap()["a"]["list"],
            json!([2])
        );
        assert!(
            applied(Op::Remove, "/a/k", None).unwrap()["a"]
                .get("k")
                .is_none()
        );
        for (op, path) in [
            (Op::Replace, "/a/missing"),
            (Op::Replace, "/a/list/2"),
            (Op::Replace, "/a/list/-"),
            (Op::Remove, "/a/missing"),
            (Op::Remove, "/a/list/-"),
            (Op::Remove, ""),
        ] {
            assert!(applied(op, path, Some(json!(1))).is_err(), "{op:?} {path}");
        }
    }

    #[test]
    fn only_the_class_operations_exist() {
        assert_eq!(Op::parse("add"), Ok(Op::Add));
        for name in ["move", "copy", "test", "Add"] {
            assert!(Op::parse(name).is_err(), "{name}");
        }
    }
}
