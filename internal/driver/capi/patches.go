package capi

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// Patch selectors. Their apiVersion is the apiVersion of the templates the
// class references: CAPI silently skips a selector that does not match
// (driver-capi.md § 4.3).
var (
	selCP = clusterv1.PatchSelector{
		APIVersion: apiVersionControlPlane, Kind: "KubeadmControlPlaneTemplate",
		MatchResources: clusterv1.PatchSelectorMatch{ControlPlane: ptr(true)},
	}
	selWorkerBoot = clusterv1.PatchSelector{
		APIVersion: apiVersionBootstrap, Kind: "KubeadmConfigTemplate",
		MatchResources: clusterv1.PatchSelectorMatch{MachineDeploymentClass: &clusterv1.PatchSelectorMatchMachineDeploymentClass{Names: []string{WorkerClass}}},
	}
	selMachineCP = clusterv1.PatchSelector{
		APIVersion: apiVersionInfra, Kind: kindOpenStackMachineTemplate,
		MatchResources: clusterv1.PatchSelectorMatch{ControlPlane: ptr(true)},
	}
	selMachineWorker = clusterv1.PatchSelector{
		APIVersion: apiVersionInfra, Kind: kindOpenStackMachineTemplate,
		MatchResources: clusterv1.PatchSelectorMatch{MachineDeploymentClass: &clusterv1.PatchSelectorMatchMachineDeploymentClass{Names: []string{WorkerClass}}},
	}
	selMachineAll = clusterv1.PatchSelector{
		APIVersion: apiVersionInfra, Kind: kindOpenStackMachineTemplate,
		MatchResources: clusterv1.PatchSelectorMatch{
			ControlPlane:           ptr(true),
			MachineDeploymentClass: &clusterv1.PatchSelectorMatchMachineDeploymentClass{Names: []string{WorkerClass}},
		},
	}
	selInfraCluster = clusterv1.PatchSelector{
		APIVersion: apiVersionInfra, Kind: kindOpenStackClusterTemplate,
		MatchResources: clusterv1.PatchSelectorMatch{InfrastructureCluster: ptr(true)},
	}
)

// Paths inside the templates.
const (
	pSpec = "/spec/template/spec"
	pKCS  = pSpec + "/kubeadmConfigSpec"
	pAPI  = pKCS + "/clusterConfiguration/apiServer"
)

func set(op, path string, v any) clusterv1.JSONPatch {
	return clusterv1.JSONPatch{Op: op, Path: path, Value: &apiextensionsv1.JSON{Raw: mustJSON(v)}}
}

func fromVar(op, path, variable string) clusterv1.JSONPatch {
	return clusterv1.JSONPatch{Op: op, Path: path, ValueFrom: &clusterv1.JSONPatchValue{Variable: variable}}
}

func fromTpl(op, path, tpl string) clusterv1.JSONPatch {
	return clusterv1.JSONPatch{Op: op, Path: path, ValueFrom: &clusterv1.JSONPatchValue{Template: tpl}}
}

// argTpl appends a {name, value} extraArgs entry whose value is a template.
func argTpl(path, name, valueTpl string) clusterv1.JSONPatch {
	return fromTpl("add", path+"/-", "name: "+name+"\nvalue: "+valueTpl)
}

func def(sel clusterv1.PatchSelector, patches ...clusterv1.JSONPatch) clusterv1.PatchDefinition {
	return clusterv1.PatchDefinition{Selector: sel, JSONPatches: patches}
}

func patch(name, enabledIf string, defs ...clusterv1.PatchDefinition) clusterv1.ClusterClassPatch {
	return clusterv1.ClusterClassPatch{Name: name, EnabledIf: enabledIf, Definitions: defs}
}

// file returns a kubeadm files entry with base64 content from a variable.
func fileFromVar(path, variable, permissions string) string {
	return "path: " + path + "\nowner: root:root\npermissions: \"" + permissions + "\"\nencoding: base64\ncontent: {{ ." + variable + " | quote }}"
}

