package capi

import (
	"context"
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/openkeel/openkeel-magnum/internal/driver"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// rfc1123Label is a lowercase RFC 1123 label: nodegroup names become
// label values and object-name parts (§ 3.3).
var rfc1123Label = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// supportedCNIs are the network drivers the driver installs.
var supportedCNIs = []string{"calico", "cilium"}

// ValidateNodeGroupName refuses nodegroup names that cannot become
// Kubernetes label values (magnum-cluster-api fails them asynchronously).
func ValidateNodeGroupName(name string) error {
	if len(name) > 63 || !rfc1123Label.MatchString(name) {
		return magnum.Invalid("Nodegroup name %q is not valid for the Cluster API driver: use at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit.", name)
	}
	return nil
}

// ValidateCreate runs the checks magnum-cluster-api makes while creating,
// so that they fail before anything is written: kube_tag, CNI, master
// count, distro and nodegroup names (§ 8.1).
func ValidateCreate(st driver.ClusterState) error {
	if _, err := KubeVersion(labels(st.Cluster.Labels).str(LabelKubeTag, "")); err != nil {
		return err
	}
	if cni := value(st.Template.NetworkDriver); !slices.Contains(supportedCNIs, cni) {
		return magnum.NetworkDriverNotSupported(cni, supportedCNIs)
	}
	if _, err := operatingSystem(value(st.Template.ClusterDistro)); err != nil {
		return err
	}
	for _, ng := range st.NodeGroups {
		if isMaster(ng) {
			if err := driver.ValidateMasterSize(intValue(ng.NodeCount)); err != nil {
				return err
			}
			continue
		}
		if err := ValidateNodeGroupName(ng.Name); err != nil {
			return err
		}
	}
	return nil
}

func (d *Driver) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, d.opts.Timeout)
}

// input resolves everything the builders need for st.
func (d *Driver) input(ctx context.Context, cred driver.Credentials, st driver.ClusterState, stackID string) (Input, error) {
	in := Input{
		State: st, StackID: stackID, Namespace: d.opts.Namespace, ClassVersion: d.opts.ClassVersion,
		DefaultBootVolumeSize: d.opts.DefaultBootVolumeSize, DefaultBootVolumeType: d.opts.DefaultBootVolumeType,
		DefaultVolumeType: d.opts.DefaultVolumeType,
	}
	var err error
	if in.Resolved, err = d.resolve(ctx, cred, st, stackID); err != nil {
		return Input{}, err
	}
	if in.Live, err = d.liveInfra(ctx, stackID); err != nil {
		return Input{}, err
	}
	return in, nil
}

// resolve looks up flavors, images and networks, and ensures the server
// groups of the control plane and of every worker nodegroup.
func (d *Driver) resolve(ctx context.Context, cred driver.Credentials, st driver.ClusterState, stackID string) (Resolved, error) {
	cl, tpl := st.Cluster, st.Template
	r := Resolved{ServerGroups: map[string]string{}, NodeGroups: map[string]ResolvedNodeGroup{}}
	first := func(ps ...*string) string {
		for _, p := range ps {
			if p != nil && *p != "" {
				return *p
			}
		}
		return ""
	}
	var err error
	if r.ControlPlaneFlavor, err = d.flavor(ctx, cred, first(cl.MasterFlavorID, tpl.MasterFlavorID)); err != nil {
		return r, err
	}
	master, _ := masterNodeGroup(st.NodeGroups)
	if r.ControlPlaneImage, err = d.image(ctx, cred, first(master.ImageID, tpl.ImageID)); err != nil {
		return r, err
	}
	if r.ExternalNetworkID, err = d.network(ctx, cred, value(tpl.ExternalNetworkID)); err != nil {
		return r, err
	}
	if r.FixedNetworkID, err = d.network(ctx, cred, first(cl.FixedNetwork, tpl.FixedNetwork)); err != nil {
		return r, err
	}
	if ref := first(cl.FixedSubnet, tpl.FixedSubnet); ref != "" && d.opts.Resolver != nil {
		if r.FixedSubnetID, err = d.opts.Resolver.SubnetID(ctx, cred, ref); err != nil {
			return r, fmt.Errorf("resolve subnet %s: %w", ref, err)
		}
	} else {
		r.FixedSubnetID = ref
	}
	cpPolicy := firstPolicy(labels(cl.Labels).str(LabelServerGroupPolicies, defaultServerGroupPolicy))
	if err := d.ensureServerGroup(ctx, cred, &r, serverGroupName(stackID, ""), cpPolicy); err != nil {
		return r, err
	}
	for _, ng := range st.NodeGroups {
		if isMaster(ng) {
			continue
		}
		var rn ResolvedNodeGroup
		if rn.Flavor, err = d.flavor(ctx, cred, first(ng.FlavorID, cl.FlavorID, tpl.FlavorID)); err != nil {
			return r, err
		}
		if rn.Image, err = d.image(ctx, cred, first(ng.ImageID, tpl.ImageID)); err != nil {
			return r, err
		}
		r.NodeGroups[ng.Name] = rn
		if strings.HasPrefix(string(statusOf(ng.Status)), "DELETE") {
			continue
		}
		policy := firstPolicy(labels(ng.Labels).str(LabelServerGroupPolicies,
			labels(cl.Labels).str(LabelServerGroupPolicies, defaultServerGroupPolicy)))
		if err := d.ensureServerGroup(ctx, cred, &r, serverGroupName(stackID, ng.Name), policy); err != nil {
			return r, err
		}
	}
	return r, nil
}

