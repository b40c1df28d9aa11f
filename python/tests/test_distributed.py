"""Distributed writes without Ray: workers write data files with
``DeltaTable.write_data_files`` (nothing committed) and hand back ``AddAction`` s, which
pickle; a driver commits them all in one commit with ``DeltaTable.commit_files``, after
the engine checks each one; an application transaction makes the commit idempotent;
``discard_files`` deletes what will not be committed and never a referenced file.

The ``AddAction`` tests need nothing but the package; the others make their data with
pyarrow and skip without it."""

from __future__ import annotations

import json
import os
import pickle
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

import pytest

import alluvium
from alluvium import AddAction, CommitProperties, DeltaTable, Transaction
from alluvium.exceptions import InvalidInputError, SchemaMismatchError

ADD = {
    "path": "part=a/f%201.parquet",
    "partitionValues": {"part": "a"},
    "size": 1234,
    "modificationTime": 1700000000000,
    "dataChange": True,
    "stats": json.dumps({"numRecords": 7, "minValues": {}, "maxValues": {}, "nullCount": {}}),
}


# ---- AddAction: no pyarrow needed ---------------------------------------------------


def test_add_action_exposes_its_fields_read_only():
    a = AddAction.from_dict(ADD)
    assert (a.path, a.size, a.partition_values, a.num_records) == ("part=a/f%201.parquet", 1234, {"part": "a"}, 7)
    assert a.to_dict() == ADD
    assert json.loads(a.json) == ADD
    a.partition_values["part"] = "changed"  # a copy
    assert a.partition_values == {"part": "a"}
    with pytest.raises(AttributeError):
        a.path = "other.parquet"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        a.extra = 1  # type: ignore[attr-defined]
    assert repr(a) == "AddAction(path='part=a/f%201.parquet', size=1234, partition_values={'part': 'a'}, num_records=7)"
    assert AddAction.from_dict({**ADD, "stats": None}).num_records is None


def test_add_actions_pickle_and_compare_by_value():
    a = AddAction.from_dict(ADD)
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        b = pickle.loads(pickle.dumps(a, protocol))
        assert b == a and hash(b) == hash(a) and b.json == a.json
    # Key order does not matter; any other difference does.
    reordered = AddAction(json.dumps(dict(reversed(list(ADD.items())))))
    assert reordered == a and len({a, reordered}) == 1
    assert AddAction.from_dict({**ADD, "size": 1}) != a
    assert a != ADD


@pytest.mark.parametrize("text", ["", "[]", "{}", '{"path": 3}', "not json"])
def test_an_add_action_is_a_json_object_with_a_path(text):
    with pytest.raises(ValueError, match="add action"):
        AddAction(text)


def test_without_pyarrow_duckdb_data_is_written_and_committed(tmp_path):
    duckdb = pytest.importorskip("duckdb")
    path = str(tmp_path / "t")
    con = duckdb.connect()
    part = "SELECT i::BIGINT AS id, 'k' || (i % 3)::VARCHAR AS k FROM range({}, {}) t(i)"
    alluvium.write_deltalake(path, con.sql(part.format(0, 10)), partition_by=["k"])
    dt = DeltaTable(path)
    adds = [a for lo in (10, 1000) for a in dt.write_data_files(con.sql(part.format(lo, lo + 990)))]
    shipped = pickle.loads(pickle.dumps(adds))
    assert dt.commit_files(shipped)["version"] == 1
    assert dt.count() == 10 + 2 * 990
    s = dt.scan(columns=["id"])  # noqa: F841 - DuckDB reads the variable by name
    assert con.sql("SELECT count(DISTINCT id), max(id) FROM s").fetchone() == (1990, 1989)


# ---- writing and committing: pyarrow makes the data ---------------------------------


@pytest.fixture
def pa():
    return pytest.importorskip("pyarrow")


def rows(pa, ids, part: str = "a"):
    return pa.table(
        {
            "id": pa.array(list(ids), pa.int64()),
            "part": pa.array([part] * len(ids), pa.string()),
            "value": pa.array([i * 0.5 for i in ids], pa.float64()),
        }
    )


def new_table(pa, path: str, partition_by=None, configuration=None) -> DeltaTable:
    return DeltaTable.create(path, rows(pa, []).schema, partition_by=partition_by, configuration=configuration)


def ids_of(dt: DeltaTable) -> list[int]:
    return sorted(dt.to_pyarrow_table(columns=["id"]).column("id").to_pylist())


def data_files(path: str) -> set[str]:
    root = Path(path)
    return {
        str(p.relative_to(root)) for p in root.rglob("*.parquet") if "_delta_log" not in p.parts
    }


