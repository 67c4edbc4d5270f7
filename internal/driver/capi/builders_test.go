package capi

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// TestGoldenObjects renders every object kind of a representative cluster
// and compares it with testdata/<kind>.yaml (run with -update to rewrite).
func TestGoldenObjects(t *testing.T) {
	t.Run("class objects", func(t *testing.T) {
		files := map[string]string{
			"OpenStackClusterTemplate":    "openstackclustertemplate.yaml",
			"OpenStackMachineTemplate":    "openstackmachinetemplate.yaml",
			"KubeadmControlPlaneTemplate": "kubeadmcontrolplanetemplate.yaml",
			"KubeadmConfigTemplate":       "kubeadmconfigtemplate.yaml",
			"ClusterClass":                "clusterclass.yaml",
		}
		objs := ClassObjects(DefaultNamespace, DefaultClassVersion)
		if len(objs) != len(files) {
			t.Fatalf("ClassObjects returned %d objects, want %d", len(objs), len(files))
		}
		for _, obj := range objs {
			u, err := toUnstructured(obj)
			if err != nil {
				t.Fatal(err)
			}
			name, ok := files[u.GetKind()]
			if !ok {
				t.Fatalf("unexpected kind %s", u.GetKind())
			}
			if u.GetName() != "magnum-v"+DefaultClassVersion {
				t.Errorf("%s is named %q", u.GetKind(), u.GetName())
			}
			golden(t, name, u.Object)
		}
	})
	t.Run("cluster", func(t *testing.T) {
		c, err := BuildCluster(testInput())
		if err != nil {
			t.Fatal(err)
		}
		u, err := toUnstructured(c)
		if err != nil {
			t.Fatal(err)
		}
		golden(t, "cluster.yaml", u.Object)
	})
	t.Run("ca secrets", func(t *testing.T) {
		secrets, err := CASecrets(DefaultNamespace, testStackID, testCAs(t))
		if err != nil {
			t.Fatal(err)
		}
		var out []any
		for _, s := range secrets {
			// The key material is generated: check its shape, mask it.
			if !strings.HasPrefix(string(s.Data["tls.crt"]), "-----BEGIN CERTIFICATE-----") {
				t.Errorf("%s: tls.crt is not a PEM certificate", s.Name)
			}
			if !strings.HasPrefix(string(s.Data["tls.key"]), "-----BEGIN PRIVATE KEY-----") {
				t.Errorf("%s: tls.key is not a decrypted PKCS#8 key", s.Name)
			}
			s.Data = map[string][]byte{"tls.crt": []byte("<masked>"), "tls.key": []byte("<masked>")}
			u, err := toUnstructured(s)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, u.Object)
		}
		golden(t, "secrets-ca.yaml", out)
	})
	t.Run("cloud-config secret", func(t *testing.T) {
		s, err := CloudConfigSecret(DefaultNamespace, testStackID, testUUID,
			CloudConfig{AuthURL: "https://keystone.example.com/v3", RegionName: "RegionOne", CACert: "-----CA-----\n"},
			AppCredential{ID: "ac-1", Secret: "secret-1", UserID: "u1"})
		if err != nil {
			t.Fatal(err)
		}
		// Show the rendered clouds.yaml as text rather than base64.
		view := map[string]any{"metadata": s.ObjectMeta, "type": s.Type, "stringData": map[string]string{
			"clouds.yaml": string(s.Data["clouds.yaml"]), "cacert": string(s.Data["cacert"]),
		}}
		golden(t, "secret-cloud-config.yaml", view)
		back, ok := appCredentialFromSecret(s)
		if !ok || back.ID != "ac-1" || back.Secret != "secret-1" || back.UserID != "u1" {
			t.Errorf("appCredentialFromSecret = %v, %t", back, ok)
		}
	})
}

