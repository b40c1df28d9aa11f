//! `alluvium files`: the live data files of a version, one path per line; `--long` adds
//! size, rows, deleted rows (deletion-vector cardinality), modification time and partition
//! values; `--json` prints them as a JSON array of objects. Paths and values are printed
//! with control characters escaped in the text forms, so a hostile file name cannot forge
//! lines.

use std::io::Write;

use alluvium::{Error, FileRef, Result, VersionSpec, iso_timestamp};
use clap::Args;
use serde_json::{Map, Value, json};

use super::open;
use super::summary::bytes;
use super::text::escape_control;

/// Arguments of `files`.
#[derive(Debug, Args)]
pub struct FilesArgs {
    /// Table location.
    table: String,
    /// List the files of this version (default: latest).
    #[arg(long)]
    version: Option<u64>,
    /// Also print each file's size, rows, deleted rows (its deletion vector's
    /// cardinality), modification time and partition values.
    #[arg(long, conflicts_with = "json")]
    long: bool,
    /// Print a JSON array of objects (`path`, `size`, `rows`, `deleted_rows`,
    /// `modified`, `partition_values`) instead of text.
    #[arg(long)]
    json: bool,
}

/// A file's rows by its statistics (`numRecords`), when recorded.
fn rows(add: FileRef<'_>) -> Option<i64> {
    add.num_records()
}

/// The partition values as `col=value/col=value` (NULL spelled `null`).
fn partition_text(add: FileRef<'_>) -> String {
    let mut parts: Vec<(String, String)> = add
        .partition_values()
        .iter()
        .map(|(k, v)| {
            (
                k.to_string(),
                v.map_or_else(|| "null".to_string(), str::to_string),
            )
        })
        .collect();
    parts.sort();
    parts
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("/")
}

pub fn run(a: FilesArgs) -> Result<()> {
    let spec = a.version.map_or(VersionSpec::Latest, VersionSpec::Version);
    let snapshot = open(&a.table)?.snapshot_at(spec)?;
    let mut files: Vec<(String, FileRef<'_>)> = snapshot
        .files()
        .map(|f| {
            snapshot
                .file_location_ref(f.path())
                .map(|l| (l.to_string(), f))
        })
        .collect::<std::result::Result<_, _>>()?;
    files.sort_by(|x, y| x.0.cmp(&y.0));
    let mut out = std::io::BufWriter::new(std::io::stdout());
    let io = |e| Error::Io {
        context: "stdout".into(),
        source: e,
    };
    if a.json {
        write!(out, "[").map_err(io)?;
        for (i, (path, add)) in files.iter().enumerate() {
            let partitions: Map<String, Value> = add
                .partition_values()
                .iter()
                .map(|(k, v)| (k.to_string(), v.map_or(Value::Null, |s| s.into())))
                .collect();
            let o = json!({
                "path": path,
                "size": add.size(),
                "rows": rows(*add),
                "deleted_rows": add.deletion_vector().map_or(0, |d| d.cardinality),
                "modified": iso_timestamp(add.modification_time()),
                "partition_values": partitions,
            });
            let sep = if i == 0 { "" } else { "," };
            write!(out, "{sep}{o}").map_err(io)?;
        }
        writeln!(out, "]").map_err(io)?;
        return out.flush().map_err(io);
    }
    if a.long {
        writeln!(
            out,
            "{:>10}  {:>10}  {:>8}  {:<24}  {:<20}  path",
            "size", "rows", "deleted", "modified", "partition"
        )
        .map_err(io)?;
    }
    for (path, add) in &files {
        let path = escape_control(path);
        if a.long {
            writeln!(
                out,
                "{:>10}  {:>10}  {:>8}  {:<24}  {:<20}  {path}",
                bytes(u64::try_from(add.size()).unwrap_or(0)),
                rows(*add).map_or_else(|| "?".to_string(), |r| r.to_string()),
                add.deletion_vector().map_or(0, |d| d.cardinality),
                iso_timestamp(add.modification_time()),
                escape_control(&partition_text(*add)),
            )
            .map_err(io)?;
        } else {
            writeln!(out, "{path}").map_err(io)?;
        }
    }
    out.flush().map_err(io)
}
