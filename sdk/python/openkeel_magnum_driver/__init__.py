"""Write an openkeel-magnum cluster driver in Python.

A driver is a WebAssembly component implementing the
``openkeel:magnum-driver`` contract (1.0.0 or 1.1.0: the bindings
componentize-py generated from the WIT files the driver is built with
decide), built from Python with componentize-py. This package is the Python
counterpart of the Rust SDK:

- :class:`ClusterDriver`, whose every method but ``describe`` answers what
  Magnum's base driver answers (400 ``NotSupported`` for an operation);
- :func:`export`, which turns a subclass into the three classes the
  component exports (``Driver``, ``Lifecycle``, ``Status``);
- errors (:func:`client`, :func:`invalid`, :func:`not_supported`,
  :func:`failed`), label readers with the same messages as the Rust SDK
  (:class:`Labels`), logging (:func:`log`), and the host's imports
  (``config``, ``state``, ``kube``, ``openstack``, ``cluster_secrets``, and
  ``cloud`` in 1.1) re-exported from the bindings.

The bindings have only the imports of the world the driver is built for
(``plain-driver``, ``kube-driver`` or ``cluster-driver``, :data:`WORLD`):
the SDK imports what is there, and an import the world lacks stands as a
false object whose use raises :class:`NotInWorld` naming the world.

Contract 1.1 adds, when the driver is built with its WIT files:
``validate_nodegroup``, :meth:`ClusterDriver.derive` (``derive-status`` over
a snapshot: each selector's objects with ``synced`` and ``served``),
:meth:`ClusterDriver.poll`, :meth:`ClusterDriver.apply_effects` (the side
effects a status answer asks for, :func:`status_answer`), ``ctx.now``,
:func:`failed_after`, and the ``cloud`` import.

A fresh instance of the subclass serves every call: keep nothing in module
globals between calls; what must survive goes in ``state``.

    from openkeel_magnum_driver import ClusterDriver, EntryPoint, Target, export

    class Hello(ClusterDriver):
        def describe(self):
            return [EntryPoint("hello_py", True, [Target("vm", "fedora-coreos", "kubernetes")],
                               "A Python driver")]

    Driver, Lifecycle, Status = export(Hello)
"""

import importlib
import traceback

from componentize_py_types import Err
from wit_world.imports import config, state, types
from wit_world.imports import log as _log
from wit_world import exports as _exports
from wit_world.exports import status as _status
from wit_world.exports.driver import EntryPoint

from .labels import Labels, LabelError

__all__ = [
    "WIT_VERSION",
    "WORLD",
    "NotInWorld",
    "ClusterDriver",
    "EntryPoint",
    "Target",
    "ClusterStatus",
    "Labels",
    "LabelError",
    "client",
    "invalid",
    "not_supported",
    "failed",
    "failed_after",
    "status_answer",
    "validate_master_size",
    "log",
    "export",
    "config",
    "kube",
    "state",
    "types",
    "cloud",
    "openstack",
    "cluster_secrets",
]

#: The version of the contract the driver's bindings are for.
WIT_VERSION = "1.1.0" if hasattr(types, "DriverError_FailedAfter") else "1.0.0"
_V1_1 = WIT_VERSION == "1.1.0"


def _binding(name):
    """The bindings' module of import ``name``, or ``None`` when the world
    the driver is built for does not import it (componentize-py generates
    a module for each import of the world, and only those)."""
    module = f"wit_world.imports.{name}"
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name != module:  # a binding that is there but fails: not ours to hide
            raise
        return None


_cloud = _binding("cloud")
_kube = _binding("kube")
_openstack = _binding("openstack")
_cluster_secrets = _binding("cluster_secrets")

#: The world the driver is built for, as its imports tell it:
#: ``plain-driver`` (log, config, state, and cloud in 1.1), ``kube-driver``
#: (and kube) or ``cluster-driver`` (every import).
WORLD = (
    "cluster-driver"
    if _openstack is not None and _cluster_secrets is not None
    else "kube-driver" if _kube is not None else "plain-driver"
)
_WORLD_IMPORTS = ", ".join(
    n
    for n, m in (
        ("log", _log),
        ("config", config),
        ("state", state),
        ("cloud", _cloud),
        ("kube", _kube),
        ("openstack", _openstack),
        ("cluster-secrets", _cluster_secrets),
    )
    if m is not None
)


class NotInWorld(Exception):
    """An import the driver's world does not have was used."""


class _Missing:
    """Stands for an import the driver's world does not have: false, and
    any use of it raises :class:`NotInWorld` naming the world and the one
    to build with instead."""

    def __init__(self, name, worlds):
        self._name = name
        self._worlds = worlds

    def __bool__(self):
        return False

    def __repr__(self):
        return f"<{self._name}: not imported by {WORLD}>"

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        raise NotInWorld(
            f"{self._name}.{attr}: this driver is built for the {WORLD} world "
            f"({WIT_VERSION}: {_WORLD_IMPORTS}), which does not import {self._name}; "
            f"build it with -w {self._worlds} to use it"
        )


