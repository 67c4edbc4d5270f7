package capi

import (
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Values of the shared class (driver-capi.md § 3.1, § 4).
const (
	placeholder        = "PLACEHOLDER"
	placeholderImageID = "00000000-0000-0000-0000-000000000000"
	// nodeVolumeDetachTimeout is 5m0s.
	nodeVolumeDetachTimeout int32 = 300
	// unhealthyTimeout is how long a node may be not Ready (5m0s).
	unhealthyTimeout int32 = 300
	// maxUnhealthy stops remediation above 80 % unhealthy machines (the
	// code's value; the documentation's 40 % is not what runs).
	maxUnhealthy = "80%"
	// certificatesExpiryDays makes KCP roll machines 21 days before their
	// leaf certificates expire.
	certificatesExpiryDays int32 = 21
	// keystoneWebhookConfig is where the keystone webhook kubeconfig lives.
	keystoneWebhookConfig = "/etc/kubernetes/webhooks/webhookconfig.yaml"
	auditPolicyFile       = "/etc/kubernetes/audit-policy/apiserver-audit-policy.yaml"
)

// ClassObjects returns the shared objects of a class version, in apply
// order: the four templates and then the ClusterClass, all named
// ClassName(version) in namespace (§ 3.1). The Namespace object itself is
// not included: the deployment owns it.
func ClassObjects(namespace, version string) []client.Object {
	name := ClassName(version)
	return []client.Object{
		openStackClusterTemplate(namespace, name),
		openStackMachineTemplate(namespace, name),
		kubeadmControlPlaneTemplate(namespace, name),
		kubeadmConfigTemplate(namespace, name),
		clusterClass(namespace, name),
	}
}

func openStackClusterTemplate(namespace, name string) *unstructured.Unstructured {
	nodePort := func(proto string) map[string]any {
		return map[string]any{
			"name": "Node Port (" + proto + ", anywhere)", "description": "Node Port (" + proto + ", anywhere)",
			"direction": "ingress", "etherType": "IPv4", "protocol": toLower(proto),
			"portRangeMin": int64(30000), "portRangeMax": int64(32767), "remoteIPPrefix": "0.0.0.0/0",
		}
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": apiVersionInfra,
		"kind":       kindOpenStackClusterTemplate,
		"metadata":   map[string]any{"name": name, "namespace": namespace},
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"identityRef": map[string]any{"name": placeholder, "cloudName": "default", "type": "Secret"},
			"managedSecurityGroups": map[string]any{
				"allowAllInClusterTraffic":   true,
				"allNodesSecurityGroupRules": []any{nodePort("UDP"), nodePort("TCP")},
			},
		}}},
	}}
	return u
}

func openStackMachineTemplate(namespace, name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": apiVersionInfra,
		"kind":       kindOpenStackMachineTemplate,
		"metadata":   map[string]any{"name": name, "namespace": namespace},
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"flavor":      placeholder,
			"identityRef": map[string]any{"name": placeholder, "cloudName": "default", "type": "Secret"},
			"image":       map[string]any{"id": placeholderImageID},
		}}},
	}}
}

func arg(name, value string) bootstrapv1.Arg { return bootstrapv1.Arg{Name: name, Value: ptr(value)} }

// kubeletArgs are the kubelet arguments of every node.
func kubeletArgs() []bootstrapv1.Arg { return []bootstrapv1.Arg{arg("cloud-provider", "external")} }

