"""The SDK against the bindings of each contract version and world,
natively (python3 -m unittest discover sdk/python/tests): the modules
componentize-py generates are stood in for by the test harness's, read
from the WIT files (test_testing.py checks they have the generated ones'
names), so that what `export` exports, what the defaults answer and which
imports each world has are checked without building a component."""

import importlib
import pathlib
import sys
import tempfile
import unittest

SDK = pathlib.Path(__file__).resolve().parent.parent
if str(SDK) not in sys.path:
    sys.path.insert(0, str(SDK))

import openkeel_magnum_driver_testing as testing  # noqa: E402


def load_sdk(version, world="cluster-driver"):
    testing.install(world, version)
    return importlib.import_module("openkeel_magnum_driver")


def Err():
    return sys.modules["componentize_py_types"].Err


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
        e = sdk.failed_after("boom", sdk.types.Update(None, [], []))
        self.assertEqual(type(e.value).__name__, "DriverError_Failed")


class Contract11Test(unittest.TestCase):
    def setUp(self):
        self.sdk = load_sdk("1.1.0")
        self.t = self.sdk.types
        self.status = testing.module("status")

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
        sdk, t, s = self.sdk, self.t, self.status
        seen = []

        class D(sdk.ClusterDriver):
            def derive_status(self, ctx, state, observed):
                seen.append(observed)
                return t.Update("cluster", [], [])

        _, _, status = sdk.export(D)
        unsynced = [s.Observation("s1", True, True, ["a"]), s.Observation("s2", True, False, [])]
        a = status().derive_status(None, None, unsynced)
        self.assertEqual(a, s.StatusAnswer(t.Update(None, [], []), []))
        self.assertEqual(seen, [])
        synced = [s.Observation("s1", True, True, ["a"]), s.Observation("s2", True, True, ["b"])]
        a = status().derive_status(None, None, synced)
        self.assertEqual(a, s.StatusAnswer(t.Update("cluster", [], []), []))
        self.assertEqual(seen, [["a", "b"]])

    def test_effects_are_asked_for_and_run_by_the_driver(self):
        sdk, s = self.sdk, self.status
        ran = []

        class D(sdk.ClusterDriver):
            def poll(self, ctx, state):
                return sdk.status_answer(None, [("forget", "u1")])

            def apply_effects(self, ctx, state, effects):
                ran.extend((e.name, e.detail) for e in effects)

        _, _, status = sdk.export(D)
        a = status().poll_status(None, None)
        self.assertEqual(a.effects, [s.Effect("forget", "u1")])
        status().apply_effects(None, None, a.effects)
        self.assertEqual(ran, [("forget", "u1")])
        # A driver that asks for effects it does not run fails the call.
        _, _, plain = sdk.export(sdk.ClusterDriver)
        with self.assertRaises(Err()) as cm:
            plain().apply_effects(None, None, [s.Effect("forget", "u1")])
        self.assertIn("forget", cm.exception.value.value)

    def test_a_failure_after_the_fact_keeps_its_update(self):
        sdk, t = self.sdk, self.t

        class D(sdk.ClusterDriver):
            def create_cluster(self, ctx, state, timeout):
                raise sdk.failed_after("quota", t.Update("with-stack-id", [], []))

        _, lifecycle, _ = sdk.export(D)
        with self.assertRaises(Err()) as cm:
            lifecycle().create_cluster(None, None, 60)
        v = cm.exception.value
        self.assertEqual(type(v).__name__, "DriverError_FailedAfter")
        self.assertEqual(v.value, t.Failure("quota", t.Update("with-stack-id", [], [])))


