//! The `metaData` action: the table's identity, schema, partitioning and properties.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::maps::{lenient_string_map, sorted_string_map};

/// The data format of the table's files (always Parquet).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Format {
    /// `parquet`.
    pub provider: String,
    /// Format options (unused by the protocol).
    #[serde(
        default,
        deserialize_with = "lenient_string_map",
        serialize_with = "sorted_string_map"
    )]
    pub options: HashMap<String, String>,
}

impl Default for Format {
    fn default() -> Self {
        Format {
            provider: "parquet".to_string(),
            options: HashMap::new(),
        }
    }
}

/// `metaData`: replaces the whole previous metadata when it appears.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Metadata {
    /// Table identity (a GUID); changes only when the table is replaced.
    pub id: String,
    /// User-facing name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// User-facing description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The file format.
    #[serde(default)]
    pub format: Format,
    /// The schema as Delta schema JSON. Some writers (Delta Live Tables) have committed
    /// metadata without it before a later commit set it; it reads as empty, and a snapshot
    /// whose final metadata has no schema fails when the schema is parsed.
    #[serde(default)]
    pub schema_string: String,
    /// Partition columns (logical names), in partitioning order.
    #[serde(default)]
    pub partition_columns: Vec<String>,
    /// Milliseconds since the epoch when the table was created.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_time: Option<i64>,
    /// Table properties (`delta.*` and user keys).
    #[serde(
        default,
        deserialize_with = "lenient_string_map",
        serialize_with = "sorted_string_map"
    )]
    pub configuration: HashMap<String, String>,
}

#[cfg(test)]
impl Metadata {
    /// Metadata for unit tests: a fixed id, no schema, these table properties.
    pub(crate) fn with_properties(properties: &[(&str, &str)]) -> Metadata {
        Metadata {
            id: "t".into(),
            name: None,
            description: None,
            format: Format::default(),
            schema_string: String::new(),
            partition_columns: Vec::new(),
            created_time: None,
            configuration: properties
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }
}
