"""One test body, two packages: the calls alluvium shares with deltalake give the same
results, names and return shapes whichever package runs them (``engine`` is ``alluvium``
or ``deltalake``), and each reads the tables the other wrote.

Engine-specific expectations are spelled out where the engines legitimately differ (the
name of the first commit's operation, alluvium's extra metrics).
"""

from __future__ import annotations

import datetime as dt
import importlib
import os
import time

import pytest

pa = pytest.importorskip("pyarrow")


def rows(tbl, *cols) -> list[tuple]:
    d = tbl.to_pydict()
    cols = cols or tuple(sorted(d))
    return sorted(zip(*(d[c] for c in cols)))


def data(ids, part=None, value=None):
    n = len(ids)
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "part": pa.array(part or [f"p{i % 2}" for i in ids], pa.string()),
            "value": pa.array(value or [float(i) for i in ids], pa.float64()),
        }
    )


def test_write_modes_and_reading(engine, table_path):
    engine.write_deltalake(table_path, data([1, 2, 3]), partition_by=["part"])
    dt0 = engine.DeltaTable(table_path)
    assert dt0.version() == 0
    assert dt0.metadata().partition_columns == ["part"]
    assert [f.name for f in dt0.schema().fields] == ["id", "part", "value"]
    with pytest.raises(Exception) as e:
        engine.write_deltalake(table_path, data([4]), partition_by=["part"])  # mode="error"
    if engine.__name__ == "alluvium":
        assert isinstance(e.value, engine.TableExistsError)
    engine.write_deltalake(table_path, data([4]), mode="ignore")
    assert engine.DeltaTable(table_path).version() == 0
    engine.write_deltalake(table_path, data([4, 5]), mode="append")
    engine.write_deltalake(table_path, data([10]), mode="overwrite", predicate="part = 'p0'")
    t = engine.DeltaTable(table_path)
    assert t.version() == 2
    assert rows(t.to_pyarrow_table(), "id", "part") == [(1, "p1"), (3, "p1"), (5, "p1"), (10, "p0")]
    # Columns and filters (deltalake's DNF lists).
    got = t.to_pyarrow_table(columns=["id"], filters=[("part", "=", "p1"), ("id", ">", 1)])
    assert got.column_names == ["id"]
    assert sorted(got.column("id").to_pylist()) == [3, 5]
    got = t.to_pyarrow_table(filters=[[("id", "=", 1)], [("id", "in", [10, 5])]])
    assert sorted(got.column("id").to_pylist()) == [1, 5, 10]
    assert len(t.file_uris()) == len(engine.DeltaTable(table_path).file_uris())
    # Time travel, by version and by time.
    t.load_as_version(1)
    assert t.version() == 1
    assert sorted(t.to_pyarrow_table().column("id").to_pylist()) == [1, 2, 3, 4, 5]
    t.load_as_version(dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=1))
    assert t.version() == 2
    assert engine.DeltaTable(table_path, version=0).version() == 0
    # Whole-table overwrite.
    engine.write_deltalake(table_path, data([7]), mode="overwrite")
    assert rows(engine.DeltaTable(table_path).to_pyarrow_table(), "id") == [(7,)]


def test_schema_merge_and_mismatch(engine, table_path):
    engine.write_deltalake(table_path, data([1]))
    extra = data([2]).append_column("note", pa.array(["n"]))
    with pytest.raises(Exception) as e:
        engine.write_deltalake(table_path, extra, mode="append")
    if engine.__name__ == "alluvium":
        assert isinstance(e.value, engine.SchemaMismatchError)
    engine.write_deltalake(table_path, extra, mode="append", schema_mode="merge")
    t = engine.DeltaTable(table_path)
    assert [f.name for f in t.schema().fields] == ["id", "part", "value", "note"]
    assert rows(t.to_pyarrow_table(), "id", "note") == [(1, None), (2, "n")]


def test_idempotent_writes_and_commit_metadata(engine, table_path):
    props = engine.CommitProperties(
        app_transactions=[engine.Transaction(app_id="ingest", version=3)],
        custom_metadata={"userName": "etl"},
    )
    engine.write_deltalake(table_path, data([1]), commit_properties=props)
    t = engine.DeltaTable(table_path)
    assert t.transaction_version("ingest") == 3
    assert t.transaction_version("other") is None
    again = engine.CommitProperties(app_transactions=[engine.Transaction(app_id="ingest", version=3)])
    engine.write_deltalake(t, data([1]), mode="append", commit_properties=again)
    engine.write_deltalake(t, data([2]), mode="append", commit_properties=engine.CommitProperties(
        app_transactions=[engine.Transaction(app_id="ingest", version=4)]))
    t = engine.DeltaTable(table_path)
    # alluvium skips the repeat; deltalake 1.6 records the txn but writes the repeat again.
    expected = [1, 2] if engine.__name__ == "alluvium" else [1, 1, 2]
    assert sorted(t.to_pyarrow_table().column("id").to_pylist()) == expected
    assert t.transaction_version("ingest") == 4
    h = t.history()
    assert [e["version"] for e in h] == [t.version() - i for i in range(len(h))]
    assert h[-1]["userName"] == "etl"
    assert all(isinstance(e["timestamp"], int) for e in h)
    assert len(t.history(1)) == 1