class AddingAFunctionTest(unittest.TestCase):
    """The recipe of docs/architecture.md, "Adding a contract function", on
    the Python side: a function declared in the WIT is exported by
    ``export`` with no list to edit, and calls the ``ClusterDriver`` method
    of its name; a driver class without that method is refused by
    ``export``, naming it."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        wit = pathlib.Path(self.dir.name)
        for f in (testing.WIT_ROOT / "magnum-driver@1.1.0").glob("*.wit"):
            text = f.read_text()
            if f.name == "lifecycle.wit":
                text = text.rstrip().removesuffix("}") + (
                    "  drain-nodes: func(ctx: call-context, state: cluster-state, ng: nodegroup)"
                    " -> result<update, driver-error>;\n}\n"
                )
            (wit / f.name).write_text(text)
        testing.install("cluster-driver", wit=wit)
        self.sdk = importlib.import_module("openkeel_magnum_driver")

    def tearDown(self):
        self.dir.cleanup()

    def test_the_new_function_is_exported_and_calls_its_method(self):
        sdk = self.sdk

        class D(sdk.ClusterDriver):
            def drain_nodes(self, ctx, state, ng):
                return ("drained", ng)

        _, lifecycle, _ = sdk.export(D)
        self.assertEqual(lifecycle().drain_nodes(None, None, "ng"), ("drained", "ng"))
        with self.assertRaises(TypeError) as cm:
            sdk.export(sdk.ClusterDriver)
        self.assertIn("drain_nodes", str(cm.exception))


class WorldsTest(unittest.TestCase):
    """The SDK imports only what the world the driver is built for has: a
    plain-driver driver builds (its bindings have no kube) and runs, and
    the imports it lacks say which world it is and which to build with."""

    def test_each_world_has_its_imports(self):
        cases = [
            ("1.0.0", "plain-driver", [], ["kube", "openstack", "cluster_secrets"]),
            ("1.0.0", "kube-driver", ["kube"], ["openstack", "cluster_secrets"]),
            ("1.0.0", "cluster-driver", ["kube", "openstack", "cluster_secrets"], []),
            ("1.1.0", "plain-driver", ["cloud"], ["kube", "openstack", "cluster_secrets"]),
            ("1.1.0", "kube-driver", ["cloud", "kube"], ["openstack", "cluster_secrets"]),
            ("1.1.0", "cluster-driver", ["cloud", "kube", "openstack", "cluster_secrets"], []),
        ]
        for version, world, present, absent in cases:
            with self.subTest(version=version, world=world):
                sdk = load_sdk(version, world)
                self.assertEqual(sdk.WORLD, world)
                for name in present:
                    self.assertIs(getattr(sdk, name), sys.modules[f"wit_world.imports.{name}"])
                for name in absent:
                    self.assertFalse(getattr(sdk, name), name)
                    self.assertNotIn(f"wit_world.imports.{name}", sys.modules)

    def test_a_plain_driver_runs_and_kube_there_names_the_world(self):
        sdk = load_sdk("1.1.0", "plain-driver")
        with self.assertRaises(sdk.NotInWorld) as cm:
            sdk.kube.apply(None)
        self.assertEqual(
            str(cm.exception),
            "kube.apply: this driver is built for the plain-driver world (1.1.0: log, config, state, cloud), "
            "which does not import kube; build it with -w kube-driver (or cluster-driver) to use it",
        )
        t = sdk.types

        class D(sdk.ClusterDriver):
            def describe(self):
                return [sdk.EntryPoint("p", True, [sdk.Target("vm", "os", "kubernetes")], sdk.WORLD)]

            def create_cluster(self, ctx, state, timeout):
                sdk.state.set("k", "v")
                sdk.log("info", "created", n=1)
                return t.Update(None, [], [])

            def delete_cluster(self, ctx, state):
                sdk.kube.delete(None)

        driver, lifecycle, _ = sdk.export(D)
        self.assertEqual(driver().describe()[0].description, "plain-driver")
        self.assertEqual(lifecycle().create_cluster(None, None, 0), t.Update(None, [], []))
        self.assertEqual(testing.state(), {"k": "v"})
        self.assertEqual(testing.logs(), [("info", "created", [("n", "1")])])
        # Inside a call, the use fails the operation with that text.
        with self.assertRaises(Err()) as cm:
            lifecycle().delete_cluster(None, None)
        v = cm.exception.value
        self.assertEqual(type(v).__name__, "DriverError_Failed")
        self.assertTrue(v.value.startswith("NotInWorld: kube.delete: this driver is built for the plain-driver"), v.value)

    def test_a_1_0_plain_driver_has_no_cloud(self):
        sdk = load_sdk("1.0.0", "plain-driver")
        self.assertEqual((sdk.WORLD, sdk.WIT_VERSION), ("plain-driver", "1.0.0"))
        self.assertIsNone(sdk.cloud)
        with self.assertRaises(sdk.NotInWorld) as cm:
            sdk.openstack.resolve_image("x")
        self.assertIn("(1.0.0: log, config, state)", str(cm.exception))
        self.assertIn("build it with -w cluster-driver", str(cm.exception))


if __name__ == "__main__":
    unittest.main()
