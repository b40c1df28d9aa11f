//! Parquet encoding of one data file, the columns of a big batch encoded side by side on
//! the current rayon pool.
//!
//! `parquet`'s `ArrowWriter` encodes the columns of each batch one after the other on the
//! calling thread, so a write used one core however many the machine has, while the
//! column chunks of a row group are independent until they are spliced into the file.
//! [`ParquetEncoder`] drives the same column writers (`ArrowRowGroupWriterFactory`, from
//! an `ArrowWriter` built with the same properties) and cuts row groups exactly where
//! `ArrowWriter::write` would (the properties' row-count and byte limits), so the file's
//! bytes do not depend on which path encoded it: a batch of at least
//! [`PARALLEL_MIN_ROWS`] rows on a pool of more than one thread has one task per column
//! (plus the caller's side work, the statistics), anything smaller stays on the calling
//! thread, where a few rows do not pay for waking the pool.
//!
//! A file is encoded into memory ([`FileOut::Memory`], uploaded whole by the caller) or,
//! on stores that take a new file as its bytes come
//! ([`alluvium_storage::ObjectStore::put_new_streaming`]: the local filesystem), straight
//! into the store ([`FileOut::Stream`]): each row group goes to the file when it is closed,
//! so no copy of the whole file is held or made.
//!
//! A closed row group's column chunks are spliced into the file while the next batch is
//! encoded (on the pool beside its columns, as the statistics are), not between batches:
//! on the calling thread the splice (a copy of the row group into the file, a write to the
//! page cache when streamed) left the pool idle for its whole duration, about a tenth of a
//! 1M-row write on two cores. The chunks still go in in order, before the next row group
//! is closed and before the footer, so the bytes are those of splicing at once.
//!
//! An in-memory file's buffer is grown once per row group to the size of its column chunks
//! (known when they are closed) instead of doubling page by page: each doubling copied the
//! whole file so far and faulted in fresh pages. A file that reaches a second row group is
//! likely to grow to the target file size, so its buffer is then reserved once for that
//! size: growing by doubling near the target held the old and the new buffer at once
//! (about twice the file in memory for a moment), while an untouched reservation costs
//! address space, not resident memory.

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};

use alluvium_storage::NewObjectWriter;

use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{Field, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_writer::{
    ArrowColumnChunk, ArrowColumnWriter, ArrowRowGroupWriterFactory, compute_leaves,
};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use rayon::prelude::*;

use crate::{DataFileError, Result};

/// Fewest rows of a batch (or of a row group, when its columns are closed) encoded with
/// one task per column: below it the work per column (tens of microseconds) is not much
/// more than handing it to the pool.
pub(crate) const PARALLEL_MIN_ROWS: usize = 8192;

/// Bytes reserved past a row group's column chunks: the file footer (schema, row-group
/// and page-index metadata) usually fits, so finishing the file does not grow it again.
const FOOTER_RESERVE: usize = 64 * 1024;

/// Most bytes reserved for a file toward its target size: a table may ask for files far
/// bigger than memory (`delta.targetFileSize`), and such a file grows as it goes.
const MAX_TARGET_RESERVE: usize = 512 << 20;

/// A closed row group's column chunks, waiting to be spliced into the file.
struct ClosedGroup {
    chunks: Vec<ArrowColumnChunk>,
    /// Their compressed size in bytes.
    bytes: usize,
    /// The row group's position in the file (0 for the first).
    ordinal: usize,
}

/// The column writers of the row group being written.
struct RowGroup {
    writers: Vec<ArrowColumnWriter>,
    rows: usize,
}

impl RowGroup {
    fn estimated_bytes(&self) -> usize {
        self.writers
            .iter()
            .map(ArrowColumnWriter::get_estimated_total_bytes)
            .sum()
    }
}

/// Where an encoded file's bytes go (see the module documentation).
pub(crate) enum FileOut {
    /// Held in memory, for the caller to upload whole.
    Memory(Vec<u8>),
    /// Written to the store as they come; the caller finishes the object.
    Stream(Box<dyn NewObjectWriter>),
}

impl Write for FileOut {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            FileOut::Memory(v) => v.write(buf),
            FileOut::Stream(w) => w.write(buf),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            FileOut::Memory(v) => v.write_all(buf),
            FileOut::Stream(w) => w.write_all(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            FileOut::Memory(v) => v.flush(),
            FileOut::Stream(w) => w.flush(),
        }
    }
}

