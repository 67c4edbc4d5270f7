use std::path::PathBuf;

use proptest::prelude::*;

use super::*;
use python_semantics::python::{PyInt, repr};

/// A resource document in key order (Go rendered its maps sorted).
fn doc(entries: Vec<(&str, PyValue)>) -> Dict {
    let mut entries = entries;
    entries.sort_by(|a, b| a.0.cmp(b.0));
    entries.into_iter().collect()
}

fn dict(entries: Vec<(&str, PyValue)>) -> PyValue {
    PyValue::Dict(entries.into_iter().collect())
}

fn cluster_doc() -> Dict {
    doc(vec![
        ("uuid", "5d12f6fd-a196-4bf0-ae4c-1f639a523a52".into()),
        ("name", "cluster1".into()),
        (
            "cluster_template_id",
            "e74c40e0-d825-11e2-a28f-0800200c9a66".into(),
        ),
        ("node_count", 1.into()),
        ("master_count", 1.into()),
        ("labels", dict(vec![("kube_tag", "v1.30".into())])),
        ("health_status", PyValue::None),
        ("health_status_reason", dict(vec![])),
        ("keypair", PyValue::None),
        ("docker_volume_size", 20.into()),
    ])
}

fn nodegroup_doc() -> Dict {
    doc(vec![
        ("uuid", "483203a3-dbee-4a9c-9d65-9820512f4df8".into()),
        ("name", "nodegroup1".into()),
        ("node_count", 2.into()),
        ("min_node_count", 0.into()),
        ("max_node_count", PyValue::None),
        ("node_labels", dict(vec![])),
        ("node_taints", PyValue::List(vec![])),
        ("role", "worker".into()),
    ])
}

fn op(op: Op, path: &str, value: Option<PyValue>) -> Operation {
    Operation::new(op, path, value)
}

