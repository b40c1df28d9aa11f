//! The ordering rule and the fold of a chunk of log events into the latest event per key
//! (SPEC.md §26.2).
//!
//! * An event's order is (`event_time`, `seq`). A `seq` the producer left NULL is assigned
//!   as `version * 2^32 + ordinal`: the log version that added the event and its ordinal
//!   among the rows that commit added (data-change `add` actions in the order the commit
//!   lists them, rows in file order). The same event always gets the same `seq`.
//! * A key's latest event is the first, in log order (version, ordinal), of the events with
//!   the greatest order: a later event replaces the current one only if its order is
//!   strictly greater. So an older event never overwrites a newer state, and of two events
//!   with equal orders the one folded first stays.
//! * The key is live (a row of `state/`) iff its latest event is an `UPSERT`.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int64Type, TimestampMicrosecondType};
use arrow_array::{
    Array, ArrayRef, BooleanArray, Int64Array, RecordBatch, TimestampMicrosecondArray,
};
use std::hash::{BuildHasher, Hash, Hasher};

use arrow_row::{OwnedRow, Row, RowConverter, Rows, SortField};
use arrow_schema::{Field, Schema};
use hashbrown::{DefaultHashBuilder, Equivalent, HashTable};

use super::layout::{DELETE_FLAG, EVENT_TIME, Layout, OP, OP_DELETE, SEQ};
use crate::Result;
use alluvium::Error;

/// The order of an event: greater is newer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub struct EventOrder {
    /// `event_time`, µs since the epoch (UTC).
    pub time_us: i64,
    /// `seq` (given or assigned).
    pub seq: i64,
}

/// The `seq` assigned to the event at `ordinal` of the commit of log `version` whose
/// producer gave none.
///
/// # Errors
/// A version or ordinal beyond the encoding (`version >= 2^31`, `ordinal >= 2^32`).
pub fn assigned_seq(version: u64, ordinal: u64) -> Result<i64> {
    if version >= 1 << 31 || ordinal >= 1 << 32 {
        return Err(Error::InvalidArgument(format!(
            "cannot assign a seq to row {ordinal} of log version {version}"
        ))
        .into());
    }
    Ok(((version << 32) | ordinal) as i64)
}

/// The latest event of a key within a chunk.
#[derive(Debug, Clone, Copy)]
struct Winner {
    order: EventOrder,
    delete: bool,
    batch: u32,
    row: u32,
}

/// A key (its columns in the row format: equal keys, equal bytes; byte order = key order).
pub(crate) type KeyRow = OwnedRow;

/// A map by key. hashbrown's default hasher rather than std's SipHash: a sync hashes every
/// event's key and every tombstone's, and SipHash was a tenth of a sync's time.
pub(crate) type KeyMap<V> = hashbrown::HashMap<KeyRow, V>;

/// A borrowed key, to look up a [`KeyMap`] without making an owned key: it hashes as the
/// owned row does (both hash the row's bytes) and equals it when the bytes are equal.
#[derive(Clone, Copy)]
pub(crate) struct KeyRef<'a>(pub Row<'a>);

impl Hash for KeyRef<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.hash(state);
    }
}

impl Equivalent<KeyRow> for KeyRef<'_> {
    fn equivalent(&self, key: &KeyRow) -> bool {
        self.0 == key.row()
    }
}

/// `rows` sorted by key. Keys are distinct (a map's), so there is no order among equals
/// to keep.
///
/// A key's row encoding orders as its bytes do, and so do its first sixteen bytes read as a
/// big-endian integer (zero-padded: a shorter key then compares as its bytes do against a
/// longer one, or ties): the sort compares those integers, held beside the rows, and reads
/// the rows themselves, scattered over the heap, only on a tie. Comparing the rows for every
/// step of a 100,000-key sort was the largest part of a sync. Sixteen, not eight: an `Int64`
/// key's row is nine bytes (a validity byte, then the value), so eight left its lowest byte
/// to the tie-break, and keys of one 256-value block (most of a batch's keys, over a dense
/// key range) compared through their rows after all.
pub(crate) fn sorted_by_key<'a, T>(rows: Vec<(Row<'a>, T)>) -> Vec<(Row<'a>, T)> {
    let mut keyed: Vec<(u128, Row<'a>, T)> = rows
        .into_iter()
        .map(|(k, t)| (key_prefix(k), k, t))
        .collect();
    keyed.sort_unstable_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(&b.1)));
    keyed.into_iter().map(|(_, k, t)| (k, t)).collect()
}

