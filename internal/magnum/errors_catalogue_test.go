package magnum

import (
	"encoding/json"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// specDir returns the spec directory: $OKM_SPEC_DIR (relative paths are
// taken from the repository root) or ../shared/spec beside the repository.
func catalogueSpecDir() string {
	root := filepath.Join("..", "..")
	if d := os.Getenv("OKM_SPEC_DIR"); d != "" {
		if filepath.IsAbs(d) {
			return d
		}
		return filepath.Join(root, d)
	}
	return filepath.Join(root, "..", "shared", "spec")
}

// corpusErrors returns every error detail of the exchange corpus with the
// statuses it was answered with.
func corpusErrors(t *testing.T) map[string]map[int]bool {
	t.Helper()
	path := filepath.Join(catalogueSpecDir(), "exchanges", "exchanges.json")
	data, err := os.ReadFile(path)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("exchange corpus: %v", err)
		}
		t.Skipf("exchange corpus not available (%v); set OKM_SPEC_DIR", err)
	}
	var records []struct {
		Response struct {
			Status int             `json:"status"`
			Body   json.RawMessage `json:"body"`
		} `json:"response"`
	}
	if err := json.Unmarshal(data, &records); err != nil {
		t.Fatalf("exchange corpus: %v", err)
	}
	out := map[string]map[int]bool{}
	for _, r := range records {
		var body struct {
			Errors []struct {
				Detail string `json:"detail"`
			} `json:"errors"`
			Faultstring string `json:"faultstring"`
		}
		if json.Unmarshal(r.Response.Body, &body) != nil {
			continue
		}
		add := func(d string) {
			if d == "" {
				return
			}
			if out[d] == nil {
				out[d] = map[int]bool{}
			}
			out[d][r.Response.Status] = true
		}
		for _, e := range body.Errors {
			add(e.Detail)
		}
		add(body.Faultstring)
	}
	return out
}

func intPtr(n int) *int { return &n }

