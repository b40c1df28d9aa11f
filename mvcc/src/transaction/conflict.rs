//! Conflict checking (SPEC.md §7): does a concurrent commit invalidate what this
//! transaction read or changes?
//!
//! The checks, in order, against each winning commit W (oldest first):
//! 1. W changed the protocol: `ProtocolChanged`.
//! 2. W changed the metadata: `MetadataChanged`.
//! 3. W wrote a domain the transaction also writes, or a `txn` for an application whose
//!    version the transaction read: `ConcurrentTransaction`.
//! 4. The transaction changes data and is not a blind append: W added data
//!    (`dataChange=true`) that its read predicates may match (any, if it read the whole
//!    table or changes metadata): `ConcurrentAppend`.
//! 5. W removed a file the transaction read, or removed data (`dataChange=true`) from a table
//!    the transaction read whole: `ConcurrentDeleteRead`.
//! 6. W removed a file the transaction also removes (without having recorded it as read):
//!    `ConcurrentDeleteDelete`.
//!
//! This is the order of Delta Spark's `ConflictChecker.checkConflicts`. Its append check
//! also sees a winner's re-add of a file with a new deletion vector (and the rewritten file
//! of a copy-on-write DELETE) as added data, so two DELETEs of one file are normally a
//! `ConcurrentAppend`, as in Delta. Unlike Delta, alluvium matches added files against the
//! data predicates too (through their statistics), not only the partition predicates.
//!
//! Blind appends therefore conflict only on protocol, metadata, domain and application
//! transactions; rewrites with `dataChange=false` (compaction) only when a file they rewrite
//! was removed.

use std::collections::HashSet;

use alluvium_expr::{FileFilter, Predicate};
use alluvium_txlog::Version;
use alluvium_txlog::actions::{Action, DeletionVectorDescriptor};
use alluvium_txlog::path::{TableRoot, canonical_path};

use crate::{ConflictKind, MvccError};

/// A logical file's identity: canonical path plus deletion-vector id.
pub(crate) type FileKey = (String, Option<String>);

pub(crate) fn file_key(
    root: &TableRoot,
    path: &str,
    dv: Option<&DeletionVectorDescriptor>,
) -> FileKey {
    (
        canonical_path(path, root).into_owned(),
        dv.map(DeletionVectorDescriptor::unique_id),
    )
}

/// What the transaction read and changes, as the checker needs it.
#[derive(Debug, Default)]
pub(crate) struct ReadWriteSet {
    pub predicates: Vec<Predicate>,
    pub whole_table: bool,
    pub read_files: HashSet<FileKey>,
    pub read_app_ids: HashSet<String>,
    pub removed_files: HashSet<FileKey>,
    pub domains: HashSet<String>,
    pub blind_append: bool,
    pub changes_data: bool,
    pub changes_metadata: bool,
}

fn conflict(kind: ConflictKind, version: Version, detail: String) -> MvccError {
    MvccError::Conflict {
        kind,
        winning_version: version,
        detail,
    }
}

/// Checks one winning commit.
pub(crate) fn check_winner(
    txn: &ReadWriteSet,
    root: &TableRoot,
    version: Version,
    actions: &[Action],
) -> Result<(), MvccError> {
    for a in actions {
        match a {
            Action::Protocol(_) => {
                return Err(conflict(
                    ConflictKind::ProtocolChanged,
                    version,
                    "the protocol was changed concurrently".into(),
                ));
            }
            Action::Metadata(_) => {
                return Err(conflict(
                    ConflictKind::MetadataChanged,
                    version,
                    "the metadata (schema, partitioning or properties) was changed concurrently"
                        .into(),
                ));
            }
            _ => {}
        }
    }
    for a in actions {
        match a {
            Action::DomainMetadata(d) if txn.domains.contains(&d.domain) => {
                return Err(conflict(
                    ConflictKind::ConcurrentTransaction,
                    version,
                    format!("domain `{}` was written concurrently", d.domain),
                ));
            }
            Action::Txn(t) if txn.read_app_ids.contains(&t.app_id) => {
                return Err(conflict(
                    ConflictKind::ConcurrentTransaction,
                    version,
                    format!(
                        "application `{}` committed version {} concurrently",
                        t.app_id, t.version
                    ),
                ));
            }
            _ => {}
        }
    }
    if txn.changes_data && !txn.blind_append {
        let read = FileFilter::any_of(&txn.predicates);
        for a in actions {
            if let Action::Add(add) = a {
                if !add.data_change {
                    continue;
                }
                if txn.whole_table || txn.changes_metadata || read.may_match(add.into()) {
                    return Err(conflict(
                        ConflictKind::ConcurrentAppend,
                        version,
                        format!("file {} was added where the transaction read", add.path),
                    ));
                }
            }
        }
    }
    // Delta's order: a winner's removal of a file the transaction read is reported before
    // one of a file it also removes (`checkForDeletedFilesAgainstCurrentTxnReadFiles` runs
    // before `checkForDeletedFilesAgainstCurrentTxnDeletedFiles`), so a transaction that
    // read what it removes gets `ConcurrentDeleteRead`.
    let removes = || {
        actions.iter().filter_map(|a| match a {
            Action::Remove(rm) => {
                Some((rm, file_key(root, &rm.path, rm.deletion_vector.as_deref())))
            }
            _ => None,
        })
    };
    for (rm, key) in removes() {
        if txn.read_files.contains(&key) || (txn.whole_table && rm.data_change) {
            return Err(conflict(
                ConflictKind::ConcurrentDeleteRead,
                version,
                format!(
                    "file {} that the transaction read was removed concurrently",
                    rm.path
                ),
            ));
        }
    }
    for (rm, key) in removes() {
        if txn.removed_files.contains(&key) {
            return Err(conflict(
                ConflictKind::ConcurrentDeleteDelete,
                version,
                format!("file {} was removed concurrently", rm.path),
            ));
        }
    }
    Ok(())
}
