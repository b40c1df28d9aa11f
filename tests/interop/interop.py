#!/usr/bin/env python3
"""Interop between alluvium and the peer engines (delta-rs, DuckDB's delta extension =
delta-kernel-rs), through the shared oracle's order-independent content digest.

  interop.py ALLUVIUM_BIN PEERS_DIR WORKDIR

Cases:
  alluvium_writes   alluvium creates a partitioned table with every primitive type, nested
                    types, nulls and partition values that need escaping, then appends,
                    deletes and overwrites; at every version, delta-rs and DuckDB must read
                    exactly what alluvium reads.
  deltars_writes    delta-rs creates a table; alluvium appends to it; delta-rs and DuckDB
                    must read exactly what alluvium reads, and alluvium exactly what they
                    wrote before.
  deltars_dv_variant_type
                    delta-rs creates a table with deletion vectors enabled (delta-rs 1.6 then
                    lists `variantType` in both feature lists without any variant column) and
                    deletes from it; alluvium must read it exactly as delta-rs does, then
                    append to and delete from it keeping the feature lists; delta-rs, DuckDB
                    and polars must read exactly what alluvium reads.
  checkpoints       alluvium writes classic, struct-stats, multi-part and V2 (sidecar)
                    checkpoints; in a copy of each table the JSON commits below the
                    checkpoint are removed, and delta-rs and DuckDB must read from it exactly
                    the state that JSON replay of the full log gives (alluvium reading a copy
                    without checkpoints). A peer that refuses a checkpoint flavour it does not
                    support is reported, not counted as agreement.
  spark_dv_tables   copies of the Spark-written deletion-vector tables of the conformance
                    set (tests/data/conformance: table-with-dv-small, with-short-dv,
                    basic-dv-no-checkpoint, dv-with-columnmapping, the last partitioned and
                    column-mapped); alluvium deletes rows from each (some in files that
                    already carry a DV); before and after, delta-rs (QueryBuilder), DuckDB and
                    polars (not on the column-mapped one: it refuses columnMapping) must
                    read exactly what alluvium reads.
  s3                (only with ALLUVIUM_S3_ENDPOINT set: the loopback S3 server of .ci/run)
                    alluvium creates, appends, deletes and checkpoints a partitioned table in
                    the bucket; at every version delta-rs, reading the s3:// URI with
                    storage_options pointing at the server, must read exactly what alluvium
                    reads.
  azure             (only with ALLUVIUM_AZURE_ENDPOINT set: Azurite, the Azure Blob emulator
                    of .ci/run) alluvium creates a deletion-vector table in the container,
                    four writer processes append to it at once (versions contiguous, every
                    row once), then DV DELETE, checkpoint and OPTIMIZE; at every version
                    delta-rs must read exactly what alluvium reads.
  no_preconditions  (only with ALLUVIUM_S3_NOPRE_ENDPOINT set: an S3 API server that ignores
                    If-None-Match) the put-if-absent probe must refuse writes with a one-line
                    reason and leave nothing; single-writer mode, asked for, writes.
  alluvium_dv       alluvium creates a table, `alter`s it to deletion vectors (protocol 3/7),
                    deletes scattered rows, one row, and again rows of an already DV'd file
                    (the DV is extended into a new DV), then many rows of one file; the
                    commits must carry deletion vectors, both inline (small ones) and in DV
                    files (dv_inline), and at the last versions delta-rs (QueryBuilder),
                    DuckDB and polars must read exactly what alluvium reads.
  alluvium_row_tracking
                    alluvium creates a table with delta.enableRowTracking=true, appends four
                    files, OPTIMIZEs and MERGEs (delete, update, insert); the stable row ids
                    and commit versions `scan --row-tracking` reads must be kept by OPTIMIZE,
                    kept (id) and renewed (version) for updated rows, fresh for inserts, and
                    equal to those computed here from the log and the files' materialised
                    columns; delta-rs, DuckDB and polars must read exactly what alluvium
                    reads after OPTIMIZE and after MERGE.
  alluvium_cdf      alluvium creates a copy-on-write table with change data feed and
                    appends, updates, deletes part of a file and merges (delete, update,
                    insert); delta-rs `load_cdf` from version 0 must return exactly the
                    change rows computed here independently (multisets of the columns,
                    `_change_type` and `_commit_version`, delta-rs's uint64 normalised), and
                    so must alluvium's `changes` where the binary has it. Then a
                    delta-rs-written CDF table (write, update, delete, merge): alluvium's
                    `changes` must equal delta-rs `load_cdf` (skipped, and said so, when the
                    binary has no `changes` command).
  append_own_row    (issue 16) for every readable non-empty reference table of the
                    conformance set (all data files present, not an expected error): a copy
                    gets one of its own rows appended by alluvium (the first row of its
                    scan, without GENERATED ALWAYS identity columns, which the table
                    generates); delta-rs, DuckDB and polars must then read exactly what
                    alluvium reads. A peer that cannot read the table, or already read the original
                    differently from alluvium, is reported, not counted as agreement. The
                    refusals the conformance harness expects (EXPECTED_APPEND_REFUSALS in
                    tests/conformance.rs) are expected here too.
  alluvium_clustered
                    alluvium creates a table, appends small files, `alter --cluster-by`s two
                    columns and OPTIMIZEs (the files are clustered and marked), appends
                    again and OPTIMIZEs incrementally; at every version delta-rs, DuckDB
                    and polars must read exactly what alluvium reads, and the clustered
                    files must carry clusteringProvider.
  state_store       alluvium keeps a keyed state store (composite key; out-of-order event
                    times, `seq` ties, deletes, late older upserts after a delete,
                    re-inserts, a batch without `seq`); after each `state sync`, DuckDB's
                    window query over `log/` (the latest event per key by (event_time, seq),
                    deletes dropped) must equal `state/` read by DuckDB, and so must a fold
                    computed here; delta-rs and DuckDB must read `state/` exactly as
                    `alluvium state scan` prints it.
  alluvium_restore  (issue 27) alluvium writes, deletes (copy-on-write, then with deletion
                    vectors), overwrites and RESTOREs to earlier versions (one whose files
                    carry deletion vectors, one before the DV upgrade: the protocol stays
                    3/7); alluvium must read each restored version exactly as it read the
                    target, and delta-rs, DuckDB and polars exactly what alluvium reads.
  alluvium_replace  alluvium writes a partitioned change-data-feed table, deletes, then
                    replaces it (`create --replace`) with another schema, partitioning and
                    deletion vectors, appends and deletes; delta-rs and DuckDB must read
                    exactly what alluvium reads before the replace (time travel), right after
                    it (empty), after the append and after the delete; polars too at the last
                    version.
  alluvium_convert  (issue 27) pyarrow writes a Hive-partitioned Parquet directory (every
                    primitive and nested type, partition values needing escapes, a NULL
                    partition) plus Spark's `_SUCCESS`; `alluvium convert --partition-by`
                    turns it into a table in place (no file rewritten); the row count must
                    equal pyarrow's, and delta-rs, DuckDB and polars must read exactly what
                    alluvium reads.
  alluvium_columns  (issue 27) alluvium ADDs a column, appends rows holding it, RENAMEs a
                    column and a partition column and DROPs a column (column mapping turned on
                    by the rename: protocol 2/5), then widens a type (typeWidening, 3/7); at
                    every version delta-rs, DuckDB and polars must read exactly what alluvium
                    reads (a peer that refuses column mapping or type widening is reported,
                    not counted as agreement).
  iceberg           (issue 31; tests/interop/iceberg.py) alluvium builds a partitioned table
                    through appends, DV DELETE, UPDATE, MERGE, OPTIMIZE, an added column and a
                    copy-on-write DELETE, running `iceberg sync` after some steps (one
                    version, several) and at the end, then once more (metadata/ must not
                    change); every Iceberg snapshot, read by pyiceberg (StaticTable) and
                    DuckDB's iceberg extension by snapshot id, must equal alluvium's scan of
                    the snapshot's `delta-version`; pyiceberg's plan_files must prune by
                    partition and by column bounds without losing a row; four racing syncs
                    must all succeed and leave each version once; every metadata file must
                    hold the fields the readers need and each data file's record count and
                    size; the same on a sample of conformance tables (a typed refusal of the
                    sync is printed, not compared). Skipped,
                    saying so, when the readers cannot be installed or loaded, or while the
                    binary has no `iceberg sync`.
Exit 0 when every comparison agrees; 1 otherwise (each disagreement is printed).
"""
from __future__ import annotations

import datetime as dt
import decimal
import json
import time
import os
import shlex
import shutil
import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq

BIN, PEERS, WORK = sys.argv[1], sys.argv[2], sys.argv[3]
sys.path.insert(0, PEERS)
import oracle  # noqa: E402
import iceberg  # noqa: E402  (this directory's iceberg.py: the Iceberg readers' case)

ENGINES = ["deltalake", "duckdb"]
FAILURES: list[str] = []

PARTS = ["A/A", "B B", "R&D", "x:y", "a?", "%2F%2520%25f", "😈", "", None, "k=v", "trail/", "/lead"]


