#!/usr/bin/env python3
"""Big-table figures side by side: `alluvium-bench` against delta-rs (the Python `deltalake`
package), in one script run (issue 29's table).

usage: PEERS_VENV/bin/python benches/peers/scale_vs_delta_rs.py ALLUVIUM_BENCH WORKDIR
           [--repeat 5] [--ten-million] [--only load_1m,checkpoint_1m,...]
           [--state-events 10000000] [--state-keys 1000000] [--state-batch 100000]

e.g.   cargo build --release -p alluvium-bench
       target/peers-venv/bin/python benches/peers/scale_vs_delta_rs.py target/release/alluvium-bench /tmp/scale

Tables (built once in WORKDIR and reused by later runs; delete them to rebuild):
  gen_1m            `ALLUVIUM_BENCH gen-log gen_1m --commits 100000 --files-per-commit 10`: a
                    log-only table (no data files) of 1,000,000 adds in 100,000 commits with
                    statistics, a checkpoint 9 commits before the end (version 99,991).
  gen_10m           the same with `--files-per-commit 100` (10,000,000 adds, about 4.5 GB;
                    for --ten-million; it is generated only with at least 30 GB free on
                    WORKDIR's disk, else its workloads print `skipped`).
  many_commits_10k  10,000 one-row commits written by delta-rs (version 0 creates the table
                    with row 0, versions 1..9999 append row i; delta-rs checkpoints every 100
                    commits), as `../shared/peers/make_tables.py --with-10k` builds it (~10 min).
  state_base_*      the delta-rs side of state_sync (below).

Workloads (one JSON line each; `ratio` = delta_rs_median_ms / alluvium_median_ms, above 1:
alluvium is faster). Every repeat runs each engine once, in a fresh process, and alternates
which engine goes first, so that a drift of the (shared) machine's speed hits both.

  load_1m           alluvium: `ALLUVIUM_BENCH load gen_1m --repeat 1` in a fresh process:
                    `alluvium_median_ms` is its in-process `median_ms` (open the table, load the
                    snapshot, resolve every live file's location; `snapshot_median_ms` is the
                    snapshot alone), `alluvium_process_median_ms` the whole process from fork
                    to exit. delta-rs: a fresh Python process imports deltalake (not timed),
                    then times `DeltaTable(path)` + `file_uris()`. Peak RSS: alluvium's process
                    (`wait4`), delta-rs' whole Python process (VmHWM, pyarrow included).
  checkpoint_1m     alluvium: `ALLUVIUM_BENCH checkpoint gen_1m` (its `load_ms` and
                    `checkpoint_ms`, the checkpoint alone, and its peak RSS); delta-rs:
                    `DeltaTable(path)` then `create_checkpoint()`, each timed in-process.
                    `ratio` compares the checkpoint alone, `ratio_load_and_checkpoint` both.
                    Both engines write `_delta_log/00000000000000100000.checkpoint.parquet` and
                    rewrite `_last_checkpoint` in the same table, so that neither run is helped
                    or hurt by the other's checkpoint, the log is put back before every run:
                    every file under `_delta_log` that was not there when the table was
                    generated is deleted, and `_last_checkpoint` is rewritten from the copy
                    saved right after `gen-log` (`gen_1m.last_checkpoint`). A run that deleted
                    a file of the generated log stops the script (the table must be rebuilt).
  load_10k          many_commits_10k: alluvium `ALLUVIUM_BENCH load T --repeat 20` (the median
                    of its 20 in-process loads); delta-rs: a fresh process times 20 times
                    `DeltaTable(path)` + `file_uris()`, median. The line's median/min/max are
                    over the repeats' per-process medians.
  time_travel_v5    the same with `--version 5` / `DeltaTable(path, version=5)`.
  state_sync        alluvium: `ALLUVIUM_BENCH state DIR --events E --keys K --batch B
                    --lookups 100` (default E = 10M, K = 1M, B = 100k) on a fresh directory:
                    E/B batches put into the store's log, a sync after each. The bench prints
                    the percentiles of its syncs, not the time of one chosen sync, so the
                    alluvium figure is its `sync_ms_p50`: the median over its E/B syncs, of
                    which all but the first K/B fold a batch into a state already holding
                    every key (about 99% of them live: every 97th event is a delete). A sync
                    reads the batch back from the log table, folds it, MERGEs its deletes into
                    the tombstones table, reads the tombstones of the batch's keys and MERGEs
                    into `state/` (deletes, updates if newer, inserts), committing with fsync.
                    The put (the append of the batch to the log) is not in the figure.
                    delta-rs: a table holding exactly the state the store holds after E
                    events (one row per live key: id, value, note, event_time, seq, computed
                    here from the bench's event formula: event e has key e*P mod K, value e,
                    note "n{e % 1000}", time 2000-01-01 + e µs, seq (log version << 32 |
                    ordinal), and is a DELETE when e % 97 = 96), sorted by id and written as
                    10 files (alluvium's state has `alluvium_state_files`, printed alongside), is
                    copied fresh for every run; a fresh process builds the next batch
                    (events E..E+B: B distinct keys; untimed), then times `DeltaTable(path)`
                    plus the MERGE on `t.id = s.id` with the store's own clauses:
                    `when_matched_delete(s.op = 'DELETE' and newer)`,
                    `when_matched_update(value, note, event_time, seq; s.op <> 'DELETE' and
                    newer)`, `when_not_matched_insert(s.op <> 'DELETE')`, where newer is
                    `s.event_time > t.event_time or (= and s.seq > t.seq)`: `delta_rs_*`,
                    `ratio`. It also times the plain upsert the issue names,
                    `when_matched_update_all().when_not_matched_insert_all()` of the batch
                    without its `op` column (every event an upsert): `delta_rs_upsert_*`,
                    `ratio_upsert`. delta-rs keeps no tombstones table and does not fsync, and
                    its batch is in memory rather than read from a log table: it does less
                    work than the store's sync. Peak RSS: alluvium's is that of the whole
                    workload's process (every batch, sync and lookup), delta-rs' that of the
                    process of one MERGE.
  load_10m, checkpoint_10m   (--ten-million, or named in --only) as load_1m and checkpoint_1m on gen_10m. delta-rs
                    is tried once with a 300 s limit (and only with 16 GiB available memory);
                    when it does not finish, `"delta_rs": "skipped"` with the reason.

The last line, `{"info": "process floor"}`, times `ALLUVIUM_BENCH --version` through the same
launcher: what any whole-process alluvium figure costs before it does any work.

Output: stdout holds the JSON lines (`alluvium_median_ms`, `alluvium_min_ms`,
`alluvium_max_ms`, `alluvium_peak_rss_mib`, the same `delta_rs_*`, `ratio`, the table's
shape, the engines' own last JSON in `alluvium_last`, `loadavg_1m` as min and max over the
runs); a failed run gives `alluvium_error` / `delta_rs_error` and the other engine is still
timed. The versions of the peers and progress go to stderr. None asserts a time.

Runs only with this repository's files and the peers venv (deltalake, pyarrow, numpy).
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

from timed_process import last_json, run_child, run_timed, vm_hwm_mib

WORKLOADS = ["load_1m", "checkpoint_1m", "load_10k", "time_travel_v5", "state_sync"]
TEN_MILLION = ["load_10m", "checkpoint_10m"]
RUN_TIMEOUT_S = 1800
DELTA_RS_10M_TIMEOUT_S = 300
LOADS_PER_PROCESS = 20
STATE_FILES = 10
# The state bench's event formula (bench/src/state.rs): 2000-01-01T00:00:00Z in µs; the
# key stride is `state_stride(keys)`.
STATE_T0_US = 946_684_800_000_000


def state_stride(keys: int) -> int:
    """The state bench's key stride (bench/src/state.rs `Keys::new`): the first number from
    keys/φ up that is coprime with keys, so every batch spreads over the whole key range."""
    import math

    start = max(int(keys / 1.618033988749895), 1)
    return next(p for p in range(start, max(keys, 1) + 1) if math.gcd(p, max(keys, 1)) == 1)


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------------------------
# the delta-rs side: a child process of this interpreter


def state_batch(first: int, count: int, keys: int, batch: int, with_op: bool = True):
    """Events first..first+count of the state bench, as its store would hold them once
    folded (seq assigned as the store assigns it: log version << 32 | ordinal)."""
    import numpy as np
    import pyarrow as pa

    p = state_stride(keys)
    e = np.arange(first, first + count, dtype=np.int64)
    if (first + count) * p >= 2**63:
        raise ValueError("events * stride beyond 64 bits")
    ids = (e * p) % keys
    version = e // batch + 1
    seq = (version << 32) | (e % batch)
    cols = {
        "id": pa.array(ids, pa.int64()),
        "value": pa.array(e, pa.int64()),
        "note": pa.array([f"n{x % 1000}" for x in range(first, first + count)], pa.string()),
        "event_time": pa.array(STATE_T0_US + e, pa.timestamp("us", tz="UTC")),
        "seq": pa.array(seq, pa.int64()),
    }
    if with_op:
        cols["op"] = pa.array(np.where(e % 97 == 96, "DELETE", "UPSERT"), pa.string())
    return pa.table(cols)


def state_after(events: int, keys: int, batch: int):
    """The live rows of the state after `events` events, sorted by id: each key's latest
    event unless that is a delete (keys whose events are all later are absent)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    p = state_stride(keys)
    p_inv = pow(p % keys, -1, keys) if keys > 1 else 0
    k = np.arange(keys, dtype=np.int64)
    if keys * keys >= 2**63:
        raise ValueError("--state-keys beyond 64-bit arithmetic here")
    first = k * p_inv % keys
    present = first < events
    latest = first + (events - 1 - first) // keys * keys
    live = present & (latest % 97 != 96)
    e = latest[live]
    version = e // batch + 1
    return pa.table({
        "id": pa.array(k[live], pa.int64()),
        "value": pa.array(e, pa.int64()),
        "note": pc.binary_join_element_wise("n", pa.array(e % 1000).cast(pa.string()), ""),
        "event_time": pa.array(STATE_T0_US + e, pa.timestamp("us", tz="UTC")),
        "seq": pa.array((version << 32) | (e % batch), pa.int64()),
    })


