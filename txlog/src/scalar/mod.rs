//! Typed single values: partition values, statistics bounds and expression literals, and
//! (in [`text`]) the text forms of dates, timestamps and decimals they are written in.

pub mod text;

use std::cmp::Ordering;
use std::sync::Arc;

use arrow_array::builder::GenericByteViewBuilder;
use arrow_array::types::{BinaryViewType, ByteViewType, StringViewType};
use arrow_array::{
    ArrayRef, BinaryArray, BooleanArray, Date32Array, Decimal128Array, Float32Array, Float64Array,
    GenericByteViewArray, Int8Array, Int16Array, Int32Array, Int64Array, NullArray, StringArray,
    TimestampMicrosecondArray, new_null_array,
};
use arrow_schema::DataType as ArrowType;

use crate::schema::PrimitiveType;
use crate::{LogError, Result};

/// `len` copies of `value` as a string or binary view array: one view repeated, so a
/// value too long to be inline (over 12 bytes) is stored once, not `len` times.
pub fn repeated_view<T: ByteViewType + ?Sized>(
    value: &T::Native,
    len: usize,
) -> GenericByteViewArray<T> {
    let mut one = GenericByteViewBuilder::<T>::with_capacity(1);
    if len == 0 {
        return one.finish();
    }
    one.append_value(value);
    let one = one.finish();
    let view = one.views()[0];
    let buffers = one.data_buffers().clone();
    let views = arrow_buffer::ScalarBuffer::from(vec![view; len]);
    // `new` would validate every view again (for strings: UTF-8 of each value, the
    // largest cost of a change-feed read of inserts). SAFETY: every view is a copy of the
    // one view of `one`, which the builder validated, over the same buffers, without nulls.
    unsafe { GenericByteViewArray::new_unchecked(views, buffers, None) }
}

/// A single typed value.
#[derive(Debug, Clone, PartialEq)]
pub enum Scalar {
    /// SQL NULL.
    Null,
    /// `boolean`
    Boolean(bool),
    /// `byte`
    Byte(i8),
    /// `short`
    Short(i16),
    /// `integer`
    Integer(i32),
    /// `long`
    Long(i64),
    /// `float`
    Float(f32),
    /// `double`
    Double(f64),
    /// `string`
    String(String),
    /// `binary`
    Binary(Vec<u8>),
    /// `date`: days since the epoch.
    Date(i32),
    /// `timestamp`: microseconds since the epoch (UTC).
    Timestamp(i64),
    /// `timestamp_ntz`: microseconds since the epoch, wall clock.
    TimestampNtz(i64),
    /// `decimal(p,s)`: unscaled value.
    Decimal {
        /// The unscaled value.
        value: i128,
        /// Precision.
        precision: u8,
        /// Scale.
        scale: u8,
    },
}

impl Scalar {
    /// True for NULL.
    pub fn is_null(&self) -> bool {
        matches!(self, Scalar::Null)
    }

    /// A numeric view used to compare values of different numeric types (and decimal
    /// statistics, which JSON carries as binary floating point).
    pub fn as_f64(&self) -> Option<f64> {
        Some(match self {
            Scalar::Byte(v) => f64::from(*v),
            Scalar::Short(v) => f64::from(*v),
            Scalar::Integer(v) => f64::from(*v),
            Scalar::Long(v) => *v as f64,
            Scalar::Float(v) => f64::from(*v),
            Scalar::Double(v) => *v,
            Scalar::Decimal { value, scale, .. } => *value as f64 / 10f64.powi(i32::from(*scale)),
            _ => return None,
        })
    }

    /// The value of an integer scalar (byte, short, integer, long): the kinds
    /// [`compare`](Self::compare) compares exactly as integers.
    pub fn as_i128(&self) -> Option<i128> {
        Some(match self {
            Scalar::Byte(v) => i128::from(*v),
            Scalar::Short(v) => i128::from(*v),
            Scalar::Integer(v) => i128::from(*v),
            Scalar::Long(v) => i128::from(*v),
            _ => return None,
        })
    }