/// Go: `TestParse`.
#[test]
fn parse_table() {
    let big = PyInt::from_decimal(false, "123456789012345678901234567890").expect("digits");
    let ok: Vec<(&str, Vec<Operation>)> = vec![
        (
            r#"[{"op":"replace","path":"/name","value":"x"}]"#,
            vec![op(Op::Replace, "/name", Some("x".into()))],
        ),
        (
            r#"[{"op":"replace","path":"/node_count","value":3},{"op":"add","path":"/a","value":true},{"op":"add","path":"/b","value":123456789012345678901234567890}]"#,
            vec![
                op(Op::Replace, "/node_count", Some(3.into())),
                op(Op::Add, "/a", Some(true.into())),
                op(Op::Add, "/b", Some(PyValue::Int(big))),
            ],
        ),
        (
            r#"[{"path":"/x","op":"remove"}]"#,
            vec![op(Op::Remove, "/x", None)],
        ),
        (
            r#"[{"path":"/x","op":"remove","value":null}]"#,
            vec![op(Op::Remove, "/x", None)],
        ),
        ("[]", vec![]),
        (
            r#"[{"path":"/labels/clé","op":"remove"}]"#,
            vec![op(Op::Remove, "/labels/clé", None)],
        ),
        // Python's "$" matches before a final newline.
        (
            r#"[{"path":"/a-b_c/1\n","op":"remove"}]"#,
            vec![op(Op::Remove, "/a-b_c/1\n", None)],
        ),
    ];
    for (body, want) in ok {
        assert_eq!(parse(body.as_bytes()), Ok(want), "{body}");
    }
    let errors: &[(&str, ErrorKind, &str)] = &[
        (
            "{",
            ErrorKind::ClientSideError,
            "Request is not in valid JSON format",
        ),
        (
            "",
            ErrorKind::MissingArgument,
            r#"Missing argument: "patch""#,
        ),
        (
            " \n",
            ErrorKind::MissingArgument,
            r#"Missing argument: "patch""#,
        ),
        (
            "null",
            ErrorKind::MissingArgument,
            r#"Missing argument: "patch""#,
        ),
        (
            r#"{"op":"add"}"#,
            ErrorKind::InvalidInput,
            "Invalid input for field/attribute patch. Value: '{'op': 'add'}'. Value not a valid \
             list: {'op': 'add'}",
        ),
        (
            r#"[{"op":"invalid","path":"/name","value":"x"}]"#,
            ErrorKind::InvalidInput,
            "Invalid input for field/attribute op. Value: 'invalid'. Value should be one of: \
             add, remove, replace",
        ),
        (
            r#"[{"op":"add","path":"invalid-path","value":"x"}]"#,
            ErrorKind::InvalidInput,
            r"Invalid input for field/attribute path. Value: 'invalid-path'. Value should match the pattern ^(/[\w-]+)+$",
        ),
        (
            r#"[{"op":"add","path":"/labels/a.b","value":"x"}]"#,
            ErrorKind::InvalidInput,
            r"Invalid input for field/attribute path. Value: '/labels/a.b'. Value should match the pattern ^(/[\w-]+)+$",
        ),
        (
            r#"[{"op":"add","value":"x"}]"#,
            ErrorKind::InvalidInput,
            "Invalid input for field/attribute path. Value: 'None'. Mandatory field missing.",
        ),
        (
            r#"[{"path":"/a","value":"x"}]"#,
            ErrorKind::InvalidInput,
            "Invalid input for field/attribute op. Value: 'None'. Mandatory field missing.",
        ),
        (
            r#"[{"op":"replace","path":"/node_count","value":1.5}]"#,
            ErrorKind::InvalidInput,
            "Invalid input for field/attribute value. Value: '1.5'. Wrong type. Expected \
             '(<class 'str'>, <class 'int'>)', got '<class 'float'>'",
        ),
        (
            r#"[{"op":"replace","path":"/labels","value":{"b":"1","a":"2"}}]"#,
            ErrorKind::InvalidInput,
            "Invalid input for field/attribute value. Value: '{'b': '1', 'a': '2'}'. Wrong type. \
             Expected '(<class 'str'>, <class 'int'>)', got '<class 'dict'>'",
        ),
        (
            r#"[{"op":"replace","path":"/node_taints","value":[]}]"#,
            ErrorKind::InvalidInput,
            "Invalid input for field/attribute value. Value: '[]'. Wrong type. Expected \
             '(<class 'str'>, <class 'int'>)', got '<class 'list'>'",
        ),
        (
            r#"[{"op":"add","path":"/a","value":"x","from":"/b"}]"#,
            ErrorKind::UnknownAttribute,
            "Unknown attribute for argument patch: from",
        ),
        (
            r#"[{"op":"add","path":"/a","x":1,"from":"/b"}]"#,
            ErrorKind::UnknownAttribute,
            "Unknown attributes for argument patch: x, from",
        ),
        (
            r#"["x"]"#,
            ErrorKind::ServerError,
            "'str' object has no attribute 'keys'",
        ),
        (
            "[null]",
            ErrorKind::ServerError,
            "'NoneType' object is not subscriptable",
        ),
        (
            r#"[{"op":"add","path":null}]"#,
            ErrorKind::ServerError,
            "'NoneType' object has no attribute 'count'",
        ),
        (
            r#"[{"op":null,"path":"/a"}]"#,
            ErrorKind::ServerError,
            "Unknown operation None",
        ),
        (
            r#"[{"op":"add","path":5,"value":"x"}]"#,
            ErrorKind::InvalidInput,
            "Invalid input for field/attribute path. Value: '5'. Value should be string",
        ),
        (
            r#"[{"op":5,"path":"/a"}]"#,
            ErrorKind::InvalidInput,
            "Invalid input for field/attribute op. Value: '5'. Value should be one of: add, \
             remove, replace",
        ),
    ];
    for (body, kind, msg) in errors {
        let err = parse(body.as_bytes()).expect_err(body);
        assert_eq!(
            (err.kind(), err.status(), err.message()),
            (*kind, 400, *msg),
            "{body}"
        );
    }
    let deep = "[".repeat(2000) + &"]".repeat(2000);
    let err = parse(deep.as_bytes()).expect_err("too deep");
    assert_eq!(err.kind(), ErrorKind::ServerError);
    assert!(
        err.message()
            .starts_with("maximum recursion depth exceeded")
    );
}

