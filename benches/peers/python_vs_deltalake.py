#!/usr/bin/env python3
"""The Python package next to deltalake (delta-rs), in one run, on the same data.

    python_vs_deltalake.py ALLUVIUM_BENCH WORKDIR [--rows 1000000] [--files 100]
                           [--repeat 5] [--stream-gb 2] [--only import,write,read,dml,stream]

Run it with a Python that has both packages (alluvium installed from a release build:
``pip install ./python``) and pyarrow; ALLUVIUM_BENCH is a release ``alluvium-bench`` (the
Rust side of the write comparison). Prints one JSON line per figure: medians, minimum and
maximum in milliseconds, and ratios (deltalake's median over alluvium's; for the Rust
comparison, Python's over Rust's). Nothing is asserted.

* ``import``: ``python -c "import M"`` for alluvium and deltalake, and ``python -c pass``
  as the floor, each a fresh process.
* ``write``: N rows x 4 columns (id, category, value, ts; the rows ``alluvium-bench write``
  generates) from a pyarrow table into a new table, one commit, each run a fresh directory
  (the table is built before the clock starts); the same write from Rust
  (``alluvium-bench write``).
* ``read``: ``DeltaTable(path).to_pyarrow_table()`` (load included) of a table of N rows in
  F files that deltalake wrote (F appends).
* ``dml``: a one-row DELETE and a one-row MERGE (update the row if it matches, insert it if
  not) on the N-row, F-file table, each including ``DeltaTable(path)``, every run on a
  fresh copy: alluvium on the table with ``delta.enableDeletionVectors=true`` (it marks the
  row), deltalake on the same rows without deletion vectors (it cannot write them, so it
  rewrites the file). Both in this one interpreter, alternating.
* ``stream``: alluvium writes a generated stream of about ``--stream-gb`` GB of Arrow data
  (batches made by a Python generator) into a new table, in a child process whose peak RSS
  is reported.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

ROWS_SRC = r"""
import datetime as dt, pyarrow as pa
def rows(n, batch=65536):
    out = []
    for start in range(0, n, batch):
        end = min(start + batch, n)
        ids = pa.array(range(start, end), pa.int64())
        out.append(pa.record_batch({
            "id": ids,
            "category": pa.array([f"c{i % 100}" for i in range(start, end)]),
            "value": pa.array([i * 0.5 for i in range(start, end)], pa.float64()),
            "ts": pa.array([1_700_000_000_000_000 + i * 1_000_000 for i in range(start, end)],
                           pa.timestamp("us", "UTC")),
        }))
    return pa.Table.from_batches(out)
"""


def line(d: dict) -> None:
    print(json.dumps(d), flush=True)


def stats(ms: list[float]) -> dict:
    return {
        "median_ms": round(statistics.median(ms), 3),
        "min_ms": round(min(ms), 3),
        "max_ms": round(max(ms), 3),
        "times_ms": [round(x, 3) for x in ms],
    }


def run_child(code: str) -> dict:
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def bench_import(repeat: int) -> None:
    times: dict[str, list[float]] = {"pass": [], "alluvium": [], "deltalake": []}
    for _ in range(repeat):
        for mod in times:
            code = "pass" if mod == "pass" else f"import {mod}"
            t = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True)
            times[mod].append((time.perf_counter() - t) * 1000)
    floor = statistics.median(times["pass"])
    for mod in ("alluvium", "deltalake"):
        s = stats(times[mod])
        line({"bench": "import", "module": mod, **s, "net_median_ms": round(s["median_ms"] - floor, 3),
              "interpreter_floor_ms": round(floor, 3)})


WRITE_CHILD = ROWS_SRC + r"""
import json, os, shutil, sys, time
engine, work, n, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
opts = {"fsync": "false"} if engine == "alluvium_no_fsync" else None
mod = __import__(engine.replace("_no_fsync", ""))
data = rows(n)
times = []
for k in range(repeat + 1):
    path = os.path.join(work, f"{engine}-{k}")
    shutil.rmtree(path, ignore_errors=True)
    t = time.perf_counter()
    mod.write_deltalake(path, data, storage_options=opts)
    ms = (time.perf_counter() - t) * 1000
    if k:
        times.append(ms)
    shutil.rmtree(path)