// catalogueExamples pairs constructors with details seen in the corpus.
func catalogueExamples() []struct {
	name string
	err  *Error
} {
	long := func(c string, n int) string { return strings.Repeat(c, n) }
	return []struct {
		name string
		err  *Error
	}{
		{"policy certificate:create", PolicyNotAuthorized("certificate:create")},
		{"policy certificate:rotate_ca", PolicyNotAuthorized("certificate:rotate_ca")},
		{"policy cluster:get_all", PolicyNotAuthorized("cluster:get_all")},
		{"policy cluster:update", PolicyNotAuthorized("cluster:update")},
		{"policy cluster:delete", PolicyNotAuthorized("cluster:delete")},
		{"policy cluster:get", PolicyNotAuthorized("cluster:get")},
		{"policy clustertemplate:create", PolicyNotAuthorized("clustertemplate:create")},
		{"policy clustertemplate:detail", PolicyNotAuthorized("clustertemplate:detail")},
		{"policy credential:rotate", PolicyNotAuthorized("credential:rotate")},
		{"policy magnum-service:get_all", PolicyNotAuthorized("magnum-service:get_all")},
		{"policy nodegroup:get", PolicyNotAuthorized("nodegroup:get")},
		{"ambiguous cluster", MultipleClusters()},
		{"ambiguous template", MultipleClusterTemplates()},
		{"ambiguous federation", MultipleFederations()},
		{"cluster not found", ClusterNotFound("not_found")},
		{"cluster not found as 400", ClusterNotFound("not_found").WithStatus(http.StatusBadRequest)},
		{"cluster not found by uuid", ClusterNotFound("5d12f6fd-a196-4bf0-ae4c-1f639a523a52")},
		{"unformatted HTTPNotFound", HTTPNotFoundUnformatted()},
		{"zero node count", ZeroNodeCountNotSupported()},
		{"mandatory template id", MandatoryFieldMissing("cluster_template_id")},
		{"even master count", MasterNGSizeInvalid(2)},
		{"not authorized", NotAuthorizedDefault()},
		{"docker volume size minimum", BelowMinimum("docker_volume_size", int64(-1), 1)},
		{"devicemapper size", DevicemapperVolumeSize(intPtr(1))},
		{"zero root volume", FlavorZeroRootVolumeNotSupported()},
		{"master count minimum", BelowMinimum("master_count", int64(0), 1)},
		{"master lb", MasterCountWithoutLB()},
		{"node count minimum", BelowMinimum("node_count", int64(-1), 0)},
		{"create timeout minimum", BelowMinimum("create_timeout", int64(-1), 0)},
		{"no driver loaded", ClusterTypeNotSupported("vm", "ubuntu", "kubernetes", nil)},
		{"resize out of bounds", NGResizeOutBounds("test-worker", 4, nil)},
		{"template not found", ClusterTemplateNotFound("not_there")},
		{"nodegroup not found", NodeGroupNotFound("not_there")},
		{"template referenced", ClusterTemplateReferenced("e74c40e0-d825-11e2-a28f-0800200c9a66")},
		{"patch add new attribute", PatchAddNewAttribute("/foo")},
		{"patch mandatory image_id", PatchMandatoryAttribute("/image_id")},
		{"patch mandatory coe", PatchMandatoryAttribute("/coe")},
		{"patch internal uuid", PatchInternalAttribute("/uuid")},
		{"patch internal node_count", PatchInternalAttribute("/node_count")},
		{"patch error", PatchError("[{'path': '/non-existent', 'op': 'remove'}]", "can't remove a non-existent object 'non-existent'")},
		{"publish denied", ClusterTemplatePublishDenied()},
		{"port minimum", BelowMinimum("apiserver_port", int64(1023), 1024)},
		{"port maximum", AboveMaximum("apiserver_port", int64(65536), 65535)},
		{"coe enum", InvalidEnum("coe", "k8s", []string{"kubernetes"})},
		{"dns", InvalidDNS("openstack.org")},
		{"empty uuid", InvalidUUID("")},
		{"empty name", TooShort("name", "", 1)},
		{"empty image", TooShort("image_id", "", 1)},
		{"long template name", TooLong("name", long("i", 256), 255)},
		{"long federation name", TooLong("name", long("x", 243), 242)},
		{"network driver", NetworkDriverNotSupported("bad_driver", []string{"flannel", "calico", "cilium"})},
		{"federation not found", FederationNotFound("foo")},
		{"federation properties", FederationNoProperties()},
		{"federation host cluster", FederationNoHostCluster()},
		{"name pattern", PatternMismatch("name", "123456", NamePattern)},
		{"default nodegroup delete", DeletingDefaultNGNotSupported()},
		{"nodegroup min>max", NodeGroupInvalidInput("max_node_count", "nodegroup1", "min_node_count (2) should be less or equal to max_node_count (1)")},
		{"master nodegroup create", CreateMasterNodeGroup()},
		{"api address", ClusterAPIAddressUnavailable()},
		{"nodegroup exists", NodeGroupAlreadyExists("test-master", "cluster1")},
		{"quota resource enum", InvalidEnum("resource", "invalid-res", []string{"Cluster"})},
		{"quota project", QuotaProjectMissing()},
		{"project not found", ProjectNotFound("fake_project")},
		{"quota not found", QuotaNotFound("not-found", "Cluster")},
		{"stats type", InvalidStatsType()},
		{"wsme patch op enum", InvalidEnum("op", "invalid", []string{"add", "remove", "replace"})},
		{"wsme patch path pattern", PatternMismatch("path", "invalid-path", `^(/[\w-]+)+$`)},
		{"wsme patch path missing", MandatoryFieldMissing("path")},
		{"wsme patch value missing", PatchValueMissing()},
		{"ambiguous image (mocked literal)", Conflict("Multiple images")},
	}
}

