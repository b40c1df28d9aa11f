//! Column mapping (PROTOCOL.md "Column Mapping"): logical column names versus the physical
//! names and ids used in data files, partition values and statistics.

use crate::actions::{Metadata, Protocol};
use crate::features::supports_reader_feature;
use crate::schema::{DataType, StructField, StructType};

/// Table property selecting the mode.
pub const COLUMN_MAPPING_MODE: &str = "delta.columnMapping.mode";

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
        if !supports_reader_feature(protocol, "columnMapping")
            && !crate::features::supports_writer_feature(protocol, "columnMapping")
        {
            return ColumnMappingMode::None;
        }
        match metadata
            .configuration
            .get(COLUMN_MAPPING_MODE)
            .map(|s| s.to_ascii_lowercase())
            .as_deref()
        {
            Some("name") => ColumnMappingMode::Name,
            Some("id") => ColumnMappingMode::Id,
            _ => ColumnMappingMode::None,
        }
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
            DataType::Primitive(_) => t.clone(),
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
