//! `ALTER TABLE ... ADD CONSTRAINT name CHECK (expr)` / `DROP CONSTRAINT name`
//! (PROTOCOL.md "CHECK Constraints"): adding a constraint validates every existing row
//! first and upgrades the protocol to support `checkConstraints` in the same commit;
//! dropping removes it. Constraint names are case-insensitive and stored lowercased, as
//! Delta Spark stores them (`delta.constraints.<name>`).

use alluvium_mvcc::Transaction;
use alluvium_txlog::features::upgrade_protocol;
use alluvium_txlog::table::TableFeature;

use crate::commit::{WriteOptions, WriteOutcome, outcome_if_done};
use crate::report::CommitSummary;
use crate::rows::rules::check::{CONSTRAINT_PREFIX, bind_check, first_violation};
use crate::rows::rules::row;
use crate::{Error, Result, Table};

fn key_of(name: &str) -> Result<String> {
    let name = name.trim();
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(Error::InvalidArgument(format!(
            "constraint name `{name}`: use letters, digits and underscores"
        )));
    }
    Ok(format!("{CONSTRAINT_PREFIX}{}", name.to_ascii_lowercase()))
}

impl Table {
    /// Adds the CHECK constraint `name` with the boolean expression `expression` (the
    /// `--filter` language) in one commit (operation `ADD CONSTRAINT`), after checking
    /// that every existing row satisfies it (TRUE; FALSE or NULL violates). The protocol
    /// is upgraded to support `checkConstraints` (writer 3 on a legacy table) when it does
    /// not. The commit conflicts with any concurrent commit that adds rows, so no row
    /// escapes the check.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a bad name, a name already used, an expression that
    /// does not parse or is not boolean over the table's columns;
    /// [`Error::ConstraintViolation`] naming an existing row that violates it; unsupported
    /// writer features; commit conflicts.
    pub fn add_constraint(&self, name: &str, expression: &str) -> Result<CommitSummary> {
        self.add_constraint_with(name, expression, &WriteOptions::default())?
            .into_committed("ADD CONSTRAINT")
    }

    /// [`add_constraint`](Self::add_constraint) with write options: the commit carries
    /// `options`' commitInfo fields, and with an application transaction it is made once
    /// (a repeat of a recorded version is [`WriteOutcome::Skipped`], nothing committed).
    ///
    /// # Errors
    /// As [`add_constraint`](Self::add_constraint).
    pub fn add_constraint_with(
        &self,
        name: &str,
        expression: &str,
        options: &WriteOptions,
    ) -> Result<WriteOutcome> {
        let key = key_of(name)?;
        let snapshot = self.read_snapshot(options)?;
        let mut txn = Transaction::new(snapshot.inner(), "ADD CONSTRAINT");
        // A retried job is skipped before the constraint, now there, is found to exist.
        if let Some(done) = outcome_if_done(&mut txn, &snapshot, options) {
            return Ok(done);
        }
        if snapshot.metadata().configuration.contains_key(&key) {
            return Err(Error::InvalidArgument(format!(
                "constraint `{}` already exists",
                name.trim()
            )));
        }
        let predicate = bind_check(
            expression,
            snapshot.schema(),
            snapshot.partition_columns(),
            snapshot.column_mapping(),
        )
        .map_err(|e| Error::InvalidArgument(format!("constraint `{}`: {e}", name.trim())))?;
        txn.set_parameter("name", name.trim());
        txn.set_parameter("expr", expression);
        // Every existing row is checked; a concurrent commit adding rows conflicts.
        txn.read_whole_table();
        for add in snapshot.files() {
            txn.read_file(add);
            for b in crate::read::scan::read_whole_file(&snapshot, &add.to_add())? {
                if let Some(r) = first_violation(&predicate, &b)? {
                    return Err(Error::ConstraintViolation {
                        constraint: name.trim().to_ascii_lowercase(),
                        expression: expression.to_string(),
                        row: format!("{} (existing, in {})", row::render(&b, r), add.path()),
                    });
                }
            }
        }
        let protocol = upgrade_protocol(snapshot.protocol(), &[TableFeature::CheckConstraints]);
        if &protocol != snapshot.protocol() {
            txn.set_protocol(protocol);
        }
        let mut md = snapshot.metadata().clone();
        md.configuration.insert(key, expression.to_string());
        txn.set_metadata(md);
        Ok(WriteOutcome::Committed(Box::new(
            self.commit_with_policy(txn)?,
        )))
    }

    /// Drops the CHECK constraint `name` (operation `DROP CONSTRAINT`).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if the table has no such constraint; commit conflicts.
    pub fn drop_constraint(&self, name: &str) -> Result<CommitSummary> {
        self.drop_constraint_with(name, &WriteOptions::default())?
            .into_committed("DROP CONSTRAINT")
    }

    /// [`drop_constraint`](Self::drop_constraint) with write options, as
    /// [`add_constraint_with`](Self::add_constraint_with) takes them.
    ///
    /// # Errors
    /// As [`drop_constraint`](Self::drop_constraint).
    pub fn drop_constraint_with(&self, name: &str, options: &WriteOptions) -> Result<WriteOutcome> {
        let key = key_of(name)?;
        let snapshot = self.read_snapshot(options)?;
        let mut txn = Transaction::new(snapshot.inner(), "DROP CONSTRAINT");
        // A retried job is skipped before the constraint, now gone, is found missing.
        if let Some(done) = outcome_if_done(&mut txn, &snapshot, options) {
            return Ok(done);
        }
        let mut md = snapshot.metadata().clone();
        let Some(expr) = md.configuration.remove(&key) else {
            return Err(Error::InvalidArgument(format!(
                "the table has no constraint `{}`",
                name.trim()
            )));
        };
        txn.set_parameter("name", name.trim());
        txn.set_parameter("expr", expr);
        txn.set_metadata(md);
        Ok(WriteOutcome::Committed(Box::new(
            self.commit_with_policy(txn)?,
        )))
    }
}
