//! Reading checkpoint files: classic and multi-part Parquet, UUID-named V2 checkpoints in
//! JSON or Parquet, and their sidecar files.

use std::ops::Range;
use std::panic::{AssertUnwindSafe, catch_unwind};

use alluvium_storage::{FileLocation, ObjectMeta, ObjectStore, StorePath};
use arrow_array::{Array, RecordBatch};
use bytes::Bytes;
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder,
};
use parquet::file::metadata::ParquetMetaData;
use rayon::prelude::*;

use std::marker::PhantomData;

use super::columns::{BoolCol, IntCol, MapCol, StrCol, StrListCol, StructCol};
use super::layout::{Described, Kind, Presence, Spec};
use super::parsed_values::{partition_text, struct_json};
use super::schema::{PARTITION_VALUES_PARSED, STATS_PARSED};
use super::thrift_check;
use crate::actions::*;
use crate::commit::decode_commit;
use crate::file_columns::{AddChunk, AddFields, Extras};
use crate::file_set::KeyHasher;
use crate::log_path::{CheckpointFormat, CheckpointKind, DELTA_LOG_DIR, SIDECAR_DIR, Version};
use crate::{LogError, Result};

/// Top-level columns of a checkpoint that carry actions.
const ACTION_COLUMNS: &[&str] = &[
    ADD,
    REMOVE,
    METADATA,
    PROTOCOL,
    TXN,
    DOMAIN_METADATA,
    CHECKPOINT_METADATA,
    SIDECAR,
];

/// Rows per decoded batch: large batches amortize per-batch work on big checkpoints. A row
/// group of fewer rows is read in one batch of its own size: the decoder reserves level and
/// value buffers for a whole batch in every projected column, which for a small checkpoint
/// (52 leaf columns, 100 rows) was megabytes zeroed and faulted in for kilobytes of data.
const BATCH_SIZE: usize = 32 * 1024;

/// The smallest checkpoint file whose strings are read as views ([`with_string_views`]).
/// Views save one copy of every string, which pays on large files; the price is a second
/// conversion of the Parquet schema to Arrow's (about as long as decoding the footer of a
/// small checkpoint), which is most of a small file's decoding time.
const STRING_VIEWS_MIN_BYTES: usize = 256 * 1024;

/// The files of one complete checkpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointFiles {
    /// The checkpoint's version.
    pub version: Version,
    /// Its naming scheme.
    pub kind: CheckpointKind,
    /// The files (one, or every part in order).
    pub files: Vec<ObjectMeta>,
}

/// Receives the actions of a checkpoint in chunks, in file order.
///
/// Streaming keeps a load's peak memory at the table state plus a few row groups, instead
/// of the state plus every decoded action of the checkpoint.
pub trait ActionSink {
    /// About `rows` more actions are coming (a hint for reserving room).
    fn expect(&mut self, rows: usize) {
        let _ = rows;
    }

    /// Takes the next chunk of actions.
    ///
    /// # Errors
    /// Whatever the sink refuses; reading stops at the first error.
    fn accept(&mut self, actions: Vec<Action>) -> Result<()>;

    /// The hasher of the sink's file keys, when it has keys to hash: the decoding threads
    /// then hash each file action they decode and hand the hashes over with the chunk
    /// ([`ActionSink::accept_hashed`]), so the sink's own thread, which applies the chunks
    /// in order and is a load's serial step, only looks the keys up.
    fn key_hasher(&self) -> Option<KeyHasher> {
        None
    }

    /// Takes the next chunk with `hashes[i]`, [`ActionSink::key_hasher`]'s hash of
    /// `actions[i]`. The default ignores the hashes.
    ///
    /// # Errors
    /// As [`ActionSink::accept`].
    fn accept_hashed(&mut self, actions: Vec<Action>, hashes: Vec<u64>) -> Result<()> {
        let _ = hashes;
        self.accept(actions)
    }

    /// Takes the next chunk when its hasher packs adds ([`KeyHasher`]): the chunk's adds,
    /// packed on the decoding thread, and its other actions in order (never a remove, so
    /// the adds may be applied after them). The default unpacks them for
    /// [`ActionSink::accept_hashed`].
    ///
    /// # Errors
    /// As [`ActionSink::accept`].
    fn accept_packed(&mut self, adds: AddChunk, others: Vec<Action>) -> Result<()> {
        let (mut actions, mut hashes) = adds.into_actions();
        if !others.is_empty() {
            hashes.extend(others.iter().map(|_| 0));
            actions.extend(others);
        }
        self.accept_hashed(actions, hashes)
    }
}

/// A decoded chunk: its actions and, when the sink hashes keys, the hash of each (else
/// empty); or, when the sink takes adds packed, its adds packed and its other actions.
enum Decoded {
    Actions(Vec<Action>, Vec<u64>),
    Packed(AddChunk, Vec<Action>),
}

/// Hashes what `actions` holds when there is a hasher, and packs the adds when it asks for
/// that (on the decoding thread).
fn hashed(hasher: Option<&KeyHasher>, actions: Vec<Action>) -> Decoded {
    let Some(h) = hasher else {
        return Decoded::Actions(actions, Vec::new());
    };
    let hashes: Vec<u64> = actions.iter().map(|a| h.action_hash(a)).collect();
    if !h.packs_adds() {
        return Decoded::Actions(actions, hashes);
    }
    match AddChunk::pack(actions, hashes) {
        Ok((adds, others)) => Decoded::Packed(adds, others),
        Err((actions, hashes)) => Decoded::Actions(actions, hashes),
    }
}

/// Hands a decoded chunk to `sink`, with its hashes when it has them.
fn hand(sink: &mut dyn ActionSink, decoded: Decoded) -> Result<()> {
    match decoded {
        Decoded::Actions(actions, hashes) if hashes.is_empty() => sink.accept(actions),
        Decoded::Actions(actions, hashes) => sink.accept_hashed(actions, hashes),
        Decoded::Packed(adds, others) => sink.accept_packed(adds, others),
    }
}

impl ActionSink for Vec<Action> {
    fn expect(&mut self, rows: usize) {
        self.reserve(rows);
    }

    fn accept(&mut self, mut actions: Vec<Action>) -> Result<()> {
        self.append(&mut actions);
        Ok(())
    }
}

/// Decodes the actions of one Parquet checkpoint (or sidecar) file.
///
/// A panic inside the Parquet decoder (possible on hostile input in some versions of the
/// crate) is caught and reported as corruption rather than unwinding through the caller.
///
/// # Errors
/// [`LogError::CorruptCheckpoint`] naming `path` if the file is not readable Parquet or an
/// action row lacks a required field.
pub fn read_parquet_actions(path: &str, data: Bytes) -> Result<Vec<Action>> {
    let mut out = Vec::new();
    visit_parquet_actions(path, data, &mut out)?;
    Ok(out)
}

/// Streams the actions of one Parquet checkpoint (or sidecar) file into `sink`, decoding
/// row groups in parallel on rayon's current pool, a window of them at a time, and handing
/// them over in file order on the calling thread.
///
/// # Errors
/// As [`read_parquet_actions`], and whatever `sink` refuses.
pub fn visit_parquet_actions(path: &str, data: Bytes, sink: &mut dyn ActionSink) -> Result<()> {
    let views = data.len() >= STRING_VIEWS_MIN_BYTES;
    visit_parquet(path, data, sink, views)
}

/// [`read_parquet_actions`] with strings in structs read as views (`views`) or copied,
/// whatever the file's size: both must decode the same actions.
#[cfg(test)]
pub(crate) fn read_parquet_actions_as(path: &str, data: Bytes, views: bool) -> Result<Vec<Action>> {
    let mut out = Vec::new();
    visit_parquet(path, data, &mut out, views)?;
    Ok(out)
}

/// How many actions of each kind a checkpoint file holds: adds, removes, and the rest.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ActionCounts {
    pub adds: usize,
    pub removes: usize,
    pub other: usize,
}

impl std::ops::Add for ActionCounts {
    type Output = ActionCounts;

    fn add(self, o: ActionCounts) -> ActionCounts {
        ActionCounts {
            adds: self.adds + o.adds,
            removes: self.removes + o.removes,
            other: self.other + o.other,
        }
    }
}

/// Counts the actions of one Parquet checkpoint (or sidecar) file by kind: the file is
/// screened, opened and every row group decoded to Arrow as
/// [`visit_parquet_actions`] does (so a damaged page, footer or codec stream fails here as
/// it would fail a reader), and each row is counted as the kind of action the decoder
/// would make of it ([`Decoder::holds`]), without building the actions: the read-back
/// check of a file just written (SPEC.md §9), where building and dropping a million `add`
/// actions took more time than decoding them. Row groups are decoded in parallel on
/// rayon's current pool.
///
/// # Errors
/// As [`read_parquet_actions`], except for a field whose value is out of range for its
/// action (such a row is counted; a reader refuses it).
#[cfg(test)]
pub(crate) fn count_parquet_actions(path: &str, data: Bytes) -> Result<ActionCounts> {
    let len = data.len() as u64;
    count_parquet_actions_ranged(path, len, &|range: Range<u64>| match (
        usize::try_from(range.start),
        usize::try_from(range.end),
    ) {
        (Ok(start), Ok(end)) if start <= end && end <= data.len() => Ok(data.slice(start..end)),
        _ => Err(LogError::corrupt_checkpoint(
            path,
            format!("byte range {range:?} is outside the {len}-byte file"),
        )),
    })
}

/// [`count_ranged`] for the writer's tests, with their own first-read size.
#[cfg(test)]
pub(crate) mod tests_support {
    use super::*;

    pub(crate) fn count_with_guess(
        file_len: u64,
        fetch: &(dyn Fn(Range<u64>) -> Result<Bytes> + Sync),
        guess: u64,
    ) -> Result<ActionCounts> {
        count_ranged("x.parquet", file_len, fetch, guess)
    }
}

/// The footer bytes fetched first by [`count_parquet_actions_ranged`]: a checkpoint's
/// footer is a few kilobytes per row group, so one read nearly always holds it.
const FOOTER_GUESS: u64 = 256 * 1024;

/// [`count_parquet_actions`] of a file of `file_len` bytes read a range at a time through
/// `fetch` (byte offsets, end exclusive): the footer, then each row group's column chunks
/// on its own, so checking a file just written holds a few row groups in memory, never the
/// file. A file no longer than [`FOOTER_GUESS`] is read once, whole. Every page header is
/// screened before it is decoded, as for a whole file.
///
/// # Errors
/// As [`count_parquet_actions`]; a row group whose chunks lie outside the file is corrupt;
/// `fetch`'s errors are returned as they are.
pub(crate) fn count_parquet_actions_ranged(
    path: &str,
    file_len: u64,
    fetch: &(dyn Fn(Range<u64>) -> Result<Bytes> + Sync),
) -> Result<ActionCounts> {
    count_ranged(path, file_len, fetch, FOOTER_GUESS)
}

