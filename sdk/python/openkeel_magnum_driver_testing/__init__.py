"""Test a Python driver natively, before any component is built: the
counterpart of the Rust SDK's ``openkeel_magnum_driver::testing``.

The host's imports are stood in for by modules shaped like the bindings
componentize-py generates, read from the contract's WIT files (the world
and version you build with), answering from an in-memory world:

- ``kube``: a store of objects applied the way server-side apply does for
  one field manager (the fields the driver applied replace its previous
  ones; fields it never set, such as a controller's ``status``, stay), get,
  list by label, delete, ``served``; the envelope is checked against the
  body as the host does;
- ``config``: options (the manifest's ``[options]`` by default) and files;
- ``state``: the per-cluster cache;
- ``openstack``: canned answers you set (:func:`set_openstack`), else
  ``unavailable``; ``cluster_secrets``: the CAs you set, else
  ``unavailable``; ``cloud``: the cloud's configuration (:func:`set_cloud`);
- ``log``: records you read back (:func:`logs`);
- a manual clock for ``ctx.now`` (:func:`now`, :func:`advance`).

With a manifest, the driver's ``kube``, ``openstack``, ``cluster-secrets``
and ``files`` calls are checked against what it requests, with the host's
refusals; and ``derive-status`` is pure, as in the host: its ``kube``,
``openstack`` and ``cluster-secrets`` calls answer ``access-denied``.

    import openkeel_magnum_driver_testing as testing

    def test_create_declares_the_config_map():
        driver = testing.load("app", world="kube-driver", manifest="driver.toml")
        st = testing.new_cluster("hello_py", labels={"size": "3"})
        upd = driver.lifecycle.create_cluster(testing.user(), st, 60)
        assert len(testing.objects()) == 1

Importing this module installs the newest contract's ``cluster-driver``
world when no bindings are loaded yet, so that a test module may import
the driver's own modules after it; :func:`load` installs the world asked
for and imports the driver afresh. Works under pytest and unittest alike.
"""

import copy
import dataclasses
import importlib
import json
import os
import pathlib
import sys

from . import _wit

__all__ = [
    "Driver",
    "load",
    "install",
    "reset",
    "module",
    "set_option",
    "set_file",
    "put_object",
    "merge_object",
    "objects",
    "object",
    "state",
    "logs",
    "set_max_level",
    "unserve",
    "snapshot",
    "set_cloud",
    "set_openstack",
    "openstack_calls",
    "set_cluster_cas",
    "key_pair",
    "now",
    "advance",
    "set_now",
    "user",
    "admin",
    "new_cluster",
    "record",
    "worker",
    "save",
    "set_status",
    "refusal",
    "failure",
    "host_error",
    "CLUSTER_UUID",
    "MASTER_UUID",
    "WORKER_UUID",
    "TEMPLATE_UUID",
    "PROJECT_ID",
    "USER_ID",
]

#: The WIT directories of a checkout: ``wit/`` beside ``sdk/``
#: (``OKM_WIT_DIR`` names another directory holding ``magnum-driver@*``).
WIT_ROOT = pathlib.Path(os.environ.get("OKM_WIT_DIR") or pathlib.Path(__file__).resolve().parents[3] / "wit")

#: The fixtures' rows, as the Rust test kit's.
CLUSTER_UUID = "5d12f6fd-a196-4bf0-ae4c-1f639a523a52"
MASTER_UUID = "a1c0d8c3-4f8e-4d0c-9d0b-6a3e6a0b9f01"
WORKER_UUID = "b2d1e9d4-5a9f-4e1d-8e1c-7b4f7b1ca012"
TEMPLATE_UUID = "0b6c3a9e-2f41-4d57-9a0e-3c8d5e7f1a24"
PROJECT_ID = "c1a5e0b8f9d24a3b8e6f7d1c2b3a4f50"
USER_ID = "e9b8a7c6d5f44e3d9c2b1a0f9e8d7c61"
#: The clock at the start: 2026-01-02T03:04:05Z, in microseconds.
START = 1_767_323_045_000_000
_CREATED = 1_767_323_045_123_456

