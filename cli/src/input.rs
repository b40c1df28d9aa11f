//! Reading input files for writes: Parquet, CSV (with a header) or JSON lines.

use std::fs::File;
use std::io::{BufReader, Seek};
use std::path::Path;
use std::sync::Arc;

use alluvium::{Error, Result};
use arrow::datatypes::{Field, Schema, SchemaRef};
use arrow::record_batch::RecordBatch;

fn io(path: &str) -> impl Fn(std::io::Error) -> Error + '_ {
    move |e| Error::Io {
        context: path.to_string(),
        source: e,
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Parquet,
    Csv,
    Jsonl,
}

fn kind(path: &str) -> Result<Kind> {
    match Path::new(path)
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("parquet") => Ok(Kind::Parquet),
        Some("csv") => Ok(Kind::Csv),
        Some("jsonl" | "ndjson" | "json") => Ok(Kind::Jsonl),
        _ => Err(Error::InvalidArgument(format!(
            "{path}: input files must be .parquet, .csv or .jsonl"
        ))),
    }
}

/// The schema of an input file: Parquet's own, or inferred from CSV / JSON lines. Columns
/// named in `known` take those types (so a CSV date column is read as the table's date).
fn schema_of(path: &str, k: Kind, known: Option<&Schema>) -> Result<SchemaRef> {
    let inferred: Schema = match k {
        Kind::Parquet => {
            let f = File::open(path).map_err(io(path))?;
            let b = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(f)?;
            return Ok(b.schema().clone());
        }
        Kind::Csv => {
            let mut f = File::open(path).map_err(io(path))?;
            let (s, _) = arrow::csv::reader::Format::default()
                .with_header(true)
                .infer_schema(&mut f, Some(1000))?;
            s
        }
        Kind::Jsonl => {
            let f = File::open(path).map_err(io(path))?;
            let (s, _) = arrow::json::reader::infer_json_schema(BufReader::new(f), Some(1000))?;
            s
        }
    };
    let Some(known) = known else {
        return Ok(Arc::new(inferred));
    };
    let fields: Vec<Field> = inferred
        .fields()
        .iter()
        .map(|f| {
            match known
                .fields()
                .iter()
                .find(|k| k.name().eq_ignore_ascii_case(f.name()))
            {
                // Text has no variant encoding to parse: refuse rather than guess one.
                Some(k) if holds_variant(k) => Err(Error::InvalidArgument(format!(
                    "{path}: column `{}` is a variant column; variant values cannot be written \
                     from CSV or JSON lines input (use Parquet with the arrow.parquet.variant type)",
                    k.name()
                ))),
                Some(k) => Ok(Field::new(f.name(), k.data_type().clone(), true)),
                None => Ok(f.as_ref().clone()),
            }
        })
        .collect::<Result<_>>()?;
    Ok(Arc::new(Schema::new(fields)))
}

/// Whether a table field is, or nests, a variant (by its Arrow extension type).
fn holds_variant(f: &Field) -> bool {
    use arrow::datatypes::DataType as T;
    f.metadata()
        .get(alluvium::EXTENSION_NAME_KEY)
        .map(String::as_str)
        == Some(alluvium::VARIANT_EXTENSION)
        || match f.data_type() {
            T::Struct(fs) => fs.iter().any(|c| holds_variant(c)),
            T::List(c) | T::LargeList(c) | T::FixedSizeList(c, _) | T::Map(c, _) => {
                holds_variant(c)
            }
            _ => false,
        }
}

/// The schema a new table would get from this file.
pub fn infer_schema(path: &str) -> Result<SchemaRef> {
    schema_of(path, kind(path)?, None)
}

/// An empty batch of the file's schema, for a file without rows (a CSV header alone): the
/// columns the table knows take its types, and a text column with no value to infer a type
/// from is a string (as text is) rather than `void`, which nothing can compare or assign.
pub fn empty_batch(path: &str, table_schema: Option<&Schema>) -> Result<RecordBatch> {
    let k = kind(path)?;
    let schema = schema_of(path, k, table_schema)?;
    let schema = match k {
        Kind::Parquet => schema,
        Kind::Csv | Kind::Jsonl => Arc::new(Schema::new(
            schema
                .fields()
                .iter()
                .map(|f| match f.data_type() {
                    arrow::datatypes::DataType::Null => {
                        Field::new(f.name(), arrow::datatypes::DataType::Utf8, true)
                    }
                    _ => f.as_ref().clone(),
                })
                .collect::<Vec<_>>(),
        )),
    };
    Ok(RecordBatch::new_empty(schema))
}

/// Reads every batch of the file; CSV and JSON columns the table knows are parsed as the
/// table's types.
pub fn read_batches(path: &str, table_schema: Option<&Schema>) -> Result<Vec<RecordBatch>> {
    let k = kind(path)?;
    let schema = schema_of(path, k, table_schema)?;
    let mut f = File::open(path).map_err(io(path))?;
    f.rewind().map_err(io(path))?;
    let batches: Vec<RecordBatch> = match k {
        Kind::Parquet => parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(f)?
            .build()?
            .collect::<std::result::Result<_, _>>()?,
        Kind::Csv => arrow::csv::ReaderBuilder::new(schema)
            .with_header(true)
            .build(f)?
            .collect::<std::result::Result<_, _>>()?,
        Kind::Jsonl => arrow::json::ReaderBuilder::new(schema)
            .build(BufReader::new(f))?
            .collect::<std::result::Result<_, _>>()?,
    };
    Ok(batches)
}
