"""Reads option definitions and test cases as JSON on stdin, loads each case's
files with oslo.config and prints every option's value or error as JSON.

Input: {"opts": [...], "cases": [{"files": [...], "env": {...}}]} for option
values (env: the environment variables of the case), or {"parse": [paths]}
for the parser alone."""

import json
import math
import os
import sys

from oslo_config import cfg
from oslo_config import types


def make_type(o):
    kind = o["kind"]
    lo, hi, choices = o.get("min"), o.get("max"), o.get("choices") or None
    if kind == "string":
        return types.String(choices=choices)
    if kind == "int":
        return types.Integer(min=lo, max=hi)
    if kind == "float":
        return types.Float(min=lo, max=hi)
    if kind == "bool":
        return types.Boolean()
    if kind == "list":
        return types.List(item_type=types.String(choices=choices))
    if kind == "multi":
        return types.MultiString()
    if kind == "dict":
        return types.Dict()
    if kind == "port":
        return types.Port()
    if kind == "ip":
        return types.IPAddress()
    if kind == "host":
        return types.HostAddress()
    if kind == "uri":
        return types.URI()
    raise ValueError(kind)


def make_opt(o):
    typ = make_type(o)
    default = o.get("default")
    if default is not None:
        if o["kind"] == "multi":
            default = [default] if default != "" else []
        else:
            default = typ(default)
    deprecated = [cfg.DeprecatedOpt(n, group=g) for g, n in o.get("deprecated", [])]
    if o["kind"] == "multi":
        return cfg.MultiOpt(o["name"], item_type=typ, default=default,
                            deprecated_opts=deprecated)
    return cfg.Opt(o["name"], type=typ, default=default,
                   deprecated_opts=deprecated)


def plain(v):
    if isinstance(v, float) and not math.isfinite(v):
        return {"nonfinite": repr(v)}
    if isinstance(v, dict):
        return {str(k): plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    return v


def parse_only(paths):
    """Parses files with oslo.config's own parser; returns the normalised
    sections ({group: {key: [values]}}) or the parse error."""
    out = []
    for path in paths:
        sections = {}
        normalized = {}
        parser = cfg.ConfigParser(path, sections)
        parser._add_normalized(normalized)
        try:
            parser.parse()
        except Exception as e:  # noqa: BLE001
            out.append({"parse_error": "%s: %s" % (type(e).__name__, e)})
            continue
        out.append({"sections": normalized})
    return out


def main():
    spec = json.load(sys.stdin)
    if "parse" in spec:
        json.dump(parse_only(spec["parse"]), sys.stdout)
        return
    results = []
    for case in spec["cases"]:
        env = case.get("env") or {}
        os.environ.update(env)
        try:
            results.append(run_case(spec, case))
        finally:
            for k in env:
                del os.environ[k]
    json.dump(results, sys.stdout)


def run_case(spec, case):
    """Loads one case's files; returns every option's value or error."""
    conf = cfg.ConfigOpts()
    for o in spec["opts"]:
        group = None if o["group"] == "DEFAULT" else o["group"]
        conf.register_opt(make_opt(o), group=group)
    args = []
    for f in case["files"]:
        args += ["--config-file", f]
    try:
        conf(args=args, project="oracle", default_config_files=[],
             default_config_dirs=[])
    except Exception as e:  # noqa: BLE001 - any failure is the answer
        return {"parse_error": "%s: %s" % (type(e).__name__, e)}
    values = {}
    for o in spec["opts"]:
        key = o["group"] + "/" + o["name"]
        try:
            if o["group"] == "DEFAULT":
                v = conf[o["name"]]
            else:
                v = conf[o["group"]][o["name"]]
            values[key] = {"value": plain(v)}
        except Exception as e:  # noqa: BLE001
            values[key] = {"error": "%s: %s" % (type(e).__name__, e)}
    return {"values": values}


if __name__ == "__main__":
    main()
