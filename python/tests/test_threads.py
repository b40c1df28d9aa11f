"""Threads and the GIL: one handle shared by writer threads loses and doubles nothing, and
other Python threads run while alluvium writes (the GIL is released)."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

pa = pytest.importorskip("pyarrow")

import alluvium  # noqa: E402


def test_eight_threads_append_through_one_handle(table_path):
    schema = pa.schema([("writer", pa.int64()), ("n", pa.int64())])
    alluvium.DeltaTable.create(table_path, schema)
    dt = alluvium.DeltaTable(table_path)
    errors: list[BaseException] = []

    def writer(w: int) -> None:
        try:
            for n in range(50):
                batch = pa.table({"writer": pa.array([w], pa.int64()), "n": pa.array([n], pa.int64())})
                alluvium.write_deltalake(dt, batch, mode="append")
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    fresh = alluvium.DeltaTable(table_path)
    assert fresh.version() == 400
    got = sorted(zip(*fresh.to_pyarrow_table().to_pydict().values()))
    assert got == sorted((w, n) for w in range(8) for n in range(50)), "every row exactly once"
    versions = [h["version"] for h in fresh.history()]
    assert versions == list(range(400, -1, -1)), "versions contiguous"
    assert dt.version() == 400, "the shared handle holds the newest version any thread committed"


def test_other_threads_run_during_a_large_write(table_path):
    n = 1_000_000
    data = pa.table(
        {
            "id": pa.array(range(n), pa.int64()),
            "name": pa.array([f"row-{i % 1000}" for i in range(n)]),
            "value": pa.array([i * 0.5 for i in range(n)], pa.float64()),
            "flag": pa.array([i % 2 == 0 for i in range(n)]),
        }
    )
    ticks = 0
    stop = threading.Event()

    def counter() -> None:
        nonlocal ticks
        while not stop.is_set():
            ticks += 1

    t = threading.Thread(target=counter)
    t.start()
    try:
        time.sleep(0.05)
        before = ticks
        started = time.perf_counter()
        alluvium.write_deltalake(table_path, data)
        elapsed = time.perf_counter() - started
        during = ticks - before
    finally:
        stop.set()
        t.join()
    assert alluvium.DeltaTable(table_path).count() == n
    # A held GIL would stop the counter for the whole write; released, it counts on (at
    # least thousands of times per second even on a loaded machine).
    assert during > 1000 * elapsed, f"{during} ticks in {elapsed:.2f}s"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # fork() of a threaded process, on purpose
def test_a_forked_child_writes_after_its_parent_wrote_in_parallel(tmp_path):
    # Big writes encode columns on the rayon pool, whose threads a forked child does not
    # inherit (multiprocessing forks by default on Linux): the child must still write.
    n = 50_000
    data = pa.table({"id": pa.array(range(n), pa.int64()), "v": pa.array([i * 0.5 for i in range(n)])})
    alluvium.write_deltalake(str(tmp_path / "parent"), data)
    child_path = str(tmp_path / "child")
    pid = os.fork()
    if pid == 0:
        try:
            alluvium.write_deltalake(child_path, data)
        finally:
            os._exit(0)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.1)
    else:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        pytest.fail("the forked child hung writing")
    assert alluvium.DeltaTable(child_path).to_pyarrow_table().num_rows == n
