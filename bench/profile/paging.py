"""Walks every cluster with limit=1000 (the next links) of an `api` with `auth_strategy = noauth`, timing each
page's transfer and the `api`'s CPU per page (from /proc); twice, the second walk from the list cache.

    paging.py http://127.0.0.1:9700 <N> <api pid> <project id> <user id>"""
import json, os, sys, time, urllib.request
base, n, pid, project, user = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
def cpu():
    f = open(f"/proc/{pid}/stat").read().split(")")[-1].split()
    return (int(f[11]) + int(f[12])) * 1000 / os.sysconf("SC_CLK_TCK")
H = {"x-project-id": project, "x-user-id": user,
     "x-roles": "member,reader", "OpenStack-API-Version": "container-infra latest"}
for walk in ("first walk (read)", "second walk (cache)"):
    url, times, items, c0 = base + "/v1/clusters?limit=1000", [], 0, cpu()
    while url:
        t = time.perf_counter()
        with urllib.request.urlopen(urllib.request.Request(url, headers=H), timeout=60) as r:
            raw = r.read()
        times.append((time.perf_counter() - t) * 1000)
        body = json.loads(raw)
        items += len(body["clusters"])
        url = body.get("next")
        if url and not body["clusters"]:
            break
    full = sorted(times[:-1]) if len(times) > 1 else times
    print(f"N={n} {walk}: pages {len(times)} items {items} total {sum(times)/1000:.2f} s, "
          f"full pages median {full[len(full)//2]:.1f} ms max {max(full):.1f} ms, first {times[0]:.1f} ms, "
          f"api CPU {(cpu() - c0) / len(times):.1f} ms a page")
