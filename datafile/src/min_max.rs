//! The smallest and largest value of a primitive column without nulls, and whether it
//! holds NaN, in one pass over its values.
//!
//! The statistics of a written file need all three for every float column and the first
//! two for every other number, date and timestamp column. Asked of `arrow_arith` they are
//! three passes (a NaN scan, `aggregate::min`, `aggregate::max`), each reading the whole
//! values buffer, and a batch of a big write is read from memory, not from cache: on the
//! test VM the three passes took 3.4 ms for a million doubles, this one pass 2.5 ms (and a
//! million longs 1.8 ms against 1.0 ms).
//!
//! The order is that of `arrow_arith::aggregate`: Arrow's total order
//! (`ArrowNativeTypeOp::is_lt`), under which `-0.0` is below `0.0`; NaN never reaches it,
//! since a column with NaN gets no bounds at all. Values are folded in [`LANES`] independent
//! lanes so that each comparison depends only on its own lane's previous one.

use arrow_array::ArrowNativeTypeOp;

/// Independent running bounds kept while folding.
const LANES: usize = 8;

/// What one pass over a column's values found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Fold<N> {
    /// No value.
    Empty,
    /// A value is NaN.
    Nan,
    /// The smallest and the largest value.
    Bounds(N, N),
}

/// Folds `values` (every one of them valid: the caller handles nulls) into their bounds,
/// or reports a value for which `is_nan` holds.
pub(crate) fn min_max<N, F>(values: &[N], is_nan: F) -> Fold<N>
where
    N: ArrowNativeTypeOp,
    F: Fn(N) -> bool + Copy,
{
    let pick = |take: bool, a: N, b: N| if take { a } else { b };
    let Some(&first) = values.first() else {
        return Fold::Empty;
    };
    let mut lo = [first; LANES];
    let mut hi = [first; LANES];
    let mut nan = [false; LANES];
    let chunks = values.chunks_exact(LANES);
    let rest = chunks.remainder();
    for chunk in chunks {
        for (((v, l), h), n) in chunk
            .iter()
            .zip(lo.iter_mut())
            .zip(hi.iter_mut())
            .zip(nan.iter_mut())
        {
            *n |= is_nan(*v);
            *l = pick(v.is_lt(*l), *v, *l);
            *h = pick(v.is_gt(*h), *v, *h);
        }
    }
    let mut any_nan = nan.iter().any(|n| *n);
    let (mut l, mut h) = (first, first);
    for (&a, &b) in lo.iter().zip(&hi) {
        l = pick(a.is_lt(l), a, l);
        h = pick(b.is_gt(h), b, h);
    }
    for &v in rest {
        any_nan |= is_nan(v);
        l = pick(v.is_lt(l), v, l);
        h = pick(v.is_gt(h), v, h);
    }
    if any_nan {
        Fold::Nan
    } else {
        Fold::Bounds(l, h)
    }
}

#[cfg(test)]
mod tests {
    use arrow_arith::aggregate;
    use arrow_array::types::{Float32Type, Float64Type, Int32Type, Int64Type};
    use arrow_array::{ArrowPrimitiveType, PrimitiveArray};

    use super::*;

    /// What the three `arrow_arith` passes give for `values`.
    fn reference<T: arrow_array::ArrowNumericType>(
        values: &[T::Native],
        is_nan: fn(T::Native) -> bool,
    ) -> Fold<T::Native> {
        if values.iter().any(|v| is_nan(*v)) {
            return Fold::Nan;
        }
        let a = PrimitiveArray::<T>::from_iter_values(values.iter().copied());
        match (aggregate::min(&a), aggregate::max(&a)) {
            (Some(lo), Some(hi)) => Fold::Bounds(lo, hi),
            _ => Fold::Empty,
        }
    }

    /// A deterministic stream of numbers (xorshift), so failures reproduce.
    fn stream(seed: u64) -> impl FnMut() -> u64 {
        let mut x = seed | 1;
        move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        }
    }

    fn check<T: arrow_array::ArrowNumericType>(values: &[T::Native], is_nan: fn(T::Native) -> bool)
    where
        T::Native: PartialEq + std::fmt::Debug,
    {
        let got = min_max(values, is_nan);
        let want = reference::<T>(values, is_nan);
        // Compare bit for bit where floats are concerned (-0.0 against 0.0).
        let same = match (got, want) {
            (Fold::Bounds(a, b), Fold::Bounds(c, d)) => {
                format!("{a:?}{b:?}") == format!("{c:?}{d:?}") && a == c && b == d
            }
            (g, w) => std::mem::discriminant(&g) == std::mem::discriminant(&w),
        };
        assert!(same, "{values:?}: {got:?}, arrow {want:?}");
    }

    fn lengths() -> impl Iterator<Item = usize> {
        (0..=3 * LANES + 1).chain([100, 1_000, 4_099])
    }

    #[test]
    fn integers_fold_as_arrow_aggregates_them() {
        let mut next = stream(7);
        for len in lengths() {
            for spread in [u64::MAX, 15] {
                let longs: Vec<i64> = (0..len)
                    .map(|_| (next() % spread.max(1)) as i64 - 7)
                    .collect();
                check::<Int64Type>(&longs, |_| false);
                let ints: Vec<i32> = longs.iter().map(|v| *v as i32).collect();
                check::<Int32Type>(&ints, |_| false);
            }
        }
        check::<Int64Type>(&[i64::MAX, i64::MIN, 0], |_| false);
        check::<Int64Type>(&[i64::MIN; 17], |_| false);
    }

    #[test]
    fn floats_fold_as_arrow_aggregates_them_and_nan_anywhere_is_found() {
        let specials = [
            0.0,
            -0.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MIN_POSITIVE,
            -1e-310,
        ];
        let mut next = stream(11);
        for len in lengths() {
            let mut doubles: Vec<f64> = (0..len)
                .map(|_| {
                    let r = next();
                    match r % 4 {
                        0 => specials[(r >> 8) as usize % specials.len()],
                        _ => ((r >> 11) as f64 / (1u64 << 40) as f64) - 4096.0,
                    }
                })
                .collect();
            check::<Float64Type>(&doubles, f64::is_nan);
            let floats: Vec<f32> = doubles.iter().map(|v| *v as f32).collect();
            check::<Float32Type>(&floats, f32::is_nan);
            // A NaN in a lane, in the remainder, first and last.
            for at in [0, len / 2, len.saturating_sub(1)] {
                if let Some(slot) = doubles.get_mut(at) {
                    *slot = f64::NAN;
                    assert_eq!(
                        min_max(&doubles, f64::is_nan),
                        Fold::Nan,
                        "NaN at {at} of {len}"
                    );
                }
            }
        }
        // Only zeros of both signs: Arrow's order puts -0.0 first.
        for zeros in [[0.0, -0.0], [-0.0, 0.0]] {
            check::<Float64Type>(&zeros.repeat(9), f64::is_nan);
        }
    }

    #[test]
    fn the_order_is_arrows_total_order() {
        // `is_lt` is the order `aggregate` uses; a float type's natural `<` would tie
        // -0.0 with 0.0 and let whichever came first win.
        assert!(<Float64Type as ArrowPrimitiveType>::Native::is_lt(
            -0.0, 0.0
        ));
        let Fold::Bounds(lo, hi) = min_max(&[0.0f64, -0.0], f64::is_nan) else {
            panic!("bounds expected");
        };
        assert!(lo.is_sign_negative() && hi.is_sign_positive());
    }
}
