//! Log replay (PROTOCOL.md "Action Reconciliation"): the table state at one version.
//!
//! Rules, applied oldest to newest (checkpoint rows first, then each commit in order):
//! 1. The latest `protocol` and the latest `metaData` win; both must exist.
//! 2. A logical file is identified by its canonical path plus its deletion-vector id. The
//!    newest action for a key decides: `add` makes it live (replacing an earlier add of the
//!    same key), `remove` makes it a tombstone.
//! 3. `txn`: the latest per application id; `domainMetadata`: the latest per domain, a
//!    removed domain disappears.
//! 4. `commitInfo`, `cdc`, `checkpointMetadata` and `sidecar` do not contribute.

use std::collections::HashMap;

use crate::FileRef;
use crate::actions::{
    Action, Add, DeletionVectorDescriptor, DomainMetadata, Metadata, Protocol, Remove,
    SetTransaction,
};
use crate::file_batch::FileBatch;
use crate::file_columns::{AddChunk, FileColumns};
use crate::file_set::{FileSet, KeyHasher, Slab, key_hash};
use crate::log_path::Version;
use crate::path::TableRoot;
use crate::stats::ColumnKey;
use crate::{LogError, Result};

type Hashing = hashbrown::DefaultHashBuilder;

/// The reconciled state of the table at one version.
#[derive(Debug, Clone)]
pub struct TableState {
    version: Version,
    protocol: Protocol,
    metadata: Metadata,
    files: FileSet<FileColumns>,
    tombstones: FileSet<Slab<Remove>>,
    txns: HashMap<String, SetTransaction>,
    domains: HashMap<String, DomainMetadata>,
    root: TableRoot,
    hashing: Hashing,
}

/// Accumulates actions into a [`TableState`].
#[derive(Debug)]
pub struct Replay {
    protocol: Option<Protocol>,
    metadata: Option<Metadata>,
    files: FileSet<FileColumns>,
    tombstones: FileSet<Slab<Remove>>,
    txns: HashMap<String, SetTransaction>,
    domains: HashMap<String, DomainMetadata>,
    root: TableRoot,
    hashing: Hashing,
    /// Where the rows of the checkpoint chunks appended to the file set but not yet indexed
    /// start, and how many there are ([`Replay::index_pending`]).
    unindexed: Option<(usize, usize)>,
    unindexed_rows: usize,
}

/// Rows of packed checkpoint chunks appended before the file set's index is filled for all
/// of them at once. The fill walks the index table in bucket order
/// (`file_columns::insertion_order`): for a chunk of 32 Ki rows into a table of a million
/// files nearly every insert still lands on a cache line of its own, for 256 Ki rows eight
/// share one. The rows are in the columns already, so waiting costs no memory.
const INDEX_BATCH_ROWS: usize = 256 * 1024;

impl Replay {
    /// An empty replay for a table at `root`.
    pub fn new(root: TableRoot) -> Self {
        Replay {
            protocol: None,
            metadata: None,
            files: FileSet::default(),
            tombstones: FileSet::default(),
            txns: HashMap::new(),
            domains: HashMap::new(),
            root,
            hashing: Hashing::default(),
            unindexed: None,
            unindexed_rows: 0,
        }
    }

    /// Continues replay from an existing state (incremental snapshot refresh).
    pub fn from_state(state: TableState) -> Self {
        Replay {
            protocol: Some(state.protocol),
            metadata: Some(state.metadata),
            files: state.files,
            tombstones: state.tombstones,
            txns: state.txns,
            domains: state.domains,
            root: state.root,
            hashing: state.hashing,
            unindexed: None,
            unindexed_rows: 0,
        }
    }

    /// Indexes the chunk rows appended without an index. Every use of the file set other
    /// than appending such a chunk comes after this (the index must hold every row), so it
    /// is the first step of each. A key among the rows that was already present takes them
    /// out again, and they are inserted one by one, in order, as a chunk with a known key
    /// always was.
    fn index_pending(&mut self) {
        let Some(start) = self.unindexed.take() else {
            return;
        };
        self.unindexed_rows = 0;
        if let Err(adds) = self.files.index_appended(&self.root, start) {
            for (hash, add) in adds {
                self.apply_hashed_add(hash, add);
            }
        }
    }

