//! Validators on plain values: WSME's type checks and the controllers' rules,
//! each returning the error Magnum answers for the same input, with its exact
//! message.

use python_semantics::python;
use serde_json::Value;

use crate::models::{NodeTaint, StringMap};
use crate::status::HealthStatus;
use crate::{MagnumError, Status};

/// The pattern of cluster and federation names (types.md §3, §5).
pub const NAME_PATTERN: &str = "^[a-zA-Z][a-zA-Z0-9_.-]*$";
/// The maximum length of cluster and federation names (Heat's stack name
/// limit minus the suffix Magnum appends).
pub const CLUSTER_NAME_MAX_LENGTH: usize = 242;
/// The maximum length of most free-text string fields.
pub const STRING_MAX_LENGTH: usize = 255;

/// The `coe` values of a template; Magnum 23.0.0 knows one.
pub const COES: &[&str] = &["kubernetes"];
/// The `server_type` values of a template.
pub const SERVER_TYPES: &[&str] = &["vm", "bm"];
/// The quota resources.
pub const QUOTA_RESOURCES: &[&str] = &[QUOTA_RESOURCE_CLUSTER];
/// The one quota resource.
pub const QUOTA_RESOURCE_CLUSTER: &str = "Cluster";
/// The nodegroup role with a meaning of its own; any other role is a worker.
pub const ROLE_MASTER: &str = "master";
/// The role of the default worker nodegroup.
pub const ROLE_WORKER: &str = "worker";
/// The taint effects accepted in `node_taints`.
pub const TAINT_EFFECTS: &[&str] = &["NoSchedule", "PreferNoSchedule", "NoExecute"];

/// A pattern of a WSME `StringType`: its text (shown in the message) and the
/// matcher.
#[derive(Clone, Copy)]
pub struct Pattern {
    /// The regular expression as Magnum writes it.
    pub text: &'static str,
    /// Whether a value matches, as Python's `re.search` would.
    pub matches: fn(&str) -> bool,
}

impl std::fmt::Debug for Pattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.text)
    }
}

/// [`NAME_PATTERN`].
pub const NAME: Pattern = Pattern {
    text: NAME_PATTERN,
    matches: is_name,
};

/// Whether `s` matches [`NAME_PATTERN`] as Python's `re` does, where `$` also
/// matches before a final newline.
pub fn is_name(s: &str) -> bool {
    let s = s.strip_suffix('\n').unwrap_or(s);
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

/// The rules of a WSME `StringType`: length bounds in characters (Python's
/// `len`) and an optional pattern.
#[derive(Clone, Copy, Debug)]
pub struct StringRule {
    pub min_length: usize,
    /// `None`: no maximum.
    pub max_length: Option<usize>,
    pub pattern: Option<Pattern>,
}

/// Cluster and federation names: 1–242 characters matching [`NAME`].
pub const CLUSTER_NAME: StringRule = StringRule {
    min_length: 1,
    max_length: Some(CLUSTER_NAME_MAX_LENGTH),
    pattern: Some(NAME),
};
/// The 1–255 character string fields (template and nodegroup names, keypair,
/// flavor_id, image_id, networks, proxies, drivers, …).
pub const STRING_FIELD: StringRule = StringRule {
    min_length: 1,
    max_length: Some(STRING_MAX_LENGTH),
    pattern: None,
};
/// A template's tags: 0–255 characters.
pub const TAGS: StringRule = StringRule {
    min_length: 0,
    max_length: Some(STRING_MAX_LENGTH),
    pattern: None,
};

/// Applies a `StringType` to a JSON value in WSME's order: type, minimum
/// length, maximum length, pattern.
pub fn validate_string<'a>(
    field: &str,
    value: &'a Value,
    rule: &StringRule,
) -> Result<&'a str, MagnumError> {
    match value {
        Value::String(s) => check_string(field, s, rule).map(|()| s.as_str()),
        other => Err(MagnumError::not_a_string(field, other)),
    }
}

/// Applies a `StringType` to a string: minimum length, maximum length,
/// pattern.
pub fn check_string(field: &str, s: &str, rule: &StringRule) -> Result<(), MagnumError> {
    let len = s.chars().count();
    if len < rule.min_length {
        return Err(MagnumError::too_short(field, s, rule.min_length));
    }
    if let Some(max) = rule.max_length.filter(|max| len > *max) {
        return Err(MagnumError::too_long(field, s, max));
    }
    if let Some(p) = rule.pattern.filter(|p| !(p.matches)(s)) {
        return Err(MagnumError::pattern_mismatch(field, s, p.text));
    }
    Ok(())
}

