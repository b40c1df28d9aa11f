//! The grammar of file names in `_delta_log/` (PROTOCOL.md "Delta Log Entries",
//! "Checkpoints", "Log Compaction Files", "Version Checksum File").
//!
//! | name | kind |
//! |---|---|
//! | `V.json` | commit |
//! | `V.checkpoint.parquet` | classic checkpoint |
//! | `V.checkpoint.P.N.parquet` | part `P` of an `N`-part checkpoint (10-digit `P`, `N`) |
//! | `V.checkpoint.<uuid>.json`, `V.checkpoint.<uuid>.parquet` | UUID-named V2 checkpoint |
//! | `X.Y.compacted.json` | log compaction of commits `X..=Y` |
//! | `V.crc` | version checksum |
//!
//! `V`, `X`, `Y` are exactly 20 decimal digits. Anything else (hidden files, `_last_checkpoint`,
//! `_sidecars/`, `_staged_commits/`) is not a log file.

use alluvium_storage::{ObjectMeta, StorePath};

/// A table version.
pub type Version = u64;

/// Directory of the log, relative to the table root.
pub const DELTA_LOG_DIR: &str = "_delta_log";
/// Directory of V2 checkpoint sidecars, relative to the log.
pub const SIDECAR_DIR: &str = "_sidecars";
/// The checkpoint hint file, relative to the log.
pub const LAST_CHECKPOINT: &str = "_last_checkpoint";

const VERSION_LEN: usize = 20;
const PART_LEN: usize = 10;
const UUID_LEN: usize = 36;

/// Format of a UUID-named checkpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CheckpointFormat {
    /// Newline-delimited JSON, like a commit.
    Json,
    /// Parquet.
    Parquet,
}

/// The kind of checkpoint a file belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum CheckpointKind {
    /// `V.checkpoint.parquet` (V1 or V2 content).
    Classic,
    /// `V.checkpoint.P.N.parquet`.
    MultiPart {
        /// 1-based part number.
        part: u32,
        /// Number of parts.
        parts: u32,
    },
    /// `V.checkpoint.<uuid>.<format>` (always V2 content).
    Uuid {
        /// The UUID text.
        uuid: String,
        /// JSON or Parquet.
        format: CheckpointFormat,
    },
}

/// What a log file is.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum LogFileKind {
    /// A commit.
    Commit,
    /// (Part of) a checkpoint.
    Checkpoint(CheckpointKind),
    /// A compaction of commits `version..=end`.
    Compaction {
        /// The last version covered.
        end: Version,
    },
    /// A version checksum file.
    Crc,
}

/// A listed log file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogFile {
    /// The (first) version the file belongs to.
    pub version: Version,
    /// What it is.
    pub kind: LogFileKind,
    /// Its storage metadata.
    pub meta: ObjectMeta,
}

fn parse_digits(s: &str, len: usize) -> Option<u64> {
    if s.len() == len && s.bytes().all(|b| b.is_ascii_digit()) {
        s.parse().ok()
    } else {
        None
    }
}

/// A version in a file name: Delta versions are `long`s, so twenty digits above
/// `i64::MAX` name no log file (and keep `version + 1` from overflowing everywhere).
fn parse_version(s: &str) -> Option<Version> {
    parse_digits(s, VERSION_LEN).filter(|v| i64::try_from(*v).is_ok())
}

/// Parses a log file name (no directory part).
pub fn parse_log_file_name(name: &str) -> Option<(Version, LogFileKind)> {
    let mut parts = name.split('.');
    let version = parse_version(parts.next()?)?;
    let rest: Vec<&str> = parts.collect();
    let kind = match rest.as_slice() {
        ["json"] => LogFileKind::Commit,
        ["crc"] => LogFileKind::Crc,
        ["checkpoint", "parquet"] => LogFileKind::Checkpoint(CheckpointKind::Classic),
        ["checkpoint", p, n, "parquet"] => {
            let part = u32::try_from(parse_digits(p, PART_LEN)?).ok()?;
            let parts = u32::try_from(parse_digits(n, PART_LEN)?).ok()?;
            if part == 0 || part > parts {
                return None;
            }
            LogFileKind::Checkpoint(CheckpointKind::MultiPart { part, parts })
        }
        ["checkpoint", uuid, fmt]
            if uuid.len() == UUID_LEN && uuid::Uuid::parse_str(uuid).is_ok() =>
        {
            let format = match *fmt {
                "json" => CheckpointFormat::Json,
                "parquet" => CheckpointFormat::Parquet,
                _ => return None,
            };
            LogFileKind::Checkpoint(CheckpointKind::Uuid {
                uuid: (*uuid).to_string(),
                format,
            })
        }
        [end, "compacted", "json"] => {
            let end = parse_version(end)?;
            if end <= version {
                return None;
            }
            LogFileKind::Compaction { end }
        }
        _ => return None,
    };
    Some((version, kind))
}