_DEFAULT_CLOUD = {
    "keystone_url": "https://keystone.example.test:5000/v3",
    "region": "RegionOne",
    "endpoint_interface": "public",
    "ca_bundle": None,
    "verify": True,
    "cluster_ca_bundle": None,
    "cluster_verify_ca": True,
}

# Each OpenStack call and the group that grants it, as the host has them.
_OPENSTACK_GROUPS = {
    "resolve-flavor-name": "resolve",
    "resolve-image": "resolve",
    "resolve-network-id": "resolve",
    "resolve-subnet-id": "resolve",
    "flavor-details": "resolve",
    "ensure-server-group": "server-groups",
    "delete-server-group": "server-groups",
    "create-application-credential": "application-credentials",
    "delete-application-credential": "application-credentials",
    "load-balancers": "load-balancers",
    "delete-load-balancer": "load-balancers",
    "volume-types": "volume-types",
    "share-types": "share-types",
}


class _World:
    """Everything the imports answer from."""

    def __init__(self):
        self.package = None
        self.world = None
        self.manifest = None  # the parsed driver.toml, when given
        self.options = {}
        self.files = {}
        self.state = {}
        # reference -> [body (dict), paths the driver's field manager owns]
        self.objects = {}
        self.logs = []
        self.max_level = None
        self.unserved = set()
        self.cloud = dict(_DEFAULT_CLOUD)
        self.openstack = {}
        self.openstack_calls = []
        self.cas = None
        self.now = START
        self.pure = False


_W = _World()


# ---------------------------------------------------------------------------
# Installing a world.


def install(world="cluster-driver", version=None, manifest=None, wit=None):
    """Installs the bindings of ``world`` of contract ``version`` (default:
    the newest under :data:`WIT_ROOT`) into ``sys.modules``, with an empty
    in-memory world; forgets the SDK and every module imported since the
    last install, so that the next import sees the new bindings. ``wit``
    names a WIT directory instead. ``manifest``: a driver.toml, whose
    requests the imports then enforce and whose options are the defaults."""
    directory = pathlib.Path(wit) if wit else _wit_dir(version)
    package = _wit.Package(directory)
    _forget_imported()
    reset()
    _W.package = package
    _W.world = world
    _W.manifest = _read_manifest(manifest) if manifest else None
    if _W.manifest:
        _W.options = {k: str(v) for k, v in _W.manifest.get("options", {}).items()}
    mods = _wit.build(package, world, _implementations(), _unavailable_function)
    sys.modules.update(mods)
    return package


def _wit_dir(version):
    if version:
        d = WIT_ROOT / f"magnum-driver@{version}"
        if not d.is_dir():
            raise FileNotFoundError(f"no WIT files for contract {version} in {WIT_ROOT}")
        return d
    found = sorted(
        WIT_ROOT.glob("magnum-driver@*"),
        key=lambda p: tuple(int(x) for x in p.name.split("@")[1].split(".")),
    )
    if not found:
        raise FileNotFoundError(f"no magnum-driver@* WIT directory in {WIT_ROOT} (set OKM_WIT_DIR)")
    return found[-1]


# The modules the last load imported (the driver's).
_loaded = set()


def _forget_imported():
    """Drops the bindings, the SDK and the modules of the last loaded
    driver, so that they are imported again against new bindings."""
    _wit.purge()
    for name in list(sys.modules):
        if name in _loaded or name == "openkeel_magnum_driver" or name.startswith("openkeel_magnum_driver."):
            del sys.modules[name]
    _loaded.clear()


def _read_manifest(path):
    import tomllib

    with open(path, "rb") as f:
        return tomllib.load(f)


