"""alluvium: Delta Lake tables from Python, on alluvium's Rust engine.

The everyday API is deltalake's (:func:`write_deltalake`, :class:`DeltaTable`), so moving
from ``deltalake`` is for the common calls a change of import. What alluvium adds:

* no pyarrow needed: data in is anything exporting the Arrow PyCapsule interface (pyarrow,
  polars, DuckDB, arro3, nanoarrow), data out an :class:`ArrowStream` those libraries take
  directly;
* deletion vectors: on tables with ``delta.enableDeletionVectors=true`` DELETE, UPDATE and
  MERGE mark rows instead of rewriting files;
* the GIL released in every call that touches storage or decodes data, and Ctrl-C that
  stops a long scan, write or OPTIMIZE cleanly;
* distributed writes: workers write data files (:meth:`DeltaTable.write_data_files`), a
  driver commits them all in one idempotent commit (:meth:`DeltaTable.commit_files`); on
  Ray, :mod:`alluvium.ray` does both;
* :meth:`DeltaTable.scan` with SQL-style filters, :meth:`DeltaTable.verify`, and the keyed
  :class:`StateStore`;
* typed exceptions (:mod:`alluvium.exceptions`).
"""

from __future__ import annotations

from . import exceptions
from ._native import ENGINE, ArrowSchema, ArrowStream, __version__
from .actions import AddAction
from .exceptions import (
    AlluviumError,
    CommitConflictError,
    CommitOutcomeUnknownError,
    InvalidInputError,
    SchemaMismatchError,
    TableExistsError,
    TableNotFoundError,
    UnsupportedFeatureError,
)
from .schema import ArrayType, Field, MapType, PrimitiveType, Schema, StructType
from .state import StateStore
from .table import (
    DeltaTable,
    Metadata,
    ProtocolVersions,
    TableAlterer,
    TableFeatures,
    TableMerger,
    TableOptimizer,
)
from .writer import CommitProperties, PostCommitHookProperties, Transaction, WriterProperties, write_deltalake

__all__ = [
    "ENGINE",
    "__version__",
    "ArrowSchema",
    "ArrowStream",
    "DeltaTable",
    "Metadata",
    "ProtocolVersions",
    "TableAlterer",
    "TableFeatures",
    "TableMerger",
    "TableOptimizer",
    "write_deltalake",
    "CommitProperties",
    "Transaction",
    "PostCommitHookProperties",
    "WriterProperties",
    "AddAction",
    "StateStore",
    "Schema",
    "Field",
    "PrimitiveType",
    "StructType",
    "ArrayType",
    "MapType",
    "exceptions",
    "AlluviumError",
    "CommitConflictError",
    "CommitOutcomeUnknownError",
    "InvalidInputError",
    "SchemaMismatchError",
    "TableExistsError",
    "TableNotFoundError",
    "UnsupportedFeatureError",
]