func firstPolicy(v string) string {
	if p := splitList(v); len(p) > 0 {
		return p[0]
	}
	return defaultServerGroupPolicy
}

func (d *Driver) ensureServerGroup(ctx context.Context, cred driver.Credentials, r *Resolved, name, policy string) error {
	if d.opts.ServerGroups == nil {
		return nil
	}
	id, err := d.opts.ServerGroups.Ensure(ctx, cred, name, policy)
	if err != nil {
		return fmt.Errorf("ensure server group %s: %w", name, err)
	}
	r.ServerGroups[name] = id
	return nil
}

func (d *Driver) flavor(ctx context.Context, cred driver.Credentials, ref string) (string, error) {
	if ref == "" || d.opts.Resolver == nil {
		return ref, nil
	}
	name, err := d.opts.Resolver.FlavorName(ctx, cred, ref)
	if err != nil {
		return "", fmt.Errorf("resolve flavor %s: %w", ref, err)
	}
	return name, nil
}

func (d *Driver) image(ctx context.Context, cred driver.Credentials, ref string) (Image, error) {
	if ref == "" || d.opts.Resolver == nil {
		return Image{ID: ref}, nil
	}
	img, err := d.opts.Resolver.Image(ctx, cred, ref)
	if err != nil {
		return Image{}, fmt.Errorf("resolve image %s: %w", ref, err)
	}
	return img, nil
}

func (d *Driver) network(ctx context.Context, cred driver.Credentials, ref string) (string, error) {
	if ref == "" || d.opts.Resolver == nil {
		return ref, nil
	}
	id, err := d.opts.Resolver.NetworkID(ctx, cred, ref)
	if err != nil {
		return "", fmt.Errorf("resolve network %s: %w", ref, err)
	}
	return id, nil
}

// applyCluster renders and applies the Cluster of st. Unless the call is
// an upgrade, a Cluster that already uses another ClusterClass (one adopted
// from magnum-cluster-api, pinned to its magnum-v* class) keeps that class
// and gets exactly the variables the class declares (§ 10).
func (d *Driver) applyCluster(ctx context.Context, cred driver.Credentials, st driver.ClusterState, stackID string, upgrade bool) error {
	in, err := d.input(ctx, cred, st, stackID)
	if err != nil {
		return err
	}
	c, err := BuildCluster(in)
	if err != nil {
		return err
	}
	if !upgrade {
		if err := d.keepPinnedClass(ctx, c); err != nil {
			return err
		}
	}
	return d.apply(ctx, c)
}

