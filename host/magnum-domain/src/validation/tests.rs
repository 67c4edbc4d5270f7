use super::*;

use serde_json::json;

use crate::testspec;

/// `result` is `Ok` when `message` is empty, else the error with `status`
/// and `message`.
#[track_caller]
fn assert_error<T: std::fmt::Debug>(result: Result<T, MagnumError>, status: u16, message: &str) {
    match result {
        Ok(v) if message.is_empty() => {
            let _ = v;
        }
        Ok(v) => panic!("got Ok({v:?}), want {status} {message:?}"),
        Err(e) if message.is_empty() => panic!("unexpected error {e:?}"),
        Err(e) => assert_eq!(
            (e.status, e.message.as_str()),
            (status, message),
            "got {} {:?}\nwant {status} {message:?}",
            e.status,
            e.message
        ),
    }
}

/// Go: `TestValidateNames`.
#[test]
fn names() {
    let x243 = "x".repeat(243);
    let i256 = "i".repeat(256);
    let cases: Vec<(&str, Result<(), MagnumError>, String)> = vec![
        ("cluster name ok", validate_cluster_name("cluster1"), String::new()),
        ("dotted and dashed name", validate_cluster_name("a.b-c_d"), String::new()),
        ("trailing newline passes as in Python", validate_cluster_name("abc\n"), String::new()),
        (
            "digits first",
            validate_cluster_name("123456"),
            "Invalid input for field/attribute name. Value: '123456'. Value should match the pattern ^[a-zA-Z][a-zA-Z0-9_.-]*$".into(),
        ),
        (
            "digits then letters",
            validate_federation_name("123456test_federation"),
            "Invalid input for field/attribute name. Value: '123456test_federation'. Value should match the pattern ^[a-zA-Z][a-zA-Z0-9_.-]*$".into(),
        ),
        (
            "leading dash",
            validate_cluster_name("-test_federation"),
            "Invalid input for field/attribute name. Value: '-test_federation'. Value should match the pattern ^[a-zA-Z][a-zA-Z0-9_.-]*$".into(),
        ),
        (
            "leading dot",
            validate_cluster_name(".test_federation"),
            "Invalid input for field/attribute name. Value: '.test_federation'. Value should match the pattern ^[a-zA-Z][a-zA-Z0-9_.-]*$".into(),
        ),
        (
            "leading underscore",
            validate_cluster_name("_test_federation"),
            "Invalid input for field/attribute name. Value: '_test_federation'. Value should match the pattern ^[a-zA-Z][a-zA-Z0-9_.-]*$".into(),
        ),
        (
            "empty",
            validate_cluster_name(""),
            "Invalid input for field/attribute name. Value: ''. Value should have a minimum character requirement of 1".into(),
        ),
        ("242 characters", validate_cluster_name(&"x".repeat(242)), String::new()),
        (
            "243 characters",
            validate_cluster_name(&x243),
            format!("Invalid input for field/attribute name. Value: '{x243}'. Value should have a maximum character requirement of 242"),
        ),
        ("template names take anything", validate_template_name("1 ü/ä"), String::new()),
        (
            "256-character template name",
            validate_template_name(&i256),
            format!("Invalid input for field/attribute name. Value: '{i256}'. Value should have a maximum character requirement of 255"),
        ),
        ("255 runes of a multi-byte character", validate_node_group_name(&"é".repeat(255)), String::new()),
        (
            "empty image",
            validate_string_field("image_id", ""),
            "Invalid input for field/attribute image_id. Value: ''. Value should have a minimum character requirement of 1".into(),
        ),
        ("empty tags allowed", validate_tags(""), String::new()),
        // Beyond the Go table: a newline elsewhere, and a non-string value.
        (
            "inner newline",
            validate_cluster_name("a\nb"),
            "Invalid input for field/attribute name. Value: 'a\nb'. Value should match the pattern ^[a-zA-Z][a-zA-Z0-9_.-]*$".into(),
        ),
        (
            "not a string",
            validate_string("name", &json!(12), &CLUSTER_NAME).map(|_| ()),
            "Invalid input for field/attribute name. Value: '12'. Value should be string".into(),
        ),
    ];
    for (name, result, message) in cases {
        eprintln!("case {name}");
        assert_error(result, 400, &message);
    }
    assert_eq!(
        validate_string("name", &json!("ok"), &CLUSTER_NAME).ok(),
        Some("ok")
    );
}

