"""Ray Data on a local cluster (``ray.init(num_cpus=2)``): distributed reads equal
``scan`` on plain, partitioned and deletion-vector tables; distributed writes
(``write_alluvium``) commit all blocks in one commit, exactly once: 1M rows x 4 columns in
16 blocks read back equal (in alluvium, delta-rs, DuckDB and polars), a rerun with the same
application transaction is skipped, a failing job commits nothing and leaves no data file
behind, overwrite replaces the rows, a new table takes the schema after the dataset's
transforms.

CI installs Ray into the test venv; without it these tests skip, saying so."""

from __future__ import annotations

from pathlib import Path

import pytest

pa = pytest.importorskip("pyarrow")
ray = pytest.importorskip("ray", reason="SKIPPED: Ray is not installed in this venv")

import alluvium  # noqa: E402
import alluvium.ray as ar  # noqa: E402


@pytest.fixture(scope="module")
def cluster():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
    yield
    ray.shutdown()


def rows_of(ds) -> pa.Table:
    return pa.concat_tables(ray.get(ds.to_arrow_refs()))


def ids(t: pa.Table) -> list[int]:
    return sorted(t.column("id").to_pylist())


def data(n: int, start: int = 0) -> pa.Table:
    r = range(start, start + n)
    return pa.table(
        {
            "id": pa.array(r, pa.int64()),
            "part": pa.array([f"p{i % 4}" for i in r]),
            "value": pa.array([i * 0.5 for i in r], pa.float64()),
        }
    )


@pytest.mark.parametrize("flavour", ["plain", "partitioned", "deletion_vectors"])
def test_reads_equal_the_scan(cluster, tmp_path, flavour):
    path = str(tmp_path / flavour)
    batches = [data(10_000, i * 10_000) for i in range(10)]
    alluvium.write_deltalake(
        path,
        batches,
        partition_by=["part"] if flavour == "partitioned" else None,
        target_file_size=1,
        configuration={"delta.enableDeletionVectors": "true"} if flavour == "deletion_vectors" else None,
    )
    dt = alluvium.DeltaTable(path)
    if flavour == "deletion_vectors":
        assert dt.delete("id % 7 = 0")["num_deletion_vectors_added"] > 0
    for columns, filt in ((None, None), (["id", "part"], "id >= 25000 AND part <> 'p1'")):
        got = rows_of(ar.read_alluvium(path, columns=columns, filter=filt, override_num_blocks=4))
        want = dt.scan(columns, filt).read_all()
        assert got.num_rows == want.num_rows
        assert ids(got) == ids(want)
        assert got.schema.names == want.schema.names
    # An older version, read while newer ones exist.
    alluvium.write_deltalake(path, data(5, 1_000_000), mode="append")
    assert rows_of(ar.read_alluvium(path, version=dt.version())).num_rows == dt.count()


# ---- writes ------------------------------------------------------------------------------

ROWS = 1_000_000
BLOCKS = 16
PEERS = ("deltalake", "duckdb", "polars")


def wide(n: int, start: int = 0) -> pa.Table:
    """``n`` rows x 4 columns (int64, string, float64, string) from id ``start``."""
    import numpy as np

    ids = np.arange(start, start + n, dtype=np.int64)
    return pa.table(
        {
            "id": pa.array(ids),
            "part": pa.array(np.array(["p0", "p1", "p2", "p3"])[ids % 4]),
            "value": pa.array(ids * 0.5),
            "name": pa.array(ids.astype(str)),
        }
    )


