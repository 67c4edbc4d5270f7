package magnum

import (
	"errors"
	"net/http"
	"strings"
	"testing"
)

// check asserts err is an *Error with status and message (or nil when msg
// is empty).
func assertMagnumError(t *testing.T, err error, status int, msg string) {
	t.Helper()
	if msg == "" {
		if err != nil {
			t.Fatalf("unexpected error %v", err)
		}
		return
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T), want %d %q", err, err, status, msg)
	}
	if e.Status != status || e.Message != msg {
		t.Fatalf("got %d %q\nwant %d %q", e.Status, e.Message, status, msg)
	}
}

func int64Ptr(n int64) *int64 { return &n }

func TestValidateNames(t *testing.T) {
	tests := []struct {
		name  string
		check func() error
		msg   string
	}{
		{"cluster name ok", func() error { return ValidateClusterName("cluster1") }, ""},
		{"dotted and dashed name", func() error { return ValidateClusterName("a.b-c_d") }, ""},
		{"trailing newline passes as in Python", func() error { return ValidateClusterName("abc\n") }, ""},
		{"digits first", func() error { return ValidateClusterName("123456") },
			"Invalid input for field/attribute name. Value: '123456'. Value should match the pattern ^[a-zA-Z][a-zA-Z0-9_.-]*$"},
		{"digits then letters", func() error { return ValidateFederationName("123456test_federation") },
			"Invalid input for field/attribute name. Value: '123456test_federation'. Value should match the pattern ^[a-zA-Z][a-zA-Z0-9_.-]*$"},
		{"leading dash", func() error { return ValidateClusterName("-test_federation") },
			"Invalid input for field/attribute name. Value: '-test_federation'. Value should match the pattern ^[a-zA-Z][a-zA-Z0-9_.-]*$"},
		{"leading dot", func() error { return ValidateClusterName(".test_federation") },
			"Invalid input for field/attribute name. Value: '.test_federation'. Value should match the pattern ^[a-zA-Z][a-zA-Z0-9_.-]*$"},
		{"leading underscore", func() error { return ValidateClusterName("_test_federation") },
			"Invalid input for field/attribute name. Value: '_test_federation'. Value should match the pattern ^[a-zA-Z][a-zA-Z0-9_.-]*$"},
		{"empty", func() error { return ValidateClusterName("") },
			"Invalid input for field/attribute name. Value: ''. Value should have a minimum character requirement of 1"},
		{"242 characters", func() error { return ValidateClusterName(strings.Repeat("x", 242)) }, ""},
		{"243 characters", func() error { return ValidateClusterName(strings.Repeat("x", 243)) },
			"Invalid input for field/attribute name. Value: '" + strings.Repeat("x", 243) + "'. Value should have a maximum character requirement of 242"},
		{"template names take anything", func() error { return ValidateTemplateName("1 ü/ä") }, ""},
		{"256-character template name", func() error { return ValidateTemplateName(strings.Repeat("i", 256)) },
			"Invalid input for field/attribute name. Value: '" + strings.Repeat("i", 256) + "'. Value should have a maximum character requirement of 255"},
		{"255 runes of a multi-byte character", func() error { return ValidateNodeGroupName(strings.Repeat("é", 255)) }, ""},
		{"empty image", func() error { return ValidateStringField("image_id", "") },
			"Invalid input for field/attribute image_id. Value: ''. Value should have a minimum character requirement of 1"},
		{"empty tags allowed", func() error { return ValidateTags("") }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { assertMagnumError(t, tt.check(), http.StatusBadRequest, tt.msg) })
	}
}

func TestValidateUUID(t *testing.T) {
	for _, ok := range []string{"5d12f6fd-a196-4bf0-ae4c-1f639a523a52", "5D12F6FDA1964BF0AE4C1F639A523A52",
		"{5d12f6fd-a196-4bf0-ae4c-1f639a523a52}", "urn:uuid:5d12f6fd-a196-4bf0-ae4c-1f639a523a52", "5d12-f6fd-a196-4bf0-ae4c-1f63-9a52-3a52"} {
		if !IsUUIDLike(ok) {
			t.Errorf("IsUUIDLike(%q) = false", ok)
		}
	}
	for _, bad := range []string{"", "abc", "not_found", "5d12f6fd-a196-4bf0-ae4c-1f639a523a5", "5d12f6fd-a196-4bf0-ae4c-1f639a523a5g", " 5d12f6fda1964bf0ae4c1f639a523a52"} {
		if IsUUIDLike(bad) {
			t.Errorf("IsUUIDLike(%q) = true", bad)
		}
	}
	assertMagnumError(t, ValidateUUID(""), 400, "Expected a uuid but received .")
	assertMagnumError(t, ValidateUUID("abc"), 400, "Expected a uuid but received abc.")
}

