package magnum

import (
	"fmt"
	"math"
	"math/big"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Validators on plain values. Each returns the *Error Magnum (WSME or the
// controllers) answers for the same input, with the exact message.

// Name rules of the API types (types.md §3, §4, §5, §10).
const (
	// NamePattern is the pattern of cluster and federation names.
	NamePattern = `^[a-zA-Z][a-zA-Z0-9_.-]*$`
	// ClusterNameMaxLength is the maximum length of cluster and federation
	// names (Heat stack name limit minus the suffix Magnum appends).
	ClusterNameMaxLength = 242
	// StringMaxLength is the maximum of most free-text string fields.
	StringMaxLength = 255
)

// namePattern is NamePattern with Python's "$", which also matches before a
// final newline.
var namePattern = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9_.-]*\n?$`)

// pyLen is len() of a Python str.
func pyStrLen(s string) int { return utf8.RuneCountInString(s) }

// ValidateString applies WSME's StringType checks in its order: type, minimum
// length, maximum length, pattern. pattern may be "" (none); max ≤ 0 means
// no maximum.
func ValidateString(field string, v any, min, max int, pattern *regexp.Regexp, patternText string) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", NotAString(field, v)
	}
	if pyStrLen(s) < min {
		return "", TooShort(field, s, min)
	}
	if max > 0 && pyStrLen(s) > max {
		return "", TooLong(field, s, max)
	}
	if pattern != nil && !pattern.MatchString(s) {
		return "", PatternMismatch(field, s, patternText)
	}
	return s, nil
}

// ValidateClusterName checks a cluster (or federation) name: 1–242
// characters matching NamePattern.
func ValidateClusterName(name string) error {
	_, err := ValidateString("name", name, 1, ClusterNameMaxLength, namePattern, NamePattern)
	return err
}

// ValidateFederationName checks a federation name (same rule as clusters).
func ValidateFederationName(name string) error { return ValidateClusterName(name) }

// ValidateTemplateName checks a cluster template name: 1–255 characters,
// any characters.
func ValidateTemplateName(name string) error {
	_, err := ValidateString("name", name, 1, StringMaxLength, nil, "")
	return err
}

// ValidateNodeGroupName checks a nodegroup name: 1–255 characters.
func ValidateNodeGroupName(name string) error { return ValidateTemplateName(name) }

// ValidateStringField checks one of the 1–255 character string fields
// (keypair, flavor_id, image_id, networks, proxies, drivers, ...).
func ValidateStringField(field, v string) error {
	_, err := ValidateString(field, v, 1, StringMaxLength, nil, "")
	return err
}

// ValidateTags checks a template's tags (0–255 characters).
func ValidateTags(v string) error {
	_, err := ValidateString("tags", v, 0, StringMaxLength, nil, "")
	return err
}

// IsUUIDLike reproduces oslo_utils.uuidutils.is_uuid_like: after removing
// "urn:" and "uuid:", surrounding braces and hyphens, 32 hexadecimal digits
// (any case).
func IsUUIDLike(v string) bool {
	s := strings.ReplaceAll(v, "urn:", "")
	s = strings.ReplaceAll(s, "uuid:", "")
	s = strings.Trim(s, "{}")
	s = strings.ReplaceAll(s, "-", "")
	if len(s) != 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// ValidateUUID returns InvalidUUID unless v is UUID-like.
func ValidateUUID(v string) error {
	if !IsUUIDLike(v) {
		return InvalidUUID(v)
	}
	return nil
}

// ValidateUUIDOrName accepts what types.uuid_or_name accepts: a UUID-like
// string or any non-empty name.
func ValidateUUIDOrName(v string) error {
	if IsUUIDLike(v) || v != "" {
		return nil
	}
	return InvalidName(v)
}

// IntegerRange is an IntegerType's bounds; nil means unbounded.
type IntegerRange struct {
	Min, Max *int64
}

func rangeBound(n int64) *int64 { return &n }

// Integer ranges of the API types.
var (
	RangeNodeCount        = IntegerRange{Min: rangeBound(0)}
	RangeMasterCount      = IntegerRange{Min: rangeBound(1)}
	RangeDockerVolumeSize = IntegerRange{Min: rangeBound(1)}
	RangeCreateTimeout    = IntegerRange{Min: rangeBound(0)}
	RangeAPIServerPort    = IntegerRange{Min: rangeBound(1024), Max: rangeBound(65535)}
	RangeMinNodeCount     = IntegerRange{Min: rangeBound(0)}
	RangeMaxNodeCount     = IntegerRange{Min: rangeBound(0)}
	RangeHardLimit        = IntegerRange{Min: rangeBound(0)}
	RangeMaxBatchSize     = IntegerRange{Min: rangeBound(1)}
	RangeResizeNodeCount  = IntegerRange{Min: rangeBound(0)}
	RangeID               = IntegerRange{Min: rangeBound(1)}
)

// ValidateRange applies an IntegerType's bounds to n.
func ValidateRange(field string, n int64, r IntegerRange) error {
	if r.Min != nil && n < *r.Min {
		return BelowMinimum(field, n, int(*r.Min))
	}
	if r.Max != nil && n > *r.Max {
		return AboveMaximum(field, n, int(*r.Max))
	}
	return nil
}

// ConvertInt converts a JSON body value to an integer as WSME does (Python
// int()): integers, booleans, floats (truncated) and integer strings are
// accepted. On failure the message names the body argument and shows the
// whole body (arg, body). Big integers are refused as out of range.
func ConvertInt(arg string, body any, v any) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case int:
		return int64(x), nil
	case bool:
		if x {
			return 1, nil
		}
		return 0, nil
	case float64:
		if math.IsInf(x, 0) {
			return 0, InvalidInput(arg, body, "cannot convert float infinity to integer")
		}
		if math.IsNaN(x) {
			return 0, InvalidInput(arg, body, "cannot convert float NaN to integer")
		}
		return int64(x), nil
	case *big.Int:
		if x.IsInt64() {
			return x.Int64(), nil
		}
		return 0, InvalidInput(arg, body, "Python int too large to convert to C long")
	case string:
		if n, ok := pyIntFromString(x); ok {
			return n, nil
		}
		return 0, InvalidIntLiteral(arg, body, x)
	}
	return 0, InvalidInput(arg, body, fmt.Sprintf("int() argument must be a string, a bytes-like object or a real number, not '%s'", strings.TrimSuffix(strings.TrimPrefix(PyClass(v), "<class '"), "'>")))
}

// pyIntFromString parses s as Python's int(s) does for base 10: surrounding
// whitespace, an optional sign, digits with single underscores between them.
func pyIntFromString(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if s == "" || s[0] == '_' || s[len(s)-1] == '_' || strings.Contains(s, "__") {
		return 0, false
	}
	clean := strings.ReplaceAll(s, "_", "")
	for i := 0; i < len(clean); i++ {
		if clean[i] < '0' || clean[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(clean, 10, 64)
	if err != nil {
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, true
}

// ValidateNodeCount checks a cluster create/PATCH or resize node count: ≥ 0
// (WSME), and 0 only from microversion 1.10 (minor is the negotiated 1.x
// minor version). Nodegroup POST has no version gate: use ValidateRange.
func ValidateNodeCount(n int64, minor int) error {
	if err := ValidateRange("node_count", n, RangeNodeCount); err != nil {
		return err
	}
	if n == 0 && minor < 10 {
		return ZeroNodeCountNotSupported()
	}
	return nil
}

// ValidateMasterCount checks master_count ≥ 1 (WSME) and the base driver's
// rule (odd; magnum/drivers/common/driver.py validate_master_size).
func ValidateMasterCount(n int64) error {
	if err := ValidateRange("master_count", n, RangeMasterCount); err != nil {
		return err
	}
	return ValidateMasterSizeOdd(n)
}

// ValidateMasterSizeOdd is the base driver's master size rule.
func ValidateMasterSizeOdd(n int64) error {
	if n < 1 || n%2 == 0 {
		return MasterNGSizeInvalid(int(n))
	}
	return nil
}

// ValidateMasterLB refuses several masters without a load balancer (after
// inheritance from the template).
func ValidateMasterLB(masterCount int64, masterLBEnabled bool) error {
	if masterCount > 1 && !masterLBEnabled {
		return MasterCountWithoutLB()
	}
	return nil
}

// ValidateDockerVolumeSize checks docker_volume_size ≥ 1 (WSME).
func ValidateDockerVolumeSize(n int64) error {
	return ValidateRange("docker_volume_size", n, RangeDockerVolumeSize)
}

// ValidateDevicemapperVolume applies magnum/api/validation.py:251: with the
// devicemapper storage driver, the effective volume size (the cluster's when
// set and non-zero, else the template's) must be at least 3 GB.
func ValidateDevicemapperVolume(storageDriver string, clusterSize, templateSize *int) error {
	if storageDriver != "devicemapper" {
		return nil
	}
	size := clusterSize
	if size == nil || *size == 0 {
		size = templateSize
	}
	if size == nil || *size < 3 {
		return DevicemapperVolumeSize(size)
	}
	return nil
}

// ValidateDNSList checks a dns_nameserver value: comma-separated IPv4
// addresses in inet_pton form (each may carry surrounding whitespace).
func ValidateDNSList(v string) error {
	for _, part := range strings.Split(v, ",") {
		if !isInetPtonIPv4(strings.TrimSpace(part)) {
			return InvalidDNS(v)
		}
	}
	return nil
}

func isInetPtonIPv4(s string) bool {
	parts := strings.Split(s, ".")
	if len(parts) != 4 {
		return false
	}
	for _, p := range parts {
		if p == "" || len(p) > 3 {
			return false
		}
		for i := 0; i < len(p); i++ {
			if p[i] < '0' || p[i] > '9' {
				return false
			}
		}
		n, _ := strconv.Atoi(p)
		if n > 255 {
			return false
		}
	}
	return true
}

// ValidateEnum checks v against an enum's values; allowed is listed in the
// message in the given order.
func ValidateEnum(field, v string, allowed []string) error {
	for _, a := range allowed {
		if a == v {
			return nil
		}
	}
	return InvalidEnum(field, v, allowed)
}

// ValidateCOE checks a template's coe enum.
func ValidateCOE(v string) error { return ValidateEnum("coe", v, []string{string(COEKubernetes)}) }

// ValidateServerType checks a template's server_type enum.
func ValidateServerType(v string) error {
	return ValidateEnum("server_type", v, []string{string(ServerTypeVM), string(ServerTypeBM)})
}

// ValidateHealthStatus checks a cluster's health_status enum.
func ValidateHealthStatus(v string) error {
	return ValidateEnum("health_status", v, []string{string(HealthHealthy), string(HealthUnhealthy), string(HealthUnknown)})
}

// ValidateStatus checks a cluster or nodegroup status enum.
func ValidateStatus(v string) error {
	allowed := make([]string, len(ClusterStatuses))
	for i, s := range ClusterStatuses {
		allowed[i] = string(s)
	}
	return ValidateEnum("status", v, allowed)
}

// ValidateQuotaResource checks a quota's resource enum.
func ValidateQuotaResource(v string) error {
	return ValidateEnum("resource", v, []string{QuotaResourceCluster})
}

// ValidateLabels converts a JSON labels value (DictType(text,
// MultiType(text, int, bool, float))) to Magnum's stored form, values
// stringified with Python's str() (1 → "1", true → "True", 1.5 → "1.5").
// arg and body name the request's body argument and value, which WSME shows
// when labels is not an object. A null value is Magnum's unhandled 500.
func ValidateLabels(arg string, body any, labels any) (map[string]string, error) {
	if labels == nil {
		return nil, nil
	}
	keys, get, ok := jsonObjectItems(labels)
	if !ok {
		return nil, InvalidInput(arg, body, "Value not a valid dict: "+PyStr(labels))
	}
	out := make(map[string]string, len(keys))
	for _, k := range keys {
		switch x := get(k).(type) {
		case string:
			out[k] = x
		case int64, int, *big.Int, bool, float64:
			out[k] = PyStr(x)
		case nil:
			return nil, ServerError(fmt.Sprintf("Field `labels[%s]' cannot be None", k))
		default:
			return nil, InvalidInput("labels", labels, fmt.Sprintf("Wrong type. Expected '(<class 'str'>, <class 'int'>, <class 'bool'>, <class 'float'>)', got '%s'", PyClass(x)))
		}
	}
	return out, nil
}