def alluvium(*args: str, env: dict | None = None) -> str:
    r = subprocess.run([BIN, *args], capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise RuntimeError(f"alluvium {' '.join(args)} failed: {r.stderr.strip()}")
    return r.stdout


def merge_upsert(table, src):
    """Writes the MERGE source both DML cases use to `src` (ids 0, 20, .., 980 that exist,
    the multiples of 60 marked 'D'; ids 5000..5049 that do not) and merges it into `table`:
    delete the 'D' matches, update the other matches, insert the rest. Returns the ids."""
    src_ids = list(range(0, 1000, 20)) + list(range(5000, 5050))
    pq.write_table(pa.table({
        "id": pa.array(src_ids, pa.int64()),
        "key": pa.array(["m"] * len(src_ids), pa.string()),
        "value": pa.array([float(i) for i in src_ids], pa.float64()),
        "op": pa.array(["D" if i % 60 == 0 else "U" for i in src_ids], pa.string()),
    }), src)
    alluvium("merge", table, src, "--on", "t.id = s.id",
             "--when", "MATCHED AND s.op = 'D' THEN DELETE",
             "--when", "MATCHED THEN UPDATE SET *",
             "--when", "NOT MATCHED THEN INSERT *")
    return src_ids


def ours(table: str, version: int | None, env: dict | None = None) -> dict:
    out = os.path.join(WORK, "scan.parquet")
    args = ["scan", table, "--format", "parquet", "--output", out]
    if version is not None:
        args += ["--version", str(version)]
    alluvium(*args, env=env)
    return oracle.digest(pq.read_table(out))


def compare(case: str, table: str, version: int | None, mine: dict | None = None,
            unsupported_ok: bool = False, engines: list[str] | None = None,
            known: dict[str, str] | None = None) -> None:
    """Compares the peers' reads with alluvium's. `known` maps an engine to a limitation
    of that peer shown to be its own (a minimal reproduction read correctly by the other
    peers, named in the reason): its refusal or disagreement is reported, not counted as a
    failure, nor as agreement."""
    if mine is None:
        mine = ours(table, version)
    for engine in engines or ENGINES:
        peer = oracle.run_read(table, version, engine)
        what = f"{case} v{version if version is not None else 'latest'} {engine}"
        if peer["status"] == "unsupported" and unsupported_ok:
            print(f"  UNSUPPORTED by peer (not agreement): {what}: {peer.get('reason')}")
            continue
        agrees = peer["status"] == "ok" and (peer["rows"], peer["schema"], peer["rows_sha256"]) == (
            mine["rows"], mine["schema"], mine["rows_sha256"])
        if known and engine in known and not agrees:
            print(f"  KNOWN PEER LIMIT (not agreement): {what}: {known[engine]}")
            continue
        if peer["status"] != "ok":
            FAILURES.append(f"{what}: {peer['status']}: {peer.get('reason')}")
            continue
        if (peer["rows"], peer["schema"], peer["rows_sha256"]) != (mine["rows"], mine["schema"], mine["rows_sha256"]):
            FAILURES.append(f"{what}: differs: ours rows={mine['rows']} schema={mine['schema']} sha={mine['rows_sha256'][:12]}; "
                            f"peer rows={peer['rows']} schema={peer['schema']} sha={peer['rows_sha256'][:12]}")
        else:
            print(f"  agree: {what} ({mine['rows']} rows)")


def all_types(start: int, n: int) -> pa.Table:
    ids = list(range(start, start + n))

    def opt(values, i):  # every column is null in one row of each ten
        return [None if (j + i) % 10 == 0 else v for j, v in enumerate(values)]

    struct_t = pa.struct([("a", pa.int32()), ("b", pa.string())])
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "i": pa.array(opt([k * 3 - 50 for k in ids], 1), pa.int32()),
        "s": pa.array(opt([k % 300 - 150 for k in ids], 2), pa.int16()),
        "b": pa.array(opt([k % 200 - 100 for k in ids], 3), pa.int8()),
        "f": pa.array(opt([k * 0.25 for k in ids], 4), pa.float32()),
        "d": pa.array(opt([k / 7.0 for k in ids], 5), pa.float64()),
        "bo": pa.array(opt([k % 2 == 0 for k in ids], 6), pa.bool_()),
        "str": pa.array(opt([f"s{k}-ü-" + "x" * (k % 40) for k in ids], 7), pa.string()),
        "bin": pa.array(opt([bytes([k % 256, 0, 255]) for k in ids], 8), pa.binary()),
        "dt": pa.array(opt([dt.date(1960, 1, 1) + dt.timedelta(days=k * 37) for k in ids], 9), pa.date32()),
        "ts": pa.array(opt([dt.datetime(1999, 12, 31, 23, 59, 59, 999999, tzinfo=dt.timezone.utc) + dt.timedelta(seconds=k * 3601) for k in ids], 1),
                       pa.timestamp("us", tz="UTC")),
        "ntz": pa.array(opt([dt.datetime(2021, 11, 18, 2, 30) + dt.timedelta(microseconds=k * 123457) for k in ids], 2), pa.timestamp("us")),
        "dec": pa.array(opt([decimal.Decimal(k * 101) / 100 for k in ids], 3), pa.decimal128(10, 2)),
        "bigdec": pa.array(opt([decimal.Decimal(f"{k}.{k:018d}") for k in ids], 4), pa.decimal128(38, 18)),
        "st": pa.array(opt([{"a": k, "b": None if k % 3 else f"b{k}"} for k in ids], 5), struct_t),
        "arr": pa.array(opt([list(range(k % 4)) + ([None] if k % 5 == 0 else []) for k in ids], 6), pa.list_(pa.int64())),
        "mp": pa.array(opt([[("k1", k), ("k2", None)] for k in ids], 7), pa.map_(pa.string(), pa.int64())),
        "part": pa.array([PARTS[k % len(PARTS)] for k in ids], pa.string()),
    })


def case_alluvium_writes() -> None:
    print("alluvium writes, peers read")
    table = os.path.join(WORK, "alluvium_all_types")
    first = os.path.join(WORK, "first.parquet")
    second = os.path.join(WORK, "second.parquet")
    repl = os.path.join(WORK, "replacement.parquet")
    pq.write_table(all_types(0, 60), first)
    pq.write_table(all_types(1000, 30), second)
    pq.write_table(all_types(2000, 5).set_column(17, "part", pa.array(["B B"] * 5, pa.string())), repl)
    alluvium("create", table, "--schema-from", first, "--partition-by", "part")
    alluvium("append", table, first)
    alluvium("append", table, second)
    alluvium("delete", table, "--filter", "id < 10 OR part = 'R&D'")
    alluvium("overwrite", table, repl, "--filter", "part = 'B B'")
    latest = json.loads(alluvium("inspect", table, "--json"))["version"]
    for v in range(1, latest + 1):
        compare("alluvium_writes", table, v)


def case_deltars_writes() -> None:
    print("delta-rs writes, alluvium appends, peers read")
    from deltalake import write_deltalake

    table = os.path.join(WORK, "deltars_table")
    data = pa.table({
        "id": pa.array(range(50), pa.int64()),
        "name": pa.array([f"n{i}" if i % 7 else None for i in range(50)], pa.string()),
        "amount": pa.array([i * 1.5 for i in range(50)], pa.float64()),
        "day": pa.array([dt.date(2024, 1, 1 + i % 5) for i in range(50)], pa.date32()),
        "region": pa.array([["EU", "US", "A B/C", None][i % 4] for i in range(50)], pa.string()),
    })
    write_deltalake(table, data, partition_by=["region"])
    before = oracle.run_read(table, None, "deltalake")
    mine = ours(table, None)
    if before.get("rows_sha256") != mine["rows_sha256"]:
        FAILURES.append(f"deltars_writes: alluvium reads delta-rs's table differently ({mine['rows']} vs {before.get('rows')} rows)")
    more = os.path.join(WORK, "more.parquet")
    pq.write_table(data.slice(0, 20).set_column(0, "id", pa.array(range(100, 120), pa.int64())), more)
    alluvium("append", table, more)
    alluvium("delete", table, "--filter", "id < 5")
    compare("deltars_writes", table, None)
    compare("deltars_writes", table, 1)


def protocol_of(table: str) -> dict:
    """Versions and feature sets (order-independent) as alluvium reads them."""
    p = json.loads(alluvium("inspect", table, "--json"))["protocol"]
    return {k: sorted(v) if isinstance(v, list) else v for k, v in p.items()}


def case_deltars_dv_variant_type() -> None:
    print("delta-rs table with deletion vectors (lists variantType), alluvium reads, appends, deletes")
    from deltalake import DeltaTable, write_deltalake

    table = os.path.join(WORK, "deltars_dv_table")
    data = pa.table({
        "id": pa.array(range(40), pa.int64()),
        "name": pa.array([f"n{i}" if i % 6 else None for i in range(40)], pa.string()),
    })
    write_deltalake(table, data, configuration={"delta.enableDeletionVectors": "true"})
    DeltaTable(table).delete("id < 3")
    proto = protocol_of(table)
    print(f"  delta-rs protocol: {proto}")
    # The point of the case: delta-rs lists variantType on DV tables without a variant column.
    # If a future delta-rs stops doing so, say it rather than pass without testing anything.
    if "variantType" not in proto.get("readerFeatures", []) + proto.get("writerFeatures", []):
        FAILURES.append(f"deltars_dv_variant_type: delta-rs no longer lists variantType: {proto}")
    before = oracle.run_read(table, None, "deltalake")
    mine = ours(table, None)
    if before.get("rows_sha256") != mine["rows_sha256"]:
        FAILURES.append(f"deltars_dv_variant_type: alluvium reads delta-rs's table differently "
                        f"({mine['rows']} vs {before.get('rows')} rows)")
    more = os.path.join(WORK, "dv_more.parquet")
    pq.write_table(data.slice(0, 10).set_column(0, "id", pa.array(range(100, 110), pa.int64())), more)
    alluvium("append", table, more)
    alluvium("delete", table, "--filter", "id = 5 OR id = 101 OR id > 35")
    if protocol_of(table) != proto:
        FAILURES.append(f"deltars_dv_variant_type: alluvium changed the protocol: {proto} -> {protocol_of(table)}")
    compare("deltars_dv_variant_type", table, None, engines=["deltalake", "duckdb", "polars"])


def log_files(table: str) -> list[str]:
    return sorted(os.listdir(os.path.join(table, "_delta_log")))