func TestValidateCounts(t *testing.T) {
	tests := []struct {
		name   string
		err    error
		status int
		msg    string
	}{
		{"node count 1", ValidateNodeCount(1, 1), 0, ""},
		{"negative node count", ValidateNodeCount(-1, 14), 400, "Invalid input for field/attribute node_count. Value: '-1'. Value should be greater or equal to 0"},
		{"zero below 1.10", ValidateNodeCount(0, 9), 400, "Resizing a nodegroup to zero is not supported in the provided microversion."},
		{"zero at 1.10", ValidateNodeCount(0, 10), 0, ""},
		{"master count 0", ValidateMasterCount(0), 400, "Invalid input for field/attribute master_count. Value: '0'. Value should be greater or equal to 1"},
		{"master count 2", ValidateMasterCount(2), 400, "master nodegroup size of 2 is invalid, size cannot be an even number."},
		{"master count 3", ValidateMasterCount(3), 0, ""},
		{"master lb", ValidateMasterLB(3, false), 400, "master_count must be 1 when master_lb_enabled is False"},
		{"master lb enabled", ValidateMasterLB(3, true), 0, ""},
		{"docker volume size", ValidateDockerVolumeSize(-1), 400, "Invalid input for field/attribute docker_volume_size. Value: '-1'. Value should be greater or equal to 1"},
		{"devicemapper 1", ValidateDevicemapperVolume("devicemapper", intPtr(1), intPtr(5)), 400, "docker volume size 1 GB is not valid, expecting minimum value 3GB for devicemapper storage driver."},
		{"devicemapper inherits", ValidateDevicemapperVolume("devicemapper", nil, intPtr(2)), 400, "docker volume size 2 GB is not valid, expecting minimum value 3GB for devicemapper storage driver."},
		{"devicemapper none", ValidateDevicemapperVolume("devicemapper", nil, nil), 400, "docker volume size None GB is not valid, expecting minimum value 3GB for devicemapper storage driver."},
		{"overlay", ValidateDevicemapperVolume("overlay2", intPtr(1), nil), 0, ""},
		{"port low", ValidateRange("apiserver_port", -12, RangeAPIServerPort), 400, "Invalid input for field/attribute apiserver_port. Value: '-12'. Value should be greater or equal to 1024"},
		{"port high", ValidateRange("apiserver_port", 65536, RangeAPIServerPort), 400, "Invalid input for field/attribute apiserver_port. Value: '65536'. Value should be lower or equal to 65535"},
		{"create timeout", ValidateRange("create_timeout", -1, RangeCreateTimeout), 400, "Invalid input for field/attribute create_timeout. Value: '-1'. Value should be greater or equal to 0"},
		{"resize out of range", ValidateResizeBounds("test-worker", 3, 4, nil), 400, "Resizing test-worker outside the allowed range: min_node_count = 4, max_node_count = None"},
		{"resize above max", ValidateResizeBounds("w", 6, 1, int64Ptr(5)), 400, "Resizing w outside the allowed range: min_node_count = 1, max_node_count = 5"},
		{"resize max 0 is unbounded", ValidateResizeBounds("w", 60, 1, int64Ptr(0)), 0, ""},
		{"limit", func() error { _, err := ValidateLimit(int64Ptr(0), 1000); return err }(), 400, "Limit must be positive"},
		{"sort dir", ValidateSortDir("DESC"), 400, "Invalid sort direction: DESC. Acceptable values are 'asc' or 'desc'"},
		{"cluster delta", ValidateClusterPatchDelta([]string{"node_count", "name"}), 400, "cannot change cluster property(ies) name."},
		{"cluster delta ok", ValidateClusterPatchDelta([]string{"node_count", "health_status", "health_status_reason"}), 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { assertMagnumError(t, tt.err, tt.status, tt.msg) })
	}
}

