//! The checkpoint columns of each action: one description per action, from which the
//! checkpoint schema ([`super::schema`]), the encoder ([`super::writer`]) and the decoder
//! ([`super::reader`]) are all derived.
//!
//! Adding a field to an action's checkpoint form is one [`Spec`] line here (plus the field in
//! the struct): its name, its column type, how to read it from the action when writing and
//! how to store it into the action when reading. The typed columns that are not fields of an
//! action (`add.stats_parsed`, `add.partitionValues_parsed`) are derived from the table's
//! schema by the writer and are not described here.

use std::collections::HashMap;

use crate::actions::*;

/// The entries of a string map, in the order they are written.
pub(crate) type Entries<'a> = Vec<(&'a str, Option<&'a str>)>;

/// How one field of an action is stored in its checkpoint column, with the accessor the
/// encoder reads it through and the one the decoder stores it with. A getter returning
/// `None` writes a null; the decoder calls the setter only for non-null values.
pub(crate) enum Kind<A: 'static> {
    /// A string (`Utf8`; any string flavour is read).
    Str(fn(&A) -> Option<&str>, fn(&mut A, &str)),
    /// A 64-bit integer (`Int64`; any signed width is read).
    Long(fn(&A) -> Option<i64>, fn(&mut A, i64)),
    /// A 32-bit integer (`Int32`; any signed width is read). The setter returns false when
    /// the value read does not fit, which the decoder reports as corruption.
    Int(fn(&A) -> Option<i32>, fn(&mut A, i64) -> bool),
    /// A boolean.
    Bool(fn(&A) -> Option<bool>, fn(&mut A, bool)),
    /// A `map<string, string>` (`key_value` entries of `key` / `value`).
    Map(fn(&A) -> Option<Entries<'_>>, fn(&mut A, OptStringMap)),
    /// An `array<string>` of `element`s.
    List(fn(&A) -> Option<&[String]>, fn(&mut A, Vec<String>)),
    /// A deletion-vector descriptor struct.
    Dv(
        fn(&A) -> Option<&DeletionVectorDescriptor>,
        fn(&mut A, DeletionVectorDescriptor),
    ),
    /// A nested struct whose fields are again fields of `A` (e.g. `metaData.format`); it is
    /// written non-null on every row of the action.
    Struct(&'static [Spec<A>]),
}

/// What a row needs in a field to decode as the action.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Presence {
    /// The row is this action only if the field is non-null (rows of the other actions
    /// leave the whole column null, but some writers fill a struct with nulls instead).
    Key,
    /// A row of the action without this field is corrupt.
    Required,
    /// Null leaves the value of [`Described::blank`].
    Optional,
}

/// Whether the writer writes the field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Written {
    /// Always.
    Always,
    /// Only when the table keeps JSON statistics in checkpoints
    /// (`delta.checkpoint.writeStatsAsJson`).
    WhenJsonStats,
    /// Never: read when another writer wrote it, but not part of our schema.
    Never,
}

/// One field of an action's checkpoint column.
pub(crate) struct Spec<A: 'static> {
    /// The column name (the protocol's camelCase name).
    pub(crate) name: &'static str,
    /// Type and accessors.
    pub(crate) kind: Kind<A>,
    /// What decoding requires of it.
    pub(crate) presence: Presence,
    /// Whether encoding writes it.
    pub(crate) written: Written,
}

/// An action with a checkpoint column.
pub(crate) trait Described: Sized + 'static {
    /// The top-level column (the action's wire name).
    const COLUMN: &'static str;
    /// The fields of the column, in schema order.
    const FIELDS: &'static [Spec<Self>];
    /// The action the decoder starts from: the values that stand for absent fields.
    fn blank() -> Self;
    /// Wraps the decoded action.
    fn into_action(self) -> Action;
}

/// The names of `add`'s fields, spelled once: `add`'s description names its fields by
/// these, and so do the checkpoint decoder that packs adds into a state's columns and the
/// encoder of a state's files, which read and write them through [`crate::FileRef`]
/// without an `Add`.
pub(crate) mod add_field {
    pub(crate) const PATH: &str = "path";
    pub(crate) const PARTITION_VALUES: &str = "partitionValues";
    pub(crate) const SIZE: &str = "size";
    pub(crate) const MODIFICATION_TIME: &str = "modificationTime";
    pub(crate) const DATA_CHANGE: &str = "dataChange";
    pub(crate) const TAGS: &str = "tags";
    pub(crate) const DELETION_VECTOR: &str = "deletionVector";
    pub(crate) const BASE_ROW_ID: &str = "baseRowId";
    pub(crate) const DEFAULT_ROW_COMMIT_VERSION: &str = "defaultRowCommitVersion";
    pub(crate) const CLUSTERING_PROVIDER: &str = "clusteringProvider";
    pub(crate) const STATS: &str = "stats";
}