/// One Parquet file being encoded (see the module documentation).
pub(crate) struct ParquetEncoder {
    file: SerializedFileWriter<FileOut>,
    factory: ArrowRowGroupWriterFactory,
    schema: SchemaRef,
    /// How many leaf columns (column writers) each top-level field has, in order.
    leaves_per_field: Vec<usize>,
    row_group: Option<RowGroup>,
    max_rows: Option<usize>,
    max_bytes: Option<usize>,
    parallel: bool,
    /// The size the file is expected to reach (the target file size), if known.
    size_hint: Option<usize>,
    /// Row groups closed so far (spliced, or `pending`).
    row_groups: usize,
    /// The last closed row group, until it is spliced (see the module documentation).
    pending: Option<ClosedGroup>,
}

impl ParquetEncoder {
    /// A file of `schema` written with `props`; `parallel` allows one task per column for
    /// big batches (see [`worth_parallel`]); `size_hint` is the size the file is closed at
    /// (the target file size), used to reserve an in-memory buffer once it has a second row
    /// group; the bytes go to `out`.
    pub(crate) fn try_new(
        schema: SchemaRef,
        props: WriterProperties,
        parallel: bool,
        size_hint: Option<usize>,
        out: FileOut,
    ) -> Result<ParquetEncoder> {
        let max_rows = props.max_row_group_row_count();
        let max_bytes = props.max_row_group_bytes();
        // Built through `ArrowWriter` so the file gets what it would (the encoded Arrow
        // schema in the footer, the Parquet schema converted the same way).
        let (file, factory) =
            ArrowWriter::try_new(out, schema.clone(), Some(props))?.into_serialized_writer()?;
        let descr = file.schema_descr();
        let mut leaves_per_field = vec![0usize; schema.fields().len()];
        for leaf in 0..descr.num_columns() {
            let root = descr.get_column_root_idx(leaf);
            let count = leaves_per_field.get_mut(root).ok_or_else(|| {
                DataFileError::InvalidArgument(format!(
                    "the Parquet schema has a column under field {root}, past the {} fields of the Arrow schema",
                    schema.fields().len()
                ))
            })?;
            *count += 1;
        }
        Ok(ParquetEncoder {
            file,
            factory,
            schema,
            leaves_per_field,
            row_group: None,
            max_rows,
            max_bytes,
            parallel,
            size_hint,
            row_groups: 0,
            pending: None,
        })
    }

    /// Encodes `batch` (of the encoder's schema) and runs `side` alongside: on the pool
    /// with the columns when the batch is encoded in parallel, after them otherwise.
    ///
    /// # Errors
    /// A failure encoding a column (a batch that does not match the schema), or `side`'s.
    pub(crate) fn write<F>(&mut self, batch: &RecordBatch, side: F) -> Result<()>
    where
        F: FnOnce() -> Result<()> + Send,
    {
        let mut side = Some(side);
        // Rows not yet given to a row group: the loop of `ArrowWriter::write`, so row
        // groups are cut at the same rows.
        let mut remaining = batch.clone();
        while remaining.num_rows() > 0 {
            let group = match &mut self.row_group {
                Some(group) => group,
                slot => slot.insert(RowGroup {
                    writers: self.factory.create_column_writers(self.row_groups)?,
                    rows: 0,
                }),
            };
            let buffered = group.rows;
            let mut split_at = match self.max_rows {
                Some(max) if buffered + remaining.num_rows() > max => Some(max - buffered),
                _ => None,
            };
            let candidate = split_at.unwrap_or_else(|| remaining.num_rows());
            if let Some(max_bytes) = self.max_bytes
                && buffered > 0
            {
                let current = group.estimated_bytes();
                if current >= max_bytes {
                    self.flush()?;
                    continue;
                }
                let average = current / buffered;
                if let Some(fit) = (max_bytes - current).checked_div(average)
                    && candidate > fit
                {
                    if fit == 0 {
                        self.flush()?;
                        continue;
                    }
                    split_at = Some(fit);
                }
            }
            let rest = split_at.map(|n| {
                let rest = remaining.slice(n, remaining.num_rows() - n);
                remaining = remaining.slice(0, n);
                rest
            });
            let group = self.row_group.as_mut().ok_or_else(|| {
                DataFileError::InvalidArgument("the row group being written vanished".into())
            })?;
            // The previous row group goes into the file while this batch is encoded.
            let splice = self
                .pending
                .take()
                .map(|closed| (&mut self.file, closed, self.size_hint));
            encode(
                group,
                &self.schema,
                &self.leaves_per_field,
                &remaining,
                side.take(),
                splice,
                self.parallel,
            )?;
            let full = self.max_rows.is_some_and(|max| group.rows >= max)
                || self
                    .max_bytes
                    .is_some_and(|max| group.estimated_bytes() >= max);
            if full {
                self.flush()?;
            }
            match rest {
                Some(rest) => remaining = rest,
                None => break,
            }
        }
        match side {
            Some(side) => side(),
            None => Ok(()),
        }
    }