func TestClusterClassDeclaresEveryVariable(t *testing.T) {
	cc := clusterClass(DefaultNamespace, "x")
	var declared []string
	for _, v := range cc.Spec.Variables {
		declared = append(declared, v.Name)
		if v.Required == nil || !*v.Required {
			t.Errorf("variable %s is not required", v.Name)
		}
	}
	if diff := cmp.Diff(VariableNames, declared); diff != "" {
		t.Errorf("declared variables (-want +got):\n%s", diff)
	}
	vars, err := ClusterVariables(testInput())
	if err != nil {
		t.Fatal(err)
	}
	var set []string
	for _, v := range vars {
		set = append(set, v.Name)
	}
	if diff := cmp.Diff(VariableNames, set); diff != "" {
		t.Errorf("a Cluster must set every required variable (-want +got):\n%s", diff)
	}
	if len(VariableNames) != 39 {
		t.Errorf("%d variables, want the 39 of magnum-cluster-api", len(VariableNames))
	}
	// Every variable a patch reads must be declared.
	raw, _ := json.Marshal(cc.Spec.Patches)
	for _, p := range cc.Spec.Patches {
		for _, d := range p.Definitions {
			for _, jp := range d.JSONPatches {
				if jp.ValueFrom != nil && jp.ValueFrom.Variable != "" && !contains(VariableNames, jp.ValueFrom.Variable) {
					t.Errorf("patch %s reads undeclared variable %s", p.Name, jp.ValueFrom.Variable)
				}
			}
		}
	}
	if strings.Contains(string(raw), "/extraArgs/") && !strings.Contains(string(raw), "/extraArgs/-") {
		t.Error("v1beta2 extraArgs are lists: patches must append with /-")
	}
}

