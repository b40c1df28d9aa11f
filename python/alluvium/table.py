"""A Delta table: :class:`DeltaTable`, with deltalake's everyday methods on alluvium's
engine, plus :meth:`DeltaTable.scan` and :meth:`DeltaTable.verify`.

A ``DeltaTable`` holds one loaded version (the latest unless asked otherwise): reads
(``to_pyarrow_table``, ``scan``, ``files``, ``schema``, ...) see that version.
Operations that write (``delete``, ``update``, ``merge``, ``optimize``, ...) are
optimistic transactions on the table's latest version, checked against concurrent
commits, after which the handle holds the version they committed (built from what they
wrote, without reading the log again; the latest version instead when another writer's
commit came between). One handle may be
shared by threads; every call that touches storage or decodes data releases the GIL.
"""

from __future__ import annotations

import datetime as _dt
import enum
import json
import os
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from . import _native
from ._sql import conjoin, dnf_to_sql, timestamp_ms
from .actions import AddAction
from .exceptions import InvalidInputError, SchemaMismatchError, UnsupportedFeatureError
from .schema import Field, Schema, _type_to_json
from .writer import CommitProperties, PostCommitHookProperties, WriterProperties, _commit_dict, _location

__all__ = ["DeltaTable", "Metadata", "ProtocolVersions", "TableMerger", "TableOptimizer", "TableAlterer"]

ArrowStream = _native.ArrowStream


class Metadata:
    """The table's metadata (the log's ``metaData`` action)."""

    def __init__(self, d: Mapping[str, Any]) -> None:
        self.id: str = d["id"]
        self.name: str | None = d.get("name")
        self.description: str | None = d.get("description")
        self.partition_columns: list[str] = list(d.get("partition_columns") or [])
        self.created_time: int | None = d.get("created_time")
        self.configuration: dict[str, str] = dict(d.get("configuration") or {})

    def __repr__(self) -> str:
        return (
            f"Metadata(id: {self.id}, name: {self.name}, description: {self.description}, "
            f"partition_columns: {self.partition_columns}, created_time: {self.created_time}, "
            f"configuration: {self.configuration})"
        )


class ProtocolVersions:
    """The table's protocol: reader and writer versions, and the table features (``None``
    below reader 3 / writer 7, where the versions alone say what is supported)."""

    def __init__(
        self,
        min_reader_version: int,
        min_writer_version: int,
        writer_features: list[str] | None,
        reader_features: list[str] | None,
    ) -> None:
        self.min_reader_version = min_reader_version
        self.min_writer_version = min_writer_version
        self.writer_features = writer_features
        self.reader_features = reader_features

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ProtocolVersions) and vars(self) == vars(other)

    def __repr__(self) -> str:
        return (
            f"ProtocolVersions(min_reader_version={self.min_reader_version}, "
            f"min_writer_version={self.min_writer_version}, writer_features={self.writer_features}, "
            f"reader_features={self.reader_features})"
        )


def _version_arg(version: int | str | _dt.datetime) -> tuple[int | None, int | None]:
    if isinstance(version, bool):
        raise TypeError("a version is an int, a datetime or ISO 8601 text")
    if isinstance(version, int):
        return version, None
    return None, timestamp_ms(version)


def _refuse_app_transactions(commit_properties: CommitProperties | None, operation: str) -> None:
    """``operation`` records no application transaction: one given is refused rather than
    dropped, since a rerun relying on it would not be skipped. Each caller says what the
    rest of ``commit_properties`` does for it."""
    if commit_properties is not None and commit_properties.app_transactions:
        raise InvalidInputError(
            f"{operation} does not record application transactions, so a repeat would not be skipped;"
            " pass commit_properties without app_transactions"
        )