func kubeadmControlPlaneTemplate(namespace, name string) *controlplanev1.KubeadmControlPlaneTemplate {
	hostname := "{{ local_hostname }}"
	return &controlplanev1.KubeadmControlPlaneTemplate{
		TypeMeta:   metav1.TypeMeta{APIVersion: apiVersionControlPlane, Kind: "KubeadmControlPlaneTemplate"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: controlplanev1.KubeadmControlPlaneTemplateSpec{Template: controlplanev1.KubeadmControlPlaneTemplateResource{
			Spec: controlplanev1.KubeadmControlPlaneTemplateResourceSpec{
				Rollout: controlplanev1.KubeadmControlPlaneRolloutSpec{
					Before: controlplanev1.KubeadmControlPlaneRolloutBeforeSpec{CertificatesExpiryDays: certificatesExpiryDays},
				},
				KubeadmConfigSpec: bootstrapv1.KubeadmConfigSpec{
					Format: bootstrapv1.CloudConfig,
					ClusterConfiguration: bootstrapv1.ClusterConfiguration{
						APIServer: bootstrapv1.APIServer{
							ExtraArgs: []bootstrapv1.Arg{arg("profiling", "false")},
							ExtraVolumes: []bootstrapv1.HostPathMount{{
								Name: "webhooks", HostPath: "/etc/kubernetes/webhooks", MountPath: "/etc/kubernetes/webhooks",
							}},
						},
						Etcd: bootstrapv1.Etcd{Local: bootstrapv1.LocalEtcd{
							ExtraArgs: []bootstrapv1.Arg{arg("listen-metrics-urls", "http://0.0.0.0:2381")},
						}},
						ControllerManager: bootstrapv1.ControllerManager{ExtraArgs: []bootstrapv1.Arg{
							arg("bind-address", "0.0.0.0"), arg("cloud-provider", "external"), arg("profiling", "false"),
						}},
						Scheduler: bootstrapv1.Scheduler{ExtraArgs: []bootstrapv1.Arg{
							arg("bind-address", "0.0.0.0"), arg("profiling", "false"),
						}},
					},
					InitConfiguration: bootstrapv1.InitConfiguration{NodeRegistration: bootstrapv1.NodeRegistrationOptions{
						Name: hostname, KubeletExtraArgs: kubeletArgs(),
					}},
					JoinConfiguration: bootstrapv1.JoinConfiguration{NodeRegistration: bootstrapv1.NodeRegistrationOptions{
						Name: hostname, KubeletExtraArgs: kubeletArgs(),
					}},
					Files: []bootstrapv1.File{
						{Path: auditPolicyFile, Owner: "root:root", Permissions: "0600", Content: auditPolicy},
						{Path: keystoneWebhookConfig, Owner: "root:root", Permissions: "0644", Content: keystoneWebhookKubeconfig},
						{Path: "/run/kubeadm/configure-kube-proxy.sh", Owner: "root:root", Permissions: "0755", Content: configureKubeProxy},
					},
					PreKubeadmCommands: []string{
						"rm -rf /var/lib/etcd/lost+found",
						"bash /run/kubeadm/configure-kube-proxy.sh",
					},
					PostKubeadmCommands: []string{"echo " + placeholder},
				},
			},
		}},
	}
}

func kubeadmConfigTemplate(namespace, name string) *bootstrapv1.KubeadmConfigTemplate {
	return &bootstrapv1.KubeadmConfigTemplate{
		TypeMeta:   metav1.TypeMeta{APIVersion: apiVersionBootstrap, Kind: "KubeadmConfigTemplate"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: bootstrapv1.KubeadmConfigTemplateSpec{Template: bootstrapv1.KubeadmConfigTemplateResource{
			Spec: bootstrapv1.KubeadmConfigSpec{
				Format: bootstrapv1.CloudConfig,
				// CAPI ≥ v1.10 rejects empty file content (minLength 1), so
				// the placeholder file has some.
				Files: []bootstrapv1.File{{Path: "/etc/kubernetes/.placeholder", Owner: "root:root", Permissions: "0644", Content: "# placeholder\n"}},
				JoinConfiguration: bootstrapv1.JoinConfiguration{NodeRegistration: bootstrapv1.NodeRegistrationOptions{
					Name: "{{ local_hostname }}", KubeletExtraArgs: kubeletArgs(),
				}},
			},
		}},
	}
}

func templateRef(apiVersion, kind, name string) clusterv1.ClusterClassTemplateReference {
	return clusterv1.ClusterClassTemplateReference{APIVersion: apiVersion, Kind: kind, Name: name}
}

func unhealthyNodeConditions() []clusterv1.UnhealthyNodeCondition {
	return []clusterv1.UnhealthyNodeCondition{
		{Type: corev1.NodeReady, Status: corev1.ConditionFalse, TimeoutSeconds: ptr(unhealthyTimeout)},
		{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, TimeoutSeconds: ptr(unhealthyTimeout)},
	}
}

func clusterClass(namespace, name string) *clusterv1.ClusterClass {
	maxU := intstr.FromString(maxUnhealthy)
	return &clusterv1.ClusterClass{
		TypeMeta:   metav1.TypeMeta{APIVersion: apiVersionCluster, Kind: "ClusterClass"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: clusterv1.ClusterClassSpec{
			Infrastructure: clusterv1.InfrastructureClass{
				TemplateRef: templateRef(apiVersionInfra, kindOpenStackClusterTemplate, name),
			},
			ControlPlane: clusterv1.ControlPlaneClass{
				TemplateRef: templateRef(apiVersionControlPlane, "KubeadmControlPlaneTemplate", name),
				MachineInfrastructure: clusterv1.ControlPlaneClassMachineInfrastructureTemplate{
					TemplateRef: templateRef(apiVersionInfra, kindOpenStackMachineTemplate, name),
				},
				HealthCheck: clusterv1.ControlPlaneClassHealthCheck{
					Checks:      clusterv1.ControlPlaneClassHealthCheckChecks{UnhealthyNodeConditions: unhealthyNodeConditions()},
					Remediation: clusterv1.ControlPlaneClassHealthCheckRemediation{TriggerIf: clusterv1.ControlPlaneClassHealthCheckRemediationTriggerIf{UnhealthyLessThanOrEqualTo: &maxU}},
				},
				Deletion: clusterv1.ControlPlaneClassMachineDeletionSpec{NodeVolumeDetachTimeoutSeconds: ptr(nodeVolumeDetachTimeout)},
			},
			Workers: clusterv1.WorkersClass{MachineDeployments: []clusterv1.MachineDeploymentClass{{
				Class: WorkerClass,
				Bootstrap: clusterv1.MachineDeploymentClassBootstrapTemplate{
					TemplateRef: templateRef(apiVersionBootstrap, "KubeadmConfigTemplate", name),
				},
				Infrastructure: clusterv1.MachineDeploymentClassInfrastructureTemplate{
					TemplateRef: templateRef(apiVersionInfra, kindOpenStackMachineTemplate, name),
				},
				HealthCheck: clusterv1.MachineDeploymentClassHealthCheck{
					Checks:      clusterv1.MachineDeploymentClassHealthCheckChecks{UnhealthyNodeConditions: unhealthyNodeConditions()},
					Remediation: clusterv1.MachineDeploymentClassHealthCheckRemediation{TriggerIf: clusterv1.MachineDeploymentClassHealthCheckRemediationTriggerIf{UnhealthyLessThanOrEqualTo: &maxU}},
				},
				Deletion: clusterv1.MachineDeploymentClassMachineDeletionSpec{NodeVolumeDetachTimeoutSeconds: ptr(nodeVolumeDetachTimeout)},
			}}},
			Variables: classVariables(),
			Patches:   classPatches(),
		},
	}
}

// Schemas of the class variables (§ 4.1): every variable is required.
func classVariables() []clusterv1.ClusterClassVariable {
	str := clusterv1.JSONSchemaProps{Type: "string"}
	boolean := clusterv1.JSONSchemaProps{Type: "boolean"}
	integer := clusterv1.JSONSchemaProps{Type: "integer", Format: "int64"}
	strArray := clusterv1.JSONSchemaProps{Type: "array", Items: &clusterv1.JSONSchemaProps{Type: "string"}}
	object := func(required []string, props map[string]clusterv1.JSONSchemaProps) clusterv1.JSONSchemaProps {
		return clusterv1.JSONSchemaProps{Type: "object", Required: required, Properties: props}
	}
	enum := func(values ...string) clusterv1.JSONSchemaProps {
		p := clusterv1.JSONSchemaProps{Type: "string"}
		for _, v := range values {
			p.Enum = append(p.Enum, apiextensionsv1.JSON{Raw: mustJSON(v)})
		}
		return p
	}
	schemas := map[string]clusterv1.JSONSchemaProps{
		"apiServerLoadBalancer": object([]string{"enabled"}, map[string]clusterv1.JSONSchemaProps{
			"enabled": boolean, "provider": str, "flavor": str, "availabilityZone": str,
		}),
		"auditLog": object([]string{"enabled", "maxAge", "maxBackup", "maxSize"}, map[string]clusterv1.JSONSchemaProps{
			"enabled": boolean, "maxAge": str, "maxBackup": str, "maxSize": str,
		}),
		"bootVolume": object([]string{"type", "size"}, map[string]clusterv1.JSONSchemaProps{
			"type": str, "size": integer,
		}),
		"openidConnect": object([]string{"issuerUrl", "clientId", "usernameClaim", "usernamePrefix", "groupsClaim", "groupsPrefix"},
			map[string]clusterv1.JSONSchemaProps{
				"issuerUrl": str, "clientId": str, "usernameClaim": str, "usernamePrefix": str, "groupsClaim": str, "groupsPrefix": str,
			}),
		"operatingSystem":                   enum("ubuntu", "debian", "flatcar", "rockylinux"),
		"controlPlaneAvailabilityZones":     strArray,
		"dnsNameservers":                    strArray,
		"disableAPIServerFloatingIP":        boolean,
		"disableAPIServerFloatingIPManaged": boolean,
		"enableDockerVolume":                boolean,
		"enableEtcdVolume":                  boolean,
		"enableKeystoneAuth":                boolean,
		"isServerGroupDiffFailureDomain":    boolean,
		"dockerVolumeSize":                  integer,
		"etcdVolumeSize":                    integer,
	}
	out := make([]clusterv1.ClusterClassVariable, 0, len(VariableNames))
	for _, n := range VariableNames {
		s, ok := schemas[n]
		if !ok {
			s = str
		}
		out = append(out, clusterv1.ClusterClassVariable{
			Name: n, Required: ptr(true),
			Schema: clusterv1.VariableSchema{OpenAPIV3Schema: s},
		})
	}
	return out
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only literal values are marshalled
	}
	return b
}

func toLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// Fixed file contents of the control-plane template.
const (
	auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: None
  resources:
  - group: ""
    resources: ["endpoints", "services", "services/status"]
  users: ["system:kube-proxy"]
  verbs: ["watch"]
- level: None
  nonResourceURLs: ["/healthz*", "/version", "/readyz", "/livez"]
- level: Metadata
  resources:
  - group: ""
    resources: ["secrets", "configmaps"]
- level: Request
  verbs: ["get", "list", "watch"]
- level: RequestResponse
`
	keystoneWebhookKubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: webhook
  cluster:
    insecure-skip-tls-verify: true
    server: https://127.0.0.1:8443/webhook
contexts:
- name: webhook
  context:
    cluster: webhook
    user: webhook
current-context: webhook
users:
- name: webhook
  user: {}
`
	configureKubeProxy = `#!/bin/bash
set -e
for f in /run/kubeadm/kubeadm.yaml /run/kubeadm/kubeadm-join-config.yaml; do
  if [ -f "$f" ]; then
    cat >>"$f" <<EOF
---
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
metricsBindAddress: 0.0.0.0:10249
EOF
  fi
done
`
)
