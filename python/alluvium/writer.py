"""Writing tables: :func:`write_deltalake` and what a commit carries
(:class:`CommitProperties`, :class:`Transaction`)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from . import _native

if TYPE_CHECKING:
    from .table import DeltaTable

__all__ = ["write_deltalake", "CommitProperties", "Transaction", "PostCommitHookProperties", "WriterProperties"]


class Transaction:
    """An application's idempotent-write marker (Delta's ``txn`` action): a commit that
    carries ``(app_id, version)`` is skipped when the table already records that
    application at ``version`` or later, so a retried job never writes twice."""

    def __init__(self, app_id: str, version: int, last_updated: int | None = None) -> None:
        self.app_id = app_id
        self.version = version
        self.last_updated = last_updated

    def __repr__(self) -> str:
        return f"Transaction(app_id={self.app_id!r}, version={self.version})"


class CommitProperties:
    """What a commit carries besides its changes.

    * ``custom_metadata``: fields of your own in the commit's ``commitInfo`` (names the
      engine writes, such as ``operation``, are refused);
    * ``max_commit_retries``: how often to retry after losing a race to a concurrent
      commit (the retries are also bounded by time);
    * ``app_transactions``: one :class:`Transaction` for an idempotent write.
    """

    def __init__(
        self,
        custom_metadata: Mapping[str, Any] | None = None,
        max_commit_retries: int | None = None,
        app_transactions: list[Transaction] | None = None,
    ) -> None:
        self.custom_metadata = dict(custom_metadata) if custom_metadata is not None else None
        self.max_commit_retries = max_commit_retries
        self.app_transactions = list(app_transactions) if app_transactions is not None else None


class PostCommitHookProperties:
    """Accepted for compatibility with deltalake. alluvium's post-commit work follows the
    table's properties (``delta.checkpointInterval``, ``delta.enableExpiredLogCleanup``)."""

    def __init__(self, create_checkpoint: bool = True, cleanup_expired_logs: bool | None = None) -> None:
        self.create_checkpoint = create_checkpoint
        self.cleanup_expired_logs = cleanup_expired_logs


class WriterProperties:
    """deltalake's Parquet writer settings. ``compression`` (``"SNAPPY"``, ``"ZSTD"``,
    ``"GZIP"``, ``"BROTLI"``, ``"LZ4_RAW"``, ``"LZ4"``, ``"UNCOMPRESSED"``) and
    ``compression_level`` choose the codec of the data files an operation writes
    (:func:`write_deltalake`, DELETE, UPDATE, MERGE and OPTIMIZE), in place of the
    table's ``delta.parquet.compression.codec`` for that operation;
    the other settings are accepted without effect (pages, row groups and statistics
    follow the table's properties)."""

    def __init__(self, **kwargs: Any) -> None:
        self.options = kwargs



def _writer_codec(properties: Any) -> str | None:
    """The codec ``properties`` (alluvium's :class:`WriterProperties`, or deltalake's, read
    through its attributes) ask for, as alluvium names it (``zstd(3)``); ``None`` for the
    table's."""
    if properties is None:
        return None
    if isinstance(properties, WriterProperties):
        compression = properties.options.get("compression")
        level = properties.options.get("compression_level")
    else:
        compression = getattr(properties, "compression", None)
        level = getattr(properties, "compression_level", None)
    if compression is None:
        if level is not None:
            raise _native_invalid("compression_level needs a compression")
        return None
    return f"{compression}({int(level)})" if level is not None else str(compression)


def _commit_dict(commit_properties: CommitProperties | None, writer_properties: Any = None) -> dict[str, Any] | None:
    """What the native layer takes of ``commit_properties`` and of ``writer_properties``
    (its codec, for the files the operation writes); ``None`` when neither says anything."""
    codec = _writer_codec(writer_properties)
    if commit_properties is None:
        return None if codec is None else {"compression": codec}
    apps = None
    if commit_properties.app_transactions is not None:
        apps = [(t.app_id, t.version) for t in commit_properties.app_transactions]
    return {
        "app_transactions": apps,
        "custom_metadata": commit_properties.custom_metadata,
        "max_commit_retries": commit_properties.max_commit_retries,
        "compression": codec,
    }


def _location(uri: str | os.PathLike[str]) -> str:
    text = os.fspath(uri)
    if "://" in text:
        return text
    return os.path.abspath(text)


