#!/usr/bin/env python3
"""Distributed writes on Ray next to a one-process write, in one run, on the same rows.

    ray_write.py WORKDIR [--rows 1000000] [--blocks 16] [--repeat 3] [--cpus 2]

Run it with a Python that has alluvium (``pip install "./python[ray]"``), Ray Data,
pyarrow and deltalake. Starts a local Ray cluster (``ray.init(num_cpus=CPUS)``), makes N
rows x 4 columns (id int64, category string, value float64, ts timestamp) as a dataset of
B blocks held in Ray's object store (built before any clock starts), and times, each run
into a fresh directory (a new table), the three variants alternating round by round:

* ``ray_alluvium``: ``alluvium.ray.write_alluvium(dataset, path)``: Ray tasks write the
  blocks as data files, the driver creates the table and commits every file in one commit;
* ``one_process``: ``alluvium.write_deltalake(path, table)`` in the driver, from the same
  rows as one pyarrow table (one commit);
* ``ray_parquet_deltalake``: Ray Data's own ``dataset.write_parquet(path)``, then the driver
  reads each file's Parquet footer for its row count and column bounds (the statistics a
  Delta add carries) and commits the files with deltalake's
  ``create_table_with_add_actions`` (a new table with the files, one commit).

The ``_no_fsync`` variants write with ``storage_options={"fsync": "false"}``: alluvium
fsyncs every file and commit it writes on a local filesystem by default, and neither
pyarrow's Parquet writer nor deltalake does, so those are the like-for-like figures.

Prints one JSON line per variant (median, minimum, maximum in milliseconds) and the ratios
of the issue's targets (Ray write within 1.5x of one process; faster than the
Parquet-then-deltalake route). Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import time


def make_rows(n: int):
    import numpy as np
    import pyarrow as pa

    ids = np.arange(n, dtype=np.int64)
    return pa.table(
        {
            "id": pa.array(ids),
            "category": pa.array(np.char.add("c", (ids % 100).astype(str))),
            "value": pa.array(ids * 0.5),
            "ts": pa.array(1_700_000_000_000_000 + ids * 1_000_000, pa.timestamp("us", "UTC")),
        }
    )


def parquet_add_actions(path: str) -> list:
    """deltalake AddActions for the Parquet files under ``path``, with statistics from their
    footers (row count, per-column min/max/null count)."""
    import pyarrow.parquet as pq
    from deltalake.transaction import AddAction

    actions = []
    for name in sorted(os.listdir(path)):
        if not name.endswith(".parquet"):
            continue
        full = os.path.join(path, name)
        meta = pq.read_metadata(full)
        mins: dict = {}
        maxs: dict = {}
        nulls: dict = {}
        for rg in range(meta.num_row_groups):
            group = meta.row_group(rg)
            for c in range(group.num_columns):
                col = group.column(c)
                field = col.path_in_schema
                st = col.statistics
                if st is None or not st.has_min_max:
                    continue
                lo, hi = st.min, st.max
                if hasattr(lo, "isoformat"):
                    lo, hi = lo.isoformat(), hi.isoformat()
                mins[field] = lo if field not in mins else min(mins[field], lo)
                maxs[field] = hi if field not in maxs else max(maxs[field], hi)
                nulls[field] = nulls.get(field, 0) + (st.null_count or 0)
        stats = {"numRecords": meta.num_rows, "minValues": mins, "maxValues": maxs, "nullCount": nulls}
        st = os.stat(full)
        actions.append(AddAction(name, st.st_size, {}, int(st.st_mtime * 1000), True, json.dumps(stats, default=str)))
    return actions


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("workdir")
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--blocks", type=int, default=16)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cpus", type=int, default=2)
    a = ap.parse_args()

    import deltalake
    import ray
    from deltalake.transaction import create_table_with_add_actions

    import alluvium
    from alluvium.ray import write_alluvium

    ray.init(num_cpus=a.cpus, include_dashboard=False, log_to_driver=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    rows = make_rows(a.rows)
    step = -(-a.rows // a.blocks)
    ds = ray.data.from_arrow([rows.slice(i, step) for i in range(0, a.rows, step)]).materialize()
    assert ds.num_blocks() == a.blocks
    delta_schema = deltalake.Schema.from_arrow(rows.schema)

    def ray_alluvium(path: str) -> None:
        write_alluvium(ds, path)

    def one_process(path: str) -> None:
        alluvium.write_deltalake(path, rows)

    no_fsync = {"fsync": "false"}

    def ray_alluvium_no_fsync(path: str) -> None:
        write_alluvium(ds, path, storage_options=no_fsync)

    def one_process_no_fsync(path: str) -> None:
        alluvium.write_deltalake(path, rows, storage_options=no_fsync)

    def ray_parquet_deltalake(path: str) -> None:
        ds.write_parquet(path)
        create_table_with_add_actions(path, delta_schema, parquet_add_actions(path))

    variants = {
        "ray_alluvium": ray_alluvium,
        "one_process": one_process,
        "ray_alluvium_no_fsync": ray_alluvium_no_fsync,
        "one_process_no_fsync": one_process_no_fsync,
        "ray_parquet_deltalake": ray_parquet_deltalake,
    }
    times: dict[str, list[float]] = {k: [] for k in variants}
    os.makedirs(a.workdir, exist_ok=True)
    # A warm-up round (Ray's worker processes start, imports happen), not counted.
    for r in range(a.repeat + 1):
        for name, fn in variants.items():
            path = os.path.join(a.workdir, f"{name}-{r}")
            shutil.rmtree(path, ignore_errors=True)
            t0 = time.perf_counter()
            fn(path)
            elapsed = (time.perf_counter() - t0) * 1000
            n = alluvium.DeltaTable(path).count()
            assert n == a.rows, f"{name}: {n} rows"
            if r > 0:
                times[name].append(elapsed)
            shutil.rmtree(path, ignore_errors=True)
    med = {k: statistics.median(v) for k, v in times.items()}
    for k, v in times.items():
        print(json.dumps({"figure": k, "rows": a.rows, "blocks": a.blocks, "cpus": a.cpus,
                          "median_ms": round(med[k], 1), "min_ms": round(min(v), 1), "max_ms": round(max(v), 1),
                          "runs": len(v)}))
    print(json.dumps({
        "ratio": "ray_alluvium / one_process (target <= 1.5)",
        "value": round(med["ray_alluvium"] / med["one_process"], 2),
    }))
    print(json.dumps({
        "ratio": "ray_parquet_deltalake / ray_alluvium (target > 1)",
        "value": round(med["ray_parquet_deltalake"] / med["ray_alluvium"], 2),
    }))
    print(json.dumps({
        "ratio": "ray_parquet_deltalake / ray_alluvium_no_fsync (like for like: neither fsyncs)",
        "value": round(med["ray_parquet_deltalake"] / med["ray_alluvium_no_fsync"], 2),
    }))
    ray.shutdown()


if __name__ == "__main__":
    main()
