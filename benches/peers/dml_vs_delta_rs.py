#!/usr/bin/env python3
"""DELETE / UPDATE / MERGE side by side: alluvium's CLI against delta-rs, in one script run.

usage: PEERS_VENV/bin/python benches/peers/dml_vs_delta_rs.py ALLUVIUM_BIN WORKDIR
           [--rows 1000000] [--files 100] [--repeat 5] [--only OP,OP,...]
           [--flavours plain,dv,cdf] [--rebuild] [--keep] [--cdf-read] [--no-fsync-too]

Base tables (built once per flavour with delta-rs and cached in WORKDIR; both engines start
every run from a fresh copy of the SAME base table):
  columns id int64 (unique, 0..N-1), key string ("k%09d" % id), value float64 (a deterministic
  per-id hash), ts timestamp (UTC, 2026-01-01 + id seconds); N rows in F files, not
  partitioned. File i holds ids [i*N/F, (i+1)*N/F), so every predicate `id % k = 0` touches
  every file. Version 0 creates the empty table, versions 1..F are the F appends, and a
  checkpoint is written at version F: with the default F = 100 the timed operation commits
  version 101, which is not a checkpoint version for either engine (alluvium checkpoints
  every `delta.checkpointInterval` = 10 commits, as Delta does). Had the operation landed on
  version 100, alluvium would also have written a checkpoint there, which delta-rs does not
  (its commit on version 100 leaves no checkpoint): the timed work would differ.
  Flavours: plain (no properties), dv (delta.enableDeletionVectors=true) and cdf
  (delta.enableChangeDataFeed=true: both engines write cdc files for UPDATE / MERGE /
  copy-on-write DELETE). When an op runs on plain and cdf, a line
  {"info": "cdf overhead", ...} gives each engine's median with CDF over its median without
  (issue 14's target for alluvium: at most 1.30 on update_1pct and merge_10k).

Durability: alluvium fsyncs every file it writes, the directory entries, and the commit
before it reports success; delta-rs 1.6 fsyncs nothing. `ratio` compares the two as they
ship. With --no-fsync-too each repeat also times alluvium with
ALLUVIUM_STORAGE_OPTIONS=fsync=false (`alluvium_nofsync_median_s`, `ratio_nofsync`), the same
durability as delta-rs, so the cost of the fsyncs is visible on its own.

The last line, {"info": "process floor", ...}, times `/bin/true` and `alluvium --version`
through the same launcher: what any whole-process run costs here before doing any work.

Change-feed reads (--cdf-read; needs the cdf flavour's base table, version B): on one copy,
alluvium runs update_1pct, merge_10k and delete_0.1pct (versions B+1..B+3, cdc files); then
both engines read the feed of those three versions and from version 0, repeated: delta-rs
`DeltaTable(path).load_cdf(starting_version=V)` drained batch by batch in a fresh process
(imports not counted) against the whole `alluvium changes T --from V --format parquet
--output FILE` process (which also encodes the rows to Parquet: `ratio`), and, when
`alluvium-bench` sits next to ALLUVIUM_BIN, against `alluvium-bench changes T --from V`, which
like delta-rs drains the batches inside its process without encoding them: the like-for-like
figures. Both engines are measured the same way there, each repeat in a fresh process per
engine, interleaved: cold (the process's first read: `alluvium_in_process_median_s`,
`delta_rs_median_s`, `ratio_in_process`) and warm (one untimed read of the same range first,
as a long-running consumer would have done: `*_warm_median_s`, `ratio_in_process_warm`).
alluvium reads there with view types, as delta-rs returns strings (Utf8View); its default
layout (Utf8) is timed too, cold (`alluvium_in_process_utf8_median_s`, `ratio_in_process_utf8`).
One JSON line per range (op cdf_read_dml, cdf_read_all) with medians, the ratios, row counts
(they must be equal) and peak RSS.

Operations (M = N/2 + 7, an existing id in the middle file):
  delete_0.1pct  DELETE WHERE id % 1000 = 0                      (N/1000 rows, every file)
  delete_1row    DELETE WHERE id = M                             (1 row, 1 file)
  update_1pct    UPDATE SET value = value + 1 WHERE id % 100 = 0  (N/100 rows, every file)
  merge_10k      MERGE a 10,000-row source ON t.id = s.id: 5,000 existing ids (every
                 N/5000-th, so every file) + 5,000 new ids; update all + insert all
  merge_1row     MERGE a 1-row source (id M), same clauses

What is timed (whole operations, as the issue asks):
  delta-rs   a fresh Python process (this interpreter) imports pyarrow and deltalake and reads
             the MERGE source from its Parquet file, then times DeltaTable(path) plus the
             operation call (commit included). Interpreter start-up and imports are NOT counted.
  alluvium   the whole CLI process, `ALLUVIUM_BIN delete|update|merge ...`, from fork to exit
             (start-up, table load, source read, operation, commit). It is started from a
             small launcher process so that its peak RSS is its own (a process exec'ed
             straight from this script would inherit this interpreter's peak in ru_maxrss).
  Runs alternate which engine goes first. Each run gets a fresh copy of the base table,
  flushed to disk (os.sync) before the engine starts, so that neither operation pays for the
  copy's writeback.

Output: one JSON line per (op, flavour) on stdout (versions and base-table notes go to
stderr) with both medians (min/max too), the ratio delta_rs_median_s / alluvium_median_s
(above 1: alluvium is faster), the bytes each engine's
commit added to the table (new data files + new DV files, measured on disk), peak RSS of each
process (delta-rs: the whole Python process, VmHWM), files added/removed by the last run's
commit, whether it wrote a deletion vector, and `agree`: the last run's tables of both engines
read back with DuckDB's delta extension (polars if DuckDB fails), sorted by id, are equal;
`matches_expected` compares alluvium's result to the rows computed independently with
pyarrow. An op whose alluvium subcommand does not exist prints `"skipped": "..."`; an
alluvium run that fails prints `"alluvium_error": "..."` (the delta-rs side is still timed), and
a delta-rs run that fails `"delta_rs_error": "..."`.

Runs only with this repository's files and the peers venv (deltalake, duckdb + the
duckdb-ext-delta wheel, polars, pyarrow, numpy).
"""
from __future__ import annotations

