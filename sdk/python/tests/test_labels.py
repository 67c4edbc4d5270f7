"""The label readers, natively (python3 -m unittest discover sdk/python/tests):
the same answers and messages as the Rust SDK's."""

import importlib.util
import pathlib
import unittest

_spec = importlib.util.spec_from_file_location(
    "labels", pathlib.Path(__file__).resolve().parent.parent / "openkeel_magnum_driver" / "labels.py"
)
labels = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(labels)
Labels, LabelError = labels.Labels, labels.LabelError


class LabelsTest(unittest.TestCase):
    def refused(self, message, f, *args):
        with self.assertRaises(LabelError) as cm:
            f(*args)
        self.assertEqual(str(cm.exception), message)

    def test_pairs_keep_the_last_value_of_a_repeated_key(self):
        self.assertEqual(Labels([("a", "1"), ("a", "2")]).get("a"), "2")
        self.assertEqual(Labels({"b": "1", "a": "2"}).pairs(), [("a", "2"), ("b", "1")])

    def test_booleans_are_parsed_strictly(self):
        l = Labels([("t", "Yes"), ("f", " off "), ("bad", "maybe")])
        self.assertIs(l.bool("t", False), True)
        self.assertIs(l.bool("f", True), False)
        self.assertIs(l.bool("absent", True), True)
        self.refused('Label bad has an invalid boolean value "maybe".', l.bool, "bad", False)

    def test_integers_and_ranges(self):
        l = Labels([("n", " 7 "), ("plus", "+3"), ("blank", " "), ("bad", "7x"), ("big", "99999999999999999999")])
        self.assertEqual(l.int("n", 0), 7)
        self.assertEqual(l.int("plus", 0), 3)
        self.assertEqual(l.int("blank", 5), 5)
        self.refused('Label bad has an invalid integer value "7x".', l.int, "bad", 0)
        self.refused('Label big has an invalid integer value "99999999999999999999".', l.int, "big", 0)
        self.refused("Label n must be between 1 and 5, not 7.", l.int_in, "n", 1, 1, 5)
        self.assertEqual(l.int_in("absent", 2, 1, 5), 2)

    def test_required_one_of_and_lists(self):
        l = Labels([("cni", "flannel"), ("empty", "  "), ("zones", "a, b,,c ")])
        self.refused("Label empty is required by this driver.", l.required, "empty")
        self.refused("Label absent is required by this driver.", l.required, "absent")
        self.assertEqual(l.one_of("cni", ["calico", "flannel"], "calico"), "flannel")
        self.assertEqual(l.one_of("absent", ["calico"], "calico"), "calico")
        self.refused(
            'Label cni has an invalid value "flannel": expected one of calico, cilium.',
            l.one_of, "cni", ["calico", "cilium"], "calico",
        )
        self.assertEqual(l.list("zones"), ["a", "b", "c"])
        self.assertTrue(l.lists("zones", "b"))
        self.assertEqual(l.list("absent"), [])


if __name__ == "__main__":
    unittest.main()
