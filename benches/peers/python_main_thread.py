#!/usr/bin/env python3
"""What a call from Python's main thread costs over the same call from another thread.

    python_main_thread.py WORKDIR [--rows 1000000] [--files 100] [--repeat 21]

A call on the main thread runs on a worker thread (so that Ctrl-C is served while it runs);
a call from any other thread runs where it is made. This times a one-row deletion-vector
DELETE (table load included, fsync off so the disk does not dominate) alternately from the
main thread and from a second thread, each run on a fresh copy of one table, and prints one
JSON line: medians in milliseconds and their ratio. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import threading
import time

import alluvium
import pyarrow as pa
import pyarrow.compute as pc


def build(path: str, rows: int, files: int) -> None:
    per = rows // files
    alluvium.DeltaTable.create(
        path,
        pa.schema([("id", pa.int64()), ("value", pa.float64())]),
        configuration={"delta.enableDeletionVectors": "true"},
    )
    for i in range(files):
        ids = pa.array(range(i * per, (i + 1) * per), pa.int64())
        alluvium.write_deltalake(path, pa.table({"id": ids, "value": pc.cast(ids, pa.float64())}),
                                 mode="append")


def delete_one(path: str, target: int) -> float:
    t = time.perf_counter()
    alluvium.DeltaTable(path, storage_options={"fsync": "false"}).delete(f"id = {target}")
    return (time.perf_counter() - t) * 1000


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("workdir")
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--files", type=int, default=100)
    p.add_argument("--repeat", type=int, default=21)
    a = p.parse_args()
    base = os.path.join(a.workdir, f"base-{a.rows}-{a.files}")
    if not os.path.exists(base):
        build(base, a.rows, a.files)
    target = a.rows // 2 + 7
    times: dict[str, list[float]] = {"main": [], "other": []}
    for k in range(2 * a.repeat + 2):
        copy = os.path.join(a.workdir, "copy")
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(base, copy)
        os.sync()
        if k % 2 == 0:
            ms = delete_one(copy, target)
            name = "main"
        else:
            out: list[float] = []
            th = threading.Thread(target=lambda: out.append(delete_one(copy, target)))
            th.start()
            th.join()
            ms, name = out[0], "other"
        if k >= 2:  # the first pair warms the caches
            times[name].append(ms)
    med = {k: statistics.median(v) for k, v in times.items()}
    print(json.dumps({"bench": "delete_1row_main_vs_other_thread",
                      "main_median_ms": round(med["main"], 3), "other_median_ms": round(med["other"], 3),
                      "ratio_main_over_other": round(med["main"] / med["other"], 2), "runs_each": a.repeat}))


if __name__ == "__main__":
    main()
