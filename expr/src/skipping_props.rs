//! Property test of data skipping: on random files (rows with NULLs, NaN, strings with
//! wildcard characters and non-ASCII text) whose statistics are written as Delta writers
//! write them (string maxima truncated to a prefix, timestamps to milliseconds, sometimes
//! missing), and random predicates of the whole language (LIKE, BETWEEN, functions,
//! IS DISTINCT FROM, interval arithmetic, constants, connectives), skipping never drops a
//! file that holds a row the predicate makes TRUE, and "every row matches" is never said of
//! a file with a row that does not. Rows are judged by the expression bound as a plain
//! value, independently of the forms the predicate binding rewrites for skipping.

use std::sync::Arc;

use arrow_array::{
    ArrayRef, Date32Array, Float64Array, Int64Array, RecordBatch, StringArray,
    TimestampMicrosecondArray,
};
use arrow_schema::{Field, Schema};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{Map, Value, json};

use alluvium_txlog::actions::OptStringMap;
use alluvium_txlog::column_mapping::ColumnMappingMode;
use alluvium_txlog::scalar::text::{format_date, format_timestamp_millis};
use alluvium_txlog::schema::StructType;
use alluvium_txlog::stats::FileStats;

use crate::{
    FileSummary, StatsNeeded, all_match, at_statement_time, bind, bind_value, evaluate,
    evaluate_bool, may_match, parse_expr,
};

const SCHEMA: &str = r#"{"type":"struct","fields":[
    {"name":"s","type":"string","nullable":true,"metadata":{}},
    {"name":"x","type":"long","nullable":true,"metadata":{}},
    {"name":"d","type":"date","nullable":true,"metadata":{}},
    {"name":"ts","type":"timestamp","nullable":true,"metadata":{}},
    {"name":"f","type":"double","nullable":true,"metadata":{}},
    {"name":"p","type":"string","nullable":true,"metadata":{}}
]}"#;

/// The statement time of the predicates that read the clock.
const NOW: i64 = 1_700_000_000_000_000;
const DAY: i64 = 86_400_000_000;

/// One file: its rows, column by column.
struct File {
    s: Vec<Option<String>>,
    x: Vec<Option<i64>>,
    d: Vec<Option<i32>>,
    ts: Vec<Option<i64>>,
    f: Vec<Option<f64>>,
    p: Option<String>,
}

fn random_string(rng: &mut StdRng) -> String {
    const CHARS: [char; 9] = ['a', 'b', 'c', '%', '_', 'é', 'Z', '\\', '\u{10FFFF}'];
    let len = rng.random_range(0..5);
    (0..len)
        .map(|_| CHARS[rng.random_range(0..CHARS.len())])
        .collect()
}

fn maybe<T>(rng: &mut StdRng, v: T) -> Option<T> {
    (rng.random_range(0..5) != 0).then_some(v)
}

fn random_file(rng: &mut StdRng) -> File {
    let n = rng.random_range(1..7);
    let p = random_string(rng);
    let mut file = File {
        s: vec![],
        x: vec![],
        d: vec![],
        ts: vec![],
        f: vec![],
        p: maybe(rng, p),
    };
    for _ in 0..n {
        let s = random_string(rng);
        file.s.push(maybe(rng, s));
        let x = rng.random_range(-6..7);
        file.x.push(maybe(rng, x));
        let d = 19_700 + rng.random_range(-40..40);
        file.d.push(maybe(rng, d));
        let ts = NOW + rng.random_range(-3 * DAY..3 * DAY);
        file.ts.push(maybe(rng, ts));
        let f = if rng.random_range(0..6) == 0 {
            f64::NAN
        } else {
            f64::from(rng.random_range(-40..40)) / 8.0
        };
        file.f.push(maybe(rng, f));
    }
    file
}

/// The batch a scan of the file produces (the partition value materialised).
fn batch(file: &File) -> RecordBatch {
    let n = file.s.len();
    let columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from(file.s.clone())),
        Arc::new(Int64Array::from(file.x.clone())),
        Arc::new(Date32Array::from(file.d.clone())),
        Arc::new(TimestampMicrosecondArray::from(file.ts.clone()).with_timezone("UTC")),
        Arc::new(Float64Array::from(file.f.clone())),
        Arc::new(StringArray::from(vec![file.p.clone(); n])),
    ];
    let fields: Vec<Field> = ["s", "x", "d", "ts", "f", "p"]
        .iter()
        .zip(&columns)
        .map(|(name, c)| Field::new(*name, c.data_type().clone(), true))
        .collect();
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).unwrap()
}

