//! `alluvium convert`: CONVERT TO DELTA of a directory of Parquet files
//! (`Table::convert_to_delta`), one line or one JSON object.

use std::time::Instant;

use alluvium::{DataType, Error, PrimitiveType, Result, StructField};
use clap::Args;

use super::open;
use super::progress::with_spinner;
use super::summary::{JsonFlag, Outcome, bytes, count};

/// Arguments of `convert`.
#[derive(Debug, Args)]
pub struct ConvertArgs {
    /// The directory of Parquet files (it becomes the table's location).
    dir: String,
    #[command(flatten)]
    out: JsonFlag,
    /// A partition column and its type, in directory order (repeatable): `--partition-by
    /// day date --partition-by region string` for `day=2024-01-01/region=EU/part-0.parquet`.
    #[arg(long = "partition-by", num_args = 2, value_names = ["COLUMN", "TYPE"], action = clap::ArgAction::Append)]
    partition_by: Vec<String>,
}

pub fn run(a: ConvertArgs) -> Result<()> {
    let started = Instant::now();
    let partitions: Vec<StructField> = a
        .partition_by
        .chunks(2)
        .map(|pair| match pair {
            [name, ty] => {
                let t = ty.parse::<PrimitiveType>().map_err(|_| {
                    Error::InvalidArgument(format!(
                        "--partition-by {name} {ty}: unknown type (use string, int, long, date, timestamp, decimal(p,s), ...)"
                    ))
                })?;
                Ok(StructField::new(name.clone(), DataType::Primitive(t), true))
            }
            _ => Err(Error::InvalidArgument(
                "--partition-by takes COLUMN and TYPE".into(),
            )),
        })
        .collect::<Result<_>>()?;
    let table = open(&a.dir)?;
    let summary = with_spinner("convert: reading Parquet footers", || {
        table.convert_to_delta(&partitions)
    })?;
    let snapshot = table.snapshot()?;
    let rows: Option<u64> = alluvium::ScanBuilder::new(snapshot.clone())
        .build()?
        .count_from_statistics();
    let partitioned = match partitions.is_empty() {
        true => String::new(),
        false => format!(
            ", partitioned by {}",
            partitions
                .iter()
                .map(|p| p.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let out = Outcome::new("CONVERT", started).commit(&summary);
    let files = out.metric_u64("numConvertedFiles");
    out.line(format!(
        "converted {} ({}{}) into a Delta table{partitioned}",
        count(files, "Parquet file"),
        bytes(snapshot.files().map(|f| f.size().max(0) as u64).sum()),
        rows.map(|r| format!(", {}", count(r, "row")))
            .unwrap_or_default()
    ))
    .field(
        "rows",
        rows.map_or(serde_json::Value::Null, serde_json::Value::from),
    )
    .emit(a.out.json);
    Ok(())
}
