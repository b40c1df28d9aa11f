//! The change-data-feed vocabulary (PROTOCOL.md "Change Data Files", "Add CDC File"): the
//! columns the feed adds to a table's rows and the change types of its `_change_type`
//! column. The one place their strings are spelled; writers of change-data files and
//! readers of the feed both take them from here.

use std::fmt;

/// The change-type column of change-data files and of the feed.
pub const CHANGE_TYPE_COLUMN: &str = "_change_type";
/// The commit-version column the feed adds.
pub const COMMIT_VERSION_COLUMN: &str = "_commit_version";
/// The commit-timestamp column the feed adds.
pub const COMMIT_TIMESTAMP_COLUMN: &str = "_commit_timestamp";
/// The columns the feed adds to the table's, in output order. A table recording change
/// data cannot have a column of any of these names.
pub const CHANGE_FEED_COLUMNS: [&str; 3] = [
    CHANGE_TYPE_COLUMN,
    COMMIT_VERSION_COLUMN,
    COMMIT_TIMESTAMP_COLUMN,
];

/// What happened to a row: the value of its [`CHANGE_TYPE_COLUMN`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChangeType {
    /// A new row (`insert`).
    Insert,
    /// A row deleted (`delete`).
    Delete,
    /// A row's values before an update (`update_preimage`).
    UpdatePreimage,
    /// A row's values after an update (`update_postimage`).
    UpdatePostimage,
}

impl ChangeType {
    /// Every change type.
    pub const ALL: [ChangeType; 4] = [
        ChangeType::Insert,
        ChangeType::Delete,
        ChangeType::UpdatePreimage,
        ChangeType::UpdatePostimage,
    ];

    /// The `_change_type` value.
    pub const fn as_str(self) -> &'static str {
        match self {
            ChangeType::Insert => "insert",
            ChangeType::Delete => "delete",
            ChangeType::UpdatePreimage => "update_preimage",
            ChangeType::UpdatePostimage => "update_postimage",
        }
    }

    /// The change type whose `_change_type` value is exactly `value`, if any.
    pub fn parse(value: &str) -> Option<ChangeType> {
        ChangeType::ALL.into_iter().find(|c| c.as_str() == value)
    }
}

impl fmt::Display for ChangeType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn change_types_round_trip_and_nothing_else_parses() {
        for c in ChangeType::ALL {
            assert_eq!(ChangeType::parse(c.as_str()), Some(c));
            assert_eq!(c.to_string(), c.as_str());
        }
        for other in ["Insert", "update", "", "update_preimage "] {
            assert_eq!(ChangeType::parse(other), None, "{other:?}");
        }
        assert_eq!(
            CHANGE_FEED_COLUMNS,
            ["_change_type", "_commit_version", "_commit_timestamp"]
        );
    }
}
