//! The expression language as a user meets it on the command line: LIKE, BETWEEN,
//! IS DISTINCT FROM, functions and intervals in `--filter` and `--set`, and errors read
//! from stderr: the SQL position with a caret under the offending text, what was expected,
//! and the nearest column or function name. SPEC.md §13.

use crate::common::{conformance, fails, ok, run};

/// `basic_partitioned`: letter (partition), number, a_float; six rows.
fn table() -> String {
    conformance("basic_partitioned")
}

fn csv(args: &[&str]) -> Vec<String> {
    let mut rows: Vec<String> = ok(args).lines().skip(1).map(str::to_string).collect();
    rows.sort();
    rows
}

#[test]
fn filters_take_like_between_distinct_functions_and_intervals() {
    let t = table();
    let scan = |filter: &str| csv(&["scan", &t, "--format", "csv", "--filter", filter]);
    assert_eq!(scan("letter LIKE 'a%'"), ["a,1,1.1", "a,4,4.4"]);
    assert_eq!(scan("upper(letter) ILIKE 'B'"), ["b,2,2.2"]);
    assert_eq!(
        scan("letter NOT LIKE 'a%'"),
        ["b,2,2.2", "c,3,3.3", "e,5,5.5"]
    );
    assert_eq!(scan("number BETWEEN 2 AND 3"), ["b,2,2.2", "c,3,3.3"]);
    // NULL-safe: the row whose letter is NULL is distinct from 'a'.
    assert_eq!(
        scan("letter IS DISTINCT FROM 'a' AND number > 4"),
        [",6,6.6", "e,5,5.5"]
    );
    assert_eq!(scan("letter IS NOT DISTINCT FROM NULL"), [",6,6.6"]);
    assert_eq!(
        scan("abs(number - 4) <= 1 AND round(a_float) = number"),
        ["a,4,4.4", "c,3,3.3"]
    );
    assert_eq!(
        scan("concat(letter, '-', CAST(number AS string)) = 'b-2'"),
        ["b,2,2.2"]
    );
    assert_eq!(
        scan("greatest(number, 5) = 5 AND nullif(letter, 'e') IS NULL"),
        ["e,5,5.5"]
    );
    assert_eq!(
        scan("current_date - INTERVAL 1 DAY < current_date AND number = 1"),
        ["a,1,1.1"]
    );
    assert_eq!(
        scan("YEAR(current_timestamp() + INTERVAL '1' YEAR) > YEAR(current_date) AND number = 2"),
        ["b,2,2.2"]
    );
}

/// What stderr shows for an expression error: `error: ...` then, for a syntax error, the
/// text and a caret under the offending part.
fn stderr(args: &[&str]) -> Vec<String> {
    let err = fails(args);
    err.lines().map(str::to_string).collect()
}

#[test]
fn syntax_errors_point_at_the_offending_text() {
    let t = table();
    let lines = stderr(&["scan", &t, "--filter", "letter LIKE"]);
    assert_eq!(
        lines,
        [
            "error: syntax error at column 12: expected a value (a column, a literal, a function call or `(`) after keyword LIKE, found end of input",
            "  letter LIKE",
            "             ^",
        ]
    );
    let lines = stderr(&["scan", &t, "--filter", "lowr(letter) = 'a' AND number > 1"]);
    assert_eq!(
        lines,
        [
            "error: syntax error at column 1: unknown function `lowr`; did you mean `lower`?",
            "  lowr(letter) = 'a' AND number > 1",
            "  ^^^^",
        ]
    );
    let lines = stderr(&["delete", &t, "--filter", "number = 1 AND"]);
    assert_eq!(
        lines[0],
        "error: syntax error at column 15: expected a value (a column, a literal, a function call or `(`) after keyword AND, found end of input"
    );
    assert_eq!(lines[2], "                ^");
    let lines = stderr(&["scan", &t, "--filter", "number IN 1, 2"]);
    assert_eq!(
        lines[0],
        "error: syntax error at column 11: expected `(` after IN, found number 1"
    );
    assert_eq!(lines[2], "            ^");
    let lines = stderr(&["scan", &t, "--filter", "letter = 'a' number > 1"]);
    assert_eq!(
        lines[0],
        "error: syntax error at column 14: expected an operator or the end of the expression, found name `number`"
    );
    assert_eq!(lines[2], "               ^^^^^^");
    // Never a parser token name.
    for filter in [
        "letter LIKE",
        "number >",
        "(number",
        "number = = 1",
        "#",
        "a NOT 1",
    ] {
        let err = fails(&["scan", &t, "--filter", filter]);
        for rust in ["Ident", "LParen", "RParen", "Num(", "Str(", "Op(", "Tok"] {
            assert!(!err.contains(rust), "{filter}: {err}");
        }
    }
}

#[test]
fn unknown_names_suggest_the_nearest_column() {
    let t = table();
    let lines = stderr(&["scan", &t, "--filter", "nmber = 1"]);
    assert_eq!(
        lines,
        ["error: invalid expression: unknown column `nmber`; did you mean `number`?"]
    );
    let lines = stderr(&["scan", &t, "--filter", "upper(lettr) = 'A'"]);
    assert_eq!(
        lines,
        ["error: invalid expression: unknown column `lettr`; did you mean `letter`?"]
    );
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("t");
    let csv_path = dir.path().join("rows.csv");
    std::fs::write(&csv_path, "id,name\n1,alice\n2,bob\n").unwrap();
    let copy = copy.to_str().unwrap();
    let csv_path = csv_path.to_str().unwrap();
    ok(&["create", copy, "--schema-from", csv_path]);
    ok(&["append", copy, csv_path]);
    let lines = stderr(&["update", copy, "--set", "name = uper(name)"]);
    assert_eq!(
        lines[0],
        "error: syntax error at column 1: unknown function `uper`; did you mean `upper`?"
    );
    assert_eq!(lines[1], "  uper(name)");
    let lines = stderr(&["update", copy, "--set", "nme = 'x'"]);
    assert!(lines[0].contains("did you mean `name`?"), "{lines:?}");
}

#[test]
fn set_and_constraints_take_the_same_language() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t");
    let t = t.to_str().unwrap();
    let rows = dir.path().join("rows.csv");
    std::fs::write(&rows, "id,name\n1,  alice \n2,bob\n3,\n").unwrap();
    let rows = rows.to_str().unwrap();
    ok(&["create", t, "--schema-from", rows]);
    ok(&["append", t, rows]);
    ok(&[
        "update",
        t,
        "--set",
        "name = upper(trim(name)) || '#' || CAST(length(trim(name)) AS string)",
        "--filter",
        "name IS NOT NULL AND name NOT LIKE 'b%'",
    ]);
    assert_eq!(
        csv(&["scan", t, "--format", "csv"]),
        ["1,ALICE#5", "2,bob", "3,"]
    );
    ok(&[
        "delete",
        t,
        "--filter",
        "starts_with(name, 'ALI') OR id BETWEEN 3 AND 9",
    ]);
    assert_eq!(csv(&["scan", t, "--format", "csv"]), ["2,bob"]);
    // A constraint must be deterministic: one reading the clock is refused.
    let err = fails(&[
        "alter",
        t,
        "--add-constraint",
        "recent",
        "id < 10 OR current_date() > DATE '2000-01-01'",
    ]);
    assert!(err.contains("not deterministic"), "{err}");
    ok(&["alter", t, "--add-constraint", "short", "length(name) < 10"]);
    let o = run(&["update", t, "--set", "name = 'a very long name'"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("short"));
}