/// A cluster name: 1–242 characters matching [`NAME_PATTERN`].
pub fn validate_cluster_name(name: &str) -> Result<(), MagnumError> {
    check_string("name", name, &CLUSTER_NAME)
}

/// A federation name (the rule of cluster names).
pub fn validate_federation_name(name: &str) -> Result<(), MagnumError> {
    validate_cluster_name(name)
}

/// A cluster template name: 1–255 characters of any kind.
pub fn validate_template_name(name: &str) -> Result<(), MagnumError> {
    check_string("name", name, &STRING_FIELD)
}

/// A nodegroup name: 1–255 characters.
pub fn validate_node_group_name(name: &str) -> Result<(), MagnumError> {
    validate_template_name(name)
}

/// One of the 1–255 character string fields.
pub fn validate_string_field(field: &str, value: &str) -> Result<(), MagnumError> {
    check_string(field, value, &STRING_FIELD)
}

/// A template's tags (0–255 characters).
pub fn validate_tags(value: &str) -> Result<(), MagnumError> {
    check_string("tags", value, &TAGS)
}

/// `oslo_utils.uuidutils.is_uuid_like`: after removing `urn:` and `uuid:`,
/// surrounding braces and hyphens, 32 hexadecimal digits in any case.
pub fn is_uuid_like(value: &str) -> bool {
    let s = value.replace("urn:", "").replace("uuid:", "");
    let s = s.trim_matches(['{', '}']).replace('-', "");
    s.len() == 32 && s.bytes().all(|c| c.is_ascii_hexdigit())
}

/// `InvalidUUID` unless `value` is UUID-like.
pub fn validate_uuid(value: &str) -> Result<(), MagnumError> {
    if is_uuid_like(value) {
        Ok(())
    } else {
        Err(MagnumError::invalid_uuid(value))
    }
}

/// What `types.uuid_or_name` accepts: a UUID-like string or any non-empty
/// name.
pub fn validate_uuid_or_name(value: &str) -> Result<(), MagnumError> {
    if is_uuid_like(value) || !value.is_empty() {
        Ok(())
    } else {
        Err(MagnumError::invalid_name(value))
    }
}

/// The bounds of a WSME `IntegerType`; `None` is unbounded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IntegerRange {
    pub min: Option<i64>,
    pub max: Option<i64>,
}

const fn at_least(min: i64) -> IntegerRange {
    IntegerRange {
        min: Some(min),
        max: None,
    }
}

/// Cluster create/PATCH and nodegroup `node_count`.
pub const RANGE_NODE_COUNT: IntegerRange = at_least(0);
/// `master_count`.
pub const RANGE_MASTER_COUNT: IntegerRange = at_least(1);
/// `docker_volume_size`.
pub const RANGE_DOCKER_VOLUME_SIZE: IntegerRange = at_least(1);
/// `create_timeout`.
pub const RANGE_CREATE_TIMEOUT: IntegerRange = at_least(0);
/// `apiserver_port`.
pub const RANGE_API_SERVER_PORT: IntegerRange = IntegerRange {
    min: Some(1024),
    max: Some(65535),
};
/// `min_node_count`.
pub const RANGE_MIN_NODE_COUNT: IntegerRange = at_least(0);
/// `max_node_count`.
pub const RANGE_MAX_NODE_COUNT: IntegerRange = at_least(0);
/// A quota's `hard_limit`.
pub const RANGE_HARD_LIMIT: IntegerRange = at_least(0);
/// An upgrade's `max_batch_size`.
pub const RANGE_MAX_BATCH_SIZE: IntegerRange = at_least(1);
/// A resize's `node_count`.
pub const RANGE_RESIZE_NODE_COUNT: IntegerRange = at_least(0);
/// A quota's `id`.
pub const RANGE_ID: IntegerRange = at_least(1);

/// Applies an `IntegerType`'s bounds to `n`.
pub fn validate_range(field: &str, n: i64, range: IntegerRange) -> Result<(), MagnumError> {
    if let Some(min) = range.min.filter(|min| n < *min) {
        return Err(MagnumError::below_minimum(field, &n, min));
    }
    if let Some(max) = range.max.filter(|max| n > *max) {
        return Err(MagnumError::above_maximum(field, &n, max));
    }
    Ok(())
}