def deltars_child(spec: dict) -> None:
    """Runs one delta-rs measurement described by `spec`; prints `CHILD {...}`."""
    from deltalake import DeltaTable

    kind, path = spec["kind"], spec["path"]
    out: dict = {}
    if kind == "load":
        times, files = [], None
        for _ in range(spec.get("loads", 1)):
            started = time.perf_counter()
            dtab = DeltaTable(path) if spec.get("version") is None else DeltaTable(path, version=spec["version"])
            files = len(dtab.file_uris())
            times.append((time.perf_counter() - started) * 1000.0)
            del dtab
        out = {"ms": statistics.median(times), "min_ms": min(times), "max_ms": max(times), "files": files,
               "loads": len(times)}
    elif kind == "checkpoint":
        started = time.perf_counter()
        dtab = DeltaTable(path)
        loaded = time.perf_counter()
        dtab.create_checkpoint()
        ended = time.perf_counter()
        out = {"load_ms": (loaded - started) * 1000.0, "ms": (ended - loaded) * 1000.0,
               "total_ms": (ended - started) * 1000.0, "version": dtab.version()}
    elif kind in ("merge_state", "merge_upsert"):
        src = state_batch(spec["first"], spec["batch"], spec["keys"], spec["batch"], kind == "merge_state")
        started = time.perf_counter()
        dtab = DeltaTable(path)
        m = dtab.merge(src, "t.id = s.id", source_alias="s", target_alias="t")
        if kind == "merge_state":
            newer = "(s.event_time > t.event_time OR (s.event_time = t.event_time AND s.seq > t.seq))"
            values = {c: f"s.{c}" for c in ("value", "note", "event_time", "seq")}
            m = (m.when_matched_delete(predicate=f"s.op = 'DELETE' AND {newer}")
                 .when_matched_update(updates=values, predicate=f"s.op <> 'DELETE' AND {newer}")
                 .when_not_matched_insert(updates={"id": "s.id", **values}, predicate="s.op <> 'DELETE'"))
        else:
            m = m.when_matched_update_all().when_not_matched_insert_all()
        metrics = m.execute()
        out = {"ms": (time.perf_counter() - started) * 1000.0,
               "metrics": {k: v for k, v in metrics.items() if k.startswith("num")}}
    else:
        raise ValueError(kind)
    out["peak_rss_mib"] = vm_hwm_mib()
    print("CHILD " + json.dumps(out, default=str), flush=True)


