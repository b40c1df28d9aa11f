//! The layout of a state store: its three Delta tables and their schemas, the reserved
//! column names, and the configuration that lets `open` rebuild everything from the tables
//! alone (SPEC.md §26.1).
//!
//! * `log/`: key columns, value columns, `event_time`, `seq`, `op`, partitioned by
//!   `event_date` (the UTC date of `event_time`);
//! * `state/`: one row per live key: key columns, value columns, `event_time`, `seq`;
//! * `tombstones/`: key columns, `event_time`, `seq` of deletes that were the latest event
//!   of their key when folded (what keeps a late, older UPSERT from resurrecting a key).
//!
//! Each table's configuration carries `alluvium.state.role` (`log`, `state`,
//! `tombstones`), `alluvium.state.keyColumns` (a JSON array of names) and
//! `alluvium.state.formatVersion` (`1`).

use std::collections::HashMap;
use std::sync::Arc;

use alluvium::MvccError;
use alluvium_txlog::cdf::{CHANGE_TYPE_COLUMN, COMMIT_TIMESTAMP_COLUMN, COMMIT_VERSION_COLUMN};
use arrow_schema::{DataType, Field, Schema, SchemaRef, TimeUnit};

use super::StateError;
use crate::Result;
use alluvium::{Error, Table};

/// The event time column (Timestamp µs, UTC).
pub const EVENT_TIME: &str = "event_time";
/// The ordering tie-breaker column (Int64).
pub const SEQ: &str = "seq";
/// The operation column (`UPSERT` | `DELETE`).
pub const OP: &str = "op";
/// The log's partition column: the UTC date of `event_time`.
pub const EVENT_DATE: &str = "event_date";
/// `op` of an event that sets a key's value.
pub const OP_UPSERT: &str = "UPSERT";
/// `op` of an event that removes a key.
pub const OP_DELETE: &str = "DELETE";

/// Table property naming the table's role in the store.
pub const ROLE_PROPERTY: &str = "alluvium.state.role";
/// Table property holding the key columns (a JSON array of names).
pub const KEY_COLUMNS_PROPERTY: &str = "alluvium.state.keyColumns";
/// Table property holding the layout version.
pub const FORMAT_VERSION_PROPERTY: &str = "alluvium.state.formatVersion";
/// The layout version this code writes and reads.
pub(crate) const FORMAT_VERSION: &str = "1";

/// The internal MERGE source column saying a row deletes its key (never stored).
pub(crate) const DELETE_FLAG: &str = "__alluvium_state_delete";

/// The three tables of a store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    Log,
    State,
    Tombstones,
}

impl Role {
    pub(crate) const ALL: [Role; 3] = [Role::Log, Role::Tombstones, Role::State];

    /// The table's directory under the store location, and its role property value.
    pub(crate) fn dir(self) -> &'static str {
        match self {
            Role::Log => "log",
            Role::State => "state",
            Role::Tombstones => "tombstones",
        }
    }
}

/// Reserved names and why (compared case-insensitively).
fn reserved(name: &str) -> Option<&'static str> {
    let lower = name.to_ascii_lowercase();
    match lower.as_str() {
        "event_date" => Some("the log's partition column (the UTC date of event_time)"),
        CHANGE_TYPE_COLUMN | COMMIT_VERSION_COLUMN | COMMIT_TIMESTAMP_COLUMN => {
            Some("a change-data-feed column")
        }
        _ if lower.starts_with("__alluvium") => Some("internal to alluvium"),
        _ => None,
    }
}

/// `event_time`'s type.
pub(crate) fn event_time_type() -> DataType {
    DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
}

/// The columns of a store: its keys and values, and the schemas of its three tables.
#[derive(Debug, Clone)]
pub(crate) struct Layout {
    /// Key column names, in key order.
    pub(crate) keys: Vec<String>,
    /// Key fields (non-nullable), in key order.
    pub(crate) key_fields: Vec<Field>,
    /// Value fields (nullable).
    pub(crate) value_fields: Vec<Field>,
    pub(crate) log: SchemaRef,
    pub(crate) state: SchemaRef,
    pub(crate) tombstones: SchemaRef,
}