/// Converts a JSON body value to an integer as WSME does with Python's
/// `int()`: integers, booleans, floats (truncated) and integer strings.
/// A failure names the body argument and shows the whole body (`arg`,
/// `body`). Integers beyond 64 bits are refused as CPython refuses them for
/// a C long.
pub fn convert_int(arg: &str, body: &Value, value: &Value) -> Result<i64, MagnumError> {
    match value {
        Value::Bool(b) => Ok(i64::from(*b)),
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => Ok(i),
            // A JSON number is finite; int() truncates toward zero.
            (None, Some(f)) if !n.is_u64() && f.trunc().abs() < 2f64.powi(63) => Ok(f as i64),
            _ => Err(MagnumError::int_too_large(arg, body)),
        },
        Value::String(s) => match python::parse_int(s) {
            Ok(n) => n
                .to_i64()
                .ok_or_else(|| MagnumError::int_too_large(arg, body)),
            Err(e) => Err(MagnumError::invalid_input(arg, body, e.message())),
        },
        other => Err(MagnumError::int_argument_type(arg, body, other)),
    }
}

/// A cluster create/PATCH or resize node count: ≥ 0 (WSME), and 0 only from
/// microversion 1.10 (`minor` is the negotiated 1.x minor version). The
/// nodegroup POST has no version gate: use [`validate_range`].
pub fn validate_node_count(n: i64, minor: u16) -> Result<(), MagnumError> {
    validate_range("node_count", n, RANGE_NODE_COUNT)?;
    if n == 0 && minor < 10 {
        return Err(MagnumError::zero_node_count_not_supported());
    }
    Ok(())
}

/// `master_count` ≥ 1 (WSME) and odd, the base driver's rule
/// (`magnum/drivers/common/driver.py` `validate_master_size`).
pub fn validate_master_count(n: i64) -> Result<(), MagnumError> {
    validate_range("master_count", n, RANGE_MASTER_COUNT)?;
    validate_master_size_odd(n)
}

/// The base driver's master size rule: positive and odd.
pub fn validate_master_size_odd(n: i64) -> Result<(), MagnumError> {
    if n < 1 || n % 2 == 0 {
        return Err(MagnumError::master_ng_size_invalid(n));
    }
    Ok(())
}

/// Several masters need a load balancer (after inheritance from the
/// template).
pub fn validate_master_lb(master_count: i64, master_lb_enabled: bool) -> Result<(), MagnumError> {
    if master_count > 1 && !master_lb_enabled {
        return Err(MagnumError::master_count_without_lb());
    }
    Ok(())
}

/// `docker_volume_size` ≥ 1 (WSME).
pub fn validate_docker_volume_size(n: i64) -> Result<(), MagnumError> {
    validate_range("docker_volume_size", n, RANGE_DOCKER_VOLUME_SIZE)
}

/// `magnum/api/validation.py:251`: with the devicemapper storage driver, the
/// effective volume size (the cluster's when set and non-zero, else the
/// template's) must be at least 3 GB.
pub fn validate_devicemapper_volume(
    storage_driver: &str,
    cluster_size: Option<i64>,
    template_size: Option<i64>,
) -> Result<(), MagnumError> {
    if storage_driver != "devicemapper" {
        return Ok(());
    }
    let size = cluster_size.filter(|s| *s != 0).or(template_size);
    match size {
        Some(s) if s >= 3 => Ok(()),
        _ => Err(MagnumError::devicemapper_volume_size(size)),
    }
}

/// A `dns_nameserver` value: comma-separated IPv4 addresses, each stripped
/// of white space and read by `inet_pton` (`magnum/common/utils.py`
/// `validate_dns`: `netaddr.IPAddress(dns.strip(), 4, INET_PTON)`).
pub fn validate_dns_list(value: &str) -> Result<(), MagnumError> {
    let ok = value
        .split(',')
        .all(|part| is_inet_pton_ipv4(part.trim_matches(python::is_space)));
    if ok {
        Ok(())
    } else {
        Err(MagnumError::invalid_dns(value))
    }
}

