#!/usr/bin/env python3
"""Two-way tables (Rust host, reference) from a bench/run.sh output tree.

  compare.py OUTDIR

Reads OUTDIR/N<n>/{rust,rust-metrics,ref}/results.jsonl (load.sh, slow.sh and pairs.sh
lines), OUTDIR/N<n>/{rust,ref}/paging.jsonl (lib/paging.py) and
OUTDIR/meta.json, and prints markdown: one throughput table with the ratio
Rust/ref and the raw figures beside it, a paging table, a memory table and
a check of the performance targets. Repetitions are combined by their
median. Other directories under N<n> (such as the `go` of the runs made
before the Go implementation was removed) are ignored. Standard library
only.
"""

import glob
import json
import os
import re
import statistics
import sys

ORDER = [
    ("root", "GET /"),
    ("clusters", "GET /v1/clusters"),
    ("clusters_limit1000", "GET /v1/clusters?limit=1000"),
    ("clusters_detail", "GET /v1/clusters/detail"),
    ("cluster_get", "GET /v1/clusters/{uuid}"),
    ("nodegroups", "GET /v1/clusters/{uuid}/nodegroups"),
    ("templates", "GET /v1/clustertemplates"),
    ("templates_create_delete", "template create+delete pairs"),
    ("clusters_create_delete", "cluster create+delete (accepted creates/s)"),
]
# process groups that belong to each service (Keystone and MariaDB are shared)
SERVICE = {
    "rust": ["rust", "rust-reconciler"],
    "rust-metrics": ["rust-metrics", "rust-metrics-reconciler"],
    "ref": ["magnum", "conductor", "rabbitmq", "epmd", "memcached"],
}
WHO = ("rust", "rust-metrics", "ref")
# The two columns of the main table.
TWO = ("rust", "ref")
# The requests whose metrics overhead has a target (< 2 %).
OVERHEAD_TARGET = ("clusters_limit1000", "cluster_get")


def med(vals):
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None


def load(fn):
    out = []
    if os.path.exists(fn):
        with open(fn) as f:
            for line in f:
                line = line.strip()
                if line:
                    out.append(json.loads(line))
    return out


def bad_codes(d):
    """Count and text of responses that were not 2xx, plus socket errors."""
    n, parts = 0, []
    for k, v in sorted(d.get("codes", {}).items()):
        if not k.startswith("2"):
            n += v
            parts.append("%s×%d" % (k, v))
    e = d.get("errors", {})
    for k in ("connect", "read", "write", "timeout"):
        if e.get(k):
            n += e[k]
            parts.append("%s-err×%d" % (k, e[k]))
    return n, " ".join(parts)


def summarize(runs, kind):
    """Median figures of the repetitions of one (endpoint, conns)."""
    if not runs:
        return None
    if kind == "clusters_create_delete":
        rate = med([d.get("accepted_per_s") for d in runs])
    elif kind == "templates_create_delete":
        rate = med([d.get("pairs_per_s") for d in runs])
    else:
        rate = med([d.get("rps") for d in runs])
    bad = [bad_codes(d) for d in runs]
    cpu_ms = []
    for d in runs:
        mon = d.get("monitor", {})
        who = next((w for w in WHO if any(g in mon for g in SERVICE[w][:2])), "ref")
        cpu = sum(mon[g]["cpu_s"] for g in SERVICE[who] if isinstance(mon.get(g), dict))
        reqs = d.get("requests") or 0
        if mon and reqs:
            cpu_ms.append(1000.0 * cpu / reqs)
    return {
        "rate": rate,
        "p50": med([d["lat_ms"]["p50"] for d in runs]),
        "p99": med([d["lat_ms"]["p99"] for d in runs]),
        "bad": max(b[0] for b in bad), "bad_text": " / ".join(b[1] for b in bad if b[1]),
        "requests": sum(d.get("requests") or 0 for d in runs),
        "seq": any("(sequential)" in d["endpoint"] for d in runs),
        "fallback": any(d.get("fallback") for d in runs),
        "none": all(not d.get("requests") for d in runs),
        "pairs": med([d.get("pairs_per_s") for d in runs]),
        "cpu_ms": med(cpu_ms),
        "items": (runs[0].get("probe") or {}).get("items"),
    }


def f(v, fmt="%.1f"):
    if v is None:
        return "–"
    if v >= 100 and fmt == "%.1f":
        return "%.0f" % v
    return fmt % v