/// [`add_field`]'s names in the order of `add`'s description ([`Described::FIELDS`]): a
/// test checks the two lists agree, so a field added to the description and not to the
/// decoder and encoder that bypass it fails there (the encoder also refuses a field it
/// does not know).
#[cfg(test)]
pub(crate) const ADD_FIELDS: [&str; 11] = [
    add_field::PATH,
    add_field::PARTITION_VALUES,
    add_field::SIZE,
    add_field::MODIFICATION_TIME,
    add_field::DATA_CHANGE,
    add_field::TAGS,
    add_field::DELETION_VECTOR,
    add_field::BASE_ROW_ID,
    add_field::DEFAULT_ROW_COMMIT_VERSION,
    add_field::CLUSTERING_PROVIDER,
    add_field::STATS,
];

const fn spec<A>(name: &'static str, kind: Kind<A>) -> Spec<A> {
    Spec {
        name,
        kind,
        presence: Presence::Optional,
        written: Written::Always,
    }
}

const fn key<A>(name: &'static str, kind: Kind<A>) -> Spec<A> {
    Spec {
        presence: Presence::Key,
        ..spec(name, kind)
    }
}

const fn required<A>(name: &'static str, kind: Kind<A>) -> Spec<A> {
    Spec {
        presence: Presence::Required,
        ..spec(name, kind)
    }
}

fn pairs(m: &OptStringMap) -> Entries<'_> {
    m.iter().collect()
}

/// A map's entries in key order, so that checkpoints are deterministic.
fn sorted(h: &HashMap<String, String>) -> Entries<'_> {
    let mut v: Entries<'_> = h
        .iter()
        .map(|(k, v)| (k.as_str(), Some(v.as_str())))
        .collect();
    v.sort_unstable();
    v
}

/// The entries with a value (a `HashMap` field has no room for null values).
fn non_null(m: OptStringMap) -> HashMap<String, String> {
    m.0.into_iter()
        .filter_map(|(k, v)| v.map(|v| (k, v)))
        .collect()
}

impl Described for Add {
    const COLUMN: &'static str = ADD;
    const FIELDS: &'static [Spec<Add>] = &[
        key(
            add_field::PATH,
            Kind::Str(|a| Some(&a.path), |a, v| a.path = v.to_string()),
        ),
        spec(
            add_field::PARTITION_VALUES,
            Kind::Map(
                |a| Some(pairs(&a.partition_values)),
                |a, v| a.partition_values = v,
            ),
        ),
        required(
            add_field::SIZE,
            Kind::Long(|a| Some(a.size), |a, v| a.size = v),
        ),
        spec(
            add_field::MODIFICATION_TIME,
            Kind::Long(
                |a| Some(a.modification_time),
                |a, v| a.modification_time = v,
            ),
        ),
        // Checkpoints hold the state, not changes: every file action says so.
        spec(
            add_field::DATA_CHANGE,
            Kind::Bool(|_| Some(false), |a, v| a.data_change = v),
        ),
        spec(
            add_field::TAGS,
            Kind::Map(|a| a.tags.as_ref().map(pairs), |a, v| a.tags = Some(v)),
        ),
        spec(
            add_field::DELETION_VECTOR,
            Kind::Dv(
                |a| a.deletion_vector.as_deref(),
                |a, v| a.deletion_vector = Some(Box::new(v)),
            ),
        ),
        spec(
            add_field::BASE_ROW_ID,
            Kind::Long(|a| a.base_row_id, |a, v| a.base_row_id = Some(v)),
        ),
        spec(
            add_field::DEFAULT_ROW_COMMIT_VERSION,
            Kind::Long(
                |a| a.default_row_commit_version,
                |a, v| a.default_row_commit_version = Some(v),
            ),
        ),
        spec(
            add_field::CLUSTERING_PROVIDER,
            Kind::Str(
                |a| a.clustering_provider.as_deref(),
                |a, v| a.clustering_provider = Some(v.to_string()),
            ),
        ),
        Spec {
            written: Written::WhenJsonStats,
            ..spec(
                add_field::STATS,
                Kind::Str(|a| a.stats.as_deref(), |a, v| a.stats = Some(v.to_string())),
            )
        },
    ];

    fn blank() -> Self {
        Add {
            data_change: false,
            ..Add::builder(String::new(), 0, 0).build()
        }
    }

    fn into_action(self) -> Action {
        Action::Add(self)
    }
}

