//! JSON equality with numbers compared by value.
//!
//! alluvium builds `serde_json` with `float_roundtrip`, so a float must come back exactly
//! (0 ULPs): without it, parsing is not always correctly rounded and a number in commitInfo
//! or field metadata could come back one ULP off (the fuzzers found that). The distance stays
//! a named constant so that the property says what it checks.

use serde_json::Value;

/// Largest accepted distance between two floats, in units in the last place.
const MAX_ULPS: u64 = 0;

fn floats_close(a: f64, b: f64) -> bool {
    if a == b {
        return true;
    }
    if a.is_sign_negative() != b.is_sign_negative() || !a.is_finite() || !b.is_finite() {
        return false;
    }
    a.to_bits().abs_diff(b.to_bits()) <= MAX_ULPS
}

/// True if `a` and `b` are equal except for floats that differ by at most a few ULPs.
pub fn close(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) if x.is_f64() || y.is_f64() => {
            match (x.as_f64(), y.as_f64()) {
                (Some(x), Some(y)) => floats_close(x, y),
                _ => false,
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| close(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| close(v, w)))
        }
        _ => a == b,
    }
}