class DeltaTable:
    """A Delta table at ``table_uri`` (a local path, ``file://``, ``s3://``, ``gs://`` or
    ``az://`` location), loaded at ``version`` (the latest when ``None``).

    ``storage_options`` configure object stores as deltalake's do (``AWS_ENDPOINT_URL``,
    ``AWS_ACCESS_KEY_ID``, ``AWS_REGION``, ``AWS_ALLOW_HTTP``, ...), plus alluvium's own
    (``put_if_absent``, ``single_writer``, ``concurrency``).

    Raises :class:`~alluvium.exceptions.TableNotFoundError` when there is no table.
    """

    def __init__(
        self,
        table_uri: str | os.PathLike[str],
        version: int | None = None,
        storage_options: dict[str, str] | None = None,
        without_files: bool = False,
        log_buffer_size: int | None = None,
    ) -> None:
        self._storage_options = storage_options
        self._table = _native.open_table(_location(table_uri), version, None, storage_options)

    @classmethod
    def _wrap(cls, raw: Any, storage_options: dict[str, str] | None) -> DeltaTable:
        t = cls.__new__(cls)
        t._storage_options = storage_options
        t._table = raw
        return t

    @staticmethod
    def create(
        table_uri: str | os.PathLike[str],
        schema: Any,
        mode: Literal["error", "append", "overwrite", "ignore"] = "error",
        partition_by: list[str] | str | None = None,
        name: str | None = None,
        description: str | None = None,
        configuration: Mapping[str, str | None] | None = None,
        storage_options: dict[str, str] | None = None,
        *,
        commit_properties: CommitProperties | None = None,
        post_commithook_properties: PostCommitHookProperties | None = None,
        raise_if_key_not_exists: bool = True,
    ) -> DeltaTable:
        """Creates an empty table with ``schema`` (a pyarrow schema, or anything exporting
        ``__arrow_c_schema__``). ``mode="ignore"`` (or ``"append"``) opens the table when
        one exists; ``"error"`` refuses it; ``"overwrite"`` replaces it (CREATE OR REPLACE
        TABLE): a new, empty table with this schema, partitioning and configuration only,
        committed as the next version, so earlier versions stay readable. The protocol is
        never downgraded, column-mapping ids and row ids continue above the old ones, and an
        append-only table with rows is refused. ``commit_properties``' ``custom_metadata``
        goes into the commit's ``commitInfo``."""
        if name is not None or description is not None:
            raise InvalidInputError("alluvium does not set a table name or description; leave them unset")
        if isinstance(partition_by, str):
            partition_by = [partition_by]
        config = None
        if configuration is not None:
            config = {k: v for k, v in configuration.items() if v is not None}
        raw = _native.create_table(
            _location(table_uri),
            schema,
            mode,
            partition_by=list(partition_by) if partition_by is not None else None,
            configuration=config,
            storage_options=storage_options,
            commit=_commit_dict(commit_properties),
        )
        return DeltaTable._wrap(raw, storage_options)

    @staticmethod
    def is_deltatable(table_uri: str | os.PathLike[str], storage_options: dict[str, str] | None = None) -> bool:
        """Whether a Delta table is at ``table_uri``."""
        return _native.is_table(_location(table_uri), storage_options)

    # ---- the loaded version ---------------------------------------------------------

    @property
    def table_uri(self) -> str:
        """The table's location (a path for local tables)."""
        uri = self._table.uri
        if uri.startswith("file://"):
            return uri[len("file://") :]
        return uri

    def version(self) -> int:
        """The loaded version."""
        return self._table.version()

    def load_as_version(self, version: int | str | _dt.datetime) -> None:
        """Loads ``version``: a version number, or the latest version committed at or
        before a datetime (naive datetimes are UTC) or ISO 8601 text."""
        v, ts = _version_arg(version)
        self._table.load(v, ts)

    def update_incremental(self) -> None:
        """Loads the latest version, reading only the commits since the loaded one."""
        self._table.update_incremental()

    def schema(self) -> Schema:
        """The loaded version's schema."""
        return Schema.from_json(self._table.schema_json(), self._table.arrow_schema())

    def metadata(self) -> Metadata:
        """The loaded version's metadata."""
        return Metadata(self._table.metadata())

    def protocol(self) -> ProtocolVersions:
        """The loaded version's protocol."""
        p = self._table.protocol()
        return ProtocolVersions(
            p["minReaderVersion"], p["minWriterVersion"], p.get("writerFeatures"), p.get("readerFeatures")
        )

    def files(self, partition_filters: Any = None) -> list[str]:
        """The live data files of the loaded version, relative to the table, sorted;
        with ``partition_filters`` (deltalake's filter lists over partition columns), only
        those of the matching partitions."""
        return self._table.files(dnf_to_sql(partition_filters))

    def file_uris(self, partition_filters: Any = None) -> list[str]:
        """:meth:`files` as absolute locations."""
        root = self.table_uri.rstrip("/")
        out = []
        for f in self.files(partition_filters):
            out.append(f if "://" in f else f"{root}/{f}")
        return out

    def partitions(
        self, partition_filters: Any = None, *, file_pruning_predicate: Any = None
    ) -> list[dict[str, str | None]]:
        """The partitions of the loaded version's live files, each a dict of partition
        column to value (its text in the log, ``None`` for null), e.g.
        ``[{'year': '2021', 'month': '1'}, ...]``; none for an unpartitioned table. With a
        filter (deltalake's filter lists or SQL text, as ``partition_filters`` or
        ``file_pruning_predicate``), only the partitions of the files a scan with it reads
        (pruned by partition values and statistics)."""
        if partition_filters is not None and file_pruning_predicate is not None:
            raise InvalidInputError("give partition_filters or file_pruning_predicate, not both")
        chosen = partition_filters if partition_filters is not None else file_pruning_predicate
        return [dict(p) for p in self._table.partitions(dnf_to_sql(chosen))]

    def get_add_actions(self, flatten: bool = False) -> list[dict[str, Any]]:
        """The loaded version's add actions as dicts (path, size, partition values,
        modification time, statistics, deletion vector)."""
        return self._table.add_actions()

    def history(self, limit: int | None = None) -> list[dict[str, Any]]:
        """The ``limit`` newest commits (all when ``None``), newest first: each commit's
        ``commitInfo`` (operation, parameters, metrics, ...) with its ``version`` and
        ``timestamp`` in milliseconds."""
        return self._table.history(limit)

    def transaction_version(self, app_id: str) -> int | None:
        """The latest version ``app_id`` recorded for its idempotent writes."""
        return self._table.transaction_version(app_id)

    # ---- reading ----------------------------------------------------------------------

    def scan(self, columns: list[str] | None = None, filter: str | None = None) -> ArrowStream:  # noqa: A002
        """The loaded version's rows as an :class:`~alluvium.ArrowStream`: ``columns``
        (all by default), rows matching ``filter`` (SQL-style text such as
        ``"region = 'EU' AND id > 10"``). Files are pruned by partition values and
        statistics and read a few at a time: memory holds the files in flight."""
        return self._table.scan(columns, filter)

    def to_pyarrow_table(
        self,
        partitions: Any = None,
        columns: list[str] | None = None,
        filesystem: Any = None,
        filters: Any = None,
    ) -> Any:
        """The loaded version as a ``pyarrow.Table`` (needs pyarrow). ``partitions`` and
        ``filters`` take deltalake's filter lists (or predicate text)."""
        if filesystem is not None:
            raise InvalidInputError("alluvium reads through its own storage; pass storage_options instead of a filesystem")
        pred = conjoin(dnf_to_sql(partitions), dnf_to_sql(filters))
        return self.scan(columns, pred).read_all()

    def to_pyarrow_dataset(
        self,
        partitions: Any = None,
        filesystem: Any = None,
        parquet_read_options: Any = None,
        schema: Any = None,
        as_large_types: bool = False,
        file_pruning_predicate: Any = None,
    ) -> Any:
        """The loaded version as a lazy ``pyarrow.dataset.Dataset`` over its Parquet files
        (needs pyarrow), each file a fragment whose partition values are its expression, so
        pyarrow, DuckDB and polars prune fragments and push filters down. ``partitions`` or
        ``file_pruning_predicate`` (deltalake's filter lists or SQL text) keep only the
        files a scan with them reads. ``filesystem`` is a pyarrow filesystem rooted at the
        table (default: the local filesystem, or pyarrow's for the table's URI);
        ``schema`` replaces the dataset schema, ``as_large_types`` widens strings, binaries
        and lists to their large types.

        A dataset reads files as they are: a table whose files have rows deleted by a
        deletion vector, or whose columns are mapped to physical names, is refused with
        :class:`UnsupportedFeatureError` (:meth:`scan` and :meth:`to_pyarrow_table` read
        both)."""
        try:
            import pyarrow as pa
            import pyarrow.dataset as ds
            import pyarrow.fs as pa_fs
        except ImportError as e:  # pragma: no cover - exercised in the pyarrow-free job
            raise ImportError(
                "to_pyarrow_dataset() needs pyarrow; without it, scan() returns an ArrowStream any Arrow consumer reads"
            ) from e
        if partitions is not None and file_pruning_predicate is not None:
            raise InvalidInputError("give partitions or file_pruning_predicate, not both")
        mode = self.metadata().configuration.get("delta.columnMapping.mode", "none")
        if mode.strip().lower() != "none":
            raise UnsupportedFeatureError(
                f"to_pyarrow_dataset cannot read a table with column mapping ({mode}): its files name columns "
                "by physical names; use scan() or to_pyarrow_table()"
            )
        chosen = partitions if partitions is not None else file_pruning_predicate
        files = self._table.dataset_files(dnf_to_sql(chosen))
        with_dv = sum(1 for f in files if f[3])
        if with_dv:
            raise UnsupportedFeatureError(
                f"to_pyarrow_dataset cannot apply deletion vectors: {with_dv} of the {len(files)} files have rows "
                "deleted by one; use scan() or to_pyarrow_table(), which apply them"
            )
        outside = [f[0] for f in files if "://" in f[0]]
        if outside:
            raise InvalidInputError(f"to_pyarrow_dataset reads files under the table's root only, not {outside[0]}")
        if filesystem is None:
            uri = self.table_uri
            if "://" in uri:
                fs, root = pa_fs.FileSystem.from_uri(uri)
                filesystem = pa_fs.SubTreeFileSystem(root, fs)
            else:
                filesystem = pa_fs.SubTreeFileSystem(os.path.abspath(uri), pa_fs.LocalFileSystem())
        elif isinstance(filesystem, str):
            fs, root = pa_fs.FileSystem.from_uri(filesystem)
            filesystem = pa_fs.SubTreeFileSystem(root, fs)
        arrow_schema = schema if schema is not None else self.schema().to_arrow()
        if schema is None and as_large_types:
            arrow_schema = pa.schema([f.with_type(_large(f.type)) for f in arrow_schema], arrow_schema.metadata)
        fmt = ds.ParquetFileFormat(read_options=parquet_read_options) if parquet_read_options else ds.ParquetFileFormat()
        fragments = [
            fmt.make_fragment(path, filesystem, partition_expression=_partition_expression(parts, arrow_schema),
                              file_size=size)
            for path, size, parts, _ in files
        ]
        return ds.FileSystemDataset(fragments, arrow_schema, fmt, filesystem)

    def to_pandas(
        self,
        partitions: Any = None,
        columns: list[str] | None = None,
        filesystem: Any = None,
        filters: Any = None,
        types_mapper: Any = None,
    ) -> Any:
        """The loaded version as a pandas DataFrame (needs pyarrow and pandas)."""
        return self.to_pyarrow_table(partitions, columns, filesystem, filters).to_pandas(types_mapper=types_mapper)

    def count(self, filter: str | None = None) -> int:  # noqa: A002
        """Rows of the loaded version (matching ``filter`` when given)."""
        return self._table.count(filter)

    def load_cdf(
        self,
        starting_version: int = 0,
        ending_version: int | None = None,
        starting_timestamp: str | _dt.datetime | None = None,
        ending_timestamp: str | _dt.datetime | None = None,
        columns: list[str] | None = None,
        predicate: str | None = None,
        allow_out_of_range: bool = False,
    ) -> ArrowStream:
        """The change data feed of versions ``starting_version`` to ``ending_version``
        (inclusive; the latest when ``None``), or of the commits between two timestamps:
        the rows that changed, with ``_change_type`` (``insert``, ``delete``,
        ``update_preimage``, ``update_postimage``), ``_commit_version`` and
        ``_commit_timestamp``. Needs ``delta.enableChangeDataFeed=true`` over the range."""
        start_ts = timestamp_ms(starting_timestamp) if starting_timestamp is not None else None
        end_ts = timestamp_ms(ending_timestamp) if ending_timestamp is not None else None
        return self._table.load_cdf(
            starting_version if start_ts is None else None,
            ending_version if end_ts is None else None,
            start_ts,
            end_ts,
            columns,
            predicate,
            True,
            allow_out_of_range,
        )

    def verify(self, deep: bool = False, version: int | None = None) -> dict[str, Any]:
        """Checks the table without changing it: every commit, checkpoint, data file and
        deletion vector (``deep``: also the data against its statistics). Returns the
        report: ``clean``, ``findings`` (each ``kind``, ``location``, ``detail``) and what
        was checked."""
        return self._table.verify(deep, version)

    # ---- writing ----------------------------------------------------------------------

    def delete(
        self,
        predicate: str | None = None,
        writer_properties: WriterProperties | None = None,
        *,
        commit_properties: CommitProperties | None = None,
        post_commithook_properties: PostCommitHookProperties | None = None,
    ) -> dict[str, Any]:
        """Deletes the rows matching ``predicate`` (every row when ``None``). On a table
        with ``delta.enableDeletionVectors=true`` rows of partly matching files are
        deleted with deletion vectors, otherwise those files are rewritten. Returns the
        metrics (``num_deleted_rows``, ``num_removed_files``, ``num_added_files``,
        ``num_copied_rows``, ``num_deletion_vectors_added``, ``execution_time_ms``, ...)."""
        return self._table.delete(predicate, _commit_dict(commit_properties, writer_properties))

    def update(
        self,
        updates: Mapping[str, str] | None = None,
        new_values: Mapping[str, Any] | None = None,
        predicate: str | None = None,
        writer_properties: WriterProperties | None = None,
        error_on_type_mismatch: bool = True,
        *,
        commit_properties: CommitProperties | None = None,
        post_commithook_properties: PostCommitHookProperties | None = None,
    ) -> dict[str, Any]:
        """Updates the rows matching ``predicate`` (every row when ``None``): ``updates``
        maps columns to SQL expressions (``{"price": "price * 1.1"}``), ``new_values`` to
        Python values (``{"status": "done"}``); give one of them. Returns the metrics
        (``num_updated_rows``, ``num_copied_rows``, ``num_added_files``, ...)."""
        if (updates is None) == (new_values is None):
            raise InvalidInputError("give either updates (SQL expressions) or new_values (Python values)")
        if updates is not None:
            sets = [(c, str(e), None) for c, e in updates.items()]
        else:
            assert new_values is not None
            sets = [(c, None, v) for c, v in new_values.items()]
        return self._table.update(sets, predicate, _commit_dict(commit_properties, writer_properties))

    def merge(
        self,
        source: Any,
        predicate: str,
        source_alias: str | None = None,
        target_alias: str | None = None,
        merge_schema: bool = False,
        error_on_type_mismatch: bool = True,
        writer_properties: WriterProperties | None = None,
        streamed_exec: bool = True,
        max_spill_size: int | None = None,
        max_temp_directory_size: int | None = None,
        *,
        commit_properties: CommitProperties | None = None,
        post_commithook_properties: PostCommitHookProperties | None = None,
    ) -> TableMerger:
        """Starts a MERGE of ``source`` (Arrow data, as :func:`write_deltalake` takes) into
        this table on ``predicate``: add ``when_...`` clauses, then :meth:`TableMerger.execute`.
        Names are qualified with ``source_alias`` / ``target_alias`` (``s`` and ``t``
        always work)."""
        from .writer import _arrow_data

        return TableMerger(
            self,
            _arrow_data(source),
            predicate,
            source_alias,
            target_alias,
            merge_schema,
            commit_properties,
            writer_properties,
        )

    # ---- distributed writes: workers write files, a driver commits them once ----------

    def write_data_files(self, data: Any, partition_by: list[str] | str | None = None) -> list[AddAction]:
        """Writes ``data`` as data files of this table, WITHOUT committing them, and returns
        their :class:`~alluvium.AddAction` s (path, size, partition values, statistics): a
        worker's half of a distributed write, whose driver commits every worker's actions
        with :meth:`commit_files`.

        ``data`` is what :func:`write_deltalake` takes (anything exporting the Arrow
        PyCapsule interface, or an iterable of such), read as a stream with the GIL
        released. The files have the table's latest schema, partitioning and target file
        size; the data must fit the schema (no schema evolution). ``partition_by``, when
        given, must be the table's partition columns (a check that the worker writes the
        table it means to).

        Raises :class:`~alluvium.exceptions.SchemaMismatchError`,
        :class:`~alluvium.exceptions.InvalidInputError` and the other
        :class:`~alluvium.exceptions.AlluviumError` subclasses; the files this call wrote
        are deleted then (and on Ctrl-C). Files written and never committed are otherwise
        left to :meth:`discard_files` or VACUUM."""
        from .writer import _arrow_data

        if isinstance(partition_by, str):
            partition_by = [partition_by]
        texts = _native.write_data_files(
            self._table, _arrow_data(data), list(partition_by) if partition_by is not None else None
        )
        return [AddAction(t) for t in texts]

    def commit_files(
        self,
        actions: Iterable[AddAction],
        mode: Literal["append", "overwrite"] = "append",
        commit_properties: CommitProperties | None = None,
        allowed_locations: list[str] | None = None,
        *,
        predicate: str | None = None,
        removes: Iterable[str] | None = None,
        schema: Any = None,
    ) -> dict[str, Any]:
        """Commits data files written elsewhere (the :class:`~alluvium.AddAction` s that
        :meth:`write_data_files` returned, from any number of workers) in ONE commit on the
        table's latest version: ``mode="append"`` adds them, ``"overwrite"`` replaces the
        table's rows with them. The driver's half of a distributed write.

        ``predicate`` (with ``"overwrite"``) replaces only some partitions: a predicate over
        partition columns only (``"region = 'eu'"``, the language of :meth:`scan`'s filter).
        The live files whose partition values satisfy it are removed, and every action's
        partition values must satisfy it. ``removes`` (with ``"append"``) are paths of live
        files (as :meth:`files` lists them) removed in the same commit: the files a job
        replaced with the ones it adds. ``schema`` (a Delta or Arrow schema, with a
        whole-table ``"overwrite"``) is the files' schema, committed as the table's in the
        same commit (Delta's ``overwriteSchema``; partition columns unchanged; not on a
        table with column mapping); the actions' statistics are checked against it.

        Every action is checked before anything is committed: a path inside the table root
        (or under one of ``allowed_locations``, absolute URI prefixes), partition values that
        are the table's partition columns and parse as their types, well-formed statistics
        naming only the table's columns, no path listed twice or already in the table; every
        path in ``removes`` live. One bad action refuses the whole commit with
        :class:`~alluvium.exceptions.InvalidInputError` naming its file; nothing is deleted
        then (the files stay for a retry, :meth:`discard_files` or VACUUM).

        With an application transaction in ``commit_properties``
        (``CommitProperties(app_transactions=[Transaction(app_id, version)])``) the commit
        is idempotent: when the table already records ``app_id`` at ``version`` or later,
        nothing is committed and the result says ``skipped``.

        Returns ``{"version": int, "skipped": False, "num_added_files", "num_removed_files",
        "num_added_bytes", "num_removed_bytes"}``, or ``{"version": None, "skipped": True,
        "app_id", "recorded_version", "table_version"}``. The handle then holds the latest
        version."""
        texts = []
        for i, a in enumerate(actions):
            if not isinstance(a, AddAction):
                raise TypeError(f"commit_files takes AddAction objects; item {i} is {type(a).__name__}")
            texts.append(a.json)
        removed = None
        if removes is not None:
            if isinstance(removes, str):
                raise TypeError("removes takes a list of paths, not one string")
            removed = [str(p) for p in removes]
        return _native.commit_files(
            self._table,
            texts,
            mode,
            commit=_commit_dict(commit_properties),
            allowed_locations=list(allowed_locations) if allowed_locations is not None else None,
            predicate=predicate,
            removes=removed,
            schema_json=_delta_schema_json(schema) if schema is not None else None,
        )

    def repair(
        self,
        dry_run: bool = False,
        *,
        commit_properties: CommitProperties | None = None,
        post_commithook_properties: PostCommitHookProperties | None = None,
    ) -> dict[str, Any]:
        """FSCK: finds the live data files the store no longer has, or whose deletion vector
        file it no longer has, and, unless ``dry_run``, removes them from the table in one
        commit (operation ``FSCK``), so that reads stop failing on them. A data file's rows
        are gone already; a file whose deletion vector is lost goes with its live rows, as
        Databricks' FSCK removes it (no reader can tell which of its rows were deleted). A
        file counts as missing only when the store says it does not exist: any other failure
        to look it up raises, commits nothing. Returns deltalake's ``{"dry_run",
        "files_removed"}`` (log paths) plus the ``version`` committed (``None`` when nothing
        was) and ``entries``, one per file removed (Databricks' DRY RUN rows):
        ``{"data_file_path", "data_file_missing", "deletion_vector_path",
        "deletion_vector_file_missing"}``. ``commit_properties`` add
        ``commitInfo`` fields and an application transaction (a repair the application
        already committed is skipped)."""
        return self._table.repair(bool(dry_run), _commit_dict(commit_properties))

    def create_write_transaction(
        self,
        actions: list[Any],
        mode: str,
        schema: Any,
        partition_by: list[str] | str | None = None,
        partition_filters: Any = None,
        *,
        commit_properties: CommitProperties | None = None,
        post_commithook_properties: PostCommitHookProperties | None = None,
    ) -> None:
        """deltalake's low-level commit of data files written elsewhere, on
        :meth:`commit_files`: ``actions`` are deltalake's ``AddAction`` (``path``, ``size``,
        ``partition_values``, ``modification_time``, ``data_change``, ``stats``) or
        alluvium's, and deltalake's ``RemoveAction`` (``path``, ``data_change``,
        ``deletion_timestamp``), committed in ONE commit. ``mode`` is ``"append"`` (remove
        actions allowed) or ``"overwrite"``: every live file removed, or with
        ``partition_filters`` (deltalake's ``(column, op, value)`` tuples, a list of them or
        a list of such lists) those of the partitions they select. Each add is checked as
        :meth:`commit_files` checks it (its path in the log's form, relative to the table
        root); each remove must name a live file.

        ``schema`` (a Delta or Arrow schema) is the files' schema: in an overwrite of the
        whole table one whose columns or types differ from the table's replaces its schema
        in the same commit, as deltalake does (not on a table with column mapping); anywhere
        else it must have the table's columns and types (:class:`SchemaMismatchError`
        otherwise: the files are not read). ``partition_by`` must be the table's
        partitioning. Stricter than deltalake, as Delta's ``replaceWhere`` is: an add
        outside the partitions an overwrite replaces is refused, as are remove actions
        without data change (the adds are new data) and the deletion timestamp is the
        commit's time, not the action's (VACUUM's retention counts from it)."""
        if mode not in ("append", "overwrite"):
            raise InvalidInputError(f"mode must be 'append' or 'overwrite', got {mode!r}")
        predicate = None
        if partition_filters:
            if mode != "overwrite":
                raise InvalidInputError(
                    "partition_filters select the partitions an overwrite replaces: they need mode='overwrite'"
                )
            predicate = dnf_to_sql(partition_filters)
        if isinstance(partition_by, str):
            partition_by = [partition_by]
        table_parts = [c.lower() for c in self.metadata().partition_columns]
        if partition_by is not None and [c.lower() for c in partition_by] != table_parts:
            raise InvalidInputError(
                f"partition_by {list(partition_by)} is not the table's partitioning {self.metadata().partition_columns}"
            )
        differences = _column_differences(_delta_schema_json(schema), self._table.schema_json())
        if differences is not None and (mode != "overwrite" or predicate is not None):
            raise SchemaMismatchError(
                "create_write_transaction changes the table's schema only in an overwrite of the whole "
                f"table: {differences}"
            )
        adds: list[AddAction] = []
        removes: list[str] = []
        for i, a in enumerate(actions):
            if _is_remove_action(a):
                if mode != "append":
                    raise InvalidInputError(
                        "remove actions go with mode='append': an overwrite removes the files it replaces itself"
                    )
                if not a.data_change:
                    raise InvalidInputError(
                        f"remove action {i} ({a.path}) has data_change=False: a commit of new data "
                        "removes files as a change of data"
                    )
                removes.append(str(a.path))
            else:
                adds.append(_as_add_action(a, i))
        self.commit_files(
            adds,
            mode=mode,  # type: ignore[arg-type]
            commit_properties=commit_properties,
            predicate=predicate,
            removes=removes or None,
            # Only a schema that differs is a change of schema (a metadata action, which
            # concurrent writers conflict with).
            schema=schema if differences is not None else None,
        )

    def discard_files(self, actions: Iterable[AddAction | str]) -> int:
        """Deletes data files that :meth:`write_data_files` wrote and that will not be
        committed (a failed distributed job's clean-up), given their actions or paths.
        Refuses (before deleting anything) a file the table's latest version references,
        live or removed within the retention, and anything that is not a data file under the
        table root: it never deletes table data. Missing files count as deleted. Returns the
        number of files given."""
        paths = [a.path if isinstance(a, AddAction) else str(a) for a in actions]
        if not paths:
            return 0
        return _native.discard_files(self._table, paths)

    @property
    def optimize(self) -> TableOptimizer:
        """OPTIMIZE: :meth:`TableOptimizer.compact` and :meth:`TableOptimizer.z_order`."""
        return TableOptimizer(self)

    @property
    def alter(self) -> TableAlterer:
        """Table properties and CHECK constraints."""
        return TableAlterer(self)

    def vacuum(
        self,
        retention_hours: int | None = None,
        dry_run: bool = True,
        enforce_retention_duration: bool = True,
        *,
        commit_properties: CommitProperties | None = None,
        post_commithook_properties: PostCommitHookProperties | None = None,
        full: bool = False,
        keep_versions: list[int] | None = None,
    ) -> list[str]:
        """Deletes data and deletion-vector files that no version inside the retention
        (``retention_hours``, else ``delta.deletedFileRetentionDuration``, 7 days) reads.
        ``dry_run`` (the default) only lists them. ``full`` lists the table's directory
        (also finding files no commit ever referenced); otherwise the log's tombstones are
        the candidates. Returns the files, relative to the table. A run that deletes
        commits ``VACUUM START`` and ``VACUUM END``; ``commit_properties``'
        ``custom_metadata`` goes into both, and application transactions are refused
        (VACUUM records none)."""
        if keep_versions:
            raise InvalidInputError("keep_versions is not supported: VACUUM keeps every version inside the retention")
        _refuse_app_transactions(commit_properties, "VACUUM")
        hours = float(retention_hours) if retention_hours is not None else None
        return self._table.vacuum(hours, dry_run, enforce_retention_duration, full, _commit_dict(commit_properties))

    def restore(
        self,
        target: int | _dt.datetime | str,
        *,
        ignore_missing_files: bool = False,
        protocol_downgrade_allowed: bool = False,
        commit_properties: CommitProperties | None = None,
        post_commithook_properties: PostCommitHookProperties | None = None,
    ) -> dict[str, Any]:
        """RESTORE: one commit that makes the latest version hold the files and metadata of
        ``target`` (a version number, or the latest version committed at or before a
        datetime, naive datetimes being UTC, or ISO 8601 text). Nothing is rewritten: the
        target's files missing now are added back, those it lacks are removed. Returns the
        metrics: deltalake's ``numRestoredFile`` and ``numRemovedFile``, and Delta's
        ``numRestoredFiles``, ``numRemovedFiles``, ``restoredFilesSize``,
        ``removedFilesSize``, ``numOfFilesAfterRestore`` and ``tableSizeAfterRestore``.

        A target whose files VACUUM has deleted is refused, naming them, and nothing is
        committed; ``ignore_missing_files=True``, which would commit a table that names
        missing files, is refused too. The protocol is never downgraded (time travel to the
        versions in between must stay readable), so ``protocol_downgrade_allowed`` changes
        nothing. ``commit_properties`` add ``commitInfo`` fields and an application
        transaction (a restore the application already committed is skipped)."""
        if ignore_missing_files:
            raise InvalidInputError(
                "ignore_missing_files=True is not supported: RESTORE never commits a version that names missing files"
            )
        v, ts = _version_arg(target)
        return self._table.restore(v, ts, _commit_dict(commit_properties))

    def create_checkpoint(self) -> None:
        """Writes a checkpoint of the latest version."""
        self._table.create_checkpoint()

    def cleanup_metadata(self) -> None:
        """Deletes log files older than ``delta.logRetentionDuration`` that a checkpoint
        makes unnecessary."""
        self._table.cleanup_metadata(False)

    def __repr__(self) -> str:
        return f"DeltaTable({self.table_uri!r}, version={self.version()})"


