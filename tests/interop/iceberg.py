#!/usr/bin/env python3
"""Iceberg readers as oracles for `alluvium iceberg sync` (issue 31's proof, Python side).

  iceberg.py --self-test [WORKDIR] [--alluvium BIN]
                                            the reading half, on tables pyiceberg writes
  (imported by interop.py, which runs `case_iceberg` as its `iceberg` case)

The sync writes Iceberg v2 metadata beside the Delta log (`TABLE/metadata/vN.metadata.json`,
`version-hint.text` holding N, Avro manifest lists and manifests, deletion vectors as
position-delete Parquet files), one Iceberg snapshot per synced Delta version, its summary
carrying `delta-version` (a string) and `delta-timestamp`. Two independent Iceberg readers
read every snapshot of the latest metadata file:

  pyiceberg 0.12   `StaticTable.from_metadata(json).scan(snapshot_id=S).to_arrow()`
  DuckDB 1.4.4     `iceberg_scan(json, snapshot_from_id => S)`, the `iceberg` and `avro`
                   extensions loaded from the duckdb-ext-iceberg / duckdb-ext-avro wheels
                   with autoinstall and autoload off (avro first: iceberg's initialisation
                   otherwise tries to install avro from the network; both are signed, so
                   `allow_unsigned_extensions` stays off)

and each read must equal `alluvium scan TABLE --version V` of the snapshot's `delta-version`,
row for row (the shared oracle's order-independent digest: sorted rows, every column, values
canonicalised) after one normalisation Iceberg forces: it has no 8- or 16-bit integers, so
Delta `byte` and `short` read back as `int`, and both sides are compared as int32. DuckDB
reads in a child process per metadata file: it dies of SIGSEGV on some malformed metadata (a
snapshot without `schema-id`), which must fail those reads, not the whole interop run. Before
the reads, the metadata JSON is checked for the fields the issue found the readers strict
about, so that a gap is named. Pruning: pyiceberg's `plan_files` with a filter must plan fewer
files than without, and the filtered read must hold every row the filter matches (a bound
that prunes too much, e.g. a timestamp upper bound truncated to Delta's milliseconds instead
of rounded up, fails).

`case_iceberg` (the interop case) skips, saying why, when the readers cannot be installed or
loaded (.ci/run prints a WARNING then) or when the binary has no `iceberg` command (until the
sync lands). `--self-test` proves the reading half now: pyiceberg writes a partitioned table
through a SqlCatalog on sqlite (appends, a copy-on-write delete, a schema change, and a
position-delete file committed by hand in a delete manifest, as the sync writes for a deletion
vector); its last metadata file is copied to `v1.metadata.json` with a `version-hint.text`
and each snapshot tagged with a `delta-version`, the sync's layout; both readers must read
every snapshot, found as the case finds them, exactly as the rows computed here, and
`plan_files` must prune by partition and by column bounds. With `--alluvium BIN` it also
reads alluvium's own data files: alluvium appends to a table, pyiceberg registers each Delta
version's new files in a snapshot tagged with that version (`add_files`, which sets a name
mapping), and both readers must read each as `alluvium scan --version` does: the case's
expected side, on alluvium's Parquet, before the sync exists. Then partitioned tables
(escaped partition values, two DELETEs: copy-on-write, and with deletion vectors that grow)
registered by hand as the sync must register them: partition values in the manifests only
(Delta's files lack the column), literal paths, removed files as deleted entries, deletion
vectors as position-delete files.
"""
from __future__ import annotations

import datetime as dt
import decimal
import glob
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from typing import Callable

import pyarrow as pa
import pyarrow.parquet as pq

HERE = os.path.dirname(os.path.abspath(__file__))
CONFORMANCE_TABLES = os.path.join(HERE, "..", "data", "conformance", "tables")


class Unavailable(Exception):
    """An Iceberg reader cannot be used here (not installed, or will not load): the case skips."""


# --------------------------------------------------------------------------
# The two readers
# --------------------------------------------------------------------------
def duckdb_extension_path(name: str) -> str:
    """Path of `<name>.duckdb_extension` shipped by the duckdb-ext-<name> wheel for the
    installed DuckDB version (the wheels share the `duckdb_ext` namespace package)."""
    import duckdb

    spec = importlib.util.find_spec("duckdb_ext")
    if spec is None or not spec.submodule_search_locations:
        raise Unavailable(f"duckdb-ext-{name} is not installed")
    for base in spec.submodule_search_locations:
        hits = sorted(glob.glob(os.path.join(base, "extensions", "v" + duckdb.__version__, "*",
                                             f"{name}.duckdb_extension")))
        if hits:
            return hits[0]
    raise Unavailable(f"no {name}.duckdb_extension for duckdb v{duckdb.__version__} "
                      f"(duckdb-ext-{name} must match duckdb's version)")


def duckdb_iceberg_connect():
    """A DuckDB connection with `avro` then `iceberg` loaded from the wheels, offline."""
    try:
        import duckdb
    except ImportError as e:
        raise Unavailable(f"duckdb is not installed: {e}") from e
    # Order matters: iceberg's init installs avro itself (from the network) when absent.
    paths = [duckdb_extension_path(name) for name in ("avro", "iceberg")]
    con = duckdb.connect(config={"autoinstall_known_extensions": False,
                                 "autoload_known_extensions": False})
    for path in paths:
        try:
            con.execute("LOAD '" + path.replace("'", "''") + "'")
        except Exception as e:  # noqa: BLE001
            con.close()
            raise Unavailable(f"could not LOAD {path}: {e}") from e
    con.execute("SET TimeZone = 'UTC'")
    return con


def readers_unavailable() -> str | None:
    """None when both readers load, else why not (the case then skips)."""
    try:
        import pyiceberg  # noqa: F401
        from pyiceberg.table import StaticTable  # noqa: F401
    except Exception as e:  # noqa: BLE001
        return f"pyiceberg is not installed: {e}"
    try:
        duckdb_iceberg_connect().close()
    except Unavailable as e:
        return str(e)
    return None


def read_pyiceberg(metadata: str, snapshot_id: int) -> pa.Table:
    from pyiceberg.table import StaticTable

    return StaticTable.from_metadata(metadata).scan(snapshot_id=snapshot_id).to_arrow()


