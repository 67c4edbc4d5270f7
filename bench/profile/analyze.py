"""Where the samples of list.sh's profiles went: inclusive shares of the list path's steps, exclusive shares of
the allocator, memory copies and the kernel.   analyze.py perf-*.data"""
import subprocess, sys, re
def report(f, children):
    out = subprocess.run(["perf", "report", "-i", f, "--children" if children else "--no-children", "--sort", "sym", "-g", "none", "--percent-limit", "0"], capture_output=True, text=True).stdout
    rows = []
    for l in out.splitlines():
        m = re.match(r"\s+([\d.]+)%\s+([\d.]+)%\s+\[(.)\]\s+(.*)", l) if children else re.match(r"\s+([\d.]+)%\s+\[(.)\]\s+(.*)", l)
        if m: rows.append(m.groups())
    return rows
CATS = [
    ("change stamp query", r"Conductor::change_stamp"),
    ("cluster query", r"list_clusters_view::\{\{closure\}\}$"),
    ("  of which row decoding", r"clusters_list::read_(summary|detail)$"),
    ("nodegroup query", r"list_nodegroup_sizes_of_clusters::\{\{closure\}\}$"),
    ("template query", r"get_cluster_templates_by_uuids::\{\{closure\}\}$"),
    ("assembly (views)", r"api::clusters::cluster_view$"),
    ("render (JSON)", r"api::json::to_vec$"),
    ("dropping the page", r"drop_in_place<openkeel_magnum::conductor::clusters::ClusterPage>"),
]
for f in sys.argv[1:]:
    ch = report(f, True)
    res = []
    for name, pat in CATS:
        best = max((float(c) for c, s, k, sym in ch if re.search(pat, sym)), default=0.0)
        res.append(f"{name} {best:.0f}%")
    se = report(f, False)
    alloc = sum(float(p) for p, k, sym in se if re.match(r"_?mi_|mi_free", sym))
    kern = sum(float(p) for p, k, sym in se if k == "k")
    mem = sum(float(p) for p, k, sym in se if "memmove" in sym or "memcpy" in sym or "memset" in sym)
    res += [f"allocator (self) {alloc:.0f}%", f"memcpy/memset (self) {mem:.0f}%", f"kernel (self) {kern:.0f}%"]
    print(f.replace("perf-","").replace(".data",""), "|", " · ".join(res))