class TableMerger:
    """A MERGE being set up (see :meth:`DeltaTable.merge`). Clauses apply in order within
    each kind; :meth:`execute` runs it as one commit."""

    def __init__(
        self,
        table: DeltaTable,
        source: Any,
        predicate: str,
        source_alias: str | None,
        target_alias: str | None,
        merge_schema: bool,
        commit_properties: CommitProperties | None,
        writer_properties: Any = None,
    ) -> None:
        self._table = table
        self._source = source
        self._predicate = predicate
        self._source_alias = source_alias
        self._target_alias = target_alias
        self._merge_schema = merge_schema
        self._commit = commit_properties
        self._writer_properties = writer_properties
        self._clauses: list[tuple[str, str, str | None, dict[str, str] | None, list[str] | None]] = []

    def _add(
        self,
        kind: str,
        action: str,
        predicate: str | None,
        updates: Mapping[str, str] | None = None,
        except_cols: list[str] | None = None,
    ) -> TableMerger:
        self._clauses.append(
            (kind, action, predicate, dict(updates) if updates is not None else None, except_cols)
        )
        return self

    def when_matched_update(self, updates: Mapping[str, str], predicate: str | None = None) -> TableMerger:
        """``WHEN MATCHED [AND predicate] THEN UPDATE SET col = expr, ...``."""
        return self._add("matched", "update", predicate, updates)

    def when_matched_update_all(self, predicate: str | None = None, except_cols: list[str] | None = None) -> TableMerger:
        """``WHEN MATCHED [AND predicate] THEN UPDATE SET *`` (but ``except_cols``)."""
        return self._add("matched", "update_all", predicate, None, except_cols)

    def when_matched_delete(self, predicate: str | None = None) -> TableMerger:
        """``WHEN MATCHED [AND predicate] THEN DELETE``."""
        return self._add("matched", "delete", predicate)

    def when_not_matched_insert(self, updates: Mapping[str, str], predicate: str | None = None) -> TableMerger:
        """``WHEN NOT MATCHED [AND predicate] THEN INSERT (cols) VALUES (exprs)``."""
        return self._add("not_matched", "insert", predicate, updates)

    def when_not_matched_insert_all(
        self, predicate: str | None = None, except_cols: list[str] | None = None
    ) -> TableMerger:
        """``WHEN NOT MATCHED [AND predicate] THEN INSERT *`` (but ``except_cols``)."""
        return self._add("not_matched", "insert_all", predicate, None, except_cols)

    def when_not_matched_by_source_update(self, updates: Mapping[str, str], predicate: str | None = None) -> TableMerger:
        """``WHEN NOT MATCHED BY SOURCE [AND predicate] THEN UPDATE SET ...``."""
        return self._add("not_matched_by_source", "update", predicate, updates)

    def when_not_matched_by_source_delete(self, predicate: str | None = None) -> TableMerger:
        """``WHEN NOT MATCHED BY SOURCE [AND predicate] THEN DELETE``."""
        return self._add("not_matched_by_source", "delete", predicate)

    def execute(self) -> dict[str, Any]:
        """Runs the MERGE as one commit; returns the metrics (``num_source_rows``,
        ``num_target_rows_inserted``, ``num_target_rows_updated``,
        ``num_target_rows_deleted``, ``num_target_rows_copied``, ``num_output_rows``,
        ``num_target_files_added``, ``num_target_files_removed``, ...). Names and types
        of every clause are checked before anything is written."""
        return _native.merge_table(
            self._table._table,
            self._source,
            self._predicate,
            self._clauses,
            self._source_alias,
            self._target_alias,
            self._merge_schema,
            _commit_dict(self._commit, self._writer_properties),
        )


