//! What an embedder adds to the `commitInfo` of the commits a maintenance run makes
//! (OPTIMIZE's rewrites, VACUUM's `VACUUM START` and `VACUUM END`), as writes take it from
//! their options: `userMetadata` and fields of its own (deltalake's
//! `CommitProperties.custom_metadata`, Delta Spark's `commitInfo` extensions).

use std::collections::BTreeMap;

use alluvium_mvcc::Transaction;
use alluvium_mvcc::transaction::reserved_commit_info_key;
use serde_json::Value;

use crate::{MaintenanceError, Result};

/// `commitInfo` fields of the embedder's own, set on every commit of a run.
///
/// A name the engine writes itself (`alluvium_mvcc`'s `RESERVED_COMMIT_INFO_KEYS`: `operation`,
/// `timestamp`, ...) fails the run before it changes anything.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct CommitFields {
    /// `commitInfo.userMetadata`.
    pub user_metadata: Option<String>,
    /// Further fields, by name.
    pub commit_info: BTreeMap<String, Value>,
}

impl CommitFields {
    /// `userMetadata` (if any) and the fields `commit_info`.
    pub fn new(user_metadata: Option<String>, commit_info: BTreeMap<String, Value>) -> Self {
        CommitFields {
            user_metadata,
            commit_info,
        }
    }

    /// Refuses a field the engine writes itself.
    ///
    /// # Errors
    /// [`MaintenanceError::Refused`] naming the field.
    pub(crate) fn check(&self) -> Result<()> {
        match reserved_commit_info_key(self.commit_info.keys().map(String::as_str)) {
            Some(key) => Err(MaintenanceError::Refused(format!(
                "commitInfo.{key} is written by the engine; choose another name for your field"
            ))),
            None => Ok(()),
        }
    }

    /// Sets the fields on `txn`; [`check`](Self::check) has passed before the run began.
    pub(crate) fn apply(&self, txn: &mut Transaction) {
        if let Some(text) = &self.user_metadata {
            txn.set_user_metadata(text.clone());
        }
        for (key, value) in &self.commit_info {
            // Reserved names were refused by `check` before anything changed.
            let _ = txn.set_commit_info_field(key, value.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_the_engine_writes_are_refused_and_others_pass() {
        for key in ["operation", "timestamp", "operationMetrics"] {
            let fields = CommitFields::new(None, [(key.to_string(), Value::from(1))].into());
            let e = fields.check().unwrap_err();
            assert!(e.to_string().contains(&format!("commitInfo.{key}")), "{e}");
        }
        let fields = CommitFields::new(
            Some("note".into()),
            [("ticket".to_string(), Value::from("OPS-1"))].into(),
        );
        assert!(fields.check().is_ok());
    }
}
