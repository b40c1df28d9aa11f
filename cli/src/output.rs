//! Writing record batches as a table, CSV, JSON lines or Parquet, streamed, at most a
//! limit of rows.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use alluvium::{Error, Result};
use arrow::array::{Array, ArrayRef, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use arrow::util::display::{ArrayFormatter, FormatOptions};
use clap::ValueEnum;

use super::report::output_error;
use super::table_text::TableText;
use super::text::escape_control;

/// Output formats of `scan`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// An aligned text table.
    Table,
    /// CSV with a header row (nested values as text).
    Csv,
    /// One JSON object per row.
    Jsonl,
    /// A Parquet file with the table's logical schema.
    Parquet,
}

/// The most rows of one row group of a Parquet output (the writer holds one row group in
/// memory at a time).
const OUTPUT_ROW_GROUP_ROWS: usize = 128 * 1024;

/// The largest dictionary page of a column of a Parquet output before the column falls back
/// to plain encoding (the writer's default is 1 MiB).
const OUTPUT_DICTIONARY_LIMIT: usize = 64 * 1024;

fn io(context: &str) -> impl Fn(std::io::Error) -> Error + '_ {
    move |e| Error::Io {
        context: context.to_string(),
        source: e,
    }
}

/// Standard output, buffered, as a destination.
pub fn stdout() -> Box<dyn Write + Send> {
    Box::new(BufWriter::new(std::io::stdout()))
}

/// What an output must stay out of: the local directory of the table (or state store) the
/// command reads, and what to call it in the refusal.
#[derive(Debug, Clone, Copy)]
pub struct Protected<'a> {
    /// The location as given: a path, a `file://` URI, or an object-store URI (then there
    /// is no local directory to protect).
    pub location: &'a str,
    /// `"table"` or `"state store"`.
    pub what: &'static str,
}

/// Opens the destination: a file, or stdout. A file inside `protect`'s directory is
/// refused before it is created: writing it could overwrite the table's own commits or
/// data files (see [`check_outside`]).
pub fn destination(path: Option<&str>, protect: Protected<'_>) -> Result<Box<dyn Write + Send>> {
    Ok(match path {
        Some(p) => {
            check_outside(p, protect)?;
            Box::new(BufWriter::new(File::create(p).map_err(io(p))?))
        }
        None => stdout(),
    })
}

/// Refuses an output path that resolves inside the protected directory. Both are
/// resolved as the OS will when the file is created: `.` and `..`, symlinks anywhere on
/// the path (the output's own name too: a dangling symlink is followed to where it would
/// create the file), and a `file://` form. An existing output outside that is a hard link
/// to a file inside is refused too (truncating it truncates the table's file).
///
/// # Errors
/// [`Error::InvalidArgument`] naming both; I/O errors resolving the table's directory.
fn check_outside(output: &str, protect: Protected<'_>) -> Result<()> {
    let Some(root) = local_path(protect.location) else {
        return Ok(());
    };
    // A table that does not exist has nothing to overwrite (the read fails anyway).
    let Ok(root) = std::fs::canonicalize(&root) else {
        return Ok(());
    };
    let out = local_path(output).unwrap_or_else(|| std::path::PathBuf::from(output));
    let resolved = resolve(&out, 0).map_err(io(output))?;
    if resolved.starts_with(&root) {
        return Err(Error::InvalidArgument(format!(
            "--output {output} is inside the {} at {} (it resolves to {}): writing it could overwrite the {}'s own files; choose a path outside it",
            protect.what,
            root.display(),
            resolved.display(),
            protect.what
        )));
    }
    if let Some(shared) = hard_link_inside(&resolved, &root) {
        return Err(Error::InvalidArgument(format!(
            "--output {output} is a hard link to {} of the {} at {}: writing it would overwrite that file; choose another path",
            shared.display(),
            protect.what,
            root.display()
        )));
    }
    Ok(())
}