def run_deltars(spec: dict, timeout: float = RUN_TIMEOUT_S) -> dict:
    return run_child(__file__, [json.dumps(spec)], f"delta-rs {spec['kind']}", timeout)


# ----------------------------------------------------------------------------------------------
# the alluvium side: alluvium-bench in a fresh process, started by the launcher


def run_bench(binary: str, args: list[str], work: str) -> dict:
    """One `alluvium-bench` process: its last JSON line, plus `process_ms` and
    `process_rss_mib` from the launcher. Raises with its output if it failed."""
    r = run_timed(binary, args, os.path.join(work, "bench.out"), timeout=RUN_TIMEOUT_S)
    if r["status"] != 0:
        raise RuntimeError(f"alluvium-bench {' '.join(args)} exited {r['status']}: {r['output'].strip()[-1500:]}")
    j = last_json(r["output"])
    if j is None:
        raise RuntimeError(f"alluvium-bench {' '.join(args)} printed no JSON: {r['output'].strip()[-1500:]}")
    j["process_ms"] = round(r["seconds"] * 1000.0, 3)
    j["process_rss_mib"] = round(r["maxrss_kib"] / 1024.0, 1)
    return j


# ----------------------------------------------------------------------------------------------
# tables


def gen_log_table(binary: str, path: str, files_per_commit: int) -> dict:
    """The gen-log table at `path` (generated unless present) with its log put back as
    generated: see `restore_log`."""
    saved = path + ".last_checkpoint"
    listing = path + ".log_files.json"
    if not (os.path.isfile(saved) and os.path.isfile(listing)):
        shutil.rmtree(path, ignore_errors=True)
        log(f"generating {path} (100000 commits x {files_per_commit} files) ...")
        started = time.perf_counter()
        out = subprocess.run([binary, "gen-log", path, "--commits", "100000", "--files-per-commit",
                              str(files_per_commit)], capture_output=True, text=True)
        if out.returncode != 0:
            raise RuntimeError(f"gen-log failed: {out.stderr.strip()[-1500:]}")
        log(f"  done in {time.perf_counter() - started:.1f} s: {out.stdout.strip()}")
        shutil.copyfile(os.path.join(path, "_delta_log", "_last_checkpoint"), saved)
        with open(listing, "w") as fh:
            json.dump(sorted(log_files(path)), fh)
    restore_log(path)
    return {"table": os.path.basename(path), "files": 100_000 * files_per_commit, "version": 100_000}


