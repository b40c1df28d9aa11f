"""OPTIMIZE (bin-packing compaction) side by side: alluvium vs delta-rs, in one process run.

usage: PEERS_VENV/bin/python benches/peers/optimize_vs_delta_rs.py ALLUVIUM_BIN TABLE [ROUNDS]

Each round copies TABLE twice into a scratch directory, then times, alternating which goes
first, `ALLUVIUM_BIN optimize COPY` (a whole process: load, plan, rewrite, commit) and
`DeltaTable(COPY).optimize.compact()` (in this process: load included). Both compact to the
default 128 MiB target, so a table of small files becomes one file per partition. Prints
each round, then the medians and the ratio; checks both results hold the same row count.
"""

import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import pyarrow.dataset  # noqa: F401  (deltalake's to_pyarrow_table needs it loaded)
from deltalake import DeltaTable


def copy(src: str, dst: str) -> str:
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst)
    return dst


def run_alluvium(binary: str, table: str) -> float:
    started = time.perf_counter()
    out = subprocess.run([binary, "optimize", table], check=True, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    summary = json.loads(out.stdout.strip().splitlines()[-1])
    assert summary["files_after"] >= 1, summary
    return elapsed


def run_delta_rs(table: str) -> float:
    started = time.perf_counter()
    DeltaTable(table).optimize.compact()
    return time.perf_counter() - started


def main() -> None:
    binary, table = sys.argv[1], sys.argv[2]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    rows = DeltaTable(table).to_pyarrow_table().num_rows
    ours, theirs = [], []
    with tempfile.TemporaryDirectory(prefix="optimize-bench-") as scratch:
        for r in range(rounds):
            a = copy(table, f"{scratch}/a")
            d = copy(table, f"{scratch}/d")
            if r % 2 == 0:
                ours.append(run_alluvium(binary, a))
                theirs.append(run_delta_rs(d))
            else:
                theirs.append(run_delta_rs(d))
                ours.append(run_alluvium(binary, a))
            for name, path in (("alluvium", a), ("delta-rs", d)):
                t = DeltaTable(path)
                n = t.to_pyarrow_table().num_rows
                assert n == rows, f"{name} result has {n} rows, expected {rows}"
            print(f"round {r}: alluvium {ours[-1]:.3f} s, delta-rs {theirs[-1]:.3f} s "
                  f"(files after: alluvium {len(DeltaTable(a).file_uris())}, "
                  f"delta-rs {len(DeltaTable(d).file_uris())})", flush=True)
    mo, mt = statistics.median(ours), statistics.median(theirs)
    print(json.dumps({"rows": rows, "rounds": rounds, "alluvium_median_s": round(mo, 3),
                      "delta_rs_median_s": round(mt, 3), "ratio": round(mt / mo, 2)}))


if __name__ == "__main__":
    main()