def test_delete_update_merge_metrics(engine, table_path):
    engine.write_deltalake(table_path, data(list(range(10))))
    t = engine.DeltaTable(table_path)
    m = t.delete("id = 3")
    for k in ("num_added_files", "num_removed_files", "num_deleted_rows", "num_copied_rows", "execution_time_ms"):
        assert k in m, k
    assert m["num_deleted_rows"] == 1
    assert t.version() == 1, "the handle moves to the version it committed"
    m = t.update(updates={"value": "value * 10"}, predicate="id >= 8")
    assert m["num_updated_rows"] == 2
    m = t.update(new_values={"part": "q"}, predicate="id = 0")
    assert m["num_updated_rows"] == 1
    src = pa.table({"id": pa.array([1, 20], pa.int64()), "part": ["s", "s"], "value": [0.5, 20.0]})
    m = (
        t.merge(src, "target.id = source.id", source_alias="source", target_alias="target")
        .when_matched_update(updates={"value": "source.value"})
        .when_not_matched_insert_all()
        .execute()
    )
    for k in (
        "num_source_rows",
        "num_target_rows_inserted",
        "num_target_rows_updated",
        "num_target_rows_deleted",
        "num_target_rows_copied",
        "num_output_rows",
        "num_target_files_added",
        "num_target_files_removed",
    ):
        assert k in m, k
    assert (m["num_source_rows"], m["num_target_rows_inserted"], m["num_target_rows_updated"]) == (2, 1, 1)
    got = rows(engine.DeltaTable(table_path).to_pyarrow_table(), "id", "part", "value")
    expect = [(i, "q" if i == 0 else f"p{i % 2}", float(i) * (10 if i >= 8 else 1)) for i in range(10) if i != 3]
    expect = [(1, "p1", 0.5) if r[0] == 1 else r for r in expect] + [(20, "s", 20.0)]
    assert got == sorted(expect)
    # NOT MATCHED BY SOURCE and a matched delete.
    m = (
        t.merge(pa.table({"id": pa.array([2], pa.int64())}), "t.id = s.id", source_alias="s", target_alias="t")
        .when_matched_delete()
        .when_not_matched_by_source_delete("t.id > 8")
        .execute()
    )
    assert m["num_target_rows_deleted"] == 3
    assert sorted(engine.DeltaTable(table_path).to_pyarrow_table().column("id").to_pylist()) == [0, 1, 4, 5, 6, 7, 8]


def test_optimize_vacuum_checkpoint_cleanup(engine, table_path):
    for i in range(5):
        engine.write_deltalake(table_path, data([i]), mode="append")
    t = engine.DeltaTable(table_path)
    m = t.optimize.compact()
    assert (m["numFilesAdded"], m["numFilesRemoved"]) == (1, 5)
    for k in ("filesAdded", "filesRemoved", "partitionsOptimized", "totalConsideredFiles"):
        assert k in m, k
    assert len(t.files() if hasattr(t, "files") else t.file_uris()) == 1
    m = t.optimize.z_order(["id", "value"])
    assert m["numFilesRemoved"] == 1
    listed = t.vacuum(retention_hours=0, enforce_retention_duration=False, dry_run=True)
    assert len(listed) == 6
    assert all("/" not in f or not f.startswith("/") for f in listed)
    t.create_checkpoint()
    t.cleanup_metadata()
    assert sorted(engine.DeltaTable(table_path).to_pyarrow_table().column("id").to_pylist()) == [0, 1, 2, 3, 4]


def test_optimize_records_custom_metadata(engine, table_path):
    for i in range(4):
        engine.write_deltalake(table_path, data([i]), mode="append")
    t = engine.DeltaTable(table_path)
    t.optimize.compact(commit_properties=engine.CommitProperties(custom_metadata={"ticket": "OPS-7"}))
    last = engine.DeltaTable(table_path).history(1)[0]
    assert (last["operation"], last["ticket"]) == ("OPTIMIZE", "OPS-7")
    t = engine.DeltaTable(table_path)
    t.optimize.z_order(["id"], commit_properties=engine.CommitProperties(custom_metadata={"ticket": "OPS-8"}))
    last = engine.DeltaTable(table_path).history(1)[0]
    assert (last["operation"], last["ticket"]) == ("OPTIMIZE", "OPS-8")


def test_alter_and_create(engine, table_path):
    schema = pa.schema([("id", pa.int64()), ("name", pa.string())])
    t = engine.DeltaTable.create(table_path, schema, partition_by=["name"], configuration={"delta.appendOnly": "false"})
    assert t.version() == 0
    assert engine.DeltaTable.is_deltatable(table_path)
    assert not engine.DeltaTable.is_deltatable(table_path + "-none")
    assert t.metadata().configuration["delta.appendOnly"] == "false"
    t.alter.set_table_properties({"delta.logRetentionDuration": "interval 2 days"})
    assert engine.DeltaTable(table_path).metadata().configuration["delta.logRetentionDuration"] == "interval 2 days"
    engine.write_deltalake(table_path, pa.table({"id": pa.array([1], pa.int64()), "name": ["a"]}), mode="append")
    t = engine.DeltaTable(table_path)
    t.alter.add_constraint({"id_positive": "id > 0"})
    assert "delta.constraints.id_positive" in engine.DeltaTable(table_path).metadata().configuration
    with pytest.raises(Exception):
        engine.write_deltalake(
            table_path, pa.table({"id": pa.array([-1], pa.int64()), "name": ["b"]}), mode="append"
        )
    t = engine.DeltaTable(table_path)
    t.alter.drop_constraint("id_positive")
    t.alter.drop_constraint("id_positive", raise_if_not_exists=False)
    assert "delta.constraints.id_positive" not in engine.DeltaTable(table_path).metadata().configuration


def test_create_overwrite_replaces_the_table(engine, table_path):
    engine.write_deltalake(table_path, data([1, 2, 3]), partition_by=["part"], configuration={"delta.enableChangeDataFeed": "true"})
    old_id = engine.DeltaTable(table_path).metadata().id
    schema = pa.schema([("name", pa.string()), ("score", pa.float64())])
    t = engine.DeltaTable.create(
        table_path,
        schema,
        mode="overwrite",
        configuration={"delta.logRetentionDuration": "interval 2 days"},
        commit_properties=engine.CommitProperties(custom_metadata={"ticket": "OPS-9"}),
    )
    assert t.version() == 1
    assert [f.name for f in t.schema().fields] == ["name", "score"]
    assert t.metadata().partition_columns == []
    assert t.metadata().configuration == {"delta.logRetentionDuration": "interval 2 days"}
    assert t.metadata().id != old_id
    assert t.to_pyarrow_table().num_rows == 0
    last = t.history(1)[0]
    assert (last["operation"], last["ticket"]) == ("CREATE OR REPLACE TABLE", "OPS-9")
    # The old version still reads with its own schema.
    assert rows(engine.DeltaTable(table_path, version=0).to_pyarrow_table(), "id") == [(1,), (2,), (3,)]
    engine.write_deltalake(table_path, pa.table({"name": ["x"], "score": [0.5]}), mode="append")
    assert rows(engine.DeltaTable(table_path).to_pyarrow_table(), "name", "score") == [("x", 0.5)]