def ratio(a, b):
    if a is None or b is None:
        return None
    if b == 0:
        return float("inf") if a > 0 else None
    return a / b


def fr(r):
    if r is None:
        return "–"
    if r == float("inf"):
        return "∞ (ref 0)"
    if r >= 100:
        return "**%.0f×**" % r
    if r >= 10:
        return "**%.1f×**" % r
    return "**%.2f×**" % r


def read_tree(out, n, who):
    """(endpoint, conns) -> runs, and the paging walks, of one service."""
    d = os.path.join(out, "N%d" % n, who)
    wrk, seq = {}, {}
    for r in load(os.path.join(d, "results.jsonl")):
        ep = r["endpoint"].replace(" (sequential)", "")
        (seq if "(sequential)" in r["endpoint"] else wrk).setdefault((ep, r["conns"]), []).append(r)
    rows = {}
    for key in set(wrk) | set(seq):
        done = [r for r in wrk.get(key, []) if r.get("requests")]
        # a wrk run in which no request completed (the reference's lists can
        # take longer than a run) yields to the sequential timing
        rows[key] = done or seq.get(key) or wrk.get(key)
    for (ep, c), _ in list(wrk.items()):
        if c > 1 and not rows.get((ep, c), [{}])[0].get("requests") and seq.get((ep, 1)):
            rows[(ep, c)] = [dict(r, fallback=True) for r in seq[(ep, 1)]]
    return rows, load(os.path.join(d, "paging.jsonl"))


def cell_rate(s):
    if s is None:
        return "–"
    t = f(s["rate"], "%.2f")
    if s.get("seq"):
        t += " (seq.)" if not s.get("note") else " (%s)" % s["note"]
    if s["none"] and not s["seq"]:
        t = "none completed"
    return t


def ratio_cell(a, b):
    """Rust / ref on rates, or why not."""
    if a is None or b is None:
        return "–"
    if a["none"]:
        return "rust: none completed"
    if a["bad"] and a["bad"] * 2 > max(a["requests"], 1):
        return "n/a (rust mostly not 2xx)"
    if b["none"] and not b["seq"]:
        return "ref: none completed"
    return fr(ratio(a["rate"], b["rate"]))


