"""The worked examples of docs/driver-sdk.md are the example files.

A fenced code block of the guide preceded by an HTML comment

    <!-- example: sdk/examples/hello/driver.toml -->
    <!-- example: sdk/examples/hello/src/lib.rs#driver -->

must be, character for character, the whole file, or the region of the
file between the lines holding ``[example: driver]`` and
``[/example: driver]`` (those two lines left out). The block may be
indented (inside a list item): its fence's indentation is removed from
every line.
"""

import pathlib
import re
import unittest

ROOT = pathlib.Path(__file__).resolve().parents[3]
GUIDE = ROOT / "docs" / "driver-sdk.md"

# Every file the guide teaches, which must stay marked.
REQUIRED = {
    "sdk/examples/hello/Cargo.toml",
    "sdk/examples/hello/src/lib.rs#driver",
    "sdk/examples/hello/src/lib.rs#tests",
    "sdk/examples/hello/driver.toml",
    "sdk/python/examples/hello_py/app.py",
    "sdk/python/examples/hello_py/driver.toml",
    "sdk/python/examples/hello_py/test_app.py",
    "sdk/testkit/tests/conformance.rs#testkit-lifecycle",
}

MARK = re.compile(r"^\s*<!-- example: (\S+) -->\s*$")
FENCE = re.compile(r"^(\s*)(```+)\S*\s*$")


def marked_blocks(text):
    """[(target, block text, line number)] for every marked block."""
    lines = text.split("\n")
    out = []
    i = 0
    while i < len(lines):
        m = MARK.match(lines[i])
        i += 1
        if not m:
            continue
        while i < len(lines) and not lines[i].strip():
            i += 1
        f = FENCE.match(lines[i]) if i < len(lines) else None
        if not f:
            raise AssertionError(f"line {i}: the mark {m.group(1)} is not followed by a fenced block")
        indent, fence = f.group(1), f.group(2)
        start = i + 1
        i = start
        while i < len(lines) and lines[i].strip() != fence:
            i += 1
        if i == len(lines):
            raise AssertionError(f"line {start}: the block of {m.group(1)} is not closed")
        body = []
        for line in lines[start:i]:
            if line.strip() and not line.startswith(indent):
                raise AssertionError(f"line {start}: a line of {m.group(1)} is less indented than its fence")
            body.append(line[len(indent):])
        out.append((m.group(1), "\n".join(body) + "\n", start))
        i += 1
    return out


def expected(target):
    """The text a block marked `target` must be."""
    path, _, region = target.partition("#")
    text = (ROOT / path).read_text()
    if not region:
        return text
    lines = text.split("\n")
    begin = [n for n, line in enumerate(lines) if line.strip().endswith(f"[example: {region}]")]
    end = [n for n, line in enumerate(lines) if line.strip().endswith(f"[/example: {region}]")]
    if len(begin) != 1 or len(end) != 1 or end[0] <= begin[0]:
        raise AssertionError(f"{path}: no single region {region}")
    return "\n".join(lines[begin[0] + 1 : end[0]]) + "\n"


def differences(text):
    """What differs between the guide `text` and the files, one line each."""
    problems = []
    for target, block, line in marked_blocks(text):
        want = expected(target)
        if block != want:
            got_lines, want_lines = block.split("\n"), want.split("\n")
            n = next(
                (k for k, (a, b) in enumerate(zip(got_lines, want_lines)) if a != b),
                min(len(got_lines), len(want_lines)),
            )
            problems.append(
                f"docs/driver-sdk.md:{line + n + 1}: the block of {target} differs at its line {n + 1}: "
                f"{got_lines[n] if n < len(got_lines) else '<end>'!r} "
                f"!= {want_lines[n] if n < len(want_lines) else '<end>'!r}"
            )
    return problems


class GuideExamples(unittest.TestCase):
    def test_the_guides_blocks_are_the_example_files(self):
        self.assertEqual(differences(GUIDE.read_text()), [])

    def test_every_example_file_is_in_the_guide(self):
        marked = {t for t, _, _ in marked_blocks(GUIDE.read_text())}
        self.assertEqual(REQUIRED - marked, set())

    def test_a_one_character_change_is_found(self):
        lines = GUIDE.read_text().split("\n")
        for target, block, start in marked_blocks("\n".join(lines)):
            end = start + block.count("\n") - 1
            for n in (start, end):
                while not lines[n].strip():
                    n += 1
                line = lines[n]
                changed = line[:-1] + ("y" if line.endswith("x") else "x")
                mutated = lines[:n] + [changed] + lines[n + 1 :]
                self.assertNotEqual(differences("\n".join(mutated)), [], f"{target}, guide line {n + 1}")

    def test_regions_and_indentation(self):
        text = "\n".join(
            [
                "1. step",
                "",
                "   <!-- example: sdk/examples/hello/driver.toml -->",
                "   ```toml",
                *[("   " + line if line else "") for line in expected("sdk/examples/hello/driver.toml").rstrip("\n").split("\n")],
                "   ```",
            ]
        )
        self.assertEqual(differences(text), [])
        self.assertNotEqual(differences(text.replace('name = "hello"', 'name = "hellp"', 1)), [])
        self.assertIn("use openkeel_magnum_driver::kube;", expected("sdk/examples/hello/src/lib.rs#driver"))
        self.assertNotIn("[example: driver]", expected("sdk/examples/hello/src/lib.rs#driver"))



if __name__ == "__main__":
    unittest.main()