def test_create_records_commit_properties(engine, table_path):
    schema = pa.schema([("id", pa.int64())])
    t = engine.DeltaTable.create(table_path, schema, commit_properties=engine.CommitProperties(custom_metadata={"ticket": "OPS-10"}))
    last = t.history(1)[0]
    assert (last["operation"], last["ticket"]) == ("CREATE TABLE", "OPS-10")


def test_create_overwrite_keeps_what_old_versions_need(table_path):
    import alluvium

    alluvium.write_deltalake(table_path, data([1, 2]), configuration={"delta.appendOnly": "true"})
    schema = pa.schema([("name", pa.string())])
    # An append-only table's rows may not be removed, by a replace either.
    with pytest.raises(alluvium.AlluviumError, match="append"):
        alluvium.DeltaTable.create(table_path, schema, mode="overwrite")
    assert alluvium.DeltaTable(table_path).version() == 0
    other = table_path + "-cdf"
    alluvium.write_deltalake(other, data([1]), configuration={"delta.enableChangeDataFeed": "true"})
    t = alluvium.DeltaTable.create(other, schema, mode="overwrite")
    # The protocol is never downgraded: version 0's readers and writers still need it.
    assert t.protocol().min_writer_version >= 4
    # No table there yet: created.
    fresh = alluvium.DeltaTable.create(table_path + "-new", schema, mode="overwrite")
    assert fresh.version() == 0


def test_partitions(engine, table_path):
    def key(p):
        return sorted((k, v or "") for k, v in p.items())

    t0 = pa.table({
        "a": pa.array([1, 2, 3, 4], pa.int64()),
        "y": pa.array([2020, 2021, None, 2021], pa.int32()),
        "s": ["x y", "y", "x y", None],
    })
    engine.write_deltalake(table_path, t0, partition_by=["y", "s"])
    t = engine.DeltaTable(table_path)
    expected = [{"y": "2020", "s": "x y"}, {"y": None, "s": "x y"}, {"y": "2021", "s": "y"}, {"y": "2021", "s": None}]
    assert sorted(t.partitions(), key=key) == sorted(expected, key=key)
    assert sorted(t.partitions(file_pruning_predicate=[("y", "=", "2021")]), key=key) == sorted(expected[2:], key=key)
    engine.write_deltalake(table_path + "-flat", pa.table({"a": pa.array([1], pa.int64())}))
    assert engine.DeltaTable(table_path + "-flat").partitions() == []


def test_partitions_under_column_mapping_use_logical_names(table_path):
    import alluvium

    schema = pa.schema([("a", pa.int64()), ("y", pa.string())])
    alluvium.DeltaTable.create(table_path, schema, partition_by=["y"], configuration={"delta.columnMapping.mode": "name"})
    alluvium.write_deltalake(table_path, pa.table({"a": pa.array([1, 2], pa.int64()), "y": ["p", "q"]}), mode="append")
    t = alluvium.DeltaTable(table_path)
    # The log keys the values by physical name; the partitions speak the table's names.
    assert "y" not in t.get_add_actions()[0]["partitionValues"]
    assert t.partitions() == [{"y": "p"}, {"y": "q"}]
    assert t.partitions("y = 'q'") == [{"y": "q"}]


def test_to_pyarrow_dataset(engine, table_path):
    import pyarrow.dataset as ds

    t0 = pa.table({
        "a": pa.array([1, 2, 3, 4], pa.int64()),
        "y": pa.array([2020, 2021, None, 2021], pa.int32()),
        "d": pa.array([dt.date(2024, 1, 1), dt.date(2024, 1, 2), dt.date(2024, 1, 1), None], pa.date32()),
        "s": ["x y", "y", "x y", None],
    })
    engine.write_deltalake(table_path, t0, partition_by=["y", "d"])
    t = engine.DeltaTable(table_path)
    dataset = t.to_pyarrow_dataset()
    assert isinstance(dataset, ds.Dataset)
    assert rows(dataset.to_table(), "a", "y", "d", "s") == rows(t0, "a", "y", "d", "s")
    # Filters reach the partition expressions and the files.
    got = dataset.to_table(filter=(ds.field("y") == 2021) & (ds.field("a") > 2))
    assert got.column("a").to_pylist() == [4]
    assert rows(dataset.to_table(filter=ds.field("y").is_null()), "a") == [(3,)]
    assert rows(dataset.to_table(columns=["a"], filter=ds.field("d") == dt.date(2024, 1, 1)), "a") == [(1,), (3,)]
    some = t.to_pyarrow_dataset(file_pruning_predicate=[("y", "=", "2021")])
    assert rows(some.to_table(), "a") == [(2,), (4,)]
    large = t.to_pyarrow_dataset(as_large_types=True)
    assert large.schema.field("s").type == pa.large_string()
    assert rows(large.to_table(), "a") == [(1,), (2,), (3,), (4,)]


def test_to_pyarrow_dataset_types_partition_values(engine, table_path):
    import decimal

    import pyarrow.dataset as ds

    utc = dt.timezone.utc
    t0 = pa.table({
        "a": pa.array([1, 2], pa.int64()),
        "t": pa.array([dt.datetime(2021, 1, 1, 12, 30, tzinfo=utc), dt.datetime(2022, 5, 1, 0, 0, 0, 123456, tzinfo=utc)],
                      pa.timestamp("us", "UTC")),
        "b": [True, False],
        "dec": pa.array([decimal.Decimal("1.50"), None], pa.decimal128(10, 2)),
    })
    # Each engine writes timestamp partition values its own way (delta-rs without a zone).
    engine.write_deltalake(table_path, t0, partition_by=["t", "b", "dec"])
    import alluvium

    dataset = alluvium.DeltaTable(table_path).to_pyarrow_dataset()
    assert dataset.to_table().sort_by("a").to_pylist() == t0.to_pylist()
    later = dataset.to_table(filter=ds.field("t") > dt.datetime(2022, 1, 1, tzinfo=utc))
    assert later.column("a").to_pylist() == [2]


def test_to_pyarrow_dataset_refuses_what_it_cannot_read(table_path):
    import alluvium

    alluvium.write_deltalake(table_path, data([1, 2, 3]), configuration={"delta.enableDeletionVectors": "true"})
    t = alluvium.DeltaTable(table_path)
    assert rows(t.to_pyarrow_dataset().to_table(), "id") == [(1,), (2,), (3,)]
    t.delete("id = 2")
    with pytest.raises(alluvium.UnsupportedFeatureError, match="deletion vectors"):
        t.to_pyarrow_dataset()
    mapped = table_path + "-mapped"
    alluvium.DeltaTable.create(mapped, pa.schema([("a", pa.int64())]), configuration={"delta.columnMapping.mode": "name"})
    with pytest.raises(alluvium.UnsupportedFeatureError, match="column mapping"):
        alluvium.DeltaTable(mapped).to_pyarrow_dataset()


