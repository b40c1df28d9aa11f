//! Running the `alluvium` binary and finding the conformance tables, for every test file of
//! the CLI package.

use std::path::Path;
use std::process::{Command, Output};

/// The `alluvium` binary cargo built for these tests.
pub const BIN: &str = env!("CARGO_BIN_EXE_alluvium");

/// Runs the binary with `args`.
pub fn run(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().unwrap()
}

/// Runs the binary with `args`, which must succeed; its stdout.
pub fn ok(args: &[&str]) -> String {
    let o = run(args);
    assert!(
        o.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

/// Runs the binary with `args`, which must fail with one `error: ` line on stderr (not a
/// panic), followed only, for an expression that does not parse, by its pointer (the text
/// and a caret line); what stderr holds.
pub fn fails(args: &[&str]) -> String {
    let o = run(args);
    assert!(!o.status.success(), "{args:?} should fail");
    assert_ne!(o.status.code(), Some(101), "{args:?} panicked");
    let err = String::from_utf8(o.stderr).unwrap();
    let lines: Vec<&str> = err.trim_end().lines().collect();
    let pointer = lines.len() == 3
        && lines[0].contains("syntax error at ")
        && lines[2].trim_start().starts_with('^')
        && lines[2].trim().chars().all(|c| c == '^');
    assert!(
        lines.len() == 1 || pointer,
        "{args:?}: error must be one line (and a pointer under an expression): {err:?}"
    );
    assert!(err.starts_with("error: "), "{err}");
    err
}

/// The `delta` directory of a conformance table of the repository's test data.
pub fn conformance(name: &str) -> String {
    conformance_data()
        .join("tables")
        .join(name)
        .join("delta")
        .to_string_lossy()
        .into_owned()
}

/// The repository's conformance data (`tests/data/conformance` of the workspace root).
pub fn conformance_data() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/conformance")
}

/// Runs a write command with `--json` added, which must succeed; its one JSON object.
pub fn ok_json(args: &[&str]) -> serde_json::Value {
    let mut with = args.to_vec();
    with.push("--json");
    let out = ok(&with);
    assert_eq!(
        out.lines().count(),
        1,
        "{with:?}: one JSON object, got {out:?}"
    );
    serde_json::from_str(&out).unwrap()
}

/// The version a write command's line ends with (`...; version N`).
pub fn version_of(line: &str) -> u64 {
    line.trim_end()
        .rsplit_once("; version ")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or_else(|| panic!("no version in {line:?}"))
}
