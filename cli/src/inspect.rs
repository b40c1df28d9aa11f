//! `alluvium inspect`. Names and values from the table (columns, properties, ids) are
//! printed with control characters escaped in the text form.

use std::io::Write;

use alluvium::{Error, Result};
use clap::Args;

use super::text::escape_control;
use super::{VersionArgs, open};

/// Arguments of `inspect`.
#[derive(Debug, Args)]
pub struct InspectArgs {
    /// Table location.
    table: String,
    #[command(flatten)]
    version: VersionArgs,
    /// Print one JSON object instead of text (the commit time as `timestamp`, ISO 8601).
    #[arg(long)]
    json: bool,
}

/// Timestamps print as ISO 8601 in UTC, never as epoch milliseconds.
fn iso(ms: i64) -> String {
    alluvium::iso_timestamp(ms)
}

pub fn run(a: InspectArgs) -> Result<()> {
    let snapshot = open(&a.table)?.snapshot_at(a.version.spec()?)?;
    let d = alluvium::TableDescription::of(&snapshot)?;
    let mut out = std::io::stdout().lock();
    let io = |e| Error::Io {
        context: "stdout".into(),
        source: e,
    };
    if a.json {
        let mut v = serde_json::to_value(&d).map_err(|e| Error::InvalidArgument(e.to_string()))?;
        // The commit time as ISO 8601, as every timestamp the CLI prints.
        if let Some(o) = v.as_object_mut()
            && o.remove("timestamp_ms").is_some()
        {
            o.insert("timestamp".into(), iso(d.timestamp_ms).into());
        }
        writeln!(out, "{v}").map_err(io)?;
        return Ok(());
    }
    let opt = |v: Option<u64>| v.map_or_else(|| "none".to_string(), |v| v.to_string());
    let p = &d.protocol;
    let mut text = String::new();
    text.push_str(&format!(
        "table:            {}\n",
        snapshot.store().root_uri()
    ));
    text.push_str(&format!(
        "version:          {} (committed {})\n",
        d.version,
        iso(d.timestamp_ms)
    ));
    text.push_str(&format!(
        "table id:         {}\n",
        escape_control(&d.table_id)
    ));
    text.push_str(&format!(
        "protocol:         reader {} writer {}{}{}\n",
        p.min_reader_version,
        p.min_writer_version,
        if p.reader_features.is_empty() {
            String::new()
        } else {
            format!(", reader features [{}]", p.reader_features.join(", "))
        },
        if p.writer_features.is_empty() {
            String::new()
        } else {
            format!(", writer features [{}]", p.writer_features.join(", "))
        },
    ));
    text.push_str(&format!(
        "partitioned by:   {}\n",
        if d.partition_columns.is_empty() {
            "-".into()
        } else {
            d.partition_columns.join(", ")
        }
    ));
    text.push_str(&format!("column mapping:   {}\n", d.column_mapping_mode));
    text.push_str(&format!(
        "files:            {} ({} bytes, {} with deletion vectors)\n",
        d.num_files, d.size_bytes, d.num_deletion_vectors
    ));
    text.push_str(&format!(
        "rows:             {}\n",
        match (d.num_records, &d.num_records_problem) {
            (Some(n), _) => n.to_string(),
            (None, Some(p)) => format!("unknown (wrong statistics: {})", escape_control(p)),
            (None, None) => "unknown (files without statistics)".to_string(),
        }
    ));
    text.push_str(&format!("last checkpoint:  {}\n", opt(d.last_checkpoint)));
    text.push_str(&format!(
        "earliest version: {}\n",
        opt(d.earliest_readable_version)
    ));
    text.push_str("schema:\n");
    for f in &snapshot.schema().fields {
        text.push_str(&format!(
            "  {} {}{}\n",
            escape_control(&f.name),
            escape_control(&format!("{:#}", f.data_type)),
            if f.nullable { "" } else { " NOT NULL" }
        ));
    }
    if !d.configuration.is_empty() {
        text.push_str("properties:\n");
        for (k, v) in &d.configuration {
            text.push_str(&format!(
                "  {} = {}\n",
                escape_control(k),
                escape_control(v)
            ));
        }
    }
    if !d.app_transactions.is_empty() {
        text.push_str("app transactions:\n");
        for (k, v) in &d.app_transactions {
            text.push_str(&format!("  {} = {v}\n", escape_control(k)));
        }
    }
    if !d.domains.is_empty() {
        text.push_str(&format!(
            "domains:          {}\n",
            escape_control(&d.domains.join(", "))
        ));
    }
    out.write_all(text.as_bytes()).map_err(io)
}