    /// The file's size so far: the row groups written plus the estimated encoded size of
    /// the one in progress (what `ArrowWriter::bytes_written` + `in_progress_size` give).
    pub(crate) fn size(&self) -> usize {
        self.file.bytes_written()
            + self.pending.as_ref().map_or(0, |closed| closed.bytes)
            + self.row_group.as_ref().map_or(0, RowGroup::estimated_bytes)
    }

    /// Closes the row group in progress; its column chunks are spliced into the file while
    /// the next batch is encoded, or at the next flush or the file's end, whichever is first
    /// (a row group closed before is spliced now, so they go in in order).
    fn flush(&mut self) -> Result<()> {
        let Some(group) = self.row_group.take() else {
            return Ok(());
        };
        let chunks: Vec<ArrowColumnChunk> = if worth_parallel(self.parallel, group.rows) {
            group
                .writers
                .into_par_iter()
                .map(|w| w.close().map_err(DataFileError::from))
                .collect::<Result<_>>()?
        } else {
            group
                .writers
                .into_iter()
                .map(|w| w.close().map_err(DataFileError::from))
                .collect::<Result<_>>()?
        };
        let bytes: usize = chunks
            .iter()
            .map(|c| usize::try_from(c.close().metadata.compressed_size()).unwrap_or(0))
            .sum();
        // The write loop splices a closed group while encoding the next batch, before any
        // other group can close, so none is pending here; splicing it first regardless
        // keeps the row groups in order whatever the caller's sequence.
        if let Some(earlier) = self.pending.take() {
            splice(&mut self.file, earlier, self.size_hint)?;
        }
        self.pending = Some(ClosedGroup {
            chunks,
            bytes,
            ordinal: self.row_groups,
        });
        self.row_groups += 1;
        Ok(())
    }

    /// Closes the last row group, writes the footer and returns where the file went: its
    /// bytes, or the stream for the caller to finish.
    ///
    /// # Errors
    /// A failure closing a column or writing the footer.
    pub(crate) fn finish(mut self) -> Result<FileOut> {
        self.flush()?;
        if let Some(last) = self.pending.take() {
            splice(&mut self.file, last, self.size_hint)?;
        }
        Ok(self.file.into_inner()?)
    }
}

/// Appends a closed row group's column chunks to `file`, as its next row group. An
/// in-memory file's buffer is grown first (see the module documentation); `size_hint` is
/// the file's target size.
fn splice(
    file: &mut SerializedFileWriter<FileOut>,
    closed: ClosedGroup,
    size_hint: Option<usize>,
) -> Result<()> {
    if let FileOut::Memory(buffer) = file.inner_mut() {
        // Room for this group (and the footer); at the second row group, room for the
        // whole target size at once, plus one more group of this one's size: the file
        // is closed once it reaches the target, so its last group carries it past.
        let slack = closed.bytes.saturating_add(FOOTER_RESERVE);
        let mut wanted = buffer.len().saturating_add(slack);
        if let Some(target) = size_hint
            && closed.ordinal == 1
        {
            wanted = wanted.max(target.min(MAX_TARGET_RESERVE).saturating_add(slack));
        }
        if buffer.capacity() < wanted {
            buffer.reserve_exact(wanted - buffer.len());
        }
    }
    let mut row_group = file.next_row_group()?;
    for chunk in closed.chunks {
        chunk.append_to_row_group(&mut row_group)?;
    }
    row_group.close()?;
    Ok(())
}

