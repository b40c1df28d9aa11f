"""Bad input raises the typed exception with the library's one-line message, and commits
nothing: a non-Arrow object, a schema mismatch, a bad predicate, a missing table, a
conflict."""

from __future__ import annotations

import os

import pytest

pa = pytest.importorskip("pyarrow")

import alluvium  # noqa: E402
from alluvium import exceptions as ex  # noqa: E402


def table(path: str) -> alluvium.DeltaTable:
    alluvium.write_deltalake(path, pa.table({"id": pa.array([1, 2, 3], pa.int64()), "s": ["a", "b", "c"]}))
    return alluvium.DeltaTable(path)


def data_files(path: str) -> list[str]:
    return sorted(f for f in os.listdir(path) if f.endswith(".parquet"))


def one_line(e: BaseException) -> None:
    assert "\n" not in str(e) and str(e), repr(e)


def test_a_non_arrow_object_is_refused(table_path):
    dt = table(table_path)
    for bad in (42, "not data", {"id": [1]}, [1, 2, 3]):
        with pytest.raises(ex.InvalidInputError) as e:
            alluvium.write_deltalake(table_path, bad, mode="append")
        one_line(e.value)
        assert isinstance(e.value, ValueError)
    assert "__arrow_c_stream__" in str(e.value) or "Arrow data" in str(e.value)
    assert alluvium.DeltaTable(table_path).version() == dt.version()


def test_a_schema_mismatch_commits_nothing(table_path):
    dt = table(table_path)
    files = data_files(table_path)
    with pytest.raises(ex.SchemaMismatchError) as e:
        alluvium.write_deltalake(table_path, pa.table({"id": pa.array(["x"]), "s": ["d"]}), mode="append")
    one_line(e.value)
    assert e.value.error_kind == "invalid_input" and not e.value.retryable
    with pytest.raises(ex.SchemaMismatchError):
        alluvium.write_deltalake(table_path, pa.table({"id": pa.array([4], pa.int64()), "extra": [1]}), mode="append")
    assert alluvium.DeltaTable(table_path).version() == dt.version()
    assert data_files(table_path) == files, "nothing was left behind"


def test_a_duplicate_column_is_refused(table_path):
    table(table_path)
    dup = pa.Table.from_arrays([pa.array([4], pa.int64()), pa.array([5], pa.int64())], names=["id", "ID"])
    with pytest.raises(ex.InvalidInputError):
        alluvium.write_deltalake(table_path, dup, mode="append")


def test_a_bad_predicate_is_invalid_input(table_path):
    dt = table(table_path)
    for call in (
        lambda: dt.delete("id ="),
        lambda: dt.delete("nope = 1"),
        lambda: dt.update(updates={"s": "'x'"}, predicate="id >"),
        lambda: dt.update(updates={"nope": "1"}),
        lambda: dt.to_pyarrow_table(filters=[("nope", "=", 1)]),
        lambda: dt.scan(filter="id IN ("),
        lambda: dt.merge(pa.table({"id": pa.array([1], pa.int64())}), "t.id = s.nope").when_matched_delete().execute(),
    ):
        with pytest.raises(ex.InvalidInputError) as e:
            call()
        one_line(e.value)
    assert alluvium.DeltaTable(table_path).version() == 0


def test_a_missing_table_and_a_missing_version(tmp_path):
    with pytest.raises(ex.TableNotFoundError) as e:
        alluvium.DeltaTable(str(tmp_path / "none"))
    assert isinstance(e.value, FileNotFoundError)
    assert e.value.error_kind == "not_found"
    path = str(tmp_path / "t")
    table(path)
    with pytest.raises(ex.NotFoundError):
        alluvium.DeltaTable(path, version=7)
    with pytest.raises(ex.TableExistsError) as e:
        alluvium.write_deltalake(path, pa.table({"id": pa.array([9], pa.int64()), "s": ["z"]}))
    assert isinstance(e.value, FileExistsError)


def test_a_conflict_carries_its_delta_name_and_whether_to_retry(table_path):
    import threading

    table(table_path)
    dt = alluvium.DeltaTable(table_path)
    conflicts: list[BaseException] = []
    others: list[BaseException] = []
    landed: list[int] = []

    def updater() -> None:
        for _ in range(10):
            try:
                dt.update(updates={"s": "s || 'x'"}, predicate="id = 1")
                landed.append(1)
            except ex.CommitConflictError as e:
                conflicts.append(e)
            except BaseException as e:  # noqa: BLE001 - reported below
                others.append(e)

    # UPDATEs of one file race: a loser read a file the winner replaced, a real conflict
    # the commit loop returns (it cannot rebase a read).
    for _ in range(20):
        threads = [threading.Thread(target=updater) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if conflicts:
            break
    assert not others, others
    assert conflicts, "no conflict in 800 racing updates"
    for e in conflicts:
        assert e.kind in (
            "ConcurrentAppendException",
            "ConcurrentDeleteReadException",
            "ConcurrentDeleteDeleteException",
        ), e.kind
        assert e.retryable and e.error_kind == "conflict"
        one_line(e)
    # Every update that did not conflict landed exactly once, and no conflicting one did.
    s = alluvium.DeltaTable(table_path).to_pyarrow_table(filters=[("id", "=", 1)]).column("s")[0].as_py()
    assert s == "a" + "x" * len(landed)


def test_commit_info_names_the_engine_writes_are_refused(table_path):
    table(table_path)
    props = alluvium.CommitProperties(custom_metadata={"operation": "FAKE"})
    with pytest.raises(ex.InvalidInputError, match="commitInfo.operation"):
        alluvium.write_deltalake(table_path, pa.table({"id": pa.array([4], pa.int64()), "s": ["d"]}),
                                 mode="append", commit_properties=props)
    assert alluvium.DeltaTable(table_path).version() == 0


def test_an_exception_raised_by_the_data_comes_back_as_itself(table_path):
    table(table_path)

    class Boom(RuntimeError):
        pass

    def batches():
        yield pa.record_batch({"id": pa.array([4], pa.int64()), "s": pa.array(["d"])})
        raise Boom("the source broke")

    with pytest.raises(Boom, match="the source broke"):
        alluvium.write_deltalake(table_path, batches(), mode="append")
    assert alluvium.DeltaTable(table_path).version() == 0


def test_an_application_transaction_a_call_would_not_record_is_refused(table_path):
    t = table(table_path)
    props = alluvium.CommitProperties(app_transactions=[alluvium.Transaction(app_id="job", version=1)])
    calls = {
        "OPTIMIZE": lambda: t.optimize.compact(commit_properties=props),
        "OPTIMIZE ": lambda: t.optimize.z_order(["id"], commit_properties=props),
        "VACUUM": lambda: t.vacuum(dry_run=False, commit_properties=props),
    }
    for name, call in calls.items():
        with pytest.raises(ex.InvalidInputError, match=f"{name.strip()} does not record application transactions") as e:
            call()
        one_line(e.value)
    assert alluvium.DeltaTable(table_path).version() == 0
    assert t.transaction_version("job") is None
    # Without one, the same calls go ahead.
    t.alter.set_table_properties({"delta.appendOnly": "false"},
                                 commit_properties=alluvium.CommitProperties(custom_metadata={"k": "v"}))
    assert alluvium.DeltaTable(table_path).version() == 1
