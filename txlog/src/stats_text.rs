//! The statistics column of [`crate::file_columns`]: every file's statistics JSON, kept
//! exactly, as a *shape* many files share plus the file's own values.
//!
//! A table's files carry statistics of one form, `{"numRecords":…,"minValues":{"id":…}…}`:
//! the keys and the punctuation repeat file after file and only the scalar values differ.
//! Here a text is cut into its shape (the text with each scalar value replaced by a hole,
//! the byte NUL) and its values (the cut-out spans, joined by NUL). Shapes are interned; a
//! row holds a 4-byte shape code and its values. On the generated million-file table
//! (`alluvium-bench gen-log`) a file's statistics take 42 bytes instead of 138.
//!
//! Exactness does not rest on the JSON being valid: a cut only partitions the text into
//! spans, so joining them gives the text back byte for byte, whatever it holds. A text the
//! cutter does not follow (an unterminated string, a NUL byte) is kept whole, as is any text
//! of a new shape once the shapes hold [`MAX_SHAPE_BYTES`].
//!
//! Invariants:
//! 1. `codes[i]` is [`RAW`] or indexes `shapes`; row `i` of `values` is then the whole
//!    text, or one value per hole of the shape, joined by NUL.
//! 2. No shape or value holds NUL but as hole or separator: joining the shape's segments
//!    with the values gives back the text pushed.
//! 3. `lookup` holds exactly the indexes of `shapes`; `shape_bytes` is their total length.

use std::borrow::Cow;

use hashbrown::HashTable;

use crate::memory::{block, hash_table};
use crate::texts::{Texts, trim};

/// Stands for a value in a shape, and separates a row's values.
const HOLE: u8 = 0;
const HOLE_CHAR: char = '\0';
/// The code of a row kept whole.
const RAW: u32 = u32::MAX;
/// Shapes are interned until they hold this many bytes; a text of a new shape beyond it is
/// kept whole. It bounds the dictionary for tables whose statistics vary in form (a schema
/// that keeps changing, writers that each spell statistics their own way): their rows then
/// cost what a plain arena costs.
const MAX_SHAPE_BYTES: usize = 4 << 20;
/// Encoding pays where files come in long runs of one shape: a run costs one comparison a
/// row. Where most rows need a full cut instead (writers that spell statistics keys in
/// hash-map order, as delta-rs does, give each file one of many shapes), cutting costs
/// about half a microsecond a row, several times the rest of a load's work on it. So once
/// this many rows have been pushed, a column that needed a cut for more than a quarter of
/// them keeps its later texts whole.
const PROBE_ROWS: u32 = 64;

/// An interned shape: its text, with a NUL at each hole, and the holes' offsets.
#[derive(Debug, Clone)]
struct Shape {
    text: Box<str>,
    /// Below [`MAX_SHAPE_BYTES`], so `u32`.
    holes: Box<[u32]>,
}

/// Statistics texts as shapes and values (see the module docs).
#[derive(Debug, Clone, Default)]
pub(crate) struct StatsTexts {
    codes: Vec<u32>,
    values: Texts,
    shapes: Vec<Shape>,
    lookup: HashTable<u32>,
    shape_bytes: usize,
    hashing: hashbrown::DefaultHashBuilder,
    /// The shape of the last row pushed with one, tried first for the next: files come in
    /// runs of one shape.
    last: Option<u32>,
    /// Scratch for cutting a text of a new shape.
    scratch: (String, String),
    /// Rows pushed and rows that needed a cut, up to [`PROBE_ROWS`] pushes.
    probe: (u32, u32),
    /// Set when the probe found too many cuts: later pushes keep texts whole.
    whole: bool,
}

impl StatsTexts {
    /// Room for `rows` more rows (the values arena grows on push, as [`Texts::push`]).
    pub(crate) fn reserve_rows(&mut self, rows: usize) {
        self.codes.reserve(rows);
        self.values.reserve_rows(rows);
    }