class TableOptimizer:
    """OPTIMIZE (see :attr:`DeltaTable.optimize`)."""

    def __init__(self, table: DeltaTable) -> None:
        self._table = table

    def compact(
        self,
        partition_filters: Any = None,
        target_size: int | None = None,
        max_concurrent_tasks: int | None = None,
        max_spill_size: int | None = None,
        max_temp_directory_size: int | None = None,
        min_commit_interval: int | _dt.timedelta | None = None,
        writer_properties: WriterProperties | None = None,
        *,
        commit_properties: CommitProperties | None = None,
        post_commithook_properties: PostCommitHookProperties | None = None,
    ) -> dict[str, Any]:
        """Compacts files below ``target_size`` (else ``delta.targetFileSize``, else
        128 MiB) within each partition (only those matching ``partition_filters``).
        Concurrent appends are never blocked. Ctrl-C stops between files, keeping the
        commits already made. ``commit_properties``' ``custom_metadata`` goes into each
        commit's ``commitInfo``; application transactions are refused (OPTIMIZE records
        none). Returns the metrics (``numFilesAdded``, ``numFilesRemoved``,
        ``partitionsOptimized``, ...)."""
        _refuse_app_transactions(commit_properties, "OPTIMIZE")
        return self._table._table.optimize(
            target_size, None, dnf_to_sql(partition_filters), None, _commit_dict(commit_properties, writer_properties)
        )

    def z_order(
        self,
        columns: Iterable[str],
        partition_filters: Any = None,
        target_size: int | None = None,
        max_concurrent_tasks: int | None = None,
        max_spill_size: int | None = None,
        max_temp_directory_size: int | None = None,
        min_commit_interval: int | _dt.timedelta | None = None,
        writer_properties: WriterProperties | None = None,
        *,
        commit_properties: CommitProperties | None = None,
        post_commithook_properties: PostCommitHookProperties | None = None,
    ) -> dict[str, Any]:
        """Rewrites each partition's files clustered by ``columns`` (a Z-order curve), so
        that min/max skipping prunes files on any of them. ``commit_properties`` as for
        :meth:`compact`."""
        _refuse_app_transactions(commit_properties, "OPTIMIZE")
        cols = list(columns)
        if not cols:
            raise InvalidInputError("z_order needs at least one column")
        return self._table._table.optimize(
            target_size, cols, dnf_to_sql(partition_filters), None, _commit_dict(commit_properties, writer_properties)
        )


