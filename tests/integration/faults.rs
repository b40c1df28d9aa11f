//! Fault injection at every storage operation of a reference workload (SPEC.md §10).
//! For each operation k and each fault kind (error before the effect, error
//! after it (lost response), crash before, crash after), the workload runs against a store
//! that injects the fault at operation k. Afterwards the table, reopened from storage alone:
//! * opens (or, if creation never landed, is reported as not found);
//! * has a contiguous, parseable log;
//! * holds exactly the acknowledged commits, plus at most the one whose outcome was
//!   reported unknown;
//! * holds exactly the rows those commits imply, every referenced data file present;
//! * stays writable.
//!
//! A second workload crosses checkpoint intervals (automatic checkpoints after commits,
//! explicit checkpoints, log cleanup after the clock has moved past the retention), so faults
//! land in every write of checkpointing and cleanup too. Afterwards, additionally:
//! * no checkpoint file is unreadable (none was torn or published half-written);
//! * every version from the earliest readable one to the latest loads;
//! * commits below the earliest retained one were removed only below a checkpoint.

use crate::fault_workload;

use alluvium_storage::Fault;
use alluvium_txlog::log_path::LogFileKind;
use alluvium_txlog::segment::list_log_from;
use fault_workload::*;

#[test]
fn every_fault_at_every_operation_in_memory() {
    sweep(WORKLOAD, Setup::in_memory);
}

#[test]
fn every_fault_at_every_operation_on_local_disk() {
    sweep(WORKLOAD, Setup::on_disk);
}

/// Faults in every write of automatic and explicit checkpoints and of log cleanup.
#[test]
fn every_fault_while_checkpointing_and_cleaning_in_memory() {
    // Without faults the workload does checkpoint and remove old commits.
    let setup = Setup::in_memory();
    run_with_fault(&setup, CHECKPOINT_WORKLOAD, 0, Fault::ErrorBefore);
    let listing = list_log_from(setup.store.as_ref(), 0).unwrap();
    assert!(
        listing
            .iter()
            .any(|f| matches!(f.kind, LogFileKind::Checkpoint(_)))
    );
    assert!(
        listing.iter().all(|f| f.version > 0),
        "cleanup removed nothing: {listing:?}"
    );
    sweep(CHECKPOINT_WORKLOAD, Setup::in_memory);
}

#[test]
fn every_fault_while_checkpointing_on_local_disk() {
    sweep(CHECKPOINT_WORKLOAD, Setup::on_disk);
}

/// DELETE by deletion vector (a DV file uploaded, then the remove/add pairs committed):
/// a fault at any storage operation loses or doubles no row; a DV file of a commit that
/// did not land is never referenced (the rows and every referenced DV are read back), and
/// a failed DV commit never deletes the data file its re-add names.
#[test]
fn every_fault_at_every_operation_of_dv_deletes_in_memory() {
    sweep(DV_WORKLOAD, Setup::in_memory);
}

#[test]
fn every_fault_at_every_operation_of_dv_deletes_on_local_disk() {
    sweep(DV_WORKLOAD, Setup::on_disk);
}

/// Copy-on-write DELETE and MERGE on a change-data-feed table upload cdc files before the
/// commit: at a fault anywhere, every cdc file the log names is present and whole, and a
/// cdc file of a commit that did not land is named by no version (only landed commits are
/// in the log, and their rows match the model).
#[test]
fn every_fault_at_every_operation_of_change_data_writes_in_memory() {
    sweep(CDF_WORKLOAD, Setup::in_memory);
}

#[test]
fn every_fault_at_every_operation_of_change_data_writes_on_local_disk() {
    sweep(CDF_WORKLOAD, Setup::on_disk);
}
