//! What a write command prints when it is done: one line for a person (`deleted 3 rows
//! from 2 files (deletion vectors); version 7`), or with `--json` exactly one JSON object
//! for a program, never both. The object's fields are part of the CLI's output contract:
//!
//! * `operation`: Delta's operation name (`WRITE`, `DELETE`, `MERGE`, `RESTORE`, ...);
//! * `version`: the version committed (`null` when nothing was: an idempotent write
//!   already applied, a dry run, maintenance that commits nothing);
//! * `metrics`: the operation's metrics by Delta's names, as numbers;
//! * `files_added`, `files_removed`, `bytes_added`, `bytes_removed`: data files written and
//!   dropped by the commit;
//! * `elapsed_ms`: the command's wall time; `attempts`: commit attempts (1 = no
//!   contention);
//! * `checkpoint`, `auto_compaction`: the post-commit work (`null` when not due, else its
//!   version(s) or `{"error": ...}`);
//! * and fields particular to the command (listed in its help).
//!
//! Request counters are not printed: a local store counts none, and a remote one's belong
//! in a benchmark. A write that landed reports after the fact
//! ([`print_after_write`](crate::report::print_after_write)).

use std::time::Instant;

use alluvium::CommitSummary;
use clap::Args;
use serde_json::{Map, Value, json};

use crate::report::print_after_write;

/// The `--json` flag of the write commands.
#[derive(Debug, Args, Clone, Copy, Default)]
pub struct JsonFlag {
    /// Print one JSON object (version, operation, metrics, files and bytes added and
    /// removed, timing) instead of a line of text.
    #[arg(long)]
    pub json: bool,
}

/// A metric's text (`operationMetrics` values are strings in the log) as JSON: an integer
/// or a number when it is one, the text otherwise.
fn metric_value(text: &str) -> Value {
    if let Ok(n) = text.parse::<i64>() {
        return n.into();
    }
    if let Ok(n) = text.parse::<u64>() {
        return n.into();
    }
    match text.parse::<f64>() {
        Ok(f) if f.is_finite() => json!(f),
        _ => Value::String(text.to_string()),
    }
}

/// `n thing` or `n things`.
pub fn count(n: impl Into<u64>, thing: &str) -> String {
    let n = n.into();
    if n == 1 {
        format!("1 {thing}")
    } else {
        format!("{n} {thing}s")
    }
}

/// Bytes for a person: `512 B`, `3.4 KiB`, `1.2 MiB`, `5.0 GiB`.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut v = n as f64 / 1024.0;
    let mut unit = 0;
    while v >= 1024.0 && unit < UNITS.len() - 1 {
        v /= 1024.0;
        unit += 1;
    }
    format!("{v:.1} {}", UNITS[unit])
}

/// What one write command did, built as it learns it, printed once by [`emit`](Self::emit).
#[derive(Debug)]
pub struct Outcome {
    operation: String,
    line: String,
    version: Option<u64>,
    metrics: Map<String, Value>,
    files: [u64; 4],
    attempts: Option<u32>,
    extra: Map<String, Value>,
    warnings: Vec<String>,
    started: Instant,
}

impl Outcome {
    /// An outcome of `operation` (Delta's name) for a command that started at `started`.
    pub fn new(operation: &str, started: Instant) -> Outcome {
        Outcome {
            operation: operation.to_string(),
            line: String::new(),
            version: None,
            metrics: Map::new(),
            files: [0; 4],
            attempts: None,
            extra: Map::new(),
            warnings: Vec::new(),
            started,
        }
    }

    /// The commit: its version, files and bytes, metrics (as numbers), attempts and
    /// post-commit work; a failed post-commit step becomes a warning on stderr.
    pub fn commit(mut self, s: &CommitSummary) -> Outcome {
        let r = &s.commit;
        self.version = Some(r.version);
        self.files = [
            r.files_added as u64,
            r.files_removed as u64,
            r.bytes_added,
            r.bytes_removed,
        ];
        self.attempts = Some(r.attempts);
        for (k, v) in &r.operation_metrics {
            self.metrics.insert(k.clone(), metric_value(v));
        }
        let checkpoint = match &s.checkpoint {
            None => Value::Null,
            Some(Ok(v)) => json!({ "version": v }),
            Some(Err(e)) => {
                self.warnings.push(format!(
                    "the checkpoint after version {} failed (the next commit tries again): {e}",
                    r.version
                ));
                json!({ "error": e.to_string() })
            }
        };
        self.extra.insert("checkpoint".into(), checkpoint);
        let compaction = match &s.auto_compaction {
            None => Value::Null,
            Some(Ok(o)) => json!({ "versions": o.versions }),
            Some(Err(e)) => {
                self.warnings
                    .push(format!("the auto-compaction after it failed: {e}"));
                json!({ "error": e.to_string() })
            }
        };
        self.extra.insert("auto_compaction".into(), compaction);
        self
    }

