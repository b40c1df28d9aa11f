//! The aligned text table of `scan`, `changes` and `state` reads, written as the rows
//! arrive: memory holds one chunk of rows, not the result.
//!
//! ```text
//! +----+------+
//! | id | name |
//! +----+------+
//! | 1  | a    |
//! +----+------+
//! ```
//!
//! Column widths are those of the header and the first chunk ([`CHUNK_ROWS`] rows); a later
//! value wider than its column is cut to the width with a final `…`, so the layout never
//! breaks (machine-readable output is CSV, JSON lines or Parquet, which keep every value).
//! Values arrive as text with control characters already escaped (`output.rs`).

use std::io::Write;

use arrow::array::{Array, RecordBatch, StringArray};

/// Rows whose values set the column widths.
pub const CHUNK_ROWS: usize = 1024;

/// A table being written: its widths once known, and the rows waiting for them.
pub struct TableText {
    header: Vec<String>,
    widths: Option<Vec<usize>>,
    pending: Vec<Vec<Option<String>>>,
}

fn chars(s: &str) -> usize {
    s.chars().count()
}

impl TableText {
    /// A table with these column names.
    pub fn new(header: Vec<String>) -> TableText {
        TableText {
            header,
            widths: None,
            pending: Vec::new(),
        }
    }

    fn border(&self, out: &mut dyn Write, widths: &[usize]) -> std::io::Result<()> {
        let mut line = String::from("+");
        for w in widths {
            line.push_str(&"-".repeat(w + 2));
            line.push('+');
        }
        writeln!(out, "{line}")
    }

    fn row(out: &mut dyn Write, widths: &[usize], cells: &[Option<String>]) -> std::io::Result<()> {
        let mut line = String::from("|");
        for (w, cell) in widths.iter().zip(cells) {
            let text = cell.as_deref().unwrap_or("");
            let shown = if chars(text) > *w {
                let cut: String = text.chars().take(w.saturating_sub(1)).collect();
                format!("{cut}…")
            } else {
                text.to_string()
            };
            let pad = w - chars(&shown).min(*w);
            line.push(' ');
            line.push_str(&shown);
            line.push_str(&" ".repeat(pad + 1));
            line.push('|');
        }
        writeln!(out, "{line}")
    }

    /// Fixes the widths from the header and the pending rows, and writes the header and
    /// those rows.
    fn start(&mut self, out: &mut dyn Write) -> std::io::Result<()> {
        let mut widths: Vec<usize> = self.header.iter().map(|h| chars(h)).collect();
        for r in &self.pending {
            for (w, c) in widths.iter_mut().zip(r) {
                *w = (*w).max(c.as_deref().map_or(0, chars));
            }
        }
        self.border(out, &widths)?;
        let header: Vec<Option<String>> = self.header.iter().cloned().map(Some).collect();
        Self::row(out, &widths, &header)?;
        self.border(out, &widths)?;
        for r in std::mem::take(&mut self.pending) {
            Self::row(out, &widths, &r)?;
        }
        self.widths = Some(widths);
        Ok(())
    }

    /// Adds the rows of `batch` (every column text, see `output::escaped_text`).
    pub fn push(&mut self, batch: &RecordBatch, out: &mut dyn Write) -> std::io::Result<()> {
        let columns: Vec<&StringArray> = batch
            .columns()
            .iter()
            .filter_map(|c| c.as_any().downcast_ref::<StringArray>())
            .collect();
        for i in 0..batch.num_rows() {
            let cells: Vec<Option<String>> = columns
                .iter()
                .map(|c| c.is_valid(i).then(|| c.value(i).to_string()))
                .collect();
            match &self.widths {
                Some(w) => Self::row(out, w, &cells)?,
                None => {
                    self.pending.push(cells);
                    if self.pending.len() >= CHUNK_ROWS {
                        self.start(out)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Writes what is pending and the closing border.
    pub fn finish(mut self, out: &mut dyn Write) -> std::io::Result<()> {
        if self.widths.is_none() {
            self.start(out)?;
        }
        match &self.widths {
            Some(w) => self.border(out, w),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::sync::Arc;

    use arrow::datatypes::{DataType, Field, Schema};

    use super::*;

    fn text(rows: &[&[Option<&str>]]) -> RecordBatch {
        let columns = (0..2)
            .map(|c| {
                Arc::new(StringArray::from(
                    rows.iter().map(|r| r[c]).collect::<Vec<_>>(),
                )) as _
            })
            .collect();
        RecordBatch::try_new(
            Arc::new(Schema::new(vec![
                Field::new("id", DataType::Utf8, true),
                Field::new("name", DataType::Utf8, true),
            ])),
            columns,
        )
        .unwrap()
    }

    #[test]
    fn rows_are_aligned_as_arrows_pretty_printer_aligns_them() {
        let mut t = TableText::new(vec!["id".into(), "name".into()]);
        let mut out = Vec::new();
        t.push(
            &text(&[&[Some("1"), Some("alpha")], &[Some("22"), None]]),
            &mut out,
        )
        .unwrap();
        t.finish(&mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "+----+-------+\n| id | name  |\n+----+-------+\n| 1  | alpha |\n| 22 |       |\n+----+-------+\n"
        );
    }

    #[test]
    fn an_empty_table_has_its_header_and_later_wide_values_are_cut() {
        let mut out = Vec::new();
        TableText::new(vec!["id".into(), "name".into()])
            .finish(&mut out)
            .unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "+----+------+\n| id | name |\n+----+------+\n+----+------+\n"
        );
        let mut t = TableText::new(vec!["id".into(), "name".into()]);
        let mut out = Vec::new();
        let first: Vec<[Option<&str>; 2]> =
            (0..CHUNK_ROWS).map(|_| [Some("1"), Some("ab")]).collect();
        let first: Vec<&[Option<&str>]> = first.iter().map(|r| &r[..]).collect();
        t.push(&text(&first), &mut out).unwrap();
        t.push(&text(&[&[Some("2"), Some("abcdef")]]), &mut out)
            .unwrap();
        t.finish(&mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.contains("| 2  | abc… |"),
            "{}",
            text.lines().rev().nth(1).unwrap()
        );
    }
}
