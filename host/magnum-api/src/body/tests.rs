use magnum_domain::validation::{
    CLUSTER_NAME, RANGE_API_SERVER_PORT, RANGE_NODE_COUNT, STRING_FIELD,
};

use super::*;

/// A type with one attribute of every kind.
static THING: Schema = Schema {
    arg: "thing",
    attrs: &[
        attr("uuid", Type::Uuid),
        attr("name", Type::String(CLUSTER_NAME)),
        attr("image_id", Type::String(STRING_FIELD)).mandatory(),
        attr("port", Type::Integer(RANGE_API_SERVER_PORT)),
        attr("count", Type::Integer(RANGE_NODE_COUNT)).default(Const::Int(1)),
        attr("public", Type::Boolean).default(Const::Bool(false)),
        attr("kind", Type::Enum(&["vm", "bm"])).default(Const::Str("vm")),
        attr("reason", Type::Text),
        attr("dns", Type::Dns),
        attr("labels", Type::Labels),
        attr("props", Type::StringDict),
        attr("remove", Type::TextList),
        attr("taints", Type::Taints),
        attr("links", Type::Links).readonly(),
        attr("project_id", Type::Text).readonly(),
        attr("created_at", Type::Datetime).readonly(),
    ],
};

fn decode(body: &str) -> Result<Body<'static>, MagnumError> {
    THING.decode(body.as_bytes())
}

fn refused(body: &str) -> (u16, String) {
    match decode(body) {
        Ok(b) => panic!("{body}: accepted {:?}", b.values),
        Err(e) => (e.status, e.message),
    }
}

#[test]
fn values_defaults_and_presence() {
    let b = decode(
        r#"{"image_id": "img", "name": "a1", "port": "8443", "public": "yes",
            "labels": {"b": 2, "a": true, "f": 1.5, "s": "x"}, "props": {"k": "v"},
            "remove": ["n1"], "taints": [{"key": "k", "effect": "NoSchedule"}],
            "reason": null, "dns": "8.8.8.8, 1.1.1.1"}"#,
    )
    .unwrap();
    assert_eq!(b.text("name"), Some("a1"));
    assert_eq!(b.int("port"), Some(8443), "int() of a string");
    assert_eq!(b.boolean("public"), Some(true));
    assert_eq!(
        b.entries("labels").cloned(),
        Some(vec![
            ("b".into(), "2".into()),
            ("a".into(), "True".into()),
            ("f".into(), "1.5".into()),
            ("s".into(), "x".into())
        ]),
        "the client's order, values as str()"
    );
    assert_eq!(
        b.string_map("props"),
        Some([("k".to_string(), "v".to_string())].into())
    );
    assert_eq!(b.list("remove"), Some(&["n1".to_string()][..]));
    assert_eq!(b.maps("taints").map(<[Entries]>::len), Some(1));
    assert!(b.has("reason") && b.value("reason") == Some(&Value::None));
    assert_eq!(b.text("reason"), None);
    // Not sent: the defaults.
    assert!(!b.has("count") && !b.has("kind"));
    assert_eq!(b.int("count"), Some(1));
    assert_eq!(b.text("kind"), Some("vm"));
    assert_eq!(b.text("uuid"), None);
    assert_eq!(
        b.present().collect::<Vec<_>>(),
        [
            "name", "image_id", "port", "public", "reason", "dns", "labels", "props", "remove",
            "taints"
        ]
    );
    assert_eq!(python::str_of(b.doc()).chars().next(), Some('{'));
    // A null mandatory attribute is set, not missing.
    let b = decode(r#"{"image_id": null, "count": 2.7, "public": 1}"#).unwrap();
    assert_eq!(b.value("image_id"), Some(&Value::None));
    assert_eq!(b.int("count"), Some(2), "int() truncates");
    assert_eq!(b.boolean("public"), Some(true), "str(1) is a strict true");
}

