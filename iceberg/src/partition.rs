//! Identity partition specs from Delta's partition columns, and partition values as Iceberg
//! manifests hold them.
//!
//! Delta data files do not contain their partition columns; Iceberg readers take an identity
//! partition's value from the manifest's partition tuple instead, so the values written here
//! are what readers see in those columns.

use alluvium_txlog::partition::parse_partition_value;
use alluvium_txlog::scalar::Scalar;
use serde_json::{Value, json};

use crate::avro::Datum;
use crate::bounds::decimal_bytes;
use crate::schema::IceType;

/// Partition field ids start here (Iceberg's convention; readers mistake a partition field
/// for a column when the two ids meet).
pub const FIRST_PARTITION_FIELD_ID: i64 = 1000;

/// One identity partition field.
#[derive(Debug, Clone, PartialEq)]
pub struct PartitionField {
    /// The source column's name (also the partition field's name).
    pub name: String,
    /// The key of the column's value in Delta's `partitionValues`: the physical name in a
    /// column-mapped table.
    pub value_key: String,
    /// The source column's field id.
    pub source_id: i64,
    /// The partition field id.
    pub field_id: i64,
    /// The source column's type (identity keeps it).
    pub ty: IceType,
}

/// A partition spec.
#[derive(Debug, Clone, PartialEq)]
pub struct PartitionSpec {
    /// Its id in the table metadata.
    pub spec_id: i32,
    /// The fields, in Delta's partition column order.
    pub fields: Vec<PartitionField>,
}

impl PartitionSpec {
    /// The `fields` array of the spec's JSON.
    pub fn fields_json(&self) -> Value {
        Value::Array(
            self.fields
                .iter()
                .map(|f| json!({"name": f.name, "transform": "identity", "source-id": f.source_id, "field-id": f.field_id}))
                .collect(),
        )
    }

    /// The spec's JSON as table metadata lists it.
    pub fn json(&self) -> Value {
        json!({"spec-id": self.spec_id, "fields": self.fields_json()})
    }

    /// Whether `other` partitions the same way (ids aside).
    pub fn same_fields(&self, other: &[(i64, i64)]) -> bool {
        self.fields.len() == other.len()
            && self
                .fields
                .iter()
                .zip(other)
                .all(|(f, (source, field))| f.source_id == *source && f.field_id == *field)
    }
}

/// Minimum bytes of a decimal of precision `p` as Avro `fixed` (Iceberg's Avro mapping).
fn decimal_size(p: u8) -> usize {
    let max = 10f64.powi(i32::from(p));
    (1..=16usize)
        .find(|n| 2f64.powi(8 * *n as i32 - 1) >= max)
        .unwrap_or(16)
}

impl PartitionField {
    /// The Avro type of the field's values.
    pub fn ty_avro(&self) -> Value {
        match self.ty {
            IceType::Boolean => json!("boolean"),
            IceType::Int => json!("int"),
            IceType::Long => json!("long"),
            IceType::Float => json!("float"),
            IceType::Double => json!("double"),
            IceType::Decimal(p, s) => json!({"type": "fixed", "name": format!("decimal_{p}_{s}"),
                "size": decimal_size(p), "logicalType": "decimal", "precision": p, "scale": s}),
            IceType::Date => json!({"type": "int", "logicalType": "date"}),
            IceType::Timestamp => {
                json!({"type": "long", "logicalType": "timestamp-micros", "adjust-to-utc": false})
            }
            IceType::TimestampTz => {
                json!({"type": "long", "logicalType": "timestamp-micros", "adjust-to-utc": true})
            }
            IceType::String => json!("string"),
            IceType::Binary => json!("bytes"),
        }
    }

    /// A Delta partition value (the `partitionValues` text) as the manifest's union and its
    /// single-value binary form (`None` for null).
    ///
    /// # Errors
    /// A message if the text is not a value of the column's type.
    pub fn value(&self, text: Option<&str>) -> Result<(Datum, Option<Vec<u8>>), String> {
        let scalar =
            parse_partition_value(&self.name, text, self.ty.delta()).map_err(|e| e.to_string())?;
        let (datum, binary) = match scalar {
            Scalar::Null => return Ok((Datum::optional(None), None)),
            Scalar::Boolean(b) => (Datum::Boolean(b), vec![u8::from(b)]),
            Scalar::Byte(v) => (
                Datum::Int(i32::from(v)),
                i32::from(v).to_le_bytes().to_vec(),
            ),
            Scalar::Short(v) => (
                Datum::Int(i32::from(v)),
                i32::from(v).to_le_bytes().to_vec(),
            ),
            Scalar::Integer(v) => (Datum::Int(v), v.to_le_bytes().to_vec()),
            Scalar::Long(v) => (Datum::Long(v), v.to_le_bytes().to_vec()),
            Scalar::Float(v) => (Datum::Float(v), v.to_le_bytes().to_vec()),
            Scalar::Double(v) => (Datum::Double(v), v.to_le_bytes().to_vec()),
            Scalar::String(s) => (Datum::String(s.clone()), s.into_bytes()),
            Scalar::Binary(b) => (Datum::Bytes(b.clone()), b),
            Scalar::Date(d) => (Datum::Int(d), d.to_le_bytes().to_vec()),
            Scalar::Timestamp(t) | Scalar::TimestampNtz(t) => {
                (Datum::Long(t), t.to_le_bytes().to_vec())
            }
            Scalar::Decimal {
                value, precision, ..
            } => {
                let size = decimal_size(precision);
                let full = value.to_be_bytes();
                let fixed = full[16 - size..].to_vec();
                (
                    Datum::Fixed(fixed),
                    decimal_bytes(value).unwrap_or_default(),
                )
            }
        };
        Ok((Datum::optional(Some(datum)), Some(binary)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_sizes_follow_the_spec() {
        assert_eq!(decimal_size(1), 1);
        assert_eq!(decimal_size(2), 1);
        assert_eq!(decimal_size(3), 2);
        assert_eq!(decimal_size(9), 4);
        assert_eq!(decimal_size(18), 8);
        assert_eq!(decimal_size(38), 16);
    }

    #[test]
    fn partition_values_become_typed_unions() {
        let f = PartitionField {
            name: "d".into(),
            value_key: "d".into(),
            source_id: 1,
            field_id: 1000,
            ty: IceType::Date,
        };
        let (d, b) = f.value(Some("2021-01-02")).unwrap();
        assert_eq!(d, Datum::optional(Some(Datum::Int(18629))));
        assert_eq!(b, Some(18629i32.to_le_bytes().to_vec()));
        assert_eq!(f.value(None).unwrap(), (Datum::optional(None), None));
        assert!(f.value(Some("not a date")).is_err());
    }
}
