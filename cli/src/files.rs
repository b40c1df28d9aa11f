//! `alluvium files`. Paths are printed with control characters escaped, one per line, so a
//! hostile file name cannot forge lines.

use std::io::Write;

use alluvium::{Error, Result, VersionSpec};
use clap::Args;

use super::open;
use super::text::escape_control;

/// Arguments of `files`.
#[derive(Debug, Args)]
pub struct FilesArgs {
    /// Table location.
    table: String,
    /// List the files of this version (default: latest).
    #[arg(long)]
    version: Option<u64>,
}

pub fn run(a: FilesArgs) -> Result<()> {
    let spec = a.version.map_or(VersionSpec::Latest, VersionSpec::Version);
    let snapshot = open(&a.table)?.snapshot_at(spec)?;
    let mut paths: Vec<String> = snapshot
        .files()
        .map(|f| {
            snapshot
                .file_location(&f.path)
                .map(|l| escape_control(&l.to_string()).into_owned())
        })
        .collect::<std::result::Result<_, _>>()?;
    paths.sort();
    let mut out = std::io::BufWriter::new(std::io::stdout());
    for p in paths {
        writeln!(out, "{p}").map_err(|e| Error::Io {
            context: "stdout".into(),
            source: e,
        })?;
    }
    out.flush().map_err(|e| Error::Io {
        context: "stdout".into(),
        source: e,
    })
}