def _is_remove_action(action: Any) -> bool:
    """Whether ``action`` is deltalake's ``RemoveAction`` (duck-typed: deltalake is not
    imported): a path and a deletion timestamp, no modification time."""
    return (
        hasattr(action, "path")
        and hasattr(action, "deletion_timestamp")
        and not hasattr(action, "modification_time")
    )


def _as_add_action(action: Any, i: int) -> AddAction:
    """alluvium's :class:`AddAction`, or one from deltalake's (its fields as attributes)."""
    if isinstance(action, AddAction):
        return action
    names = ("path", "size", "partition_values", "modification_time", "data_change", "stats")
    if not all(hasattr(action, n) for n in names):
        raise InvalidInputError(
            f"create_write_transaction commits add and remove actions; action {i} is a {type(action).__name__}"
        )
    fields: dict[str, Any] = {
        "path": action.path,
        "partitionValues": dict(action.partition_values or {}),
        "size": int(action.size),
        "modificationTime": int(action.modification_time),
        "dataChange": bool(action.data_change),
    }
    if action.stats:
        fields["stats"] = action.stats
    return AddAction.from_dict(fields)


def _delta_schema_json(schema: Any) -> str:
    """The Delta schema JSON of ``schema``: alluvium's or deltalake's (anything with
    ``to_json()``), or an Arrow schema read as the Delta schema a table created with it
    would have."""
    to_json = getattr(schema, "to_json", None)
    if callable(to_json):
        return str(to_json())
    if hasattr(schema, "__arrow_c_schema__"):
        return _native.delta_schema_json(schema)
    raise InvalidInputError(f"schema must be a Delta or Arrow schema, not {type(schema).__name__}")


