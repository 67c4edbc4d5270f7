//! The statuses a driver may report for a row, by the operation its call is
//! part of: the transitions Magnum's conductor and Heat made, written once.
//!
//! A driver answers with full copies of the rows it changed. Before anything
//! is saved, the host checks every status in the answer against this table:
//! an operation moves its rows through its own `*_IN_PROGRESS`,
//! `*_COMPLETE` and `*_FAILED` (a create through `CREATE_*`, a delete
//! through `DELETE_*`, every other change of a cluster through `UPDATE_*`),
//! a status poll carries a row on along the operation it is in, and nothing
//! else moves. `DELETE_COMPLETE` of a cluster, after which the host removes
//! the cluster and its certificates, is only taken for a cluster being
//! deleted.
//!
//! Magnum: magnum/conductor/handlers/cluster_conductor.py and
//! nodegroup_conductor.py (the status each operation writes before it calls
//! the driver), magnum/drivers/heat/driver.py (`_sync_cluster_status`: the
//! stack's `<ACTION>_<STATE>` copied to the cluster).

use crate::Status;

/// The operation a driver call is part of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operation {
    /// `create-cluster`.
    CreateCluster,
    /// `update-cluster`, `resize-cluster`, `upgrade-cluster`: a change of
    /// the cluster and of its nodegroups.
    UpdateCluster,
    /// `delete-cluster`.
    DeleteCluster,
    /// `rotate-ca`.
    RotateCa,
    /// `rotate-credential`: Magnum changes no status.
    RotateCredential,
    /// `create-nodegroup` of the nodegroup the call is about.
    CreateNodeGroup,
    /// `update-nodegroup` of the nodegroup the call is about.
    UpdateNodeGroup,
    /// `delete-nodegroup` of the nodegroup the call is about.
    DeleteNodeGroup,
    /// `poll-status` and `derive-status`: what happened since.
    Status,
}

impl Operation {
    /// The name used in messages (`create`, `status poll`).
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::CreateCluster => "cluster create",
            Operation::UpdateCluster => "cluster update",
            Operation::DeleteCluster => "cluster delete",
            Operation::RotateCa => "CA rotation",
            Operation::RotateCredential => "credential rotation",
            Operation::CreateNodeGroup => "nodegroup create",
            Operation::UpdateNodeGroup => "nodegroup update",
            Operation::DeleteNodeGroup => "nodegroup delete",
            Operation::Status => "status poll",
        }
    }
}

/// The row a reported status is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Row {
    /// The cluster.
    Cluster,
    /// One of its nodegroups; `target` when it is the nodegroup a nodegroup
    /// operation is about.
    NodeGroup { target: bool },
}

/// The three statuses of one kind of operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Create,
    Update,
    Delete,
    Rollback,
}

impl Phase {
    /// The phase whose `*_IN_PROGRESS` `s` is.
    fn in_progress(s: Option<Status>) -> Option<Phase> {
        match s? {
            Status::CreateInProgress => Some(Phase::Create),
            Status::UpdateInProgress => Some(Phase::Update),
            Status::DeleteInProgress => Some(Phase::Delete),
            Status::RollbackInProgress => Some(Phase::Rollback),
            _ => None,
        }
    }

    fn statuses(self) -> [Status; 3] {
        match self {
            Phase::Create => [
                Status::CreateInProgress,
                Status::CreateComplete,
                Status::CreateFailed,
            ],
            Phase::Update => [
                Status::UpdateInProgress,
                Status::UpdateComplete,
                Status::UpdateFailed,
            ],
            Phase::Delete => [
                Status::DeleteInProgress,
                Status::DeleteComplete,
                Status::DeleteFailed,
            ],
            Phase::Rollback => [
                Status::RollbackInProgress,
                Status::RollbackComplete,
                Status::RollbackFailed,
            ],
        }
    }
}

/// Whether a driver answering for `op` may set `row` from `current` to
/// `reported`; `cluster` is the cluster's status as the host read it before
/// the call. Reporting the status a row already has is always allowed;
/// clearing a status never is.
pub fn driver_may_report(
    op: Operation,
    row: Row,
    cluster: Option<Status>,
    current: Option<Status>,
    reported: Option<Status>,
) -> bool {
    if reported == current {
        return true;
    }
    let Some(reported) = reported else {
        return false;
    };
    if row == Row::Cluster
        && reported == Status::DeleteComplete
        && current != Some(Status::DeleteInProgress)
    {
        return false;
    }
    let mut phases: Vec<Phase> = Vec::with_capacity(3);
    match (op, row) {
        (Operation::CreateCluster, _) => phases.push(Phase::Create),
        (Operation::DeleteCluster, _) => phases.push(Phase::Delete),
        (Operation::UpdateCluster | Operation::RotateCa, _) => phases.push(Phase::Update),
        (Operation::RotateCredential, _) => {}
        (
            Operation::CreateNodeGroup | Operation::UpdateNodeGroup | Operation::DeleteNodeGroup,
            Row::Cluster,
        ) => phases.push(Phase::Update),
        (Operation::CreateNodeGroup, Row::NodeGroup { target: true }) => phases.push(Phase::Create),
        (Operation::UpdateNodeGroup, Row::NodeGroup { target: true }) => phases.push(Phase::Update),
        (Operation::DeleteNodeGroup, Row::NodeGroup { target: true }) => phases.push(Phase::Delete),
        (
            Operation::CreateNodeGroup | Operation::UpdateNodeGroup | Operation::DeleteNodeGroup,
            Row::NodeGroup { target: false },
        ) => {}
        (Operation::Status, Row::Cluster) => phases.extend(Phase::in_progress(current)),
        (Operation::Status, Row::NodeGroup { .. }) => {
            // A nodegroup follows its own operation, the cluster's, or a
            // change made outside Magnum (an autoscaler's resize).
            phases.extend(Phase::in_progress(current));
            phases.extend(Phase::in_progress(cluster));
            phases.push(Phase::Update);
        }
    }
    phases.iter().any(|p| p.statuses().contains(&reported))
}

