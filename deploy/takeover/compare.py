#!/usr/bin/env python3
"""Compares what two container-infra endpoints serve: the cluster templates
and clusters, as an administrator lists them, field by field.

    TAKEOVER_TOKEN=$(openstack token issue -f value -c id) \\
        deploy/takeover/compare.py http://magnum:9511 http://openkeel-magnum:9512

Each endpoint is the base URL, without /v1. Both are asked the same requests
with the token and microversion 1.14; the links' scheme, host and port are
left out of the comparison (they name the endpoint asked). Waits up to
--wait seconds for an endpoint that does not answer yet. Prints one line per
request and exits 0 when every answer is the same, 1 otherwise (the first
differences are printed), 2 when an endpoint cannot be asked. Python 3's
standard library only; the token is never printed.
"""

import argparse
import json
import os
import re
import sys
import time
import urllib.error
import urllib.request

PATHS = ["/v1/clustertemplates", "/v1/clusters", "/v1/clusters/detail"]
HOST = re.compile(r"^[a-z][a-z0-9+.-]*://[^/]+")


def get(base, path, token, timeout):
    req = urllib.request.Request(
        base.rstrip("/") + path,
        headers={
            "X-Auth-Token": token,
            "OpenStack-API-Version": "container-infra 1.14",
            "Accept": "application/json",
        },
    )
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, json.load(resp)
    except urllib.error.HTTPError as e:
        body = e.read()
        try:
            return e.code, json.loads(body)
        except ValueError:
            return e.code, body.decode("utf-8", "replace")


def without_hosts(value):
    """The answer with every link's scheme://host:port removed."""
    if isinstance(value, dict):
        return {
            k: (HOST.sub("", v) if k == "href" and isinstance(v, str) else without_hosts(v))
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [without_hosts(v) for v in value]
    return value


def differences(a, b, where=""):
    """Paths at which a and b differ, as readable lines."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b)):
            if k not in a:
                out.append(f"{where}/{k}: only in the new answer: {json.dumps(b[k])[:120]}")
            elif k not in b:
                out.append(f"{where}/{k}: missing from the new answer (was {json.dumps(a[k])[:120]})")
            else:
                out.extend(differences(a[k], b[k], f"{where}/{k}"))
        return out
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{where}: {len(a)} items, then {len(b)}"]
        out = []
        for i, (x, y) in enumerate(zip(a, b)):
            out.extend(differences(x, y, f"{where}/{i}"))
        return out
    return [] if a == b else [f"{where}: {json.dumps(a)[:120]} then {json.dumps(b)[:120]}"]


def wait_for(base, timeout, wait):
    deadline = time.monotonic() + wait
    while True:
        try:
            urllib.request.urlopen(base.rstrip("/") + "/", timeout=timeout).close()
            return
        except urllib.error.HTTPError:
            return
        except OSError as e:
            if time.monotonic() > deadline:
                print(f"{base} does not answer after {wait:.0f} s: {e}", file=sys.stderr)
                sys.exit(2)
            time.sleep(0.5)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("old", help="the endpoint serving now (Python Magnum)")
    p.add_argument("new", help="openkeel-magnum's endpoint")
    p.add_argument("--wait", type=float, default=60, help="seconds to wait for an endpoint to answer")
    p.add_argument("--timeout", type=float, default=30, help="seconds per request")
    args = p.parse_args()
    token = os.environ.get("TAKEOVER_TOKEN", "")
    if not token:
        print("set TAKEOVER_TOKEN to an administrator's token", file=sys.stderr)
        sys.exit(2)
    for base in (args.old, args.new):
        wait_for(base, args.timeout, args.wait)
    failed = False
    for path in PATHS:
        old_status, old = get(args.old, path, token, args.timeout)
        new_status, new = get(args.new, path, token, args.timeout)
        diffs = [] if old_status == new_status else [f"status {old_status}, then {new_status}"]
        diffs += differences(without_hosts(old), without_hosts(new))
        if old_status != 200:
            diffs.append(f"the old endpoint answered {old_status}: {json.dumps(old)[:200]}")
        count = ""
        if isinstance(old, dict):
            items = next((v for v in old.values() if isinstance(v, list)), None)
            count = f", {len(items)} items" if items is not None else ""
        print(f"GET {path}: {'same' if not diffs else 'DIFFERENT'} ({old_status}{count})")
        for d in diffs[:20]:
            print(f"    {d}")
        failed = failed or bool(diffs)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