// classPatches are the patches of § 4.2 in their v1beta2 form (§ 4.3):
// extraArgs are lists, so arguments are appended as {name, value}. The
// order matters: addEmptyLists comes before every patch appending with /-.
func classPatches() []clusterv1.ClusterClassPatch {
	volumesEnabled := `{{ if or .enableEtcdVolume .enableDockerVolume }}true{{ end }}`
	emptyBoot := func(base string) []clusterv1.JSONPatch {
		return []clusterv1.JSONPatch{
			set("add", base+"/mounts", []any{}),
			set("add", base+"/diskSetup", map[string]any{"filesystems": []any{}, "partitions": []any{}}),
		}
	}
	disk := func(letter string) string {
		return `{{ if eq .hardwareDiskBus "scsi" }}/dev/sd` + letter + `{{ else }}/dev/vd` + letter + `{{ end }}`
	}
	partition := func(device string) string {
		return "device: " + device + "\nlayout: true\noverwrite: false\ntableType: gpt"
	}
	filesystem := func(device, label string) string {
		return "device: " + device + "\nfilesystem: ext4\nlabel: " + label + "\npartition: auto"
	}
	containerdCmd := "systemctl daemon-reload && systemctl restart containerd"
	flatcarName := "__REPLACE_NODE_NAME__"
	flatcarSed := `sed -i "s/__REPLACE_NODE_NAME__/$(hostname -s)/g" /etc/kubeadm.yml`
	flatcarIgnition := `systemd:
  units:
  - name: coreos-metadata-sshkeys@.service
    enabled: true
  - name: kubeadm.service
    enabled: true
    dropins:
    - name: 10-flatcar.conf
      contents: |
        [Unit]
        Requires=containerd.service coreos-metadata.service
        After=containerd.service coreos-metadata.service
        [Service]
        EnvironmentFile=/run/metadata/flatcar
`
	return []clusterv1.ClusterClassPatch{
		patch("addEmptyLists", volumesEnabled,
			def(selMachineAll, set("add", pSpec+"/additionalBlockDevices", []any{})),
			def(selCP, emptyBoot(pKCS)...),
			def(selWorkerBoot, emptyBoot(pSpec)...),
		),
		patch("admissionControlList", `{{ if .admissionControlList }}true{{ end }}`,
			def(selCP, argTpl(pAPI+"/extraArgs", "enable-admission-plugins", "{{ .admissionControlList | quote }}"))),
		patch("apiServerFloatingIP", `{{ if .apiServerFloatingIP }}true{{ end }}`,
			def(selInfraCluster, fromVar("add", pSpec+"/apiServerFloatingIP", "apiServerFloatingIP"))),
		patch("apiServerLoadBalancer", "",
			def(selInfraCluster, fromVar("add", pSpec+"/apiServerLoadBalancer", "apiServerLoadBalancer"))),
		patch("auditLog", `{{ if .auditLog.enabled }}true{{ end }}`,
			def(selCP,
				argTpl(pAPI+"/extraArgs", "audit-log-path", "/var/log/audit/kube-apiserver-audit.log"),
				argTpl(pAPI+"/extraArgs", "audit-log-maxage", "{{ .auditLog.maxAge | quote }}"),
				argTpl(pAPI+"/extraArgs", "audit-log-maxbackup", "{{ .auditLog.maxBackup | quote }}"),
				argTpl(pAPI+"/extraArgs", "audit-log-maxsize", "{{ .auditLog.maxSize | quote }}"),
				argTpl(pAPI+"/extraArgs", "audit-policy-file", auditPolicyFile),
				set("add", pAPI+"/extraVolumes/-", map[string]any{
					"name": "audit-policy", "hostPath": "/etc/kubernetes/audit-policy", "mountPath": "/etc/kubernetes/audit-policy",
				}),
				set("add", pAPI+"/extraVolumes/-", map[string]any{
					"name": "audit-logs", "hostPath": "/var/log/kubernetes/audit", "mountPath": "/var/log/audit",
				}),
			)),
		patch("bootVolume", `{{ if gt (int .bootVolume.size) 0 }}true{{ end }}`,
			def(selMachineAll, fromTpl("add", pSpec+"/rootVolume",
				"type: {{ .bootVolume.type | quote }}\nsizeGiB: {{ .bootVolume.size }}\n"+
					"{{ if .bootVolumeAvailabilityZone }}availabilityZone:\n  from: Name\n  name: {{ .bootVolumeAvailabilityZone | quote }}\n{{ end }}"))),
		patch("cloudProvider", `{{ semverCompare "<1.33.0" .builtin.controlPlane.version }}`,
			def(selCP, set("add", pAPI+"/extraArgs/-", map[string]any{"name": "cloud-provider", "value": "external"}))),
		patch("clusterIdentityRefName", "",
			def(selMachineAll, fromVar("replace", pSpec+"/identityRef/name", "clusterIdentityRefName")),
			def(selInfraCluster, fromVar("replace", pSpec+"/identityRef/name", "clusterIdentityRefName")),
		),
		patch("containerdConfig", "",
			def(selCP,
				fromTpl("add", pKCS+"/files/-", fileFromVar("/etc/containerd/config.toml", "containerdConfig", "0644")),
				set("add", pKCS+"/preKubeadmCommands/-", containerdCmd),
			),
			def(selWorkerBoot,
				fromTpl("add", pSpec+"/files/-", fileFromVar("/etc/containerd/config.toml", "containerdConfig", "0644")),
				set("add", pSpec+"/preKubeadmCommands", []string{"systemctl daemon-reload", "systemctl restart containerd"}),
			),
		),
		patch("systemdProxyConfig", `{{ if .systemdProxyConfig }}true{{ end }}`,
			def(selCP, fromTpl("add", pKCS+"/files/-", fileFromVar("/etc/systemd/system/containerd.service.d/proxy.conf", "systemdProxyConfig", "0644"))),
			def(selWorkerBoot, fromTpl("add", pSpec+"/files/-", fileFromVar("/etc/systemd/system/containerd.service.d/proxy.conf", "systemdProxyConfig", "0644"))),
		),
		patch("controlPlaneAvailabilityZones", `{{ if index .controlPlaneAvailabilityZones 0 }}true{{ end }}`,
			def(selInfraCluster, fromVar("add", pSpec+"/controlPlaneAvailabilityZones", "controlPlaneAvailabilityZones"))),
		patch("disableAPIServerFloatingIP", `{{ if .disableAPIServerFloatingIPManaged }}true{{ end }}`,
			def(selInfraCluster, fromVar("add", pSpec+"/disableAPIServerFloatingIP", "disableAPIServerFloatingIP"))),
		patch("externalNetworkId", `{{ if .externalNetworkId }}true{{ end }}`,
			def(selInfraCluster, fromTpl("add", pSpec+"/externalNetwork", "id: {{ .externalNetworkId | quote }}"))),
		patch("flavors", "",
			def(selMachineCP, fromVar("replace", pSpec+"/flavor", "controlPlaneFlavor")),
			def(selMachineWorker, fromVar("replace", pSpec+"/flavor", "flavor")),
		),
		patch("imageRepository", `{{ if .imageRepository }}true{{ end }}`,
			def(selCP, fromVar("add", pKCS+"/clusterConfiguration/imageRepository", "imageRepository")),
			def(selWorkerBoot, fromVar("add", pSpec+"/clusterConfiguration/imageRepository", "imageRepository")),
		),
		patch("images", "",
			def(selMachineAll, fromVar("replace", pSpec+"/image/id", "imageUUID"))),
		// Deviation: magnum-cluster-api patches the kube-apiserver static pod
		// with a kustomization after kubeadm; the webhook flags are set here
		// as apiserver arguments, with Node and RBAC evaluated first so the
		// control plane works before the webhook runs.
		patch("keystoneAuth", `{{ if .enableKeystoneAuth }}true{{ end }}`,
			def(selCP,
				argTpl(pAPI+"/extraArgs", "authentication-token-webhook-config-file", keystoneWebhookConfig),
				argTpl(pAPI+"/extraArgs", "authorization-webhook-config-file", keystoneWebhookConfig),
				argTpl(pAPI+"/extraArgs", "authorization-mode", "Node,RBAC,Webhook"),
			)),
		patch("newNetworkConfig", `{{ if not .fixedNetworkId }}true{{ end }}`,
			def(selInfraCluster, fromTpl("add", pSpec+"/managedSubnets",
				"- cidr: {{ .nodeCidr | quote }}\n  dnsNameservers: {{ .dnsNameservers | toJson }}"))),
		patch("existingFixedNetworkIdConfig", `{{ if .fixedNetworkId }}true{{ end }}`,
			def(selInfraCluster, fromTpl("add", pSpec+"/network", "id: {{ .fixedNetworkId | quote }}"))),
		patch("existingFixedSubnetIdConfig", `{{ if .fixedSubnetId }}true{{ end }}`,
			def(selInfraCluster, fromTpl("add", pSpec+"/subnets", "- id: {{ .fixedSubnetId | quote }}"))),
		patch("openidConnect", `{{ if .openidConnect.issuerUrl }}true{{ end }}`,
			def(selCP,
				argTpl(pAPI+"/extraArgs", "oidc-issuer-url", "{{ .openidConnect.issuerUrl | quote }}"),
				argTpl(pAPI+"/extraArgs", "oidc-client-id", "{{ .openidConnect.clientId | quote }}"),
				argTpl(pAPI+"/extraArgs", "oidc-username-claim", "{{ .openidConnect.usernameClaim | quote }}"),
				argTpl(pAPI+"/extraArgs", "oidc-username-prefix", "{{ .openidConnect.usernamePrefix | quote }}"),
				argTpl(pAPI+"/extraArgs", "oidc-groups-claim", "{{ .openidConnect.groupsClaim | quote }}"),
				argTpl(pAPI+"/extraArgs", "oidc-groups-prefix", "{{ .openidConnect.groupsPrefix | quote }}"),
			)),
		patch("aptProxyConfig", `{{ if and .aptProxyConfig (or (eq .operatingSystem "ubuntu") (eq .operatingSystem "debian")) }}true{{ end }}`,
			def(selCP, fromTpl("add", pKCS+"/files/-", fileFromVar("/etc/apt/apt.conf.d/90proxy", "aptProxyConfig", "0644"))),
			def(selWorkerBoot, fromTpl("add", pSpec+"/files/-", fileFromVar("/etc/apt/apt.conf.d/90proxy", "aptProxyConfig", "0644"))),
		),
		patch("flatcar", `{{ if eq .operatingSystem "flatcar" }}true{{ end }}`,
			def(selCP,
				set("replace", pKCS+"/format", "ignition"),
				set("add", pKCS+"/ignition", map[string]any{"containerLinuxConfig": map[string]any{"additionalConfig": flatcarIgnition}}),
				set("replace", pKCS+"/initConfiguration/nodeRegistration/name", flatcarName),
				set("replace", pKCS+"/joinConfiguration/nodeRegistration/name", flatcarName),
				set("add", pKCS+"/preKubeadmCommands/-", flatcarSed),
			),
			def(selWorkerBoot,
				set("replace", pSpec+"/format", "ignition"),
				set("add", pSpec+"/ignition", map[string]any{"containerLinuxConfig": map[string]any{"additionalConfig": flatcarIgnition}}),
				set("replace", pSpec+"/joinConfiguration/nodeRegistration/name", flatcarName),
				set("add", pSpec+"/preKubeadmCommands/-", flatcarSed),
			),
		),
		// CAPO requires a UUID: without a server group (no ServerGroups
		// configured) the field is left out rather than set to "".
		patch("serverGroupId", `{{ if .serverGroupId }}true{{ end }}`,
			def(selMachineAll, fromTpl("add", pSpec+"/serverGroup", "id: {{ .serverGroupId | quote }}"))),
		patch("schedulerHints", "",
			def(selMachineAll,
				fromTpl("add", pSpec+"/schedulerHintAdditionalProperties",
					"- name: different_failure_domain\n  value:\n    type: Bool\n    bool: {{ .isServerGroupDiffFailureDomain }}"),
			)),
		patch("sshKeyName", "",
			def(selMachineAll, fromVar("add", pSpec+"/sshKeyName", "sshKeyName"))),
		patch("TLSCipherSuites", "",
			def(selCP,
				argTpl(pAPI+"/extraArgs", "tls-cipher-suites", "{{ .apiServerTLSCipherSuites | quote }}"),
				argTpl(pKCS+"/initConfiguration/nodeRegistration/kubeletExtraArgs", "tls-cipher-suites", "{{ .kubeletTLSCipherSuites | quote }}"),
				argTpl(pKCS+"/joinConfiguration/nodeRegistration/kubeletExtraArgs", "tls-cipher-suites", "{{ .kubeletTLSCipherSuites | quote }}"),
				fromTpl("add", pAPI+"/certSANs",
					"- {{ .builtin.cluster.name }}\n- {{ .builtin.cluster.name }}.{{ .builtin.cluster.namespace }}\n"+
						"- {{ .builtin.cluster.name }}.{{ .builtin.cluster.namespace }}.svc\n"+
						"- {{ .builtin.cluster.name }}.{{ .builtin.cluster.namespace }}.svc.cluster.local\n{{ .apiServerSANs }}"),
			),
			def(selWorkerBoot,
				argTpl(pSpec+"/joinConfiguration/nodeRegistration/kubeletExtraArgs", "tls-cipher-suites", "{{ .kubeletTLSCipherSuites | quote }}"),
			),
		),
		patch("etcdVolume", `{{ if .enableEtcdVolume }}true{{ end }}`,
			def(selMachineCP, fromTpl("add", pSpec+"/additionalBlockDevices/-",
				"name: etcd\nsizeGiB: {{ .etcdVolumeSize }}\nstorage:\n  type: Volume\n  volume:\n    type: {{ .etcdVolumeType | quote }}\n"+
					"{{ if .availabilityZone }}    availabilityZone:\n      from: Name\n      name: {{ .availabilityZone | quote }}\n{{ end }}")),
			def(selCP,
				fromTpl("add", pKCS+"/diskSetup/partitions/-", partition(disk("b"))),
				fromTpl("add", pKCS+"/diskSetup/filesystems/-", filesystem(disk("b"), "etcd_disk")),
				set("add", pKCS+"/mounts/-", []string{"LABEL=etcd_disk", "/var/lib/etcd"}),
			),
		),
		patch("dockerVolume", `{{ if .enableDockerVolume }}true{{ end }}`,
			def(selMachineAll, fromTpl("add", pSpec+"/additionalBlockDevices/-",
				"name: docker\nsizeGiB: {{ .dockerVolumeSize }}\nstorage:\n  type: Volume\n  volume:\n    type: {{ .dockerVolumeType | quote }}\n"+
					"{{ if .availabilityZone }}    availabilityZone:\n      from: Name\n      name: {{ .availabilityZone | quote }}\n{{ end }}")),
			def(selCP, set("add", pKCS+"/mounts/-", []string{"LABEL=docker_disk", "/var/lib/containerd"})),
			def(selWorkerBoot,
				fromTpl("add", pSpec+"/diskSetup/partitions/-", partition(disk("b"))),
				fromTpl("add", pSpec+"/diskSetup/filesystems/-", filesystem(disk("b"), "docker_disk")),
				set("add", pSpec+"/mounts/-", []string{"LABEL=docker_disk", "/var/lib/containerd"}),
			),
		),
		patch("etcdAndDockerVolumeForControlPlane", `{{ if and .enableEtcdVolume .enableDockerVolume }}true{{ end }}`,
			def(selCP,
				fromTpl("add", pKCS+"/diskSetup/partitions/-", partition(disk("c"))),
				fromTpl("add", pKCS+"/diskSetup/filesystems/-", filesystem(disk("c"), "docker_disk")),
			)),
		patch("onlyDockerVolumeForControlPlane", `{{ if and (not .enableEtcdVolume) .enableDockerVolume }}true{{ end }}`,
			def(selCP,
				fromTpl("add", pKCS+"/diskSetup/partitions/-", partition(disk("b"))),
				fromTpl("add", pKCS+"/diskSetup/filesystems/-", filesystem(disk("b"), "docker_disk")),
			)),
	}
}