def test_restore(engine, table_path):
    engine.write_deltalake(table_path, data([1, 2]))
    engine.write_deltalake(table_path, data([3]), mode="append")
    engine.write_deltalake(table_path, data([9]), mode="overwrite")
    t = engine.DeltaTable(table_path)
    m = t.restore(1)
    # Version 1 held two files, version 2 one: both engines' own metric names.
    assert (m["numRestoredFile"], m["numRemovedFile"]) == (2, 1)
    if engine.__name__ == "alluvium":
        assert (m["numRestoredFiles"], m["numRemovedFiles"], m["numOfFilesAfterRestore"]) == (2, 1, 2)
        assert m["restoredFilesSize"] > 0 and m["tableSizeAfterRestore"] > 0
    assert t.version() == 3
    assert rows(t.to_pyarrow_table(), "id") == [(1,), (2,), (3,)]
    assert rows(engine.DeltaTable(table_path).to_pyarrow_table(), "id") == [(1,), (2,), (3,)]
    assert t.history(1)[0]["operation"] == "RESTORE"
    with pytest.raises(Exception):
        t.restore(3)  # not older than the latest version
    assert engine.DeltaTable(table_path).version() == 3


def test_restore_refusals_and_idempotence(table_path):
    import alluvium

    # Commits a few milliseconds apart: two in one millisecond have their times made
    # increasing (PROTOCOL.md's monotonisation), which would move version 1's time past
    # its file's and make the restore by time below land on version 0.
    alluvium.write_deltalake(table_path, data([1]))
    time.sleep(0.02)
    alluvium.write_deltalake(table_path, data([2]), mode="append")
    time.sleep(0.02)
    t = alluvium.DeltaTable(table_path)
    with pytest.raises(alluvium.InvalidInputError, match="ignore_missing_files"):
        t.restore(0, ignore_missing_files=True)
    with pytest.raises(alluvium.InvalidInputError, match="not older than the latest version"):
        t.restore(1)
    assert alluvium.DeltaTable(table_path).version() == 1
    props = alluvium.CommitProperties(
        app_transactions=[alluvium.Transaction(app_id="rollback", version=1)],
        custom_metadata={"ticket": "OPS-1"},
    )
    assert t.restore(0, commit_properties=props)["numRemovedFile"] == 1
    assert t.version() == 2
    assert t.history(1)[0]["ticket"] == "OPS-1"
    assert t.transaction_version("rollback") == 1
    # The same application version again: skipped, nothing committed.
    assert t.restore(0, commit_properties=props)["numRemovedFile"] == 0
    assert alluvium.DeltaTable(table_path).version() == 2
    # By time: the latest version committed at or before version 1's commit.
    when = dt.datetime.fromtimestamp(os.path.getmtime(os.path.join(table_path, "_delta_log", f"{1:020}.json")), dt.timezone.utc)
    t.restore(when)
    assert t.version() == 3
    assert rows(t.to_pyarrow_table(), "id") == [(1,), (2,)]


def test_add_columns(engine, table_path):
    engine.write_deltalake(table_path, data([1, 2]))
    t = engine.DeltaTable(table_path)
    t.alter.add_columns([
        engine.Field("country", engine.schema.PrimitiveType("string"), nullable=True),
        engine.Field("score", engine.schema.PrimitiveType("double"), nullable=True),
    ])
    t = engine.DeltaTable(table_path)
    assert t.version() == 1  # both columns in one commit
    assert [f.name for f in t.schema().fields] == ["id", "part", "value", "country", "score"]
    got = t.to_pyarrow_table()
    assert got.column("country").to_pylist() == [None, None]
    assert got.column("score").to_pylist() == [None, None]
    engine.write_deltalake(table_path, pa.table({
        "id": pa.array([3], pa.int64()), "part": ["p1"], "value": [3.0],
        "country": ["NO"], "score": [0.5],
    }), mode="append")
    assert rows(engine.DeltaTable(table_path).to_pyarrow_table(), "id", "country") == [(1, None), (2, None), (3, "NO")]
    with pytest.raises(Exception):
        t.alter.add_columns(engine.Field("ID", engine.schema.PrimitiveType("long"), nullable=True))
    assert engine.DeltaTable(table_path).version() == 2


def test_add_columns_takes_either_packages_fields_and_commit_properties(table_path):
    import alluvium

    deltalake = pytest.importorskip("deltalake")
    alluvium.write_deltalake(table_path, data([1]))
    t = alluvium.DeltaTable(table_path)
    props = alluvium.CommitProperties(
        app_transactions=[alluvium.Transaction(app_id="migrate", version=1)], custom_metadata={"ticket": "OPS-2"}
    )
    t.alter.add_columns(deltalake.Field("a", deltalake.schema.PrimitiveType("integer"), nullable=True), commit_properties=props)
    assert t.version() == 1 and t.history(1)[0]["ticket"] == "OPS-2"
    assert t.schema().fields[-1].name == "a"
    # A retried job (the same field, the same application version): skipped.
    t.alter.add_columns(alluvium.Field("a", alluvium.PrimitiveType("integer")), commit_properties=props)
    assert alluvium.DeltaTable(table_path).version() == 1
    with pytest.raises(alluvium.InvalidInputError, match="NOT NULL"):
        t.alter.add_columns(alluvium.Field("c", alluvium.PrimitiveType("string"), nullable=False))
    with pytest.raises(alluvium.InvalidInputError, match="Field"):
        t.alter.add_columns(["d string"])
    assert alluvium.DeltaTable(table_path).version() == 1


