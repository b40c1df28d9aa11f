//! The field-metadata keys the protocol defines (PROTOCOL.md "Column Mapping", "Column
//! Invariants", "Generated Columns", "Identity Columns", "Default Columns", "Type
//! Widening", "Writer Requirements for IcebergCompatV2"): the one place their strings are
//! spelled.
//!
//! Field metadata also holds keys of the user's (a `comment`, anything else); those are
//! not [`ColumnMetadataKey`]s and are kept as they are.

use std::fmt;

/// A key of a schema field's `metadata` that the protocol gives a meaning.
///
/// Keys are compared exactly (case-sensitively). [`ColumnMetadataKey::parse`] answers
/// `None` for any other key, which then belongs to the user.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ColumnMetadataKey {
    /// `delta.columnMapping.id`: the column's id (a number).
    ColumnMappingId,
    /// `delta.columnMapping.physicalName`: the column's name in data files.
    ColumnMappingPhysicalName,
    /// `delta.columnMapping.nested.ids`: the ids of array elements and map keys and values
    /// (IcebergCompatV2).
    ColumnMappingNestedIds,
    /// `delta.generationExpression`: the SQL expression a generated column must equal.
    GenerationExpression,
    /// `delta.identity.start`: the first value of an identity column.
    IdentityStart,
    /// `delta.identity.step`: the increment of an identity column.
    IdentityStep,
    /// `delta.identity.highWaterMark`: the highest (or lowest) value assigned so far.
    IdentityHighWaterMark,
    /// `delta.identity.allowExplicitInsert`: whether writers may supply the values.
    IdentityAllowExplicitInsert,
    /// `CURRENT_DEFAULT`: the SQL expression of a column's default value.
    CurrentDefault,
    /// `delta.invariants`: a column invariant (a JSON-wrapped SQL expression).
    Invariants,
    /// `delta.typeChanges`: the type changes applied to the column (type widening).
    TypeChanges,
}

impl ColumnMetadataKey {
    /// The prefix every identity-column key starts with.
    pub const IDENTITY_PREFIX: &'static str = "delta.identity.";

    /// Every key the protocol defines.
    pub const ALL: &'static [ColumnMetadataKey] = &[
        ColumnMetadataKey::ColumnMappingId,
        ColumnMetadataKey::ColumnMappingPhysicalName,
        ColumnMetadataKey::ColumnMappingNestedIds,
        ColumnMetadataKey::GenerationExpression,
        ColumnMetadataKey::IdentityStart,
        ColumnMetadataKey::IdentityStep,
        ColumnMetadataKey::IdentityHighWaterMark,
        ColumnMetadataKey::IdentityAllowExplicitInsert,
        ColumnMetadataKey::CurrentDefault,
        ColumnMetadataKey::Invariants,
        ColumnMetadataKey::TypeChanges,
    ];

    /// The key as written in a field's `metadata`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ColumnMetadataKey::ColumnMappingId => "delta.columnMapping.id",
            ColumnMetadataKey::ColumnMappingPhysicalName => "delta.columnMapping.physicalName",
            ColumnMetadataKey::ColumnMappingNestedIds => "delta.columnMapping.nested.ids",
            ColumnMetadataKey::GenerationExpression => "delta.generationExpression",
            ColumnMetadataKey::IdentityStart => "delta.identity.start",
            ColumnMetadataKey::IdentityStep => "delta.identity.step",
            ColumnMetadataKey::IdentityHighWaterMark => "delta.identity.highWaterMark",
            ColumnMetadataKey::IdentityAllowExplicitInsert => "delta.identity.allowExplicitInsert",
            ColumnMetadataKey::CurrentDefault => "CURRENT_DEFAULT",
            ColumnMetadataKey::Invariants => "delta.invariants",
            ColumnMetadataKey::TypeChanges => "delta.typeChanges",
        }
    }

    /// The namespace of the protocol's keys: every key it defines but `CURRENT_DEFAULT`
    /// starts with it, and so may any it defines later.
    pub const PROTOCOL_PREFIX: &'static str = "delta.";

    /// Whether `key` belongs to the protocol rather than the user, for a writer that sets
    /// keys a user gives: a key of [`ALL`](Self::ALL) or any key in the `delta.` namespace,
    /// compared case-insensitively so that no other spelling of a protocol key passes for a
    /// user's.
    pub fn is_reserved(key: &str) -> bool {
        let prefix = Self::PROTOCOL_PREFIX.len();
        ColumnMetadataKey::ALL
            .iter()
            .any(|k| k.as_str().eq_ignore_ascii_case(key))
            || key
                .get(..prefix)
                .is_some_and(|p| p.eq_ignore_ascii_case(Self::PROTOCOL_PREFIX))
    }

    /// The protocol key spelled exactly `key`, or `None` for any other (user) key.
    pub fn parse(key: &str) -> Option<ColumnMetadataKey> {
        ColumnMetadataKey::ALL
            .iter()
            .copied()
            .find(|k| k.as_str() == key)
    }
}

impl fmt::Display for ColumnMetadataKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl AsRef<str> for ColumnMetadataKey {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn every_key_round_trips_and_user_keys_are_not_keys() {
        let mut seen = HashSet::new();
        for k in ColumnMetadataKey::ALL {
            assert!(seen.insert(k.as_str()), "{k} spelled twice");
            assert_eq!(ColumnMetadataKey::parse(k.as_str()), Some(*k));
            assert_eq!(k.to_string(), k.as_str());
        }
        for user in [
            "comment",
            "delta.columnmapping.id",
            "current_default",
            "delta.identity.",
        ] {
            assert_eq!(ColumnMetadataKey::parse(user), None, "{user}");
        }
        let identity: Vec<_> = ColumnMetadataKey::ALL
            .iter()
            .filter(|k| k.as_str().starts_with(ColumnMetadataKey::IDENTITY_PREFIX))
            .collect();
        assert_eq!(identity.len(), 4);
        assert_eq!(
            ColumnMetadataKey::ColumnMappingPhysicalName.as_str(),
            "delta.columnMapping.physicalName"
        );
    }

    #[test]
    fn protocol_keys_are_reserved_in_any_case_user_keys_are_not() {
        for key in [
            "delta.columnMapping.id",
            "Delta.ColumnMapping.PhysicalName",
            "delta.someFutureKey",
            "CURRENT_DEFAULT",
            "current_default",
        ] {
            assert!(ColumnMetadataKey::is_reserved(key), "{key}");
        }
        for key in ["comment", "owner", "deltas", "delta", ""] {
            assert!(!ColumnMetadataKey::is_reserved(key), "{key}");
        }
    }
}
