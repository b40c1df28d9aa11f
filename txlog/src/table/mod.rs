//! Table configuration: what a table's protocol and properties ask of a reader or writer
//! (PROTOCOL.md "Protocol Evolution", "Table Features" and the feature sections).
//!
//! This folder owns the names of table features ([`TableFeature`]), the protocol gate
//! ([`features`]), the table properties ([`properties`]), the questions asked of protocol
//! and properties together ([`TableConfiguration`]), and the rules of the features
//! configured through them: column mapping, row tracking, Iceberg compatibility,
//! clustering and type widening. The rule files ask the
//! [`Protocol`](crate::actions::Protocol) what it supports and read property names from
//! [`properties`]; the gate and [`TableConfiguration`] call the rule files, and no rule
//! file calls the gate, so the folder has no import loop.

pub mod clustering;
pub mod column_mapping;
mod configuration;
pub mod features;
pub mod iceberg_compat;
pub mod properties;
pub mod row_tracking;
mod table_feature;
pub mod type_widening;

pub use configuration::TableConfiguration;
pub use table_feature::TableFeature;