class Driver:
    """A driver module loaded against the in-memory world, and its exports
    as the host calls them: ``driver``, ``lifecycle``, ``status`` (each
    call on a fresh instance of the exported class; ``derive_status`` runs
    pure). Errors come out as componentize-py's ``Err`` of the contract's
    ``driver-error`` (read them with :func:`refusal` and :func:`failure`)."""

    def __init__(self, module):
        self.module = module
        self.driver = _Export(module, "Driver")
        self.lifecycle = _Export(module, "Lifecycle")
        self.status = _Export(module, "Status", pure={"derive_status"})

    @property
    def version(self):
        return _W.package.version

    def status_by_watches(self, ctx, state):
        """What the host does on a change of a watched object: the
        driver's ``watches``, the snapshot of the in-memory Kubernetes for
        them (:func:`snapshot`), and ``derive-status`` over it (1.1: a
        ``status-answer``; 1.0: an ``update`` over the objects)."""
        selectors = self.status.watches(ctx, state)
        if _W.package.version == "1.0.0":
            objs = [o for obs in snapshot(selectors) for o in obs.objects]
            return self.status.derive_status(ctx, state, objs)
        return self.status.derive_status(ctx, state, snapshot(selectors))


class _Export:
    def __init__(self, module, name, pure=()):
        self._cls = getattr(module, name)
        self._pure = set(pure)

    def __getattr__(self, name):
        fn = getattr(self._cls(), name)
        if name not in self._pure:
            return fn

        def pure(*args):
            _W.pure = True
            try:
                return fn(*args)
            finally:
                _W.pure = False

        return pure


def load(module, world="cluster-driver", version=None, manifest=None, path=None, wit=None):
    """Installs ``world`` (see :func:`install`) and imports the driver's
    module (``"app"``) afresh against it, from ``path`` (default: the
    current directory and ``sys.path``). Answers a :class:`Driver`."""
    install(world, version, manifest, wit)
    if path is not None and str(path) not in sys.path:
        sys.path.insert(0, str(path))
    sys.modules.pop(module, None)
    before = set(sys.modules)
    try:
        return Driver(importlib.import_module(module))
    finally:
        _loaded.update(set(sys.modules) - before)


def module(name):
    """The stand-in bindings' module of an interface (``"types"``,
    ``"kube"``, ``"openstack"``, ``"status"``…) of the installed world."""
    name = name.replace("-", "_")
    for kind in ("imports", "exports"):
        m = sys.modules.get(f"wit_world.{kind}.{name}")
        if m is not None:
            return m
    raise KeyError(f"the {_W.world} world of {_W.package.version} has no {name}")


def _types():
    return sys.modules["wit_world.imports.types"]


def _err(case, value):
    t = _types()
    return sys.modules["componentize_py_types"].Err(getattr(t, f"HostError_{case}")(value))


def host_error(case, message):
    """A host refusal to raise from a canned answer: ``case`` is the
    variant's case (``"not-found"``, ``"client"`` with a
    ``(status, kind, message)``…)."""
    t = _types()
    if case == "client":
        message = t.MagnumError(*message)
    return sys.modules["componentize_py_types"].Err(getattr(t, "HostError_" + _wit.pascal(case))(message))


# ---------------------------------------------------------------------------
# The world, as a test sets and reads it (the Rust SDK's names).


def reset():
    """Empties the world, keeping the installed bindings and manifest (and
    its options)."""
    package, world, manifest = _W.package, _W.world, _W.manifest
    _W.__init__()
    _W.package, _W.world, _W.manifest = package, world, manifest
    if manifest:
        _W.options = {k: str(v) for k, v in manifest.get("options", {}).items()}


def set_option(key, value):
    """Sets one of the driver's options (what ``config.get`` answers)."""
    _W.options[key] = value


def set_file(path, text):
    """Makes a file readable by ``config.read_file``."""
    _W.files[path] = text


def _ref_key(api_version, kind, namespace, name):
    return (api_version, kind, namespace or "", name)


def _to_obj(body):
    meta = body.get("metadata", {})
    return _types().K8sObject(
        body.get("apiVersion", ""),
        body.get("kind", ""),
        meta.get("namespace"),
        meta.get("name", ""),
        json.dumps(body, sort_keys=True),
    )