def log_files(path: str) -> set[str]:
    """Every file under the table's `_delta_log` (relative paths)."""
    root = os.path.join(path, "_delta_log")
    out = set()
    for dirpath, _, names in os.walk(root):
        for n in names:
            out.add(os.path.relpath(os.path.join(dirpath, n), root))
    return out


def restore_log(path: str) -> None:
    """Puts the gen-log table's `_delta_log` back as generated: deletes every file written
    since (checkpoints, sidecars) and rewrites `_last_checkpoint` from the saved copy.
    Raises when a generated file is missing (a run deleted it: regenerate the table)."""
    with open(path + ".log_files.json") as fh:
        generated = set(json.load(fh))
    root = os.path.join(path, "_delta_log")
    now = log_files(path)
    missing = generated - now
    if missing:
        raise RuntimeError(f"{path}: {len(missing)} generated log files are gone (e.g. {sorted(missing)[0]}); "
                           f"delete {path}* to regenerate it")
    for rel in now - generated:
        os.remove(os.path.join(root, rel))
    shutil.copyfile(path + ".last_checkpoint", os.path.join(root, "_last_checkpoint"))


def many_commits_10k(path: str) -> dict:
    """10,000 one-row commits by delta-rs (built unless present; see the module docs)."""
    import pyarrow as pa
    from deltalake import DeltaTable, write_deltalake

    last = os.path.join(path, "_delta_log", "%020d.json" % 9999)
    if not os.path.isfile(last):
        shutil.rmtree(path, ignore_errors=True)
        log(f"building {path} (10,000 delta-rs commits, ~10 min) ...")
        started = time.perf_counter()

        def row(i: int):
            return pa.table({"id": pa.array([i], pa.int64()), "value": pa.array([i * 0.5], pa.float64()),
                             "name": pa.array([f"n{i}"], pa.string())})

        write_deltalake(path, row(0))
        dtab = DeltaTable(path)
        for i in range(1, 10_000):
            write_deltalake(dtab, row(i), mode="append")
            # A DeltaTable reused for many commits gets slower with each one (deltalake
            # 1.6: from ~26 ms to ~450 ms per commit after 4,000); a fresh one does not.
            if i % 100 == 0:
                dtab = DeltaTable(path)
            if i % 1000 == 0:
                log(f"  {i} commits")
        log(f"  done in {time.perf_counter() - started:.0f} s")
    return {"table": "many_commits_10k", "commits": 10_000}


