//! Events as `put` takes them, made into rows of the log table: columns checked and cast
//! to the store's types, a missing `op` filled with `UPSERT`, a missing `seq` left NULL
//! (the fold assigns one, SPEC.md §26.2), and `event_date` derived from `event_time`.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::TimestampMicrosecondType;
use arrow_array::{Array, ArrayRef, Date32Array, RecordBatch, StringArray, new_null_array};
use arrow_schema::{DataType, Field};

use super::StateError;
use super::layout::{EVENT_DATE, EVENT_TIME, Layout, OP, OP_DELETE, OP_UPSERT, SEQ};
use crate::Result;

/// Microseconds in a day.
const DAY_US: i64 = 86_400_000_000;

/// The UTC date (days since the epoch) of an event time in microseconds.
pub(crate) fn event_date(time_us: i64) -> i32 {
    // Dates before year -5 877 641 do not fit; such times are clamped (they sort first).
    i32::try_from(time_us.div_euclid(DAY_US)).unwrap_or(i32::MIN)
}

/// The column `name` of `batch` (case-insensitively), if any.
pub(crate) fn column<'a>(batch: &'a RecordBatch, name: &str) -> Option<&'a ArrayRef> {
    let i = batch
        .schema()
        .fields()
        .iter()
        .position(|f| f.name().eq_ignore_ascii_case(name))?;
    Some(batch.column(i))
}

/// `array` cast to `field`'s type; NULLs refused when the field is not nullable.
pub(crate) fn conform(
    operation: &'static str,
    array: &ArrayRef,
    field: &Field,
) -> Result<ArrayRef> {
    let out = if array.data_type() == field.data_type() {
        array.clone()
    } else {
        arrow_cast::cast(array, field.data_type()).map_err(|_| StateError::ColumnType {
            operation,
            column: field.name().clone(),
            expected: field.data_type().to_string(),
            found: array.data_type().to_string(),
        })?
    };
    // A cast that failed per value (a string that is no number) turns it into NULL:
    // refuse that rather than store a NULL the caller did not write.
    if out.null_count() > array.null_count() {
        return Err(StateError::ColumnType {
            operation,
            column: field.name().clone(),
            expected: field.data_type().to_string(),
            found: array.data_type().to_string(),
        });
    }
    if !field.is_nullable() && out.null_count() > 0 {
        let row = (0..out.len()).find(|i| out.is_null(*i)).unwrap_or(0);
        return Err(StateError::NullValue {
            operation,
            column: field.name().clone(),
            row,
        });
    }
    Ok(out)
}

/// The key columns of `batch`, conformed to the store's key types (no NULLs).
pub(crate) fn key_columns(
    operation: &'static str,
    layout: &Layout,
    batch: &RecordBatch,
) -> Result<Vec<ArrayRef>> {
    layout
        .key_fields
        .iter()
        .map(|f| {
            let c = column(batch, f.name()).ok_or_else(|| StateError::MissingColumn {
                operation,
                column: f.name().clone(),
            })?;
            conform(operation, c, f)
        })
        .collect()
}

/// `batch` of events as a batch of the log table.
pub(crate) fn log_batch(layout: &Layout, batch: &RecordBatch) -> Result<RecordBatch> {
    const PUT: &str = "put";
    let schema = batch.schema();
    // Columns are found by name: a second column of a name would be dropped unseen.
    alluvium::check_distinct_columns(&schema)?;
    for f in schema.fields() {
        let known = layout
            .log
            .fields()
            .iter()
            .any(|l| l.name().eq_ignore_ascii_case(f.name()) && l.name() != EVENT_DATE);
        if !known {
            return Err(StateError::UnknownColumn {
                operation: PUT,
                column: f.name().clone(),
            });
        }
    }
    let n = batch.num_rows();
    let mut columns: Vec<ArrayRef> = key_columns(PUT, layout, batch)?;
    for f in &layout.value_fields {
        columns.push(match column(batch, f.name()) {
            Some(c) => conform(PUT, c, f)?,
            None => new_null_array(f.data_type(), n),
        });
    }
    let time_field = layout.log.field_with_name(EVENT_TIME)?;
    let time = column(batch, EVENT_TIME).ok_or_else(|| StateError::MissingColumn {
        operation: PUT,
        column: EVENT_TIME.into(),
    })?;
    let time = conform(PUT, time, time_field)?;
    let seq = match column(batch, SEQ) {
        Some(c) => conform(PUT, c, &Field::new(SEQ, DataType::Int64, true))?,
        None => new_null_array(&DataType::Int64, n),
    };
    let op: ArrayRef = match column(batch, OP) {
        None => Arc::new(StringArray::from(vec![OP_UPSERT; n])),
        Some(c) => {
            let c = conform(PUT, c, &Field::new(OP, DataType::Utf8, true))?;
            let c = c.as_string::<i32>();
            let mut out = Vec::with_capacity(n);
            for row in 0..n {
                if c.is_null(row) {
                    out.push(OP_UPSERT);
                    continue;
                }
                let v = c.value(row);
                if v.eq_ignore_ascii_case(OP_UPSERT) {
                    out.push(OP_UPSERT);
                } else if v.eq_ignore_ascii_case(OP_DELETE) {
                    out.push(OP_DELETE);
                } else {
                    return Err(StateError::InvalidOp {
                        value: v.to_string(),
                        row,
                    });
                }
            }
            Arc::new(StringArray::from(out))
        }
    };
    let dates: Date32Array = time
        .as_primitive::<TimestampMicrosecondType>()
        .iter()
        .map(|t| t.map(event_date))
        .collect();
    columns.push(time);
    columns.push(seq);
    columns.push(op);
    columns.push(Arc::new(dates));
    Ok(RecordBatch::try_new(layout.log.clone(), columns)?)
}