/// [`count_parquet_actions_ranged`] whose first read takes the last `guess` bytes (a test
/// makes the guess small, to read a footer that does not fit in it).
fn count_ranged(
    path: &str,
    file_len: u64,
    fetch: &(dyn Fn(Range<u64>) -> Result<Bytes> + Sync),
    guess: u64,
) -> Result<ActionCounts> {
    let corrupt = |e: &dyn std::fmt::Display| LogError::corrupt_checkpoint(path, e);
    // "PAR1", the footer's length and "PAR1" again, at least.
    if file_len < 12 {
        return Err(corrupt(&format_args!(
            "{file_len} bytes is too short for a Parquet file"
        )));
    }
    let guess = file_len.min(guess.max(8));
    let mut tail = fetch(file_len - guess..file_len)?;
    let footer_len = match tail.last_chunk::<8>() {
        Some(t) if &t[4..] == b"PAR1" => {
            u64::from(u32::from_le_bytes([t[0], t[1], t[2], t[3]])) + 8
        }
        _ => return Err(corrupt(&"no Parquet footer at the end of the file")),
    };
    if footer_len > file_len - 4 {
        return Err(corrupt(&format_args!(
            "a {footer_len}-byte footer does not fit in a {file_len}-byte file"
        )));
    }
    if footer_len > guess {
        tail = fetch(file_len - footer_len..file_len)?;
    }
    let start = file_len - tail.len() as u64;
    // A small file was read whole by the first read: its row groups come from those bytes.
    let whole = (start == 0).then(|| tail.clone());
    let footer = thrift_check::GuardedBytes::range(start, tail, file_len);
    let views = usize::try_from(file_len).is_ok_and(|n| n >= STRING_VIEWS_MIN_BYTES);
    let (metadata, masks, _) = guarded(path, || open_footer(path, &footer, views))?;
    drop(footer);
    let count = |group: usize| -> Result<ActionCounts> {
        let mut counts = ActionCounts::default();
        let (Some(mask), Some(rg)) = (
            masks.get(group).and_then(Option::as_ref),
            metadata.metadata().row_groups().get(group),
        ) else {
            return Ok(counts);
        };
        // The bytes of every column chunk of the group.
        let mut span: Option<Range<u64>> = None;
        for c in rg.columns() {
            let (begin, size) = c.byte_range();
            let end = begin
                .checked_add(size)
                .filter(|&e| e <= file_len)
                .ok_or_else(|| {
                    corrupt(&format_args!(
                        "row group {group} has a column chunk past the end of the file"
                    ))
                })?;
            span = Some(match span {
                Some(s) => s.start.min(begin)..s.end.max(end),
                None => begin..end,
            });
        }
        let Some(span) = span else {
            return Ok(counts);
        };
        let bytes = match &whole {
            Some(all) => match (usize::try_from(span.start), usize::try_from(span.end)) {
                (Ok(a), Ok(b)) => all.slice(a..b),
                _ => fetch(span.clone())?,
            },
            None => fetch(span.clone())?,
        };
        thrift_check::check_chunk_page_headers(&bytes, span.start, rg.columns())
            .map_err(|e| corrupt(&e))?;
        let source = thrift_check::GuardedBytes::range(span.start, bytes, file_len);
        guarded(path, || {
            read_row_group_from(path, &source, &metadata, mask, group, &mut |batch| {
                counts = counts + batch_counts(batch);
                Ok(())
            })
        })?;
        Ok(counts)
    };
    // As for reading: one row group needs no pool (asking for it would start it).
    if masks.len() <= 1 {
        return (0..masks.len()).try_fold(ActionCounts::default(), |acc, g| Ok(acc + count(g)?));
    }
    (0..masks.len())
        .into_par_iter()
        .map(count)
        .try_reduce(ActionCounts::default, |a, b| Ok(a + b))
}

/// The decoder of each action column of one batch.
struct Decoders<'a> {
    add: Decoder<'a, Add>,
    remove: Decoder<'a, Remove>,
    metadata: Decoder<'a, Metadata>,
    protocol: Decoder<'a, Protocol>,
    txn: Decoder<'a, SetTransaction>,
    domain: Decoder<'a, DomainMetadata>,
    checkpoint_metadata: Decoder<'a, CheckpointMetadata>,
    sidecar: Decoder<'a, Sidecar>,
}

impl<'a> Decoders<'a> {
    fn of(batch: &'a RecordBatch) -> Self {
        Decoders {
            add: Decoder::of(batch),
            remove: Decoder::of(batch),
            metadata: Decoder::of(batch),
            protocol: Decoder::of(batch),
            txn: Decoder::of(batch),
            domain: Decoder::of(batch),
            checkpoint_metadata: Decoder::of(batch),
            sidecar: Decoder::of(batch),
        }
    }

    /// Pushes the action in row `i` onto `out` when it is of a kind other than `add` and
    /// `remove`; whether there was one.
    fn push_other(&self, path: &str, i: usize, out: &mut Vec<Action>) -> Result<bool> {
        Ok(self.metadata.push(path, i, out)?
            || self.protocol.push(path, i, out)?
            || self.txn.push(path, i, out)?
            || self.domain.push(path, i, out)?
            || self.checkpoint_metadata.push(path, i, out)?
            || self.sidecar.push(path, i, out)?)
    }

    /// Whether row `i` holds an action of a kind other than `add` and `remove`.
    fn holds_other(&self, i: usize) -> bool {
        self.metadata.holds(i)
            || self.protocol.holds(i)
            || self.txn.holds(i)
            || self.domain.holds(i)
            || self.checkpoint_metadata.holds(i)
            || self.sidecar.holds(i)
    }
}

/// The actions of `batch` by kind, as [`batch_actions`] would make them.
fn batch_counts(batch: &RecordBatch) -> ActionCounts {
    let d = Decoders::of(batch);
    let mut c = ActionCounts::default();
    for i in 0..batch.num_rows() {
        if d.add.holds(i) {
            c.adds += 1;
        } else if d.remove.holds(i) {
            c.removes += 1;
        } else if d.holds_other(i) {
            c.other += 1;
        }
    }
    c
}

/// [`visit_parquet_actions`], reading strings in structs as views when `views`.
fn visit_parquet(path: &str, data: Bytes, sink: &mut dyn ActionSink, views: bool) -> Result<()> {
    let (metadata, masks, rows) = guarded(path, || open_parquet(path, &data, views))?;
    sink.expect(rows);
    let groups = masks.len();
    let hasher = sink.key_hasher();
    let decode = |group: usize| match masks.get(group).and_then(Option::as_ref) {
        Some(mask) => decode_group(path, &data, &metadata, mask, group, hasher.as_ref()),
        None => Ok(hashed(hasher.as_ref(), Vec::new())),
    };
    // One row group needs no pool: asking for the pool's size would start it (threads
    // spawned for nothing, in every short-lived process reading a small checkpoint).
    let window = if groups > 1 {
        rayon::current_num_threads().max(1)
    } else {
        1
    };
    if window == 1 {
        for group in 0..groups {
            hand(sink, decode(group)?)?;
        }
        return Ok(());
    }
    pipeline(groups, window, &decode, sink)
}

/// Runs `f`, reporting a panic inside the Parquet decoder (possible on hostile input in
/// some versions of the crate) as corruption of `path` instead of unwinding.
fn guarded<T>(path: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(_) => Err(LogError::corrupt_checkpoint(
            path,
            "the Parquet decoder failed on this file",
        )),
    }
}

/// What [`open_parquet`] gives: the file's metadata, the projection of each row group, and
/// a row-count hint.
type Opened = (ArrowReaderMetadata, Vec<Option<ProjectionMask>>, usize);

/// Decodes `groups` row groups a window of `window` at a time on rayon's current pool while
/// the calling thread hands the previous window to `sink` in order, so decoding overlaps
/// with what the sink does (replay, for a load). No thread is spawned: the decoding runs as
/// tasks of the pool (the caller's own, when it runs inside `ThreadPool::install`).
///
/// Memory stays bounded by two windows of decoded row groups.
fn pipeline(
    groups: usize,
    window: usize,
    decode: &(dyn Fn(usize) -> Result<Decoded> + Sync),
    sink: &mut dyn ActionSink,
) -> Result<()> {
    let decode_window = |start: usize| -> Vec<Result<Decoded>> {
        (start..groups.min(start + window))
            .into_par_iter()
            .map(decode)
            .collect()
    };
    let mut current = decode_window(0);
    let mut start = window;
    loop {
        let mut next = Vec::new();
        let more = start < groups;
        // The body runs on this thread (the sink needs neither `Send` nor `Sync`); the
        // spawned decoding runs on the pool, and the scope waits for it before returning.
        let handed = rayon::in_place_scope(|scope| {
            if more {
                let next = &mut next;
                scope.spawn(move |_| *next = decode_window(start));
            }
            current
                .into_iter()
                .try_for_each(|decoded| hand(sink, decoded?))
        });
        handed?;
        if !more {
            return Ok(());
        }
        current = next;
        start += window;
    }
}

/// Screens and opens a Parquet checkpoint file: its metadata (strings in structs read as
/// views when `string_views`), for each row group the projection of the action columns it holds
/// values of (`None` when it holds none: nothing to decode), and a bounded row-count hint.
fn open_parquet(path: &str, data: &Bytes, string_views: bool) -> Result<Opened> {
    let opened = open_footer(
        path,
        &thrift_check::GuardedBytes::whole(data.clone()),
        string_views,
    )?;
    thrift_check::check_page_headers(data, opened.0.metadata())
        .map_err(|e| LogError::corrupt_checkpoint(path, e))?;
    Ok(opened)
}

/// [`open_parquet`] from the footer alone: `source` holds at least the file's last bytes
/// (its `FileMetaData` and the eight bytes after it). The page headers are left for the
/// caller to screen before decoding ([`thrift_check::check_chunk_page_headers`]).
fn open_footer(
    path: &str,
    source: &thrift_check::GuardedBytes,
    string_views: bool,
) -> Result<Opened> {
    use parquet::file::reader::Length;
    let corrupt = |e: &dyn std::fmt::Display| LogError::corrupt_checkpoint(path, e);
    // The parquet crate can spin or overflow its stack on hostile Thrift: screen what it
    // will decode first, and read through guarded readers.
    thrift_check::check_footer(source.bytes()).map_err(|e| corrupt(&e))?;
    // The Arrow schema an Arrow writer embeds in the footer (`ARROW:schema`) is skipped:
    // the decoders take the types the Parquet schema maps to, as they must for the
    // checkpoints of writers that embed none (Spark), and a small checkpoint's load spent
    // about a twentieth of its time verifying and converting that IPC message.
    let options = ArrowReaderOptions::default().with_skip_arrow_metadata(true);
    let metadata = ArrowReaderMetadata::load(source, options.clone()).map_err(|e| corrupt(&e))?;
    let file_len = usize::try_from(source.len()).unwrap_or(usize::MAX);
    // Strings in structs are read as views into the decoded pages instead of being copied
    // into fresh offset buffers: every path and statistics string is copied once, into the
    // action, instead of twice. Small files skip it (STRING_VIEWS_MIN_BYTES).
    let views = match string_views {
        true => with_string_views(metadata.schema()),
        false => None,
    };
    let metadata = match views {
        Some(views) => {
            ArrowReaderMetadata::try_new(metadata.metadata().clone(), options.with_schema(views))
                .unwrap_or(metadata)
        }
        None => metadata,
    };
    let roots: Vec<usize> = metadata
        .schema()
        .fields()
        .iter()
        .enumerate()
        .filter(|(_, f)| ACTION_COLUMNS.contains(&f.name().as_str()))
        .map(|(i, _)| i)
        .collect();
    if roots.is_empty() {
        return Err(corrupt(
            &"no action columns (add, remove, metaData, protocol, ...) in the file",
        ));
    }
    // The footer's row count only sizes allocations up front. Real checkpoints take tens of
    // bytes per row; capping the hint at one row per 16 bytes of file keeps a corrupt count
    // from reserving gigabytes (a failed allocation aborts the process) or a large multiple
    // of the input.
    let rows = usize::try_from(metadata.metadata().file_metadata().num_rows())
        .unwrap_or(0)
        .min(file_len / 16);
    let masks = (0..metadata.metadata().num_row_groups())
        .map(|group| {
            let held = leaves_holding_values(metadata.metadata(), &roots, group);
            (!held.is_empty()).then(|| ProjectionMask::leaves(metadata.parquet_schema(), held))
        })
        .collect();
    Ok((metadata, masks, rows))
}