    /// Compares two non-null values of compatible types. `None` if they are not comparable
    /// (different kinds, NaN, NULL).
    pub fn compare(&self, other: &Scalar) -> Option<Ordering> {
        use Scalar::*;
        match (self, other) {
            (Null, _) | (_, Null) => None,
            (Boolean(a), Boolean(b)) => Some(a.cmp(b)),
            (String(a), String(b)) => Some(a.as_bytes().cmp(b.as_bytes())),
            (Binary(a), Binary(b)) => Some(a.cmp(b)),
            (Date(a), Date(b)) => Some(a.cmp(b)),
            (Timestamp(a), Timestamp(b)) | (TimestampNtz(a), TimestampNtz(b)) => Some(a.cmp(b)),
            (
                Decimal {
                    value: a,
                    scale: sa,
                    ..
                },
                Decimal {
                    value: b,
                    scale: sb,
                    ..
                },
            ) => {
                let (a, b) = align_decimals(*a, *sa, *b, *sb)?;
                Some(a.cmp(&b))
            }
            _ => {
                if let (Some(a), Some(b)) = (self.as_i128(), other.as_i128()) {
                    return Some(a.cmp(&b));
                }
                let (a, b) = (self.as_f64()?, other.as_f64()?);
                a.partial_cmp(&b)
            }
        }
    }

    /// An Arrow array of `len` copies of this value, of type `ty`.
    ///
    /// # Errors
    /// [`LogError::Invalid`] if the value does not fit the type.
    pub fn to_array(&self, ty: &ArrowType, len: usize) -> Result<ArrayRef> {
        let mismatch = || LogError::Invalid(format!("value {self:?} does not fit Arrow type {ty}"));
        Ok(match (self, ty) {
            (Scalar::Null, ArrowType::Null) => Arc::new(NullArray::new(len)),
            (Scalar::Null, t) => new_null_array(t, len),
            (Scalar::Boolean(v), ArrowType::Boolean) => Arc::new(BooleanArray::from(vec![*v; len])),
            (Scalar::Byte(v), ArrowType::Int8) => Arc::new(Int8Array::from_value(*v, len)),
            (Scalar::Short(v), ArrowType::Int16) => Arc::new(Int16Array::from_value(*v, len)),
            (Scalar::Integer(v), ArrowType::Int32) => Arc::new(Int32Array::from_value(*v, len)),
            (Scalar::Long(v), ArrowType::Int64) => Arc::new(Int64Array::from_value(*v, len)),
            (Scalar::Float(v), ArrowType::Float32) => Arc::new(Float32Array::from_value(*v, len)),
            (Scalar::Double(v), ArrowType::Float64) => Arc::new(Float64Array::from_value(*v, len)),
            (Scalar::String(v), ArrowType::Utf8) => {
                Arc::new(StringArray::from_iter_values(std::iter::repeat_n(v, len)))
            }
            (Scalar::String(v), ArrowType::Utf8View) => {
                Arc::new(repeated_view::<StringViewType>(v.as_str(), len))
            }
            (Scalar::Binary(v), ArrowType::Binary) => Arc::new(BinaryArray::from_iter_values(
                std::iter::repeat_n(v.as_slice(), len),
            )),
            (Scalar::Binary(v), ArrowType::BinaryView) => {
                Arc::new(repeated_view::<BinaryViewType>(v.as_slice(), len))
            }
            (Scalar::Date(v), ArrowType::Date32) => Arc::new(Date32Array::from_value(*v, len)),
            (Scalar::Timestamp(v) | Scalar::TimestampNtz(v), ArrowType::Timestamp(_, tz)) => {
                Arc::new(
                    TimestampMicrosecondArray::from_value(*v, len).with_timezone_opt(tz.clone()),
                )
            }
            (Scalar::Decimal { value, .. }, ArrowType::Decimal128(p, s)) => Arc::new(
                Decimal128Array::from_value(*value, len)
                    .with_precision_and_scale(*p, *s)
                    .map_err(|_| mismatch())?,
            ),
            _ => return Err(mismatch()),
        })
    }

    /// The Delta type of a non-null value.
    pub fn primitive_type(&self) -> Option<PrimitiveType> {
        Some(match self {
            Scalar::Null => return None,
            Scalar::Boolean(_) => PrimitiveType::Boolean,
            Scalar::Byte(_) => PrimitiveType::Byte,
            Scalar::Short(_) => PrimitiveType::Short,
            Scalar::Integer(_) => PrimitiveType::Integer,
            Scalar::Long(_) => PrimitiveType::Long,
            Scalar::Float(_) => PrimitiveType::Float,
            Scalar::Double(_) => PrimitiveType::Double,
            Scalar::String(_) => PrimitiveType::String,
            Scalar::Binary(_) => PrimitiveType::Binary,
            Scalar::Date(_) => PrimitiveType::Date,
            Scalar::Timestamp(_) => PrimitiveType::Timestamp,
            Scalar::TimestampNtz(_) => PrimitiveType::TimestampNtz,
            Scalar::Decimal {
                precision, scale, ..
            } => PrimitiveType::Decimal(*precision, *scale),
        })
    }
}