    /// Appends `text`, `rows` rows expected in all (as [`Texts::push`]).
    pub(crate) fn push(&mut self, text: &str, rows: usize) {
        if self.whole {
            self.values.push(text, rows);
            self.codes.push(RAW);
            return;
        }
        if self.probe.0 < PROBE_ROWS {
            self.probe.0 += 1;
        }
        if let Some(code) = self.last
            && let Some(shape) = self.shapes.get(code as usize)
        {
            let (_, values) = &mut self.scratch;
            values.clear();
            if fill(shape, text, values) {
                self.values.push(values, rows);
                self.codes.push(code);
                return;
            }
        }
        if self.probe.0 < PROBE_ROWS {
            self.probe.1 += 1;
        } else if self.probe.1 > PROBE_ROWS / 4 {
            self.whole = true;
        }
        let (mut shape, mut values) = std::mem::take(&mut self.scratch);
        shape.clear();
        values.clear();
        let code = if !text.is_empty() && cut(text, &mut shape, &mut values) {
            self.intern(&shape)
        } else {
            RAW
        };
        if code == RAW {
            self.values.push(text, rows);
        } else {
            self.values.push(&values, rows);
            self.last = Some(code);
        }
        self.codes.push(code);
        self.scratch = (shape, values);
    }

    /// The code of `shape`, added if new; [`RAW`] when new and the shapes are full.
    fn intern(&mut self, shape: &str) -> u32 {
        use std::hash::BuildHasher;
        let hash = self.hashing.hash_one(shape);
        let shapes = &self.shapes;
        if let Some(&code) = self.lookup.find(hash, |&c| {
            shapes.get(c as usize).map(|s| &*s.text) == Some(shape)
        }) {
            return code;
        }
        let Ok(code) = u32::try_from(self.shapes.len()) else {
            return RAW;
        };
        if code == RAW || self.shape_bytes.saturating_add(shape.len()) > MAX_SHAPE_BYTES {
            return RAW;
        }
        self.shapes.push(Shape {
            text: shape.into(),
            holes: memchr::memchr_iter(HOLE, shape.as_bytes())
                .map(|h| h as u32)
                .collect(),
        });
        self.shape_bytes += shape.len();
        let (shapes, hashing) = (&self.shapes, &self.hashing);
        self.lookup.insert_unique(hash, code, |&c| {
            shapes
                .get(c as usize)
                .map_or(0, |s| hashing.hash_one(&*s.text))
        });
        code
    }

    /// Row `row`'s text: borrowed when kept whole, else rebuilt.
    pub(crate) fn get(&self, row: usize) -> Cow<'_, str> {
        let code = self.codes.get(row).copied().unwrap_or(RAW);
        let values = self.values.get(row);
        match self.shapes.get(code as usize) {
            None => Cow::Borrowed(values),
            Some(shape) => {
                let mut out = String::new();
                join(shape, values, &mut out);
                Cow::Owned(out)
            }
        }
    }

    /// Appends row `row`'s text to `out`, without an allocation of its own.
    pub(crate) fn write_to(&self, row: usize, out: &mut String) {
        let code = self.codes.get(row).copied().unwrap_or(RAW);
        let values = self.values.get(row);
        match self.shapes.get(code as usize) {
            None => out.push_str(values),
            Some(shape) => join(shape, values, out),
        }
    }

    /// Appends every row of `other`, `rows` rows expected in all.
    pub(crate) fn extend(&mut self, other: &StatsTexts, rows: usize) {
        let codes: Vec<u32> = other.shapes.iter().map(|s| self.intern(&s.text)).collect();
        let recode = |c: u32| codes.get(c as usize).copied().unwrap_or(RAW);
        let all_kept = other.codes.iter().all(|&c| c == RAW || recode(c) != RAW);
        if all_kept {
            self.values.extend(&other.values, rows);
            self.codes.extend(other.codes.iter().map(|&c| recode(c)));
        } else {
            // Some shapes did not fit here: those rows are kept whole.
            for (row, &c) in other.codes.iter().enumerate() {
                self.push_recoded(other, row, recode(c), rows);
            }
        }
        if let Some(last) = other.last.map(recode).filter(|&c| c != RAW) {
            self.last = Some(last);
        }
    }

    /// Appends row `row` of `from`, `rows` rows expected in all: its values as they are,
    /// under this column's code for its shape, without rebuilding and cutting the text again
    /// (a freeze that rebuilds a base copies every row this way). A row kept whole there is
    /// kept whole here.
    pub(crate) fn push_copy(&mut self, from: &StatsTexts, row: usize, rows: usize) {
        let Some(shape) = from
            .codes
            .get(row)
            .and_then(|&c| from.shapes.get(c as usize))
        else {
            self.values.push(from.values.get(row), rows);
            self.codes.push(RAW);
            return;
        };
        let code = match self.last {
            // Runs of one shape: compared with the last one, not hashed.
            Some(c)
                if self
                    .shapes
                    .get(c as usize)
                    .is_some_and(|s| s.text == shape.text) =>
            {
                c
            }
            _ => self.intern(&shape.text),
        };
        self.push_recoded(from, row, code, rows);
        if code != RAW {
            self.last = Some(code);
        }
    }

    /// Appends row `row` of `from` under `code`, this column's code for the row's shape;
    /// [`RAW`] (the row was kept whole there, or its shape is new here and there is no room
    /// for it) rebuilds the text and keeps it whole.
    fn push_recoded(&mut self, from: &StatsTexts, row: usize, code: u32, rows: usize) {
        if code != RAW {
            self.values.push(from.values.get(row), rows);
            self.codes.push(code);
            return;
        }
        let mut text = std::mem::take(&mut self.scratch.0);
        text.clear();
        from.write_to(row, &mut text);
        self.values.push(&text, rows);
        self.codes.push(RAW);
        self.scratch.0 = text;
    }

    /// Number of rows.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.codes.len()
    }

    /// Keeps the first `rows` rows. Shapes only they used stay in the dictionary, unused.
    pub(crate) fn truncate(&mut self, rows: usize) {
        self.codes.truncate(rows);
        self.values.truncate(rows);
    }

    /// Gives back spare room beyond an eighth (as [`Texts::shrink`]).
    pub(crate) fn shrink(&mut self) {
        trim(&mut self.codes);
        self.values.shrink();
        trim(&mut self.shapes);
        self.scratch = Default::default();
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        let shapes = self.shapes.iter().fold(
            block(self.shapes.capacity() * std::mem::size_of::<Shape>()),
            |n, s| {
                n.saturating_add(block(s.text.len()))
                    .saturating_add(block(s.holes.len() * std::mem::size_of::<u32>()))
            },
        );
        [
            block(self.codes.capacity() * std::mem::size_of::<u32>()),
            self.values.heap_bytes(),
            shapes,
            hash_table(self.lookup.capacity(), 4),
            block(self.scratch.0.capacity()),
            block(self.scratch.1.capacity()),
        ]
        .iter()
        .fold(0usize, |n, b| n.saturating_add(*b))
    }
}

