//! Type widening for writers (PROTOCOL.md "Type Widening", "Writer Requirements for Type
//! Widening"): which type changes a writer may apply to an existing column, and how they are
//! recorded in the schema (`delta.typeChanges`). Reading widened columns is the data-file
//! reader's business (`alluvium-datafile`, `read::widening`).

use serde_json::{Value, json};

pub use crate::properties::ENABLE_TYPE_WIDENING as ENABLE;
use crate::schema::{ColumnMetadataKey, PrimitiveType, StructField};
use crate::table::TableFeature;

/// The table feature (reader and writer; [`TableFeature::TypeWidening`]).
pub const FEATURE: &str = TableFeature::TypeWidening.as_str();

/// The preview name of the feature some tables carry instead
/// ([`TableFeature::TypeWideningPreview`]).
pub const PREVIEW_FEATURE: &str = TableFeature::TypeWideningPreview.as_str();

// [`ENABLE`] (`delta.enableTypeWidening`, re-exported from [`crate::properties`]) lets
// writers apply type changes ("Writers must reject widening type changes when this property
// isn't set to `true`").

/// The field-metadata key holding a field's history of type changes
/// ([`ColumnMetadataKey::TypeChanges`]).
pub const TYPE_CHANGES_KEY: &str = ColumnMetadataKey::TypeChanges.as_str();

/// The integer digits a value of an integral type can have, for the decimal widenings
/// (`Byte`, `Short` or `Int` -> `Decimal(10 + k1, k2)`, `Long` -> `Decimal(20 + k1, k2)`).
fn integer_digits(t: PrimitiveType) -> Option<u8> {
    match t {
        PrimitiveType::Byte | PrimitiveType::Short | PrimitiveType::Integer => Some(10),
        PrimitiveType::Long => Some(20),
        _ => None,
    }
}

fn integer_rank(t: PrimitiveType) -> Option<u8> {
    match t {
        PrimitiveType::Byte => Some(1),
        PrimitiveType::Short => Some(2),
        PrimitiveType::Integer => Some(3),
        PrimitiveType::Long => Some(4),
        _ => None,
    }
}

/// Whether changing a column from `from` to `to` is one of the protocol's supported type
/// changes: `Byte` -> `Short` -> `Int` -> `Long`; `Float` -> `Double`; `Byte`, `Short` or
/// `Int` -> `Double`; `Date` -> `Timestamp without timezone`; `Decimal(p, s)` ->
/// `Decimal(p + k1, s + k2)` with `k1 >= k2 >= 0`; `Byte`, `Short` or `Int` ->
/// `Decimal(10 + k1, k2)` and `Long` -> `Decimal(20 + k1, k2)` with `k1 >= k2 >= 0`.
/// A change to the same type is not a change and is not "supported" here.
pub fn is_supported(from: PrimitiveType, to: PrimitiveType) -> bool {
    use PrimitiveType as P;
    if from == to {
        return false;
    }
    if let (Some(a), Some(b)) = (integer_rank(from), integer_rank(to)) {
        return a < b;
    }
    match (from, to) {
        (P::Float, P::Double) => true,
        (P::Byte | P::Short | P::Integer, P::Double) => true,
        (P::Date, P::TimestampNtz) => true,
        (P::Decimal(p1, s1), P::Decimal(p2, s2)) => {
            let k1 = i16::from(p2) - i16::from(p1);
            let k2 = i16::from(s2) - i16::from(s1);
            k1 >= k2 && k2 >= 0
        }
        (int, P::Decimal(p, s)) => {
            integer_digits(int).is_some_and(|d| i16::from(p) - i16::from(d) >= i16::from(s))
        }
        _ => false,
    }
}

