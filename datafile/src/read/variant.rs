//! Variant values as scans return them: the stored column (unshredded `metadata`/`value`
//! binaries, or shredded with a `typed_value` tree, per the Parquet Variant encoding and
//! shredding specs) folded back into Arrow's canonical unshredded variant (extension
//! `arrow.parquet.variant`), every value validated; and variant values rendered as JSON.
//!
//! The decoding itself is the `parquet-variant` crates'. Their unvalidated paths panic on
//! malformed bytes (arrow-rs#9740), so every stored byte string is checked with the
//! validating constructors before any other use, the shredded fold runs under
//! `catch_unwind` as a second guard, and its output is validated again: bad bytes become a
//! typed error naming the column (the caller adds the file), never a panic.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use alluvium_txlog::schema::{EXTENSION_NAME_KEY, VARIANT_EXTENSION, variant_fields};
use arrow_array::cast::AsArray;
use arrow_array::{
    Array, ArrayRef, BinaryArray, ListArray, MapArray, RecordBatch, RecordBatchOptions,
    StringArray, StructArray,
};
use arrow_buffer::NullBuffer;
use arrow_cast::cast;
use arrow_schema::{DataType as ArrowType, Field, Fields, Schema, SchemaRef};
use parquet_variant::{Variant, VariantMetadata};
use parquet_variant_compute::{VariantArray, unshred_variant, variant_to_json};

use crate::{DataFileError, Result};

fn malformed(column: &str, reason: impl std::fmt::Display) -> DataFileError {
    DataFileError::InvalidArgument(format!(
        "column `{column}`: malformed variant value: {reason}"
    ))
}

fn is_binary(t: &ArrowType) -> bool {
    matches!(
        t,
        ArrowType::Binary | ArrowType::LargeBinary | ArrowType::BinaryView
    )
}

fn to_binary(arr: &ArrayRef, column: &str) -> Result<BinaryArray> {
    let b = cast(arr, &ArrowType::Binary).map_err(|e| malformed(column, e))?;
    Ok(b.as_binary::<i32>().clone())
}

/// Checks every present (metadata, value) pair with the validating constructors; a row
/// whose metadata is missing while its value is present is malformed too.
fn validate(
    metadata: &BinaryArray,
    value: Option<&BinaryArray>,
    nulls: Option<&NullBuffer>,
    column: &str,
) -> Result<()> {
    for i in 0..metadata.len() {
        if nulls.is_some_and(|n| n.is_null(i)) {
            continue;
        }
        let v = value.filter(|v| v.is_valid(i)).map(|v| v.value(i));
        if metadata.is_null(i) {
            if v.is_some() {
                return Err(malformed(
                    column,
                    format!("row {i} has a value but no metadata"),
                ));
            }
            continue;
        }
        let m = VariantMetadata::try_new(metadata.value(i))
            .map_err(|e| malformed(column, format!("row {i}: metadata: {e}")))?;
        if let Some(v) = v {
            Variant::try_new_with_metadata(m, v)
                .map_err(|e| malformed(column, format!("row {i}: value: {e}")))?;
        }
    }
    Ok(())
}

/// Converts a variant column as stored in Parquet (a struct of `metadata` and `value`
/// binaries, optionally shredded with a `typed_value` tree) to the canonical unshredded
/// variant struct (`metadata`, `value` binaries), folding shredded values back into
/// `value` and validating every value. A row is null where the stored struct is null or
/// holds no value at all. Scans call this for every variant column they read.
///
/// # Errors
/// [`DataFileError::InvalidArgument`] naming `column` if the column is not a variant struct or a
/// value is malformed.
pub fn conform_variant(arr: &ArrayRef, column: &str) -> Result<ArrayRef> {
    let Some(source) = arr.as_struct_opt() else {
        return Err(malformed(
            column,
            format!("stored as {}, not a variant struct", arr.data_type()),
        ));
    };
    let child = |name: &str| source.column_by_name(name).cloned();
    let Some(metadata) = child("metadata").filter(|m| is_binary(m.data_type())) else {
        return Err(malformed(column, "no binary `metadata` field"));
    };
    let value = child("value");
    if let Some(v) = &value
        && !is_binary(v.data_type())
    {
        return Err(malformed(column, "the `value` field is not binary"));
    }
    let metadata_bin = to_binary(&metadata, column)?;
    let value_bin = value.as_ref().map(|v| to_binary(v, column)).transpose()?;
    validate(&metadata_bin, value_bin.as_ref(), source.nulls(), column)?;

    let (metadata_bin, value_bin) = if source.column_by_name("typed_value").is_some() {
        let variants =
            VariantArray::try_new(source as &dyn Array).map_err(|e| malformed(column, e))?;
        let folded = catch_unwind(AssertUnwindSafe(|| unshred_variant(&variants)))
            .map_err(|_| malformed(column, "a shredded value could not be decoded"))?
            .map_err(|e| malformed(column, e))?;
        let inner = folded.into_inner();
        let m = inner
            .column_by_name("metadata")
            .ok_or_else(|| malformed(column, "shredded fold lost the metadata"))?;
        let v = inner
            .column_by_name("value")
            .ok_or_else(|| malformed(column, "shredded fold produced no value"))?;
        let (m, v) = (to_binary(m, column)?, to_binary(v, column)?);
        validate(&m, Some(&v), source.nulls(), column)?;
        (m, Some(v))
    } else {
        (metadata_bin, value_bin)
    };
    let value_bin = match value_bin {
        Some(v) => v,
        None => BinaryArray::new_null(source.len()),
    };
    // Null where the struct is null or either part is missing: the canonical type has
    // non-nullable children.
    let nulls = NullBuffer::union(
        NullBuffer::union(source.nulls(), metadata_bin.nulls()).as_ref(),
        value_bin.nulls(),
    );
    Ok(Arc::new(
        StructArray::try_new(
            variant_fields(),
            vec![Arc::new(metadata_bin), Arc::new(value_bin)],
            nulls,
        )
        .map_err(|e| malformed(column, e))?,
    ))
}

