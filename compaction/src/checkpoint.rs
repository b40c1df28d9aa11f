//! The checkpoint policy (SPEC.md §9): when to checkpoint, and doing it safely.
//!
//! After a commit of version v with `v != 0` and `v % delta.checkpointInterval == 0`
//! (default 10), write a checkpoint of v, read it back, and only then publish
//! `_last_checkpoint` (never moving it backwards). A checkpoint failure never fails the
//! commit that triggered it: it is reported and the next interval tries again.

use alluvium_mvcc::Snapshot;
use alluvium_txlog::Version;
use alluvium_txlog::checkpoint::{
    CheckpointOptions, CheckpointOutput, write_checkpoint, write_last_checkpoint,
};

use crate::Result;

/// Whether the commit of `version` should be followed by a checkpoint.
pub fn should_checkpoint(snapshot: &Snapshot, version: Version) -> bool {
    checkpoint_due(snapshot.properties().checkpoint_interval(), version)
}

/// Whether a table whose `delta.checkpointInterval` is `interval` as of `version`
/// checkpoints at `version`: the rule of [`should_checkpoint`], for a writer that knows the
/// properties it committed under and need not load the new snapshot to learn them.
pub fn checkpoint_due(interval: u64, version: Version) -> bool {
    version != 0 && version.is_multiple_of(interval)
}

/// How checkpoints are written.
#[derive(Debug, Clone, Copy, Default)]
#[non_exhaustive]
pub struct CheckpointConfig {
    /// Split checkpoints with more actions than this (multi-part, or sidecars for V2).
    pub part_size: Option<usize>,
}

/// Builder-style setters: the struct is `#[non_exhaustive]`, so outside this crate it is
/// built from its `Default` with these.
impl CheckpointConfig {
    /// Sets [`part_size`](Self::part_size) (a value, or an `Option`).
    #[must_use]
    pub fn with_part_size(mut self, part_size: impl Into<Option<usize>>) -> Self {
        self.part_size = part_size.into();
        self
    }
}

/// Writes a checkpoint of `snapshot` and publishes it in `_last_checkpoint`.
///
/// # Errors
/// A table with writer features alluvium does not support (nothing is written); storage
/// errors, or a written file that does not read back as written; in both cases
/// `_last_checkpoint` is left untouched and the table stays readable.
pub fn checkpoint(
    snapshot: &Snapshot,
    config: &CheckpointConfig,
    now_ms: i64,
) -> Result<CheckpointOutput> {
    snapshot.check_writable()?;
    let options = CheckpointOptions {
        part_size: config.part_size,
        now_ms,
    };
    let out = write_checkpoint(snapshot.store_ref(), snapshot.state(), &options)?;
    write_last_checkpoint(snapshot.store_ref(), &out.hint)?;
    Ok(out)
}
