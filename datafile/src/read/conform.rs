//! Conforming the arrays read from a data file to the table's logical types: matching
//! nested fields by name, physical name or field id (column mapping), filling columns the
//! file lacks with nulls (schema evolution), and widening types (type widening, Parquet
//! timestamp flavours; which conversions are allowed is `widening`'s).

use std::sync::Arc;

use alluvium_txlog::column_mapping::ColumnMappingMode;
use alluvium_txlog::schema::{
    ArrowForm, DataType, PARQUET_FIELD_ID_META_KEY, PrimitiveType, StructField, arrow_fields_as,
    arrow_type_as, extension_metadata,
};
use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, ListArray, MapArray, NullArray, StructArray, new_null_array};
use arrow_cast::{CastOptions, cast_with_options};
use arrow_schema::{DataType as ArrowType, Field, Fields};

use super::variant::conform_variant;
use super::widening::readable_as;
use crate::{DataFileError, Result};

/// The logical Arrow type of a Delta type as a scan of `form` ([`ArrowForm::SCAN`] or
/// [`ArrowForm::SCAN_VIEWS`]) produces it.
pub(super) fn scan_type(dt: &DataType, form: ArrowForm) -> Result<ArrowType> {
    Ok(arrow_type_as(dt, form)?)
}

/// Nullable Arrow fields of a struct's Delta fields (logical names), as a scan produces them.
///
/// # Errors
/// As `alluvium_txlog::schema::arrow_type_as`.
pub fn scan_fields(fields: &[StructField]) -> Result<Fields> {
    scan_fields_as(fields, ArrowForm::SCAN)
}

/// [`scan_fields`] in the scan form `form` ([`ArrowForm::SCAN`] or
/// [`ArrowForm::SCAN_VIEWS`]).
///
/// # Errors
/// As `alluvium_txlog::schema::arrow_type_as`.
pub fn scan_fields_as(fields: &[StructField], form: ArrowForm) -> Result<Fields> {
    Ok(arrow_fields_as(fields, form)?)
}

/// Finds the child of a file struct (or the file's root fields) that stores `field`.
pub(super) fn find_source(
    file_fields: &Fields,
    field: &StructField,
    mode: ColumnMappingMode,
) -> Option<usize> {
    let by_name = |name: &str| {
        file_fields
            .iter()
            .position(|f| f.name() == name)
            .or_else(|| {
                file_fields
                    .iter()
                    .position(|f| f.name().eq_ignore_ascii_case(name))
            })
    };
    match mode {
        ColumnMappingMode::None => by_name(&field.name),
        ColumnMappingMode::Name => by_name(mode.physical_name(field)),
        // A field without an id (the `_change_type` column of change-data files) can only
        // be found by name.
        ColumnMappingMode::Id if field.column_id().is_none() => by_name(mode.physical_name(field)),
        ColumnMappingMode::Id => {
            let id = field.column_id().map(|i| i.to_string());
            let by_id = id.as_ref().and_then(|id| {
                file_fields
                    .iter()
                    .position(|f| f.metadata().get(PARQUET_FIELD_ID_META_KEY) == Some(id))
            });
            let file_has_ids = file_fields
                .iter()
                .any(|f| f.metadata().contains_key(PARQUET_FIELD_ID_META_KEY));
            if by_id.is_some() || file_has_ids {
                by_id
            } else {
                by_name(mode.physical_name(field))
            }
        }
    }
}

fn mismatch(column: &str, found: &ArrowType, want: &DataType) -> DataFileError {
    DataFileError::InvalidArgument(format!(
        "column `{column}` is stored as {found}, which cannot be read as {}",
        type_name(want)
    ))
}

fn type_name(dt: &DataType) -> String {
    match dt {
        DataType::Primitive(p) => p.name(),
        DataType::Geospatial(g) => g.name(),
        DataType::Struct(_) => "struct".into(),
        DataType::Array(_) => "array".into(),
        DataType::Map(_) => "map".into(),
    }
}

/// Converts `arr` (as stored in a file) to the logical type of `field` as scans return it
/// ([`ArrowForm::SCAN`]).
pub fn conform(
    arr: &ArrayRef,
    field: &StructField,
    mode: ColumnMappingMode,
    column: &str,
) -> Result<ArrayRef> {
    conform_as(arr, field, mode, column, ArrowForm::SCAN)
}

/// [`conform`] to the scan form `form`: with [`ArrowForm::SCAN_VIEWS`], strings and
/// binaries come out as views (already if the file was decoded to views, else converted).
pub fn conform_as(
    arr: &ArrayRef,
    field: &StructField,
    mode: ColumnMappingMode,
    column: &str,
    form: ArrowForm,
) -> Result<ArrayRef> {
    conform_type(arr, &field.data_type, mode, column, form)
}