// keepPinnedClass points c at the class the live Cluster uses, when it is
// not the driver's, and drops the variables that class does not declare.
func (d *Driver) keepPinnedClass(ctx context.Context, c *clusterv1.Cluster) error {
	live, err := d.getCluster(ctx, c.Name)
	if err != nil || live == nil || live.Spec.Topology.ClassRef.Name == c.Spec.Topology.ClassRef.Name {
		return err
	}
	ref := live.Spec.Topology.ClassRef
	ns := ref.Namespace
	if ns == "" {
		ns = c.Namespace
	}
	var cc clusterv1.ClusterClass
	if err := d.opts.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref.Name}, &cc); err != nil {
		return fmt.Errorf("get pinned ClusterClass %s: %w", ref.Name, err)
	}
	c.Spec.Topology.ClassRef = ref
	declared := map[string]bool{}
	for _, v := range cc.Spec.Variables {
		declared[v.Name] = true
	}
	keep := func(vars []clusterv1.ClusterVariable) []clusterv1.ClusterVariable {
		return slices.DeleteFunc(vars, func(v clusterv1.ClusterVariable) bool { return !declared[v.Name] })
	}
	c.Spec.Topology.Variables = keep(c.Spec.Topology.Variables)
	for i := range c.Spec.Topology.Workers.MachineDeployments {
		md := &c.Spec.Topology.Workers.MachineDeployments[i]
		md.Variables.Overrides = keep(md.Variables.Overrides)
	}
	return nil
}

// newStackID picks a "kube-xxxxx" name not used by another cluster.
func (d *Driver) newStackID(ctx context.Context, clusterUUID string) (string, error) {
	for range 10 {
		name := "kube-" + d.opts.NewSuffix()
		c, err := d.getCluster(ctx, name)
		if err != nil {
			return "", err
		}
		if c == nil || c.Labels[LabelClusterUUID] == clusterUUID {
			return name, nil
		}
	}
	return "", errors.New("capi driver: no free cluster name after 10 attempts")
}

// CreateCluster implements driver.Driver (§ 8.1): class objects, the two
// add-on ClusterResourceSets, the application credential and its Secret,
// the CA Secrets, the add-on Secrets, the server groups and finally the
// Cluster. Every step is idempotent, so a retry after a failure converges;
// a cluster that already has a stack_id keeps it.
func (d *Driver) CreateCluster(ctx context.Context, cred driver.Credentials, st driver.ClusterState, _ time.Duration) (driver.Update, error) {
	if err := ValidateCreate(st); err != nil {
		return driver.Update{}, err
	}
	if d.opts.CAs == nil {
		return driver.Update{}, errNoCAs
	}
	// The CNI manifest is rendered first: a cilium cluster without an
	// operator manifest fails before anything is created.
	cni, err := CNIManifest(d.opts.Addons, value(st.Template.NetworkDriver), st.Cluster.Labels)
	if err != nil {
		return driver.Update{}, err
	}
	ctx, cancel := d.withTimeout(ctx)
	defer cancel()

	stackID := value(st.Cluster.StackID)
	if stackID == "" {
		if stackID, err = d.newStackID(ctx, st.Cluster.UUID); err != nil {
			return driver.Update{}, err
		}
	}
	cl := st.Cluster
	cl.StackID = ptr(stackID)
	cl.Status = ptr(magnum.StatusCreateInProgress)
	cl.StatusReason = nil
	upd := driver.Update{Cluster: &cl}
	for _, ng := range st.NodeGroups {
		ng.StackID = ptr(stackID)
		ng.Status = ptr(magnum.StatusCreateInProgress)
		ng.StatusReason = nil
		upd.NodeGroups = append(upd.NodeGroups, ng)
	}
	st = withNodeGroups(st, upd.NodeGroups)
	st.Cluster = cl

	for _, obj := range ClassObjects(d.opts.Namespace, d.opts.ClassVersion) {
		if err := d.apply(ctx, obj); err != nil {
			return upd, err
		}
	}
	if err := d.applyAddonSets(ctx, stackID, st.Cluster.UUID, false); err != nil {
		return upd, err
	}
	if err := d.ensureCloudConfig(ctx, cred, st.Cluster, stackID); err != nil {
		return upd, err
	}
	cas, err := d.opts.CAs(ctx, st.Cluster)
	if err != nil {
		return upd, fmt.Errorf("load cluster certificates: %w", err)
	}
	secrets, err := CASecrets(d.opts.Namespace, stackID, cas)
	if err != nil {
		return upd, err
	}
	for _, s := range secrets {
		if err := d.apply(ctx, s); err != nil {
			return upd, err
		}
	}
	if err := d.applyAddonSecrets(ctx, cred, st, stackID, cni); err != nil {
		return upd, err
	}
	if err := d.applyCluster(ctx, cred, st, stackID, false); err != nil {
		return upd, err
	}
	return upd, nil
}