func TestCatalogueMatchesExchanges(t *testing.T) {
	corpus := corpusErrors(t)
	examples := catalogueExamples()
	distinct := map[string]bool{}
	for _, ex := range examples {
		t.Run(ex.name, func(t *testing.T) {
			statuses, ok := corpus[ex.err.Message]
			if !ok {
				t.Fatalf("%q (status %d) is not an error detail of the exchange corpus", ex.err.Message, ex.err.Status)
			}
			if !statuses[ex.err.Status] {
				t.Errorf("%q: status %d, corpus has %v", ex.err.Message, ex.err.Status, statuses)
			}
		})
		distinct[ex.err.Message] = true
	}
	if len(distinct) < 40 {
		t.Errorf("only %d distinct corpus messages checked, want at least 40", len(distinct))
	}
}

func TestCatalogueMessages(t *testing.T) {
	tests := []struct {
		err    *Error
		status int
		kind   string
		msg    string
	}{
		{ResourceLimitExceeded(20), 403, "ResourceLimitExceeded", "Resource limit exceeded: You have reached the maximum clusters per project, 20. You may delete a cluster to make room for a new one."},
		{QuotaNotFoundByID("7"), 404, "QuotaNotFound", "Quota could not be found: quota id 7 ."},
		{QuotaAlreadyExists("p1", "Cluster"), 409, "QuotaAlreadyExists", "Quota for project p1 already exists for resource Cluster."},
		{NodeGroupUpgradeTemplateMismatch("ng1", "tmpl"), 409, "InvalidClusterTemplateForUpgrade", "Cluster Template is not valid for upgrade: Nodegroup ng1 can be upgraded only to match cluster's template (tmpl)."},
		{UpgradeStatusNotSupported(StatusCreateInProgress), 400, "NotSupported", `Upgrading a cluster when status is "CREATE_IN_PROGRESS" is not supported.`},
		{CredentialRotationStatusNotSupported(StatusDeleteFailed), 400, "NotSupported", `magnum.conductor.handlers.credential_conductor when cluster status is "DELETE_FAILED" is not supported.`},
		{RotateCANotSupportedByDriver(), 400, "NotSupported", "'rotate_ca_certificate' is not supported by this driver."},
		{CredentialRotationNotSupportedByDriver(), 400, "NotSupported", "Credential rotation is not supported by driver."},
		{NetworkDriverNotAllowed("cilium", []string{"flannel", "calico"}), 400, "InvalidParameterValue", "Network driver type cilium is not allowed, expecting a flannel/calico/unspecified network driver. "},
		{ClusterTypeNotSupported("vm", "ubuntu", "kubernetes", []string{"(vm, ubuntu, kubernetes)", "(bm, fedora, kubernetes)"}), 400, "ClusterTypeNotSupported",
			"Cluster type (vm, ubuntu, kubernetes) is not supported by any loaded cluster driver. Loaded drivers support: (bm, fedora, kubernetes), (vm, ubuntu, kubernetes)."},
		{UnknownArgument("foo"), 400, "UnknownArgument", `Unknown argument: "foo"`},
		{UnknownAttribute("cluster_template", []string{"foo", "bar"}), 400, "UnknownAttribute", "Unknown attributes for argument cluster_template: foo, bar"},
		{InvalidMarker("abc"), 400, "InvalidInput", "Invalid input for field/attribute marker. Value: 'abc'. unable to convert to uuid. Error: Expected a uuid but received abc."},
		{InvalidQueryInt("limit", "abc"), 400, "InvalidInput", "Invalid input for field/attribute limit. Value: 'abc'. unable to convert to int. Error: invalid literal for int() with base 10: 'abc'"},
		{InvalidIntLiteral("cluster", map[string]any{"node_count": "two"}, "two"), 400, "InvalidInput", "Invalid input for field/attribute cluster. Value: '{'node_count': 'two'}'. invalid literal for int() with base 10: 'two'"},
		{ReadOnlyField("project_id", "x"), 400, "InvalidInput", "Invalid input for field/attribute project_id. Value: 'x'. Cannot set read only field."},
		{NotAValidList("patch", map[string]any{"op": "add"}), 400, "InvalidInput", "Invalid input for field/attribute patch. Value: '{'op': 'add'}'. Value not a valid list: {'op': 'add'}"},
		{WrongType("value", 1.5, "(<class 'str'>, <class 'int'>)"), 400, "InvalidInput", "Invalid input for field/attribute value. Value: '1.5'. Wrong type. Expected '(<class 'str'>, <class 'int'>)', got '<class 'float'>'"},
		{UnknownMimetype("text/plain"), 415, "ClientSideError", "Unknown mimetype: text/plain"},
		{AuthorizationFailure("glance", "reason: boom"), 403, "AuthorizationFailure", "glance connection failed. reason: boom"},
		{MultipleOpenStackResources("external networks", "public", "external network"), 409, "Conflict", "Multiple external networks exist with same name 'public'. Please use the external network ID instead."},
		{CannotChangeProperties("cluster", []string{"labels", "create_timeout"}), 400, "InvalidParameterValue", "cannot change cluster property(ies) labels, create_timeout."},
		{FederationMemberNotFound("u1", "fed"), 404, "HTTPNotFound", "Cluster u1 is not a member of the federation fed."},
		{MemberAlreadyExists("u1", "fed"), 409, "MemberAlreadyExists", "A cluster with UUID u1 is already a member of the federation fed."},
		{KeyPairNotFound("kp"), 404, "KeyPairNotFound", "Unable to find keypair kp."},
		{ImageNotFound("img"), 400, "ImageNotFound", "Image img could not be found."},
		{FlavorNotFound("m9.huge"), 400, "FlavorNotFound", "Unable to find flavor m9.huge."},
		{ExternalNetworkNotFound("n"), 400, "ExternalNetworkNotFound", "Unable to find external network n."},
		{InvalidClusterDiscoveryURL("http://x"), 400, "InvalidClusterDiscoveryURL", "Invalid discovery URL 'http://x'."},
		{X509KeyPairNotFound("k"), 404, "X509KeyPairNotFound", "A key pair k could not be found."},
		{Conflict(""), 409, "Conflict", "Conflict."},
	}
	for _, tt := range tests {
		if tt.err.Status != tt.status || tt.err.Kind != tt.kind || tt.err.Message != tt.msg {
			t.Errorf("got %d %s %q\nwant %d %s %q", tt.err.Status, tt.err.Kind, tt.err.Message, tt.status, tt.kind, tt.msg)
		}
	}
}

