//! Which stored types a column of a given Delta type may be read from: the same logical type
//! in any of its Arrow representations, or one of the type-widening pairs of the protocol
//! (PROTOCOL.md "Type Widening"). Everything else is refused, never converted: a general
//! cast would turn a double into a long, a long into a boolean or a timestamp, silently.

use alluvium_txlog::schema::PrimitiveType;
use arrow_schema::DataType as ArrowType;

/// Whether values stored as `stored` may be read as `want`, by representation or by one of
/// the protocol's widenings:
/// * integers: byte -> short -> integer -> long;
/// * floating point: float -> double, and byte, short, integer -> double;
/// * date -> timestamp_ntz;
/// * decimal(p, s) -> decimal(p + k1, s + k2) with k1 >= k2 >= 0;
/// * integers -> decimal(d + k1, k2) with k1 >= k2 >= 0, where d is the digits the integer
///   type can have: 3 for byte, 5 for short, 10 for integer, 20 for long. PROTOCOL.md states
///   10 for byte and short; Delta Spark widens byte to decimal(4,1) and short to
///   decimal(6,1) (the `type-widening` golden table), which lose no digit either.
///
/// A column stored with Arrow's null type holds only nulls and reads as any type; a
/// dictionary-encoded column reads as its values would.
pub(super) fn readable_as(stored: &ArrowType, want: &PrimitiveType) -> bool {
    use ArrowType as A;
    use PrimitiveType as P;
    match stored {
        A::Null => return true,
        A::Dictionary(_, values) => return readable_as(values, want),
        _ => {}
    }
    match want {
        P::String => matches!(stored, A::Utf8 | A::LargeUtf8 | A::Utf8View),
        P::Binary => matches!(
            stored,
            A::Binary | A::LargeBinary | A::BinaryView | A::FixedSizeBinary(_)
        ),
        P::Boolean => matches!(stored, A::Boolean),
        P::Byte => matches!(stored, A::Int8),
        P::Short => matches!(stored, A::Int8 | A::Int16),
        P::Integer => matches!(stored, A::Int8 | A::Int16 | A::Int32),
        P::Long => matches!(stored, A::Int8 | A::Int16 | A::Int32 | A::Int64),
        P::Float => matches!(stored, A::Float32),
        P::Double => matches!(
            stored,
            A::Float32 | A::Float64 | A::Int8 | A::Int16 | A::Int32
        ),
        P::Date => matches!(stored, A::Date32 | A::Date64),
        // Any unit, with or without the UTC flag: Parquet's INT96 (which has no flag) and
        // its millisecond, microsecond and nanosecond timestamps all store instants as
        // Spark and older writers wrote them (see `conform`).
        P::Timestamp => matches!(stored, A::Timestamp(_, _)),
        // A timestamp flagged as UTC is an instant, not a wall-clock time: not this type.
        P::TimestampNtz => matches!(stored, A::Timestamp(_, None) | A::Date32),
        P::Decimal(p, s) => match stored {
            A::Decimal32(sp, ss)
            | A::Decimal64(sp, ss)
            | A::Decimal128(sp, ss)
            | A::Decimal256(sp, ss) => {
                decimal_widens(u32::from(*sp), i32::from(*ss), u32::from(*p), i32::from(*s))
            }
            A::Int8 => integer_digits_fit(3, *p, *s),
            A::Int16 => integer_digits_fit(5, *p, *s),
            A::Int32 => integer_digits_fit(10, *p, *s),
            A::Int64 => integer_digits_fit(20, *p, *s),
            _ => false,
        },
        // Never stored: `conform` produces nulls without looking at the file.
        P::Void => true,
        // Variant columns have their own reader, which checks what the file stores.
        P::Variant => true,
    }
}

/// decimal(from_p, from_s) -> decimal(to_p, to_s) is a widening: the scale grows by k2 and
/// the precision by k1 >= k2 >= 0, so no integer digit and no fraction digit is lost.
fn decimal_widens(from_p: u32, from_s: i32, to_p: u32, to_s: i32) -> bool {
    let k1 = i64::from(to_p) - i64::from(from_p);
    let k2 = i64::from(to_s) - i64::from(from_s);
    k1 >= k2 && k2 >= 0
}

/// An integer of up to `digits` decimal digits reads as decimal(p, s) when p = digits + k1
/// and s = k2 with k1 >= k2 >= 0, i.e. when p - s >= digits.
fn integer_digits_fit(digits: u8, p: u8, s: u8) -> bool {
    u16::from(p) >= u16::from(digits) + u16::from(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_widening_keeps_every_digit() {
        assert!(decimal_widens(10, 2, 10, 2));
        assert!(decimal_widens(10, 2, 12, 4));
        assert!(decimal_widens(10, 2, 12, 2));
        assert!(!decimal_widens(10, 2, 12, 5), "integer digits lost");
        assert!(!decimal_widens(10, 2, 10, 1), "fraction digits lost");
        assert!(!decimal_widens(10, 2, 9, 2));
        assert!(integer_digits_fit(10, 10, 0));
        assert!(integer_digits_fit(10, 12, 2));
        assert!(!integer_digits_fit(10, 12, 3));
        assert!(!integer_digits_fit(20, 19, 0));
        assert!(integer_digits_fit(20, 38, 18));
        assert!(
            integer_digits_fit(3, 4, 1),
            "byte as decimal(4,1), as Delta Spark widens"
        );
        assert!(!integer_digits_fit(3, 3, 1));
    }
}
