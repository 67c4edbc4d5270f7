package fake

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/openkeel/openkeel-magnum/internal/driver"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// Name is the driver's entry-point name, stored in cluster_template.driver.
const Name = "fake"

// DefaultKubeTag is the coe_version reported when neither the cluster nor
// the template has a kube_tag label.
const DefaultKubeTag = "v1.31.1"

// Operation names, as used by the fake_fail and fake_error labels.
const (
	OpCreate          = "create"
	OpUpdate          = "update"
	OpDelete          = "delete"
	OpResize          = "resize"
	OpUpgrade         = "upgrade"
	OpNodeGroupCreate = "nodegroup_create"
	OpNodeGroupUpdate = "nodegroup_update"
	OpNodeGroupDelete = "nodegroup_delete"
	OpRotateCA        = "rotate_ca"
)

// Labels read by the driver.
const (
	LabelFail                 = "fake_fail"
	LabelFailReason           = "fake_fail_reason"
	LabelError                = "fake_error"
	LabelNoCARotation         = "fake_no_ca_rotation"
	LabelNoCredentialRotation = "fake_no_credential_rotation"
)

// Magnum's status and health values used by the driver (rows hold them as
// plain strings).
const (
	statusCreateInProgress = string(magnum.StatusCreateInProgress)
	statusUpdateInProgress = string(magnum.StatusUpdateInProgress)
	statusDeleteInProgress = string(magnum.StatusDeleteInProgress)
	statusDeleteComplete   = string(magnum.StatusDeleteComplete)
	healthHealthy          = string(magnum.HealthHealthy)
	roleMaster             = magnum.RoleMaster
)

// Options configures a Driver.
type Options struct {
	// Clock returns the current time; time.Now when nil.
	Clock func() time.Time
	// Delay is how long an operation stays *_IN_PROGRESS before a poll
	// completes it. Zero completes it on the next poll.
	Delay time.Duration
}

// Driver is the fake driver. The zero value is not usable; use New.
type Driver struct {
	mu    sync.Mutex
	clock func() time.Time
	delay time.Duration
	// ops holds the pending operation of each cluster, by cluster UUID.
	ops map[string]*operation
	// nodes holds the node membership of each nodegroup, by nodegroup UUID.
	nodes map[string]*membership
	// credentialRotations counts RotateCredential calls, by cluster UUID.
	credentialRotations map[string]int
}

// operation is the last operation started on a cluster.
type operation struct {
	kind  string
	start time.Time
	// nodegroups are the UUIDs of the nodegroups the operation targets;
	// empty means all the nodegroups in progress.
	nodegroups []string
	// failLabels are the labels of the targeted nodegroup for nodegroup
	// operations (nil otherwise).
	failLabels map[string]string
}

// membership is the set of node indices of a nodegroup.
type membership struct {
	indices []int
	next    int
}

var _ driver.Driver = (*Driver)(nil)

// New returns a fake driver.
func New(opts Options) *Driver {
	d := &Driver{
		clock:               opts.Clock,
		delay:               opts.Delay,
		ops:                 map[string]*operation{},
		nodes:               map[string]*membership{},
		credentialRotations: map[string]int{},
	}
	if d.clock == nil {
		d.clock = time.Now
	}
	return d
}

func init() {
	driver.Register(New(Options{}))
}

// OverrideClock replaces the clock (for tests and all-in-one wiring).
func (d *Driver) OverrideClock(clock func() time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.clock = clock
}

// OverrideDelay replaces the delay of later polls.
func (d *Driver) OverrideDelay(delay time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.delay = delay
}

// CredentialRotations reports how many times RotateCredential succeeded for
// a cluster.
func (d *Driver) CredentialRotations(clusterUUID string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.credentialRotations[clusterUUID]
}

// Nodes returns the simulated nodes of a nodegroup as the driver currently
// sees them (recovered from node_addresses when it has no record).
func (d *Driver) Nodes(cl magnum.Cluster, ng magnum.NodeGroup) []Node {
	d.mu.Lock()
	defer d.mu.Unlock()
	m := d.membershipLocked(cl, ng)
	out := make([]Node, len(m.indices))
	for k, i := range m.indices {
		out[k] = NodeOf(cl, ng, i)
	}
	return out
}

// Name implements driver.Driver.
func (d *Driver) Name() string { return Name }

// Beta implements driver.Driver. The fake driver is a beta driver so that a
// production deployment never selects it by tuple or as the alphabetically
// first driver: it is used only where `[drivers]/enabled_beta_drivers` lists
// it (all-in-one does) or a template names it explicitly.
func (d *Driver) Beta() bool { return true }