def test_workers_write_and_the_driver_commits_once(pa, table_path):
    dt = new_table(pa, table_path, partition_by=["part"])
    # Three "workers" write; nothing is committed by writing.
    shares = [dt.write_data_files(rows(pa, range(i * 100, i * 100 + 100), p)) for i, p in enumerate("abc")]
    assert dt.version() == 0 and DeltaTable(table_path).version() == 0
    adds = [a for share in shares for a in share]
    assert {a.partition_values["part"] for a in adds} == {"a", "b", "c"}
    assert sum(a.num_records for a in adds) == 300
    out = dt.commit_files(adds)
    assert out == {
        "version": 1,
        "skipped": False,
        "num_added_files": len(adds),
        "num_removed_files": 0,
        "num_added_bytes": sum(a.size for a in adds),
        "num_removed_bytes": 0,
    }
    assert dt.version() == 1, "the handle holds the commit"
    assert ids_of(dt) == list(range(300))
    info = dt.history(1)[0]
    assert info["operation"] == "WRITE" and info["operationParameters"]["mode"] == "Append"
    assert sorted(a["path"] for a in dt.get_add_actions()) == sorted(a.path for a in adds)


def test_write_data_files_takes_a_stream_and_checks_the_partitioning(pa, table_path):
    dt = new_table(pa, table_path, partition_by=["part"])
    adds = dt.write_data_files((rows(pa, range(i, i + 10), "x") for i in range(0, 50, 10)), partition_by="part")
    assert sum(a.num_records for a in adds) == 50
    with pytest.raises(InvalidInputError, match="partition"):
        dt.write_data_files(rows(pa, [1]), partition_by=["id"])
    with pytest.raises(SchemaMismatchError):
        dt.write_data_files(pa.table({"other": [1]}))
    dt.commit_files(adds)
    assert ids_of(dt) == list(range(50))


def test_a_failing_source_leaves_no_file(pa, table_path):
    dt = new_table(pa, table_path)

    def source():
        yield rows(pa, range(10))
        raise RuntimeError("the producer failed")

    with pytest.raises(RuntimeError, match="the producer failed"):
        dt.write_data_files(source())
    assert data_files(table_path) == set()


def test_actions_travel_between_processes(pa, table_path):
    new_table(pa, table_path)
    with ProcessPoolExecutor(2, mp_context=get_context("spawn")) as pool:
        shares = list(pool.map(_worker, [(table_path, i) for i in range(4)]))
    adds = [a for share in shares for a in share]
    assert all(isinstance(a, AddAction) for a in adds)
    dt = DeltaTable(table_path)
    assert dt.commit_files(adds)["version"] == 1
    assert ids_of(dt) == list(range(400))


def _worker(args: tuple[str, int]) -> list[AddAction]:
    import pyarrow

    path, i = args
    return DeltaTable(path).write_data_files(rows(pyarrow, range(i * 100, i * 100 + 100)))


def test_a_rerun_with_the_same_app_transaction_is_skipped(pa, table_path):
    dt = new_table(pa, table_path)
    job = CommitProperties(app_transactions=[Transaction("nightly", 7)])
    first = dt.write_data_files(rows(pa, range(10)))
    assert dt.commit_files(first, commit_properties=job)["version"] == 1
    # The driver died after the commit and runs again: its new files are not committed.
    again = dt.write_data_files(rows(pa, range(10)))
    out = dt.commit_files(again, commit_properties=job)
    assert out == {"version": None, "skipped": True, "app_id": "nightly", "recorded_version": 7, "table_version": 1}
    assert dt.version() == 1 and ids_of(dt) == list(range(10))
    assert dt.transaction_version("nightly") == 7
    assert dt.discard_files(again) == len(again)
    assert data_files(table_path) == {a.path for a in first}
    # The next run of the job commits.
    later = dt.write_data_files(rows(pa, range(10, 20)))
    job8 = CommitProperties(app_transactions=[Transaction("nightly", 8)], custom_metadata={"run": "8"})
    assert dt.commit_files(later, commit_properties=job8)["version"] == 2
    assert dt.history(1)[0]["run"] == "8"
    assert ids_of(dt) == list(range(20))


def test_overwrite_replaces_the_contents(pa, table_path):
    dt = new_table(pa, table_path)
    dt.commit_files(dt.write_data_files(rows(pa, range(100))))
    dt.commit_files(dt.write_data_files(rows(pa, range(100, 150))))
    replacement = dt.write_data_files(rows(pa, range(1000, 1005)))
    out = dt.commit_files(replacement, mode="overwrite")
    assert (out["version"], out["num_added_files"], out["num_removed_files"]) == (3, 1, 2)
    assert ids_of(dt) == list(range(1000, 1005))
    assert dt.history(1)[0]["operationParameters"]["mode"] == "Overwrite"
    # Time travel still reads what was replaced.
    assert ids_of(DeltaTable(table_path, version=2)) == list(range(150))
    with pytest.raises(InvalidInputError, match="mode"):
        dt.commit_files([], mode="error")  # type: ignore[arg-type]


