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

/// The first sixteen bytes of a row as two big-endian integers, zero-padded: rows that
/// differ there order as these pairs do. Two `u64`s rather than a `u128`, whose 16-byte
/// alignment would make each sort entry 32 bytes instead of 24.
fn row_prefix(bytes: &[u8]) -> [u64; 2] {
    let mut head = [0u8; 16];
    let n = bytes.len().min(16);
    if let (Some(to), Some(from)) = (head.get_mut(..n), bytes.get(..n)) {
        to.copy_from_slice(from);
    }
    let v = u128::from_be_bytes(head);
    [(v >> 64) as u64, v as u64]
}

/// The dense rank of every row of `column`, spread over the 32-bit range.
fn spread_ranks(column: &ArrayRef) -> Result<Vec<u32>> {
    let converter = RowConverter::new(vec![SortField::new(column.data_type().clone())])
        .map_err(|e| DataFileError::InvalidArgument(format!("cannot Z-order this column: {e}")))?;
    let rows = converter
        .convert_columns(std::slice::from_ref(column))
        .map_err(|e| DataFileError::InvalidArgument(format!("cannot Z-order this column: {e}")))?;
    // Sorted by the rows' first sixteen bytes as an integer, held beside each index, and by
    // the rows themselves only on a tie: a row orders as its bytes do, and so does that
    // zero-padded prefix. Comparing rows (a `memcmp` each) for every step of a
    // million-row sort was most of a Z-order's time; an integer or timestamp column's rows
    // (nine bytes) never tie on the prefix unless equal.
    let mut order: Vec<([u64; 2], usize)> = (0..rows.num_rows())
        .map(|i| (row_prefix(rows.row(i).as_ref()), i))
        .collect();
    order.sort_unstable_by(|a, b| {
        a.0.cmp(&b.0)
            .then_with(|| rows.row(a.1).cmp(&rows.row(b.1)))
    });
    let mut dense = vec![0u64; rows.num_rows()];
    let mut rank = 0u64;
    for (i, &(head, w)) in order.iter().enumerate() {
        if i > 0 {
            let (prev_head, prev) = order[i - 1];
            if prev_head != head || rows.row(prev) != rows.row(w) {
                rank += 1;
            }
        }
        dense[w] = rank;
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
    use arrow_schema::DataType;

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

    /// Dense ranks through the prefix sort are those of a plain sort of the rows: strings
    /// sharing prefixes, of every length around sixteen bytes, duplicates and nulls.
    #[test]
    fn ranks_are_those_of_a_plain_sort_of_the_rows() {
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let values: Vec<Option<String>> = (0..4_000)
            .map(|_| {
                (next() % 25 != 0).then(|| {
                    // A run of `a`s (so that many rows share their first sixteen row
                    // bytes), then a short random tail.
                    let run = (next() % 24) as usize;
                    let tail = (next() % 3) as usize;
                    let mut v: String = "a".repeat(run);
                    v.extend((0..tail).map(|_| ['a', 'b', '\0'][next() as usize % 3]));
                    v
                })
            })
            .collect();
        let column: ArrayRef = Arc::new(StringArray::from(values));
        let ranks = spread_ranks(&column).unwrap();
        let converter = RowConverter::new(vec![SortField::new(DataType::Utf8)]).unwrap();
        let rows = converter
            .convert_columns(std::slice::from_ref(&column))
            .unwrap();
        for i in 0..rows.num_rows() {
            for j in (i + 1..rows.num_rows()).step_by(7) {
                assert_eq!(
                    ranks[i].cmp(&ranks[j]),
                    rows.row(i).cmp(&rows.row(j)),
                    "rows {i} and {j}"
                );
            }
        }
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