def state_base(work: str, events: int, keys: int, batch: int) -> tuple[str, int]:
    """The delta-rs table holding the state after `events` events (built unless present),
    and its row count."""
    from deltalake import DeltaTable, write_deltalake

    path = os.path.join(work, f"state_base_spread_{events}_{keys}_{batch}")
    done = path + ".rows"
    if not os.path.isfile(done):
        shutil.rmtree(path, ignore_errors=True)
        rows = state_after(events, keys, batch)
        DeltaTable.create(path, schema=rows.schema)
        per = -(-rows.num_rows // STATE_FILES)
        for i in range(STATE_FILES):
            write_deltalake(path, rows.slice(i * per, per), mode="append")
        DeltaTable(path).create_checkpoint()
        with open(done, "w") as fh:
            fh.write(str(rows.num_rows))
        log(f"built {path}: {rows.num_rows} live keys in {STATE_FILES} files")
    with open(done) as fh:
        return path, int(fh.read())


def fresh_copy(src: str, dst: str) -> str:
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst)
    # The copy's writeback is flushed before a timer starts, so no run pays for it.
    os.sync()
    return dst


# ----------------------------------------------------------------------------------------------
# measurements


def spread(prefix: str, vals: list[float]) -> dict:
    if not vals:
        return {}
    return {f"{prefix}_median_ms": round(statistics.median(vals), 3), f"{prefix}_min_ms": round(min(vals), 3),
            f"{prefix}_max_ms": round(max(vals), 3)}


def median(vals: list[float], digits: int = 1):
    return round(statistics.median(vals), digits) if vals else None


