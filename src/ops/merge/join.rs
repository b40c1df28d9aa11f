//! The MERGE join: the ON condition split into equality keys (`t.k = s.k`, hashed) and a
//! residual condition (evaluated on the candidate pairs, see `pairs`), and the in-memory
//! hash index of the source on its keys (arrow-row encodings), probed with each target
//! batch. An ON condition without keys gives an index without a map: every source row is a
//! candidate for every target row (the nested-loop join `pairs` runs in chunks).

use alluvium_expr::{CmpOp, Expr};
use alluvium_txlog::schema::{DataType, PrimitiveType};
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_cast::cast;
use arrow_row::{RowConverter, SortField};
use arrow_schema::DataType as ArrowType;
use hashbrown::HashMap;

use super::scope::{SOURCE, Scope, TARGET};
use crate::rows::input::same_type;
use crate::{Error, Result};

/// One equality key of the ON condition.
#[derive(Debug, Clone)]
pub(crate) struct KeyPair {
    /// Index of the target column in the target schema.
    pub target: usize,
    /// Index of the source column in the source schema.
    pub source: usize,
    /// The Arrow type both sides are hashed as.
    pub key_type: ArrowType,
}

/// The ON condition, analysed.
#[derive(Debug, Clone)]
pub(crate) struct OnCondition {
    pub keys: Vec<KeyPair>,
    /// The conjuncts that are not equality keys (qualified), AND-ed; `None` if none.
    pub residual: Option<Expr>,
}

fn conjuncts(e: &Expr, out: &mut Vec<Expr>) {
    match e {
        Expr::And(a, b) => {
            conjuncts(a, out);
            conjuncts(b, out);
        }
        other => out.push(other.clone()),
    }
}

fn integral(t: &DataType) -> bool {
    matches!(
        t,
        DataType::Primitive(
            PrimitiveType::Byte
                | PrimitiveType::Short
                | PrimitiveType::Integer
                | PrimitiveType::Long
        )
    )
}

fn numeric(t: &DataType) -> bool {
    integral(t)
        || matches!(
            t,
            DataType::Primitive(
                PrimitiveType::Float | PrimitiveType::Double | PrimitiveType::Decimal { .. }
            )
        )
}

/// Splits a qualified ON condition into keys and residual.
///
/// # Errors
/// [`Error::InvalidArgument`] when a key compares types that cannot be equal.
pub(crate) fn analyse_on(on: &Expr, scope: &Scope) -> Result<OnCondition> {
    let mut parts = Vec::new();
    conjuncts(on, &mut parts);
    let mut keys = Vec::new();
    let mut residual: Option<Expr> = None;
    for p in parts {
        let key = match &p {
            Expr::Cmp(a, CmpOp::Eq, b) => match (a.as_ref(), b.as_ref()) {
                (Expr::Column(x), Expr::Column(y)) => key_of(x, y, scope)?.or(key_of(y, x, scope)?),
                _ => None,
            },
            _ => None,
        };
        match key {
            Some(k) => keys.push(k),
            None => {
                residual = Some(match residual {
                    None => p,
                    Some(r) => r.and(p),
                })
            }
        }
    }
    Ok(OnCondition { keys, residual })
}

/// `t.col = s.col` with both top-level columns -> a key.
fn key_of(t: &[String], s: &[String], scope: &Scope) -> Result<Option<KeyPair>> {
    let ([tq, tc], [sq, sc]) = (t, s) else {
        return Ok(None);
    };
    if tq != TARGET || sq != SOURCE {
        return Ok(None);
    }
    let (Some(ti), Some(si)) = (scope.target.index_of(tc), scope.source.index_of(sc)) else {
        return Ok(None);
    };
    let (tt, st) = (
        &scope.target.fields[ti].data_type,
        &scope.source.fields[si].data_type,
    );
    let key_type = if same_type(tt, st) {
        scope.target_fields[ti].data_type().clone()
    } else if integral(tt) && integral(st) {
        ArrowType::Int64
    } else if numeric(tt) && numeric(st) {
        ArrowType::Float64
    } else {
        return Err(Error::InvalidArgument(format!(
            "ON t.{tc} = s.{sc} compares {tt} with {st}"
        )));
    };
    Ok(Some(KeyPair {
        target: ti,
        source: si,
        key_type,
    }))
}