impl Layout {
    /// The layout of keys `key_columns` over `schema` (keys and values; `event_time`,
    /// `seq` and `op` may be present too, with their own types, and are then ignored, so
    /// that a sample of events describes a store).
    pub(crate) fn new(key_columns: &[&str], schema: &Schema) -> Result<Layout> {
        if key_columns.is_empty() {
            return Err(StateError::NoKeyColumns);
        }
        let mut keys: Vec<Field> = Vec::new();
        for k in key_columns {
            let Some(f) = schema
                .fields()
                .iter()
                .find(|f| f.name().eq_ignore_ascii_case(k))
            else {
                return Err(StateError::MissingKeyColumn {
                    column: k.to_string(),
                });
            };
            if keys.iter().any(|q| q.name().eq_ignore_ascii_case(f.name())) {
                return Err(StateError::DuplicateKeyColumn {
                    column: k.to_string(),
                });
            }
            keys.push(
                f.as_ref()
                    .clone()
                    .with_nullable(false)
                    .with_metadata(HashMap::new()),
            );
        }
        let mut values: Vec<Field> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for f in schema.fields() {
            let lower = f.name().to_ascii_lowercase();
            if !seen.insert(lower.clone()) {
                return Err(
                    Error::InvalidArgument(format!("duplicate column `{}`", f.name())).into(),
                );
            }
            if let Some(why) = reserved(f.name()) {
                return Err(StateError::ReservedColumn {
                    column: f.name().clone(),
                    reason: why.to_string(),
                });
            }
            let event_col = match lower.as_str() {
                EVENT_TIME => Some(matches!(f.data_type(), DataType::Timestamp(_, Some(_)))),
                SEQ => Some(f.data_type().is_integer()),
                OP => Some(matches!(
                    f.data_type(),
                    DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
                )),
                _ => None,
            };
            match event_col {
                Some(true) => {
                    if keys.iter().any(|k| k.name() == f.name()) {
                        return Err(StateError::ReservedColumn {
                            column: f.name().clone(),
                            reason: "an event column cannot be a key".into(),
                        });
                    }
                    continue;
                }
                Some(false) => {
                    return Err(StateError::ReservedColumn {
                        column: f.name().clone(),
                        reason: format!(
                            "an event column (event_time: timestamp with a time zone, seq: integer, op: string), here of type {}",
                            f.data_type()
                        ),
                    });
                }
                None => {}
            }
            if keys.iter().any(|k| k.name() == f.name()) {
                continue;
            }
            values.push(
                f.as_ref()
                    .clone()
                    .with_nullable(true)
                    .with_metadata(HashMap::new()),
            );
        }
        for k in &keys {
            let ok = matches!(
                k.data_type(),
                DataType::Boolean
                    | DataType::Int8
                    | DataType::Int16
                    | DataType::Int32
                    | DataType::Int64
                    | DataType::Utf8
                    | DataType::LargeUtf8
                    | DataType::Utf8View
                    | DataType::Date32
                    | DataType::Date64
                    | DataType::Timestamp(_, _)
                    | DataType::Decimal128(_, _)
            );
            if !ok {
                return Err(StateError::KeyColumnType {
                    column: k.name().clone(),
                    data_type: k.data_type().to_string(),
                });
            }
        }
        if values.is_empty() {
            return Err(StateError::NoValueColumns);
        }
        Ok(Self::from_fields(normalize(keys)?, normalize(values)?))
    }

    fn from_fields(key_fields: Vec<Field>, value_fields: Vec<Field>) -> Layout {
        let time = Field::new(EVENT_TIME, event_time_type(), false);
        let mut log: Vec<Field> = key_fields.clone();
        log.extend(value_fields.iter().cloned());
        log.push(time.clone());
        log.push(Field::new(SEQ, DataType::Int64, true));
        log.push(Field::new(OP, DataType::Utf8, false));
        log.push(Field::new(EVENT_DATE, DataType::Date32, false));
        let mut state: Vec<Field> = key_fields.clone();
        state.extend(value_fields.iter().cloned());
        state.push(time.clone());
        state.push(Field::new(SEQ, DataType::Int64, false));
        let mut tomb: Vec<Field> = key_fields.clone();
        tomb.push(time);
        tomb.push(Field::new(SEQ, DataType::Int64, false));
        Layout {
            keys: key_fields.iter().map(|f| f.name().clone()).collect(),
            key_fields,
            value_fields,
            log: Arc::new(Schema::new(log)),
            state: Arc::new(Schema::new(state)),
            tombstones: Arc::new(Schema::new(tomb)),
        }
    }

    /// The table properties that mark a table of this store.
    fn properties(&self, role: Role) -> Result<HashMap<String, String>> {
        let keys = serde_json::to_string(&self.keys)
            .map_err(|e| Error::InvalidArgument(format!("key columns: {e}")))?;
        Ok(HashMap::from([
            (ROLE_PROPERTY.to_string(), role.dir().to_string()),
            (KEY_COLUMNS_PROPERTY.to_string(), keys),
            (
                FORMAT_VERSION_PROPERTY.to_string(),
                FORMAT_VERSION.to_string(),
            ),
        ]))
    }

    /// The schema of a table of the store.
    pub(crate) fn schema(&self, role: Role) -> &SchemaRef {
        match role {
            Role::Log => &self.log,
            Role::State => &self.state,
            Role::Tombstones => &self.tombstones,
        }
    }

