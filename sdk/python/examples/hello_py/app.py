"""hello_py: a small cluster driver in Python.

It keeps one ConfigMap per cluster in ``magnum-system``: what the cluster
should be (the operation asked for, the ``size`` label, the workers'
count). It declares that ConfigMap in ``watches``, and the host calls
``derive_status`` whenever it changes: the status comes from the ConfigMap
alone. The label ``size`` (1 to 10, default 1) is checked before anything
is built. It creates, updates, resizes and deletes; nothing else is
supported, and says so. ``test_app.py`` tests it natively.
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


def _ref(cluster):
    return types.ObjectRef("v1", "ConfigMap", NAMESPACE, f"cluster-{cluster.uuid}")


def _size(cluster):
    """The label ``size``: 400 "Label size must be between 1 and 10, not
    11." for a bad value."""
    return Labels(cluster.labels or []).int_in("size", 1, 1, 10)


def _workers(state):
    """The nodes of the worker nodegroups, as the rows have them."""
    return sum(ng.node_count or 0 for ng in state.nodegroups if ng.role != "master")


def _config_map(state, phase):
    """The ConfigMap declaring the cluster for the operation ``phase``."""
    cluster = state.cluster
    ref = _ref(cluster)
    body = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": ref.name, "namespace": NAMESPACE, "labels": {CLUSTER_LABEL: cluster.uuid}},
        "data": {"phase": phase, "size": str(_size(cluster)), "workers": str(_workers(state))},
    }
    return types.K8sObject("v1", "ConfigMap", NAMESPACE, ref.name, json.dumps(body, sort_keys=True))


def _moved(state, status, pick=lambda ng: True):
    """The cluster moved to ``status``, with the nodegroups ``pick`` chooses."""
    state.cluster.status = status
    nodegroups = [ng for ng in state.nodegroups if pick(ng)]
    for ng in nodegroups:
        ng.status = status
    return types.Update(state.cluster, nodegroups, [])


class Hello(ClusterDriver):
    def describe(self):
        # beta: used when a template names it; never chosen by cluster type
        # or as the default unless [drivers]/enabled_beta_drivers lists it.
        return [
            EntryPoint(
                "hello_py",
                True,
                [Target("vm", "hello-py", "kubernetes")],
                "Kubernetes as a ConfigMap, from Python",
            )
        ]

    def validate_create(self, ctx, state):
        _size(state.cluster)

    def create_cluster(self, ctx, state, timeout_minutes):
        # A host refusal fails the operation with its text.
        kube.apply(_config_map(state, "creating"))
        log("info", "cluster declared", cluster=state.cluster.uuid)
        # A create names what it builds in stack_id (lifecycle.wit), on the
        # cluster and its nodegroups; Magnum's clients show it.
        state.cluster.stack_id = f"hello-{state.cluster.uuid[:8]}"
        for ng in state.nodegroups:
            ng.stack_id = state.cluster.stack_id
        return _moved(state, ClusterStatus.CREATE_IN_PROGRESS)

    def update_cluster(self, ctx, state):
        kube.apply(_config_map(state, "updating"))
        return _moved(state, ClusterStatus.UPDATE_IN_PROGRESS)

    def resize_cluster(self, ctx, state, req):
        # The resized nodegroup's row carries the new count, as Magnum's.
        for ng in state.nodegroups:
            if ng.uuid == req.nodegroup_uuid:
                ng.node_count = req.node_count
        kube.apply(_config_map(state, "updating"))
        log("info", "cluster resized", cluster=state.cluster.uuid, nodes=req.node_count)
        return _moved(state, ClusterStatus.UPDATE_IN_PROGRESS, lambda ng: ng.uuid == req.nodegroup_uuid)

    def delete_cluster(self, ctx, state):
        kube.delete(_ref(state.cluster))
        return _moved(state, ClusterStatus.DELETE_IN_PROGRESS)

    def watches(self, ctx, state):
        """What ties objects to the cluster: its ConfigMap, by label. The
        host watches it (the grants must let the driver ``list`` it) and
        calls ``derive_status`` when it changes."""
        return [types.Selector("v1", "ConfigMap", NAMESPACE, [(CLUSTER_LABEL, state.cluster.uuid)])]

    def derive_status(self, ctx, state, observed):
        """Pure: the rows' next status from the watched ConfigMap alone. A
        create or an update (a resize is one) is complete once the
        ConfigMap declares it for the rows' workers; a delete once it is
        gone. The cluster moves with the nodegroups that were where it
        was."""
        data = json.loads(observed[0].json).get("data", {}) if observed else None
        phase = data.get("phase") if data else None
        declared = data is not None and data.get("workers") == str(_workers(state))
        was = state.cluster.status
        if was == ClusterStatus.CREATE_IN_PROGRESS and phase == "creating":
            done = ClusterStatus.CREATE_COMPLETE
        elif was == ClusterStatus.UPDATE_IN_PROGRESS and phase == "updating" and declared:
            done = ClusterStatus.UPDATE_COMPLETE
        elif was == ClusterStatus.DELETE_IN_PROGRESS and data is None:
            done = ClusterStatus.DELETE_COMPLETE
        else:
            return types.Update(None, [], [])
        return _moved(state, done, lambda ng: ng.status == was)


Driver, Lifecycle, Status = export(Hello)