import argparse
import datetime as dt_mod
import glob
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

from timed_process import last_json, run_child, run_timed, vm_hwm_mib

TS0 = dt_mod.datetime(2026, 1, 1, tzinfo=dt_mod.timezone.utc)
OPS = ["delete_0.1pct", "delete_1row", "update_1pct", "merge_10k", "merge_1row"]
FLAVOURS = {"plain": {}, "dv": {"delta.enableDeletionVectors": "true"},
            "cdf": {"delta.enableChangeDataFeed": "true"}}
RUN_TIMEOUT_S = 900

# ----------------------------------------------------------------------------------------------
# data


# Bumped when the way base tables are built changes, so cached ones are rebuilt.
# 2: an empty version 0 before the appends (the timed commit is not a checkpoint version).
BASE_LAYOUT = 2


def gen_rows(lo: int, hi: int):
    """Rows lo..hi-1 of the target table (deterministic, no RNG state)."""
    import numpy as np
    import pyarrow as pa

    ids = np.arange(lo, hi, dtype=np.int64)
    # a splitmix-style hash of the id scaled to [0, 1000)
    x = (ids.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)) * np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(31)
    value = (x >> np.uint64(11)).astype(np.float64) / float(1 << 53) * 1000.0
    ts_us = np.int64(int(TS0.timestamp()) * 1_000_000) + ids * np.int64(1_000_000)
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "key": pa.array(["k%09d" % i for i in range(lo, hi)], pa.string()),
        "value": pa.array(value, pa.float64()),
        "ts": pa.array(ts_us, pa.timestamp("us", tz="UTC")),
    })


def merge_source(op: str, n: int):
    """The MERGE source of `op`: merge_10k = 5,000 existing ids spread over every file plus
    5,000 new ids; merge_1row = the existing id n/2 + 7."""
    import numpy as np
    import pyarrow as pa

    if op == "merge_1row":
        the_id = n // 2 + 7
        return pa.table({
            "id": pa.array([the_id], pa.int64()),
            "key": pa.array(["one%09d" % the_id], pa.string()),
            "value": pa.array([-1.5], pa.float64()),
            "ts": pa.array([int(TS0.timestamp()) * 1_000_000 + 7], pa.timestamp("us", tz="UTC")),
        })
    half = 5000 if n >= 5000 else max(1, n // 2)
    step = max(1, n // half)
    old = np.arange(0, step * half, step, dtype=np.int64)[:half]
    new = np.arange(n, n + half, dtype=np.int64)
    ids = np.concatenate([old, new])
    ts_us = np.int64(int(TS0.timestamp()) * 1_000_000) + np.int64(10**12) + ids
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "key": pa.array(["m%09d" % i for i in ids], pa.string()),
        "value": pa.array(-ids.astype(np.float64), pa.float64()),
        "ts": pa.array(ts_us, pa.timestamp("us", tz="UTC")),
    })