def blocks_of(t: pa.Table, n: int = BLOCKS):
    """A dataset of ``t`` in exactly ``n`` blocks."""
    step = -(-t.num_rows // n)
    return ray.data.from_arrow([t.slice(i, step) for i in range(0, t.num_rows, step)])


def referenced(path: str) -> set[str]:
    dt = alluvium.DeltaTable(path)
    return {a["path"] for a in dt.get_add_actions()}


def on_disk(path: str) -> set[str]:
    root = Path(path)
    return {str(p.relative_to(root)) for p in root.rglob("*.parquet") if "_delta_log" not in p.parts}


def unreferenced(path: str) -> set[str]:
    """Data files no version of the table references (every version is read)."""
    dt = alluvium.DeltaTable(path)
    seen: set[str] = set()
    for v in range(dt.version() + 1):
        seen |= {a["path"] for a in alluvium.DeltaTable(path, version=v).get_add_actions()}
    from urllib.parse import unquote

    return {f for f in on_disk(path) if f not in {unquote(p) for p in seen}}


def sorted_rows(t: pa.Table) -> pa.Table:
    t = t.select(["id", "part", "value", "name"])
    return t.sort_by("id").combine_chunks()


def assert_peers_read(peers, path: str) -> None:
    ours = peers.digest(alluvium.DeltaTable(path).to_pyarrow_table())
    for engine in PEERS:
        theirs = peers.run_read(path, None, engine)
        assert theirs["status"] == "ok", f"{engine}: {theirs}"
        assert (theirs["rows"], theirs["rows_sha256"]) == (ours["rows"], ours["rows_sha256"]), engine


@pytest.mark.parametrize("flavour", ["plain", "partitioned", "deletion_vectors"])
def test_a_million_rows_in_sixteen_blocks_are_one_commit(cluster, peers, tmp_path, flavour):
    path = str(tmp_path / flavour)
    before = wide(10_000, start=-10_000)
    alluvium.write_deltalake(
        path,
        before,
        partition_by=["part"] if flavour == "partitioned" else None,
        configuration={"delta.enableDeletionVectors": "true"} if flavour == "deletion_vectors" else None,
    )
    dt = alluvium.DeltaTable(path)
    if flavour == "deletion_vectors":
        assert dt.delete("id % 3 = 0")["num_deletion_vectors_added"] > 0
    start = dt.version()
    expected = pa.concat_tables([dt.to_pyarrow_table().select(before.column_names), wide(ROWS)])

    ds = blocks_of(wide(ROWS))
    assert ds.materialize().num_blocks() == BLOCKS
    out = ar.write_alluvium(ds, path, partition_by=["part"] if flavour == "partitioned" else None)

    assert out["version"] == start + 1 and not out["skipped"]
    dt = alluvium.DeltaTable(path)
    assert dt.version() == start + 1, "exactly one new version"
    info = dt.history(1)[0]
    assert info["operation"] == "WRITE" and info["operationParameters"]["mode"] == "Append"
    assert info["operationMetrics"]["numOutputRows"] in (ROWS, str(ROWS))
    got = dt.to_pyarrow_table()
    assert got.num_rows == expected.num_rows
    assert sorted_rows(got).equals(sorted_rows(expected))
    assert sorted_rows(dt.scan().read_all()).equals(sorted_rows(expected))
    assert rows_of(ar.read_alluvium(path, override_num_blocks=4)).num_rows == expected.num_rows
    assert unreferenced(path) == set()
    assert_peers_read(peers, path)


def test_a_rerun_with_the_same_app_transaction_is_skipped(cluster, tmp_path):
    path = str(tmp_path / "t")
    job = alluvium.CommitProperties(app_transactions=[alluvium.Transaction("nightly", 3)])
    first = ar.write_alluvium(blocks_of(wide(40_000), 8), path, commit_properties=job)
    assert first["version"] == 1
    files = on_disk(path)
    # The driver died after its commit landed and runs again: skipped, nothing written.
    again = ar.write_alluvium(blocks_of(wide(40_000), 8), path, commit_properties=job)
    assert again == {"version": None, "skipped": True, "app_id": "nightly", "recorded_version": 3, "table_version": 1}
    dt = alluvium.DeltaTable(path)
    assert dt.version() == 1 and dt.count() == 40_000
    assert on_disk(path) == files, "the rerun wrote no file"
    assert dt.transaction_version("nightly") == 3
    # The job's next run commits.
    job4 = alluvium.CommitProperties(app_transactions=[alluvium.Transaction("nightly", 4)])
    assert ar.write_alluvium(blocks_of(wide(10, 40_000), 2), path, commit_properties=job4)["version"] == 2


def test_a_failing_job_commits_nothing_and_leaves_no_file(cluster, tmp_path):
    path = str(tmp_path / "t")
    alluvium.write_deltalake(path, wide(1_000), partition_by=["part"])
    files = on_disk(path)

    def fail_on_one_block(batch: pa.Table) -> pa.Table:
        if 500_000 in batch.column("id").to_pylist():
            raise ValueError("this block is bad")
        return batch

    ds = blocks_of(wide(ROWS)).map_batches(fail_on_one_block, batch_format="pyarrow", batch_size=None)
    with pytest.raises(Exception, match="this block is bad"):
        ar.write_alluvium(ds, path)
    dt = alluvium.DeltaTable(path)
    assert dt.version() == 0 and dt.count() == 1_000
    assert on_disk(path) == files, "no data file of the failed job is left"
    assert unreferenced(path) == set()


def test_overwrite_replaces_the_rows(cluster, tmp_path):
    path = str(tmp_path / "t")
    alluvium.write_deltalake(path, wide(5_000))
    out = ar.write_alluvium(blocks_of(wide(3_000, 100_000), 4), path, mode="overwrite")
    assert out["num_removed_files"] >= 1 and out["num_added_files"] == 4
    dt = alluvium.DeltaTable(path)
    assert dt.count() == 3_000 and sorted(dt.to_pyarrow_table().column("id").to_pylist()) == list(range(100_000, 103_000))
    assert dt.history(1)[0]["operationParameters"]["mode"] == "Overwrite"
    assert alluvium.DeltaTable(path, version=0).count() == 5_000


def test_a_new_table_has_the_schema_after_the_transforms(cluster, tmp_path):
    path = str(tmp_path / "t")

    def add_column(batch: pa.Table) -> pa.Table:
        return batch.append_column("twice", pa.compute.multiply(batch.column("id"), 2))

    ds = blocks_of(wide(20_000), 4).map_batches(add_column, batch_format="pyarrow")
    out = ar.write_alluvium(ds, path, partition_by="part", configuration={"delta.appendOnly": "true"})
    dt = alluvium.DeltaTable(path)
    assert out["version"] == 1 and [h["operation"] for h in dt.history()] == ["WRITE", "CREATE TABLE"]
    assert dt.metadata().partition_columns == ["part"]
    assert dt.metadata().configuration["delta.appendOnly"] == "true"
    assert [f.name for f in dt.schema().fields] == ["id", "part", "value", "name", "twice"]
    assert dt.count() == 20_000
    # partition_by must match an existing table's; nothing is written when it does not.
    with pytest.raises(alluvium.InvalidInputError, match="partition"):
        ar.write_alluvium(ds, path, partition_by=["id"])
    assert alluvium.DeltaTable(path).version() == 1 and unreferenced(path) == set()


def test_the_ledger_deletes_late_records_it_was_not_told_were_committed(cluster, tmp_path):
    # Tasks record their files without waiting: a record can reach the ledger after its job
    # closed. The ledger then deletes the files the job did not commit, never a committed one.
    path = str(tmp_path / "t")
    alluvium.write_deltalake(path, wide(10))
    dt = alluvium.DeltaTable(path)
    committed = dt.write_data_files(wide(10, 100))
    dt.commit_files(committed)
    stray = dt.write_data_files(wide(10, 200))
    ledger = ar._WriteLedger.remote()
    ledger.open.remote("job")
    ledger.begin.remote("job", "early")
    ledger.end.remote("job", "early", ["early.parquet"])
    assert ray.get(ledger.finish.remote("job", (path, None), [a.path for a in committed])) == ["early.parquet"]
    ledger.begin.remote("job", "late")
    ledger.end.remote("job", "late", [a.path for a in committed + stray])
    assert ray.get(ledger.running.remote("job")) == 0
    assert unreferenced(path) == set() and on_disk(path) == referenced(path)
    # A job whose commit's outcome is unknown: late files are kept.
    kept = dt.write_data_files(wide(10, 300))
    ledger.close.remote("unknown", None, [])
    ledger.end.remote("unknown", "t", [a.path for a in kept])
    assert ray.get(ledger.running.remote("unknown")) == 0
    assert unreferenced(path) == {a.path for a in kept}


def test_a_worker_reuses_its_table_handle_and_refuses_a_recreated_table(cluster, tmp_path):
    import shutil

    path = str(tmp_path / "t")
    alluvium.write_deltalake(path, wide(10))
    dt = alluvium.DeltaTable(path)
    first = ar._worker_table(path, None, dt.metadata().id, dt.version())
    assert ar._worker_table(path, None, dt.metadata().id, dt.version()) is first
    # The handle writes the latest version's schema: a column added meanwhile is written.
    extra = wide(2, 50).append_column("extra", pa.array([7, 8], pa.int64()))
    alluvium.write_deltalake(path, extra, mode="append", schema_mode="merge")
    adds = first.write_data_files(wide(5, 100).append_column("extra", pa.array(range(5), pa.int64())))
    dt.commit_files(adds)
    assert alluvium.DeltaTable(path).to_pyarrow_table().column("extra").null_count == 10
    # The table deleted and created again (same location, another id) while a job whose
    # driver opened the old one runs: the job's first task on a worker refuses it; a job on
    # the new table gets a new handle.
    old_id, old_version = dt.metadata().id, alluvium.DeltaTable(path).version()
    shutil.rmtree(path)
    alluvium.write_deltalake(path, pa.table({"other": pa.array([1, 2], pa.int64())}))
    with pytest.raises(alluvium.InvalidInputError, match="deleted and created again"):
        ar._worker_table(path, None, old_id, old_version)
    new = alluvium.DeltaTable(path)
    handle = ar._worker_table(path, None, new.metadata().id, new.version())
    assert handle is not first and [f.name for f in handle.schema().fields] == ["other"]


def test_a_sink_without_a_schema_needs_the_table(cluster, tmp_path):
    path = str(tmp_path / "missing")
    with pytest.raises(Exception, match="no table at"):
        blocks_of(wide(100), 2).write_datasink(ar.AlluviumDatasink(path))
    assert not Path(path).exists() or on_disk(path) == set()
