"""The SDK against the bindings of each contract version, natively
(python3 -m unittest discover sdk/python/tests): the modules componentize-py
generates are stood in for by small ones of the same shape, so that what
`export` exports and what the defaults answer is checked without building
a component."""

import importlib
import pathlib
import sys
import types as pytypes
import unittest
from dataclasses import dataclass, field

SDK = pathlib.Path(__file__).resolve().parent.parent


class Err(Exception):
    def __init__(self, value):
        super().__init__(value)
        self.value = value


@dataclass
class Update:
    cluster: object
    nodegroups: list
    deleted_nodegroups: list


@dataclass
class Value:
    value: object


@dataclass
class Failure:
    reason: str
    update: Update


@dataclass
class StatusAnswer:
    update: Update
    effects: list


@dataclass
class Effect:
    name: str
    detail: str


@dataclass
class Observation:
    selector: object
    served: bool
    synced: bool
    objects: list = field(default_factory=list)


def bindings(version):
    """Stand-ins for the modules of a world of contract `version`."""
    mods = {}

    def module(name, **attrs):
        m = pytypes.ModuleType(name)
        m.__dict__.update(attrs)
        mods[name] = m
        return m

    module("componentize_py_types", Err=Err)
    errors = {
        n: type(n, (Value,), {})
        for n in (
            "DriverError_Client",
            "DriverError_Failed",
            "HostError_AccessDenied",
            "HostError_Invalid",
            "HostError_NotFound",
            "HostError_Conflict",
            "HostError_TooLarge",
            "HostError_Unavailable",
            "HostError_Client",
            "HostError_Other",
        )
    }
    t = module("wit_world.imports.types", Update=Update, MagnumError=tuple, Target=tuple,
               Status=object, **errors)
    if version == "1.1.0":
        t.DriverError_FailedAfter = type("DriverError_FailedAfter", (Value,), {})
        t.Failure = Failure
    level = pytypes.SimpleNamespace(TRACE=0, DEBUG=1, INFO=2, WARN=3, ERROR=4)
    log = module("wit_world.imports.log", Level=level, write=lambda *a: None)
    imports = {"types": t, "log": log}
    for n in ("config", "kube", "state"):
        imports[n] = module(f"wit_world.imports.{n}")
    if version == "1.1.0":
        imports["cloud"] = module("wit_world.imports.cloud")
    module("wit_world.imports", **imports)
    exports = {"driver": module("wit_world.exports.driver", EntryPoint=tuple)}
    if version == "1.1.0":
        exports["status"] = module(
            "wit_world.exports.status", StatusAnswer=StatusAnswer, Effect=Effect
        )
    module("wit_world.exports", **exports)
    module("wit_world", imports=mods["wit_world.imports"], exports=mods["wit_world.exports"])
    return mods


def load_sdk(version):
    for name in list(sys.modules):
        if name.startswith(("wit_world", "componentize_py_types", "openkeel_magnum_driver")):
            del sys.modules[name]
    sys.modules.update(bindings(version))
    if str(SDK) not in sys.path:
        sys.path.insert(0, str(SDK))
    return importlib.import_module("openkeel_magnum_driver")


class Contract10Test(unittest.TestCase):
    def test_a_1_0_driver_exports_the_1_0_functions(self):
        sdk = load_sdk("1.0.0")
        self.assertEqual(sdk.WIT_VERSION, "1.0.0")
        self.assertIsNone(sdk.cloud)

        class D(sdk.ClusterDriver):
            def derive_status(self, ctx, state, observed):
                return ("derived", observed)

        driver, lifecycle, status = sdk.export(D)
        self.assertFalse(hasattr(driver, "validate_nodegroup"))
        self.assertFalse(hasattr(status, "apply_effects"))
        self.assertEqual(status().derive_status(None, None, ["o"]), ("derived", ["o"]))
        # Without 1.1, a failure after the fact fails with its reason.
        e = sdk.failed_after("boom", Update(None, [], []))
        self.assertEqual(type(e.value).__name__, "DriverError_Failed")


class Contract11Test(unittest.TestCase):
    def setUp(self):
        self.sdk = load_sdk("1.1.0")

    def test_a_1_1_driver_exports_the_1_1_functions(self):
        sdk = self.sdk
        self.assertEqual(sdk.WIT_VERSION, "1.1.0")
        self.assertIsNotNone(sdk.cloud)
        driver, lifecycle, status = sdk.export(sdk.ClusterDriver)
        for name in ("validate_nodegroup",):
            self.assertTrue(hasattr(driver, name), name)
        for name in ("watches", "derive_status", "poll_status", "apply_effects"):
            self.assertTrue(hasattr(status, name), name)
        self.assertIsNone(driver().validate_nodegroup(None, None, None))

    def test_derive_waits_for_a_synced_snapshot_then_reads_every_object(self):
        sdk = self.sdk
        seen = []

        class D(sdk.ClusterDriver):
            def derive_status(self, ctx, state, observed):
                seen.append(observed)
                return Update("cluster", [], [])

        _, _, status = sdk.export(D)
        unsynced = [Observation("s1", True, True, ["a"]), Observation("s2", True, False)]
        a = status().derive_status(None, None, unsynced)
        self.assertEqual(a, StatusAnswer(Update(None, [], []), []))
        self.assertEqual(seen, [])
        synced = [Observation("s1", True, True, ["a"]), Observation("s2", True, True, ["b"])]
        a = status().derive_status(None, None, synced)
        self.assertEqual(a, StatusAnswer(Update("cluster", [], []), []))
        self.assertEqual(seen, [["a", "b"]])

    def test_effects_are_asked_for_and_run_by_the_driver(self):
        sdk = self.sdk
        ran = []

        class D(sdk.ClusterDriver):
            def poll(self, ctx, state):
                return sdk.status_answer(None, [("forget", "u1")])

            def apply_effects(self, ctx, state, effects):
                ran.extend((e.name, e.detail) for e in effects)

        _, _, status = sdk.export(D)
        a = status().poll_status(None, None)
        self.assertEqual(a.effects, [Effect("forget", "u1")])
        status().apply_effects(None, None, a.effects)
        self.assertEqual(ran, [("forget", "u1")])
        # A driver that asks for effects it does not run fails the call.
        _, _, plain = sdk.export(sdk.ClusterDriver)
        with self.assertRaises(Err) as cm:
            plain().apply_effects(None, None, [Effect("forget", "u1")])
        self.assertIn("forget", cm.exception.value.value)

    def test_a_failure_after_the_fact_keeps_its_update(self):
        sdk = self.sdk

        class D(sdk.ClusterDriver):
            def create_cluster(self, ctx, state, timeout):
                raise sdk.failed_after("quota", Update("with-stack-id", [], []))

        _, lifecycle, _ = sdk.export(D)
        with self.assertRaises(Err) as cm:
            lifecycle().create_cluster(None, None, 60)
        v = cm.exception.value
        self.assertEqual(type(v).__name__, "DriverError_FailedAfter")
        self.assertEqual(v.value, Failure("quota", Update("with-stack-id", [], [])))


if __name__ == "__main__":
    unittest.main()