/// Set in a child process forked after [`watch_forks`] ran.
static FORKED: AtomicBool = AtomicBool::new(false);

#[cfg(unix)]
extern "C" fn after_fork_in_child() {
    FORKED.store(true, Ordering::Relaxed);
}

/// Notes, from now on, when this process is a fork of the one that called it first.
///
/// A forked child inherits the rayon global pool of its parent without its threads: a task
/// handed to it never runs and the child hangs. Python's `multiprocessing` forks by default
/// on Linux, so a parent that wrote or scanned and then forked workers that write would
/// hang them. Called before this crate first uses the pool (a sink's creation, a scan), so
/// the child of any parent that used it knows it is one, and encodes on its own thread.
pub(crate) fn watch_forks() {
    #[cfg(unix)]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            // SAFETY: registers a handler that only stores to an atomic (async-signal-safe,
            // as a handler run in the child after fork must be); it is never unregistered.
            // A failed registration (an error code) leaves forks undetected, as before.
            let _ = unsafe { libc::pthread_atfork(None, None, Some(after_fork_in_child)) };
        });
    }
}

/// Whether `rows` rows are encoded (or their columns closed) one task per column: allowed,
/// enough rows, not a fork of the process that started the pool (see [`watch_forks`]), and a
/// pool of more than one thread. The pool is asked last because asking starts the global
/// pool's threads, which a write of a few rows should not do.
fn worth_parallel(allowed: bool, rows: usize) -> bool {
    if !allowed || rows < PARALLEL_MIN_ROWS {
        return false;
    }
    watch_forks();
    !FORKED.load(Ordering::Relaxed) && rayon::current_num_threads() > 1
}

/// A closed row group to splice into its file while a batch is encoded, with the file's
/// target size.
type Splice<'a> = (
    &'a mut SerializedFileWriter<FileOut>,
    ClosedGroup,
    Option<usize>,
);

/// Encodes `batch` into the column writers of `group`, one task per top-level column when
/// `parallel` and the batch is big enough, and runs the side work, `splice` then `side`
/// (on the pool too then, beside the columns).
fn encode<F>(
    group: &mut RowGroup,
    schema: &SchemaRef,
    leaves_per_field: &[usize],
    batch: &RecordBatch,
    side: Option<F>,
    splice_closed: Option<Splice<'_>>,
    parallel: bool,
) -> Result<()>
where
    F: FnOnce() -> Result<()> + Send,
{
    let side_work = move || -> Result<()> {
        if let Some((file, closed, size_hint)) = splice_closed {
            splice(file, closed, size_hint)?;
        }
        match side {
            Some(side) => side(),
            None => Ok(()),
        }
    };
    group.rows += batch.num_rows();
    if batch.num_columns() != schema.fields().len() {
        return Err(DataFileError::InvalidArgument(format!(
            "a batch of {} columns for a file of {}",
            batch.num_columns(),
            schema.fields().len()
        )));
    }
    // Each top-level column with its own column writers (a struct has several).
    let mut tasks: Vec<(&Field, &ArrayRef, &mut [ArrowColumnWriter])> =
        Vec::with_capacity(leaves_per_field.len());
    let mut writers: &mut [ArrowColumnWriter] = &mut group.writers;
    for ((field, column), &n) in schema
        .fields()
        .iter()
        .zip(batch.columns())
        .zip(leaves_per_field)
    {
        if n > writers.len() {
            return Err(DataFileError::InvalidArgument(
                "fewer column writers than the schema has leaf columns".into(),
            ));
        }
        let (mine, rest) = std::mem::take(&mut writers).split_at_mut(n);
        writers = rest;
        tasks.push((field.as_ref(), column, mine));
    }
    if worth_parallel(parallel, batch.num_rows()) {
        let columns = move || {
            tasks
                .into_par_iter()
                .try_for_each(|(field, column, writers)| encode_column(field, column, writers))
        };
        let (encoded, done) = rayon::join(columns, side_work);
        encoded?;
        done
    } else {
        for (field, column, writers) in tasks {
            encode_column(field, column, writers)?;
        }
        side_work()
    }
}