// ValidateStringDict converts a JSON DictType(text, text) value
// (health_status_reason, node_labels, federation properties).
func ValidateStringDict(arg string, body any, field string, v any) (map[string]string, error) {
	if v == nil {
		return nil, nil
	}
	keys, get, ok := jsonObjectItems(v)
	if !ok {
		return nil, InvalidInput(arg, body, "Value not a valid dict: "+PyStr(v))
	}
	out := make(map[string]string, len(keys))
	for _, k := range keys {
		s, ok := get(k).(string)
		if !ok {
			return nil, InvalidInput(field, v, fmt.Sprintf("Wrong type. Expected '<class 'str'>', got '%s'", PyClass(get(k))))
		}
		out[k] = s
	}
	return out, nil
}

// ValidateTaintsInput converts a JSON node_taints value (ArrayType(DictType(
// text, text))).
func ValidateTaintsInput(arg string, body any, v any) ([]map[string]string, error) {
	if v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, InvalidInput(arg, body, "Value not a valid list: "+PyStr(v))
	}
	out := make([]map[string]string, 0, len(list))
	for _, e := range list {
		if _, _, ok := jsonObjectItems(e); !ok {
			return nil, InvalidInput(arg, body, "Value not a valid dict: "+PyStr(e))
		}
		m, err := ValidateStringDict(arg, body, "node_taints", e)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// objectItems returns the keys (in iteration order: insertion order for
// PyReprer dicts offering Keys, sorted for Go maps) and a getter.
func jsonObjectItems(v any) ([]string, func(string) any, bool) {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return keys, func(k string) any { return x[k] }, true
	case map[string]string:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return keys, func(k string) any { return x[k] }, true
	}
	return nil, nil, false
}