def read_duckdb(metadata: str, snapshot_id: int) -> pa.Table:
    con = duckdb_iceberg_connect()
    try:
        return con.execute("SELECT * FROM iceberg_scan(?, snapshot_from_id => ?)",
                           [metadata, int(snapshot_id)]).fetch_arrow_table()
    finally:
        con.close()


def duckdb_child(metadata: str, out_dir: str, snapshot_ids: list[int]) -> int:
    """The child process's half of `read_duckdb_isolated`: each snapshot's rows to
    OUT_DIR/ID.arrow (Arrow IPC: the types exactly as DuckDB gave them), or the error to
    OUT_DIR/ID.error."""
    for sid in snapshot_ids:
        try:
            tbl = read_duckdb(metadata, sid)
        except Exception as e:  # noqa: BLE001
            with open(os.path.join(out_dir, f"{sid}.error"), "w") as fh:
                fh.write(f"{type(e).__name__}: {e}")
            continue
        with pa.OSFile(os.path.join(out_dir, f"{sid}.arrow"), "wb") as sink:
            with pa.ipc.new_file(sink, tbl.schema) as w:
                w.write_table(tbl)
    return 0


def read_duckdb_isolated(metadata: str, snapshot_ids: list[int], out_dir: str) -> dict[int, pa.Table | str]:
    """DuckDB's reads of every snapshot into `out_dir`, made in a child process (one per
    metadata file, not per snapshot: loading the extensions costs time): the issue saw DuckDB 1.4.4
    crash (not raise) on metadata it finds wanting (a snapshot without `schema-id`), and a
    crash must fail those reads, not end the interop run. Each id maps to its rows or to
    why there are none."""
    r = subprocess.run([sys.executable, os.path.abspath(__file__), "--duckdb-read", metadata, out_dir,
                        *map(str, snapshot_ids)], capture_output=True, text=True, timeout=1800)
    if r.returncode < 0:
        died = f"the DuckDB process died of signal {-r.returncode} {r.stderr.strip()[-500:]}".strip()
    elif r.returncode > 0:
        died = f"the DuckDB process exited {r.returncode}: {r.stderr.strip()[-500:]}"
    else:
        died = ""
    out: dict[int, pa.Table | str] = {}
    for sid in snapshot_ids:
        arrow, error = os.path.join(out_dir, f"{sid}.arrow"), os.path.join(out_dir, f"{sid}.error")
        if os.path.exists(arrow):
            with pa.OSFile(arrow, "rb") as src:  # read into memory: the directory goes away
                out[sid] = pa.ipc.open_file(src).read_all()
        elif os.path.exists(error):
            with open(error) as fh:
                out[sid] = fh.read()
        else:
            out[sid] = died or "the DuckDB process left no result"
    return out


def check_metadata_contract(label: str, metadata: str, failures: list[str]) -> None:
    """What the issue found Iceberg readers strict about, checked in the JSON itself so that a
    gap is named rather than seen as a reader's crash or wrong rows: the table fields,
    per-snapshot `timestamp-ms` and `schema-id`, string summaries with `delta-version` and
    `delta-timestamp`, a name mapping, and partition field ids from 1000."""
    with open(metadata) as fh:
        meta = json.load(fh)
    gaps = [k for k in ("format-version", "table-uuid", "location", "last-column-id", "current-schema-id",
                        "schemas", "partition-specs", "default-spec-id", "last-partition-id")
            if k not in meta]
    if meta.get("format-version") != 2:
        gaps.append(f"format-version {meta.get('format-version')}, not 2")
    try:
        uuid.UUID(str(meta.get("table-uuid")))
    except ValueError:
        # pyiceberg refuses the whole file over it (DuckDB does not mind).
        gaps.append(f"table-uuid {meta.get('table-uuid')!r} is not a UUID")
    if "schema.name-mapping.default" not in (meta.get("properties") or {}):
        gaps.append("properties lack schema.name-mapping.default")
    for spec in meta.get("partition-specs") or []:
        low = [f["field-id"] for f in spec.get("fields", []) if f.get("field-id", 0) < 1000]
        if low:
            gaps.append(f"partition spec {spec.get('spec-id')} has field ids below 1000: {low}")
    for snap in meta.get("snapshots") or []:
        sid = snap.get("snapshot-id")
        missing = [k for k in ("timestamp-ms", "schema-id", "manifest-list", "sequence-number") if k not in snap]
        if missing:
            gaps.append(f"snapshot {sid} lacks {missing}")
        summary = snap.get("summary") or {}
        if not all(isinstance(v, str) for v in summary.values()):
            gaps.append(f"snapshot {sid} has summary values that are not strings: {summary}")
        if "delta-version" not in summary or "delta-timestamp" not in summary:
            gaps.append(f"snapshot {sid} summary lacks delta-version or delta-timestamp")
    if gaps:
        failures.append(f"{label}: {os.path.basename(metadata)}: " + "; ".join(gaps[:8]))
        print(f"  FAILED: {label}: metadata contract: " + "; ".join(gaps[:8]))
    else:
        print(f"  agree: {label}: {os.path.basename(metadata)} holds every field the readers need "
              f"({len(meta.get('snapshots') or [])} snapshots)")


# --------------------------------------------------------------------------
# Metadata, normalisation, comparison
# --------------------------------------------------------------------------
def latest_metadata(table: str) -> str:
    """`TABLE/metadata/vN.metadata.json` for the N in `version-hint.text` (the sync's layout)."""
    with open(os.path.join(table, "metadata", "version-hint.text")) as fh:
        n = int(fh.read().strip())
    return os.path.join(table, "metadata", f"v{n}.metadata.json")


def snapshots(metadata: str) -> list[dict]:
    """The snapshots of a metadata file, oldest first, as the JSON holds them."""
    with open(metadata) as fh:
        meta = json.load(fh)
    return sorted(meta.get("snapshots") or [], key=lambda s: (s.get("sequence-number", 0), s.get("timestamp-ms", 0)))


def _iceberg_type(t: pa.DataType) -> pa.DataType:
    """The Arrow type an Iceberg reader gives back for a column of Arrow type t."""
    if pa.types.is_int8(t) or pa.types.is_int16(t):
        return pa.int32()
    if pa.types.is_struct(t):
        return pa.struct([f.with_type(_iceberg_type(f.type)) for f in t])
    if pa.types.is_map(t):
        return pa.map_(_iceberg_type(t.key_type), _iceberg_type(t.item_type))
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return pa.list_(_iceberg_type(t.value_type))
    return t