/// glibc's `inet_pton(AF_INET)`: four dot-separated decimal numbers up to
/// 255, without leading zeros.
fn is_inet_pton_ipv4(s: &str) -> bool {
    let parts: Vec<&str> = s.split('.').collect();
    parts.len() == 4
        && parts.iter().all(|p| {
            !p.is_empty()
                && p.len() <= 3
                && p.bytes().all(|c| c.is_ascii_digit())
                && !(p.len() > 1 && p.starts_with('0'))
                && p.parse::<u16>().is_ok_and(|n| n <= 255)
        })
}

/// `value` must be one of `allowed` (listed in the message in that order).
pub fn validate_enum(field: &str, value: &str, allowed: &[&str]) -> Result<(), MagnumError> {
    if allowed.contains(&value) {
        Ok(())
    } else {
        Err(MagnumError::invalid_enum(field, value, allowed))
    }
}

/// A template's `coe`.
pub fn validate_coe(value: &str) -> Result<(), MagnumError> {
    validate_enum("coe", value, COES)
}

/// A template's `server_type`.
pub fn validate_server_type(value: &str) -> Result<(), MagnumError> {
    validate_enum("server_type", value, SERVER_TYPES)
}

/// A cluster's `health_status`.
pub fn validate_health_status(value: &str) -> Result<(), MagnumError> {
    let allowed: Vec<&str> = HealthStatus::ALL.iter().map(|h| h.as_str()).collect();
    validate_enum("health_status", value, &allowed)
}

/// A cluster or nodegroup `status`.
pub fn validate_status(value: &str) -> Result<(), MagnumError> {
    let allowed: Vec<&str> = Status::ALL.iter().map(|s| s.as_str()).collect();
    validate_enum("status", value, &allowed)
}

/// A quota's `resource`.
pub fn validate_quota_resource(value: &str) -> Result<(), MagnumError> {
    validate_enum("resource", value, QUOTA_RESOURCES)
}

/// Converts a JSON `labels` value (`DictType(text, MultiType(text, int,
/// bool, float))`) to Magnum's stored form, values stringified with
/// Python's `str()` (`1` → `"1"`, `true` → `"True"`, `1.5` → `"1.5"`).
/// `arg` and `body` name the request's body argument and value, which WSME
/// shows when `labels` is not an object. Keys are checked in the document's
/// order.
pub fn validate_labels(
    arg: &str,
    body: &Value,
    labels: &Value,
) -> Result<Option<StringMap>, MagnumError> {
    let map = match labels {
        Value::Null => return Ok(None),
        Value::Object(map) => map,
        other => return Err(MagnumError::not_a_valid_dict_in(arg, body, other)),
    };
    let mut out = StringMap::new();
    for (k, v) in map {
        let s = match v {
            Value::String(s) => s.clone(),
            Value::Number(_) | Value::Bool(_) => python::str_of(v),
            Value::Null => return Err(MagnumError::label_value_none(k)),
            other => {
                return Err(MagnumError::wrong_element_type(
                    "labels",
                    labels,
                    other,
                    "(<class 'str'>, <class 'int'>, <class 'bool'>, <class 'float'>)",
                ));
            }
        };
        out.insert(k.clone(), s);
    }
    Ok(Some(out))
}

/// Converts a JSON `DictType(text, text)` value (`health_status_reason`,
/// `node_labels`, federation `properties`).
pub fn validate_string_dict(
    arg: &str,
    body: &Value,
    field: &str,
    value: &Value,
) -> Result<Option<StringMap>, MagnumError> {
    let map = match value {
        Value::Null => return Ok(None),
        Value::Object(map) => map,
        other => return Err(MagnumError::not_a_valid_dict_in(arg, body, other)),
    };
    let mut out = StringMap::new();
    for (k, v) in map {
        let Value::String(s) = v else {
            return Err(MagnumError::wrong_element_type(
                field,
                value,
                v,
                "<class 'str'>",
            ));
        };
        out.insert(k.clone(), s.clone());
    }
    Ok(Some(out))
}

/// Converts a JSON `node_taints` value (`ArrayType(DictType(text, text))`).
pub fn validate_taints_input(
    arg: &str,
    body: &Value,
    value: &Value,
) -> Result<Option<Vec<NodeTaint>>, MagnumError> {
    let list = match value {
        Value::Null => return Ok(None),
        Value::Array(list) => list,
        other => return Err(MagnumError::not_a_valid_list_in(arg, body, other)),
    };
    let mut out = Vec::with_capacity(list.len());
    for item in list {
        if !item.is_object() {
            return Err(MagnumError::not_a_valid_dict_in(arg, body, item));
        }
        if let Some(taint) = validate_string_dict(arg, body, "node_taints", item)? {
            out.push(taint);
        }
    }
    Ok(Some(out))
}

