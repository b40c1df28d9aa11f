//! Checking and conforming input batches against the table schema (schema enforcement and
//! opt-in schema evolution).

use std::sync::Arc;

use alluvium_txlog::column_mapping::ColumnMappingMode;
use alluvium_txlog::schema::{DataType, PrimitiveType, StructField, StructType, from_arrow_schema};
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_cast::{CastOptions, cast_with_options};
use arrow_schema::{Schema, SchemaRef};

use crate::{Error, Result};
use alluvium_datafile::read::{conform as conform_column, scan_fields};

/// Delta types equal, ignoring nullability and field metadata.
pub(crate) fn same_type(a: &DataType, b: &DataType) -> bool {
    match (a, b) {
        (DataType::Primitive(x), DataType::Primitive(y)) => x == y,
        (DataType::Geospatial(x), DataType::Geospatial(y)) => x == y,
        // WKB arriving as plain binary is stored as it is.
        (DataType::Geospatial(_), DataType::Primitive(PrimitiveType::Binary)) => true,
        (DataType::Struct(x), DataType::Struct(y)) => {
            x.fields.len() == y.fields.len()
                && x.fields.iter().zip(&y.fields).all(|(f, g)| {
                    f.name.eq_ignore_ascii_case(&g.name) && same_type(&f.data_type, &g.data_type)
                })
        }
        (DataType::Array(x), DataType::Array(y)) => same_type(&x.element_type, &y.element_type),
        (DataType::Map(x), DataType::Map(y)) => {
            same_type(&x.key_type, &y.key_type) && same_type(&x.value_type, &y.value_type)
        }
        _ => false,
    }
}

/// Refuses an input schema that names a column twice, at the top level or at any depth
/// inside it (a struct's fields, the structs a list holds or a map's keys and values hold),
/// case-insensitively as Delta compares names: every reader of input rows looks columns up
/// by name, so the second column's values would be silently dropped, and a table schema
/// naming a nested field twice is one every reader refuses. Every write of this crate
/// checks it; it is public for an embedder that looks input columns up by name itself
/// before handing the batches on (as `alluvium-state`'s `put` does).
///
/// # Errors
/// [`Error::DuplicateColumn`] naming the column (its path: `s.a` inside a struct,
/// `l.element.a` inside a list's elements, `m.key.a` / `m.value.a` inside a map's).
pub fn check_distinct_columns(input: &Schema) -> Result<()> {
    distinct_fields(
        input
            .fields()
            .iter()
            .map(|f| (f.name().as_str(), f.data_type())),
        "",
    )
}

/// [`check_distinct_columns`] for a Delta schema (a table being created, or the columns
/// added to one).
///
/// # Errors
/// As [`check_distinct_columns`].
pub(crate) fn check_distinct_fields(schema: &StructType) -> Result<()> {
    distinct_delta(&schema.fields, "")
}

/// Refuses two of `names` that are equal ignoring case, then checks each one's type.
fn distinct<'a, T: 'a>(
    fields: impl Iterator<Item = (&'a str, T)>,
    prefix: &str,
    mut nested: impl FnMut(T, &str) -> Result<()>,
) -> Result<()> {
    let mut seen: std::collections::HashMap<String, &str> = std::collections::HashMap::new();
    for (name, ty) in fields {
        if let Some(first) = seen.insert(name.to_lowercase(), name) {
            return Err(Error::DuplicateColumn {
                column: format!("{prefix}{name}"),
                first: format!("{prefix}{first}"),
            });
        }
        nested(ty, &format!("{prefix}{name}."))?;
    }
    Ok(())
}

fn distinct_fields<'a>(
    fields: impl Iterator<Item = (&'a str, &'a arrow_schema::DataType)>,
    prefix: &str,
) -> Result<()> {
    distinct(fields, prefix, distinct_arrow_type)
}

/// The fields nested in an Arrow type; `prefix` names the column holding it (with a dot).
fn distinct_arrow_type(ty: &arrow_schema::DataType, prefix: &str) -> Result<()> {
    use arrow_schema::DataType as T;
    match ty {
        T::Struct(children) => distinct_fields(
            children.iter().map(|f| (f.name().as_str(), f.data_type())),
            prefix,
        ),
        T::List(e)
        | T::LargeList(e)
        | T::FixedSizeList(e, _)
        | T::ListView(e)
        | T::LargeListView(e) => distinct_arrow_type(e.data_type(), &format!("{prefix}element.")),
        T::Map(entries, _) => match entries.data_type() {
            T::Struct(kv) => kv.iter().zip(["key", "value"]).try_for_each(|(f, role)| {
                distinct_arrow_type(f.data_type(), &format!("{prefix}{role}."))
            }),
            _ => Ok(()),
        },
        T::Dictionary(_, values) => distinct_arrow_type(values, prefix),
        _ => Ok(()),
    }
}

fn distinct_delta(fields: &[StructField], prefix: &str) -> Result<()> {
    distinct(
        fields.iter().map(|f| (f.name.as_str(), &f.data_type)),
        prefix,
        distinct_delta_type,
    )
}