def test_table_name_description_and_column_metadata(engine, table_path):
    engine.write_deltalake(table_path, data([1, 2]))
    t = engine.DeltaTable(table_path)
    t.alter.set_table_name("orders")
    t.alter.set_table_description("one row per order")
    t.alter.set_column_metadata("value", {"comment": "in euros", "owner": "sales"})
    t.alter.set_column_metadata("value", {"comment": "in EUR"})
    t = engine.DeltaTable(table_path)
    assert t.version() == 4  # one commit each
    md = t.metadata()
    assert (md.name, md.description) == ("orders", "one row per order")
    value = next(f for f in t.schema().fields if f.name == "value")
    assert value.metadata["comment"] == "in EUR" and value.metadata["owner"] == "sales"
    assert rows(t.to_pyarrow_table(), "id", "value") == [(1, 1.0), (2, 2.0)]
    with pytest.raises(Exception):
        t.alter.set_column_metadata("missing", {"comment": "x"})
    assert engine.DeltaTable(table_path).version() == 4


def test_table_info_takes_commit_properties_and_refuses_reserved_keys(table_path):
    import alluvium

    alluvium.write_deltalake(table_path, data([1]))
    t = alluvium.DeltaTable(table_path)
    props = alluvium.CommitProperties(
        app_transactions=[alluvium.Transaction(app_id="docs", version=1)], custom_metadata={"ticket": "OPS-3"}
    )
    t.alter.set_table_description("v1", commit_properties=props)
    assert t.version() == 1 and t.history(1)[0]["ticket"] == "OPS-3"
    assert t.history(1)[0]["operation"] == "UPDATE TABLE METADATA"
    # A retried job (the same application version): skipped.
    t.alter.set_table_description("v1", commit_properties=props)
    assert alluvium.DeltaTable(table_path).version() == 1
    for key in ("delta.columnMapping.id", "CURRENT_DEFAULT"):
        with pytest.raises(alluvium.InvalidInputError, match="reserved"):
            t.alter.set_column_metadata("value", {key: "9"})
    with pytest.raises(alluvium.InvalidInputError, match="no column"):
        t.alter.set_column_metadata("missing", {"comment": "x"})
    assert alluvium.DeltaTable(table_path).version() == 1


def test_optimize_refuses_engine_fields_and_app_transactions_before_rewriting(table_path):
    import alluvium

    for i in range(3):
        alluvium.write_deltalake(table_path, data([i]), mode="append")
    t = alluvium.DeltaTable(table_path)
    files = sorted(os.listdir(table_path))
    with pytest.raises(alluvium.InvalidInputError, match="commitInfo.operation"):
        t.optimize.compact(commit_properties=alluvium.CommitProperties(custom_metadata={"operation": "X"}))
    app = alluvium.CommitProperties(app_transactions=[alluvium.Transaction(app_id="nightly", version=1)])
    with pytest.raises(alluvium.InvalidInputError, match="application transactions"):
        t.optimize.z_order(["id"], commit_properties=app)
    assert alluvium.DeltaTable(table_path).version() == 2
    assert sorted(os.listdir(table_path)) == files
    with pytest.raises(alluvium.InvalidInputError, match="commitInfo.timestamp"):
        t.vacuum(retention_hours=0, dry_run=False, enforce_retention_duration=False,
                 commit_properties=alluvium.CommitProperties(custom_metadata={"timestamp": 1}))
    # VACUUM's two commits carry the fields too.
    t.optimize.compact()
    ticket = alluvium.CommitProperties(custom_metadata={"ticket": "OPS-9"})
    assert len(t.vacuum(retention_hours=0, dry_run=False, enforce_retention_duration=False,
                        commit_properties=ticket)) == 3
    assert [(h["operation"], h["ticket"]) for h in alluvium.DeltaTable(table_path).history(2)] == [
        ("VACUUM END", "OPS-9"), ("VACUUM START", "OPS-9")]


def test_alter_takes_commit_properties(table_path):
    import alluvium

    alluvium.write_deltalake(table_path, data([1, 2]))
    t = alluvium.DeltaTable(table_path)

    def props(app):
        return alluvium.CommitProperties(
            app_transactions=[alluvium.Transaction(app_id=app, version=2)], custom_metadata={"ticket": "OPS-4"}
        )

    calls = [
        ("props", "SET TBLPROPERTIES", lambda p: t.alter.set_table_properties({"delta.appendOnly": "false"}, commit_properties=p)),
        ("feature", "SET TBLPROPERTIES", lambda p: t.alter.add_feature(
            "changeDataFeed", allow_protocol_versions_increase=True, commit_properties=p)),
        ("check", "ADD CONSTRAINT", lambda p: t.alter.add_constraint({"positive": "id > 0"}, commit_properties=p)),
        ("uncheck", "DROP CONSTRAINT", lambda p: t.alter.drop_constraint("positive", commit_properties=p)),
    ]
    for app, operation, call in calls:
        before = t.version()
        call(props(app))
        assert t.version() == before + 1, app
        last = t.history(1)[0]
        assert (last["operation"], last["ticket"]) == (operation, "OPS-4"), app
        assert t.transaction_version(app) == 2, app
        # A retried job (the same application version): skipped, nothing committed.
        call(props(app))
        assert alluvium.DeltaTable(table_path).version() == before + 1, app
    # Several constraints are several commits: with an application transaction the second
    # would be taken for a repeat of the first, so the call is refused whole.
    before = t.version()
    with pytest.raises(alluvium.InvalidInputError, match="one constraint per call"):
        t.alter.add_constraint({"a": "id > 0", "b": "id < 9"}, commit_properties=props("two"))
    assert alluvium.DeltaTable(table_path).version() == before
    t.alter.add_constraint({"a": "id > 0", "b": "id < 9"},
                           commit_properties=alluvium.CommitProperties(custom_metadata={"ticket": "OPS-5"}))
    assert [h["ticket"] for h in t.history(2)] == ["OPS-5", "OPS-5"]
    # raise_if_not_exists=False drops one that exists, based on the version it checked.
    before = t.version()
    t.alter.drop_constraint("a", raise_if_not_exists=False,
                            commit_properties=alluvium.CommitProperties(custom_metadata={"ticket": "OPS-6"}))
    assert t.version() == before + 1 and t.history(1)[0]["ticket"] == "OPS-6"
    assert "delta.constraints.a" not in alluvium.DeltaTable(table_path).metadata().configuration