// NodeGroupInput is what the nodegroup input rules look at (logic.md §8).
type NodeGroupInput struct {
	Name         string
	Role         string
	NodeCount    int64
	MinNodeCount int64
	// MaxNodeCount nil or 0 means "no maximum".
	MaxNodeCount *int64
	NodeLabels   map[string]string
	// NodeLabelOrder is the keys of NodeLabels in the client's order, so
	// that the first offending key is the one Magnum reports; when nil the
	// keys are checked in sorted order.
	NodeLabelOrder []string
	NodeTaints     []map[string]string
}

// Kubelet label namespaces (nodegroup.py:41-76).
var (
	kubeletAllowedLabelNamespaces = []string{"kubelet.kubernetes.io", "node.kubernetes.io"}
	kubeletAllowedLabels          = []string{
		"beta.kubernetes.io/arch", "beta.kubernetes.io/instance-type", "beta.kubernetes.io/os",
		"failure-domain.beta.kubernetes.io/region", "failure-domain.beta.kubernetes.io/zone",
		"kubernetes.io/arch", "kubernetes.io/hostname", "kubernetes.io/os",
		"node.kubernetes.io/instance-type", "node.kubernetes.io/windows-build",
		"topology.kubernetes.io/region", "topology.kubernetes.io/zone",
	}
	taintFields = []string{"key", "value", "effect"}
)