/// The value at `row` of a primitive Arrow array of Delta type `ty` (NULL for nulls).
///
/// # Errors
/// [`LogError::Invalid`] if the array's type does not represent `ty`.
pub fn scalar_at(array: &dyn arrow_array::Array, row: usize, ty: PrimitiveType) -> Result<Scalar> {
    use arrow_array::cast::AsArray;
    use arrow_array::types::*;
    if array.is_null(row) {
        return Ok(Scalar::Null);
    }
    let bad = || {
        LogError::Invalid(format!(
            "Arrow type {} does not hold {} values",
            array.data_type(),
            ty.name()
        ))
    };
    Ok(match (ty, array.data_type()) {
        (PrimitiveType::Boolean, ArrowType::Boolean) => {
            Scalar::Boolean(array.as_boolean().value(row))
        }
        (PrimitiveType::Byte, ArrowType::Int8) => {
            Scalar::Byte(array.as_primitive::<Int8Type>().value(row))
        }
        (PrimitiveType::Short, ArrowType::Int16) => {
            Scalar::Short(array.as_primitive::<Int16Type>().value(row))
        }
        (PrimitiveType::Integer, ArrowType::Int32) => {
            Scalar::Integer(array.as_primitive::<Int32Type>().value(row))
        }
        (PrimitiveType::Long, ArrowType::Int64) => {
            Scalar::Long(array.as_primitive::<Int64Type>().value(row))
        }
        (PrimitiveType::Float, ArrowType::Float32) => {
            Scalar::Float(array.as_primitive::<Float32Type>().value(row))
        }
        (PrimitiveType::Double, ArrowType::Float64) => {
            Scalar::Double(array.as_primitive::<Float64Type>().value(row))
        }
        (PrimitiveType::String, ArrowType::Utf8) => {
            Scalar::String(array.as_string::<i32>().value(row).to_string())
        }
        (PrimitiveType::String, ArrowType::LargeUtf8) => {
            Scalar::String(array.as_string::<i64>().value(row).to_string())
        }
        (PrimitiveType::String, ArrowType::Utf8View) => {
            Scalar::String(array.as_string_view().value(row).to_string())
        }
        (PrimitiveType::Binary, ArrowType::Binary) => {
            Scalar::Binary(array.as_binary::<i32>().value(row).to_vec())
        }
        (PrimitiveType::Binary, ArrowType::LargeBinary) => {
            Scalar::Binary(array.as_binary::<i64>().value(row).to_vec())
        }
        (PrimitiveType::Date, ArrowType::Date32) => {
            Scalar::Date(array.as_primitive::<Date32Type>().value(row))
        }
        (
            PrimitiveType::Timestamp,
            ArrowType::Timestamp(arrow_schema::TimeUnit::Microsecond, _),
        ) => Scalar::Timestamp(array.as_primitive::<TimestampMicrosecondType>().value(row)),
        (
            PrimitiveType::TimestampNtz,
            ArrowType::Timestamp(arrow_schema::TimeUnit::Microsecond, _),
        ) => Scalar::TimestampNtz(array.as_primitive::<TimestampMicrosecondType>().value(row)),
        (PrimitiveType::Decimal(p, s), ArrowType::Decimal128(_, _)) => Scalar::Decimal {
            value: array.as_primitive::<Decimal128Type>().value(row),
            precision: p,
            scale: s,
        },
        _ => return Err(bad()),
    })
}

