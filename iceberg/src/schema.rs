//! The Iceberg schema of a Delta schema: types, field ids that never change across syncs,
//! and the name mapping readers use for data files without Parquet field ids.
//!
//! Field ids: a column-mapped table's fields keep their `delta.columnMapping.id` (so
//! Parquet field ids written in `id` mode agree). Every other id (all fields of a table
//! without column mapping; list elements and map keys and values always) is assigned once
//! and read back from the previous Iceberg schema on the next sync, keyed by a path that a
//! rename cannot change in a mapped table (`#<parent id>/element`) and by the names in an
//! unmapped one (where Delta cannot rename). Ids assigned here for a mapped table start at
//! [`SYNTHETIC_BASE`] so they never meet an id Delta assigns to a future column.

use std::collections::HashMap;

use alluvium_txlog::schema::{DataType, PrimitiveType, StructField, StructType};
use serde_json::{Value, json};

use crate::error::{IcebergError, Result};

/// Where ids assigned by the sync start in a column-mapped table: above any id Delta's
/// `delta.columnMapping.maxColumnId` will plausibly reach.
pub const SYNTHETIC_BASE: i64 = 1 << 28;

/// An Iceberg primitive type, for bounds and partition values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IceType {
    /// `boolean`
    Boolean,
    /// `int` (Delta byte, short and integer)
    Int,
    /// `long`
    Long,
    /// `float`
    Float,
    /// `double`
    Double,
    /// `decimal(P, S)`
    Decimal(u8, u8),
    /// `date`
    Date,
    /// `timestamp` (no zone: Delta `timestamp_ntz`)
    Timestamp,
    /// `timestamptz` (Delta `timestamp`)
    TimestampTz,
    /// `string`
    String,
    /// `binary`
    Binary,
}

impl IceType {
    fn json(self) -> Value {
        Value::String(match self {
            IceType::Boolean => "boolean".into(),
            IceType::Int => "int".into(),
            IceType::Long => "long".into(),
            IceType::Float => "float".into(),
            IceType::Double => "double".into(),
            IceType::Decimal(p, s) => format!("decimal({p}, {s})"),
            IceType::Date => "date".into(),
            IceType::Timestamp => "timestamp".into(),
            IceType::TimestampTz => "timestamptz".into(),
            IceType::String => "string".into(),
            IceType::Binary => "binary".into(),
        })
    }

    /// The Delta primitive whose statistics and partition values encode this type's values.
    pub fn delta(self) -> PrimitiveType {
        match self {
            IceType::Boolean => PrimitiveType::Boolean,
            IceType::Int => PrimitiveType::Integer,
            IceType::Long => PrimitiveType::Long,
            IceType::Float => PrimitiveType::Float,
            IceType::Double => PrimitiveType::Double,
            IceType::Decimal(p, s) => PrimitiveType::Decimal(p, s),
            IceType::Date => PrimitiveType::Date,
            IceType::Timestamp => PrimitiveType::TimestampNtz,
            IceType::TimestampTz => PrimitiveType::Timestamp,
            IceType::String => PrimitiveType::String,
            IceType::Binary => PrimitiveType::Binary,
        }
    }
}

/// A primitive column reachable through structs only (so Delta keeps statistics for it).
#[derive(Debug, Clone, PartialEq)]
pub struct Leaf {
    /// The Iceberg field id.
    pub id: i64,
    /// The physical names from the root (the keys of Delta's statistics).
    pub physical_path: Vec<String>,
    /// The type.
    pub ty: IceType,
}

/// A top-level field.
#[derive(Debug, Clone, PartialEq)]
pub struct TopField {
    /// The logical name.
    pub name: String,
    /// The name in data files and in Delta's `partitionValues` (the column-mapping physical
    /// name in a mapped table).
    pub physical_name: String,
    /// The Iceberg field id.
    pub id: i64,
    /// The type, for primitives.
    pub ty: Option<IceType>,
}

/// A Delta schema converted.
#[derive(Debug, Clone)]
pub struct Converted {
    /// The Iceberg struct (`{"type":"struct","fields":[...]}`), without a schema id.
    pub struct_json: Value,
    /// `schema.name-mapping.default`.
    pub name_mapping: Value,
    /// The largest id in use.
    pub last_column_id: i64,
    /// The stats-bearing leaves.
    pub leaves: Vec<Leaf>,
    /// Top-level fields: logical name, id and, for primitives, the type.
    pub top: Vec<TopField>,
}

