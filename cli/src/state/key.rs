//! Keys typed on the command line (`state get STORE 42 7`, `state history STORE a=1,b=x`):
//! text parsed into a record batch of the store's key columns, one row per key.
//!
//! Grammar: with one key column, a KEY is the value itself (commas and `=` included), or
//! `col=value` when it starts with the column's name and `=`. With several key columns, a KEY
//! is `col=value` pairs separated by commas, each key column exactly once, in any order (a
//! value cannot then contain a comma). Values are parsed as the column's type by Arrow's
//! string casts (numbers, dates `YYYY-MM-DD`, timestamps in RFC 3339, booleans); a value that
//! does not parse is an error naming the column, never a null key.

use std::sync::Arc;

use alluvium::{Error, Result};
use arrow::array::{ArrayRef, StringArray};
use arrow::compute::{CastOptions, cast_with_options};
use arrow::datatypes::{FieldRef, Schema};
use arrow::record_batch::RecordBatch;
use arrow::util::display::FormatOptions;

/// The values of one KEY argument, in the order of `key_fields`.
fn split_key<'a>(text: &'a str, key_fields: &[FieldRef]) -> Result<Vec<&'a str>> {
    if let [only] = key_fields {
        let named = text
            .split_once('=')
            .filter(|(name, _)| name.trim() == only.name().as_str())
            .map(|(_, v)| v);
        return Ok(vec![named.unwrap_or(text)]);
    }
    let mut values: Vec<Option<&str>> = vec![None; key_fields.len()];
    for pair in text.split(',') {
        let Some((name, value)) = pair.split_once('=') else {
            return Err(Error::InvalidArgument(format!(
                "key {text:?}: the store has key columns {}; give each as col=value, separated by commas",
                names(key_fields)
            )));
        };
        let name = name.trim();
        let Some(i) = key_fields.iter().position(|f| f.name() == name) else {
            return Err(Error::InvalidArgument(format!(
                "key {text:?}: `{name}` is not a key column (key columns: {})",
                names(key_fields)
            )));
        };
        if values[i].replace(value).is_some() {
            return Err(Error::InvalidArgument(format!(
                "key {text:?}: key column `{name}` is given twice"
            )));
        }
    }
    key_fields
        .iter()
        .zip(values)
        .map(|(f, v)| {
            v.ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "key {text:?}: key column `{}` is missing (key columns: {})",
                    f.name(),
                    names(key_fields)
                ))
            })
        })
        .collect()
}

fn names(key_fields: &[FieldRef]) -> String {
    key_fields
        .iter()
        .map(|f| f.name().as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The keys `texts` as a batch of the key columns `key_fields` (one row per text, in order).
///
/// # Errors
/// [`Error::InvalidArgument`] naming the key and the column for a malformed key or a value
/// that does not parse as the column's type.
pub fn key_batch(texts: &[String], key_fields: &[FieldRef]) -> Result<RecordBatch> {
    let split: Vec<Vec<&str>> = texts
        .iter()
        .map(|t| split_key(t, key_fields))
        .collect::<Result<_>>()?;
    // Strict casts: a value that does not parse is an error, not a null.
    let strict = CastOptions {
        safe: false,
        format_options: FormatOptions::default(),
    };
    let columns: Vec<ArrayRef> = key_fields
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let text = StringArray::from_iter_values(split.iter().map(|k| k[i]));
            cast_with_options(&text, f.data_type(), &strict).map_err(|e| {
                Error::InvalidArgument(format!(
                    "key column `{}` ({}): {e}",
                    f.name(),
                    f.data_type()
                ))
            })
        })
        .collect::<Result<_>>()?;
    let fields: Vec<FieldRef> = key_fields
        .iter()
        .map(|f| Arc::new(f.as_ref().clone().with_nullable(false)))
        .collect();
    Ok(RecordBatch::try_new(
        Arc::new(Schema::new(fields)),
        columns,
    )?)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use arrow::array::{Array, Date32Array, Int64Array};
    use arrow::datatypes::{DataType, Field};

    use super::*;

    fn fields(spec: &[(&str, DataType)]) -> Vec<FieldRef> {
        spec.iter()
            .map(|(n, t)| Arc::new(Field::new(*n, t.clone(), false)))
            .collect()
    }

    fn keys(texts: &[&str]) -> Vec<String> {
        texts.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_single_key_is_its_value_or_col_equals_value() {
        let f = fields(&[("id", DataType::Int64)]);
        let b = key_batch(&keys(&["42", "id=7", " id =9"]), &f).unwrap();
        let ids = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
        assert_eq!(ids.values(), &[42, 7, 9]);
        // A string value keeps its commas and an `=` not after the column's name.
        let f = fields(&[("name", DataType::Utf8)]);
        let b = key_batch(&keys(&["a,b=c", "name=x=y"]), &f).unwrap();
        let s = b.column(0).as_any().downcast_ref::<StringArray>().unwrap();
        assert_eq!(s.value(0), "a,b=c");
        assert_eq!(s.value(1), "x=y");
    }

    #[test]
    fn a_composite_key_takes_every_column_once_in_any_order() {
        let f = fields(&[("a", DataType::Int64), ("d", DataType::Date32)]);
        let b = key_batch(&keys(&["d=2024-01-02,a=1", "a=2,d=1970-01-01"]), &f).unwrap();
        let a = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
        let d = b.column(1).as_any().downcast_ref::<Date32Array>().unwrap();
        assert_eq!(a.values(), &[1, 2]);
        assert_eq!(d.values(), &[19724, 0]);
        assert_eq!(b.column(0).null_count(), 0);
        for (bad, says) in [
            ("a=1", "`d` is missing"),
            ("a=1,d=2024-01-01,a=2", "given twice"),
            ("a=1,x=2", "`x` is not a key column"),
            ("1,2024-01-01", "col=value"),
        ] {
            let e = key_batch(&keys(&[bad]), &f).unwrap_err().to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn a_value_that_does_not_parse_names_its_column() {
        let f = fields(&[("id", DataType::Int64)]);
        let e = key_batch(&keys(&["x1"]), &f).unwrap_err().to_string();
        assert!(e.contains("key column `id`"), "{e}");
    }
}
