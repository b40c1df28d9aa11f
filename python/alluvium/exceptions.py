"""The exceptions alluvium raises.

Every failure of the engine is an :class:`AlluviumError` carrying the library's one-line
message, with a subclass per kind of failure so that callers catch what they can act on.
Several also derive from the built-in exception a Python programmer would catch
(``ValueError``, ``FileNotFoundError``, ``FileExistsError``, ``OSError``).

Every instance has:

* ``error_kind``: the engine's classification (``"conflict"``, ``"not_found"``,
  ``"invalid_input"``, ...);
* ``retryable``: whether running the whole operation again, from the table's latest
  version, is safe and may succeed;
* ``kind``: for commit conflicts, Delta's name of the conflict
  (``"ConcurrentAppendException"``, ``"ConcurrentDeleteReadException"``,
  ``"MetadataChangedException"``, ...), else ``None``.

``DeltaError``, ``CommitFailedError`` and ``DeltaProtocolError`` are the names deltalake
uses for the same families, so ``except`` clauses written for deltalake keep working.
"""

from __future__ import annotations

__all__ = [
    "AlluviumError",
    "CommitFailedError",
    "CommitConflictError",
    "CommitOutcomeUnknownError",
    "NotFoundError",
    "TableNotFoundError",
    "TableExistsError",
    "SchemaMismatchError",
    "InvalidInputError",
    "UnsupportedFeatureError",
    "CorruptTableError",
    "DeltaProtocolError",
    "OperationRefusedError",
    "StorageError",
    "InterruptedError",
    "DeltaError",
]


class AlluviumError(Exception):
    """Any failure of the engine."""

    error_kind: str = "other"
    retryable: bool = False
    kind: str | None = None

    @property
    def message(self) -> str:
        """The one-line message."""
        return str(self)


DeltaError = AlluviumError


class CommitFailedError(AlluviumError):
    """A commit did not land (or may not have): the base of the two cases below."""


class CommitConflictError(CommitFailedError):
    """A concurrent commit conflicts with this one; nothing was committed.

    ``kind`` is Delta's name of the conflict; ``retryable`` says whether running the
    operation again from the latest version is safe (false for metadata and protocol
    changes, which may change what the operation means).
    """


class CommitOutcomeUnknownError(CommitFailedError):
    """Whether the commit landed could not be determined (a storage timeout at the
    moment of the commit): read the table, and look for the commit, before retrying."""


class NotFoundError(AlluviumError, LookupError):
    """What was asked for does not exist: a version or timestamp outside the table's
    history, a missing file."""


class TableNotFoundError(AlluviumError, FileNotFoundError):
    """No Delta table at the location."""


class TableExistsError(AlluviumError, FileExistsError):
    """A table already exists where one was to be created."""


class InvalidInputError(AlluviumError, ValueError):
    """The caller's input is invalid: an argument, a predicate, data that does not fit
    the table."""


class SchemaMismatchError(InvalidInputError):
    """The data's schema does not match the table's (pass ``schema_mode="merge"`` to add
    new columns)."""


class DeltaProtocolError(AlluviumError):
    """The table's log is outside what this engine reads or writes exactly."""


class UnsupportedFeatureError(DeltaProtocolError):
    """The table needs a protocol version or feature alluvium does not implement, or the
    storage lacks a capability the operation needs."""


class CorruptTableError(DeltaProtocolError):
    """The table's files are damaged or violate the protocol."""


class OperationRefusedError(AlluviumError):
    """The table's properties or state forbid the operation (an append-only table, a
    VACUUM retention below the table's)."""


class StorageError(AlluviumError, OSError):
    """Storage failed (a timeout, permissions, a full disk)."""


class InterruptedError(AlluviumError):  # noqa: A001 - alluvium's own, not the builtin
    """A long operation was interrupted; what it committed before stopping stays."""