#: The host's imports a world may lack. A driver imports them from here in
#: every world; using one its world does not have raises
#: :class:`NotInWorld`. ``cloud`` is ``None`` in a driver built for 1.0.
kube = _kube if _kube is not None else _Missing("kube", "kube-driver (or cluster-driver)")
openstack = _openstack if _openstack is not None else _Missing("openstack", "cluster-driver")
cluster_secrets = (
    _cluster_secrets if _cluster_secrets is not None else _Missing("cluster_secrets", "cluster-driver")
)
cloud = _cloud

Target = types.Target
#: Magnum's statuses (``ClusterStatus.CREATE_IN_PROGRESS``...). Not named
#: ``Status``: that name is the ``status`` export's class.
ClusterStatus = types.Status


def client(status, kind, message):
    """A client error to raise: Magnum's HTTP status (4xx), exception name
    and message; it reaches the API caller and no row changes."""
    return Err(types.DriverError_Client(types.MagnumError(status, kind, message)))


def invalid(message):
    """400 ``Invalid`` with a literal message."""
    return client(400, "Invalid", message)


def not_supported(function):
    """Magnum's answer for a function the driver does not implement: 400
    ``NotSupported``, ``'<function>' is not supported by this driver.``"""
    return client(400, "NotSupported", f"'{function}' is not supported by this driver.")


def failed(reason):
    """The operation failed: the rows go ``*_FAILED`` with this text as
    ``status_reason``."""
    return Err(types.DriverError_Failed(reason))


def failed_after(reason, update):
    """The operation failed after it made something that must be kept (a
    ``stack_id``, a nodegroup): the rows go ``*_FAILED`` with ``reason`` and
    what ``update`` holds is saved with them. A driver built for 1.0 fails
    with the reason alone."""
    if not _V1_1:
        return failed(reason)
    return Err(types.DriverError_FailedAfter(types.Failure(reason, update)))


def _no_update():
    return types.Update(None, [], [])


def status_answer(update=None, effects=()):
    """A status answer (contract 1.1): the rows' new state (``None``:
    nothing changed) and the side effects, ``(name, detail)`` pairs, that
    :meth:`ClusterDriver.apply_effects` runs before it is saved."""
    return _status.StatusAnswer(
        update if update is not None else _no_update(),
        [_status.Effect(name, detail) for name, detail in effects],
    )


def validate_master_size(count):
    """The base driver's rule: odd and at least 1, else 400
    ``MasterNGSizeInvalid``."""
    if count % 2 == 0 or count < 1:
        raise client(
            400,
            "MasterNGSizeInvalid",
            f"master nodegroup size of {count} is invalid, size cannot be an even number.",
        )


_LEVELS = {
    "trace": _log.Level.TRACE,
    "debug": _log.Level.DEBUG,
    "info": _log.Level.INFO,
    "warn": _log.Level.WARN,
    "error": _log.Level.ERROR,
}


def log(level, message, **fields):
    """Writes one record into the host's log (``level``: trace, debug,
    info, warn, error), with string fields."""
    _log.write(_LEVELS[level], message, [(k, str(v)) for k, v in sorted(fields.items())])


def _host_error_text(e):
    """The text of a host refusal, as the Rust SDK words it."""
    prefix = {
        types.HostError_AccessDenied: "access denied: ",
        types.HostError_Invalid: "invalid: ",
        types.HostError_NotFound: "not found: ",
        types.HostError_Conflict: "conflict: ",
        types.HostError_TooLarge: "too large: ",
        types.HostError_Unavailable: "unavailable: ",
    }.get(type(e))
    if isinstance(e, types.HostError_Client):
        return e.value.message
    return (prefix or "") + str(e.value)


_DRIVER_ERRORS = tuple(
    getattr(types, n)
    for n in ("DriverError_Client", "DriverError_Failed", "DriverError_FailedAfter")
    if hasattr(types, n)
)


def _driver_error(exc):
    """What a call raised, as the contract's error: a raised driver error
    as it is, a host refusal as ``failed`` (a client error from the host
    passes through), a label error as 400, anything else as ``failed`` with
    its type and message (logged with its traceback)."""
    if isinstance(exc, Err):
        v = exc.value
        if isinstance(v, _DRIVER_ERRORS):
            return exc
        if isinstance(v, types.HostError_Client):
            return Err(types.DriverError_Client(v.value))
        return failed(_host_error_text(v))
    if isinstance(exc, LabelError):
        return invalid(str(exc))
    log("error", "driver raised " + "".join(traceback.format_exception_only(type(exc), exc)).strip(),
        traceback="".join(traceback.format_exception(exc)))
    return failed(f"{type(exc).__name__}: {exc}")