print(json.dumps({"times": times}))
"""


def bench_write(bench_bin: str, work: str, n: int, repeat: int) -> None:
    d = os.path.join(work, "write")
    os.makedirs(d, exist_ok=True)
    times: dict[str, list[float]] = {"alluvium": [], "alluvium_no_fsync": [], "deltalake": [], "rust": []}
    for _ in range(2):  # two alternating rounds of `repeat` runs each
        for engine in ("alluvium", "alluvium_no_fsync", "deltalake"):
            out = subprocess.run([sys.executable, "-c", WRITE_CHILD, engine, d, str(n), str(repeat)],
                                 check=True, capture_output=True, text=True)
            times[engine] += json.loads(out.stdout.strip().splitlines()[-1])["times"]
        out = subprocess.run([bench_bin, "write", os.path.join(d, "rust"), "--rows", str(n), "--repeat", str(repeat)],
                             check=True, capture_output=True, text=True)
        times["rust"] += json.loads(out.stdout.strip().splitlines()[-1])["times_ms"]
    s = {k: stats(v) for k, v in times.items()}
    for k, v in s.items():
        line({"bench": "write", "engine": k, "rows": n, **v})
    line({
        "bench": "write",
        "ratio_deltalake_over_alluvium": round(s["deltalake"]["median_ms"] / s["alluvium"]["median_ms"], 2),
        "ratio_deltalake_over_alluvium_no_fsync":
            round(s["deltalake"]["median_ms"] / s["alluvium_no_fsync"]["median_ms"], 2),
        "ratio_python_over_rust": round(s["alluvium"]["median_ms"] / s["rust"]["median_ms"], 2),
    })


def build_tables(work: str, n: int, files: int) -> tuple[str, str]:
    """The plain table (deltalake writes it: an empty table, then `files` appends) and the
    deletion-vector table (alluvium: the same, on a table with
    delta.enableDeletionVectors=true). Version 0 is the empty table, so the timed operation
    commits version files + 1: not a checkpoint version for either engine (deltalake checkpoints every
    100 commits, alluvium every 10), the timed work is the same. The names carry the layout's
    revision: a work directory kept from before a change to what alluvium writes (v3: one row
    group in a small checkpoint) builds the tables again."""
    plain = os.path.join(work, f"plain-{n}-{files}-v3")
    dv = os.path.join(work, f"dv-{n}-{files}-v3")
    if os.path.exists(os.path.join(plain, "_delta_log")) and os.path.exists(os.path.join(dv, "_delta_log")):
        return plain, dv
    code = ROWS_SRC + f"""
import alluvium, deltalake, shutil
shutil.rmtree({plain!r}, ignore_errors=True); shutil.rmtree({dv!r}, ignore_errors=True)
data = rows({n})
per = {n} // {files}
deltalake.DeltaTable.create({plain!r}, data.schema)
alluvium.DeltaTable.create({dv!r}, data.schema, configuration={{"delta.enableDeletionVectors": "true"}})
for i in range({files}):
    part = data.slice(i * per, per)
    deltalake.write_deltalake({plain!r}, part, mode="append")
    alluvium.write_deltalake({dv!r}, part, mode="append")
print('{{}}')
"""
    run_child(code)
    return plain, dv


READ_CHILD = r"""
import json, sys, time
engine, path, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3])
mod = __import__(engine)
times, rows = [], 0
for k in range(repeat + 1):
    t = time.perf_counter()
    rows = mod.DeltaTable(path).to_pyarrow_table().num_rows
    ms = (time.perf_counter() - t) * 1000
    if k:
        times.append(ms)