/// The source rows by key: row indexes of every source row with that (non-NULL) key.
pub(crate) struct SourceIndex {
    converter: RowConverter,
    map: KeyMap,
    /// The source rows of one key as a chain: the map holds a key's first row, and
    /// `next[row]` the key's next row after `row` ([`END`] after the last), in row order.
    /// One vector for the whole source, where a list per key cost an allocation per
    /// distinct key to build and a free per key to drop (a quarter of a 100,000-row
    /// MERGE's time).
    next: Vec<u32>,
    /// Indexes of source rows with no NULL key (all rows when there are no keys).
    keyed_rows: Vec<u32>,
    keys: Vec<KeyPair>,
}

fn key_columns(
    batch: &RecordBatch,
    keys: &[KeyPair],
    side: fn(&KeyPair) -> usize,
) -> Result<Vec<ArrayRef>> {
    keys.iter()
        .map(|k| {
            let c = batch.column(side(k));
            Ok(if c.data_type() == &k.key_type {
                c.clone()
            } else {
                cast(c, &k.key_type)?
            })
        })
        .collect()
}

/// The end of a chain of source rows ([`SourceIndex`]'s `next`).
const END: u32 = u32::MAX;

/// The first source row of each key. One 64-bit integer key (the common `t.id = s.id`) is
/// hashed as the integer itself; any other key list by its arrow-row encoding.
enum KeyMap {
    Int(HashMap<i64, u32>, KeyFilter),
    Rows(HashMap<Box<[u8]>, u32>),
    /// No keys: nothing to hash (an empty key list has no row encoding to look up).
    NoKeys,
}

/// A bit per hash slot of the source's integer keys, sized at about 16 slots per key so
/// that most target keys that are not in the source (the usual case: a few thousand source
/// keys against millions of target rows) are told apart by one bit, from a table small
/// enough to stay in cache, before any hash map lookup. No false negatives.
struct KeyFilter {
    bits: Vec<u64>,
    shift: u32,
}

