//! The set of logical files of a table state, shareable between snapshots.
//!
//! A set is a frozen *base* (shared through an `Arc` by every snapshot derived from it)
//! plus a small private *overlay*: entries added or replaced since, and a *mask* of base
//! entries that are gone. Deriving the next snapshot from a state of a million files
//! therefore copies only the overlay, not the base: that is what makes incremental refresh
//! cost proportional to the new commits (SPEC.md §8).
//!
//! The base's layout is the set's [`Frozen`] type: live files keep theirs as columns
//! ([`crate::file_columns`]), tombstones as a [`Slab`] of structs. The overlay is always a
//! slab: it holds the few entries of the commits since the base was built.
//!
//! Invariants:
//! 1. Every masked key is present in the base.
//! 2. A key present in the overlay is masked in the base if the base has it, so iteration
//!    never yields one logical file twice.
//! 3. Keys compare by canonical path and deletion-vector id ([`FileKeyed`]).

use std::sync::Arc;

use hashbrown::HashTable;

use crate::actions::{Add, DeletionVectorDescriptor, Remove};
use crate::memory::{HeapSize, block, hash_table};
use crate::path::{TableRoot, canonical_path};

/// An entry keyed by path and deletion vector.
pub(crate) trait FileKeyed {
    fn key_path(&self) -> &str;
    fn key_dv(&self) -> Option<&DeletionVectorDescriptor>;
}

impl<T: FileKeyed> FileKeyed for &T {
    fn key_path(&self) -> &str {
        (*self).key_path()
    }
    fn key_dv(&self) -> Option<&DeletionVectorDescriptor> {
        (*self).key_dv()
    }
}

impl FileKeyed for Add {
    fn key_path(&self) -> &str {
        &self.path
    }
    fn key_dv(&self) -> Option<&DeletionVectorDescriptor> {
        self.deletion_vector.as_deref()
    }
}

impl FileKeyed for Remove {
    fn key_path(&self) -> &str {
        &self.path
    }
    fn key_dv(&self) -> Option<&DeletionVectorDescriptor> {
        self.deletion_vector.as_deref()
    }
}

fn dv_key(dv: Option<&DeletionVectorDescriptor>) -> Option<(&str, &str, Option<i32>)> {
    dv.map(|d| {
        (
            d.storage_type.as_str(),
            d.path_or_inline_dv.as_str(),
            d.offset,
        )
    })
}

/// Logical-file key equality: same deletion vector, same canonical path.
pub(crate) fn key_eq(
    root: &TableRoot,
    a: (&str, Option<&DeletionVectorDescriptor>),
    b: (&str, Option<&DeletionVectorDescriptor>),
) -> bool {
    dv_key(a.1) == dv_key(b.1)
        && (a.0 == b.0 || canonical_path(a.0, root) == canonical_path(b.0, root))
}

/// Hash of a logical-file key.
pub(crate) fn key_hash(
    hashing: &hashbrown::DefaultHashBuilder,
    root: &TableRoot,
    path: &str,
    dv: Option<&DeletionVectorDescriptor>,
) -> u64 {
    use std::hash::{BuildHasher, Hash, Hasher};
    let mut h = hashing.build_hasher();
    canonical_path(path, root).hash(&mut h);
    dv_key(dv).hash(&mut h);
    h.finish()
}

/// Computes the hashes a [`FileSet`] keys its entries by, away from the set: a checkpoint's
/// decoding threads hash the actions they decode, so the one thread that applies them in
/// order only looks them up. Equal to [`key_hash`] with the same hashing state and root.
#[derive(Debug, Clone)]
pub struct KeyHasher {
    hashing: hashbrown::DefaultHashBuilder,
    root: TableRoot,
    packs_adds: bool,
}

impl KeyHasher {
    pub(crate) fn new(hashing: hashbrown::DefaultHashBuilder, root: TableRoot) -> Self {
        KeyHasher {
            hashing,
            root,
            packs_adds: false,
        }
    }

