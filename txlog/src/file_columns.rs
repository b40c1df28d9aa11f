//! Live files held as columns: the frozen base of a table state's set of live files.
//!
//! One `Add` per file costs a 184-byte struct and two or three heap blocks (path,
//! statistics, partition values), each with an allocator header and rounding: about 430
//! bytes per file, and as many frees when the snapshot is dropped. Here every field is a
//! column: paths are slices of one text arena ([`crate::texts`]), statistics are a shape
//! shared by many files plus each file's values ([`crate::stats_text`]), sizes and times
//! are plain vectors, partition values are interned (a table has far fewer distinct
//! partitions than files, and a file's map is one 4-byte code), and the rare fields (tags,
//! deletion vectors, row tracking, clustering) live in a side table that only files having
//! them index. A file costs its path and statistics values plus about 55 bytes.
//!
//! Invariants:
//! 1. Every column has one entry per row.
//! 2. `index` holds exactly the rows `0..len`, each under the hash stored with it.
//! 3. `partitions[i]` indexes `partition_maps`; `extra[i]` is [`NO_EXTRA`] or indexes
//!    `extras`; `partition_lookup` holds exactly the indexes of `partition_maps`.
//! 4. Rows number fewer than `u32::MAX` (a builder refuses more, see [`FileColumns::push`]).
//! 5. The typed statistics cache covers a prefix of the rows, row `i` holding what row `i`'s
//!    statistics parse to ([`crate::stats::StatsColumns`]): rows are only appended, and
//!    the one truncation drops the cache.

use std::borrow::Cow;

use hashbrown::HashTable;

use crate::FileRef;
use crate::actions::{Action, Add, DeletionVectorDescriptor, OptStringMap};
use crate::file_set::{FileSet, Frozen, Slab, key_eq};
use crate::memory::{HeapSize, block, hash_table};
use crate::path::TableRoot;
use crate::stats::{ColumnKey, StatsColumns};
use crate::stats_text::StatsTexts;
use crate::texts::{Texts, trim};

const DATA_CHANGE: u8 = 1;
const HAS_STATS: u8 = 2;
const NO_EXTRA: u32 = u32::MAX;

/// The fields few files have, kept apart so that the others pay 4 bytes for them.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Extras {
    pub(crate) tags: Option<OptStringMap>,
    pub(crate) deletion_vector: Option<DeletionVectorDescriptor>,
    pub(crate) base_row_id: Option<i64>,
    pub(crate) default_row_commit_version: Option<i64>,
    pub(crate) clustering_provider: Option<String>,
}

impl Extras {
    fn of(file: FileRef<'_>) -> Option<Extras> {
        Extras {
            tags: file.tags().cloned(),
            deletion_vector: file.deletion_vector().cloned(),
            base_row_id: file.base_row_id(),
            default_row_commit_version: file.default_row_commit_version(),
            clustering_provider: file.clustering_provider().map(str::to_string),
        }
        .nonempty()
    }

    /// These fields, or `None` when the file has none of them (and needs no slot).
    pub(crate) fn nonempty(self) -> Option<Extras> {
        (self != Extras::default()).then_some(self)
    }

    fn heap_bytes(&self) -> usize {
        self.tags
            .heap_bytes()
            .saturating_add(self.deletion_vector.heap_bytes())
            .saturating_add(self.clustering_provider.heap_bytes())
    }
}

/// One add's fields, borrowed from wherever they lie (an `Add`, or a checkpoint's Arrow
/// columns, see [`AddChunk::push_fields`]), with its partition map already interned.
#[derive(Debug)]
pub(crate) struct AddFields<'a> {
    pub(crate) path: &'a str,
    pub(crate) size: i64,
    pub(crate) modification_time: i64,
    pub(crate) data_change: bool,
    pub(crate) stats: Option<&'a str>,
    /// The code [`AddChunk::partition_code`] gave the file's partition values.
    pub(crate) partition: u32,
    /// The rare fields, `None` when the file has none of them.
    pub(crate) extras: Option<Extras>,
}

/// Live files as columns (see the module docs).
#[derive(Debug, Clone, Default)]
pub(crate) struct FileColumns {
    hashes: Vec<u64>,
    paths: Texts,
    stats: StatsTexts,
    sizes: Vec<i64>,
    modification_times: Vec<i64>,
    flags: Vec<u8>,
    partitions: Vec<u32>,
    partition_maps: Vec<OptStringMap>,
    partition_lookup: HashTable<u32>,
    extra: Vec<u32>,
    extras: Vec<Extras>,
    index: HashTable<u32>,
    hashing: hashbrown::DefaultHashBuilder,
    /// The rows' statistics as typed columns, built on demand ([`Self::stats_columns`]).
    typed: TypedStats,
}

/// A [`FileColumns`]' statistics as typed columns, for the columns predicates have asked
/// for so far, covering a prefix of the rows (rows are only appended, and the one
/// truncation, [`FileColumns::undo_append`], forgets the cache). A copy of the columns
/// starts without it: it is rebuilt on demand.
#[derive(Debug, Default)]
struct TypedStats(std::sync::Mutex<StatsColumns>);

impl Clone for TypedStats {
    fn clone(&self) -> Self {
        TypedStats::default()
    }
}

impl TypedStats {
    /// Drops the cache if it covers rows at or past `rows` (which are being removed).
    fn forget_beyond(&mut self, rows: usize) {
        let cache = self
            .0
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if cache.len() > rows {
            *cache = StatsColumns::default();
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, StatsColumns> {
        // Only a copy and a store run under the lock; were it poisoned all the same, the
        // cache is dropped, to be rebuilt on demand.
        self.0.lock().unwrap_or_else(|poisoned| {
            let mut guard = poisoned.into_inner();
            *guard = StatsColumns::default();
            guard
        })
    }
}

/// One row of a [`FileColumns`], read through [`FileRef`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Row<'a> {
    columns: &'a FileColumns,
    /// Below `u32::MAX` (invariant 4): a row number, not a `usize`, keeps a [`FileRef`]
    /// two words.
    row: u32,
}

impl<'a> Row<'a> {
    pub(crate) fn path(&self) -> &'a str {
        self.columns.paths.get(self.row as usize)
    }