def _written_file(table_path, name, ids, part="p9"):
    """A Parquet file of ``data(ids)`` (without ``part``) written under the table root, and
    deltalake's add action for it in partition ``part``."""
    import json

    import pyarrow.parquet as pq

    tx = pytest.importorskip("deltalake.transaction")
    rel = f"part={part}/{name}.parquet"
    os.makedirs(os.path.join(table_path, f"part={part}"), exist_ok=True)
    pq.write_table(data(ids).drop_columns(["part"]), os.path.join(table_path, rel))
    stats = {
        "numRecords": len(ids),
        "minValues": {"id": min(ids), "value": float(min(ids))},
        "maxValues": {"id": max(ids), "value": float(max(ids))},
        "nullCount": {"id": 0, "value": 0},
    }
    return tx.AddAction(
        rel, os.path.getsize(os.path.join(table_path, rel)), {"part": part}, int(time.time() * 1000), True, json.dumps(stats)
    )


def test_create_write_transaction(engine, table_path):
    engine.write_deltalake(table_path, data([1, 2]), partition_by=["part"])
    t = engine.DeltaTable(table_path)
    t.create_write_transaction([_written_file(table_path, "a", [10, 11])], "append", data([1]).schema, partition_by=["part"])
    t = engine.DeltaTable(table_path)
    assert t.version() == 1
    assert rows(t.to_pyarrow_table(), "id", "part") == [(1, "p1"), (2, "p0"), (10, "p9"), (11, "p9")]
    # The statistics skip the file for a filter outside its bounds.
    assert rows(t.to_pyarrow_table(filters=[("id", ">", 5)]), "id") == [(10,), (11,)]
    t.create_write_transaction([_written_file(table_path, "b", [20])], "overwrite", data([1]).schema, partition_by="part")
    assert rows(engine.DeltaTable(table_path).to_pyarrow_table(), "id", "part") == [(20, "p9")]


def test_create_write_transaction_refuses_what_would_change_the_table(table_path):
    import alluvium

    alluvium.write_deltalake(table_path, data([1, 2]), partition_by=["part"])
    t = alluvium.DeltaTable(table_path)
    add = _written_file(table_path, "a", [10])
    props = alluvium.CommitProperties(app_transactions=[alluvium.Transaction(app_id="job", version=3)])
    wider = data([1]).append_column("extra", pa.array([1], pa.int32())).schema
    retyped = pa.schema([pa.field("id", pa.string()), pa.field("part", pa.string()), pa.field("value", pa.float64())])
    with pytest.raises(alluvium.SchemaMismatchError, match="extra"):
        t.create_write_transaction([add], "append", wider, partition_by=["part"])
    with pytest.raises(alluvium.SchemaMismatchError, match="another type"):
        t.create_write_transaction([add], "append", retyped, partition_by=["part"])
    # Only an overwrite of the whole table replaces the schema.
    with pytest.raises(alluvium.SchemaMismatchError, match="whole table"):
        t.create_write_transaction(
            [add], "overwrite", wider, partition_by=["part"], partition_filters=[("part", "=", "p9")]
        )
    with pytest.raises(alluvium.InvalidInputError, match="partitioning"):
        t.create_write_transaction([add], "append", data([1]).schema, partition_by=["id"])
    with pytest.raises(alluvium.InvalidInputError, match="add and remove actions"):
        t.create_write_transaction([object()], "append", data([1]).schema, partition_by=["part"])
    assert alluvium.DeltaTable(table_path).version() == 0
    # A Delta schema (the table's own) is compared too; a retried job is skipped.
    t.create_write_transaction([add], "append", t.schema(), partition_by=["part"], commit_properties=props)
    t.create_write_transaction([add], "append", t.schema(), partition_by=["part"], commit_properties=props)
    assert alluvium.DeltaTable(table_path).version() == 1
    assert alluvium.DeltaTable(table_path).to_pyarrow_table().num_rows == 3


def test_create_write_transaction_replaces_partitions_and_removes_files(engine, table_path):
    tx = pytest.importorskip("deltalake.transaction")
    engine.write_deltalake(table_path, data([1, 2, 3, 4]), partition_by=["part"])
    t = engine.DeltaTable(table_path)
    schema = data([1]).schema
    # An overwrite with partition filters replaces those partitions only.
    t.create_write_transaction(
        [_written_file(table_path, "a", [10], part="p0")],
        "overwrite",
        schema,
        partition_by=["part"],
        partition_filters=[("part", "=", "p0")],
    )
    t = engine.DeltaTable(table_path)
    assert t.version() == 1
    assert rows(t.to_pyarrow_table(), "id", "part") == [(1, "p1"), (3, "p1"), (10, "p0")]
    # An append with remove actions replaces the files it names in the same commit.
    removes = [
        tx.RemoveAction(path=f, data_change=True, deletion_timestamp=int(time.time() * 1000))
        for f in (os.path.relpath(u.removeprefix("file://"), table_path) for u in t.file_uris())
        if f.startswith("part=p1/")
    ]
    assert removes
    t.create_write_transaction([_written_file(table_path, "b", [20], part="p1"), *removes], "append", schema)
    t = engine.DeltaTable(table_path)
    assert t.version() == 2
    assert rows(t.to_pyarrow_table(), "id", "part") == [(10, "p0"), (20, "p1")]


def test_create_write_transaction_refuses_what_deltalake_would_let_through(table_path):
    """Stricter than deltalake, as Delta's replaceWhere is: nothing is committed."""
    import alluvium

    tx = pytest.importorskip("deltalake.transaction")
    alluvium.write_deltalake(table_path, data([1, 2]), partition_by=["part"])
    t = alluvium.DeltaTable(table_path)
    schema = data([1]).schema
    live = t.files()[0]
    now = int(time.time() * 1000)
    p0 = [("part", "=", "p0")]
    cases = [
        # An add outside the partitions the overwrite replaces.
        (([_written_file(table_path, "a", [10])], "overwrite"), {"partition_filters": p0}, "partitions the overwrite replaces"),
        # Filters name partitions an overwrite replaces; a data column is not one.
        (([_written_file(table_path, "b", [10], part="p0")], "append"), {"partition_filters": p0}, "mode='overwrite'"),
        (([_written_file(table_path, "c", [10], part="p0")], "overwrite"), {"partition_filters": [("id", "=", 1)]}, "partition columns"),
        # Remove actions: with an append, of a live file, as a change of data.
        (([tx.RemoveAction(path=live, data_change=True, deletion_timestamp=now)], "overwrite"), {}, "mode='append'"),
        (([tx.RemoveAction(path=live, data_change=False, deletion_timestamp=now)], "append"), {}, "data_change=False"),
        (([tx.RemoveAction(path="part=p0/gone.parquet", data_change=True, deletion_timestamp=now)], "append"), {},
         "not in the table's latest version"),
    ]
    for (actions, mode), kwargs, message in cases:
        with pytest.raises(alluvium.InvalidInputError, match=message):
            t.create_write_transaction(actions, mode, schema, partition_by=["part"], **kwargs)
    assert alluvium.DeltaTable(table_path).version() == 0
    assert alluvium.DeltaTable(table_path).files() == t.files()