class Sides:
    """What the repeats of one workload collected for each engine."""

    def __init__(self) -> None:
        self.a: list[dict] = []
        self.d: list[dict] = []
        self.a_error: str | None = None
        self.d_error: str | None = None
        self.d_skipped: str | None = None
        # With a limit on delta-rs' runs, a run that exceeds it skips delta-rs.
        self.d_limit: float | None = None
        self.loadavg: list[float] = []

    def run(self, repeat: int, alluvium, deltars, before=None, first_round: int = 0) -> None:
        """`repeat` rounds of one run per engine, alternating which goes first (round
        numbers start at `first_round`); `before` runs ahead of every run (putting the
        table back) and after the last."""
        for r in range(first_round, first_round + repeat):
            for engine in (["alluvium", "delta_rs"] if r % 2 == 0 else ["delta_rs", "alluvium"]):
                self.loadavg.append(os.getloadavg()[0])
                if engine == "alluvium" and self.a_error is None:
                    if before:
                        before()
                    try:
                        self.a.append(alluvium())
                    except (RuntimeError, subprocess.TimeoutExpired) as e:
                        self.a_error = str(e)[-600:]
                elif engine == "delta_rs" and self.d_error is None and self.d_skipped is None and deltars:
                    if before:
                        before()
                    try:
                        self.d.append(deltars())
                    except subprocess.TimeoutExpired as e:
                        if self.d_limit is not None:
                            self.d_skipped = f"did not finish within {self.d_limit:.0f} s"
                        else:
                            self.d_error = str(e)[-600:]
                    except RuntimeError as e:
                        self.d_error = str(e)[-600:]
        if before:
            before()

    def line(self, workload: str, a_key: str, d_key: str, **extra) -> dict:
        a_ms = [x[a_key] for x in self.a]
        d_ms = [x[d_key] for x in self.d]
        res: dict = {"workload": workload, "repeat": max(len(self.a), len(self.d)), **extra}
        res.update(spread("alluvium", a_ms))
        if self.a:
            res["alluvium_peak_rss_mib"] = median([x["process_rss_mib"] for x in self.a])
        res.update(spread("delta_rs", d_ms))
        if self.d:
            res["delta_rs_peak_rss_mib"] = median([x["peak_rss_mib"] or 0.0 for x in self.d])
        if a_ms and d_ms:
            res["ratio"] = round(statistics.median(d_ms) / statistics.median(a_ms), 2)
        if self.a_error:
            res["alluvium_error"] = self.a_error
        if self.d_error:
            res["delta_rs_error"] = self.d_error
        if self.d_skipped:
            res["delta_rs"] = "skipped"
            res["delta_rs_skipped_because"] = self.d_skipped
        if self.loadavg:
            res["loadavg_1m"] = [round(min(self.loadavg), 2), round(max(self.loadavg), 2)]
        return res


def bench_load(binary: str, work: str, workload: str, table: str, shape: dict, repeat: int,
               loads: int = 1, version: int | None = None, d_timeout: float = RUN_TIMEOUT_S,
               d_skip: str | None = None) -> dict:
    args = ["load", table, "--repeat", str(loads)] + ([] if version is None else ["--version", str(version)])
    spec = {"kind": "load", "path": table, "loads": loads, "version": version}
    s = Sides()
    s.d_skipped = d_skip
    s.d_limit = d_timeout if d_timeout != RUN_TIMEOUT_S else None
    s.run(repeat, lambda: run_bench(binary, args, work), lambda: run_deltars(spec, d_timeout))
    res = s.line(workload, "median_ms", "ms", **shape, loads_per_process=loads,
                 **({} if version is None else {"version": version}))
    if s.a:
        res["alluvium_snapshot_median_ms"] = median([x["snapshot_median_ms"] for x in s.a], 3)
        res["alluvium_process_median_ms"] = median([x["process_ms"] for x in s.a], 3)
        res["alluvium_files"] = s.a[-1].get("files")
        res["alluvium_last"] = {k: v for k, v in s.a[-1].items() if k not in ("requests",)}
    if s.d:
        res["delta_rs_files"] = s.d[-1].get("files")
    return res


def bench_checkpoint(binary: str, work: str, workload: str, table: str, shape: dict, repeat: int,
                     d_timeout: float = RUN_TIMEOUT_S, d_skip: str | None = None) -> dict:
    spec = {"kind": "checkpoint", "path": table}
    s = Sides()
    s.d_skipped = d_skip
    s.d_limit = d_timeout if d_timeout != RUN_TIMEOUT_S else None
    s.run(repeat, lambda: run_bench(binary, ["checkpoint", table], work),
          lambda: run_deltars(spec, d_timeout), before=lambda: restore_log(table))
    res = s.line(workload, "checkpoint_ms", "ms", **shape)
    if s.a:
        res["alluvium_load_median_ms"] = median([x["load_ms"] for x in s.a], 3)
        res["alluvium_bench_peak_rss_mib"] = median([x["peak_rss_mib"] for x in s.a])
        res["alluvium_process_median_ms"] = median([x["process_ms"] for x in s.a], 3)
        res["alluvium_last"] = s.a[-1]
    if s.d:
        res["delta_rs_load_median_ms"] = median([x["load_ms"] for x in s.d], 3)
    if s.a and s.d:
        a_total = statistics.median(x["load_ms"] + x["checkpoint_ms"] for x in s.a)
        res["ratio_load_and_checkpoint"] = round(statistics.median(x["total_ms"] for x in s.d) / a_total, 2)
    return res


