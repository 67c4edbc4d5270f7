package capi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"text/template"

	jsonpatch "github.com/evanphx/json-patch/v5"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// patchTarget is one template as the topology controller patches it.
type patchTarget struct {
	name         string
	kind         string
	controlPlane bool // matched by matchResources.controlPlane
	infraCluster bool // matched by matchResources.infrastructureCluster
	worker       bool // matched by machineDeploymentClass default-worker
	obj          map[string]any
}

// templateFuncs are the few sprig functions the class's templates use.
var templateFuncs = template.FuncMap{
	"quote": func(v any) string { b, _ := json.Marshal(fmt.Sprint(v)); return string(b) },
	"toJson": func(v any) string {
		b, _ := json.Marshal(v)
		return string(b)
	},
	"int": func(v any) int {
		switch n := v.(type) {
		case float64:
			return int(n)
		case int64:
			return int(n)
		}
		return 0
	},
	"semverCompare": func(constraint, version string) bool {
		return strings.HasPrefix(constraint, "<1.33") && version < "v1.33"
	},
}

func render(t *testing.T, tpl string, data map[string]any) string {
	t.Helper()
	tt, err := template.New("x").Funcs(templateFuncs).Option("missingkey=error").Parse(tpl)
	if err != nil {
		t.Fatalf("parse %q: %v", tpl, err)
	}
	var b bytes.Buffer
	if err := tt.Execute(&b, data); err != nil {
		t.Fatalf("execute %q: %v", tpl, err)
	}
	return b.String()
}

func variableData(t *testing.T, vars []clusterv1.ClusterVariable, overrides []clusterv1.ClusterVariable, version string) map[string]any {
	t.Helper()
	data := map[string]any{}
	for _, list := range [][]clusterv1.ClusterVariable{vars, overrides} {
		for _, v := range list {
			var x any
			if err := json.Unmarshal(v.Value.Raw, &x); err != nil {
				t.Fatal(err)
			}
			data[v.Name] = x
		}
	}
	data["builtin"] = map[string]any{
		"cluster":      map[string]any{"name": testStackID, "namespace": DefaultNamespace},
		"controlPlane": map[string]any{"version": version},
	}
	return data
}

func selects(sel clusterv1.PatchSelector, tg patchTarget) bool {
	if sel.Kind != tg.kind {
		return false
	}
	m := sel.MatchResources
	switch {
	case tg.controlPlane && m.ControlPlane != nil && *m.ControlPlane:
		return true
	case tg.infraCluster && m.InfrastructureCluster != nil && *m.InfrastructureCluster:
		return true
	case tg.worker && m.MachineDeploymentClass != nil:
		for _, n := range m.MachineDeploymentClass.Names {
			if n == WorkerClass {
				return true
			}
		}
	}
	return false
}

// applyClassPatches applies the class patches to one target the way the
// topology controller does: enabledIf, then each definition's JSON patches
// with values rendered from the variables.
func applyClassPatches(t *testing.T, tg patchTarget, data map[string]any) (map[string]any, []string) {
	t.Helper()
	doc, err := json.Marshal(tg.obj)
	if err != nil {
		t.Fatal(err)
	}
	var applied []string
	for _, p := range classPatches() {
		if p.EnabledIf != "" && strings.TrimSpace(render(t, p.EnabledIf, data)) != "true" {
			continue
		}
		for _, d := range p.Definitions {
			if !selects(d.Selector, tg) {
				continue
			}
			var ops []map[string]any
			for _, jp := range d.JSONPatches {
				op := map[string]any{"op": jp.Op, "path": jp.Path}
				switch {
				case jp.Value != nil:
					var v any
					if err := json.Unmarshal(jp.Value.Raw, &v); err != nil {
						t.Fatal(err)
					}
					op["value"] = v
				case jp.ValueFrom.Variable != "":
					op["value"] = data[jp.ValueFrom.Variable]
				default:
					var v any
					if err := yaml.Unmarshal([]byte(render(t, jp.ValueFrom.Template, data)), &v); err != nil {
						t.Fatalf("patch %s: template output is not YAML: %v", p.Name, err)
					}
					op["value"] = v
				}
				ops = append(ops, op)
			}
			raw, _ := json.Marshal(ops)
			patch, err := jsonpatch.DecodePatch(raw)
			if err != nil {
				t.Fatal(err)
			}
			if doc, err = patch.Apply(doc); err != nil {
				t.Fatalf("patch %s on %s: %v", p.Name, tg.name, err)
			}
			applied = append(applied, p.Name)
		}
	}
	var out map[string]any
	if err := json.Unmarshal(doc, &out); err != nil {
		t.Fatal(err)
	}
	return out, applied
}