/// Go: `TestValidateUUID`.
#[test]
fn uuids() {
    for ok in [
        "5d12f6fd-a196-4bf0-ae4c-1f639a523a52",
        "5D12F6FDA1964BF0AE4C1F639A523A52",
        "{5d12f6fd-a196-4bf0-ae4c-1f639a523a52}",
        "urn:uuid:5d12f6fd-a196-4bf0-ae4c-1f639a523a52",
        "5d12-f6fd-a196-4bf0-ae4c-1f63-9a52-3a52",
    ] {
        assert!(is_uuid_like(ok), "{ok}");
    }
    for bad in [
        "",
        "abc",
        "not_found",
        "5d12f6fd-a196-4bf0-ae4c-1f639a523a5",
        "5d12f6fd-a196-4bf0-ae4c-1f639a523a5g",
        " 5d12f6fda1964bf0ae4c1f639a523a52",
    ] {
        assert!(!is_uuid_like(bad), "{bad}");
    }
    assert_error(validate_uuid(""), 400, "Expected a uuid but received .");
    assert_error(
        validate_uuid("abc"),
        400,
        "Expected a uuid but received abc.",
    );
    assert_error(validate_uuid_or_name("abc"), 0, "");
    assert_error(
        validate_uuid_or_name(""),
        400,
        "Expected a name but received .",
    );
}

/// Go: `TestValidateCounts`.
#[test]
fn counts() {
    let cases: Vec<(&str, Result<(), MagnumError>, u16, &str)> = vec![
        ("node count 1", validate_node_count(1, 1), 0, ""),
        (
            "negative node count",
            validate_node_count(-1, 14),
            400,
            "Invalid input for field/attribute node_count. Value: '-1'. Value should be greater or equal to 0",
        ),
        (
            "zero below 1.10",
            validate_node_count(0, 9),
            400,
            "Resizing a nodegroup to zero is not supported in the provided microversion.",
        ),
        ("zero at 1.10", validate_node_count(0, 10), 0, ""),
        (
            "master count 0",
            validate_master_count(0),
            400,
            "Invalid input for field/attribute master_count. Value: '0'. Value should be greater or equal to 1",
        ),
        (
            "master count 2",
            validate_master_count(2),
            400,
            "master nodegroup size of 2 is invalid, size cannot be an even number.",
        ),
        ("master count 3", validate_master_count(3), 0, ""),
        (
            "master lb",
            validate_master_lb(3, false),
            400,
            "master_count must be 1 when master_lb_enabled is False",
        ),
        ("master lb enabled", validate_master_lb(3, true), 0, ""),
        (
            "docker volume size",
            validate_docker_volume_size(-1),
            400,
            "Invalid input for field/attribute docker_volume_size. Value: '-1'. Value should be greater or equal to 1",
        ),
        (
            "devicemapper 1",
            validate_devicemapper_volume("devicemapper", Some(1), Some(5)),
            400,
            "docker volume size 1 GB is not valid, expecting minimum value 3GB for devicemapper storage driver.",
        ),
        (
            "devicemapper inherits",
            validate_devicemapper_volume("devicemapper", None, Some(2)),
            400,
            "docker volume size 2 GB is not valid, expecting minimum value 3GB for devicemapper storage driver.",
        ),
        (
            "devicemapper none",
            validate_devicemapper_volume("devicemapper", None, None),
            400,
            "docker volume size None GB is not valid, expecting minimum value 3GB for devicemapper storage driver.",
        ),
        (
            "overlay",
            validate_devicemapper_volume("overlay2", Some(1), None),
            0,
            "",
        ),
        (
            "port low",
            validate_range("apiserver_port", -12, RANGE_API_SERVER_PORT),
            400,
            "Invalid input for field/attribute apiserver_port. Value: '-12'. Value should be greater or equal to 1024",
        ),
        (
            "port high",
            validate_range("apiserver_port", 65536, RANGE_API_SERVER_PORT),
            400,
            "Invalid input for field/attribute apiserver_port. Value: '65536'. Value should be lower or equal to 65535",
        ),
        (
            "create timeout",
            validate_range("create_timeout", -1, RANGE_CREATE_TIMEOUT),
            400,
            "Invalid input for field/attribute create_timeout. Value: '-1'. Value should be greater or equal to 0",
        ),
        (
            "resize out of range",
            validate_resize_bounds("test-worker", 3, 4, None),
            400,
            "Resizing test-worker outside the allowed range: min_node_count = 4, max_node_count = None",
        ),
        (
            "resize above max",
            validate_resize_bounds("w", 6, 1, Some(5)),
            400,
            "Resizing w outside the allowed range: min_node_count = 1, max_node_count = 5",
        ),
        (
            "resize max 0 is unbounded",
            validate_resize_bounds("w", 60, 1, Some(0)),
            0,
            "",
        ),
        (
            "limit",
            validate_limit(Some(0), 1000).map(|_| ()),
            400,
            "Limit must be positive",
        ),
        (
            "sort dir",
            validate_sort_dir("DESC"),
            400,
            "Invalid sort direction: DESC. Acceptable values are 'asc' or 'desc'",
        ),
        (
            "cluster delta",
            validate_cluster_patch_delta(&["node_count", "name"]),
            400,
            "cannot change cluster property(ies) name.",
        ),
        (
            "cluster delta ok",
            validate_cluster_patch_delta(&["node_count", "health_status", "health_status_reason"]),
            0,
            "",
        ),
        // Beyond the Go table.
        (
            "devicemapper zero inherits",
            validate_devicemapper_volume("devicemapper", Some(0), Some(3)),
            0,
            "",
        ),
        (
            "master size 0",
            validate_master_size_odd(0),
            400,
            "master nodegroup size of 0 is invalid, size cannot be an even number.",
        ),
    ];
    for (name, result, status, message) in cases {
        eprintln!("case {name}");
        assert_error(result, status, message);
    }
    assert_eq!(validate_limit(None, 1000).ok(), Some(1000));
    assert_eq!(validate_limit(Some(5000), 1000).ok(), Some(1000));
    assert_eq!(validate_limit(Some(7), 1000).ok(), Some(7));
}

