"""The test harness of Python drivers (openkeel_magnum_driver_testing),
natively: its bindings are componentize-py's (names, fields, members and
functions, compared with what `componentize-py bindings` generates when
OKM_COMPONENTIZE_PY names it; required with CI=true), and its in-memory
imports answer as the host does."""

import ast
import dataclasses
import enum
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import textwrap
import unittest

SDK = pathlib.Path(__file__).resolve().parent.parent
if str(SDK) not in sys.path:
    sys.path.insert(0, str(SDK))

import openkeel_magnum_driver_testing as testing  # noqa: E402

WORLDS = ("plain-driver", "kube-driver", "cluster-driver")


def Err():
    return sys.modules["componentize_py_types"].Err


def cm(name, labels, data=None, ns="ns"):
    t = testing.module("types")
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": ns, "labels": labels}}
    if data is not None:
        body["data"] = data
    return t.K8sObject("v1", "ConfigMap", ns, name, json.dumps(body))


class BindingsTest(unittest.TestCase):
    def shapes_generated(self, root):
        out = {}
        for f in sorted(pathlib.Path(root, "wit_world").rglob("*.py")):
            if f.name == "__init__.py":
                continue
            mod = "wit_world." + ".".join(f.relative_to(root).with_suffix("").parts[1:])
            shapes = {}
            for n in ast.parse(f.read_text()).body:
                if isinstance(n, ast.ClassDef) and not any(getattr(b, "id", "") == "Protocol" for b in n.bases):
                    fields = [s.target.id for s in n.body if isinstance(s, ast.AnnAssign)]
                    members = [s.targets[0].id for s in n.body if isinstance(s, ast.Assign)]
                    shapes[n.name] = fields or members
                elif isinstance(n, ast.FunctionDef):
                    shapes[n.name] = "func"
            out[mod] = shapes
        # The protocols of the exports: their methods, in order.
        exports = ast.parse(pathlib.Path(root, "wit_world", "exports", "__init__.py").read_text())
        out["wit_world.exports"] = {
            n.name: [f.name for f in n.body if isinstance(f, ast.FunctionDef)]
            for n in exports.body
            if isinstance(n, ast.ClassDef) and any(getattr(b, "id", "") == "Protocol" for b in n.bases)
        }
        return out

    def shapes_installed(self, version, world):
        testing.install(world, version)
        out = {}
        for name, m in sys.modules.items():
            if not name.startswith("wit_world.") or name.count(".") != 2:
                continue
            shapes = {}
            for k, v in vars(m).items():
                if k.startswith("_"):
                    continue
                if isinstance(v, type) and issubclass(v, enum.Enum):
                    shapes[k] = [e.name for e in v]
                elif dataclasses.is_dataclass(v):
                    shapes[k] = [f.name for f in dataclasses.fields(v)]
                elif callable(v):
                    shapes[k] = "func"
            out[name] = shapes
        exports = sys.modules["wit_world.exports"]
        out["wit_world.exports"] = {
            k: [n for n in vars(v) if not n.startswith("_")]
            for k, v in vars(exports).items()
            if isinstance(v, type) and v.__module__ == "wit_world.exports"
        }
        return out

    def test_the_bindings_are_componentize_pys(self):
        cpy = os.environ.get("OKM_COMPONENTIZE_PY")
        if not cpy:
            if os.environ.get("CI") == "true":
                self.fail("OKM_COMPONENTIZE_PY is not set (CI=true): eval \"$(scripts/ci/componentize-py.sh)\"")
            self.skipTest("OKM_COMPONENTIZE_PY is not set")
        compared = 0
        for wit in sorted(testing.WIT_ROOT.glob("magnum-driver@*")):
            version = wit.name.split("@")[1]
            for world in WORLDS:
                with tempfile.TemporaryDirectory() as out:
                    subprocess.run([cpy, "-d", str(wit), "-w", world, "bindings", out], check=True,
                                   capture_output=True)
                    generated = self.shapes_generated(out)
                installed = self.shapes_installed(version, world)
                self.assertEqual(sorted(installed), sorted(generated), f"{version} {world}: modules")
                for mod, shapes in generated.items():
                    self.assertEqual(installed[mod], shapes, f"{version} {world}: {mod}")
                compared += 1
        self.assertEqual(compared, 6)

    def test_the_same_contract_gives_the_same_classes(self):
        testing.install("kube-driver", "1.1.0")
        status = testing.module("types").Status
        testing.install("plain-driver", "1.1.0")
        self.assertIs(testing.module("types").Status, status)
        testing.install("plain-driver", "1.0.0")
        self.assertIsNot(testing.module("types").Status, status)


