package magnum

// Status is a cluster, nodegroup or federation status; the value is the wire
// string (magnum/objects/fields.py).
type Status string

// Cluster and nodegroup statuses (ClusterStatus, 18 values).
const (
	StatusCreateInProgress   Status = "CREATE_IN_PROGRESS"
	StatusCreateFailed       Status = "CREATE_FAILED"
	StatusCreateComplete     Status = "CREATE_COMPLETE"
	StatusUpdateInProgress   Status = "UPDATE_IN_PROGRESS"
	StatusUpdateFailed       Status = "UPDATE_FAILED"
	StatusUpdateComplete     Status = "UPDATE_COMPLETE"
	StatusDeleteInProgress   Status = "DELETE_IN_PROGRESS"
	StatusDeleteFailed       Status = "DELETE_FAILED"
	StatusDeleteComplete     Status = "DELETE_COMPLETE"
	StatusResumeComplete     Status = "RESUME_COMPLETE"
	StatusResumeFailed       Status = "RESUME_FAILED"
	StatusRestoreComplete    Status = "RESTORE_COMPLETE"
	StatusRollbackInProgress Status = "ROLLBACK_IN_PROGRESS"
	StatusRollbackFailed     Status = "ROLLBACK_FAILED"
	StatusRollbackComplete   Status = "ROLLBACK_COMPLETE"
	StatusSnapshotComplete   Status = "SNAPSHOT_COMPLETE"
	StatusCheckComplete      Status = "CHECK_COMPLETE"
	StatusAdoptComplete      Status = "ADOPT_COMPLETE"
)

// ClusterStatuses lists every ClusterStatus value in Magnum's order.
var ClusterStatuses = []Status{
	StatusCreateInProgress, StatusCreateFailed, StatusCreateComplete,
	StatusUpdateInProgress, StatusUpdateFailed, StatusUpdateComplete,
	StatusDeleteInProgress, StatusDeleteFailed, StatusDeleteComplete,
	StatusResumeComplete, StatusResumeFailed, StatusRestoreComplete,
	StatusRollbackInProgress, StatusRollbackFailed, StatusRollbackComplete,
	StatusSnapshotComplete, StatusCheckComplete, StatusAdoptComplete,
}

// FederationStatuses lists every FederationStatus value.
var FederationStatuses = []Status{
	StatusCreateInProgress, StatusCreateFailed, StatusCreateComplete,
	StatusUpdateInProgress, StatusUpdateFailed, StatusUpdateComplete,
	StatusDeleteInProgress, StatusDeleteFailed, StatusDeleteComplete,
}

// ValidClusterStatus reports whether s is a ClusterStatus value.
func ValidClusterStatus(s Status) bool {
	for _, x := range ClusterStatuses {
		if x == s {
			return true
		}
	}
	return false
}

// ValidFederationStatus reports whether s is a FederationStatus value.
func ValidFederationStatus(s Status) bool {
	for _, x := range FederationStatuses {
		if x == s {
			return true
		}
	}
	return false
}

// completeStatuses is the "*_COMPLETE" list the conductor guards use. It
// does not contain DELETE_COMPLETE.
var completeStatuses = map[Status]bool{
	StatusCreateComplete: true, StatusUpdateComplete: true, StatusResumeComplete: true,
	StatusRestoreComplete: true, StatusRollbackComplete: true, StatusSnapshotComplete: true,
	StatusCheckComplete: true, StatusAdoptComplete: true,
}

// IsComplete reports whether s is one of the *_COMPLETE statuses the
// conductor guards accept (DELETE_COMPLETE excluded).
func IsComplete(s Status) bool { return completeStatuses[s] }

// CanUpdate reports whether a cluster PATCH (node_count, health) may proceed
// (magnum/conductor/handlers/cluster_conductor.py:94).
func CanUpdate(s Status) bool { return IsComplete(s) }

// CanResize reports whether a resize may proceed: the complete statuses plus
// UPDATE_IN_PROGRESS and UPDATE_FAILED, for the autoscaler
// (cluster_conductor.py:205).
func CanResize(s Status) bool {
	return IsComplete(s) || s == StatusUpdateInProgress || s == StatusUpdateFailed
}

// CanUpgrade reports whether an upgrade may proceed (cluster_conductor.py:271).
func CanUpgrade(s Status) bool { return IsComplete(s) }

// CanRotateCA reports whether a CA rotation may proceed (ca_conductor.py:73).
func CanRotateCA(s Status) bool { return IsComplete(s) }

// CanRotateCredential reports whether a credential rotation may proceed
// (credential_conductor.py:26).
func CanRotateCredential(s Status) bool {
	return IsComplete(s) || s == StatusUpdateInProgress || s == StatusUpdateFailed
}

// CanCreateNodeGroup reports whether a nodegroup create may proceed; an empty
// status (the client sent none) is accepted (nodegroup_conductor.py:37).
func CanCreateNodeGroup(s Status) bool {
	return s == "" || IsComplete(s) || s == StatusUpdateInProgress || s == StatusUpdateFailed
}

// CanUpdateNodeGroup reports whether a nodegroup update may proceed
// (nodegroup_conductor.py:94).
func CanUpdateNodeGroup(s Status) bool { return CanCreateNodeGroup(s) }

// IsInProgress reports whether s is one of the statuses the status poller
// follows.
func IsInProgress(s Status) bool {
	switch s {
	case StatusCreateInProgress, StatusUpdateInProgress, StatusDeleteInProgress, StatusRollbackInProgress:
		return true
	}
	return false
}

// IsFailed reports whether s ends in _FAILED.
func IsFailed(s Status) bool {
	n := len(s)
	return n >= 7 && s[n-7:] == "_FAILED"
}

// FaultStatuses are the cluster statuses for which GET /clusters/{id} shows
// the nodegroups' faults.
var FaultStatuses = []Status{StatusCreateFailed, StatusUpdateFailed, StatusDeleteFailed, StatusRollbackFailed, StatusResumeFailed}

// HealthStatus is a cluster health status.
type HealthStatus string

// Health statuses.
const (
	HealthHealthy   HealthStatus = "HEALTHY"
	HealthUnhealthy HealthStatus = "UNHEALTHY"
	HealthUnknown   HealthStatus = "UNKNOWN"
)

// HealthStatuses lists the health statuses.
var HealthStatuses = []HealthStatus{HealthHealthy, HealthUnhealthy, HealthUnknown}

// ValidHealthStatus reports whether s is a health status.
func ValidHealthStatus(s HealthStatus) bool {
	return s == HealthHealthy || s == HealthUnhealthy || s == HealthUnknown
}

// COE is a container orchestration engine; Magnum 23.0.0 knows only one.
type COE string

// COEKubernetes is the only COE.
const COEKubernetes COE = "kubernetes"

// COEs lists the COE enum values.
var COEs = []COE{COEKubernetes}

// ServerType is a template server type.
type ServerType string

// Server types.
const (
	ServerTypeVM ServerType = "vm"
	ServerTypeBM ServerType = "bm"
)

// ServerTypes lists the server_type enum values.
var ServerTypes = []ServerType{ServerTypeVM, ServerTypeBM}

// Nodegroup roles with a meaning; any other role is a worker.
const (
	RoleMaster = "master"
	RoleWorker = "worker"
)

// Quota resources.
const QuotaResourceCluster = "Cluster"

// Taint effects accepted on node_taints.
var TaintEffects = []string{"NoSchedule", "PreferNoSchedule", "NoExecute"}