def put_object(obj):
    """Puts an object (a ``K8sObject``, or its body as a dict) in the
    in-memory Kubernetes whole, as someone else would: the driver keeps
    the fields it applied that are still there."""
    body = json.loads(obj.json) if hasattr(obj, "json") else copy.deepcopy(obj)
    meta = body.get("metadata", {})
    key = _ref_key(body.get("apiVersion"), body.get("kind"), meta.get("namespace"), meta.get("name"))
    owned = _W.objects.get(key, [None, set()])[1]
    _W.objects[key] = [body, {p for p in owned if _has_path(body, p)}]


def merge_object(api_version, kind, namespace, name, patch):
    """Merges ``patch`` (a dict) into an object as another field manager
    would (a controller writing ``status``); answers whether it existed."""
    key = _ref_key(api_version, kind, namespace, name)
    if key not in _W.objects:
        return False
    _merge(_W.objects[key][0], copy.deepcopy(patch))
    return True


def objects():
    """The objects in the in-memory Kubernetes (``K8sObject``), in
    reference order."""
    return [_to_obj(v[0]) for _, v in sorted(_W.objects.items())]


def object(api_version, kind, namespace, name):
    """One object's body as a dict, or ``None``."""
    v = _W.objects.get(_ref_key(api_version, kind, namespace, name))
    return copy.deepcopy(v[0]) if v else None


def state():
    """What the driver keeps with ``state.set``."""
    return dict(_W.state)


def logs():
    """The records logged so far: ``(level, message, fields)``, the level
    as its name (``"info"``) and the fields as ``(key, value)`` pairs."""
    return list(_W.logs)


def set_max_level(level):
    """The most verbose level kept (``"debug"``…; default: every level)."""
    _W.max_level = level


def unserve(api_version, kind):
    """Stops serving ``kind`` of ``api_version``, as a management cluster
    without that provider: ``kube.served`` answers false, lists are empty,
    and :func:`snapshot` observes it unserved."""
    _W.unserved.add((api_version, kind))


def snapshot(selectors):
    """What the host would hand ``derive-status`` for ``selectors``: each
    one's objects (sorted by namespace and name), served unless
    :func:`unserve`\\ d, and synced (``status.Observation``, 1.1)."""
    out = []
    status = sys.modules.get("wit_world.exports.status")
    for sel in selectors:
        served = (sel.api_version, sel.kind) not in _W.unserved
        objs = _list(sel) if served else []
        if hasattr(status, "Observation"):
            out.append(status.Observation(sel, served, True, objs))
        else:
            out.append(_Observation(sel, served, True, objs))
    return out


@dataclasses.dataclass
class _Observation:
    """A snapshot's entry for a 1.0 driver (which receives the objects)."""

    selector: object
    served: bool
    synced: bool
    objects: list


def set_cloud(**fields):
    """Changes what ``cloud.info`` answers (contract 1.1; by default
    Keystone on an example address, region ``RegionOne``, the public
    interface, TLS verified, no CA bundle)."""
    unknown = set(fields) - set(_DEFAULT_CLOUD)
    if unknown:
        raise TypeError(f"cloud-info has no {', '.join(sorted(unknown))}")
    _W.cloud.update(fields)


def set_openstack(function, answer):
    """A canned answer for one ``openstack`` call (``"resolve-image"`` or
    ``resolve_image``): a callable (called with the call's arguments), a
    dict keyed by the first argument (a missing key answers
    ``not-found``), or a value answered to any arguments. An ``Err`` made
    by :func:`host_error` is raised instead of answered. Calls without an
    answer answer ``unavailable``, as a host without OpenStack does."""
    _W.openstack[function.replace("_", "-")] = answer


def openstack_calls():
    """The ``openstack`` calls made: ``(function, args)``, in order."""
    return list(_W.openstack_calls)


def set_cluster_cas(cas):
    """What ``cluster_secrets.cas`` answers (a ``ClusterCas``; see
    :func:`key_pair`); until then it answers ``unavailable``."""
    _W.cas = cas


