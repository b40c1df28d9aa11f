"""Ray Data on alluvium tables: distributed reads and exactly-once distributed writes.

``read_alluvium`` plans the scan once on the driver (one version, pruned by partition values
and statistics) and hands each read task a share of its files; a task opens the table at
that version where it runs and reads its files with their deletion vectors and partition
values. Together the tasks return exactly the rows of :meth:`DeltaTable.scan`.

``write_alluvium`` (an :class:`AlluviumDatasink`) writes each block as data files from the
write tasks (:meth:`DeltaTable.write_data_files`: files and their add actions, nothing
committed) and commits every task's files in ONE commit from the driver
(:meth:`DeltaTable.commit_files`, operation ``WRITE``), with the job's
``commit_properties`` for idempotency:

* a driver that reruns with the same application transaction after its commit landed is
  skipped: its write tasks write nothing, and nothing is committed;
* a failed job (a task raising, a refused or conflicting commit) commits nothing and
  deletes the files its tasks wrote: each task records its files with the driver's ledger
  (a small Ray actor the driver owns, started by its first write and reused) as it
  returns, without waiting for it, so the driver knows them even when Ray hands it no task
  results; the driver waits (bounded) for the records of tasks still running. A record
  that reaches the ledger after its job ended (a task finishing after the failure, or a
  record still in flight when the driver committed) has its files that the job did not
  commit deleted by the ledger. A task whose worker dies mid-file, or before its record
  left, leaves its files to VACUUM (nothing references them);
* files a retried task wrote twice are deleted after the commit (only one copy is
  committed);
* when the commit's outcome is unknown (``CommitOutcomeUnknownError``) nothing is deleted:
  the commit may have landed.

A table that does not exist is created by the driver before any task writes, empty, with
the dataset's schema (``Dataset.schema()``, the schema after every transform) and
``partition_by``: the tasks need the table's schema, partitioning and properties to write
files a commit accepts, so a new table takes two versions (``CREATE TABLE``, then the
``WRITE``). A job that fails then leaves the empty table.

A worker process keeps the table handle its first write task of a job opened for the
job's next tasks (Ray reuses worker processes), keyed by the table's id and the version
the driver opened: the log is loaded once per worker and job, and a table deleted and
created again at the same location is refused, not written with another table's schema.
Files are written with the table's latest schema and partitioning (each write reads the
commits since the handle's), which the driver's commit checks.

Ray is an optional dependency: ``pip install "./python[ray]"``.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Literal

try:
    import ray.data
    from ray.data.block import Block, BlockAccessor, BlockMetadata
    from ray.data.datasource import Datasink, Datasource, ReadTask
    from ray.data.datasource.datasink import WriteResult
except ImportError as e:  # pragma: no cover - depends on the installation
    raise ImportError('alluvium.ray needs Ray Data: pip install "ray[data]" (or "./python[ray]")') from e

from .actions import AddAction
from .exceptions import CommitOutcomeUnknownError, InvalidInputError, TableNotFoundError
from .table import DeltaTable
from .writer import CommitProperties, _location

_log = logging.getLogger(__name__)

__all__ = ["read_alluvium", "write_alluvium", "AlluviumDatasource", "AlluviumDatasink"]


def _read_part(
    uri: str,
    version: int,
    storage_options: dict[str, str] | None,
    columns: list[str] | None,
    filter: str | None,  # noqa: A002
    paths: list[str],
) -> Iterable[Any]:
    import pyarrow as pa

    dt = DeltaTable(uri, version=version, storage_options=storage_options)
    stream = dt._table.read_files(paths, columns, filter)
    reader = pa.RecordBatchReader.from_stream(stream)
    yield pa.Table.from_batches(list(reader), schema=reader.schema)


class AlluviumDatasource(Datasource):
    """The scan of one version of a table as Ray read tasks (see the module documentation)."""

    def __init__(
        self,
        table_uri: str,
        version: int | None = None,
        columns: list[str] | None = None,
        filter: str | None = None,  # noqa: A002
        storage_options: dict[str, str] | None = None,
    ) -> None:
        self._uri = _location(table_uri)
        self._storage_options = storage_options
        dt = DeltaTable(self._uri, version=version, storage_options=storage_options)
        self._version = dt.version()
        self._columns = columns
        self._filter = filter
        self._files = dt._table.plan_files(columns, filter)

    def get_name(self) -> str:
        return "Alluvium"

    def estimate_inmemory_data_size(self) -> int | None:
        return sum(size for _, size, _ in self._files) or None

    def get_read_tasks(self, parallelism: int, per_task_row_limit: int | None = None, data_context: Any = None) -> list[ReadTask]:
        if not self._files:
            return []
        n = max(1, min(parallelism, len(self._files)))
        # Balance the parts by bytes: largest files first, each to the lightest part; each
        # part keeps the scan's file order.
        order = {p: i for i, (p, _, _) in enumerate(self._files)}
        parts: list[list[tuple[str, int, int | None]]] = [[] for _ in range(n)]
        loads = [0] * n
        for f in sorted(self._files, key=lambda f: -f[1]):
            k = loads.index(min(loads))
            parts[k].append(f)
            loads[k] += f[1]
        tasks = []
        for part in parts:
            if not part:
                continue
            part.sort(key=lambda f: order[f[0]])
            paths = [p for p, _, _ in part]
            rows = [r for _, _, r in part]
            metadata = BlockMetadata(
                num_rows=sum(rows) if all(r is not None for r in rows) else None,  # type: ignore[misc]
                size_bytes=sum(s for _, s, _ in part),
                exec_stats=None,
                input_files=tuple(paths),
            )
            args = (self._uri, self._version, self._storage_options, self._columns, self._filter, paths)
            tasks.append(ReadTask(lambda args=args: _read_part(*args), metadata))
        return tasks


def read_alluvium(
    table_uri: str | os.PathLike[str],
    version: int | None = None,
    columns: list[str] | None = None,
    filter: str | None = None,  # noqa: A002
    storage_options: dict[str, str] | None = None,
    **read_args: Any,
) -> ray.data.Dataset:
    """A Ray Dataset of the table at ``version`` (the latest when ``None``): ``columns``,
    rows matching ``filter`` (SQL-style text), read by Ray tasks, a share of the scan's files
    each. ``read_args`` go to ``ray.data.read_datasource`` (``override_num_blocks``, ...)."""
    source = AlluviumDatasource(os.fspath(table_uri), version, columns, filter, storage_options)
    return ray.data.read_datasource(source, **read_args)


# ---- writes ------------------------------------------------------------------------------

#: How long a failed job's driver waits for its write tasks still running (cancelled ones
#: winding down) to record their files, before deleting what was recorded.
_FAILED_JOB_WAIT_S = 30.0


#: The name of the driver's ledger actor (in the driver's Ray namespace).
_LEDGER_NAME = "alluvium_write_ledger"

#: How many closed jobs the ledger remembers (to handle their tasks' late records).
_LEDGER_CLOSED_JOBS = 256


@ray.remote(num_cpus=0)
class _WriteLedger:
    """The record of the files write tasks wrote, per write job (a Ray actor).

    Ray hands the driver the tasks' results only when every task succeeded; the ledger is
    how a failed job's driver still knows which files to delete. One ledger serves every
    job of a driver process: it is a named actor the driver owns (it ends with the driver),
    created by the driver's first write and found by name after that, because starting an
    actor costs a worker process (about a second here) and a job should not wait for one.

    No caller waits for ``open``, ``begin`` or ``end``: a task records its files as it
    returns, without a round trip. Its methods run one at a time, so a job's ``close`` and
    a task's ``end`` never interleave: a record that arrives after its job closed (a task
    that ended after the failure, or whose record was still in flight when the driver
    committed) is handled here: its files that the job did not commit are deleted (none
    when the commit's outcome is unknown). A task's calls run in the order it sent them
    (Ray keeps one caller's actor calls in order); calls from different callers may
    arrive in any order, hence ``setdefault`` everywhere."""

    def __init__(self) -> None:
        self._running: dict[str, set[str]] = {}
        self._paths: dict[str, list[str]] = {}
        # Closed jobs: the table and the paths committed (no table: delete nothing).
        self._closed: OrderedDict[str, tuple[tuple[str, dict[str, str] | None] | None, frozenset[str]]] = OrderedDict()

    def open(self, job: str) -> None:
        """A job starts."""
        if job not in self._closed:
            self._running.setdefault(job, set())
            self._paths.setdefault(job, [])

    def begin(self, job: str, token: str) -> None:
        """A task of ``job`` starts writing."""
        if job not in self._closed:
            self._running.setdefault(job, set()).add(token)

    def end(self, job: str, token: str, paths: list[str]) -> None:
        """A task of ``job`` wrote ``paths`` (or nothing). After the job closed, the paths
        it did not commit are deleted here."""
        closed = self._closed.get(job)
        if closed is None:
            self._running.setdefault(job, set()).discard(token)
            self._paths.setdefault(job, []).extend(paths)
            return
        self._running.get(job, set()).discard(token)
        table, committed = closed
        late = [p for p in paths if p not in committed]
        if table is None or not late:
            return
        try:
            DeltaTable(table[0], storage_options=table[1]).discard_files(late)
        except Exception:  # noqa: BLE001 - best effort, VACUUM deletes what is left
            _log.exception("alluvium: could not delete the files of a write task that ended after its job; VACUUM will")

    def close(self, job: str, table: tuple[str, dict[str, str] | None] | None, committed: list[str]) -> None:
        """The job committed ``committed`` or failed (``committed`` empty): no task of it
        may record files to commit. Records that arrive later have their files not in
        ``committed`` deleted from ``table`` (``None``: kept, the commit's outcome being
        unknown)."""
        self._closed[job] = (table, frozenset(committed))
        while len(self._closed) > _LEDGER_CLOSED_JOBS:
            self._closed.popitem(last=False)

    def take(self, job: str) -> list[str]:
        """The paths ``job``'s tasks recorded since the last ``take``."""
        return self._paths.pop(job, [])

    def finish(self, job: str, table: tuple[str, dict[str, str] | None], committed: list[str]) -> list[str]:
        """``close``, ``take`` and ``forget`` in one call: a committed job's end."""
        self.close(job, table, committed)
        paths = self.take(job)
        self.forget(job)
        return paths

    def running(self, job: str) -> int:
        """``job``'s tasks that began and have not ended."""
        return len(self._running.get(job, ()))

    def forget(self, job: str) -> None:
        """Drops what is left of ``job`` (a closed job keeps only its id and commit)."""
        self._running.pop(job, None)
        self._paths.pop(job, None)


#: The driver's ledger: (the Ray job it belongs to, its handle). Held here because Ray ends
#: an actor, named or not, once no handle to it is left.
_driver_ledger: tuple[str, Any] | None = None


def _ledger() -> Any:
    """The driver's ledger actor, started by its first write (again after ``ray.init``
    starts another job)."""
    global _driver_ledger
    job = ray.get_runtime_context().get_job_id()
    if _driver_ledger is None or _driver_ledger[0] != job:
        handle = _WriteLedger.options(name=_LEDGER_NAME, get_if_exists=True).remote()
        _driver_ledger = (job, handle)
    return _driver_ledger[1]


#: The table handles a worker process opened for write tasks, most recent last: Ray reuses
#: worker processes across tasks, so a worker loads a table's log once per job, not once
#: per task. Keyed by location, storage options, table id and the version the job's driver
#: opened: a table recreated at the same location (another id) or a later job (another
#: version) opens afresh. A handle's writes use the table's latest version (the engine
#: reads the commits since the handle's before each write), as a fresh handle's would.
_worker_tables: OrderedDict[tuple[Any, ...], DeltaTable] = OrderedDict()
_worker_tables_lock = threading.Lock()
_WORKER_TABLES = 4


def _worker_table(uri: str, storage_options: dict[str, str] | None, table_id: str, version: int) -> DeltaTable:
    """The worker's handle on the job's table (see ``_worker_tables``)."""
    key = (uri, tuple(sorted((storage_options or {}).items())), table_id, version)
    with _worker_tables_lock:
        dt = _worker_tables.get(key)
        if dt is not None:
            _worker_tables.move_to_end(key)
            return dt
    dt = DeltaTable(uri, storage_options=storage_options)
    found = dt.metadata().id
    if found != table_id or dt.version() < version:
        raise InvalidInputError(
            f"the table at {uri} (id {found}, version {dt.version()}) is not the one the write job's "
            f"driver opened (id {table_id}, version {version}): was it deleted and created again?"
        )
    with _worker_tables_lock:
        _worker_tables[key] = dt
        while len(_worker_tables) > _WORKER_TABLES:
            _worker_tables.popitem(last=False)
    return dt


def _arrow_blocks(blocks: Iterable[Block]) -> Iterator[Any]:
    """Ray blocks (Arrow or pandas) as Arrow tables, one at a time."""
    for block in blocks:
        yield BlockAccessor.for_block(block).to_arrow()


def _arrow_schema(schema: Any) -> Any:
    """A pyarrow schema from ``Dataset.schema()`` (Ray's ``Schema``) or a pyarrow schema."""
    import pyarrow as pa

    base = getattr(schema, "base_schema", schema)
    if isinstance(base, pa.Schema):
        return base
    names, types = list(schema.names), list(schema.types)
    if not all(isinstance(t, pa.DataType) for t in types):
        raise InvalidInputError(
            f"the dataset's schema {schema} has columns without an Arrow type: create the table first"
        )
    return pa.schema(list(zip(names, types)))


def _same_columns(asked: list[str], table: list[str]) -> bool:
    return len(asked) == len(table) and all(a.lower() == t.lower() for a, t in zip(asked, table))


class AlluviumDatasink(Datasink[list[AddAction]]):
    """A Ray Data sink writing an alluvium (Delta) table in one commit, exactly once (see
    the module documentation). Use :func:`write_alluvium`, or
    ``dataset.write_datasink(AlluviumDatasink(...))``.

    ``mode``: ``"append"`` adds the rows, ``"overwrite"`` replaces the table's rows.
    ``partition_by`` partitions a new table and must equal an existing table's partition
    columns. ``schema`` (Arrow) is the schema a table that does not exist is created with,
    with the table properties in ``configuration``; without it the table must exist.
    ``commit_properties`` go to the commit (an application transaction makes the job
    idempotent). After the write, :attr:`result` holds what
    :meth:`DeltaTable.commit_files` returned.
    """

    def __init__(
        self,
        table_uri: str | os.PathLike[str],
        mode: Literal["append", "overwrite"] = "append",
        partition_by: list[str] | str | None = None,
        storage_options: dict[str, str] | None = None,
        commit_properties: CommitProperties | None = None,
        schema: Any = None,
        configuration: Mapping[str, str | None] | None = None,
    ) -> None:
        if mode not in ("append", "overwrite"):
            raise InvalidInputError(f"mode must be 'append' or 'overwrite', got {mode!r}")
        if isinstance(partition_by, str):
            partition_by = [partition_by]
        apps = commit_properties.app_transactions if commit_properties is not None else None
        if apps is not None and len(apps) > 1:
            raise InvalidInputError("one application transaction per write: the job commits once")
        self._uri = _location(table_uri)
        self._mode = mode
        self._partition_by = list(partition_by) if partition_by is not None else None
        self._storage_options = storage_options
        self._commit_properties = commit_properties
        self._schema = schema
        self._configuration = dict(configuration) if configuration is not None else None
        # Set on the driver by on_write_start, before the tasks (which get a copy) run.
        self._ledger: Any = None
        self._job = ""
        self._table_id = ""
        self._version = -1
        # The driver's handle (not sent to the tasks).
        self._dt: DeltaTable | None = None
        self._skip = False
        self._started = False
        # Set on the driver when the commit's outcome is unknown: then nothing is deleted.
        self._keep_files = False
        #: What :meth:`DeltaTable.commit_files` returned (``None`` until the commit).
        self.result: dict[str, Any] | None = None

    def get_name(self) -> str:
        return "Alluvium"

    def __getstate__(self) -> dict[str, Any]:
        # The tasks get the sink without the driver's table handle.
        state = dict(self.__dict__)
        state["_dt"] = None
        return state

    # -- the driver, before the tasks --------------------------------------------------

    def _open_or_create(self) -> DeltaTable:
        try:
            dt = DeltaTable(self._uri, storage_options=self._storage_options)
        except TableNotFoundError:
            if self._schema is None:
                raise InvalidInputError(
                    f"no table at {self._uri}: create it first, or write with write_alluvium, "
                    "which creates it with the dataset's schema"
                ) from None
            # mode="ignore": a table another job created meanwhile is opened instead.
            dt = DeltaTable.create(
                self._uri,
                self._schema,
                mode="ignore",
                partition_by=self._partition_by,
                configuration=self._configuration,
                storage_options=self._storage_options,
            )
        table_parts = dt.metadata().partition_columns
        if self._partition_by is not None and not _same_columns(self._partition_by, table_parts):
            raise InvalidInputError(
                f"partition_by {self._partition_by} does not match the table's partition columns {table_parts}"
            )
        return dt

    def on_write_start(self, schema: Any = None) -> None:
        """Opens (or creates) the table, checks ``partition_by``, starts the job's ledger
        and, when the application transaction is already committed, makes the tasks
        write nothing. ``schema`` (Ray's, from the first input) is not used: when Ray fuses
        transforms into the write tasks it is the schema before them."""
        self._started = True
        dt = self._dt = self._open_or_create()
        self._table_id = dt.metadata().id
        self._version = dt.version()
        apps = self._commit_properties.app_transactions if self._commit_properties is not None else None
        if apps:
            done = dt.transaction_version(apps[0].app_id)
            self._skip = done is not None and done >= apps[0].version
        if not self._skip:
            self._job = uuid.uuid4().hex
            self._ledger = _ledger()
            self._ledger.open.remote(self._job)

    # -- the tasks ---------------------------------------------------------------------

    def write(self, blocks: Iterable[Block], ctx: Any) -> list[AddAction]:
        """Writes this task's blocks as data files (nothing committed), records them with
        the job's ledger (without waiting for it) and returns their add actions."""
        if self._skip:
            return []
        ledger, job = self._ledger, self._job
        token = uuid.uuid4().hex
        if ledger is not None:
            ledger.begin.remote(job, token)
        paths: list[str] = []
        try:
            dt = _worker_table(self._uri, self._storage_options, self._table_id, self._version)
            adds = dt.write_data_files(_arrow_blocks(blocks), self._partition_by)
            paths = [a.path for a in adds]
        finally:
            # On failure write_data_files deleted its files: the task records none.
            if ledger is not None:
                ledger.end.remote(job, token, paths)
        return adds

    # -- the driver, after the tasks ---------------------------------------------------

    def on_write_complete(self, write_result: WriteResult[list[AddAction]]) -> None:
        """Commits every task's add actions in one commit; deletes files written but not
        committed (a retried task's first copy, or all of them when the commit was skipped
        because the application transaction had landed meanwhile)."""
        adds = [a for r in write_result.write_returns for a in (r or [])]
        # Ray starts the write with its first input; a dataset without blocks has none.
        if not self._started:
            dt = self._open_or_create()
        else:
            dt = self._dt if self._dt is not None else DeltaTable(self._uri, storage_options=self._storage_options)
        self._dt = None
        try:
            outcome = dt.commit_files(adds, self._mode, self._commit_properties)
        except CommitOutcomeUnknownError:
            self._keep_files = True
            raise
        self.result = outcome
        if self._ledger is not None:
            ledger, job = self._ledger, self._job
            self._ledger = None
            committed = [] if outcome["skipped"] else [a.path for a in adds]
            recorded = ray.get(ledger.finish.remote(job, (self._uri, self._storage_options), committed))
            done = set(committed)
            orphans = [p for p in recorded if p not in done]
            if orphans:
                dt.discard_files(orphans)

    def on_write_failed(self, error: Exception) -> None:
        """Deletes the files the job's tasks wrote (nothing was committed), after waiting
        a bounded time for tasks still running to record theirs; keeps them all when the
        commit's outcome is unknown."""
        ledger, job = self._ledger, self._job
        if ledger is None:
            return
        self._ledger = None
        self._dt = None
        try:
            # Outcome unknown: the ledger deletes nothing that arrives late either.
            ledger.close.remote(job, None if self._keep_files else (self._uri, self._storage_options), [])
            if self._keep_files:
                kept = ray.get(ledger.take.remote(job))
                _log.warning(
                    "alluvium: the commit's outcome is unknown; the %d files written are kept "
                    "(VACUUM deletes them if the commit did not land)",
                    len(kept),
                )
                return
            deadline = time.monotonic() + _FAILED_JOB_WAIT_S
            while ray.get(ledger.running.remote(job)) and time.monotonic() < deadline:
                time.sleep(0.05)
            paths = ray.get(ledger.take.remote(job))
            if paths:
                DeltaTable(self._uri, storage_options=self._storage_options).discard_files(paths)
        except Exception:  # noqa: BLE001 - best effort: the job's own error is what matters
            _log.exception("alluvium: could not delete the files of a failed write job; VACUUM will")
        finally:
            ledger.forget.remote(job)


def write_alluvium(
    dataset: ray.data.Dataset,
    table_uri: str | os.PathLike[str],
    mode: Literal["append", "overwrite"] = "append",
    partition_by: list[str] | str | None = None,
    storage_options: dict[str, str] | None = None,
    commit_properties: CommitProperties | None = None,
    configuration: Mapping[str, str | None] | None = None,
    ray_remote_args: dict[str, Any] | None = None,
    concurrency: int | None = None,
) -> dict[str, Any]:
    """Writes ``dataset`` to the table at ``table_uri`` in ONE commit: Ray tasks write its
    blocks as data files, the driver commits them all (see the module documentation).

    ``mode="append"`` adds the rows, ``"overwrite"`` replaces the table's rows. A table that
    does not exist is created first, with the dataset's schema, partitioned by
    ``partition_by`` and with the table properties in ``configuration``; on an existing
    table ``partition_by`` must be its partition columns. ``commit_properties`` with an
    application transaction make the job idempotent: a rerun after its commit landed
    writes nothing and returns ``skipped``. ``ray_remote_args`` and ``concurrency`` go to
    ``Dataset.write_datasink``.

    Returns what :meth:`DeltaTable.commit_files` returns (``version``, ``skipped``, file
    counts). Raises what the tasks or the commit raised; nothing is committed then, and the
    tasks' files are deleted.
    """
    uri = _location(table_uri)
    schema = None
    try:
        DeltaTable(uri, storage_options=storage_options)
    except TableNotFoundError:
        # The schema after every transform (Ray's on_write_start hint may predate them).
        schema = _arrow_schema(dataset.schema())
    sink = AlluviumDatasink(
        uri,
        mode=mode,
        partition_by=partition_by,
        storage_options=storage_options,
        commit_properties=commit_properties,
        schema=schema,
        configuration=configuration,
    )
    dataset.write_datasink(sink, ray_remote_args=ray_remote_args, concurrency=concurrency)
    if sink.result is None:  # pragma: no cover - Ray always calls on_write_complete
        raise RuntimeError("alluvium: Ray finished the write without calling on_write_complete")
    return sink.result