/// What the nodegroup input rules look at (logic.md §8).
#[derive(Clone, Debug, Default)]
pub struct NodeGroupInput<'a> {
    pub name: &'a str,
    pub role: &'a str,
    pub node_count: i64,
    pub min_node_count: i64,
    /// `None` or `Some(0)`: no maximum.
    pub max_node_count: Option<i64>,
    /// The keys of `node_labels` in the client's order, so that the first
    /// offending key is the one Magnum reports.
    pub node_label_keys: Vec<&'a str>,
    pub node_taints: &'a [NodeTaint],
}

/// Kubelet label namespaces (`nodegroup.py:41-76`).
const KUBELET_ALLOWED_LABEL_NAMESPACES: &[&str] = &["kubelet.kubernetes.io", "node.kubernetes.io"];
const KUBELET_ALLOWED_LABELS: &[&str] = &[
    "beta.kubernetes.io/arch",
    "beta.kubernetes.io/instance-type",
    "beta.kubernetes.io/os",
    "failure-domain.beta.kubernetes.io/region",
    "failure-domain.beta.kubernetes.io/zone",
    "kubernetes.io/arch",
    "kubernetes.io/hostname",
    "kubernetes.io/os",
    "node.kubernetes.io/instance-type",
    "node.kubernetes.io/windows-build",
    "topology.kubernetes.io/region",
    "topology.kubernetes.io/zone",
];
const TAINT_FIELDS: &[&str] = &["key", "value", "effect"];

/// The nodegroup POST/PATCH rules in Magnum's order: counts, master role,
/// label namespaces, taints. Failures are the 409 `NodeGroupInvalidInput`.
pub fn validate_node_group_input(ng: &NodeGroupInput<'_>) -> Result<(), MagnumError> {
    validate_node_group_counts(ng.name, ng.node_count, ng.min_node_count, ng.max_node_count)?;
    validate_node_group_role(
        ng.name,
        ng.role,
        !ng.node_label_keys.is_empty(),
        !ng.node_taints.is_empty(),
    )?;
    validate_node_labels(ng.name, ng.node_label_keys.iter().copied())?;
    validate_node_taints(ng.name, ng.node_taints)
}

/// The min/max/count consistency rule (a maximum of 0 is no maximum).
pub fn validate_node_group_counts(
    name: &str,
    node_count: i64,
    min: i64,
    max: Option<i64>,
) -> Result<(), MagnumError> {
    if let Some(max) = max.filter(|m| *m != 0) {
        if max < min {
            return Err(MagnumError::node_group_invalid_input(
                "max_node_count",
                name,
                &format!(
                    "min_node_count ({min}) should be less or equal to max_node_count ({max})"
                ),
            ));
        }
        if node_count > max {
            return Err(MagnumError::node_group_invalid_input(
                "max_node_count",
                name,
                &format!(
                    "node_count ({node_count}) should be less or equal to max_node_count ({max})"
                ),
            ));
        }
    }
    if min > node_count {
        return Err(MagnumError::node_group_invalid_input(
            "min_node_count",
            name,
            &format!("min_node_count ({min}) should be less or equal to node_count ({node_count})"),
        ));
    }
    Ok(())
}

/// Node labels and taints are refused on a master nodegroup.
pub fn validate_node_group_role(
    name: &str,
    role: &str,
    has_labels: bool,
    has_taints: bool,
) -> Result<(), MagnumError> {
    if role != ROLE_MASTER {
        return Ok(());
    }
    if has_labels {
        return Err(MagnumError::node_group_invalid_input(
            "node_labels",
            name,
            "node_labels may not be set on master nodegroups",
        ));
    }
    if has_taints {
        return Err(MagnumError::node_group_invalid_input(
            "node_taints",
            name,
            "node_taints may not be set on master nodegroups",
        ));
    }
    Ok(())
}

/// Whether `key` lives in the `kubernetes.io` or `k8s.io` namespace.
pub fn is_restricted_kubernetes_label(key: &str) -> bool {
    let Some((prefix, _)) = key.split_once('/') else {
        return false;
    };
    prefix == "kubernetes.io"
        || prefix == "k8s.io"
        || prefix.ends_with(".kubernetes.io")
        || prefix.ends_with(".k8s.io")
}