/// Go: `TestParseAndCheckOrder` — the first element's attribute rule fails
/// before the second element's type check, as WSME validates element by
/// element.
#[test]
fn parse_and_check_order() {
    let err = parse_and_check(
        br#"[{"op":"replace","path":"/uuid","value":"x"},{"op":"bogus","path":"/a"}]"#,
        &CLUSTER,
    )
    .expect_err("internal attribute");
    assert_eq!(
        err.message(),
        "'/uuid' is an internal attribute and can not be updated"
    );
    // Without rules the type error of the second element is found.
    let err = parse(br#"[{"op":"replace","path":"/uuid","value":"x"},{"op":"bogus","path":"/a"}]"#)
        .expect_err("bad op");
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
}

struct ApplyCase {
    name: &'static str,
    doc: fn() -> Dict,
    rules: Rules,
    ops: &'static str,
    want: Result<fn(&Dict), (ErrorKind, &'static str)>,
}

/// Go: `TestApply`.
#[test]
fn apply_table() {
    fn ok(check: fn(&Dict)) -> Result<fn(&Dict), (ErrorKind, &'static str)> {
        Ok(check)
    }
    let cases = vec![
        ApplyCase {
            name: "replace node_count",
            doc: cluster_doc,
            rules: CLUSTER,
            ops: r#"[{"op":"replace","path":"/node_count","value":3}]"#,
            want: ok(|out| assert_eq!(out.get("node_count"), Some(&PyValue::from(3)))),
        },
        ApplyCase {
            name: "remove resets to null",
            doc: cluster_doc,
            rules: CLUSTER,
            ops: r#"[{"op":"remove","path":"/node_count"}]"#,
            want: ok(|out| assert!(!out.contains_key("node_count"))),
        },
        ApplyCase {
            name: "internal attribute",
            doc: cluster_doc,
            rules: CLUSTER,
            ops: r#"[{"op":"replace","path":"/uuid","value":"x"}]"#,
            want: Err((
                ErrorKind::ClientSideError,
                "'/uuid' is an internal attribute and can not be updated",
            )),
        },
        ApplyCase {
            name: "internal nodegroup attribute",
            doc: nodegroup_doc,
            rules: NODE_GROUP,
            ops: r#"[{"op":"replace","path":"/node_count","value":3}]"#,
            want: Err((
                ErrorKind::ClientSideError,
                "'/node_count' is an internal attribute and can not be updated",
            )),
        },
        ApplyCase {
            name: "mandatory attribute",
            doc: cluster_doc,
            rules: CLUSTER_TEMPLATE,
            ops: r#"[{"op":"remove","path":"/image_id"}]"#,
            want: Err((
                ErrorKind::ClientSideError,
                "'/image_id' is a mandatory attribute and can not be removed",
            )),
        },
        ApplyCase {
            name: "add needs value",
            doc: cluster_doc,
            rules: CLUSTER,
            ops: r#"[{"op":"add","path":"/keypair"}]"#,
            want: Err((
                ErrorKind::ClientSideError,
                "'add' and 'replace' operations needs value",
            )),
        },
        ApplyCase {
            name: "add of unknown top-level attribute",
            doc: cluster_doc,
            rules: CLUSTER,
            ops: r#"[{"op":"add","path":"/foo","value":"x"}]"#,
            want: Err((
                ErrorKind::ClientSideError,
                "Adding a new attribute /foo to the root of the resource is not allowed.",
            )),
        },
        ApplyCase {
            name: "add of a set attribute",
            doc: cluster_doc,
            rules: CLUSTER,
            ops: r#"[{"op":"add","path":"/docker_volume_size","value":3}]"#,
            want: Err((
                ErrorKind::ClientSideError,
                "The attribute /docker_volume_size has existed, please use 'replace' operation \
                 instead.",
            )),
        },
        ApplyCase {
            name: "add of an unset attribute",
            doc: cluster_doc,
            rules: CLUSTER,
            ops: r#"[{"op":"add","path":"/keypair","value":"kp"}]"#,
            want: ok(|out| assert_eq!(out.get("keypair"), Some(&PyValue::from("kp")))),
        },
        ApplyCase {
            name: "add on labels always fails",
            doc: cluster_doc,
            rules: CLUSTER,
            ops: r#"[{"op":"add","path":"/labels","value":"{}"}]"#,
            want: Err((
                ErrorKind::ClientSideError,
                "The attribute /labels has existed, please use 'replace' operation instead.",
            )),
        },
        ApplyCase {
            name: "nested add creates a key",
            doc: cluster_doc,
            rules: CLUSTER,
            ops: r#"[{"op":"add","path":"/labels/new","value":"v"}]"#,
            want: ok(|out| {
                assert_eq!(
                    out.get("labels").map(repr).as_deref(),
                    Some("{'kube_tag': 'v1.30', 'new': 'v'}")
                )
            }),
        },
        ApplyCase {
            name: "replace of a missing attribute",
            doc: cluster_doc,
            rules: CLUSTER,
            ops: r#"[{"path":"/foo","op":"replace","value":"x"}]"#,
            want: Err((
                ErrorKind::PatchError,
                "Couldn't apply patch '[{'path': '/foo', 'op': 'replace', 'value': 'x'}]'. \
                 Reason: can't replace a non-existent object 'foo'",
            )),
        },
        ApplyCase {
            name: "remove of a missing attribute",
            doc: nodegroup_doc,
            rules: NODE_GROUP,
            ops: r#"[{"path":"/not_there","op":"remove"}]"#,
            want: Err((
                ErrorKind::PatchError,
                "Couldn't apply patch '[{'path': '/not_there', 'op': 'remove'}]'. Reason: can't \
                 remove a non-existent object 'not_there'",
            )),
        },
        ApplyCase {
            name: "deep path into a missing key",
            doc: cluster_doc,
            rules: CLUSTER,
            ops: r#"[{"path":"/health_status_reason/a/b","op":"add","value":"x"}]"#,
            want: Err((
                ErrorKind::PatchError,
                "Couldn't apply patch '[{'path': '/health_status_reason/a/b', 'op': 'add', \
                 'value': 'x'}]'. Reason: member 'a' not found in {}",
            )),
        },
        ApplyCase {
            name: "labels from a python literal",
            doc: cluster_doc,
            rules: CLUSTER,
            ops: r#"[{"op":"replace","path":"/labels","value":"{'a': 'b', \"c\": 'd'}"}]"#,
            want: ok(|out| {
                let labels = out.get("labels").expect("labels");
                assert_eq!(
                    string_map("labels", labels),
                    Ok(Some(vec![
                        ("a".into(), "b".into()),
                        ("c".into(), "d".into())
                    ]))
                );
            }),
        },
        ApplyCase {
            name: "bad literal",
            doc: cluster_doc,
            rules: CLUSTER,
            ops: r#"[{"path":"/labels","op":"replace","value":"{bad"}]"#,
            want: Err((
                ErrorKind::PatchError,
                "Couldn't apply patch '[{'path': '/labels', 'op': 'replace', 'value': '{bad'}]'. \
                 Reason: '{' was never closed (<unknown>, line 1)",
            )),
        },
        ApplyCase {
            name: "integer literal value",
            doc: cluster_doc,
            rules: CLUSTER,
            ops: r#"[{"path":"/labels","op":"replace","value":5}]"#,
            want: Err((
                ErrorKind::PatchError,
                "Couldn't apply patch '[{'path': '/labels', 'op': 'replace', 'value': 5}]'. \
                 Reason: malformed node or string: 5",
            )),
        },
        ApplyCase {
            name: "earlier parsed values show in the message",
            doc: cluster_doc,
            rules: CLUSTER,
            ops: r#"[{"path":"/labels","op":"replace","value":"{'a': 1}"},{"path":"/nope","op":"remove"}]"#,
            want: Err((
                ErrorKind::PatchError,
                "Couldn't apply patch '[{'path': '/labels', 'op': 'replace', 'value': {'a': 1}}, \
                 {'path': '/nope', 'op': 'remove'}]'. Reason: can't remove a non-existent object \
                 'nope'",
            )),
        },
        ApplyCase {
            name: "unhashable key is a client error",
            doc: cluster_doc,
            rules: CLUSTER,
            ops: r#"[{"path":"/labels","op":"replace","value":"{[1]: 2}"}]"#,
            want: Err((ErrorKind::ServerError, "unhashable type: 'list'")),
        },
        ApplyCase {
            name: "taints from a python literal",
            doc: nodegroup_doc,
            rules: NODE_GROUP,
            ops: r#"[{"op":"replace","path":"/node_taints","value":"[{'key': 'k', 'effect': 'NoSchedule'}]"}]"#,
            want: ok(|out| {
                let taints_value = out.get("node_taints").expect("node_taints");
                assert_eq!(
                    taints("node_taints", taints_value),
                    Ok(Some(vec![vec![
                        ("key".into(), "k".into()),
                        ("effect".into(), "NoSchedule".into())
                    ]]))
                );
            }),
        },
        ApplyCase {
            name: "nodegroup min count removal",
            doc: nodegroup_doc,
            rules: NODE_GROUP,
            ops: r#"[{"op":"remove","path":"/min_node_count"},{"op":"add","path":"/max_node_count","value":5}]"#,
            want: ok(|out| {
                assert!(!out.contains_key("min_node_count"));
                assert_eq!(out.get("max_node_count"), Some(&PyValue::from(5)));
            }),
        },
        ApplyCase {
            name: "list append and insert",
            doc: nodegroup_doc,
            rules: NODE_GROUP,
            ops: r#"[{"op":"add","path":"/node_taints/-","value":"a"},{"op":"add","path":"/node_taints/0","value":"b"}]"#,
            want: ok(|out| {
                assert_eq!(
                    out.get("node_taints").map(repr).as_deref(),
                    Some("['b', 'a']")
                )
            }),
        },
        ApplyCase {
            name: "list insert out of range",
            doc: nodegroup_doc,
            rules: NODE_GROUP,
            ops: r#"[{"op":"add","path":"/node_taints/3","value":"a"}]"#,
            want: Err((
                ErrorKind::PatchError,
                "Couldn't apply patch '[{'path': '/node_taints/3', 'op': 'add', 'value': 'a'}]'. \
                 Reason: can't insert outside of list",
            )),
        },
        ApplyCase {
            name: "bad sequence index",
            doc: nodegroup_doc,
            rules: NODE_GROUP,
            ops: r#"[{"op":"remove","path":"/node_taints/x"}]"#,
            want: Err((
                ErrorKind::PatchError,
                "Couldn't apply patch '[{'path': '/node_taints/x', 'op': 'remove'}]'. Reason: \
                 'x' is not a valid sequence index",
            )),
        },
        ApplyCase {
            name: "walking into null",
            doc: cluster_doc,
            rules: CLUSTER,
            ops: r#"[{"op":"add","path":"/keypair/a","value":"x"}]"#,
            want: Err((
                ErrorKind::PatchError,
                "Couldn't apply patch '[{'path': '/keypair/a', 'op': 'add', 'value': 'x'}]'. \
                 Reason: Document '<class 'NoneType'>' does not support indexing, must be \
                 mapping/sequence or support __getitem__",
            )),
        },
        // Beyond the Go table: python-jsonpatch's remaining paths.
        ApplyCase {
            name: "replace with '-'",
            doc: nodegroup_doc,
            rules: NODE_GROUP,
            ops: r#"[{"op":"replace","path":"/node_taints/-","value":"a"}]"#,
            want: Err((
                ErrorKind::PatchError,
                "Couldn't apply patch '[{'path': '/node_taints/-', 'op': 'replace', 'value': \
                 'a'}]'. Reason: 'path' with '-' can't be applied to 'replace' operation",
            )),
        },
        ApplyCase {
            name: "replace outside of a list",
            doc: nodegroup_doc,
            rules: NODE_GROUP,
            ops: r#"[{"op":"replace","path":"/node_taints/0","value":"a"}]"#,
            want: Err((
                ErrorKind::PatchError,
                "Couldn't apply patch '[{'path': '/node_taints/0', 'op': 'replace', 'value': \
                 'a'}]'. Reason: can't replace outside of list",
            )),
        },
        ApplyCase {
            name: "remove with '-'",
            doc: nodegroup_doc,
            rules: NODE_GROUP,
            ops: r#"[{"op":"remove","path":"/node_taints/-"}]"#,
            want: Err((
                ErrorKind::PatchError,
                "Couldn't apply patch '[{'path': '/node_taints/-', 'op': 'remove'}]'. Reason: \
                 invalid array index '-'",
            )),
        },
        ApplyCase {
            name: "leading zero index",
            doc: nodegroup_doc,
            rules: NODE_GROUP,
            ops: r#"[{"op":"add","path":"/node_taints/01","value":"a"}]"#,
            want: Err((
                ErrorKind::PatchError,
                "Couldn't apply patch '[{'path': '/node_taints/01', 'op': 'add', 'value': \
                 'a'}]'. Reason: '01' is not a valid sequence index",
            )),
        },
        ApplyCase {
            name: "index into a string",
            doc: cluster_doc,
            rules: CLUSTER,
            ops: r#"[{"op":"add","path":"/name/0","value":"a"}]"#,
            want: Err((
                ErrorKind::PatchError,
                "Couldn't apply patch '[{'path': '/name/0', 'op': 'add', 'value': 'a'}]'. \
                 Reason: unable to fully resolve json pointer /name/0, part 0",
            )),
        },
        ApplyCase {
            name: "remove from a string",
            doc: cluster_doc,
            rules: CLUSTER,
            ops: r#"[{"op":"remove","path":"/name/0"}]"#,
            want: Err((
                ErrorKind::ServerError,
                "'str' object doesn't support item deletion",
            )),
        },
        ApplyCase {
            name: "walk through a character",
            doc: cluster_doc,
            rules: CLUSTER,
            ops: r#"[{"op":"add","path":"/name/0/0","value":"a"}]"#,
            want: Err((
                ErrorKind::PatchError,
                "Couldn't apply patch '[{'path': '/name/0/0', 'op': 'add', 'value': 'a'}]'. \
                 Reason: unable to fully resolve json pointer /name/0/0, part 0",
            )),
        },
        ApplyCase {
            name: "walk past the end of a string",
            doc: cluster_doc,
            rules: CLUSTER,
            ops: r#"[{"op":"add","path":"/name/99/0","value":"a"}]"#,
            want: Err((
                ErrorKind::PatchError,
                "Couldn't apply patch '[{'path': '/name/99/0', 'op': 'add', 'value': 'a'}]'. \
                 Reason: index '99' is out of bounds",
            )),
        },
        ApplyCase {
            name: "walk through '-'",
            doc: nodegroup_doc,
            rules: NODE_GROUP,
            ops: r#"[{"op":"add","path":"/node_taints/-/a","value":"a"}]"#,
            want: Err((
                ErrorKind::PatchError,
                "Couldn't apply patch '[{'path': '/node_taints/-/a', 'op': 'add', 'value': \
                 'a'}]'. Reason: Document '<class 'jsonpointer.EndOfList'>' does not support \
                 indexing, must be mapping/sequence or support __getitem__",
            )),
        },
        ApplyCase {
            name: "index into an int",
            doc: cluster_doc,
            rules: CLUSTER,
            ops: r#"[{"op":"remove","path":"/node_count/a"}]"#,
            want: Err((
                ErrorKind::PatchError,
                "Couldn't apply patch '[{'path': '/node_count/a', 'op': 'remove'}]'. Reason: \
                 Document '<class 'int'>' does not support indexing, must be mapping/sequence or \
                 support __getitem__",
            )),
        },
        ApplyCase {
            name: "tuple from a literal, then into it",
            doc: nodegroup_doc,
            rules: NODE_GROUP,
            ops: r#"[{"op":"replace","path":"/node_taints","value":"({'a': 'b'}, 2)"},{"op":"add","path":"/node_taints/1","value":"x"}]"#,
            want: Err((
                ErrorKind::PatchError,
                "Couldn't apply patch '[{'path': '/node_taints', 'op': 'replace', 'value': \
                 ({'a': 'b'}, 2)}, {'path': '/node_taints/1', 'op': 'add', 'value': 'x'}]'. \
                 Reason: unable to fully resolve json pointer /node_taints/1, part 1",
            )),
        },
        ApplyCase {
            name: "a dict inside a tuple can change",
            doc: nodegroup_doc,
            rules: NODE_GROUP,
            ops: r#"[{"op":"replace","path":"/node_taints","value":"({'a': 'b'}, 2)"},{"op":"add","path":"/node_taints/0/c","value":"d"}]"#,
            want: ok(|out| {
                assert_eq!(
                    out.get("node_taints").map(repr).as_deref(),
                    Some("({'a': 'b', 'c': 'd'}, 2)")
                )
            }),
        },
        ApplyCase {
            name: "nested replace and remove in a literal dict",
            doc: cluster_doc,
            rules: CLUSTER,
            ops: r#"[{"op":"replace","path":"/labels","value":"{'a': [1, {'b': 2}], 1: 'int key'}"},{"op":"replace","path":"/labels/a/1/b","value":3},{"op":"remove","path":"/labels/a/0"},{"op":"add","path":"/labels/1","value":"str key"}]"#,
            want: ok(|out| {
                assert_eq!(
                    out.get("labels").map(repr).as_deref(),
                    Some("{'a': [{'b': 3}], 1: 'int key', '1': 'str key'}")
                )
            }),
        },
    ];
    for case in cases {
        let ops = parse(case.ops.as_bytes()).unwrap_or_else(|e| panic!("{}: {e:?}", case.name));
        let input = (case.doc)();
        let before = input.clone();
        let got = apply(&input, &ops, &case.rules);
        assert_eq!(input, before, "{}: apply changed its input", case.name);
        match (got, case.want) {
            (Ok(out), Ok(check)) => check(&out),
            (Err(e), Err((kind, msg))) => {
                assert_eq!(
                    (e.kind(), e.status(), e.message()),
                    (kind, 400, msg),
                    "{}",
                    case.name
                )
            }
            (got, _) => panic!("{}: unexpected {got:?}", case.name),
        }
    }
}

/// The CPython limit of a deep literal escapes Magnum: a ServerError with
/// its text.
#[test]
fn deep_literal_is_a_server_error() {
    let value = "-".repeat(3000) + "1";
    let ops = vec![op(Op::Replace, "/labels", Some(value.into()))];
    let err = apply(&cluster_doc(), &ops, &CLUSTER).expect_err("too deep");
    assert_eq!(
        (err.kind(), err.message()),
        (
            ErrorKind::ServerError,
            "maximum recursion depth exceeded during ast construction"
        )
    );
}

/// Values added inside values cannot nest without bound.
#[test]
fn nesting_is_bounded() {
    let level = "[".repeat(150) + &"]".repeat(150);
    let mut ops = vec![op(Op::Replace, "/labels", Some(level.clone().into()))];
    // Each add appends to the innermost list of the value before it.
    let mut path = "/labels".to_owned() + &"/0".repeat(149);
    for _ in 0..10 {
        ops.push(op(
            Op::Add,
            &format!("{path}/-"),
            Some(level.clone().into()),
        ));
        path.push_str(&"/0".repeat(150));
    }
    // Adds take the literal string; make them lists by replacing in turn.
    let ops: Vec<Operation> = ops
        .into_iter()
        .map(|o| match o.value {
            Some(PyValue::Str(s)) if o.op == Op::Add => {
                let v = python_semantics::parse_literal(&s).expect("a list");
                Operation::new(o.op, o.path, Some(v))
            }
            _ => o,
        })
        .collect();
    let err = apply(&cluster_doc(), &ops, &CLUSTER).expect_err("too deep");
    assert_eq!(err.kind(), ErrorKind::ServerError);
    assert!(apply(&cluster_doc(), &ops[..5], &CLUSTER).is_ok());
}

/// An operation built by the caller (federations rewrite their first
/// operation): a structured value for a literal field is kept.
#[test]
fn structured_values_are_kept() {
    let members = PyValue::List(vec!["a".into(), "b".into()]);
    let fed = doc(vec![
        ("member_ids", PyValue::List(vec![])),
        ("name", "f".into()),
    ]);
    let out = apply(
        &fed,
        &[op(Op::Replace, "/member_ids", Some(members.clone()))],
        &FEDERATION,
    )
    .expect("replace");
    assert_eq!(out.get("member_ids"), Some(&members));
    let labels = dict(vec![("x", "y".into())]);
    let out = apply(
        &cluster_doc(),
        &[op(Op::Replace, "/labels", Some(labels.clone()))],
        &CLUSTER,
    )
    .expect("replace");
    assert_eq!(out.get("labels"), Some(&labels));
    let err = apply(
        &cluster_doc(),
        &[op(Op::Replace, "/labels", Some(true.into()))],
        &CLUSTER,
    )
    .expect_err("bool literal");
    assert_eq!(
        err.message(),
        "Couldn't apply patch '[{'path': '/labels', 'op': 'replace', 'value': True}]'. Reason: \
         malformed node or string: True"
    );
}

/// Go: `TestValueCheckers`.
#[test]
fn value_checkers() {
    let int_key: PyValue = PyValue::Dict(
        [(PyValue::from(1), PyValue::from("a"))]
            .into_iter()
            .collect(),
    );
    assert_eq!(
        string_map("node_labels", &int_key).map_err(Error::into_message),
        Err(
            "Invalid input for field/attribute node_labels. Value: '{1: 'a'}'. Wrong type. \
             Expected '<class 'str'>', got '<class 'int'>'"
                .into()
        )
    );
    assert_eq!(
        string_map("node_labels", &dict(vec![("a", 1.into())])).map_err(Error::into_message),
        Err(
            "Invalid input for field/attribute node_labels. Value: '{'a': 1}'. Wrong type. \
             Expected '<class 'str'>', got '<class 'int'>'"
                .into()
        )
    );
    assert_eq!(
        string_map("health_status_reason", &"x".into()).map_err(Error::into_message),
        Err(
            "Invalid input for field/attribute health_status_reason. Value: 'x'. Wrong type. \
             Expected '{<class 'str'>: <class 'str'>}', got '<class 'str'>'"
                .into()
        )
    );
    assert_eq!(string_map("x", &PyValue::None), Ok(None));
    let labels_value = dict(vec![("a", 1.into()), ("b", true.into()), ("c", 1.5.into())]);
    assert_eq!(
        labels("labels", &labels_value),
        Ok(Some(vec![
            ("a".into(), "1".into()),
            ("b".into(), "True".into()),
            ("c".into(), "1.5".into())
        ]))
    );
    assert_eq!(
        labels("labels", &dict(vec![("a", dict(vec![("b", 1.into())]))]))
            .map_err(Error::into_message),
        Err(
            "Invalid input for field/attribute labels. Value: '{'a': {'b': 1}}'. Wrong type. \
             Expected '(<class 'str'>, <class 'int'>, <class 'bool'>, <class 'float'>)', got \
             '<class 'dict'>'"
                .into()
        )
    );
    let none_label = labels("labels", &dict(vec![("k", PyValue::None)])).expect_err("None");
    assert_eq!(
        (none_label.kind(), none_label.message()),
        (ErrorKind::ServerError, "Field `labels[k]' cannot be None")
    );
    assert_eq!(
        labels("labels", &PyValue::List(vec![])).map_err(Error::into_message),
        Err(
            "Invalid input for field/attribute labels. Value: '[]'. Wrong type. Expected \
             '{<class 'str'>: <class 'str'> | <class 'int'> | <class 'bool'> | <class 'float'>}', \
             got '<class 'list'>'"
                .into()
        )
    );
    assert_eq!(
        string_map_order(&dict(vec![("z", "1".into()), ("a", "2".into())])),
        vec!["z".to_owned(), "a".to_owned()]
    );
    assert!(string_map_order(&PyValue::None).is_empty());
    let tuple = PyValue::Tuple(vec![1.into(), dict(vec![("a", PyValue::None)])]);
    assert_eq!(tuple.to_json(), Ok(serde_json::json!([1, {"a": null}])));
    assert_eq!(
        PyValue::Set(vec![1.into()]).to_json(),
        Err(python_semantics::value::NotJson { class: "set" })
    );
    assert_eq!(
        int_key.to_json(),
        Err(python_semantics::value::NotJson { class: "int" })
    );
    // Taints: a list of string dicts, the whole list shown in errors.
    let bad = PyValue::List(vec![dict(vec![("key", 1.into())])]);
    assert_eq!(
        taints("node_taints", &bad).map_err(Error::into_message),
        Err(
            "Invalid input for field/attribute node_taints. Value: '[{'key': 1}]'. Wrong type. \
             Expected '<class 'str'>', got '<class 'int'>'"
                .into()
        )
    );
    assert_eq!(
        taints("node_taints", &PyValue::List(vec!["x".into()])).map_err(Error::into_message),
        Err(
            "Invalid input for field/attribute node_taints. Value: '['x']'. Wrong type. \
             Expected '{<class 'str'>: <class 'str'>}', got '<class 'str'>'"
                .into()
        )
    );
    assert_eq!(
        taints("node_taints", &dict(vec![])).map_err(Error::into_message),
        Err(
            "Invalid input for field/attribute node_taints. Value: '{}'. Wrong type. Expected \
             '[{<class 'str'>: <class 'str'>}]', got '<class 'dict'>'"
                .into()
        )
    );
}

/// The resources' lists hold the base internal attributes.
#[test]
fn rules_extend_the_base_list() {
    for rules in [CLUSTER, CLUSTER_TEMPLATE, NODE_GROUP, FEDERATION] {
        assert!(BASE_INTERNAL.iter().all(|p| rules.internal.contains(p)));
        assert_eq!(rules.literal_fields, DEFAULT_LITERAL_FIELDS);
    }
}

/// What the fuzz target checks for one input (Go: `FuzzApply`): the first
/// byte picks the document, the rest is the body; nothing panics and the
/// document is left as it was.
pub(crate) fn check_input(data: &[u8]) {
    let Some((&which, body)) = data.split_first() else {
        return;
    };
    let (input, rules) = if which % 2 == 1 {
        (nodegroup_doc(), NODE_GROUP)
    } else {
        (cluster_doc(), CLUSTER)
    };
    let Ok(ops) = parse(body) else {
        return;
    };
    let before = repr(&input);
    if let Err(e) = apply(&input, &ops, &rules) {
        assert!(!e.message().is_empty() || e.kind() == ErrorKind::ServerError);
    }
    assert_eq!(repr(&input), before);
}

/// The seed corpus of the fuzz target (the Go seeds, decoded to raw input).
#[test]
fn fuzz_seeds() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/seed-jsonpatch");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("a directory entry").path();
        let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        check_input(&data);
        n += 1;
    }
    assert!(n >= 6, "only {n} seeds in {}", dir.display());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    /// Random bodies never panic.
    #[test]
    fn no_body_panics(data in proptest::collection::vec(any::<u8>(), 0..200)) {
        check_input(&data);
    }

    /// Well-formed operations on the known paths never panic either.
    #[test]
    fn no_operation_panics(
        which in 0u8..2,
        ops in proptest::collection::vec((
            prop::sample::select(vec!["add", "replace", "remove"]),
            prop::sample::select(vec![
                "/labels", "/labels/kube_tag", "/labels/x", "/node_taints", "/node_taints/-",
                "/node_taints/0", "/node_taints/0/key", "/node_labels/a", "/name/0", "/keypair",
                "/health_status_reason", "/max_node_count", "/min_node_count", "/uuid",
            ]),
            prop::sample::select(vec![
                "\"x\"", "1", "true", "\"{'a': 'b'}\"", "\"[{'key': 'k'}]\"", "\"({1: [2]},)\"",
                "\"{bad\"", "\"{[1]: 2}\"", "\"b'x'\"", "null",
            ]),
        ), 0..6),
    ) {
        let body = format!(
            "[{}]",
            ops.iter()
                .map(|(op, path, value)| format!(r#"{{"op":"{op}","path":"{path}","value":{value}}}"#))
                .collect::<Vec<_>>()
                .join(",")
        );
        let mut data = vec![which];
        data.extend_from_slice(body.as_bytes());
        check_input(&data);
    }
}

/// A refused JSON Patch keeps its class, status and message.
#[test]
fn patch_errors_keep_their_class_and_message() {
    use crate::patch;
    use magnum_domain::MagnumError;
    let e = patch::parse_and_check(
        br#"[{"op": "replace", "path": "/uuid", "value": "x"}]"#,
        &patch::CLUSTER_TEMPLATE,
    )
    .expect_err("internal attribute");
    let m = MagnumError::from(e);
    assert_eq!(
        (m.status, m.kind, m.message.as_str()),
        (
            400,
            "ClientSideError",
            "'/uuid' is an internal attribute and can not be updated"
        )
    );
}
