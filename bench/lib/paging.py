#!/usr/bin/env python3
"""Page through GET /v1/clusters with a fixed limit, following "next" links.

  paging.py URL TOKEN --label L [--limit 1000] [--budget 300]
            [--page-timeout 120] [--reps 1] >> results.jsonl

Each repetition starts at the first page and follows the "next" link of
every response until a page has no "next" (or is empty), a request fails,
or the time budget runs out. One JSON line per repetition: per-page time,
status, items and bytes, the total, and whether the walk completed.
Standard library only.
"""

import argparse
import json
import sys
import time
import urllib.error
import urllib.request


def get(url, token, api_version, timeout):
    req = urllib.request.Request(url, headers={
        "X-Auth-Token": token, "OpenStack-API-Version": api_version,
        "Accept": "application/json"})
    t0 = time.perf_counter()
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            body = r.read()
            status = r.status
    except urllib.error.HTTPError as e:
        body, status = e.read(), e.code
    except Exception as e:  # timeout, connection reset
        return None, 0, time.perf_counter() - t0, str(e)
    return body, status, time.perf_counter() - t0, ""


def walk(a):
    url = a.url.rstrip("/") + "/v1/clusters?limit=%d" % a.limit
    pages, t_start, completed, error = [], time.perf_counter(), False, ""
    seen = 0
    while url:
        left = a.budget - (time.perf_counter() - t_start)
        if left <= 0:
            error = "time budget of %.0f s exhausted" % a.budget
            break
        body, status, dt, err = get(url, a.token, a.api_version, min(a.page_timeout, left))
        page = {"status": status, "ms": round(dt * 1000, 2), "bytes": len(body or b"")}
        if err or status != 200:
            page["error"] = err or (body or b"")[:300].decode("utf-8", "replace")
            pages.append(page)
            error = "page %d: %s" % (len(pages), err or "HTTP %d" % status)
            break
        d = json.loads(body)
        items = d.get("clusters", [])
        page["items"] = len(items)
        pages.append(page)
        seen += len(items)
        nxt = d.get("next")
        if not items or not nxt:
            completed = True
            break
        url = nxt
    full = [p for p in pages if p.get("items", 0) >= a.limit]
    return {
        "endpoint": "paging", "label": a.label, "limit": a.limit,
        "completed": completed, "error": error, "pages": len(pages),
        "items": seen, "total_s": round(time.perf_counter() - t_start, 3),
        "full_page_ms_mean": round(sum(p["ms"] for p in full) / len(full), 2) if full else None,
        "full_page_ms_max": max((p["ms"] for p in full), default=None),
        "first_page_ms": pages[0]["ms"] if pages else None,
        "last_full_page_ms": full[-1]["ms"] if full else None,
        "page_ms": [p["ms"] for p in pages], "page_status": [p["status"] for p in pages],
    }


def main():
    p = argparse.ArgumentParser()
    p.add_argument("url")
    p.add_argument("token")
    p.add_argument("--label", default="")
    p.add_argument("--limit", type=int, default=1000)
    p.add_argument("--budget", type=float, default=300.0)
    p.add_argument("--page-timeout", type=float, default=120.0)
    p.add_argument("--reps", type=int, default=1)
    p.add_argument("--api-version", default="container-infra latest")
    a = p.parse_args()
    for r in range(1, a.reps + 1):
        res = walk(a)
        res["rep"] = r
        print(json.dumps(res), flush=True)
        print("paging %-12s rep=%d  %s  pages %d  items %d  total %.2f s  full page mean %s ms  %s" % (
            a.label, r, "completed" if res["completed"] else "INCOMPLETE", res["pages"], res["items"],
            res["total_s"], res["full_page_ms_mean"], res["error"]), file=sys.stderr)


if __name__ == "__main__":
    main()