// Provides implements driver.Driver.
func (d *Driver) Provides() []driver.Target {
	oses := []string{"centos", "debian", "fedora-atomic", "fedora-coreos", "flatcar", "rockylinux", "ubuntu", "ubuntu-focal"}
	out := make([]driver.Target, len(oses))
	for i, os := range oses {
		out[i] = driver.Target{ServerType: "vm", OS: os, COE: "kubernetes"}
	}
	return out
}

// Description implements driver.Driver.
func (d *Driver) Description() string {
	return "In-memory simulation of the cluster lifecycle, for tests and all-in-one"
}

// ValidateMasterSize implements driver.Driver with the base rule.
func (d *Driver) ValidateMasterSize(count int) error { return driver.ValidateMasterSize(count) }

// ValidateMasterResize implements driver.Driver: like the CAPI driver, the
// master nodegroup may be resized to an odd count ≥ 1.
func (d *Driver) ValidateMasterResize(count int) error { return driver.ValidateMasterSize(count) }

// CreateCluster implements driver.Driver.
func (d *Driver) CreateCluster(ctx context.Context, _ driver.Credentials, st driver.ClusterState, _ time.Duration) (driver.Update, error) {
	if err := begin(ctx, st.Cluster.Labels, OpCreate); err != nil {
		return driver.Update{}, err
	}
	stack := stackID(st.Cluster.UUID)
	cl := st.Cluster
	cl.StackID = ptr(stack)
	cl.Status = statusPtr(statusCreateInProgress)
	cl.StatusReason = nil
	upd := driver.Update{Cluster: &cl}

	d.mu.Lock()
	defer d.mu.Unlock()
	for _, ng := range st.NodeGroups {
		ng.StackID = ptr(stack)
		ng.Status = statusPtr(statusCreateInProgress)
		upd.NodeGroups = append(upd.NodeGroups, ng)
		n := intValue(ng.NodeCount)
		d.nodes[ng.UUID] = &membership{indices: seq(0, n), next: n}
	}
	d.startLocked(cl.UUID, OpCreate, nil, nil)
	return upd, nil
}

// UpdateCluster implements driver.Driver: the default worker nodegroup is
// resized to the node_count already stored in its row.
func (d *Driver) UpdateCluster(ctx context.Context, _ driver.Credentials, st driver.ClusterState) (driver.Update, error) {
	if err := begin(ctx, st.Cluster.Labels, OpUpdate); err != nil {
		return driver.Update{}, err
	}
	worker, ok := defaultWorker(st.NodeGroups)
	if !ok {
		return driver.Update{}, errors.New("fake driver: cluster has no default worker nodegroup")
	}
	return d.resize(st, worker, intValue(worker.NodeCount), nil, OpUpdate), nil
}

// ResizeCluster implements driver.Driver.
func (d *Driver) ResizeCluster(ctx context.Context, _ driver.Credentials, st driver.ClusterState, req driver.Resize) (driver.Update, error) {
	if err := begin(ctx, st.Cluster.Labels, OpResize); err != nil {
		return driver.Update{}, err
	}
	ng, ok := st.NodeGroup(req.NodeGroupUUID)
	if !ok {
		return driver.Update{}, fmt.Errorf("fake driver: nodegroup %s is not part of cluster %s", req.NodeGroupUUID, st.Cluster.UUID)
	}
	toRemove := req.NodesToRemove
	if ng.Role != nil && *ng.Role == roleMaster {
		// As with the CAPI driver, nodes_to_remove does not apply to the
		// control plane.
		toRemove = nil
	}
	return d.resize(st, ng, req.NodeCount, toRemove, OpResize), nil
}

func (d *Driver) resize(st driver.ClusterState, ng magnum.NodeGroup, count int, toRemove []string, kind string) driver.Update {
	cl := st.Cluster
	cl.Status = statusPtr(statusUpdateInProgress)
	cl.StatusReason = nil
	ng.NodeCount = ptr(count)
	ng.Status = statusPtr(statusUpdateInProgress)
	ng.StatusReason = nil

	d.mu.Lock()
	defer d.mu.Unlock()
	m := d.membershipLocked(st.Cluster, ng)
	if len(toRemove) > 0 {
		// The removed nodes leave the row at once, so that another process
		// serving the same database (the reconciler beside the API) knows
		// which nodes went; their replacements appear when the poll
		// completes the operation.
		kept, _ := resizeIndices(st.Cluster, ng, m.indices, m.next, -1, toRemove)
		if len(kept) != len(m.indices) {
			ng.NodeAddresses = addresses(st.Cluster, ng, kept)
		}
	}
	m.indices, m.next = resizeIndices(st.Cluster, ng, m.indices, m.next, count, toRemove)
	d.startLocked(cl.UUID, kind, []string{ng.UUID}, nil)
	return driver.Update{Cluster: &cl, NodeGroups: []magnum.NodeGroup{ng}}
}