/// The first sixteen bytes of `key`'s row as a big-endian integer, zero-padded: the sort
/// key of [`sorted_by_key`].
fn key_prefix(key: Row<'_>) -> u128 {
    let bytes: &[u8] = key.as_ref();
    let mut head = [0u8; 16];
    let n = bytes.len().min(16);
    if let (Some(to), Some(from)) = (head.get_mut(..n), bytes.get(..n)) {
        to.copy_from_slice(from);
    }
    u128::from_be_bytes(head)
}

/// Converts key columns to [`KeyRow`]s.
pub(crate) fn key_converter(layout: &Layout) -> Result<RowConverter> {
    Ok(RowConverter::new(
        layout
            .key_fields
            .iter()
            .map(|f| SortField::new(f.data_type().clone()))
            .collect(),
    )?)
}

/// The fold of a chunk: the latest event per key of the log rows added to it.
pub(crate) struct ChunkFold {
    layout: Layout,
    converter: RowConverter,
    batches: Vec<RecordBatch>,
    /// The key rows of each batch, in `batches` order.
    keys: Vec<Rows>,
    /// The latest event of each key, found by the bytes of its key: those of the winner's
    /// own row in `keys` (every event of a key has the same). No owned key is made per
    /// event: making one (an allocation) and dropping the map (a free per key) were a
    /// fifth of a sync's time.
    winners: HashTable<Winner>,
    hashing: DefaultHashBuilder,
    events: u64,
}

/// The key row of `w` among `keys`.
fn key_of<'a>(keys: &'a [Rows], w: &Winner) -> Option<Row<'a>> {
    let rows = keys.get(w.batch as usize)?;
    (w.row < u32::try_from(rows.num_rows()).unwrap_or(u32::MAX)).then(|| rows.row(w.row as usize))
}

impl ChunkFold {
    pub(crate) fn new(layout: &Layout) -> Result<ChunkFold> {
        Ok(ChunkFold {
            layout: layout.clone(),
            converter: key_converter(layout)?,
            batches: Vec::new(),
            keys: Vec::new(),
            winners: HashTable::new(),
            hashing: DefaultHashBuilder::default(),
            events: 0,
        })
    }

    /// Events folded so far.
    pub(crate) fn events(&self) -> u64 {
        self.events
    }

    /// Distinct keys folded so far.
    pub(crate) fn keys(&self) -> usize {
        self.winners.len()
    }

    /// Folds `batch` (rows of the log table, in log order) added by log `version` with
    /// its first row at `ordinal` of that commit.
    pub(crate) fn add(&mut self, batch: RecordBatch, version: u64, ordinal: u64) -> Result<()> {
        let n = batch.num_rows();
        if n == 0 {
            return Ok(());
        }
        let keys: Vec<ArrayRef> = self
            .layout
            .keys
            .iter()
            .map(|k| column(&batch, k))
            .collect::<Result<_>>()?;
        let rows = self.converter.convert_columns(&keys)?;
        let time = column(&batch, EVENT_TIME)?;
        let time = time.as_primitive::<TimestampMicrosecondType>();
        let seq = column(&batch, SEQ)?;
        let seq = seq.as_primitive::<Int64Type>();
        let op = column(&batch, OP)?;
        let op = op.as_string::<i32>();
        let b = u32::try_from(self.batches.len())
            .map_err(|_| Error::InvalidArgument("too many batches in a sync chunk".into()))?;
        self.keys.push(rows);
        let Self {
            keys,
            winners,
            hashing,
            ..
        } = self;
        let hash_of = |w: &Winner| key_of(keys, w).map_or(0, |k| hashing.hash_one(k));
        // Room for every key of the batch at once: growing a map of a 100,000-event batch
        // step by step rehashed it about seventeen times.
        winners.reserve(n, hash_of);
        let Some(rows) = keys.last() else {
            return Ok(());
        };
        for i in 0..n {
            let order = EventOrder {
                time_us: time.value(i),
                seq: if seq.is_null(i) {
                    assigned_seq(version, ordinal + i as u64)?
                } else {
                    seq.value(i)
                },
            };
            let w = Winner {
                order,
                delete: op.value(i) == OP_DELETE,
                batch: b,
                row: i as u32,
            };
            let key = rows.row(i);
            let hash = hashing.hash_one(key);
            match winners.find_mut(hash, |cur| key_of(keys, cur) == Some(key)) {
                Some(cur) => {
                    if order > cur.order {
                        *cur = w;
                    }
                }
                None => {
                    winners.insert_unique(hash, w, hash_of);
                }
            }
        }
        self.events += n as u64;
        self.batches.push(batch);
        Ok(())
    }