func TestConvertInt(t *testing.T) {
	body := map[string]any{"node_count": "two"}
	for _, tt := range []struct {
		v    any
		want int64
	}{{int64(3), 3}, {"8443", 8443}, {2.7, 2}, {true, 1}, {" -1_0 ", -10}} {
		got, err := ConvertInt("cluster", body, tt.v)
		if err != nil || got != tt.want {
			t.Errorf("ConvertInt(%#v) = %d, %v; want %d", tt.v, got, err, tt.want)
		}
	}
	_, err := ConvertInt("cluster", body, "two")
	assertMagnumError(t, err, 400, "Invalid input for field/attribute cluster. Value: '{'node_count': 'two'}'. invalid literal for int() with base 10: 'two'")
}

func TestValidateDNSAndEnums(t *testing.T) {
	for _, v := range []string{"8.8.8.8", "8.8.8.8, 1.1.1.1", "8.8.8.8,1.1.1.1"} {
		assertMagnumError(t, ValidateDNSList(v), 0, "")
	}
	for _, v := range []string{"1.1.2", "1.1..1", "openstack.org", "", "256.1.1.1", "1.1.1.1,"} {
		assertMagnumError(t, ValidateDNSList(v), 400, "Expected a single dns address or comma separated dns list, but received "+v+".")
	}
	assertMagnumError(t, ValidateCOE("k8s"), 400, "Invalid input for field/attribute coe. Value: 'k8s'. Value should be one of: kubernetes")
	assertMagnumError(t, ValidateCOE(""), 400, "Invalid input for field/attribute coe. Value: ''. Value should be one of: kubernetes")
	assertMagnumError(t, ValidateQuotaResource("invalid-res"), 400, "Invalid input for field/attribute resource. Value: 'invalid-res'. Value should be one of: Cluster")
	assertMagnumError(t, ValidateServerType("vm"), 0, "")
	assertMagnumError(t, ValidateHealthStatus("HEALTHY"), 0, "")
	assertMagnumError(t, ValidateStatus("CREATE_COMPLETE"), 0, "")
}

func TestValidateLabels(t *testing.T) {
	got, err := ValidateLabels("cluster", nil, map[string]any{"a": int64(1), "b": true, "c": 1.5, "d": "x", "e": false})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a": "1", "b": "True", "c": "1.5", "d": "x", "e": "False"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("labels[%s] = %q, want %q", k, got[k], v)
		}
	}
	_, err = ValidateLabels("cluster", nil, map[string]any{"a": map[string]any{"b": int64(1)}})
	assertMagnumError(t, err, 400, "Invalid input for field/attribute labels. Value: '{'a': {'b': 1}}'. Wrong type. Expected '(<class 'str'>, <class 'int'>, <class 'bool'>, <class 'float'>)', got '<class 'dict'>'")
	body := map[string]any{"labels": []any{"a"}}
	_, err = ValidateLabels("cluster_template", body, []any{"a"})
	assertMagnumError(t, err, 400, "Invalid input for field/attribute cluster_template. Value: '{'labels': ['a']}'. Value not a valid dict: ['a']")
	_, err = ValidateLabels("cluster", nil, map[string]any{"a": nil})
	assertMagnumError(t, err, 400, "Field `labels[a]' cannot be None")
	_, err = ValidateStringDict("nodegroup", nil, "node_labels", map[string]any{"a": int64(1)})
	assertMagnumError(t, err, 400, "Invalid input for field/attribute node_labels. Value: '{'a': 1}'. Wrong type. Expected '<class 'str'>', got '<class 'int'>'")
	_, err = ValidateTaintsInput("nodegroup", map[string]any{"name": "ng"}, []any{"gpu=true:NoSchedule"})
	assertMagnumError(t, err, 400, "Invalid input for field/attribute nodegroup. Value: '{'name': 'ng'}'. Value not a valid dict: gpu=true:NoSchedule")
}