    /// Reserves room for `adds` more live files.
    pub fn reserve(&mut self, adds: usize) {
        self.files.reserve(adds);
    }

    /// Applies one action.
    pub fn apply(&mut self, action: Action) {
        match action {
            Action::Add(add) => {
                let hash = self.key_hash(&add.path, add.deletion_vector.as_deref());
                self.apply_hashed_add(hash, add);
            }
            Action::Remove(rm) => {
                let hash = self.key_hash(&rm.path, rm.deletion_vector.as_deref());
                self.apply_hashed_remove(hash, rm);
            }
            Action::Protocol(p) => self.protocol = Some(p),
            Action::Metadata(m) => self.metadata = Some(m),
            Action::Txn(t) => {
                self.txns.insert(t.app_id.clone(), t);
            }
            Action::DomainMetadata(d) => {
                if d.removed {
                    self.domains.remove(&d.domain);
                } else {
                    self.domains.insert(d.domain.clone(), d);
                }
            }
            Action::CommitInfo(_)
            | Action::Cdc(_)
            | Action::CheckpointMetadata(_)
            | Action::Sidecar(_) => {}
        }
    }

    /// Applies actions in order.
    pub fn apply_all(&mut self, actions: impl IntoIterator<Item = Action>) {
        for a in actions {
            self.apply(a);
        }
    }

    /// The key hash of a file action, as [`Replay::key_hasher`]'s hasher computes it.
    fn key_hash(&self, path: &str, dv: Option<&DeletionVectorDescriptor>) -> u64 {
        key_hash(&self.hashing, &self.root, path, dv)
    }

    /// Applies one action whose key hash was computed by [`Replay::key_hasher`]'s hasher.
    fn apply_hashed(&mut self, hash: u64, action: Action) {
        match action {
            Action::Add(add) => self.apply_hashed_add(hash, add),
            Action::Remove(rm) => self.apply_hashed_remove(hash, rm),
            other => self.apply(other),
        }
    }

    fn apply_hashed_add(&mut self, hash: u64, add: Add) {
        self.index_pending();
        let root = &self.root;
        self.tombstones
            .remove(root, hash, (&add.path, add.deletion_vector.as_deref()));
        self.files.insert(root, hash, add);
    }

    fn apply_hashed_remove(&mut self, hash: u64, rm: Remove) {
        self.index_pending();
        let root = &self.root;
        self.files
            .remove(root, hash, (&rm.path, rm.deletion_vector.as_deref()));
        self.tombstones.insert(root, hash, rm);
    }

    /// The state at `version`.
    ///
    /// # Errors
    /// [`LogError::MissingAction`] if no protocol or no metaData was seen.
    pub fn finish(mut self, version: Version) -> Result<TableState> {
        self.index_pending();
        self.files.freeze();
        self.tombstones.freeze();
        let protocol = self.protocol.ok_or(LogError::MissingAction {
            action: "protocol",
            version,
        })?;
        let metadata = self.metadata.ok_or(LogError::MissingAction {
            action: "metaData",
            version,
        })?;
        Ok(TableState {
            version,
            protocol,
            metadata,
            files: self.files,
            tombstones: self.tombstones,
            txns: self.txns,
            domains: self.domains,
            root: self.root,
            hashing: self.hashing,
        })
    }
}

impl TableState {
    /// The version.
    pub fn version(&self) -> Version {
        self.version
    }

    /// The protocol in force.
    pub fn protocol(&self) -> &Protocol {
        &self.protocol
    }

    /// The metadata in force.
    pub fn metadata(&self) -> &Metadata {
        &self.metadata
    }

    /// The table root used to canonicalize paths.
    pub fn root(&self) -> &TableRoot {
        &self.root
    }

