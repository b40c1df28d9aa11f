"""delta-rs (deltalake) cold snapshot loads of an s3:// table on the loopback server:
time of DeltaTable(uri, storage_options).file_uris(), and its requests counted from the moto
server's request log (lines appended during the loads).

usage: PEERS_VENV/bin/python benches/peers/load_s3_delta_rs.py URI MOTO_LOG [REPEAT]
(run next to `alluvium-bench load URI --repeat N`, which prints its own request counts)
"""
import json, os, re, statistics, sys, time
from deltalake import DeltaTable

uri, log = sys.argv[1], sys.argv[2]
repeat = int(sys.argv[3]) if len(sys.argv) > 3 else 5
opts = {"AWS_ENDPOINT_URL": os.environ["AWS_ENDPOINT_URL"], "AWS_ALLOW_HTTP": "true",
        "AWS_ACCESS_KEY_ID": "testkey", "AWS_SECRET_ACCESS_KEY": "testsecret",
        "AWS_REGION": "us-east-1", "AWS_S3_ALLOW_UNSAFE_RENAME": "true"}

def lines():
    with open(log, "rb") as f:
        return f.read().decode(errors="replace").splitlines()

DeltaTable(uri, storage_options=opts).file_uris()  # warm-up, as alluvium-bench does
times, counts = [], None
for _ in range(repeat):
    before = len(lines())
    t = time.perf_counter()
    dt = DeltaTable(uri, storage_options=opts)
    n = len(dt.file_uris())
    times.append((time.perf_counter() - t) * 1000)
    time.sleep(0.3)
    new = lines()[before:]
    c = {"list": 0, "get": 0, "head": 0, "other": 0}
    for l in new:
        m = re.search(r"\b(GET|HEAD|PUT|POST|DELETE) (\S+) HTTP", l)
        if not m: continue
        if m.group(1) == "GET" and "list-type" in m.group(2): c["list"] += 1
        elif m.group(1) == "GET": c["get"] += 1
        elif m.group(1) == "HEAD": c["head"] += 1
        else: c["other"] += 1
    counts = c
print(json.dumps({"engine": "delta-rs", "deltalake": __import__("deltalake").__version__, "version": dt.version(),
                  "files": n, "repeat": repeat, "median_ms": round(statistics.median(times), 3),
                  "min_ms": round(min(times), 3), "max_ms": round(max(times), 3), "requests": counts}))
