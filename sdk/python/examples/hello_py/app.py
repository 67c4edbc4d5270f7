"""hello_py: a small cluster driver in Python.

It keeps one ConfigMap per cluster in ``magnum-system`` (the desired
state: phase, size and the workers' count) and derives the cluster's
status from it; the label ``size`` (1 to 10, default 1) is checked before
anything is built. It creates, updates, resizes and deletes; nothing else
is supported, and says so. ``test_app.py`` tests it natively.
"""

import json

from openkeel_magnum_driver import (
    ClusterDriver,
    ClusterStatus,
    EntryPoint,
    Labels,
    Target,
    export,
    kube,
    log,
    types,
)

NAMESPACE = "magnum-system"
CLUSTER_LABEL = "magnum.openstack.org/cluster"


def _name(cluster):
    return f"cluster-{cluster.uuid}"


def _ref(cluster):
    return types.ObjectRef("v1", "ConfigMap", NAMESPACE, _name(cluster))


def _size(cluster):
    return Labels(cluster.labels or []).int_in("size", 1, 1, 10)


def _workers(state):
    """The nodes of the worker nodegroups, as the rows have them."""
    return sum(ng.node_count or 0 for ng in state.nodegroups if ng.role != "master")


def _config_map(state, phase):
    cluster = state.cluster
    body = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": _name(cluster),
            "namespace": NAMESPACE,
            "labels": {CLUSTER_LABEL: cluster.uuid},
        },
        "data": {"phase": phase, "size": str(_size(cluster)), "workers": str(_workers(state))},
    }
    return types.K8sObject("v1", "ConfigMap", NAMESPACE, _name(cluster), json.dumps(body, sort_keys=True))


def _moved(state, status):
    """Every row moved to ``status``."""
    state.cluster.status = status
    for ng in state.nodegroups:
        ng.status = status
    return types.Update(state.cluster, state.nodegroups, [])


class Hello(ClusterDriver):
    def describe(self):
        return [
            EntryPoint(
                "hello_py",
                True,
                [Target("vm", "fedora-coreos", "kubernetes")],
                "Kubernetes as a ConfigMap, from Python",
            )
        ]

    def validate_create(self, ctx, state):
        _size(state.cluster)

    def create_cluster(self, ctx, state, timeout_minutes):
        kube.apply(_config_map(state, "creating"))
        log("info", "cluster declared", cluster=state.cluster.uuid)
        state.cluster.stack_id = f"hello-{state.cluster.uuid[:8]}"
        for ng in state.nodegroups:
            ng.stack_id = state.cluster.stack_id
        return _moved(state, ClusterStatus.CREATE_IN_PROGRESS)

    def update_cluster(self, ctx, state):
        kube.apply(_config_map(state, "updating"))
        return _moved(state, ClusterStatus.UPDATE_IN_PROGRESS)

    def resize_cluster(self, ctx, state, req):
        # The resized nodegroup's row already carries the new count.
        for ng in state.nodegroups:
            if ng.uuid == req.nodegroup_uuid:
                ng.node_count = req.node_count
        kube.apply(_config_map(state, "updating"))
        log("info", "cluster resized", cluster=state.cluster.uuid, nodes=req.node_count)
        return _moved(state, ClusterStatus.UPDATE_IN_PROGRESS)

    def delete_cluster(self, ctx, state):
        kube.delete(_ref(state.cluster))
        return _moved(state, ClusterStatus.DELETE_IN_PROGRESS)

    def watches(self, ctx, state):
        return [types.Selector("v1", "ConfigMap", NAMESPACE, [(CLUSTER_LABEL, state.cluster.uuid)])]

    def derive_status(self, ctx, state, observed):
        """Pure: the rows from the ConfigMap alone. A declared cluster is
        complete at once; a deleted one is gone."""
        phase = None
        for o in observed:
            phase = json.loads(o.json).get("data", {}).get("phase")
        status = state.cluster.status
        done = {
            "creating": ClusterStatus.CREATE_COMPLETE,
            "updating": ClusterStatus.UPDATE_COMPLETE,
        }.get(phase)
        if status == ClusterStatus.DELETE_IN_PROGRESS and phase is None:
            done = ClusterStatus.DELETE_COMPLETE
        if done is None or done == status:
            return types.Update(None, [], [])
        return _moved(state, done)

    def poll_status(self, ctx, state):
        obj = kube.get(_ref(state.cluster))
        return self.derive_status(ctx, state, [obj] if obj is not None else [])


Driver, Lifecycle, Status = export(Hello)
