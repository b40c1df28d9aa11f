//! `txn` (SetTransaction) and `domainMetadata` actions.

use serde::{Deserialize, Serialize};

/// `txn`: the latest version an application has committed, for idempotent writes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SetTransaction {
    /// The application id.
    pub app_id: String,
    /// The application's own version (opaque to Delta; alluvium treats it as monotonic).
    pub version: i64,
    /// Milliseconds since the epoch of the commit, for `delta.setTransactionRetentionDuration`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_updated: Option<i64>,
}

/// `domainMetadata`: named configuration owned by a feature (`delta.*`) or a user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DomainMetadata {
    /// The domain name.
    pub domain: String,
    /// Its configuration (a string, usually JSON).
    #[serde(default)]
    pub configuration: String,
    /// True for a tombstone that removes the domain.
    #[serde(default)]
    pub removed: bool,
}