def normalise(tbl: pa.Table) -> pa.Table:
    """Iceberg has no byte or short: cast those (also nested) to int32 before digesting."""
    schema = pa.schema([f.with_type(_iceberg_type(f.type)) for f in tbl.schema])
    return tbl if schema.equals(tbl.schema) else tbl.cast(schema)


def canonical_rows(tbl: pa.Table) -> list[str]:
    """The digest's canonical rows, sorted (for printing where two reads differ)."""
    import oracle
    import pyarrow.compute as pc

    order = sorted(tbl.column_names)
    if not tbl.num_rows or not order:
        return []
    cols = [oracle.canonical_column(tbl.column(c)) for c in order]
    rows = pc.binary_join_element_wise(*cols, pa.scalar("|", pa.large_string()))
    return sorted(rows.to_pylist())


class Comparison:
    """Counts and failures of the reads compared so far (the caller owns the failure list)."""

    def __init__(self, failures: list[str]):
        self.failures = failures
        self.agreed = 0

    def check(self, what: str, want: pa.Table, got: pa.Table, quiet: bool = False) -> None:
        """Records a failure unless `got` equals `want` (printed unless `quiet`)."""
        import oracle

        want, got = normalise(want), normalise(got)
        a, b = oracle.digest(want), oracle.digest(got)
        if (a["rows"], a["schema"], a["rows_sha256"]) == (b["rows"], b["schema"], b["rows_sha256"]):
            self.agreed += 1
            print(f"  agree: {what} ({a['rows']} rows)")
            return
        detail = f"expected rows={a['rows']} schema={a['schema']}; read rows={b['rows']} schema={b['schema']}"
        if a["schema"] == b["schema"]:
            wr, gr = canonical_rows(want), canonical_rows(got)
            ws, gs = set(wr), set(gr)
            missing = [r for r in wr if r not in gs][:3]
            extra = [r for r in gr if r not in ws][:3]
            detail += f"; missing e.g. {missing}; extra e.g. {extra}"
        self.failures.append(f"{what}: differs: {detail}")
        if not quiet:
            print(f"  DIFFERS: {what}: {detail}")

    def read_all(self, label: str, metadata: str, expected: Callable[[dict], pa.Table | None]) -> int:
        """Reads every snapshot of `metadata` with both readers and compares each with
        `expected(snapshot)` (None: not compared, the callback said why). Returns the
        number of snapshots compared."""
        compared = 0
        wanted = [(snap, expected(snap)) for snap in snapshots(metadata)]
        wanted = [(snap, want) for snap, want in wanted if want is not None]
        with tempfile.TemporaryDirectory(prefix="iceberg-duckdb-") as out_dir:
            duck = read_duckdb_isolated(metadata, [snap["snapshot-id"] for snap, _ in wanted], out_dir)
        for snap, want in wanted:
            compared += 1
            tag = snap.get("summary", {}).get("delta-version")
            name = f"{label} {'v' + tag if tag is not None else 'snapshot'} ({snap['snapshot-id']})"
            try:
                reads = {"pyiceberg": read_pyiceberg(metadata, snap["snapshot-id"])}
            except Exception as e:  # noqa: BLE001
                reads = {"pyiceberg": f"{type(e).__name__}: {e}"}
            reads["duckdb"] = duck[snap["snapshot-id"]]
            for engine, got in reads.items():
                if isinstance(got, str):
                    # The first lines name the cause (pydantic's come on its second and third).
                    why = " ".join(line.strip() for line in got.strip().splitlines()[:3])[:400] or "?"
                    msg = f"{name} {engine}: read failed: {why}"
                    self.failures.append(msg)
                    print(f"  FAILED: {msg}")
                    continue
                self.check(f"{name} {engine}", want, got)
        return compared


def check_data_files(label: str, metadata: str, failures: list[str]) -> None:
    """Every live data file of the current snapshot, as its manifest entry describes it,
    against the file itself: `record_count` the Parquet footer's row count (pyiceberg skips
    a file whose count is 0 without reading it, so a count taken from absent Delta
    statistics loses rows silently) and `file_size_in_bytes` its size."""
    from pyiceberg.io.pyarrow import PyArrowFileIO
    from pyiceberg.manifest import ManifestContent, read_manifest_list

    with open(metadata) as fh:
        meta = json.load(fh)
    current = next((x for x in meta.get("snapshots") or [] if x["snapshot-id"] == meta.get("current-snapshot-id")), None)
    if current is None:
        return
    io = PyArrowFileIO()
    gaps, checked = [], 0
    for mf in read_manifest_list(io.new_input(current["manifest-list"])):
        if mf.content != ManifestContent.DATA:
            continue
        for entry in mf.fetch_manifest_entry(io, discard_deleted=True):
            f = entry.data_file
            path = f.file_path.removeprefix("file://")
            checked += 1
            if not os.path.exists(path):
                gaps.append(f"{path}: no such file")
                continue
            rows = pq.ParquetFile(path).metadata.num_rows
            if f.record_count != rows or f.file_size_in_bytes != os.path.getsize(path):
                gaps.append(f"{os.path.basename(path)}: record_count {f.record_count} (file: {rows}), "
                            f"file_size_in_bytes {f.file_size_in_bytes} (file: {os.path.getsize(path)})")
    if gaps:
        failures.append(f"{label}: data files unlike their manifest entries: " + "; ".join(gaps[:3]))
        print(f"  FAILED: {label}: {len(gaps)} of {checked} data files unlike their manifest entries, e.g. {gaps[0]}")
    else:
        print(f"  agree: {label}: {checked} data files' record counts and sizes match their manifest entries")


def plan_count(metadata: str, row_filter: str | None = None) -> int:
    """How many data files pyiceberg plans for the current snapshot (with a filter)."""
    from pyiceberg.table import StaticTable

    scan = StaticTable.from_metadata(metadata).scan(**({"row_filter": row_filter} if row_filter else {}))
    return len(list(scan.plan_files()))