/// Renders a canonical variant column (as scans return it) as JSON text, one string per
/// row, null where the variant is null.
///
/// # Errors
/// [`DataFileError::InvalidArgument`] naming `column` if `arr` is not a variant struct or holds
/// malformed bytes.
pub(super) fn variant_json(arr: &ArrayRef, column: &str) -> Result<StringArray> {
    let Some(source) = arr.as_struct_opt() else {
        return Err(malformed(column, "not a variant struct"));
    };
    let (Some(m), Some(v)) = (
        source.column_by_name("metadata"),
        source.column_by_name("value"),
    ) else {
        return Err(malformed(column, "not a variant struct"));
    };
    let (m, v) = (to_binary(m, column)?, to_binary(v, column)?);
    validate(&m, Some(&v), source.nulls(), column)?;
    catch_unwind(AssertUnwindSafe(|| variant_to_json(arr)))
        .map_err(|_| malformed(column, "a value could not be rendered"))?
        .map_err(|e| malformed(column, e))
}

fn is_variant_field(f: &Field) -> bool {
    f.metadata().get(EXTENSION_NAME_KEY).map(String::as_str) == Some(VARIANT_EXTENSION)
}

/// `arr` (of field `f`) with every variant value, at any depth, replaced by its JSON text.
fn render(arr: &ArrayRef, f: &Field, column: &str) -> Result<(ArrayRef, Field)> {
    if is_variant_field(f) {
        let json = variant_json(arr, column)?;
        return Ok((Arc::new(json), Field::new(f.name(), ArrowType::Utf8, true)));
    }
    let rebuilt = |t: ArrowType| Field::new(f.name(), t, f.is_nullable());
    Ok(match arr.data_type() {
        ArrowType::Struct(fields) => {
            let s = arr.as_struct();
            let mut children = Vec::with_capacity(fields.len());
            let mut new_fields = Vec::with_capacity(fields.len());
            for (c, cf) in s.columns().iter().zip(fields.iter()) {
                let (c, cf) = render(c, cf, &format!("{column}.{}", cf.name()))?;
                children.push(c);
                new_fields.push(cf);
            }
            let new_fields = Fields::from(new_fields);
            let out = StructArray::try_new(new_fields.clone(), children, s.nulls().cloned())?;
            (Arc::new(out), rebuilt(ArrowType::Struct(new_fields)))
        }
        ArrowType::List(ef) => {
            let l = arr.as_list::<i32>();
            let (values, ef) = render(l.values(), ef, &format!("{column}.element"))?;
            let ef = Arc::new(ef);
            let out =
                ListArray::try_new(ef.clone(), l.offsets().clone(), values, l.nulls().cloned())?;
            (Arc::new(out), rebuilt(ArrowType::List(ef)))
        }
        ArrowType::Map(entries, sorted) => {
            let m = arr.as_map();
            // Arrow guarantees a map's entries are a (key, value) struct; anything else is
            // passed through untouched rather than indexed.
            let ArrowType::Struct(kv) = entries.data_type() else {
                return Ok((arr.clone(), f.clone()));
            };
            let (Some(kf), Some(vf)) = (kv.first(), kv.get(1)) else {
                return Ok((arr.clone(), f.clone()));
            };
            let (values, vf) = render(m.values(), vf, &format!("{column}.value"))?;
            let kv = Fields::from(vec![kf.as_ref().clone(), vf]);
            let inner = StructArray::try_new(kv.clone(), vec![m.keys().clone(), values], None)?;
            let entries = Arc::new(Field::new(entries.name(), ArrowType::Struct(kv), false));
            let out = MapArray::try_new(
                entries.clone(),
                m.offsets().clone(),
                inner,
                m.nulls().cloned(),
                *sorted,
            )?;
            (Arc::new(out), rebuilt(ArrowType::Map(entries, *sorted)))
        }
        _ => (arr.clone(), f.clone()),
    })
}

