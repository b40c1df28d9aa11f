#!/usr/bin/env python3
"""`alluvium iceberg sync` timed: one appended version, and the first sync of a 100k-file
table (issue 31's targets: under 20 ms, and under 2 s and 300 MiB), in one script run.

usage: PEERS_VENV/bin/python benches/peers/iceberg_sync.py ALLUVIUM_BIN WORKDIR
           [--repeat 9] [--files 100000] [--commits 10] [--partitions 100] [--first-repeat 3]
           [--only one_version,first_sync,post_commit] [--keep]

e.g.   cargo build --release -p alluvium-cli
       target/peers-venv/bin/python benches/peers/iceberg_sync.py target/release/alluvium /tmp/iceberg-bench

one_version   alluvium creates a table (`id` long, `name` string, partitioned by `region`, four
              values), appends 1,000 rows and syncs (untimed). Then `--repeat` times: append
              100 rows (one Delta version, untimed), then time `ALLUVIUM_BIN iceberg sync
              TABLE`, which has exactly that version to add (the incremental path: one
              snapshot, one manifest, the manifest list, the metadata file).
first_sync    a log-only table of `--files` adds (the data files do not exist: the sync maps
              Delta statistics and partition values and reads no data file, except deletion
              vectors, of which this table has none), written here directly as Delta JSON
              commits: `--commits` commits of files/commits adds each, every add with
              `numRecords`, min/max and null counts of both columns and one of
              `--partitions` partition values, and a checkpoint (`alluvium checkpoint`) two
              commits before the end, so the sync replays a checkpoint and JSON commits as
              on a real table. Then `--first-repeat` times: remove `TABLE/metadata` and time
              the first sync (every version since the table's creation). For context,
              `log_load_count_*` time `alluvium count TABLE` (answered from statistics:
              the log load any sync starts with), measured even without the sync.
post_commit   two copies of that table's log, one with `alluvium.iceberg.sync=true` (set by
              `alter`, whose own commit makes the first sync, untimed); then `--repeat`
              times, alternating: `alluvium append COPY rows.csv` (2 rows) on each. The
              difference of the two medians is what the post-commit sync adds to a commit
              of a 100k-file table.

What is timed: the whole CLI process, fork to exit (start-up, loading the table, the sync,
its writes and fsyncs), started by a small launcher (`python -S`) so that its peak RSS
(`wait4`'s `ru_maxrss`) is its own: a process exec'ed from this script would carry this
interpreter's peak. The last line, the process floor, times `alluvium --version` the same
way: what any whole-process figure costs before it does any work. Each sync is checked: the
metadata file `version-hint.text` names must hold a snapshot whose `delta-version` is the
table's latest version.

Output: one JSON line per bench on stdout: `median_s`, `min_s`, `max_s`,
`peak_rss_mib` (the median over runs; for first_sync also the maximum), the target, and the
table's shape; `skipped` (with the reason) when the binary has no `iceberg sync`; the table is
still built, so the generator is exercised. Progress goes to stderr. None asserts a time.
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

import pyarrow as pa
import pyarrow.parquet as pq
from timed_process import run_timed


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def timed(binary: str, args: list[str], work: str) -> dict:
    """One whole-process run through the launcher; raises with the output if it failed."""
    r = run_timed(binary, args, os.path.join(work, "run.out"))
    if r["status"] != 0:
        raise RuntimeError(f"alluvium {' '.join(args)} exited {r['status']}: {r['output'].strip()[-1500:]}")
    return r


def alluvium(binary: str, *args: str) -> str:
    r = subprocess.run([binary, *args], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"alluvium {' '.join(args)} failed: {r.stderr.strip()}")
    return r.stdout


def has_iceberg_sync(binary: str) -> bool:
    r = subprocess.run([binary, "iceberg", "--help"], capture_output=True, text=True)
    return r.returncode == 0 and "sync" in r.stdout


def latest_version(binary: str, table: str) -> int:
    return json.loads(alluvium(binary, "inspect", table, "--json"))["version"]


def check_synced(table: str, version: int) -> None:
    """The metadata file `version-hint.text` names holds a snapshot of Delta version `version`."""
    meta_dir = os.path.join(table, "metadata")
    with open(os.path.join(meta_dir, "version-hint.text")) as fh:
        n = int(fh.read().strip())
    with open(os.path.join(meta_dir, f"v{n}.metadata.json")) as fh:
        meta = json.load(fh)
    tags = {(s.get("summary") or {}).get("delta-version") for s in meta.get("snapshots") or []}
    if str(version) not in tags:
        raise RuntimeError(f"v{n}.metadata.json has no snapshot of Delta version {version}")


def summary(name: str, runs: list[dict], **extra) -> dict:
    secs = [r["seconds"] for r in runs]
    rss = [r["maxrss_kib"] / 1024.0 for r in runs]
    return {"bench": name, "runs": len(runs), "median_s": round(statistics.median(secs), 4),
            "min_s": round(min(secs), 4), "max_s": round(max(secs), 4),
            "peak_rss_mib": round(statistics.median(rss), 1), "peak_rss_mib_max": round(max(rss), 1),
            **extra, "loadavg_1m": os.getloadavg()[0]}


def rows(start: int, n: int) -> pa.Table:
    ids = list(range(start, start + n))
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "name": pa.array([f"name-{i:08d}" for i in ids], pa.string()),
        "region": pa.array([["EU", "US", "APAC", "LATAM"][i % 4] for i in ids], pa.string()),
    })


def bench_one_version(binary: str, work: str, repeat: int, sync: bool) -> dict:
    table = os.path.join(work, "one_version")
    shutil.rmtree(table, ignore_errors=True)
    src = os.path.join(work, "rows.parquet")
    pq.write_table(rows(0, 1000), src)
    alluvium(binary, "create", table, "--schema-from", src, "--partition-by", "region")
    alluvium(binary, "append", table, src)
    if not sync:
        return {"bench": "one_version", "skipped": "alluvium has no `iceberg sync`",
                "version": latest_version(binary, table)}
    first = timed(binary, ["iceberg", "sync", table], work)
    runs = []
    for k in range(repeat):
        more = os.path.join(work, "more.parquet")
        pq.write_table(rows(10_000 + k * 100, 100), more)
        alluvium(binary, "append", table, more)
        runs.append(timed(binary, ["iceberg", "sync", table], work))
        check_synced(table, latest_version(binary, table))
        log(f"one_version: sync of version {latest_version(binary, table)}: {runs[-1]['seconds'] * 1000:.1f} ms, "
            f"{runs[-1]['maxrss_kib'] / 1024:.1f} MiB")
    return summary("one_version", runs, target_s=0.020, first_sync_s=round(first["seconds"], 4),
                   versions_synced_each=1)


def generate_log_table(binary: str, table: str, files: int, commits: int, partitions: int) -> int:
    """A log-only table of `files` adds in `commits` commits (see the docstring); returns
    its latest version. The commits are written here, not through alluvium: only the
    checkpoint is alluvium's."""
    shutil.rmtree(table, ignore_errors=True)
    os.makedirs(table)
    schema_src = os.path.join(os.path.dirname(table), "schema.parquet")
    pq.write_table(pa.table({"id": pa.array([0], pa.int64()), "name": pa.array(["n"], pa.string()),
                             "p": pa.array(["0000"], pa.string())}), schema_src)
    alluvium(binary, "create", table, "--schema-from", schema_src, "--partition-by", "p")
    log_dir = os.path.join(table, "_delta_log")
    per_commit = files // commits
    next_file = 0
    version = 0
    ts = int(time.time() * 1000) - 3_600_000
    for c in range(commits):
        count = per_commit if c < commits - 1 else files - next_file
        version += 1
        lines = [json.dumps({"commitInfo": {"timestamp": ts + version, "operation": "WRITE",
                                            "operationParameters": {"mode": "Append", "partitionBy": "[\"p\"]"},
                                            "isBlindAppend": True}})]
        for i in range(next_file, next_file + count):
            part = f"{i % partitions:04d}"
            lo, n = i * 1000, 1000
            stats = {"numRecords": n, "minValues": {"id": lo, "name": f"name-{lo:08d}"},
                     "maxValues": {"id": lo + n - 1, "name": f"name-{lo + n - 1:08d}"},
                     "nullCount": {"id": 0, "name": 0}}
            lines.append(json.dumps({"add": {
                "path": f"p={part}/part-{i:07d}-c000.snappy.parquet", "partitionValues": {"p": part},
                "size": 8_000 + i % 977, "modificationTime": ts + version, "dataChange": True,
                "stats": json.dumps(stats, separators=(",", ":"))}}, separators=(",", ":")))
        next_file += count
        with open(os.path.join(log_dir, f"{version:020}.json"), "x") as fh:
            fh.write("\n".join(lines) + "\n")
        if c == commits - 3:
            alluvium(binary, "checkpoint", table)
    return version