/// The file under `root` that the existing file `output` is a hard link to, if any. Only a
/// file with more than one link is looked for, so an ordinary output costs one `stat`; the
/// walk of the table's directory is paid only for a multiply-linked one.
#[cfg(unix)]
fn hard_link_inside(
    output: &std::path::Path,
    root: &std::path::Path,
) -> Option<std::path::PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let md = std::fs::metadata(output).ok()?;
    if !md.is_file() || md.nlink() < 2 {
        return None;
    }
    let (dev, ino) = (md.dev(), md.ino());
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            // Not following symlinks: a link's target is either inside (found on its own)
            // or not the table's.
            let Ok(m) = std::fs::symlink_metadata(entry.path()) else {
                continue;
            };
            if m.is_dir() {
                dirs.push(entry.path());
            } else if m.is_file() && m.dev() == dev && m.ino() == ino {
                return Some(entry.path());
            }
        }
    }
    None
}

#[cfg(not(unix))]
fn hard_link_inside(_: &std::path::Path, _: &std::path::Path) -> Option<std::path::PathBuf> {
    None
}

/// The filesystem path of a local location (a path or a `file:` URI, by the library's one
/// rule); `None` for an object-store URI or another host's `file:` URI.
fn local_path(location: &str) -> Option<std::path::PathBuf> {
    alluvium::local_path(location).map(std::path::PathBuf::from)
}

/// Symlinks followed at most (as the kernel's own limit, so a loop ends).
const MAX_SYMLINKS: usize = 40;

/// The absolute path `path` names once every symlink is followed, whether or not it
/// exists: the longest existing prefix canonicalised, a dangling symlink followed to its
/// target, and the components after it (which do not exist, so hold no link) applied
/// lexically.
fn resolve(path: &std::path::Path, links: usize) -> std::io::Result<std::path::PathBuf> {
    use std::path::{Component, PathBuf};
    if let Ok(p) = std::fs::canonicalize(path) {
        return Ok(p);
    }
    if links < MAX_SYMLINKS
        && std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
    {
        let target = std::fs::read_link(path)?;
        let parent = path.parent().unwrap_or(std::path::Path::new("."));
        return resolve(&parent.join(target), links + 1);
    }
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ if path.is_absolute() => return Ok(path.to_path_buf()),
        _ => PathBuf::from("."),
    };
    let mut base = resolve(&parent, links)?;
    match path.components().next_back() {
        Some(Component::ParentDir) => {
            base.pop();
        }
        Some(Component::Normal(name)) => base.push(name),
        _ => {}
    }
    Ok(base)
}

/// How much of a result to print: at most `limit` rows, and the total when known (for the
/// table format's `… N more rows`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Shape {
    /// Rows printed at most (`None`: all).
    pub limit: Option<usize>,
    /// The rows of the whole result, when known without reading it (statistics).
    pub total: Option<u64>,
}

impl Shape {
    /// Every row.
    pub const ALL: Shape = Shape {
        limit: None,
        total: None,
    };
}

/// The rows a read prints by default: 20 in the aligned table on a terminal (a person looks
/// at the first rows; `--limit` asks for more), every row otherwise (a pipe or a file
/// wants the result).
pub fn default_limit(format: Format, output: Option<&str>) -> Option<usize> {
    use std::io::IsTerminal;
    (format == Format::Table && output.is_none() && std::io::stdout().is_terminal()).then_some(20)
}

/// Refuses Parquet to a terminal: binary output there is noise (and can upset the
/// terminal); a pipe or `--output` is fine.
pub fn refuse_binary_on_terminal(format: Format, output: Option<&str>) -> Result<()> {
    use std::io::IsTerminal;
    if format == Format::Parquet && output.is_none() && std::io::stdout().is_terminal() {
        return Err(Error::InvalidArgument(
            "refusing to write Parquet to a terminal: give --output FILE, or pipe it".into(),
        ));
    }
    Ok(())
}

/// The batches of a stream up to `left` rows (the last one cut), noting in `more` whether
/// rows were left: the stream is not read past the batch that reaches the limit (one more
/// when the limit falls exactly on a batch's end).
struct Limited<I> {
    inner: I,
    left: Option<usize>,
    more: Arc<AtomicBool>,
}

impl<I: Iterator<Item = Result<RecordBatch>>> Iterator for Limited<I> {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        let Some(left) = self.left else {
            return self.inner.next();
        };
        if left == 0 {
            return None;
        }
        let b = match self.inner.next()? {
            Ok(b) => b,
            Err(e) => return Some(Err(e)),
        };
        if b.num_rows() > left {
            self.more.store(true, Ordering::Relaxed);
            self.left = Some(0);
            return Some(Ok(b.slice(0, left)));
        }
        self.left = Some(left - b.num_rows());
        if left == b.num_rows()
            && let Some(Ok(next)) = self.inner.next()
            && next.num_rows() > 0
        {
            self.more.store(true, Ordering::Relaxed);
        }
        Some(Ok(b))
    }
}

