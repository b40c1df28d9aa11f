//! Helpers shared by the integration tests: canonical row text for comparing scan output
//! with expected results whatever the Arrow flavour of either side.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use arrow::array::*;
use arrow::datatypes::*;
use arrow::util::display::{ArrayFormatter, FormatOptions};

/// The canonical text of one value: nulls, integers, floats, decimals (trailing zeros
/// dropped), strings, binary (hex), dates (days), timestamps (microseconds since the epoch),
/// and nested values recursively.
pub fn canon(a: &dyn Array, i: usize) -> String {
    if a.is_null(i) {
        return "∅".into();
    }
    macro_rules! prim {
        ($t:ty) => {
            a.as_primitive::<$t>().value(i).to_string()
        };
    }
    match a.data_type() {
        DataType::Null => "∅".into(),
        DataType::Boolean => a.as_boolean().value(i).to_string(),
        DataType::Int8 => prim!(Int8Type),
        DataType::Int16 => prim!(Int16Type),
        DataType::Int32 => prim!(Int32Type),
        DataType::Int64 => prim!(Int64Type),
        DataType::UInt8 => prim!(UInt8Type),
        DataType::UInt16 => prim!(UInt16Type),
        DataType::UInt32 => prim!(UInt32Type),
        DataType::UInt64 => prim!(UInt64Type),
        DataType::Float32 => format!("{:?}", a.as_primitive::<Float32Type>().value(i)),
        DataType::Float64 => format!("{:?}", a.as_primitive::<Float64Type>().value(i)),
        DataType::Decimal128(_, s) => {
            let v = a.as_primitive::<Decimal128Type>().value(i);
            normalize_decimal(v, *s)
        }
        DataType::Utf8 => a.as_string::<i32>().value(i).to_string(),
        DataType::LargeUtf8 => a.as_string::<i64>().value(i).to_string(),
        DataType::Utf8View => a.as_string_view().value(i).to_string(),
        DataType::Binary => hex(a.as_binary::<i32>().value(i)),
        DataType::LargeBinary => hex(a.as_binary::<i64>().value(i)),
        DataType::BinaryView => hex(a.as_binary_view().value(i)),
        DataType::FixedSizeBinary(_) => hex(a.as_fixed_size_binary().value(i)),
        DataType::Date32 => prim!(Date32Type),
        DataType::Date64 => (a.as_primitive::<Date64Type>().value(i) / 86_400_000).to_string(),
        DataType::Timestamp(unit, _) => {
            let v = match unit {
                TimeUnit::Second => a.as_primitive::<TimestampSecondType>().value(i) * 1_000_000,
                TimeUnit::Millisecond => {
                    a.as_primitive::<TimestampMillisecondType>().value(i) * 1000
                }
                TimeUnit::Microsecond => a.as_primitive::<TimestampMicrosecondType>().value(i),
                TimeUnit::Nanosecond => a
                    .as_primitive::<TimestampNanosecondType>()
                    .value(i)
                    .div_euclid(1000),
            };
            format!("ts:{v}")
        }
        DataType::Struct(fields) => {
            let s = a.as_struct();
            let parts: Vec<String> = fields
                .iter()
                .zip(s.columns())
                .map(|(f, c)| format!("{}:{}", f.name(), canon(c.as_ref(), i)))
                .collect();
            format!("{{{}}}", parts.join(","))
        }
        DataType::List(_) => {
            let l = a.as_list::<i32>();
            let v = l.value(i);
            format!(
                "[{}]",
                (0..v.len())
                    .map(|j| canon(v.as_ref(), j))
                    .collect::<Vec<_>>()
                    .join(",")
            )
        }
        DataType::LargeList(_) => {
            let l = a.as_list::<i64>();
            let v = l.value(i);
            format!(
                "[{}]",
                (0..v.len())
                    .map(|j| canon(v.as_ref(), j))
                    .collect::<Vec<_>>()
                    .join(",")
            )
        }
        DataType::Map(_, _) => {
            let m = a.as_map();
            let e = m.value(i);
            let (k, v) = (e.column(0), e.column(1));
            let mut pairs: Vec<String> = (0..e.len())
                .map(|j| format!("{}=>{}", canon(k.as_ref(), j), canon(v.as_ref(), j)))
                .collect();
            pairs.sort();
            format!("map{{{}}}", pairs.join(","))
        }
        other => {
            let f = ArrayFormatter::try_new(a, &FormatOptions::default()).unwrap();
            format!("{other}:{}", f.value(i))
        }
    }
}