/// Statistics as writers leave them: string maxima possibly cut to a prefix (below the
/// true maximum), timestamps at millisecond precision, NaN left out of float bounds, and
/// now and then a column or the whole object missing.
fn stats(file: &File, rng: &mut StdRng) -> Option<String> {
    if rng.random_range(0..10) == 0 {
        return None;
    }
    let mut min = Map::new();
    let mut max = Map::new();
    let mut nulls = Map::new();
    let mut put = |name: &str, lo: Option<Value>, hi: Option<Value>, n: usize, rng: &mut StdRng| {
        if rng.random_range(0..8) == 0 {
            return;
        }
        nulls.insert(name.into(), json!(n));
        if let (Some(lo), Some(hi)) = (lo, hi) {
            min.insert(name.into(), lo);
            max.insert(name.into(), hi);
        }
    };
    let strings: Vec<&String> = file.s.iter().flatten().collect();
    let cut = |s: &String, rng: &mut StdRng| -> String {
        let keep = rng.random_range(0..=s.chars().count());
        s.chars().take(keep).collect()
    };
    let lo = strings.iter().min().map(|s| cut(s, rng));
    let hi = strings.iter().max().map(|s| {
        if rng.random_range(0..3) == 0 {
            cut(s, rng)
        } else {
            (*s).clone()
        }
    });
    put(
        "s",
        lo.map(Value::from),
        hi.map(Value::from),
        file.s.iter().filter(|v| v.is_none()).count(),
        rng,
    );
    let xs: Vec<i64> = file.x.iter().flatten().copied().collect();
    put(
        "x",
        xs.iter().min().map(|v| json!(v)),
        xs.iter().max().map(|v| json!(v)),
        file.x.iter().filter(|v| v.is_none()).count(),
        rng,
    );
    let ds: Vec<i32> = file.d.iter().flatten().copied().collect();
    put(
        "d",
        ds.iter().min().map(|v| json!(format_date(*v))),
        ds.iter().max().map(|v| json!(format_date(*v))),
        file.d.iter().filter(|v| v.is_none()).count(),
        rng,
    );
    let ts: Vec<i64> = file.ts.iter().flatten().copied().collect();
    put(
        "ts",
        ts.iter().min().map(|v| json!(format_timestamp_millis(*v))),
        ts.iter().max().map(|v| json!(format_timestamp_millis(*v))),
        file.ts.iter().filter(|v| v.is_none()).count(),
        rng,
    );
    let fs: Vec<f64> = file
        .f
        .iter()
        .flatten()
        .copied()
        .filter(|v| !v.is_nan())
        .collect();
    put(
        "f",
        fs.iter().copied().reduce(f64::min).map(|v| json!(v)),
        fs.iter().copied().reduce(f64::max).map(|v| json!(v)),
        file.f.iter().filter(|v| v.is_none()).count(),
        rng,
    );
    Some(
        json!({
            "numRecords": file.s.len(),
            "minValues": min,
            "maxValues": max,
            "nullCount": nulls,
        })
        .to_string(),
    )
}