    /// The same hasher, also asking the decoding threads to pack the adds of chunks
    /// without removes into columns ([`AddChunk`]).
    pub(crate) fn packing_adds(mut self) -> Self {
        self.packs_adds = true;
        self
    }

    /// Whether the sink takes adds packed ([`KeyHasher::packing_adds`]).
    pub(crate) fn packs_adds(&self) -> bool {
        self.packs_adds
    }

    /// The key hash of a file action; 0 for the other actions (never looked up).
    pub(crate) fn action_hash(&self, action: &crate::actions::Action) -> u64 {
        use crate::actions::Action;
        match action {
            Action::Add(a) => self.file_hash(&a.path, a.deletion_vector.as_deref()),
            Action::Remove(r) => self.file_hash(&r.path, r.deletion_vector.as_deref()),
            _ => 0,
        }
    }

    /// The key hash of the file at `path` with deletion vector `dv`.
    pub(crate) fn file_hash(&self, path: &str, dv: Option<&DeletionVectorDescriptor>) -> u64 {
        key_hash(&self.hashing, &self.root, path, dv)
    }
}

/// A masked base entry, identified exactly as the base stores it.
#[derive(Debug, Clone)]
struct Masked {
    hash: u64,
    path: String,
    dv: Option<(String, String, Option<i32>)>,
}

impl Masked {
    fn of<T: FileKeyed>(hash: u64, t: &T) -> Self {
        Masked {
            hash,
            path: t.key_path().to_string(),
            dv: t.key_dv().map(|d| {
                (
                    d.storage_type.clone(),
                    d.path_or_inline_dv.clone(),
                    d.offset,
                )
            }),
        }
    }

    fn matches<T: FileKeyed>(&self, t: &T) -> bool {
        self.path == t.key_path()
            && self
                .dv
                .as_ref()
                .map(|(a, b, c)| (a.as_str(), b.as_str(), *c))
                == dv_key(t.key_dv())
    }
}

/// Entries stored densely with a hash index of positions.
///
/// Keeping the entries in a `Vec` rather than in the hash table's buckets matters at scale:
/// a table of a million entries reserves two million buckets, and a bucket of a 250-byte
/// action wastes far more than a bucket of a `usize`. Iteration walks the dense vector.
///
/// Invariant: `index` holds exactly the positions `0..entries.len()`, each under the hash
/// stored with its entry.
#[derive(Debug, Clone)]
pub(crate) struct Slab<T> {
    entries: Vec<(u64, T)>,
    index: HashTable<usize>,
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Slab {
            entries: Vec::new(),
            index: HashTable::new(),
        }
    }
}