def bench_first_sync(binary: str, work: str, files: int, commits: int, partitions: int,
                     repeat: int, sync: bool) -> dict:
    table = os.path.join(work, f"log_only_{files}")
    t0 = time.perf_counter()
    latest = generate_log_table(binary, table, files, commits, partitions)
    gen_s = time.perf_counter() - t0
    live = int(subprocess.run([binary, "files", table], capture_output=True, text=True, check=True).stdout.count("\n"))
    log(f"first_sync: generated {live} live files in {commits} commits (version {latest}) in {gen_s:.1f} s")
    if live != files:
        raise RuntimeError(f"the generated table has {live} live files, not {files}")
    # What any sync of this table costs before mapping anything: loading its log (a
    # checkpoint and JSON commits) in a whole process, measured by a count that statistics
    # answer; context for the sync's figure, not part of it.
    counts = [timed(binary, ["count", table], work) for _ in range(repeat)]
    shape = {"files": files, "commits": commits, "partitions": partitions, "version": latest,
             "log_load_count_median_s": round(statistics.median(r["seconds"] for r in counts), 4),
             "log_load_count_peak_rss_mib": round(statistics.median(r["maxrss_kib"] / 1024.0 for r in counts), 1)}
    if not sync:
        return {"bench": "first_sync", "skipped": "alluvium has no `iceberg sync`", **shape}
    runs = []
    for _ in range(repeat):
        shutil.rmtree(os.path.join(table, "metadata"), ignore_errors=True)
        runs.append(timed(binary, ["iceberg", "sync", table], work))
        check_synced(table, latest)
        log(f"first_sync: {runs[-1]['seconds']:.3f} s, {runs[-1]['maxrss_kib'] / 1024:.1f} MiB")
    return summary("first_sync", runs, target_s=2.0, target_rss_mib=300, **shape)


