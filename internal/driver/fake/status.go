package fake

import (
	"context"
	"slices"
	"strings"

	"github.com/openkeel/openkeel-magnum/internal/driver"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

const (
	suffixInProgress = "_IN_PROGRESS"
	suffixComplete   = "_COMPLETE"
	suffixFailed     = "_FAILED"
)

// PollStatus implements driver.Driver. It completes (or fails) the pending
// operation of the cluster once the delay has passed, and changes nothing
// otherwise.
func (d *Driver) PollStatus(ctx context.Context, _ driver.Credentials, st driver.ClusterState) (driver.Update, error) {
	if err := ctx.Err(); err != nil {
		return driver.Update{}, err
	}
	cl := st.Cluster
	status := statusValue(cl.Status)
	clusterBusy := strings.HasSuffix(status, suffixInProgress)
	var busy []magnum.NodeGroup
	for _, ng := range st.NodeGroups {
		if strings.HasSuffix(statusValue(ng.Status), suffixInProgress) {
			busy = append(busy, ng)
		}
	}

	d.mu.Lock()
	defer d.mu.Unlock()
	if status == statusDeleteComplete {
		d.forgetLocked(st)
		return driver.Update{}, nil
	}
	if !clusterBusy && len(busy) == 0 {
		// The pending operation, if any, has not been saved yet: keep it
		// for the next poll.
		return driver.Update{}, nil
	}
	op := d.ops[cl.UUID]
	if op != nil && d.clock().Before(op.start.Add(d.delay)) {
		return driver.Update{}, nil
	}
	if op == nil {
		// The operation was started by another process serving the same
		// database (the API beside this reconciler): what this process
		// remembers of the nodes may be stale, the rows are the truth.
		for _, ng := range busy {
			delete(d.nodes, ng.UUID)
		}
	}
	kind, targets, failLabels := inferOperation(op, status, busy)
	fail := hasOp(cl.Labels[LabelFail], kind)
	reason := failReason(cl.Labels, kind)
	if !fail && failLabels != nil && hasOp(failLabels[LabelFail], kind) {
		fail, reason = true, failReason(failLabels, kind)
	}
	delete(d.ops, cl.UUID)

	var upd driver.Update
	if clusterBusy && action(status) == "DELETE" {
		if fail {
			cl.Status = statusPtr("DELETE" + suffixFailed)
			cl.StatusReason = ptr(reason)
			upd.Cluster = &cl
			return upd, nil
		}
		cl.Status = statusPtr(statusDeleteComplete)
		cl.StatusReason = nil
		upd.Cluster = &cl
		d.forgetLocked(st)
		return upd, nil
	}

	coe := coeVersion(st)
	deleted := map[string]bool{}
	anyFailed := false
	for _, ng := range busy {
		act := action(statusValue(ng.Status))
		if fail && (len(targets) == 0 || slices.Contains(targets, ng.UUID)) {
			ng.Status = statusPtr(act + suffixFailed)
			ng.StatusReason = ptr(reason)
			upd.NodeGroups = append(upd.NodeGroups, ng)
			anyFailed = true
			continue
		}
		if act == "DELETE" {
			delete(d.nodes, ng.UUID)
			if ng.IsDefault == nil || !*ng.IsDefault {
				deleted[ng.UUID] = true
				upd.DeletedNodeGroups = append(upd.DeletedNodeGroups, ng.UUID)
				continue
			}
			ng.Status = statusPtr(statusDeleteComplete)
			ng.StatusReason = nil
			ng.NodeAddresses = []string{}
			upd.NodeGroups = append(upd.NodeGroups, ng)
			continue
		}
		m := d.membershipLocked(cl, ng)
		if n := intValue(ng.NodeCount); len(m.indices) != n {
			// The row's node_count wins over a membership recovered from
			// node_addresses after a restart.
			m.indices, m.next = resizeIndices(cl, ng, m.indices, m.next, n, nil)
		}
		ng.Status = statusPtr(act + suffixComplete)
		ng.StatusReason = nil
		ng.NodeAddresses = addresses(cl, ng, m.indices)
		ng.Version = ptr(coe)
		upd.NodeGroups = append(upd.NodeGroups, ng)
	}

	if clusterBusy || anyFailed {
		act := action(status)
		if !clusterBusy {
			// A nodegroup operation failed while the cluster row was
			// already complete: Magnum marks the cluster UPDATE_FAILED.
			act = "UPDATE"
		}
		if fail {
			cl.Status = statusPtr(act + suffixFailed)
			cl.StatusReason = ptr(reason)
		} else {
			cl.Status = statusPtr(act + suffixComplete)
			cl.StatusReason = nil
			cl.StackID = ptr(stackID(cl.UUID))
			cl.APIAddress = ptr(apiAddress(cl.UUID))
			cl.COEVersion = ptr(coe)
			cl.HealthStatus = ptr(healthHealthy)
			cl.HealthStatusReason = d.healthReasonLocked(st, deleted)
		}
		upd.Cluster = &cl
	}
	return upd, nil
}

// inferOperation returns the kind of the pending operation, the nodegroups
// it targets (empty: all) and the nodegroup labels that can fail it. Without
// an in-memory record (after a restart) the kind is derived from the
// statuses.
func inferOperation(op *operation, status string, busy []magnum.NodeGroup) (string, []string, map[string]string) {
	if op != nil {
		return op.kind, op.nodegroups, op.failLabels
	}
	if strings.HasSuffix(status, suffixInProgress) {
		return strings.ToLower(action(status)), nil, nil
	}
	// Only nodegroups are in progress: a nodegroup operation.
	ng := busy[0]
	return "nodegroup_" + strings.ToLower(action(statusValue(ng.Status))), []string{ng.UUID}, ng.Labels
}

// healthReasonLocked builds health_status_reason in the CAPI driver's
// format: one "<node>.Ready" key per node, plus "api".
func (d *Driver) healthReasonLocked(st driver.ClusterState, deleted map[string]bool) map[string]string {
	reason := map[string]string{"api": "ok"}
	for _, ng := range st.NodeGroups {
		if deleted[ng.UUID] || strings.HasPrefix(statusValue(ng.Status), "DELETE") {
			continue
		}
		for _, i := range d.membershipLocked(st.Cluster, ng).indices {
			reason[NodeOf(st.Cluster, ng, i).Name+".Ready"] = "True"
		}
	}
	return reason
}

// forgetLocked drops everything the driver remembers about a cluster.
func (d *Driver) forgetLocked(st driver.ClusterState) {
	delete(d.ops, st.Cluster.UUID)
	delete(d.credentialRotations, st.Cluster.UUID)
	for _, ng := range st.NodeGroups {
		delete(d.nodes, ng.UUID)
	}
}

// coeVersion is the cluster label kube_tag, else the template's, else the
// default.
func coeVersion(st driver.ClusterState) string {
	if v := st.Cluster.Labels["kube_tag"]; v != "" {
		return v
	}
	if v := st.Template.Labels["kube_tag"]; v != "" {
		return v
	}
	return DefaultKubeTag
}

// action is the prefix of a status: "CREATE" for CREATE_IN_PROGRESS.
func action(status string) string {
	for _, s := range []string{suffixInProgress, suffixComplete, suffixFailed} {
		if a, ok := strings.CutSuffix(status, s); ok {
			return a
		}
	}
	return status
}

func value(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func statusPtr(s string) *magnum.Status {
	v := magnum.Status(s)
	return &v
}

func statusValue(p *magnum.Status) string {
	if p == nil {
		return ""
	}
	return string(*p)
}
