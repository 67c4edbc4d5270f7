"""Copies the side-by-side run's seed (its first 1,000 clusters, their nodegroups and template, from the
`rust` target's database that bench/run.sh leaves in the reference's MariaDB) into a profile database, N/1,000
times under new uuids.

    copy_seed.py mysql <database> <N> <port> <user> <password>   # a MariaDB database `db upgrade` made
    copy_seed.py pg <database> <N>                               # PostgreSQL, through psql (PG* variables)

The source is SRC_{HOST,PORT,USER,PASSWORD,DB} (default: the harness's own). Needs pymysql (the reference's
venv has it)."""
import io, os, subprocess, sys, uuid
import pymysql

env = os.environ.get
src = pymysql.connect(host=env("SRC_HOST", "127.0.0.1"), port=int(env("SRC_PORT", "3306")),
                      user=env("SRC_USER", "openkeel_bench"), password=env("SRC_PASSWORD", "openkeel-bench-db"),
                      database=env("SRC_DB", "openkeel_bench_rust"))
kind, target, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
cur = src.cursor()
def rows(sql):
    cur.execute(sql)
    cols = [d[0] for d in cur.description]
    return cols, cur.fetchall()
ccols, clusters = rows("SELECT * FROM cluster WHERE name LIKE 'anchor-cluster-%' ORDER BY id LIMIT 1000")
ids = {r[ccols.index("uuid")] for r in clusters}
ncols, ngs = rows("SELECT * FROM nodegroup ORDER BY id")
ngs = [r for r in ngs if r[ncols.index("cluster_id")] in ids]
tcols, tpls = rows("SELECT * FROM cluster_template")
def copies(cols, data, uuid_cols):
    out = []
    for k in range(n // len(clusters) if data is not tpls else 1):
        for r in data:
            r = list(r)
            if "id" in cols:
                r[cols.index("id")] = None
            for c in uuid_cols:
                i = cols.index(c)
                if k:
                    r[i] = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{k}-{r[i]}"))
            if "name" in cols and k and data is clusters:
                r[cols.index("name")] = f"{r[cols.index('name')]}-{k}"
            out.append(r)
    return out
sets = [("cluster_template", tcols, copies(tcols, tpls, [])),
        ("cluster", ccols, copies(ccols, clusters, ["uuid"])),
        ("nodegroup", ncols, copies(ncols, ngs, ["uuid", "cluster_id"]))]
if kind == "mysql":
    dst = pymysql.connect(host="127.0.0.1", port=int(sys.argv[4]), user=sys.argv[5], password=sys.argv[6], database=target)
    c = dst.cursor()
    for t, cols, data in sets:
        c.execute(f"DELETE FROM {t}")
        cs = [x for x in cols if x != "id"]
        idx = [cols.index(x) for x in cs]
        c.executemany(f"INSERT INTO {t} ({', '.join('`'+x+'`' for x in cs)}) VALUES ({', '.join(['%s']*len(cs))})", [[r[i] for i in idx] for r in data])
    dst.commit()
else:
    for t, cols, data in sets:
        cs = [x for x in cols if x != "id"]
        idx = [cols.index(x) for x in cs]
        buf = io.StringIO()
        for r in data:
            vals = []
            for i in idx:
                v = r[i]
                if v is None: vals.append("\\N")
                elif isinstance(v, bool) or (cols[i] in ("floating_ip_enabled","master_lb_enabled","public","hidden","tls_disabled","registry_enabled","master_lb_enabled","is_default","insecure_registry") and isinstance(v, int)): vals.append("true" if v else "false")
                else: vals.append(str(v).replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n"))
            buf.write("\t".join(vals) + "\n")
        subprocess.run(["psql", "-q", "-v", "ON_ERROR_STOP=1", target, "-c", f"DELETE FROM {t}", "-c", f"COPY {t} ({', '.join(cs)}) FROM STDIN"], input=buf.getvalue(), text=True, check=True)
print(kind, target, "clusters", len(sets[1][2]), "nodegroups", len(sets[2][2]))
