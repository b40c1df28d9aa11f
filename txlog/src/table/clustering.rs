//! Clustered tables (PROTOCOL.md "Clustered Table"): the clustering columns kept in the
//! `delta.clustering` domain, the rules a write must keep on such a table, and the
//! `clusteringProvider` OPTIMIZE marks clustered files with.
//!
//! The domain's `clusteringColumns` is a list of physical column paths. Delta Spark writes
//! each path as a list of names (`[["a"],["s","b"]]`); the protocol's example shows plain
//! strings (`["a"]`); Databricks' preview feature `liquid` kept them in the `delta.liquid`
//! domain as `[{"physicalName":["a"]}]`. All three are read; the Delta Spark form is
//! written.

use std::collections::HashMap;

use serde_json::{Value, json};

use crate::actions::{DomainMetadata, Metadata, Protocol};
use crate::column_mapping::ColumnMappingMode;
use crate::error::FeatureSide;
use crate::properties::TableProperties;
use crate::schema::{DataType, StructField, StructType};
use crate::table::TableFeature;
use crate::{LogError, Result};

/// The writer feature of clustered tables ([`TableFeature::Clustering`]).
pub const FEATURE: &str = TableFeature::Clustering.as_str();
/// Databricks' preview name of the feature (with the [`LEGACY_DOMAIN`] domain;
/// [`TableFeature::Liquid`]).
pub const LEGACY_FEATURE: &str = TableFeature::Liquid.as_str();
/// The domain holding the clustering columns.
pub const DOMAIN: &str = "delta.clustering"; // vocabulary: a domain name, not a property
/// The domain the preview feature [`LEGACY_FEATURE`] kept them in.
pub const LEGACY_DOMAIN: &str = "delta.liquid"; // vocabulary: a domain name, not a property
/// The clustering implementation alluvium's OPTIMIZE is (Delta Spark's name for its
/// Z-cube clustering), set as `add.clusteringProvider` on the files it clusters.
pub const PROVIDER: &str = "liquid"; // vocabulary: a clusteringProvider value, not a feature
/// The `add.tags` key naming the OPTIMIZE run (Z-cube) that clustered a file.
pub const ZCUBE_ID_TAG: &str = "ZCUBE_ID";
/// The `add.tags` key holding the clustering columns (JSON list) a file was clustered by.
pub const ZCUBE_ZORDER_BY_TAG: &str = "ZCUBE_ZORDER_BY";
/// Most clustering columns a table may have (Delta Spark's limit).
pub const MAX_CLUSTERING_COLUMNS: usize = 4;

/// Whether the protocol makes the table a clustered table (`clustering`, or the preview
/// `liquid`, among the writer features).
pub fn is_clustered(protocol: &Protocol) -> bool {
    protocol.supports_writer_feature(&TableFeature::Clustering)
        || protocol.supports_writer_feature(&TableFeature::Liquid)
}

fn invalid(detail: String) -> LogError {
    LogError::UnsupportedFeature {
        side: FeatureSide::Writer,
        feature: FEATURE.into(),
        detail: Some(detail),
    }
}

/// Parses a clustering domain's configuration into physical column paths.
///
/// # Errors
/// [`LogError::UnsupportedFeature`] (writer side, `clustering`) when the configuration is
/// not one of the three known forms.
pub fn parse_domain(configuration: &str) -> Result<Vec<Vec<String>>> {
    let bad = || {
        invalid(format!(
            "unreadable clustering domain configuration {configuration:?}"
        ))
    };
    let v: Value = serde_json::from_str(configuration).map_err(|_| bad())?;
    let Some(cols) = v.get("clusteringColumns").and_then(Value::as_array) else {
        return Err(bad());
    };
    let path = |v: &Value| -> Option<Vec<String>> {
        v.as_array()?
            .iter()
            .map(|s| s.as_str().map(str::to_string))
            .collect()
    };
    cols.iter()
        .map(|c| match c {
            Value::String(s) => Some(vec![s.clone()]),
            Value::Array(_) => path(c),
            Value::Object(o) => o.get("physicalName").and_then(path),
            _ => None,
        })
        .map(|p| p.filter(|p| !p.is_empty()).ok_or_else(bad))
        .collect()
}

/// The clustering columns (physical paths) of a table whose live domains `domain` looks
/// up: `None` when the table is not clustered; an empty list when it is clustered by
/// nothing (`CLUSTER BY NONE`, or no domain yet).
///
/// # Errors
/// As [`parse_domain`].
pub fn clustering_columns<'a>(
    protocol: &Protocol,
    domain: impl Fn(&str) -> Option<&'a DomainMetadata>,
) -> Result<Option<Vec<Vec<String>>>> {
    if !is_clustered(protocol) {
        return Ok(None);
    }
    for name in [DOMAIN, LEGACY_DOMAIN] {
        if let Some(d) = domain(name).filter(|d| !d.removed) {
            return parse_domain(&d.configuration).map(Some);
        }
    }
    Ok(Some(Vec::new()))
}