func TestValidateNodeGroupInput(t *testing.T) {
	restricted := "node_labels for nodegroup1 is invalid (node label 'kubernetes.io/role' is in a restricted Kubernetes namespace; the kubelet will refuse to start. " +
		"Labels in the kubernetes.io/ and k8s.io/ namespaces must use one of the allowed prefixes (kubelet.kubernetes.io, node.kubernetes.io) or be one of the allowed labels " +
		"(beta.kubernetes.io/arch, beta.kubernetes.io/instance-type, beta.kubernetes.io/os, failure-domain.beta.kubernetes.io/region, failure-domain.beta.kubernetes.io/zone, " +
		"kubernetes.io/arch, kubernetes.io/hostname, kubernetes.io/os, node.kubernetes.io/instance-type, node.kubernetes.io/windows-build, topology.kubernetes.io/region, topology.kubernetes.io/zone).)."
	tests := []struct {
		name string
		ng   NodeGroupInput
		msg  string
	}{
		{"defaults", NodeGroupInput{Name: "ng", Role: "worker", NodeCount: 1}, ""},
		{"min above max", NodeGroupInput{Name: "nodegroup1", NodeCount: 2, MinNodeCount: 2, MaxNodeCount: int64Ptr(1)},
			"max_node_count for nodegroup1 is invalid (min_node_count (2) should be less or equal to max_node_count (1))."},
		{"min above count", NodeGroupInput{Name: "nodegroup1", NodeCount: 2, MinNodeCount: 3},
			"min_node_count for nodegroup1 is invalid (min_node_count (3) should be less or equal to node_count (2))."},
		{"count above max", NodeGroupInput{Name: "nodegroup1", NodeCount: 7, MaxNodeCount: int64Ptr(5)},
			"max_node_count for nodegroup1 is invalid (node_count (7) should be less or equal to max_node_count (5))."},
		{"max 0 means no maximum", NodeGroupInput{Name: "ng", NodeCount: 70, MaxNodeCount: int64Ptr(0)}, ""},
		{"labels on master", NodeGroupInput{Name: "test-master", Role: "master", NodeCount: 1, NodeLabels: map[string]string{"a": "b"}},
			"node_labels for test-master is invalid (node_labels may not be set on master nodegroups)."},
		{"taints on master", NodeGroupInput{Name: "test-master", Role: "master", NodeCount: 1, NodeTaints: []map[string]string{{"key": "k", "effect": "NoSchedule"}}},
			"node_taints for test-master is invalid (node_taints may not be set on master nodegroups)."},
		{"restricted label", NodeGroupInput{Name: "nodegroup1", NodeCount: 1, NodeLabels: map[string]string{"kubernetes.io/role": "x"}}, restricted},
		{"first restricted label in client order", NodeGroupInput{Name: "nodegroup1", NodeCount: 1,
			NodeLabels:     map[string]string{"node-role.kubernetes.io/x": "", "kubernetes.io/role": "x"},
			NodeLabelOrder: []string{"kubernetes.io/role", "node-role.kubernetes.io/x"}}, restricted},
		{"allowed labels", NodeGroupInput{Name: "ng", NodeCount: 1, NodeLabels: map[string]string{
			"node.kubernetes.io/pool": "a", "kubelet.kubernetes.io/x": "b", "topology.kubernetes.io/zone": "z", "example.com/x": "y", "plain": "p"}}, ""},
		{"taint without effect", NodeGroupInput{Name: "nodegroup1", NodeCount: 1, NodeTaints: []map[string]string{{"key": "k"}}},
			"node_taints for nodegroup1 is invalid (node_taints[0].effect must be one of NoSchedule, PreferNoSchedule, NoExecute)."},
		{"taint without key", NodeGroupInput{Name: "nodegroup1", NodeCount: 1, NodeTaints: []map[string]string{{"effect": "NoSchedule"}}},
			"node_taints for nodegroup1 is invalid (node_taints[0].key is required)."},
		{"taint with unknown field", NodeGroupInput{Name: "nodegroup1", NodeCount: 1, NodeTaints: []map[string]string{{"key": "k", "vaule": "v", "effect": "NoSchedule"}}},
			"node_taints for nodegroup1 is invalid (node_taints[0] contains unrecognised field(s) vaule; allowed fields are key, value, effect)."},
		{"second taint", NodeGroupInput{Name: "ng", NodeCount: 1, NodeTaints: []map[string]string{{"key": "k", "effect": "NoExecute"}, {"key": "k", "effect": "noschedule"}}},
			"node_taints for ng is invalid (node_taints[1].effect must be one of NoSchedule, PreferNoSchedule, NoExecute)."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { assertMagnumError(t, ValidateNodeGroupInput(tt.ng), http.StatusConflict, tt.msg) })
	}
}