/// Pushes each of `texts` into a column, half of them into a second column extended by the
/// first, and reads every row back: what a fuzz target checks equals `texts`. Not part of
/// the API.
#[doc(hidden)]
pub fn shaped_round_trip(texts: &[&str]) -> Vec<String> {
    let half = texts.len() / 2;
    let mut first = StatsTexts::default();
    for t in texts.get(half..).unwrap_or_default() {
        first.push(t, texts.len());
    }
    let mut column = StatsTexts::default();
    for t in texts.get(..half).unwrap_or_default() {
        column.push(t, texts.len());
    }
    column.extend(&first, texts.len());
    (0..texts.len())
        .map(|i| column.get(i).into_owned())
        .collect()
}

/// Appends `shape` with its holes filled by `values` (NUL-separated) to `out`.
///
/// The segments come from the shape's hole offsets; a value ends at the next NUL, found by
/// a plain loop (values are a few bytes), and the last one at the end of `values`. A
/// checkpoint of a million files runs this once a file.
fn join(shape: &Shape, values: &str, out: &mut String) {
    out.reserve(shape.text.len() + values.len());
    let v = values.as_bytes();
    let (mut from, mut at) = (0usize, 0usize);
    for (k, &hole) in shape.holes.iter().enumerate() {
        let hole = hole as usize;
        out.push_str(shape.text.get(from..hole).unwrap_or_default());
        let end = if k + 1 == shape.holes.len() {
            v.len()
        } else {
            v.get(at..)
                .and_then(|r| r.iter().position(|&b| b == HOLE))
                .map_or(v.len(), |n| at + n)
        };
        out.push_str(values.get(at..end).unwrap_or_default());
        at = end + 1;
        from = hole + 1;
    }
    out.push_str(shape.text.get(from..).unwrap_or_default());
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// The bytes that end a bare value (a number, `true`, `false`, `null`, or anything else
/// outside quotes): a table, as the scan over every value of a million files reads it.
const ENDS_BARE: [bool; 256] = {
    let mut t = [false; 256];
    let ends = b" \t\n\r,:{}[]\"\0";
    let mut i = 0;
    while i < ends.len() {
        t[ends[i] as usize] = true;
        i += 1;
    }
    t
};

/// The index just past the string starting with the quote at `start`; `None` when it is
/// not terminated or holds NUL. A plain loop: statistics strings are short (writers
/// truncate them), shorter than a vectorised search pays off.
fn string_end(text: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    loop {
        match *text.get(i)? {
            b'"' => return Some(i + 1),
            b'\\' => i += 2,
            HOLE => return None,
            _ => i += 1,
        }
    }
}

/// Whether `text` starts with `prefix`, compared inline: the segments between a shape's
/// holes are a few bytes each, too short to pay for a call to `memcmp`.
fn starts_with(text: &[u8], prefix: &[u8]) -> bool {
    let Some(head) = text.get(..prefix.len()) else {
        return false;
    };
    let mut a = head.chunks_exact(8);
    let mut b = prefix.chunks_exact(8);
    for (x, y) in (&mut a).zip(&mut b) {
        if x != y {
            return false;
        }
    }
    a.remainder().iter().zip(b.remainder()).all(|(x, y)| x == y)
}

/// The index just past the value starting at `start` (not at the end of `text`).
fn value_end(text: &[u8], start: usize) -> Option<usize> {
    if text.get(start) == Some(&b'"') {
        return string_end(text, start);
    }
    let len = text
        .get(start..)?
        .iter()
        .position(|&b| ENDS_BARE[b as usize])
        .unwrap_or(text.len() - start);
    (len > 0).then_some(start + len)
}

/// Cuts `text` into its shape and values (appended to `shape` and `values`); false when
/// the text is not one this cutter follows (it is then kept whole).
///
/// Punctuation and whitespace stay in the shape, as do strings followed by `:` (object
/// keys); every other string and every bare literal is a value.
fn cut(text: &str, shape: &mut String, values: &mut String) -> bool {
    let b = text.as_bytes();
    if memchr::memchr(HOLE, b).is_some() {
        return false;
    }
    let mut i = 0;
    let mut kept = 0;
    let mut holes = 0usize;
    while let Some(&c) = b.get(i) {
        if is_space(c) || matches!(c, b',' | b':' | b'{' | b'}' | b'[' | b']') {
            i += 1;
            continue;
        }
        let Some(end) = value_end(b, i) else {
            return false;
        };
        if c == b'"' {
            let next = b
                .get(end..)
                .and_then(|r| r.iter().position(|&x| !is_space(x)));
            if next.and_then(|n| b.get(end + n)) == Some(&b':') {
                i = end;
                continue;
            }
        }
        // Every cut is at an ASCII byte or at the text's end: char boundaries.
        let (Some(before), Some(value)) = (text.get(kept..i), text.get(i..end)) else {
            return false;
        };
        shape.push_str(before);
        shape.push(HOLE_CHAR);
        if holes > 0 {
            values.push(HOLE_CHAR);
        }
        values.push_str(value);
        holes += 1;
        kept = end;
        i = end;
    }
    match text.get(kept..) {
        Some(rest) => {
            shape.push_str(rest);
            true
        }
        None => false,
    }
}

/// The index of the first `stop` (not NUL) at or after `start`; `None` when a NUL comes
/// first or there is none. Eight bytes at a time: `(x - 1) & !x & 0x80` marks a zero byte
/// exactly at the lowest one marked (a borrow only reaches bytes above it).
fn bare_until(text: &[u8], start: usize, stop: u8) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let zero_bytes = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS;
    let mut i = start;
    while let Some(chunk) = text.get(i..i + 8) {
        let x = u64::from_le_bytes(chunk.try_into().ok()?);
        let found = zero_bytes(x) | zero_bytes(x ^ (ONES * u64::from(stop)));
        if found != 0 {
            let n = i + (found.trailing_zeros() / 8) as usize;
            return (text.get(n) == Some(&stop)).then_some(n);
        }
        i += 8;
    }
    let n = i + text
        .get(i..)?
        .iter()
        .position(|&b| b == stop || b == HOLE)?;
    (text.get(n) == Some(&stop)).then_some(n)
}