/// Writes the batches of `batches` (of `schema`) in `format` as they come, at most
/// `shape.limit` rows: every format holds one batch at a time (Parquet: plus its open row
/// group; the aligned table: plus the rows that set its widths, see `table_text.rs`). The
/// table format ends a cut result with `… N more rows` (`… more rows` when the total is
/// not known). The first failure of the stream ends the output with that error.
pub fn write_stream<B: alluvium::IntoBatch>(
    format: Format,
    schema: SchemaRef,
    batches: impl Iterator<Item = B>,
    out: Box<dyn Write + Send>,
    shape: Shape,
) -> Result<()> {
    let more = Arc::new(AtomicBool::new(false));
    let limited = Limited {
        inner: batches.map(alluvium::IntoBatch::into_batch),
        left: shape.limit,
        more: more.clone(),
    };
    let footer = move || {
        if !more.load(Ordering::Relaxed) {
            return None;
        }
        let shown = shape.limit.unwrap_or(0) as u64;
        Some(match shape.total {
            Some(total) if total > shown => {
                format!("… {} more rows (--limit N shows more)", total - shown)
            }
            _ => "… more rows (--limit N shows more)".to_string(),
        })
    };
    write_format(format, schema, limited, out, footer).map_err(|e| output_error(e, "output"))
}

fn write_format(
    format: Format,
    schema: SchemaRef,
    batches: impl Iterator<Item = Result<RecordBatch>>,
    mut out: Box<dyn Write + Send>,
    footer: impl FnOnce() -> Option<String>,
) -> Result<()> {
    // Text formats show variant values as JSON text; Parquet keeps the variant type.
    let text = format != Format::Parquet;
    let schema = if text {
        alluvium::variants_as_json_schema(&schema)?
    } else {
        schema
    };
    let batches = batches.map(|b| {
        let b = b?;
        if text {
            alluvium::variants_as_json(&b)
        } else {
            Ok(b)
        }
    });
    match format {
        Format::Table => {
            let header = schema
                .fields()
                .iter()
                .map(|f| escape_control(f.name()).into_owned())
                .collect();
            let mut table = TableText::new(header);
            for b in batches {
                table
                    .push(&escaped_text(&b?)?, &mut out)
                    .map_err(io("stdout"))?;
            }
            table.finish(&mut out).map_err(io("stdout"))?;
            if let Some(line) = footer() {
                writeln!(out, "{line}").map_err(io("stdout"))?;
            }
        }
        Format::Csv => {
            let text_schema = Arc::new(Schema::new(
                schema
                    .fields()
                    .iter()
                    .map(|f| text_field(f))
                    .collect::<Vec<_>>(),
            ));
            let mut w = arrow::csv::WriterBuilder::new()
                .with_header(true)
                .build(&mut out);
            let mut any = false;
            for b in batches {
                w.write(&nested_as_text(&b?, &text_schema)?)?;
                any = true;
            }
            if !any {
                w.write(&RecordBatch::new_empty(text_schema.clone()))?;
            }
        }
        Format::Jsonl => {
            let mut w = arrow::json::LineDelimitedWriter::new(&mut out);
            for b in batches {
                w.write(&b?)?;
            }
            w.finish()?;
        }
        Format::Parquet => {
            // Row groups of at most OUTPUT_ROW_GROUP_ROWS rows: the writer buffers a whole
            // row group before encoding it, so this bounds the memory of a streamed output.
            // A small dictionary limit keeps dictionaries for repetitive columns (a change
            // type, a partition value) and gives up early on unique ones (ids, keys), which
            // otherwise spend most of the command's time hashing values into a dictionary
            // that is thrown away at the default 1 MiB.
            let props = parquet::file::properties::WriterProperties::builder()
                .set_max_row_group_row_count(Some(OUTPUT_ROW_GROUP_ROWS))
                .set_dictionary_page_size_limit(OUTPUT_DICTIONARY_LIMIT)
                .build();
            let mut w = parquet::arrow::ArrowWriter::try_new(&mut out, schema, Some(props))?;
            for b in batches {
                w.write(&b?)?;
            }
            w.close()?;
        }
    }
    out.flush().map_err(io("output"))
}