/// Whether Iceberg V1/V2 supports the change too (writers must refuse the others on tables
/// with IcebergCompatV1 or V2): integer widening, `Float` -> `Double`, and decimal precision
/// increases that keep the scale.
pub fn iceberg_supports(from: PrimitiveType, to: PrimitiveType) -> bool {
    use PrimitiveType as P;
    if !is_supported(from, to) {
        return false;
    }
    match (from, to) {
        (P::Decimal(_, s1), P::Decimal(_, s2)) => s1 == s2,
        (_, P::Decimal(..)) => false,
        (P::Byte | P::Short | P::Integer, P::Double) => false,
        (P::Date, P::TimestampNtz) => false,
        _ => true,
    }
}

/// Records the change of `field` (a top-level field or struct field whose own type changes)
/// from `from` to `to` in its `delta.typeChanges` list, after the changes already recorded
/// there (the writer requirement: "record type change information in the `metadata` of the
/// nearest ancestor StructField"; earlier entries are preserved).
pub fn record_change(field: &mut StructField, from: PrimitiveType, to: PrimitiveType) {
    let entry = json!({"fromType": from.name(), "toType": to.name()});
    match field.metadata.get_mut(TYPE_CHANGES_KEY) {
        Some(Value::Array(list)) => list.push(entry),
        _ => {
            field
                .metadata
                .insert(TYPE_CHANGES_KEY.into(), Value::Array(vec![entry]));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::DataType;
    use PrimitiveType as P;

    #[test]
    fn the_protocols_widenings_and_nothing_else() {
        for (from, to) in [
            (P::Byte, P::Short),
            (P::Byte, P::Long),
            (P::Short, P::Integer),
            (P::Integer, P::Long),
            (P::Float, P::Double),
            (P::Integer, P::Double),
            (P::Byte, P::Double),
            (P::Date, P::TimestampNtz),
            (P::Decimal(10, 2), P::Decimal(12, 2)),
            (P::Decimal(10, 2), P::Decimal(12, 4)),
            (P::Integer, P::Decimal(10, 0)),
            (P::Short, P::Decimal(12, 2)),
            (P::Long, P::Decimal(20, 0)),
            (P::Long, P::Decimal(25, 5)),
        ] {
            assert!(is_supported(from, to), "{from:?} -> {to:?}");
        }
        for (from, to) in [
            (P::Long, P::Integer),
            (P::Long, P::Double),
            (P::Double, P::Float),
            (P::Integer, P::Float),
            (P::Integer, P::String),
            (P::Date, P::Timestamp),
            (P::TimestampNtz, P::Date),
            (P::Decimal(10, 2), P::Decimal(11, 4)),
            (P::Decimal(10, 2), P::Decimal(10, 1)),
            (P::Integer, P::Decimal(9, 0)),
            (P::Integer, P::Decimal(11, 2)),
            (P::Long, P::Decimal(19, 0)),
            (P::Long, P::Long),
        ] {
            assert!(!is_supported(from, to), "{from:?} -> {to:?}");
        }
    }

    #[test]
    fn iceberg_allows_only_its_promotions() {
        assert!(iceberg_supports(P::Integer, P::Long));
        assert!(iceberg_supports(P::Float, P::Double));
        assert!(iceberg_supports(P::Decimal(10, 2), P::Decimal(14, 2)));
        assert!(!iceberg_supports(P::Decimal(10, 2), P::Decimal(14, 4)));
        assert!(!iceberg_supports(P::Integer, P::Double));
        assert!(!iceberg_supports(P::Date, P::TimestampNtz));
        assert!(!iceberg_supports(P::Long, P::Decimal(20, 0)));
    }

    #[test]
    fn changes_are_appended_to_the_fields_history() {
        let mut f = StructField::new("x", DataType::Primitive(P::Short), true);
        record_change(&mut f, P::Short, P::Integer);
        record_change(&mut f, P::Integer, P::Long);
        assert_eq!(
            f.metadata[TYPE_CHANGES_KEY],
            json!([
                {"fromType": "short", "toType": "integer"},
                {"fromType": "integer", "toType": "long"}
            ])
        );
    }
}
