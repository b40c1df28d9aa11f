//! A bounded pre-check of the Thrift structures of a Parquet checkpoint (the footer and the
//! page headers), run before the `parquet` crate decodes them.
//!
//! The `parquet` crate's Thrift decoder can spin for minutes on a few hostile bytes when it
//! skips fields it does not know: it skips a list of booleans without reading its elements
//! (2^31 iterations for a 6-byte list header), and skipping past the end of a page header's
//! input silently succeeds, so a long list of doubles or UUIDs at the end of the file loops
//! just as long. The walk here reads the same bytes in time linear in their length: every
//! element of a list, set or map must consume at least one byte, and running out of input
//! is an error. It rejects nothing a well-formed file contains.

use parquet::file::metadata::ParquetMetaData;

/// Nesting limit, as the `parquet` crate's own skipping uses.
const MAX_DEPTH: u32 = 64;

// Thrift compact-protocol type codes.
const STOP: u8 = 0;
const BOOL_TRUE: u8 = 1;
const BOOL_FALSE: u8 = 2;
const BYTE: u8 = 3;
const I16: u8 = 4;
const I32: u8 = 5;
const I64: u8 = 6;
const DOUBLE: u8 = 7;
const BINARY: u8 = 8;
const LIST: u8 = 9;
const SET: u8 = 10;
const MAP: u8 = 11;
const STRUCT: u8 = 12;
const UUID: u8 = 13;

/// `PageHeader.compressed_page_size` (field 3, i32).
const COMPRESSED_PAGE_SIZE: i16 = 3;

struct Walker<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl Walker<'_> {
    fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    fn take(&mut self, n: usize) -> Result<(), String> {
        if n > self.remaining() {
            return Err(format!(
                "Thrift data needs {n} bytes at offset {}, {} left",
                self.pos,
                self.remaining()
            ));
        }
        self.pos += n;
        Ok(())
    }

    fn byte(&mut self) -> Result<u8, String> {
        let b = *self
            .buf
            .get(self.pos)
            .ok_or_else(|| format!("Thrift data truncated at offset {}", self.pos))?;
        self.pos += 1;
        Ok(b)
    }

    /// An unsigned LEB128 varint; bits beyond 64 are dropped, as the `parquet` crate does.
    fn varint(&mut self) -> Result<u64, String> {
        let mut value = 0u64;
        let mut shift = 0u32;
        loop {
            let b = self.byte()?;
            if shift < 64 {
                value |= u64::from(b & 0x7f) << shift;
            }
            if b & 0x80 == 0 {
                return Ok(value);
            }
            shift = shift.saturating_add(7);
        }
    }

    /// A count of elements that each take at least `min_len` bytes.
    fn count(&mut self, n: u64, min_len: usize) -> Result<usize, String> {
        match usize::try_from(n) {
            Ok(n)
                if n.checked_mul(min_len)
                    .is_some_and(|len| len <= self.remaining()) =>
            {
                Ok(n)
            }
            _ => Err(format!(
                "Thrift collection of {n} elements at offset {} exceeds the {} bytes left",
                self.pos,
                self.remaining()
            )),
        }
    }

    /// Skips a value of type `ty` (a field type; booleans as collection elements are one byte).
    fn skip(&mut self, ty: u8, in_collection: bool, depth: u32) -> Result<(), String> {
        if depth == 0 {
            return Err("Thrift data nested too deeply".into());
        }
        match ty {
            BOOL_TRUE | BOOL_FALSE if in_collection => self.take(1),
            BOOL_TRUE | BOOL_FALSE => Ok(()),
            BYTE => self.take(1),
            I16 | I32 | I64 => self.varint().map(drop),
            DOUBLE => self.take(8),
            UUID => self.take(16),
            BINARY => {
                let len = self.varint()?;
                self.take(usize::try_from(len).unwrap_or(usize::MAX))
            }
            LIST | SET => {
                let header = self.byte()?;
                let elem = header & 0x0f;
                let n = match header >> 4 {
                    15 => self.varint()?,
                    n => u64::from(n),
                };
                if n == 0 {
                    return Ok(());
                }
                for _ in 0..self.count(n, min_len(elem)?)? {
                    self.skip(elem, true, depth - 1)?;
                }
                Ok(())
            }
            MAP => {
                let n = self.varint()?;
                if n == 0 {
                    return Ok(());
                }
                let kv = self.byte()?;
                let (key, value) = (kv >> 4, kv & 0x0f);
                for _ in 0..self.count(n, min_len(key)? + min_len(value)?)? {
                    self.skip(key, true, depth - 1)?;
                    self.skip(value, true, depth - 1)?;
                }
                Ok(())
            }
            STRUCT => self.strukt(depth - 1, None).map(drop),
            other => Err(format!(
                "invalid Thrift type {other} at offset {}",
                self.pos
            )),
        }
    }

    /// Walks a struct up to and including its stop byte; returns the value of field `want`
    /// if it is present as an i32.
    fn strukt(&mut self, depth: u32, want: Option<i16>) -> Result<Option<i64>, String> {
        if depth == 0 {
            return Err("Thrift data nested too deeply".into());
        }
        let mut last_id: i16 = 0;
        let mut found = None;
        loop {
            let header = self.byte()?;
            let ty = header & 0x0f;
            if ty == STOP {
                return Ok(found);
            }
            let id = match header >> 4 {
                0 => zigzag(self.varint()?) as i16,
                delta => last_id.wrapping_add(i16::from(delta)),
            };
            last_id = id;
            if Some(id) == want && ty == I32 {
                found = Some(zigzag(self.varint()?));
            } else {
                self.skip(ty, false, depth)?;
            }
        }
    }
}