def test_overwrite_schema(engine, table_path):
    engine.write_deltalake(table_path, data([1, 2, 3]), partition_by=["part"], configuration={"delta.logRetentionDuration": "interval 3 days"})
    new = pa.table({"name": ["x", "y"], "score": [1.5, 2.5], "bucket": ["hot", "cold"]})
    engine.write_deltalake(table_path, new, mode="overwrite", schema_mode="overwrite", partition_by=["bucket"])
    t = engine.DeltaTable(table_path)
    assert t.version() == 1
    assert [f.name for f in t.schema().fields] == ["name", "score", "bucket"]
    assert t.metadata().partition_columns == ["bucket"]
    assert t.metadata().configuration.get("delta.logRetentionDuration") == "interval 3 days"
    assert rows(t.to_pyarrow_table(), "name", "score", "bucket") == [("x", 1.5, "hot"), ("y", 2.5, "cold")]
    # The old version still reads with its schema.
    assert rows(engine.DeltaTable(table_path, version=0).to_pyarrow_table(), "id") == [(1,), (2,), (3,)]


def test_overwrite_schema_needs_a_whole_overwrite(table_path):
    import alluvium

    alluvium.write_deltalake(table_path, data([1, 2]))
    new = pa.table({"name": ["x"]})
    for kwargs in ({"mode": "append"}, {"mode": "overwrite", "predicate": "id = 1"}):
        with pytest.raises(alluvium.InvalidInputError, match="schema_mode='overwrite'"):
            alluvium.write_deltalake(table_path, new, schema_mode="overwrite", **kwargs)
    # Without it the schema is enforced.
    with pytest.raises(alluvium.SchemaMismatchError):
        alluvium.write_deltalake(table_path, new, mode="overwrite")
    assert alluvium.DeltaTable(table_path).version() == 0


def test_create_write_transaction_overwrite_replaces_the_schema(engine, table_path):
    import json

    import pyarrow.parquet as pq

    tx = pytest.importorskip("deltalake.transaction")
    engine.write_deltalake(table_path, data([1, 2]), partition_by=["part"])
    t = engine.DeltaTable(table_path)
    # Files of another schema (a column added, one dropped), written by another engine.
    wider = pa.table({"id": pa.array([7], pa.int64()), "score": pa.array([0.5])})
    rel = "part=p9/wider.parquet"
    os.makedirs(os.path.join(table_path, "part=p9"), exist_ok=True)
    pq.write_table(wider, os.path.join(table_path, rel))
    stats = {"numRecords": 1, "minValues": {"id": 7, "score": 0.5}, "maxValues": {"id": 7, "score": 0.5},
             "nullCount": {"id": 0, "score": 0}}
    add = tx.AddAction(rel, os.path.getsize(os.path.join(table_path, rel)), {"part": "p9"}, int(time.time() * 1000),
                       True, json.dumps(stats))
    schema = pa.schema([pa.field("id", pa.int64()), pa.field("score", pa.float64()), pa.field("part", pa.string())])
    t.create_write_transaction([add], "overwrite", schema, partition_by=["part"])
    t = engine.DeltaTable(table_path)
    assert sorted(f.name for f in t.schema().fields) == ["id", "part", "score"]
    assert rows(t.to_pyarrow_table(), "id", "score", "part") == [(7, 0.5, "p9")]


def test_writer_properties_choose_the_codec(engine, table_path):
    import pyarrow.parquet as pq

    props = engine.WriterProperties(compression="ZSTD", compression_level=3)
    engine.write_deltalake(table_path, data([1, 2, 3]), writer_properties=props)
    engine.write_deltalake(table_path, data([4]), mode="append")
    files = sorted(
        os.path.join(d, f) for d, _, fs in os.walk(table_path) for f in fs if f.endswith(".parquet")
    )
    codecs = sorted(pq.ParquetFile(f).metadata.row_group(0).column(0).compression for f in files)
    assert codecs == ["SNAPPY", "ZSTD"]
    assert "delta.parquet.compression.codec" not in engine.DeltaTable(table_path).metadata().configuration
    assert rows(engine.DeltaTable(table_path).to_pyarrow_table(), "id") == [(1,), (2,), (3,), (4,)]


def test_writer_properties_apply_to_dml_and_optimize(engine, table_path):
    import pyarrow.parquet as pq

    def codecs():
        return {
            os.path.join(d, f): pq.ParquetFile(os.path.join(d, f)).metadata.row_group(0).column(0).compression
            for d, _, fs in os.walk(table_path)
            for f in fs
            if f.endswith(".parquet") and "_delta_log" not in d
        }

    seen = {}

    def added():
        now = codecs()
        new = sorted(c for f, c in now.items() if f not in seen)
        seen.update(now)
        return new

    engine.write_deltalake(table_path, data([1, 2]))
    engine.write_deltalake(table_path, data([3, 4]), mode="append")
    added()
    t = engine.DeltaTable(table_path)
    t.delete("id = 1", writer_properties=engine.WriterProperties(compression="ZSTD"))
    assert set(added()) == {"ZSTD"}
    t = engine.DeltaTable(table_path)
    t.update(updates={"value": "0.5"}, predicate="id = 3", writer_properties=engine.WriterProperties(compression="GZIP"))
    assert set(added()) == {"GZIP"}
    t = engine.DeltaTable(table_path)
    (
        t.merge(data([4, 5]), "t.id = s.id", source_alias="s", target_alias="t",
                writer_properties=engine.WriterProperties(compression="LZ4_RAW"))
        .when_matched_update_all()
        .when_not_matched_insert_all()
        .execute()
    )
    assert set(added()) == {"LZ4"}  # pyarrow names LZ4_RAW so
    t = engine.DeltaTable(table_path)
    t.optimize.compact(writer_properties=engine.WriterProperties(compression="BROTLI"))
    assert set(added()) == {"BROTLI"}
    assert rows(engine.DeltaTable(table_path).to_pyarrow_table(), "id", "value") == [(2, 2.0), (3, 0.5), (4, 4.0), (5, 5.0)]