/// Go: `TestConvertInt`, with Python's `int()` exactly (Unicode digits and
/// white space, integers beyond 64 bits refused as too large).
#[test]
fn convert_int_as_wsme_does() {
    let body = json!({"node_count": "two"});
    for (value, want) in [
        (json!(3), 3),
        (json!("8443"), 8443),
        (json!(2.7), 2),
        (json!(-2.7), -2),
        (json!(true), 1),
        (json!(false), 0),
        (json!(" -1_0 "), -10),
        (json!("\u{661}\u{662}"), 12),
    ] {
        assert_eq!(
            convert_int("cluster", &body, &value).ok(),
            Some(want),
            "{value}"
        );
    }
    assert_error(
        convert_int("cluster", &body, &json!("two")),
        400,
        "Invalid input for field/attribute cluster. Value: '{'node_count': 'two'}'. invalid literal for int() with base 10: 'two'",
    );
    assert_error(
        convert_int("cluster", &body, &json!(null)),
        400,
        "Invalid input for field/attribute cluster. Value: '{'node_count': 'two'}'. int() argument must be a string, a bytes-like object or a real number, not 'NoneType'",
    );
    assert_error(
        convert_int("cluster", &body, &json!([1])),
        400,
        "Invalid input for field/attribute cluster. Value: '{'node_count': 'two'}'. int() argument must be a string, a bytes-like object or a real number, not 'list'",
    );
    for big in [
        json!(18446744073709551615u64),
        json!("99999999999999999999"),
        json!(1e19),
    ] {
        assert_error(
            convert_int("cluster", &body, &big),
            400,
            "Invalid input for field/attribute cluster. Value: '{'node_count': 'two'}'. Python int too large to convert to C long",
        );
    }
}