/// `batch` with every variant value (top-level or nested in structs, lists and maps)
/// replaced by its JSON text, for text output formats; other columns unchanged.
///
/// # Errors
/// [`DataFileError::InvalidArgument`] naming the column if a variant value is malformed.
pub fn variants_as_json(batch: &RecordBatch) -> Result<RecordBatch> {
    let schema = batch.schema();
    let mut columns = Vec::with_capacity(batch.num_columns());
    let mut fields = Vec::with_capacity(batch.num_columns());
    for (c, f) in batch.columns().iter().zip(schema.fields()) {
        let (c, f) = render(c, f, f.name())?;
        columns.push(c);
        fields.push(f);
    }
    Ok(RecordBatch::try_new_with_options(
        Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone())),
        columns,
        &RecordBatchOptions::new().with_row_count(Some(batch.num_rows())),
    )?)
}

/// The schema [`variants_as_json`] gives batches of `schema`.
///
/// # Errors
/// None in practice (an empty batch of `schema` is converted).
pub fn variants_as_json_schema(schema: &SchemaRef) -> Result<SchemaRef> {
    Ok(variants_as_json(&RecordBatch::new_empty(schema.clone()))?.schema())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use parquet_variant::VariantBuilder;

    fn unshredded(rows: &[Option<(Vec<u8>, Vec<u8>)>]) -> ArrayRef {
        let m: BinaryArray = rows
            .iter()
            .map(|r| r.as_ref().map(|(m, _)| m.as_slice()))
            .collect();
        let v: BinaryArray = rows
            .iter()
            .map(|r| r.as_ref().map(|(_, v)| v.as_slice()))
            .collect();
        let fields = Fields::from(vec![
            Field::new("metadata", ArrowType::Binary, true),
            Field::new("value", ArrowType::Binary, true),
        ]);
        Arc::new(StructArray::try_new(fields, vec![Arc::new(m), Arc::new(v)], None).unwrap())
    }

    fn encode(build: impl FnOnce(&mut VariantBuilder)) -> (Vec<u8>, Vec<u8>) {
        let mut b = VariantBuilder::new();
        build(&mut b);
        b.finish()
    }

    #[test]
    fn unshredded_values_pass_through_and_render_as_json() {
        let obj = encode(|b| {
            let mut o = b.new_object();
            o.insert("a", 1i64);
            o.insert("b", "x");
            o.finish();
        });
        let num = encode(|b| b.append_value(2.5f64));
        let arr = unshredded(&[Some(obj), None, Some(num)]);
        let out = conform_variant(&arr, "v").unwrap();
        assert_eq!(out.data_type(), &ArrowType::Struct(variant_fields()));
        assert!(out.is_null(1));
        let json = variant_json(&out, "v").unwrap();
        assert_eq!(json.value(0), r#"{"a":1,"b":"x"}"#);
        assert!(json.is_null(1));
        assert_eq!(json.value(2), "2.5");
        // Nested in a list, through the batch-level rendering used by text output.
        let element = Arc::new(
            Field::new("element", out.data_type().clone(), true).with_metadata(
                std::collections::HashMap::from([(
                    EXTENSION_NAME_KEY.to_string(),
                    VARIANT_EXTENSION.to_string(),
                )]),
            ),
        );
        let list = ListArray::try_new(
            element.clone(),
            arrow_buffer::OffsetBuffer::from_lengths([3]),
            out,
            None,
        )
        .unwrap();
        let batch = RecordBatch::try_new(
            Arc::new(Schema::new(vec![Field::new(
                "l",
                ArrowType::List(element),
                true,
            )])),
            vec![Arc::new(list)],
        )
        .unwrap();
        let text = variants_as_json(&batch).unwrap();
        let shown = arrow::util::pretty::pretty_format_batches(&[text])
            .unwrap()
            .to_string();
        assert!(shown.contains(r#"[{"a":1,"b":"x"}, , 2.5]"#), "{shown}");
    }

    #[test]
    fn malformed_bytes_are_a_typed_error_naming_the_column() {
        let good = encode(|b| b.append_value("hello"));
        // Metadata with an unknown version, a value pointing past its end, a truncated
        // object header: each must be refused, never panic.
        let cases = [
            (vec![0x07, 0, 0], good.1.clone()),
            (good.0.clone(), vec![0x0d]),
            (good.0.clone(), vec![0x02, 0x05]),
            (vec![], good.1.clone()),
        ];
        for (m, v) in cases {
            let arr = unshredded(&[Some((m.clone(), v.clone()))]);
            let e = conform_variant(&arr, "col.v").unwrap_err().to_string();
            assert!(e.contains("column `col.v`"), "{e}");
        }
        let not_variant: ArrayRef = Arc::new(BinaryArray::from(vec![b"x".as_ref()]));
        assert!(conform_variant(&not_variant, "v").is_err());
        assert!(variant_json(&not_variant, "v").is_err());
    }
}