def bench_post_commit(binary: str, work: str, files: int, commits: int, partitions: int,
                      repeat: int, sync: bool) -> dict:
    """`alluvium append` of 2 rows to the 100k-file table, with `alluvium.iceberg.sync` off
    and on (two copies of one table, synced once first), alternating: the difference of
    the medians is what the post-commit sync adds to a commit."""
    base = os.path.join(work, f"log_only_{files}")
    if not os.path.isdir(os.path.join(base, "_delta_log")):
        generate_log_table(binary, base, files, commits, partitions)
    if not sync:
        return {"bench": "post_commit", "skipped": "alluvium has no `iceberg sync`"}
    tables = {}
    for mode in ("off", "on"):
        t = os.path.join(work, f"post_commit_{mode}")
        shutil.rmtree(t, ignore_errors=True)
        shutil.copytree(os.path.join(base, "_delta_log"), os.path.join(t, "_delta_log"))
        if mode == "on":
            # The alter commit syncs it the first time (the first sync, untimed).
            alluvium(binary, "alter", t, "--set-property", "alluvium.iceberg.sync=true")
        tables[mode] = t
    rows = os.path.join(work, "post_commit_rows.csv")
    with open(rows, "w") as fh:
        fh.write("id,name,p\n-1,x,0001\n-2,y,0002\n")
    runs = {"off": [], "on": []}
    for _ in range(repeat):
        for mode, t in tables.items():
            runs[mode].append(timed(binary, ["append", t, rows], work))
    check_synced(tables["on"], latest_version(binary, tables["on"]))
    med = {m: statistics.median(r["seconds"] for r in rs) for m, rs in runs.items()}
    log(f"post_commit: append {med['off'] * 1000:.1f} ms without the sync, {med['on'] * 1000:.1f} ms with it")
    return {"bench": "post_commit", "runs": repeat, "files": files,
            "append_off_median_s": round(med["off"], 4), "append_on_median_s": round(med["on"], 4),
            "sync_share_s": round(med["on"] - med["off"], 4),
            "append_on_peak_rss_mib": round(statistics.median(r["maxrss_kib"] / 1024.0 for r in runs["on"]), 1)}


def process_floor(binary: str, work: str, repeat: int) -> dict:
    runs = [timed(binary, ["--version"], work) for _ in range(repeat)]
    return {"info": "process floor", "alluvium_version_median_s": round(statistics.median(r["seconds"] for r in runs), 4),
            "peak_rss_mib": round(statistics.median(r["maxrss_kib"] / 1024.0 for r in runs), 1)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("binary")
    ap.add_argument("work")
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--files", type=int, default=100_000)
    ap.add_argument("--commits", type=int, default=10)
    ap.add_argument("--partitions", type=int, default=100)
    ap.add_argument("--first-repeat", type=int, default=3)
    ap.add_argument("--only", default="one_version,first_sync,post_commit")
    ap.add_argument("--keep", action="store_true", help="leave WORKDIR's tables in place")
    a = ap.parse_args()
    if a.commits < 3:
        ap.error("--commits must be at least 3 (the checkpoint goes two commits before the end)")
    binary = os.path.abspath(a.binary)
    work = os.path.abspath(a.work)
    os.makedirs(work, exist_ok=True)
    sync = has_iceberg_sync(binary)
    if not sync:
        log("this alluvium binary has no `iceberg sync`: the tables are built, nothing is timed")
    only = set(a.only.split(","))
    if "one_version" in only:
        print(json.dumps(bench_one_version(binary, work, a.repeat, sync)), flush=True)
    if "first_sync" in only:
        print(json.dumps(bench_first_sync(binary, work, a.files, a.commits, a.partitions, a.first_repeat, sync)),
              flush=True)
    if "post_commit" in only:
        print(json.dumps(bench_post_commit(binary, work, a.files, a.commits, a.partitions, a.repeat, sync)),
              flush=True)
    print(json.dumps(process_floor(binary, work, max(a.repeat, 5))), flush=True)
    if not a.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
