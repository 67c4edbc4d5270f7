"""Modules shaped like the bindings componentize-py generates, read from
the contract's WIT files: for each interface of a world, a module with its
records (dataclasses, fields in order), enums (``Enum`` with upper-case
members), variants (one dataclass per case, ``HostError_NotFound``, with
``value``) and functions (bound to what the caller gives). Only the subset
of WIT the contract uses is read."""

import dataclasses
import enum
import pathlib
import re
import sys
import types as pytypes


def snake(name):
    return name.replace("-", "_")


def pascal(name):
    return "".join(p[:1].upper() + p[1:] for p in name.split("-"))


def _strip_comments(text):
    return re.sub(r"//[^\n]*", "", text)


def _split_top(text, sep=","):
    """Splits at `sep` outside <>, ()."""
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        if ch == sep and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    return [p.strip() for p in out if p.strip()]


def _blocks(text, keyword):
    """`keyword name { body }` blocks (bodies without nested braces)."""
    return re.findall(rf"\b{keyword}\s+([a-z0-9-]+)\s*\{{([^{{}}]*)\}}", text)


class Interface:
    def __init__(self, name, body):
        self.name = name
        self.records = {}  # name -> [(field, type)]
        self.enums = {}  # name -> [case]
        self.variants = {}  # name -> [(case, type or None)]
        self.aliases = {}  # name -> type
        self.functions = []  # names
        for rname, rbody in _blocks(body, "record"):
            fields = []
            for f in _split_top(rbody):
                fname, ftype = f.split(":", 1)
                fields.append((fname.strip(), ftype.strip()))
            self.records[rname] = fields
        for ename, ebody in _blocks(body, "enum"):
            self.enums[ename] = _split_top(ebody)
        for vname, vbody in _blocks(body, "variant"):
            cases = []
            for c in _split_top(vbody):
                m = re.fullmatch(r"([a-z0-9-]+)(?:\((.*)\))?", c, re.S)
                cases.append((m.group(1), m.group(2)))
            self.variants[vname] = cases
        rest = re.sub(r"\b(record|enum|variant)\s+[a-z0-9-]+\s*\{[^{}]*\}", "", body)
        for aname, atype in re.findall(r"\btype\s+([a-z0-9-]+)\s*=\s*([^;]+);", rest):
            self.aliases[aname] = atype.strip()
        self.functions = re.findall(r"([a-z0-9-]+)\s*:\s*func\s*\(", rest)


class Package:
    """The interfaces and worlds of one version's WIT directory."""

    def __init__(self, directory):
        self.directory = pathlib.Path(directory)
        self.interfaces = {}
        self.worlds = {}
        self.version = None
        for path in sorted(self.directory.glob("*.wit")):
            text = _strip_comments(path.read_text())
            m = re.search(r"package\s+[a-z-]+:[a-z-]+@([0-9.]+)\s*;", text)
            if m:
                self.version = m.group(1)
            for name, body in _interface_bodies(text):
                self.interfaces[name] = Interface(name, body)
            for name, body in _blocks(text, "world"):
                self.worlds[name] = body
        if not self.interfaces:
            raise FileNotFoundError(f"no WIT interfaces in {self.directory}")

    def world(self, name):
        """(imports, exports) of world `name`, includes followed."""
        if name not in self.worlds:
            raise KeyError(f"no world {name} in {self.directory} (worlds: {', '.join(sorted(self.worlds))})")
        body = self.worlds[name]
        imports = re.findall(r"\bimport\s+([a-z0-9-]+)\s*;", body)
        exports = re.findall(r"\bexport\s+([a-z0-9-]+)\s*;", body)
        for inc in re.findall(r"\binclude\s+([a-z0-9-]+)\s*;", body):
            i, e = self.world(inc)
            imports = i + [x for x in imports if x not in i]
            exports = e + [x for x in exports if x not in e]
        return imports, exports

    def default_of(self, iface, wit_type):
        """The zero value of a WIT type, for fixtures."""
        t = wit_type.strip()
        if t.startswith("option<"):
            return None
        if t.startswith("list<") or t == "string-map":
            return []
        if t == "string":
            return ""
        if t == "bool":
            return False
        if re.fullmatch(r"[su](8|16|32|64)|f32|f64|timestamp", t):
            return 0
        for i in self.interfaces.values():
            if t in i.aliases:
                return self.default_of(i, i.aliases[t])
        return None