/// `schema` with every `Utf8` field reached through structs alone read as `Utf8View`
/// (strings in maps and lists keep their type), or `None` when there is none.
fn with_string_views(schema: &arrow_schema::SchemaRef) -> Option<arrow_schema::SchemaRef> {
    use arrow_schema::{DataType, Field, Fields};
    fn field(f: &Field, changed: &mut bool) -> Field {
        match f.data_type() {
            DataType::Utf8 => {
                *changed = true;
                f.clone().with_data_type(DataType::Utf8View)
            }
            DataType::Struct(children) => {
                let children: Fields = children.iter().map(|c| field(c, changed)).collect();
                f.clone().with_data_type(DataType::Struct(children))
            }
            _ => f.clone(),
        }
    }
    let mut changed = false;
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .map(|f| field(f, &mut changed))
        .collect();
    changed.then(|| {
        std::sync::Arc::new(arrow_schema::Schema::new_with_metadata(
            fields,
            schema.metadata().clone(),
        ))
    })
}

/// The leaves of `roots` (top-level column indexes) worth decoding in row group `group`:
/// none of a root that holds no value there, and of the others every leaf but those known to
/// be null in every row. A leaf is known null when its chunk's statistics count as many
/// nulls as values.
///
/// * Whole roots. A checkpoint carries a column per action type, and most rows hold one
///   action, so whole action types are often absent from a row group or from the file (no
///   `remove` in a table that never deleted, no `txn`; the metadata and protocol in a row
///   group of their own, apart from the adds). Every action has a required field (`path`,
///   `id`, `minReaderVersion`, `appId`, `domain`), so a root whose leaves are all null holds
///   no action.
/// * Leaves of the roots read. Most tables never fill most of an action's optional fields
///   (`deletionVector`, `baseRowId`, `defaultRowCommitVersion`, `clusteringProvider`,
///   `metaData.name`), and a small checkpoint's decoding time goes mostly to the fixed cost
///   of each column read (a 102-row checkpoint decoded in about four fifths of the time
///   without its ten all-null leaves). The decoders read a field the batch lacks as null in
///   every row, which is what the leaf holds. Kept regardless:
///   - leaves under a list or map: their null count also counts empty lists and maps, which
///     are not null;
///   - leaves of the typed `partitionValues_parsed` and `stats_parsed`: a partition column
///     whose typed value is null is still a key of the partition values.
///
/// Chunks without statistics are read.
fn leaves_holding_values(metadata: &ParquetMetaData, roots: &[usize], group: usize) -> Vec<usize> {
    let schema = metadata.file_metadata().schema_descr();
    let under_roots = |leaf: &usize| roots.contains(&schema.get_column_root_idx(*leaf));
    let Some(g) = metadata.row_groups().get(group) else {
        return (0..schema.num_columns()).filter(under_roots).collect();
    };
    let all_null = |leaf: usize| {
        let chunk = g.column(leaf);
        chunk
            .statistics()
            .and_then(|s| s.null_count_opt())
            .is_some_and(|nulls| i64::try_from(nulls).is_ok_and(|n| n == chunk.num_values()))
    };
    let mut holds_values = vec![false; schema.root_schema().get_fields().len()];
    for leaf in 0..schema.num_columns() {
        let root = schema.get_column_root_idx(leaf);
        if !holds_values.get(root).copied().unwrap_or(true)
            && !all_null(leaf)
            && let Some(h) = holds_values.get_mut(root)
        {
            *h = true;
        }
    }
    (0..schema.num_columns())
        .filter(under_roots)
        .filter(|&leaf| {
            let root = schema.get_column_root_idx(leaf);
            if !holds_values.get(root).copied().unwrap_or(true) {
                return false;
            }
            let column = schema.column(leaf);
            let typed = column
                .path()
                .parts()
                .iter()
                .any(|p| p == PARTITION_VALUES_PARSED || p == STATS_PARSED);
            column.max_rep_level() > 0 || typed || !all_null(leaf)
        })
        .collect()
}

/// Decodes the actions of one row group.
fn decode_row_group(
    path: &str,
    data: &Bytes,
    metadata: &ArrowReaderMetadata,
    mask: &ProjectionMask,
    group: usize,
    out: &mut Vec<Action>,
) -> Result<()> {
    read_row_group(path, data, metadata, mask, group, &mut |batch| {
        batch_actions(path, batch, out)
    })
}

/// Decodes the Arrow batches of one row group of a whole file into `each`.
fn read_row_group(
    path: &str,
    data: &Bytes,
    metadata: &ArrowReaderMetadata,
    mask: &ProjectionMask,
    group: usize,
    each: &mut dyn FnMut(&RecordBatch) -> Result<()>,
) -> Result<()> {
    let source = thrift_check::GuardedBytes::whole(data.clone());
    read_row_group_from(path, &source, metadata, mask, group, each)
}

/// [`read_row_group`] from `source`, which holds at least the row group's column chunks.
fn read_row_group_from(
    path: &str,
    source: &thrift_check::GuardedBytes,
    metadata: &ArrowReaderMetadata,
    mask: &ProjectionMask,
    group: usize,
    each: &mut dyn FnMut(&RecordBatch) -> Result<()>,
) -> Result<()> {
    let corrupt = |e: &dyn std::fmt::Display| LogError::corrupt_checkpoint(path, e);
    let reader =
        ParquetRecordBatchReaderBuilder::new_with_metadata(source.clone(), metadata.clone())
            .with_projection(mask.clone())
            .with_row_groups(vec![group])
            .with_batch_size(batch_rows(metadata.metadata(), group))
            .build()
            .map_err(|e| corrupt(&e))?;
    for batch in reader {
        let batch = batch.map_err(|e| corrupt(&e))?;
        each(&batch)?;
    }
    Ok(())
}

/// Rows per batch for row group `group`: its row count when smaller than [`BATCH_SIZE`],
/// else [`BATCH_SIZE`] (also when the count is zero or negative: the footer is untrusted,
/// and a batch of one row would make a large group slow to read).
fn batch_rows(metadata: &ParquetMetaData, group: usize) -> usize {
    let rows = metadata
        .row_groups()
        .get(group)
        .map_or(0, |g| usize::try_from(g.num_rows()).unwrap_or(0));
    match rows {
        0 => BATCH_SIZE,
        rows => rows.min(BATCH_SIZE),
    }
}