class KubeTest(unittest.TestCase):
    def setUp(self):
        testing.install("kube-driver", "1.1.0")
        self.kube = testing.module("kube")
        self.t = testing.module("types")

    def test_apply_get_list_by_label_and_delete(self):
        kube, t = self.kube, self.t
        stored = kube.apply(cm("x", {"c": "1"}))
        self.assertEqual(stored.name, "x")
        testing.put_object(cm("y", {"c": "2", "role": "a"}))
        testing.put_object(cm("z", {"c": "2"}, ns="other"))
        sel = lambda labels, ns="ns": t.Selector("v1", "ConfigMap", ns, labels)  # noqa: E731
        self.assertEqual([o.name for o in kube.list_by_label(sel([("c", "2")]))], ["y"])
        self.assertEqual([o.name for o in kube.list_by_label(sel([("c", "2"), ("role", "a")]))], ["y"])
        self.assertEqual([o.name for o in kube.list_by_label(sel([("c", "2"), ("role", "b")]))], [])
        self.assertEqual([o.name for o in kube.list_by_label(sel([]))], ["x", "y"])
        self.assertEqual([o.name for o in kube.list_by_label(sel([("c", "2")], "other"))], ["z"])
        ref = t.ObjectRef("v1", "ConfigMap", "ns", "x")
        self.assertEqual(json.loads(kube.get(ref).json)["metadata"]["labels"], {"c": "1"})
        self.assertIs(kube.delete(ref), True)
        self.assertIs(kube.delete(ref), False)
        self.assertIsNone(kube.get(ref))
        self.assertEqual([o.name for o in testing.objects()], ["y", "z"])

    def test_apply_is_server_side_apply_for_one_field_manager(self):
        kube = self.kube
        kube.apply(cm("x", {"c": "1", "old": "o"}, {"a": "1", "b": "2"}))
        # A controller writes status; someone else annotates.
        testing.merge_object("v1", "ConfigMap", "ns", "x", {"status": {"ready": True}})
        testing.merge_object("v1", "ConfigMap", "ns", "x", {"metadata": {"annotations": {"n": "1"}}})
        # The driver's next apply drops the fields it no longer sets and
        # keeps everyone else's.
        stored = json.loads(kube.apply(cm("x", {"c": "2"}, {"a": "3"})).json)
        self.assertEqual(stored["metadata"]["labels"], {"c": "2"})
        self.assertEqual(stored["data"], {"a": "3"})
        self.assertEqual(stored["status"], {"ready": True})
        self.assertEqual(stored["metadata"]["annotations"], {"n": "1"})
        self.assertEqual(testing.object("v1", "ConfigMap", "ns", "x"), stored)
        # Applying the same object twice changes nothing.
        self.assertEqual(json.loads(kube.apply(cm("x", {"c": "2"}, {"a": "3"})).json), stored)

    def test_the_envelope_is_checked_against_the_body(self):
        kube, t = self.kube, self.t

        def refused(obj):
            with self.assertRaises(Err()) as e:
                kube.apply(obj)
            self.assertEqual(type(e.exception.value).__name__, "HostError_Invalid")
            return e.exception.value.value

        self.assertIn("is not JSON", refused(t.K8sObject("v1", "ConfigMap", "ns", "x", "{")))
        bad = cm("x", {})
        bad.name = "y"
        self.assertEqual(refused(bad), "the body's metadata.name (x) disagrees with the envelope (y)")
        # A missing namespace is filled from the envelope.
        body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "n"}}
        stored = kube.apply(t.K8sObject("v1", "ConfigMap", "ns", "n", json.dumps(body)))
        self.assertEqual(json.loads(stored.json)["metadata"]["namespace"], "ns")

    def test_unserved_kinds_and_snapshots(self):
        kube, t = self.kube, self.t
        testing.put_object(cm("a", {"c": "1"}))
        testing.put_object(cm("b", {"c": "1"}))
        sel = t.Selector("v1", "ConfigMap", "ns", [("c", "1")])
        (obs,) = testing.snapshot([sel])
        self.assertEqual((obs.served, obs.synced, [o.name for o in obs.objects]), (True, True, ["a", "b"]))
        self.assertIs(kube.served("v1", "ConfigMap"), True)
        testing.unserve("v1", "ConfigMap")
        self.assertIs(kube.served("v1", "ConfigMap"), False)
        self.assertEqual(kube.list_by_label(sel), [])
        (obs,) = testing.snapshot([sel])
        self.assertEqual((obs.served, obs.objects), (False, []))