def _interface_bodies(text):
    """`interface name { … }` with nested braces (records inside)."""
    out = []
    for m in re.finditer(r"\binterface\s+([a-z0-9-]+)\s*\{", text):
        depth, i = 1, m.end()
        while depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        out.append((m.group(1), text[m.end() : i - 1]))
    return out


# The classes of each (WIT directory, interface, type): installing the same
# contract again gives the same classes, so that what a test module took
# from an earlier install still compares equal.
_CLASSES = {}


def _cached(package, iname, tname, make):
    key = (str(package.directory.resolve()), iname, tname)
    if key not in _CLASSES:
        _CLASSES[key] = make()
    return _CLASSES[key]


def _make_record(name, fields):
    cls = dataclasses.make_dataclass(pascal(name), [snake(f) for f, _ in fields])
    cls.__wit_fields__ = fields
    return cls


def _module(name, attrs):
    m = pytypes.ModuleType(name)
    m.__dict__.update(attrs)
    return m


def build(package, world, implementations, missing):
    """The modules of `world`, keyed by their import name: the
    `componentize_py_types` helpers, `wit_world`, `wit_world.imports` and
    one module per imported interface (and `types`), `wit_world.exports`
    (with the protocol class of each exported interface, `Driver`) and
    one module per exported interface. `implementations[(iface, func)]` is
    the Python function behind each import function; a function without
    one calls `missing(iface, func)`."""
    imports, exports = package.world(world)
    # `types` comes with any interface that uses it, as componentize-py
    # generates it.
    if "types" in package.interfaces and "types" not in imports:
        imports = ["types"] + imports
    mods = {"componentize_py_types": _CPY_TYPES}
    imp = _module("wit_world.imports", {"__path__": []})
    exp = _module("wit_world.exports", {"__path__": []})
    world_mod = _module("wit_world", {"__path__": [], "imports": imp, "exports": exp})
    mods.update({"wit_world": world_mod, "wit_world.imports": imp, "wit_world.exports": exp})
    for kind, names, parent in (("imports", imports, imp), ("exports", exports, exp)):
        for iname in names:
            iface = package.interfaces[iname]
            attrs = {"__wit_interface__": iface}
            for rname, fields in iface.records.items():
                attrs[pascal(rname)] = _cached(package, iname, rname, lambda: _make_record(rname, fields))
            for ename, cases in iface.enums.items():
                attrs[pascal(ename)] = _cached(
                    package,
                    iname,
                    ename,
                    lambda: enum.Enum(pascal(ename), [(snake(c).upper(), i) for i, c in enumerate(cases)]),
                )
            for vname, cases in iface.variants.items():
                for cname, ctype in cases:
                    cls_name = f"{pascal(vname)}_{pascal(cname)}"
                    attrs[cls_name] = _cached(
                        package,
                        iname,
                        cls_name,
                        lambda: dataclasses.make_dataclass(cls_name, ["value"] if ctype else []),
                    )
            if kind == "imports":
                for fname in iface.functions:
                    impl = implementations.get((iname, fname))
                    if impl is None:
                        impl = _unimplemented(missing, iname, fname)
                    attrs[snake(fname)] = impl
            module_name = f"wit_world.{kind}.{snake(iname)}"
            m = _module(module_name, attrs)
            mods[module_name] = m
            setattr(parent, snake(iname), m)
            if kind == "exports":
                # The protocol a component implements: a class named after
                # the interface with one method per function.
                setattr(parent, pascal(iname), _protocol(pascal(iname), iface.functions))
    return mods


def _protocol(name, functions):
    def abstract(self, *args):
        raise NotImplementedError

    methods = {snake(f): abstract for f in functions}
    return type(name, (), {"__module__": "wit_world.exports", **methods})


def _unimplemented(missing, iface, func):
    def call(*args):
        return missing(iface, func, *args)

    call.__name__ = snake(func)
    return call


def _cpy_types():  # noqa: D103 (one module for every install, like the classes)
    @dataclasses.dataclass
    class Some:
        value: object

    @dataclasses.dataclass
    class Ok:
        value: object

    @dataclasses.dataclass(frozen=True)
    class Err(Exception):
        value: object

    return _module("componentize_py_types", {"Some": Some, "Ok": Ok, "Err": Err})


def purge():
    """Forgets the bindings and every module that imported them."""
    for name in list(sys.modules):
        if name == "componentize_py_types" or name == "wit_world" or name.startswith("wit_world."):
            del sys.modules[name]


_CPY_TYPES = _cpy_types()