def case_checkpoints() -> None:
    print("alluvium checkpoints, peers read them without the commits below")
    data = os.path.join(WORK, "cp_data.parquet")
    pq.write_table(all_types(0, 40), data)
    flavours = [
        ("classic", [], []),
        ("struct_stats", ["delta.checkpoint.writeStatsAsStruct=true", "delta.checkpoint.writeStatsAsJson=false"], []),
        ("multi_part", [], ["--part-size", "7"]),
        ("v2_sidecars", ["delta.checkpointPolicy=v2"], ["--part-size", "7"]),
    ]
    for name, props, cp_args in flavours:
        table = os.path.join(WORK, f"cp_{name}")
        args = ["create", table, "--schema-from", data, "--partition-by", "part"]
        for p in props:
            args += ["--property", p]
        alluvium(*args)
        for i in range(12):  # crosses the interval: an automatic checkpoint at 10
            chunk = os.path.join(WORK, f"cp_chunk_{i}.parquet")
            pq.write_table(all_types(i * 100, 7 + i), chunk)
            alluvium("append", table, chunk)
            if i == 5:
                alluvium("delete", table, "--filter", "id IN (1, 2, 3, 104, 205) OR part = 'R&D'")
        alluvium("checkpoint", table, *cp_args)
        version = json.loads(alluvium("inspect", table, "--json"))["version"]
        if not any(f.startswith(f"{version:020}.checkpoint") for f in log_files(table)):
            FAILURES.append(f"checkpoints {name}: no checkpoint file at version {version}")
            continue
        # JSON replay: a copy without any checkpoint.
        json_only = table + "_json_only"
        shutil.copytree(table, json_only)
        for f in log_files(json_only):
            if ".checkpoint." in f or f == "_last_checkpoint":
                os.remove(os.path.join(json_only, "_delta_log", f))
        shutil.rmtree(os.path.join(json_only, "_delta_log", "_sidecars"), ignore_errors=True)
        expected = ours(json_only, None)
        # The checkpoint alone: a copy without the commits below it.
        trimmed = table + "_trimmed"
        shutil.copytree(table, trimmed)
        for f in log_files(trimmed):
            if f.endswith(".json") and f[:20].isdigit() and int(f[:20]) < version:
                os.remove(os.path.join(trimmed, "_delta_log", f))
        mine = ours(trimmed, None)
        if mine["rows_sha256"] != expected["rows_sha256"]:
            FAILURES.append(f"checkpoints {name}: alluvium reads its own checkpoint differently from JSON replay")
        compare(f"checkpoints {name}", trimmed, None, mine=expected, unsupported_ok=(name == "v2_sidecars"))


# Spark-written DV tables of the conformance set, a predicate deleting some live rows of each
# (every one touches a file that already has a DV, so a DV writer must union the old
# deletions with the new ones), and the peers that read it: polars' delta reader (2.1)
# refuses the columnMapping reader feature.
ALL_READERS = ["deltalake", "duckdb", "polars"]
SPARK_DV_TABLES = [
    ("table-with-dv-small", "value = 1 OR value > 6", ALL_READERS),
    ("with-short-dv", "id IN (1, 2, 7)", ALL_READERS),
    ("basic-dv-no-checkpoint", "id = 3 OR id > 7", ALL_READERS),
    ("dv-with-columnmapping", "col1 > 26 OR part = 3", ["deltalake", "duckdb"]),
]
CONFORMANCE_TABLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "conformance", "tables")


def case_spark_dv_tables() -> None:
    print("Spark-written DV tables: alluvium deletes, peers read")
    for name, predicate, engines in SPARK_DV_TABLES:
        table = os.path.join(WORK, "spark_dv", name)
        shutil.copytree(os.path.join(CONFORMANCE_TABLES, name, "delta"), table)
        before = ours(table, None)
        compare(f"spark_dv {name} before", table, None, mine=before, engines=engines)
        alluvium("delete", table, "--filter", predicate)
        latest = json.loads(alluvium("inspect", table, "--json"))["version"]
        with open(os.path.join(table, "_delta_log", f"{latest:020}.json")) as fh:
            wrote_dv = any((json.loads(line).get("add") or {}).get("deletionVector") for line in fh if line.strip())
        print(f"  spark_dv {name}: DELETE {predicate!r} committed v{latest} "
              f"({'with deletion vectors' if wrote_dv else 'copy-on-write'})")
        after = ours(table, None)
        if after["rows"] >= before["rows"]:
            FAILURES.append(f"spark_dv {name}: DELETE {predicate!r} removed no row ({before['rows']} -> {after['rows']})")
        compare(f"spark_dv {name} after", table, None, mine=after, engines=engines)


# Same list as EXPECTED_APPEND_REFUSALS in tests/conformance.rs (tables alluvium refuses to
# append to, with the feature refusing it): none today.
EXPECTED_APPEND_REFUSALS: dict[str, str] = {}


def case_alluvium_clustered() -> None:
    print("alluvium clusters a table (alter --cluster-by, OPTIMIZE), peers read")
    table = os.path.join(WORK, "clustered")
    first = os.path.join(WORK, "cl_first.parquet")
    data = all_types(0, 9).drop(["part"])
    pq.write_table(data, first)
    alluvium("create", table, "--schema-from", first)
    for i in range(4):
        chunk = os.path.join(WORK, f"cl_chunk_{i}.parquet")
        pq.write_table(all_types(i * 100, 9 + i).drop(["part"]), chunk)
        alluvium("append", table, chunk)
    alluvium("alter", table, "--cluster-by", "i,str")
    alluvium("optimize", table)
    alluvium("append", table, first)
    alluvium("optimize", table)
    latest = json.loads(alluvium("inspect", table, "--json"))["version"]
    with open(os.path.join(table, "_delta_log", f"{latest:020}.json")) as fh:
        adds = [json.loads(line)["add"] for line in fh if '"add"' in line]
    if not adds or any(a.get("clusteringProvider") != "liquid" for a in adds):
        FAILURES.append(f"alluvium_clustered: the last OPTIMIZE's files are not marked clustered: {adds}")
    for v in range(1, latest + 1):
        compare("alluvium_clustered", table, v, engines=["deltalake", "duckdb", "polars"])


def case_append_own_row() -> None:
    print("every readable reference table: alluvium appends one of its own rows, peers read")
    with open(os.path.join(CONFORMANCE_TABLES, "..", "MANIFEST.json")) as fh:
        manifest = json.load(fh)
    agreed = tables = 0
    for e in manifest["tables"]:
        name = e["name"]
        if e.get("test_usage") == "expect-error" or e.get("data_files_present") != "all":
            continue
        table = os.path.join(WORK, "append_own", name)
        shutil.copytree(os.path.join(CONFORMANCE_TABLES, "..", e["table_root"]), table)
        scan = os.path.join(WORK, "append_own", f"{name}.scan.parquet")
        row = os.path.join(WORK, "append_own", f"{name}.row.parquet")
        try:
            alluvium("scan", table, "--format", "parquet", "--output", scan)
        except RuntimeError as err:
            FAILURES.append(f"append_own_row {name}: alluvium cannot scan it: {err}")
            continue
        data = pq.read_table(scan)
        if data.num_rows == 0:
            continue
        before = oracle.digest(data)
        # A GENERATED ALWAYS identity column refuses given values: the row goes in without
        # it and the table generates the value (PROTOCOL.md "Identity Columns").
        fields = json.loads(alluvium("inspect", table, "--json"))["schema"]["fields"]
        always = [f["name"] for f in fields
                  if "delta.identity.start" in (f.get("metadata") or {})
                  and f["metadata"].get("delta.identity.allowExplicitInsert") is False]
        pq.write_table(data.slice(0, 1).drop_columns(always), row)
        r = subprocess.run([BIN, "append", table, row], capture_output=True, text=True)
        if r.returncode != 0:
            feature = EXPECTED_APPEND_REFUSALS.get(name)
            if feature and f"`{feature}`" in r.stderr:
                print(f"  append refused as expected: {name} ({feature})")
            else:
                FAILURES.append(f"append_own_row {name}: append failed: {r.stderr.strip()}")
            continue
        if name in EXPECTED_APPEND_REFUSALS:
            FAILURES.append(f"append_own_row {name}: listed as an expected refusal but accepted")
        tables += 1
        mine = ours(table, None)
        if mine["rows"] != before["rows"] + 1:
            FAILURES.append(f"append_own_row {name}: {mine['rows']} rows after the append, expected {before['rows'] + 1}")
        for engine in ["deltalake", "duckdb", "polars"]:
            peer = oracle.run_read(table, None, engine)
            same = peer["status"] == "ok" and (peer["rows"], peer["schema"], peer["rows_sha256"]) == (
                mine["rows"], mine["schema"], mine["rows_sha256"])
            if same:
                agreed += 1
                continue
            # polars parses a table's timestamp partition values with one pattern: a log
            # mixing the two spellings PROTOCOL.md "Partition Value Serialization" allows
            # (Spark's `2021-09-08 11:11:11`, alluvium's ISO 8601 `...T11:11:11.000000Z`)
            # fails in polars alone; reported, not counted.
            if engine == "polars" and "DatetimeYMDZ" in str(peer.get("reason")):
                print(f"  not compared: {name} polars: mixed timestamp partition-value spellings "
                      f"({peer.get('reason')})")
                continue
            # Not counted when the peer cannot read the original, or already reads it
            # differently from alluvium: the append is not what they disagree on.
            orig = oracle.run_read(os.path.join(CONFORMANCE_TABLES, "..", e["table_root"]), None, engine)
            orig_same = orig["status"] == "ok" and (orig["rows"], orig["schema"], orig["rows_sha256"]) == (
                before["rows"], before["schema"], before["rows_sha256"])
            if not orig_same:
                print(f"  not compared: {name} {engine}: the peer already reads the original "
                      f"differently ({orig['status']}: {orig.get('reason', 'different content')})")
            else:
                FAILURES.append(f"append_own_row {name} {engine}: {peer['status']}: "
                                f"{peer.get('reason') or 'differs from alluvium after the append'}")
    print(f"  append_own_row: {tables} tables appended, {agreed} peer reads agree")


