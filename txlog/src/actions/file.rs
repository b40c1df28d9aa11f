//! File actions: `add`, `remove` and `cdc` (PROTOCOL.md "Add File and Remove File",
//! "Add CDC File").

use serde::{Deserialize, Serialize};

use super::maps::{OptStringMap, opt_map};
use crate::FileRef;
use crate::dv::DeletionVectorDescriptor;

fn default_true() -> bool {
    true
}

/// `add`: a data file (plus its deletion vector, if any) becomes part of the table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Add {
    /// RFC 2396 URI of the file, relative to the table root or absolute; percent-decode once
    /// to get the object key.
    pub path: String,
    /// Partition column (physical name) -> serialized value; `null` or `""` means NULL.
    #[serde(default)]
    pub partition_values: OptStringMap,
    /// File size in bytes.
    #[serde(default)]
    pub size: i64,
    /// Milliseconds since the epoch when the file was created.
    #[serde(default)]
    pub modification_time: i64,
    /// False when the commit only rearranges existing data (OPTIMIZE, stats backfill).
    #[serde(default = "default_true")]
    pub data_change: bool,
    /// Per-column statistics as a JSON string (see [`crate::stats`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stats: Option<String>,
    /// Free-form tags.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "opt_map"
    )]
    pub tags: Option<OptStringMap>,
    /// The file's deletion vector: rows of the file that are not part of the table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_vector: Option<Box<DeletionVectorDescriptor>>,
    /// Row tracking: the row id of the file's first row.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_row_id: Option<i64>,
    /// Row tracking: the commit version that added the file's rows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_row_commit_version: Option<i64>,
    /// Clustered tables: the clustering implementation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clustering_provider: Option<String>,
}

impl Default for Add {
    /// An add of an empty path, with no metadata, that changes data (as a JSON `add` without
    /// `dataChange` reads).
    fn default() -> Self {
        Add {
            path: String::new(),
            partition_values: OptStringMap::default(),
            size: 0,
            modification_time: 0,
            data_change: true,
            stats: None,
            tags: None,
            deletion_vector: None,
            base_row_id: None,
            default_row_commit_version: None,
            clustering_provider: None,
        }
    }
}

impl Add {
    /// Starts an add of the file at `path` (a relative or absolute URI, as [`Add::path`]) of
    /// `size` bytes written at `modification_time` (ms since the epoch); everything else is
    /// as in [`Add::default`] until set.
    pub fn builder(path: impl Into<String>, size: i64, modification_time: i64) -> AddBuilder {
        AddBuilder(Add {
            path: path.into(),
            size,
            modification_time,
            ..Add::default()
        })
    }

    /// The file's physical row count from its statistics (`numRecords`), if they have one
    /// (only that field is decoded).
    pub fn num_records(&self) -> Option<i64> {
        FileRef::from(self).num_records()
    }

    /// The rows of the file that are live: [`num_records`](Self::num_records) minus its
    /// deletion vector's cardinality; `None` without a row count.
    pub fn live_rows(&self) -> Option<i64> {
        FileRef::from(self).live_rows()
    }
}

/// Builds an [`Add`]; see [`Add::builder`].
#[derive(Debug, Clone)]
#[must_use]
pub struct AddBuilder(Add);

impl AddBuilder {
    /// Sets the serialized value of partition column `column` (physical name); `None` is NULL.
    pub fn partition_value(mut self, column: impl Into<String>, value: Option<String>) -> Self {
        self.0.partition_values.insert(column, value);
        self
    }

    /// Replaces all partition values.
    pub fn partition_values(mut self, values: OptStringMap) -> Self {
        self.0.partition_values = values;
        self
    }

    /// Whether the commit changes data (false for OPTIMIZE-like rearrangements).
    pub fn data_change(mut self, data_change: bool) -> Self {
        self.0.data_change = data_change;
        self
    }

    /// The statistics JSON (see [`crate::stats`]).
    pub fn stats(mut self, stats: impl Into<String>) -> Self {
        self.0.stats = Some(stats.into());
        self
    }

    /// The tags.
    pub fn tags(mut self, tags: OptStringMap) -> Self {
        self.0.tags = Some(tags);
        self
    }

    /// The file's deletion vector.
    pub fn deletion_vector(mut self, dv: DeletionVectorDescriptor) -> Self {
        self.0.deletion_vector = Some(Box::new(dv));
        self
    }

