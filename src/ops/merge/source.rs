//! The MERGE source made ready for planning: its batches conformed to their logical Arrow
//! types and concatenated into one batch, and its all-NULL (`void`) columns typed as the
//! target's columns of the same names. Nothing here reads the target.

use alluvium_txlog::schema::{DataType, PrimitiveType, StructType, from_arrow_schema};
use arrow_array::{Array, ArrayRef, RecordBatch, new_null_array};

use crate::rows::input;
use crate::{Error, Result};

/// The MERGE source, ready to plan and join.
#[derive(Debug)]
pub(crate) struct Source {
    /// Its Delta schema (void columns typed, see [`type_void_columns`]); empty when
    /// `schemaless`.
    pub schema: StructType,
    /// Every row, in one batch of the schema's logical Arrow types.
    pub batch: RecordBatch,
    /// Void columns typed as the target's columns of the same names.
    pub void_columns: Vec<String>,
    /// No rows and no schema (no batch at all, or batches without columns): an empty
    /// source nothing can pair with (SPEC.md §23 M3a).
    pub schemaless: bool,
}

impl Source {
    /// Conforms `batches` to their logical types, concatenated, with void columns typed
    /// from `target`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for rows without columns; [`Error::SchemaMismatch`] for
    /// batches of different schemas or a type Delta has no name for.
    pub(crate) fn load(batches: Vec<RecordBatch>, target: &StructType) -> Result<Source> {
        let columns = batches.first().map_or(0, |b| b.num_columns());
        if columns == 0 {
            let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
            if rows > 0 {
                return Err(Error::InvalidArgument(format!(
                    "the MERGE source has {rows} rows but no columns: no ON condition can name them"
                )));
            }
            let empty = RecordBatch::try_new_with_options(
                std::sync::Arc::new(arrow_schema::Schema::empty()),
                Vec::new(),
                &arrow_array::RecordBatchOptions::new().with_row_count(Some(0)),
            )?;
            return Ok(Source {
                schema: StructType::new(Vec::new()),
                batch: empty,
                void_columns: Vec::new(),
                schemaless: true,
            });
        }
        let (schema, batch) = load_source(batches)?;
        let void_columns = void_in(target, &schema);
        let (schema, batch) = type_void_columns(target, schema, batch)?;
        Ok(Source {
            schema,
            batch,
            void_columns,
            schemaless: false,
        })
    }
}

/// The void columns of `schema` the target also has (those [`type_void_columns`] types).
fn void_in(target: &StructType, schema: &StructType) -> Vec<String> {
    let void = DataType::Primitive(PrimitiveType::Void);
    schema
        .fields
        .iter()
        .filter(|f| f.data_type == void && target.field(&f.name).is_some())
        .map(|f| f.name.clone())
        .collect()
}

/// The source as one batch of its logical Arrow types, and its Delta schema; the first
/// batch has at least one column.
fn load_source(batches: Vec<RecordBatch>) -> Result<(StructType, RecordBatch)> {
    let Some(first) = batches.first() else {
        return Err(Error::InvalidArgument(
            "the MERGE source has no batches".into(),
        ));
    };
    let arrow = first.schema();
    input::check_distinct_columns(&arrow)?;
    let schema = from_arrow_schema(&arrow).map_err(|e| Error::SchemaMismatch(e.to_string()))?;
    let logical = input::logical_schema(&schema)?;
    let mut conformed = Vec::with_capacity(batches.len());
    for b in &batches {
        if b.schema().fields() != arrow.fields() {
            return Err(Error::SchemaMismatch(
                "the MERGE source's batches have different schemas".into(),
            ));
        }
        conformed.push(input::conform(b, &schema, &logical)?);
    }
    drop(batches);
    Ok((
        schema,
        arrow_select::concat::concat_batches(&logical, &conformed)?,
    ))
}

/// The source with each void column (all NULL: what a header-only CSV infers) that the
/// target also has retyped as the target's column: NULLs of either type compare and assign
/// alike, and typed they can be keys, compared and assigned (a void column can be none of
/// these). Other columns are kept as they are.
fn type_void_columns(
    target: &StructType,
    schema: StructType,
    source: RecordBatch,
) -> Result<(StructType, RecordBatch)> {
    let void = DataType::Primitive(PrimitiveType::Void);
    if !schema.fields.iter().any(|f| f.data_type == void) {
        return Ok((schema, source));
    }
    let mut typed = schema.clone();
    for f in &mut typed.fields {
        if f.data_type == void
            && let Some(t) = target.field(&f.name)
        {
            f.data_type = t.data_type.clone();
            f.nullable = true;
            f.metadata.clear();
        }
    }
    let logical = input::logical_schema(&typed)?;
    let columns: Vec<ArrayRef> = source
        .columns()
        .iter()
        .zip(logical.fields())
        .map(|(c, f)| match c.data_type() == f.data_type() {
            true => c.clone(),
            false => new_null_array(f.data_type(), source.num_rows()),
        })
        .collect();
    Ok((typed, RecordBatch::try_new(logical, columns)?))
}