fn conform_type(
    arr: &ArrayRef,
    dt: &DataType,
    mode: ColumnMappingMode,
    column: &str,
    form: ArrowForm,
) -> Result<ArrayRef> {
    match dt {
        DataType::Primitive(PrimitiveType::Void) => Ok(Arc::new(NullArray::new(arr.len()))),
        DataType::Primitive(PrimitiveType::Variant) => conform_variant(arr, column),
        DataType::Primitive(_) | DataType::Geospatial(_) => {
            let target = scan_type(dt, form)?;
            if arr.data_type() == &target {
                return Ok(arr.clone());
            }
            if matches!(target, ArrowType::Utf8View | ArrowType::BinaryView) {
                // Stored other than as views (a nested value, a dictionary, a fixed-size
                // binary): conformed as offsets first, whose rules are the protocol's, then
                // laid out as views, which changes no value.
                let offsets = conform_type(arr, dt, mode, column, ArrowForm::SCAN)?;
                return Ok(cast_with_options(
                    &offsets,
                    &target,
                    &CastOptions::default(),
                )?);
            }
            // Geospatial values are WKB: stored as binary, read through binary's rules.
            let want = match dt {
                DataType::Primitive(p) => p,
                _ => &PrimitiveType::Binary,
            };
            // Only the protocol's widenings convert; any other cast would change values.
            if !readable_as(arr.data_type(), want) {
                return Err(mismatch(column, arr.data_type(), dt));
            }
            let options = CastOptions {
                safe: false,
                ..Default::default()
            };
            if let (ArrowType::Timestamp(_, _), ArrowType::Timestamp(unit, tz)) =
                (arr.data_type(), &target)
            {
                // Change only the unit; the stored values are instants (INT96 and
                // timestamps without the UTC flag as Spark writes them), so the zone is a
                // label, never a conversion.
                let micros = cast_with_options(arr, &ArrowType::Timestamp(*unit, None), &options)
                    .map_err(|_| mismatch(column, arr.data_type(), dt))?;
                let data = micros
                    .to_data()
                    .into_builder()
                    .data_type(ArrowType::Timestamp(*unit, tz.clone()))
                    .build()?;
                return Ok(arrow_array::make_array(data));
            }
            cast_with_options(arr, &target, &options)
                .map_err(|_| mismatch(column, arr.data_type(), dt))
        }
        DataType::Struct(st) => {
            let Some(source) = arr.as_struct_opt() else {
                return Err(mismatch(column, arr.data_type(), dt));
            };
            let fields = scan_fields_as(&st.fields, form)?;
            let mut children = Vec::with_capacity(st.fields.len());
            for (f, target_field) in st.fields.iter().zip(fields.iter()) {
                let child = match find_source(source.fields(), f, mode) {
                    Some(i) => conform_type(
                        source.column(i),
                        &f.data_type,
                        mode,
                        &format!("{column}.{}", f.name),
                        form,
                    )?,
                    None => new_null_array(target_field.data_type(), arr.len()),
                };
                children.push(child);
            }
            Ok(Arc::new(StructArray::try_new(
                fields,
                children,
                source.nulls().cloned(),
            )?))
        }
        DataType::Array(at) => {
            let list = match arr.data_type() {
                ArrowType::List(_) => arr.clone(),
                ArrowType::LargeList(f)
                | ArrowType::FixedSizeList(f, _)
                | ArrowType::ListView(f) => {
                    cast_with_options(arr, &ArrowType::List(f.clone()), &CastOptions::default())?
                }
                _ => return Err(mismatch(column, arr.data_type(), dt)),
            };
            let list = list.as_list::<i32>();
            let values = conform_type(
                list.values(),
                &at.element_type,
                mode,
                &format!("{column}.element"),
                form,
            )?;
            let field = Arc::new(
                Field::new("element", values.data_type().clone(), true)
                    .with_metadata(extension_metadata(&at.element_type)),
            );
            Ok(Arc::new(ListArray::try_new(
                field,
                list.offsets().clone(),
                values,
                list.nulls().cloned(),
            )?))
        }
        DataType::Map(mt) => {
            let Some(map) = arr.as_map_opt() else {
                return Err(mismatch(column, arr.data_type(), dt));
            };
            let keys = conform_type(
                map.keys(),
                &mt.key_type,
                mode,
                &format!("{column}.key"),
                form,
            )?;
            let values = conform_type(
                map.values(),
                &mt.value_type,
                mode,
                &format!("{column}.value"),
                form,
            )?;
            let entry_fields = Fields::from(vec![
                Field::new("key", keys.data_type().clone(), false),
                Field::new("value", values.data_type().clone(), true)
                    .with_metadata(extension_metadata(&mt.value_type)),
            ]);
            let entries = StructArray::try_new(entry_fields.clone(), vec![keys, values], None)?;
            let field = Arc::new(Field::new(
                "key_value",
                ArrowType::Struct(entry_fields),
                false,
            ));
            Ok(Arc::new(MapArray::try_new(
                field,
                map.offsets().clone(),
                entries,
                map.nulls().cloned(),
                false,
            )?))
        }
    }
}