// ensureCloudConfig creates the application credential and the
// cloud-config Secret unless the Secret already holds a credential.
func (d *Driver) ensureCloudConfig(ctx context.Context, cred driver.Credentials, cl magnum.Cluster, stackID string) error {
	existing, err := d.getSecret(ctx, stackID+SuffixCloudConfig)
	if err != nil {
		return err
	}
	if existing != nil {
		if _, ok := appCredentialFromSecret(existing); ok {
			return nil
		}
	}
	if d.opts.AppCredentials == nil {
		return errors.New("capi driver: no application credential store configured")
	}
	ac, err := d.opts.AppCredentials.Create(ctx, cred, AppCredentialName(cl.UUID, d.opts.NewSuffix()), appCredentialDescription(cl))
	if err != nil {
		return fmt.Errorf("create application credential: %w", err)
	}
	if ac.UserID == "" {
		ac.UserID = cred.UserID
	}
	s, err := CloudConfigSecret(d.opts.Namespace, stackID, cl.UUID, d.opts.Cloud, ac)
	if err != nil {
		return err
	}
	return d.apply(ctx, s)
}

func appCredentialDescription(cl magnum.Cluster) string {
	n := cl.Name
	if n == "" {
		n = cl.UUID
	}
	return "Magnum cluster (" + n + ")"
}

// withNodeGroups returns st with the given rows replacing (or added to)
// its nodegroups.
func withNodeGroups(st driver.ClusterState, ngs []magnum.NodeGroup) driver.ClusterState {
	out := st
	out.NodeGroups = slices.Clone(st.NodeGroups)
	for _, ng := range ngs {
		i := slices.IndexFunc(out.NodeGroups, func(x magnum.NodeGroup) bool { return x.UUID == ng.UUID })
		if i < 0 {
			out.NodeGroups = append(out.NodeGroups, ng)
		} else {
			out.NodeGroups[i] = ng
		}
	}
	return out
}

func requireStackID(st driver.ClusterState) (string, error) {
	if s := value(st.Cluster.StackID); s != "" {
		return s, nil
	}
	return "", fmt.Errorf("capi driver: cluster %s has no stack_id", st.Cluster.UUID)
}

// UpdateCluster implements driver.Driver: a PATCH of node_count is a
// resize of the default worker to the count already in its row (§ 8.2;
// magnum-cluster-api does not implement it).
func (d *Driver) UpdateCluster(ctx context.Context, cred driver.Credentials, st driver.ClusterState) (driver.Update, error) {
	ng, ok := defaultWorker(st.NodeGroups)
	if !ok {
		return driver.Update{}, fmt.Errorf("capi driver: cluster %s has no default worker nodegroup", st.Cluster.UUID)
	}
	return d.ResizeCluster(ctx, cred, st, driver.Resize{NodeGroupUUID: ng.UUID, NodeCount: intValue(ng.NodeCount)})
}

// ResizeCluster implements driver.Driver (§ 8.2): the Machines named in
// NodesToRemove get the delete-machine annotation first, so the
// MachineSet removes exactly those; then the new size is applied. For the
// control plane NodesToRemove does not apply. With autoscaling on, the
// autoscaler owns the size and only the annotations are written.
func (d *Driver) ResizeCluster(ctx context.Context, cred driver.Credentials, st driver.ClusterState, req driver.Resize) (driver.Update, error) {
	stackID, err := requireStackID(st)
	if err != nil {
		return driver.Update{}, err
	}
	ng, ok := st.NodeGroup(req.NodeGroupUUID)
	if !ok {
		return driver.Update{}, magnum.NodeGroupNotFound(req.NodeGroupUUID)
	}
	ctx, cancel := d.withTimeout(ctx)
	defer cancel()
	if !isMaster(ng) && len(req.NodesToRemove) > 0 {
		if _, err := d.markMachinesForDeletion(ctx, stackID, ng.Name, req.NodesToRemove); err != nil {
			return driver.Update{}, err
		}
	}
	ng.NodeCount = ptr(req.NodeCount)
	ng.Status = ptr(magnum.StatusUpdateInProgress)
	ng.StatusReason = nil
	cl := st.Cluster
	cl.Status = ptr(magnum.StatusUpdateInProgress)
	cl.StatusReason = nil
	next := withNodeGroups(st, []magnum.NodeGroup{ng})
	next.Cluster = cl
	if err := d.applyCluster(ctx, cred, next, stackID, false); err != nil {
		return driver.Update{}, err
	}
	return driver.Update{Cluster: &cl, NodeGroups: []magnum.NodeGroup{ng}}, nil
}