/// Go: `TestValidateDNSAndEnums`, with `inet_pton`'s refusal of leading
/// zeros.
#[test]
fn dns_and_enums() {
    for v in [
        "8.8.8.8",
        "8.8.8.8, 1.1.1.1",
        "8.8.8.8,1.1.1.1",
        " 8.8.8.8\u{a0}",
        "0.0.0.0",
    ] {
        assert_error(validate_dns_list(v), 0, "");
    }
    for v in [
        "1.1.2",
        "1.1..1",
        "openstack.org",
        "",
        "256.1.1.1",
        "1.1.1.1,",
        "01.1.1.1",
        "1.1.1.1.1",
        "1.1.1.+1",
        "1.1.1.1 1",
    ] {
        assert_error(
            validate_dns_list(v),
            400,
            &format!(
                "Expected a single dns address or comma separated dns list, but received {v}."
            ),
        );
    }
    assert_error(
        validate_coe("k8s"),
        400,
        "Invalid input for field/attribute coe. Value: 'k8s'. Value should be one of: kubernetes",
    );
    assert_error(
        validate_coe(""),
        400,
        "Invalid input for field/attribute coe. Value: ''. Value should be one of: kubernetes",
    );
    assert_error(
        validate_quota_resource("invalid-res"),
        400,
        "Invalid input for field/attribute resource. Value: 'invalid-res'. Value should be one of: Cluster",
    );
    assert_error(validate_server_type("vm"), 0, "");
    assert_error(
        validate_server_type("container"),
        400,
        "Invalid input for field/attribute server_type. Value: 'container'. Value should be one of: vm, bm",
    );
    assert_error(validate_health_status("HEALTHY"), 0, "");
    assert_error(
        validate_health_status("ok"),
        400,
        "Invalid input for field/attribute health_status. Value: 'ok'. Value should be one of: HEALTHY, UNHEALTHY, UNKNOWN",
    );
    assert_error(validate_status("CREATE_COMPLETE"), 0, "");
    assert!(
        validate_status("DONE")
            .is_err_and(|e| e.message.ends_with("CHECK_COMPLETE, ADOPT_COMPLETE"))
    );
}

