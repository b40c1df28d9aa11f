//! Column mapping (PROTOCOL.md "Column Mapping"): logical column names versus the physical
//! names and ids used in data files, partition values and statistics.

use crate::actions::{Metadata, Protocol};
pub use crate::properties::COLUMN_MAPPING_MODE;
use crate::schema::{DataType, StructField, StructType};
use crate::table::TableFeature;

/// How data-file columns are matched to schema fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnMappingMode {
    /// By logical (display) name.
    None,
    /// By `delta.columnMapping.physicalName`.
    Name,
    /// By Parquet field id (`delta.columnMapping.id`).
    Id,
}

impl ColumnMappingMode {
    /// The mode in force: the table property, honoured only when the protocol supports the
    /// `columnMapping` feature.
    pub fn of(protocol: &Protocol, metadata: &Metadata) -> ColumnMappingMode {
        if !protocol.supports_reader_feature(&TableFeature::ColumnMapping)
            && !protocol.supports_writer_feature(&TableFeature::ColumnMapping)
        {
            return ColumnMappingMode::None;
        }
        metadata
            .configuration
            .get(COLUMN_MAPPING_MODE)
            .and_then(|v| ColumnMappingMode::parse(v))
            .unwrap_or(ColumnMappingMode::None)
    }

    /// Parses a [`COLUMN_MAPPING_MODE`] value: `none`, `name` or `id`, in any case (as
    /// Delta's writers spell it; surrounding spaces are not part of any of them).
    pub fn parse(value: &str) -> Option<ColumnMappingMode> {
        match value.to_ascii_lowercase().as_str() {
            "none" => Some(ColumnMappingMode::None),
            "name" => Some(ColumnMappingMode::Name),
            "id" => Some(ColumnMappingMode::Id),
            _ => None,
        }
    }

    /// Whether columns are mapped (`name` or `id`): data files name columns by their
    /// physical names (and, for `id`, also match them by field id).
    pub fn is_mapped(self) -> bool {
        matches!(self, ColumnMappingMode::Name | ColumnMappingMode::Id)
    }

    /// The name of `field` in data files, partition values and statistics.
    pub fn physical_name<'a>(&self, field: &'a StructField) -> &'a str {
        match self {
            ColumnMappingMode::None => &field.name,
            ColumnMappingMode::Name | ColumnMappingMode::Id => {
                field.physical_name().unwrap_or(&field.name)
            }
        }
    }

    /// The schema with every (nested) field renamed to its physical name.
    pub fn physical_schema(&self, schema: &StructType) -> StructType {
        if *self == ColumnMappingMode::None {
            return schema.clone();
        }
        StructType::new(
            schema
                .fields
                .iter()
                .map(|f| self.physical_field(f))
                .collect(),
        )
    }

    fn physical_field(&self, f: &StructField) -> StructField {
        StructField {
            name: self.physical_name(f).to_string(),
            data_type: self.physical_type(&f.data_type),
            nullable: f.nullable,
            metadata: f.metadata.clone(),
        }
    }

    fn physical_type(&self, t: &DataType) -> DataType {
        match t {
            DataType::Primitive(_) | DataType::Geospatial(_) => t.clone(),
            DataType::Struct(s) => DataType::Struct(Box::new(self.physical_schema(s))),
            DataType::Array(a) => {
                let mut a = (**a).clone();
                a.element_type = self.physical_type(&a.element_type);
                DataType::Array(Box::new(a))
            }
            DataType::Map(m) => {
                let mut m = (**m).clone();
                m.key_type = self.physical_type(&m.key_type);
                m.value_type = self.physical_type(&m.value_type);
                DataType::Map(Box::new(m))
            }
        }
    }
}

/// Gives every field without one a column-mapping id (above `max_id`) and a physical name
/// (`col-<uuid>`), recursively; returns the new maximum id. Existing assignments are kept, so
/// physical names stay unique across the table's history.
pub fn assign_column_mapping(schema: &mut StructType, mut max_id: i64) -> i64 {
    fn visit(fields: &mut [StructField], max_id: &mut i64) {
        for f in fields.iter_mut() {
            if f.column_id().is_none() {
                *max_id += 1;
                f.metadata.insert(
                    crate::schema::COLUMN_MAPPING_ID.into(),
                    serde_json::Value::from(*max_id),
                );
            }
            if f.physical_name().is_none() {
                f.metadata.insert(
                    crate::schema::COLUMN_MAPPING_PHYSICAL_NAME.into(),
                    serde_json::Value::String(format!("col-{}", alluvium_storage::ids::new_uuid())),
                );
            }
            match &mut f.data_type {
                DataType::Struct(s) => visit(&mut s.fields, max_id),
                DataType::Array(a) => {
                    if let DataType::Struct(s) = &mut a.element_type {
                        visit(&mut s.fields, max_id);
                    }
                }
                DataType::Map(m) => {
                    if let DataType::Struct(s) = &mut m.value_type {
                        visit(&mut s.fields, max_id);
                    }
                }
                DataType::Primitive(_) | DataType::Geospatial(_) => {}
            }
        }
    }
    visit(&mut schema.fields, &mut max_id);
    max_id
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::PrimitiveType;

    #[test]
    fn assigns_ids_and_physical_names_once() {
        let mut s = StructType::new(vec![
            StructField::new("a", DataType::Primitive(PrimitiveType::Long), true),
            StructField::new(
                "s",
                DataType::Struct(Box::new(StructType::new(vec![StructField::new(
                    "x",
                    DataType::Primitive(PrimitiveType::Long),
                    true,
                )]))),
                true,
            ),
        ]);
        let max = assign_column_mapping(&mut s, 0);
        assert_eq!(max, 3);
        let before = s.clone();
        assert_eq!(assign_column_mapping(&mut s, max), 3);
        assert_eq!(s, before);
        assert!(s.fields[0].physical_name().unwrap().starts_with("col-"));
        let phys = ColumnMappingMode::Name.physical_schema(&s);
        assert_ne!(phys.fields[1].name, "s");
    }
}