func TestPyRepr(t *testing.T) {
	tests := []struct {
		v    any
		want string
	}{
		{nil, "None"}, {true, "True"}, {int64(-3), "-3"}, {1.5, "1.5"}, {100.0, "100.0"}, {1e16, "1e+16"},
		{1e15, "1000000000000000.0"}, {1e-5, "1e-05"}, {0.0001, "0.0001"}, {math.Copysign(0, -1), "-0.0"}, {123456789012345678.0, "1.2345678901234568e+17"},
		{"it's", `"it's"`}, {`a"b'c`, `'a"b\'c'`}, {"é\n\x01", `'é\n\x01'`}, {"\u200b", `'\u200b'`},
		{[]any{int64(1), "a", nil}, "[1, 'a', None]"}, {map[string]any{"b": int64(1), "a": []any{}}, "{'a': [], 'b': 1}"},
		{complex(1, 2), "(1+2j)"}, {complex(0, -2), "-2j"}, {complex(1.5, -0.5), "(1.5-0.5j)"},
	}
	for _, tt := range tests {
		if got := PyRepr(tt.v); got != tt.want {
			t.Errorf("PyRepr(%#v) = %s, want %s", tt.v, got, tt.want)
		}
	}
	if got := PyStr("x"); got != "x" {
		t.Errorf("PyStr = %q", got)
	}
}
