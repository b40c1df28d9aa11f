//! Changing rows in place (DELETE, and the row deletions UPDATE and MERGE build on).
//!
//! [`deletes`] owns the one way rows of live files are deleted: deletion vectors
//! (merge-on-read) when the table allows them, copy-on-write rewrites otherwise.

pub(crate) mod delete;
pub(crate) mod deletes;

#[allow(unused_imports)]
pub(crate) use deletes::{DeleteStats, FileDeletes, apply_deletes, writes_deletion_vectors};