// markMachinesForDeletion annotates the Machines of a nodegroup named by
// nodes: a Nova server UUID (the last element of spec.providerID,
// "openstack:///<uuid>"), a Machine name, a Node name or an
// OpenStackMachine name. It returns the annotated Machine names, sorted.
// Unknown entries are ignored, as magnum-cluster-api ignores them.
func (d *Driver) markMachinesForDeletion(ctx context.Context, stackID, nodegroup string, nodes []string) ([]string, error) {
	var machines clusterv1.MachineList
	err := d.opts.Client.List(ctx, &machines, client.InNamespace(d.opts.Namespace),
		client.MatchingLabels{labelClusterName: stackID, labelDeploymentName: nodegroup})
	if err != nil {
		return nil, fmt.Errorf("list machines of %s: %w", nodegroup, err)
	}
	want := map[string]bool{}
	for _, n := range nodes {
		want[strings.TrimSpace(n)] = true
	}
	var marked []string
	for _, m := range machines.Items {
		if !MachineMatches(&m, want) {
			continue
		}
		patch := &clusterv1.Machine{
			TypeMeta: metav1.TypeMeta{APIVersion: apiVersionCluster, Kind: "Machine"},
			ObjectMeta: metav1.ObjectMeta{
				Name: m.Name, Namespace: m.Namespace,
				Annotations: map[string]string{annotationDeleteMachine: "yes"},
			},
		}
		u, err := toUnstructured(patch)
		if err != nil {
			return nil, err
		}
		// Only metadata is applied: the driver owns nothing else of a Machine.
		delete(u.Object, "spec")
		if err := d.opts.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u),
			client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
			return nil, fmt.Errorf("annotate machine %s: %w", m.Name, err)
		}
		marked = append(marked, m.Name)
	}
	slices.Sort(marked)
	return marked, nil
}

// MachineMatches reports whether a Machine is named by one of the entries
// of nodes_to_remove.
func MachineMatches(m *clusterv1.Machine, want map[string]bool) bool {
	if want[m.Name] {
		return true
	}
	if id := m.Spec.ProviderID; id != "" && want[path.Base(id)] {
		return true
	}
	if n := m.Status.NodeRef.Name; n != "" && want[n] {
		return true
	}
	return m.Spec.InfrastructureRef.Name != "" && want[m.Spec.InfrastructureRef.Name]
}

// UpgradeCluster implements driver.Driver (§ 8.3). It is validated
// synchronously: the new template has a kube_tag, the version does not go
// down and rises by at most one minor version. The cluster moves to the
// template, its kube_tag and the driver's current ClusterClass; every
// nodegroup (or the named non-default one) takes the template's image.
func (d *Driver) UpgradeCluster(ctx context.Context, cred driver.Credentials, st driver.ClusterState, req driver.Upgrade) (driver.Update, error) {
	stackID, err := requireStackID(st)
	if err != nil {
		return driver.Update{}, err
	}
	kubeTag := req.Template.Labels[LabelKubeTag]
	if err := ValidateUpgrade(labels(st.Cluster.Labels).str(LabelKubeTag, ""), kubeTag); err != nil {
		return driver.Update{}, err
	}
	ctx, cancel := d.withTimeout(ctx)
	defer cancel()

	cl := st.Cluster
	cl.ClusterTemplateID = req.Template.UUID
	cl.Labels = withLabel(cl.Labels, LabelKubeTag, kubeTag)
	cl.Status = ptr(magnum.StatusUpdateInProgress)
	cl.StatusReason = nil
	upd := driver.Update{Cluster: &cl}
	target, hasTarget := st.NodeGroup(req.NodeGroupUUID)
	only := hasTarget && !isDefault(target)
	for _, ng := range st.NodeGroups {
		if only && ng.UUID != target.UUID {
			continue
		}
		if strings.HasPrefix(string(statusOf(ng.Status)), "DELETE") {
			continue
		}
		if req.Template.ImageID != nil {
			ng.ImageID = ptr(*req.Template.ImageID)
		}
		ng.Labels = withLabel(ng.Labels, LabelKubeTag, kubeTag)
		ng.Status = ptr(magnum.StatusUpdateInProgress)
		ng.StatusReason = nil
		upd.NodeGroups = append(upd.NodeGroups, ng)
	}
	next := withNodeGroups(st, upd.NodeGroups)
	next.Cluster, next.Template = cl, req.Template
	for _, obj := range ClassObjects(d.opts.Namespace, d.opts.ClassVersion) {
		if err := d.apply(ctx, obj); err != nil {
			return driver.Update{}, err
		}
	}
	// The reconciled add-on set takes the new version's cloud provider
	// images (§ 8.3); the apply-once set is left alone.
	if err := d.applyAddonSets(ctx, stackID, st.Cluster.UUID, true); err != nil {
		return driver.Update{}, err
	}
	if err := d.applyAddonSecrets(ctx, cred, next, stackID, nil); err != nil {
		return driver.Update{}, err
	}
	if err := d.applyCluster(ctx, cred, next, stackID, true); err != nil {
		return driver.Update{}, err
	}
	return upd, nil
}