def _column_differences(given_json: str, table_json: str) -> str | None:
    """How the schema ``given_json`` differs from the table's in its top-level columns
    (case-insensitively) and their Delta types, nullability and metadata aside; ``None``
    when it does not."""
    table = {f["name"].lower(): _bare(f["type"]) for f in json.loads(table_json).get("fields", [])}
    given = {f["name"].lower(): _bare(f["type"]) for f in json.loads(given_json).get("fields", [])}
    missing = sorted(set(table) - set(given))
    extra = sorted(set(given) - set(table))
    differ = sorted(n for n, t in given.items() if n in table and table[n] != t)
    parts = [
        f"columns the table has and the schema lacks: {missing}" if missing else "",
        f"columns the table lacks: {extra}" if extra else "",
        f"columns of another type: {differ}" if differ else "",
    ]
    return "; ".join(p for p in parts if p) or None


class TableFeatures(enum.Enum):
    """Table features for :meth:`TableAlterer.add_feature`, with deltalake's names and
    values (the protocol's names are in ``_FEATURE_NAMES``)."""

    ColumnMapping = "ColumnMapping"
    DeletionVectors = "DeletionVectors"
    TimestampWithoutTimezone = "TimestampWithoutTimezone"
    V2Checkpoint = "V2Checkpoint"
    AppendOnly = "AppendOnly"
    Invariants = "Invariants"
    CheckConstraints = "CheckConstraints"
    ChangeDataFeed = "ChangeDataFeed"
    GeneratedColumns = "GeneratedColumns"
    IdentityColumns = "IdentityColumns"
    RowTracking = "RowTracking"
    DomainMetadata = "DomainMetadata"
    IcebergCompatV1 = "IcebergCompatV1"
    VariantType = "VariantType"
    VariantTypePreview = "VariantTypePreview"