// TestValidationMessagesInCorpus checks that the messages asserted above that
// Magnum's own tests produced are in the exchange corpus verbatim.
func TestValidationMessagesInCorpus(t *testing.T) {
	corpus := corpusErrors(t)
	errs := []error{
		ValidateClusterName("123456"),
		ValidateFederationName("-test_federation"),
		ValidateClusterName(strings.Repeat("x", 243)),
		ValidateTemplateName(strings.Repeat("i", 256)),
		ValidateUUID(""),
		ValidateNodeCount(-1, 14),
		ValidateNodeCount(0, 9),
		ValidateMasterCount(0),
		ValidateMasterCount(2),
		ValidateMasterLB(3, false),
		ValidateDockerVolumeSize(-1),
		ValidateDevicemapperVolume("devicemapper", intPtr(1), nil),
		ValidateRange("apiserver_port", -12, RangeAPIServerPort),
		ValidateResizeBounds("test-worker", 3, 4, nil),
		ValidateDNSList("1.1..1"),
		ValidateCOE("storm"),
		ValidateNodeGroupInput(NodeGroupInput{Name: "nodegroup1", NodeCount: 2, MinNodeCount: 3}),
		ValidateNodeGroupInput(NodeGroupInput{Name: "nodegroup1", NodeCount: 7, MaxNodeCount: int64Ptr(5)}),
		ValidateNodeGroupInput(NodeGroupInput{Name: "nodegroup1", NodeCount: 1, NodeLabels: map[string]string{"kubernetes.io/role": "x"}}),
		ValidateNodeGroupInput(NodeGroupInput{Name: "nodegroup1", NodeCount: 1, NodeTaints: []map[string]string{{"key": "k", "vaule": "v", "effect": "NoSchedule"}}}),
		ValidateNodeGroupInput(NodeGroupInput{Name: "nodegroup1", NodeCount: 1, NodeTaints: []map[string]string{{"effect": "NoSchedule"}}}),
		ValidateNodeGroupInput(NodeGroupInput{Name: "nodegroup1", NodeCount: 1, NodeTaints: []map[string]string{{"key": "k"}}}),
	}
	for _, err := range errs {
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("expected an *Error, got %v", err)
		}
		if !corpus[e.Message][e.Status] {
			t.Errorf("%d %q not in the exchange corpus", e.Status, e.Message)
		}
	}
}

func TestStateGuards(t *testing.T) {
	if len(ClusterStatuses) != 18 {
		t.Fatalf("%d cluster statuses, want 18", len(ClusterStatuses))
	}
	tests := []struct {
		s                                                             Status
		update, resize, upgrade, rotateCA, rotateCred, ngCreateUpdate bool
	}{
		{StatusCreateComplete, true, true, true, true, true, true},
		{StatusAdoptComplete, true, true, true, true, true, true},
		{StatusUpdateInProgress, false, true, false, false, true, true},
		{StatusUpdateFailed, false, true, false, false, true, true},
		{StatusCreateInProgress, false, false, false, false, false, false},
		{StatusCreateFailed, false, false, false, false, false, false},
		{StatusDeleteComplete, false, false, false, false, false, false},
		{StatusRollbackFailed, false, false, false, false, false, false},
		{"", false, false, false, false, false, true},
	}
	for _, tt := range tests {
		got := [6]bool{CanUpdate(tt.s), CanResize(tt.s), CanUpgrade(tt.s), CanRotateCA(tt.s), CanRotateCredential(tt.s), CanCreateNodeGroup(tt.s) && CanUpdateNodeGroup(tt.s)}
		want := [6]bool{tt.update, tt.resize, tt.upgrade, tt.rotateCA, tt.rotateCred, tt.ngCreateUpdate}
		if got != want {
			t.Errorf("%q: update/resize/upgrade/rotateCA/rotateCred/nodegroup = %v, want %v", tt.s, got, want)
		}
	}
	if !IsFailed(StatusResumeFailed) || IsFailed(StatusCreateComplete) || !IsInProgress(StatusRollbackInProgress) {
		t.Error("IsFailed/IsInProgress")
	}
	if !ValidClusterStatus(StatusCheckComplete) || ValidFederationStatus(StatusCheckComplete) || !ValidHealthStatus(HealthUnknown) {
		t.Error("status enums")
	}
}