/// Ids known from earlier syncs, keyed as the module doc says.
#[derive(Debug, Default, Clone)]
pub struct KnownIds {
    by_key: HashMap<String, i64>,
    /// The largest id ever assigned (Iceberg's `last-column-id`).
    pub last: i64,
}

impl KnownIds {
    /// No ids known yet; ids are assigned above `last_column_id`.
    pub fn starting_after(last_column_id: i64) -> KnownIds {
        KnownIds {
            by_key: HashMap::new(),
            last: last_column_id,
        }
    }

    /// The ids of a previously written Iceberg schema (`{"type":"struct",...}`).
    pub fn from_schema(schema: &Value, mapped: bool, last_column_id: i64) -> KnownIds {
        let mut known = KnownIds {
            by_key: HashMap::new(),
            last: last_column_id,
        };
        if let Some(fields) = schema.get("fields").and_then(Value::as_array) {
            known.walk_fields(fields, "", mapped);
        }
        known
    }

    fn walk_fields(&mut self, fields: &[Value], parent_key: &str, mapped: bool) {
        for f in fields {
            let (Some(name), Some(id)) = (
                f.get("name").and_then(Value::as_str),
                f.get("id").and_then(Value::as_i64),
            ) else {
                continue;
            };
            let key = format!("{parent_key}/{name}");
            self.by_key.insert(key.clone(), id);
            if let Some(t) = f.get("type") {
                self.walk_type(t, &child_key(&key, id, mapped), mapped);
            }
        }
    }

    fn walk_type(&mut self, t: &Value, key: &str, mapped: bool) {
        match t.get("type").and_then(Value::as_str) {
            Some("struct") => {
                if let Some(fields) = t.get("fields").and_then(Value::as_array) {
                    self.walk_fields(fields, key, mapped);
                }
            }
            Some("list") => self.walk_child(t, key, "element", "element-id", "element", mapped),
            Some("map") => {
                self.walk_child(t, key, "key", "key-id", "key", mapped);
                self.walk_child(t, key, "value", "value-id", "value", mapped);
            }
            _ => {}
        }
    }

    fn walk_child(
        &mut self,
        t: &Value,
        key: &str,
        seg: &str,
        id_attr: &str,
        ty_attr: &str,
        mapped: bool,
    ) {
        if let Some(id) = t.get(id_attr).and_then(Value::as_i64) {
            let k = format!("{key}/{seg}");
            self.by_key.insert(k.clone(), id);
            if let Some(inner) = t.get(ty_attr) {
                self.walk_type(inner, &child_key(&k, id, mapped), mapped);
            }
        }
    }
}

/// The key prefix for a node's children: by id in a mapped table (renames keep it), by the
/// node's own key otherwise.
fn child_key(key: &str, id: i64, mapped: bool) -> String {
    if mapped {
        format!("#{id}")
    } else {
        key.to_string()
    }
}

struct Converter<'a> {
    known: &'a KnownIds,
    mapped: bool,
    next: i64,
    last: i64,
    leaves: Vec<Leaf>,
}

