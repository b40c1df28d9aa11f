//! The `protocol` action: which reader and writer versions and features a client needs.

use serde::{Deserialize, Serialize};

/// `protocol`: the versions (and, for reader 3 / writer 7, the explicit feature lists) a
/// client must support. See [`crate::features`] for the gate built on it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Protocol {
    /// Minimum reader version.
    pub min_reader_version: i32,
    /// Minimum writer version.
    pub min_writer_version: i32,
    /// Reader features (present iff `min_reader_version == 3`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reader_features: Option<Vec<String>>,
    /// Writer features (present iff `min_writer_version == 7`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writer_features: Option<Vec<String>>,
}

impl Protocol {
    /// True if `feature` is listed as a reader feature.
    pub fn has_reader_feature(&self, feature: &str) -> bool {
        self.reader_features
            .as_ref()
            .is_some_and(|f| f.iter().any(|x| x == feature))
    }

    /// True if `feature` is listed as a writer feature.
    pub fn has_writer_feature(&self, feature: &str) -> bool {
        self.writer_features
            .as_ref()
            .is_some_and(|f| f.iter().any(|x| x == feature))
    }
}