def _arrow_data(data: Any) -> Any:
    """``data`` as something the native layer reads: Arrow exporters and iterables pass
    through; a pandas DataFrame without the Arrow interface goes through pyarrow."""
    if hasattr(data, "__arrow_c_stream__") or hasattr(data, "__arrow_c_array__"):
        return data
    if type(data).__module__.startswith("pandas"):
        try:
            import pyarrow
        except ImportError as e:
            raise ImportError("writing a pandas DataFrame needs pyarrow (pip install pyarrow)") from e
        return pyarrow.Table.from_pandas(data, preserve_index=False)
    return data


def write_deltalake(
    table_or_uri: str | os.PathLike[str] | DeltaTable,
    data: Any,
    *,
    partition_by: list[str] | str | None = None,
    mode: Literal["error", "append", "overwrite", "ignore"] = "error",
    name: str | None = None,
    description: str | None = None,
    configuration: Mapping[str, str | None] | None = None,
    schema_mode: Literal["merge", "overwrite"] | None = None,
    storage_options: dict[str, str] | None = None,
    predicate: str | None = None,
    target_file_size: int | None = None,
    writer_properties: WriterProperties | None = None,
    commit_properties: CommitProperties | None = None,
    post_commithook_properties: PostCommitHookProperties | None = None,
) -> None:
    """Writes ``data`` to a Delta table, creating it when there is none.

    ``data`` is anything that exports the Arrow PyCapsule interface
    (``__arrow_c_stream__`` or ``__arrow_c_array__``: a pyarrow Table, RecordBatch or
    RecordBatchReader, a polars DataFrame, a DuckDB relation, an arro3 table, an
    :class:`~alluvium.ArrowStream`), or an iterable of such objects. It is read as a
    stream, batch by batch, with the GIL released: memory holds the files being written,
    not the input.

    ``mode``: ``"error"`` (the default) refuses an existing table, ``"append"`` adds rows,
    ``"overwrite"`` replaces them (only those matching ``predicate`` when given, which every
    new row must match: Delta's ``replaceWhere``), ``"ignore"`` does nothing when a table
    exists. A new table is created with the data in one commit, partitioned by
    ``partition_by`` and with the table properties in ``configuration``.
    ``schema_mode="merge"`` adds the data's new columns to the table;
    ``schema_mode="overwrite"`` (with ``mode="overwrite"``, no predicate) replaces the table's
    schema with the data's, and its partitioning with ``partition_by`` when given (Delta's
    ``overwriteSchema``): the table's id, properties and history stay.

    On a table with ``delta.enableDeletionVectors=true`` a predicate overwrite deletes the
    old rows with deletion vectors instead of rewriting files.

    Raises :class:`~alluvium.exceptions.TableExistsError`,
    :class:`~alluvium.exceptions.SchemaMismatchError`,
    :class:`~alluvium.exceptions.InvalidInputError` (nothing is committed then) and the
    other :class:`~alluvium.exceptions.AlluviumError` subclasses. Ctrl-C stops the write
    before its next batch and leaves nothing behind.
    """
    from .table import DeltaTable

    if name is not None or description is not None:
        raise _native_invalid("alluvium does not set a table name or description; leave name and description unset")
    if schema_mode not in (None, "merge", "overwrite"):
        raise _native_invalid(
            f"schema_mode={schema_mode!r} is not supported: None (the schema must match), 'merge' (new columns are added) "
            "or 'overwrite' (the data's schema replaces the table's)"
        )
    if isinstance(partition_by, str):
        partition_by = [partition_by]
    config = None
    if configuration is not None:
        config = {k: v for k, v in configuration.items() if v is not None}
    handle = None
    if isinstance(table_or_uri, DeltaTable):
        handle = table_or_uri
        uri = table_or_uri.table_uri
        storage_options = storage_options or table_or_uri._storage_options
    else:
        uri = _location(table_or_uri)
    _native.write_table(
        uri,
        _arrow_data(data),
        mode,
        partition_by=list(partition_by) if partition_by is not None else None,
        predicate=predicate,
        merge_schema=schema_mode == "merge",
        configuration=config,
        target_file_size=target_file_size,
        storage_options=storage_options,
        commit=_commit_dict(commit_properties),
        table=handle._table if handle is not None else None,
        overwrite_schema=schema_mode == "overwrite",
        compression=_writer_codec(writer_properties),
    )


def _native_invalid(message: str) -> Exception:
    from .exceptions import InvalidInputError

    return InvalidInputError(message)
