"""Type stubs of the extension module ``alluvium._native`` (built from ``python/src``).

The public classes are :class:`ArrowStream` and :class:`ArrowSchema`; the rest is what the
pure-Python layer (``alluvium.table``, ``alluvium.writer``, ``alluvium.state``) calls.
"""

from collections.abc import Sequence
from typing import Any, Literal

__version__: str
ENGINE: str

class ArrowSchema:
    """An Arrow schema, exported through ``__arrow_c_schema__`` (``pyarrow.schema(s)``)."""

    @property
    def names(self) -> list[str]: ...
    def __arrow_c_schema__(self) -> object: ...

class ArrowStream:
    """A stream of Arrow record batches from alluvium (a scan, a change feed), read once.

    ``pyarrow.table(s)``, ``polars.from_arrow(s)``, ``duckdb.sql("SELECT ... FROM s")`` and
    arro3 take it directly through the Arrow PyCapsule interface; :meth:`read_all` and
    :meth:`to_pyarrow_table` need pyarrow and say so when it is missing.
    """

    @property
    def schema(self) -> ArrowSchema: ...
    @property
    def consumed(self) -> bool: ...
    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object: ...
    def __arrow_c_schema__(self) -> object: ...
    def read_all(self) -> Any:
        """The whole stream as a ``pyarrow.Table`` (Ctrl-C stops between batches)."""
    def to_pyarrow_table(self) -> Any:
        """Same as :meth:`read_all`."""

class RawTable:
    @property
    def uri(self) -> str: ...
    def version(self) -> int: ...
    def load(self, version: int | None = None, timestamp_ms: int | None = None) -> None: ...
    def update_incremental(self) -> None: ...
    def schema_json(self) -> str: ...
    def arrow_schema(self) -> ArrowSchema: ...
    def metadata(self) -> dict[str, Any]: ...
    def protocol(self) -> dict[str, Any]: ...
    def files(self, filter: str | None = None) -> list[str]: ...
    def partitions(self, filter: str | None = None) -> list[list[tuple[str, str | None]]]: ...
    def dataset_files(self, filter: str | None = None) -> list[tuple[str, int, list[tuple[str, str | None]], bool]]: ...
    def add_actions(self) -> list[dict[str, Any]]: ...
    def history(self, limit: int | None = None) -> list[dict[str, Any]]: ...
    def scan(
        self, columns: Sequence[str] | None = None, filter: str | None = None, view_types: bool = False
    ) -> ArrowStream: ...
    def count(self, filter: str | None = None) -> int: ...
    def plan_files(
        self, columns: Sequence[str] | None = None, filter: str | None = None
    ) -> list[tuple[str, int, int | None]]: ...
    def read_files(
        self,
        paths: Sequence[str],
        columns: Sequence[str] | None = None,
        filter: str | None = None,
        view_types: bool = False,
    ) -> ArrowStream: ...
    def delete(self, predicate: str | None = None, commit: dict[str, Any] | None = None) -> dict[str, Any]: ...
    def update(
        self,
        set: list[tuple[str, str | None, Any]],
        predicate: str | None = None,
        commit: dict[str, Any] | None = None,
    ) -> dict[str, Any]: ...
    def optimize(
        self,
        target_size: int | None = None,
        zorder_by: list[str] | None = None,
        partition_filter: str | None = None,
        max_commit_bytes: int | None = None,
        commit: dict[str, Any] | None = None,
    ) -> dict[str, Any]: ...
    def vacuum(
        self,
        retention_hours: float | None = None,
        dry_run: bool = True,
        enforce_retention_duration: bool = True,
        full: bool = False,
        commit: dict[str, Any] | None = None,
    ) -> list[str]: ...
    def load_cdf(
        self,
        start_version: int | None = None,
        end_version: int | None = None,
        start_timestamp_ms: int | None = None,
        end_timestamp_ms: int | None = None,
        columns: Sequence[str] | None = None,
        predicate: str | None = None,
        view_types: bool = False,
        allow_out_of_range: bool = False,
    ) -> ArrowStream: ...
    def restore(
        self, version: int | None = None, timestamp_ms: int | None = None, commit: dict[str, Any] | None = None
    ) -> dict[str, Any]: ...
    def create_checkpoint(self) -> int: ...
    def cleanup_metadata(self, dry_run: bool = False) -> int: ...
    def transaction_version(self, app_id: str) -> int | None: ...
    def add_columns(self, struct_json: str, commit: dict[str, Any] | None = None) -> int | None: ...
    def repair(self, dry_run: bool = False, commit: dict[str, Any] | None = None) -> dict[str, Any]: ...
    def set_table_info(self, what: str, value: str, commit: dict[str, Any] | None = None) -> int | None: ...
    def set_column_metadata(
        self, column: str, metadata: list[tuple[str, str]], commit: dict[str, Any] | None = None
    ) -> int | None: ...
    def set_properties(
        self, set: dict[str, str], unset: list[str] = ..., commit: dict[str, Any] | None = None
    ) -> int | None: ...
    def add_features(
        self, names: list[str], allow_protocol_versions_increase: bool, commit: dict[str, Any] | None = None
    ) -> int | None: ...
    def add_constraint(self, name: str, expression: str, commit: dict[str, Any] | None = None) -> int | None: ...
    def drop_constraint(
        self, name: str, raise_if_not_exists: bool = True, commit: dict[str, Any] | None = None
    ) -> int | None: ...
    def verify(self, deep: bool = False, version: int | None = None) -> dict[str, Any]: ...