/// The fields nested in a Delta type; `prefix` names the column holding it (with a dot).
fn distinct_delta_type(ty: &DataType, prefix: &str) -> Result<()> {
    match ty {
        DataType::Struct(s) => distinct_delta(&s.fields, prefix),
        DataType::Array(a) => distinct_delta_type(&a.element_type, &format!("{prefix}element.")),
        DataType::Map(m) => {
            distinct_delta_type(&m.key_type, &format!("{prefix}key."))?;
            distinct_delta_type(&m.value_type, &format!("{prefix}value."))
        }
        DataType::Primitive(_) | DataType::Geospatial(_) => Ok(()),
    }
}

/// Compares an input Arrow schema with the table schema. Returns the fields to add to the
/// table (non-empty only with `merge_schema`). Nullable table columns the data lacks are
/// written as nulls.
///
/// # Errors
/// [`Error::SchemaMismatch`] naming every missing NOT NULL column, type difference, and
/// (without `merge_schema`) every extra column; [`Error::DuplicateColumn`] for input that
/// names a column twice.
pub(crate) fn check_schema(
    table: &StructType,
    input: &Schema,
    partition_columns: &[String],
    merge_schema: bool,
) -> Result<Vec<StructField>> {
    check_distinct_columns(input)?;
    let input_delta = from_arrow_schema(input).map_err(|e| Error::SchemaMismatch(e.to_string()))?;
    let mut problems = Vec::new();
    for f in &table.fields {
        match input_delta.field(&f.name) {
            // As in Delta's schema enforcement, a nullable column the data lacks reads as null;
            // identity, generated and default columns are given their values by the rules.
            None if f.nullable || super::rules::may_omit(f) => {}
            None => problems.push(format!(
                "NOT NULL column `{}` ({}) is missing from the data",
                f.name, f.data_type
            )),
            Some(g) if !same_type(&f.data_type, &g.data_type) => problems.push(format!(
                "column `{}` is {} in the table but {} in the data",
                f.name, f.data_type, g.data_type
            )),
            Some(_) => {}
        }
    }
    let mut new_fields = Vec::new();
    for g in &input_delta.fields {
        if table.field(&g.name).is_none() {
            if merge_schema {
                if partition_columns
                    .iter()
                    .any(|p| p.eq_ignore_ascii_case(&g.name))
                {
                    problems.push(format!(
                        "new column `{}` cannot be a partition column",
                        g.name
                    ));
                }
                let mut f = g.clone();
                f.nullable = true;
                f.metadata.clear();
                new_fields.push(f);
            } else {
                problems.push(format!(
                    "column `{}` is not in the table (append with schema merging to add it)",
                    g.name
                ));
            }
        }
    }
    if problems.is_empty() {
        Ok(new_fields)
    } else {
        Err(Error::SchemaMismatch(problems.join("; ")))
    }
}

/// The Arrow schema batches are conformed to: the table's logical columns, nullable.
pub(crate) fn logical_schema(table: &StructType) -> Result<SchemaRef> {
    Ok(Arc::new(Schema::new(scan_fields(&table.fields)?)))
}

/// Reorders and casts an input batch (already checked by [`check_schema`]) to the table's
/// logical Arrow schema; columns the input lacks (added by schema evolution in an earlier
/// commit of the same write) become nulls.
///
/// # Errors
/// [`Error::SchemaMismatch`] when a value does not fit its column. NOT NULL is not checked
/// here: the column rules (`super::rules`) check it on the rows as they will be written,
/// after filling identity, generated and default columns, naming an example row.
pub(crate) fn conform(
    batch: &RecordBatch,
    table: &StructType,
    target: &SchemaRef,
) -> Result<RecordBatch> {
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(table.fields.len());
    let options = CastOptions {
        safe: false,
        ..Default::default()
    };
    for (f, tf) in table.fields.iter().zip(target.fields()) {
        let idx = batch
            .schema()
            .fields()
            .iter()
            .position(|x| x.name() == &f.name)
            .or_else(|| {
                batch
                    .schema()
                    .fields()
                    .iter()
                    .position(|x| x.name().eq_ignore_ascii_case(&f.name))
            });
        let col = match idx {
            Some(i) => {
                let c = batch.column(i);
                if f.data_type
                    .any_type(&mut |t| *t == DataType::Primitive(PrimitiveType::Variant))
                {
                    // Variant bytes are validated (and shredded input folded back) exactly
                    // as a scan would, so no malformed value reaches a data file.
                    conform_column(c, f, ColumnMappingMode::None, &f.name)
                        .map_err(|e| Error::SchemaMismatch(e.to_string()))?
                } else if c.data_type() == tf.data_type() {
                    c.clone()
                } else if let (
                    arrow_schema::DataType::Timestamp(_, _),
                    arrow_schema::DataType::Timestamp(unit, _),
                ) = (c.data_type(), tf.data_type())
                {
                    let c = cast_with_options(
                        c,
                        &arrow_schema::DataType::Timestamp(*unit, None),
                        &options,
                    )?;
                    let data = c
                        .to_data()
                        .into_builder()
                        .data_type(tf.data_type().clone())
                        .build()?;
                    arrow_array::make_array(data)
                } else {
                    cast_with_options(c, tf.data_type(), &options).map_err(|e| {
                        Error::SchemaMismatch(format!(
                            "column `{}` cannot be stored as {}: {e}",
                            f.name,
                            tf.data_type()
                        ))
                    })?
                }
            }
            None => arrow_array::new_null_array(tf.data_type(), batch.num_rows()),
        };
        columns.push(col);
    }
    Ok(RecordBatch::try_new(target.clone(), columns)?)
}