def key_pair(cert_pem, key_pem, passphrase=""):
    """A ``cluster_secrets.KeyPair`` of the installed contract (1.0 has a
    passphrase, 1.1 a decrypted key)."""
    m = module("cluster_secrets")
    names = [f for f, _ in m.KeyPair.__wit_fields__]
    values = {"cert-pem": cert_pem, "key-pem": key_pem, "passphrase": passphrase}
    return m.KeyPair(*(values.get(n, "") for n in names))


def now():
    """The clock, in microseconds since the epoch (``ctx.now``)."""
    return _W.now


def set_now(micros):
    _W.now = micros


def advance(seconds):
    """Moves the clock on."""
    _W.now += int(seconds * 1_000_000)


# ---------------------------------------------------------------------------
# Fixtures: the rows of a cluster, the callers, the conductor's save.


def record(interface, name, /, **values):
    """A record of the installed contract, by WIT name (``"types"``,
    ``"cluster"``), every field not given at its zero value (``None`` for
    an option)."""
    m = module(interface)
    iface = m.__wit_interface__
    fields = iface.records[name]
    known = {_wit.snake(f) for f, _ in fields}
    unknown = set(values) - known
    if unknown:
        raise TypeError(f"{name} ({_W.package.version}) has no {', '.join(sorted(unknown))}")
    args = []
    for f, t in fields:
        f = _wit.snake(f)
        args.append(values[f] if f in values else _W.package.default_of(iface, t))
    return getattr(m, _wit.pascal(name))(*args)


def _context(admin, **over):
    caller = record(
        "types",
        "caller",
        user_id="" if admin else USER_ID,
        project_id="" if admin else PROJECT_ID,
        admin=admin,
    )
    values = dict(
        entry_point="",
        caller=caller,
        request_id="" if admin else "req-5e0c6d1a-8f7b-4c3d-9e2a-1b0f4d6c8a9e",
    )
    if any(f == "now" for f, _ in module("types").__wit_interface__.records["call-context"]):
        values["now"] = _W.now
    values.update(over)
    return record("types", "call-context", **values)


def user(entry_point="", **over):
    """A user's API request, at :func:`now`."""
    return _context(False, entry_point=entry_point, **over)


def admin(entry_point="", **over):
    """Background work (the status poll): no user, at :func:`now`."""
    return _context(True, entry_point=entry_point, **over)


def _pairs(labels):
    if labels is None:
        return None
    items = labels.items() if isinstance(labels, dict) else labels
    return sorted((str(k), str(v)) for k, v in items)


def new_cluster(driver="", labels=None, target=("vm", "fedora-coreos", "kubernetes"), masters=1, workers=2):
    """The rows of a new cluster as the conductor writes them before
    ``create-cluster``: the template (entry point ``driver``, cluster type
    ``target``), the cluster and its default master and worker nodegroups,
    ``labels`` on each (as Magnum copies them), ``CREATE_IN_PROGRESS``."""
    t = _types()
    labels = _pairs(labels if labels is not None else {})
    server_type, os_, coe = target
    template = record(
        "types", "cluster-template",
        id=1, uuid=TEMPLATE_UUID, name="k8s-template", project_id=PROJECT_ID, user_id=USER_ID,
        image_id="fedora-coreos", flavor_id="m1.small", master_flavor_id="m1.medium",
        external_network_id="public", coe=coe, cluster_distro=os_, server_type=server_type,
        network_driver="calico", driver=driver, labels=labels, tls_disabled=False, public=False,
        created_at=_CREATED,
    )
    cluster = record(
        "types", "cluster",
        id=1, uuid=CLUSTER_UUID, name="test-cluster", project_id=PROJECT_ID, user_id=USER_ID,
        cluster_template_id=TEMPLATE_UUID, labels=list(labels), flavor_id="m1.small",
        master_flavor_id="m1.medium", status=t.Status.CREATE_IN_PROGRESS, create_timeout=60,
        created_at=_CREATED, updated_at=_CREATED,
    )

    def ng(id_, uuid, name, role, count, flavor):
        return record(
            "types", "nodegroup",
            id=id_, uuid=uuid, name=name, cluster_id=CLUSTER_UUID, project_id=PROJECT_ID, role=role,
            is_default=True, node_count=count, min_node_count=1 if role == "master" else 0,
            flavor_id=flavor, image_id="fedora-coreos", labels=list(labels),
            status=t.Status.CREATE_IN_PROGRESS, created_at=_CREATED,
        )

    return t.ClusterState(
        cluster,
        template,
        [
            ng(1, MASTER_UUID, "default-master", "master", masters, "m1.medium"),
            ng(2, WORKER_UUID, "default-worker", "worker", workers, "m1.small"),
        ],
    )