/// Go: `TestValidateLabels`.
#[test]
fn labels() {
    let got = validate_labels(
        "cluster",
        &json!(null),
        &json!({"a": 1, "b": true, "c": 1.5, "d": "x", "e": false}),
    )
    .expect("valid labels")
    .expect("labels given");
    let want: StringMap = [
        ("a", "1"),
        ("b", "True"),
        ("c", "1.5"),
        ("d", "x"),
        ("e", "False"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    assert_eq!(got, want);
    assert_eq!(
        validate_labels("cluster", &json!(null), &json!(null)).ok(),
        Some(None)
    );
    assert_error(
        validate_labels("cluster", &json!(null), &json!({"a": {"b": 1}})),
        400,
        "Invalid input for field/attribute labels. Value: '{'a': {'b': 1}}'. Wrong type. Expected '(<class 'str'>, <class 'int'>, <class 'bool'>, <class 'float'>)', got '<class 'dict'>'",
    );
    let body = json!({"labels": ["a"]});
    assert_error(
        validate_labels("cluster_template", &body, &json!(["a"])),
        400,
        "Invalid input for field/attribute cluster_template. Value: '{'labels': ['a']}'. Value not a valid dict: ['a']",
    );
    assert_error(
        validate_labels("cluster", &json!(null), &json!({"a": null})),
        400,
        "Field `labels[a]' cannot be None",
    );
    // The first offending key in the document's order is reported.
    assert_error(
        validate_labels("cluster", &json!(null), &json!({"z": null, "a": [1]})),
        400,
        "Field `labels[z]' cannot be None",
    );
    assert_error(
        validate_string_dict("nodegroup", &json!(null), "node_labels", &json!({"a": 1})),
        400,
        "Invalid input for field/attribute node_labels. Value: '{'a': 1}'. Wrong type. Expected '<class 'str'>', got '<class 'int'>'",
    );
    assert_error(
        validate_taints_input(
            "nodegroup",
            &json!({"name": "ng"}),
            &json!(["gpu=true:NoSchedule"]),
        ),
        400,
        "Invalid input for field/attribute nodegroup. Value: '{'name': 'ng'}'. Value not a valid dict: gpu=true:NoSchedule",
    );
    assert_error(
        validate_taints_input("nodegroup", &json!({"name": "ng"}), &json!({"key": "k"})),
        400,
        "Invalid input for field/attribute nodegroup. Value: '{'name': 'ng'}'. Value not a valid list: {'key': 'k'}",
    );
    let taints = validate_taints_input(
        "nodegroup",
        &json!(null),
        &json!([{"key": "k", "value": "v", "effect": "NoSchedule"}]),
    )
    .expect("valid taints")
    .expect("taints given");
    assert_eq!(taints.len(), 1);
    assert_eq!(
        taints[0].get("effect").map(String::as_str),
        Some("NoSchedule")
    );
}

fn taint(pairs: &[(&str, &str)]) -> NodeTaint {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Go: `TestValidateNodeGroupInput`.
#[test]
fn node_group_input() {
    let restricted = "node_labels for nodegroup1 is invalid (node label 'kubernetes.io/role' is in a restricted Kubernetes namespace; the kubelet will refuse to start. \
        Labels in the kubernetes.io/ and k8s.io/ namespaces must use one of the allowed prefixes (kubelet.kubernetes.io, node.kubernetes.io) or be one of the allowed labels \
        (beta.kubernetes.io/arch, beta.kubernetes.io/instance-type, beta.kubernetes.io/os, failure-domain.beta.kubernetes.io/region, failure-domain.beta.kubernetes.io/zone, \
        kubernetes.io/arch, kubernetes.io/hostname, kubernetes.io/os, node.kubernetes.io/instance-type, node.kubernetes.io/windows-build, topology.kubernetes.io/region, topology.kubernetes.io/zone).).";
    let master_taints = [taint(&[("key", "k"), ("effect", "NoSchedule")])];
    let no_effect = [taint(&[("key", "k")])];
    let no_key = [taint(&[("effect", "NoSchedule")])];
    let unknown_field = [taint(&[
        ("key", "k"),
        ("vaule", "v"),
        ("effect", "NoSchedule"),
    ])];
    let second_bad = [
        taint(&[("key", "k"), ("effect", "NoExecute")]),
        taint(&[("key", "k"), ("effect", "noschedule")]),
    ];
    let ng = |name, node_count| NodeGroupInput {
        name,
        node_count,
        ..Default::default()
    };
    let cases: Vec<(&str, NodeGroupInput<'_>, &str)> = vec![
        (
            "defaults",
            NodeGroupInput {
                role: "worker",
                ..ng("ng", 1)
            },
            "",
        ),
        (
            "min above max",
            NodeGroupInput {
                min_node_count: 2,
                max_node_count: Some(1),
                ..ng("nodegroup1", 2)
            },
            "max_node_count for nodegroup1 is invalid (min_node_count (2) should be less or equal to max_node_count (1)).",
        ),
        (
            "min above count",
            NodeGroupInput {
                min_node_count: 3,
                ..ng("nodegroup1", 2)
            },
            "min_node_count for nodegroup1 is invalid (min_node_count (3) should be less or equal to node_count (2)).",
        ),
        (
            "count above max",
            NodeGroupInput {
                max_node_count: Some(5),
                ..ng("nodegroup1", 7)
            },
            "max_node_count for nodegroup1 is invalid (node_count (7) should be less or equal to max_node_count (5)).",
        ),
        (
            "max 0 means no maximum",
            NodeGroupInput {
                max_node_count: Some(0),
                ..ng("ng", 70)
            },
            "",
        ),
        (
            "labels on master",
            NodeGroupInput {
                role: "master",
                node_label_keys: vec!["a"],
                ..ng("test-master", 1)
            },
            "node_labels for test-master is invalid (node_labels may not be set on master nodegroups).",
        ),
        (
            "taints on master",
            NodeGroupInput {
                role: "master",
                node_taints: &master_taints,
                ..ng("test-master", 1)
            },
            "node_taints for test-master is invalid (node_taints may not be set on master nodegroups).",
        ),
        (
            "restricted label",
            NodeGroupInput {
                node_label_keys: vec!["kubernetes.io/role"],
                ..ng("nodegroup1", 1)
            },
            restricted,
        ),
        (
            "first restricted label in client order",
            NodeGroupInput {
                node_label_keys: vec!["kubernetes.io/role", "node-role.kubernetes.io/x"],
                ..ng("nodegroup1", 1)
            },
            restricted,
        ),
        (
            "allowed labels",
            NodeGroupInput {
                node_label_keys: vec![
                    "node.kubernetes.io/pool",
                    "kubelet.kubernetes.io/x",
                    "topology.kubernetes.io/zone",
                    "example.com/x",
                    "plain",
                ],
                ..ng("ng", 1)
            },
            "",
        ),
        (
            "taint without effect",
            NodeGroupInput {
                node_taints: &no_effect,
                ..ng("nodegroup1", 1)
            },
            "node_taints for nodegroup1 is invalid (node_taints[0].effect must be one of NoSchedule, PreferNoSchedule, NoExecute).",
        ),
        (
            "taint without key",
            NodeGroupInput {
                node_taints: &no_key,
                ..ng("nodegroup1", 1)
            },
            "node_taints for nodegroup1 is invalid (node_taints[0].key is required).",
        ),
        (
            "taint with unknown field",
            NodeGroupInput {
                node_taints: &unknown_field,
                ..ng("nodegroup1", 1)
            },
            "node_taints for nodegroup1 is invalid (node_taints[0] contains unrecognised field(s) vaule; allowed fields are key, value, effect).",
        ),
        (
            "second taint",
            NodeGroupInput {
                node_taints: &second_bad,
                ..ng("ng", 1)
            },
            "node_taints for ng is invalid (node_taints[1].effect must be one of NoSchedule, PreferNoSchedule, NoExecute).",
        ),
    ];
    for (name, input, message) in cases {
        eprintln!("case {name}");
        assert_error(validate_node_group_input(&input), 409, message);
    }
}

/// Go: `TestValidationMessagesInCorpus`: the messages above that Magnum's
/// own tests produced are in the exchange corpus verbatim.
#[test]
fn validation_messages_in_corpus() {
    let Some(corpus) = testspec::corpus_errors() else {
        return;
    };
    let unknown_field = [taint(&[
        ("key", "k"),
        ("vaule", "v"),
        ("effect", "NoSchedule"),
    ])];
    let no_key = [taint(&[("effect", "NoSchedule")])];
    let no_effect = [taint(&[("key", "k")])];
    let ng = |node_count| NodeGroupInput {
        name: "nodegroup1",
        node_count,
        ..Default::default()
    };
    let results: Vec<Result<(), MagnumError>> = vec![
        validate_cluster_name("123456"),
        validate_federation_name("-test_federation"),
        validate_cluster_name(&"x".repeat(243)),
        validate_template_name(&"i".repeat(256)),
        validate_uuid(""),
        validate_node_count(-1, 14),
        validate_node_count(0, 9),
        validate_master_count(0),
        validate_master_count(2),
        validate_master_lb(3, false),
        validate_docker_volume_size(-1),
        validate_devicemapper_volume("devicemapper", Some(1), None),
        validate_range("apiserver_port", -12, RANGE_API_SERVER_PORT),
        validate_resize_bounds("test-worker", 3, 4, None),
        validate_dns_list("1.1..1"),
        validate_coe("storm"),
        validate_node_group_input(&NodeGroupInput {
            min_node_count: 3,
            ..ng(2)
        }),
        validate_node_group_input(&NodeGroupInput {
            max_node_count: Some(5),
            ..ng(7)
        }),
        validate_node_group_input(&NodeGroupInput {
            node_label_keys: vec!["kubernetes.io/role"],
            ..ng(1)
        }),
        validate_node_group_input(&NodeGroupInput {
            node_taints: &unknown_field,
            ..ng(1)
        }),
        validate_node_group_input(&NodeGroupInput {
            node_taints: &no_key,
            ..ng(1)
        }),
        validate_node_group_input(&NodeGroupInput {
            node_taints: &no_effect,
            ..ng(1)
        }),
    ];
    let mut missing = Vec::new();
    for result in results {
        let e = result.expect_err("every case is refused");
        if !corpus
            .get(&e.message)
            .is_some_and(|s| s.contains(&e.status))
        {
            missing.push(format!("{} {:?}", e.status, e.message));
        }
    }
    assert!(
        missing.is_empty(),
        "not in the exchange corpus:\n{}",
        missing.join("\n")
    );
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The hand-written name matcher is Python's `re.search` of
        /// `^[a-zA-Z][a-zA-Z0-9_.-]*$`.
        #[test]
        fn name_matcher(s in "[a-zA-Z0-9_.\\-\n é]{0,8}") {
            let body = s.strip_suffix('\n').unwrap_or(&s);
            let want = !body.is_empty()
                && body.as_bytes()[0].is_ascii_alphabetic()
                && body.bytes().all(|c| c.is_ascii_alphanumeric() || b"_.-".contains(&c));
            prop_assert_eq!(is_name(&s), want);
        }

        #[test]
        fn dns_lists_never_panic(s in "[0-9., \t]{0,24}") {
            let _ = validate_dns_list(&s);
        }
    }
}