/// Encodes one top-level column into its column writers (one per leaf).
fn encode_column(
    field: &Field,
    column: &ArrayRef,
    writers: &mut [ArrowColumnWriter],
) -> Result<()> {
    let leaves = compute_leaves(field, column)?;
    if leaves.len() != writers.len() {
        return Err(DataFileError::InvalidArgument(format!(
            "column `{}` has {} leaf columns, its file {}",
            field.name(),
            leaves.len(),
            writers.len()
        )));
    }
    for (writer, leaf) in writers.iter_mut().zip(&leaves) {
        writer.write(leaf)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::Int64Array;
    use arrow_schema::{DataType, Schema};

    use super::*;

    fn encoder(size_hint: Option<usize>) -> ParquetEncoder {
        let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)]));
        let props = WriterProperties::builder()
            .set_max_row_group_row_count(Some(100))
            .build();
        ParquetEncoder::try_new(schema, props, false, size_hint, FileOut::Memory(Vec::new()))
            .expect("encoder")
    }

    /// The capacity of an in-memory encoder's buffer.
    fn capacity(e: &ParquetEncoder) -> usize {
        match e.file.inner() {
            FileOut::Memory(v) => v.capacity(),
            FileOut::Stream(_) => panic!("a streamed file has no buffer"),
        }
    }

    fn rows(e: &mut ParquetEncoder, n: i64) {
        let batch = RecordBatch::try_new(
            e.schema.clone(),
            vec![Arc::new(Int64Array::from_iter_values(0..n)) as ArrayRef],
        )
        .expect("batch");
        e.write(&batch, || Ok(())).expect("write");
    }

    #[test]
    fn a_second_row_group_reserves_the_buffer_toward_the_target_once() {
        let target = 4 << 20;
        let mut e = encoder(Some(target));
        rows(&mut e, 100);
        rows(&mut e, 1);
        // One row group spliced: room for it alone, nowhere near the target.
        assert!(capacity(&e) < target / 2);
        rows(&mut e, 100);
        // The second: room for the whole target, so the file never grows by doubling.
        let reserved = capacity(&e);
        assert!(reserved >= target, "{reserved} bytes reserved");
        rows(&mut e, 300);
        assert_eq!(capacity(&e), reserved, "no growth below the target");
        let FileOut::Memory(bytes) = e.finish().expect("finish") else {
            panic!("an in-memory file came back streamed")
        };
        assert!(!bytes.is_empty());
    }

    #[test]
    fn the_size_counts_a_closed_row_group_not_yet_spliced() {
        // A full row group is closed and waits to be spliced while the next batch is
        // encoded: the file's size must count it, or a file is closed at the target size a
        // row group late.
        let mut e = encoder(None);
        rows(&mut e, 100);
        assert!(
            e.pending.is_some(),
            "the closed row group waits for the next batch"
        );
        let closed = e.size();
        let FileOut::Memory(bytes) = e.finish().expect("finish") else {
            panic!("an in-memory file came back streamed")
        };
        // The magic number and the row group's column chunks (the page index and footer
        // come at the end).
        let meta = parquet::file::reader::FileReader::metadata(
            &parquet::file::serialized_reader::SerializedFileReader::new(bytes::Bytes::from(bytes))
                .expect("a Parquet file"),
        )
        .clone();
        assert_eq!(meta.num_row_groups(), 1);
        let group = usize::try_from(meta.row_group(0).compressed_size()).expect("a size");
        assert_eq!(closed, 4 + group);
    }

    #[test]
    fn the_reservation_is_capped_and_needs_a_hint() {
        let mut huge = encoder(Some(usize::MAX));
        rows(&mut huge, 250);
        assert!(capacity(&huge) <= MAX_TARGET_RESERVE + (1 << 20));
        let mut none = encoder(None);
        rows(&mut none, 250);
        assert!(capacity(&none) < 1 << 20);
    }
}
