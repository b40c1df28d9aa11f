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
                Some(k) => Field::new(f.name(), k.data_type().clone(), true),
                None => f.as_ref().clone(),
            }
        })
        .collect();
    Ok(Arc::new(Schema::new(fields)))
}

/// The schema a new table would get from this file.
pub fn infer_schema(path: &str) -> Result<SchemaRef> {
    schema_of(path, kind(path)?, None)
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