def save(st, answer):
    """Saves an answer into the rows, as the conductor does: full rows
    replace (or, when new, join) the state, deleted nodegroups go.
    ``answer``: an ``Update``, a ``status-answer`` or a ``Failure``."""
    upd = getattr(answer, "update", answer)
    if upd.cluster is not None:
        st.cluster = upd.cluster
    for ng in upd.nodegroups:
        for i, x in enumerate(st.nodegroups):
            if x.uuid == ng.uuid:
                st.nodegroups[i] = ng
                break
        else:
            st.nodegroups.append(ng)
    st.nodegroups = [x for x in st.nodegroups if x.uuid not in upd.deleted_nodegroups]
    return st


def set_status(st, status):
    """Moves every row to ``status`` (a ``Status`` or its name,
    ``"UPDATE_IN_PROGRESS"``), as the conductor does before an operation."""
    if isinstance(status, str):
        status = _types().Status[status]
    st.cluster.status = status
    for ng in st.nodegroups:
        ng.status = status
    return st


def worker(st):
    """The default worker nodegroup of the rows."""
    return next(ng for ng in st.nodegroups if ng.role == "worker" and ng.is_default)


def _raised(fn, args):
    Err = sys.modules["componentize_py_types"].Err
    try:
        answer = fn(*args)
    except Err as e:
        return e.value
    raise AssertionError(f"the call answered {answer!r} instead of failing")


def refusal(fn, *args):
    """Calls ``fn(*args)``, which must refuse with a client error, and
    answers its ``MagnumError`` (``status``, ``kind``, ``message``)."""
    v = _raised(fn, args)
    if type(v).__name__ != "DriverError_Client":
        raise AssertionError(f"the call failed with {v!r}, not a client error")
    return v.value


def failure(fn, *args):
    """Calls ``fn(*args)``, which must fail the operation (``failed`` or
    ``failed-after``), and answers its reason."""
    v = _raised(fn, args)
    name = type(v).__name__
    if name == "DriverError_Failed":
        return v.value
    if name == "DriverError_FailedAfter":
        return v.value.reason
    raise AssertionError(f"the call refused with {v!r}, not a failure")


# ---------------------------------------------------------------------------
# The imports.


def _driver_name():
    if _W.manifest:
        return _W.manifest.get("driver", {}).get("name", "driver")
    return "driver"


def _denied(what):
    return _err("AccessDenied", f"driver {_driver_name()} is not granted {what}")


def _impure(what):
    return _err("AccessDenied", f"{what} during derive-status, which is pure: read what it needs from its snapshot")


def _covers(pattern, value):
    return pattern == "*" or pattern == value


def _check_kube(verb, api, kind, ns):
    if _W.pure:
        raise _impure(f"kube {verb}")
    if _W.manifest is None:
        return
    for rule in _W.manifest.get("capabilities", {}).get("kube", []):
        if not _covers(rule.get("api-version", ""), api):
            continue
        if not any(_covers(k, kind) for k in rule.get("kinds", [])):
            continue
        if not any(_covers(v, verb) for v in rule.get("verbs", [])):
            continue
        if ns is None and rule.get("cluster-scoped", False):
            return
        if ns is not None and any(_covers(n, ns) for n in rule.get("namespaces", [])):
            return
    scope = f"in namespace {ns}" if ns is not None else "cluster-scoped"
    raise _denied(f"kube {verb} of {api}/{kind} {scope}")