class ClusterDriver:
    """A cluster driver. Subclass it, implement :meth:`describe` and the
    operations the driver supports; every other method answers what
    Magnum's base driver answers. An operation raises an error made by
    :func:`client`, :func:`invalid`, :func:`not_supported` or
    :func:`failed`; a host refusal raised by an import fails the operation
    with the refusal's text."""

    def describe(self):
        """The entry points of this component (``EntryPoint(name, beta,
        provides, description)``); they must agree with the manifest."""
        raise NotImplementedError("describe")

    def validate_master_size(self, entry_point, count):
        validate_master_size(count)

    def validate_master_resize(self, entry_point, count):
        raise client(
            400,
            "MasterNGResizeNotSupported",
            "Resizing the master nodegroup is not supported by this driver.",
        )

    def validate_create(self, ctx, state):
        return None

    def validate_upgrade(self, ctx, state, template):
        return None

    def validate_nodegroup(self, ctx, state, ng):
        """Contract 1.1: the driver's checks of a nodegroup about to be
        created, as 400s, before its row is written."""
        return None

    def can_rotate_ca(self, ctx, state):
        raise client(400, "NotSupported", "'rotate_ca_certificate' is not supported by this driver.")

    def create_cluster(self, ctx, state, timeout_minutes):
        raise not_supported("create_cluster")

    def update_cluster(self, ctx, state):
        raise not_supported("update_cluster")

    def delete_cluster(self, ctx, state):
        raise not_supported("delete_cluster")

    def resize_cluster(self, ctx, state, req):
        raise not_supported("resize_cluster")

    def upgrade_cluster(self, ctx, state, req):
        raise not_supported("upgrade_cluster")

    def create_nodegroup(self, ctx, state, ng):
        raise not_supported("create_nodegroup")

    def update_nodegroup(self, ctx, state, ng):
        raise not_supported("update_nodegroup")

    def delete_nodegroup(self, ctx, state, ng):
        raise not_supported("delete_nodegroup")

    def rotate_ca(self, ctx, state):
        raise client(400, "NotSupported", "'rotate_ca_certificate' is not supported by this driver.")

    def rotate_credential(self, ctx, state):
        raise client(400, "NotSupported", "Credential rotation is not supported by driver.")

    def watches(self, ctx, state):
        return []

    def derive_status(self, ctx, state, observed):
        raise not_supported("derive_status")

    def poll_status(self, ctx, state):
        return _no_update()

    def derive(self, ctx, state, snapshot):
        """Contract 1.1's ``derive-status``: the rows' new state from what
        the host holds of each selector of :meth:`watches` (``selector``,
        ``served``, ``synced``, ``objects``), as :func:`status_answer`. Pure:
        the same rows, snapshot and ``ctx.now`` give the same answer.
        Default: nothing until every selector is synced, then
        :meth:`derive_status` over the objects."""
        if any(not o.synced for o in snapshot):
            return status_answer()
        objects = [obj for o in snapshot for obj in o.objects]
        return status_answer(self.derive_status(ctx, state, objects))

    def poll(self, ctx, state):
        """Contract 1.1's ``poll-status``, as :func:`status_answer`.
        Default: :meth:`poll_status` without effects."""
        return status_answer(self.poll_status(ctx, state))

    def apply_effects(self, ctx, state, effects):
        """Contract 1.1: runs the side effects a status answer asked for
        (each has ``name`` and ``detail``) before its update is saved.
        Default: nothing to run; effects asked for and not run fail."""
        if effects:
            names = ", ".join(e.name for e in effects)
            raise failed(f"the driver asked for effects it does not apply: {names}")


#: The exports whose :class:`ClusterDriver` method has another name: in
#: contract 1.1, ``derive-status`` and ``poll-status`` answer effects too,
#: and ``derive_status`` and ``poll_status`` keep their 1.0 meaning.
_RENAMED = {"derive_status": "derive", "poll_status": "poll"} if _V1_1 else {}


def _call(cls, name, *args):
    try:
        return getattr(cls(), name)(*args)
    except Exception as exc:  # every failure crosses as the contract's error
        raise _driver_error(exc) from None


def export(cls):
    """The classes a component exports for a :class:`ClusterDriver`
    subclass: ``Driver, Lifecycle, Status = export(MyDriver)`` in the
    module componentize-py builds. Each has a method for every function of
    its interface in the bindings (the contract's WIT), which calls the
    method of ``cls`` of the same name, or the one :data:`_RENAMED` gives."""

    def method(name):
        return lambda self, *args: _call(cls, name, *args)

    def klass(protocol):
        methods = {}
        for name, value in vars(protocol).items():
            if name.startswith("_") or not callable(value):
                continue
            target = _RENAMED.get(name, name)
            if not callable(getattr(cls, target, None)):
                raise TypeError(f"{cls.__name__} has no method {target} for the export {name}")
            methods[name] = method(target)
        return type(protocol.__name__, (), methods)

    return klass(_exports.Driver), klass(_exports.Lifecycle), klass(_exports.Status)
