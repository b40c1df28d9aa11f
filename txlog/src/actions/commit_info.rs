//! The `commitInfo` action: free-form provenance of one commit.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// `commitInfo`: arbitrary JSON. Engines agree on a few keys, which have typed accessors;
/// every other key is preserved as written.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CommitInfo(pub Map<String, Value>);

impl CommitInfo {
    /// The key of the in-commit timestamp (PROTOCOL.md "In-Commit Timestamps"); the same
    /// word as the table feature's name, but a field.
    pub const IN_COMMIT_TIMESTAMP: &'static str = "inCommitTimestamp"; // vocabulary: a commitInfo field

    /// Wall-clock milliseconds since the epoch when the writer committed.
    pub fn timestamp(&self) -> Option<i64> {
        self.0.get("timestamp").and_then(Value::as_i64)
    }

    /// The in-commit timestamp (tables with `inCommitTimestamp`).
    pub fn in_commit_timestamp(&self) -> Option<i64> {
        self.0
            .get(Self::IN_COMMIT_TIMESTAMP)
            .and_then(Value::as_i64)
    }

    /// The operation name (`WRITE`, `DELETE`, `OPTIMIZE`, ...).
    pub fn operation(&self) -> Option<&str> {
        self.0.get("operation").and_then(Value::as_str)
    }

    /// The operation's parameters.
    pub fn operation_parameters(&self) -> Option<&Value> {
        self.0.get("operationParameters")
    }

    /// The unique id of the transaction that wrote the commit.
    pub fn txn_id(&self) -> Option<&str> {
        self.0.get("txnId").and_then(Value::as_str)
    }

    /// Whether the commit only appended files without reading the table. Absent means false.
    pub fn is_blind_append(&self) -> bool {
        self.0
            .get("isBlindAppend")
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }

    /// The version the writer read.
    pub fn read_version(&self) -> Option<i64> {
        self.0.get("readVersion").and_then(Value::as_i64)
    }

    /// Sets a key.
    pub fn set(&mut self, key: &str, value: impl Into<Value>) {
        self.0.insert(key.to_string(), value.into());
    }
}
