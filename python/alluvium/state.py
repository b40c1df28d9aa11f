"""The keyed state store: a changelog folded into the latest value per key, both kept as
Delta tables any engine reads.

A store at ``location`` is ``log/`` (every event: the key columns, the value columns,
``event_time``, optional ``seq`` and ``op`` = ``UPSERT`` | ``DELETE``) and ``state/`` (the
latest event of each live key by ``event_time`` then ``seq``), folded in by :meth:`StateStore.sync`
exactly once, with one MERGE per chunk. Producers append without conflicting with each
other or with a sync; an event older than a key's state never overwrites it; every synced
version can be read back.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any

from . import _native
from ._sql import timestamp_ms

__all__ = ["StateStore"]


class StateStore:
    """A keyed state store (see the module documentation). Create one with
    :meth:`create`, open one with :meth:`open`."""

    def __init__(self, raw: Any) -> None:
        self._raw = raw

    @classmethod
    def create(
        cls,
        location: str,
        key: list[str] | str,
        value_schema: Any,
        storage_options: dict[str, str] | None = None,
    ) -> StateStore:
        """Creates a store keyed by ``key`` (one column name or several) whose values have
        the columns of ``value_schema`` (a pyarrow schema, or anything exporting
        ``__arrow_c_schema__``; the key and event columns in it are allowed and ignored)."""
        keys = [key] if isinstance(key, str) else list(key)
        return cls(_native.RawStateStore.create(location, keys, value_schema, storage_options))

    @classmethod
    def open(cls, location: str, storage_options: dict[str, str] | None = None) -> StateStore:
        """Opens the store at ``location``."""
        return cls(_native.RawStateStore.open(location, storage_options))

    @property
    def key_columns(self) -> list[str]:
        """The key columns."""
        return self._raw.key_columns

    def put(self, events: Any, app_id: str | None = None, app_version: int | None = None) -> dict[str, Any]:
        """Appends events (Arrow data with the key columns, any value columns,
        ``event_time``, and optionally ``seq`` and ``op``) in one commit. With ``app_id``
        and ``app_version`` the write is idempotent: a repeat is skipped."""
        return self._raw.put(events, app_id, app_version)

    def sync(self) -> dict[str, Any]:
        """Folds every event not yet synced into the state; returns what it did."""
        return self._raw.sync()

    def get(
        self, keys: Any, version: int | None = None, timestamp: str | _dt.datetime | None = None
    ) -> _native.ArrowStream:
        """The state rows of ``keys`` (Arrow data with the key columns), at the latest
        synced state, a version of ``state/``, or as of a time."""
        ts = timestamp_ms(timestamp) if timestamp is not None else None
        return self._raw.get(keys, version, ts)

    def scan(self, version: int | None = None, timestamp: str | _dt.datetime | None = None) -> _native.ArrowStream:
        """Every state row, as a stream."""
        ts = timestamp_ms(timestamp) if timestamp is not None else None
        return self._raw.scan(version, ts)

    def history(self, key: Any) -> _native.ArrowStream:
        """Every retained event of one key (Arrow data with one row of key columns), in
        order."""
        return self._raw.history(key)

    def status(self) -> dict[str, Any]:
        """Versions of the three tables, the lag of the state behind the log, key count."""
        return self._raw.status()