    pub(crate) fn size(&self) -> i64 {
        self.columns
            .sizes
            .get(self.row as usize)
            .copied()
            .unwrap_or(0)
    }

    pub(crate) fn modification_time(&self) -> i64 {
        self.columns
            .modification_times
            .get(self.row as usize)
            .copied()
            .unwrap_or(0)
    }

    fn flags(&self) -> u8 {
        self.columns
            .flags
            .get(self.row as usize)
            .copied()
            .unwrap_or(0)
    }

    pub(crate) fn data_change(&self) -> bool {
        self.flags() & DATA_CHANGE != 0
    }

    pub(crate) fn stats(&self) -> Option<Cow<'a, str>> {
        (self.flags() & HAS_STATS != 0).then(|| self.columns.stats.get(self.row as usize))
    }

    /// Appends the statistics to `out`; false, appending nothing, when there are none.
    pub(crate) fn write_stats(&self, out: &mut String) -> bool {
        let has = self.flags() & HAS_STATS != 0;
        if has {
            self.columns.stats.write_to(self.row as usize, out);
        }
        has
    }

    pub(crate) fn partition_values(&self) -> &'a OptStringMap {
        static EMPTY: OptStringMap = OptStringMap(Vec::new());
        self.columns
            .partitions
            .get(self.row as usize)
            .and_then(|&c| self.columns.partition_maps.get(c as usize))
            .unwrap_or(&EMPTY)
    }

    pub(crate) fn extras(&self) -> Option<&'a Extras> {
        let e = *self.columns.extra.get(self.row as usize)?;
        if e == NO_EXTRA {
            return None;
        }
        self.columns.extras.get(e as usize)
    }
}

impl FileColumns {
    fn reserve(&mut self, rows: usize) {
        self.reserve_rows(rows);
        let hashes = &self.hashes;
        self.index.reserve(rows, |&i| {
            hashes.get(i as usize).copied().unwrap_or_default()
        });
    }

    /// Room for `rows` more rows in every column, not in the index (a chunk has none).
    /// Text arenas grow on their first push to what the reserved rows need at that row's
    /// size ([`Texts::push`]).
    fn reserve_rows(&mut self, rows: usize) {
        self.hashes.reserve(rows);
        self.paths.reserve_rows(rows);
        self.stats.reserve_rows(rows);
        self.sizes.reserve(rows);
        self.modification_times.reserve(rows);
        self.flags.reserve(rows);
        self.partitions.reserve(rows);
        self.extra.reserve(rows);
    }