/// Pre-downcast views of the fields of a described column, in the order of its description.
enum View<'a> {
    Str(StrCol<'a>),
    Int(IntCol<'a>),
    Bool(BoolCol<'a>),
    Map(MapCol<'a>),
    List(StrListCol<'a>),
    Dv(DvCols<'a>),
    Struct(Vec<View<'a>>),
}

impl View<'_> {
    /// Whether row `i` holds a value (as the decoder would read it).
    fn present(&self, i: usize) -> bool {
        match self {
            View::Str(c) => c.get(i).is_some(),
            View::Int(c) => c.get(i).is_some(),
            View::Bool(c) => c.get(i).is_some(),
            View::Map(c) => c.is_valid(i),
            View::List(c) => c.is_valid(i),
            View::Dv(c) => c.get(i).is_some(),
            View::Struct(_) => true,
        }
    }
}

/// The views of the fields `specs` describe, children of `parent`.
fn views<'a, A>(parent: &StructCol<'a>, specs: &[Spec<A>]) -> Vec<View<'a>> {
    specs
        .iter()
        .map(|spec| match &spec.kind {
            Kind::Str(..) => View::Str(parent.string(spec.name)),
            Kind::Long(..) | Kind::Int(..) => View::Int(parent.int(spec.name)),
            Kind::Bool(..) => View::Bool(parent.boolean(spec.name)),
            Kind::Map(..) => View::Map(parent.map(spec.name)),
            Kind::List(..) => View::List(parent.strings(spec.name)),
            Kind::Dv(..) => View::Dv(DvCols::of(&parent.strukt(spec.name))),
            Kind::Struct(nested) => View::Struct(views(&parent.strukt(spec.name), nested)),
        })
        .collect()
}

/// Decodes the rows of one batch that hold an action `A`, as its description says.
struct Decoder<'a, A: Described> {
    column: StructCol<'a>,
    views: Vec<View<'a>>,
    action: PhantomData<A>,
}

impl<'a, A: Described> Decoder<'a, A> {
    fn of(batch: &'a RecordBatch) -> Self {
        let column = StructCol::of(batch.column_by_name(A::COLUMN));
        let views = views(&column, A::FIELDS);
        Decoder {
            column,
            views,
            action: PhantomData,
        }
    }

    /// Whether row `i` holds an action of this kind: its column and key fields non-null.
    fn holds(&self, i: usize) -> bool {
        self.column.valid(i)
            && A::FIELDS
                .iter()
                .zip(&self.views)
                .all(|(spec, view)| spec.presence != Presence::Key || view.present(i))
    }

    /// The action in row `i`, if the row holds one ([`Decoder::holds`]).
    fn decode(&self, path: &str, i: usize) -> Result<Option<A>> {
        if !self.holds(i) {
            return Ok(None);
        }
        let mut action = A::blank();
        store(path, A::FIELDS, &self.views, &mut action, i)?;
        Ok(Some(action))
    }

    /// Pushes the action in row `i` onto `out`; whether there was one.
    fn push(&self, path: &str, i: usize, out: &mut Vec<Action>) -> Result<bool> {
        Ok(match self.decode(path, i)? {
            Some(action) => {
                out.push(action.into_action());
                true
            }
            None => false,
        })
    }
}

/// Stores the non-null fields of row `i` into `action`.
fn store<A: Described>(
    path: &str,
    specs: &[Spec<A>],
    views: &[View<'_>],
    action: &mut A,
    i: usize,
) -> Result<()> {
    for (spec, view) in specs.iter().zip(views) {
        let present = match (&spec.kind, view) {
            (Kind::Str(_, set), View::Str(c)) => c.get(i).map(|v| set(action, v)).is_some(),
            (Kind::Long(_, set), View::Int(c)) => c.get(i).map(|v| set(action, v)).is_some(),
            (Kind::Int(_, set), View::Int(c)) => match c.get(i) {
                Some(v) if !set(action, v) => {
                    return Err(LogError::corrupt_checkpoint(
                        path,
                        format!("{}.{} out of range at row {i}", A::COLUMN, spec.name),
                    ));
                }
                v => v.is_some(),
            },
            (Kind::Bool(_, set), View::Bool(c)) => c.get(i).map(|v| set(action, v)).is_some(),
            (Kind::Map(_, set), View::Map(c)) => c.get(i).map(|v| set(action, v)).is_some(),
            (Kind::List(_, set), View::List(c)) => c.get(i).map(|v| set(action, v)).is_some(),
            (Kind::Dv(_, set), View::Dv(c)) => c.get(i).map(|v| set(action, v)).is_some(),
            (Kind::Struct(nested), View::Struct(v)) => {
                store(path, nested, v, action, i)?;
                true
            }
            _ => false,
        };
        if !present && spec.presence == Presence::Required {
            return Err(LogError::corrupt_checkpoint(
                path,
                format!("{} without {} at row {i}", A::COLUMN, spec.name),
            ));
        }
    }
    Ok(())
}

/// Converts one record batch of checkpoint rows into actions.
fn batch_actions(path: &str, batch: &RecordBatch, out: &mut Vec<Action>) -> Result<()> {
    decode_rows(path, &Decoders::of(batch), batch.num_rows(), out)
}

/// Converts the first `rows` rows of a batch, through its decoders `d`, into actions.
fn decode_rows(path: &str, d: &Decoders<'_>, rows: usize, out: &mut Vec<Action>) -> Result<()> {
    // The typed columns stand in for the JSON ones when a writer left those out.
    let add_pv = d.add.column.map(super::layout::add_field::PARTITION_VALUES);
    let add_pv_parsed = d.add.column.strukt(PARTITION_VALUES_PARSED);
    let add_stats_parsed = d.add.column.strukt(STATS_PARSED);

    for i in 0..rows {
        if let Some(mut a) = d.add.decode(path, i)? {
            if !add_pv.is_valid(i) {
                a.partition_values = parsed_partition_values(&add_pv_parsed, i);
            }
            if a.stats.is_none() && add_stats_parsed.valid(i) {
                a.stats = add_stats_parsed
                    .0
                    .map(|s| serde_json::Value::Object(struct_json(s, i)).to_string());
            }
            out.push(Action::Add(a));
            continue;
        }
        let _found = d.remove.push(path, i, out)? || d.push_other(path, i, out)?;
    }
    Ok(())
}

/// The `add` columns of one batch, read straight into an [`AddChunk`]: a load of a
/// million-file checkpoint then builds (and frees) no `Add`, no path and no statistics
/// string per file, only the chunk's arenas. What a row decodes to is what [`decode_rows`]
/// makes of it, field for field (the tests compare the two on every kind of field).
struct AddCols<'a> {
    path: StrCol<'a>,
    partition_values: MapCol<'a>,
    size: IntCol<'a>,
    modification_time: IntCol<'a>,
    data_change: BoolCol<'a>,
    tags: MapCol<'a>,
    deletion_vector: DvCols<'a>,
    base_row_id: IntCol<'a>,
    default_row_commit_version: IntCol<'a>,
    clustering_provider: StrCol<'a>,
    stats: StrCol<'a>,
    partition_values_parsed: StructCol<'a>,
    stats_parsed: StructCol<'a>,
}

impl<'a> AddCols<'a> {
    fn of(add: &StructCol<'a>) -> Self {
        use super::layout::add_field::*;
        AddCols {
            path: add.string(PATH),
            partition_values: add.map(PARTITION_VALUES),
            size: add.int(SIZE),
            modification_time: add.int(MODIFICATION_TIME),
            data_change: add.boolean(DATA_CHANGE),
            tags: add.map(TAGS),
            deletion_vector: DvCols::of(&add.strukt(DELETION_VECTOR)),
            base_row_id: add.int(BASE_ROW_ID),
            default_row_commit_version: add.int(DEFAULT_ROW_COMMIT_VERSION),
            clustering_provider: add.string(CLUSTERING_PROVIDER),
            stats: add.string(STATS),
            partition_values_parsed: add.strukt(PARTITION_VALUES_PARSED),
            stats_parsed: add.strukt(STATS_PARSED),
        }
    }

    /// Packs the add of row `i`, a row that holds one ([`Decoder::holds`]), into `chunk`
    /// under its key hash.
    fn pack(&self, path: &str, i: usize, hasher: &KeyHasher, chunk: &mut AddChunk) -> Result<()> {
        let Some(size) = self.size.get(i) else {
            return Err(LogError::corrupt_checkpoint(
                path,
                format!("{ADD} without size at row {i}"),
            ));
        };
        let parsed_stats;
        let stats = match self.stats.get(i) {
            Some(s) => Some(s),
            None if self.stats_parsed.valid(i) => {
                parsed_stats = self
                    .stats_parsed
                    .0
                    .map(|s| serde_json::Value::Object(struct_json(s, i)).to_string());
                parsed_stats.as_deref()
            }
            None => None,
        };
        let partition = if self.partition_values.is_valid(i) {
            chunk.partition_code(
                |m| self.partition_values.holds_exactly(i, m),
                || self.partition_values.get(i).unwrap_or_default(),
            )
        } else {
            chunk.partition_code(
                |_| false,
                || parsed_partition_values(&self.partition_values_parsed, i),
            )
        };
        let tags = self.tags.get(i);
        let deletion_vector = self.deletion_vector.get(i);
        let base_row_id = self.base_row_id.get(i);
        let default_row_commit_version = self.default_row_commit_version.get(i);
        let clustering_provider = self.clustering_provider.get(i);
        // Most files have none of these: build (and drop) no side-table entry for them.
        let extras = match (
            &tags,
            &deletion_vector,
            base_row_id,
            default_row_commit_version,
            clustering_provider,
        ) {
            (None, None, None, None, None) => None,
            _ => Extras {
                tags,
                deletion_vector,
                base_row_id,
                default_row_commit_version,
                clustering_provider: clustering_provider.map(str::to_string),
            }
            .nonempty(),
        };
        let file = self.path.get(i).unwrap_or_default();
        let dv = extras.as_ref().and_then(|e| e.deletion_vector.as_ref());
        let hash = hasher.file_hash(file, dv);
        let fields = AddFields {
            path: file,
            size,
            modification_time: self.modification_time.get(i).unwrap_or(0),
            data_change: self.data_change.get(i).unwrap_or(false),
            stats,
            partition,
            extras,
        };
        if chunk.push_fields(hash, fields) {
            Ok(())
        } else {
            Err(LogError::corrupt_checkpoint(
                path,
                "more adds in one row group than a table state can hold",
            ))
        }
    }
}

/// A row group decoded for a sink whose hasher packs adds ([`KeyHasher::packs_adds`]).
enum Packing {
    /// The adds packed straight from the Arrow columns, and the other actions in order: no
    /// remove so far, so the adds may be applied after the others.
    Packed(AddChunk, Vec<Action>),
    /// Every action in order: the group holds a remove, whose order among the adds matters.
    Plain(Vec<Action>),
}

impl Packing {
    fn new() -> Self {
        Packing::Packed(AddChunk::default(), Vec::new())
    }

    /// Decodes one batch of the group.
    fn batch(&mut self, path: &str, batch: &RecordBatch, hasher: &KeyHasher) -> Result<()> {
        let d = Decoders::of(batch);
        let rows = batch.num_rows();
        if let Packing::Packed(adds, others) = self
            && (0..rows).any(|i| d.remove.holds(i) && !d.add.holds(i))
        {
            // What was packed holds no remove, so its adds may go before its others.
            let (mut actions, _) = std::mem::take(adds).into_actions();
            actions.append(others);
            *self = Packing::Plain(actions);
        }
        match self {
            Packing::Plain(out) => decode_rows(path, &d, rows, out),
            Packing::Packed(adds, others) => {
                adds.reserve(rows);
                let cols = AddCols::of(&d.add.column);
                for i in 0..rows {
                    if d.add.holds(i) {
                        cols.pack(path, i, hasher, adds)?;
                    } else {
                        d.push_other(path, i, others)?;
                    }
                }
                Ok(())
            }
        }
    }

    /// The decoded group, as the sink takes it.
    fn finish(self, hasher: &KeyHasher) -> Decoded {
        match self {
            Packing::Packed(adds, others) if !adds.is_empty() => Decoded::Packed(adds, others),
            Packing::Packed(_, actions) | Packing::Plain(actions) => hashed(Some(hasher), actions),
        }
    }
}

/// Decodes row group `group` (projected by `mask`) for `hasher`'s sink: packed when it
/// packs adds, else as actions with their hashes (if it has a hasher).
fn decode_group(
    path: &str,
    data: &Bytes,
    metadata: &ArrowReaderMetadata,
    mask: &ProjectionMask,
    group: usize,
    hasher: Option<&KeyHasher>,
) -> Result<Decoded> {
    guarded(path, || match hasher.filter(|h| h.packs_adds()) {
        Some(h) => {
            let mut packing = Packing::new();
            read_row_group(path, data, metadata, mask, group, &mut |batch| {
                packing.batch(path, batch, h)
            })?;
            Ok(packing.finish(h))
        }
        None => {
            let mut out = Vec::new();
            decode_row_group(path, data, metadata, mask, group, &mut out)?;
            Ok(hashed(hasher, out))
        }
    })
}

/// Decodes a whole Parquet checkpoint file on this thread for `hasher`'s sink (one file of
/// several decoded in parallel): each row group as [`decode_group`] decodes it, in order.
fn decode_parquet(path: &str, data: Bytes, hasher: &KeyHasher) -> Result<Vec<Decoded>> {
    let views = data.len() >= STRING_VIEWS_MIN_BYTES;
    let (metadata, masks, _) = guarded(path, || open_parquet(path, &data, views))?;
    masks
        .iter()
        .enumerate()
        .filter_map(|(group, mask)| Some((group, mask.as_ref()?)))
        .map(|(group, mask)| decode_group(path, &data, &metadata, mask, group, Some(hasher)))
        .collect()
}

fn parsed_partition_values(parsed: &StructCol<'_>, i: usize) -> OptStringMap {
    let Some(s) = parsed.0.filter(|s| s.is_valid(i)) else {
        return OptStringMap::default();
    };
    s.fields()
        .iter()
        .zip(s.columns())
        .map(|(f, c)| (f.name().clone(), partition_text(c, i)))
        .collect()
}

/// Columns of a deletion-vector descriptor struct.
struct DvCols<'a> {
    s: StructCol<'a>,
    storage: StrCol<'a>,
    path: StrCol<'a>,
    offset: IntCol<'a>,
    size: IntCol<'a>,
    cardinality: IntCol<'a>,
}

impl<'a> DvCols<'a> {
    fn of(s: &StructCol<'a>) -> Self {
        DvCols {
            s: StructCol(s.0),
            storage: s.string("storageType"),
            path: s.string("pathOrInlineDv"),
            offset: s.int("offset"),
            size: s.int("sizeInBytes"),
            cardinality: s.int("cardinality"),
        }
    }

    fn get(&self, i: usize) -> Option<DeletionVectorDescriptor> {
        if !self.s.valid(i) {
            return None;
        }
        Some(DeletionVectorDescriptor {
            storage_type: self.storage.get(i)?.to_string(),
            path_or_inline_dv: self.path.get(i)?.to_string(),
            offset: self.offset.get(i).and_then(|o| i32::try_from(o).ok()),
            size_in_bytes: i32::try_from(self.size.get(i)?).ok()?,
            cardinality: self.cardinality.get(i)?,
        })
    }
}

/// Reads one checkpoint file whole (a part, a V2 main file, or a sidecar).
fn read_file(location: &FileLocation, data: Bytes, json: bool) -> Result<Vec<Action>> {
    let shown = location.to_string();
    if data.is_empty() {
        return Err(LogError::corrupt_checkpoint(&shown, "empty file"));
    }
    if json {
        decode_commit(&shown, &data)
    } else {
        read_parquet_actions(&shown, data)
    }
}

/// Streams one checkpoint file into `sink`.
fn visit_file(
    store: &dyn ObjectStore,
    location: &FileLocation,
    json: bool,
    sink: &mut dyn ActionSink,
) -> Result<()> {
    let data = store.get_location(location)?;
    if json || data.is_empty() {
        return sink.accept(read_file(location, data, json)?);
    }
    visit_parquet_actions(&location.to_string(), data, sink)
}

/// Streams several files into `sink` in order: one file alone is decoded row group by row
/// group in parallel; several are decoded in parallel a window at a time, so memory stays
/// bounded by a few files, not by the checkpoint. `sizes` is the files' bytes in all, when
/// known: the sink is told once, before the first actions, how many rows they scale to
/// ([`expected_rows`]).
fn visit_files(
    store: &dyn ObjectStore,
    files: &[(FileLocation, bool)],
    sizes: Option<u64>,
    sink: &mut dyn ActionSink,
) -> Result<()> {
    if let [(location, json)] = files {
        return visit_file(store, location, *json, sink);
    }
    let window = rayon::current_num_threads().max(1);
    let hasher = sink.key_hasher();
    let mut first = true;
    for group in files.chunks(window) {
        let decoded: Vec<Result<(Vec<Decoded>, usize)>> = group
            .par_iter()
            .map(|(location, json)| {
                let data = store.get_location(location)?;
                let bytes = data.len();
                let chunks = match hasher.as_ref().filter(|h| h.packs_adds()) {
                    Some(h) if !*json && !data.is_empty() => {
                        decode_parquet(&location.to_string(), data, h)?
                    }
                    _ => vec![hashed(hasher.as_ref(), read_file(location, data, *json)?)],
                };
                Ok((chunks, bytes))
            })
            .collect();
        let decoded: Vec<(Vec<Decoded>, usize)> = decoded.into_iter().collect::<Result<_>>()?;
        if std::mem::take(&mut first) {
            sink.expect(expected_rows(&decoded, sizes, files.len()));
        }
        for (chunks, _) in decoded {
            for chunk in chunks {
                hand(sink, chunk)?;
            }
        }
    }
    Ok(())
}

/// The rows a multi-file checkpoint of `files` files holds in all, estimated from its first
/// files (`seen`: each file's chunks and bytes) and the bytes of all of them (`total`, when
/// known): the rows seen, scaled by the bytes. Its parts are written alike, so the estimate
/// is close; the sink reserves for it once instead of doubling its columns part after part,
/// and gives back what a high estimate left unused when it freezes.
///
/// A sidecar's size comes from the table's bytes and may lie: the estimate never exceeds
/// the most rows one file seen holds times the number of files, so a lie cannot reserve
/// more than real parts of that many files would need (a failed allocation aborts).
fn expected_rows(seen: &[(Vec<Decoded>, usize)], total: Option<u64>, files: usize) -> usize {
    let per_file: Vec<usize> = seen
        .iter()
        .map(|(chunks, _)| {
            chunks
                .iter()
                .map(|c| match c {
                    Decoded::Actions(actions, _) => actions.len(),
                    Decoded::Packed(adds, others) => adds.len() + others.len(),
                })
                .sum()
        })
        .collect();
    let rows: usize = per_file.iter().sum();
    let bytes: usize = seen.iter().map(|(_, b)| *b).sum();
    let most = per_file
        .iter()
        .max()
        .copied()
        .unwrap_or(0)
        .saturating_mul(files);
    match total.and_then(|t| usize::try_from(t).ok()) {
        Some(total) if bytes > 0 && total > bytes => {
            let scaled = (rows as f64) * (total as f64) / (bytes as f64);
            (scaled as usize).clamp(rows, most.max(rows))
        }
        _ => rows,
    }
}

/// Passes everything but sidecar actions on, and keeps those.
struct SidecarSplitter<'a> {
    inner: &'a mut dyn ActionSink,
    sidecars: Vec<Sidecar>,
}