/// The log-relative file name of a file of `kind` at `version`.
pub fn log_file_name(version: Version, kind: &LogFileKind) -> String {
    match kind {
        LogFileKind::Commit => format!("{version:020}.json"),
        LogFileKind::Crc => format!("{version:020}.crc"),
        LogFileKind::Checkpoint(CheckpointKind::Classic) => {
            format!("{version:020}.checkpoint.parquet")
        }
        LogFileKind::Checkpoint(CheckpointKind::MultiPart { part, parts }) => {
            format!("{version:020}.checkpoint.{part:010}.{parts:010}.parquet")
        }
        LogFileKind::Checkpoint(CheckpointKind::Uuid { uuid, format }) => {
            let ext = match format {
                CheckpointFormat::Json => "json",
                CheckpointFormat::Parquet => "parquet",
            };
            format!("{version:020}.checkpoint.{uuid}.{ext}")
        }
        LogFileKind::Compaction { end } => format!("{version:020}.{end:020}.compacted.json"),
    }
}

/// The path of `_delta_log` itself.
pub fn log_dir() -> StorePath {
    StorePath::from_trusted(DELTA_LOG_DIR.to_string())
}

/// The table-relative path of a log file whose name alluvium generated (see
/// [`log_file_name`]); names read from a table go through [`StorePath::parse`].
pub fn log_path(generated_name: &str) -> StorePath {
    StorePath::from_trusted(format!("{DELTA_LOG_DIR}/{generated_name}"))
}

/// The table-relative path of the commit of `version`.
pub fn commit_path(version: Version) -> StorePath {
    log_path(&log_file_name(version, &LogFileKind::Commit))
}

/// Parses a listed object into a log file, if it is one.
pub fn classify(meta: ObjectMeta) -> Option<LogFile> {
    let (version, kind) = parse_log_file_name(meta.path.file_name())?;
    Some(LogFile {
        version,
        kind,
        meta,
    })
}

/// A checked conversion of a version to the `i64` the log's JSON uses.
pub fn version_to_i64(v: Version) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_kind_and_round_trips() {
        let uuid = "3a0d65cd-4056-49b8-937b-95f9e3ee90e5";
        let cases = [
            (7, LogFileKind::Commit),
            (7, LogFileKind::Crc),
            (10, LogFileKind::Checkpoint(CheckpointKind::Classic)),
            (
                10,
                LogFileKind::Checkpoint(CheckpointKind::MultiPart { part: 2, parts: 3 }),
            ),
            (
                10,
                LogFileKind::Checkpoint(CheckpointKind::Uuid {
                    uuid: uuid.into(),
                    format: CheckpointFormat::Json,
                }),
            ),
            (
                10,
                LogFileKind::Checkpoint(CheckpointKind::Uuid {
                    uuid: uuid.into(),
                    format: CheckpointFormat::Parquet,
                }),
            ),
            (4, LogFileKind::Compaction { end: 6 }),
        ];
        for (v, kind) in cases {
            let name = log_file_name(v, &kind);
            assert_eq!(parse_log_file_name(&name), Some((v, kind)), "{name}");
        }
    }

    #[test]
    fn rejects_non_log_names() {
        for name in [
            "_last_checkpoint",
            ".00000000000000000000.json.crc",
            "0000000000000000000.json",
            "000000000000000000000.json",
            "00000000000000000001.jso",
            "00000000000000000001.checkpoint.0000000004.0000000003.parquet",
            "00000000000000000001.checkpoint.0000000000.0000000003.parquet",
            "00000000000000000001.checkpoint.not-a-uuid.json",
            "00000000000000000006.00000000000000000004.compacted.json",
            "0000000000000000000a.json",
            // Above i64::MAX: not a Delta version.
            "09223372036854775808.json",
            "18446744073709551615.json",
            "00000000000000000001.18446744073709551615.compacted.json",
            "",
        ] {
            assert_eq!(parse_log_file_name(name), None, "{name}");
        }
    }

    #[test]
    fn commit_paths() {
        assert_eq!(
            commit_path(3).as_str(),
            "_delta_log/00000000000000000003.json"
        );
    }
}