impl Described for Remove {
    const COLUMN: &'static str = REMOVE;
    const FIELDS: &'static [Spec<Remove>] = &[
        key(
            "path",
            Kind::Str(|r| Some(&r.path), |r, v| r.path = v.to_string()),
        ),
        spec(
            "deletionTimestamp",
            Kind::Long(
                |r| r.deletion_timestamp,
                |r, v| r.deletion_timestamp = Some(v),
            ),
        ),
        spec(
            "dataChange",
            Kind::Bool(|_| Some(false), |r, v| r.data_change = v),
        ),
        spec(
            "extendedFileMetadata",
            Kind::Bool(
                |r| r.extended_file_metadata,
                |r, v| r.extended_file_metadata = Some(v),
            ),
        ),
        spec(
            "partitionValues",
            Kind::Map(
                |r| r.partition_values.as_ref().map(pairs),
                |r, v| r.partition_values = Some(v),
            ),
        ),
        spec("size", Kind::Long(|r| r.size, |r, v| r.size = Some(v))),
        // Tombstones in checkpoints drop their tags (they only need to identify the file).
        Spec {
            written: Written::Never,
            ..spec(
                "tags",
                Kind::Map(|r| r.tags.as_ref().map(pairs), |r, v| r.tags = Some(v)),
            )
        },
        spec(
            "deletionVector",
            Kind::Dv(
                |r| r.deletion_vector.as_deref(),
                |r, v| r.deletion_vector = Some(Box::new(v)),
            ),
        ),
        spec(
            "baseRowId",
            Kind::Long(|r| r.base_row_id, |r, v| r.base_row_id = Some(v)),
        ),
        spec(
            "defaultRowCommitVersion",
            Kind::Long(
                |r| r.default_row_commit_version,
                |r, v| r.default_row_commit_version = Some(v),
            ),
        ),
    ];

    fn blank() -> Self {
        Remove {
            path: String::new(),
            deletion_timestamp: None,
            data_change: false,
            extended_file_metadata: None,
            partition_values: None,
            size: None,
            stats: None,
            tags: None,
            deletion_vector: None,
            base_row_id: None,
            default_row_commit_version: None,
        }
    }

    fn into_action(self) -> Action {
        Action::Remove(self)
    }
}

/// The fields of `metaData.format`.
const FORMAT_FIELDS: &[Spec<Metadata>] = &[
    spec(
        "provider",
        Kind::Str(
            |m| Some(&m.format.provider),
            |m, v| m.format.provider = v.to_string(),
        ),
    ),
    spec(
        "options",
        Kind::Map(
            |m| Some(sorted(&m.format.options)),
            |m, v| m.format.options = non_null(v),
        ),
    ),
];

impl Described for Metadata {
    const COLUMN: &'static str = METADATA;
    const FIELDS: &'static [Spec<Metadata>] = &[
        key(
            "id",
            Kind::Str(|m| Some(&m.id), |m, v| m.id = v.to_string()),
        ),
        spec(
            "name",
            Kind::Str(|m| m.name.as_deref(), |m, v| m.name = Some(v.to_string())),
        ),
        spec(
            "description",
            Kind::Str(
                |m| m.description.as_deref(),
                |m, v| m.description = Some(v.to_string()),
            ),
        ),
        spec("format", Kind::Struct(FORMAT_FIELDS)),
        spec(
            "schemaString",
            Kind::Str(
                |m| Some(&m.schema_string),
                |m, v| m.schema_string = v.to_string(),
            ),
        ),
        spec(
            "partitionColumns",
            Kind::List(
                |m| Some(&m.partition_columns),
                |m, v| m.partition_columns = v,
            ),
        ),
        spec(
            "createdTime",
            Kind::Long(|m| m.created_time, |m, v| m.created_time = Some(v)),
        ),
        spec(
            "configuration",
            Kind::Map(
                |m| Some(sorted(&m.configuration)),
                |m, v| m.configuration = non_null(v),
            ),
        ),
    ];

    fn blank() -> Self {
        Metadata {
            id: String::new(),
            name: None,
            description: None,
            format: Format {
                provider: "parquet".to_string(),
                options: HashMap::new(),
            },
            schema_string: String::new(),
            partition_columns: Vec::new(),
            created_time: None,
            configuration: HashMap::new(),
        }
    }

    fn into_action(self) -> Action {
        Action::Metadata(self)
    }
}

