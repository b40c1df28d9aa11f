"""Interop: tables alluvium writes from Python (deletion vectors, change data feed,
partitions, schema evolution) read identically in delta-rs (deltalake's QueryBuilder, which
reads deletion vectors where ``to_pyarrow_table`` refuses them), DuckDB's delta extension
(delta-kernel-rs) and polars; the change feed equals deltalake's ``load_cdf`` on
copy-on-write tables.

The peers kit's ``oracle.py`` reads each engine and digests the rows canonically (order,
file layout and Arrow flavour do not matter), so equal digests mean equal content.
"""

from __future__ import annotations

import pytest

pa = pytest.importorskip("pyarrow")

import alluvium  # noqa: E402

ENGINES = ("deltalake", "duckdb", "polars")


def own_digest(oracle, path: str, version: int | None = None) -> dict:
    dt = alluvium.DeltaTable(path, version=version)
    return oracle.digest(dt.to_pyarrow_table())


def assert_peers_agree(oracle, path: str, version: int | None = None) -> dict:
    ours = own_digest(oracle, path, version)
    for engine in ENGINES:
        theirs = oracle.run_read(path, version, engine)
        assert theirs["status"] == "ok", f"{engine}: {theirs}"
        assert (theirs["rows"], theirs["rows_sha256"]) == (ours["rows"], ours["rows_sha256"]), (
            f"{engine} reads {theirs['rows']} rows, alluvium {ours['rows']} (version {version})"
        )
    return ours


def source(ids, tag: str) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "region": pa.array(["eu" if i % 3 else "us" for i in ids]),
            "tag": pa.array([tag] * len(ids)),
            "amount": pa.array([i * 0.25 for i in ids], pa.float64()),
        }
    )


def test_deletion_vector_and_cdf_tables_read_the_same_everywhere(peers, tmp_path):
    path = str(tmp_path / "dv")
    config = {"delta.enableDeletionVectors": "true", "delta.enableChangeDataFeed": "true"}
    alluvium.write_deltalake(path, source(range(0, 5000), "a"), partition_by=["region"], configuration=config)
    alluvium.write_deltalake(path, source(range(5000, 6000), "b"), mode="append")
    dt = alluvium.DeltaTable(path)
    d = dt.delete("id % 10 = 0")
    assert d["num_deletion_vectors_added"] >= 2
    u = dt.update(updates={"tag": "'u'"}, predicate="id BETWEEN 100 AND 200")
    assert u["num_deletion_vectors_added"] >= 1
    m = (
        dt.merge(source([1, 2, 3, 9000, 9001], "m"), "t.id = s.id")
        .when_matched_update_all()
        .when_not_matched_insert_all()
        .execute()
    )
    assert (m["num_target_rows_updated"], m["num_target_rows_inserted"]) == (3, 2)
    assert "deletionVectors" in (dt.protocol().reader_features or [])
    # Every version reads the same in every engine.
    for v in range(dt.version() + 1):
        assert_peers_agree(peers, path, v)
    # And after OPTIMIZE purges the deletion vectors, and with a checkpoint.
    dt.optimize.compact()
    dt.create_checkpoint()
    assert_peers_agree(peers, path)


def test_schema_evolution_and_replace_where_read_the_same(peers, tmp_path):
    path = str(tmp_path / "evolve")
    alluvium.write_deltalake(path, source(range(100), "a"), partition_by=["region"])
    wider = source(range(100, 150), "b").append_column("note", pa.array(["n"] * 50))
    alluvium.write_deltalake(path, wider, mode="append", schema_mode="merge")
    alluvium.write_deltalake(path, source([999], "c").append_column("note", pa.array(["r"])),
                             mode="overwrite", predicate="region = 'us'")
    assert_peers_agree(peers, path)


def feed_rows(tbl) -> list[tuple]:
    """The change rows, every column but ``_commit_timestamp`` (delta-rs takes it from
    ``commitInfo.timestamp``, Delta Spark and delta-kernel-rs from the commit file's time),
    as sortable tuples; string and integer flavours normalised."""
    cols = sorted(c for c in tbl.column_names if c != "_commit_timestamp")
    d = {c: tbl.column(c).to_pylist() for c in cols}
    return sorted(zip(*(d[c] for c in cols)), key=repr)


def test_change_feed_equals_deltalakes_on_copy_on_write_tables(peers, tmp_path):
    import deltalake

    path = str(tmp_path / "cdf")
    config = {"delta.enableChangeDataFeed": "true"}
    alluvium.write_deltalake(path, source(range(50), "a"), partition_by=["region"], configuration=config)
    dt = alluvium.DeltaTable(path)
    dt.delete("id < 5")
    dt.update(updates={"amount": "amount + 1"}, predicate="id BETWEEN 10 AND 12")
    dt.merge(source([20, 21, 70], "m"), "t.id = s.id").when_matched_update_all().when_not_matched_insert_all().execute()
    alluvium.write_deltalake(path, source(range(80, 83), "z"), mode="append")
    for start in (0, 1, 3):
        ours = pa.table(alluvium.DeltaTable(path).load_cdf(starting_version=start))
        theirs = pa.table(deltalake.DeltaTable(path).load_cdf(starting_version=start))
        assert feed_rows(ours) == feed_rows(theirs), f"from version {start}"
        assert ours.num_rows > 0


def test_deltalake_reads_alluviums_idempotent_writes_and_transactions(peers, tmp_path):
    import deltalake

    path = str(tmp_path / "txn")
    for v in (1, 2, 2, 3):
        alluvium.write_deltalake(
            path,
            source([v], "t"),
            mode="append",
            commit_properties=alluvium.CommitProperties(app_transactions=[alluvium.Transaction("job", v)]),
        )
    assert deltalake.DeltaTable(path).transaction_version("job") == 3
    assert deltalake.DeltaTable(path).version() == 2, "the repeated version 2 committed nothing"
    assert_peers_agree(peers, path)