/// The `delta.clustering` domain action recording `columns` (physical paths), in Delta
/// Spark's form.
pub fn domain_action(columns: &[Vec<String>]) -> DomainMetadata {
    DomainMetadata {
        domain: DOMAIN.into(),
        configuration: json!({ "clusteringColumns": columns, "domainName": DOMAIN }).to_string(),
        removed: false,
    }
}

/// The fields along `path` through nested structs, each part found by `pick` in the struct
/// that holds it; `None` for an empty path, a missing part, or a part below a non-struct.
fn walk<'a, P>(
    schema: &'a StructType,
    path: &[P],
    pick: impl Fn(&'a StructType, &P) -> Option<&'a StructField>,
) -> Option<Vec<&'a StructField>> {
    let mut at = schema;
    let mut fields = Vec::with_capacity(path.len());
    for (i, part) in path.iter().enumerate() {
        let f = pick(at, part)?;
        if i + 1 < path.len() {
            at = f.data_type.as_struct()?;
        }
        fields.push(f);
    }
    (!fields.is_empty()).then_some(fields)
}

/// The field at a physical path, and its logical path.
fn resolve_physical<'a>(
    schema: &'a StructType,
    mode: ColumnMappingMode,
    path: &[String],
) -> Option<(Vec<String>, &'a StructField)> {
    let fields = walk(schema, path, |s, part| {
        s.fields.iter().find(|f| mode.physical_name(f) == part)
    })?;
    let logical = fields.iter().map(|f| f.name.clone()).collect();
    Some((logical, fields.last().copied()?))
}

/// The logical names (dotted) of physical clustering paths.
///
/// # Errors
/// [`LogError::UnsupportedFeature`] (`clustering`) for a path no column of `schema` has.
pub fn logical_names(
    schema: &StructType,
    mode: ColumnMappingMode,
    paths: &[Vec<String>],
) -> Result<Vec<String>> {
    paths
        .iter()
        .map(|p| {
            resolve_physical(schema, mode, p)
                .map(|(l, _)| l.join("."))
                .ok_or_else(|| {
                    invalid(format!(
                        "clustering column {} is not in the table schema",
                        p.join(".")
                    ))
                })
        })
        .collect()
}

/// The physical path of a logical column name (`a` or `s.b`; each part matched as
/// [`StructType::field`] does), and the field.
pub fn physical_path<'a>(
    schema: &'a StructType,
    mode: ColumnMappingMode,
    name: &str,
) -> Option<(Vec<String>, &'a StructField)> {
    let parts: Vec<&str> = name.split('.').map(str::trim).collect();
    let fields = walk(schema, &parts, |s, part| s.field(part))?;
    let physical = fields
        .iter()
        .map(|f| mode.physical_name(f).to_string())
        .collect();
    Some((physical, fields.last().copied()?))
}

/// The logical paths of the leaf columns that get statistics, as the data-file statistics
/// pick them (`delta.dataSkippingStatsColumns`, else the first
/// `delta.dataSkippingNumIndexedCols` leaves of the data columns).
pub fn stats_leaves(
    schema: &StructType,
    partition_columns: &[String],
    configuration: &HashMap<String, String>,
) -> Vec<Vec<String>> {
    fn flatten(fields: &[StructField], prefix: &[String], out: &mut Vec<Vec<String>>) {
        for f in fields {
            let mut p = prefix.to_vec();
            p.push(f.name.clone());
            match &f.data_type {
                DataType::Struct(s) => flatten(&s.fields, &p, out),
                _ => out.push(p),
            }
        }
    }
    let data: Vec<StructField> = schema
        .fields
        .iter()
        .filter(|f| {
            !partition_columns
                .iter()
                .any(|p| p.eq_ignore_ascii_case(&f.name))
        })
        .cloned()
        .collect();
    let mut leaves = Vec::new();
    flatten(&data, &[], &mut leaves);
    TableProperties(configuration).retain_stats_leaves(&mut leaves, |l| l.as_slice());
    leaves
}

/// Checks the rules of PROTOCOL.md "Writer Requirements for Clustered Table" that every
/// write to a clustered table relies on: the table is not also partitioned, its clustering
/// domain reads, and every clustering column is in the schema. (That the clustering
/// columns get statistics is checked where it can change: [`check_columns`] when they are
/// chosen, [`check_statistics`] when the statistics settings change.) Tables that are not
/// clustered pass.
///
/// # Errors
/// [`LogError::UnsupportedFeature`] (writer side, `clustering`) naming the rule broken.
pub fn check_writable<'a>(
    protocol: &Protocol,
    metadata: &Metadata,
    schema: &StructType,
    domain: impl Fn(&str) -> Option<&'a DomainMetadata>,
) -> Result<()> {
    let Some(paths) = clustering_columns(protocol, domain)? else {
        return Ok(());
    };
    if !metadata.partition_columns.is_empty() {
        return Err(invalid(format!(
            "the table is both clustered and partitioned (by {})",
            metadata.partition_columns.join(", ")
        )));
    }
    let mode = ColumnMappingMode::of(protocol, metadata);
    logical_names(schema, mode, &paths)?;
    Ok(())
}

