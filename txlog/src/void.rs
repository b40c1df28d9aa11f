//! Void (`NullType`) columns on write (PROTOCOL.md "Void Type"): writers omit `void`
//! columns from data files (readers rebuild them as all-null columns), and refuse to write
//! new data files when the schema has a shape whose data could not be rebuilt that way.

use crate::schema::{DataType, PrimitiveType, StructField, StructType};
use crate::{LogError, Result};

/// Whether `t` is the `void` type.
pub fn is_void(t: &DataType) -> bool {
    matches!(t, DataType::Primitive(PrimitiveType::Void))
}

fn unwritable(column: &str, reason: &str) -> LogError {
    LogError::UnwritableSchema {
        column: column.to_string(),
        reason: reason.to_string(),
    }
}

/// Checks the void rules for writing new data files with `schema`: no `void` inside an
/// array or map at any depth, no struct whose fields are all `void`, not every column
/// `void` (PROTOCOL.md "Void Type").
///
/// # Errors
/// [`LogError::UnwritableSchema`] naming the first offending column.
pub fn check_writable(schema: &StructType) -> Result<()> {
    if !schema.fields.is_empty() && schema.fields.iter().all(|f| is_void(&f.data_type)) {
        return Err(unwritable(
            &schema.fields[0].name,
            "every column of the table is void: a data file would hold no column",
        ));
    }
    for f in &schema.fields {
        check_field(f, &f.name, false)?;
    }
    Ok(())
}

fn check_field(f: &StructField, path: &str, in_collection: bool) -> Result<()> {
    check_type(&f.data_type, path, in_collection)
}

fn check_type(t: &DataType, path: &str, in_collection: bool) -> Result<()> {
    match t {
        DataType::Primitive(PrimitiveType::Void) if in_collection => Err(unwritable(
            path,
            "a void type inside an array or map cannot be omitted from data files",
        )),
        DataType::Struct(s) => {
            if !s.fields.is_empty() && s.fields.iter().all(|f| is_void(&f.data_type)) {
                return Err(unwritable(
                    path,
                    "every field of this struct is void: it could not be written",
                ));
            }
            for f in &s.fields {
                check_field(f, &format!("{path}.{}", f.name), in_collection)?;
            }
            Ok(())
        }
        DataType::Array(a) => check_type(&a.element_type, &format!("{path}.element"), true),
        DataType::Map(m) => {
            check_type(&m.key_type, &format!("{path}.key"), true)?;
            check_type(&m.value_type, &format!("{path}.value"), true)
        }
        _ => Ok(()),
    }
}

/// `schema` without its `void` fields, nested struct fields included: the layout data files
/// store.
pub fn without_void(schema: &StructType) -> StructType {
    StructType::new(strip_fields(&schema.fields))
}

fn strip_fields(fields: &[StructField]) -> Vec<StructField> {
    fields
        .iter()
        .filter(|f| !is_void(&f.data_type))
        .map(|f| {
            let mut f = f.clone();
            f.data_type = strip_type(&f.data_type);
            f
        })
        .collect()
}

fn strip_type(t: &DataType) -> DataType {
    match t {
        DataType::Struct(s) => DataType::Struct(Box::new(StructType::new(strip_fields(&s.fields)))),
        other => other.clone(),
    }
}

/// Whether `t` nests a `void` field inside a struct (data files then store the struct
/// without it).
pub fn has_nested_void(t: &DataType) -> bool {
    match t {
        DataType::Struct(s) => s
            .fields
            .iter()
            .any(|f| is_void(&f.data_type) || has_nested_void(&f.data_type)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema(json: &str) -> StructType {
        StructType::from_json(json).unwrap()
    }

    #[test]
    fn void_shapes_that_cannot_be_written_are_refused() {
        let ok = schema(
            r#"{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},{"name":"v","type":"void","nullable":true,"metadata":{}},{"name":"s","type":{"type":"struct","fields":[{"name":"a","type":"long","nullable":true,"metadata":{}},{"name":"n","type":"void","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}}]}"#,
        );
        check_writable(&ok).unwrap();
        let stripped = without_void(&ok);
        assert_eq!(stripped.fields.len(), 2);
        assert!(has_nested_void(&ok.fields[2].data_type));
        let all = schema(
            r#"{"type":"struct","fields":[{"name":"v","type":"void","nullable":true,"metadata":{}}]}"#,
        );
        assert!(
            matches!(check_writable(&all), Err(LogError::UnwritableSchema { column, .. }) if column == "v")
        );
        let in_array = schema(
            r#"{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},{"name":"a","type":{"type":"array","elementType":"void","containsNull":true},"nullable":true,"metadata":{}}]}"#,
        );
        assert!(
            matches!(check_writable(&in_array), Err(LogError::UnwritableSchema { column, .. }) if column == "a.element")
        );
        let all_void_struct = schema(
            r#"{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},{"name":"s","type":{"type":"struct","fields":[{"name":"n","type":"void","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}}]}"#,
        );
        assert!(
            matches!(check_writable(&all_void_struct), Err(LogError::UnwritableSchema { column, .. }) if column == "s")
        );
    }
}