// ValidateUpgrade checks an upgrade from kube_tag current to target: the
// target exists, is not lower and skips no minor version (CAPI refuses a
// skip asynchronously, which left magnum-cluster-api clusters stuck in
// UPDATE_FAILED).
func ValidateUpgrade(current, target string) error {
	if target == "" {
		return magnum.Invalid("Cluster template for upgrade has no kube_tag label.")
	}
	tv, err := KubeVersion(target)
	if err != nil {
		return err
	}
	if current == "" {
		return nil
	}
	cv, err := KubeVersion(current)
	if err != nil {
		return nil //nolint:nilerr // an unparsable current tag cannot constrain the upgrade
	}
	c, _ := parseVersion(cv)
	t, _ := parseVersion(tv)
	if t.less(c) {
		return magnum.Invalid("Cannot upgrade from Kubernetes %s to the lower version %s.", cv, tv)
	}
	if t.major != c.major || t.minor > c.minor+1 {
		return magnum.Invalid("Cannot upgrade from Kubernetes %s to %s: upgrade one minor version at a time.", cv, tv)
	}
	return nil
}

// CreateNodeGroup implements driver.Driver (§ 8.4): a new MachineDeployment
// topology entry and its server group.
func (d *Driver) CreateNodeGroup(ctx context.Context, cred driver.Credentials, st driver.ClusterState, ng magnum.NodeGroup) (driver.Update, error) {
	if err := ValidateNodeGroupName(ng.Name); err != nil {
		return driver.Update{}, err
	}
	return d.nodeGroupOp(ctx, cred, st, ng, magnum.StatusCreateInProgress)
}

// UpdateNodeGroup implements driver.Driver (§ 8.4): min/max (autoscaler
// annotations), node labels and taints are re-rendered and applied. When
// the rendered entry equals the live one nothing is written and no status
// changes, as in magnum-cluster-api.
func (d *Driver) UpdateNodeGroup(ctx context.Context, cred driver.Credentials, st driver.ClusterState, ng magnum.NodeGroup) (driver.Update, error) {
	stackID, err := requireStackID(st)
	if err != nil {
		return driver.Update{}, err
	}
	ctx, cancel := d.withTimeout(ctx)
	defer cancel()
	live, err := d.getCluster(ctx, stackID)
	if err != nil {
		return driver.Update{}, err
	}
	if live != nil {
		in, err := d.input(ctx, cred, withNodeGroups(st, []magnum.NodeGroup{ng}), stackID)
		if err != nil {
			return driver.Update{}, err
		}
		healing, err := labels(st.Cluster.Labels).boolean(LabelAutoHealingEnabled, true)
		if err != nil {
			return driver.Update{}, err
		}
		want, err := MachineDeploymentTopology(in, ng, healing)
		if err != nil {
			return driver.Update{}, err
		}
		for _, md := range live.Spec.Topology.Workers.MachineDeployments {
			if md.Name == ng.Name && equality.Semantic.DeepEqual(md, want) {
				return driver.Update{}, nil
			}
		}
	}
	return d.nodeGroupOp(ctx, cred, st, ng, magnum.StatusUpdateInProgress)
}