/// Checks that a clustered table's clustering columns keep statistics under `metadata`'s
/// settings (as Delta Spark validates a change of `delta.dataSkippingNumIndexedCols` or
/// `delta.dataSkippingStatsColumns`): every new file must have statistics for them.
/// Tables that are not clustered pass.
///
/// # Errors
/// [`LogError::UnsupportedFeature`] (writer side, `clustering`) naming the column.
pub fn check_statistics<'a>(
    protocol: &Protocol,
    metadata: &Metadata,
    schema: &StructType,
    domain: impl Fn(&str) -> Option<&'a DomainMetadata>,
) -> Result<()> {
    let Some(paths) = clustering_columns(protocol, domain)? else {
        return Ok(());
    };
    let mode = ColumnMappingMode::of(protocol, metadata);
    let logical = logical_names(schema, mode, &paths)?;
    check_columns(
        schema,
        &metadata.partition_columns,
        &metadata.configuration,
        &logical,
    )
}

/// Checks that `columns` (logical, dotted) can be clustering columns of a table with this
/// schema, partition columns and configuration: at most [`MAX_CLUSTERING_COLUMNS`], no
/// repeats, each a column of an ordered type with statistics, and no partition columns.
///
/// # Errors
/// [`LogError::UnsupportedFeature`] (writer side, `clustering`) naming the column and why.
pub fn check_columns(
    schema: &StructType,
    partition_columns: &[String],
    configuration: &HashMap<String, String>,
    columns: &[String],
) -> Result<()> {
    if columns.len() > MAX_CLUSTERING_COLUMNS {
        return Err(invalid(format!(
            "{} clustering columns; at most {MAX_CLUSTERING_COLUMNS} are allowed",
            columns.len()
        )));
    }
    if !columns.is_empty() && !partition_columns.is_empty() {
        return Err(invalid("a partitioned table cannot be clustered".into()));
    }
    let leaves = stats_leaves(schema, partition_columns, configuration);
    let mut seen: Vec<Vec<String>> = Vec::new();
    for c in columns {
        let Some((_, field)) = physical_path(schema, ColumnMappingMode::None, c) else {
            return Err(invalid(format!(
                "clustering column `{c}` is not in the table schema"
            )));
        };
        let ordered = matches!(&field.data_type, DataType::Primitive(p) if !matches!(p,
            crate::schema::PrimitiveType::Variant | crate::schema::PrimitiveType::Void));
        if !ordered {
            return Err(invalid(format!(
                "clustering column `{c}` has type {}, which has no order to cluster by",
                field.data_type
            )));
        }
        let path: Vec<String> = logical_path(schema, c);
        if seen.iter().any(|s| {
            s.len() == path.len() && s.iter().zip(&path).all(|(a, b)| a.eq_ignore_ascii_case(b))
        }) {
            return Err(invalid(format!("clustering column `{c}` is listed twice")));
        }
        if !leaves.iter().any(|l| {
            l.len() == path.len() && l.iter().zip(&path).all(|(a, b)| a.eq_ignore_ascii_case(b))
        }) {
            return Err(invalid(format!(
                "clustering column `{c}` gets no statistics (delta.dataSkippingNumIndexedCols / delta.dataSkippingStatsColumns): every file must have statistics for it"
            )));
        }
        seen.push(path);
    }
    Ok(())
}

/// The logical path of a (case-insensitively matched) dotted name, as the schema spells it.
fn logical_path(schema: &StructType, name: &str) -> Vec<String> {
    let mut fields = &schema.fields;
    let mut out = Vec::new();
    for part in name.split('.').map(str::trim) {
        let Some(f) = fields
            .iter()
            .find(|f| f.name == part)
            .or_else(|| fields.iter().find(|f| f.name.eq_ignore_ascii_case(part)))
        else {
            break;
        };
        out.push(f.name.clone());
        if let DataType::Struct(s) = &f.data_type {
            fields = &s.fields;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_three_domain_forms_parse() {
        assert_eq!(
            parse_domain(
                r#"{"clusteringColumns":[["a"],["s","b"]],"domainName":"delta.clustering"}"#
            )
            .unwrap(),
            vec![vec!["a".to_string()], vec!["s".into(), "b".into()]]
        );
        assert_eq!(
            parse_domain(r#"{"clusteringColumns":["col-1","col-2"]}"#).unwrap(),
            vec![vec!["col-1".to_string()], vec!["col-2".to_string()]]
        );
        assert_eq!(
            parse_domain(
                r#"{"clusteringColumns":[{"physicalName":["id"]}],"domainName":"delta.liquid"}"#
            )
            .unwrap(),
            vec![vec!["id".to_string()]]
        );
        assert!(parse_domain(r#"{"clusteringColumns":[3]}"#).is_err());
        assert!(parse_domain("nope").is_err());
        let d = domain_action(&[vec!["a".into()]]);
        assert_eq!(
            parse_domain(&d.configuration).unwrap(),
            vec![vec!["a".to_string()]]
        );
    }
}