    /// Creates `table` as the store's `role` table (with the caller's extra `properties`),
    /// or accepts it if a table of the same role, keys and schema is already there (a
    /// creation that was interrupted and is run again).
    pub(crate) fn create_table(
        &self,
        table: &Table,
        role: Role,
        extra: &std::collections::BTreeMap<String, String>,
    ) -> Result<()> {
        let mut props = extra.clone();
        props.extend(self.properties(role)?);
        let partitions = if role == Role::Log {
            vec![EVENT_DATE.to_string()]
        } else {
            Vec::new()
        };
        match table.create(self.schema(role), &partitions, &props) {
            Ok(_) => Ok(()),
            Err(Error::Mvcc(MvccError::TableAlreadyExists { .. })) => {
                let found = Layout::read(table, role)?;
                if found.keys != self.keys || strip(found.schema(role)) != strip(self.schema(role))
                {
                    return Err(StateError::NotAStore {
                        location: table.uri(),
                        reason: "a different table is already there".into(),
                    });
                }
                Ok(())
            }
            Err(e) => Err(e.into()),
        }
    }

    /// The layout recorded in `table`, which must be the store's `role` table.
    pub(crate) fn read(table: &Table, role: Role) -> Result<Layout> {
        let not_a_store = |reason: String| StateError::NotAStore {
            location: table.uri(),
            reason,
        };
        let snapshot = match table.snapshot() {
            Ok(s) => s,
            Err(e) if e.is_not_found() => {
                return Err(not_a_store(format!("no {} table", role.dir())));
            }
            Err(e) => return Err(e.into()),
        };
        let config = &snapshot.metadata().configuration;
        if config.get(ROLE_PROPERTY).map(String::as_str) != Some(role.dir()) {
            return Err(not_a_store(format!(
                "the table has no {ROLE_PROPERTY}={}",
                role.dir()
            )));
        }
        if config.get(FORMAT_VERSION_PROPERTY).map(String::as_str) != Some(FORMAT_VERSION) {
            return Err(not_a_store(format!(
                "unsupported {FORMAT_VERSION_PROPERTY} {:?}",
                config.get(FORMAT_VERSION_PROPERTY)
            )));
        }
        let keys: Vec<String> = config
            .get(KEY_COLUMNS_PROPERTY)
            .and_then(|k| serde_json::from_str(k).ok())
            .ok_or_else(|| not_a_store(format!("no readable {KEY_COLUMNS_PROPERTY}")))?;
        let schema = alluvium_txlog::schema::arrow_schema(snapshot.schema())?;
        let field = |name: &str| -> Result<Field> {
            schema
                .fields()
                .iter()
                .find(|f| f.name() == name)
                .map(|f| f.as_ref().clone().with_metadata(HashMap::new()))
                .ok_or_else(|| not_a_store(format!("key column `{name}` is not in the table")))
        };
        let key_fields: Vec<Field> = keys
            .iter()
            .map(|k| field(k).map(|f| f.with_nullable(false)))
            .collect::<Result<_>>()?;
        let value_fields: Vec<Field> = schema
            .fields()
            .iter()
            .filter(|f| {
                !keys.contains(f.name())
                    && ![EVENT_TIME, SEQ, OP, EVENT_DATE].contains(&f.name().as_str())
            })
            .map(|f| {
                f.as_ref()
                    .clone()
                    .with_nullable(true)
                    .with_metadata(HashMap::new())
            })
            .collect();
        let layout = Layout::from_fields(key_fields, value_fields);
        let ours = alluvium_txlog::schema::arrow_schema(
            &alluvium_txlog::schema::from_arrow_schema(layout.schema(role))?,
        )?;
        if strip(&ours) != strip(&schema) {
            return Err(not_a_store(format!(
                "the {} table's schema is not a state store's",
                role.dir()
            )));
        }
        Ok(layout)
    }
}

/// Names and types only (nullability and metadata may differ in what the log recorded).
fn strip(schema: &Schema) -> Vec<(String, DataType)> {
    schema
        .fields()
        .iter()
        .map(|f| (f.name().clone(), f.data_type().clone()))
        .collect()
}

/// `fields` as the log records them (Arrow types without a Delta counterpart, such as
/// `LargeUtf8`, become the type a read returns), keeping each field's nullability.
fn normalize(fields: Vec<Field>) -> Result<Vec<Field>> {
    let delta = alluvium_txlog::schema::from_arrow_schema(&Schema::new(fields.clone()))?;
    let back = alluvium_txlog::schema::arrow_schema(&delta)?;
    Ok(back
        .fields()
        .iter()
        .zip(fields)
        .map(|(r, f)| {
            r.as_ref()
                .clone()
                .with_nullable(f.is_nullable())
                .with_metadata(HashMap::new())
        })
        .collect())
}