impl ActionSink for SidecarSplitter<'_> {
    fn expect(&mut self, rows: usize) {
        self.inner.expect(rows);
    }

    fn accept(&mut self, mut actions: Vec<Action>) -> Result<()> {
        if actions.iter().any(|a| matches!(a, Action::Sidecar(_))) {
            actions.retain(|a| {
                if let Action::Sidecar(s) = a {
                    self.sidecars.push(s.clone());
                    false
                } else {
                    true
                }
            });
        }
        self.inner.accept(actions)
    }

    fn key_hasher(&self) -> Option<KeyHasher> {
        self.inner.key_hasher()
    }

    fn accept_packed(&mut self, adds: AddChunk, mut others: Vec<Action>) -> Result<()> {
        others.retain(|a| {
            if let Action::Sidecar(s) = a {
                self.sidecars.push(s.clone());
                false
            } else {
                true
            }
        });
        self.inner.accept_packed(adds, others)
    }

    fn accept_hashed(&mut self, actions: Vec<Action>, hashes: Vec<u64>) -> Result<()> {
        if !actions.iter().any(|a| matches!(a, Action::Sidecar(_))) {
            return self.inner.accept_hashed(actions, hashes);
        }
        let (actions, hashes): (Vec<Action>, Vec<u64>) = actions
            .into_iter()
            .zip(hashes)
            .filter(|(a, _)| match a {
                Action::Sidecar(s) => {
                    self.sidecars.push(s.clone());
                    false
                }
                _ => true,
            })
            .unzip();
        self.inner.accept_hashed(actions, hashes)
    }
}

/// Keeps only file actions: all a sidecar may contribute.
struct FileActionsOnly<'a>(&'a mut dyn ActionSink);

impl ActionSink for FileActionsOnly<'_> {
    fn expect(&mut self, rows: usize) {
        self.0.expect(rows);
    }

    fn accept(&mut self, mut actions: Vec<Action>) -> Result<()> {
        actions.retain(|a| matches!(a, Action::Add(_) | Action::Remove(_)));
        self.0.accept(actions)
    }

    fn key_hasher(&self) -> Option<KeyHasher> {
        self.0.key_hasher()
    }

    fn accept_hashed(&mut self, actions: Vec<Action>, hashes: Vec<u64>) -> Result<()> {
        let (actions, hashes): (Vec<Action>, Vec<u64>) = actions
            .into_iter()
            .zip(hashes)
            .filter(|(a, _)| matches!(a, Action::Add(_) | Action::Remove(_)))
            .unzip();
        self.0.accept_hashed(actions, hashes)
    }

    fn accept_packed(&mut self, adds: AddChunk, _others: Vec<Action>) -> Result<()> {
        self.0.accept_packed(adds, Vec::new())
    }
}

/// Streams every action of a complete checkpoint into `sink`: its parts (or main file),
/// then the file actions of its sidecars. Sidecar actions themselves are not passed on.
///
/// # Errors
/// [`LogError::CorruptCheckpoint`] (or a storage error) naming the first unreadable file;
/// callers fall back to an older checkpoint. The sink may have received some actions by
/// then: discard what it built.
pub fn visit_checkpoint(
    store: &dyn ObjectStore,
    checkpoint: &CheckpointFiles,
    sink: &mut dyn ActionSink,
) -> Result<()> {
    let json = matches!(
        checkpoint.kind,
        CheckpointKind::Uuid {
            format: CheckpointFormat::Json,
            ..
        }
    );
    let files: Vec<(FileLocation, bool)> = checkpoint
        .files
        .iter()
        .map(|m| (FileLocation::Table(m.path.clone()), json))
        .collect();
    let mut splitter = SidecarSplitter {
        inner: sink,
        sidecars: Vec::new(),
    };
    let sizes = checkpoint.files.iter().map(|m| m.size).sum();
    visit_files(store, &files, Some(sizes), &mut splitter)?;
    let sidecars = std::mem::take(&mut splitter.sidecars);
    if sidecars.is_empty() {
        return Ok(());
    }
    let main = checkpoint
        .files
        .first()
        .map(|m| m.path.to_string())
        .unwrap_or_default();
    let files: Vec<(FileLocation, bool)> = sidecars
        .iter()
        .map(|s| sidecar_location(&main, s))
        .collect::<Result<_>>()?;
    let sizes = sidecars
        .iter()
        .map(|s| u64::try_from(s.size_in_bytes).ok())
        .sum::<Option<u64>>();
    visit_files(store, &files, sizes, &mut FileActionsOnly(sink))
}

/// Reads all actions of a complete checkpoint, including the file actions of its sidecars.
///
/// # Errors
/// As [`visit_checkpoint`].
pub fn read_checkpoint(
    store: &dyn ObjectStore,
    checkpoint: &CheckpointFiles,
) -> Result<Vec<Action>> {
    let mut actions = Vec::new();
    visit_checkpoint(store, checkpoint, &mut actions)?;
    Ok(actions)
}

/// Where a sidecar lives, and whether it is JSON.
fn sidecar_location(main: &str, sidecar: &Sidecar) -> Result<(FileLocation, bool)> {
    let decoded = crate::path::percent_decode(&sidecar.path)
        .map_err(|e| LogError::corrupt_checkpoint(main, e))?;
    let json = decoded.ends_with(".json");
    let location = if crate::path::is_absolute(&decoded) {
        FileLocation::External(decoded)
    } else {
        let rel = format!("{DELTA_LOG_DIR}/{SIDECAR_DIR}/{decoded}");
        FileLocation::Table(StorePath::parse(rel).map_err(|e| {
            LogError::corrupt_checkpoint(main, format!("sidecar {}: {e}", sidecar.path))
        })?)
    };
    Ok((location, json))
}

