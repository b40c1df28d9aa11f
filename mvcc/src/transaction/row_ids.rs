//! Row ids and row commit versions at commit time (PROTOCOL.md "Row Tracking", "Writer
//! Requirements for Row Tracking").
//!
//! On a table whose protocol supports `rowTracking` (and `delta.rowTrackingSuspended` is not
//! `true`), every attempt of the commit loop gives each NEW file of the transaction a
//! `baseRowId` above the current high-water mark and `defaultRowCommitVersion` = the
//! version being attempted, and writes the advanced mark in the `delta.rowTracking` domain
//! of the same commit. A lost attempt raises the mark to the winners' (their domain, and
//! the ids their files cover) before the next attempt recomputes everything, so two
//! concurrent writers never hand out the same id: the mark is rebased, never a conflict.
//!
//! A file both removed and re-added by the transaction (a new deletion vector) keeps the
//! `baseRowId` and `defaultRowCommitVersion` of its last committed `add`, which the caller
//! copied.

use std::collections::HashSet;

use alluvium_txlog::actions::{Action, Add, DomainMetadata};
use alluvium_txlog::row_tracking as rt;

use crate::Result;

/// The row-id state of one transaction across its commit attempts.
#[derive(Debug, Clone)]
pub(crate) struct RowIds {
    /// The highest row id known to be handed out (-1: none yet).
    pub high_water_mark: i64,
}

impl RowIds {
    /// Starts from the mark recorded in the read snapshot's domains.
    pub(crate) fn new<'a>(domains: impl IntoIterator<Item = &'a DomainMetadata>) -> Result<Self> {
        Ok(RowIds {
            high_water_mark: rt::high_water_mark(domains)?.unwrap_or(-1),
        })
    }

    /// Raises the mark over what a winning commit handed out: its `delta.rowTracking`
    /// domain, and the ids its files cover (a writer that left the domain out must still
    /// not share ids with us).
    pub(crate) fn rebase(&mut self, winner: &[Action]) -> Result<()> {
        for a in winner {
            match a {
                Action::DomainMetadata(d) if d.domain == rt::DOMAIN && !d.removed => {
                    let mark = rt::parse_high_water_mark(&d.configuration)?;
                    self.high_water_mark = self.high_water_mark.max(mark);
                }
                Action::Add(add) => {
                    if let Some(last) = rt::last_row_id(add) {
                        self.high_water_mark = self.high_water_mark.max(last);
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// The adds of an attempt at `version`: new files get fresh `baseRowId`s (consecutive,
    /// in the order staged) and `defaultRowCommitVersion = version`; re-added files (their
    /// path in `readded`) are left as staged. Also the domain recording the advanced mark,
    /// when it advanced.
    ///
    /// # Errors
    /// A new file whose statistics do not record `numRecords`.
    pub(crate) fn assign(
        &self,
        adds: &[Add],
        readded: &HashSet<&str>,
        version: i64,
    ) -> Result<(Vec<Add>, Option<DomainMetadata>)> {
        let mut mark = self.high_water_mark;
        let mut out = Vec::with_capacity(adds.len());
        for a in adds {
            let mut a = a.clone();
            if !readded.contains(a.path.as_str()) {
                let n = rt::num_records(&a)?;
                a.base_row_id = Some(mark + 1);
                a.default_row_commit_version = Some(version);
                mark += n;
            }
            out.push(a);
        }
        let domain = (mark != self.high_water_mark).then(|| rt::domain(mark));
        Ok((out, domain))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn add(path: &str, rows: i64) -> Add {
        Add {
            path: path.into(),
            stats: Some(format!("{{\"numRecords\":{rows}}}")),
            ..Add::default()
        }
    }

    #[test]
    fn fresh_ids_are_contiguous_above_the_mark() {
        let ids = RowIds { high_water_mark: 9 };
        let (adds, domain) = ids
            .assign(&[add("a", 3), add("b", 0), add("c", 2)], &HashSet::new(), 4)
            .unwrap();
        let bases: Vec<_> = adds.iter().map(|a| a.base_row_id).collect();
        assert_eq!(bases, vec![Some(10), Some(13), Some(13)]);
        assert!(adds.iter().all(|a| a.default_row_commit_version == Some(4)));
        assert_eq!(domain, Some(rt::domain(14)));
    }

    #[test]
    fn readded_files_keep_their_ids_and_no_rows_no_domain() {
        let ids = RowIds { high_water_mark: 9 };
        let mut old = add("a", 3);
        old.base_row_id = Some(2);
        old.default_row_commit_version = Some(1);
        let readded: HashSet<&str> = ["a"].into_iter().collect();
        let (adds, domain) = ids.assign(std::slice::from_ref(&old), &readded, 7).unwrap();
        assert_eq!(adds[0].base_row_id, Some(2));
        assert_eq!(adds[0].default_row_commit_version, Some(1));
        assert_eq!(domain, None);
    }

    #[test]
    fn rebase_takes_the_winners_domain_and_files() {
        let mut ids = RowIds { high_water_mark: 9 };
        ids.rebase(&[Action::DomainMetadata(rt::domain(20))])
            .unwrap();
        assert_eq!(ids.high_water_mark, 20);
        let mut a = add("x", 10);
        a.base_row_id = Some(30);
        ids.rebase(&[Action::Add(a)]).unwrap();
        assert_eq!(ids.high_water_mark, 39);
    }

    #[test]
    fn a_new_file_without_a_row_count_is_refused() {
        let ids = RowIds {
            high_water_mark: -1,
        };
        let a = Add {
            path: "a".into(),
            ..Add::default()
        };
        assert!(ids.assign(&[a], &HashSet::new(), 0).is_err());
    }
}