#: deltalake's ``TableFeatures`` values and the Delta protocol's names for them.
_FEATURE_NAMES = {
    "ColumnMapping": "columnMapping",
    "DeletionVectors": "deletionVectors",
    "TimestampWithoutTimezone": "timestampNtz",
    "V2Checkpoint": "v2Checkpoint",
    "AppendOnly": "appendOnly",
    "Invariants": "invariants",
    "CheckConstraints": "checkConstraints",
    "ChangeDataFeed": "changeDataFeed",
    "GeneratedColumns": "generatedColumns",
    "IdentityColumns": "identityColumns",
    "RowTracking": "rowTracking",
    "DomainMetadata": "domainMetadata",
    "IcebergCompatV1": "icebergCompatV1",
    "VariantType": "variantType",
    "VariantTypePreview": "variantType-preview",
}


def _delta_feature_name(feature: Any) -> str:
    """The Delta name of a feature given as a :class:`TableFeatures` member (alluvium's or
    deltalake's), its value, or a Delta name."""
    name = getattr(feature, "value", feature)
    if not isinstance(name, str) or not name:
        raise InvalidInputError(f"a table feature is a TableFeatures member or a name, not {feature!r}")
    return _FEATURE_NAMES.get(name, name)


def _bare(t: Any) -> Any:
    """A Delta type's JSON without nullability and metadata (what files cannot disagree
    on when they are committed without being read)."""
    if isinstance(t, dict):
        return {
            k: _bare(v) for k, v in t.items() if k not in ("nullable", "containsNull", "valueContainsNull", "metadata")
        }
    if isinstance(t, list):
        return [_bare(v) for v in t]
    return t


def _field_json(field: Any) -> dict[str, Any]:
    """A field as Delta schema JSON: alluvium's :class:`Field`, or any field with deltalake's
    ``to_json()``."""
    if isinstance(field, Field):
        return {"name": field.name, "type": _type_to_json(field.type), "nullable": field.nullable, "metadata": field.metadata}
    to_json = getattr(field, "to_json", None)
    if callable(to_json):
        return json.loads(to_json())
    raise InvalidInputError(f"add_columns takes Field objects, not {type(field).__name__}")


def _large(t: Any) -> Any:
    """``t`` with every string, binary and list type inside it as its large variant."""
    import pyarrow as pa

    if pa.types.is_string(t):
        return pa.large_string()
    if pa.types.is_binary(t):
        return pa.large_binary()
    if pa.types.is_list(t):
        return pa.large_list(t.value_field.with_type(_large(t.value_type)))
    if pa.types.is_struct(t):
        return pa.struct([f.with_type(_large(f.type)) for f in t])
    if pa.types.is_map(t):
        return pa.map_(_large(t.key_type), t.item_field.with_type(_large(t.item_type)))
    return t


def _partition_value(name: str, value: str, t: Any) -> Any:
    """The log's text of a partition value as a scalar of type ``t``. A timestamp's text
    may carry no zone (``2021-01-01 12:30:00.000000``, what delta-rs writes: PROTOCOL.md's
    legacy form, in a writer's time zone the log does not record); it is read as UTC, as
    alluvium's scan and delta-rs read it."""
    import pyarrow as pa

    try:
        return pa.scalar(value).cast(t)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as first:
        if pa.types.is_timestamp(t) and t.tz is not None:
            try:
                return pa.scalar(value).cast(pa.timestamp(t.unit)).cast(pa.timestamp(t.unit, "UTC")).cast(t)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                pass
        raise InvalidInputError(f"partition value {value!r} of column {name} is not a {t}: {first}") from first