    /// The live files (in no particular order), each read through a [`FileRef`].
    pub fn files(&self) -> impl Iterator<Item = FileRef<'_>> {
        self.files.iter()
    }

    /// The live files in batches with their statistics as typed columns holding at least
    /// `columns` ([`crate::file_batch`]): together, in order, they are
    /// [`files`](Self::files). The typed statistics of the files loaded with the state are
    /// built on first use and kept for later calls.
    pub fn file_batches(&self, columns: &[ColumnKey<'_>]) -> Vec<FileBatch<'_>> {
        crate::file_batch::batches(&self.files, columns)
    }

    /// Number of live files.
    pub fn num_files(&self) -> usize {
        self.files.len()
    }

    /// An estimate of the memory this state holds, by part ([`crate::memory`]). It walks
    /// every file once.
    pub fn memory_usage(&self) -> crate::memory::MemoryUsage {
        use crate::memory::{HeapSize, hash_table};
        use std::mem::size_of;
        let txns = self.txns.iter().fold(
            hash_table(self.txns.capacity(), size_of::<(String, SetTransaction)>()),
            |n, (k, t)| {
                n.saturating_add(k.heap_bytes())
                    .saturating_add(t.heap_bytes())
            },
        );
        let domains = self.domains.iter().fold(
            hash_table(
                self.domains.capacity(),
                size_of::<(String, DomainMetadata)>(),
            ),
            |n, (k, d)| {
                n.saturating_add(k.heap_bytes())
                    .saturating_add(d.heap_bytes())
            },
        );
        crate::memory::MemoryUsage {
            files: self.files.heap_bytes(),
            tombstones: self.tombstones.heap_bytes(),
            other: size_of::<TableState>()
                .saturating_add(self.metadata.heap_bytes())
                .saturating_add(txns)
                .saturating_add(domains),
        }
    }

    /// Every tombstone in the replayed segment, expired or not (in no particular order).
    pub fn tombstones(&self) -> impl Iterator<Item = &Remove> {
        self.tombstones.iter()
    }

    /// Tombstones whose deletion time is after `cutoff_ms` (missing timestamps count as 0).
    pub fn unexpired_tombstones(&self, cutoff_ms: i64) -> impl Iterator<Item = &Remove> {
        self.tombstones
            .iter()
            .filter(move |r| r.deletion_timestamp.unwrap_or(0) > cutoff_ms)
    }

    /// The live add with this path and deletion vector, if any.
    pub fn file(&self, path: &str, dv: Option<&DeletionVectorDescriptor>) -> Option<FileRef<'_>> {
        let hash = key_hash(&self.hashing, &self.root, path, dv);
        self.files.get(&self.root, hash, (path, dv))
    }

    /// The latest `txn` of every application.
    pub fn app_transactions(&self) -> &HashMap<String, SetTransaction> {
        &self.txns
    }

    /// The live domains.
    pub fn domains(&self) -> &HashMap<String, DomainMetadata> {
        &self.domains
    }
}

impl crate::checkpoint::ActionSink for Replay {
    fn expect(&mut self, rows: usize) {
        self.reserve(rows);
    }

    fn accept(&mut self, actions: Vec<Action>) -> Result<()> {
        self.apply_all(actions);
        Ok(())
    }

    fn key_hasher(&self) -> Option<KeyHasher> {
        Some(KeyHasher::new(self.hashing.clone(), self.root.clone()).packing_adds())
    }

    fn accept_packed(&mut self, adds: AddChunk, others: Vec<Action>) -> Result<()> {
        // No remove among `others`: only file actions interact, so the adds may follow.
        self.apply_all(others);
        // With no tombstone to end, the chunk usually goes into the columns whole, indexed
        // with the chunks after it.
        let adds = if self.tombstones.is_empty() {
            let rows = adds.len();
            match self.files.append_unindexed(adds) {
                Ok(start) => {
                    self.unindexed.get_or_insert(start);
                    self.unindexed_rows += rows;
                    if self.unindexed_rows >= INDEX_BATCH_ROWS {
                        self.index_pending();
                    }
                    return Ok(());
                }
                Err(adds) => adds,
            }
        } else {
            adds
        };
        self.index_pending();
        let root = &self.root;
        for (hash, file) in adds.entries() {
            if !self.tombstones.is_empty() {
                self.tombstones
                    .remove(root, hash, (file.path(), file.deletion_vector()));
            }
            self.files.insert_copy(root, hash, file);
        }
        Ok(())
    }