// ValidateNodeGroupInput applies the nodegroup POST/PATCH rules in Magnum's
// order: counts, master role, label namespaces, taints. Failures are 409
// NodeGroupInvalidInput.
func ValidateNodeGroupInput(ng NodeGroupInput) error {
	if err := ValidateNodeGroupCounts(ng.Name, ng.NodeCount, ng.MinNodeCount, ng.MaxNodeCount); err != nil {
		return err
	}
	if err := ValidateNodeGroupRole(ng.Name, ng.Role, len(ng.NodeLabels) > 0, len(ng.NodeTaints) > 0); err != nil {
		return err
	}
	order := ng.NodeLabelOrder
	if order == nil {
		for k := range ng.NodeLabels {
			order = append(order, k)
		}
		sort.Strings(order)
	}
	if err := ValidateNodeLabels(ng.Name, order); err != nil {
		return err
	}
	return ValidateNodeTaints(ng.Name, ng.NodeTaints)
}

// ValidateNodeGroupCounts is the min/max/count consistency rule.
func ValidateNodeGroupCounts(name string, n, min int64, max *int64) error {
	if max != nil && *max != 0 {
		if *max < min {
			return NodeGroupInvalidInput("max_node_count", name, fmt.Sprintf("min_node_count (%d) should be less or equal to max_node_count (%d)", min, *max))
		}
		if n > *max {
			return NodeGroupInvalidInput("max_node_count", name, fmt.Sprintf("node_count (%d) should be less or equal to max_node_count (%d)", n, *max))
		}
	}
	if min > n {
		return NodeGroupInvalidInput("min_node_count", name, fmt.Sprintf("min_node_count (%d) should be less or equal to node_count (%d)", min, n))
	}
	return nil
}