def _partition_expression(parts: list[tuple[str, str | None]], schema: Any) -> Any:
    """The expression a fragment's partition values make: each column equal to its value,
    the log's text cast to the column's type, or null."""
    import pyarrow.dataset as ds

    expr = ds.scalar(True)
    for name, value in parts:
        if value is None:
            term = ds.field(name).is_null()
        else:
            term = ds.field(name) == ds.scalar(_partition_value(name, value, schema.field(name).type))
        expr = expr & term
    return expr


class TableAlterer:
    """Table properties and CHECK constraints (see :attr:`DeltaTable.alter`)."""

    def __init__(self, table: DeltaTable) -> None:
        self._table = table

    def set_table_properties(
        self,
        properties: Mapping[str, str],
        raise_if_not_exists: bool = True,
        *,
        commit_properties: CommitProperties | None = None,
    ) -> None:
        """Sets table properties in one commit (``delta.*`` keys are checked; enabling a
        feature upgrades the protocol as Delta does). ``commit_properties`` add
        ``commitInfo`` fields and an application transaction (a change the application
        already committed is skipped)."""
        self._table._table.set_properties(dict(properties), [], _commit_dict(commit_properties))

    def add_columns(
        self,
        fields: Field | list[Field],
        *,
        commit_properties: CommitProperties | None = None,
        post_commithook_properties: PostCommitHookProperties | None = None,
    ) -> None:
        """Adds ``fields`` (:class:`alluvium.schema.Field`, or deltalake's) after the
        existing columns, in one commit; existing rows read them as NULL. A NOT NULL field
        is refused on a table with data; under column mapping each gets a fresh id and
        physical name; a type needing a table feature (``timestamp_ntz``, ``variant``)
        upgrades the protocol in the same commit. ``commit_properties`` add ``commitInfo``
        fields and an application transaction (a change the application already committed
        is skipped)."""
        listed = [fields] if not isinstance(fields, (list, tuple)) else list(fields)
        if not listed:
            raise InvalidInputError("add_columns needs at least one field")
        struct = json.dumps({"type": "struct", "fields": [_field_json(f) for f in listed]})
        self._table._table.add_columns(struct, _commit_dict(commit_properties))

    def add_feature(
        self,
        feature: Any,
        allow_protocol_versions_increase: bool = False,
        *,
        commit_properties: CommitProperties | None = None,
        post_commithook_properties: PostCommitHookProperties | None = None,
    ) -> None:
        """Lists table features in the protocol as supported, in one commit, without
        enabling what they govern (``delta.enableDeletionVectors`` and the like stay as they
        are). ``feature`` is one or a list of deltalake's ``TableFeatures`` (or their names,
        ``"DeletionVectors"``), or Delta's own names (``"deletionVectors"``). When the
        protocol must be raised for them (a legacy table goes to writer 7; a reader-writer
        feature needs reader 3) and ``allow_protocol_versions_increase`` is false, nothing
        is committed (:class:`InvalidInputError`). ``commit_properties`` as for
        :meth:`set_table_properties`."""
        listed = feature if isinstance(feature, (list, tuple)) else [feature]
        names = [_delta_feature_name(f) for f in listed]
        self._table._table.add_features(
            names, bool(allow_protocol_versions_increase), _commit_dict(commit_properties)
        )

    def set_table_name(
        self,
        name: str,
        *,
        commit_properties: CommitProperties | None = None,
        post_commithook_properties: PostCommitHookProperties | None = None,
    ) -> None:
        """Sets the table's name (``metaData.name``) in one commit (operation
        ``UPDATE TABLE METADATA``). ``commit_properties`` add ``commitInfo`` fields and an
        application transaction (a change the application already committed is
        skipped)."""
        self._table._table.set_table_info("name", str(name), _commit_dict(commit_properties))

    def set_table_description(
        self,
        description: str,
        *,
        commit_properties: CommitProperties | None = None,
        post_commithook_properties: PostCommitHookProperties | None = None,
    ) -> None:
        """Sets the table's description (``metaData.description``) in one commit, as
        :meth:`set_table_name` sets its name."""
        self._table._table.set_table_info("description", str(description), _commit_dict(commit_properties))

    def set_column_metadata(
        self,
        column: str,
        metadata: Mapping[str, str],
        *,
        commit_properties: CommitProperties | None = None,
        post_commithook_properties: PostCommitHookProperties | None = None,
    ) -> None:
        """Inserts or replaces entries of the top-level column ``column``'s metadata (its
        other keys are kept), in one commit (operation ``UPDATE FIELD METADATA``).
        ``comment`` is the column comment engines show. Keys the Delta protocol gives
        meaning to (``delta.*``, ``CURRENT_DEFAULT``) are refused, as is a column the table
        does not have (:class:`InvalidInputError`)."""
        entries = [(str(k), str(v)) for k, v in metadata.items()]
        self._table._table.set_column_metadata(column, entries, _commit_dict(commit_properties))

    def add_constraint(
        self,
        constraints: Mapping[str, str],
        *,
        commit_properties: CommitProperties | None = None,
        post_commithook_properties: PostCommitHookProperties | None = None,
    ) -> None:
        """Adds CHECK constraints (name to SQL expression), each checked against every
        existing row first, one commit each. ``commit_properties`` add ``commitInfo``
        fields to each commit; an application transaction makes the change once (a repeat
        is skipped), and so takes one constraint per call: the second commit of a call
        would be taken for a repeat of the first (:class:`InvalidInputError`, nothing
        committed)."""
        if commit_properties is not None and commit_properties.app_transactions and len(constraints) > 1:
            raise InvalidInputError(
                "add_constraint with an application transaction takes one constraint per call:"
                f" each is its own commit, and the second would be skipped as a repeat (got {len(constraints)})"
            )
        commit = _commit_dict(commit_properties)
        for name, expression in constraints.items():
            self._table._table.add_constraint(name, expression, commit)

    def drop_constraint(
        self,
        name: str,
        raise_if_not_exists: bool = True,
        *,
        commit_properties: CommitProperties | None = None,
        post_commithook_properties: PostCommitHookProperties | None = None,
    ) -> None:
        """Drops the CHECK constraint ``name``. ``commit_properties`` as for
        :meth:`set_table_properties`."""
        self._table._table.drop_constraint(name, raise_if_not_exists, _commit_dict(commit_properties))
