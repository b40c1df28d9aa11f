//! Checking the Iceberg metadata against the Delta log (`verify --deep`): every retained
//! Iceberg snapshot must list exactly the data files of the Delta version it mirrors, with
//! their sizes and row counts, and one position-delete file per deletion vector holding its
//! cardinality; every file it references must exist.

use std::collections::{BTreeMap, BTreeSet};

use alluvium_mvcc::{Snapshot, VersionSpec};
use alluvium_storage::StoreRef;
use alluvium_txlog::stats::FileStats;
use serde_json::Value;

use crate::error::Result;
use crate::manifest::{Content, Status};
use crate::metadata;
use crate::sync::{DELTA_VERSION_KEY, iceberg_path, location_of, table_uuid};
use crate::tree::{snapshot_files, store_path};

/// One way the Iceberg metadata disagrees with the Delta log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Disagreement {
    /// The Iceberg file concerned (a metadata file, manifest or delete file), table-relative
    /// where it lies inside the table.
    pub file: String,
    /// What disagrees, one line.
    pub detail: String,
}

/// Checks every retained Iceberg snapshot of the table in `store` against its Delta
/// version. Versions the log no longer holds are skipped. No Iceberg metadata: nothing.
///
/// # Errors
/// Only if the Delta table itself cannot be read; damage on the Iceberg side is reported.
pub fn check(store: StoreRef) -> Result<Vec<Disagreement>> {
    let mut out = Vec::new();
    let (n, m) = match metadata::latest(store.as_ref()) {
        Ok(Some(x)) => x,
        Ok(None) => return Ok(out),
        Err(e) => {
            out.push(Disagreement {
                file: "metadata".into(),
                detail: e.to_string(),
            });
            return Ok(out);
        }
    };
    let meta_file = metadata::metadata_file(n);
    let latest = Snapshot::load(store.clone(), VersionSpec::Latest)?;
    let location = location_of(&latest);
    let mut say = |file: &str, detail: String| {
        out.push(Disagreement {
            file: file
                .strip_prefix(&format!("{location}/"))
                .unwrap_or(file)
                .to_string(),
            detail,
        })
    };
    let want_uuid = table_uuid(&latest.metadata().id);
    if m["table-uuid"].as_str() != Some(want_uuid.as_str()) {
        say(
            &meta_file,
            format!(
                "table-uuid {} is not this Delta table's ({want_uuid})",
                m["table-uuid"]
            ),
        );
    }
    if m["location"].as_str() != Some(location.as_str()) {
        say(
            &meta_file,
            format!("location {} is not the table's ({location})", m["location"]),
        );
    }
    for s in m["snapshots"].as_array().into_iter().flatten() {
        let Some(v) = s
            .pointer(&format!("/summary/{DELTA_VERSION_KEY}"))
            .and_then(Value::as_str)
            .and_then(|v| v.parse::<u64>().ok())
        else {
            say(
                &meta_file,
                format!("snapshot {} names no delta-version", s["snapshot-id"]),
            );
            continue;
        };
        let Ok(delta) = Snapshot::load(store.clone(), VersionSpec::Version(v)) else {
            continue; // the log no longer holds it
        };
        let files = match snapshot_files(store.as_ref(), &location, s) {
            Ok(f) => f,
            Err(e) => {
                say(&meta_file, format!("snapshot of version {v}: {e}"));
                continue;
            }
        };
        let mut data: BTreeMap<String, (i64, i64)> = BTreeMap::new();
        let mut deletes: BTreeMap<String, (String, i64, i64)> = BTreeMap::new();
        for (_, entries) in &files.manifests {
            for e in entries.iter().filter(|e| e.status != Status::Deleted) {
                let f = &e.file;
                match f.content {
                    Content::Data => {
                        if data
                            .insert(f.file_path.clone(), (f.file_size_in_bytes, f.record_count))
                            .is_some()
                        {
                            say(
                                &f.file_path,
                                format!("listed twice in the snapshot of version {v}"),
                            );
                        }
                    }
                    Content::PositionDeletes => {
                        let target = f.referenced_data_file.clone().unwrap_or_default();
                        deletes.insert(
                            target,
                            (f.file_path.clone(), f.record_count, f.file_size_in_bytes),
                        );
                    }
                }
            }
        }
        let want: BTreeMap<String, alluvium_txlog::FileRef<'_>> = delta
            .files()
            .map(|a| (iceberg_path(&location, a.path()), a))
            .collect();
        let (have_paths, want_paths): (BTreeSet<&String>, BTreeSet<&String>) =
            (data.keys().collect(), want.keys().collect());
        for p in have_paths.difference(&want_paths) {
            say(
                p,
                format!("listed by the snapshot of version {v}, which does not hold it"),
            );
        }
        for p in want_paths.difference(&have_paths) {
            say(
                p,
                format!("held by version {v}, missing from its Iceberg snapshot"),
            );
        }
        for (p, add) in &want {
            if let Some((size, rows)) = data.get(p) {
                if *size != add.size() {
                    say(
                        p,
                        format!(
                            "version {v}: Iceberg says {size} bytes, Delta {}",
                            add.size()
                        ),
                    );
                }
                let stats_rows = add
                    .stats()
                    .as_deref()
                    .and_then(FileStats::parse)
                    .and_then(|s| s.num_records);
                if let Some(n) = stats_rows
                    && n != *rows
                {
                    say(
                        p,
                        format!("version {v}: Iceberg says {rows} rows, Delta {n}"),
                    );
                }
            }
            match (&add.deletion_vector(), deletes.get(p)) {
                (None, None) => {}
                (Some(dv), Some((file, rows, size))) => {
                    if *rows != dv.cardinality {
                        say(
                            file,
                            format!(
                                "version {v}: deletes {rows} rows of {p}, its deletion vector {}",
                                dv.cardinality
                            ),
                        );
                    }
                    match store_path(&location, file).and_then(|sp| Ok(store.head(&sp)?)) {
                        Ok(meta) if meta.size as i64 == *size => {}
                        Ok(meta) => {
                            say(file, format!("{} bytes, its entry says {size}", meta.size))
                        }
                        Err(e) => say(file, format!("position-delete file of version {v}: {e}")),
                    }
                }
                (Some(_), None) => say(
                    p,
                    format!("version {v}: its deletion vector has no position-delete file"),
                ),
                (None, Some((file, _, _))) => say(
                    file,
                    format!("version {v}: deletes rows of {p}, which has no deletion vector"),
                ),
            }
        }
        for p in deletes.keys().filter(|p| !want.contains_key(*p)) {
            say(
                &deletes[p].0,
                format!("version {v}: references {p}, which the version does not hold"),
            );
        }
    }
    Ok(out)
}