/// The batch as text columns with control characters escaped (see [`escape_control`]), for
/// the aligned table: a newline or ANSI escape inside a value would otherwise break the
/// layout or forge rows. Values are rendered as the table printer renders them (same
/// formatter, nulls empty), so output without such characters is unchanged.
fn escaped_text(b: &RecordBatch) -> Result<RecordBatch> {
    // As the table printer: a value that cannot be formatted shows as an error text.
    let options = FormatOptions::default().with_display_error(true);
    let mut fields = Vec::with_capacity(b.num_columns());
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(b.num_columns());
    for (field, c) in b.schema().fields().iter().zip(b.columns()) {
        let f = ArrayFormatter::try_new(c.as_ref(), &options)?;
        columns.push(Arc::new(StringArray::from_iter((0..c.len()).map(|i| {
            c.is_valid(i)
                .then(|| escape_control(&f.value(i).to_string()).into_owned())
        }))));
        fields.push(Field::new(
            escape_control(field.name()).into_owned(),
            DataType::Utf8,
            true,
        ));
    }
    Ok(RecordBatch::try_new(
        Arc::new(Schema::new(fields)),
        columns,
    )?)
}

fn is_nested(t: &DataType) -> bool {
    matches!(
        t,
        DataType::Struct(_) | DataType::List(_) | DataType::LargeList(_) | DataType::Map(_, _)
    )
}

fn text_field(f: &Field) -> Field {
    if is_nested(f.data_type()) {
        Field::new(f.name(), DataType::Utf8, true)
    } else {
        f.clone()
    }
}

/// CSV cannot hold nested values: render them as text.
fn nested_as_text(b: &RecordBatch, schema: &SchemaRef) -> Result<RecordBatch> {
    let options = FormatOptions::default();
    let columns: Vec<ArrayRef> = b
        .columns()
        .iter()
        .map(|c| -> Result<ArrayRef> {
            if !is_nested(c.data_type()) {
                return Ok(c.clone());
            }
            let f = ArrayFormatter::try_new(c.as_ref(), &options)?;
            Ok(Arc::new(StringArray::from_iter(
                (0..c.len()).map(|i| c.is_valid(i).then(|| f.value(i).to_string())),
            )))
        })
        .collect::<Result<_>>()?;
    Ok(RecordBatch::try_new(schema.clone(), columns)?)
}

#[cfg(test)]
mod tests {
    use arrow::array::Int64Array;
    use parquet::file::reader::{FileReader, SerializedFileReader};

    use super::*;

    /// The bytes of the dictionary page of column `c` of the first row group (0 without one).
    fn dictionary_bytes(reader: &SerializedFileReader<File>, c: usize) -> i64 {
        let meta = reader.metadata().row_group(0).column(c);
        meta.dictionary_page_offset()
            .map_or(0, |d| meta.data_page_offset() - d)
    }

    #[test]
    fn parquet_output_keeps_dictionaries_only_for_repetitive_columns() -> Result<()> {
        let rows = 100_000;
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("_change_type", DataType::Utf8, false),
        ]));
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(Int64Array::from_iter_values(0..rows)),
                Arc::new(StringArray::new_repeated("insert", rows as usize)),
            ],
        )?;
        let dir = tempfile::tempdir().map_err(io("temp dir"))?;
        let path = dir.path().join("out.parquet");
        let out = File::create(&path).map_err(io("output"))?;
        write_stream(
            Format::Parquet,
            schema,
            [batch].into_iter(),
            Box::new(out),
            Shape::ALL,
        )?;
        let reader = SerializedFileReader::new(File::open(&path).map_err(io("output"))?)?;
        assert_eq!(reader.metadata().file_metadata().num_rows(), rows);
        // Unique ids stop growing the dictionary at the small limit and fall back to plain
        // pages (at the writer's default the dictionary would hold all 800 kB of them).
        let ids = dictionary_bytes(&reader, 0);
        assert!(
            ids <= 2 * OUTPUT_DICTIONARY_LIMIT as i64,
            "{ids} dictionary bytes"
        );
        // One distinct change type keeps its dictionary.
        assert!(dictionary_bytes(&reader, 1) > 0);
        Ok(())
    }
}