impl Converter<'_> {
    /// The id for `key`, reusing a known one, else assigning the next.
    fn id_for(&mut self, key: &str, delta_id: Option<i64>) -> i64 {
        let id = match delta_id {
            Some(id) if self.mapped => id,
            _ => match self.known.by_key.get(key) {
                Some(id) => *id,
                None => {
                    self.next += 1;
                    self.next
                }
            },
        };
        self.last = self.last.max(id);
        id
    }

    fn fields(
        &mut self,
        fields: &[StructField],
        parent_key: &str,
        physical: &[String],
        stats_path: bool,
    ) -> Result<(Vec<Value>, Vec<Value>, Vec<TopField>)> {
        let mut out = Vec::with_capacity(fields.len());
        let mut mapping = Vec::with_capacity(fields.len());
        let mut top = Vec::new();
        for f in fields {
            let key = format!("{parent_key}/{}", f.name);
            let id = self.id_for(&key, f.column_id());
            let phys_name = if self.mapped {
                f.physical_name().unwrap_or(&f.name).to_string()
            } else {
                f.name.clone()
            };
            let mut path = physical.to_vec();
            path.push(phys_name.clone());
            let (ty, nested_mapping) = self.data_type(
                &f.data_type,
                &f.name,
                &child_key(&key, id, self.mapped),
                &path,
                stats_path,
                id,
            )?;
            top.push(TopField {
                name: f.name.clone(),
                physical_name: phys_name.clone(),
                id,
                ty: prim(&f.data_type, &f.name).ok().flatten(),
            });
            out.push(json!({"id": id, "name": f.name, "required": !f.nullable, "type": ty}));
            let mut m = json!({"field-id": id, "names": [phys_name]});
            if let Some(nested) = nested_mapping {
                m["fields"] = Value::Array(nested);
            }
            mapping.push(m);
        }
        Ok((out, mapping, top))
    }

    #[allow(clippy::too_many_arguments)]
    fn data_type(
        &mut self,
        t: &DataType,
        column: &str,
        key: &str,
        physical: &[String],
        stats_path: bool,
        id: i64,
    ) -> Result<(Value, Option<Vec<Value>>)> {
        Ok(match t {
            DataType::Primitive(_) | DataType::Geospatial(_) => {
                let ty = prim(t, column)?.ok_or_else(|| unsupported(column, t))?;
                if stats_path {
                    self.leaves.push(Leaf {
                        id,
                        physical_path: physical.to_vec(),
                        ty,
                    });
                }
                (ty.json(), None)
            }
            DataType::Struct(s) => {
                let (fields, mapping, _) = self.fields(&s.fields, key, physical, stats_path)?;
                (json!({"type": "struct", "fields": fields}), Some(mapping))
            }
            DataType::Array(a) => {
                let ekey = format!("{key}/element");
                let eid = self.id_for(&ekey, None);
                let (ety, emap) = self.data_type(
                    &a.element_type,
                    column,
                    &child_key(&ekey, eid, self.mapped),
                    physical,
                    false,
                    eid,
                )?;
                let mut em = json!({"field-id": eid, "names": ["element", "item"]});
                if let Some(n) = emap {
                    em["fields"] = Value::Array(n);
                }
                (
                    json!({"type": "list", "element-id": eid, "element-required": !a.contains_null, "element": ety}),
                    Some(vec![em]),
                )
            }
            DataType::Map(m) => {
                let kkey = format!("{key}/key");
                let kid = self.id_for(&kkey, None);
                let vkey = format!("{key}/value");
                let vid = self.id_for(&vkey, None);
                let (kty, kmap) = self.data_type(
                    &m.key_type,
                    column,
                    &child_key(&kkey, kid, self.mapped),
                    physical,
                    false,
                    kid,
                )?;
                let (vty, vmap) = self.data_type(
                    &m.value_type,
                    column,
                    &child_key(&vkey, vid, self.mapped),
                    physical,
                    false,
                    vid,
                )?;
                let mut km = json!({"field-id": kid, "names": ["key"]});
                if let Some(n) = kmap {
                    km["fields"] = Value::Array(n);
                }
                let mut vm = json!({"field-id": vid, "names": ["value"]});
                if let Some(n) = vmap {
                    vm["fields"] = Value::Array(n);
                }
                (
                    json!({"type": "map", "key-id": kid, "key": kty, "value-id": vid,
                           "value-required": !m.value_contains_null, "value": vty}),
                    Some(vec![km, vm]),
                )
            }
        })
    }
}

fn unsupported(column: &str, t: &DataType) -> IcebergError {
    IcebergError::UnsupportedType {
        column: column.to_string(),
        delta_type: t.to_string(),
    }
}

/// The Iceberg primitive of a Delta primitive; `Ok(None)` for nested types; an error for
/// types Iceberg v2 cannot hold.
fn prim(t: &DataType, column: &str) -> Result<Option<IceType>> {
    let DataType::Primitive(p) = t else {
        return match t {
            DataType::Geospatial(_) => Err(unsupported(column, t)),
            _ => Ok(None),
        };
    };
    Ok(Some(match p {
        PrimitiveType::Boolean => IceType::Boolean,
        PrimitiveType::Byte | PrimitiveType::Short | PrimitiveType::Integer => IceType::Int,
        PrimitiveType::Long => IceType::Long,
        PrimitiveType::Float => IceType::Float,
        PrimitiveType::Double => IceType::Double,
        PrimitiveType::Decimal(p, s) => IceType::Decimal(*p, *s),
        PrimitiveType::Date => IceType::Date,
        PrimitiveType::Timestamp => IceType::TimestampTz,
        PrimitiveType::TimestampNtz => IceType::Timestamp,
        PrimitiveType::String => IceType::String,
        PrimitiveType::Binary => IceType::Binary,
        PrimitiveType::Void | PrimitiveType::Variant => return Err(unsupported(column, t)),
    }))
}