def case_s3() -> None:
    endpoint = os.environ.get("ALLUVIUM_S3_ENDPOINT")
    if not endpoint:
        print("s3: SKIPPED (ALLUVIUM_S3_ENDPOINT is not set)")
        return
    print("alluvium writes to the S3 server, delta-rs reads it from there")
    import uuid

    bucket = os.environ.get("ALLUVIUM_S3_BUCKET", "alluvium")
    uri = f"s3://{bucket}/interop/{uuid.uuid4().hex}/all_types"
    options = {
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_ALLOW_HTTP": "true",
        "AWS_ACCESS_KEY_ID": os.environ.get("AWS_ACCESS_KEY_ID", "testkey"),
        "AWS_SECRET_ACCESS_KEY": os.environ.get("AWS_SECRET_ACCESS_KEY", "testsecret"),
        "AWS_REGION": os.environ.get("AWS_REGION", "us-east-1"),
        # delta-rs only reads here; the setting just lets it open the table without a lock.
        "AWS_S3_ALLOW_UNSAFE_RENAME": "true",
    }
    first = os.path.join(WORK, "s3_first.parquet")
    second = os.path.join(WORK, "s3_second.parquet")
    pq.write_table(all_types(0, 40), first)
    pq.write_table(all_types(500, 25), second)
    alluvium("create", uri, "--schema-from", first, "--partition-by", "part")
    alluvium("append", uri, first)
    alluvium("append", uri, second)
    alluvium("delete", uri, "--filter", "id < 7 OR part = 'x:y'")
    alluvium("checkpoint", uri)
    remote_versions_agree("s3", uri, options)


def remote_versions_agree(label: str, uri: str, options: dict, env: dict | None = None) -> None:
    """At every version of the remote table `uri`, delta-rs (QueryBuilder, which applies
    deletion vectors) reading it with `options` must read exactly what alluvium reads (run
    with `env`)."""
    from deltalake import DeltaTable, QueryBuilder

    latest = json.loads(alluvium("inspect", uri, "--json", env=env))["version"]
    for v in range(1, latest + 1):
        mine = ours(uri, v, env=env)
        what = f"{label} v{v} deltalake"
        try:
            dt = DeltaTable(uri, version=v, storage_options=options)
            reader = QueryBuilder().register("remote_t", dt).execute("SELECT * FROM remote_t")
            peer = oracle.digest(oracle._to_pyarrow_table(reader))
        except Exception as e:  # noqa: BLE001
            FAILURES.append(f"{what}: {e}")
            continue
        if (peer["rows"], peer["schema"], peer["rows_sha256"]) != (mine["rows"], mine["schema"], mine["rows_sha256"]):
            FAILURES.append(f"{what}: differs: ours rows={mine['rows']} sha={mine['rows_sha256'][:12]}; "
                            f"peer rows={peer['rows']} sha={peer['rows_sha256'][:12]}")
        else:
            print(f"  agree: {what} ({mine['rows']} rows)")


def case_azure() -> None:
    """Azure Blob Storage through Azurite (issue 30 item 3): alluvium creates a table with
    deletion vectors, four writer processes append to it at once, then DV DELETE,
    checkpoint and OPTIMIZE; the log must hold every append exactly once at contiguous
    versions, and at every version delta-rs must read exactly what alluvium reads."""
    endpoint = os.environ.get("ALLUVIUM_AZURE_ENDPOINT")
    if not endpoint:
        print("azure: SKIPPED (ALLUVIUM_AZURE_ENDPOINT is not set)")
        return
    print("alluvium writes to Azure Blob (Azurite) from racing processes, delta-rs reads it")
    import uuid

    container = os.environ.get("ALLUVIUM_AZURE_CONTAINER", "alluvium")
    uri = f"az://{container}/interop/{uuid.uuid4().hex}/raced"
    # The emulator's well-known development account (object_store and delta-rs both default
    # to its key when told to use the emulator).
    env = dict(os.environ, AZURE_STORAGE_USE_EMULATOR="true",
               AZURE_STORAGE_ACCOUNT_NAME="devstoreaccount1", AZURE_ALLOW_HTTP="true",
               AZURITE_BLOB_STORAGE_URL=endpoint)
    options = {"AZURE_STORAGE_USE_EMULATOR": "true", "AZURE_STORAGE_ACCOUNT_NAME": "devstoreaccount1",
               "AZURE_ALLOW_HTTP": "true"}
    # delta-rs, in this process, finds the emulator's address where alluvium does.
    os.environ["AZURITE_BLOB_STORAGE_URL"] = endpoint

    def run(*args: str) -> str:
        return alluvium(*args, env=env)

    writers, appends = 4, 5
    files = []
    for w in range(writers):
        for a in range(appends):
            f = os.path.join(WORK, f"az_{w}_{a}.parquet")
            base = (w * appends + a) * 10
            pq.write_table(pa.table({"id": pa.array(range(base, base + 10), pa.int64()),
                                     "writer": pa.array([w] * 10, pa.int64())}), f)
            files.append(f)
    run("create", uri, "--schema-from", files[0], "--property", "delta.enableDeletionVectors=true")
    # Each writer process appends its files one after another; the four race for versions.
    procs = []
    for w in range(writers):
        mine = files[w * appends:(w + 1) * appends]
        cmd = " && ".join(shlex.join([BIN, "append", uri, f]) for f in mine)
        procs.append(subprocess.Popen(["bash", "-c", cmd], env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True))
    for p in procs:
        out, err = p.communicate()
        if p.returncode != 0:
            FAILURES.append(f"azure racing writer failed: {err.strip()}")
            return
    info = json.loads(run("inspect", uri, "--json"))
    want_version = writers * appends
    if info["version"] != want_version:
        FAILURES.append(f"azure: {writers}x{appends} racing appends left version {info['version']}, "
                        f"not {want_version} (lost or doubled commits)")
    count = int(run("count", uri).strip())
    if count != writers * appends * 10:
        FAILURES.append(f"azure: {count} rows after the racing appends, not {writers * appends * 10}")
    else:
        print(f"  agree: azure racing appends: versions 1..{want_version}, {count} rows, each once")
    deleted = run("delete", uri, "--filter", "id % 7 = 3")
    if "deletion vectors" not in deleted:
        FAILURES.append(f"azure: the DELETE did not use deletion vectors: {deleted.strip()}")
    run("checkpoint", uri)
    run("optimize", uri)
    remote_versions_agree("azure", uri, options, env=env)


def case_no_preconditions() -> None:
    """A store that ignores preconditions (tests/interop/s3_no_preconditions.py: an S3 API
    server dropping If-None-Match, as the GCS emulator on PyPI and some S3-compatible
    servers do): the capability probe must find it out, and a write must be refused with a
    one-line message that says why, leaving nothing behind; single-writer mode, asked for
    explicitly, writes."""
    endpoint = os.environ.get("ALLUVIUM_S3_NOPRE_ENDPOINT")
    if not endpoint:
        print("no_preconditions: SKIPPED (ALLUVIUM_S3_NOPRE_ENDPOINT is not set)")
        return
    print("a store without working preconditions is found by the probe and refused for writes")
    import uuid

    import boto3

    bucket = os.environ.get("ALLUVIUM_S3_NOPRE_BUCKET", "loose")
    prefix = f"nopre/{uuid.uuid4().hex}"
    uri = f"s3://{bucket}/{prefix}"
    creds = {"AWS_ACCESS_KEY_ID": os.environ.get("AWS_ACCESS_KEY_ID", "testkey"),
             "AWS_SECRET_ACCESS_KEY": os.environ.get("AWS_SECRET_ACCESS_KEY", "testsecret"),
             "AWS_REGION": os.environ.get("AWS_REGION", "us-east-1")}
    env = dict(os.environ, AWS_ENDPOINT_URL=endpoint, AWS_ALLOW_HTTP="true", **creds)
    env.pop("ALLUVIUM_STORAGE_OPTIONS", None)
    s3 = boto3.client("s3", endpoint_url=endpoint, region_name=creds["AWS_REGION"],
                      aws_access_key_id=creds["AWS_ACCESS_KEY_ID"],
                      aws_secret_access_key=creds["AWS_SECRET_ACCESS_KEY"])
    first = os.path.join(WORK, "nopre.parquet")
    pq.write_table(pa.table({"id": pa.array(range(5), pa.int64())}), first)

    def run(extra_env: dict, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([BIN, *args], capture_output=True, text=True, env=dict(env, **extra_env))

    refused = run({}, "create", uri, "--schema-from", first)
    left = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket, Prefix=prefix).get("Contents", [])]
    message = refused.stderr.strip()
    if refused.returncode == 0:
        FAILURES.append("no_preconditions: create succeeded on a store that ignores If-None-Match")
    elif "put-if-absent" not in message or "\n" in message or "nothing was written" not in message:
        FAILURES.append(f"no_preconditions: the refusal does not say why in one line: {message!r}")
    elif left:
        FAILURES.append(f"no_preconditions: the refused create left objects behind: {left}")
    else:
        print(f"  agree: refused, nothing written: {message}")
    single = {"ALLUVIUM_STORAGE_OPTIONS": "single_writer=true"}
    for args in (("create", uri, "--schema-from", first), ("append", uri, first)):
        r = run(single, *args)
        if r.returncode != 0:
            FAILURES.append(f"no_preconditions: {args[0]} in single-writer mode failed: {r.stderr.strip()}")
            return
    count = run(single, "count", uri)
    if count.returncode != 0 or count.stdout.strip() != "5":
        FAILURES.append(f"no_preconditions: single-writer table reads {count.stdout.strip()!r} {count.stderr.strip()}")
    else:
        print("  agree: single-writer mode, asked for, creates and appends (5 rows)")


def age_log(table: str, upto: int, days: float) -> None:
    """Dates commits 0..=upto (and every data file) `days` back, in version order (one
    second apart, so commit times stay monotonic), as if written long ago."""
    base = time.time() - days * 86400
    log = os.path.join(table, "_delta_log")
    for f in log_files(table):
        if f.endswith(".json") and f[:20].isdigit() and int(f[:20]) <= upto:
            t = base + int(f[:20])
            os.utime(os.path.join(log, f), (t, t))
    for dirpath, dirnames, filenames in os.walk(table):
        dirnames[:] = [d for d in dirnames if d != "_delta_log"]
        for f in filenames:
            if f.endswith(".parquet"):
                os.utime(os.path.join(dirpath, f), (base, base))


