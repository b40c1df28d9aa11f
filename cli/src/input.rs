//! Reading input files for writes: Parquet, CSV (with a header) or JSON lines.

use std::fs::File;
use std::io::{BufReader, Read, Seek};
use std::path::Path;
use std::sync::Arc;

use alluvium::{Error, Result};
use arrow::datatypes::{Field, Schema, SchemaRef};
use arrow::record_batch::RecordBatch;
use indicatif::ProgressBar;

use super::json_keys::check_distinct_keys;

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

/// An input file opened for a write: its schema (as read, CSV and JSON columns the table
/// knows taking the table's types) and its batches, streamed: memory holds one batch at a
/// time, not the file.
pub struct Input {
    /// The schema of the batches.
    pub schema: SchemaRef,
    /// The batches, read as they are taken; the first failure ends the stream.
    pub batches: Box<dyn Iterator<Item = Result<RecordBatch>> + Send>,
}

/// A reader that advances a progress bar by the bytes read through it.
struct Counted<R> {
    inner: R,
    progress: ProgressBar,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.progress.inc(n as u64);
        Ok(n)
    }
}

/// Opens the file for reading as a stream of batches; CSV and JSON columns the table knows
/// are parsed as the table's types. With `progress`, the bar (of the file's size) advances
/// as the file is read: by bytes for CSV and JSON lines, by rows for Parquet.
pub fn open_input(
    path: &str,
    table_schema: Option<&Schema>,
    progress: Option<ProgressBar>,
) -> Result<Input> {
    let k = kind(path)?;
    let schema = schema_of(path, k, table_schema)?;
    let mut f = File::open(path).map_err(io(path))?;
    f.rewind().map_err(io(path))?;
    let size = f.metadata().map(|m| m.len()).unwrap_or(0);
    let shown = path.to_string();
    let annotate = move |e: arrow::error::ArrowError| -> Error {
        Error::InvalidArgument(format!("{shown}: {e}"))
    };
    Ok(match k {
        Kind::Parquet => {
            let builder =
                parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(f)?;
            let rows = builder.metadata().file_metadata().num_rows().max(1) as u64;
            let schema = builder.schema().clone();
            let reader = builder.build()?;
            Input {
                schema,
                batches: Box::new(reader.map(move |b| {
                    let b = b.map_err(&annotate)?;
                    if let Some(p) = &progress {
                        p.inc(size.saturating_mul(b.num_rows() as u64) / rows);
                    }
                    Ok(b)
                })),
            }
        }
        Kind::Csv => {
            let reader: Box<dyn Read + Send> = match progress {
                Some(progress) => Box::new(Counted { inner: f, progress }),
                None => Box::new(f),
            };
            let r = arrow::csv::ReaderBuilder::new(schema.clone())
                .with_header(true)
                .build(reader)?;
            Input {
                schema,
                batches: Box::new(r.map(move |b| b.map_err(&annotate))),
            }
        }
        Kind::Jsonl => {
            // A key named twice in one object would lose a value inside the JSON reader.
            check_distinct_keys(path, BufReader::new(File::open(path).map_err(io(path))?))?;
            let reader: Box<dyn Read + Send> = match progress {
                Some(progress) => Box::new(Counted { inner: f, progress }),
                None => Box::new(f),
            };
            let r =
                arrow::json::ReaderBuilder::new(schema.clone()).build(BufReader::new(reader))?;
            Input {
                schema,
                batches: Box::new(r.map(move |b| b.map_err(&annotate))),
            }
        }
    })
}

/// The size of the file in bytes (0 when it cannot be read: opening it reports why).
pub fn file_size(path: &str) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

/// Reads every batch of the file; CSV and JSON columns the table knows are parsed as the
/// table's types (for the writers that take the input whole: MERGE's source, a state
/// store's events).
pub fn read_batches(path: &str, table_schema: Option<&Schema>) -> Result<Vec<RecordBatch>> {
    open_input(path, table_schema, None)?.batches.collect()
}