impl<T> Slab<T> {
    fn with_capacity(n: usize) -> Self {
        Slab {
            entries: Vec::with_capacity(n),
            index: HashTable::with_capacity(n),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn reserve(&mut self, n: usize) {
        self.entries.reserve(n);
        let entries = &self.entries;
        self.index
            .reserve(n, |&i| entries.get(i).map_or(0, |(h, _)| *h));
    }

    /// Position of the entry with this hash satisfying `eq`.
    fn find(&self, hash: u64, eq: impl Fn(&T) -> bool) -> Option<usize> {
        let entries = &self.entries;
        self.index
            .find(hash, |&i| {
                entries.get(i).is_some_and(|(h, t)| *h == hash && eq(t))
            })
            .copied()
    }

    fn get(&self, i: usize) -> Option<&T> {
        self.entries.get(i).map(|(_, t)| t)
    }

    fn set(&mut self, i: usize, item: T) {
        if let Some(slot) = self.entries.get_mut(i) {
            slot.1 = item;
        }
    }

    /// Appends an entry whose key is not present.
    fn push(&mut self, hash: u64, item: T) {
        let i = self.entries.len();
        self.entries.push((hash, item));
        let entries = &self.entries;
        self.index
            .insert_unique(hash, i, |&j| entries.get(j).map_or(0, |(h, _)| *h));
    }

    /// Removes the entry at `i`, moving the last entry into its place.
    fn remove_at(&mut self, i: usize) {
        let Some(&(hash, _)) = self.entries.get(i) else {
            return;
        };
        if let Ok(e) = self.index.find_entry(hash, |&j| j == i) {
            e.remove();
        }
        let last = self.entries.len() - 1;
        if i != last
            && let Some(&(last_hash, _)) = self.entries.get(last)
            && let Some(slot) = self.index.find_mut(last_hash, |&j| j == last)
        {
            *slot = i;
        }
        self.entries.swap_remove(i);
    }

    /// Removes every entry, keeping the room.
    pub(crate) fn clear(&mut self) {
        self.entries.clear();
        self.index.clear();
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &(u64, T)> {
        self.entries.iter()
    }

    /// Gives back the entries' spare room when it exceeds an eighth of them. A load
    /// reserves for the checkpoint's rows, and the first commit after it that adds a file
    /// doubles the vector: a base of a million entries would keep room for two million
    /// (192 MB unused, and counted by the memory estimate) for the life of the snapshot.
    /// The index keeps its buckets: rebuilding them would cost a rehash of every entry.
    fn trim(&mut self) {
        if self.entries.capacity() > self.entries.len() + self.entries.len() / 8 {
            self.entries.shrink_to_fit();
        }
    }
}

impl<T: HeapSize> Slab<T> {
    /// The heap the entries and the index hold ([`crate::memory`]).
    fn heap_bytes(&self) -> usize {
        let entries = block(
            self.entries
                .capacity()
                .saturating_mul(std::mem::size_of::<(u64, T)>()),
        );
        self.entries.iter().fold(
            entries.saturating_add(hash_table(
                self.index.capacity(),
                std::mem::size_of::<usize>(),
            )),
            |n, (_, t)| n.saturating_add(t.heap_bytes()),
        )
    }
}

/// The frozen layout of a [`FileSet`]'s base: built once from entries, then shared and
/// only read.
pub(crate) trait Frozen: Default {
    /// The entries the overlay holds (and the set is given).
    type Item: FileKeyed + Clone;
    /// How an entry of the set is read, from the base or the overlay.
    type Ref<'a>: FileKeyed + Copy + From<&'a Self::Item>
    where
        Self: 'a;
    /// Number of entries.
    fn len(&self) -> usize;
    /// An owned copy of an entry.
    fn to_item(entry: Self::Ref<'_>) -> Self::Item;
    /// The entry at `i`.
    fn get(&self, i: usize) -> Option<Self::Ref<'_>>;
    /// The hash of the entry at `i`.
    fn hash_at(&self, i: usize) -> Option<u64>;
    /// The position of the entry with this hash satisfying `eq`.
    fn find(&self, hash: u64, eq: impl Fn(Self::Ref<'_>) -> bool) -> Option<usize>;
    /// Every entry with its hash, in order.
    fn entries(&self) -> impl Iterator<Item = (u64, Self::Ref<'_>)>;
    /// An empty base with room for `n` entries.
    fn with_capacity(n: usize) -> Self;
    /// Room for `n` more entries.
    fn reserve_more(&mut self, n: usize);
    /// Appends a copy of `entry`, whose key is not present, under `hash`; false (nothing
    /// appended) when the base can hold no more.
    fn push_ref(&mut self, hash: u64, entry: Self::Ref<'_>) -> bool;
    /// Appends `item` under `hash` unless an entry with that hash satisfies `same` (or the
    /// base can hold no more), in which case it gives `item` back.
    fn insert_new(
        &mut self,
        hash: u64,
        item: Self::Item,
        same: impl Fn(Self::Ref<'_>, &Self::Item) -> bool,
    ) -> Result<(), Self::Item>;
    /// Moves the overlay's entries, none of whose keys is present, into the base, leaving
    /// the overlay empty with its room (a load fills it again); false, changing nothing,
    /// when the base can hold no more.
    fn absorb(&mut self, overlay: &mut Slab<Self::Item>) -> bool;
    /// Gives back spare room.
    fn shrink(&mut self);
    /// The heap the base holds ([`crate::memory`]).
    fn heap_bytes(&self) -> usize;
}

impl<T: FileKeyed + Clone> Frozen for Slab<T>
where
    T: HeapSize,
{
    type Item = T;
    type Ref<'a>
        = &'a T
    where
        T: 'a;

    fn len(&self) -> usize {
        self.entries.len()
    }

    fn to_item(entry: &T) -> T {
        entry.clone()
    }

    fn get(&self, i: usize) -> Option<&T> {
        Slab::get(self, i)
    }

    fn hash_at(&self, i: usize) -> Option<u64> {
        self.entries.get(i).map(|(h, _)| *h)
    }

    fn find(&self, hash: u64, eq: impl Fn(&T) -> bool) -> Option<usize> {
        Slab::find(self, hash, eq)
    }

    fn entries(&self) -> impl Iterator<Item = (u64, &T)> {
        self.entries.iter().map(|(h, t)| (*h, t))
    }

    fn with_capacity(n: usize) -> Self {
        Slab::with_capacity(n)
    }

    fn reserve_more(&mut self, n: usize) {
        self.reserve(n);
    }

    fn push_ref(&mut self, hash: u64, entry: &T) -> bool {
        self.push(hash, entry.clone());
        true
    }

    fn insert_new(&mut self, hash: u64, item: T, same: impl Fn(&T, &T) -> bool) -> Result<(), T> {
        if self.find(hash, |t| same(t, &item)).is_some() {
            return Err(item);
        }
        self.push(hash, item);
        Ok(())
    }

    fn absorb(&mut self, overlay: &mut Slab<T>) -> bool {
        // An empty base without the room takes the overlay whole; one reserved for a load
        // keeps its room.
        if self.entries.is_empty() && self.entries.capacity() < overlay.len() {
            std::mem::swap(self, overlay);
            return true;
        }
        self.reserve(overlay.len());
        for (h, t) in overlay.entries.drain(..) {
            self.push(h, t);
        }
        overlay.index.clear();
        true
    }

    fn shrink(&mut self) {
        self.trim();
    }

    fn heap_bytes(&self) -> usize {
        Slab::heap_bytes(self)
    }
}

/// An iterator over a known number of items: it says how many are left, which a filter
/// (the masked base rows) would hide, so that `collect` sizes its vector once instead of
/// doubling it (1M files: 20 copies of a growing vector otherwise).
struct Counted<I> {
    inner: I,
    /// Items not yet yielded. Only a hint: a wrong count costs a reallocation, not
    /// correctness (`random_operations_match_a_map_model` checks it is exact).
    left: usize,
}

impl<I: Iterator> Iterator for Counted<I> {
    type Item = I::Item;

    fn next(&mut self) -> Option<I::Item> {
        let item = self.inner.next();
        if item.is_some() {
            self.left = self.left.saturating_sub(1);
        }
        item
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

/// A layered set of file entries (see the module docs).
#[derive(Debug, Clone)]
pub(crate) struct FileSet<B: Frozen> {
    base: Arc<B>,
    overlay: Slab<B::Item>,
    masked: HashTable<Masked>,
    /// The base was reserved for a load ([`FileSet::reserve`]): the next freeze gives
    /// back what the load did not use. A base that grew in place without a reservation
    /// keeps its room: trimming it at every freeze would copy it every time it grows.
    reserved: bool,
}

impl<B: Frozen> Default for FileSet<B> {
    fn default() -> Self {
        FileSet {
            base: Arc::new(B::default()),
            overlay: Slab::default(),
            masked: HashTable::new(),
            reserved: false,
        }
    }
}

impl<B: Frozen> FileSet<B> {
    fn find_base(
        &self,
        root: &TableRoot,
        hash: u64,
        key: (&str, Option<&DeletionVectorDescriptor>),
    ) -> Option<B::Ref<'_>> {
        self.base
            .find(hash, |t| key_eq(root, (t.key_path(), t.key_dv()), key))
            .and_then(|i| self.base.get(i))
            .filter(|t| !self.is_masked(hash, t))
    }

    fn is_masked<K: FileKeyed>(&self, hash: u64, t: &K) -> bool {
        !self.masked.is_empty()
            && self
                .masked
                .find(hash, |m| m.hash == hash && m.matches(t))
                .is_some()
    }

    /// Reserves room for `n` more entries: in the base when new keys go there
    /// ([`unshared_base`](Self::unshared_base)), else in the overlay.
    pub(crate) fn reserve(&mut self, n: usize) {
        match self.unshared_base() {
            Some(base) => {
                base.reserve_more(n);
                self.reserved = true;
            }
            None => self.overlay.reserve(n),
        }
    }

    /// The entry with this key.
    pub(crate) fn get(
        &self,
        root: &TableRoot,
        hash: u64,
        key: (&str, Option<&DeletionVectorDescriptor>),
    ) -> Option<B::Ref<'_>> {
        self.overlay
            .find(hash, |t| key_eq(root, (t.key_path(), t.key_dv()), key))
            .and_then(|i| self.overlay.get(i))
            .map(B::Ref::from)
            .or_else(|| self.find_base(root, hash, key))
    }

    /// Inserts or replaces the entry with `item`'s key.
    pub(crate) fn insert(&mut self, root: &TableRoot, hash: u64, item: B::Item) {
        // Nothing shares the base and nothing shadows or masks it (a load, mostly): a new
        // key goes straight into the base, found absent and placed in one visit of its
        // index.
        let item = match self.unshared_base() {
            Some(base) => match base.insert_new(hash, item, |t, item| {
                key_eq(
                    root,
                    (t.key_path(), t.key_dv()),
                    (item.key_path(), item.key_dv()),
                )
            }) {
                Ok(()) => return,
                Err(item) => item,
            },
            None => item,
        };
        let key = (item.key_path(), item.key_dv());
        if let Some(i) = self
            .overlay
            .find(hash, |t| key_eq(root, (t.key_path(), t.key_dv()), key))
        {
            self.overlay.set(i, item);
            return;
        }
        if let Some(old) = self.find_base(root, hash, key) {
            let m = Masked::of(hash, &old);
            self.masked.insert_unique(hash, m, |m| m.hash);
        }
        self.overlay.push(hash, item);
    }

    /// Inserts or replaces the entry with `entry`'s key, copying it: a new key straight
    /// into an unshared, unmasked base (how a load applies the adds its decoding threads
    /// packed), else as [`insert`](Self::insert) does.
    pub(crate) fn insert_copy(&mut self, root: &TableRoot, hash: u64, entry: B::Ref<'_>) {
        if let Some(base) = self.unshared_base() {
            let key = (entry.key_path(), entry.key_dv());
            if base
                .find(hash, |t| key_eq(root, (t.key_path(), t.key_dv()), key))
                .is_none()
                && base.push_ref(hash, entry)
            {
                return;
            }
        }
        self.insert(root, hash, B::to_item(entry));
    }

    /// The base, when nothing shares it and nothing shadows or masks it: entries may then
    /// be added to it in place.
    pub(crate) fn unshared_base(&mut self) -> Option<&mut B> {
        if !self.overlay.is_empty() || !self.masked.is_empty() {
            return None;
        }
        Arc::get_mut(&mut self.base)
    }

    /// Whether the set is empty.
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Removes the entry with this key; returns whether there was one.
    pub(crate) fn remove(
        &mut self,
        root: &TableRoot,
        hash: u64,
        key: (&str, Option<&DeletionVectorDescriptor>),
    ) -> bool {
        if let Some(i) = self
            .overlay
            .find(hash, |t| key_eq(root, (t.key_path(), t.key_dv()), key))
        {
            self.overlay.remove_at(i);
            // A base entry with this key was masked when the overlay entry shadowed it.
            return true;
        }
        if let Some(old) = self.find_base(root, hash, key) {
            let m = Masked::of(hash, &old);
            self.masked.insert_unique(hash, m, |m| m.hash);
            return true;
        }
        false
    }

    /// The base, every entry of it, masked or not ([`Self::live_base_entry`] tells).
    pub(crate) fn base(&self) -> &B {
        &self.base
    }

    /// The base's entry at `i`, unless it is masked (gone from this set).
    pub(crate) fn live_base_entry(&self, i: usize) -> Option<B::Ref<'_>> {
        let t = self.base.get(i)?;
        if self.masked.is_empty() {
            return Some(t);
        }
        let hash = self.base.hash_at(i)?;
        (!self.is_masked(hash, &t)).then_some(t)
    }

    /// The overlay's entries, in [`Self::iter`] order (which yields them after the base's).
    pub(crate) fn overlay(&self) -> impl ExactSizeIterator<Item = &B::Item> {
        self.overlay.entries.iter().map(|(_, t)| t)
    }

    /// Every entry, in no particular order. The iterator's size hint is the number of
    /// entries left ([`Self::len`]), so collecting them allocates once.
    pub(crate) fn iter(&self) -> impl Iterator<Item = B::Ref<'_>> {
        let masking = !self.masked.is_empty();
        Counted {
            inner: self
                .base
                .entries()
                .filter(move |(h, t)| !masking || !self.is_masked(*h, t))
                .map(|(_, t)| t)
                .chain(self.overlay.iter().map(|(_, t)| B::Ref::from(t))),
            left: self.len(),
        }
    }

    /// The heap this set holds ([`crate::memory`]): the base (whole, though other sets
    /// may share it), the overlay and the mask.
    pub(crate) fn heap_bytes(&self) -> usize
    where
        B::Item: HeapSize,
    {
        let masked = self.masked.iter().fold(
            hash_table(self.masked.capacity(), std::mem::size_of::<Masked>()),
            |n, m| {
                n.saturating_add(m.path.heap_bytes()).saturating_add(
                    m.dv.as_ref()
                        .map_or(0, |(a, b, _)| a.heap_bytes().saturating_add(b.heap_bytes())),
                )
            },
        );
        block(std::mem::size_of::<B>() + 16)
            .saturating_add(self.base.heap_bytes())
            .saturating_add(self.overlay.heap_bytes())
            .saturating_add(masked)
    }

    /// Number of entries.
    pub(crate) fn len(&self) -> usize {
        self.base.len() - self.masked.len() + self.overlay.len()
    }

    /// Moves the overlay into the base in place when nothing else shares the base and no
    /// base entry is masked (entries added while another snapshot shared the base, which
    /// has since been dropped): cheaper than building a new base. Returns whether it moved
    /// them.
    pub(crate) fn absorb_overlay(&mut self) -> bool {
        if self.overlay.is_empty() || !self.masked.is_empty() {
            return false;
        }
        let Some(base) = Arc::get_mut(&mut self.base) else {
            return false;
        };
        base.absorb(&mut self.overlay)
    }

    /// Folds the overlay into a new base when it has grown to a quarter of the base (or the
    /// base is empty), so lookups and iteration stay cheap; otherwise keeps sharing.
    pub(crate) fn freeze(&mut self) {
        if (self.overlay.is_empty() && self.masked.is_empty()) || self.absorb_overlay() {
            if std::mem::take(&mut self.reserved)
                && let Some(base) = Arc::get_mut(&mut self.base)
            {
                base.shrink();
            }
            return;
        }
        if (self.overlay.len() + self.masked.len()) * 4 < self.base.len() {
            return;
        }
        let mut merged = B::with_capacity(self.len());
        let mut complete = true;
        for (h, t) in self.base.entries().filter(|(h, t)| !self.is_masked(*h, t)) {
            complete = complete && merged.push_ref(h, t);
        }
        for (h, t) in self.overlay.iter() {
            complete = complete && merged.push_ref(*h, B::Ref::from(t));
        }
        if !complete {
            // The entries do not fit one base: keep the layers, which still answer right.
            return;
        }
        merged.shrink();
        self.base = Arc::new(merged);
        self.overlay = Slab::default();
        self.masked = HashTable::new();
        self.reserved = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::FileRef;
    use crate::file_columns::FileColumns;

    fn add(path: &str, size: i64) -> Add {
        Add::builder(path, size, 0).build()
    }

    /// A base layout of live files: its entries read as [`FileRef`]s.
    trait Layout: Frozen<Item = Add> + std::fmt::Debug + Clone {
        fn view<'a>(r: Self::Ref<'a>) -> FileRef<'a>
        where
            Self: 'a;
    }

    impl Layout for Slab<Add> {
        fn view<'a>(r: &'a Add) -> FileRef<'a>
        where
            Self: 'a,
        {
            r.into()
        }
    }

    impl Layout for FileColumns {
        fn view<'a>(r: FileRef<'a>) -> FileRef<'a>
        where
            Self: 'a,
        {
            r
        }
    }

    fn sizes<B: Layout>(s: &FileSet<B>) -> Vec<(String, i64)> {
        let mut v: Vec<(String, i64)> = s
            .iter()
            .map(|a| {
                let f = B::view(a);
                (f.path().to_string(), f.size())
            })
            .collect();
        v.sort();
        v
    }

    fn size_at<B: Layout>(s: &FileSet<B>, root: &TableRoot, hash: u64, p: &str) -> Option<i64> {
        s.get(root, hash, (p, None)).map(|r| B::view(r).size())
    }

    /// A load reserves for its checkpoint's rows and then applies the commits after it; the
    /// frozen base keeps no room for twice its entries.
    #[test]
    fn the_frozen_base_gives_back_the_room_a_late_add_doubled() {
        let root = TableRoot::new("memory://");
        let hashing = hashbrown::DefaultHashBuilder::default();
        let mut s: FileSet<Slab<Add>> = FileSet::default();
        s.reserve(1000);
        assert!(
            s.base.entries.capacity() >= 1000,
            "an unshared base is reserved"
        );
        // New keys go straight into an unshared base.
        for i in 0..1001 {
            let a = add(&format!("f{i}"), i);
            s.insert(&root, key_hash(&hashing, &root, &a.path, None), a);
        }
        assert_eq!(s.overlay.len(), 0);
        assert!(
            s.base.entries.capacity() >= 2000,
            "the late add doubled the room"
        );
        s.freeze();
        assert_eq!(s.len(), 1001);
        assert!(
            s.base.entries.capacity() <= 1001 + 1001 / 8,
            "{}",
            s.base.entries.capacity()
        );
    }

    /// A base that grows in place without a reservation (a replay continued from a state
    /// it owns) is not trimmed, and so not copied, at every freeze.
    #[test]
    fn an_unreserved_base_keeps_its_room_through_freezes() {
        let root = TableRoot::new("memory://");
        let hashing = hashbrown::DefaultHashBuilder::default();
        let mut s: FileSet<Slab<Add>> = FileSet::default();
        for i in 0..101 {
            let a = add(&format!("f{i}"), i);
            s.insert(&root, key_hash(&hashing, &root, &a.path, None), a);
        }
        let room = s.base.entries.capacity();
        assert!(
            room - 101 > 101 / 8,
            "doubling left room a trim would return"
        );
        s.freeze();
        assert_eq!(s.base.entries.capacity(), room);
    }

    #[test]
    fn overlay_shadows_masks_and_shares_the_base() {
        shadows_masks_and_shares::<Slab<Add>>();
        shadows_masks_and_shares::<FileColumns>();
    }

    fn shadows_masks_and_shares<B: Layout>() {
        let root = TableRoot::new("memory://");
        let hashing = hashbrown::DefaultHashBuilder::default();
        let h = |p: &str| key_hash(&hashing, &root, p, None);
        let mut base: FileSet<B> = FileSet::default();
        for (p, s) in [
            ("a", 1),
            ("b", 2),
            ("c", 3),
            ("d", 4),
            ("e", 5),
            ("f", 6),
            ("g", 7),
            ("h", 8),
        ] {
            base.insert(&root, h(p), add(p, s));
        }
        for i in 0..92 {
            let p = format!("pad{i:02}");
            base.insert(&root, h(&p), add(&p, 100 + i));
        }
        base.freeze();
        assert_eq!(base.overlay.len(), 0);
        let mut next = base.clone();
        assert!(
            Arc::ptr_eq(&base.base, &next.base),
            "deriving shares the base"
        );
        next.insert(&root, h("a"), add("a", 10)); // replaces a base entry
        assert!(next.remove(&root, h("b"), ("b", None)));
        assert!(!next.remove(&root, h("b"), ("b", None)));
        next.insert(&root, h("z"), add("z", 26));
        assert!(next.remove(&root, h("a"), ("a", None))); // removes the shadowing entry
        next.insert(&root, h("a"), add("a", 11));
        next.freeze(); // small overlay: still shared
        assert!(Arc::ptr_eq(&base.base, &next.base));
        assert_eq!(next.len(), 100);
        assert_eq!(size_at(&next, &root, h("a"), "a").unwrap(), 11);
        assert!(next.get(&root, h("b"), ("b", None)).is_none());
        let expected: Vec<(String, i64)> = [
            ("a", 11),
            ("c", 3),
            ("d", 4),
            ("e", 5),
            ("f", 6),
            ("g", 7),
            ("h", 8),
            ("z", 26),
        ]
        .iter()
        .map(|(p, s)| (p.to_string(), *s))
        .collect();
        let got: Vec<(String, i64)> = sizes(&next)
            .into_iter()
            .filter(|(p, _)| !p.starts_with("pad"))
            .collect();
        assert_eq!(got, expected);
        assert_eq!(sizes(&base).len(), 100, "the original is untouched");
        assert_eq!(size_at(&base, &root, h("a"), "a").unwrap(), 1);
        // A large overlay folds into a new base with the same contents.
        for i in 0..30 {
            let p = format!("n{i}");
            next.insert(&root, h(&p), add(&p, i));
        }
        next.freeze();
        assert!(!Arc::ptr_eq(&base.base, &next.base));
        assert_eq!(next.len(), 130);
        assert!(next.masked.is_empty() && next.overlay.is_empty());
        assert_eq!(size_at(&next, &root, h("a"), "a").unwrap(), 11);
    }

    #[test]
    fn random_operations_match_a_map_model() {
        random_operations::<Slab<Add>>();
        random_operations::<FileColumns>();
    }

    fn random_operations<B: Layout>() {
        let root = TableRoot::new("memory://");
        let hashing = hashbrown::DefaultHashBuilder::default();
        let h = |p: &str| key_hash(&hashing, &root, p, None);
        let mut model: std::collections::BTreeMap<String, i64> = Default::default();
        let mut set: FileSet<B> = FileSet::default();
        let mut snapshots: Vec<(FileSet<B>, std::collections::BTreeMap<String, i64>)> = Vec::new();
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for step in 0..5000i64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let p = format!("f{}", x % 300);
            match x % 5 {
                0..=2 => {
                    set.insert(&root, h(&p), add(&p, step));
                    model.insert(p, step);
                }
                _ => {
                    assert_eq!(
                        set.remove(&root, h(&p), (&p, None)),
                        model.remove(&p).is_some()
                    );
                }
            }
            if step % 97 == 0 {
                set.freeze();
                snapshots.push((set.clone(), model.clone()));
            }
        }
        snapshots.push((set, model));
        for (set, model) in &snapshots {
            let expected: Vec<(String, i64)> = model.iter().map(|(k, v)| (k.clone(), *v)).collect();
            assert_eq!(sizes(set), expected);
            assert_eq!(set.len(), model.len());
            // The size hint counts down to exactly what is left, masked rows left out.
            let mut it = set.iter();
            for left in (0..=model.len()).rev() {
                assert_eq!(it.size_hint(), (left, Some(left)));
                assert_eq!(it.next().is_some(), left > 0);
            }
            for (k, v) in model {
                assert_eq!(size_at(set, &root, h(k), k), Some(*v));
            }
        }
    }
}
