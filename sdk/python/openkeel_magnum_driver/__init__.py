"""Write an openkeel-magnum cluster driver in Python.

A driver is a WebAssembly component implementing the
``openkeel:magnum-driver@1.0.0`` contract, built from Python with
componentize-py. This package (whose version follows the contract's) is the
Python counterpart of the Rust SDK:

- :class:`ClusterDriver`, whose every method but ``describe`` answers what
  Magnum's base driver answers (400 ``NotSupported`` for an operation);
- :func:`export`, which turns a subclass into the three classes the
  component exports (``Driver``, ``Lifecycle``, ``Status``);
- errors (:func:`client`, :func:`invalid`, :func:`not_supported`,
  :func:`failed`), label readers with the same messages as the Rust SDK
  (:class:`Labels`), logging (:func:`log`), and the host's imports
  (``kube``, ``config``, ``state``) re-exported from the bindings.

A fresh instance of the subclass serves every call: keep nothing in module
globals between calls; what must survive goes in ``state``.

    from openkeel_magnum_driver import ClusterDriver, EntryPoint, Target, export

    class Hello(ClusterDriver):
        def describe(self):
            return [EntryPoint("hello_py", True, [Target("vm", "fedora-coreos", "kubernetes")],
                               "A Python driver")]

    Driver, Lifecycle, Status = export(Hello)
"""

import traceback

from componentize_py_types import Err
from wit_world.imports import config, kube, state, types
from wit_world.imports import log as _log
from wit_world.exports.driver import EntryPoint

from .labels import Labels, LabelError

__all__ = [
    "WIT_VERSION",
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
    "validate_master_size",
    "log",
    "export",
    "config",
    "kube",
    "state",
    "types",
]

#: The version of the contract this package builds drivers for.
WIT_VERSION = "1.0.0"

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


def _driver_error(exc):
    """What a call raised, as the contract's error: a raised driver error
    as it is, a host refusal as ``failed`` (a client error from the host
    passes through), a label error as 400, anything else as ``failed`` with
    its type and message (logged with its traceback)."""
    if isinstance(exc, Err):
        v = exc.value
        if isinstance(v, (types.DriverError_Client, types.DriverError_Failed)):
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
        return types.Update(None, [], [])


def _call(cls, name, *args):
    try:
        return getattr(cls(), name)(*args)
    except Exception as exc:  # every failure crosses as the contract's error
        raise _driver_error(exc) from None


def export(cls):
    """The classes a component exports for a :class:`ClusterDriver`
    subclass: ``Driver, Lifecycle, Status = export(MyDriver)`` in the
    module componentize-py builds."""

    def method(name):
        return lambda self, *args: _call(cls, name, *args)

    def klass(export_name, names):
        return type(export_name, (), {n: method(n) for n in names})

    driver = klass(
        "Driver",
        [
            "describe",
            "validate_master_size",
            "validate_master_resize",
            "validate_create",
            "validate_upgrade",
            "can_rotate_ca",
        ],
    )
    lifecycle = klass(
        "Lifecycle",
        [
            "create_cluster",
            "update_cluster",
            "delete_cluster",
            "resize_cluster",
            "upgrade_cluster",
            "create_nodegroup",
            "update_nodegroup",
            "delete_nodegroup",
            "rotate_ca",
            "rotate_credential",
        ],
    )
    status = klass("Status", ["watches", "derive_status", "poll_status"])
    return driver, lifecycle, status