impl KeyFilter {
    fn new<'a>(keys: impl ExactSizeIterator<Item = &'a i64>) -> KeyFilter {
        // 2^log2 slots, 64 at least, 2^24 (2 MiB) at most.
        let log2 = (keys.len().max(1) * 16)
            .next_power_of_two()
            .trailing_zeros()
            .clamp(6, 24);
        let mut f = KeyFilter {
            bits: vec![0; 1 << (log2 - 6)],
            shift: 64 - log2,
        };
        for k in keys {
            let slot = f.slot(*k);
            f.bits[slot >> 6] |= 1 << (slot & 63);
        }
        f
    }

    fn slot(&self, key: i64) -> usize {
        // Fibonacci hashing: the top bits of key times 2^64 / golden ratio.
        ((key as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    fn may_hold(&self, key: i64) -> bool {
        let slot = self.slot(key);
        self.bits
            .get(slot >> 6)
            .is_some_and(|w| w & (1 << (slot & 63)) != 0)
    }
}

impl KeyMap {
    fn len(&self) -> usize {
        match self {
            KeyMap::Int(m, _) => m.len(),
            KeyMap::Rows(m) => m.len(),
            KeyMap::NoKeys => 0,
        }
    }

    fn first_rows(&self) -> Box<dyn Iterator<Item = u32> + '_> {
        match self {
            KeyMap::Int(m, _) => Box::new(m.values().copied()),
            KeyMap::Rows(m) => Box::new(m.values().copied()),
            KeyMap::NoKeys => Box::new(std::iter::empty()),
        }
    }
}

/// Records source row `row` under `key` while rows are visited last to first: `row`
/// becomes the key's first row, ahead of the one seen before (a later row).
fn chain_in<K: std::hash::Hash + Eq>(
    map: &mut HashMap<K, u32>,
    next: &mut [u32],
    key: K,
    row: u32,
) {
    let later = map.insert(key, row).unwrap_or(END);
    if let Some(n) = next.get_mut(row as usize) {
        *n = later;
    }
}

/// The single Int64 key column of `cols`, if that is what the key list is.
fn single_int(cols: &[ArrayRef]) -> Option<&arrow_array::Int64Array> {
    match cols {
        [c] => c.as_any().downcast_ref::<arrow_array::Int64Array>(),
        _ => None,
    }
}

fn null_free(cols: &[ArrayRef], row: usize) -> bool {
    cols.iter().all(|c| c.is_valid(row))
}

impl SourceIndex {
    /// Hashes `source` on `keys`. With no keys every source row pairs with every target
    /// row (a nested-loop join, for ON conditions without equalities): nothing is hashed
    /// and every source row is keyed.
    pub(crate) fn build(source: &RecordBatch, keys: &[KeyPair]) -> Result<SourceIndex> {
        let converter = RowConverter::new(
            keys.iter()
                .map(|k| SortField::new(k.key_type.clone()))
                .collect(),
        )?;
        let cols = key_columns(source, keys, |k| k.source)?;
        let mut keyed_rows = Vec::new();
        let row_index = |i: usize| {
            u32::try_from(i).map_err(|_| {
                Error::InvalidArgument("a MERGE source holds fewer than 2^32 rows".into())
            })
        };
        let n = source.num_rows();
        // Row indexes are u32 and END is not one.
        if n > END as usize {
            return Err(Error::InvalidArgument(
                "a MERGE source holds fewer than 2^32 rows".into(),
            ));
        }
        // Rows are chained last to first, so each key's chain runs in row order.
        let mut next = vec![END; if keys.is_empty() { 0 } else { n }];
        let map = if keys.is_empty() {
            for i in 0..n {
                keyed_rows.push(row_index(i)?);
            }
            KeyMap::NoKeys
        } else if let Some(ints) = single_int(&cols) {
            let mut map: HashMap<i64, u32> = HashMap::with_capacity(n);
            for i in (0..n).rev() {
                if ints.is_null(i) {
                    continue;
                }
                let idx = row_index(i)?;
                keyed_rows.push(idx);
                chain_in(&mut map, &mut next, ints.value(i), idx);
            }
            let filter = KeyFilter::new(map.keys());
            KeyMap::Int(map, filter)
        } else {
            let rows = converter.convert_columns(&cols)?;
            let mut map: HashMap<Box<[u8]>, u32> = HashMap::with_capacity(n);
            for i in (0..n).rev() {
                if !null_free(&cols, i) {
                    continue;
                }
                let idx = row_index(i)?;
                keyed_rows.push(idx);
                chain_in(&mut map, &mut next, Box::from(rows.row(i).as_ref()), idx);
            }
            KeyMap::Rows(map)
        };
        if !keys.is_empty() {
            keyed_rows.reverse();
        }
        Ok(SourceIndex {
            converter,
            map,
            next,
            keyed_rows,
            keys: keys.to_vec(),
        })
    }

    /// Whether the ON condition had equality keys (else the join is a nested loop).
    pub(crate) fn has_keys(&self) -> bool {
        !self.keys.is_empty()
    }

    /// Number of distinct keys.
    pub(crate) fn distinct_keys(&self) -> usize {
        self.map.len()
    }

    /// One source row of each distinct key.
    pub(crate) fn representatives(&self) -> impl Iterator<Item = u32> + '_ {
        self.map.first_rows()
    }

    /// Source rows whose keys are all non-NULL.
    pub(crate) fn keyed_rows(&self) -> &[u32] {
        &self.keyed_rows
    }

    /// The candidate pairs (target row, source row) of `target` with equal keys. An index
    /// without keys has none here: its candidates are the cross product, which `pairs`
    /// walks in chunks instead of listing.
    pub(crate) fn probe(&self, target: &RecordBatch) -> Result<(Vec<u32>, Vec<u32>)> {
        let (mut t_rows, mut s_rows) = (Vec::new(), Vec::new());
        let cols = key_columns(target, &self.keys, |k| k.target)?;
        let next = &self.next;
        let mut pair = |i: usize, first: u32| {
            let mut j = first;
            while j != END {
                t_rows.push(i as u32);
                s_rows.push(j);
                j = next.get(j as usize).copied().unwrap_or(END);
            }
        };
        match &self.map {
            KeyMap::Int(map, filter) => {
                let Some(ints) = single_int(&cols) else {
                    return Err(Error::InvalidArgument(
                        "a MERGE target key column is not a 64-bit integer".into(),
                    ));
                };
                let lookup = |v: i64| filter.may_hold(v).then(|| map.get(&v)).flatten();
                if ints.null_count() == 0 {
                    for (i, v) in ints.values().iter().enumerate() {
                        if let Some(&first) = lookup(*v) {
                            pair(i, first);
                        }
                    }
                } else {
                    for (i, v) in ints.iter().enumerate() {
                        if let Some(&first) = v.and_then(lookup) {
                            pair(i, first);
                        }
                    }
                }
            }
            KeyMap::NoKeys => {}
            KeyMap::Rows(map) => {
                let rows = self.converter.convert_columns(&cols)?;
                for i in 0..target.num_rows() {
                    if !null_free(&cols, i) {
                        continue;
                    }
                    if let Some(&first) = map.get(rows.row(i).as_ref()) {
                        pair(i, first);
                    }
                }
            }
        }
        Ok((t_rows, s_rows))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{Int32Array, Int64Array, StringArray};
    use arrow_schema::{Field, Schema};

    use super::*;

    fn one_column(name: &str, col: ArrayRef) -> RecordBatch {
        RecordBatch::try_new(
            Arc::new(Schema::new(vec![Field::new(
                name,
                col.data_type().clone(),
                true,
            )])),
            vec![col],
        )
        .unwrap()
    }

    fn key(key_type: ArrowType) -> Vec<KeyPair> {
        vec![KeyPair {
            target: 0,
            source: 0,
            key_type,
        }]
    }

    #[test]
    fn an_integer_key_pairs_equal_values_and_never_nulls() {
        // Int32 keys are compared as Int64 (the integer-keyed map).
        let source = one_column(
            "k",
            Arc::new(Int32Array::from(vec![Some(1), Some(2), None, Some(2)])),
        );
        let index = SourceIndex::build(&source, &key(ArrowType::Int64)).unwrap();
        assert!(matches!(index.map, KeyMap::Int(..)));
        assert_eq!(index.distinct_keys(), 2);
        assert_eq!(index.keyed_rows(), &[0, 1, 3]);
        let target = one_column(
            "k",
            Arc::new(Int64Array::from(vec![Some(2), None, Some(3), Some(1)])),
        );
        let (t, s) = index.probe(&target).unwrap();
        let mut pairs: Vec<(u32, u32)> = t.into_iter().zip(s).collect();
        pairs.sort_unstable();
        assert_eq!(pairs, vec![(0, 1), (0, 3), (3, 0)]);
        // Without nulls in the target, the same pairs.
        let target = one_column("k", Arc::new(Int64Array::from(vec![2, 5, 1])));
        let (t, s) = index.probe(&target).unwrap();
        let mut pairs: Vec<(u32, u32)> = t.into_iter().zip(s).collect();
        pairs.sort_unstable();
        assert_eq!(pairs, vec![(0, 1), (0, 3), (2, 0)]);
    }

    #[test]
    fn the_key_filter_never_rejects_a_source_key() {
        let keys: Vec<i64> = (0..5000)
            .map(|i| i * 7919 - 1_000_000)
            .chain([i64::MIN, i64::MAX, 0, -1])
            .collect();
        let f = KeyFilter::new(keys.iter());
        assert!(keys.iter().all(|k| f.may_hold(*k)));
        // Most other keys are rejected (about 1 in 16 slots is set).
        let passed = (0..100_000i64).filter(|k| f.may_hold(k * 13 + 5)).count();
        assert!(passed < 20_000, "{passed}");
        let empty = KeyFilter::new([].iter());
        assert!(!empty.may_hold(3));
    }

    #[test]
    fn an_index_without_keys_keys_every_source_row_and_hashes_nothing() {
        // The nested-loop join's index: no row encoding is built or looked up (an empty
        // key list once panicked inside the row encoder).
        let source = one_column(
            "k",
            Arc::new(Int64Array::from(vec![Some(1), None, Some(3)])),
        );
        let index = SourceIndex::build(&source, &[]).unwrap();
        assert!(!index.has_keys());
        assert_eq!(index.keyed_rows(), &[0, 1, 2]);
        assert_eq!(index.distinct_keys(), 0);
        assert_eq!(index.representatives().count(), 0);
        let target = one_column("k", Arc::new(Int64Array::from(vec![1, 2])));
        assert_eq!(index.probe(&target).unwrap(), (vec![], vec![]));
    }

    #[test]
    fn other_keys_pair_through_their_row_encoding() {
        let source = one_column(
            "k",
            Arc::new(StringArray::from(vec![
                Some("a"),
                None,
                Some("b"),
                Some("a"),
                Some("b"),
                Some("a"),
            ])),
        );
        let index = SourceIndex::build(&source, &key(ArrowType::Utf8)).unwrap();
        assert!(matches!(index.map, KeyMap::Rows(_)));
        assert_eq!(index.keyed_rows(), &[0, 2, 3, 4, 5]);
        assert_eq!(index.distinct_keys(), 2);
        let mut firsts: Vec<u32> = index.representatives().collect();
        firsts.sort_unstable();
        assert_eq!(firsts, [0, 2]);
        let target = one_column(
            "k",
            Arc::new(StringArray::from(vec![
                None,
                Some("b"),
                Some("c"),
                Some("a"),
            ])),
        );
        // A key's source rows pair in row order.
        let (t, s) = index.probe(&target).unwrap();
        assert_eq!((t, s), (vec![1, 1, 3, 3, 3], vec![2, 4, 0, 3, 5]));
    }
}
