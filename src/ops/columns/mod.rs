//! Schema changes of existing tables, one commit each (metadata, and the protocol when it
//! must be upgraded), no data file rewritten:
//! * [`Table::add_column`]: `ALTER TABLE ADD COLUMNS` (`add.rs`);
//! * [`Table::rename_column`], [`Table::drop_column`]: through column mapping in name mode,
//!   turned on in the same commit when the table has none (`mapping.rs`, PROTOCOL.md
//!   "Column Mapping");
//! * [`Table::change_column_type`]: type widening (`widen.rs`, PROTOCOL.md "Type
//!   Widening");
//! * [`Table::set_column_metadata`]: a column's comment and other metadata
//!   (`metadata.rs`);
//! * [`parse_column_definition`]: the `name TYPE [NOT NULL] [COMMENT '…']` text of a new
//!   column (`definition.rs`).
//!
//! Each commit changes the table's metadata, so it conflicts with every concurrent commit
//! (SPEC.md §7): no writer can land rows under the schema it replaced.

mod add;
mod definition;
mod mapping;
mod metadata;
mod widen;

pub(crate) use add::type_features;

pub use definition::parse_column_definition;

use crate::Snapshot;
use alluvium_expr::parse_expr;
use alluvium_txlog::properties::{STATS_COLUMNS, split_column_list};
use alluvium_txlog::schema::StructField;

use crate::rows::rules::check::CONSTRAINT_PREFIX;
use crate::rows::rules::generated::GENERATION_EXPRESSION;
use crate::{Error, Result};

/// The top-level field named `name` (case-insensitively, as Delta resolves column names).
///
/// # Errors
/// [`Error::InvalidArgument`] naming the column and the table's columns.
fn find_field<'a>(snapshot: &'a Snapshot, name: &str) -> Result<&'a StructField> {
    snapshot.schema().field(name.trim()).ok_or_else(|| {
        let names: Vec<&str> = snapshot
            .schema()
            .fields
            .iter()
            .map(|f| f.name.as_str())
            .collect();
        Error::InvalidArgument(format!(
            "the table has no column `{}` (its columns: {})",
            name.trim(),
            names.join(", ")
        ))
    })
}

/// Whether expression text `text` reads column `column` (case-insensitively, by its first
/// path segment). Text that does not parse is searched for the name as a word, so a
/// dependent expression alluvium cannot parse is never missed.
fn reads_column(text: &str, column: &str) -> bool {
    match parse_expr(text) {
        Ok(expr) => {
            let mut found = false;
            expr.map_columns(&mut |path: &[String]| {
                if path
                    .first()
                    .is_some_and(|first| first.eq_ignore_ascii_case(column))
                {
                    found = true;
                }
                path.to_vec()
            });
            found
        }
        Err(_) => text
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .any(|word| word.eq_ignore_ascii_case(column)),
    }
}

/// The table's CHECK constraints and generation expressions that read `column`, described
/// for an error message (`CHECK constraint positive (x > 0)`, `generated column y (x + 1)`).
/// Delta refuses to rename, drop or retype a column they depend on (its
/// `checkDependentExpressions`): they would no longer mean what they meant.
fn dependents(snapshot: &Snapshot, column: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut constraints: Vec<(&String, &String)> = snapshot
        .metadata()
        .configuration
        .iter()
        .filter(|(k, _)| k.starts_with(CONSTRAINT_PREFIX))
        .collect();
    constraints.sort();
    for (key, text) in constraints {
        if reads_column(text, column) {
            out.push(format!(
                "CHECK constraint {} ({text})",
                &key[CONSTRAINT_PREFIX.len()..]
            ));
        }
    }
    for f in &snapshot.schema().fields {
        if let Some(text) = f
            .metadata
            .get(GENERATION_EXPRESSION)
            .and_then(|v| v.as_str())
            && !f.name.eq_ignore_ascii_case(column)
            && reads_column(text, column)
        {
            out.push(format!("generated column {} ({text})", f.name));
        }
    }
    out
}

