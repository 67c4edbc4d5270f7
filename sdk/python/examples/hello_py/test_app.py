"""hello_py's own tests, natively and before any component is built:
`PYTHONPATH=<checkout>/sdk/python python3 -m pytest` in this directory.

The driver runs against the in-memory imports of
`openkeel_magnum_driver_testing`, in the world it is built for
(`kube-driver`), with its manifest's grants, for both contract versions.
"""

import json
import pathlib

import pytest

import openkeel_magnum_driver_testing as testing

HERE = pathlib.Path(__file__).resolve().parent
NAMESPACE = "magnum-system"


@pytest.fixture(params=["1.0.0", "1.1.0"])
def driver(request):
    return testing.load(
        "app", world="kube-driver", version=request.param, manifest=HERE / "driver.toml", path=HERE
    )


def config_map(cluster_uuid=testing.CLUSTER_UUID):
    return testing.object("v1", "ConfigMap", NAMESPACE, f"cluster-{cluster_uuid}")


def status_of(st):
    return [st.cluster.status.name] + [ng.status.name for ng in st.nodegroups]


def test_describe_is_the_manifests_entry_point(driver):
    (ep,) = driver.driver.describe()
    assert (ep.name, ep.beta) == ("hello_py", True)


def test_validate_create_refuses_a_bad_size_label(driver):
    e = testing.refusal(driver.driver.validate_create, testing.user(), testing.new_cluster(labels={"size": "11"}))
    assert (e.status, e.kind, e.message) == (400, "Invalid", "Label size must be between 1 and 10, not 11.")
    e = testing.refusal(driver.driver.validate_create, testing.user(), testing.new_cluster(labels={"size": "x"}))
    assert e.message == 'Label size has an invalid integer value "x".'
    assert driver.driver.validate_create(testing.user(), testing.new_cluster(labels={"size": "3"})) is None
    # create-cluster refuses it too, before anything is built.
    e = testing.refusal(driver.lifecycle.create_cluster, testing.user(), testing.new_cluster(labels={"size": "11"}), 60)
    assert (e.status, e.kind) == (400, "Invalid")
    assert testing.objects() == []


def test_create_status_by_watches_resize_delete(driver):
    st = testing.new_cluster("hello_py", labels={"size": "3"})

    testing.save(st, driver.lifecycle.create_cluster(testing.user(), st, 60))
    assert status_of(st) == ["CREATE_IN_PROGRESS"] * 3
    assert st.cluster.stack_id == "hello-5d12f6fd"
    assert config_map()["data"] == {"phase": "creating", "size": "3", "workers": "2"}
    assert ("info", "cluster declared", [("cluster", testing.CLUSTER_UUID)]) in testing.logs()
    created = testing.objects()[0]

    # The host watches the ConfigMap and derives the status from it.
    (sel,) = driver.status.watches(testing.admin(), st)
    assert (sel.kind, sel.namespace, sel.labels) == ("ConfigMap", NAMESPACE, [("magnum.openstack.org/cluster", testing.CLUSTER_UUID)])
    testing.save(st, driver.status_by_watches(testing.admin(), st))
    assert status_of(st) == ["CREATE_COMPLETE"] * 3
    # Nothing more to say: an empty update.
    again = driver.status_by_watches(testing.admin(), st)
    assert getattr(again, "update", again).cluster is None

    # Resize the default worker to 5: the driver sets the row's count, the
    # ConfigMap follows, the cluster and that nodegroup move.
    worker = testing.worker(st)
    req = testing.record("lifecycle", "resize", nodegroup_uuid=worker.uuid, node_count=5, nodes_to_remove=[])
    testing.save(st, driver.lifecycle.resize_cluster(testing.user(), st, req))
    assert config_map()["data"]["workers"] == "5"
    assert testing.worker(st).node_count == 5
    assert status_of(st) == ["UPDATE_IN_PROGRESS", "CREATE_COMPLETE", "UPDATE_IN_PROGRESS"]
    # A copy of the ConfigMap from before the resize says nothing.
    resized = testing.objects()[0]
    testing.put_object(created)
    stale = driver.status_by_watches(testing.admin(), st)
    assert getattr(stale, "update", stale).cluster is None
    testing.put_object(resized)
    testing.save(st, driver.status_by_watches(testing.admin(), st))
    assert status_of(st) == ["UPDATE_COMPLETE", "CREATE_COMPLETE", "UPDATE_COMPLETE"]

    # The base class's poll says nothing: the status comes by watch.
    polled = driver.status.poll_status(testing.admin(), st)
    assert getattr(polled, "update", polled).cluster is None

    testing.save(st, driver.lifecycle.delete_cluster(testing.user(), st))
    assert status_of(st) == ["DELETE_IN_PROGRESS"] * 3
    assert testing.objects() == []
    testing.save(st, driver.status_by_watches(testing.admin(), st))
    assert status_of(st) == ["DELETE_COMPLETE"] * 3


def test_the_config_map_keeps_what_others_wrote(driver):
    st = testing.new_cluster("hello_py")
    driver.lifecycle.create_cluster(testing.user(), st, 60)
    name = f"cluster-{testing.CLUSTER_UUID}"
    testing.merge_object("v1", "ConfigMap", NAMESPACE, name, {"metadata": {"annotations": {"seen": "yes"}}})
    testing.set_status(st, "UPDATE_IN_PROGRESS")
    driver.lifecycle.update_cluster(testing.user(), st)
    cm = config_map()
    assert cm["data"]["phase"] == "updating"
    assert cm["metadata"]["annotations"] == {"seen": "yes"}
    assert json.loads(testing.objects()[0].json) == cm


def test_what_it_does_not_support_says_so(driver):
    st = testing.new_cluster("hello_py")
    template = st.template
    req = testing.record("lifecycle", "upgrade", template=template, max_batch_size=0, nodegroup_uuid=None)
    e = testing.refusal(driver.lifecycle.upgrade_cluster, testing.user(), st, req)
    assert (e.status, e.kind, e.message) == (400, "NotSupported", "'upgrade_cluster' is not supported by this driver.")