impl Described for Protocol {
    const COLUMN: &'static str = PROTOCOL;
    const FIELDS: &'static [Spec<Protocol>] = &[
        key(
            "minReaderVersion",
            Kind::Int(
                |p| Some(p.min_reader_version),
                |p, v| i32::try_from(v).map(|v| p.min_reader_version = v).is_ok(),
            ),
        ),
        key(
            "minWriterVersion",
            Kind::Int(
                |p| Some(p.min_writer_version),
                |p, v| i32::try_from(v).map(|v| p.min_writer_version = v).is_ok(),
            ),
        ),
        // Feature lists are written (non-null) exactly at reader 3 / writer 7.
        spec(
            "readerFeatures",
            Kind::List(
                |p| {
                    (p.min_reader_version >= 3)
                        .then(|| p.reader_features.as_deref().unwrap_or_default())
                },
                |p, v| p.reader_features = Some(v),
            ),
        ),
        spec(
            "writerFeatures",
            Kind::List(
                |p| {
                    (p.min_writer_version >= 7)
                        .then(|| p.writer_features.as_deref().unwrap_or_default())
                },
                |p, v| p.writer_features = Some(v),
            ),
        ),
    ];

    fn blank() -> Self {
        Protocol {
            min_reader_version: 0,
            min_writer_version: 0,
            reader_features: None,
            writer_features: None,
        }
    }

    fn into_action(self) -> Action {
        Action::Protocol(self)
    }
}

impl Described for SetTransaction {
    const COLUMN: &'static str = TXN;
    const FIELDS: &'static [Spec<SetTransaction>] = &[
        key(
            "appId",
            Kind::Str(|t| Some(&t.app_id), |t, v| t.app_id = v.to_string()),
        ),
        required(
            "version",
            Kind::Long(|t| Some(t.version), |t, v| t.version = v),
        ),
        spec(
            "lastUpdated",
            Kind::Long(|t| t.last_updated, |t, v| t.last_updated = Some(v)),
        ),
    ];

    fn blank() -> Self {
        SetTransaction {
            app_id: String::new(),
            version: 0,
            last_updated: None,
        }
    }

    fn into_action(self) -> Action {
        Action::Txn(self)
    }
}

impl Described for DomainMetadata {
    const COLUMN: &'static str = DOMAIN_METADATA;
    const FIELDS: &'static [Spec<DomainMetadata>] = &[
        key(
            "domain",
            Kind::Str(|d| Some(&d.domain), |d, v| d.domain = v.to_string()),
        ),
        spec(
            "configuration",
            Kind::Str(
                |d| Some(&d.configuration),
                |d, v| d.configuration = v.to_string(),
            ),
        ),
        spec(
            "removed",
            Kind::Bool(|d| Some(d.removed), |d, v| d.removed = v),
        ),
    ];

    fn blank() -> Self {
        DomainMetadata {
            domain: String::new(),
            configuration: String::new(),
            removed: false,
        }
    }

    fn into_action(self) -> Action {
        Action::DomainMetadata(self)
    }
}

impl Described for CheckpointMetadata {
    const COLUMN: &'static str = CHECKPOINT_METADATA;
    const FIELDS: &'static [Spec<CheckpointMetadata>] = &[
        key(
            "version",
            Kind::Long(|c| Some(c.version), |c, v| c.version = v),
        ),
        spec(
            "tags",
            Kind::Map(|c| c.tags.as_ref().map(pairs), |c, v| c.tags = Some(v)),
        ),
    ];

    fn blank() -> Self {
        CheckpointMetadata {
            version: 0,
            tags: None,
        }
    }

    fn into_action(self) -> Action {
        Action::CheckpointMetadata(self)
    }
}

impl Described for Sidecar {
    const COLUMN: &'static str = SIDECAR;
    const FIELDS: &'static [Spec<Sidecar>] = &[
        key(
            "path",
            Kind::Str(|s| Some(&s.path), |s, v| s.path = v.to_string()),
        ),
        spec(
            "sizeInBytes",
            Kind::Long(|s| Some(s.size_in_bytes), |s, v| s.size_in_bytes = v),
        ),
        spec(
            "modificationTime",
            Kind::Long(
                |s| Some(s.modification_time),
                |s, v| s.modification_time = v,
            ),
        ),
        spec(
            "tags",
            Kind::Map(|s| s.tags.as_ref().map(pairs), |s, v| s.tags = Some(v)),
        ),
    ];

    fn blank() -> Self {
        Sidecar {
            path: String::new(),
            size_in_bytes: 0,
            modification_time: 0,
            tags: None,
        }
    }

    fn into_action(self) -> Action {
        Action::Sidecar(self)
    }
}