def check_pruning(label: str, metadata: str, filters: list[tuple[str, str]], failures: list[str]) -> None:
    """Each (kind, filter) must plan fewer files than the unfiltered scan (partition values
    and column bounds reached the manifests), and pruning must lose no row: the filtered
    scan reads as many rows as DuckDB's SQL finds with the same filter in the unpruned read
    (the filters here are both pyiceberg's and SQL's syntax)."""
    import duckdb
    from pyiceberg.table import StaticTable

    total = plan_count(metadata)
    everything = StaticTable.from_metadata(metadata).scan().to_arrow()
    for kind, row_filter in filters:
        n = plan_count(metadata, row_filter)
        line = f"{label} pruning by {kind}: plan_files {n} of {total} with {row_filter!r}"
        got = StaticTable.from_metadata(metadata).scan(row_filter=row_filter).to_arrow().num_rows
        con = duckdb.connect()
        con.register("everything", everything)
        (want,) = con.execute(f"SELECT count(*) FROM everything WHERE {row_filter}").fetchone()
        con.close()
        if n >= total:
            failures.append(f"{line}: nothing pruned")
            print(f"  FAILED: {line}: nothing pruned")
        elif got != want:
            failures.append(f"{line}: read {got} rows, the filter matches {want}")
            print(f"  FAILED: {line}: read {got} rows, the filter matches {want}")
        else:
            print(f"  agree: {line}, {got} rows as the filter matches")


# --------------------------------------------------------------------------
# The interop case: alluvium builds and syncs, the readers read every snapshot
# --------------------------------------------------------------------------
class Alluvium:
    """The CLI, as interop.py drives it."""

    def __init__(self, binary: str, work: str):
        self.binary, self.work = binary, work

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        r = subprocess.run([self.binary, *args], capture_output=True, text=True)
        if check and r.returncode != 0:
            raise RuntimeError(f"alluvium {' '.join(args)} failed: {r.stderr.strip()}")
        return r

    def has_iceberg_sync(self) -> bool:
        r = self.run("iceberg", "--help", check=False)
        return r.returncode == 0 and "sync" in r.stdout

    def version(self, table: str) -> int:
        return json.loads(self.run("inspect", table, "--json").stdout)["version"]

    def scan(self, table: str, version: int) -> pa.Table:
        out = os.path.join(self.work, "iceberg_scan.parquet")
        self.run("scan", table, "--version", str(version), "--format", "parquet", "--output", out)
        return pq.read_table(out)

    def sync(self, table: str) -> None:
        self.run("iceberg", "sync", table)

    def expected_for(self, table: str, tolerate_unscannable: bool = False) -> Callable[[dict], pa.Table | None]:
        """The callback `Comparison.read_all` takes: alluvium's scan of the snapshot's
        Delta version. A snapshot without a string `delta-version` is not compared (it
        cannot be: `check_metadata_contract` reports it as a failure). With
        `tolerate_unscannable` (reference tables, whose old versions may lack data files or
        log files) a version alluvium cannot scan is printed and not compared."""
        cache: dict[int, pa.Table] = {}

        def expected(snap: dict) -> pa.Table | None:
            tag = (snap.get("summary") or {}).get("delta-version")
            if not isinstance(tag, str) or not tag.isdigit():
                print(f"  not compared: snapshot {snap['snapshot-id']}: no string delta-version in its summary")
                return None
            v = int(tag)
            if v not in cache:
                try:
                    cache[v] = self.scan(table, v)
                except RuntimeError as e:
                    if not tolerate_unscannable:
                        raise
                    print(f"  not compared: {os.path.basename(table)} v{v}: alluvium cannot scan it: {e}")
                    return None
            return cache[v]

        return expected


def versions_with_dvs(table: str) -> list[int]:
    """The Delta versions whose commit adds a file with a deletion vector."""
    log = os.path.join(table, "_delta_log")
    out = []
    for name in sorted(os.listdir(log)):
        if name.endswith(".json") and name[:20].isdigit():
            with open(os.path.join(log, name)) as fh:
                if any((json.loads(line).get("add") or {}).get("deletionVector") for line in fh if line.strip()):
                    out.append(int(name[:20]))
    return out


def metadata_listing(table: str) -> dict[str, bytes]:
    """Every file under TABLE/metadata with its bytes (idempotence: a re-sync changes none)."""
    root = os.path.join(table, "metadata")
    out = {}
    for d, _, files in os.walk(root):
        for f in files:
            p = os.path.join(d, f)
            with open(p, "rb") as fh:
                out[os.path.relpath(p, root)] = fh.read()
    return out


def _ts(i: int) -> dt.datetime:
    """Row i's timestamp: sub-millisecond digits, which Delta's statistics drop."""
    return dt.datetime(2024, 3, 1, tzinfo=dt.timezone.utc) + dt.timedelta(seconds=i * 61, microseconds=i)


def ts_at_least(i: int) -> tuple[str, str]:
    """A filter (pyiceberg's syntax and SQL's) for the rows from row i's timestamp on: with i
    the last row of a file, it keeps that file only if its Iceberg upper bound was rounded up
    from Delta's millisecond statistics (issue 31), and the pruning check sees the row lost
    otherwise."""
    return ("statistics, a timestamp upper bound below a millisecond", f"ts >= '{_ts(i).isoformat()}'")


def _rows(start: int, n: int, region_of: Callable[[int], str]) -> pa.Table:
    ids = list(range(start, start + n))
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "small": pa.array([None if i % 9 == 0 else i % 100 - 50 for i in ids], pa.int16()),
        "name": pa.array([None if i % 7 == 0 else f"n{i}-ü" for i in ids], pa.string()),
        "amount": pa.array([i * 1.25 for i in ids], pa.float64()),
        "day": pa.array([dt.date(2024, 1, 1) + dt.timedelta(days=i % 40) for i in ids], pa.date32()),
        "ts": pa.array([_ts(i) for i in ids], pa.timestamp("us", tz="UTC")),
        "price": pa.array([decimal.Decimal(i * 37) / 100 for i in ids], pa.decimal128(12, 2)),
        "region": pa.array([region_of(i) for i in ids], pa.string()),
    })


# Conformance tables the sync is asked to map (copies; the sync writes under metadata/):
# deletion vectors (inline and file, one column-mapped and partitioned), partitions with
# special values and types, and plain primitives (byte and short included).
CONFORMANCE_SAMPLE = [
    "table-with-dv-small", "with-short-dv", "basic-dv-no-checkpoint", "dv-with-columnmapping",
    "log-replay-dv-key-cases", "basic_partitioned", "data-reader-partition-values",
    "delta-0.8.0-special-partition", "data-reader-primitives", "data-reader-timestamp_ntz",
]


