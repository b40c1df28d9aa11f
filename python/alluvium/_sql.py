"""Python values and deltalake's filter lists as alluvium's SQL-style predicate text.

deltalake takes filters in disjunctive normal form: a list of ``(column, op, value)``
tuples (all must hold), or a list of such lists (any may hold), with ``op`` one of
``=``, ``!=``, ``<``, ``<=``, ``>``, ``>=``, ``in``, ``not in``. They become one predicate
in the language of ``--filter`` (the engine then prunes files with it and filters rows).
Dates and datetimes are written as quoted text, which the engine reads by the type of the
column they meet.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import math
from collections.abc import Sequence
from typing import Any, Union

FilterLiteral = tuple[str, str, Any]
FilterConjunction = list[FilterLiteral]
FilterType = Union[FilterConjunction, list[FilterConjunction]]

_OPS = {"=": "=", "==": "=", "!=": "!=", "<>": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


def quote_name(name: str) -> str:
    """A column name as the language writes it, back-quoted;
    a dotted path stays a path."""
    parts = name.split(".")
    # Always back-quoted: a name may be a keyword or a function (`current_date`).
    return ".".join("`" + p.replace("`", "``") + "`" for p in parts)


def literal(value: Any) -> str:
    """The SQL text of a Python value."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{value} cannot be written as a SQL literal")
        return repr(value)
    if isinstance(value, decimal.Decimal):
        if not value.is_finite():
            raise ValueError(f"{value} cannot be written as a SQL literal")
        return str(value)
    if isinstance(value, _dt.datetime):
        return "'" + value.isoformat(" ") + "'"
    if isinstance(value, _dt.date):
        return "'" + value.isoformat() + "'"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    raise TypeError(f"cannot use a {type(value).__name__} in a filter")


def _term(t: Sequence[Any]) -> str:
    if len(t) != 3:
        raise ValueError(f"a filter is (column, op, value), got {t!r}")
    column, op, value = t
    col = quote_name(str(column))
    op = str(op).strip().lower()
    if op in ("in", "not in"):
        if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
            raise ValueError(f"'{op}' takes a list of values, got {value!r}")
        values = list(value)
        if not values:
            return "FALSE" if op == "in" else "TRUE"
        listed = ", ".join(literal(v) for v in values)
        return f"{col} {'NOT IN' if op == 'not in' else 'IN'} ({listed})"
    if op not in _OPS:
        raise ValueError(f"unknown filter operator {op!r} (expected =, !=, <, <=, >, >=, in, not in)")
    if value is None:
        if op in ("=", "=="):
            return f"{col} IS NULL"
        if op in ("!=", "<>"):
            return f"{col} IS NOT NULL"
    return f"{col} {_OPS[op]} {literal(value)}"


def dnf_to_sql(filters: Any) -> str | None:
    """The predicate of deltalake-style ``filters`` (``None`` for none); a string is taken
    as predicate text already."""
    if filters is None:
        return None
    if isinstance(filters, str):
        return filters
    if not isinstance(filters, Sequence) or not filters:
        raise ValueError(f"filters must be a list of (column, op, value) tuples, got {filters!r}")
    if all(isinstance(t, tuple) for t in filters):
        return " AND ".join(_term(t) for t in filters)
    disjuncts = []
    for conj in filters:
        if not isinstance(conj, Sequence) or not all(isinstance(t, tuple) for t in conj):
            raise ValueError(f"filters in DNF are lists of (column, op, value) tuples, got {conj!r}")
        disjuncts.append("(" + " AND ".join(_term(t) for t in conj) + ")")
    return " OR ".join(disjuncts)


def conjoin(*predicates: str | None) -> str | None:
    """The conjunction of the given predicates (``None`` when there are none)."""
    present = [p for p in predicates if p]
    if not present:
        return None
    if len(present) == 1:
        return present[0]
    return " AND ".join(f"({p})" for p in present)


def timestamp_ms(value: Any) -> int:
    """Milliseconds since the epoch of a datetime (naive: UTC) or ISO 8601 / RFC 3339 text."""
    if isinstance(value, str):
        text = value.strip()
        if text.endswith("Z"):
            text = text[:-1] + "+00:00"
        value = _dt.datetime.fromisoformat(text)
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=_dt.timezone.utc)
        epoch = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
        return (value - epoch) // _dt.timedelta(milliseconds=1)
    if isinstance(value, _dt.date):
        return timestamp_ms(_dt.datetime(value.year, value.month, value.day))
    raise TypeError(f"expected a datetime or ISO 8601 text, got {type(value).__name__}")
