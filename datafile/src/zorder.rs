//! Z-order keys: one sort key per row that interleaves the bits of several columns, so that
//! rows close in every one of those columns end up close in the sort order, and files cut
//! from the sorted rows have narrow min/max ranges in each column.
//!
//! Each column is first mapped to its *dense rank* among the rows (via Arrow's row format,
//! so every type sorts as the column's own order: numbers, strings, dates, timestamps,
//! decimals; nulls first), and the rank is spread over 32 bits. Ranks rather than raw values
//! keep skewed or clustered columns from wasting the high bits. The bits of the columns are
//! then interleaved, most significant first, into a 128-bit key (32 bits per column for up
//! to four columns, fewer for more).

use arrow_array::{ArrayRef, UInt32Array};
use arrow_row::{RowConverter, SortField};

use crate::{DataFileError, Result};

/// Bits of rank kept per column.
fn bits_per_column(columns: usize) -> u32 {
    u32::try_from((128 / columns.max(1)).min(32)).unwrap_or(32)
}

/// The dense rank of every row of `column`, spread over the 32-bit range.
fn spread_ranks(column: &ArrayRef) -> Result<Vec<u32>> {
    let converter = RowConverter::new(vec![SortField::new(column.data_type().clone())])
        .map_err(|e| DataFileError::InvalidArgument(format!("cannot Z-order this column: {e}")))?;
    let rows = converter
        .convert_columns(std::slice::from_ref(column))
        .map_err(|e| DataFileError::InvalidArgument(format!("cannot Z-order this column: {e}")))?;
    let mut order: Vec<usize> = (0..rows.num_rows()).collect();
    order.sort_unstable_by(|a, b| rows.row(*a).cmp(&rows.row(*b)));
    let mut dense = vec![0u64; rows.num_rows()];
    let mut rank = 0u64;
    for (i, w) in order.iter().enumerate() {
        if i > 0 && rows.row(order[i - 1]) != rows.row(*w) {
            rank += 1;
        }
        dense[*w] = rank;
    }
    let distinct = rank + 1;
    // Spread ranks 0..distinct over 0..2^32 so that each column uses its high bits.
    Ok(dense
        .into_iter()
        .map(|r| u32::try_from((r << 32) / distinct).unwrap_or(u32::MAX))
        .collect())
}

/// Interleaves the top `bits` bits of each column's value, most significant first.
fn interleave(values: &[u32], bits: u32) -> u128 {
    let mut key: u128 = 0;
    for b in (0..bits).rev() {
        for v in values {
            key = (key << 1) | u128::from((v >> (32 - bits + b)) & 1);
        }
    }
    key
}

/// The Z-order key of every row of `columns` (all of the same length).
///
/// # Errors
/// [`DataFileError::InvalidArgument`] for a column type that has no order, or columns of
/// different lengths.
pub fn zorder_keys(columns: &[ArrayRef]) -> Result<Vec<u128>> {
    let rows = columns.first().map_or(0, |c| c.len());
    if columns.iter().any(|c| c.len() != rows) {
        return Err(DataFileError::InvalidArgument(
            "Z-order columns have different lengths".into(),
        ));
    }
    let ranks: Vec<Vec<u32>> = columns.iter().map(spread_ranks).collect::<Result<_>>()?;
    let bits = bits_per_column(columns.len());
    let mut row_values = vec![0u32; columns.len()];
    Ok((0..rows)
        .map(|i| {
            for (slot, r) in row_values.iter_mut().zip(&ranks) {
                *slot = r[i];
            }
            interleave(&row_values, bits)
        })
        .collect())
}

/// The permutation that sorts rows by their Z-order key (stable: equal keys keep their
/// input order).
///
/// # Errors
/// As [`zorder_keys`].
pub fn zorder_permutation(columns: &[ArrayRef]) -> Result<UInt32Array> {
    let keys = zorder_keys(columns)?;
    let mut order: Vec<u32> = (0..u32::try_from(keys.len()).unwrap_or(u32::MAX)).collect();
    order.sort_by_key(|i| keys[*i as usize]);
    Ok(UInt32Array::from(order))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{Int64Array, StringArray};

    use super::*;

    #[test]
    fn interleaving_alternates_bits_most_significant_first() {
        // Two columns, 2 bits each kept from 0b10.. and 0b01..: key bits a1 b1 a0 b0.
        let a = 0b10u32 << 30;
        let b = 0b01u32 << 30;
        assert_eq!(interleave(&[a, b], 2), 0b1001);
        assert_eq!(bits_per_column(1), 32);
        assert_eq!(bits_per_column(4), 32);
        assert_eq!(bits_per_column(5), 25);
    }

    #[test]
    fn ranks_follow_each_type_order_with_nulls_first() {
        let s: ArrayRef = Arc::new(StringArray::from(vec![
            Some("b"),
            None,
            Some("a"),
            Some("b"),
        ]));
        let r = spread_ranks(&s).unwrap();
        assert!(r[1] < r[2] && r[2] < r[0]);
        assert_eq!(r[0], r[3]);
        let n: ArrayRef = Arc::new(Int64Array::from(vec![-5, 100, 0]));
        let r = spread_ranks(&n).unwrap();
        assert!(r[0] < r[2] && r[2] < r[1]);
    }

    #[test]
    fn sorted_rows_cluster_in_both_columns() {
        // A 16 x 16 grid in scrambled order: after sorting by the key, each block of 16 rows
        // (a "file") spans at most 4 distinct values per column instead of 16.
        let mut a = Vec::new();
        let mut b = Vec::new();
        for i in 0..256i64 {
            let j = (i * 97) % 256;
            a.push(j / 16);
            b.push(j % 16);
        }
        let cols: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from(a.clone())),
            Arc::new(Int64Array::from(b.clone())),
        ];
        let perm = zorder_permutation(&cols).unwrap();
        for chunk in perm.values().chunks(16) {
            let span = |v: &[i64]| {
                let xs: Vec<i64> = chunk.iter().map(|i| v[*i as usize]).collect();
                xs.iter().max().unwrap() - xs.iter().min().unwrap()
            };
            assert!(span(&a) <= 3 && span(&b) <= 3, "{chunk:?}");
        }
    }
}
