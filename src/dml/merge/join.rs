//! The MERGE join: the ON condition split into equality keys (`t.k = s.k`, hashed) and a
//! residual condition (evaluated on the candidate pairs), and the in-memory hash index of
//! the source on its keys (arrow-row encodings), probed with each target batch.

use std::collections::HashMap;

use alluvium_txlog::expr::{CmpOp, Expr};
use alluvium_txlog::schema::{DataType, PrimitiveType};
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_cast::cast;
use arrow_row::{RowConverter, SortField};
use arrow_schema::DataType as ArrowType;

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
    map: HashMap<Box<[u8]>, Vec<u32>>,
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
        let rows = converter.convert_columns(&cols)?;
        let mut map: HashMap<Box<[u8]>, Vec<u32>> = HashMap::new();
        let mut keyed_rows = Vec::new();
        for i in 0..source.num_rows() {
            if !null_free(&cols, i) {
                continue;
            }
            let idx = u32::try_from(i).map_err(|_| {
                Error::InvalidArgument("a MERGE source holds at most 2^32 rows".into())
            })?;
            keyed_rows.push(idx);
            map.entry(Box::from(rows.row(i).as_ref()))
                .or_default()
                .push(idx);
        }
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
        self.map.values().filter_map(|v| v.first().copied())
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
        let rows = self.converter.convert_columns(&cols)?;
        for i in 0..target.num_rows() {
            if !null_free(&cols, i) {
                continue;
            }
            if let Some(list) = self.map.get(rows.row(i).as_ref()) {
                for &j in list {
                    t_rows.push(i as u32);
                    s_rows.push(j);
                }
            }
        }
        Ok((t_rows, s_rows))
    }
}