    fn accept_hashed(&mut self, actions: Vec<Action>, hashes: Vec<u64>) -> Result<()> {
        if hashes.len() != actions.len() {
            self.apply_all(actions);
            return Ok(());
        }
        for (hash, action) in hashes.into_iter().zip(actions) {
            self.apply_hashed(hash, action);
        }
        Ok(())
    }
}

/// A replay of a table at `root` whose first two actions were a protocol (reader 1,
/// writer 2) and a metadata with `schema` and no partition columns: the start the tests of
/// this crate's replay, checkpoints and batches share.
#[cfg(test)]
pub(crate) fn replay_with_schema(root: &str, schema: &str) -> Replay {
    let mut r = Replay::new(TableRoot::new(root));
    r.apply(Action::Protocol(Protocol {
        min_reader_version: 1,
        min_writer_version: 2,
        reader_features: None,
        writer_features: None,
    }));
    r.apply(Action::Metadata(Metadata {
        id: "id".into(),
        name: None,
        description: None,
        format: crate::actions::Format::default(),
        schema_string: schema.into(),
        partition_columns: vec![],
        created_time: None,
        configuration: HashMap::new(),
    }));
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn add(path: &str) -> Add {
        Add::builder(path, 1, 1).build()
    }

    fn remove(path: &str) -> Remove {
        Remove::from_add(&add(path), 10, true)
    }

    fn dv(id: &str) -> DeletionVectorDescriptor {
        DeletionVectorDescriptor {
            storage_type: "u".into(),
            path_or_inline_dv: id.into(),
            offset: Some(1),
            size_in_bytes: 1,
            cardinality: 1,
        }
    }

    fn base() -> Replay {
        replay_with_schema("file:///t", "{}")
    }

    /// Chunks hashed on decoding threads land where the sink's own hashing looks for them:
    /// a later remove, applied without a hash, finds a file added with one, and a hashed
    /// remove masks a hashed add of another spelling of the same path.
    #[test]
    fn hashed_chunks_are_keyed_as_the_sink_keys_them() {
        use crate::checkpoint::ActionSink;
        let mut r = base();
        let hasher = r.key_hasher().expect("a replay hashes its keys");
        let chunk = vec![
            Action::Add(add("a")),
            Action::Add(add("b%20c")),
            Action::Add(Add {
                deletion_vector: Some(Box::new(dv("x"))),
                ..add("d")
            }),
            Action::Remove(remove("file:///t/b%20c")),
        ];
        let hashes = chunk.iter().map(|a| hasher.action_hash(a)).collect();
        r.accept_hashed(chunk, hashes).unwrap();
        r.apply(Action::Remove(remove("a")));
        let state = r.finish(1).unwrap();
        assert!(
            state.file("a", None).is_none(),
            "the plain remove found the add"
        );
        assert!(
            state.file("b%20c", None).is_none(),
            "the hashed remove found the add"
        );
        assert!(state.file("d", Some(&dv("x"))).is_some());
        let paths: Vec<&str> = state.files().map(|f| f.path()).collect();
        assert_eq!(paths, ["d"]);
        assert_eq!(state.tombstones().count(), 2);
    }

    /// Adds packed on decoding threads replay as the same actions applied one by one
    /// (the oracle): across chunks, after tombstones of earlier chunks, with a duplicate
    /// key in one chunk (the later add wins), with other actions among them, and next to a
    /// chunk with removes, which is not packed (its order matters).
    #[test]
    fn packed_chunks_replay_as_their_actions() {
        use crate::checkpoint::ActionSink;
        let chunks: Vec<Vec<Action>> = vec![
            vec![Action::Remove(remove("t1")), Action::Add(add("a"))],
            vec![
                Action::Add(add("t1")),
                Action::Txn(SetTransaction {
                    app_id: "app".into(),
                    version: 3,
                    last_updated: None,
                }),
                Action::Add(Add {
                    deletion_vector: Some(Box::new(dv("x"))),
                    ..add("d")
                }),
                Action::Add(Add {
                    size: 7,
                    ..add("a")
                }),
                Action::Add(Add {
                    size: 8,
                    ..add("a")
                }),
                Action::Add(add("file:///t/e")),
            ],
        ];
        let mut packed = base();
        let mut oracle = base();
        let hasher = packed.key_hasher().expect("a replay hashes its keys");
        assert!(hasher.packs_adds());
        let mut packs = 0;
        for chunk in chunks {
            oracle.apply_all(chunk.clone());
            let hashes: Vec<u64> = chunk.iter().map(|a| hasher.action_hash(a)).collect();
            match AddChunk::pack(chunk, hashes) {
                Ok((adds, others)) => {
                    packs += 1;
                    packed.accept_packed(adds, others).unwrap();
                }
                Err((actions, hashes)) => packed.accept_hashed(actions, hashes).unwrap(),
            }
        }
        assert_eq!(packs, 1, "only the chunk without removes is packed");
        let (packed, oracle) = (packed.finish(1).unwrap(), oracle.finish(1).unwrap());
        let sorted = |s: &TableState| {
            let mut v: Vec<Add> = s.files().map(FileRef::to_add).collect();
            v.sort_by(|a, b| a.path.cmp(&b.path));
            v
        };
        assert_eq!(sorted(&packed), sorted(&oracle));
        assert_eq!(packed.file("a", None).map(|f| f.size()), Some(8));
        assert_eq!(packed.tombstones().count(), oracle.tombstones().count());
        assert_eq!(
            packed.tombstones().count(),
            0,
            "the re-add ended the tombstone"
        );
        assert_eq!(packed.app_transactions().len(), 1);
    }

    /// Chunks of adds only go into the columns whole; one with a key already present
    /// (from an earlier chunk, or twice in itself) is undone and inserted add by add, the
    /// later add of a key winning, as the oracle (the actions applied one by one) has it.
    #[test]
    fn whole_chunks_and_chunks_with_known_keys_replay_as_their_actions() {
        use crate::checkpoint::ActionSink;
        let sized = |p: &str, size: i64| Action::Add(Add { size, ..add(p) });
        let chunks: Vec<Vec<Action>> = vec![
            vec![sized("a", 1), sized("b", 2), sized("c", 3)],
            vec![sized("d", 4), sized("e", 5)],
            vec![sized("f", 6), sized("b", 7), sized("g", 8)],
            vec![sized("h", 9), sized("h", 10), sized("i", 11)],
        ];
        let mut packed = base();
        let mut oracle = base();
        let hasher = packed.key_hasher().expect("a replay hashes its keys");
        for chunk in chunks {
            oracle.apply_all(chunk.clone());
            let hashes: Vec<u64> = chunk.iter().map(|a| hasher.action_hash(a)).collect();
            let Ok((adds, others)) = AddChunk::pack(chunk, hashes) else {
                panic!("a chunk of adds packs");
            };
            packed.accept_packed(adds, others).unwrap();
        }
        // A remove after the chunks finds a file of theirs (the rows are indexed first).
        oracle.apply(Action::Remove(remove("d")));
        packed.apply(Action::Remove(remove("d")));
        let (packed, oracle) = (packed.finish(1).unwrap(), oracle.finish(1).unwrap());
        let sorted = |s: &TableState| {
            let mut v: Vec<(String, i64)> = s
                .files()
                .map(|f| (f.path().to_string(), f.size()))
                .collect();
            v.sort();
            v
        };
        assert_eq!(sorted(&packed), sorted(&oracle));
        assert_eq!(packed.num_files(), 8);
        assert!(packed.file("d", None).is_none());
        assert_eq!(packed.file("b", None).map(|f| f.size()), Some(7));
        assert_eq!(packed.file("h", None).map(|f| f.size()), Some(10));
        assert_eq!(packed.file("g", None).map(|f| f.size()), Some(8));
    }

    /// A chunk whose hashes do not line up with its actions is applied whole, as if
    /// unhashed (pairing them up would drop the actions past the last hash).
    #[test]
    fn a_short_hash_list_is_ignored() {
        use crate::checkpoint::ActionSink;
        let mut r = base();
        let hasher = r.key_hasher().expect("a replay hashes its keys");
        let first = Action::Add(add("a"));
        let hashes = vec![hasher.action_hash(&first)];
        r.accept_hashed(vec![first, Action::Add(add("b"))], hashes)
            .unwrap();
        r.apply(Action::Remove(remove("a")));
        let state = r.finish(1).unwrap();
        let paths: Vec<&str> = state.files().map(|f| f.path()).collect();
        assert_eq!(paths, ["b"]);
    }

    #[test]
    fn add_remove_and_readd() {
        let mut r = base();
        r.apply(Action::Add(add("a")));
        r.apply(Action::Add(add("b")));
        r.apply(Action::Remove(remove("a")));
        let mut again = add("a");
        again.modification_time = 99;
        r.apply(Action::Add(again));
        let s = r.finish(3).unwrap();
        assert_eq!(s.num_files(), 2);
        assert_eq!(s.file("a", None).unwrap().modification_time(), 99);
        assert_eq!(s.tombstones().count(), 0);
    }

    #[test]
    fn deletion_vector_updates_are_distinct_keys() {
        let mut r = base();
        r.apply(Action::Add(add("f")));
        let mut with_dv = add("f");
        with_dv.deletion_vector = Some(Box::new(dv("x")));
        let mut rm = remove("f");
        rm.deletion_vector = None;
        r.apply(Action::Remove(rm));
        r.apply(Action::Add(with_dv.clone()));
        let s = r.finish(2).unwrap();
        assert_eq!(s.num_files(), 1);
        assert!(s.file("f", Some(&dv("x"))).is_some());
        assert!(s.file("f", None).is_none());
        assert_eq!(s.tombstones().count(), 1);
    }

    #[test]
    fn canonical_paths_match_across_spellings() {
        let mut r = base();
        r.apply(Action::Add(add("/some/abs/p%20q")));
        r.apply(Action::Remove(remove("file:///some/abs/p%20q")));
        r.apply(Action::Add(add("file:///t/in%20root.parquet")));
        r.apply(Action::Remove(remove("in root.parquet")));
        let s = r.finish(1).unwrap();
        assert_eq!(s.num_files(), 0);
    }

    #[test]
    fn txns_domains_and_missing_actions() {
        let mut r = base();
        r.apply(Action::Txn(SetTransaction {
            app_id: "a".into(),
            version: 5,
            last_updated: None,
        }));
        r.apply(Action::Txn(SetTransaction {
            app_id: "a".into(),
            version: 3,
            last_updated: None,
        }));
        r.apply(Action::DomainMetadata(DomainMetadata {
            domain: "d".into(),
            configuration: "1".into(),
            removed: false,
        }));
        r.apply(Action::DomainMetadata(DomainMetadata {
            domain: "e".into(),
            configuration: "1".into(),
            removed: false,
        }));
        r.apply(Action::DomainMetadata(DomainMetadata {
            domain: "d".into(),
            configuration: "1".into(),
            removed: true,
        }));
        let s = r.finish(1).unwrap();
        assert_eq!(s.app_transactions()["a"].version, 3);
        assert_eq!(s.domains().keys().collect::<Vec<_>>(), vec!["e"]);
        assert!(matches!(
            Replay::new(TableRoot::new("x")).finish(0),
            Err(LogError::MissingAction {
                action: "protocol",
                ..
            })
        ));
    }
}