// ValidateNodeGroupRole refuses node labels or taints on a master nodegroup.
func ValidateNodeGroupRole(name, role string, hasLabels, hasTaints bool) error {
	if role != RoleMaster {
		return nil
	}
	if hasLabels {
		return NodeGroupInvalidInput("node_labels", name, "node_labels may not be set on master nodegroups")
	}
	if hasTaints {
		return NodeGroupInvalidInput("node_taints", name, "node_taints may not be set on master nodegroups")
	}
	return nil
}

// IsRestrictedKubernetesLabel reports whether key lives in the kubernetes.io
// or k8s.io namespace.
func IsRestrictedKubernetesLabel(key string) bool {
	prefix, _, found := strings.Cut(key, "/")
	if !found {
		return false
	}
	return prefix == "kubernetes.io" || prefix == "k8s.io" ||
		strings.HasSuffix(prefix, ".kubernetes.io") || strings.HasSuffix(prefix, ".k8s.io")
}

// ValidateNodeLabels refuses the first key (in the given order) the kubelet
// would refuse to self-apply.
func ValidateNodeLabels(name string, keys []string) error {
	for _, key := range keys {
		if !IsRestrictedKubernetesLabel(key) {
			continue
		}
		prefix, _, _ := strings.Cut(key, "/")
		if stringIn(kubeletAllowedLabelNamespaces, prefix) || stringIn(kubeletAllowedLabels, key) {
			continue
		}
		return NodeGroupInvalidInput("node_labels", name, fmt.Sprintf(
			"node label '%s' is in a restricted Kubernetes namespace; the kubelet will refuse to start. "+
				"Labels in the kubernetes.io/ and k8s.io/ namespaces must use one of the allowed prefixes (%s) "+
				"or be one of the allowed labels (%s).",
			key, strings.Join(kubeletAllowedLabelNamespaces, ", "), strings.Join(kubeletAllowedLabels, ", ")))
	}
	return nil
}

// ValidateNodeTaints checks each taint: known fields only, a key, and a
// valid effect.
func ValidateNodeTaints(name string, taints []map[string]string) error {
	for i, t := range taints {
		var unknown []string
		for k := range t {
			if !stringIn(taintFields, k) {
				unknown = append(unknown, k)
			}
		}
		if len(unknown) > 0 {
			sort.Strings(unknown)
			return NodeGroupInvalidInput("node_taints", name, fmt.Sprintf("node_taints[%d] contains unrecognised field(s) %s; allowed fields are %s", i, strings.Join(unknown, ", "), strings.Join(taintFields, ", ")))
		}
		if t["key"] == "" {
			return NodeGroupInvalidInput("node_taints", name, fmt.Sprintf("node_taints[%d].key is required", i))
		}
		if effect, ok := t["effect"]; !ok || !stringIn(TaintEffects, effect) {
			return NodeGroupInvalidInput("node_taints", name, fmt.Sprintf("node_taints[%d].effect must be one of %s", i, strings.Join(TaintEffects, ", ")))
		}
	}
	return nil
}

// ValidateResizeBounds is the resize rule for a non-master nodegroup: the new
// count must lie within [min, max] (max nil or 0: no maximum).
func ValidateResizeBounds(nodegroup string, n, min int64, max *int64) error {
	if n < min || (max != nil && *max != 0 && n > *max) {
		var mx *int
		if max != nil {
			m := int(*max)
			mx = &m
		}
		return NGResizeOutBounds(nodegroup, int(min), mx)
	}
	return nil
}

// ValidateLimit checks a pagination limit (must be positive when given) and
// caps it at maxLimit.
func ValidateLimit(limit *int64, maxLimit int64) (int64, error) {
	if limit == nil {
		return maxLimit, nil
	}
	if *limit <= 0 {
		return 0, LimitNotPositive()
	}
	return min(*limit, maxLimit), nil
}

// ValidateSortDir checks a sort direction (case-sensitive).
func ValidateSortDir(dir string) error {
	if dir != "asc" && dir != "desc" {
		return InvalidSortDir(dir)
	}
	return nil
}

// ValidateClusterPatchDelta refuses changes to anything but node_count,
// health_status and health_status_reason (validation.py:264).
func ValidateClusterPatchDelta(changed []string) error {
	var bad []string
	for _, f := range changed {
		if f != "node_count" && f != "health_status" && f != "health_status_reason" {
			bad = append(bad, f)
		}
	}
	if len(bad) > 0 {
		return CannotChangeProperties("cluster", bad)
	}
	return nil
}

func stringIn(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