#[cfg(test)]
pub(super) mod tests {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Int64Array, StringArray, StructArray};
    use arrow_schema::{DataType, Field, Schema};
    use parquet::arrow::ArrowWriter;

    use super::*;
    use crate::checkpoint::thrift_check::MAX_SCHEMA_DEPTH;

    // A Thrift compact-protocol writer, just enough for hand-built Parquet files.
    fn varint(out: &mut Vec<u8>, mut v: u64) {
        loop {
            let b = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                out.push(b);
                return;
            }
            out.push(b | 0x80);
        }
    }

    fn zigzag(v: i64) -> u64 {
        ((v << 1) ^ (v >> 63)) as u64
    }

    fn list(elem_type: u8, elems: &[Vec<u8>]) -> Vec<u8> {
        let mut out = Vec::new();
        if elems.len() < 15 {
            out.push(((elems.len() as u8) << 4) | elem_type);
        } else {
            out.push(0xf0 | elem_type);
            varint(&mut out, elems.len() as u64);
        }
        elems.iter().for_each(|e| out.extend_from_slice(e));
        out
    }

    fn binary(s: &str) -> Vec<u8> {
        let mut out = Vec::new();
        varint(&mut out, s.len() as u64);
        out.extend_from_slice(s.as_bytes());
        out
    }

    #[derive(Default)]
    struct ThriftStruct {
        out: Vec<u8>,
        last: i16,
    }

    impl ThriftStruct {
        fn field(mut self, id: i16, ty: u8, value: &[u8]) -> Self {
            self.out.push((((id - self.last) as u8) << 4) | ty);
            self.last = id;
            self.out.extend_from_slice(value);
            self
        }

        fn int(self, id: i16, ty: u8, v: i64) -> Self {
            let mut value = Vec::new();
            varint(&mut value, zigzag(v));
            self.field(id, ty, &value)
        }

        /// Bytes written verbatim (a hostile field with a long-form header).
        fn raw(mut self, bytes: &[u8]) -> Self {
            self.out.extend_from_slice(bytes);
            self
        }

        fn end(mut self) -> Vec<u8> {
            self.out.push(0);
            self.out
        }
    }

    const I32: u8 = 5;
    const I64: u8 = 6;
    const BINARY: u8 = 8;
    const LIST: u8 = 9;
    const STRUCT: u8 = 12;

    /// The schema elements of `groups` nested optional groups named `txn` holding an
    /// optional INT32 leaf (just the leaf, named `txn`, when `groups` is 0).
    fn nested_schema(groups: usize) -> Vec<Vec<u8>> {
        let root = ThriftStruct::default()
            .field(4, BINARY, &binary("schema"))
            .int(5, I32, 1)
            .end();
        let group = ThriftStruct::default()
            .int(3, I32, 1)
            .field(4, BINARY, &binary("txn"))
            .int(5, I32, 1)
            .end();
        let leaf = ThriftStruct::default()
            .int(1, I32, 1)
            .int(3, I32, 1)
            .field(4, BINARY, &binary("txn"))
            .end();
        let mut schema = vec![root];
        schema.extend(std::iter::repeat_n(group, groups));
        schema.push(leaf);
        schema
    }

    /// A Parquet file with one optional INT32 column `txn` whose single column chunk is
    /// `page` (at offset 4); `footer_extra` is appended to the `FileMetaData` fields.
    fn parquet_file(page: &[u8], num_rows: i64, footer_extra: &[u8]) -> Bytes {
        parquet_file_with_schema(&nested_schema(0), page, num_rows, footer_extra)
    }

    fn parquet_file_with_schema(
        schema: &[Vec<u8>],
        page: &[u8],
        num_rows: i64,
        footer_extra: &[u8],
    ) -> Bytes {
        let len = page.len() as i64;
        let meta = ThriftStruct::default()
            .int(1, I32, 1)
            .field(2, LIST, &list(I32, &[vec![0]]))
            .field(3, LIST, &list(BINARY, &[binary("txn")]))
            .int(4, I32, 0)
            .int(5, I64, 1)
            .int(6, I64, len)
            .int(7, I64, len)
            .int(9, I64, 4)
            .end();
        let chunk = ThriftStruct::default()
            .int(2, I64, 4)
            .field(3, STRUCT, &meta)
            .end();
        let row_groups: Vec<Vec<u8>> = if page.is_empty() {
            Vec::new()
        } else {
            let columns = list(STRUCT, &[chunk]);
            vec![
                ThriftStruct::default()
                    .field(1, LIST, &columns)
                    .int(2, I64, len)
                    .int(3, I64, 1)
                    .end(),
            ]
        };
        let footer = ThriftStruct::default()
            .int(1, I32, 1)
            .field(2, LIST, &list(STRUCT, schema))
            .int(3, I64, num_rows)
            .field(4, LIST, &list(STRUCT, &row_groups))
            .raw(footer_extra)
            .end();
        let mut file = b"PAR1".to_vec();
        file.extend_from_slice(page);
        file.extend_from_slice(&footer);
        file.extend_from_slice(&(footer.len() as u32).to_le_bytes());
        file.extend_from_slice(b"PAR1");
        Bytes::from(file)
    }

    fn corrupt_reason(r: Result<Vec<Action>>) -> String {
        match r {
            Err(LogError::CorruptCheckpoint { reason, .. }) => reason,
            other => panic!("expected a corrupt checkpoint, got {other:?}"),
        }
    }

    /// Found by the `checkpoint_parquet` fuzz target (a timeout): an unknown page-header
    /// field holding a list of 242 million UUIDs made the parquet crate skip past the end of
    /// the file element by element, for seconds to minutes.
    #[test]
    fn fuzz_regression_page_header_list_past_eof_is_refused() {
        // Field 9 (unknown), long-form header: list<uuid> of 2^31 - 1 elements.
        let hostile = [0x09, 0x12, 0xfd, 0xff, 0xff, 0xff, 0xff, 0x07];
        let page = ThriftStruct::default()
            .int(1, I32, 0)
            .int(2, I32, 0)
            .int(3, I32, 0)
            .raw(&hostile)
            .end();
        let file = parquet_file(&page, 1, &[]);
        assert!(corrupt_reason(read_parquet_actions("x.parquet", file)).contains("page header"));
    }

    /// Found by the `checkpoint_parquet` fuzz target (a second timeout, after a first,
    /// type-driven version of the Thrift screen): the parquet crate reads page-header field
    /// 6 as a struct whatever its declared type, so bytes declared as a binary value held,
    /// for the parquet crate, a list of 2^31 - 1 UUIDs that it skipped past the end of the
    /// file. The screen now refuses the mistyped field, and the guarded reader alone stops
    /// the skip at the end of the file.
    #[test]
    fn fuzz_regression_page_header_skip_past_eof_fails_fast() {
        // Field 6 declared binary of 25 bytes; read as a struct, its length byte is the
        // header of a list field and the payload the list's header.
        let mut field6 = vec![0x19, 0xfd, 0xff, 0xff, 0xff, 0xff, 0x07];
        field6.resize(26, 0);
        let page = ThriftStruct::default()
            .int(1, I32, 0)
            .int(2, I32, 0)
            .int(3, I32, 0)
            .field(6, BINARY, &field6)
            .end();
        let file = parquet_file(&page, 1, &[]);
        assert!(
            corrupt_reason(read_parquet_actions("x.parquet", file.clone())).contains("field 6")
        );
        let reader =
            ParquetRecordBatchReaderBuilder::try_new(thrift_check::GuardedBytes::whole(file))
                .unwrap()
                .build()
                .unwrap();
        let error = reader.into_iter().find_map(|b| b.err()).unwrap();
        assert!(error.to_string().contains("end of the file"), "{error}");
    }

    /// Found by the `checkpoint_parquet` fuzz target (a third timeout): footer field 1
    /// (`version`) declared as a UUID, which a type-driven walk skips 16 bytes for while
    /// the parquet crate reads one varint and then, further on, skips a list of 2^31 - 1
    /// booleans without reading them.
    #[test]
    fn fuzz_regression_mistyped_footer_field_is_refused() {
        let file = Bytes::from_static(&[
            0x50, 0x41, 0x52, 0x31, 0x1d, 0x02, 0x19, 0x2c, 0x48, 0x06, 0x73, 0x63, 0x68, 0x65,
            0x6d, 0x61, 0x15, 0x02, 0x00, 0x15, 0x02, 0x25, 0x02, 0x18, 0x03, 0x74, 0x78, 0x6e,
            0x00, 0x16, 0x00, 0x19, 0x0c, 0x09, 0xc8, 0x01, 0xf2, 0xff, 0xff, 0xff, 0xff, 0x07,
            0x00, 0x27, 0x00, 0x00, 0x00, 0x50, 0x41, 0x52, 0x31,
        ]);
        assert!(corrupt_reason(read_parquet_actions("x.parquet", file)).contains("field 1"));
    }

    /// Found by the `checkpoint_parquet` fuzz target (a fourth timeout, 17 s on 465 bytes):
    /// a page header with an over-long varint, which the parquet crate decodes with shifts
    /// that wrap modulo 64 while an earlier screen dropped the bits past 64. The two readings
    /// then parted, and the crate skipped a huge list the screen never saw. The strict screen
    /// refuses over-long varints outright.
    #[test]
    fn fuzz_regression_overlong_varint_is_refused() {
        let file = Bytes::from_static(include_bytes!(
            "../../../fuzz/seeds/checkpoint_parquet/fuzz-found-slow-page-header-skip.parquet"
        ));
        assert!(corrupt_reason(read_parquet_actions("x.parquet", file)).contains("page header"));
    }

    #[test]
    fn footer_list_of_booleans_is_refused() {
        // Field 100 (unknown), long-form header: list<bool> of 2^31 - 1 elements, which the
        // parquet crate would skip without reading a byte.
        let hostile = [0x09, 0xc8, 0x01, 0xf2, 0xff, 0xff, 0xff, 0xff, 0x07];
        let file = parquet_file(&[], 0, &hostile);
        assert!(corrupt_reason(read_parquet_actions("x.parquet", file)).contains("footer"));
    }

    /// A footer claiming 10^12 rows made the reader reserve room for that many actions up
    /// front, and the failed allocation aborted the process (reproduced with the
    /// `checkpoint_parquet` fuzz target on a seed whose row count was edited).
    #[test]
    fn huge_row_count_is_not_preallocated() {
        let file = parquet_file(&[], 1_000_000_000_000, &[]);
        assert_eq!(read_parquet_actions("x.parquet", file).unwrap(), Vec::new());
    }

    /// 1,500 nested groups (a 15 kB file) overflowed the stack in the parquet crate's
    /// recursive reader construction (reproduced with the `checkpoint_parquet` fuzz target
    /// on a crafted input).
    #[test]
    fn deeply_nested_schema_is_refused() {
        let file = parquet_file_with_schema(&nested_schema(2_000), &[], 0, &[]);
        assert!(corrupt_reason(read_parquet_actions("x.parquet", file)).contains("deeper"));
        let file = parquet_file_with_schema(&nested_schema(MAX_SCHEMA_DEPTH), &[], 0, &[]);
        assert!(corrupt_reason(read_parquet_actions("x.parquet", file)).contains("deeper"));
    }

    #[test]
    fn schemas_at_the_depth_limit_read_on_a_small_stack() {
        // The leaf sits MAX_SCHEMA_DEPTH levels below the root. Rayon's workers, which read
        // checkpoint parts, have 2 MiB stacks.
        let file = parquet_file_with_schema(&nested_schema(MAX_SCHEMA_DEPTH - 1), &[], 0, &[]);
        let read = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || read_parquet_actions("x.parquet", file))
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(read.unwrap(), Vec::new());
    }

    /// Threads named like the test pool's (see `alluvium_storage::par::threads_named`).
    #[cfg(target_os = "linux")]
    fn pool_threads() -> usize {
        alluvium_storage::par::threads_named("ckpt-pool")
    }

    /// Decoding a checkpoint of many row groups runs on the caller's rayon pool and spawns
    /// no OS thread (an embedder bounds the engine's threads by the pool it installs).
    #[cfg(target_os = "linux")]
    #[test]
    fn decoding_runs_on_the_current_pool_and_spawns_no_thread() {
        use parquet::file::properties::WriterProperties;

        let n = 64;
        let batch = txn_batch(&(0..n as i64).collect::<Vec<_>>());
        let props = WriterProperties::builder()
            .set_max_row_group_row_count(Some(4))
            .build();
        let mut buf = Vec::new();
        let mut writer = ArrowWriter::try_new(&mut buf, batch.schema(), Some(props)).unwrap();
        writer.write(&batch).unwrap();
        writer.close().unwrap();
        let data = Bytes::from(buf);

        struct Threads(Vec<usize>, usize);
        impl ActionSink for Threads {
            fn accept(&mut self, actions: Vec<Action>) -> Result<()> {
                self.0.push(pool_threads());
                self.1 += actions.len();
                Ok(())
            }
        }
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .thread_name(|i| format!("ckpt-pool-{i}"))
            .build()
            .unwrap();
        // Pool threads name themselves once started: count only after both have.
        assert!(alluvium_storage::par::await_threads_named("ckpt-pool", 2));
        let mut seen = Threads(Vec::new(), 0);
        pool.install(|| visit_parquet_actions("x.parquet", data, &mut seen))
            .unwrap();
        assert_eq!(seen.1, n);
        assert_eq!(seen.0, vec![2; n / 4], "threads seen while decoding");

        // The control: a thread spawned from inside the pool is seen.
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let spawned = pool.install(|| std::thread::spawn(move || rx.recv()));
        assert_eq!(pool_threads(), 3);
        drop(tx);
        spawned.join().unwrap().unwrap_err();
    }

    /// A batch of one `txn` column (appId "a") per version in `versions`, as an Arrow writer
    /// would give it to a checkpoint.
    fn txn_batch(versions: &[i64]) -> RecordBatch {
        let app: ArrayRef = Arc::new(StringArray::from(vec!["a"; versions.len()]));
        let version: ArrayRef = Arc::new(Int64Array::from(versions.to_vec()));
        let txn = StructArray::from(vec![
            (Arc::new(Field::new("appId", DataType::Utf8, true)), app),
            (
                Arc::new(Field::new("version", DataType::Int64, true)),
                version,
            ),
        ]);
        let schema = Schema::new(vec![Field::new("txn", txn.data_type().clone(), true)]);
        RecordBatch::try_new(Arc::new(schema), vec![Arc::new(txn)]).unwrap()
    }

    #[test]
    fn files_written_by_the_parquet_crate_pass_the_thrift_check() {
        let batch = txn_batch(&[1, 2, 3]);
        let mut buf = Vec::new();
        let mut writer = ArrowWriter::try_new(&mut buf, batch.schema(), None).unwrap();
        writer.write(&batch).unwrap();
        writer.close().unwrap();
        let actions = read_parquet_actions("x.parquet", Bytes::from(buf)).unwrap();
        assert_eq!(actions.len(), 3);
        assert!(matches!(&actions[2], Action::Txn(t) if t.app_id == "a" && t.version == 3));
    }

    /// The Arrow schema an Arrow writer embeds is not read: a checkpoint whose
    /// `ARROW:schema` is not a valid IPC message is read by its Parquet schema, as one
    /// without it is.
    #[test]
    fn the_embedded_arrow_schema_is_not_read() {
        use parquet::arrow::arrow_writer::ArrowWriterOptions;
        use parquet::file::metadata::KeyValue;
        use parquet::file::properties::WriterProperties;

        let batch = txn_batch(&[7, 8]);
        let props = WriterProperties::builder()
            .set_key_value_metadata(Some(vec![KeyValue::new(
                "ARROW:schema".to_string(),
                "bm90IGFuIElQQyBtZXNzYWdl".to_string(),
            )]))
            .build();
        let options = ArrowWriterOptions::new()
            .with_properties(props)
            .with_skip_arrow_metadata(true);
        let mut buf = Vec::new();
        let mut writer =
            ArrowWriter::try_new_with_options(&mut buf, batch.schema(), options).unwrap();
        writer.write(&batch).unwrap();
        writer.close().unwrap();
        let actions = read_parquet_actions("x.parquet", Bytes::from(buf)).unwrap();
        assert_eq!(actions.len(), 2);
        assert!(matches!(&actions[1], Action::Txn(t) if t.app_id == "a" && t.version == 8));
    }

    /// A checkpoint of 4 rows in row groups of 2: `txn` in every row, `domainMetadata`
    /// (domain, removed) also in the rows `domains` names (a reader takes one action of a
    /// row), null elsewhere.
    fn txn_and_domains(domains: &[Option<&str>], statistics: bool) -> Bytes {
        txns_and_domains(&vec![true; domains.len()], domains, statistics)
    }

    /// 4 rows in row groups of 2: the first group holds a `txn` and a `domainMetadata`,
    /// the second no action.
    fn txn_domains_then_nothing() -> Bytes {
        txns_and_domains(
            &[true, false, false, false],
            &[None, Some("d"), None, None],
            true,
        )
    }

    /// Rows in row groups of 2: a `txn` in the rows `txns` marks, a `domainMetadata` in the
    /// rows `domains` names, null elsewhere.
    fn txns_and_domains(txns: &[bool], domains: &[Option<&str>], statistics: bool) -> Bytes {
        use arrow_array::BooleanArray;
        use arrow_buffer::NullBuffer;
        use parquet::file::properties::{EnabledStatistics, WriterProperties};

        let n = domains.len();
        let txn = StructArray::try_new(
            vec![
                Field::new("appId", DataType::Utf8, true),
                Field::new("version", DataType::Int64, true),
            ]
            .into(),
            vec![
                Arc::new(StringArray::from(
                    txns.iter().map(|t| t.then_some("a")).collect::<Vec<_>>(),
                )) as ArrayRef,
                Arc::new(Int64Array::from(
                    (0..n as i64)
                        .zip(txns)
                        .map(|(v, t)| t.then_some(v))
                        .collect::<Vec<_>>(),
                )),
            ],
            Some(NullBuffer::from(txns.to_vec())),
        )
        .unwrap();
        let present = NullBuffer::from(domains.iter().map(Option::is_some).collect::<Vec<_>>());
        let domain = StructArray::try_new(
            vec![
                Field::new("domain", DataType::Utf8, true),
                Field::new("configuration", DataType::Utf8, true),
                Field::new("removed", DataType::Boolean, true),
            ]
            .into(),
            vec![
                Arc::new(StringArray::from(domains.to_vec())) as ArrayRef,
                Arc::new(StringArray::from(
                    domains.iter().map(|d| d.map(|_| "{}")).collect::<Vec<_>>(),
                )),
                Arc::new(BooleanArray::from(
                    domains.iter().map(|d| d.map(|_| false)).collect::<Vec<_>>(),
                )),
            ],
            Some(present),
        )
        .unwrap();
        let schema = Schema::new(vec![
            Field::new("txn", txn.data_type().clone(), true),
            Field::new("domainMetadata", domain.data_type().clone(), true),
        ]);
        let batch =
            RecordBatch::try_new(Arc::new(schema), vec![Arc::new(txn), Arc::new(domain)]).unwrap();
        let level = match statistics {
            true => EnabledStatistics::Chunk,
            false => EnabledStatistics::None,
        };
        let props = WriterProperties::builder()
            .set_max_row_group_row_count(Some(2))
            .set_statistics_enabled(level)
            .build();
        let mut buf = Vec::new();
        let mut writer = ArrowWriter::try_new(&mut buf, batch.schema(), Some(props)).unwrap();
        writer.write(&batch).unwrap();
        writer.close().unwrap();
        Bytes::from(buf)
    }

    /// For each row group, whether the projection `open_parquet` builds for it reads column
    /// `root` (its first leaf); false for a group it does not decode at all.
    fn reads_root_by_group(data: &Bytes, root: &str) -> Vec<bool> {
        let (metadata, masks, _) = open_parquet("x.parquet", data, true).unwrap();
        let schema = metadata.metadata().file_metadata().schema_descr();
        let leaf = (0..schema.num_columns())
            .find(|l| schema.get_column_root(*l).name() == root)
            .unwrap();
        masks
            .iter()
            .map(|m| m.as_ref().is_some_and(|m| m.leaf_included(leaf)))
            .collect()
    }

    fn reads_root(data: &Bytes, root: &str) -> bool {
        reads_root_by_group(data, root).contains(&true)
    }

    #[test]
    fn action_columns_null_in_every_row_are_not_decoded() {
        // No domain anywhere: the column is skipped, the txn actions all read.
        let data = txn_and_domains(&[None; 4], true);
        assert!(!reads_root(&data, "domainMetadata"));
        assert!(reads_root(&data, "txn"));
        let actions = read_parquet_actions("x.parquet", data).unwrap();
        assert_eq!(actions.len(), 4);
        assert!(actions.iter().all(|a| matches!(a, Action::Txn(_))));

        // A domain in the second row group only: the column is read there, and only there.
        let data = txns_and_domains(
            &[true, true, true, false],
            &[None, None, None, Some("d")],
            true,
        );
        assert_eq!(reads_root_by_group(&data, "domainMetadata"), [false, true]);
        assert_eq!(reads_root_by_group(&data, "txn"), [true, true]);
        let actions = read_parquet_actions("x.parquet", data).unwrap();
        assert_eq!(actions.len(), 4);
        assert!(matches!(&actions[3], Action::DomainMetadata(d) if d.domain == "d"));

        // Without statistics nothing is known to be null: every action column is read.
        let data = txn_and_domains(&[None; 4], false);
        assert!(reads_root(&data, "domainMetadata"));
        assert_eq!(read_parquet_actions("x.parquet", data).unwrap().len(), 4);
    }

    /// Within the action columns read, a leaf null in every row of a group is not decoded
    /// (the deletion vector of a table without one, `baseRowId`, `metaData.name`), and the
    /// load holds what it would with it: the decoders read the absent field as null. Leaves
    /// under a map (`tags`, whose null count also counts empty maps) and the typed partition
    /// values (a null partition value is still a key) are decoded regardless, and a leaf
    /// with a value in the group is decoded.
    #[test]
    fn leaves_null_in_every_row_are_not_decoded() {
        use crate::checkpoint::{CheckpointOptions, write_checkpoint};
        use crate::dv::DeletionVectorDescriptor;
        use crate::path::TableRoot;
        use crate::replay::Replay;
        use alluvium_storage::{InMemoryStore, ObjectStore};

        let checkpoint_of = |dv: Option<DeletionVectorDescriptor>| {
            let mut replay = Replay::new(TableRoot::new("memory:///t"));
            replay.apply(Action::Protocol(Protocol {
                min_reader_version: 3,
                min_writer_version: 7,
                reader_features: Some(vec!["deletionVectors".into()]),
                writer_features: Some(vec!["deletionVectors".into()]),
            }));
            replay.apply(Action::Metadata(Metadata {
                id: "id".into(),
                name: None,
                description: None,
                format: crate::actions::Format::default(),
                schema_string: r#"{"type":"struct","fields":[{"name":"x","type":"long","nullable":true,"metadata":{}},{"name":"p","type":"long","nullable":true,"metadata":{}}]}"#.into(),
                partition_columns: vec!["p".into()],
                created_time: None,
                configuration: [(
                    "delta.checkpoint.writeStatsAsStruct".to_string(),
                    "true".to_string(),
                )]
                .into(),
            }));
            for i in 0..4 {
                let mut pv = OptStringMap::default();
                pv.insert("p", None);
                let mut add = Add::builder(format!("p=__HIVE_DEFAULT_PARTITION__/f{i}.parquet"), 10 + i, 1)
                    .partition_values(pv)
                    .stats(r#"{"numRecords":5,"minValues":{"x":1},"maxValues":{"x":9},"nullCount":{"x":0}}"#);
                if i == 2
                    && let Some(dv) = dv.clone()
                {
                    add = add.deletion_vector(dv);
                }
                replay.apply(Action::Add(add.build()));
            }
            let state = replay.finish(1).unwrap();
            let store = InMemoryStore::new();
            let written = write_checkpoint(
                &store,
                &state,
                &CheckpointOptions {
                    part_size: None,
                    now_ms: 0,
                },
            )
            .unwrap();
            let data = store.get(&written.files[0]).unwrap();
            // A checkpoint's adds are not changes of data.
            let mut adds: Vec<Add> = state
                .files()
                .map(|f| Add {
                    data_change: false,
                    ..f.to_add()
                })
                .collect();
            adds.sort_by(|a, b| a.path.cmp(&b.path));
            (data, adds)
        };
        let reads = |data: &Bytes, leaf_path: &str| {
            let (metadata, masks, _) = open_parquet("x.parquet", data, true).unwrap();
            let schema = metadata.metadata().file_metadata().schema_descr();
            let leaf = (0..schema.num_columns())
                .find(|l| schema.column(*l).path().string() == leaf_path)
                .unwrap_or_else(|| panic!("no leaf {leaf_path}"));
            masks
                .iter()
                .any(|m| m.as_ref().is_some_and(|m| m.leaf_included(leaf)))
        };
        let loaded = |data: &Bytes| {
            let mut adds: Vec<Add> = read_parquet_actions("x.parquet", data.clone())
                .unwrap()
                .into_iter()
                .filter_map(|a| match a {
                    Action::Add(a) => Some(a),
                    _ => None,
                })
                .collect();
            adds.sort_by(|a, b| a.path.cmp(&b.path));
            adds
        };

        let (data, adds) = checkpoint_of(None);
        assert!(!reads(&data, "add.deletionVector.storageType"));
        assert!(!reads(&data, "add.baseRowId"));
        assert!(!reads(&data, "metaData.name"));
        assert!(reads(&data, "add.path"));
        assert!(reads(&data, "add.tags.key_value.key"), "under a map");
        assert!(reads(&data, "add.partitionValues_parsed.p"), "typed");
        let read = loaded(&data);
        assert_eq!(read, adds);
        assert!(
            read.iter()
                .all(|a| a.partition_values.get("p") == Some(None))
        );

        let dv = DeletionVectorDescriptor {
            storage_type: "i".into(),
            path_or_inline_dv: "wi5b=000010000siXQKl0rr91000f".into(),
            offset: None,
            size_in_bytes: 20,
            cardinality: 1,
        };
        let (data, adds) = checkpoint_of(Some(dv.clone()));
        assert!(reads(&data, "add.deletionVector.storageType"));
        assert!(
            !reads(&data, "add.deletionVector.offset"),
            "null for an inline vector"
        );
        let read = loaded(&data);
        assert_eq!(read, adds);
        assert_eq!(read[2].deletion_vector.as_deref(), Some(&dv));
    }

    /// A group is read in one batch of its rows when it has fewer than a batch, and in
    /// batches of [`BATCH_SIZE`] otherwise, also when its (untrusted) row count is zero or
    /// negative: batches of one row would make such a group slow to read.
    #[test]
    fn a_batch_is_a_small_group_whole_and_never_below_the_batch_size_on_bad_counts() {
        let data = txn_and_domains(&[None; 4], true);
        let (metadata, _, _) = open_parquet("x.parquet", &data, false).unwrap();
        let real = metadata.metadata();
        // Four txn actions, written two to a row group.
        assert_eq!(real.row_groups()[0].num_rows(), 2);
        assert_eq!(batch_rows(real, 0), 2);
        let with_rows = |n: i64| {
            let group = real.row_groups()[0].clone().into_builder().set_num_rows(n);
            ParquetMetaData::new(real.file_metadata().clone(), vec![group.build().unwrap()])
        };
        assert_eq!(batch_rows(&with_rows(100), 0), 100);
        assert_eq!(batch_rows(&with_rows(10_000_000), 0), BATCH_SIZE);
        assert_eq!(batch_rows(&with_rows(0), 0), BATCH_SIZE);
        assert_eq!(batch_rows(&with_rows(-7), 0), BATCH_SIZE);
        // A group the footer does not have.
        assert_eq!(batch_rows(real, 5), BATCH_SIZE);
    }

    #[test]
    fn a_row_group_holding_no_action_is_not_decoded() {
        // The first row group holds a txn and a domain, the second nothing at all (a writer
        // may leave such a group): the second is skipped, the first read whole.
        let data = txn_domains_then_nothing();
        assert_eq!(reads_root_by_group(&data, "txn"), [true, false]);
        assert_eq!(reads_root_by_group(&data, "domainMetadata"), [true, false]);
        let actions = read_parquet_actions("x.parquet", data).unwrap();
        assert!(matches!(
            &actions[..],
            [Action::Txn(_), Action::DomainMetadata(_)]
        ));
    }

    /// A sink that checks every hash it is handed against its own hasher, refuses a
    /// non-empty chunk handed without hashes, and keeps the paths of the adds and the
    /// number of other actions it took.
    pub(in crate::checkpoint) struct CheckHashes {
        hasher: KeyHasher,
        pub(in crate::checkpoint) seen: Vec<String>,
        pub(in crate::checkpoint) removes: usize,
        pub(in crate::checkpoint) others: usize,
    }

    impl CheckHashes {
        pub(in crate::checkpoint) fn new() -> Self {
            CheckHashes {
                hasher: KeyHasher::new(
                    hashbrown::DefaultHashBuilder::default(),
                    crate::path::TableRoot::new("memory://"),
                ),
                seen: Vec::new(),
                removes: 0,
                others: 0,
            }
        }
    }

    impl ActionSink for CheckHashes {
        fn accept(&mut self, actions: Vec<Action>) -> Result<()> {
            assert!(actions.is_empty(), "a chunk came without its hashes");
            Ok(())
        }
        fn key_hasher(&self) -> Option<KeyHasher> {
            Some(self.hasher.clone())
        }
        fn accept_hashed(&mut self, actions: Vec<Action>, hashes: Vec<u64>) -> Result<()> {
            assert_eq!(actions.len(), hashes.len());
            for (a, h) in actions.iter().zip(hashes) {
                assert_eq!(self.hasher.action_hash(a), h, "{a:?}");
                match a {
                    Action::Add(add) => self.seen.push(add.path.clone()),
                    Action::Remove(_) => self.removes += 1,
                    _ => self.others += 1,
                }
            }
            Ok(())
        }
    }

    /// A sink whose hasher packs adds: keeps every add with its hash and every other
    /// action, each in order, checks every hash, and counts the chunks that came packed.
    pub(in crate::checkpoint) struct Packs {
        hasher: KeyHasher,
        pub(in crate::checkpoint) adds: Vec<(u64, Add)>,
        pub(in crate::checkpoint) others: Vec<Action>,
        pub(in crate::checkpoint) packed: usize,
    }

    impl Packs {
        pub(in crate::checkpoint) fn new() -> Self {
            Packs {
                hasher: CheckHashes::new().hasher.packing_adds(),
                adds: Vec::new(),
                others: Vec::new(),
                packed: 0,
            }
        }

        /// `batches` decoded as one row group, handed over as a load's decoding thread
        /// hands it.
        pub(in crate::checkpoint) fn take_group(&mut self, batches: &[RecordBatch]) {
            let h = self.hasher.clone();
            let mut packing = Packing::new();
            for b in batches {
                packing.batch("x.parquet", b, &h).unwrap();
            }
            hand(self, packing.finish(&h)).unwrap();
        }

        /// A whole file decoded on this thread, as each of several parts is.
        pub(in crate::checkpoint) fn take_file(&mut self, data: Bytes) {
            let h = self.hasher.clone();
            for decoded in decode_parquet("x.parquet", data, &h).unwrap() {
                hand(self, decoded).unwrap();
            }
        }

        /// The actions as plain decoding gives them, split as this sink keeps them (hashed
        /// by its hasher).
        pub(in crate::checkpoint) fn split(&self, actions: Vec<Action>) -> Packs {
            let mut plain = Packs {
                hasher: self.hasher.clone(),
                ..Packs::new()
            };
            for a in actions {
                match a {
                    Action::Add(add) => {
                        let h = self
                            .hasher
                            .file_hash(&add.path, add.deletion_vector.as_deref());
                        plain.adds.push((h, add));
                    }
                    other => plain.others.push(other),
                }
            }
            plain
        }
    }

    impl ActionSink for Packs {
        fn accept(&mut self, actions: Vec<Action>) -> Result<()> {
            assert!(actions.is_empty(), "a chunk came without its hashes");
            Ok(())
        }
        fn key_hasher(&self) -> Option<KeyHasher> {
            Some(self.hasher.clone())
        }
        fn accept_hashed(&mut self, actions: Vec<Action>, hashes: Vec<u64>) -> Result<()> {
            assert_eq!(actions.len(), hashes.len());
            for (a, h) in actions.into_iter().zip(hashes) {
                assert_eq!(self.hasher.action_hash(&a), h, "{a:?}");
                match a {
                    Action::Add(add) => self.adds.push((h, add)),
                    other => self.others.push(other),
                }
            }
            Ok(())
        }
        fn accept_packed(&mut self, adds: AddChunk, others: Vec<Action>) -> Result<()> {
            self.packed += 1;
            for (h, f) in adds.entries() {
                assert_eq!(self.hasher.file_hash(f.path(), f.deletion_vector()), h);
                self.adds.push((h, f.to_add()));
            }
            assert!(!others.iter().any(|a| matches!(a, Action::Remove(_))));
            self.others.extend(others);
            Ok(())
        }
    }

    /// The packing decoder and the encoder of a state's files read and write the fields
    /// `add`'s description names: a field added to the description and not to
    /// [`ADD_FIELDS`] fails here.
    #[test]
    fn the_packing_decoder_reads_every_described_add_field() {
        use crate::checkpoint::layout::ADD_FIELDS;
        let described: Vec<&str> = Add::FIELDS.iter().map(|s| s.name).collect();
        assert_eq!(described, ADD_FIELDS);
    }

    /// Taking out sidecar rows (and, from sidecars, everything but file actions) keeps
    /// each hash beside its action.
    #[test]
    fn filtering_sinks_keep_hashes_beside_their_actions() {
        let sidecar = |p: &str| {
            Action::Sidecar(Sidecar {
                path: p.into(),
                size_in_bytes: 1,
                modification_time: 1,
                tags: None,
            })
        };
        let add = |p: &str| Action::Add(Add::builder(p, 1, 1).build());
        let chunk = vec![sidecar("s1"), add("a"), sidecar("s2"), add("b")];
        let mut inner = CheckHashes::new();
        let hashes: Vec<u64> = chunk.iter().map(|a| inner.hasher.action_hash(a)).collect();
        let mut splitter = SidecarSplitter {
            inner: &mut inner,
            sidecars: Vec::new(),
        };
        splitter
            .accept_hashed(chunk.clone(), hashes.clone())
            .unwrap();
        assert_eq!(splitter.sidecars.len(), 2);
        FileActionsOnly(&mut inner)
            .accept_hashed(chunk, hashes)
            .unwrap();
        assert_eq!(inner.seen, ["a", "b", "a", "b"]);
    }

    /// The estimate scales the rows seen by the bytes, and a size that lies (a sidecar's
    /// `sizeInBytes` is the table's word) reserves no more than that many real parts.
    #[test]
    fn the_row_estimate_scales_by_bytes_and_a_lying_size_is_capped() {
        let part = |rows: usize, bytes: usize| {
            let adds = (0..rows)
                .map(|i| Action::Add(Add::builder(format!("f{i}"), 1, 1).build()))
                .collect();
            (vec![Decoded::Actions(adds, Vec::new())], bytes)
        };
        let seen = [part(100, 1_000), part(80, 800)];
        assert_eq!(expected_rows(&seen, Some(9_000), 10), 900);
        assert_eq!(expected_rows(&seen, None, 10), 180);
        assert_eq!(
            expected_rows(&seen, Some(1_000), 10),
            180,
            "never below what was seen"
        );
        assert_eq!(
            expected_rows(&seen, Some(u64::MAX), 10),
            1_000,
            "ten parts of 100"
        );
    }

    /// A checkpoint of several parts is read into a state that holds no more than one read
    /// from a single file: the load reserves once, for the rows the first parts scale to,
    /// instead of doubling its columns part after part (and keeping the room).
    #[test]
    fn a_multi_part_load_holds_what_a_single_file_load_holds() {
        use crate::checkpoint::{CheckpointOptions, write_checkpoint};
        use crate::path::TableRoot;
        use crate::replay::{Replay, replay_with_schema};
        use alluvium_storage::{InMemoryStore, ObjectStore};

        let root = TableRoot::new("memory:///t");
        let mut replay = replay_with_schema(
            root.as_str(),
            r#"{"type":"struct","fields":[{"name":"x","type":"long","nullable":true,"metadata":{}}]}"#,
        );
        for i in 0..20_000 {
            let mut add = Add::builder(format!("part-{i:05}.parquet"), 100 + i, 1).build();
            add.stats = Some(format!(r#"{{"numRecords":1,"minValues":{{"x":{i}}}}}"#));
            replay.apply(Action::Add(add));
        }
        let state = replay.finish(3).unwrap();
        let files_held = |part_size: Option<usize>| {
            let store = InMemoryStore::new();
            let written = write_checkpoint(
                &store,
                &state,
                &CheckpointOptions {
                    part_size,
                    now_ms: 0,
                },
            )
            .unwrap();
            let checkpoint = CheckpointFiles {
                version: 3,
                kind: if written.files.len() > 1 {
                    CheckpointKind::MultiPart {
                        part: 1,
                        parts: u32::try_from(written.files.len()).unwrap(),
                    }
                } else {
                    CheckpointKind::Classic
                },
                files: written
                    .files
                    .iter()
                    .map(|p| store.head(p).unwrap())
                    .collect(),
            };
            let mut loaded = Replay::new(root.clone());
            visit_checkpoint(&store, &checkpoint, &mut loaded).unwrap();
            let loaded = loaded.finish(3).unwrap();
            assert_eq!(loaded.num_files(), 20_000);
            (written.files.len(), loaded.memory_usage().files)
        };
        let (one, single) = files_held(None);
        let (parts, multi) = files_held(Some(1_500));
        assert_eq!((one, parts), (1, 14));
        assert!(
            multi * 100 <= single * 105,
            "{parts} parts hold {multi} bytes, one file {single}"
        );
    }
}