fn quoted(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// A random comparison of the language.
fn random_atom(rng: &mut StdRng) -> String {
    let s = random_string(rng);
    let prefix: String = s
        .chars()
        .filter(|c| !matches!(c, '%' | '_' | '\\'))
        .collect();
    let x = rng.random_range(-7..8);
    let y = x + rng.random_range(-2..5);
    let day = 19_700 + rng.random_range(-45..45);
    let t = NOW + rng.random_range(-4 * DAY..4 * DAY);
    let col = ["s", "p"][rng.random_range(0..2)];
    match rng.random_range(0..22) {
        0 => format!("{col} LIKE {}", quoted(&format!("{prefix}%"))),
        1 => format!("{col} LIKE {}", quoted(&prefix)),
        2 => format!("{col} NOT LIKE {}", quoted(&format!("{prefix}%"))),
        3 => format!("{col} LIKE {} ESCAPE '!'", quoted(&format!("{prefix}!%%"))),
        4 => format!("{col} LIKE {}", quoted(&format!("{prefix}_%"))),
        5 => format!("{col} ILIKE {}", quoted(&format!("{prefix}%"))),
        6 => format!("x BETWEEN {x} AND {y}"),
        7 => format!("x NOT BETWEEN {x} AND {y}"),
        8 => format!(
            "d BETWEEN DATE '{}' AND DATE '{}'",
            format_date(day),
            format_date(day + 3)
        ),
        9 => format!("lower({col}) = {}", quoted(&prefix.to_lowercase())),
        10 => format!("length({col}) > {}", rng.random_range(0..4)),
        11 => format!("abs(x) < {}", rng.random_range(0..5)),
        12 => format!("starts_with({col}, {})", quoted(&prefix)),
        13 => format!("x IS DISTINCT FROM {x}"),
        14 => format!("{col} IS NOT DISTINCT FROM {}", quoted(&s)),
        15 => "x IS NOT DISTINCT FROM NULL".into(),
        16 => format!(
            "ts > TIMESTAMP '{}' - INTERVAL {} HOURS",
            alluvium_txlog::scalar::text::format_timestamp(t),
            rng.random_range(0..30)
        ),
        17 => format!("d >= DATE '{}' + INTERVAL 1 MONTH", format_date(day - 30)),
        18 => format!(
            "ts >= current_timestamp() - INTERVAL {} DAYS",
            rng.random_range(0..3)
        ),
        19 => format!("f > {}", f64::from(x) / 2.0),
        20 => format!(
            "f BETWEEN {} AND {}",
            f64::from(x) / 4.0,
            f64::from(y) / 4.0
        ),
        _ => format!("x + 1 > {x} * 2 OR x < greatest({y}, 0)"),
    }
}

fn random_predicate(rng: &mut StdRng, depth: u32) -> String {
    if depth == 0 || rng.random_range(0..3) == 0 {
        return random_atom(rng);
    }
    let a = random_predicate(rng, depth - 1);
    let b = random_predicate(rng, depth - 1);
    match rng.random_range(0..3) {
        0 => format!("({a}) AND ({b})"),
        1 => format!("({a}) OR ({b})"),
        _ => format!("NOT ({a})"),
    }
}

#[test]
fn skipping_never_drops_a_matching_row() {
    let schema = StructType::from_json(SCHEMA).unwrap();
    let partitions = vec!["p".to_string()];
    let mut rng = StdRng::seed_from_u64(27);
    let (mut kept, mut skipped, mut whole) = (0, 0, 0);
    for _ in 0..3_000 {
        let file = random_file(&mut rng);
        let stats_json = stats(&file, &mut rng);
        let text = random_predicate(&mut rng, 2);
        let expr = parse_expr(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
        let pred = at_statement_time(NOW, || {
            bind(&expr, &schema, &partitions, ColumnMappingMode::None)
        })
        .unwrap_or_else(|e| panic!("{text}: {e}"));
        // The oracle: the predicate evaluated as a plain value, without the rewrites the
        // predicate binding makes for skipping (LIKE ranges, DISTINCT as NULL checks,
        // computed constants); the rewritten form must evaluate the same.
        let value = at_statement_time(NOW, || {
            bind_value(&expr, &schema, &partitions, ColumnMappingMode::None)
        })
        .unwrap_or_else(|e| panic!("{text}: {e}"));
        let rows: Vec<Option<bool>> = evaluate_bool(&value, &batch(&file))
            .unwrap_or_else(|e| panic!("{text}: {e}"))
            .iter()
            .collect();
        let rewritten: Vec<Option<bool>> = evaluate(&pred, &batch(&file))
            .unwrap_or_else(|e| panic!("{text}: {e}"))
            .iter()
            .collect();
        assert_eq!(rows, rewritten, "{text}\nbound: {pred:?}");
        let mut pv = OptStringMap::default();
        pv.insert("p", file.p.clone());
        let needed = StatsNeeded::of(&pred);
        let parsed = needed.parse(stats_json.as_deref());
        if let Some(s) = &stats_json {
            // The selective parse agrees with the full one on what it keeps.
            assert!(FileStats::parse(s).is_some());
        }
        let summary = FileSummary {
            partition_values: &pv,
            stats: parsed.as_ref(),
        };
        let may = may_match(&pred, &summary);
        let any_true = rows.contains(&Some(true));
        assert!(
            may || !any_true,
            "skipped a file with a matching row\npredicate: {text}\nbound: {pred:?}\nstats: {stats_json:?}\nrows: {rows:?}\ns: {:?}",
            file.s
        );
        if all_match(&pred, &summary) {
            whole += 1;
            assert!(
                rows.iter().all(|r| *r == Some(true)),
                "all_match on a file with a row not matching\npredicate: {text}\nstats: {stats_json:?}\nrows: {rows:?}"
            );
        }
        if may {
            kept += 1;
        } else {
            skipped += 1;
        }
    }
    // The property is only worth something if skipping happens.
    assert!(skipped > 300, "kept {kept}, skipped {skipped}");
    assert!(whole > 50, "all_match {whole}");
}

/// The skipping half of issue 29's property test: random files replayed into a table state
/// (which holds them as columns, with a few removed and re-added) are judged as their `add`
/// actions are (one struct per file, the layout the state held before, kept here as the
/// oracle): for random predicates of the whole language, the same files are kept, each with
/// the same statistics parsed. The state's judgement over its typed statistics columns
/// ([`FileFilter::matching_in`]) equals the file-by-file one, on the loaded state and on one
/// refreshed from it (its base shared, some rows masked, new files in the overlay).
#[test]
fn a_replayed_file_set_is_judged_as_its_adds() {
    use std::collections::HashMap;

    use alluvium_txlog::actions::{Action, Add, Format, Metadata, Protocol, Remove};
    use alluvium_txlog::path::TableRoot;
    use alluvium_txlog::replay::Replay;

    use crate::FileFilter;

    let schema = StructType::from_json(SCHEMA).unwrap();
    let partitions = vec!["p".to_string()];
    let mut rng = StdRng::seed_from_u64(29);
    let mut replay = Replay::new(TableRoot::new("file:///t"));
    replay.apply(Action::Protocol(Protocol {
        min_reader_version: 1,
        min_writer_version: 2,
        reader_features: None,
        writer_features: None,
    }));
    replay.apply(Action::Metadata(Metadata {
        id: "t".into(),
        name: None,
        description: None,
        format: Format::default(),
        schema_string: SCHEMA.into(),
        partition_columns: partitions.clone(),
        created_time: None,
        configuration: HashMap::new(),
    }));
    let mut live: HashMap<String, Add> = HashMap::new();
    let mut random_commit = |replay: &mut Replay, files: usize, rng: &mut StdRng| {
        for _ in 0..files {
            let file = random_file(rng);
            let mut pv = OptStringMap::default();
            pv.insert("p", file.p.clone());
            let path = format!("f{}.parquet", rng.random_range(0..1_200));
            let mut add = Add::builder(path.clone(), 100, 1)
                .partition_values(pv)
                .build();
            add.stats = stats(&file, rng);
            if rng.random_range(0..10) == 0 {
                replay.apply(Action::Remove(Remove::from_add(&add, 2, true)));
                live.remove(&path);
            } else {
                replay.apply(Action::Add(add.clone()));
                live.insert(path, add);
            }
        }
    };
    random_commit(&mut replay, 1_500, &mut rng);
    let loaded = replay.finish(1).unwrap();
    // The same files judged again after a refresh: the loaded files are the shared base,
    // some removed or replaced (masked), the new ones an overlay.
    let mut replay = Replay::from_state(loaded.clone());
    random_commit(&mut replay, 120, &mut rng);
    let refreshed = replay.finish(2).unwrap();
    assert_eq!(refreshed.files().count(), live.len());
    let batches = refreshed.file_batches(&[]);
    assert_eq!(batches.len(), 2, "a base and an overlay");
    assert!(
        (0..batches[0].len()).any(|i| batches[0].file(i).is_none()),
        "masked rows"
    );
    let (mut kept, mut skipped) = (0, 0);
    for round in 0..200 {
        let text = random_predicate(&mut rng, 2);
        let expr = parse_expr(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
        let pred = at_statement_time(NOW, || {
            bind(&expr, &schema, &partitions, ColumnMappingMode::None)
        })
        .unwrap_or_else(|e| panic!("{text}: {e}"));
        let filter = FileFilter::new(&pred);
        // Judged over the state's columns at once, and file by file.
        let state = if round % 2 == 0 { &refreshed } else { &loaded };
        let columnar: Vec<(String, Option<FileStats>)> = filter
            .matching_in(state)
            .map(|m| (m.file.path().to_string(), m.stats().cloned()))
            .collect();
        let by_file: Vec<(String, Option<FileStats>)> = filter
            .matching(state.files())
            .map(|m| (m.file.path().to_string(), m.stats().cloned()))
            .collect();
        assert!(
            columnar == by_file,
            "{text}: judged otherwise over the columns"
        );
        if round % 2 == 1 {
            continue;
        }
        let mut from_state = columnar;
        let mut from_adds: Vec<(String, Option<FileStats>)> = live
            .values()
            .filter_map(|a| {
                let stats = filter.keep(&a.partition_values, a.stats.as_deref())?;
                Some((a.path.clone(), stats))
            })
            .collect();
        from_state.sort_by(|a, b| a.0.cmp(&b.0));
        from_adds.sort_by(|a, b| a.0.cmp(&b.0));
        assert!(
            from_state == from_adds,
            "{text}: the state is judged otherwise"
        );
        kept += from_state.len();
        skipped += live.len() - from_state.len();
    }
    // Worth something only if skipping happens.
    assert!(skipped > kept / 10, "kept {kept}, skipped {skipped}");
}