def case_iceberg(binary: str, work: str, failures: list[str]) -> None:
    print("iceberg: alluvium syncs Iceberg metadata, pyiceberg and DuckDB read every snapshot")
    why = readers_unavailable()
    if why:
        print(f"  iceberg: SKIPPED: the Iceberg readers are unavailable: {why}")
        return
    al = Alluvium(binary, work)
    if not al.has_iceberg_sync():
        print("  iceberg: skipped: alluvium has no `iceberg sync`")
        return
    base = os.path.join(work, "iceberg")
    os.makedirs(base, exist_ok=True)
    cmp = Comparison(failures)

    def synced(table: str) -> None:
        """Syncs; incremental means the files already under metadata/ stay as they were
        (only version-hint.text moves on) and the new versions get new files."""
        before = metadata_listing(table)
        al.sync(table)
        after = metadata_listing(table)
        changed = sorted(k for k in before if k != "version-hint.text" and after.get(k) != before[k])
        if changed:
            failures.append(f"iceberg dml: a sync rewrote or removed existing metadata files: {changed[:5]}")
        print(f"  iceberg dml: synced to Delta version {al.version(table)}: "
              f"{len(set(after) - set(before))} new files under metadata/")

    def chunk(name: str, t: pa.Table) -> str:
        path = os.path.join(base, f"{name}.parquet")
        pq.write_table(t, path)
        return path

    # One partitioned DV table through every kind of commit; syncs after some steps (one
    # version each, then several at once) and at the end.
    table = os.path.join(base, "dml")
    regions = ["EU", "US", "A B/C", "ü=1"]
    first = chunk("c0", _rows(0, 400, lambda i: regions[i % 4]))
    al.run("create", table, "--schema-from", first, "--partition-by", "region",
           "--property", "delta.enableDeletionVectors=true")
    al.run("append", table, first)
    synced(table)                                                        # one version
    al.run("append", table, chunk("c1", _rows(400, 300, lambda i: regions[i % 3])))
    al.run("append", table, chunk("c2", _rows(700, 200, lambda i: "US")))
    synced(table)                                                        # two at once
    al.run("delete", table, "--filter", "id % 13 = 0 OR id = 401")       # deletion vectors
    synced(table)
    al.run("delete", table, "--filter", "id % 17 = 0")                   # DVs grow
    al.run("update", table, "--set", "amount = amount + 1, name = 'u'", "--filter", "id % 50 = 1")
    src = chunk("merge_src", _rows(880, 60, lambda i: "EU"))             # 880..899 match
    al.run("merge", table, src, "--on", "t.id = s.id",
           "--when", "MATCHED AND s.id % 3 = 0 THEN DELETE",
           "--when", "MATCHED THEN UPDATE SET *",
           "--when", "NOT MATCHED THEN INSERT *")
    al.run("optimize", table)
    al.run("alter", table, "--add-column", "note STRING")
    extra = _rows(2000, 50, lambda i: "EU").append_column("note", pa.array([f"x{i}" for i in range(50)], pa.string()))
    al.run("append", table, chunk("c3", extra))
    synced(table)                                                        # many at once
    # Copy-on-write DELETE: deletion vectors turned off.
    al.run("alter", table, "--set-property", "delta.enableDeletionVectors=false")
    al.run("delete", table, "--filter", "id < 100")
    synced(table)
    # The table must hold what the sync maps: deletion vectors, then a copy-on-write DELETE.
    dv_versions = versions_with_dvs(table)
    if not dv_versions or al.version(table) in dv_versions:
        failures.append(f"iceberg dml: deletion vectors in versions {dv_versions}: expected some, "
                        f"and none in the last (copy-on-write) DELETE")
    before = metadata_listing(table)
    al.sync(table)                                                       # nothing new
    after = metadata_listing(table)
    if not after:
        failures.append("iceberg dml: the sync wrote nothing under metadata/")
    elif before != after:
        changed = sorted(set(before) ^ set(after) | {k for k in before if k in after and before[k] != after[k]})
        failures.append(f"iceberg dml: a second sync with nothing new changed metadata/: {changed[:5]}")
    else:
        print(f"  agree: iceberg dml: a second sync changes nothing ({len(after)} files under metadata/)")
    metadata = latest_metadata(table)
    check_metadata_contract("iceberg dml", metadata, failures)
    check_data_files("iceberg dml", metadata, failures)
    latest = al.version(table)
    tagged = {int(s["summary"]["delta-version"]) for s in snapshots(metadata) if "delta-version" in s.get("summary", {})}
    missing = [v for v in range(1, latest + 1) if v not in tagged]
    if missing:
        failures.append(f"iceberg dml: Delta versions without an Iceberg snapshot: {missing}")
    cmp.read_all("iceberg dml", metadata, al.expected_for(table))

    # Pruning, on a partitioned table of appends only (one file per partition per append).
    pruned = os.path.join(base, "pruned")
    f0 = chunk("p0", _rows(0, 200, lambda i: regions[i % 4]))
    al.run("create", pruned, "--schema-from", f0, "--partition-by", "region")
    for k in range(4):
        al.run("append", pruned, chunk(f"p{k}", _rows(k * 1000, 200, lambda i: regions[i % 4])))
    al.sync(pruned)
    pm = latest_metadata(pruned)
    check_metadata_contract("iceberg pruned", pm, failures)
    check_data_files("iceberg pruned", pm, failures)
    check_pruning("iceberg pruned", pm, [("partition", "region = 'EU'"), ts_at_least(1199),
                                         ("statistics", "id >= 3000"),
                                         ("statistics", "id < 500")], failures)
    cmp.read_all("iceberg pruned", pm, al.expected_for(pruned))

    # Racing syncs (issue 31: the metadata file is put-if-absent, the loser re-reads and
    # continues): four processes sync the same new versions at once; all must succeed and
    # leave one line of snapshots, each version once, read as alluvium reads it.
    # (Built afresh: a copy of a synced table carries the original's absolute locations.)
    race = os.path.join(base, "race")
    al.run("create", race, "--schema-from", f0, "--partition-by", "region")
    for k in range(4):
        al.run("append", race, chunk(f"p{k}", _rows(k * 1000, 200, lambda i: regions[i % 4])))
    al.sync(race)
    for k in range(3):
        al.run("append", race, chunk(f"r{k}", _rows(5000 + k * 100, 50, lambda i: regions[i % 4])))
    procs = [subprocess.Popen([binary, "iceberg", "sync", race], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(4)]
    outcomes = [(p.wait(timeout=600), p.stderr.read().strip()) for p in procs]
    for p in procs:
        p.stdout.close()
        p.stderr.close()
    refused = [err for rc, err in outcomes if rc != 0]
    rm = latest_metadata(race)
    tags = [s.get("summary", {}).get("delta-version") for s in snapshots(rm)]
    if refused:
        failures.append(f"iceberg race: {len(refused)} of 4 racing syncs failed: {refused[0][:300]}")
    elif sorted(tags, key=int) != [str(v) for v in range(4, al.version(race) + 1)]:
        failures.append(f"iceberg race: snapshots of Delta versions {tags} after racing syncs")
    else:
        print(f"  agree: iceberg race: 4 racing syncs succeeded; snapshots of versions {', '.join(tags)}, each once")
    check_metadata_contract("iceberg race", rm, failures)
    cmp.read_all("iceberg race", rm, al.expected_for(race))

    # A sample of the conformance tables.
    for name in CONFORMANCE_SAMPLE:
        src_dir = os.path.join(CONFORMANCE_TABLES, name, "delta")
        if not os.path.isdir(src_dir):
            print(f"  iceberg conformance {name}: not in tests/data (skipped)")
            continue
        copy = os.path.join(base, "conformance", name)
        shutil.copytree(src_dir, copy)
        r = al.run("iceberg", "sync", copy, check=False)
        if r.returncode != 0:
            reason = r.stderr.strip()
            if "panicked" in reason or not reason:
                failures.append(f"iceberg conformance {name}: sync crashed: {reason}")
            else:
                print(f"  iceberg conformance {name}: sync refused (not compared): {reason}")
            continue
        check_metadata_contract(f"iceberg conformance {name}", latest_metadata(copy), failures)
        check_data_files(f"iceberg conformance {name}", latest_metadata(copy), failures)
        cmp.read_all(f"iceberg conformance {name}", latest_metadata(copy), al.expected_for(copy, tolerate_unscannable=True))
    print(f"  iceberg: {cmp.agreed} reads agree")


# --------------------------------------------------------------------------
# Self-test: the reading half on a table pyiceberg writes
# --------------------------------------------------------------------------
def _commit_position_deletes(table, deletes: list[tuple], tags: dict[str, str] | None = None) -> None:
    """Commits, in one snapshot (its summary given `tags`), a v2 position-delete file per
    (data_file, positions, path) in a delete manifest, as the sync writes one for a deletion
    vector. pyiceberg 0.12 writes no delete files (its deletes are copy-on-write), so its
    fast append is given a manifest writer whose content is `deletes`; everything else
    (manifest list, sequence numbers, summary, metadata) is pyiceberg's own."""
    from pyiceberg.manifest import DataFile, DataFileContent, FileFormat, ManifestContent, ManifestWriterV2

    class DeleteManifestWriter(ManifestWriterV2):
        def content(self) -> ManifestContent:
            return ManifestContent.DELETES

        @property
        def _meta(self) -> dict[str, str]:
            return {**super()._meta, "content": "deletes"}

    # The spec's reserved field ids for file_path and pos (Iceberg table spec, "Position
    # Delete Files"), so readers that match by id find them.
    schema = pa.schema([
        pa.field("file_path", pa.string(), nullable=False, metadata={"PARQUET:field_id": "2147483546"}),
        pa.field("pos", pa.int64(), nullable=False, metadata={"PARQUET:field_id": "2147483545"}),
    ])
    delete_files = []
    for data_file, positions, path in deletes:
        # A position-delete row names the data file exactly as its manifest entry does.
        pq.write_table(pa.table({"file_path": [data_file.file_path] * len(positions), "pos": sorted(positions)},
                                schema=schema), path)
        delete_file = DataFile.from_args(
            content=DataFileContent.POSITION_DELETES,
            file_path=path,
            file_format=FileFormat.PARQUET,
            partition=data_file.partition,
            record_count=len(positions),
            file_size_in_bytes=os.path.getsize(path),
        )
        delete_file.spec_id = data_file.spec_id
        delete_files.append(delete_file)
    with table.transaction() as tx:
        with tx.update_snapshot(snapshot_properties=tags or {}).fast_append() as append:
            def writer(spec, _append=append):
                return DeleteManifestWriter(spec=spec, schema=_append.schema(), output_file=_append.new_manifest_output(),
                                            snapshot_id=_append._snapshot_id, avro_compression=_append._compression)
            append.new_manifest_writer = writer
            for delete_file in delete_files:
                append.append_data_file(delete_file)


def _self_test_alluvium_files(cat, binary: str, work: str, failures: list[str], cmp: Comparison) -> None:
    """The case's expected side on files alluvium writes: alluvium appends three files to an
    unpartitioned table; pyiceberg registers each Delta version's new files (`add_files`,
    which reads their footers and sets a name mapping, as the sync must) in a snapshot
    tagged with that `delta-version`; both readers must read each snapshot exactly as
    `alluvium scan --version` reads the version (types through Iceberg's: short as int)."""
    al = Alluvium(binary, work)
    table = os.path.join(work, "delta_appends")
    chunks = []
    for k in range(3):
        chunks.append(os.path.join(work, f"delta_chunk{k}.parquet"))
        pq.write_table(_rows(k * 1000, 100 + 10 * k, lambda i: ["EU", "US"][i % 2]), chunks[-1])
    al.run("create", table, "--schema-from", chunks[0])
    for c in chunks:
        al.run("append", table, c)
    ice = cat.create_table("ns.delta_appends", schema=normalise(pq.read_table(chunks[0])).schema)
    seen: set[str] = set()
    for v in range(1, al.version(table) + 1):
        live = set(al.run("files", table, "--version", str(v)).stdout.split())
        new = sorted(os.path.join(os.path.abspath(table), f) for f in live - seen)
        seen |= live
        ice.add_files(new, snapshot_properties={"delta-version": str(v), "delta-timestamp": "0"})
    ice.refresh()
    meta_dir = os.path.dirname(ice.metadata_location.removeprefix("file://"))
    shutil.copy(ice.metadata_location.removeprefix("file://"), os.path.join(meta_dir, "v1.metadata.json"))
    with open(os.path.join(meta_dir, "version-hint.text"), "w") as fh:
        fh.write("1\n")
    metadata = latest_metadata(os.path.dirname(meta_dir))
    # pyiceberg's add_files sets the name mapping; its own writes alone would not pass.
    check_metadata_contract("self-test alluvium files", metadata, failures)
    if cmp.read_all("self-test alluvium files", metadata, al.expected_for(table)) != 3:
        failures.append("self-test alluvium files: expected a snapshot per append")
    check_pruning("self-test alluvium files", metadata, [("statistics", "id >= 2000"), ts_at_least(1109)], failures)


def _self_test_alluvium_partitioned(cat, binary: str, work: str, failures: list[str], cmp: Comparison,
                                    dv: bool) -> None:
    """The same on a partitioned table whose files, as Delta writes them, lack the partition
    column: alluvium appends twice and DELETEs twice, copy-on-write (files removed and added)
    or, with `dv`, with deletion vectors (the second DELETE grows them); each version is
    registered here by hand, as the sync registers it: the literal on-disk path (Delta's log
    holds it percent-encoded; `alluvium files` prints it decoded), the identity partition
    value from the log in the manifest, the row count, a name mapping, removed files as
    deleted entries, and each deletion vector as a position-delete file carrying its data
    file's partition. (The positions come from the file's rows missing from alluvium's scan,
    checked against the log's DV cardinality; a grown DV adds a file of the new positions
    where the sync replaces the file: readers apply both.) Both readers must fill the
    partition column from the manifests and read each version as alluvium does."""
    from pyiceberg.manifest import DataFile, DataFileContent, FileFormat
    from pyiceberg.table.name_mapping import create_mapping_from_schema
    from pyiceberg.typedef import Record

    label = f"self-test alluvium partitioned{' dv' if dv else ''}"
    al = Alluvium(binary, work)
    table = os.path.join(work, f"delta_partitioned{'_dv' if dv else ''}")
    regions = ["EU", "A B/C", "ü=1"]
    chunks = []
    for k in range(2):
        chunks.append(os.path.join(work, f"delta_pchunk{k}.parquet"))
        pq.write_table(_rows(k * 1000, 90, lambda i: regions[i % 3]), chunks[-1])
    al.run("create", table, "--schema-from", chunks[0], "--partition-by", "region",
           *(["--property", "delta.enableDeletionVectors=true"] if dv else []))
    for c in chunks:
        al.run("append", table, c)
    al.run("delete", table, "--filter", "id % 4 = 0")
    al.run("delete", table, "--filter", "id % 5 = 0 OR id = 1001")
    if bool(versions_with_dvs(table)) != dv:
        failures.append(f"{label}: deletion vectors in versions {versions_with_dvs(table)}")
    ice = cat.create_table(f"ns.delta_partitioned{'_dv' if dv else ''}",
                           schema=normalise(pq.read_table(chunks[0])).schema)
    with ice.update_spec() as spec:
        spec.add_identity("region")
    with ice.transaction() as tx:
        tx.set_properties({"schema.name-mapping.default": create_mapping_from_schema(ice.schema()).model_dump_json()})
    registered: dict[str, DataFile] = {}
    deleted: dict[str, set[int]] = {}
    for v in range(1, al.version(table) + 1):
        live = {f["path"]: f for f in json.loads(al.run("files", table, "--version", str(v), "--json").stdout)}
        added = [live[p] for p in sorted(set(live) - set(registered))]
        removed = [registered.pop(p) for p in sorted(set(registered) - set(live))]
        grown = [p for p in sorted(live) if live[p]["deleted_rows"] != len(deleted.get(p, ()))]
        tags = {"delta-version": str(v), "delta-timestamp": "0"}
        if (added or removed) and grown:
            failures.append(f"{label} v{v}: data files and deletion vectors changed in one version (not registered)")
            continue
        if grown:
            live_ids = set(al.scan(table, v).column("id").to_pylist())
            batch = []
            for p in grown:
                ids = pq.read_table(os.path.join(table, p), columns=["id"]).column("id").to_pylist()
                positions = {pos for pos, i in enumerate(ids) if i not in live_ids}
                if len(positions) != live[p]["deleted_rows"]:
                    failures.append(f"{label} v{v}: {p}: {len(positions)} rows missing from the scan, "
                                    f"the deletion vector holds {live[p]['deleted_rows']}")
                new = sorted(positions - deleted.get(p, set()))
                deleted[p] = positions
                batch.append((registered[p], new, os.path.join(work, f"{os.path.basename(table)}-v{v}-{len(batch)}-deletes.parquet")))
            _commit_position_deletes(ice, batch, tags)
            continue
        with ice.transaction() as tx:
            update = tx.update_snapshot(snapshot_properties=tags)
            with (update.overwrite() if removed else update.fast_append()) as producer:
                for old in removed:
                    producer.delete_data_file(old)
                for f in added:
                    df = DataFile.from_args(content=DataFileContent.DATA,
                                            file_path=os.path.join(os.path.abspath(table), f["path"]),
                                            file_format=FileFormat.PARQUET,
                                            partition=Record(f["partition_values"]["region"]),
                                            record_count=f["rows"], file_size_in_bytes=f["size"])
                    df.spec_id = ice.metadata.default_spec_id
                    producer.append_data_file(df)
                    registered[f["path"]] = df
    ice.refresh()
    meta_dir = os.path.dirname(ice.metadata_location.removeprefix("file://"))
    shutil.copy(ice.metadata_location.removeprefix("file://"), os.path.join(meta_dir, "v1.metadata.json"))
    with open(os.path.join(meta_dir, "version-hint.text"), "w") as fh:
        fh.write("1\n")
    metadata = latest_metadata(os.path.dirname(meta_dir))
    check_metadata_contract(label, metadata, failures)
    check_data_files(label, metadata, failures)
    if cmp.read_all(label, metadata, al.expected_for(table)) != al.version(table):
        failures.append(f"{label}: expected a snapshot per Delta version")
    check_pruning(label, metadata, [("partition", "region = 'A B/C'")], failures)


def self_test(work: str, peers: str | None, binary: str | None) -> int:
    if peers:
        sys.path.insert(0, peers)
    import oracle  # noqa: F401  (the digest the comparison uses)
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.expressions import GreaterThanOrEqual
    from pyiceberg.table import StaticTable

    why = readers_unavailable()
    if why:
        print(f"iceberg self-test: the Iceberg readers are unavailable: {why}")
        return 1
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    failures: list[str] = []
    cat = SqlCatalog("selftest", uri=f"sqlite:///{work}/catalog.db", warehouse=f"file://{work}")
    cat.create_namespace("ns")
    regions = ["EU", "US", "A B/C"]
    # The data as an Iceberg reader returns it (pyiceberg writes short as int).
    data = normalise(_rows(0, 300, lambda i: regions[i % 3]))
    t = cat.create_table("ns.t", schema=data.schema)
    with t.update_spec() as spec:
        spec.add_identity("region")
    expected: dict[int, pa.Table] = {}

    def remember(current: pa.Table) -> None:
        t.refresh()
        expected[t.metadata.current_snapshot_id] = current

    t.append(data)
    remember(data)
    more = normalise(_rows(1000, 300, lambda i: regions[i % 3]))
    t.append(more)
    cur = pa.concat_tables([data, more])
    remember(cur)
    t.delete(GreaterThanOrEqual("id", 1250))                             # copy-on-write
    cur = cur.filter(pa.compute.less(cur["id"], 1250))
    remember(cur)
    with t.update_schema() as upd:
        from pyiceberg.types import StringType
        upd.add_column("note", StringType())
    # A schema change makes no snapshot: the delete's snapshot keeps its schema (no `note`),
    # and both readers must read it so.
    cur = cur.append_column("note", pa.nulls(cur.num_rows, pa.string()))
    late = normalise(_rows(2000, 30, lambda i: "EU")).append_column("note", pa.array([f"x{i}" for i in range(30)], pa.string()))
    t.append(late)
    cur = pa.concat_tables([cur, late])
    remember(cur)
    # A position-delete file against one data file of the first append.
    task = next(f for f in t.scan(snapshot_id=list(expected)[0]).plan_files()
                if f.file.partition[0] == "US")
    file_rows = pq.read_table(task.file.file_path.removeprefix("file://"))
    positions = [p for p in range(file_rows.num_rows) if p % 4 == 1]
    gone = set(file_rows.column("id").to_pylist()[p] for p in positions)
    _commit_position_deletes(t, [(task.file, positions, os.path.join(work, "pos-deletes.parquet"))])
    cur = cur.filter(pa.array([i not in gone for i in cur.column("id").to_pylist()]))
    remember(cur)
    metadata = t.metadata_location.removeprefix("file://")
    snaps = snapshots(metadata)
    print(f"iceberg self-test: {len(snaps)} snapshots written by pyiceberg in {metadata}")
    if len(snaps) != len(expected):
        failures.append(f"{len(snaps)} snapshots, expected {len(expected)}")
    last = StaticTable.from_metadata(metadata)
    summary = last.metadata.snapshot_by_id(last.metadata.current_snapshot_id).summary
    if summary.get("added-position-deletes") != str(len(positions)):
        failures.append(f"the position-delete snapshot's summary: {summary}")
    # Read as the case reads a synced table: `vN.metadata.json` named by version-hint.text,
    # each snapshot's summary naming the version whose rows it must hold (here, the rows
    # computed above, numbered in snapshot order).
    with open(metadata) as fh:
        meta = json.load(fh)
    by_version: dict[int, pa.Table] = {}
    for k, snap in enumerate(snapshots(metadata), start=1):
        tagged = next(x for x in meta["snapshots"] if x["snapshot-id"] == snap["snapshot-id"])
        tagged["summary"].update({"delta-version": str(k), "delta-timestamp": str(tagged["timestamp-ms"])})
        by_version[k] = expected[snap["snapshot-id"]]
    meta_dir = os.path.dirname(metadata)
    hint = 1  # pyiceberg names its files 0000N-<uuid>.metadata.json: no clash with v1
    with open(os.path.join(meta_dir, f"v{hint}.metadata.json"), "w") as fh:
        json.dump(meta, fh)
    with open(os.path.join(meta_dir, "version-hint.text"), "w") as fh:
        fh.write(f"{hint}\n")
    cmp = Comparison(failures)
    cmp.read_all("self-test", latest_metadata(os.path.dirname(meta_dir)),
                 lambda snap: by_version[int(snap["summary"]["delta-version"])])
    check_pruning("self-test", metadata, [("partition", "region = 'EU'"), ("statistics", "id >= 1200")], failures)
    # Not vacuous: the comparison must tell the position-delete snapshot from the rows it deleted.
    probe: list[str] = []
    before_deletes = list(expected.values())[-2]
    Comparison(probe).check("negative control", before_deletes,
                            read_pyiceberg(metadata, last.metadata.current_snapshot_id), quiet=True)
    if probe:
        print("  negative control: the rows before the position deletes differ from the read, as they must")
    else:
        failures.append("the comparison did not see the position deletes' rows missing")
    if binary:
        _self_test_alluvium_files(cat, binary, work, failures, cmp)
        _self_test_alluvium_partitioned(cat, binary, work, failures, cmp, dv=False)
        _self_test_alluvium_partitioned(cat, binary, work, failures, cmp, dv=True)
    else:
        print("  (no --alluvium BIN: the reads of alluvium-written files were not tested)")
    if failures:
        print("\nICEBERG SELF-TEST FAILURES:")
        for f in failures:
            print("  " + f)
        return 1
    print(f"\niceberg self-test: {cmp.agreed} reads agree (pyiceberg and DuckDB, every snapshot)")
    return 0


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "--duckdb-read":  # read_duckdb_isolated's child
        sys.exit(duckdb_child(sys.argv[2], sys.argv[3], [int(x) for x in sys.argv[4:]]))
    import argparse

    ap = argparse.ArgumentParser(usage="iceberg.py --self-test [WORKDIR] [--alluvium BIN]")
    ap.add_argument("--self-test", action="store_true", required=True)
    ap.add_argument("workdir", nargs="?", default=os.path.join(HERE, "..", "..", "target", "iceberg-self-test"))
    ap.add_argument("--alluvium", help="the CLI binary: also read files alluvium writes")
    a = ap.parse_args()
    # The peers kit (oracle.py) sits beside the checkout, as .ci/run finds it.
    peers_dir = os.environ.get("ALLUVIUM_PEERS", os.path.join(HERE, "..", "..", "..", "shared", "peers"))
    sys.exit(self_test(os.path.abspath(a.workdir), peers_dir, a.alluvium and os.path.abspath(a.alluvium)))