def test_writer_properties_refuse_an_unknown_codec(table_path):
    import alluvium

    with pytest.raises(alluvium.InvalidInputError, match="LZO"):
        alluvium.write_deltalake(table_path, data([1]), writer_properties=alluvium.WriterProperties(compression="LZO"))
    assert not alluvium.DeltaTable.is_deltatable(table_path)


def test_change_data_feed(engine, table_path):
    engine.write_deltalake(table_path, data([1, 2, 3]), configuration={"delta.enableChangeDataFeed": "true"})
    t = engine.DeltaTable(table_path)
    t.delete("id = 2")
    t.update(updates={"value": "0.0"}, predicate="id = 3")
    feed = pa.table(t.load_cdf(0))
    assert {"_change_type", "_commit_version", "_commit_timestamp"} <= set(feed.column_names)
    changes = sorted(
        zip(feed.column("id").to_pylist(), feed.column("_change_type").to_pylist(), feed.column("_commit_version").to_pylist())
    )
    assert changes == [
        (1, "insert", 0),
        (2, "delete", 1),
        (2, "insert", 0),
        (3, "insert", 0),
        (3, "update_postimage", 2),
        (3, "update_preimage", 2),
    ]
    later = pa.table(t.load_cdf(starting_version=2))
    assert sorted(later.column("_change_type").to_pylist()) == ["update_postimage", "update_preimage"]


@pytest.mark.parametrize("writer,reader", [("alluvium", "deltalake"), ("deltalake", "alluvium")])
def test_each_reads_what_the_other_wrote(writer, reader, table_path):
    pytest.importorskip("deltalake")
    w = importlib.import_module(writer)
    r = importlib.import_module(reader)
    w.write_deltalake(table_path, data([1, 2, 3]), partition_by=["part"])
    w.write_deltalake(table_path, data([4]), mode="append")
    w.DeltaTable(table_path).delete("id = 1")
    t = r.DeltaTable(table_path)
    assert t.version() == 2
    assert rows(t.to_pyarrow_table(), "id", "part") == [(2, "p0"), (3, "p1"), (4, "p0")]
    assert t.metadata().partition_columns == ["part"]
    # And writes on top of it.
    r.write_deltalake(table_path, data([5]), mode="append")
    r.DeltaTable(table_path).update(new_values={"value": 9.5}, predicate="id = 5")
    assert rows(w.DeltaTable(table_path).to_pyarrow_table(), "id", "value") == [(2, 2.0), (3, 3.0), (4, 4.0), (5, 9.5)]
    # Commit timestamps are milliseconds either way.
    assert abs(w.DeltaTable(table_path).history(1)[0]["timestamp"] / 1000 - time.time()) < 600


def test_repair(engine, table_path):
    import pyarrow.parquet as pq

    for ids in ([1, 2], [3], [4]):
        engine.write_deltalake(table_path, data(ids), mode="append")
    lost = sorted(f for f in os.listdir(table_path) if f.endswith(".parquet"))[0]
    gone = set(pq.read_table(os.path.join(table_path, lost)).column("id").to_pylist())
    os.remove(os.path.join(table_path, lost))
    dry = engine.DeltaTable(table_path).repair(dry_run=True)
    assert dry["dry_run"] is True and dry["files_removed"] == [lost]
    assert engine.DeltaTable(table_path).version() == 2
    done = engine.DeltaTable(table_path).repair()
    assert done["files_removed"] == [lost]
    t = engine.DeltaTable(table_path)
    assert t.version() == 3 and t.history(1)[0]["operation"] == "FSCK"
    # The other files' rows read again.
    assert rows(t.to_pyarrow_table(), "id") == [(i,) for i in (1, 2, 3, 4) if i not in gone]
    assert engine.DeltaTable(table_path).repair()["files_removed"] == []


def test_repair_removes_a_file_whose_deletion_vector_is_lost(table_path):
    """alluvium looks up deletion vector files too (deltalake does not): a file whose vector
    is lost is removed with its live rows, as Databricks' FSCK removes it."""
    import alluvium

    alluvium.write_deltalake(table_path, data(list(range(1000))), configuration={"delta.enableDeletionVectors": "true"})
    alluvium.write_deltalake(table_path, data([5000]), mode="append")
    alluvium.DeltaTable(table_path).delete("id < 1000 AND id % 2 = 0")
    dvs = [f for f in os.listdir(table_path) if f.startswith("deletion_vector_")]
    assert len(dvs) == 1, "the vector of 500 scattered rows goes to a file"
    assert alluvium.DeltaTable(table_path).repair(dry_run=True)["entries"] == []
    os.remove(os.path.join(table_path, dvs[0]))
    dry = alluvium.DeltaTable(table_path).repair(dry_run=True)
    [entry] = dry["entries"]
    assert entry["data_file_missing"] is False and entry["deletion_vector_file_missing"] is True
    assert entry["deletion_vector_path"] == dvs[0] and dry["files_removed"] == [entry["data_file_path"]]
    done = alluvium.DeltaTable(table_path).repair()
    assert done["version"] == 3 and done["entries"] == dry["entries"]
    assert rows(alluvium.DeltaTable(table_path).to_pyarrow_table(), "id") == [(5000,)]


def test_add_feature(engine, table_path):
    engine.write_deltalake(table_path, data([1]))
    t = engine.DeltaTable(table_path)
    assert t.protocol().min_writer_version < 7
    with pytest.raises(Exception):
        t.alter.add_feature(engine.TableFeatures.DeletionVectors)
    assert engine.DeltaTable(table_path).version() == 0
    t.alter.add_feature([engine.TableFeatures.DeletionVectors], allow_protocol_versions_increase=True)
    p = engine.DeltaTable(table_path).protocol()
    assert (p.min_reader_version, p.min_writer_version) == (3, 7)
    assert "deletionVectors" in p.writer_features and "deletionVectors" in p.reader_features
    assert "delta.enableDeletionVectors" not in engine.DeltaTable(table_path).metadata().configuration