/// Converts `schema`, reusing `known` ids. `mapped`: the table uses column mapping.
///
/// # Errors
/// [`IcebergError::UnsupportedType`] naming the first column of a type Iceberg v2 cannot
/// hold (variant, geometry and geography, void).
pub fn convert(schema: &StructType, mapped: bool, known: &KnownIds) -> Result<Converted> {
    let start = if mapped {
        known.last.max(SYNTHETIC_BASE - 1)
    } else {
        known.last
    };
    let mut c = Converter {
        known,
        mapped,
        next: start,
        last: known.last,
        leaves: Vec::new(),
    };
    let (fields, mapping, top) = c.fields(&schema.fields, "", &[], true)?;
    // Iceberg field ids are ints; a column-mapping id beyond them cannot be mirrored.
    if c.last > i64::from(i32::MAX) || c.leaves.iter().any(|l| l.id < 0) {
        return Err(IcebergError::CorruptMetadata {
            file: "_delta_log".into(),
            reason: format!(
                "a column id ({}) is outside Iceberg's field ids (0 to {})",
                c.last,
                i32::MAX
            ),
        });
    }
    Ok(Converted {
        struct_json: json!({"type": "struct", "fields": fields}),
        name_mapping: Value::Array(mapping),
        last_column_id: c.last,
        leaves: c.leaves,
        top,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use alluvium_txlog::schema::{ArrayType, StructField};

    fn schema(json: &str) -> StructType {
        StructType::from_json(json).unwrap()
    }

    #[test]
    fn ids_are_assigned_once_and_kept_across_syncs() {
        let v1 = schema(
            r#"{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},
               {"name":"tags","type":{"type":"array","elementType":"string","containsNull":true},"nullable":true,"metadata":{}}]}"#,
        );
        let a = convert(&v1, false, &KnownIds::default()).unwrap();
        assert_eq!(a.struct_json["fields"][0]["id"], 1);
        assert_eq!(a.struct_json["fields"][1]["type"]["element-id"], 3);
        assert_eq!(a.last_column_id, 3);
        // A column added in front: the old columns keep their ids, the new one gets 4.
        let mut v2 = v1.clone();
        v2.fields.insert(
            0,
            StructField::new("x", DataType::Primitive(PrimitiveType::String), true),
        );
        let known = KnownIds::from_schema(&a.struct_json, false, a.last_column_id);
        let b = convert(&v2, false, &known).unwrap();
        let ids: Vec<i64> = b.struct_json["fields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["id"].as_i64().unwrap())
            .collect();
        assert_eq!(ids, vec![4, 1, 2]);
        assert_eq!(b.struct_json["fields"][2]["type"]["element-id"], 3);
        assert_eq!(b.last_column_id, 4);
        assert_eq!(b.name_mapping[0], json!({"field-id": 4, "names": ["x"]}));
    }

    #[test]
    fn mapped_tables_keep_delta_ids_and_physical_names() {
        let s = schema(
            r#"{"type":"struct","fields":[{"name":"a","type":"long","nullable":false,
                "metadata":{"delta.columnMapping.id":7,"delta.columnMapping.physicalName":"col-abc"}}]}"#,
        );
        let c = convert(&s, true, &KnownIds::default()).unwrap();
        assert_eq!(c.struct_json["fields"][0]["id"], 7);
        assert_eq!(c.struct_json["fields"][0]["required"], true);
        assert_eq!(c.name_mapping[0]["names"][0], "col-abc");
        assert_eq!(c.leaves[0].physical_path, vec!["col-abc".to_string()]);
    }

    #[test]
    fn types_iceberg_cannot_hold_name_the_column() {
        let s = StructType::new(vec![StructField::new(
            "v",
            DataType::Array(Box::new(ArrayType {
                element_type: DataType::Primitive(PrimitiveType::Variant),
                contains_null: true,
            })),
            true,
        )]);
        let e = convert(&s, false, &KnownIds::default()).unwrap_err();
        assert!(e.to_string().contains("`v`"), "{e}");
    }
}
