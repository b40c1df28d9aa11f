//! Planted bugs (cargo feature `planted-bugs`): a process-global switch that makes the engine
//! misbehave in one realistic way, so that the deterministic simulator (`alluvium-sim`) can
//! prove it would find that class of defect.
//!
//! This module owns the switch only; each bug is a small `#[cfg(feature = "planted-bugs")]`
//! branch at the real place in the engine (the commit loop and the group-commit queue here,
//! VACUUM and OPTIMIZE in `alluvium-compaction`). The switch is off unless [`plant`] turns
//! it on, so a build with the feature behaves exactly as one without it until a test plants
//! a bug. Only the simulator's dependency enables the feature (a workspace build unifies it
//! into every test binary, where the switch stays off); never an embedder.

use std::sync::atomic::{AtomicU8, Ordering};

/// One planted bug.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Bug {
    /// The commit loop skips `sync_deferred` of the new data files before the commit file
    /// names them: a machine crash can leave a commit whose files are gone.
    SkipDeferredSync,
    /// The commit loop treats a put whose outcome is unknown (an error that does not prove
    /// it had no effect) as failed and retries at the next version without reading back:
    /// a put that landed lands twice.
    AmbiguousPutAsFailed,
    /// After losing a put-if-absent to another writer, the commit loop overwrites that
    /// version instead of checking for conflicts and moving on: the winner's commit is lost.
    OverwriteLostVersion,
    /// VACUUM deletes unreferenced files however young they are: the files of a commit that
    /// lands during its run are deleted.
    VacuumIgnoresYoungFiles,
    /// OPTIMIZE rewrites a file without applying its deletion vector: deleted rows return.
    OptimizeDropsDeletionVector,
    /// The group-commit leader lets two members that record the same application id into
    /// one batch: one commit carries two `txn` actions of that `appId`.
    GroupCommitSharesAppId,
}

impl Bug {
    /// Every planted bug.
    pub const ALL: [Bug; 6] = [
        Bug::SkipDeferredSync,
        Bug::AmbiguousPutAsFailed,
        Bug::OverwriteLostVersion,
        Bug::VacuumIgnoresYoungFiles,
        Bug::OptimizeDropsDeletionVector,
        Bug::GroupCommitSharesAppId,
    ];

    fn code(self) -> u8 {
        match self {
            Bug::SkipDeferredSync => 1,
            Bug::AmbiguousPutAsFailed => 2,
            Bug::OverwriteLostVersion => 3,
            Bug::VacuumIgnoresYoungFiles => 4,
            Bug::OptimizeDropsDeletionVector => 5,
            Bug::GroupCommitSharesAppId => 6,
        }
    }
}

/// The planted bug's code; 0: none.
static PLANTED: AtomicU8 = AtomicU8::new(0);

/// Plants `bug` (or, with `None`, removes whatever was planted) for the whole process.
pub fn plant(bug: Option<Bug>) {
    PLANTED.store(bug.map_or(0, Bug::code), Ordering::SeqCst);
}

/// Whether `bug` is planted now.
pub fn planted(bug: Bug) -> bool {
    PLANTED.load(Ordering::SeqCst) == bug.code()
}