def refused(dt: DeltaTable, actions, match: str, **kwargs) -> None:
    before = dt.version()
    files_before = set(os.listdir(dt.table_uri))
    with pytest.raises(InvalidInputError, match=match) as e:
        dt.commit_files(actions, **kwargs)
    assert "nothing was committed" in str(e.value)
    assert DeltaTable(dt.table_uri).version() == before
    assert set(os.listdir(dt.table_uri)) == files_before, "a refusal deletes nothing"


def test_bad_actions_are_refused_naming_the_file(pa, table_path, tmp_path):
    dt = new_table(pa, table_path, partition_by=["part"])
    good = dt.write_data_files(rows(pa, range(10), "a"))
    assert len(good) == 1
    a = good[0].to_dict()
    outside = AddAction.from_dict({**a, "path": "../elsewhere/f.parquet"})
    refused(dt, [outside], r"\.\./elsewhere/f\.parquet: invalid path")
    absolute = AddAction.from_dict({**a, "path": (tmp_path / "shared" / "f.parquet").as_uri()})
    refused(dt, [absolute], "outside the table root")
    wrong_part = AddAction.from_dict({**a, "partitionValues": {"region": "a"}})
    refused(dt, [wrong_part], f"{good[0].path}: partition values name")
    refused(dt, [good[0], good[0]], f"{good[0].path}: the file is listed twice")
    bad_stats = AddAction.from_dict({**a, "stats": '{"numRecords": -1}'})
    refused(dt, [bad_stats], "malformed statistics")
    unknown_col = AddAction.from_dict({**a, "stats": json.dumps({"numRecords": 1, "minValues": {"nope": 1}})})
    refused(dt, [unknown_col], "nope")
    with pytest.raises(TypeError, match="item 0 is dict"):
        dt.commit_files([a])  # type: ignore[list-item]
    # The good file commits after all that; committing it again is refused.
    dt.commit_files(good)
    refused(dt, good, "already in the table")


def test_an_allowed_location_admits_absolute_paths(pa, table_path, tmp_path):
    dt = new_table(pa, table_path)
    (add,) = dt.write_data_files(rows(pa, range(5)))
    shared = tmp_path / "shared"
    shared.mkdir()
    moved = shared / "f.parquet"
    os.rename(os.path.join(table_path, add.path), moved)
    absolute = AddAction.from_dict({**add.to_dict(), "path": moved.as_uri()})
    refused(dt, [absolute], "outside the table root")
    dt.commit_files([absolute], allowed_locations=[shared.as_uri()])
    assert ids_of(dt) == list(range(5))


def test_discard_deletes_only_unreferenced_data_files(pa, table_path):
    dt = new_table(pa, table_path)
    kept = dt.write_data_files(rows(pa, range(5)))
    dt.commit_files(kept)
    dropped = dt.write_data_files(rows(pa, range(5, 10)))
    assert data_files(table_path) == {a.path for a in kept + dropped}
    with pytest.raises(InvalidInputError, match="references it; nothing was deleted"):
        dt.discard_files(dropped + kept)
    with pytest.raises(InvalidInputError, match="not a data file"):
        dt.discard_files(["_delta_log/00000000000000000000.json"])
    assert data_files(table_path) == {a.path for a in kept + dropped}
    assert dt.discard_files(dropped) == len(dropped)
    assert dt.discard_files([a.path for a in dropped]) == len(dropped), "missing files count as deleted"
    assert data_files(table_path) == {a.path for a in kept}
    # A replaced file is still referenced (time travel reads it) within the retention.
    dt.commit_files(dt.write_data_files(rows(pa, range(3))), mode="overwrite")
    with pytest.raises(InvalidInputError, match="references it"):
        dt.discard_files(kept)
    assert ids_of(DeltaTable(table_path, version=1)) == list(range(5))


def test_interop_peers_read_committed_files(pa, peers, table_path):
    dt = new_table(pa, table_path, partition_by=["part"], configuration={"delta.enableDeletionVectors": "true"})
    adds = [a for p in "ab" for a in dt.write_data_files(rows(pa, range(2000) if p == "a" else range(2000, 3000), p))]
    dt.commit_files(adds, commit_properties=CommitProperties(app_transactions=[Transaction("j", 1)]))
    dt.delete("id % 5 = 0")
    dt.commit_files(dt.write_data_files(rows(pa, range(5000, 5100), "c")))
    ours = peers.digest(DeltaTable(table_path).to_pyarrow_table())
    for engine in ("deltalake", "duckdb", "polars"):
        theirs = peers.run_read(table_path, None, engine)
        assert theirs["status"] == "ok", f"{engine}: {theirs}"
        assert (theirs["rows"], theirs["rows_sha256"]) == (ours["rows"], ours["rows_sha256"]), engine
    import deltalake

    assert deltalake.DeltaTable(table_path).transaction_version("j") == 1


def test_the_package_exports_add_action():
    assert alluvium.AddAction is AddAction
    assert "AddAction" in alluvium.__all__