    /// Row tracking: the row id of the file's first row.
    pub fn base_row_id(mut self, id: i64) -> Self {
        self.0.base_row_id = Some(id);
        self
    }

    /// Row tracking: the commit version that added the file's rows.
    pub fn default_row_commit_version(mut self, version: i64) -> Self {
        self.0.default_row_commit_version = Some(version);
        self
    }

    /// Clustered tables: the clustering implementation.
    pub fn clustering_provider(mut self, provider: impl Into<String>) -> Self {
        self.0.clustering_provider = Some(provider.into());
        self
    }

    /// The add.
    #[must_use]
    pub fn build(self) -> Add {
        self.0
    }
}

/// `remove`: a data file (identified by path and deletion vector) leaves the table; kept as a
/// tombstone until `delta.deletedFileRetentionDuration` passes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Remove {
    /// The path exactly as the matching `add` wrote it.
    pub path: String,
    /// Milliseconds since the epoch of the deletion; absent means 0 (already expired).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_timestamp: Option<i64>,
    /// False when the commit only rearranges existing data.
    #[serde(default = "default_true")]
    pub data_change: bool,
    /// True when `partitionValues`, `size` (and `tags`) are present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extended_file_metadata: Option<bool>,
    /// The removed file's partition values.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "opt_map"
    )]
    pub partition_values: Option<OptStringMap>,
    /// The removed file's size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<i64>,
    /// The removed file's statistics.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stats: Option<String>,
    /// The removed file's tags.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "opt_map"
    )]
    pub tags: Option<OptStringMap>,
    /// The deletion vector of the logical file being removed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_vector: Option<Box<DeletionVectorDescriptor>>,
    /// Row tracking, copied from the add.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_row_id: Option<i64>,
    /// Row tracking, copied from the add.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_row_commit_version: Option<i64>,
}

impl Remove {
    /// The tombstone that removes `add` at `deletion_timestamp`, carrying the add's metadata
    /// as Spark does (so conflict checks and VACUUM have what they need).
    pub fn from_add<'a>(
        add: impl Into<FileRef<'a>>,
        deletion_timestamp: i64,
        data_change: bool,
    ) -> Remove {
        let add = add.into();
        Remove {
            path: add.path().to_string(),
            deletion_timestamp: Some(deletion_timestamp),
            data_change,
            extended_file_metadata: Some(true),
            partition_values: Some(add.partition_values().clone()),
            size: Some(add.size()),
            stats: None,
            tags: add.tags().cloned(),
            deletion_vector: add.deletion_vector().cloned().map(Box::new),
            base_row_id: add.base_row_id(),
            default_row_commit_version: add.default_row_commit_version(),
        }
    }
}

/// `cdc`: a change-data file of one commit (read only by change-data-feed queries).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Cdc {
    /// The change file's path (URI, relative or absolute).
    pub path: String,
    /// Partition values of the change rows.
    #[serde(default)]
    pub partition_values: OptStringMap,
    /// Size in bytes.
    #[serde(default)]
    pub size: i64,
    /// Always false.
    #[serde(default)]
    pub data_change: bool,
    /// Free-form tags.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "opt_map"
    )]
    pub tags: Option<OptStringMap>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_counts_come_from_the_statistics_minus_the_deletion_vector() {
        let stats =
            r#"{"numRecords":10,"minValues":{"a":1},"maxValues":{"a":9},"nullCount":{"a":0}}"#;
        let add = Add::builder("f.parquet", 1, 0).stats(stats).build();
        assert_eq!((add.num_records(), add.live_rows()), (Some(10), Some(10)));
        let dv: crate::dv::DeletionVectorDescriptor = serde_json::from_str(
            r#"{"storageType":"i","pathOrInlineDv":"wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L","offset":null,"sizeInBytes":40,"cardinality":3}"#,
        )
        .unwrap();
        let add = Add::builder("f.parquet", 1, 0)
            .stats(stats)
            .deletion_vector(dv)
            .build();
        assert_eq!((add.num_records(), add.live_rows()), (Some(10), Some(7)));
        let bare = Add::builder("f.parquet", 1, 0).build();
        assert_eq!((bare.num_records(), bare.live_rows()), (None, None));
        let garbled = Add::builder("f.parquet", 1, 0).stats("{not json").build();
        assert_eq!(garbled.num_records(), None);
    }
}