class GrantsTest(unittest.TestCase):
    """With a manifest, the imports refuse what it does not request, with
    the host's words; derive-status is pure."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        d = pathlib.Path(self.dir.name)
        (d / "driver.toml").write_text(textwrap.dedent("""\
            manifest-version = 1
            [driver]
            name = "acme"
            version = "0.1.0"
            wit = "^1.1"
            [capabilities]
            kube = [{ api-version = "v1", kinds = ["ConfigMap"], verbs = ["get", "apply"], namespaces = ["ns"] }]
            openstack = ["resolve"]
            [options]
            default_cni = "calico"
            """))
        (d / "acme.py").write_text(textwrap.dedent("""\
            from openkeel_magnum_driver import ClusterDriver, export, kube, openstack, cluster_secrets, types

            class Acme(ClusterDriver):
                def describe(self):
                    return []

                def watches(self, ctx, state):
                    return [types.Selector("v1", "ConfigMap", "ns", [("c", state.cluster.uuid)])]

                def derive_status(self, ctx, state, observed):
                    kube.get(types.ObjectRef("v1", "ConfigMap", "ns", "x"))
                    return types.Update(None, [], [])

                def create_cluster(self, ctx, state, timeout):
                    openstack.resolve_image("fedora")
                    return types.Update(None, [], [])

                def rotate_ca(self, ctx, state):
                    cluster_secrets.cas()
                    return types.Update(None, [], [])

            Driver, Lifecycle, Status = export(Acme)
            """))
        self.driver = testing.load("acme", world="cluster-driver", version="1.1.0", manifest=d / "driver.toml", path=d)
        self.kube = testing.module("kube")

    def tearDown(self):
        sys.path.remove(self.dir.name)
        self.dir.cleanup()

    def denied(self, fn, *args):
        with self.assertRaises(Err()) as e:
            fn(*args)
        self.assertEqual(type(e.exception.value).__name__, "HostError_AccessDenied")
        return e.exception.value.value

    def test_kube_files_openstack_and_secrets_follow_the_manifest(self):
        t = testing.module("types")
        self.kube.apply(cm("x", {}))
        self.assertEqual(self.denied(self.kube.delete, t.ObjectRef("v1", "ConfigMap", "ns", "x")),
                         "driver acme is not granted kube delete of v1/ConfigMap in namespace ns")
        self.assertEqual(self.denied(self.kube.get, t.ObjectRef("v1", "Secret", "ns", "x")),
                         "driver acme is not granted kube get of v1/Secret in namespace ns")
        self.assertEqual(self.denied(self.kube.get, t.ObjectRef("v1", "ConfigMap", None, "x")),
                         "driver acme is not granted kube get of v1/ConfigMap cluster-scoped")
        self.assertEqual(self.denied(testing.module("config").read_file, "a.yaml"),
                         'driver acme is not granted files (read of "a.yaml")')
        self.assertEqual(self.denied(testing.module("openstack").volume_types),
                         "driver acme is not granted openstack volume-types (volume-types)")
        self.assertEqual(self.denied(testing.module("cluster_secrets").cas), "driver acme is not granted cluster-secrets")
        # The manifest's options are the defaults.
        self.assertEqual(testing.module("config").get("default_cni"), "calico")
        # Through the driver: a refusal fails the operation with its text.
        st = testing.new_cluster()
        reason = testing.failure(self.driver.lifecycle.rotate_ca, testing.user(), st)
        self.assertEqual(reason, "access denied: driver acme is not granted cluster-secrets")

    def test_derive_status_is_pure(self):
        st = testing.new_cluster()
        reason = testing.failure(self.driver.status_by_watches, testing.admin(), st)
        self.assertEqual(reason, "access denied: kube get during derive-status, which is pure: "
                                 "read what it needs from its snapshot")
        # Outside derive-status the same call is allowed.
        self.assertIsNone(self.kube.get(testing.module("types").ObjectRef("v1", "ConfigMap", "ns", "x")))

    def test_openstack_answers_what_the_test_set(self):
        st = testing.new_cluster()
        reason = testing.failure(self.driver.lifecycle.create_cluster, testing.user(), st, 60)
        self.assertEqual(reason, "unavailable: no OpenStack is configured on this host")
        os_ = testing.module("openstack")
        testing.set_openstack("resolve-image", {"fedora": os_.Image("img-1", None)})
        testing.set_openstack("resolve_flavor_name", lambda ref: ref.upper())
        testing.set_openstack("resolve-network-id", testing.host_error("client", (400, "NetworkNotFound", "no net")))
        self.driver.lifecycle.create_cluster(testing.user(), st, 60)
        self.assertEqual(os_.resolve_image("fedora"), os_.Image("img-1", None))
        with self.assertRaises(Err()) as e:
            os_.resolve_image("ubuntu")
        self.assertEqual(type(e.exception.value).__name__, "HostError_NotFound")
        self.assertEqual(os_.resolve_flavor_name("m1.small"), "M1.SMALL")
        with self.assertRaises(Err()) as e:
            os_.resolve_network_id("public")
        self.assertEqual(e.exception.value.value.kind, "NetworkNotFound")
        self.assertEqual([c[0] for c in testing.openstack_calls()],
                         ["resolve-image"] * 4 + ["resolve-flavor-name", "resolve-network-id"])


class WorldTest(unittest.TestCase):
    def test_config_state_log_cloud_secrets_and_clock(self):
        testing.install("cluster-driver", "1.1.0")
        config, state, log = (testing.module(n) for n in ("config", "state", "log"))
        testing.set_option("b", "2")
        testing.set_option("a", "1")
        self.assertEqual((config.get("a"), config.get("c"), config.all()), ("1", None, [("a", "1"), ("b", "2")]))
        with self.assertRaises(Err()) as e:
            config.read_file("f")
        self.assertEqual(e.exception.value.value, "file f")
        testing.set_file("f", "text")
        self.assertEqual(config.read_file("f"), "text")
        state.set("k", "v")
        self.assertEqual((state.get("k"), testing.state()), ("v", {"k": "v"}))
        state.remove("k")
        state.set("j", "w")
        state.clear()
        self.assertEqual(testing.state(), {})
        log.write(log.Level.DEBUG, "d", [])
        testing.set_max_level("info")
        log.write(log.Level.DEBUG, "dropped", [])
        log.write(log.Level.WARN, "w", [("k", "v")])
        self.assertEqual(testing.logs(), [("debug", "d", []), ("warn", "w", [("k", "v")])])
        self.assertEqual(log.max_level(), log.Level.INFO)

        cloud = testing.module("cloud")
        self.assertEqual(cloud.info().keystone_url, "https://keystone.example.test:5000/v3")
        testing.set_cloud(region=None, verify=False)
        self.assertEqual((cloud.info().region, cloud.info().verify), (None, False))

        secrets = testing.module("cluster_secrets")
        with self.assertRaises(Err()) as e:
            secrets.cas()
        self.assertEqual(e.exception.value.value, "no cluster certificate store is configured on this host")
        kp = testing.key_pair("CERT", "KEY")
        testing.set_cluster_cas(secrets.ClusterCas(kp, kp, kp, kp))
        self.assertEqual(secrets.cas().admin.cert_pem, "CERT")

        self.assertEqual(testing.user().now, testing.START)
        testing.advance(90)
        self.assertEqual(testing.admin().now, testing.START + 90_000_000)
        self.assertTrue(testing.admin().caller.admin)
        testing.reset()
        self.assertEqual((testing.logs(), testing.state(), testing.now()), ([], {}, testing.START))

    def test_fixtures_and_the_conductors_save(self):
        for version in ("1.0.0", "1.1.0"):
            with self.subTest(version=version):
                testing.install("kube-driver", version)
                t = testing.module("types")
                st = testing.new_cluster("acme", labels={"size": "3"})
                self.assertEqual(st.template.driver, "acme")
                self.assertEqual(st.cluster.labels, [("size", "3")])
                self.assertEqual([(n.role, n.node_count) for n in st.nodegroups], [("master", 1), ("worker", 2)])
                self.assertEqual(hasattr(testing.user(), "now"), version == "1.1.0")
                ng = testing.record("types", "nodegroup", uuid="new", name="extra", role="worker", node_count=1)
                cluster = st.cluster
                cluster.status = t.Status.CREATE_COMPLETE
                testing.save(st, t.Update(cluster, [ng], [testing.MASTER_UUID]))
                self.assertEqual([n.uuid for n in st.nodegroups], [testing.WORKER_UUID, "new"])
                self.assertEqual(st.cluster.status, t.Status.CREATE_COMPLETE)
                testing.set_status(st, "DELETE_IN_PROGRESS")
                self.assertEqual({n.status for n in st.nodegroups}, {t.Status.DELETE_IN_PROGRESS})
                with self.assertRaises(TypeError):
                    testing.record("types", "cluster", colour="red")

    def test_refusal_and_failure_say_when_the_call_did_otherwise(self):
        testing.install("kube-driver", "1.1.0")
        import openkeel_magnum_driver as sdk

        def refuse():
            raise sdk.invalid("no")

        def fail():
            raise sdk.failed("boom")

        self.assertEqual(testing.refusal(refuse).message, "no")
        self.assertEqual(testing.failure(fail), "boom")
        with self.assertRaises(AssertionError):
            testing.refusal(fail)
        with self.assertRaises(AssertionError):
            testing.failure(lambda: 1)


if __name__ == "__main__":
    unittest.main()