// DeleteNodeGroup implements driver.Driver (§ 8.4): the entry leaves the
// topology; a nodegroup whose MachineDeployment and Machines are already
// gone is destroyed at once.
func (d *Driver) DeleteNodeGroup(ctx context.Context, cred driver.Credentials, st driver.ClusterState, ng magnum.NodeGroup) (driver.Update, error) {
	stackID, err := requireStackID(st)
	if err != nil {
		return driver.Update{}, err
	}
	ctx, cancel := d.withTimeout(ctx)
	defer cancel()
	upd, err := d.nodeGroupOp(ctx, cred, st, ng, magnum.StatusDeleteInProgress)
	if err != nil {
		return upd, err
	}
	gone, err := d.nodeGroupGone(ctx, stackID, ng.Name)
	if err != nil {
		return upd, err
	}
	if gone {
		d.deleteServerGroup(ctx, cred, serverGroupName(stackID, ng.Name))
		return driver.Update{Cluster: upd.Cluster, DeletedNodeGroups: []string{ng.UUID}}, nil
	}
	return upd, nil
}

func (d *Driver) nodeGroupOp(ctx context.Context, cred driver.Credentials, st driver.ClusterState, ng magnum.NodeGroup, status magnum.Status) (driver.Update, error) {
	stackID, err := requireStackID(st)
	if err != nil {
		return driver.Update{}, err
	}
	ctx, cancel := d.withTimeout(ctx)
	defer cancel()
	ng.StackID = ptr(stackID)
	ng.Status = ptr(status)
	ng.StatusReason = nil
	cl := st.Cluster
	cl.Status = ptr(magnum.StatusUpdateInProgress)
	cl.StatusReason = nil
	next := withNodeGroups(st, []magnum.NodeGroup{ng})
	next.Cluster = cl
	if err := d.applyCluster(ctx, cred, next, stackID, false); err != nil {
		return driver.Update{}, err
	}
	return driver.Update{Cluster: &cl, NodeGroups: []magnum.NodeGroup{ng}}, nil
}

// nodeGroupGone reports whether a nodegroup's MachineDeployment and all its
// Machines are gone.
func (d *Driver) nodeGroupGone(ctx context.Context, stackID, name string) (bool, error) {
	sel := client.MatchingLabels{labelClusterName: stackID, labelDeploymentName: name}
	var mds clusterv1.MachineDeploymentList
	if err := d.opts.Client.List(ctx, &mds, client.InNamespace(d.opts.Namespace), sel); err != nil {
		return false, fmt.Errorf("list machine deployments: %w", err)
	}
	var ms clusterv1.MachineList
	if err := d.opts.Client.List(ctx, &ms, client.InNamespace(d.opts.Namespace), sel); err != nil {
		return false, fmt.Errorf("list machines: %w", err)
	}
	return len(mds.Items) == 0 && len(ms.Items) == 0, nil
}

// Add-on objects removed before the Cluster (§ 8.8).
var (
	gvkCRS    = schema.GroupVersionKind{Group: groupAddons, Version: "v1beta2", Kind: "ClusterResourceSet"}
	gvkSecret = schema.GroupVersionKind{Version: "v1", Kind: "Secret"}
	gvkClust  = schema.GroupVersionKind{Group: groupCluster, Version: "v1beta2", Kind: "Cluster"}
)

