//! The MERGE join: the ON condition split into equality keys (`t.k = s.k`, hashed) and a
//! residual condition (evaluated on the candidate pairs), and the in-memory hash index of
//! the source on its keys (arrow-row encodings), probed with each target batch.

use alluvium_txlog::expr::{CmpOp, Expr};
use alluvium_txlog::schema::{DataType, PrimitiveType};
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_cast::cast;
use arrow_row::{RowConverter, SortField};
use arrow_schema::DataType as ArrowType;
use hashbrown::HashMap;

use super::scope::{SOURCE, Scope, TARGET};
use crate::write::input::same_type;
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

/// Source rows by key. One 64-bit integer key (the common `t.id = s.id`) is hashed as
/// the integer itself; any other key list by its arrow-row encoding.
enum KeyMap {
    Int(HashMap<i64, Vec<u32>>),
    Rows(HashMap<Box<[u8]>, Vec<u32>>),
}

impl KeyMap {
    fn len(&self) -> usize {
        match self {
            KeyMap::Int(m) => m.len(),
            KeyMap::Rows(m) => m.len(),
        }
    }

    fn lists(&self) -> Box<dyn Iterator<Item = &Vec<u32>> + '_> {
        match self {
            KeyMap::Int(m) => Box::new(m.values()),
            KeyMap::Rows(m) => Box::new(m.values()),
        }
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
    /// row (a nested-loop join, for ON conditions without equalities).
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
                Error::InvalidArgument("a MERGE source holds at most 2^32 rows".into())
            })
        };
        let map = if let Some(ints) = single_int(&cols) {
            let mut map: HashMap<i64, Vec<u32>> = HashMap::new();
            for i in 0..source.num_rows() {
                if ints.is_null(i) {
                    continue;
                }
                let idx = row_index(i)?;
                keyed_rows.push(idx);
                map.entry(ints.value(i)).or_default().push(idx);
            }
            KeyMap::Int(map)
        } else {
            let rows = converter.convert_columns(&cols)?;
            let mut map: HashMap<Box<[u8]>, Vec<u32>> = HashMap::new();
            for i in 0..source.num_rows() {
                if !null_free(&cols, i) {
                    continue;
                }
                let idx = row_index(i)?;
                keyed_rows.push(idx);
                map.entry(Box::from(rows.row(i).as_ref()))
                    .or_default()
                    .push(idx);
            }
            KeyMap::Rows(map)
        };
        Ok(SourceIndex {
            converter,
            map,
            keyed_rows,
            keys: keys.to_vec(),
        })
    }

    /// Number of distinct keys.
    pub(crate) fn distinct_keys(&self) -> usize {
        self.map.len()
    }

    /// One source row of each distinct key.
    pub(crate) fn representatives(&self) -> impl Iterator<Item = u32> + '_ {
        self.map.lists().filter_map(|v| v.first().copied())
    }

    /// Source rows whose keys are all non-NULL.
    pub(crate) fn keyed_rows(&self) -> &[u32] {
        &self.keyed_rows
    }

    /// The candidate pairs (target row, source row) of `target` with equal keys.
    pub(crate) fn probe(&self, target: &RecordBatch) -> Result<(Vec<u32>, Vec<u32>)> {
        let (mut t_rows, mut s_rows) = (Vec::new(), Vec::new());
        if self.keys.is_empty() {
            for i in 0..target.num_rows() as u32 {
                for &j in &self.keyed_rows {
                    t_rows.push(i);
                    s_rows.push(j);
                }
            }
            return Ok((t_rows, s_rows));
        }
        let cols = key_columns(target, &self.keys, |k| k.target)?;
        let mut pair = |i: usize, list: &Vec<u32>| {
            for &j in list {
                t_rows.push(i as u32);
                s_rows.push(j);
            }
        };
        match &self.map {
            KeyMap::Int(map) => {
                let Some(ints) = single_int(&cols) else {
                    return Err(Error::InvalidArgument(
                        "a MERGE target key column is not a 64-bit integer".into(),
                    ));
                };
                if ints.null_count() == 0 {
                    for (i, v) in ints.values().iter().enumerate() {
                        if let Some(list) = map.get(v) {
                            pair(i, list);
                        }
                    }
                } else {
                    for (i, v) in ints.iter().enumerate() {
                        if let Some(list) = v.and_then(|v| map.get(&v)) {
                            pair(i, list);
                        }
                    }
                }
            }
            KeyMap::Rows(map) => {
                let rows = self.converter.convert_columns(&cols)?;
                for i in 0..target.num_rows() {
                    if !null_free(&cols, i) {
                        continue;
                    }
                    if let Some(list) = map.get(rows.row(i).as_ref()) {
                        pair(i, list);
                    }
                }
            }
        }
        Ok((t_rows, s_rows))
    }
}