    /// The first key column's distinct values among the folded keys (for pruning reads of
    /// the tombstones), as one array.
    pub(crate) fn first_key_values(&self) -> Result<ArrayRef> {
        let rows: Vec<Row<'_>> = self
            .winners
            .iter()
            .filter_map(|w| key_of(&self.keys, w))
            .collect();
        let cols = self.converter.convert_rows(rows)?;
        Ok(cols[0].clone())
    }

    /// Whether the fold has an event of `key`.
    pub(crate) fn contains(&self, key: Row<'_>) -> bool {
        let hash = self.hashing.hash_one(key);
        self.winners
            .find(hash, |w| key_of(&self.keys, w) == Some(key))
            .is_some()
    }

    /// The tombstones this chunk writes: the keys whose latest event is a DELETE, with its
    /// order (schema of `tombstones/`), sorted by key.
    pub(crate) fn deletes(&self) -> Result<Option<RecordBatch>> {
        let rows: Vec<(Row<'_>, &Winner)> = self
            .winners
            .iter()
            .filter(|w| w.delete)
            .filter_map(|w| Some((key_of(&self.keys, w)?, w)))
            .collect();
        if rows.is_empty() {
            return Ok(None);
        }
        let rows = sorted_by_key(rows);
        let mut columns = self.converter.convert_rows(rows.iter().map(|(k, _)| *k))?;
        columns.push(times(rows.iter().map(|(_, w)| w.order)));
        columns.push(seqs(rows.iter().map(|(_, w)| w.order)));
        Ok(Some(RecordBatch::try_new(
            self.layout.tombstones.clone(),
            columns,
        )?))
    }

    /// The MERGE source of `state/`: per key, its latest event, or a DELETE at the key's
    /// tombstone when that is not older (`tombstones`); sorted by key. Columns: the state
    /// table's, then [`DELETE_FLAG`].
    pub(crate) fn state_source(
        &self,
        tombstones: &KeyMap<EventOrder>,
    ) -> Result<Option<RecordBatch>> {
        if self.winners.is_empty() {
            return Ok(None);
        }
        let rows: Vec<(Row<'_>, Winner)> = self
            .winners
            .iter()
            .filter_map(|w| {
                let k = key_of(&self.keys, w)?;
                let mut w = *w;
                if let Some(t) = tombstones.get(&KeyRef(k))
                    && *t >= w.order
                {
                    w.order = *t;
                    w.delete = true;
                }
                Some((k, w))
            })
            .collect();
        let rows = sorted_by_key(rows);
        let mut columns = self.converter.convert_rows(rows.iter().map(|(k, _)| *k))?;
        let picks: Vec<(usize, usize)> = rows
            .iter()
            .map(|(_, w)| (w.batch as usize, w.row as usize))
            .collect();
        for f in &self.layout.value_fields {
            let arrays: Vec<ArrayRef> = self
                .batches
                .iter()
                .map(|b| column(b, f.name()))
                .collect::<Result<_>>()?;
            let refs: Vec<&dyn arrow_array::Array> = arrays.iter().map(|a| a.as_ref()).collect();
            columns.push(arrow_select::interleave::interleave(&refs, &picks)?);
        }
        columns.push(times(rows.iter().map(|(_, w)| w.order)));
        columns.push(seqs(rows.iter().map(|(_, w)| w.order)));
        columns.push(Arc::new(BooleanArray::from(
            rows.iter().map(|(_, w)| w.delete).collect::<Vec<_>>(),
        )));
        let mut fields: Vec<Field> = self
            .layout
            .state
            .fields()
            .iter()
            .map(|f| f.as_ref().clone())
            .collect();
        fields.push(Field::new(
            DELETE_FLAG,
            arrow_schema::DataType::Boolean,
            false,
        ));
        Ok(Some(RecordBatch::try_new(
            Arc::new(Schema::new(fields)),
            columns,
        )?))
    }
}

fn column(batch: &RecordBatch, name: &str) -> Result<ArrayRef> {
    batch
        .column_by_name(name)
        .cloned()
        .ok_or_else(|| Error::SchemaMismatch(format!("log rows have no column `{name}`")).into())
}

fn times(orders: impl Iterator<Item = EventOrder>) -> ArrayRef {
    Arc::new(
        TimestampMicrosecondArray::from(orders.map(|o| o.time_us).collect::<Vec<_>>())
            .with_timezone("UTC"),
    )
}

fn seqs(orders: impl Iterator<Item = EventOrder>) -> ArrayRef {
    Arc::new(Int64Array::from(orders.map(|o| o.seq).collect::<Vec<_>>()))
}

/// The orders of the rows of `batch` (a table with `event_time` and `seq`) whose key the
/// fold has (so that memory stays bounded by the chunk), by key.
pub(crate) fn orders_by_key(
    fold: &ChunkFold,
    batch: &RecordBatch,
    into: &mut KeyMap<EventOrder>,
) -> Result<()> {
    let (layout, converter) = (&fold.layout, &fold.converter);
    let keys: Vec<ArrayRef> = layout
        .keys
        .iter()
        .map(|k| column(batch, k))
        .collect::<Result<_>>()?;
    let rows = converter.convert_columns(&keys)?;
    let time = column(batch, EVENT_TIME)?;
    let time = time.as_primitive::<TimestampMicrosecondType>();
    let seq = column(batch, SEQ)?;
    let seq = seq.as_primitive::<Int64Type>();
    for i in 0..batch.num_rows() {
        let o = EventOrder {
            time_us: time.value(i),
            seq: seq.value(i),
        };
        let key = rows.row(i);
        if !fold.contains(key) {
            continue;
        }
        match into.get_mut(&KeyRef(key)) {
            Some(cur) => {
                if o > *cur {
                    *cur = o;
                }
            }
            None => {
                into.insert(key.owned(), o);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Int64Array, StringArray};
    use arrow_schema::DataType;

    /// The integer prefix orders keys as their rows do: string keys sharing prefixes, of
    /// every length around eight and sixteen bytes, nulls, and a second key column that
    /// decides ties.
    #[test]
    fn sorting_by_the_integer_prefix_is_sorting_by_the_row() {
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let n = 3_000;
        let strings: Vec<Option<String>> = (0..n)
            .map(|_| {
                (next() % 20 != 0).then(|| {
                    // A run of `a`s (many keys share their first eight or sixteen row
                    // bytes), then a short random tail.
                    let run = (next() % 24) as usize;
                    let tail = (next() % 4) as usize;
                    let mut v: String = "a".repeat(run);
                    v.extend((0..tail).map(|_| ['a', 'b', '\0', 'é'][next() as usize % 4]));
                    v
                })
            })
            .collect();
        let ints: Vec<Option<i64>> = (0..n)
            .map(|_| (next() % 10 != 0).then(|| (next() % 7) as i64 - 3))
            .collect();
        let converter = RowConverter::new(vec![
            SortField::new(DataType::Utf8),
            SortField::new(DataType::Int64),
        ])
        .unwrap();
        let rows = converter
            .convert_columns(&[
                Arc::new(StringArray::from(strings)) as ArrayRef,
                Arc::new(Int64Array::from(ints)) as ArrayRef,
            ])
            .unwrap();
        let mut keys: Vec<KeyRow> = rows.iter().map(|r| r.owned()).collect();
        keys.sort_unstable();
        keys.dedup();
        // Shuffled, each with its position in key order.
        let mut shuffled: Vec<(Row<'_>, usize)> = keys.iter().map(|k| k.row()).zip(0..).collect();
        for i in (1..shuffled.len()).rev() {
            shuffled.swap(i, next() as usize % (i + 1));
        }
        let sorted = sorted_by_key(shuffled);
        assert!(sorted.iter().map(|(_, i)| *i).eq(0..keys.len()));
    }

    /// Distinct single-column integer keys (the common key) never tie on the prefix, so
    /// their sort never reads the rows; keys one apart included.
    #[test]
    fn integer_keys_sort_on_the_prefix_alone() {
        let converter = RowConverter::new(vec![SortField::new(DataType::Int64)]).unwrap();
        let ids: Vec<i64> = (-300..300)
            .chain([i64::MIN, i64::MAX, 1 << 40, (1 << 40) + 1])
            .collect();
        let rows = converter
            .convert_columns(&[Arc::new(Int64Array::from(ids.clone())) as ArrayRef])
            .unwrap();
        let keys: Vec<KeyRow> = rows.iter().map(|r| r.owned()).collect();
        let mut prefixes: Vec<u128> = keys.iter().map(|k| key_prefix(k.row())).collect();
        prefixes.sort_unstable();
        prefixes.dedup();
        assert_eq!(
            prefixes.len(),
            keys.len(),
            "two integer keys share a prefix"
        );
        let sorted = sorted_by_key(keys.iter().map(|k| k.row()).zip(ids.iter()).collect());
        assert!(sorted.windows(2).all(|w| w[0].1 < w[1].1));
    }
}