func TestPatchOrder(t *testing.T) {
	patches := classPatches()
	if patches[0].Name != "addEmptyLists" {
		t.Fatalf("first patch is %s, want addEmptyLists (it must precede every append)", patches[0].Name)
	}
	seen := map[string]bool{}
	for _, p := range patches {
		if seen[p.Name] {
			t.Errorf("duplicate patch %s", p.Name)
		}
		seen[p.Name] = true
		for _, d := range p.Definitions {
			if d.Selector.APIVersion == "" || d.Selector.Kind == "" {
				t.Errorf("patch %s has an incomplete selector", p.Name)
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// variable returns the JSON of a named variable.
func variable(t *testing.T, vars []clusterv1.ClusterVariable, name string) string {
	t.Helper()
	for _, v := range vars {
		if v.Name == name {
			return string(v.Value.Raw)
		}
	}
	t.Fatalf("variable %s not set", name)
	return ""
}

// TestVariableMapping is the label and field mapping of driver-capi.md § 7.
func TestVariableMapping(t *testing.T) {
	tests := []struct {
		name   string
		edit   func(in *Input)
		vars   map[string]string // variable → JSON
		errSub string
	}{
		{
			name: "defaults without labels",
			edit: func(in *Input) {
				in.State.Cluster.Labels = map[string]string{"kube_tag": "v1.31.1"}
				in.State.Cluster.DockerVolumeSize = nil
				in.State.Template.DockerVolumeSize = nil
				in.State.Template.HTTPProxy, in.State.Template.NoProxy = nil, nil
				in.State.Template.DNSNameserver = nil
			},
			vars: map[string]string{
				"admissionControlList":              `"NodeRestriction"`,
				"apiServerFloatingIP":               `""`,
				"apiServerSANs":                     `""`,
				"apiServerTLSCipherSuites":          `"` + defaultAPIServerCipherSuites + `"`,
				"kubeletTLSCipherSuites":            `"` + defaultKubeletCipherSuites + `"`,
				"aptProxyConfig":                    `""`,
				"systemdProxyConfig":                `""`,
				"auditLog":                          `{"enabled":false,"maxAge":"30","maxBackup":"10","maxSize":"100"}`,
				"availabilityZone":                  `""`,
				"bootVolume":                        `{"size":0,"type":"standard"}`,
				"controlPlaneAvailabilityZones":     `[""]`,
				"disableAPIServerFloatingIP":        `false`,
				"disableAPIServerFloatingIPManaged": `false`,
				"dnsNameservers":                    `[]`,
				"dockerVolumeSize":                  `0`,
				"enableDockerVolume":                `false`,
				"enableEtcdVolume":                  `false`,
				"enableKeystoneAuth":                `true`,
				"etcdVolumeSize":                    `0`,
				"imageRepository":                   `""`,
				"isServerGroupDiffFailureDomain":    `false`,
				"nodeCidr":                          `"10.0.0.0/24"`,
				"openidConnect":                     `{"clientId":"","groupsClaim":"","groupsPrefix":"","issuerUrl":"","usernameClaim":"sub","usernamePrefix":"-"}`,
				"operatingSystem":                   `"ubuntu"`,
			},
		},
		{
			name: "labels of the representative cluster",
			vars: map[string]string{
				"admissionControlList":              `"NodeRestriction,PodSecurity"`,
				"apiServerLoadBalancer":             `{"enabled":true}`,
				"apiServerSANs":                     `"- k8s.example.com\n- 10.0.0.10\n"`,
				"auditLog":                          `{"enabled":true,"maxAge":"30","maxBackup":"10","maxSize":"100"}`,
				"availabilityZone":                  `"nova"`,
				"bootVolume":                        `{"size":40,"type":"ssd"}`,
				"bootVolumeAvailabilityZone":        `"nova"`,
				"clusterIdentityRefName":            `"kube-abcde-cloud-config"`,
				"controlPlaneFlavor":                `"m1.large"`,
				"disableAPIServerFloatingIP":        `true`,
				"disableAPIServerFloatingIPManaged": `true`,
				"dnsNameservers":                    `["8.8.8.8","1.1.1.1"]`,
				"dockerVolumeSize":                  `20`,
				"enableDockerVolume":                `true`,
				"enableEtcdVolume":                  `true`,
				"etcdVolumeSize":                    `10`,
				"etcdVolumeType":                    `"standard"`,
				"externalNetworkId":                 `"33333333-3333-4333-8333-333333333333"`,
				"fixedNetworkId":                    `""`,
				"flavor":                            `"m1.medium"`,
				"imageRepository":                   `"registry.example.com/k8s"`,
				"imageUUID":                         `"11111111-1111-4111-8111-111111111111"`,
				"serverGroupId":                     `"44444444-4444-4444-8444-444444444444"`,
				"sshKeyName":                        `"mykey"`,
			},
		},
		{
			name: "ubuntu-focal is ubuntu, flatcar is flatcar",
			edit: func(in *Input) { in.State.Template.ClusterDistro = ptr("ubuntu-focal") },
			vars: map[string]string{"operatingSystem": `"ubuntu"`},
		},
		{
			name: "the live OpenStackCluster's immutable fields win",
			edit: func(in *Input) {
				in.State.Cluster.Labels["octavia_provider"] = "ovn"
				in.Live = &LiveInfra{LBProvider: "amphora", HasDisableFloatingIP: true, DisableFloatingIP: false}
			},
			vars: map[string]string{
				"apiServerLoadBalancer":             `{"enabled":true,"provider":"amphora"}`,
				"disableAPIServerFloatingIP":        `false`,
				"disableAPIServerFloatingIPManaged": `true`,
			},
		},
		{
			name: "control plane availability zones",
			edit: func(in *Input) { in.State.Cluster.Labels["control_plane_availability_zones"] = "az1, az2" },
			vars: map[string]string{"controlPlaneAvailabilityZones": `["az1","az2"]`},
		},
		{
			name:   "a malformed boolean label fails",
			edit:   func(in *Input) { in.State.Cluster.Labels["audit_log_enabled"] = "maybe" },
			errSub: "audit_log_enabled",
		},
		{
			name:   "a malformed integer label fails",
			edit:   func(in *Input) { in.State.Cluster.Labels["etcd_volume_size"] = "ten" },
			errSub: "etcd_volume_size",
		},
		{
			name:   "an unsupported distro fails",
			edit:   func(in *Input) { in.State.Template.ClusterDistro = ptr("fedora-coreos") },
			errSub: "fedora-coreos",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := testInput()
			if tt.edit != nil {
				tt.edit(&in)
			}
			vars, err := ClusterVariables(in)
			if tt.errSub != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errSub) {
					t.Fatalf("err = %v, want one mentioning %q", err, tt.errSub)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for name, want := range tt.vars {
				if got := variable(t, vars, name); got != want {
					t.Errorf("%s = %s, want %s", name, got, want)
				}
			}
		})
	}
}

func TestClusterMapping(t *testing.T) {
	t.Run("topology of the representative cluster", func(t *testing.T) {
		c, err := BuildCluster(testInput())
		if err != nil {
			t.Fatal(err)
		}
		if c.Labels[LabelCNI] != "calico-v3.31.3" || c.Labels[LabelClusterUUID] != testUUID {
			t.Errorf("labels = %v", c.Labels)
		}
		topo := c.Spec.Topology
		if topo.ClassRef.Name != "magnum-v"+DefaultClassVersion || topo.Version != "v1.31.1" || *topo.ControlPlane.Replicas != 3 {
			t.Errorf("topology class %q version %q replicas %d", topo.ClassRef.Name, topo.Version, *topo.ControlPlane.Replicas)
		}
		var names []string
		for _, md := range topo.Workers.MachineDeployments {
			names = append(names, md.Name)
		}
		if diff := cmp.Diff([]string{"default-worker", "gpu"}, names); diff != "" {
			t.Errorf("machine deployments (-want +got):\n%s", diff)
		}
		gpu := topo.Workers.MachineDeployments[1]
		if gpu.FailureDomain != "az-gpu" || *gpu.Replicas != 1 || gpu.Metadata.Labels["team"] != "" ||
			gpu.Metadata.Labels["node-role.kubernetes.io/gpu"] != "" || gpu.Metadata.Labels[LabelNodeGroup] != "gpu" {
			t.Errorf("gpu entry = %+v", gpu)
		}
		if _, ok := gpu.Metadata.Labels["team"]; ok {
			t.Error("a node label outside the propagated prefixes was mapped")
		}
		if len(gpu.Taints) != 1 || gpu.Taints[0].Key != "gpu" || gpu.Taints[0].Effect != corev1.TaintEffectNoSchedule {
			t.Errorf("taints = %+v", gpu.Taints)
		}
		ov := gpu.Variables.Overrides
		for name, want := range map[string]string{
			"flavor": `"g1.xlarge"`, "imageUUID": `"22222222-2222-4222-8222-222222222222"`, "hardwareDiskBus": `"scsi"`,
			"serverGroupId": `"66666666-6666-4666-8666-666666666666"`, "isServerGroupDiffFailureDomain": `true`, "imageRepository": `""`,
			"bootVolume": `{"size":0,"type":"standard"}`,
		} {
			if got := variable(t, ov, name); got != want {
				t.Errorf("gpu override %s = %s, want %s", name, got, want)
			}
		}
	})
	t.Run("nodegroups being deleted leave the topology", func(t *testing.T) {
		in := testInput()
		in.State.NodeGroups[2].Status = ptr(magnumStatus("DELETE_IN_PROGRESS"))
		c, err := BuildCluster(in)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(c.Spec.Topology.Workers.MachineDeployments); n != 1 {
			t.Errorf("%d machine deployments, want 1", n)
		}
	})
	t.Run("kube_tag is mandatory", func(t *testing.T) {
		in := testInput()
		delete(in.State.Cluster.Labels, "kube_tag")
		if _, err := BuildCluster(in); err == nil {
			t.Error("BuildCluster without kube_tag succeeded")
		}
	})
	t.Run("cilium pod CIDR and no cni label", func(t *testing.T) {
		in := testInput()
		in.State.Template.NetworkDriver = ptr("cilium")
		in.State.Cluster.Labels["cilium_ipv4pool"] = "10.200.0.0/16"
		c, err := BuildCluster(in)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := c.Labels[LabelCNI]; ok || c.Spec.ClusterNetwork.Pods.CIDRBlocks[0] != "10.200.0.0/16" {
			t.Errorf("labels %v pods %v", c.Labels, c.Spec.ClusterNetwork.Pods)
		}
	})
}

func TestAutoscalerMapping(t *testing.T) {
	tests := []struct {
		name         string
		clusterLbl   map[string]string
		min, max     *int
		ngLabels     map[string]string
		status       string
		count        int
		wantMin      string
		wantMax      string
		wantReplicas *int32
	}{
		{name: "defaults: min 0, max min+1, running group has no replicas", status: "CREATE_COMPLETE", count: 2, wantMin: "0", wantMax: "1"},
		{name: "min from the cluster label for the default worker", clusterLbl: map[string]string{"min_node_count": "2"}, status: "UPDATE_COMPLETE", count: 3, wantMin: "2", wantMax: "3"},
		{name: "max from the nodegroup label", ngLabels: map[string]string{"max_node_count": "7"}, status: "CREATE_COMPLETE", count: 1, wantMin: "0", wantMax: "7"},
		{name: "columns win", min: ptr(1), max: ptr(5), status: "CREATE_COMPLETE", count: 1, wantMin: "1", wantMax: "5"},
		{name: "a new group starts at node_count", min: ptr(1), max: ptr(5), status: "CREATE_IN_PROGRESS", count: 3, wantMin: "1", wantMax: "5", wantReplicas: ptr(int32(3))},
		{name: "a new group starts inside [min, max]", min: ptr(1), max: ptr(2), status: "CREATE_IN_PROGRESS", count: 4, wantMin: "1", wantMax: "2", wantReplicas: ptr(int32(2))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := testInput()
			in.State.Cluster.Labels["auto_scaling_enabled"] = "true"
			for k, v := range tt.clusterLbl {
				in.State.Cluster.Labels[k] = v
			}
			ng := in.State.NodeGroups[1]
			ng.MinNodeCount, ng.MaxNodeCount, ng.Labels = tt.min, tt.max, tt.ngLabels
			ng.Status, ng.NodeCount = ptr(magnumStatus(tt.status)), ptr(tt.count)
			md, err := MachineDeploymentTopology(in, ng, true)
			if err != nil {
				t.Fatal(err)
			}
			got := md.Metadata.Annotations
			if got[annotationAutoscalerMin] != tt.wantMin || got[annotationAutoscalerMax] != tt.wantMax {
				t.Errorf("annotations = %v, want min %s max %s", got, tt.wantMin, tt.wantMax)
			}
			if diff := cmp.Diff(tt.wantReplicas, md.Replicas); diff != "" {
				t.Errorf("replicas (-want +got):\n%s", diff)
			}
		})
	}
}

func TestVersionRules(t *testing.T) {
	for _, tt := range []struct{ current, target, errSub string }{
		{"v1.30.4", "v1.31.1", ""},
		{"v1.31.1", "v1.31.1", ""},
		{"1.31.0", "v1.31.2", ""},
		{"v1.30.4", "v1.32.0", "one minor version at a time"},
		{"v1.31.1", "v1.30.9", "lower version"},
		{"v1.31.1", "", "no kube_tag"},
		{"v1.31.1", "latest", "invalid tag"},
	} {
		err := ValidateUpgrade(tt.current, tt.target)
		if (err == nil) != (tt.errSub == "") || err != nil && !strings.Contains(err.Error(), tt.errSub) {
			t.Errorf("ValidateUpgrade(%q, %q) = %v, want %q", tt.current, tt.target, err, tt.errSub)
		}
	}
	for _, tt := range []struct {
		name string
		ok   bool
	}{
		{"default-worker", true}, {"gpu-a100", true}, {"GPU_nodes", false}, {"-x", false}, {strings.Repeat("a", 64), false},
	} {
		if err := ValidateNodeGroupName(tt.name); (err == nil) != tt.ok {
			t.Errorf("ValidateNodeGroupName(%q) = %v", tt.name, err)
		}
	}
}