print(json.dumps({"times": times, "rows": rows}))
"""


def bench_read(plain: str, repeat: int) -> None:
    times: dict[str, list[float]] = {"alluvium": [], "deltalake": []}
    rows = {}
    for _ in range(2):
        for engine in times:
            out = subprocess.run([sys.executable, "-c", READ_CHILD, engine, plain, str(repeat)],
                                 capture_output=True, text=True)
            # deltalake's process sometimes aborts at exit ("terminate called without an
            # active exception", after its result is printed): the timings stand.
            lines = out.stdout.strip().splitlines()
            if not lines or not lines[-1].startswith("{"):
                raise RuntimeError(f"{engine} read child failed ({out.returncode}): {out.stderr[-2000:]}")
            r = json.loads(lines[-1])
            times[engine] += r["times"]
            rows[engine] = r["rows"]
    s = {k: stats(v) for k, v in times.items()}
    for k, v in s.items():
        line({"bench": "to_pyarrow_table", "engine": k, "rows": rows[k], **v})
    line({"bench": "to_pyarrow_table",
          "ratio_deltalake_over_alluvium": round(s["deltalake"]["median_ms"] / s["alluvium"]["median_ms"], 2)})


def bench_dml(work: str, plain: str, dv: str, n: int, repeat: int) -> None:
    import alluvium
    import deltalake
    import pyarrow as pa

    target = n // 2 + 7
    src = pa.table({
        "id": pa.array([target], pa.int64()),
        "category": ["merged"],
        "value": pa.array([-1.0], pa.float64()),
        "ts": pa.array([0], pa.timestamp("us", "UTC")),
    })
    ops = {
        "delete_1row": lambda mod, p, o: mod.DeltaTable(p, storage_options=o).delete(f"id = {target}"),
        "merge_1row": lambda mod, p, o: mod.DeltaTable(p, storage_options=o)
        .merge(src, "t.id = s.id", source_alias="s", target_alias="t")
        .when_matched_update_all()
        .when_not_matched_insert_all()
        .execute(),
    }
    # alluvium fsyncs every file it writes and the commit (durable by default);
    # "alluvium_no_fsync" skips that, as deltalake does: like for like.
    engines = {
        "alluvium": (alluvium, dv, None),
        "alluvium_no_fsync": (alluvium, dv, {"fsync": "false"}),
        "deltalake": (deltalake, plain, None),
    }
    for op, call in ops.items():
        times: dict[str, list[float]] = {k: [] for k in engines}
        for k in range(repeat + 1):
            order = list(engines) if k % 2 == 0 else list(reversed(engines))
            for name in order:
                mod, base, opts = engines[name]
                copy = os.path.join(work, f"copy-{name}")
                shutil.rmtree(copy, ignore_errors=True)
                shutil.copytree(base, copy)
                # The copy's dirty pages are flushed before the clock starts: alluvium's
                # commit fsync would otherwise pay for writing out the whole copy.
                os.sync()
                t = time.perf_counter()
                call(mod, copy, opts)
                ms = (time.perf_counter() - t) * 1000
                if k:
                    times[name].append(ms)
        s = {k: stats(v) for k, v in times.items()}
        for k, v in s.items():
            line({"bench": op, "engine": k, "deletion_vectors": k != "deltalake", **v})
        line({"bench": op,
              "ratio_deltalake_over_alluvium": round(s["deltalake"]["median_ms"] / s["alluvium"]["median_ms"], 2),
              "ratio_deltalake_over_alluvium_no_fsync":
                  round(s["deltalake"]["median_ms"] / s["alluvium_no_fsync"]["median_ms"], 2)})


STREAM_CHILD = r"""
import json, resource, sys, time
import pyarrow as pa, alluvium
path, gb = sys.argv[1], float(sys.argv[2])
batch_rows = 65536
template = pa.record_batch({
    "id": pa.array(range(batch_rows), pa.int64()),
    "category": pa.array([f"category-{i % 1000:04d}" for i in range(batch_rows)]),
    "value": pa.array([i * 0.5 for i in range(batch_rows)], pa.float64()),
    "ts": pa.array(range(batch_rows), pa.timestamp("us", "UTC")),
})
per_batch = template.nbytes
batches = int(gb * 1e9 / per_batch) + 1
def gen():
    for k in range(batches):
        ids = pa.array(range(k * batch_rows, (k + 1) * batch_rows), pa.int64())
        yield template.set_column(0, "id", ids)
t = time.perf_counter()
alluvium.write_deltalake(path, gen())
ms = (time.perf_counter() - t) * 1000
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"ms": ms, "arrow_bytes": per_batch * batches, "batches": batches, "peak_rss_mib": rss,
                  "rows": alluvium.DeltaTable(path).count()}))
"""


def bench_stream(work: str, gb: float) -> None:
    path = os.path.join(work, "stream")
    shutil.rmtree(path, ignore_errors=True)
    r = run_child_argv(STREAM_CHILD, [path, str(gb)])
    line({"bench": "stream_write", "engine": "alluvium", "arrow_gb": round(r["arrow_bytes"] / 1e9, 3),
          "rows": r["rows"], "ms": round(r["ms"], 1), "peak_rss_mib": round(r["peak_rss_mib"], 1)})
    shutil.rmtree(path, ignore_errors=True)


def run_child_argv(code: str, argv: list[str]) -> dict:
    out = subprocess.run([sys.executable, "-c", code, *argv], check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("bench_bin")
    p.add_argument("workdir")
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--files", type=int, default=100)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--stream-gb", type=float, default=2.0)
    p.add_argument("--only", default="import,write,read,dml,stream")
    a = p.parse_args()
    only = set(a.only.split(","))
    os.makedirs(a.workdir, exist_ok=True)
    if "import" in only:
        bench_import(max(a.repeat, 5) * 2)
    if "write" in only:
        bench_write(a.bench_bin, a.workdir, a.rows, a.repeat)
    if only & {"read", "dml"}:
        plain, dv = build_tables(a.workdir, a.rows, a.files)
        if "read" in only:
            bench_read(plain, a.repeat)
        if "dml" in only:
            bench_dml(a.workdir, plain, dv, a.rows, a.repeat)
    if "stream" in only:
        bench_stream(a.workdir, a.stream_gb)
    return 0


if __name__ == "__main__":
    sys.exit(main())