def case_optimize_vacuum() -> None:
    print("alluvium OPTIMIZE and VACUUM, peers read every retained version")
    table = os.path.join(WORK, "maintained")
    first = os.path.join(WORK, "mv_first.parquet")
    pq.write_table(all_types(0, 9), first)
    alluvium("create", table, "--schema-from", first, "--partition-by", "part")
    for i in range(6):  # many small files per partition
        chunk = os.path.join(WORK, f"mv_chunk_{i}.parquet")
        pq.write_table(all_types(i * 100, 9 + i), chunk)
        alluvium("append", table, chunk)
    alluvium("delete", table, "--filter", "id IN (1, 102, 203) OR part = 'R&D'")
    before = json.loads(alluvium("inspect", table, "--json"))["version"]
    expected = {v: ours(table, v) for v in range(1, before + 1)}
    summary = json.loads(alluvium("optimize", table, "--json"))
    if summary["files_removed"] <= summary["files_added"]:
        FAILURES.append(f"optimize_vacuum: OPTIMIZE did not compact: {summary}")
    optimized = json.loads(alluvium("inspect", table, "--json"))["version"]
    for v in range(1, optimized + 1):
        mine = ours(table, v)
        if mine["rows_sha256"] != expected[min(v, before)]["rows_sha256"]:
            FAILURES.append(f"optimize_vacuum: rows at v{v} changed by OPTIMIZE")
        compare("after OPTIMIZE", table, v, mine=mine)
    # Z-order over a string, a timestamp and a double column: rows unchanged again.
    alluvium("optimize", table, "--zorder", "str,ts,d")
    mine = ours(table, None)
    if mine["rows_sha256"] != expected[before]["rows_sha256"]:
        FAILURES.append("optimize_vacuum: rows changed by Z-order")
    compare("after Z-order", table, None, mine=mine)
    # Everything up to the DELETE is 10 days old: a VACUUM at the default 7-day retention
    # may delete the files only versions before it read, and must keep the rest.
    age_log(table, before, 10)
    dry = json.loads(alluvium("vacuum", table, "--dry-run", "--json"))
    planned = dry["metrics"]["numDeletedFiles"]
    if len(dry["deleted"]) != planned:
        FAILURES.append(f"optimize_vacuum: the dry run lists {len(dry['deleted'])} files but counts {planned}")
    done = json.loads(alluvium("vacuum", table, "--json"))["metrics"]["numDeletedFiles"]
    if planned == 0 or done != planned:
        FAILURES.append(f"optimize_vacuum: VACUUM planned {planned} and deleted {done} files")
    latest = json.loads(alluvium("inspect", table, "--json"))["version"]
    for v in range(before, latest + 1):  # the retained versions
        mine = ours(table, v)
        if mine["rows_sha256"] != expected[before]["rows_sha256"]:
            FAILURES.append(f"optimize_vacuum: alluvium reads v{v} differently after VACUUM")
        compare("after VACUUM", table, v, mine=mine)
    try:  # outside the window: its removed files are gone, so reading it must fail
        ours(table, before - 1)
        FAILURES.append(f"optimize_vacuum: v{before - 1} (outside the retention) still reads after VACUUM")
    except RuntimeError as e:
        print(f"  expected: v{before - 1} is no longer readable: {str(e)[:100]}")


def case_alluvium_restore() -> None:
    print("alluvium RESTORE, peers read")
    table = os.path.join(WORK, "alluvium_restore")
    first = os.path.join(WORK, "restore_first.parquet")
    pq.write_table(all_types(0, 40), first)
    alluvium("create", table, "--schema-from", first, "--partition-by", "part")
    alluvium("append", table, first)                                   # v1
    second = os.path.join(WORK, "restore_second.parquet")
    pq.write_table(all_types(100, 40), second)
    alluvium("append", table, second)                                  # v2
    alluvium("delete", table, "--filter", "id < 110 AND id > 5")      # v3 (copy-on-write)
    alluvium("alter", table, "--set-property", "delta.enableDeletionVectors=true")  # v4
    alluvium("delete", table, "--filter", "id = 120 OR id = 3")       # v5 (deletion vectors)
    alluvium("overwrite", table, first)                                # v6
    for target in (5, 2):
        expected = ours(table, target)
        report = json.loads(alluvium("restore", table, "--version", str(target), "--json"))
        restored = report["version"]
        mine = ours(table, None)
        if mine["rows_sha256"] != expected["rows_sha256"]:
            FAILURES.append(f"alluvium_restore: version {restored} does not hold version {target}'s rows")
        # polars 2.1 applies no deletion vector to files under percent-encoded partition
        # directories (it reads version 5 itself, not restored, with the deleted rows).
        compare(f"alluvium_restore to v{target}", table, restored, mine=mine,
                engines=["deltalake", "duckdb", "polars"],
                known={"polars": "polars ignores deletion vectors of files in escaped partition directories"})
    proto = protocol_of(table)
    if proto.get("minReaderVersion") != 3:
        FAILURES.append(f"alluvium_restore: RESTORE downgraded the protocol: {proto}")


def case_alluvium_replace() -> None:
    print("alluvium CREATE OR REPLACE TABLE, peers read both sides of it")
    table = os.path.join(WORK, "alluvium_replace")
    first = os.path.join(WORK, "replace_first.parquet")
    pq.write_table(all_types(0, 40), first)
    alluvium("create", table, "--schema-from", first, "--partition-by", "part",
             "--property", "delta.enableChangeDataFeed=true")
    alluvium("append", table, first)                                   # v1
    alluvium("delete", table, "--filter", "id < 10")                   # v2 (copy-on-write)
    second = os.path.join(WORK, "replace_second.parquet")
    n = 30
    pq.write_table(pa.table({
        "name": pa.array([f"n{i}" if i % 7 else None for i in range(n)], pa.string()),
        "score": pa.array([i * 0.5 for i in range(n)], pa.float64()),
        "bucket": pa.array([f"b{i % 3}" for i in range(n)], pa.string()),
    }), second)
    alluvium("create", table, "--schema-from", second, "--partition-by", "bucket", "--replace",
             "--property", "delta.enableDeletionVectors=true")          # v3
    alluvium("append", table, second)                                  # v4
    alluvium("delete", table, "--filter", "score < 3")                 # v5 (deletion vectors)
    proto = protocol_of(table)
    if "deletionVectors" not in proto.get("readerFeatures", []) or \
            "changeDataFeed" not in proto.get("writerFeatures", []):
        FAILURES.append(f"alluvium_replace: the protocol lost or lacks a feature: {proto}")
    # Before the replace (time travel), the empty replaced table, after the append and
    # after the deletion-vector DELETE.
    for v in (2, 3, 4, 5):
        compare("alluvium_replace", table, v)
    compare("alluvium_replace", table, None, engines=["polars"])


def case_alluvium_convert() -> None:
    print("alluvium CONVERT TO DELTA of a Hive-partitioned Parquet directory, peers read")
    import pyarrow.dataset as ds
    table = os.path.join(WORK, "alluvium_convert")
    data = all_types(0, 60)
    data = data.drop_columns(["part"]).append_column(
        "part", pa.array([["x y", "a=b", "c/d", None][i % 4] for i in range(60)], pa.string()))
    ds.write_dataset(data, table, format="parquet", partitioning=["part"],
                     partitioning_flavor="hive", existing_data_behavior="overwrite_or_ignore")
    with open(os.path.join(table, "_SUCCESS"), "w"):
        pass
    before = sorted(os.listdir(table))
    out = alluvium("convert", table, "--partition-by", "part", "string", "--json")
    report = json.loads(out)
    if report["version"] != 0 or report["rows"] != 60:
        FAILURES.append(f"alluvium_convert: unexpected report {report}")
    if sorted(f for f in os.listdir(table) if f != "_delta_log") != before:
        FAILURES.append("alluvium_convert: CONVERT changed the directory's files")
    mine = ours(table, None)
    if mine["rows"] != 60:
        FAILURES.append(f"alluvium_convert: alluvium reads {mine['rows']} rows, pyarrow wrote 60")
    compare("alluvium_convert", table, 0, mine=mine, engines=["deltalake", "duckdb", "polars"])