def bench_state(binary: str, work: str, repeat: int, events: int, keys: int, batch: int) -> dict:
    base, rows = state_base(work, events, keys, batch)
    store = os.path.join(work, "run", "state_store")
    target = os.path.join(work, "run", "state_deltars")
    os.makedirs(os.path.dirname(store), exist_ok=True)

    def alluvium() -> dict:
        shutil.rmtree(store, ignore_errors=True)
        os.sync()
        return run_bench(binary, ["state", store, "--events", str(events), "--keys", str(keys),
                                  "--batch", str(batch), "--lookups", "100"], work)

    def deltars(kind: str):
        def one() -> dict:
            fresh_copy(base, target)
            return run_deltars({"kind": kind, "path": target, "first": events, "batch": batch, "keys": keys})
        return one

    s = Sides()
    upsert: list[dict] = []
    upsert_error = None
    # Each round: the store's workload and its MERGE in delta-rs (alternating which goes
    # first), then the plain upsert in delta-rs.
    for r in range(repeat):
        s.run(1, alluvium, deltars("merge_state"), first_round=r)
        if upsert_error is None:
            try:
                upsert.append(deltars("merge_upsert")())
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                upsert_error = str(e)[-600:]
    shutil.rmtree(store, ignore_errors=True)
    shutil.rmtree(target, ignore_errors=True)
    res = s.line("state_sync", "sync_ms_p50", "ms", events=events, keys=keys, batch=batch,
                 delta_rs_target_rows=rows, delta_rs_target_files=STATE_FILES)
    if s.a:
        last = s.a[-1]
        res["alluvium_bench_peak_rss_mib"] = median([x["peak_rss_mib"] for x in s.a])
        res["alluvium_sync_ms_p99_median"] = median([x["sync_ms_p99"] for x in s.a], 3)
        res["alluvium_syncs_per_run"] = last.get("syncs")
        res["alluvium_state_keys"] = (last.get("status") or {}).get("keys")
        res["alluvium_state_files"] = (last.get("status") or {}).get("state_files")
        res["alluvium_lookup_mismatches"] = last.get("lookup_mismatches")
        res["alluvium_last"] = {k: v for k, v in last.items() if k != "status"}
    if s.d:
        res["delta_rs_metrics"] = s.d[-1].get("metrics")
    res.update(spread("delta_rs_upsert", [x["ms"] for x in upsert]))
    if upsert:
        res["delta_rs_upsert_peak_rss_mib"] = median([x["peak_rss_mib"] or 0.0 for x in upsert])
        res["delta_rs_upsert_metrics"] = upsert[-1].get("metrics")
        if s.a:
            res["ratio_upsert"] = round(statistics.median(x["ms"] for x in upsert)
                                        / statistics.median(x["sync_ms_p50"] for x in s.a), 2)
    if upsert_error:
        res["delta_rs_upsert_error"] = upsert_error
    return res


def process_floor(binary: str, work: str, repeat: int) -> dict:
    runs = [run_timed(binary, ["--version"], os.path.join(work, "bench.out")) for _ in range(repeat)]
    return {"info": "process floor", "alluvium_bench_version_median_ms":
            round(statistics.median(r["seconds"] for r in runs) * 1000.0, 3),
            "peak_rss_mib": median([r["maxrss_kib"] / 1024.0 for r in runs])}


def free_gb(path: str) -> float:
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize / 1e9