class RawStateStore:
    @staticmethod
    def create(
        location: str, key_columns: list[str], value_schema: object, storage_options: dict[str, str] | None = None
    ) -> RawStateStore: ...
    @staticmethod
    def open(location: str, storage_options: dict[str, str] | None = None) -> RawStateStore: ...
    @property
    def key_columns(self) -> list[str]: ...
    def put(self, data: object, app_id: str | None = None, app_version: int | None = None) -> dict[str, Any]: ...
    def sync(self) -> dict[str, Any]: ...
    def get(self, keys: object, version: int | None = None, timestamp_ms: int | None = None) -> ArrowStream: ...
    def scan(self, version: int | None = None, timestamp_ms: int | None = None) -> ArrowStream: ...
    def history(self, key: object) -> ArrowStream: ...
    def status(self) -> dict[str, Any]: ...

def open_table(
    uri: str,
    version: int | None = None,
    timestamp_ms: int | None = None,
    storage_options: dict[str, str] | None = None,
) -> RawTable: ...
def is_table(uri: str, storage_options: dict[str, str] | None = None) -> bool: ...
def write_table(
    uri: str,
    data: object,
    mode_text: Literal["error", "append", "overwrite", "ignore"] = "error",
    partition_by: list[str] | None = None,
    predicate: str | None = None,
    merge_schema: bool = False,
    configuration: dict[str, str] | None = None,
    target_file_size: int | None = None,
    storage_options: dict[str, str] | None = None,
    commit: dict[str, Any] | None = None,
    table: RawTable | None = None,
    overwrite_schema: bool = False,
    compression: str | None = None,
) -> int | None: ...
def create_table(
    uri: str,
    schema: object,
    mode_text: Literal["error", "append", "overwrite", "ignore"] = "error",
    partition_by: list[str] | None = None,
    configuration: dict[str, str] | None = None,
    storage_options: dict[str, str] | None = None,
    commit: dict[str, Any] | None = None,
) -> RawTable: ...
def merge_table(
    table: RawTable,
    source: object,
    predicate: str,
    clauses: list[tuple[str, str, str | None, dict[str, str] | None, list[str] | None]],
    source_alias: str | None = None,
    target_alias: str | None = None,
    merge_schema: bool = False,
    commit: dict[str, Any] | None = None,
) -> dict[str, Any]: ...
def write_data_files(table: RawTable, data: object, partition_by: list[str] | None = None) -> list[str]:
    """Writes ``data`` as uncommitted data files of the table; their add actions as JSON text."""
def commit_files(
    table: RawTable,
    actions: list[str],
    mode_text: Literal["append", "overwrite"] = "append",
    commit: dict[str, Any] | None = None,
    allowed_locations: list[str] | None = None,
    predicate: str | None = None,
    removes: list[str] | None = None,
    schema_json: str | None = None,
) -> dict[str, Any]:
    """Commits add actions (JSON text) in one commit, an overwrite replacing the partitions
    ``predicate`` names (all without it), an append removing the live files ``removes`` names;
    the outcome (``version``, ``skipped``, counts)."""
def discard_files(table: RawTable, paths: list[str]) -> int:
    """Deletes uncommitted data files by their add actions' paths (never a referenced file)."""

def delta_schema_json(schema: object) -> str:
    """The Delta schema JSON of an Arrow schema (what a table created with it has)."""