// UpgradeCluster implements driver.Driver: the cluster moves to the new
// template and its kube_tag; the given nodegroup (or every nodegroup) takes
// the template's image and kube_tag.
func (d *Driver) UpgradeCluster(ctx context.Context, _ driver.Credentials, st driver.ClusterState, req driver.Upgrade) (driver.Update, error) {
	if err := begin(ctx, st.Cluster.Labels, OpUpgrade); err != nil {
		return driver.Update{}, err
	}
	kubeTag, hasTag := req.Template.Labels["kube_tag"]
	cl := st.Cluster
	cl.ClusterTemplateID = req.Template.UUID
	if hasTag {
		cl.Labels = withLabel(cl.Labels, "kube_tag", kubeTag)
	}
	cl.Status = statusPtr(statusUpdateInProgress)
	cl.StatusReason = nil
	upd := driver.Update{Cluster: &cl}
	var targets []string
	for _, ng := range st.NodeGroups {
		if req.NodeGroupUUID != "" && ng.UUID != req.NodeGroupUUID {
			continue
		}
		if req.Template.ImageID != nil {
			ng.ImageID = ptr(*req.Template.ImageID)
		}
		if hasTag {
			ng.Labels = withLabel(ng.Labels, "kube_tag", kubeTag)
		}
		ng.Status = statusPtr(statusUpdateInProgress)
		ng.StatusReason = nil
		upd.NodeGroups = append(upd.NodeGroups, ng)
		targets = append(targets, ng.UUID)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.startLocked(cl.UUID, OpUpgrade, targets, nil)
	return upd, nil
}

// DeleteCluster implements driver.Driver.
func (d *Driver) DeleteCluster(ctx context.Context, _ driver.Credentials, st driver.ClusterState) (driver.Update, error) {
	if err := begin(ctx, st.Cluster.Labels, OpDelete); err != nil {
		return driver.Update{}, err
	}
	cl := st.Cluster
	cl.Status = statusPtr(statusDeleteInProgress)
	cl.StatusReason = nil
	d.mu.Lock()
	defer d.mu.Unlock()
	d.startLocked(cl.UUID, OpDelete, nil, nil)
	return driver.Update{Cluster: &cl}, nil
}

// CreateNodeGroup implements driver.Driver.
func (d *Driver) CreateNodeGroup(ctx context.Context, _ driver.Credentials, st driver.ClusterState, ng magnum.NodeGroup) (driver.Update, error) {
	if err := beginNodeGroup(ctx, st.Cluster.Labels, ng.Labels, OpNodeGroupCreate); err != nil {
		return driver.Update{}, err
	}
	ng.StackID = ptr(stackID(st.Cluster.UUID))
	ng.Status = statusPtr(statusCreateInProgress)
	ng.StatusReason = nil
	d.mu.Lock()
	defer d.mu.Unlock()
	n := intValue(ng.NodeCount)
	d.nodes[ng.UUID] = &membership{indices: seq(0, n), next: n}
	return d.nodeGroupOpLocked(st, ng, OpNodeGroupCreate), nil
}

// UpdateNodeGroup implements driver.Driver.
func (d *Driver) UpdateNodeGroup(ctx context.Context, _ driver.Credentials, st driver.ClusterState, ng magnum.NodeGroup) (driver.Update, error) {
	if err := beginNodeGroup(ctx, st.Cluster.Labels, ng.Labels, OpNodeGroupUpdate); err != nil {
		return driver.Update{}, err
	}
	ng.Status = statusPtr(statusUpdateInProgress)
	ng.StatusReason = nil
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.nodeGroupOpLocked(st, ng, OpNodeGroupUpdate), nil
}

// DeleteNodeGroup implements driver.Driver.
func (d *Driver) DeleteNodeGroup(ctx context.Context, _ driver.Credentials, st driver.ClusterState, ng magnum.NodeGroup) (driver.Update, error) {
	if err := beginNodeGroup(ctx, st.Cluster.Labels, ng.Labels, OpNodeGroupDelete); err != nil {
		return driver.Update{}, err
	}
	ng.Status = statusPtr(statusDeleteInProgress)
	ng.StatusReason = nil
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.nodeGroupOpLocked(st, ng, OpNodeGroupDelete), nil
}

func (d *Driver) nodeGroupOpLocked(st driver.ClusterState, ng magnum.NodeGroup, kind string) driver.Update {
	cl := st.Cluster
	cl.Status = statusPtr(statusUpdateInProgress)
	cl.StatusReason = nil
	d.startLocked(cl.UUID, kind, []string{ng.UUID}, ng.Labels)
	return driver.Update{Cluster: &cl, NodeGroups: []magnum.NodeGroup{ng}}
}

// CanRotateCA implements driver.Driver: supported unless the cluster has
// the label fake_no_ca_rotation=true.
func (d *Driver) CanRotateCA(st driver.ClusterState) error {
	if isTrue(st.Cluster.Labels[LabelNoCARotation]) {
		return driver.CARotationNotSupported()
	}
	return nil
}

// RotateCA implements driver.Driver.
func (d *Driver) RotateCA(ctx context.Context, _ driver.Credentials, st driver.ClusterState) (driver.Update, error) {
	if err := d.CanRotateCA(st); err != nil {
		return driver.Update{}, err
	}
	if err := begin(ctx, st.Cluster.Labels, OpRotateCA); err != nil {
		return driver.Update{}, err
	}
	cl := st.Cluster
	cl.Status = statusPtr(statusUpdateInProgress)
	cl.StatusReason = nil
	d.mu.Lock()
	defer d.mu.Unlock()
	d.startLocked(cl.UUID, OpRotateCA, nil, nil)
	return driver.Update{Cluster: &cl}, nil
}

// RotateCredential implements driver.Driver: it changes no row (Magnum
// changes no status either) and counts the rotation.
func (d *Driver) RotateCredential(ctx context.Context, _ driver.Credentials, st driver.ClusterState) (driver.Update, error) {
	if err := ctx.Err(); err != nil {
		return driver.Update{}, err
	}
	if isTrue(st.Cluster.Labels[LabelNoCredentialRotation]) {
		return driver.Update{}, driver.CredentialRotationNotSupported()
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.credentialRotations[st.Cluster.UUID]++
	return driver.Update{}, nil
}

// startLocked records a new operation on a cluster. A later operation
// replaces an earlier one that has not completed yet; the nodegroups of
// both stay in progress until the poll completes them.
func (d *Driver) startLocked(clusterUUID, kind string, nodegroups []string, ngLabels map[string]string) {
	d.ops[clusterUUID] = &operation{kind: kind, start: d.clock(), nodegroups: nodegroups, failLabels: ngLabels}
}

// membershipLocked returns the node membership of a nodegroup, recovering
// it from the row when the driver has no record.
func (d *Driver) membershipLocked(cl magnum.Cluster, ng magnum.NodeGroup) *membership {
	m, ok := d.nodes[ng.UUID]
	if !ok {
		idx := recoverIndices(cl, ng)
		next := 0
		if len(idx) > 0 {
			next = idx[len(idx)-1] + 1
		}
		m = &membership{indices: idx, next: next}
		d.nodes[ng.UUID] = m
	}
	return m
}

// begin checks the context and the fake_error label of an operation.
func begin(ctx context.Context, labels map[string]string, op string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if hasOp(labels[LabelError], op) {
		return errors.New(failReason(labels, op))
	}
	return nil
}

func beginNodeGroup(ctx context.Context, clusterLabels, ngLabels map[string]string, op string) error {
	if err := begin(ctx, clusterLabels, op); err != nil {
		return err
	}
	if hasOp(ngLabels[LabelError], op) {
		return errors.New(failReason(ngLabels, op))
	}
	return nil
}

// hasOp reports whether a comma-separated label value lists op.
func hasOp(value, op string) bool {
	for v := range strings.SplitSeq(value, ",") {
		if strings.TrimSpace(v) == op {
			return true
		}
	}
	return false
}

func failReason(labels map[string]string, op string) string {
	if r := labels[LabelFailReason]; r != "" {
		return r
	}
	return fmt.Sprintf("fake driver: injected %s failure", op)
}

func isTrue(v string) bool {
	return strings.EqualFold(strings.TrimSpace(v), "true")
}

func defaultWorker(ngs []magnum.NodeGroup) (magnum.NodeGroup, bool) {
	for _, ng := range ngs {
		if ng.IsDefault != nil && *ng.IsDefault && (ng.Role == nil || *ng.Role != roleMaster) {
			return ng, true
		}
	}
	return magnum.NodeGroup{}, false
}

// withLabel returns a copy of labels with key set to value (the input map
// belongs to the caller's row and is not modified).
func withLabel(labels map[string]string, key, value string) map[string]string {
	out := make(map[string]string, len(labels)+1)
	for k, v := range labels {
		out[k] = v
	}
	out[key] = value
	return out
}

func ptr[T any](v T) *T { return &v }