def case_alluvium_columns() -> None:
    print("alluvium ADD / RENAME / DROP COLUMN and type widening, peers read")
    # Known limits of two peers, each reproduced on a minimal table the other peers read
    # correctly: polars 2.1 refuses column mapping (reader 2); DuckDB's delta extension
    # reads a partition column as NULL once a data column was renamed and another dropped
    # (delta-rs' kernel-based reader gets it right).
    polars_cm = {"polars": "polars refuses column mapping (reader version 2)"}
    table = os.path.join(WORK, "alluvium_columns")
    first = os.path.join(WORK, "columns_first.parquet")
    base = pa.table({
        "id": pa.array(range(30), pa.int32()),
        "name": pa.array([f"n{i}" for i in range(30)], pa.string()),
        "amount": pa.array([i / 4 for i in range(30)], pa.float64()),
        "region": pa.array(["EU", "US", "APAC"] * 10, pa.string()),
    })
    pq.write_table(base, first)
    alluvium("create", table, "--schema-from", first, "--partition-by", "region")
    alluvium("append", table, first)
    alluvium("alter", table, "--add-column", "note string COMMENT 'free text'")
    wider = os.path.join(WORK, "columns_wider.parquet")
    pq.write_table(base.slice(0, 5).append_column("note", pa.array(["x"] * 5, pa.string())), wider)
    alluvium("append", table, wider)
    added = json.loads(alluvium("inspect", table, "--json"))["version"]
    alluvium("alter", table, "--rename-column", "region", "area")
    alluvium("alter", table, "--rename-column", "name", "label")
    proto = protocol_of(table)
    if (proto.get("minReaderVersion"), proto.get("minWriterVersion")) != (2, 5):
        FAILURES.append(f"alluvium_columns: rename did not upgrade to column mapping 2/5: {proto}")
    renamed = json.loads(alluvium("inspect", table, "--json"))["version"]
    alluvium("alter", table, "--drop-column", "amount")
    dropped = renamed + 1
    alluvium("alter", table, "--change-type", "id", "long")
    widened = dropped + 1
    header = alluvium("scan", table, "--format", "csv", "--limit", "1").splitlines()[0]
    if header != "id,label,area,note":
        FAILURES.append(f"alluvium_columns: columns are {header}")
    for v in range(1, added + 1):
        compare("alluvium_columns", table, v, engines=["deltalake", "duckdb", "polars"])
    for v in range(added + 1, renamed + 1):
        compare("alluvium_columns", table, v, engines=["deltalake", "duckdb", "polars"],
                known=polars_cm)
    after_drop = dict(polars_cm, duckdb="DuckDB reads the partition column as NULL after a "
                      "data column was renamed and another dropped")
    compare("alluvium_columns", table, dropped, engines=["deltalake", "duckdb", "polars"],
            known=after_drop)
    compare("alluvium_columns (type widening)", table, widened, unsupported_ok=True,
            engines=["deltalake", "duckdb", "polars"], known=after_drop)

    # Type widening on its own table (no column mapping): int -> long and float -> double,
    # old files read widened, new rows in the wide type.
    table = os.path.join(WORK, "alluvium_widening")
    narrow = pa.table({"id": pa.array(range(20), pa.int32()),
                       "x": pa.array([i / 8 for i in range(20)], pa.float32()),
                       "region": pa.array(["EU", "US"] * 10, pa.string())})
    path = os.path.join(WORK, "widening_narrow.parquet")
    pq.write_table(narrow, path)
    alluvium("create", table, "--schema-from", path, "--partition-by", "region")
    alluvium("append", table, path)
    alluvium("alter", table, "--change-type", "id", "long")
    alluvium("alter", table, "--change-type", "x", "double")
    wide = pa.table({"id": pa.array([2**40], pa.int64()), "x": pa.array([1e300], pa.float64()),
                     "region": pa.array(["EU"], pa.string())})
    path = os.path.join(WORK, "widening_wide.parquet")
    pq.write_table(wide, path)
    alluvium("append", table, path)
    latest = json.loads(alluvium("inspect", table, "--json"))["version"]
    for v in range(latest - 2, latest + 1):
        compare("alluvium_widening", table, v, unsupported_ok=True,
                engines=["deltalake", "duckdb", "polars"],
                known={"polars": "polars refuses the typeWidening reader feature"})

    # A dropped column's name used again: the new column's physical name is fresh, so old
    # rows read NULL in it (PROTOCOL.md "Column Mapping": physical paths unique across the
    # table's history).
    table = os.path.join(WORK, "alluvium_columns_reuse")
    alluvium("create", table, "--schema-from", first, "--partition-by", "region")
    alluvium("append", table, first)
    alluvium("alter", table, "--drop-column", "amount")
    alluvium("alter", table, "--add-column", "amount double")
    alluvium("append", table, first)
    latest = json.loads(alluvium("inspect", table, "--json"))["version"]
    mine = ours(table, None)
    if mine["rows"] != 60:
        FAILURES.append(f"alluvium_columns_reuse: {mine['rows']} rows, not 60")
    nulls = alluvium("count", table, "--filter", "amount IS NULL").strip()
    if nulls != "30":
        FAILURES.append(f"alluvium_columns_reuse: {nulls} rows have no amount, not the 30 old ones")
    for v in range(latest - 2, latest + 1):
        compare("alluvium_columns_reuse", table, v, engines=["deltalake", "duckdb", "polars"],
                known=polars_cm)


def case_alluvium_dv() -> None:
    print("alluvium writes deletion vectors, peers read")
    table = os.path.join(WORK, "alluvium_dv")
    data = []
    for f in range(2):
        path = os.path.join(WORK, f"dv{f}.parquet")
        ids = list(range(f * 500, (f + 1) * 500))
        pq.write_table(pa.table({
            "id": pa.array(ids, pa.int64()),
            "key": pa.array([f"k{i:09d}" for i in ids], pa.string()),
            "value": pa.array([(i * 7919 % 1000) / 10.0 for i in ids], pa.float64()),
        }), path)
        data.append(path)
    alluvium("create", table, "--schema-from", data[0])
    for path in data:
        alluvium("append", table, path)
    alluvium("alter", table, "--set-property", "delta.enableDeletionVectors=true")
    proto = protocol_of(table)
    if proto.get("minReaderVersion") != 3 or "deletionVectors" not in (proto.get("readerFeatures") or []):
        FAILURES.append(f"alluvium_dv: alter did not upgrade the protocol: {proto}")
    scattered = " OR ".join(f"id = {i}" for i in range(3, 1000, 97))
    alluvium("delete", table, "--filter", scattered)
    alluvium("delete", table, "--filter", "id = 250")
    alluvium("delete", table, "--filter", "id >= 10 AND id < 20")
    # replaceWhere on a DV table: the old rows it matches are deleted with DVs.
    repl = os.path.join(WORK, "dv_replace.parquet")
    pq.write_table(pa.table({
        "id": pa.array([600, 601], pa.int64()),
        "key": pa.array(["replaced", "replaced"], pa.string()),
        "value": pa.array([1.5, 2.5], pa.float64()),
    }), repl)
    alluvium("overwrite", table, repl, "--filter", "id >= 600 AND id < 610")
    # 1000 rows - 11 scattered - 1 - 10, then 10 replaced by 2.
    if ours(table, None)["rows"] != 970:
        FAILURES.append(f"alluvium_dv: replaceWhere left {ours(table, None)['rows']} rows, not 970")
    # Many rows of one file: a DV too big to go inline, so the table mixes DV files (`u`)
    # with inline DVs (`i`, the small deletes above).
    alluvium("delete", table, "--filter", "id % 3 = 0 AND id >= 700")
    dvs = 0
    kinds = set()
    for name in log_files(table):
        if not name.endswith(".json"):
            continue
        with open(os.path.join(table, "_delta_log", name)) as fh:
            for line in fh:
                a = json.loads(line).get("add")
                if a and a.get("deletionVector"):
                    dvs += 1
                    kinds.add(a["deletionVector"]["storageType"])
    if dvs < 4:
        FAILURES.append(f"alluvium_dv: expected adds with deletion vectors, found {dvs}")
    if kinds != {"i", "u"}:
        FAILURES.append(f"alluvium_dv (dv_inline): expected inline and file DVs, found {sorted(kinds)}")
    latest = json.loads(alluvium("inspect", table, "--json"))["version"]
    for v in range(latest - 4, latest + 1):
        compare("alluvium_dv", table, v, engines=["deltalake", "duckdb", "polars"])


def case_alluvium_merge() -> None:
    print("alluvium UPDATE and MERGE with and without deletion vectors, peers read")
    for flavour, dv in (("dv", True), ("cow", False)):
        table = os.path.join(WORK, f"alluvium_merge_{flavour}")
        ids = list(range(0, 1000))
        values = [(i * 7919 % 1000) / 10.0 for i in ids]
        for f in range(2):
            path = os.path.join(WORK, f"m{flavour}{f}.parquet")
            part = slice(f * 500, (f + 1) * 500)
            pq.write_table(pa.table({
                "id": pa.array(ids[part], pa.int64()),
                "key": pa.array([f"k{i:09d}" for i in ids[part]], pa.string()),
                "value": pa.array(values[part], pa.float64()),
            }), path)
            if f == 0:
                args = ["create", table, "--schema-from", path]
                if dv:
                    args += ["--property", "delta.enableDeletionVectors=true"]
                alluvium(*args)
            alluvium("append", table, path)
        alluvium("update", table, "--set", "value = value + 1, key = 'u'", "--filter", "id % 100 = 0")
        src_ids = merge_upsert(table, os.path.join(WORK, f"msrc{flavour}.parquet"))
        # The expected rows, computed here independently of any engine.
        rows = {i: (f"k{i:09d}", values[i]) for i in ids}
        for i in ids:
            if i % 100 == 0:
                rows[i] = ("u", values[i] + 1)
        for i in src_ids:
            if i % 60 == 0 and i in rows:
                rows.pop(i)  # matched D
            else:
                rows[i] = ("m", float(i))  # matched U, or not matched (inserted whatever op)
        expected = pa.table({
            "id": pa.array(sorted(rows), pa.int64()),
            "key": pa.array([rows[i][0] for i in sorted(rows)], pa.string()),
            "value": pa.array([rows[i][1] for i in sorted(rows)], pa.float64()),
        })
        mine = ours(table, None)
        want = oracle.digest(expected)
        if (mine["rows"], mine["rows_sha256"]) != (want["rows"], want["rows_sha256"]):
            FAILURES.append(f"alluvium_merge_{flavour}: ours rows={mine['rows']} differ from the expected {want['rows']}")
        has_dv = False
        for name in log_files(table):
            if name.endswith(".json"):
                with open(os.path.join(table, "_delta_log", name)) as fh:
                    has_dv |= any((json.loads(line).get("add") or {}).get("deletionVector") for line in fh)
        if has_dv != dv:
            FAILURES.append(f"alluvium_merge_{flavour}: deletion vectors written: {has_dv}, expected {dv}")
        latest = json.loads(alluvium("inspect", table, "--json"))["version"]
        for v in (latest - 1, latest):
            compare(f"alluvium_merge_{flavour}", table, v, engines=["deltalake", "duckdb", "polars"])
    # A Spark-written table with deletion vectors takes alluvium's UPDATE and MERGE.
    spark = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "conformance",
                         "tables", "table-with-dv-small", "delta")
    table = os.path.join(WORK, "spark_dv_merge")
    shutil.copytree(spark, table)
    alluvium("update", table, "--set", "value = value * 10", "--filter", "value % 2 = 0")
    src = os.path.join(WORK, "spark_src.parquet")
    pq.write_table(pa.table({"value": pa.array([3, 100], pa.int32())}), src)
    alluvium("merge", table, src, "--on", "t.value = s.value",
             "--when", "MATCHED THEN DELETE", "--when", "NOT MATCHED THEN INSERT *")
    latest = json.loads(alluvium("inspect", table, "--json"))["version"]
    for v in (latest - 1, latest):
        compare("spark_dv_merge", table, v, engines=["deltalake", "duckdb", "polars"])


