//! `verify --deep`: reads every data file and checks its statistics against the rows it
//! holds. Statistics describe the physical file (deletion vectors not applied), so the file
//! is read whole.
//!
//! Bounds may legitimately be looser than the data (writers truncate long strings and
//! timestamps to milliseconds, and bounds stay after rows are deleted), so a bound is only
//! wrong when the data lies outside it; counts must be exact.

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

use crate::Snapshot;
use alluvium_datafile::StatsCollector;
use alluvium_txlog::FileRef;
use alluvium_txlog::column_mapping::ColumnMappingMode;
use alluvium_txlog::scalar::Scalar;
use alluvium_txlog::schema::{DataType, StructField, StructType};
use alluvium_txlog::stats::{FileStats, stat_scalar};

use super::{Finding, FindingKind, VerifyReport};

/// Reads every data file of `snapshot` whole, reporting one that cannot be read, and checks
/// the statistics of every file that has some, and that every deletion vector deletes only
/// rows its file has (`dv_last_row`: the last row each
/// deletes), except for the files in `skip` (already reported missing or damaged).
pub(super) fn check_stats(
    snapshot: &Snapshot,
    skip: &HashSet<String>,
    dv_last_row: &HashMap<String, u64>,
    report: &mut VerifyReport,
) {
    let partitions = snapshot.partition_columns();
    let data_schema = StructType::new(
        snapshot
            .schema()
            .fields
            .iter()
            .filter(|f| !partitions.iter().any(|p| p.eq_ignore_ascii_case(&f.name)))
            .cloned()
            .collect(),
    );
    let mode = snapshot.column_mapping();
    let mut adds: Vec<FileRef<'_>> = snapshot.files().collect();
    adds.sort_by(|a, b| a.path().cmp(b.path()));
    for add in adds {
        if skip.contains(add.path()) {
            continue;
        }
        let recorded = add.stats().as_deref().and_then(FileStats::parse);
        let dv_last = dv_last_row.get(add.path()).copied();
        // Read even without statistics to compare: a file of the right size may still
        // not be one every read can decode.
        let unreadable = |e: String| Finding::new(FindingKind::UnreadableDataFile, add.path(), e);
        // The whole physical file: statistics do not see deletion vectors.
        let mut physical = add.to_add();
        physical.deletion_vector = None;
        let batches = match crate::read::scan::read_whole_file(snapshot, &physical) {
            Ok(b) => b,
            Err(e) => {
                report.findings.push(unreadable(e.to_string()));
                continue;
            }
        };
        report.files_read += 1;
        let rows: u64 = batches.iter().map(|b| b.num_rows() as u64).sum();
        if let Some(last) = dv_last
            && last >= rows
        {
            report.findings.push(super::files::out_of_range(
                add.path(),
                last,
                rows,
                "read whole",
            ));
        }
        let Some(recorded) = recorded else {
            continue;
        };
        let mut collector = StatsCollector::new(&data_schema, mode, &snapshot.properties());
        if let Err(e) = batches.iter().try_for_each(|b| collector.update(b)) {
            report.findings.push(unreadable(e.to_string()));
            continue;
        }
        let Some(actual) = FileStats::parse(&collector.to_json()) else {
            continue;
        };
        let mut wrong = Vec::new();
        if let (Some(r), Some(a)) = (recorded.num_records, actual.num_records)
            && r != a
        {
            wrong.push(format!("numRecords is {r}, the file holds {a} rows"));
        }
        compare_leaves(
            &data_schema.fields,
            mode,
            &mut Vec::new(),
            &recorded,
            &actual,
            &mut wrong,
        );
        if !wrong.is_empty() {
            report.findings.push(Finding::new(
                FindingKind::StatsMismatch,
                add.path(),
                wrong.join("; "),
            ));
        }
    }
}

/// Compares the statistics of every leaf column below `fields` (`path` holds the physical
/// names leading to them, as the statistics are keyed).
fn compare_leaves(
    fields: &[StructField],
    mode: ColumnMappingMode,
    path: &mut Vec<String>,
    recorded: &FileStats,
    actual: &FileStats,
    wrong: &mut Vec<String>,
) {
    for f in fields {
        path.push(mode.physical_name(f).to_string());
        let shown = path.join(".");
        match &f.data_type {
            DataType::Struct(s) => compare_leaves(&s.fields, mode, path, recorded, actual, wrong),
            other => {
                if let (Some(r), Some(a)) = (recorded.null_count(path), actual.null_count(path))
                    && r != a
                {
                    wrong.push(format!("nullCount of {shown} is {r}, the file holds {a}"));
                }
                if let Some(ty) = other.as_primitive() {
                    let bound = |s: &FileStats, max: bool| {
                        let v = if max { s.max(path) } else { s.min(path) };
                        v.and_then(|v| stat_scalar(v, ty))
                    };
                    if let (Some(r), Some(a)) = (bound(recorded, false), bound(actual, false))
                        && below(&a, &r)
                    {
                        wrong.push(format!(
                            "minValues of {shown} is {}, the file holds {}",
                            text(&r),
                            text(&a)
                        ));
                    }
                    if let (Some(r), Some(a)) = (bound(recorded, true), bound(actual, true))
                        && above(&a, &r)
                    {
                        wrong.push(format!(
                            "maxValues of {shown} is {}, the file holds {}",
                            text(&r),
                            text(&a)
                        ));
                    }
                }
            }
        }
        path.pop();
    }
}

/// Whether the maximum `a` computed from the data lies above the recorded one `r`,
/// allowing for the truncations writers apply to maxima: a string bound may be a prefix of
/// the value; a timestamp bound is truncated to the millisecond (so the data may exceed it
/// by up to 999 µs, and the computed maximum is itself rounded up to the millisecond); a
/// bound written while the column was a float is the float's nearest double.
fn above(a: &Scalar, r: &Scalar) -> bool {
    match (a, r) {
        (Scalar::String(a), Scalar::String(r)) if a.starts_with(r.as_str()) => false,
        (Scalar::Timestamp(a), Scalar::Timestamp(r))
        | (Scalar::TimestampNtz(a), Scalar::TimestampNtz(r)) => {
            a.div_euclid(1000) > r.div_euclid(1000).saturating_add(1)
        }
        (Scalar::Double(a), Scalar::Double(r)) if same_float(*a, *r) => false,
        _ => a.compare(r) == Some(Ordering::Greater),
    }
}

/// Whether the computed minimum `a` lies below the recorded one `r` (see [`above`]).
fn below(a: &Scalar, r: &Scalar) -> bool {
    match (a, r) {
        (Scalar::Double(a), Scalar::Double(r)) if same_float(*a, *r) => false,
        _ => a.compare(r) == Some(Ordering::Less),
    }
}

/// Whether two doubles are the same single-precision value (a column widened from float
/// to double keeps the statistics written in float).
#[allow(clippy::cast_possible_truncation)]
fn same_float(a: f64, b: f64) -> bool {
    a as f32 == b as f32
}

fn text(s: &Scalar) -> String {
    format!("{s:?}")
}
