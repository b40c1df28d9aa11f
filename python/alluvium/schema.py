"""A table's Delta schema, as deltalake presents it.

:class:`Schema` is read from the Delta schema JSON of the log; its fields' types are
:class:`PrimitiveType` (``"long"``, ``"string"``, ``"decimal(10,2)"``, ...),
:class:`StructType`, :class:`ArrayType` and :class:`MapType`. The Arrow form of a table's
schema (what a scan returns) is :meth:`Schema.to_arrow` with pyarrow, or any consumer of
``__arrow_c_schema__`` given the schema object itself.
"""

from __future__ import annotations

import json
from typing import Any, Union

__all__ = ["Schema", "Field", "PrimitiveType", "StructType", "ArrayType", "MapType", "DataType"]


class PrimitiveType:
    """A primitive Delta type, by its name in the log (``"long"``, ``"timestamp_ntz"``,
    ``"decimal(10,2)"``)."""

    def __init__(self, data_type: str) -> None:
        self.type = data_type

    def to_json(self) -> str:
        return json.dumps(self.type)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PrimitiveType) and other.type == self.type

    def __hash__(self) -> int:
        return hash(self.type)

    def __repr__(self) -> str:
        return f'PrimitiveType("{self.type}")'


class ArrayType:
    """``array<element>``."""

    def __init__(self, element_type: DataType, contains_null: bool = True) -> None:
        self.type = "array"
        self.element_type = element_type
        self.contains_null = contains_null

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, ArrayType)
            and other.element_type == self.element_type
            and other.contains_null == self.contains_null
        )

    def __repr__(self) -> str:
        return f"ArrayType({self.element_type!r}, contains_null={self.contains_null})"


class MapType:
    """``map<key, value>``."""

    def __init__(
        self, key_type: DataType, value_type: DataType, value_contains_null: bool = True
    ) -> None:
        self.type = "map"
        self.key_type = key_type
        self.value_type = value_type
        self.value_contains_null = value_contains_null

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, MapType)
            and other.key_type == self.key_type
            and other.value_type == self.value_type
            and other.value_contains_null == self.value_contains_null
        )

    def __repr__(self) -> str:
        return (
            f"MapType({self.key_type!r}, {self.value_type!r}, "
            f"value_contains_null={self.value_contains_null})"
        )


class Field:
    """A named column (or struct member): type, nullability, metadata."""

    def __init__(
        self,
        name: str,
        type: DataType,  # noqa: A002 - deltalake's parameter name
        nullable: bool = True,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        self.name = name
        self.type = type
        self.nullable = nullable
        self.metadata = dict(metadata or {})

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Field)
            and other.name == self.name
            and other.type == self.type
            and other.nullable == self.nullable
            and other.metadata == self.metadata
        )

    def __repr__(self) -> str:
        return f"Field({self.name}, {self.type!r}, nullable={self.nullable})"


class StructType:
    """``struct<fields>``."""

    def __init__(self, fields: list[Field]) -> None:
        self.type = "struct"
        self.fields = list(fields)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StructType) and other.fields == self.fields

    def __repr__(self) -> str:
        return f"StructType({self.fields!r})"


DataType = Union[PrimitiveType, StructType, ArrayType, MapType]


def _type_from_json(t: Any) -> DataType:
    if isinstance(t, str):
        return PrimitiveType(t)
    kind = t.get("type")
    if kind == "struct":
        return StructType([_field_from_json(f) for f in t.get("fields", [])])
    if kind == "array":
        return ArrayType(_type_from_json(t["elementType"]), bool(t.get("containsNull", True)))
    if kind == "map":
        return MapType(
            _type_from_json(t["keyType"]),
            _type_from_json(t["valueType"]),
            bool(t.get("valueContainsNull", True)),
        )
    # A type this module does not model (a future one) keeps its JSON as its name.
    return PrimitiveType(json.dumps(t))


def _type_to_json(t: DataType) -> Any:
    if isinstance(t, PrimitiveType):
        try:
            return json.loads(t.type)  # a type kept as its JSON
        except ValueError:
            return t.type
    if isinstance(t, ArrayType):
        return {"type": "array", "elementType": _type_to_json(t.element_type), "containsNull": t.contains_null}
    if isinstance(t, MapType):
        return {
            "type": "map",
            "keyType": _type_to_json(t.key_type),
            "valueType": _type_to_json(t.value_type),
            "valueContainsNull": t.value_contains_null,
        }
    return {
        "type": "struct",
        "fields": [
            {"name": f.name, "type": _type_to_json(f.type), "nullable": f.nullable, "metadata": f.metadata}
            for f in t.fields
        ],
    }


def _field_from_json(f: dict[str, Any]) -> Field:
    return Field(f["name"], _type_from_json(f["type"]), bool(f.get("nullable", True)), f.get("metadata"))


class Schema(StructType):
    """A table's schema: its top-level :class:`Field` objects, in order.

    ``schema.to_arrow()`` needs pyarrow; ``pyarrow.schema(schema)``, polars or arro3 read
    ``schema.__arrow_c_schema__()`` directly when the schema came from a table.
    """

    def __init__(self, fields: list[Field], _json: str | None = None, _arrow: Any = None) -> None:
        super().__init__(fields)
        self._json = _json
        self._arrow = _arrow

    @classmethod
    def from_json(cls, text: str, _arrow: Any = None) -> Schema:
        """The schema of Delta schema JSON text (the log's ``schemaString``)."""
        data = json.loads(text)
        return cls([_field_from_json(f) for f in data.get("fields", [])], text, _arrow)

    def to_json(self) -> str:
        """The Delta schema JSON text."""
        if self._json is not None:
            return self._json
        return json.dumps(_type_to_json(self), separators=(",", ":"))

    def json(self) -> dict[str, Any]:
        """The Delta schema JSON as a dict."""
        return json.loads(self.to_json())

    def __arrow_c_schema__(self) -> Any:
        if self._arrow is None:
            raise TypeError("only a schema read from a table exports its Arrow form")
        return self._arrow.__arrow_c_schema__()

    def to_arrow(self) -> Any:
        """The Arrow schema a scan returns, as a ``pyarrow.Schema`` (needs pyarrow)."""
        try:
            import pyarrow
        except ImportError as e:  # pragma: no cover - exercised in the pyarrow-free job
            raise ImportError(
                "Schema.to_arrow() needs pyarrow; without it, pass the schema to any "
                "consumer of __arrow_c_schema__ (polars, arro3, nanoarrow)"
            ) from e
        return pyarrow.schema(self)

    def __repr__(self) -> str:
        return f"Schema({self.fields!r})"
