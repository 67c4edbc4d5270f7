#!/usr/bin/env python3
"""Side-by-side tables (ours / reference) from a bench/run.sh output tree.

  compare.py OUTDIR

Reads OUTDIR/N<n>/{ours,ref}/results.jsonl (load.sh, slow.sh and pairs.sh
lines), OUTDIR/N<n>/{ours,ref}/paging.jsonl (lib/paging.py) and
OUTDIR/meta.json, and prints markdown: one throughput table with ratios and
the raw figures beside them, a paging table, a memory table and a check of
the performance targets. Repetitions are combined by their median.
Standard library only.
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
SERVICE = {"ours": ["ours", "ours-reconciler"], "ref": ["magnum", "conductor", "rabbitmq", "epmd", "memcached"]}


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
        who = "ours" if "ours" in mon else "ref"
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


def main():
    out = sys.argv[1]
    meta = {}
    if os.path.exists(os.path.join(out, "meta.json")):
        meta = json.load(open(os.path.join(out, "meta.json")))
    ns = sorted(int(re.sub(r"\D", "", os.path.basename(p))) for p in glob.glob(os.path.join(out, "N*")))
    data = {}  # (n, who) -> {(endpoint, conns): [runs]}
    paging = {}
    for n in ns:
        for who in ("ours", "ref"):
            wrk, seq = {}, {}
            for d in load(os.path.join(out, "N%d" % n, who, "results.jsonl")):
                ep = d["endpoint"].replace(" (sequential)", "")
                (seq if "(sequential)" in d["endpoint"] else wrk).setdefault((ep, d["conns"]), []).append(d)
            rows = {}
            for key in set(wrk) | set(seq):
                done = [d for d in wrk.get(key, []) if d.get("requests")]
                # a wrk run in which no request completed (the reference's
                # lists can take longer than a run) yields to the sequential
                # timing of the same endpoint
                rows[key] = done or seq.get(key) or wrk.get(key)
            for (ep, c), ds in list(wrk.items()):
                if c > 1 and not rows.get((ep, c), [{}])[0].get("requests") and seq.get((ep, 1)):
                    rows[(ep, c)] = [dict(d, fallback=True) for d in seq[(ep, 1)]]
            data[(n, who)] = rows
            paging[(n, who)] = load(os.path.join(out, "N%d" % n, who, "paging.jsonl"))

    if meta:
        print("Run %s, %s; duration %s per wrk run, %s repetition(s), connections %s.\n" % (
            meta.get("date", "?"), meta.get("machine", "?"), meta.get("duration", "?"),
            meta.get("reps", "?"), meta.get("conns", "?")))
    print("| N | request | c | ratio ours/ref | ours req/s | ref req/s | ours p50 / p99 ms | "
          "ref p50 / p99 ms | CPU ms/req ours / ref | not 2xx ours / ref |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    summary = {}
    for n in ns:
        conns = sorted({c for who in ("ours", "ref") for (_, c) in data[(n, who)]})
        for ep, title in ORDER:
            for c in conns:
                o = summarize(data[(n, "ours")].get((ep, c)), ep)
                r = summarize(data[(n, "ref")].get((ep, c)), ep)
                if r is None and c > 1 and ep.startswith("clusters") and ep != "clusters_create_delete":
                    rs = summarize(data[(n, "ref")].get((ep, 1)), ep)
                    if rs is not None and rs["seq"]:
                        r = dict(rs)
                        r["note"] = "c=1 seq."
                if r is not None and r["fallback"]:
                    r["note"] = "c=1 seq."
                if o is None and r is None:
                    continue
                summary[(n, ep, c)] = (o, r)
                rt = ratio(o and o["rate"], r and r["rate"])
                if o and o["none"]:
                    rt_s = "ours: none completed"
                elif o and o["bad"] and o["bad"] * 2 > max(o["requests"], 1):
                    rt_s = "n/a (ours mostly not 2xx)"
                elif r and r["none"] and not r["seq"]:
                    rt_s = "ref: none completed"
                else:
                    rt_s = fr(rt)
                ref_rate = f(r["rate"], "%.2f") if r else "–"
                if r and r.get("seq"):
                    ref_rate += " (seq.)" if not r.get("note") else " (%s)" % r["note"]
                extra = ""
                if ep == "clusters_create_delete":
                    extra = " · pairs/s %s / %s" % (f(o and o["pairs"], "%.2f"), f(r and r["pairs"], "%.2f"))
                print("| %d | %s | %d | %s | %s | %s | %s / %s | %s / %s | %s / %s | %s / %s |" % (
                    n, title + extra, c, rt_s,
                    f(o and o["rate"]), ref_rate,
                    f(o and o["p50"]), f(o and o["p99"]), f(r and r["p50"]), f(r and r["p99"]),
                    f(o and o["cpu_ms"], "%.2f"), f(r and r["cpu_ms"], "%.1f"),
                    (o["bad_text"] or "0") if o else "–", (r["bad_text"] or "0") if r else "–"))

    # ------------------------------------------------------------ paging
    if any(paging.values()):
        print("\n### Paging through every cluster with limit=1000\n")
        print("| N | service | completed | pages | items | total s | first page ms | full pages mean / max ms | error |")
        print("|---|---|---|---|---|---|---|---|---|")
        for n in ns:
            for who in ("ours", "ref"):
                for p in paging[(n, who)]:
                    print("| %d | %s | %s | %d | %d | %.2f | %s | %s / %s | %s |" % (
                        n, who, "yes" if p["completed"] else "**no**", p["pages"], p["items"], p["total_s"],
                        f(p["first_page_ms"]), f(p["full_page_ms_mean"]), f(p["full_page_ms_max"]),
                        p["error"] or ""))

    # ------------------------------------------------------------ memory
    print("\n### Memory and CPU of the service processes (peak over every run)\n")
    print("| N | service | process groups | peak RSS MiB (sum of group peaks) | peak PSS MiB | max processes |")
    print("|---|---|---|---|---|---|")
    peak = {}
    for n in ns:
        for who in ("ours", "ref"):
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
        if (n, "ours") in peak and (n, "ref") in peak and peak[(n, "ref")][0]:
            print("| %d | ours / ref | | **%.3f** | %.3f | |" % (
                n, peak[(n, "ours")][0] / peak[(n, "ref")][0], peak[(n, "ours")][1] / max(peak[(n, "ref")][1], 1e-9)))

    # ------------------------------------------------------------ targets
    print("\n### Targets\n")
    lines = []

    def get(n, ep, c):
        return summary.get((n, ep, c), (None, None))

    for c in (1, 16):
        o, r = get(1000, "clusters_limit1000", c)
        if o and r:
            rt = ratio(o["rate"], r["rate"])
            ok = rt is not None and rt >= 200 and o["p99"] is not None and o["p99"] < 50 and not o["bad"]
            lines.append("- limit=1000 list at N=1000, c=%d: ratio %s, ours p99 %s ms → %s" % (
                c, fr(rt), f(o["p99"]), "met" if ok else "NOT met"))
        elif o or r:
            lines.append("- limit=1000 list at N=1000, c=%d: incomplete data" % c)
    for ep in ("cluster_get", "nodegroups"):
        for n in ns:
            o, r = get(n, ep, 16)
            if o and r:
                rt = ratio(o["rate"], r["rate"])
                ok = rt is not None and rt >= 20 and not o["bad"]
                lines.append("- %s at c=16, N=%d: ratio %s → %s" % (ep, n, fr(rt), "met" if ok else "NOT met"))
    base = [p for p in paging.get((1000, "ours"), []) if p.get("full_page_ms_mean")]
    for n in ns:
        if n <= 1000:
            continue
        ps = paging.get((n, "ours"), [])
        if ps:
            done = all(p["completed"] for p in ps)
            m = med([p["full_page_ms_mean"] for p in ps])
            b = med([p["first_page_ms"] for p in base]) if base else None
            rt = ratio(m, b)
            ok = done and rt is not None and rt <= 1.5
            lines.append("- N=%d paging: %s, mean full page %s ms vs %s ms at N=1000 (×%s) → %s" % (
                n, "completed" if done else "INCOMPLETE", f(m), f(b), f(rt, "%.2f"),
                "met" if ok else "NOT met"))
        rps = paging.get((n, "ref"), [])
        if rps:
            p = rps[0]
            lines.append("- reference N=%d paging: %s after %d page(s), %.1f s%s" % (
                n, "completed" if p["completed"] else "did not complete", p["pages"], p["total_s"],
                (": " + p["error"]) if p["error"] else ""))
    for n in ns:
        if (n, "ours") in peak and (n, "ref") in peak and peak[(n, "ref")][0]:
            rt = peak[(n, "ours")][0] / peak[(n, "ref")][0]
            lines.append("- peak RSS at N=%d: ours %.0f MiB, reference %.0f MiB (ratio %.3f) → %s" % (
                n, peak[(n, "ours")][0], peak[(n, "ref")][0], rt, "met" if rt <= 0.2 else "NOT met"))
    for n in ns:
        for c in (1, 16):
            o, r = get(n, "clusters_create_delete", c)
            if o and r:
                rt = ratio(o["rate"], r["rate"])
                ok = rt is not None and rt >= 50 and (o["pairs"] or 0) > 0
                lines.append("- cluster create+delete at N=%d, c=%d: ours %s accepted/s (%s pairs/s), "
                             "reference %s accepted/s → ratio %s → %s" % (
                                 n, c, f(o["rate"], "%.2f"), f(o["pairs"], "%.2f"), f(r["rate"], "%.2f"),
                                 fr(rt), "met" if ok else "NOT met"))
    print("\n".join(lines) if lines else "(no data)")


if __name__ == "__main__":
    main()