#[test]
fn documents_that_are_not_objects() {
    assert_eq!(
        refused(r#"{"image_id": "x","#),
        (400, "Request is not in valid JSON format".into())
    );
    assert_eq!(refused("null"), (400, "Missing argument: \"thing\"".into()));
    assert_eq!(
        refused("[1, 2]"),
        (
            400,
            "Invalid input for field/attribute thing. Value: '[1, 2]'. Value not a valid dict: [1, 2]"
                .into()
        )
    );
    assert_eq!(
        refused(r#""text""#),
        (
            400,
            "Invalid input for field/attribute thing. Value: 'text'. Value not a valid dict: text"
                .into()
        )
    );
}

#[test]
fn unknown_then_mandatory_then_each_attribute_in_order() {
    assert_eq!(
        refused(r#"{"zz": 1, "image_id": "i", "aa": 2, "port": 1}"#),
        (400, "Unknown attributes for argument thing: zz, aa".into())
    );
    assert_eq!(
        refused(r#"{"id": 5}"#),
        (400, "Unknown attribute for argument thing: id".into())
    );
    assert_eq!(
        refused(r#"{"name": "1bad"}"#),
        (
            400,
            "Invalid input for field/attribute name. Value: '1bad'. Value should match the pattern ^[a-zA-Z][a-zA-Z0-9_.-]*$".into()
        ),
        "name is checked before image_id is found missing"
    );
    assert_eq!(
        refused(r#"{"port": 80}"#),
        (
            400,
            "Invalid input for field/attribute image_id. Value: 'None'. Mandatory field missing."
                .into()
        )
    );
}

#[test]
fn conversion_errors_name_the_body_argument_and_quote_the_body() {
    assert_eq!(
        refused(r#"{"image_id": "i", "port": "not an int", "name": "n"}"#).1,
        "Invalid input for field/attribute thing. Value: '{'image_id': 'i', 'port': 'not an int', 'name': 'n'}'. invalid literal for int() with base 10: 'not an int'"
    );
    assert_eq!(
        refused(r#"{"image_id": "i", "port": ""}"#).1,
        "Invalid input for field/attribute thing. Value: '{'image_id': 'i', 'port': ''}'. invalid literal for int() with base 10: ''"
    );
    assert_eq!(
        refused(r#"{"image_id": "i", "port": 123456789012345678901234567890}"#).1,
        "Invalid input for field/attribute thing. Value: '{'image_id': 'i', 'port': 123456789012345678901234567890}'. Python int too large to convert to C long"
    );
    assert_eq!(
        refused(r#"{"image_id": "i", "port": 1e400}"#).1,
        "Invalid input for field/attribute thing. Value: '{'image_id': 'i', 'port': inf}'. cannot convert float infinity to integer"
    );
    assert_eq!(
        refused(r#"{"image_id": "i", "port": {}}"#).1,
        "Invalid input for field/attribute thing. Value: '{'image_id': 'i', 'port': {}}'. int() argument must be a string, a bytes-like object or a real number, not 'dict'"
    );
    assert_eq!(
        refused(r#"{"image_id": "i", "labels": ""}"#).1,
        "Invalid input for field/attribute thing. Value: '{'image_id': 'i', 'labels': ''}'. Value not a valid dict: "
    );
    assert_eq!(
        refused(r#"{"image_id": "i", "remove": "n1"}"#).1,
        "Invalid input for field/attribute thing. Value: '{'image_id': 'i', 'remove': 'n1'}'. Value not a valid list: n1"
    );
    assert_eq!(
        refused(r#"{"image_id": "i", "taints": [1]}"#).1,
        "Invalid input for field/attribute thing. Value: '{'image_id': 'i', 'taints': [1]}'. Value not a valid dict: 1"
    );
    assert_eq!(
        refused(r#"{"image_id": "i", "created_at": "bad"}"#).1,
        "Invalid input for field/attribute thing. Value: '{'image_id': 'i', 'created_at': 'bad'}'. Unknown string format: %s"
    );
}

#[test]
fn read_only_attributes() {
    assert_eq!(
        refused(r#"{"image_id": "i", "project_id": "x"}"#).1,
        "Invalid input for field/attribute project_id. Value: 'x'. Cannot set read only field."
    );
    assert_eq!(
        refused(r#"{"image_id": "i", "project_id": null}"#).1,
        "Invalid input for field/attribute project_id. Value: 'None'. Cannot set read only field."
    );
    assert_eq!(
        refused(r#"{"image_id": "i", "links": []}"#).1,
        "Invalid input for field/attribute links. Value: '[]'. Cannot set read only field."
    );
    for (sent, shown) in [
        ("2020-01-01T00:00:00", "2020-01-01 00:00:00"),
        ("2020-01-01 10:11:12.5", "2020-01-01 10:11:12.500000"),
        ("2020-01-01T00:00:00Z", "2020-01-01 00:00:00+00:00"),
        ("2020-01-01T02:00:00+02:00", "2020-01-01 02:00:00+02:00"),
        ("2020-01-01", "2020-01-01 00:00:00"),
    ] {
        assert_eq!(
            refused(&format!(r#"{{"image_id": "i", "created_at": "{sent}"}}"#)).1,
            format!(
                "Invalid input for field/attribute created_at. Value: '{shown}'. Cannot set read only field."
            ),
            "{sent}"
        );
    }
}

#[test]
fn type_checks_name_the_attribute() {
    let cases = [
        (
            r#"{"image_id": ""}"#,
            "Invalid input for field/attribute image_id. Value: ''. Value should have a minimum character requirement of 1",
        ),
        (
            r#"{"image_id": 5}"#,
            "Invalid input for field/attribute image_id. Value: '5'. Value should be string",
        ),
        (
            r#"{"image_id": "i", "port": 80}"#,
            "Invalid input for field/attribute port. Value: '80'. Value should be greater or equal to 1024",
        ),
        (
            r#"{"image_id": "i", "port": 65536}"#,
            "Invalid input for field/attribute port. Value: '65536'. Value should be lower or equal to 65535",
        ),
        (
            r#"{"image_id": "i", "count": 9999999999}"#,
            "Invalid input for field/attribute count. Value: '9999999999'. Value should be lower or equal to 2147483647",
        ),
        (
            r#"{"image_id": "i", "count": -1}"#,
            "Invalid input for field/attribute count. Value: '-1'. Value should be greater or equal to 0",
        ),
        (
            r#"{"image_id": "i", "public": "maybe"}"#,
            "Invalid input for field/attribute public. Value: 'maybe'. Unrecognized value 'maybe', acceptable values are: '0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes'",
        ),
        (
            r#"{"image_id": "i", "public": []}"#,
            "Invalid input for field/attribute public. Value: '[]'. Unrecognized value '[]', acceptable values are: '0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes'",
        ),
        (
            r#"{"image_id": "i", "uuid": "x"}"#,
            "Expected a uuid but received x.",
        ),
        (
            r#"{"image_id": "i", "uuid": ""}"#,
            "Expected a uuid but received .",
        ),
        (
            r#"{"image_id": "i", "kind": "xx"}"#,
            "Invalid input for field/attribute kind. Value: 'xx'. Value should be one of: vm, bm",
        ),
        (
            r#"{"image_id": "i", "kind": 5}"#,
            "Invalid input for field/attribute kind. Value: '5'. Value should be one of: vm, bm",
        ),
        (
            r#"{"image_id": "i", "reason": 5}"#,
            "Invalid input for field/attribute reason. Value: '5'. Wrong type. Expected '<class 'str'>', got '<class 'int'>'",
        ),
        (
            r#"{"image_id": "i", "dns": "8.8.8.8,bad"}"#,
            "Expected a single dns address or comma separated dns list, but received 8.8.8.8,bad.",
        ),
        (
            r#"{"image_id": "i", "dns": 5}"#,
            "'int' object has no attribute 'split'",
        ),
        (
            r#"{"image_id": "i", "labels": {"a": [1]}}"#,
            "Invalid input for field/attribute labels. Value: '{'a': [1]}'. Wrong type. Expected '(<class 'str'>, <class 'int'>, <class 'bool'>, <class 'float'>)', got '<class 'list'>'",
        ),
        (
            r#"{"image_id": "i", "labels": {"a": null}}"#,
            "Field `labels[a]' cannot be None",
        ),
        (
            r#"{"image_id": "i", "props": {"k": 1}}"#,
            "Invalid input for field/attribute props. Value: '{'k': 1}'. Wrong type. Expected '<class 'str'>', got '<class 'int'>'",
        ),
        (
            r#"{"image_id": "i", "remove": ["a", 2]}"#,
            "Invalid input for field/attribute remove. Value: '['a', 2]'. Wrong type. Expected '<class 'str'>', got '<class 'int'>'",
        ),
        (
            r#"{"image_id": "i", "taints": [{"key": 1}]}"#,
            "Invalid input for field/attribute taints. Value: '[{'key': 1}]'. Wrong type. Expected '<class 'str'>', got '<class 'int'>'",
        ),
    ];
    for (body, want) in cases {
        let (status, got) = refused(body);
        assert_eq!((status, got.as_str()), (400, want), "{body}");
    }
}

#[test]
fn rebuilt_objects_get_the_checks_without_conversion() {
    let doc = |s: &str| match python_semantics::decode::decode_ordered(s.as_bytes()) {
        Ok(PyValue::Dict(d)) => d,
        other => panic!("{other:?}"),
    };
    let b = THING
        .rebuild(&doc(
            r#"{"id": 3, "image_id": "i", "port": 8443, "project_id": "p", "labels": {"a": "b"}}"#,
        ))
        .unwrap();
    assert_eq!(b.int("port"), Some(8443));
    assert!(!b.has("project_id"), "read-only attributes are not rebuilt");
    assert_eq!(b.boolean("public"), Some(false), "absent: the default");
    let refused = |s: &str| THING.rebuild(&doc(s)).map(|_| ()).unwrap_err().message;
    assert_eq!(
        refused(r#"{"port": "7"}"#),
        "Invalid input for field/attribute port. Value: '7'. '<' not supported between instances of 'str' and 'int'"
    );
    assert_eq!(
        refused(r#"{"port": 123456789012345678901234567890}"#),
        "Invalid input for field/attribute port. Value: '123456789012345678901234567890'. Value should be lower or equal to 65535"
    );
    assert_eq!(
        refused(r#"{"port": -123456789012345678901234567890}"#),
        "Invalid input for field/attribute port. Value: '-123456789012345678901234567890'. Value should be greater or equal to 1024"
    );
    assert_eq!(
        refused(r#"{"labels": ["a"]}"#),
        "Invalid input for field/attribute labels. Value: '['a']'. Wrong type. Expected '{<class 'str'>: <class 'str'> | <class 'int'> | <class 'bool'> | <class 'float'>}', got '<class 'list'>'"
    );
    assert_eq!(
        refused(r#"{"image_id": ""}"#),
        "Invalid input for field/attribute image_id. Value: ''. Value should have a minimum character requirement of 1"
    );
}