def _leaf_paths(body, prefix=()):
    out = set()
    for k, v in body.items():
        p = prefix + (k,)
        if isinstance(v, dict) and v:
            out |= _leaf_paths(v, p)
        else:
            out.add(p)
    return out


def _has_path(body, path):
    cur = body
    for k in path:
        if not isinstance(cur, dict) or k not in cur:
            return False
        cur = cur[k]
    return True


def _remove_path(body, path):
    parents = []
    cur = body
    for k in path[:-1]:
        if not isinstance(cur, dict) or k not in cur:
            return
        parents.append((cur, k))
        cur = cur[k]
    if isinstance(cur, dict):
        cur.pop(path[-1], None)
    # An emptied map goes with its last field.
    for parent, k in reversed(parents):
        if parent[k] == {}:
            del parent[k]


def _merge(into, patch):
    for k, v in patch.items():
        if isinstance(v, dict) and isinstance(into.get(k), dict):
            _merge(into[k], v)
        else:
            into[k] = v


def _checked_body(obj):
    invalid = lambda m: _err("Invalid", m)  # noqa: E731
    try:
        body = json.loads(obj.json)
    except ValueError as e:
        raise invalid(f"the body of {obj.kind} {obj.name} is not JSON: {e}") from None
    if not isinstance(body, dict):
        raise invalid(f"the body of {obj.kind} {obj.name} is not a JSON object")

    def field(*path):
        cur = body
        for p in path:
            if not isinstance(cur, dict) or p not in cur:
                return None
            cur = cur[p]
        return cur if isinstance(cur, str) else None

    def disagree(what, got, envelope):
        return invalid(f"the body's {what} ({got if got is not None else 'missing'}) disagrees with the envelope ({envelope})")

    for what, got, want in (
        ("apiVersion", field("apiVersion"), obj.api_version),
        ("kind", field("kind"), obj.kind),
        ("metadata.name", field("metadata", "name"), obj.name),
    ):
        if got != want:
            raise disagree(what, got, want)
    ns = field("metadata", "namespace")
    if obj.namespace is not None and ns is None:
        body.setdefault("metadata", {})["namespace"] = obj.namespace
    elif ns != obj.namespace:
        raise disagree("metadata.namespace", ns, obj.namespace or "cluster-scoped")
    return body


def _kube_apply(obj):
    _check_kube("apply", obj.api_version, obj.kind, obj.namespace)
    body = _checked_body(obj)
    if (obj.api_version, obj.kind) in _W.unserved:
        raise _err("NotFound", f"the server does not serve {obj.api_version}/{obj.kind}")
    key = _ref_key(obj.api_version, obj.kind, obj.namespace, obj.name)
    old, owned = _W.objects.get(key, [{}, set()])
    new_paths = _leaf_paths(body)
    stored = copy.deepcopy(old)
    # Server-side apply for one field manager: what it set before and
    # leaves out now goes; what it sets now wins (forced); the rest stays.
    for p in owned - new_paths:
        _remove_path(stored, p)
    _merge(stored, copy.deepcopy(body))
    _W.objects[key] = [stored, new_paths]
    return _to_obj(stored)


def _kube_get(ref):
    _check_kube("get", ref.api_version, ref.kind, ref.namespace)
    if (ref.api_version, ref.kind) in _W.unserved:
        return None
    v = _W.objects.get(_ref_key(ref.api_version, ref.kind, ref.namespace, ref.name))
    return _to_obj(v[0]) if v else None


def _list(sel):
    out = []
    want = dict(sel.labels)
    for (api, kind, ns, _), (body, _) in sorted(_W.objects.items()):
        if api != sel.api_version or kind != sel.kind or ns != (sel.namespace or ""):
            continue
        labels = body.get("metadata", {}).get("labels") or {}
        if all(labels.get(k) == v for k, v in want.items()):
            out.append(_to_obj(body))
    return out