fn normalize_decimal(v: i128, scale: i8) -> String {
    let neg = v < 0;
    let digits = v.unsigned_abs().to_string();
    let scale = scale.max(0) as usize;
    let (int, frac) = if scale == 0 {
        (digits, String::new())
    } else if digits.len() > scale {
        (
            digits[..digits.len() - scale].to_string(),
            digits[digits.len() - scale..].to_string(),
        )
    } else {
        (
            "0".into(),
            format!("{}{}", "0".repeat(scale - digits.len()), digits),
        )
    };
    let frac = frac.trim_end_matches('0');
    let body = if frac.is_empty() {
        int
    } else {
        format!("{int}.{frac}")
    };
    if neg && body != "0" {
        format!("-{body}")
    } else {
        body
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Every row of `batches` as canonical text, sorted.
pub fn canon_rows(batches: &[RecordBatch]) -> Vec<String> {
    let mut rows = Vec::new();
    for b in batches {
        for i in 0..b.num_rows() {
            let cells: Vec<String> = b.columns().iter().map(|c| canon(c.as_ref(), i)).collect();
            rows.push(cells.join(" | "));
        }
    }
    rows.sort();
    rows
}

/// Rows of an Arrow pretty-printed table (`+---+` borders), as trimmed cell lists.
pub fn pretty_rows(text: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let cells = |l: &str| -> Vec<String> {
        let inner = l.trim().trim_start_matches('|').trim_end_matches('|');
        inner.split('|').map(|c| c.trim().to_string()).collect()
    };
    let mut header = Vec::new();
    let mut rows = Vec::new();
    let mut seen_header = false;
    for l in lines {
        if l.starts_with('+') {
            continue;
        }
        if !seen_header {
            header = cells(l);
            seen_header = true;
        } else {
            rows.push(cells(l));
        }
    }
    (header, rows)
}

/// The repository's `tests/data/conformance`, found from the package that includes this
/// module (the workspace root, or a member package such as the CLI's).
pub fn conformance_dir() -> std::path::PathBuf {
    let here = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    here.ancestors()
        .map(|p| p.join("tests/data/conformance"))
        .find(|p| p.is_dir())
        .unwrap_or_else(|| here.join("tests/data/conformance"))
}

/// Copies a conformance table (its `delta` root) into a fresh temporary directory.
pub fn copy_table(name: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let src = conformance_dir().join("tables").join(name).join("delta");
    let dir = tempfile::tempdir().unwrap();
    let dst = dir.path().join("table");
    copy_dir(&src, &dst);
    (dir, dst)
}

fn copy_dir(src: &std::path::Path, dst: &std::path::Path) {
    std::fs::create_dir_all(dst).unwrap();
    for e in std::fs::read_dir(src).unwrap() {
        let e = e.unwrap();
        let to = dst.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to);
        } else {
            std::fs::copy(e.path(), &to).unwrap();
        }
    }
}

/// Total rows of a full scan of the latest snapshot.
pub fn count_rows(table: &std::path::Path) -> alluvium::Result<usize> {
    let snapshot = alluvium::Table::open(table.to_str().unwrap())?.snapshot()?;
    let batches = alluvium::ScanBuilder::new(snapshot)
        .build()?
        .execute_to_vec()?;
    Ok(batches.iter().map(RecordBatch::num_rows).sum())
}

/// The `id` column (Int64) of the latest snapshot of `table`, sorted.
pub fn sorted_ids(table: &alluvium::Table) -> Vec<i64> {
    let batches = alluvium::ScanBuilder::new(table.snapshot().unwrap())
        .with_columns(["id"])
        .build()
        .unwrap()
        .execute_to_vec()
        .unwrap();
    let mut out: Vec<i64> = batches
        .iter()
        .flat_map(|b| {
            b.column(0)
                .as_any()
                .downcast_ref::<arrow::array::Int64Array>()
                .unwrap()
                .values()
                .to_vec()
        })
        .collect();
    out.sort_unstable();
    out
}

/// Whether `field` holds, at any depth, a string or binary in the offsets layout (`Utf8`,
/// `LargeUtf8`, `Binary`, `LargeBinary`), not counting fields of an extension type
/// (variant, geospatial WKB), which are defined on `Binary`.
pub fn has_offset_strings(field: &Field) -> bool {
    if field.metadata().contains_key("ARROW:extension:name") {
        return false;
    }
    match field.data_type() {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Binary | DataType::LargeBinary => true,
        DataType::Struct(fields) => fields.iter().any(|f| has_offset_strings(f)),
        DataType::List(f) | DataType::LargeList(f) | DataType::Map(f, _) => has_offset_strings(f),
        _ => false,
    }
}
