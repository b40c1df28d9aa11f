"""Add actions of data files written but not yet committed: :class:`AddAction`.

A distributed write has two halves (see :meth:`DeltaTable.write_data_files` and
:meth:`DeltaTable.commit_files`): workers write data files and get their add actions back,
a driver commits every worker's actions in one commit. An :class:`AddAction` is what
travels between the two: the Delta log's ``add`` action as its JSON text, which pickles as
that text, so that it crosses process boundaries (Ray tasks, multiprocessing, a queue)
unchanged. The engine checks each action again when it is committed; nothing here is
trusted.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["AddAction"]


class AddAction:
    """One data file's Delta ``add`` action (path, size, partition values, statistics),
    held as the action's JSON text and read-only.

    Two actions are equal when their JSON is the same object (key order does not
    matter). ``pickle`` round-trips an action exactly.
    """

    __slots__ = ("_json", "_fields")

    def __init__(self, json_text: str) -> None:
        """Wraps ``json_text``, the ``add`` action's JSON object (without the
        ``{"add": ...}`` wrapper of a log line). Raises ``ValueError`` when it is not a JSON
        object with a text ``path``."""
        try:
            fields = json.loads(json_text)
        except (TypeError, ValueError) as e:
            raise ValueError(f"an add action is a JSON object, got {json_text!r:.80}: {e}") from None
        if not isinstance(fields, dict) or not isinstance(fields.get("path"), str):
            raise ValueError(f"an add action is a JSON object with a text 'path', got {json_text!r:.80}")
        self._json = json_text
        self._fields: dict[str, Any] = fields

    @classmethod
    def from_dict(cls, fields: Mapping[str, Any]) -> AddAction:
        """An action from the ``add`` action's fields (as :meth:`to_dict` returns them)."""
        return cls(json.dumps(dict(fields), separators=(",", ":")))

    @property
    def json(self) -> str:
        """The action as JSON text (the log's ``add`` object)."""
        return self._json

    def to_dict(self) -> dict[str, Any]:
        """The action's fields (a copy)."""
        return json.loads(self._json)

    @property
    def path(self) -> str:
        """The file's path: relative to the table root, percent-encoded as in the log (or
        an absolute URI)."""
        return self._fields["path"]

    @property
    def size(self) -> int:
        """The file's size in bytes."""
        return int(self._fields.get("size", 0))

    @property
    def partition_values(self) -> dict[str, str | None]:
        """The file's partition values by (physical) column name, as text (``None`` for a
        null); empty for an unpartitioned table. A copy."""
        return dict(self._fields.get("partitionValues") or {})

    @property
    def num_records(self) -> int | None:
        """The file's row count from its statistics, or ``None`` when it has none."""
        stats = self._fields.get("stats")
        if not stats:
            return None
        try:
            n = json.loads(stats).get("numRecords")
        except (TypeError, ValueError, AttributeError):
            return None
        return n if isinstance(n, int) else None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AddAction):
            return NotImplemented
        return self._fields == other._fields

    def __hash__(self) -> int:
        # Equal actions have equal paths; a table never holds two files at one path.
        return hash(self.path)

    def __reduce__(self) -> tuple[type[AddAction], tuple[str]]:
        return (AddAction, (self._json,))

    def __setattr__(self, name: str, value: Any) -> None:
        if hasattr(self, "_fields"):
            raise AttributeError("AddAction is read-only")
        object.__setattr__(self, name, value)

    def __repr__(self) -> str:
        return (
            f"AddAction(path={self.path!r}, size={self.size}, "
            f"partition_values={self.partition_values!r}, num_records={self.num_records})"
        )