#[cfg(test)]
mod tests {
    use super::*;
    use Status::*;

    const CL: Row = Row::Cluster;
    const NG: Row = Row::NodeGroup { target: false };
    const TARGET: Row = Row::NodeGroup { target: true };

    fn may(op: Operation, row: Row, cluster: Status, current: Status, to: Status) -> bool {
        driver_may_report(op, row, Some(cluster), Some(current), Some(to))
    }

    #[test]
    fn an_operation_moves_its_rows_through_its_own_statuses() {
        let c = CreateInProgress;
        assert!(may(Operation::CreateCluster, CL, c, c, CreateComplete));
        assert!(may(Operation::CreateCluster, CL, c, c, CreateFailed));
        assert!(may(Operation::CreateCluster, NG, c, c, CreateComplete));
        assert!(!may(Operation::CreateCluster, CL, c, c, AdoptComplete));
        assert!(!may(Operation::CreateCluster, CL, c, c, UpdateComplete));
        assert!(!may(Operation::CreateCluster, CL, c, c, DeleteComplete));
        // An update starts from a complete status.
        let done = CreateComplete;
        assert!(may(
            Operation::UpdateCluster,
            CL,
            done,
            done,
            UpdateInProgress
        ));
        assert!(may(Operation::RotateCa, NG, done, done, UpdateInProgress));
        assert!(!may(
            Operation::UpdateCluster,
            CL,
            done,
            done,
            CreateInProgress
        ));
        assert!(!may(
            Operation::UpdateCluster,
            CL,
            done,
            done,
            DeleteInProgress
        ));
        // A credential rotation changes no status.
        assert!(may(Operation::RotateCredential, CL, done, done, done));
        assert!(!may(
            Operation::RotateCredential,
            CL,
            done,
            done,
            UpdateInProgress
        ));
    }

    #[test]
    fn a_nodegroup_operation_moves_its_nodegroup_and_the_cluster_only() {
        let done = CreateComplete;
        let op = Operation::DeleteNodeGroup;
        assert!(may(op, TARGET, done, done, DeleteInProgress));
        assert!(may(op, CL, done, done, UpdateInProgress));
        assert!(!may(op, NG, done, done, DeleteInProgress));
        assert!(!may(op, CL, done, done, DeleteInProgress));
        assert!(may(
            Operation::CreateNodeGroup,
            TARGET,
            done,
            UpdateInProgress,
            CreateInProgress
        ));
        assert!(!may(
            Operation::CreateNodeGroup,
            NG,
            done,
            done,
            UpdateInProgress
        ));
    }

    #[test]
    fn a_status_poll_carries_rows_on_along_their_operation() {
        let op = Operation::Status;
        let u = UpdateInProgress;
        assert!(may(op, CL, u, u, UpdateComplete));
        assert!(!may(op, CL, u, u, CreateComplete));
        assert!(!may(op, CL, u, u, RollbackComplete));
        let r = RollbackInProgress;
        assert!(may(op, CL, r, r, RollbackFailed));
        // A complete cluster keeps its status; its health may change.
        let done = CreateComplete;
        assert!(may(op, CL, done, done, done));
        assert!(!may(op, CL, done, done, UpdateInProgress));
        // A nodegroup follows its own operation, the cluster's, or a
        // resize made outside Magnum.
        assert!(may(op, NG, u, CreateInProgress, CreateComplete));
        assert!(may(op, NG, DeleteInProgress, done, DeleteComplete));
        assert!(may(op, NG, done, done, UpdateInProgress));
        assert!(!may(op, NG, done, done, DeleteComplete));
        assert!(!may(op, NG, done, done, AdoptComplete));
    }

    #[test]
    fn delete_complete_is_taken_only_for_a_cluster_being_deleted() {
        let d = DeleteInProgress;
        assert!(may(Operation::Status, CL, d, d, DeleteComplete));
        assert!(may(Operation::DeleteCluster, CL, d, d, DeleteComplete));
        let c = CreateInProgress;
        assert!(!may(Operation::Status, CL, c, c, DeleteComplete));
        assert!(!may(Operation::DeleteCluster, CL, c, c, DeleteComplete));
        assert!(!may(
            Operation::Status,
            CL,
            DeleteFailed,
            DeleteFailed,
            DeleteComplete
        ));
    }

    #[test]
    fn a_status_is_never_cleared() {
        for op in [Operation::CreateCluster, Operation::Status] {
            assert!(!driver_may_report(
                op,
                CL,
                Some(CreateInProgress),
                Some(CreateInProgress),
                None
            ));
        }
        // A row without a status may keep none or get one of its operation.
        assert!(driver_may_report(Operation::Status, NG, None, None, None));
        assert!(driver_may_report(
            Operation::CreateCluster,
            NG,
            Some(CreateInProgress),
            None,
            Some(CreateInProgress)
        ));
    }
}
