//! `alluvium history`: newest first, with a marker line (text) or `missing_below`
//! (JSON) where versions are missing from the log, and a warning on stderr for each.

use std::io::Write;

use alluvium::{Error, Result};
use clap::Args;
use serde_json::{Value, json};

use super::open;
use super::text::escape_control;

/// Arguments of `history`.
#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// Table location.
    table: String,
    /// Show at most this many commits (newest first).
    #[arg(long)]
    limit: Option<usize>,
    /// Print a JSON array instead of text (`version`, `timestamp` in ISO 8601,
    /// `operation`, `parameters`, `commit_info` as the log holds it, `missing_below`).
    #[arg(long)]
    json: bool,
}

/// Timestamps print as ISO 8601 in UTC, never as epoch milliseconds.
fn iso(ms: i64) -> String {
    alluvium::iso_timestamp(ms)
}

/// The marker line's text for versions missing from the log.
fn gap_text(gap: &std::ops::RangeInclusive<u64>) -> String {
    match gap.start() == gap.end() {
        true => format!("version {} is missing from the log", gap.start()),
        false => format!(
            "versions {} to {} are missing from the log",
            gap.start(),
            gap.end()
        ),
    }
}

pub fn run(a: HistoryArgs) -> Result<()> {
    let table = open(&a.table)?;
    // At least one entry is read even for `--limit 0`, to tell an empty answer from a
    // missing table.
    let mut entries = table.history(a.limit.map(|l| l.max(1)))?;
    if entries.is_empty() {
        return Err(alluvium::LogError::TableNotFound {
            location: table.uri(),
        }
        .into());
    }
    entries.truncate(a.limit.unwrap_or(usize::MAX));
    // The listing goes on (history is how an operator sees what is left), but a gap is
    // damage: said on stderr too, so a script reading the JSON or a pipe cannot miss it.
    for gap in entries.iter().filter_map(|e| e.missing_below.as_ref()) {
        eprintln!(
            "warning: {}; versions from {} on cannot be read unless a checkpoint stands in (alluvium verify reports the damage)",
            gap_text(gap),
            gap.end() + 1
        );
    }
    let mut out = std::io::stdout().lock();
    let io = |e| Error::Io {
        context: "stdout".into(),
        source: e,
    };
    if a.json {
        let rows: Vec<Value> = entries
            .iter()
            .map(|e| {
                let ci = e.commit_info.as_ref();
                json!({
                    "version": e.version,
                    "timestamp": iso(e.timestamp_ms),
                    "operation": ci.and_then(|c| c.operation()),
                    "parameters": ci.and_then(|c| c.operation_parameters()).cloned().unwrap_or(Value::Null),
                    "commit_info": ci.map(|c| Value::Object(c.0.clone())).unwrap_or(Value::Null),
                    "missing_below": e.missing_below.as_ref().map_or(Value::Null, |r| {
                        json!({"from": r.start(), "to": r.end()})
                    }),
                })
            })
            .collect();
        writeln!(out, "{}", Value::Array(rows)).map_err(io)?;
        return out.flush().map_err(io);
    }
    if entries.is_empty() {
        return Ok(());
    }
    writeln!(
        out,
        "{:>8}  {:<24}  {:<20}  parameters",
        "version", "timestamp", "operation"
    )
    .map_err(io)?;
    for e in &entries {
        let ci = e.commit_info.as_ref();
        let params = ci
            .and_then(|c| c.operation_parameters())
            .map(Value::to_string)
            .unwrap_or_default();
        writeln!(
            out,
            "{:>8}  {:<24}  {:<20}  {}",
            e.version,
            iso(e.timestamp_ms),
            escape_control(ci.and_then(|c| c.operation()).unwrap_or("-")),
            params
        )
        .map_err(io)?;
        // A gap is damage (or a cleanup no checkpoint covers): shown where it is.
        if let Some(gap) = &e.missing_below {
            writeln!(out, "{:>8}  {}", "-", gap_text(gap)).map_err(io)?;
        }
    }
    out.flush().map_err(io)
}