    /// The row with this hash satisfying `eq`.
    fn find_row(&self, hash: u64, eq: impl Fn(FileRef<'_>) -> bool) -> Option<usize> {
        self.index
            .find(hash, |&i| {
                self.hashes.get(i as usize) == Some(&hash)
                    && eq(FileRef::from(Row {
                        columns: self,
                        row: i,
                    }))
            })
            .map(|&i| i as usize)
    }

    /// Appends `file`, whose key is not present, under `hash`. Returns false, leaving the
    /// columns unchanged, when they already hold the most rows they can (invariant 4).
    fn push(&mut self, hash: u64, file: FileRef<'_>) -> bool {
        let row = self.hashes.len();
        if !self.push_unindexed(hash, file) {
            return false;
        }
        let hashes = &self.hashes;
        // `push_unindexed` checked that the row number fits.
        self.index.insert_unique(hash, row as u32, |&i| {
            hashes.get(i as usize).copied().unwrap_or_default()
        });
        true
    }

    /// Appends every row of `chunk` to the columns without indexing them; the row and the
    /// side-table length before them, for [`index_from`](Self::index_from) and
    /// [`undo_append`](Self::undo_append). `None`, leaving the columns unchanged, for a
    /// chunk that would pass the row bound (invariant 4).
    fn append_unindexed(&mut self, chunk: &FileColumns) -> Option<(usize, usize)> {
        let before = self.hashes.len();
        let extras_before = self.extras.len();
        if before.saturating_add(chunk.hashes.len()) >= NO_EXTRA as usize {
            return None;
        }
        let expected = self.hashes.capacity().max(before + chunk.hashes.len());
        self.hashes.extend_from_slice(&chunk.hashes);
        self.paths.extend(&chunk.paths, expected);
        self.stats.extend(&chunk.stats, expected);
        self.sizes.extend_from_slice(&chunk.sizes);
        self.modification_times
            .extend_from_slice(&chunk.modification_times);
        self.flags.extend_from_slice(&chunk.flags);
        let codes: Vec<u32> = chunk
            .partition_maps
            .iter()
            .map(|m| self.intern(m))
            .collect();
        self.partitions.extend(
            chunk
                .partitions
                .iter()
                .map(|&c| codes.get(c as usize).copied().unwrap_or_default()),
        );
        // Below the row bound (checked above), so below `NO_EXTRA` too.
        let shift = extras_before as u32;
        self.extras.extend(chunk.extras.iter().cloned());
        self.extra.extend(
            chunk
                .extra
                .iter()
                .map(|&e| if e == NO_EXTRA { NO_EXTRA } else { e + shift }),
        );
        Some((before, extras_before))
    }

    /// Indexes the rows [`append_unindexed`](Self::append_unindexed) appended from
    /// `start` on. When a key is already present (in the rows before, or twice among these)
    /// the rows are taken out again, columns and index as before them, and given back as
    /// adds with their hashes, in order, to be inserted one by one.
    fn index_appended(
        &mut self,
        start: (usize, usize),
        same: impl Fn(FileRef<'_>, FileRef<'_>) -> bool,
    ) -> std::result::Result<(), Vec<(u64, Add)>> {
        if self.index_from(start.0, &same).is_ok() {
            return Ok(());
        }
        let end = self.hashes.len();
        let adds = (start.0..end)
            .map(|row| {
                let hash = self.hashes.get(row).copied().unwrap_or_default();
                let file = FileRef::from(Row {
                    columns: self,
                    row: row as u32,
                });
                (hash, file.to_add())
            })
            .collect();
        self.undo_append(start.0, start.1, end);
        Err(adds)
    }

    /// Indexes the rows from `from` on (appended without an index); `Err(())` when a row's
    /// key (`same`) is already indexed (by an earlier row, or an earlier row of the same
    /// batch), some of the new rows then indexed and some not (undo with
    /// [`undo_append`](Self::undo_append) up to the end).
    fn index_from(
        &mut self,
        from: usize,
        same: &impl Fn(FileRef<'_>, FileRef<'_>) -> bool,
    ) -> std::result::Result<(), ()> {
        // The index is taken out while it is filled, so that one probe per row both looks
        // for the key among the rows (borrowed whole) and finds the slot for the new one:
        // on a million-file load this loop runs on the replay thread alone.
        let mut index = std::mem::take(&mut self.index);
        let hash_of = |&i: &u32| self.hashes.get(i as usize).copied().unwrap_or_default();
        index.reserve(self.hashes.len() - from, hash_of);
        let order = insertion_order(self.hashes.get(from..).unwrap_or_default(), &index);
        let mut indexed = Ok(());
        for (hash, offset) in order {
            let row = from + offset as usize;
            let this = FileRef::from(Row {
                columns: self,
                row: row as u32,
            });
            let existing = |&i: &u32| {
                self.hashes.get(i as usize) == Some(&hash)
                    && same(
                        FileRef::from(Row {
                            columns: self,
                            row: i,
                        }),
                        this,
                    )
            };
            match index.entry(hash, existing, hash_of) {
                hashbrown::hash_table::Entry::Occupied(_) => {
                    indexed = Err(());
                    break;
                }
                hashbrown::hash_table::Entry::Vacant(slot) => {
                    slot.insert(row as u32);
                }
            }
        }
        self.index = index;
        indexed
    }

    /// Undoes an [`append_chunk`](Self::append_chunk) whose rows `before..indexed` may be
    /// indexed (those that are not are left alone). Partition maps it added stay in the
    /// dictionary, unused.
    fn undo_append(&mut self, before: usize, extras_before: usize, indexed: usize) {
        for row in before..indexed {
            let hash = self.hashes.get(row).copied().unwrap_or_default();
            if let Ok(e) = self.index.find_entry(hash, |&i| i as usize == row) {
                e.remove();
            }
        }
        self.typed.forget_beyond(before);
        self.hashes.truncate(before);
        self.paths.truncate(before);
        self.stats.truncate(before);
        self.sizes.truncate(before);
        self.modification_times.truncate(before);
        self.flags.truncate(before);
        self.partitions.truncate(before);
        self.extra.truncate(before);
        self.extras.truncate(extras_before);
    }

    /// [`push`](Self::push) without the index: a chunk's columns, only ever iterated.
    fn push_unindexed(&mut self, hash: u64, file: FileRef<'_>) -> bool {
        let partition = self.intern(file.partition_values());
        let row = file.as_row();
        // A row's statistics are copied as kept (`push_stats`), not rebuilt here.
        let stats = if row.is_some() { None } else { file.stats() };
        let fields = AddFields {
            path: file.path(),
            size: file.size(),
            modification_time: file.modification_time(),
            data_change: file.data_change(),
            stats: stats.as_deref(),
            partition,
            extras: Extras::of(file),
        };
        self.push_stats(hash, fields, row)
    }

    /// Appends one add given field by field, without the index. Returns false, leaving the
    /// columns unchanged but for an interned partition map, when they already hold the most
    /// rows they can (invariant 4).
    fn push_fields(&mut self, hash: u64, fields: AddFields<'_>) -> bool {
        self.push_stats(hash, fields, None)
    }

    /// [`push_fields`](Self::push_fields), the statistics taken from `fields`, or copied
    /// from `source`, a row of other columns, when given.
    fn push_stats(&mut self, hash: u64, fields: AddFields<'_>, source: Option<Row<'_>>) -> bool {
        let row = self.hashes.len();
        if u32::try_from(row).is_err() || row >= NO_EXTRA as usize {
            return false;
        }
        let extra = match fields.extras {
            Some(e) => match u32::try_from(self.extras.len()) {
                Ok(i) if i != NO_EXTRA => {
                    self.extras.push(e);
                    i
                }
                _ => return false,
            },
            None => NO_EXTRA,
        };
        self.hashes.push(hash);
        let expected = self.hashes.capacity();
        self.paths.push(fields.path, expected);
        let has_stats = match source {
            Some(r) => {
                self.stats
                    .push_copy(&r.columns.stats, r.row as usize, expected);
                r.flags() & HAS_STATS != 0
            }
            None => {
                self.stats.push(fields.stats.unwrap_or(""), expected);
                fields.stats.is_some()
            }
        };
        self.sizes.push(fields.size);
        self.modification_times.push(fields.modification_time);
        let mut flags = 0;
        if fields.data_change {
            flags |= DATA_CHANGE;
        }
        if has_stats {
            flags |= HAS_STATS;
        }
        self.flags.push(flags);
        self.partitions.push(fields.partition);
        self.extra.push(extra);
        true
    }

    /// The code of the last row's partition map when `same` holds for it: files come in
    /// runs of one partition (every file, in an unpartitioned table), and a decoder that
    /// compares its row with that map in place builds no map for the run.
    fn repeated_partition(&self, same: impl FnOnce(&OptStringMap) -> bool) -> Option<u32> {
        let &last = self.partitions.last()?;
        self.partition_maps
            .get(last as usize)
            .is_some_and(same)
            .then_some(last)
    }

    /// The code of `values` in the partition dictionary, added if new. The dictionary has
    /// at most one entry per row, so its codes fit in `u32` as rows do.
    fn intern(&mut self, values: &OptStringMap) -> u32 {
        use std::hash::BuildHasher;
        if let Some(code) = self.repeated_partition(|m| m == values) {
            return code;
        }
        let hash = self.hashing.hash_one(values);
        let maps = &self.partition_maps;
        if let Some(&code) = self
            .partition_lookup
            .find(hash, |&c| maps.get(c as usize) == Some(values))
        {
            return code;
        }
        let code = u32::try_from(self.partition_maps.len()).unwrap_or(u32::MAX - 1);
        self.partition_maps.push(values.clone());
        let (maps, hashing) = (&self.partition_maps, &self.hashing);
        self.partition_lookup.insert_unique(hash, code, |&c| {
            maps.get(c as usize).map_or(0, |m| hashing.hash_one(m))
        });
        code
    }

    /// The rows' statistics as typed columns holding at least `columns`, covering every
    /// row: built on first use, extended for new columns and new rows, and kept for the
    /// next caller (every snapshot sharing these columns).
    ///
    /// The lock is held only to copy and to store (the copy shares the columns): the
    /// parse runs on rayon's pool, and a lock held across it could deadlock a worker that,
    /// waiting for its parts, takes up another query of these rows. Two queries that
    /// extend at once both parse, and both their columns are kept.
    pub(crate) fn stats_columns(&self, columns: &[ColumnKey<'_>]) -> StatsColumns {
        let mut typed = self.typed.lock().clone();
        typed.cover(self.hashes.len(), |i| self.row_stats(i), columns);
        self.typed.lock().merge(&typed);
        typed
    }

    fn row_stats(&self, row: usize) -> Option<Cow<'_, str>> {
        Row {
            columns: self,
            row: row as u32,
        }
        .stats()
    }

    /// The partition-value code of every row, indexing [`Self::partition_maps`].
    pub(crate) fn partition_codes(&self) -> &[u32] {
        &self.partitions
    }

    /// The distinct partition-value maps.
    pub(crate) fn partition_maps(&self) -> &[OptStringMap] {
        &self.partition_maps
    }

    /// Gives back spare room beyond an eighth ([`trim`]): a load reserves for its
    /// checkpoint's rows; a refresh that rebuilds the base reserves for what it merges.
    fn shrink_all(&mut self) {
        trim(&mut self.hashes);
        self.paths.shrink();
        self.stats.shrink();
        trim(&mut self.sizes);
        trim(&mut self.modification_times);
        trim(&mut self.flags);
        trim(&mut self.partitions);
        trim(&mut self.partition_maps);
        trim(&mut self.extra);
        trim(&mut self.extras);
    }

    /// The heap the columns hold ([`crate::memory`]).
    fn heap(&self) -> usize {
        fn vec<T>(v: &Vec<T>) -> usize {
            block(v.capacity().saturating_mul(std::mem::size_of::<T>()))
        }
        let maps = self
            .partition_maps
            .iter()
            .fold(vec(&self.partition_maps), |n, m| {
                n.saturating_add(m.heap_bytes())
            });
        let extras = self
            .extras
            .iter()
            .fold(vec(&self.extras), |n, e| n.saturating_add(e.heap_bytes()));
        [
            vec(&self.hashes),
            self.paths.heap_bytes(),
            self.stats.heap_bytes(),
            vec(&self.sizes),
            vec(&self.modification_times),
            vec(&self.flags),
            vec(&self.partitions),
            maps,
            hash_table(self.partition_lookup.capacity(), 4),
            vec(&self.extra),
            extras,
            hash_table(self.index.capacity(), 4),
            self.typed.lock().heap_bytes(),
        ]
        .iter()
        .fold(0usize, |n, b| n.saturating_add(*b))
    }
}

impl Row<'_> {
    /// The row as the `add` action it was built from.
    pub(crate) fn to_add(self) -> Add {
        let extras = self.extras();
        Add {
            path: self.path().to_string(),
            partition_values: self.partition_values().clone(),
            size: self.size(),
            modification_time: self.modification_time(),
            data_change: self.data_change(),
            stats: self.stats().map(Cow::into_owned),
            tags: extras.and_then(|e| e.tags.clone()),
            deletion_vector: extras.and_then(|e| e.deletion_vector.clone()).map(Box::new),
            base_row_id: extras.and_then(|e| e.base_row_id),
            default_row_commit_version: extras.and_then(|e| e.default_row_commit_version),
            clustering_provider: extras.and_then(|e| e.clustering_provider.clone()),
        }
    }
}

