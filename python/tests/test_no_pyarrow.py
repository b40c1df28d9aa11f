"""alluvium without pyarrow: Arrow data in from DuckDB and arro3, out to DuckDB SQL and
arro3, through the Arrow PyCapsule interface alone.

CI runs this file in a venv with duckdb and arro3-core and no pyarrow
(``ALLUVIUM_EXPECT_NO_PYARROW=1`` makes that a checked precondition); in a venv with
pyarrow it runs too and must not need it.
"""

from __future__ import annotations

import importlib.util
import os

import pytest

duckdb = pytest.importorskip("duckdb")
arro3 = pytest.importorskip("arro3.core")

import alluvium  # noqa: E402


def test_the_venv_has_no_pyarrow_when_ci_says_so():
    if os.environ.get("ALLUVIUM_EXPECT_NO_PYARROW") == "1":
        assert importlib.util.find_spec("pyarrow") is None, "this job must run without pyarrow"


def test_duckdb_in_duckdb_out_arro3_merge(tmp_path):
    path = str(tmp_path / "t")
    con = duckdb.connect()
    rel = con.sql("SELECT i::BIGINT AS id, 'k' || (i % 7)::VARCHAR AS k, i * 1.5 AS v FROM range(100000) t(i)")
    alluvium.write_deltalake(path, rel, partition_by=["k"], configuration={"delta.enableDeletionVectors": "true"})
    dt = alluvium.DeltaTable(path)
    assert dt.version() == 0
    assert len(dt.files()) == 7

    # A scan read by DuckDB SQL, as a Python variable.
    s = dt.scan(columns=["id", "k"], filter="id < 1000 AND k = 'k3'")
    got = con.sql("SELECT count(*), min(id), max(id) FROM s").fetchone()
    assert got == (143, 3, 997)
    assert s.consumed

    # MERGE from an arro3 table: update two rows, insert one.
    src = arro3.Table.from_pydict(
        {
            "id": arro3.Array([3, 10, 200000], arro3.DataType.int64()),
            "k": arro3.Array(["k3", "k3", "k0"], arro3.DataType.string()),
            "v": arro3.Array([-1.0, -2.0, -3.0], arro3.DataType.float64()),
        }
    )
    m = dt.merge(src, "t.id = s.id").when_matched_update_all().when_not_matched_insert_all().execute()
    assert (m["num_target_rows_updated"], m["num_target_rows_inserted"]) == (2, 1)
    assert m["num_deletion_vectors_added"] >= 1, "the matched rows were deleted with a deletion vector"
    s = dt.scan(filter="v < 0")
    assert con.sql("SELECT sum(v), count(*) FROM s").fetchone() == (-6.0, 3)

    # arro3 reads a stream too; a schema exports through __arrow_c_schema__.
    reader = arro3.RecordBatchReader.from_arrow(dt.scan(columns=["id"]))
    assert sum(b.num_rows for b in reader) == 100001
    assert arro3.Schema.from_arrow(dt.scan().schema).names == ["id", "k", "v"]

    # A DELETE with deletion vectors, then the count from DuckDB again.
    d = dt.delete("k = 'k1' AND id % 2 = 0")
    assert d["num_deletion_vectors_added"] == 1
    s = dt.scan(columns=["id"])
    assert con.sql("SELECT count(*) FROM s").fetchone() == (100001 - 7143,)


def test_read_all_says_it_needs_pyarrow(tmp_path):
    if importlib.util.find_spec("pyarrow") is not None:
        pytest.skip("pyarrow is installed: read_all works here (test_stream covers it)")
    path = str(tmp_path / "t")
    alluvium.write_deltalake(path, duckdb.sql("SELECT 1::BIGINT AS id"))
    dt = alluvium.DeltaTable(path)
    with pytest.raises(ImportError, match="needs pyarrow"):
        dt.scan().read_all()
    with pytest.raises(ImportError, match="needs pyarrow"):
        dt.to_pyarrow_table()