def tracked_scan(table: str) -> dict:
    """id -> (row_id, row_commit_version), as `alluvium scan --row-tracking` reads them."""
    out = os.path.join(WORK, "rt_scan.parquet")
    alluvium("scan", table, "--columns", "id", "--row-tracking", "--format", "parquet", "--output", out)
    t = pq.read_table(out).to_pydict()
    return {i: (r, c) for i, r, c in zip(t["id"], t["row_id"], t["row_commit_version"])}


def delta_row_ids(table: str) -> dict:
    """id -> (row_id, row_commit_version) computed here from the log and the data files as
    PROTOCOL.md "Reader Requirements for Row Tracking" defines them: the materialised
    column's value when not null, else baseRowId + the row's index in the file (and
    defaultRowCommitVersion). Replays the JSON commits; no deletion vectors expected."""
    live, conf = {}, {}
    for name in log_files(table):
        if not name.endswith(".json"):
            continue
        with open(os.path.join(table, "_delta_log", name)) as fh:
            for line in fh:
                a = json.loads(line)
                if "metaData" in a:
                    conf = a["metaData"]["configuration"]
                if "add" in a:
                    live[a["add"]["path"]] = a["add"]
                if "remove" in a:
                    live.pop(a["remove"]["path"], None)
    rid_col = conf["delta.rowTracking.materializedRowIdColumnName"]
    cv_col = conf["delta.rowTracking.materializedRowCommitVersionColumnName"]
    out = {}
    for path, add in live.items():
        if add.get("deletionVector"):
            raise RuntimeError(f"{path} has a deletion vector")
        t = pq.read_table(os.path.join(table, path)).to_pydict()
        n = len(t["id"])
        rids = t.get(rid_col, [None] * n)
        cvs = t.get(cv_col, [None] * n)
        for k in range(n):
            rid = rids[k] if rids[k] is not None else add["baseRowId"] + k
            cv = cvs[k] if cvs[k] is not None else add["defaultRowCommitVersion"]
            out[t["id"][k]] = (rid, cv)
    return out


def case_alluvium_row_tracking() -> None:
    print("alluvium row tracking through OPTIMIZE and MERGE, peers read, row ids preserved")
    table = os.path.join(WORK, "alluvium_row_tracking")
    ids = list(range(0, 1000))
    for f in range(4):
        path = os.path.join(WORK, f"rt{f}.parquet")
        part = slice(f * 250, (f + 1) * 250)
        pq.write_table(pa.table({
            "id": pa.array(ids[part], pa.int64()),
            "key": pa.array([f"k{i:09d}" for i in ids[part]], pa.string()),
            "value": pa.array([i / 10.0 for i in ids[part]], pa.float64()),
        }), path)
        if f == 0:
            alluvium("create", table, "--schema-from", path, "--property", "delta.enableRowTracking=true")
        alluvium("append", table, path)
    before = tracked_scan(table)
    if sorted(r for r, _ in before.values()) != list(range(1000)):
        FAILURES.append("row_tracking: appended rows do not have the row ids 0..999")
    alluvium("optimize", table)
    optimized = json.loads(alluvium("inspect", table, "--json"))["version"]
    after_opt = tracked_scan(table)
    if after_opt != before:
        FAILURES.append("row_tracking: OPTIMIZE changed row ids or commit versions")
    src_ids = merge_upsert(table, os.path.join(WORK, "rtsrc.parquet"))
    merged = json.loads(alluvium("inspect", table, "--json"))["version"]
    after = tracked_scan(table)
    for i, (rid, cv) in after.items():
        if i in before and i in src_ids:  # updated: same id, the MERGE's version
            want = (before[i][0], merged)
        elif i in before:  # copied
            want = before[i]
        else:  # inserted: a fresh id above everything handed out before
            want = (rid if rid >= 1000 else None, merged)
        if (rid, cv) != want:
            FAILURES.append(f"row_tracking: id {i} has row id {rid} version {cv}, expected {want}")
            break
    if len({r for r, _ in after.values()}) != len(after):
        FAILURES.append("row_tracking: row ids are not unique after MERGE")
    for v, mine in ((optimized, None), (merged, after)):
        delta = delta_row_ids(table) if v == merged else None
        if delta is not None and delta != mine:
            FAILURES.append("row_tracking: the row ids Delta defines (log + materialised columns) "
                            "differ from what alluvium scans")
        elif delta is not None:
            print(f"  agree: row ids from the log and files ({len(delta)} rows)")
        compare("alluvium_row_tracking", table, v, engines=["deltalake", "duckdb", "polars"])


def change_rows(t: pa.Table, columns: list[str]) -> list[tuple]:
    """The change rows of a change-feed result as a sorted multiset of
    (columns..., _change_type, _commit_version), whatever the engine's integer type."""
    d = t.to_pydict()
    out = [tuple(d[c][i] for c in columns) + (d["_change_type"][i], int(d["_commit_version"][i]))
           for i in range(t.num_rows)]
    return sorted(out, key=repr)


def deltars_changes(table: str, columns: list[str]) -> list[tuple]:
    from deltalake import DeltaTable
    return change_rows(pa.table(DeltaTable(table).load_cdf(starting_version=0)), columns)


def alluvium_has_changes() -> bool:
    return "changes" in subprocess.run([BIN, "--help"], capture_output=True, text=True).stdout


def alluvium_changes(table: str, columns: list[str]) -> list[tuple]:
    out = os.path.join(WORK, "changes.parquet")
    alluvium("changes", table, "--from", "0", "--format", "parquet", "--output", out)
    return change_rows(pq.read_table(out), columns)


def same_changes(what: str, got: list[tuple], want: list[tuple]) -> None:
    if got == want:
        print(f"  agree: {what} ({len(want)} change rows)")
        return
    missing = [r for r in want if r not in got][:3]
    extra = [r for r in got if r not in want][:3]
    FAILURES.append(f"{what}: {len(got)} change rows, expected {len(want)}; missing e.g. {missing}, extra e.g. {extra}")


def case_alluvium_cdf() -> None:
    print("alluvium writes a change data feed (copy-on-write); delta-rs load_cdf reads it")
    cols = ["id", "key", "value"]
    table = os.path.join(WORK, "alluvium_cdf")
    rows: dict[int, tuple[str, float]] = {}
    want: list[tuple] = []
    for f in range(2):
        path = os.path.join(WORK, f"cdf{f}.parquet")
        ids = list(range(f * 500, (f + 1) * 500))
        pq.write_table(pa.table({
            "id": pa.array(ids, pa.int64()),
            "key": pa.array([f"k{i:09d}" for i in ids], pa.string()),
            "value": pa.array([(i * 7919 % 1000) / 10.0 for i in ids], pa.float64()),
        }), path)
        if f == 0:
            alluvium("create", table, "--schema-from", path,
                     "--property", "delta.enableChangeDataFeed=true")
        alluvium("append", table, path)
        for i in ids:
            rows[i] = (f"k{i:09d}", (i * 7919 % 1000) / 10.0)
            want.append((i, *rows[i], "insert", f + 1))
    alluvium("update", table, "--set", "value = value + 1, key = 'u'", "--filter", "id % 100 = 0")
    for i in sorted(rows):
        if i % 100 == 0:
            want.append((i, *rows[i], "update_preimage", 3))
            rows[i] = ("u", rows[i][1] + 1)
            want.append((i, *rows[i], "update_postimage", 3))
    alluvium("delete", table, "--filter", "id % 7 = 0 AND id < 300")
    for i in sorted(rows):
        if i % 7 == 0 and i < 300:
            want.append((i, *rows.pop(i), "delete", 4))
    src_ids = merge_upsert(table, os.path.join(WORK, "cdfsrc.parquet"))
    for i in src_ids:
        if i in rows and i % 60 == 0:
            want.append((i, *rows.pop(i), "delete", 5))
        elif i in rows:
            want.append((i, *rows[i], "update_preimage", 5))
            rows[i] = ("m", float(i))
            want.append((i, *rows[i], "update_postimage", 5))
        else:
            rows[i] = ("m", float(i))
            want.append((i, *rows[i], "insert", 5))
    want = sorted(want, key=repr)
    cdc_versions = set()
    for name in log_files(table):
        if name.endswith(".json"):
            with open(os.path.join(table, "_delta_log", name)) as fh:
                if any("cdc" in json.loads(line) for line in fh):
                    cdc_versions.add(int(name.split(".")[0]))
    if cdc_versions != {3, 4, 5}:
        FAILURES.append(f"alluvium_cdf: cdc files in versions {sorted(cdc_versions)}, expected 3, 4, 5")
    same_changes("alluvium_cdf deltalake load_cdf", deltars_changes(table, cols), want)
    if not alluvium_has_changes():
        print("  SKIPPED: this alluvium binary has no `changes` command (reading the feed)")
        return
    same_changes("alluvium_cdf alluvium changes", alluvium_changes(table, cols), want)
    # A delta-rs-written change feed, read by alluvium.
    from deltalake import DeltaTable, write_deltalake
    table = os.path.join(WORK, "deltars_cdf")
    first = pa.table({"id": pa.array(range(100), pa.int64()),
                      "key": pa.array([f"k{i}" for i in range(100)], pa.string()),
                      "value": pa.array([float(i) for i in range(100)], pa.float64())})
    write_deltalake(table, first, configuration={"delta.enableChangeDataFeed": "true"})
    write_deltalake(table, first.slice(0, 10).set_column(0, "id", pa.array(range(100, 110), pa.int64())),
                    mode="append")
    dt = DeltaTable(table)
    dt.update(predicate="id % 10 = 0", updates={"value": "value + 1"})
    dt.delete("id % 9 = 1")
    src_t = pa.table({"id": pa.array([5, 6, 500], pa.int64()),
                      "key": pa.array(["m", "m", "m"], pa.string()),
                      "value": pa.array([-1.0, -2.0, -3.0], pa.float64())})
    (DeltaTable(table).merge(src_t, "t.id = s.id", source_alias="s", target_alias="t")
     .when_matched_update_all().when_not_matched_insert_all().execute())
    same_changes("deltars_cdf alluvium changes", alluvium_changes(table, cols),
                 deltars_changes(table, cols))


