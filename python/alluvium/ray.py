"""Ray Data on alluvium tables: distributed reads and exactly-once distributed writes.

``read_alluvium`` plans the scan once on the driver (one version, pruned by partition values
and statistics) and hands each read task a share of its files; a task opens the table at
that version where it runs and reads its files with their deletion vectors and partition
values. Together the tasks return exactly the rows of :meth:`DeltaTable.scan`.

``write_alluvium`` writes each block as data files from the write tasks
(:meth:`DeltaTable.write_data_files`: files and their add actions, nothing committed) and
commits every task's files in one commit from the driver
(:meth:`DeltaTable.commit_files`), with the job's ``commit_properties`` for idempotency: a
driver that reruns after its commit landed is skipped. A failed job commits nothing and
deletes the files its tasks wrote.

Ray is an optional dependency: ``pip install "./python[ray]"``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any, Literal

try:
    import ray.data
    from ray.data.block import BlockMetadata
    from ray.data.datasource import Datasink, Datasource, ReadTask
except ImportError as e:  # pragma: no cover - depends on the installation
    raise ImportError('alluvium.ray needs Ray Data: pip install "ray[data]" (or "./python[ray]")') from e

from .table import DeltaTable
from .writer import CommitProperties, _location

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