def _kube_list(sel):
    _check_kube("list", sel.api_version, sel.kind, sel.namespace)
    if (sel.api_version, sel.kind) in _W.unserved:
        return []
    return _list(sel)


def _kube_delete(ref):
    _check_kube("delete", ref.api_version, ref.kind, ref.namespace)
    return _W.objects.pop(_ref_key(ref.api_version, ref.kind, ref.namespace, ref.name), None) is not None


def _kube_served(api_version, kind):
    if _W.pure:
        raise _impure("kube served")
    return (api_version, kind) not in _W.unserved


def _read_file(path):
    if _W.manifest is not None and not _W.manifest.get("capabilities", {}).get("files", False):
        raise _denied(f"files (read of {json.dumps(path)})")
    if path not in _W.files:
        raise _err("NotFound", f"file {path}")
    return _W.files[path]


_LEVELS = ["trace", "debug", "info", "warn", "error"]


def _log_write(level, message, fields):
    name = level.name.lower()
    if _W.max_level and _LEVELS.index(name) < _LEVELS.index(_W.max_level):
        return
    _W.logs.append((name, message, [tuple(f) for f in fields]))


def _log_max_level():
    return sys.modules["wit_world.imports.log"].Level[(_W.max_level or "trace").upper()]


def _openstack(function):
    group = _OPENSTACK_GROUPS.get(function, function)

    def call(*args):
        if _W.pure:
            raise _impure(f"openstack {function}")
        if _W.manifest is not None:
            granted = _W.manifest.get("capabilities", {}).get("openstack", [])
            if not any(_covers(g, group) for g in granted):
                raise _denied(f"openstack {group} ({function})")
        _W.openstack_calls.append((function, args))
        if function not in _W.openstack:
            raise _err("Unavailable", "no OpenStack is configured on this host")
        answer = _W.openstack[function]
        if callable(answer):
            answer = answer(*args)
        elif isinstance(answer, dict):
            if not args or args[0] not in answer:
                raise _err("NotFound", f"{function} {args[0] if args else ''}".strip())
            answer = answer[args[0]]
        if isinstance(answer, BaseException):
            raise answer
        return copy.deepcopy(answer)

    call.__name__ = _wit.snake(function)
    return call


def _cas():
    if _W.pure:
        raise _err("AccessDenied", "cluster-secrets during derive-status, which is pure")
    if _W.manifest is not None and not _W.manifest.get("capabilities", {}).get("cluster-secrets", False):
        raise _denied("cluster-secrets")
    if _W.cas is None:
        raise _err("Unavailable", "no cluster certificate store is configured on this host")
    return copy.deepcopy(_W.cas)


def _cloud_info():
    m = module("cloud")
    return m.CloudInfo(**_W.cloud)


def _state_set(key, value):
    _W.state[key] = value


def _implementations():
    impl = {
        ("config", "get"): lambda key: _W.options.get(key),
        ("config", "all"): lambda: sorted(_W.options.items()),
        ("config", "read-file"): _read_file,
        ("state", "get"): lambda key: _W.state.get(key),
        ("state", "set"): _state_set,
        ("state", "remove"): lambda key: [_W.state.pop(key, None)] and None,
        ("state", "clear"): lambda: _W.state.clear(),
        ("log", "write"): _log_write,
        ("log", "max-level"): _log_max_level,
        ("kube", "apply"): _kube_apply,
        ("kube", "get"): _kube_get,
        ("kube", "list-by-label"): _kube_list,
        ("kube", "delete"): _kube_delete,
        ("kube", "served"): _kube_served,
        ("cloud", "info"): _cloud_info,
        ("cluster-secrets", "cas"): _cas,
    }
    for f in _OPENSTACK_GROUPS:
        impl[("openstack", f)] = _openstack(f)
    return impl


def _unavailable_function(iface, func, *args):
    raise NotImplementedError(f"{iface}.{func} has no in-memory stand-in")


# A test module may import the driver's modules right after this one.
if "wit_world" not in sys.modules:
    try:
        install()
    except FileNotFoundError:
        pass
