//! Strings of one column, back to back in one arena: the text columns of
//! [`crate::file_columns`] (paths, and the values of statistics).
//!
//! Invariant: row `i` is `text[ends[i - 1]..ends[i]]` (from 0 for the first row), on char
//! boundaries; `ends` never decreases.

use crate::memory::block;

/// Gives back a vector's spare room when it exceeds an eighth of its length, as
/// [`Slab`](crate::file_set::Slab)'s
/// own trim does: a load over-reserves for its checkpoint's rows and that room is worth
/// returning, while a base that only grew by a few rows keeps its room rather than copying
/// its columns on every freeze.
pub(crate) fn trim<T>(v: &mut Vec<T>) {
    if v.capacity() - v.len() > v.len() / 8 {
        v.shrink_to_fit();
    }
}

/// Strings of one column, back to back in one arena.
#[derive(Debug, Clone, Default)]
pub(crate) struct Texts {
    text: String,
    ends: Vec<usize>,
}

impl Texts {
    /// Room for `rows` more row ends (the text grows on push, see [`Self::push`]).
    pub(crate) fn reserve_rows(&mut self, rows: usize) {
        self.ends.reserve(rows);
    }

    /// Number of rows.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }

    /// Where the arena starts: tests check that a column was moved, not copied.
    #[cfg(test)]
    pub(crate) fn as_ptr(&self) -> *const u8 {
        self.text.as_ptr()
    }

    /// Appends `s`. When the arena must grow and `rows` are expected in all, it grows to
    /// what they need at the average so far, so a load reserved for its rows copies its
    /// arena about once instead of at every doubling.
    pub(crate) fn push(&mut self, s: &str, rows: usize) {
        let need = self.text.len() + s.len();
        if need > self.text.capacity() {
            let per_row = need / (self.ends.len() + 1);
            let want = per_row.saturating_mul(rows.max(self.ends.len() + 1)) + per_row;
            self.grow(need, want, rows > self.ends.len());
        }
        self.text.push_str(s);
        self.ends.push(self.text.len());
    }

    /// Makes room for `need` bytes in all: exactly `want` (at least `need`) while the
    /// expected rows cover the arena's rows (`estimated`), since `reserve` would at least double
    /// the arena (a load whose later statistics are a little longer than its first ones
    /// would ask for 270 MB where 140 MB hold them); by doubling once the estimate is
    /// used up, so that rows beyond it cost amortised constant time.
    fn grow(&mut self, need: usize, want: usize, estimated: bool) {
        let additional = want.max(need) - self.text.len();
        if estimated {
            self.text.reserve_exact(additional);
        } else {
            self.text.reserve(additional);
        }
    }

    pub(crate) fn get(&self, i: usize) -> &str {
        let start = match i.checked_sub(1) {
            Some(p) => self.ends.get(p).copied().unwrap_or(0),
            None => 0,
        };
        let end = self.ends.get(i).copied().unwrap_or(start);
        self.text.get(start..end).unwrap_or("")
    }

    /// Appends every string of `other`; grows as [`push`](Self::push) does.
    pub(crate) fn extend(&mut self, other: &Texts, rows: usize) {
        let offset = self.text.len();
        let need = offset + other.text.len();
        if need > self.text.capacity() {
            let per_row = need / (self.ends.len() + other.ends.len()).max(1);
            let want = per_row.saturating_mul(rows) + other.text.len();
            self.grow(need, want, rows >= self.ends.len() + other.ends.len());
        }
        self.text.push_str(&other.text);
        self.ends.extend(other.ends.iter().map(|e| e + offset));
    }

    /// Keeps the first `rows` strings.
    pub(crate) fn truncate(&mut self, rows: usize) {
        let end = match rows.checked_sub(1) {
            Some(last) => self.ends.get(last).copied().unwrap_or(0),
            None => 0,
        };
        self.text.truncate(end);
        self.ends.truncate(rows);
    }

    pub(crate) fn shrink(&mut self) {
        // As `trim`, for the arena.
        if self.text.capacity() - self.text.len() > self.text.len() / 8 {
            self.text.shrink_to_fit();
        }
        trim(&mut self.ends);
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        block(self.text.capacity()).saturating_add(block(
            self.ends
                .capacity()
                .saturating_mul(std::mem::size_of::<usize>()),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An arena grows to its estimate exactly while rows are still expected (a later,
    /// slightly longer chunk does not double it), and by doubling past the estimate.
    #[test]
    fn arenas_grow_to_their_estimate_not_to_double() {
        let chunk = |s: &str| {
            let mut c = Texts::default();
            for _ in 0..10 {
                c.push(s, 10);
            }
            c
        };
        let mut t = Texts::default();
        // 4 bytes a row, 20 rows expected: 80 plus the chunk's 40.
        t.extend(&chunk("aaaa"), 20);
        assert_eq!(t.text.capacity(), 120);
        // 130 bytes needed: 6 a row, 20 rows: 120 plus the chunk's 90, not 2 x 120.
        t.extend(&chunk("aaaaaaaaa"), 20);
        assert_eq!(t.text.capacity(), 210);
        assert_eq!(t.get(10), "aaaaaaaaa");
        // Past the estimate, pushes grow the arena geometrically.
        let mut reallocations = 0;
        for _ in 0..1000 {
            let before = t.text.capacity();
            t.push("bbbbbbbbbbbbbbbb", 20);
            reallocations += usize::from(t.text.capacity() != before);
        }
        assert!(reallocations < 20, "{reallocations} reallocations");
        assert_eq!(t.ends.len(), 1020);
    }
}