def case_column_rules() -> None:
    """Column rules (SPEC §28): alluvium appends to Databricks' GENERATED ALWAYS identity
    table and to DBR 8.1's generated-column table, generating the values; peers read the
    results identically; the identity high-water mark is in the commit's schema; a CHECK
    constraint added by `alter` refuses a violating append without changing the table."""
    print("column rules: identity and generated values, CHECK constraints")
    ident = os.path.join(WORK, "rules", "identity")
    shutil.copytree(os.path.join(CONFORMANCE_TABLES, "issue-2152", "delta"), ident)
    csv = os.path.join(WORK, "rules", "keys.csv")
    with open(csv, "w") as fh:
        fh.write("TXT_DateKey\n" + "".join(f"k{i}\n" for i in range(5)))
    alluvium("append", ident, csv)
    alluvium("append", ident, csv)
    mine = ours(ident, None)
    compare("column_rules identity", ident, None, mine=mine)
    with open(os.path.join(ident, "_delta_log", f"{2:020}.json")) as fh:
        schemas = [json.loads(line)["metaData"]["schemaString"] for line in fh if '"metaData"' in line]
    if not schemas or '"delta.identity.highWaterMark":10' not in schemas[0]:
        FAILURES.append(f"column_rules identity: version 2 does not record highWaterMark 10: {schemas}")
    gen = os.path.join(WORK, "rules", "generated")
    shutil.copytree(os.path.join(CONFORMANCE_TABLES, "dbr_8_1_generated_columns", "delta"), gen)
    csv = os.path.join(WORK, "rules", "c1.csv")
    with open(csv, "w") as fh:
        fh.write("c1\n" + "".join(f"{i}\n" for i in range(10)))
    alluvium("append", gen, csv)
    alluvium("alter", gen, "--add-constraint", "c1_small", "c1 < 100")
    bad = os.path.join(WORK, "rules", "bad.csv")
    with open(bad, "w") as fh:
        fh.write("c1\n5\n500\n")
    r = subprocess.run([BIN, "append", gen, bad], capture_output=True, text=True)
    if r.returncode == 0 or "c1_small" not in r.stderr:
        FAILURES.append(f"column_rules: a CHECK violation was not refused: {r.stderr.strip()}")
    compare("column_rules generated", gen, None)


STATE_COLS = ["id", "region", "v", "note", "event_time", "seq"]
EPOCH_UTC = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


def state_events(n: int, rng, used: set, with_seq: bool) -> pa.Table:
    """`n` events over 12 composite keys (id 0..5 x region EU/US): event times jump back and
    forth (out of order, many equal so that `seq` decides), ~1/5 deletes. Without `seq`,
    every event time is odd and used once (no tie for the assigned seq to break); with it,
    even. Times span days (several `event_date` partitions); seqs are not in put order."""
    rows = {c: [] for c in ["id", "region", "v", "note", "event_time", "seq", "op"]}
    for i in range(n):
        while True:
            key = (rng.randrange(0, 6), rng.choice(["EU", "US"]))
            if with_seq:
                t, seq = 2 * rng.randrange(0, 20), rng.randrange(0, 50)
                fresh = (key, t, seq)
            else:
                t, seq = 2 * rng.randrange(0, 60) + 1, None
                fresh = ("no seq", t)
            # No two events of a key share (event_time, seq), and an event without seq shares
            # its time with no event: the order is total whatever seq the store assigns.
            if fresh not in used:
                used.add(fresh)
                break
        rows["id"].append(key[0])
        rows["region"].append(key[1])
        rows["v"].append(float(rng.randrange(0, 1000)))
        rows["note"].append(None if i % 7 == 0 else f"n{rng.randrange(0, 10**6)}")
        rows["event_time"].append(dt.datetime(2024, 3, 1, tzinfo=dt.timezone.utc)
                                  + dt.timedelta(days=t // 14, microseconds=t))
        rows["seq"].append(seq)
        rows["op"].append("DELETE" if rng.random() < 0.2 else "UPSERT")
    cols = {
        "id": pa.array(rows["id"], pa.int64()),
        "region": pa.array(rows["region"], pa.string()),
        "v": pa.array(rows["v"], pa.float64()),
        "note": pa.array(rows["note"], pa.string()),
        "event_time": pa.array(rows["event_time"], pa.timestamp("us", tz="UTC")),
    }
    if with_seq:
        cols["seq"] = pa.array(rows["seq"], pa.int64())
    cols["op"] = pa.array(rows["op"], pa.string())
    return pa.table(cols)


def state_fold(events: list[pa.Table]) -> dict:
    """The latest event per key by (event_time, seq), deletes dropped: key -> row."""
    best: dict = {}
    for t in events:
        for r in t.to_pylist():
            key = (r["id"], r["region"])
            order = (r["event_time"], r.get("seq") if r.get("seq") is not None else -1)
            if key not in best or order > best[key][0]:
                best[key] = (order, r)
    return {k: r for k, (o, r) in best.items() if r["op"] != "DELETE"}


def state_rows(rows: list[dict], ignore_seq: set) -> dict:
    """key -> (v, note, event_time in µs, seq); seq None for keys in `ignore_seq`."""
    out = {}
    for r in rows:
        key = (r["id"], r["region"])
        us = (r["event_time"] - EPOCH_UTC) // dt.timedelta(microseconds=1)
        out[key] = (r["v"], r["note"], us, None if key in ignore_seq else r.get("seq"))
    return out


def case_state_store() -> None:
    print("alluvium state store: DuckDB's window query over log/ equals state/")
    import random
    rng = random.Random(15)
    store = os.path.join(WORK, "state_store")
    used: set = set()
    put: list[pa.Table] = []
    con = oracle.duckdb_connect()
    window = ("SELECT id, region, v, note, event_time, seq FROM ("
              " SELECT *, row_number() OVER (PARTITION BY id, region"
              "  ORDER BY event_time DESC, seq DESC NULLS LAST) AS rn FROM delta_scan(?))"
              " WHERE rn = 1 AND coalesce(op, 'UPSERT') <> 'DELETE'")
    plan = [[(40, True)], [(30, True), (25, False)], [(30, True), (20, True)], [(15, False)]]
    for step, puts in enumerate(plan):
        for n, with_seq in puts:
            t = state_events(n, rng, used, with_seq)
            path = os.path.join(WORK, f"state_events{len(put)}.parquet")
            pq.write_table(t, path)
            if not put:
                alluvium("state", "init", store, "--key", "id,region", "--schema-from", path)
            alluvium("state", "put", store, path)
            put.append(t)
        alluvium("state", "sync", store)
        want = state_fold(put)
        # Keys whose latest event came without a seq: the store assigned one (SPEC §26), the
        # log's column is null there, so seq is not compared for them.
        no_seq = {k for k, r in want.items() if r.get("seq") is None}
        log_latest = state_rows(con.execute(window, [os.path.join(store, "log")]).fetch_arrow_table().to_pylist(), no_seq)
        state_duck = state_rows(con.execute(f"SELECT {', '.join(STATE_COLS)} FROM delta_scan(?)",
                                            [os.path.join(store, "state")]).fetch_arrow_table().to_pylist(), no_seq)
        model = state_rows([dict(r, seq=r.get("seq")) for r in want.values()], no_seq)
        what = f"state_store after sync {step + 1}"
        if log_latest != state_duck:
            FAILURES.append(f"{what}: DuckDB window over log/ ({len(log_latest)} keys) != state/ ({len(state_duck)} keys): "
                            f"{sorted(set(log_latest.items()) ^ set(state_duck.items()), key=repr)[:4]}")
        elif log_latest != model:
            FAILURES.append(f"{what}: DuckDB window over log/ != the fold computed here: "
                            f"{sorted(set(log_latest.items()) ^ set(model.items()), key=repr)[:4]}")
        else:
            print(f"  agree: {what}: window over log/ == state/ == fold ({len(model)} keys)")
    con.close()
    out = os.path.join(WORK, "state_scan.parquet")
    alluvium("state", "scan", store, "--format", "parquet", "--output", out)
    compare("state_store state/", os.path.join(store, "state"), None, mine=oracle.digest(pq.read_table(out)))


def case_iceberg() -> None:
    iceberg.case_iceberg(BIN, WORK, FAILURES)


def main() -> int:
    if os.path.exists(WORK):
        shutil.rmtree(WORK)
    os.makedirs(WORK)
    for case in (case_alluvium_writes, case_deltars_writes, case_deltars_dv_variant_type,
                 case_checkpoints, case_optimize_vacuum, case_alluvium_dv, case_spark_dv_tables,
                 case_alluvium_merge, case_alluvium_row_tracking, case_alluvium_cdf,
                 case_alluvium_clustered, case_column_rules, case_state_store,
                 case_append_own_row, case_alluvium_restore, case_alluvium_replace,
                 case_alluvium_convert,
                 case_alluvium_columns, case_iceberg):
        # INTEROP_ONLY=case_a,case_b runs only those cases (local runs).
        only = os.environ.get("INTEROP_ONLY")
        if only and case.__name__ not in only.split(","):
            continue
        try:
            case()
        except Exception as e:  # noqa: BLE001
            FAILURES.append(f"{case.__name__}: {e}")
    try:
        case_s3()
    except Exception as e:  # noqa: BLE001
        FAILURES.append(f"case_s3: {e}")
    try:
        case_azure()
    except Exception as e:  # noqa: BLE001
        FAILURES.append(f"case_azure: {e}")
    try:
        case_no_preconditions()
    except Exception as e:  # noqa: BLE001
        FAILURES.append(f"case_no_preconditions: {e}")
    if FAILURES:
        print("\nINTEROP FAILURES:")
        for f in FAILURES:
            print("  " + f)
        return 1
    print("\ninterop: every comparison agrees")
    return 0


if __name__ == "__main__":
    sys.exit(main())
