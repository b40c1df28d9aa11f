"""``ArrowStream`` through every consumer of the Arrow PyCapsule interface, read once; the
keyed state store from Python."""

from __future__ import annotations

import datetime as dt

import pytest

pa = pytest.importorskip("pyarrow")

import alluvium  # noqa: E402


@pytest.fixture
def table(table_path):
    alluvium.write_deltalake(
        table_path,
        pa.table({"id": pa.array(range(1000), pa.int64()), "name": [f"n{i % 10}" for i in range(1000)]}),
        partition_by=["name"],
    )
    return alluvium.DeltaTable(table_path)


def test_every_consumer_takes_a_stream(table):
    t = pa.table(table.scan(filter="id < 100"))
    assert t.num_rows == 100
    assert t.schema.names == ["id", "name"]
    polars = pytest.importorskip("polars")
    df = polars.DataFrame(table.scan(columns=["id"], filter="name = 'n3'"))
    assert df.height == 100 and df.columns == ["id"]
    assert len(polars.from_arrow(table.scan(columns=["id"]))) == 1000
    duckdb = pytest.importorskip("duckdb")
    s = table.scan()
    assert duckdb.sql("SELECT count(DISTINCT name) FROM s").fetchone() == (10,)
    arro3 = pytest.importorskip("arro3.core")
    assert arro3.Table.from_arrow(table.scan(filter="id = 7")).num_rows == 1


def test_a_stream_is_read_once_and_knows_its_schema(table):
    s = table.scan(columns=["name", "id"])
    assert pa.schema(s).names == ["name", "id"]
    assert s.schema.names == ["name", "id"]
    assert not s.consumed
    assert s.read_all().num_rows == 1000
    assert s.consumed
    with pytest.raises(alluvium.InvalidInputError, match="already consumed"):
        s.read_all()
    with pytest.raises(alluvium.InvalidInputError, match="already consumed"):
        pa.table(s)
    # An empty result still has its schema.
    empty = table.to_pyarrow_table(filters=[("id", "<", 0)])
    assert empty.num_rows == 0 and empty.schema.names == ["id", "name"]


def test_streams_feed_writes(table, tmp_path):
    copy = str(tmp_path / "copy")
    alluvium.write_deltalake(copy, table.scan(filter="id >= 500"), partition_by=["name"])
    assert alluvium.DeltaTable(copy).count() == 500
    # A stream of a table into a MERGE of another, and the schema objects.
    m = alluvium.DeltaTable(copy).merge(table.scan(filter="id < 10"), "t.id = s.id").when_not_matched_insert_all().execute()
    assert m["num_target_rows_inserted"] == 10
    schema = table.schema()
    assert [f.name for f in schema.fields] == ["id", "name"]
    assert schema.fields[0].type == alluvium.PrimitiveType("long")
    assert pa.schema(schema).names == ["id", "name"]
    assert schema.to_arrow().field("id").type == pa.int64()
    again = alluvium.DeltaTable.create(str(tmp_path / "same"), schema)
    assert [f.name for f in again.schema().fields] == ["id", "name"]


def test_state_store(tmp_path):
    store = alluvium.StateStore.create(
        str(tmp_path / "balances"),
        "user",
        pa.schema([("user", pa.string()), ("balance", pa.int64())]),
    )
    t0 = dt.datetime(2024, 5, 1, 9, tzinfo=dt.timezone.utc)

    def events(rows):
        return pa.table(
            {
                "user": [r[0] for r in rows],
                "balance": pa.array([r[1] for r in rows], pa.int64()),
                "event_time": pa.array([t0 + dt.timedelta(hours=r[2]) for r in rows], pa.timestamp("us", "UTC")),
                "op": [r[3] for r in rows],
            }
        )

    put = store.put(events([("alice", 100, 0, "UPSERT"), ("bob", 50, 0, "UPSERT"), ("alice", 120, 1, "UPSERT")]))
    assert put["events"] == 3
    # Idempotent puts: a repeat is skipped.
    once = events([("carol", 7, 2, "UPSERT")])
    assert not store.put(once, app_id="feed", app_version=1)["skipped"]
    assert store.put(once, app_id="feed", app_version=1)["skipped"]
    synced = store.sync()
    assert synced["events"] == 4
    got = pa.table(store.get(pa.table({"user": ["alice", "bob", "carol", "dave"]})))
    assert sorted(zip(got.column("user").to_pylist(), got.column("balance").to_pylist())) == [
        ("alice", 120),
        ("bob", 50),
        ("carol", 7),
    ]
    store.put(events([("bob", 0, 3, "DELETE"), ("alice", 90, -1, "UPSERT")]))  # a late event loses
    store.sync()
    state = pa.table(store.scan())
    assert sorted(zip(state.column("user").to_pylist(), state.column("balance").to_pylist())) == [
        ("alice", 120),
        ("carol", 7),
    ]
    before = pa.table(store.scan(version=1))
    assert "bob" in before.column("user").to_pylist()
    history = pa.table(store.history(pa.table({"user": ["alice"]})))
    assert history.num_rows == 3
    status = alluvium.StateStore.open(str(tmp_path / "balances")).status()
    assert status["keys"] == 2 and status["lag"]["versions"] == 0