/// Refuses `what` (`rename`, `drop`, `change the type of`) on `column` when expressions
/// depend on it (see [`dependents`]).
fn refuse_dependents(snapshot: &Snapshot, column: &str, what: &str) -> Result<()> {
    let deps = dependents(snapshot, column);
    if deps.is_empty() {
        return Ok(());
    }
    Err(Error::InvalidArgument(format!(
        "cannot {what} column `{column}`: {} read(s) it; drop or change them first",
        deps.join(", ")
    )))
}

/// The table's `delta.dataSkippingStatsColumns` with the top-level column `old` renamed to
/// `new` (`Some`) or removed (`None`), nested paths below it included; `None` when the
/// property is not set or does not name the column (Delta updates the list the same way:
/// `StatisticsCollection.renameDeltaStatsColumn` / `dropDeltaStatsColumns`).
fn stats_columns_after(
    configuration: &std::collections::HashMap<String, String>,
    old: &str,
    new: Option<&str>,
) -> Option<String> {
    let list = configuration.get(STATS_COLUMNS)?;
    let mut changed = false;
    let mut out = Vec::new();
    for entry in split_column_list(list) {
        // The first path segment ends at the first dot outside backticks.
        let mut quoted = false;
        let dot = entry.char_indices().find_map(|(i, c)| {
            if c == '`' {
                quoted = !quoted;
            }
            (c == '.' && !quoted).then_some(i)
        });
        let (head, rest) = match dot {
            Some(i) => (entry[..i].to_string(), Some(entry[i + 1..].to_string())),
            None => (entry.clone(), None),
        };
        let unquoted = head
            .strip_prefix('`')
            .and_then(|h| h.strip_suffix('`'))
            .map_or_else(|| head.clone(), |h| h.replace("``", "`"));
        if unquoted.eq_ignore_ascii_case(old) {
            changed = true;
            if let Some(n) = new {
                let quoted = if n.chars().all(|c| c.is_alphanumeric() || c == '_') {
                    n.to_string()
                } else {
                    format!("`{}`", n.replace('`', "``"))
                };
                out.push(match rest {
                    Some(r) => format!("{quoted}.{r}"),
                    None => quoted,
                });
            }
        } else {
            out.push(entry);
        }
    }
    changed.then(|| out.join(","))
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    #[test]
    fn references_are_found_by_parsing_or_by_word() {
        assert!(reads_column("x > 0 AND y < 3", "X"));
        assert!(reads_column("s.a = 1", "s"));
        assert!(!reads_column("xy > 0", "x"));
        // Not parseable by alluvium: searched as a word.
        assert!(reads_column("some_fn(x) @@ 1", "x"));
        assert!(!reads_column("some_fn(xy) @@ 1", "x"));
    }

    #[test]
    fn stats_column_lists_follow_renames_and_drops() {
        let conf = HashMap::from([(STATS_COLUMNS.to_string(), "a,b.c,d".to_string())]);
        assert_eq!(
            stats_columns_after(&conf, "b", Some("bb")).as_deref(),
            Some("a,bb.c,d")
        );
        assert_eq!(
            stats_columns_after(&conf, "a", Some("new name")).as_deref(),
            Some("`new name`,b.c,d")
        );
        assert_eq!(
            stats_columns_after(&conf, "D", None).as_deref(),
            Some("a,b.c")
        );
        assert_eq!(stats_columns_after(&conf, "zz", None), None);
        let quoted = HashMap::from([(STATS_COLUMNS.to_string(), "`a.b`.c,x".to_string())]);
        assert_eq!(
            stats_columns_after(&quoted, "a.b", Some("ab")).as_deref(),
            Some("ab.c,x")
        );
        assert_eq!(stats_columns_after(&HashMap::new(), "a", None), None);
    }
}