/// The fewest bytes a collection element of type `ty` takes.
fn min_len(ty: u8) -> Result<usize, String> {
    match ty {
        DOUBLE => Ok(8),
        UUID => Ok(16),
        BOOL_TRUE..=STRUCT => Ok(1),
        other => Err(format!("invalid Thrift element type {other}")),
    }
}

fn zigzag(v: u64) -> i64 {
    (v >> 1) as i64 ^ -((v & 1) as i64)
}

/// Checks the footer (`FileMetaData`) of a Parquet file. Files without a plain footer are
/// left for the `parquet` crate to reject.
pub(crate) fn check_footer(data: &[u8]) -> Result<(), String> {
    let Some((body, tail)) = data.split_last_chunk::<8>() else {
        return Ok(());
    };
    if &tail[4..] != b"PAR1" {
        return Ok(());
    }
    let len = u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]) as usize;
    let Some(start) = body.len().checked_sub(len) else {
        return Ok(());
    };
    let mut w = Walker {
        buf: &body[start..],
        pos: 0,
    };
    w.strukt(MAX_DEPTH, None)
        .map(drop)
        .map_err(|e| format!("malformed footer: {e}"))
}

/// Checks every page header of every column chunk, following the chunks' pages exactly as
/// the `parquet` crate's page reader does. Chunks whose layout that reader rejects anyway
/// (out of range, inconsistent sizes) are not followed further.
pub(crate) fn check_page_headers(data: &[u8], metadata: &ParquetMetaData) -> Result<(), String> {
    for column in metadata.row_groups().iter().flat_map(|rg| rg.columns()) {
        let start = column
            .dictionary_page_offset()
            .unwrap_or_else(|| column.data_page_offset());
        let (Ok(mut offset), Ok(mut remaining)) = (
            usize::try_from(start),
            usize::try_from(column.compressed_size()),
        ) else {
            continue;
        };
        while remaining > 0 && offset < data.len() {
            let mut w = Walker {
                buf: &data[offset..],
                pos: 0,
            };
            let compressed = w
                .strukt(MAX_DEPTH, Some(COMPRESSED_PAGE_SIZE))
                .map_err(|e| format!("malformed page header at offset {offset}: {e}"))?;
            let Some(rest) = remaining.checked_sub(w.pos) else {
                break;
            };
            let Some(size) = compressed
                .and_then(|c| usize::try_from(c).ok())
                .filter(|&c| c <= rest)
            else {
                break;
            };
            offset += w.pos + size;
            remaining = rest - size;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn walk(bytes: &[u8]) -> Result<Option<i64>, String> {
        Walker { buf: bytes, pos: 0 }.strukt(MAX_DEPTH, Some(COMPRESSED_PAGE_SIZE))
    }

    #[test]
    fn walks_well_formed_structs() {
        // {1: i32 0, 2: i32 -1, 3: i32 100, 5: struct {1: list<bool> [true, false], 2: map<i32, double>
        //  {1: 0.0}, 3: binary "ab", 4: true}}
        let mut s = vec![0x15, 0x00, 0x15, 0x01, 0x15, 0xc8, 0x01, 0x2c];
        s.extend_from_slice(&[0x19, 0x21, 0x01, 0x02, 0x1b, 0x01, 0x57, 0x02]);
        s.extend_from_slice(&[0; 8]);
        s.extend_from_slice(&[0x18, 0x02, b'a', b'b', 0x11, 0x00, 0x00]);
        assert_eq!(walk(&s), Ok(Some(100)));
        // Long-form field ids and a struct without the wanted field.
        assert_eq!(walk(&[0x05, 0xc8, 0x01, 0x03, 0x00]), Ok(None));
    }

    #[test]
    fn rejects_collections_larger_than_their_input() {
        // An unknown field 9 holding list<bool> of 2^31 - 1 elements: 6 bytes of input.
        assert!(walk(&[0x99, 0xf1, 0xff, 0xff, 0xff, 0xff, 0x07, 0x00]).is_err());
        // list<uuid> of 16 elements with 20 bytes left.
        let mut s = vec![0x99, 0xfd, 0x10];
        s.extend_from_slice(&[0; 20]);
        assert!(walk(&s).is_err());
        // map<bool, bool> of 2^31 - 1 entries.
        assert!(walk(&[0x9b, 0xff, 0xff, 0xff, 0xff, 0x07, 0x11, 0x00]).is_err());
        // Binary running past the end, truncation, a bad type, deep nesting.
        assert!(walk(&[0x98, 0x7f, 0x00]).is_err());
        assert!(walk(&[0x15]).is_err());
        assert!(walk(&[0x1e, 0x00]).is_err());
        assert!(walk(&[0x1c; 200]).is_err());
    }
}