def mem_available_gib() -> float:
    with open("/proc/meminfo") as fh:
        for line in fh:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) / 1024.0 / 1024.0
    return 0.0


def main() -> int:
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        deltars_child(json.loads(sys.argv[2]))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("alluvium_bench")
    ap.add_argument("work")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--ten-million", action="store_true", help="also load_10m and checkpoint_10m")
    ap.add_argument("--only", default=None, help="comma list from " + ",".join(WORKLOADS + TEN_MILLION))
    ap.add_argument("--state-events", type=int, default=10_000_000)
    ap.add_argument("--state-keys", type=int, default=1_000_000)
    ap.add_argument("--state-batch", type=int, default=100_000)
    a = ap.parse_args()
    if a.repeat < 1:
        ap.error("--repeat must be at least 1")
    only = a.only.split(",") if a.only else WORKLOADS + (TEN_MILLION if a.ten_million else [])
    unknown = [w for w in only if w not in WORKLOADS + TEN_MILLION]
    if unknown:
        ap.error(f"unknown workloads {unknown}")
    binary = os.path.abspath(a.alluvium_bench)
    work = os.path.abspath(a.work)
    os.makedirs(work, exist_ok=True)

    import deltalake
    import pyarrow

    log(json.dumps({"info": "versions", "deltalake": deltalake.__version__, "pyarrow": pyarrow.__version__,
                    "python": sys.version.split()[0], "alluvium_bench": binary,
                    "alluvium_bench_version": subprocess.run([binary, "--version"], capture_output=True,
                                                             text=True).stdout.strip()}))

    def emit(res: dict) -> None:
        print(json.dumps(res), flush=True)

    if {"load_1m", "checkpoint_1m"} & set(only):
        t1m = os.path.join(work, "gen_1m")
        shape = gen_log_table(binary, t1m, 10)
        if "load_1m" in only:
            emit(bench_load(binary, work, "load_1m", t1m, shape, a.repeat))
        if "checkpoint_1m" in only:
            emit(bench_checkpoint(binary, work, "checkpoint_1m", t1m, shape, a.repeat))
    if {"load_10k", "time_travel_v5"} & set(only):
        t10k = os.path.join(work, "many_commits_10k")
        shape = many_commits_10k(t10k)
        if "load_10k" in only:
            emit(bench_load(binary, work, "load_10k", t10k, shape, a.repeat, loads=LOADS_PER_PROCESS))
        if "time_travel_v5" in only:
            emit(bench_load(binary, work, "time_travel_v5", t10k, shape, a.repeat, loads=LOADS_PER_PROCESS,
                            version=5))
    if "state_sync" in only:
        emit(bench_state(binary, work, a.repeat, a.state_events, a.state_keys, a.state_batch))
    if {"load_10m", "checkpoint_10m"} & set(only):
        t10m = os.path.join(work, "gen_10m")
        free = free_gb(work)
        if free < 30 and not os.path.isfile(t10m + ".log_files.json"):
            for w in ("load_10m", "checkpoint_10m"):
                if w in only:
                    emit({"workload": w, "skipped": f"{free:.1f} GB free on {work}'s disk; the 10M-file table "
                                                    "needs 30 GB to be generated"})
        else:
            shape = gen_log_table(binary, t10m, 100)
            mem = mem_available_gib()
            d_skip = None if mem >= 16 else f"{mem:.1f} GiB of memory available, delta-rs needs about 12"
            if "load_10m" in only:
                emit(bench_load(binary, work, "load_10m", t10m, shape, a.repeat,
                                d_timeout=DELTA_RS_10M_TIMEOUT_S, d_skip=d_skip))
            if "checkpoint_10m" in only:
                emit(bench_checkpoint(binary, work, "checkpoint_10m", t10m, shape, a.repeat,
                                      d_timeout=DELTA_RS_10M_TIMEOUT_S, d_skip=d_skip))
    emit(process_floor(binary, work, max(a.repeat, 5)))
    shutil.rmtree(os.path.join(work, "run"), ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