def main():
    out = sys.argv[1]
    meta = {}
    if os.path.exists(os.path.join(out, "meta.json")):
        meta = json.load(open(os.path.join(out, "meta.json")))
    ns = sorted(int(re.sub(r"\D", "", os.path.basename(p))) for p in glob.glob(os.path.join(out, "N*")))
    data, paging = {}, {}
    for n in ns:
        for who in WHO:
            data[(n, who)], paging[(n, who)] = read_tree(out, n, who)

    if meta:
        load_s = ""
        if meta.get("load_start"):
            load_s = "; load average %s at the start, %s at the end" % (
                " ".join(meta["load_start"]), " ".join(meta.get("load_end", ["?"])))
        wall = ", %d s in all" % meta["wall_s"] if meta.get("wall_s") else ""
        print("Run %s, %s; duration %s per wrk run, %s repetition(s), connections %s; targets %s%s%s.\n" % (
            meta.get("date", "?"), meta.get("machine", "?"), meta.get("duration", "?"),
            meta.get("reps", "?"), meta.get("conns", "?"), meta.get("targets", "?"), wall, load_s))
    print("| N | request | c | Rust/ref | Rust req/s | ref req/s | "
          "p50 / p99 ms Rust · ref | CPU ms/req Rust · ref | not 2xx Rust · ref |")
    print("|---|---|---|---|---|---|---|---|---|")
    summary = {}
    for n in ns:
        conns = sorted({c for who in WHO for (_, c) in data[(n, who)]})
        for ep, title in ORDER:
            for c in conns:
                s = {who: summarize(data[(n, who)].get((ep, c)), ep) for who in WHO}
                r = s["ref"]
                if r is None and c > 1 and ep.startswith("clusters") and ep != "clusters_create_delete":
                    rs = summarize(data[(n, "ref")].get((ep, 1)), ep)
                    if rs is not None and rs["seq"]:
                        r = dict(rs)
                        r["note"] = "c=1 seq."
                if r is not None and r["fallback"]:
                    r["note"] = "c=1 seq."
                s["ref"] = r
                if all(v is None for v in s.values()):
                    continue
                summary[(n, ep, c)] = s
                extra = ""
                if ep == "clusters_create_delete":
                    extra = " · pairs/s %s" % " · ".join(f(s[w] and s[w]["pairs"], "%.2f") for w in TWO)
                lat = " · ".join("%s / %s" % (f(s[w] and s[w]["p50"]), f(s[w] and s[w]["p99"])) for w in TWO)
                cpu = " · ".join(f(s[w] and s[w]["cpu_ms"], "%.2f") for w in TWO)
                bad = " · ".join(((s[w]["bad_text"] or "0") if s[w] else "–") for w in TWO)
                print("| %d | %s | %d | %s | %s | %s | %s | %s | %s |" % (
                    n, title + extra, c, ratio_cell(s["rust"], s["ref"]),
                    cell_rate(s["rust"]), cell_rate(s["ref"]), lat, cpu, bad))

    # ------------------------------------------------------------ metrics
    rows = []
    for n in ns:
        for ep, title in ORDER:
            for c in sorted({c for (e, c) in data[(n, "rust")] if e == ep}):
                a = summarize(data[(n, "rust")].get((ep, c)), ep)
                b = summarize(data[(n, "rust-metrics")].get((ep, c)), ep)
                if a and b and a["rate"] and b["rate"]:
                    rows.append((n, ep, title, c, a, b))
    overhead = {}
    if rows:
        print("\n#### Cost of [metrics] enabled (rust-metrics: the same binary and rows, metrics on)\n")
        print("| N | request | c | req/s off · on | throughput lost | CPU ms/req off · on | CPU added |")
        print("|---|---|---|---|---|---|---|")
        for n, ep, title, c, a, b in rows:
            lost = 1 - b["rate"] / a["rate"]
            cpu = (b["cpu_ms"] / a["cpu_ms"] - 1) if a["cpu_ms"] and b["cpu_ms"] else None
            overhead[(n, ep, c)] = (lost, cpu)
            print("| %d | %s | %d | %s · %s | %+.1f %% | %s · %s | %s |" % (
                n, title, c, cell_rate(a), cell_rate(b), 100 * lost, f(a["cpu_ms"], "%.3f"),
                f(b["cpu_ms"], "%.3f"), "–" if cpu is None else "%+.1f %%" % (100 * cpu)))

    # ------------------------------------------------------------ paging
    if any(paging.values()):
        print("\n#### Paging through every cluster with limit=1000\n")
        print("| N | service | completed | pages | items | total s | first page ms | full pages mean / max ms | error |")
        print("|---|---|---|---|---|---|---|---|---|")
        for n in ns:
            for who in WHO:
                for p in paging[(n, who)]:
                    print("| %d | %s | %s | %d | %d | %.2f | %s | %s / %s | %s |" % (
                        n, who, "yes" if p["completed"] else "**no**", p["pages"], p["items"], p["total_s"],
                        f(p["first_page_ms"]), f(p["full_page_ms_mean"]), f(p["full_page_ms_max"]),
                        p["error"] or ""))

    # ------------------------------------------------------------ memory
    print("\n#### Memory of the service processes (peak over every run)\n")
    print("| N | service | process groups | peak RSS MiB (sum of group peaks) | peak PSS MiB | max processes |")
    print("|---|---|---|---|---|---|")
    peak = {}
    for n in ns:
        for who in WHO:
            best = (0.0, 0.0, 0)
            groups = set()
            for runs in data[(n, who)].values():
                for d in runs:
                    mon = d.get("monitor", {})
                    gs = [g for g in SERVICE[who] if isinstance(mon.get(g), dict)]
                    groups.update(gs)
                    rss = sum(mon[g]["rss_mib_max"] for g in gs)
                    pss = sum(mon[g]["pss_mib_max"] for g in gs)
                    procs = sum(mon[g]["procs_max"] for g in gs)
                    best = (max(best[0], rss), max(best[1], pss), max(best[2], procs))
            if groups:
                peak[(n, who)] = best
                print("| %d | %s | %s | %.0f | %.0f | %d |" % (n, who, " + ".join(sorted(groups)), *best))
        if (n, "rust") in peak and (n, "ref") in peak and peak[(n, "ref")][0]:
            print("| %d | rust / ref | | **%.3f** | %.3f | |" % (
                n, peak[(n, "rust")][0] / peak[(n, "ref")][0],
                peak[(n, "rust")][1] / max(peak[(n, "ref")][1], 1e-9)))

    # ------------------------------------------------------------ targets
    print("\n#### Targets\n")
    lines = []

    def get(n, ep, c):
        return summary.get((n, ep, c), {})

    # The read rows' targets relative to the Go implementation (≥ 1.3× its
    # req/s at 16 connections; Rust/ref ≥ Go/ref at 1 connection) went with
    # it; the comparison with its figures of the run of 2026-12-02, the
    # baseline, is in docs/performance.md.
    #
    # A page of 1000 clusters at N=1000: `?limit=1000`, and `/detail`, whose
    # default limit ([api] max_limit) is 1000 too, when its probe says so.
    for ep, name in (("clusters_limit1000", "?limit=1000"), ("clusters_detail", "/v1/clusters/detail")):
        s1, s16 = get(1000, ep, 1), get(1000, ep, 16)
        items = (s1.get("rust") or s16.get("rust") or {}).get("items")
        if items is not None and items != 1000:
            continue
        if s1.get("rust"):
            p50 = s1["rust"]["p50"]
            lines.append("- `%s` at N=1000, c=1: Rust p50 %s ms (≤ 8 ms; reference %s ms) → %s" % (
                name, f(p50), f(s1["ref"]["p50"]) if s1.get("ref") else "–",
                "met" if p50 is not None and p50 <= 8 else "NOT met"))
        if s16.get("rust"):
            p99 = s16["rust"]["p99"]
            lines.append("- `%s` at N=1000, c=16: Rust p99 %s ms (≤ 50 ms; reference %s ms) → %s" % (
                name, f(p99), f(s16["ref"]["p99"]) if s16.get("ref") else "–",
                "met" if p99 is not None and p99 <= 50 else "NOT met"))
    for n in ns:
        for c in (1, 16):
            s = get(n, "clusters_create_delete", c)
            if s.get("rust") and s.get("ref"):
                rt = ratio(s["rust"]["pairs"], s["ref"]["rate"])
                ok = rt is not None and rt >= 100
                lines.append("- cluster create+delete at N=%d, c=%d: Rust %s pairs/s vs the reference's %s "
                             "accepted creates/s → %s (≥ 100×) → %s" % (
                                 n, c, f(s["rust"]["pairs"], "%.2f"), f(s["ref"]["rate"], "%.2f"), fr(rt),
                                 "met" if ok else "NOT met"))
    for n in ns:
        if (n, "rust") in peak and (n, "ref") in peak and peak[(n, "ref")][0]:
            rt = peak[(n, "rust")][0] / peak[(n, "ref")][0]
            lines.append("- peak RSS at N=%d: Rust %.0f MiB, reference %.0f MiB: %.3f (≤ 0.1) → %s" % (
                n, peak[(n, "rust")][0], peak[(n, "ref")][0], rt, "met" if rt <= 0.1 else "NOT met"))
    base = [p for p in paging.get((1000, "rust"), []) if p.get("first_page_ms")]
    for n in ns:
        if n <= 1000:
            continue
        ps = paging.get((n, "rust"), [])
        if ps:
            done = all(p["completed"] for p in ps)
            m = med([p["full_page_ms_mean"] for p in ps])
            b = med([p["first_page_ms"] for p in base]) if base else None
            rt = ratio(m, b)
            ok = done and rt is not None and rt <= 1.5
            lines.append("- N=%d paging (Rust): %s, mean full page %s ms vs %s ms at N=1000 (×%s) → %s" % (
                n, "completed" if done else "INCOMPLETE", f(m), f(b), f(rt, "%.2f"),
                "met" if ok else "NOT met"))
    for (n, ep, c), (lost, cpu) in sorted(overhead.items()):
        if ep in OVERHEAD_TARGET:
            worst = max(lost, cpu if cpu is not None else lost)
            lines.append("- metrics overhead on `%s` at N=%d, c=%d: throughput %+.1f %%, CPU per request %s (< 2 %%) → %s" % (
                dict(ORDER)[ep], n, c, 100 * lost, "–" if cpu is None else "%+.1f %%" % (100 * cpu),
                "met" if worst < 0.02 else "NOT met"))
    print("\n".join(lines) if lines else "(no data)")


if __name__ == "__main__":
    main()