/// An Arrow array of `values` (each of the type `ty` describes, or NULL).
///
/// # Errors
/// [`LogError::Invalid`] if a value does not fit `ty`.
pub fn scalars_to_array(values: &[Scalar], ty: &ArrowType) -> Result<ArrayRef> {
    use arrow_array::builder::*;
    let mismatch =
        |v: &Scalar| LogError::Invalid(format!("value {v:?} does not fit Arrow type {ty}"));
    macro_rules! build {
        ($builder:expr, $pat:pat => $val:expr) => {{
            let mut b = $builder;
            for v in values {
                match v {
                    Scalar::Null => b.append_null(),
                    $pat => b.append_value($val),
                    other => return Err(mismatch(other)),
                }
            }
            Arc::new(b.finish()) as ArrayRef
        }};
    }
    Ok(match ty {
        ArrowType::Null => Arc::new(NullArray::new(values.len())),
        ArrowType::Boolean => build!(BooleanBuilder::new(), Scalar::Boolean(x) => *x),
        ArrowType::Int8 => build!(Int8Builder::new(), Scalar::Byte(x) => *x),
        ArrowType::Int16 => build!(Int16Builder::new(), Scalar::Short(x) => *x),
        ArrowType::Int32 => build!(Int32Builder::new(), Scalar::Integer(x) => *x),
        ArrowType::Int64 => build!(Int64Builder::new(), Scalar::Long(x) => *x),
        ArrowType::Float32 => build!(Float32Builder::new(), Scalar::Float(x) => *x),
        ArrowType::Float64 => build!(Float64Builder::new(), Scalar::Double(x) => *x),
        ArrowType::Utf8 => build!(StringBuilder::new(), Scalar::String(x) => x),
        ArrowType::Binary => build!(BinaryBuilder::new(), Scalar::Binary(x) => x),
        ArrowType::Date32 => build!(Date32Builder::new(), Scalar::Date(x) => *x),
        ArrowType::Timestamp(arrow_schema::TimeUnit::Microsecond, tz) => {
            let mut b = TimestampMicrosecondBuilder::new().with_timezone_opt(tz.clone());
            for v in values {
                match v {
                    Scalar::Null => b.append_null(),
                    Scalar::Timestamp(x) | Scalar::TimestampNtz(x) => b.append_value(*x),
                    other => return Err(mismatch(other)),
                }
            }
            Arc::new(b.finish())
        }
        ArrowType::Decimal128(p, s) => {
            let mut b = Decimal128Builder::new()
                .with_precision_and_scale(*p, *s)
                .map_err(|e| LogError::Invalid(e.to_string()))?;
            for v in values {
                match v {
                    Scalar::Null => b.append_null(),
                    Scalar::Decimal { value, .. } => b.append_value(*value),
                    other => return Err(mismatch(other)),
                }
            }
            Arc::new(b.finish())
        }
        other => {
            return Err(LogError::Invalid(format!(
                "no scalar column of Arrow type {other}"
            )));
        }
    })
}

/// Brings two unscaled decimals to a common scale (`None` on overflow).
fn align_decimals(a: i128, sa: u8, b: i128, sb: u8) -> Option<(i128, i128)> {
    match sa.cmp(&sb) {
        Ordering::Equal => Some((a, b)),
        Ordering::Less => Some((a.checked_mul(10i128.checked_pow(u32::from(sb - sa))?)?, b)),
        Ordering::Greater => Some((a, b.checked_mul(10i128.checked_pow(u32::from(sa - sb))?)?)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn view_arrays_repeat_one_value_stored_once() {
        use arrow_array::Array;
        use arrow_array::cast::AsArray;
        let long = "a partition value longer than twelve bytes";
        for (value, buffers) in [("short", 0), (long, 1)] {
            let a = Scalar::String(value.into())
                .to_array(&ArrowType::Utf8View, 1000)
                .unwrap();
            let a = a.as_string_view();
            assert_eq!(a.len(), 1000);
            assert!(a.iter().all(|v| v == Some(value)));
            assert_eq!(a.data_buffers().len(), buffers);
            let stored: usize = a.data_buffers().iter().map(|b| b.len()).sum();
            assert!(stored <= long.len(), "{stored}");
        }
        let b = Scalar::Binary(long.as_bytes().to_vec())
            .to_array(&ArrowType::BinaryView, 3)
            .unwrap();
        assert!(
            b.as_binary_view()
                .iter()
                .all(|v| v == Some(long.as_bytes()))
        );
        assert_eq!(repeated_view::<StringViewType>("x", 0).len(), 0);
    }

    #[test]
    fn comparisons() {
        assert_eq!(
            Scalar::Integer(3).compare(&Scalar::Long(4)),
            Some(Ordering::Less)
        );
        assert_eq!(Scalar::Double(f64::NAN).compare(&Scalar::Double(1.0)), None);
        let d = |v, s| Scalar::Decimal {
            value: v,
            precision: 10,
            scale: s,
        };
        assert_eq!(d(120, 2).compare(&d(12, 1)), Some(Ordering::Equal));
        assert_eq!(
            d(120, 2).compare(&Scalar::Double(1.3)),
            Some(Ordering::Less)
        );
        assert_eq!(
            Scalar::String("b".into()).compare(&Scalar::String("ab".into())),
            Some(Ordering::Greater)
        );
        assert_eq!(Scalar::Null.compare(&Scalar::Null), None);
        assert_eq!(Scalar::String("a".into()).compare(&Scalar::Long(1)), None);
    }

    #[test]
    fn arrays() {
        let a = Scalar::Decimal {
            value: 123,
            precision: 5,
            scale: 2,
        }
        .to_array(&ArrowType::Decimal128(5, 2), 3)
        .unwrap();
        assert_eq!(a.len(), 3);
        assert!(Scalar::Long(1).to_array(&ArrowType::Utf8, 1).is_err());
        assert_eq!(
            Scalar::Null
                .to_array(&ArrowType::Utf8, 2)
                .unwrap()
                .null_count(),
            2
        );
    }
}