impl Frozen for FileColumns {
    type Item = Add;
    type Ref<'a> = FileRef<'a>;

    fn len(&self) -> usize {
        self.hashes.len()
    }

    fn to_item(entry: FileRef<'_>) -> Add {
        entry.to_add()
    }

    fn get(&self, row: usize) -> Option<FileRef<'_>> {
        let row = u32::try_from(row)
            .ok()
            .filter(|&r| (r as usize) < self.hashes.len())?;
        Some(FileRef::from(Row { columns: self, row }))
    }

    fn hash_at(&self, row: usize) -> Option<u64> {
        self.hashes.get(row).copied()
    }

    fn find(&self, hash: u64, eq: impl Fn(FileRef<'_>) -> bool) -> Option<usize> {
        self.find_row(hash, eq)
    }

    fn entries(&self) -> impl Iterator<Item = (u64, FileRef<'_>)> {
        // Rows number fewer than `u32::MAX` (invariant 4), so the zip covers them all.
        self.hashes
            .iter()
            .zip(0..u32::MAX)
            .map(move |(&h, row)| (h, FileRef::from(Row { columns: self, row })))
    }

    fn with_capacity(n: usize) -> Self {
        let mut c = FileColumns::default();
        c.reserve(n);
        c
    }

    fn reserve_more(&mut self, n: usize) {
        self.reserve(n);
    }

    fn push_ref(&mut self, hash: u64, entry: FileRef<'_>) -> bool {
        self.push(hash, entry)
    }

    fn insert_new(
        &mut self,
        hash: u64,
        item: Add,
        same: impl Fn(FileRef<'_>, &Add) -> bool,
    ) -> Result<(), Add> {
        if self.find_row(hash, |f| same(f, &item)).is_some()
            || !self.push(hash, FileRef::from(&item))
        {
            return Err(item);
        }
        Ok(())
    }

    fn absorb(&mut self, overlay: &mut Slab<Add>) -> bool {
        // Checked up front, so that no push below fails half-way (rows and extras both
        // stay under the bound when the sum does).
        if self.hashes.len().saturating_add(overlay.len()) >= NO_EXTRA as usize {
            return false;
        }
        self.reserve(overlay.len());
        for (h, add) in overlay.iter() {
            self.push(*h, FileRef::from(add));
        }
        overlay.clear();
        true
    }

    fn shrink(&mut self) {
        self.shrink_all();
    }

    fn heap_bytes(&self) -> usize {
        self.heap()
    }
}

/// A chunk [`AddChunk::pack`] gives back: its actions and their hashes.
pub(crate) type Unpacked = (Vec<Action>, Vec<u64>);

/// The adds of one decoded chunk, packed into columns on the thread that decoded them (the
/// strings copied once, the structs freed where they were allocated), each with its key
/// hash, for a replay to copy into its own columns: see [`KeyHasher::packing_adds`].
///
/// [`KeyHasher::packing_adds`]: crate::file_set::KeyHasher::packing_adds
#[derive(Debug, Default)]
pub struct AddChunk {
    /// Boxed: the chunk travels between threads and through results by value.
    columns: Box<FileColumns>,
}

impl AddChunk {
    /// Packs the adds of `actions` (`hashes[i]` the key hash of `actions[i]`) and returns
    /// the other actions, in order; gives both back when the chunk has a remove (whose
    /// order among the adds matters), holds no add or is too large.
    pub(crate) fn pack(
        actions: Vec<Action>,
        hashes: Vec<u64>,
    ) -> std::result::Result<(AddChunk, Vec<Action>), Unpacked> {
        let adds = actions
            .iter()
            .filter(|a| matches!(a, Action::Add(_)))
            .count();
        if adds == 0
            || adds >= NO_EXTRA as usize
            || hashes.len() != actions.len()
            || actions.iter().any(|a| matches!(a, Action::Remove(_)))
        {
            return Err((actions, hashes));
        }
        let mut columns = FileColumns::default();
        columns.hashes.reserve(adds);
        let mut others = Vec::new();
        for (hash, action) in hashes.into_iter().zip(actions) {
            match action {
                // Below the bound, checked above: the push succeeds.
                Action::Add(add) => {
                    columns.push_unindexed(hash, FileRef::from(&add));
                }
                other => others.push(other),
            }
        }
        Ok((
            AddChunk {
                columns: Box::new(columns),
            },
            others,
        ))
    }

    /// The code to give [`AddFields::partition`] for the next add: the previous add's when
    /// `same` holds for its map (nothing built), else that of `build()`'s map, interned.
    pub(crate) fn partition_code(
        &mut self,
        same: impl FnOnce(&OptStringMap) -> bool,
        build: impl FnOnce() -> OptStringMap,
    ) -> u32 {
        match self.columns.repeated_partition(same) {
            Some(code) => code,
            None => self.columns.intern(&build()),
        }
    }

    /// Room for `rows` more adds, so that a decoder packing a batch grows its columns
    /// once, not at every doubling.
    pub(crate) fn reserve(&mut self, rows: usize) {
        self.columns.reserve_rows(rows);
    }

    /// Appends one add read field by field under its key hash `hash` (a checkpoint decoder
    /// builds no `Add` for it); false, appending nothing, when the chunk already holds the
    /// most rows a set can.
    pub(crate) fn push_fields(&mut self, hash: u64, fields: AddFields<'_>) -> bool {
        self.columns.push_fields(hash, fields)
    }

    /// The adds as actions, for a sink that does not take them packed.
    pub(crate) fn into_actions(self) -> (Vec<Action>, Vec<u64>) {
        self.columns
            .entries()
            .map(|(h, f)| (Action::Add(f.to_add()), h))
            .unzip()
    }

    /// [`append_unindexed_to`](Self::append_unindexed_to) and then
    /// [`FileColumns::index_appended`], for one chunk: every add moved into `base` and
    /// indexed, or none (a key already present, in `base` or twice in the chunk; a chunk
    /// past the row bound), the adds then given back with their hashes, in order.
    #[cfg(test)]
    pub(crate) fn append_to(
        self,
        base: &mut FileColumns,
        same: impl Fn(FileRef<'_>, FileRef<'_>) -> bool,
    ) -> std::result::Result<(), Vec<(u64, Add)>> {
        match self.append_unindexed_to(base) {
            Ok(start) => base.index_appended(start, same),
            Err(chunk) => Err(chunk
                .entries()
                .map(|(hash, file)| (hash, file.to_add()))
                .collect()),
        }
    }

    /// Moves every add into `base` without indexing them (the caller indexes them later,
    /// with the rows of other chunks, through [`FileSet::index_appended`], before anything
    /// else reads or changes `base`): where they start in `base`. Gives the chunk back,
    /// moving nothing, when `base` cannot hold it. An empty base reserved for about as many
    /// rows takes the chunk's columns as they are (as [`append_to`](Self::append_to)).
    pub(crate) fn append_unindexed_to(
        self,
        base: &mut FileColumns,
    ) -> std::result::Result<(usize, usize), AddChunk> {
        let rows = self.columns.hashes.len();
        if base.hashes.is_empty()
            && base.extras.is_empty()
            && base.partition_maps.is_empty()
            && rows.saturating_add(rows / 16) >= base.hashes.capacity()
        {
            let index = std::mem::take(&mut base.index);
            *base = *self.columns;
            base.index = index;
            return Ok((0, 0));
        }
        base.append_unindexed(&self.columns).ok_or(self)
    }

    /// The adds with their hashes, in order.
    pub(crate) fn entries(&self) -> impl Iterator<Item = (u64, FileRef<'_>)> {
        self.columns.entries()
    }

    /// Number of adds.
    pub fn len(&self) -> usize {
        self.columns.hashes.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.columns.hashes.is_empty()
    }
}

impl FileSet<FileColumns> {
    /// Moves a chunk of adds into an unshared, unmasked base without indexing them
    /// ([`AddChunk::append_unindexed_to`]): where they start, for
    /// [`index_appended`](Self::index_appended), which must come before anything else reads
    /// or changes the set. Gives the chunk back when the base is shared or masked or cannot
    /// hold it.
    pub(crate) fn append_unindexed(
        &mut self,
        chunk: AddChunk,
    ) -> std::result::Result<(usize, usize), AddChunk> {
        match self.unshared_base() {
            Some(base) => chunk.append_unindexed_to(base),
            None => Err(chunk),
        }
    }

    /// Indexes every row appended without an index since `start` (one fill for the rows of
    /// many chunks walks the index table with fewer cache misses than one per chunk); when
    /// a key among them is already present, takes them out again and gives them back as
    /// adds with their hashes, in order, for the caller to insert one by one.
    ///
    /// The base is unshared and unmasked since [`append_unindexed`](Self::append_unindexed)
    /// (nothing may come between the two), so it is found here.
    pub(crate) fn index_appended(
        &mut self,
        root: &TableRoot,
        start: (usize, usize),
    ) -> std::result::Result<(), Vec<(u64, Add)>> {
        let Some(base) = self.unshared_base() else {
            return Ok(());
        };
        base.index_appended(start, |a, b| {
            key_eq(
                root,
                (a.path(), a.deletion_vector()),
                (b.path(), b.deletion_vector()),
            )
        })
    }
}

/// Random adds for tests of this layout and of the checkpoint decoder that packs into it.
#[cfg(test)]
pub(crate) mod testing {
    use crate::actions::{Add, DeletionVectorDescriptor, OptStringMap};

    /// A small deterministic generator (xorshift), so that failures reproduce.
    pub(crate) struct Rng(pub(crate) u64);

    impl Rng {
        pub(crate) fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        pub(crate) fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }

        pub(crate) fn chance(&mut self, one_in: u64) -> bool {
            self.below(one_in) == 0
        }
    }

    pub(crate) fn dv(rng: &mut Rng) -> DeletionVectorDescriptor {
        DeletionVectorDescriptor {
            storage_type: if rng.chance(2) { "u" } else { "i" }.into(),
            path_or_inline_dv: format!("dv{}", rng.below(3)),
            offset: rng.chance(2).then(|| rng.below(100) as i32),
            size_in_bytes: rng.below(1000) as i32,
            cardinality: rng.below(1000) as i64,
        }
    }

    /// An add with every field the log allows, each present or absent at random: partition
    /// values with NULLs and empty strings, statistics absent, empty or with nulls, tags
    /// (empty ones too), deletion vectors, row tracking and clustering.
    pub(crate) fn random_add(rng: &mut Rng, path: String) -> Add {
        let mut a = Add::builder(path, rng.below(1 << 40) as i64, rng.next() as i64 >> 1)
            .data_change(rng.chance(2))
            .build();
        for col in ["p", "q"] {
            if !rng.chance(3) {
                let v = match rng.below(4) {
                    0 => None,
                    1 => Some(String::new()),
                    _ => Some(format!("v{}", rng.below(5))),
                };
                a.partition_values.insert(col, v);
            }
        }
        a.stats = match rng.below(4) {
            0 => None,
            1 => Some(String::new()),
            2 => Some(r#"{"numRecords":3,"nullCount":{"x":null}}"#.into()),
            _ => Some(format!(
                r#"{{"numRecords":{},"minValues":{{"s":"ab\u00e9"}},"maxValues":{{"s":"z"}}}}"#,
                rng.below(100)
            )),
        };
        if rng.chance(4) {
            let mut tags = OptStringMap::default();
            if rng.chance(2) {
                tags.insert("k", Some("v".into()));
            }
            a.tags = Some(tags);
        }
        if rng.chance(3) {
            a.deletion_vector = Some(Box::new(dv(rng)));
        }
        if rng.chance(4) {
            a.base_row_id = Some(rng.below(1 << 30) as i64);
            a.default_row_commit_version = rng.chance(2).then(|| rng.below(50) as i64);
        }
        if rng.chance(6) {
            a.clustering_provider = Some("liquid".into());
        }
        a
    }
}

/// Rows of one batch, fewer than this, are indexed in row order: sorting them would cost more
/// than it saves.
const SORTED_INSERT_MIN: usize = 4096;

/// The order in which to index a batch of rows with hashes `hashes` into `index` (each row's
/// hash and offset into the batch, so that the loop reads no hash at random): by the bucket at which each row's probe starts, so that the inserts walk
/// the table's control bytes and slots from one end to the other instead of jumping at
/// random. At a million files the table is far larger than the caches, and in row order
/// nearly every insert missed them twice; in bucket order the processor streams the lines
/// ahead. Rows of one bucket keep their row order, so the first of two rows with one key is
/// the one indexed.
///
/// The bucket is the hash's low bits (`hashbrown` starts a probe at `hash & bucket_mask`,
/// with as many buckets as the power of two that holds its capacity at 7/8 full). Were that
/// to change, the order would only be slower, never wrong: any order indexes the same set.
fn insertion_order(hashes: &[u64], index: &HashTable<u32>) -> Vec<(u64, u32)> {
    let n = hashes.len();
    let rows = hashes.iter().enumerate().map(|(i, &h)| (h, i as u32));
    if n < SORTED_INSERT_MIN || u32::try_from(n).is_err() {
        return rows.collect();
    }
    let buckets = (index.capacity().saturating_mul(8) / 7)
        .max(1)
        .next_power_of_two();
    let bits = buckets.trailing_zeros();
    // A stable least-significant-digit radix sort on the bucket bits, eleven bits a pass:
    // two passes for tables of up to four million buckets.
    const DIGIT: u32 = 11;
    let mut keyed: Vec<(u64, u32)> = rows.collect();
    let mut spare = vec![(0u64, 0u32); n];
    let mut shift = 0;
    while shift < bits {
        let width = DIGIT.min(bits - shift);
        let digit = |h: u64| ((h >> shift) & ((1 << width) - 1)) as usize;
        let mut counts = [0usize; 1 << DIGIT];
        for &(h, _) in &keyed {
            counts[digit(h)] += 1;
        }
        let mut at = 0;
        for c in counts.iter_mut() {
            let here = *c;
            *c = at;
            at += here;
        }
        for &(h, i) in &keyed {
            let d = digit(h);
            if let Some(slot) = spare.get_mut(counts[d]) {
                *slot = (h, i);
            }
            counts[d] += 1;
        }
        std::mem::swap(&mut keyed, &mut spare);
        shift += width;
    }
    keyed
}

#[cfg(test)]
mod tests {
    use super::testing::*;
    use super::*;

    /// Rows are indexed in the order of the bucket their probe starts at, each row once,
    /// rows of one bucket in row order (so the first of two equal keys is the one indexed);
    /// a small batch keeps row order.
    #[test]
    fn rows_are_indexed_in_bucket_order() {
        let mut rng = Rng(0x5eed);
        for (rows, capacity) in [
            (100, 1000),
            (5000, 5000),
            (40_000, 1_000_000),
            (70_000, 70_000),
        ] {
            // Repeated hashes too: rows of one bucket, and equal keys.
            let hashes: Vec<u64> = (0..rows)
                .map(|_| if rng.chance(10) { 42 } else { rng.next() })
                .collect();
            let index: HashTable<u32> = HashTable::with_capacity(capacity);
            let buckets = (index.capacity() * 8 / 7).next_power_of_two() as u64;
            let order = insertion_order(&hashes, &index);
            let mut seen: Vec<u32> = order.iter().map(|&(_, i)| i).collect();
            for &(h, i) in &order {
                assert_eq!(hashes[i as usize], h);
            }
            if rows < SORTED_INSERT_MIN {
                assert!(seen.windows(2).all(|w| w[0] < w[1]), "row order");
                continue;
            }
            let key = |&(h, i): &(u64, u32)| (h & (buckets - 1), i);
            assert!(
                order.windows(2).all(|w| key(&w[0]) < key(&w[1])),
                "{rows} rows into {buckets} buckets are not in bucket, then row, order"
            );
            seen.sort_unstable();
            assert!(
                seen.iter().enumerate().all(|(k, &i)| k as u32 == i),
                "not a permutation"
            );
        }
    }
    use crate::file_set::{FileSet, key_hash};
    use crate::path::TableRoot;

    fn by_key(files: impl Iterator<Item = Add>) -> Vec<Add> {
        let mut v: Vec<Add> = files.collect();
        v.sort_by(|a, b| {
            (&a.path, a.deletion_vector.as_ref().map(|d| d.unique_id()))
                .cmp(&(&b.path, b.deletion_vector.as_ref().map(|d| d.unique_id())))
        });
        v
    }

    /// Every field of every add comes back from the columns as it went in.
    #[test]
    fn rows_give_back_the_adds_they_were_built_from() {
        let mut rng = Rng(0x2545_F491_4F6C_DD1D);
        let adds: Vec<Add> = (0..2000)
            .map(|i| random_add(&mut rng, format!("part-{i}.parquet")))
            .collect();
        let mut c = FileColumns::with_capacity(10);
        for (i, a) in adds.iter().enumerate() {
            assert!(c.push(i as u64, a.into()));
        }
        c.shrink();
        assert_eq!(c.len(), adds.len());
        for (i, a) in adds.iter().enumerate() {
            let row = c.get(i).unwrap();
            assert_eq!(&row.to_add(), a, "row {i}");
            assert_eq!(row.path(), a.path);
            assert_eq!(row.stats().as_deref(), a.stats.as_deref());
            assert_eq!(row.deletion_vector(), a.deletion_vector.as_deref());
            assert_eq!(c.find(i as u64, |f| f.path() == a.path), Some(i));
        }
        assert!(c.get(adds.len()).is_none());
        // The generator makes at most 8 x 8 distinct maps (absent, NULL, empty, v0-v4).
        assert!(
            c.partition_maps.len() <= 64,
            "partition values are interned: {} distinct maps",
            c.partition_maps.len()
        );
    }

    /// Invariants 1 and 2: every column has a row per hash, and the index holds exactly
    /// the rows, each under its own hash.
    fn assert_consistent(c: &FileColumns) {
        let n = c.hashes.len();
        for len in [
            c.paths.len(),
            c.stats.len(),
            c.sizes.len(),
            c.modification_times.len(),
            c.flags.len(),
            c.partitions.len(),
            c.extra.len(),
        ] {
            assert_eq!(len, n);
        }
        assert_eq!(c.index.len(), n, "the index holds exactly the rows");
        for (row, &h) in c.hashes.iter().enumerate() {
            assert!(
                c.index.find(h, |&i| i as usize == row).is_some(),
                "row {row}"
            );
        }
    }

    /// A chunk of new keys is appended whole; one with a key already in the base, or
    /// twice in itself, is undone, leaving the base as it was (rows, index, extras).
    #[test]
    fn a_chunk_appends_whole_or_not_at_all() {
        let root = TableRoot::new("file:///t");
        let hashing = hashbrown::DefaultHashBuilder::default();
        let mut rng = Rng(7);
        let chunk_of = |rng: &mut Rng, names: &[&str]| {
            let actions: Vec<Action> = names
                .iter()
                .map(|p| {
                    // Keys by path alone: a deletion vector would make a distinct key.
                    let mut a = random_add(rng, p.to_string());
                    a.deletion_vector = None;
                    Action::Add(a)
                })
                .collect();
            let hashes = actions
                .iter()
                .map(|a| match a {
                    Action::Add(a) => {
                        key_hash(&hashing, &root, &a.path, a.deletion_vector.as_deref())
                    }
                    _ => 0,
                })
                .collect();
            AddChunk::pack(actions, hashes).map(|(c, _)| c).unwrap()
        };
        let same = |a: FileRef<'_>, b: FileRef<'_>| {
            key_eq(
                &root,
                (a.path(), a.deletion_vector()),
                (b.path(), b.deletion_vector()),
            )
        };
        let mut base = FileColumns::default();
        let first = chunk_of(&mut rng, &["a", "b", "c"]);
        // An empty base takes a first chunk as it is, unless a key repeats in it.
        let twice = chunk_of(&mut rng, &["a", "z", "a"]);
        let Err(twice) = twice.append_to(&mut base, same) else {
            panic!("a chunk with a repeated key is refused");
        };
        assert_eq!(twice.len(), 3, "the chunk comes back whole");
        assert_eq!(base.hashes.len(), 0);
        assert_consistent(&base);
        assert!(first.append_to(&mut base, same).is_ok());
        assert_consistent(&base);
        let before: Vec<Add> = base.entries().map(|(_, f)| f.to_add()).collect();
        let extras = base.extras.len();
        for names in [&["d", "b", "e"][..], &["f", "g", "f"][..]] {
            let chunk = chunk_of(&mut rng, names);
            assert!(chunk.append_to(&mut base, same).is_err(), "{names:?}");
            assert_consistent(&base);
            let after: Vec<Add> = base.entries().map(|(_, f)| f.to_add()).collect();
            assert_eq!(after, before, "{names:?}");
            assert_eq!(base.extras.len(), extras);
        }
        let fresh = chunk_of(&mut rng, &["x", "y"]);
        let mut want = before.clone();
        want.extend(fresh.entries().map(|(_, f)| f.to_add()));
        assert!(fresh.append_to(&mut base, same).is_ok());
        assert_consistent(&base);
        let got: Vec<Add> = base.entries().map(|(_, f)| f.to_add()).collect();
        assert_eq!(got, want);
    }

    /// An empty base reserved for a checkpoint's rows adopts a chunk of its adds as it is
    /// (no copy of the arenas) when the reservation exceeds the chunk by no more than a
    /// sixteenth (the footer's count includes the protocol and metadata rows), and copies
    /// the chunk into its own room when it was reserved for many more (later chunks follow).
    #[test]
    fn an_empty_base_adopts_a_chunk_that_nearly_fills_its_reservation() {
        let root = TableRoot::new("file:///t");
        let hashing = hashbrown::DefaultHashBuilder::default();
        let mut rng = Rng(11);
        let same = |a: FileRef<'_>, b: FileRef<'_>| {
            key_eq(
                &root,
                (a.path(), a.deletion_vector()),
                (b.path(), b.deletion_vector()),
            )
        };
        let chunk = |rng: &mut Rng| {
            let mut c = AddChunk::default();
            c.reserve(1000);
            for i in 0..1000 {
                let a = random_add(rng, format!("f{i}"));
                let hash = key_hash(&hashing, &root, &a.path, a.deletion_vector.as_deref());
                assert!(c.columns.push_unindexed(hash, FileRef::from(&a)));
            }
            c
        };
        for (reserved, adopted) in [(1002, true), (1062, true), (1100, false), (40_000, false)] {
            let c = chunk(&mut rng);
            let arena = c.columns.paths.as_ptr();
            let mut base = FileColumns::with_capacity(reserved);
            assert!(c.append_to(&mut base, same).is_ok());
            assert_consistent(&base);
            assert_eq!(base.len(), 1000);
            assert_eq!(
                base.paths.as_ptr() == arena,
                adopted,
                "reserved for {reserved}"
            );
        }
    }

    /// Log replay over the columnar base agrees with replay over one struct per file (the
    /// layout it replaced, kept here as the oracle): random adds, re-adds with and without
    /// deletion vectors, removes, and freezes at random points, with snapshots taken along
    /// the way and checked at the end (a derived set never changes the one it came from).
    #[test]
    fn the_columnar_set_replays_as_the_struct_set_does() {
        let root = TableRoot::new("file:///t");
        let hashing = hashbrown::DefaultHashBuilder::default();
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let mut columns: FileSet<FileColumns> = FileSet::default();
        let mut oracle: FileSet<Slab<Add>> = FileSet::default();
        let mut taken = Vec::new();
        for step in 0..6000 {
            let path = format!("d/f{}.parquet", rng.below(400));
            let with_dv = rng.chance(3).then(|| dv(&mut rng));
            let hash = key_hash(&hashing, &root, &path, with_dv.as_ref());
            if rng.chance(3) {
                let key = (path.as_str(), with_dv.as_ref());
                assert_eq!(
                    columns.remove(&root, hash, key),
                    oracle.remove(&root, hash, key),
                    "step {step}"
                );
            } else {
                let mut a = random_add(&mut rng, path);
                a.deletion_vector = with_dv.map(Box::new);
                columns.insert(&root, hash, a.clone());
                oracle.insert(&root, hash, a);
            }
            match rng.below(200) {
                0 => {
                    columns.freeze();
                    oracle.freeze();
                }
                1 => {
                    columns.absorb_overlay();
                }
                2 => taken.push((columns.clone(), oracle.clone())),
                _ => {}
            }
        }
        taken.push((columns, oracle));
        for (i, (columns, oracle)) in taken.iter().enumerate() {
            assert_eq!(columns.len(), oracle.len(), "snapshot {i}");
            let want = by_key(oracle.iter().cloned());
            assert_eq!(
                by_key(columns.iter().map(FileRef::to_add)),
                want,
                "snapshot {i}"
            );
            for a in &want {
                let dv = a.deletion_vector.as_deref();
                let hash = key_hash(&hashing, &root, &a.path, dv);
                assert_eq!(
                    columns
                        .get(&root, hash, (&a.path, dv))
                        .map(FileRef::to_add)
                        .as_ref(),
                    Some(a)
                );
            }
        }
    }
}