/// Reads `text` as an instance of `shape`, whose holes are at `holes`, appending its
/// values to `values`; false when it is not one (`values` then holds some of them).
fn fill(shape: &Shape, text: &str, values: &mut String) -> bool {
    let (s, b) = (shape.text.as_bytes(), text.as_bytes());
    let mut at = 0;
    let mut from = 0;
    for (k, &hole) in shape.holes.iter().enumerate() {
        let hole = hole as usize;
        let Some(segment) = s.get(from..hole) else {
            return false;
        };
        if !starts_with(b.get(at..).unwrap_or_default(), segment) {
            return false;
        }
        at += segment.len();
        // A bare value runs to the next segment's first byte, found eight bytes at a time;
        // whatever it holds, the segment's comparison below checks the split.
        let end = match s.get(hole + 1) {
            Some(&stop) if stop != HOLE && b.get(at) != Some(&b'"') => bare_until(b, at, stop),
            _ => value_end(b, at),
        };
        let Some(end) = end else {
            return false;
        };
        let Some(value) = text.get(at..end) else {
            return false;
        };
        if k > 0 {
            values.push(HOLE_CHAR);
        }
        values.push_str(value);
        at = end;
        from = hole + 1;
    }
    let rest = s.get(from..).unwrap_or_default();
    b.get(at..).is_some_and(|r| r == rest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::file_columns::testing::Rng;

    fn round_trip(texts: &[&str]) -> StatsTexts {
        let mut s = StatsTexts::default();
        for t in texts {
            s.push(t, texts.len());
        }
        for (i, t) in texts.iter().enumerate() {
            assert_eq!(s.get(i), *t, "row {i}");
            let mut out = String::from(">");
            s.write_to(i, &mut out);
            assert_eq!(out, format!(">{t}"), "row {i}");
        }
        s
    }

    /// Statistics of one form share one shape, and each row keeps only its values.
    #[test]
    fn one_form_is_one_shape() {
        let s = round_trip(&[
            r#"{"numRecords":10,"minValues":{"id":1,"s":"a,b"},"maxValues":{"id":9,"s":"z\"}"},"nullCount":{"id":0,"s":0}}"#,
            r#"{"numRecords":7,"minValues":{"id":-2.5e3,"s":""},"maxValues":{"id":null,"s":"\\"},"nullCount":{"id":true,"s":3}}"#,
        ]);
        assert_eq!(s.shapes.len(), 1);
        assert_eq!(
            s.values.get(0).split('\0').collect::<Vec<_>>(),
            ["10", "1", "\"a,b\"", "9", "\"z\\\"}\"", "0", "0"]
        );
        assert!(s.codes.iter().all(|&c| c == 0));
    }

    /// Texts that are not statistics, or not JSON, come back exactly, some kept whole.
    #[test]
    fn any_text_comes_back_exactly() {
        let s = round_trip(&[
            "",
            "{}",
            " { \"a\" : [ 1 , \"x\" , { } ] } ",
            "{\"a\":\"unterminated",
            "{\"a\":1\0}",
            "{\"a\":1}trailing garbage",
            "{\"é\":\"ü\",\"k\":1e999}",
            "\"key\":",
            "::,,{{]]",
            "tru e fal se",
            "{\"a\":1}",
            "{\"a\":22}",
        ]);
        for raw in [0, 3, 4] {
            assert_eq!(s.codes[raw], RAW, "row {raw}");
        }
        assert_eq!(s.codes[10], s.codes[11]);
    }

    /// Random texts over JSON's punctuation, quotes, escapes and NUL, pushed, extended
    /// into another column, truncated: every row reads back as pushed.
    #[test]
    fn random_texts_round_trip_through_push_extend_and_truncate() {
        const ALPHABET: &[&str] = &[
            "{", "}", "[", "]", ":", ",", " ", "\"", "\\", "\"k\":", "1", "-2.5", "null", "é",
            "\0", "\"v\"", "\n",
        ];
        let mut rng = Rng(7);
        for round in 0..300 {
            let rows = 1 + rng.below(20) as usize;
            let texts: Vec<String> = (0..rows)
                .map(|_| {
                    let mut t = String::new();
                    if rng.chance(2) {
                        t.push_str(r#"{"numRecords":5,"minValues":{"a":1}}"#);
                    }
                    for _ in 0..rng.below(12) {
                        t.push_str(ALPHABET[rng.below(ALPHABET.len() as u64) as usize]);
                    }
                    t
                })
                .collect();
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            let chunk = round_trip(&refs);
            let mut base = round_trip(&refs[..rows / 2]);
            base.extend(&chunk, rows + rows / 2);
            for (i, t) in refs[..rows / 2].iter().chain(&refs).enumerate() {
                assert_eq!(base.get(i), *t, "round {round} row {i}");
            }
            base.truncate(rows / 2);
            base.push("{\"z\":0}", 0);
            assert_eq!(base.get(rows / 2), "{\"z\":0}");
        }
    }

    /// Keys in a different order in every file (delta-rs spells statistics in hash-map
    /// order): after the probe, texts are kept whole instead of cut; one shape repeated
    /// with a few others stays encoded.
    #[test]
    fn a_column_of_many_shapes_stops_cutting() {
        let keys = ["a", "b", "c", "d"];
        let text = |i: usize| {
            let (x, y) = (keys[i % 4], keys[(i / 4) % 4]);
            format!(r#"{{"minValues":{{"{x}":{i},"{y}":"s{i}"}}}}"#)
        };
        let texts: Vec<String> = (0..200).map(text).collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let varied = round_trip(&refs);
        assert!(varied.whole);
        assert!(
            varied.codes[..PROBE_ROWS as usize]
                .iter()
                .all(|&c| c != RAW)
        );
        assert!(
            varied.codes[PROBE_ROWS as usize + 1..]
                .iter()
                .all(|&c| c == RAW)
        );

        let mostly: Vec<String> = (0..200)
            .map(|i| if i % 10 == 0 { text(i + 1) } else { text(0) })
            .collect();
        let refs: Vec<&str> = mostly.iter().map(String::as_str).collect();
        let uniform = round_trip(&refs);
        assert!(!uniform.whole);
        assert!(uniform.codes.iter().all(|&c| c != RAW));
    }

    /// The word-at-a-time search finds the first stop byte, and fails at a NUL before it,
    /// at every position within and across eight-byte words.
    #[test]
    fn bare_values_end_at_the_first_stop() {
        for len in 0..20 {
            for at in 0..=len {
                let mut text = vec![b'7'; len];
                if at < len {
                    text[at] = b',';
                }
                text.extend_from_slice(b",x");
                assert_eq!(bare_until(&text, 0, b','), Some(at.min(len)), "{len} {at}");
                if at < len {
                    text[at] = HOLE;
                    assert_eq!(bare_until(&text, 0, b','), None, "{len} {at}");
                }
            }
        }
        assert_eq!(bare_until(b"123", 0, b','), None);
        assert_eq!(bare_until(b"12}3", 1, b'}'), Some(2));
    }

    /// Rows copied one by one into another column come back exactly, keep their shapes
    /// (recoded into the new dictionary) and stay whole where they were whole; past the
    /// new column's shape budget they are rebuilt and kept whole.
    #[test]
    fn copied_rows_keep_their_shapes() {
        let texts = [
            r#"{"a":1,"b":"x"}"#,
            r#"{"a":2,"b":"y"}"#,
            "{\"a\":\"unterminated",
            r#"{"c":[1,2]}"#,
            r#"{"a":3,"b":"z"}"#,
            "",
        ];
        let from = round_trip(&texts);
        let mut to = StatsTexts::default();
        to.push(r#"{"c":[7,8]}"#, 8);
        for row in 0..texts.len() {
            to.push_copy(&from, row, 8);
        }
        for (i, t) in texts.iter().enumerate() {
            assert_eq!(to.get(i + 1), *t, "row {i}");
            assert_eq!(to.codes[i + 1] == RAW, from.codes[i] == RAW, "row {i}");
        }
        assert_eq!(to.shapes.len(), 2);
        assert_eq!(to.codes[4], to.codes[0]);

        let mut full = StatsTexts::default();
        let wide = format!("{{\"{}\":1}}", "k".repeat(MAX_SHAPE_BYTES));
        full.push(&wide, 2);
        assert_eq!(full.codes, vec![RAW]);
        full.shape_bytes = MAX_SHAPE_BYTES;
        full.push_copy(&from, 0, 2);
        assert_eq!(full.codes[1], RAW);
        assert_eq!(full.get(1), texts[0]);
    }

    /// Past the shape budget, texts of new shapes are kept whole, and an extend recodes
    /// what fits and keeps the rest whole.
    #[test]
    fn shapes_are_bounded() {
        let mut s = StatsTexts::default();
        let wide = |n: usize| format!("{{\"{}\":1}}", "k".repeat(n));
        let big = MAX_SHAPE_BYTES / 2;
        s.push(&wide(big), 3);
        s.push(&wide(big + 1), 3);
        s.push(&wide(big), 3);
        assert_eq!(s.shapes.len(), 1);
        assert_eq!(s.codes, vec![0, RAW, 0]);
        let mut other = StatsTexts::default();
        other.push(&wide(big + 2), 1);
        other.push("{\"a\":2}", 1);
        s.extend(&other, 5);
        assert_eq!(s.codes[3], RAW);
        assert_ne!(s.codes[4], RAW);
        for (i, t) in [wide(big), wide(big + 1), wide(big), wide(big + 2)]
            .iter()
            .enumerate()
        {
            assert_eq!(s.get(i), *t);
        }
        assert_eq!(s.get(4), "{\"a\":2}");
    }
}