def expected_after(op: str, n: int):
    """The table's rows after `op`, computed with pyarrow from the generator alone."""
    import pyarrow as pa
    import pyarrow.compute as pc

    t = gen_rows(0, n)
    ids = t.column("id")
    if op == "delete_0.1pct":
        return t.filter(pc.not_equal(pc.subtract(ids, pc.multiply(pc.divide(ids, 1000), 1000)), 0))
    if op == "delete_1row":
        return t.filter(pc.not_equal(ids, n // 2 + 7))
    if op == "update_1pct":
        hit = pc.equal(pc.subtract(ids, pc.multiply(pc.divide(ids, 100), 100)), 0)
        return t.set_column(2, "value", pc.if_else(hit, pc.add(t.column("value"), 1.0), t.column("value")))
    src = merge_source(op, n)
    keep = t.filter(pc.invert(pc.is_in(ids, value_set=src.column("id"))))
    return pa.concat_tables([keep, src])


def build_table(path: str, n: int, files: int, config: dict) -> dict:
    from deltalake import DeltaTable, write_deltalake

    shutil.rmtree(path, ignore_errors=True)
    started = time.perf_counter()
    per = n // files
    # Version 0: the empty table, so the F appends are versions 1..F and the timed commit
    # is F + 1 (not a checkpoint version; see the module docstring).
    DeltaTable.create(path, schema=gen_rows(0, 0).schema, configuration=config or None)
    for i in range(files):
        lo, hi = i * per, (n if i == files - 1 else (i + 1) * per)
        write_deltalake(path, gen_rows(lo, hi), mode="append")
    dtab = DeltaTable(path)
    dtab.create_checkpoint()
    return {"version": dtab.version(), "files": len(dtab.file_uris()),
            "build_s": round(time.perf_counter() - started, 2)}


# ----------------------------------------------------------------------------------------------
# the delta-rs side: a child process of this interpreter


def deltars_child(op: str, path: str, n: int, source: str) -> None:
    """Loads the table and runs `op` with delta-rs; prints one JSON line `CHILD {...}`."""
    import pyarrow.parquet as pq
    from deltalake import DeltaTable

    src = pq.read_table(source) if source else None  # outside the timed region
    started = time.perf_counter()
    dtab = DeltaTable(path)
    loaded = time.perf_counter()
    if op == "delete_0.1pct":
        metrics = dtab.delete("id % 1000 = 0")
    elif op == "delete_1row":
        metrics = dtab.delete(f"id = {n // 2 + 7}")
    elif op == "update_1pct":
        metrics = dtab.update(updates={"value": "value + 1.0"}, predicate="id % 100 = 0")
    elif op in ("merge_10k", "merge_1row"):
        metrics = (dtab.merge(src, "t.id = s.id", source_alias="s", target_alias="t")
                   .when_matched_update_all().when_not_matched_insert_all().execute())
    elif op.startswith("load_cdf:"):
        # load_cdf:V[:warm] -- with warm, one untimed load and read of the same range first.
        parts = op.split(":")
        start = int(parts[1])
        if parts[2:] == ["warm"]:
            for _ in DeltaTable(path).load_cdf(starting_version=start):
                pass
            started = time.perf_counter()
            dtab = DeltaTable(path)
            loaded = time.perf_counter()
        rows = 0
        for b in dtab.load_cdf(starting_version=start):
            rows += b.num_rows
        metrics = {"rows": rows}
    else:
        raise ValueError(op)
    ended = time.perf_counter()
    print("CHILD " + json.dumps({"seconds": ended - started, "load_s": loaded - started,
                                 "peak_rss_mib": vm_hwm_mib(), "metrics": metrics}, default=str),
          flush=True)


def run_deltars(op: str, path: str, n: int, source: str) -> dict:
    return run_child(__file__, [op, path, str(n), source], f"delta-rs {op}", RUN_TIMEOUT_S)


# ----------------------------------------------------------------------------------------------
# the alluvium side: the whole CLI process, started by a small launcher

def run_alluvium(binary: str, args: list[str], out_file: str, extra_env: dict | None = None) -> dict:
    return run_timed(binary, args, out_file, extra_env, timeout=RUN_TIMEOUT_S)


def alluvium_args(op: str, path: str, n: int, source: str) -> list[str]:
    if op == "delete_0.1pct":
        return ["delete", path, "--filter", "id % 1000 = 0"]
    if op == "delete_1row":
        return ["delete", path, "--filter", f"id = {n // 2 + 7}"]
    if op == "update_1pct":
        return ["update", path, "--set", "value = value + 1", "--filter", "id % 100 = 0"]
    return ["merge", path, source, "--on", "t.id = s.id", "--when", "MATCHED THEN UPDATE SET *",
            "--when", "NOT MATCHED THEN INSERT *"]


def has_subcommand(binary: str, name: str) -> bool:
    """True when `binary name --help` succeeds (clap refuses an unknown subcommand)."""
    r = subprocess.run([binary, name, "--help"], capture_output=True, text=True)
    return r.returncode == 0


# ----------------------------------------------------------------------------------------------
# inspection and read-back


def data_files(path: str) -> dict[str, int]:
    """Every file of the table outside _delta_log, with its size."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(path):
        dirnames[:] = [d for d in dirnames if d != "_delta_log"]
        for f in filenames:
            p = os.path.join(dirpath, f)
            out[os.path.relpath(p, path)] = os.path.getsize(p)
    return out


def latest_version(path: str) -> int:
    names = [os.path.basename(f) for f in glob.glob(os.path.join(path, "_delta_log", "*.json"))]
    return max(int(f[:20]) for f in names if f[:20].isdigit())


def commit_facts(path: str, base_files: dict[str, int]) -> dict:
    """What the latest commit did, and the bytes of files that are new on disk."""
    with open(os.path.join(path, "_delta_log", "%020d.json" % latest_version(path))) as fh:
        actions = [json.loads(line) for line in fh if line.strip()]
    adds = [a["add"] for a in actions if "add" in a]
    removes = [a["remove"] for a in actions if "remove" in a]
    new = {f: s for f, s in data_files(path).items() if f not in base_files}
    return {
        "files_added": len(adds),
        "files_removed": len(removes),
        "dv_used": any(a.get("deletionVector") for a in adds) or any(f.endswith(".bin") for f in new),
        "bytes_added": sum(new.values()),
        "new_files": len(new),
    }


def duckdb_connect():
    """DuckDB with the delta extension of the duckdb-ext-delta wheel, loaded offline."""
    import duckdb

    spec = importlib.util.find_spec("duckdb_ext")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the duckdb-ext-delta wheel is not installed")
    hits = []
    for base in spec.submodule_search_locations:
        hits += sorted(glob.glob(os.path.join(base, "extensions", "v" + duckdb.__version__, "*",
                                              "delta.duckdb_extension")))
    if not hits:
        raise RuntimeError(f"no delta extension for duckdb {duckdb.__version__}")
    con = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
    con.execute("LOAD '" + hits[0].replace("'", "''") + "'")
    return con


def read_back(path: str):
    """The table's rows, normalised (plain types, ts as UTC microseconds) and sorted by id."""
    import pyarrow as pa

    try:
        con = duckdb_connect()
        try:
            tbl = con.execute("SELECT * FROM delta_scan(?)", [path]).fetch_arrow_table()
        finally:
            con.close()
    except Exception:  # noqa: BLE001  (fall back to polars' reader)
        import polars as pl

        tbl = pl.read_delta(path).to_arrow()
    return normalise(pa.table(tbl))


def normalise(tbl):
    import pyarrow as pa

    cols = {}
    for c, t in (("id", pa.int64()), ("key", pa.string()), ("value", pa.float64())):
        cols[c] = tbl.column(c).combine_chunks().cast(t)
    ts = tbl.column("ts").combine_chunks()
    if pa.types.is_timestamp(ts.type) and ts.type.tz is not None:
        ts = ts.cast(pa.timestamp("us", tz="UTC"))
    cols["ts"] = ts.cast(pa.timestamp("us")).cast(pa.int64())
    return pa.table(cols).sort_by([("id", "ascending")])


def tables_equal(a, b) -> tuple[bool, str]:
    if a.num_rows != b.num_rows:
        return False, f"rows {a.num_rows} != {b.num_rows}"
    for c in a.column_names:
        if not a.column(c).equals(b.column(c)):
            x, y = a.column(c).to_pylist(), b.column(c).to_pylist()
            i = next((i for i in range(len(x)) if x[i] != y[i]), -1)
            return False, f"column {c} differs first at row {i}: {x[i]!r} vs {y[i]!r}"
    return True, "equal"


# ----------------------------------------------------------------------------------------------
# driver


def fresh_copy(src: str, dst: str) -> str:
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst)
    # The copy's dirty pages and the removal's freed inodes are flushed before the timer
    # starts, so neither engine's operation pays for the setup's writeback (delta-rs' child
    # spends its import time before its timer; alluvium's launcher starts at once).
    os.sync()
    return dst


def spread(vals: list[float]) -> dict:
    return {"median": round(statistics.median(vals), 4), "min": round(min(vals), 4),
            "max": round(max(vals), 4)}


def bench(op: str, flavour: str, base: str, a, work: str, sources: dict, present: dict) -> dict:
    n = a.rows
    source = sources.get(op, "")
    res: dict = {"op": op, "flavour": flavour, "rows": n, "files": a.files, "repeat": a.repeat}
    command = alluvium_args(op, "T", n, source)[0]
    skip = None if present[command] else f"alluvium has no `{command}` command"
    if skip:
        res["skipped"] = skip
    base_files = data_files(base)
    d_times, d_loads, d_rss, a_times, a_rss, loadavg = [], [], [], [], [], []
    n_times: list[float] = []  # alluvium without fsync (--no-fsync-too), as delta-rs writes
    d_last = a_last = None
    d_path = os.path.join(work, "run", f"{op}-{flavour}-deltars")
    a_path = os.path.join(work, "run", f"{op}-{flavour}-alluvium")
    a_error = d_error = None
    for r in range(a.repeat):
        loadavg.append(os.getloadavg()[0])
        order = ["deltars", "alluvium"] if r % 2 == 0 else ["alluvium", "deltars"]
        if a.no_fsync_too and not skip:
            order.append("alluvium_nofsync")
        for engine in order:
            if engine == "alluvium_nofsync":
                if a_error is None:
                    fresh_copy(base, a_path)
                    c = run_alluvium(a.alluvium_bin, alluvium_args(op, a_path, n, source),
                                     os.path.join(work, "alluvium-output.txt"),
                                     {"ALLUVIUM_STORAGE_OPTIONS": "fsync=false"})
                    if c["status"] == 0:
                        n_times.append(c["seconds"])
                continue
            if engine == "deltars":
                if d_error is not None:
                    continue
                fresh_copy(base, d_path)
                try:
                    c = run_deltars(op, d_path, n, source)
                except (RuntimeError, subprocess.TimeoutExpired) as e:
                    d_error = str(e)[-600:]
                    continue
                d_times.append(c["seconds"])
                d_loads.append(c["load_s"])
                d_rss.append(c["peak_rss_mib"] or 0.0)
                d_last = c
            elif not skip and a_error is None:
                fresh_copy(base, a_path)
                try:
                    c = run_alluvium(a.alluvium_bin, alluvium_args(op, a_path, n, source),
                                     os.path.join(work, "alluvium-output.txt"))
                except (RuntimeError, subprocess.TimeoutExpired) as e:
                    a_error = str(e)[-600:]
                    continue
                if c["status"] != 0:
                    a_error = c["output"].strip()[-600:] or f"exit {c['status']}"
                    continue
                a_times.append(c["seconds"])
                a_rss.append(c["maxrss_kib"] / 1024.0)
                a_last = c
    loadavg.append(os.getloadavg()[0])
    if d_error is not None:
        res["delta_rs_error"] = d_error
    if d_times:
        d_facts = commit_facts(d_path, base_files)
        res.update({
            "delta_rs_median_s": spread(d_times)["median"],
            "delta_rs_s": spread(d_times),
            "delta_rs_load_median_s": round(statistics.median(d_loads), 4),
            "delta_rs_bytes_added": d_facts["bytes_added"],
            "delta_rs_files_added": d_facts["files_added"],
            "delta_rs_files_removed": d_facts["files_removed"],
            "delta_rs_dv_used": d_facts["dv_used"],
            "delta_rs_peak_rss_mib": round(statistics.median(d_rss), 1),
            "delta_rs_metrics": d_last["metrics"] if d_last else None,
        })
    if a_error is not None:
        res["alluvium_error"] = a_error
    if a_times:
        a_facts = commit_facts(a_path, base_files)
        if d_times:
            res["ratio"] = round(statistics.median(d_times) / statistics.median(a_times), 2)
            res["ratio_is"] = "delta_rs_median_s / alluvium_median_s"
        res.update({
            "alluvium_median_s": spread(a_times)["median"],
            "alluvium_s": spread(a_times),
            "alluvium_bytes_added": a_facts["bytes_added"],
            "alluvium_files_added": a_facts["files_added"],
            "alluvium_files_removed": a_facts["files_removed"],
            "alluvium_dv_used": a_facts["dv_used"],
            "alluvium_peak_rss_mib": round(statistics.median(a_rss), 1),
            "alluvium_metrics": last_json(a_last["output"]) if a_last else None,
        })
        if n_times:
            res["alluvium_nofsync_median_s"] = spread(n_times)["median"]
            res["alluvium_nofsync_s"] = spread(n_times)
            if d_times:
                res["ratio_nofsync"] = round(statistics.median(d_times) / statistics.median(n_times), 2)
        try:
            mine = read_back(a_path)
            if d_times:
                agree, why = tables_equal(mine, read_back(d_path))
                res["agree"] = agree
                if not agree:
                    res["disagreement"] = why
            ok, why = tables_equal(mine, normalise(expected_after(op, n)))
            res["matches_expected"] = ok
            if not ok:
                res["expected_mismatch"] = why
        except Exception as e:  # noqa: BLE001
            res["agree"] = False
            res["disagreement"] = f"read-back failed: {type(e).__name__}: {e}"[:400]
    res["loadavg_1m"] = [round(min(loadavg), 2), round(max(loadavg), 2)]
    if not a.keep:
        shutil.rmtree(d_path, ignore_errors=True)
        shutil.rmtree(a_path, ignore_errors=True)
    return res


def bench_cdf_read(base: str, a, work: str, sources: dict) -> list[dict]:
    """The change-feed reads of --cdf-read (see the module docs)."""
    import pyarrow.parquet as pq

    n = a.rows
    table = os.path.join(work, "run", "cdf-read")
    fresh_copy(base, table)
    first = latest_version(table) + 1
    for op in ("update_1pct", "merge_10k", "delete_0.1pct"):
        c = run_alluvium(a.alluvium_bin, alluvium_args(op, table, n, sources.get(op, "")),
                         os.path.join(work, "alluvium-output.txt"))
        if c["status"] != 0:
            return [{"op": "cdf_read", "alluvium_error": c["output"].strip()[-600:]}]
    out = []
    for name, start in (("cdf_read_dml", first), ("cdf_read_all", 0)):
        res: dict = {"op": name, "rows": n, "files": a.files, "repeat": a.repeat, "from_version": start}
        d_times, d_rss, a_times, a_rss = [], [], [], []
        d_rows = a_rows = None
        target = os.path.join(work, "changes.parquet")
        for r in range(a.repeat):
            for engine in (["deltars", "alluvium"] if r % 2 == 0 else ["alluvium", "deltars"]):
                if engine == "deltars":
                    c = run_deltars(f"load_cdf:{start}", table, n, "")
                    d_times.append(c["seconds"])
                    d_rss.append(c["peak_rss_mib"] or 0.0)
                    d_rows = c["metrics"]["rows"]
                else:
                    c = run_alluvium(a.alluvium_bin, ["changes", table, "--from", str(start), "--format",
                                                      "parquet", "--output", target],
                                     os.path.join(work, "alluvium-output.txt"))
                    if c["status"] != 0:
                        res["alluvium_error"] = c["output"].strip()[-600:]
                        break
                    a_times.append(c["seconds"])
                    a_rss.append(c["maxrss_kib"] / 1024.0)
                    a_rows = pq.ParquetFile(target).metadata.num_rows
        res.update({"delta_rs_median_s": spread(d_times)["median"], "delta_rs_s": spread(d_times),
                    "delta_rs_change_rows": d_rows,
                    "delta_rs_peak_rss_mib": round(statistics.median(d_rss), 1)})
        if a_times:
            res.update({"alluvium_median_s": spread(a_times)["median"], "alluvium_s": spread(a_times),
                        "alluvium_change_rows": a_rows,
                        "alluvium_peak_rss_mib": round(statistics.median(a_rss), 1),
                        "ratio": round(statistics.median(d_times) / statistics.median(a_times), 2),
                        "ratio_is": "delta_rs_median_s / alluvium_median_s",
                        "same_row_count": d_rows == a_rows})
        # Like for like: both engines drain Arrow batches inside a fresh process (start-up
        # and imports not counted), cold and after one warm-up read, interleaved.
        bench_bin = os.path.join(os.path.dirname(a.alluvium_bin), "alluvium-bench")
        if os.path.exists(bench_bin):
            res.update(in_process_reads(bench_bin, table, n, start, a.repeat))
        out.append(res)
    if not a.keep:
        shutil.rmtree(table, ignore_errors=True)
    return out


def alluvium_bench_read(bench_bin: str, table: str, start: int, warm: bool, views: bool = True) -> dict:
    """One timed `alluvium-bench changes` read in a fresh process (after one untimed read when
    `warm`); with `views`, strings as Utf8View, the type delta-rs' load_cdf returns them in."""
    p = subprocess.run([bench_bin, "changes", table, "--from", str(start), "--repeat", "1",
                        "--warm-up", "1" if warm else "0"] + (["--view-types"] if views else []),
                       capture_output=True, text=True)
    j = last_json(p.stdout) if p.returncode == 0 else None
    if not j:
        raise RuntimeError((p.stderr or p.stdout).strip()[-600:])
    return j


def in_process_reads(bench_bin: str, table: str, n: int, start: int, repeat: int) -> dict:
    """Cold and warm in-process reads of both engines, each in a fresh process, interleaved.
    alluvium reads with view types (`--view-types`): delta-rs' load_cdf returns its strings
    as Utf8View, so both produce the same Arrow types. A third, cold series reads alluvium's
    default string layout (Utf8) against the cold delta-rs times
    (`alluvium_in_process_utf8_median_s`, `ratio_in_process_utf8`)."""
    out: dict = {}
    for warm in (False, True):
        d_times, a_times, a_rss, utf8_times = [], [], [], []
        a_rows = d_rows = None
        for r in range(repeat):
            for engine in (["deltars", "alluvium"] if r % 2 == 0 else ["alluvium", "deltars"]):
                if engine == "deltars":
                    c = run_deltars(f"load_cdf:{start}" + (":warm" if warm else ""), table, n, "")
                    d_times.append(c["seconds"])
                    d_rows = c["metrics"]["rows"]
                else:
                    try:
                        j = alluvium_bench_read(bench_bin, table, start, warm)
                        if not warm:
                            utf8_times.append(alluvium_bench_read(
                                bench_bin, table, start, False, views=False)["median_ms"] / 1000.0)
                    except RuntimeError as e:
                        return {"alluvium_in_process_error": str(e)}
                    a_times.append(j["median_ms"] / 1000.0)
                    a_rss.append(j.get("peak_rss_mib") or 0.0)
                    a_rows = j["rows"]
        key = "_warm" if warm else ""
        if not warm:
            out.update({
                "alluvium_in_process_utf8_median_s": spread(utf8_times)["median"],
                "ratio_in_process_utf8": round(statistics.median(d_times)
                                               / statistics.median(utf8_times), 2),
            })
        out.update({
            f"delta_rs_in_process{key}_median_s": spread(d_times)["median"],
            f"alluvium_in_process{key}_median_s": spread(a_times)["median"],
            f"alluvium_in_process{key}_s": spread(a_times),
            f"alluvium_in_process{key}_rows": a_rows,
            f"alluvium_in_process{key}_peak_rss_mib": round(statistics.median(a_rss), 1),
            f"ratio_in_process{key}": round(statistics.median(d_times) / statistics.median(a_times), 2),
            f"same_row_count_in_process{key}": a_rows == d_rows,
        })
    return out


def process_floor(a, work: str) -> dict:
    """What starting a process costs here, through the same launcher as every alluvium run:
    `/bin/true`, and `alluvium --version` (the binary loaded and its arguments parsed, no
    table touched), interleaved, 4 x --repeat runs each. A whole-process alluvium time can
    never go below these; a ratio target against delta-rs' in-process time implies a budget
    that this line puts in context."""
    out_file = os.path.join(work, "alluvium-output.txt")
    runs: dict = {"true": [], "version": []}
    for _ in range(4 * a.repeat):
        runs["true"].append(run_alluvium("/bin/true", [], out_file)["seconds"])
        runs["version"].append(run_alluvium(a.alluvium_bin, ["--version"], out_file)["seconds"])
    return {"info": "process floor", "true_median_s": spread(runs["true"])["median"],
            "alluvium_version_median_s": spread(runs["version"])["median"],
            "alluvium_version_s": spread(runs["version"])}


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        deltars_child(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5] if len(sys.argv) > 5 else "")
        return 0
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("alluvium_bin")
    ap.add_argument("workdir")
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--files", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--only", default="", help="comma-separated subset of: " + ",".join(OPS))
    ap.add_argument("--flavours", default="plain,dv", help="comma-separated subset of: plain,dv,cdf")
    ap.add_argument("--cdf-read", action="store_true",
                    help="also time change-feed reads (delta-rs load_cdf vs alluvium changes) on the cdf base table")
    ap.add_argument("--no-fsync-too", action="store_true",
                    help="also time alluvium with ALLUVIUM_STORAGE_OPTIONS=fsync=false (delta-rs does not fsync)")
    ap.add_argument("--rebuild", action="store_true", help="rebuild the base tables even if cached")
    ap.add_argument("--keep", action="store_true", help="keep the last run's tables in WORKDIR/run")
    a = ap.parse_args()
    a.alluvium_bin = os.path.abspath(a.alluvium_bin)
    ops = [o for o in a.only.split(",") if o] or OPS
    flavours = [f for f in a.flavours.split(",") if f]
    if a.cdf_read and "cdf" not in flavours:
        flavours.append("cdf")
    for o in ops:
        if o not in OPS:
            ap.error(f"unknown op {o!r}; ops: {', '.join(OPS)}")
    for f in flavours:
        if f not in FLAVOURS:
            ap.error(f"unknown flavour {f!r}; flavours: {', '.join(FLAVOURS)}")

    import deltalake
    import duckdb
    import pyarrow.parquet as pq

    work = os.path.abspath(a.workdir)
    os.makedirs(os.path.join(work, "run"), exist_ok=True)
    print(json.dumps({"info": "versions", "deltalake": deltalake.__version__, "duckdb": duckdb.__version__,
                      "python": sys.version.split()[0], "alluvium": a.alluvium_bin, "rows": a.rows,
                      "files": a.files, "repeat": a.repeat, "cpus": os.cpu_count()}), file=sys.stderr, flush=True)
    bases = {}
    for fl in flavours:
        path = os.path.join(work, "base_" + fl)
        meta_path = path + ".json"
        meta = None
        if not a.rebuild and os.path.exists(meta_path) and os.path.isdir(path):
            with open(meta_path) as fh:
                meta = json.load(fh)
            if (meta.get("rows"), meta.get("files_requested"), meta.get("config"), meta.get("layout")) != \
                    (a.rows, a.files, FLAVOURS[fl], BASE_LAYOUT):
                meta = None
        if meta is None:
            meta = build_table(path, a.rows, a.files, FLAVOURS[fl])
            meta.update({"rows": a.rows, "files_requested": a.files, "config": FLAVOURS[fl],
                         "layout": BASE_LAYOUT})
            with open(meta_path, "w") as fh:
                json.dump(meta, fh)
            print(json.dumps({"info": "base table built", "flavour": fl, **meta}), file=sys.stderr, flush=True)
        else:
            print(json.dumps({"info": "base table reused", "flavour": fl, **meta}), file=sys.stderr, flush=True)
        bases[fl] = path
    sources = {}
    for op in ops + (["merge_10k"] if a.cdf_read else []):
        if op.startswith("merge"):
            sources[op] = os.path.join(work, f"source_{op}_{a.rows}.parquet")
            pq.write_table(merge_source(op, a.rows), sources[op])
    present = {c: has_subcommand(a.alluvium_bin, c) for c in ("delete", "update", "merge")}
    done: dict = {}
    for op in ops:
        for fl in flavours:
            res = bench(op, fl, bases[fl], a, work, sources, present)
            done[(op, fl)] = res
            print(json.dumps(res, default=str), flush=True)
        plain, cdf = done.get((op, "plain")), done.get((op, "cdf"))
        if plain and cdf:
            line = {"info": "cdf overhead", "op": op}
            for eng in ("alluvium", "delta_rs"):
                if plain.get(f"{eng}_median_s") and cdf.get(f"{eng}_median_s"):
                    line[f"{eng}_plain_median_s"] = plain[f"{eng}_median_s"]
                    line[f"{eng}_cdf_median_s"] = cdf[f"{eng}_median_s"]
                    line[f"{eng}_cdf_over_plain"] = round(cdf[f"{eng}_median_s"] / plain[f"{eng}_median_s"], 2)
            print(json.dumps(line), flush=True)
    if a.cdf_read:
        for res in bench_cdf_read(bases["cdf"], a, work, sources):
            print(json.dumps(res, default=str), flush=True)
    print(json.dumps(process_floor(a, work)), flush=True)
    if not a.keep:
        shutil.rmtree(os.path.join(work, "run"), ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
