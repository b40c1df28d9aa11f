//! Stand-in for the `dv` branch's row deletion core (contract D), copy-on-write only, so
//! UPDATE and MERGE build and test before it is merged. Replaced by that branch's file.

use alluvium_datafile::sink::{FileSink, FileSinkOptions, SinkTable};
use alluvium_mvcc::{Snapshot, Transaction};
use alluvium_txlog::actions::{Add, Remove};
use arrow_array::BooleanArray;
use roaring::RoaringTreemap;

use crate::{Result, Table};

/// New deletions in one live file: physical row positions.
pub(crate) struct FileDeletes {
    pub add: Add,
    pub positions: RoaringTreemap,
}

/// What applying deletions did.
#[derive(Debug, Default)]
pub(crate) struct DeleteStats {
    pub rows_deleted: u64,
    pub rows_copied: u64,
    pub files_removed: u64,
    pub files_added: u64,
    pub dvs_added: u64,
    pub bytes_added: u64,
}

/// Rewrites each file without the rows (copy-on-write).
pub(crate) fn apply_deletes(
    table: &Table,
    snapshot: &Snapshot,
    txn: &mut Transaction,
    deletes: Vec<FileDeletes>,
) -> Result<DeleteStats> {
    let mut stats = DeleteStats::default();
    let now = table.store().now_ms();
    let mut sink = FileSink::new(
        SinkTable {
            store: table.store().as_ref(),
            schema: snapshot.schema(),
            partition_columns: snapshot.partition_columns(),
            configuration: &snapshot.metadata().configuration,
            column_mapping: snapshot.column_mapping(),
        },
        FileSinkOptions {
            target_size: None,
            data_change: true,
        },
    )?;
    for d in &deletes {
        txn.read_file(&d.add);
        txn.remove_file(Remove::from_add(&d.add, now, true));
        stats.files_removed += 1;
        let mut pos = 0u64;
        for b in crate::scan::read_whole_file(snapshot, &d.add)? {
            let keep: BooleanArray = (0..b.num_rows() as u64)
                .map(|i| Some(!d.positions.contains(pos + i)))
                .collect();
            pos += b.num_rows() as u64;
            let kept = arrow_select::filter::filter_record_batch(&b, &keep)?;
            stats.rows_deleted += (b.num_rows() - kept.num_rows()) as u64;
            stats.rows_copied += kept.num_rows() as u64;
            if kept.num_rows() > 0 {
                sink.write(&kept)?;
            }
        }
    }
    let (adds, elapsed) = sink.finish()?;
    txn.add_write_time(elapsed);
    stats.files_added = adds.len() as u64;
    stats.bytes_added = adds.iter().map(|a| a.size.max(0) as u64).sum();
    for a in adds {
        txn.add_file(a);
    }
    Ok(stats)
}