    /// The version committed, without a commit report (maintenance that commits itself).
    pub fn version(mut self, v: Option<u64>) -> Outcome {
        self.version = v;
        self
    }

    /// Files and bytes added and removed, for operations without one commit report.
    pub fn files(
        mut self,
        added: u64,
        removed: u64,
        bytes_added: u64,
        bytes_removed: u64,
    ) -> Outcome {
        self.files = [added, removed, bytes_added, bytes_removed];
        self
    }

    /// The line a person reads (without the version, which [`emit`](Self::emit) adds).
    pub fn line(mut self, text: impl Into<String>) -> Outcome {
        self.line = text.into();
        self
    }

    /// A metric (a number).
    pub fn metric(mut self, key: &str, value: impl Into<Value>) -> Outcome {
        self.metrics.insert(key.to_string(), value.into());
        self
    }

    /// A field of the JSON object particular to the command.
    pub fn field(mut self, key: &str, value: impl Into<Value>) -> Outcome {
        self.extra.insert(key.to_string(), value.into());
        self
    }

    /// Every field of `object` (a serialized report) as a field of the JSON object.
    pub fn fields_of(mut self, object: Value) -> Outcome {
        if let Value::Object(map) = object {
            self.extra.extend(map);
        }
        self
    }

    /// A metric as a number, if the commit recorded it (0 when it did not).
    pub fn metric_u64(&self, key: &str) -> u64 {
        self.metrics.get(key).and_then(Value::as_u64).unwrap_or(0)
    }

    /// The JSON object (see the module documentation).
    pub fn to_json(&self) -> Value {
        let mut o = Map::new();
        o.insert("operation".into(), self.operation.clone().into());
        o.insert(
            "version".into(),
            self.version.map_or(Value::Null, Value::from),
        );
        o.insert("metrics".into(), Value::Object(self.metrics.clone()));
        for (k, v) in [
            "files_added",
            "files_removed",
            "bytes_added",
            "bytes_removed",
        ]
        .iter()
        .zip(self.files)
        {
            o.insert((*k).into(), v.into());
        }
        let ms = (self.started.elapsed().as_secs_f64() * 1e6).round() / 1e3;
        o.insert("elapsed_ms".into(), json!(ms));
        if let Some(a) = self.attempts {
            o.insert("attempts".into(), a.into());
        }
        for (k, v) in &self.extra {
            o.insert(k.clone(), v.clone());
        }
        Value::Object(o)
    }

    /// The text line: the command's line and `; version N` when it committed.
    pub fn to_line(&self) -> String {
        match self.version {
            Some(v) if !self.line.is_empty() => format!("{}; version {v}", self.line),
            Some(v) => format!("committed version {v}"),
            None => self.line.clone(),
        }
    }

    /// Prints the outcome: the JSON object with `json`, else the line; warnings about
    /// post-commit work on stderr. The write landed: a closed stdout cannot fail the
    /// command now.
    pub fn emit(self, json: bool) {
        let text = if json {
            self.to_json().to_string()
        } else {
            self.to_line()
        };
        print_after_write(&format!("{text}\n"));
        for w in &self.warnings {
            crate::exit::error_line(&format!("warning: {w}"));
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn metrics_become_numbers() {
        assert_eq!(metric_value("42"), json!(42));
        assert_eq!(metric_value("18446744073709551615"), json!(u64::MAX));
        assert_eq!(metric_value("1.5"), json!(1.5));
        assert_eq!(metric_value("abc"), json!("abc"));
    }

    #[test]
    fn sizes_and_counts_read_naturally() {
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(1536), "1.5 KiB");
        assert_eq!(bytes(3 * 1024 * 1024), "3.0 MiB");
        assert_eq!(count(1u64, "row"), "1 row");
        assert_eq!(count(0u64, "file"), "0 files");
    }

    #[test]
    fn the_line_ends_with_the_version_and_json_has_the_contract_fields() {
        let o = Outcome::new("DELETE", Instant::now())
            .version(Some(7))
            .line("deleted 3 rows from 2 files (deletion vectors)")
            .metric("numDeletedRows", 3);
        assert_eq!(
            o.to_line(),
            "deleted 3 rows from 2 files (deletion vectors); version 7"
        );
        let j = o.to_json();
        for key in [
            "operation",
            "version",
            "metrics",
            "files_added",
            "files_removed",
            "bytes_added",
            "bytes_removed",
            "elapsed_ms",
        ] {
            assert!(j.get(key).is_some(), "{key} missing from {j}");
        }
        assert_eq!(j["metrics"]["numDeletedRows"], 3);
        assert!(j.get("requests").is_none());
    }
}