// DeleteCluster implements driver.Driver (§ 8.8): first the Octavia load
// balancers that the cloud controller manager created for the cluster
// (with the caller's credentials, waiting up to PreDeleteLBTimeout for
// them to go; see deleteLoadBalancers), then the add-on sets and their
// Secrets, then the Cluster, which CAPI tears down. Objects that are
// already gone are skipped, so a cluster that never got its objects (or
// lost them) still deletes, and a DELETE after a failed one carries on.
// An error (a load balancer left, Octavia refusing) leaves the Kubernetes
// objects in place and makes the cluster DELETE_FAILED. The application
// credential, the remaining Secrets and the server groups are removed by
// PollStatus once the Cluster has gone, so that CAPO keeps its credentials
// while it cleans up.
func (d *Driver) DeleteCluster(ctx context.Context, cred driver.Credentials, st driver.ClusterState) (driver.Update, error) {
	cl := st.Cluster
	cl.Status = ptr(magnum.StatusDeleteInProgress)
	cl.StatusReason = nil
	upd := driver.Update{Cluster: &cl}
	stackID := value(st.Cluster.StackID)
	if stackID == "" {
		return upd, nil
	}
	if err := d.deleteLoadBalancers(ctx, cred, st.Cluster); err != nil {
		return driver.Update{}, err
	}
	ctx, cancel := d.withTimeout(ctx)
	defer cancel()
	ns := d.opts.Namespace
	for _, obj := range []client.Object{
		objectRef(gvkCRS, ns, stackID+SuffixCloudProvider),
		objectRef(gvkSecret, ns, stackID+SuffixCloudProvider),
		objectRef(gvkCRS, ns, st.Cluster.UUID),
		objectRef(gvkSecret, ns, st.Cluster.UUID),
		objectRef(gvkClust, ns, stackID),
	} {
		if err := d.deleteIgnoringNotFound(ctx, obj); err != nil {
			return driver.Update{}, err
		}
	}
	return upd, nil
}

// CanRotateCA implements driver.Driver: CA rotation is refused for every
// cluster. The cluster's kubeadm CAs are Magnum's CAs (§ 6.1); rotating
// them in Magnum alone makes `coe cluster config` produce credentials the
// cluster rejects, and a real rotation needs a multi-phase trust-bundle
// rollout that CAPI does not automate (§ 8.7).
func (d *Driver) CanRotateCA(driver.ClusterState) error { return driver.CARotationNotSupported() }

// RotateCA implements driver.Driver: never supported (see CanRotateCA).
func (d *Driver) RotateCA(context.Context, driver.Credentials, driver.ClusterState) (driver.Update, error) {
	return driver.Update{}, driver.CARotationNotSupported()
}

// RotateCredential implements driver.Driver (§ 6.2): a new application
// credential is created as the caller (ownership moves to the caller) and
// written to the cloud-config Secret; the old one is recorded on the
// Secret and deleted by PollStatus once CAPO has been seen working with
// the new one.
func (d *Driver) RotateCredential(ctx context.Context, cred driver.Credentials, st driver.ClusterState) (driver.Update, error) {
	stackID, err := requireStackID(st)
	if err != nil {
		return driver.Update{}, err
	}
	if d.opts.AppCredentials == nil {
		return driver.Update{}, driver.CredentialRotationNotSupported()
	}
	ctx, cancel := d.withTimeout(ctx)
	defer cancel()
	existing, err := d.getSecret(ctx, stackID+SuffixCloudConfig)
	if err != nil {
		return driver.Update{}, err
	}
	var old AppCredential
	if existing != nil {
		old, _ = appCredentialFromSecret(existing)
	}
	ac, err := d.opts.AppCredentials.Create(ctx, cred, AppCredentialName(st.Cluster.UUID, d.opts.NewSuffix()), appCredentialDescription(st.Cluster))
	if err != nil {
		return driver.Update{}, fmt.Errorf("create application credential: %w", err)
	}
	if ac.UserID == "" {
		ac.UserID = cred.UserID
	}
	s, err := CloudConfigSecret(d.opts.Namespace, stackID, st.Cluster.UUID, d.opts.Cloud, ac)
	if err != nil {
		return driver.Update{}, err
	}
	if old.ID != "" {
		s.Annotations[annotationPreviousAppCred] = old.UserID + "/" + old.ID
	}
	if err := d.apply(ctx, s); err != nil {
		// The new credential is not in use: remove it again.
		_ = d.opts.AppCredentials.Delete(ctx, ac.UserID, ac.ID)
		return driver.Update{}, err
	}
	if cred.UserID == "" || cred.UserID == st.Cluster.UserID {
		return driver.Update{}, nil
	}
	cl := st.Cluster
	cl.UserID = cred.UserID
	return driver.Update{Cluster: &cl}, nil
}

// withLabel returns a copy of m with key set to v.
func withLabel(m map[string]string, key, v string) map[string]string {
	out := make(map[string]string, len(m)+1)
	for k, x := range m {
		out[k] = x
	}
	out[key] = v
	return out
}