// TestPatchedTemplatesMatchCRDs applies every enabled class patch to the
// templates, for several clusters, and checks the results against the
// CRDs: a wrong path or a value of the wrong shape fails here instead of
// in the topology controller.
func TestPatchedTemplatesMatchCRDs(t *testing.T) {
	schemas := loadSchemas(t, crdsDir(t))
	scenarios := map[string]func(*Input){
		"representative cluster": nil,
		"flatcar, fixed network, no volumes, no proxy": func(in *Input) {
			in.State.Template.ClusterDistro = ptr("flatcar")
			in.Resolved.FixedNetworkID, in.Resolved.FixedSubnetID = "77777777-7777-4777-8777-777777777777", "88888888-8888-4888-8888-888888888888"
			in.State.Cluster.DockerVolumeSize, in.State.Template.DockerVolumeSize = nil, nil
			delete(in.State.Cluster.Labels, "etcd_volume_size")
			delete(in.State.Cluster.Labels, "boot_volume_size")
			in.State.Template.HTTPProxy = nil
			in.State.Cluster.Labels["control_plane_availability_zones"] = "az1,az2"
			in.State.Cluster.Labels["api_server_floating_ip"] = "203.0.113.7"
			in.State.Cluster.Labels["master_lb_floating_ip_enabled"] = "true"
		},
		"docker volume only": func(in *Input) {
			delete(in.State.Cluster.Labels, "etcd_volume_size")
			in.State.Cluster.Labels["kube_tag"] = "v1.33.2"
		},
	}
	for name, edit := range scenarios {
		t.Run(name, func(t *testing.T) {
			in := testInput()
			if edit != nil {
				edit(&in)
			}
			c, err := BuildCluster(in)
			if err != nil {
				t.Fatal(err)
			}
			objs := map[string]map[string]any{}
			for _, o := range ClassObjects(DefaultNamespace, DefaultClassVersion) {
				u, err := toUnstructured(o.(client.Object))
				if err != nil {
					t.Fatal(err)
				}
				objs[u.GetKind()] = u.Object
			}
			topo := c.Spec.Topology
			clusterData := variableData(t, topo.Variables, nil, topo.Version)
			gpu := topo.Workers.MachineDeployments[1]
			workerData := variableData(t, topo.Variables, gpu.Variables.Overrides, topo.Version)
			targets := []struct {
				tg   patchTarget
				data map[string]any
			}{
				{patchTarget{name: "infrastructure cluster", kind: kindOpenStackClusterTemplate, infraCluster: true, obj: objs[kindOpenStackClusterTemplate]}, clusterData},
				{patchTarget{name: "control plane", kind: "KubeadmControlPlaneTemplate", controlPlane: true, obj: objs["KubeadmControlPlaneTemplate"]}, clusterData},
				{patchTarget{name: "control plane machines", kind: kindOpenStackMachineTemplate, controlPlane: true, obj: objs[kindOpenStackMachineTemplate]}, clusterData},
				{patchTarget{name: "worker machines", kind: kindOpenStackMachineTemplate, worker: true, obj: objs[kindOpenStackMachineTemplate]}, workerData},
				{patchTarget{name: "worker bootstrap", kind: "KubeadmConfigTemplate", worker: true, obj: objs["KubeadmConfigTemplate"]}, workerData},
			}
			for _, x := range targets {
				patched, applied := applyClassPatches(t, x.tg, x.data)
				if len(applied) == 0 {
					t.Errorf("no patch applies to the %s", x.tg.name)
				}
				checkAgainstCRD(t, schemas, patched)
				if edit == nil {
					// The representative cluster's rendered templates are
					// golden too: they show what CAPI will create.
					golden(t, "patched-"+strings.ReplaceAll(x.tg.name, " ", "-")+".yaml", patched)
				}
			}
		})
	}
}