/// Refuses the first key (in the given order) that the kubelet would refuse
/// to apply to itself.
pub fn validate_node_labels<'a>(
    name: &str,
    keys: impl IntoIterator<Item = &'a str>,
) -> Result<(), MagnumError> {
    for key in keys {
        if !is_restricted_kubernetes_label(key) {
            continue;
        }
        let prefix = key.split_once('/').map_or(key, |(p, _)| p);
        if KUBELET_ALLOWED_LABEL_NAMESPACES.contains(&prefix)
            || KUBELET_ALLOWED_LABELS.contains(&key)
        {
            continue;
        }
        return Err(MagnumError::node_group_invalid_input(
            "node_labels",
            name,
            &format!(
                "node label '{key}' is in a restricted Kubernetes namespace; the kubelet will \
                 refuse to start. Labels in the kubernetes.io/ and k8s.io/ namespaces must use \
                 one of the allowed prefixes ({}) or be one of the allowed labels ({}).",
                KUBELET_ALLOWED_LABEL_NAMESPACES.join(", "),
                KUBELET_ALLOWED_LABELS.join(", ")
            ),
        ));
    }
    Ok(())
}

/// Each taint: known fields only, a key, and a valid effect.
pub fn validate_node_taints(name: &str, taints: &[NodeTaint]) -> Result<(), MagnumError> {
    for (i, taint) in taints.iter().enumerate() {
        // The map's keys are sorted, as the message lists them.
        let unknown: Vec<&str> = taint
            .keys()
            .map(String::as_str)
            .filter(|k| !TAINT_FIELDS.contains(k))
            .collect();
        if !unknown.is_empty() {
            return Err(MagnumError::node_group_invalid_input(
                "node_taints",
                name,
                &format!(
                    "node_taints[{i}] contains unrecognised field(s) {}; allowed fields are {}",
                    unknown.join(", "),
                    TAINT_FIELDS.join(", ")
                ),
            ));
        }
        if taint.get("key").is_none_or(String::is_empty) {
            return Err(MagnumError::node_group_invalid_input(
                "node_taints",
                name,
                &format!("node_taints[{i}].key is required"),
            ));
        }
        if !taint
            .get("effect")
            .is_some_and(|e| TAINT_EFFECTS.contains(&e.as_str()))
        {
            return Err(MagnumError::node_group_invalid_input(
                "node_taints",
                name,
                &format!(
                    "node_taints[{i}].effect must be one of {}",
                    TAINT_EFFECTS.join(", ")
                ),
            ));
        }
    }
    Ok(())
}

/// The resize rule of a non-master nodegroup: the new count lies within
/// `[min, max]` (a maximum of `None` or 0 is no maximum).
pub fn validate_resize_bounds(
    nodegroup: &str,
    node_count: i64,
    min: i64,
    max: Option<i64>,
) -> Result<(), MagnumError> {
    let above = max.is_some_and(|m| m != 0 && node_count > m);
    if node_count < min || above {
        return Err(MagnumError::ng_resize_out_bounds(nodegroup, min, max));
    }
    Ok(())
}

/// A pagination limit: positive when given, capped at `max_limit`.
pub fn validate_limit(limit: Option<i64>, max_limit: i64) -> Result<i64, MagnumError> {
    match limit {
        None => Ok(max_limit),
        Some(l) if l <= 0 => Err(MagnumError::limit_not_positive()),
        Some(l) => Ok(l.min(max_limit)),
    }
}

/// A sort direction (case-sensitive).
pub fn validate_sort_dir(dir: &str) -> Result<(), MagnumError> {
    if dir == "asc" || dir == "desc" {
        Ok(())
    } else {
        Err(MagnumError::invalid_sort_dir(dir))
    }
}

/// A cluster PATCH may change only `node_count`, `health_status` and
/// `health_status_reason` (`validation.py:264`).
pub fn validate_cluster_patch_delta(changed: &[&str]) -> Result<(), MagnumError> {
    let bad: Vec<&str> = changed
        .iter()
        .copied()
        .filter(|f| !matches!(*f, "node_count" | "health_status" | "health_status_reason"))
        .collect();
    if bad.is_empty() {
        Ok(())
    } else {
        Err(MagnumError::cannot_change_properties("cluster", &bad))
    }
}

#[cfg(test)]
mod tests;
