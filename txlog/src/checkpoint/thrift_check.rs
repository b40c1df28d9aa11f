//! Guards around the `parquet` crate's Thrift decoding of a checkpoint's footer and page
//! headers, which can spin for minutes or overflow the stack on a few hostile bytes:
//!
//! * skipping an unknown field skips a list of booleans without reading its elements
//!   (2^31 iterations for a 6-byte list header);
//! * page headers are decoded from a [`Read`], and skipping past its end succeeds silently,
//!   so a huge list of doubles or UUIDs at the end of the file is "skipped" element by
//!   element;
//! * the schema and the column readers are built recursively, so a few kilobytes of nested
//!   groups overflow the stack (about 500 levels on a 2 MiB thread, rayon's default).
//!
//! [`GuardedBytes`] closes the second hole: its readers fail instead of reporting end of
//! file twice. [`check_footer`] and [`check_page_headers`] close the other two by reading
//! the footer and the page headers first, the way the `parquet` crate (60.x) will: known
//! fields by their ids, following the tables below (which mirror its readers), unknown
//! fields skipped by their declared types with its semantics. A known field whose declared
//! type does not match is refused, since the crate would read it as the expected type
//! and the two readings would part. The walk takes time linear in the input: collections
//! may not be larger than the input (booleans, which take no bytes when skipped, are
//! allowed one per byte of input), and schemas may not nest deeper than
//! [`MAX_SCHEMA_DEPTH`].

use std::io::Read;

use bytes::Bytes;
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
/// `FileMetaData.schema` (field 2, list<SchemaElement>).
const FILE_SCHEMA: i16 = 2;
/// `SchemaElement.num_children` (field 5, i32).
const NUM_CHILDREN: i16 = 5;

/// The deepest nesting of groups accepted in a checkpoint's schema (Arrow C++ has the same
/// limit for nested types).
pub(crate) const MAX_SCHEMA_DEPTH: usize = 64;

/// The type the `parquet` crate reads a known field as.
#[derive(Clone, Copy)]
enum Ty {
    /// i16, i32, i64 and enums: a zigzag varint.
    Int,
    Byte,
    Double,
    /// Strings too.
    Binary,
    Bool,
    Struct(&'static [(i16, Ty)]),
    List(&'static Ty),
}

use Ty::{Binary, Bool, Byte, Double, Int, List, Struct};

const EMPTY: &[(i16, Ty)] = &[];
const KEY_VALUE: &[(i16, Ty)] = &[(1, Binary), (2, Binary)];
const TIME_UNIT: &[(i16, Ty)] = &[(1, Struct(EMPTY)), (2, Struct(EMPTY)), (3, Struct(EMPTY))];
const TIME_TYPE: &[(i16, Ty)] = &[(1, Bool), (2, Struct(TIME_UNIT))];
const LOGICAL_TYPE: &[(i16, Ty)] = &[
    (1, Struct(EMPTY)),
    (2, Struct(EMPTY)),
    (3, Struct(EMPTY)),
    (4, Struct(EMPTY)),
    (5, Struct(&[(1, Int), (2, Int)])),
    (6, Struct(EMPTY)),
    (7, Struct(TIME_TYPE)),
    (8, Struct(TIME_TYPE)),
    (10, Struct(&[(1, Byte), (2, Bool)])),
    (11, Struct(EMPTY)),
    (12, Struct(EMPTY)),
    (13, Struct(EMPTY)),
    (14, Struct(EMPTY)),
    (15, Struct(EMPTY)),
    (16, Struct(&[(1, Byte)])),
    (17, Struct(&[(1, Binary)])),
    (18, Struct(&[(1, Binary), (2, Int)])),
    (19, Struct(EMPTY)),
];
const SCHEMA_ELEMENT: &[(i16, Ty)] = &[
    (1, Int),
    (2, Int),
    (3, Int),
    (4, Binary),
    (5, Int),
    (6, Int),
    (7, Int),
    (8, Int),
    (9, Int),
    (10, Struct(LOGICAL_TYPE)),
];
const STATISTICS: &[(i16, Ty)] = &[
    (1, Binary),
    (2, Binary),
    (3, Int),
    (4, Int),
    (5, Binary),
    (6, Binary),
    (7, Bool),
    (8, Bool),
    (9, Int),
];
const BOUNDING_BOX: &[(i16, Ty)] = &[
    (1, Double),
    (2, Double),
    (3, Double),
    (4, Double),
    (5, Double),
    (6, Double),
    (7, Double),
    (8, Double),
];
const COLUMN_META_DATA: &[(i16, Ty)] = &[
    (1, Int),
    (2, List(&Int)),
    (3, List(&Binary)),
    (4, Int),
    (5, Int),
    (6, Int),
    (7, Int),
    (8, List(&Struct(KEY_VALUE))),
    (9, Int),
    (10, Int),
    (11, Int),
    (12, Struct(STATISTICS)),
    (13, List(&Struct(&[(1, Int), (2, Int), (3, Int)]))),
    (14, Int),
    (15, Int),
    (16, Struct(&[(1, Int), (2, List(&Int)), (3, List(&Int))])),
    (17, Struct(&[(1, Struct(BOUNDING_BOX)), (2, List(&Int))])),
];
const COLUMN_CHUNK: &[(i16, Ty)] = &[
    (1, Binary),
    (2, Int),
    (3, Struct(COLUMN_META_DATA)),
    (4, Int),
    (5, Int),
    (6, Int),
    (7, Int),
    (
        8,
        Struct(&[
            (1, Struct(EMPTY)),
            (2, Struct(&[(1, List(&Binary)), (2, Binary)])),
        ]),
    ),
    (9, Binary),
];
const ROW_GROUP: &[(i16, Ty)] = &[
    (1, List(&Struct(COLUMN_CHUNK))),
    (2, Int),
    (3, Int),
    (4, List(&Struct(&[(1, Int), (2, Bool), (3, Bool)]))),
    (5, Int),
    (6, Int),
    (7, Int),
];
const COLUMN_ORDER: &[(i16, Ty)] = &[(1, Struct(EMPTY)), (2, Struct(EMPTY)), (3, Struct(EMPTY))];
const AES_GCM: &[(i16, Ty)] = &[(1, Binary), (2, Binary), (3, Bool)];
const FILE_META_DATA: &[(i16, Ty)] = &[
    (1, Int),
    (2, List(&Struct(SCHEMA_ELEMENT))),
    (3, Int),
    (4, List(&Struct(ROW_GROUP))),
    (5, List(&Struct(KEY_VALUE))),
    (6, Binary),
    (7, List(&Struct(COLUMN_ORDER))),
    (8, Struct(&[(1, Struct(AES_GCM)), (2, Struct(AES_GCM))])),
    (9, Binary),
];
const PAGE_HEADER: &[(i16, Ty)] = &[
    (1, Int),
    (2, Int),
    (3, Int),
    (4, Int),
    (
        5,
        Struct(&[
            (1, Int),
            (2, Int),
            (3, Int),
            (4, Int),
            (5, Struct(STATISTICS)),
        ]),
    ),
    (6, Struct(EMPTY)),
    (7, Struct(&[(1, Int), (2, Int), (3, Bool)])),
    (
        8,
        Struct(&[
            (1, Int),
            (2, Int),
            (3, Int),
            (4, Int),
            (5, Int),
            (6, Int),
            (7, Bool),
            (8, Struct(STATISTICS)),
        ]),
    ),
];

/// The class of wire encodings a type code stands for (`None` for invalid codes); types in
/// one class are read alike.
fn wire_class(code: u8) -> Option<u8> {
    Some(match code {
        BOOL_TRUE | BOOL_FALSE => BOOL_TRUE,
        I16 | I32 | I64 => I32,
        LIST | SET => LIST,
        BYTE | DOUBLE | BINARY | MAP | STRUCT | UUID => code,
        _ => return None,
    })
}

impl Ty {
    fn wire_class(self) -> u8 {
        match self {
            Int => I32,
            Byte => BYTE,
            Double => DOUBLE,
            Binary => BINARY,
            Bool => BOOL_TRUE,
            Struct(_) => STRUCT,
            List(_) => LIST,
        }
    }

    fn min_len(self) -> usize {
        match self {
            Double => 8,
            Bool => 0,
            _ => 1,
        }
    }
}

struct Walker<'a> {
    buf: &'a [u8],
    pos: usize,
    /// Collection elements that take no bytes (booleans, as the `parquet` crate skips them)
    /// still allowed: one per byte of input.
    free_elements: usize,
}

impl<'a> Walker<'a> {
    fn new(buf: &'a [u8]) -> Self {
        Walker {
            buf,
            pos: 0,
            free_elements: buf.len(),
        }
    }
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

    /// An unsigned LEB128 varint, decoded exactly as the `parquet` crate decodes it: its
    /// shifts wrap modulo 64, so the groups of an over-long varint are OR-ed back into the
    /// low bits rather than dropped. (Dropping them made this walk see a different length
    /// or field id than the crate for the same bytes: a fuzz-found timeout.)
    fn varint(&mut self) -> Result<u64, String> {
        let mut value = 0u64;
        let mut shift = 0u32;
        loop {
            let b = self.byte()?;
            value |= u64::from(b & 0x7f).wrapping_shl(shift);
            if b & 0x80 == 0 {
                return Ok(value);
            }
            shift = shift.wrapping_add(7);
        }
    }

    /// A count of elements that each take at least `min_len` bytes.
    fn count(&mut self, n: u64, min_len: usize) -> Result<usize, String> {
        let fits = match usize::try_from(n) {
            Ok(n) if min_len == 0 => n <= self.free_elements,
            Ok(n) => n
                .checked_mul(min_len)
                .is_some_and(|len| len <= self.remaining()),
            Err(_) => false,
        };
        if !fits {
            return Err(format!(
                "Thrift collection of {n} elements at offset {} exceeds the {} bytes left",
                self.pos,
                self.remaining()
            ));
        }
        if min_len == 0 {
            self.free_elements -= n as usize;
        }
        Ok(n as usize)
    }

    /// Skips a value of type `ty` as the `parquet` crate does: a boolean takes no bytes,
    /// not even as a collection element (where the wire format has one byte).
    fn skip(&mut self, ty: u8, depth: u32) -> Result<(), String> {
        if depth == 0 {
            return Err("Thrift data nested too deeply".into());
        }
        match ty {
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
                    self.skip(elem, depth - 1)?;
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
                    self.skip(key, depth - 1)?;
                    self.skip(value, depth - 1)?;
                }
                Ok(())
            }
            STRUCT => self.strukt(EMPTY, depth - 1, None).map(drop),
            other => Err(format!(
                "invalid Thrift type {other} at offset {}",
                self.pos
            )),
        }
    }

    /// The next field header of a struct, `None` at its stop byte.
    fn field_header(&mut self, last_id: &mut i16) -> Result<Option<(i16, u8)>, String> {
        let header = self.byte()?;
        let ty = header & 0x0f;
        if ty == STOP {
            return Ok(None);
        }
        // As the crate: a long-form id is a zigzag varint truncated to i16; a delta that
        // overflows is an error.
        *last_id = match header >> 4 {
            0 => zigzag(self.varint()?) as i16,
            delta => last_id
                .checked_add(i16::from(delta))
                .ok_or_else(|| format!("Thrift field id overflows at offset {}", self.pos))?,
        };
        Ok(Some((*last_id, ty)))
    }

    /// Walks a struct the `parquet` crate reads as `fields`, up to and including its stop
    /// byte; returns the value of the integer field `want`, if present.
    fn strukt(
        &mut self,
        fields: &[(i16, Ty)],
        depth: u32,
        want: Option<i16>,
    ) -> Result<Option<i64>, String> {
        if depth == 0 {
            return Err("Thrift data nested too deeply".into());
        }
        let mut last_id = 0;
        let mut found = None;
        while let Some((id, code)) = self.field_header(&mut last_id)? {
            if fields.is_empty() {
                // Skipped, as the crate skips: it reads every field id relative to 0.
                last_id = 0;
            }
            let value = self.field(fields, id, code, depth)?;
            if Some(id) == want {
                found = value;
            }
        }
        Ok(found)
    }

    /// Walks field `id` declared as `code` of a struct read as `fields`.
    fn field(
        &mut self,
        fields: &[(i16, Ty)],
        id: i16,
        code: u8,
        depth: u32,
    ) -> Result<Option<i64>, String> {
        let Some(&(_, ty)) = fields.iter().find(|(f, _)| *f == id) else {
            self.skip(code, depth)?;
            return Ok(None);
        };
        if wire_class(code) != Some(ty.wire_class()) {
            return Err(format!(
                "field {id} declared with Thrift type {code} where another is expected"
            ));
        }
        self.read(ty, depth)
    }

    /// Reads a value of type `ty`; returns it if it is an integer.
    fn read(&mut self, ty: Ty, depth: u32) -> Result<Option<i64>, String> {
        if depth == 0 {
            return Err("Thrift data nested too deeply".into());
        }
        match ty {
            Int => return Ok(Some(zigzag(self.varint()?))),
            Byte => self.take(1)?,
            Double => self.take(8)?,
            Binary => {
                let len = self.varint()?;
                self.take(usize::try_from(len).unwrap_or(usize::MAX))?;
            }
            Bool => {}
            Struct(fields) => {
                self.strukt(fields, depth - 1, None)?;
            }
            List(elem) => {
                for _ in 0..self.list_header(*elem)? {
                    self.read(*elem, depth - 1)?;
                }
            }
        }
        Ok(None)
    }

    /// Reads the header of a list whose elements are read as `elem`; returns their count.
    fn list_header(&mut self, elem: Ty) -> Result<usize, String> {
        let header = self.byte()?;
        let n = match header >> 4 {
            15 => self.varint()?,
            n => u64::from(n),
        };
        if n == 0 {
            return Ok(0);
        }
        if wire_class(header & 0x0f) != Some(elem.wire_class()) {
            return Err(format!(
                "list at offset {} declared with element type {} where another is expected",
                self.pos,
                header & 0x0f
            ));
        }
        self.count(n, elem.min_len())
    }

    /// Walks a `FileMetaData` struct, checking the nesting of its schema.
    fn file_metadata(&mut self) -> Result<(), String> {
        let mut last_id = 0;
        while let Some((id, code)) = self.field_header(&mut last_id)? {
            if id != FILE_SCHEMA {
                self.field(FILE_META_DATA, id, code, MAX_DEPTH)?;
                continue;
            }
            if wire_class(code) != Some(LIST) {
                return Err(format!("schema declared with Thrift type {code}"));
            }
            // Groups still expecting children, innermost last.
            let mut open: Vec<i64> = Vec::new();
            for _ in 0..self.list_header(Struct(SCHEMA_ELEMENT))? {
                let children = self.strukt(SCHEMA_ELEMENT, MAX_DEPTH - 1, Some(NUM_CHILDREN))?;
                if open.len() > MAX_SCHEMA_DEPTH {
                    return Err(format!(
                        "schema nests deeper than {MAX_SCHEMA_DEPTH} levels"
                    ));
                }
                if let Some(parent) = open.last_mut() {
                    *parent -= 1;
                }
                if let Some(c) = children.filter(|&c| c > 0) {
                    open.push(c);
                }
                while open.last() == Some(&0) {
                    open.pop();
                }
            }
        }
        Ok(())
    }
}

/// A checkpoint's bytes for the `parquet` crate, whose readers fail on a second read at end
/// of file rather than let a page-header skip run on past it.
pub(crate) struct GuardedBytes(pub(crate) Bytes);

impl parquet::file::reader::Length for GuardedBytes {
    fn len(&self) -> u64 {
        self.0.len() as u64
    }
}

impl parquet::file::reader::ChunkReader for GuardedBytes {
    type T = GuardedReader;

    fn get_read(&self, start: u64) -> parquet::errors::Result<GuardedReader> {
        match usize::try_from(start).ok().filter(|&s| s <= self.0.len()) {
            Some(s) => Ok(GuardedReader {
                data: self.0.slice(s..),
                at_eof: false,
            }),
            None => Err(parquet::errors::ParquetError::EOF(format!(
                "read at offset {start} of a {}-byte file",
                self.0.len()
            ))),
        }
    }

    fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<Bytes> {
        self.0.get_bytes(start, length)
    }
}

/// A reader over the rest of a checkpoint that reports end of file once, then fails.
pub(crate) struct GuardedReader {
    data: Bytes,
    at_eof: bool,
}

impl Read for GuardedReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.data.is_empty() && !buf.is_empty() {
            if self.at_eof {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    "Thrift data runs past the end of the file",
                ));
            }
            self.at_eof = true;
            return Ok(0);
        }
        let n = buf.len().min(self.data.len());
        buf[..n].copy_from_slice(&self.data.split_to(n));
        Ok(n)
    }
}

/// The fewest bytes a collection element of type `ty` takes.
fn min_len(ty: u8) -> Result<usize, String> {
    match ty {
        DOUBLE => Ok(8),
        UUID => Ok(16),
        BOOL_TRUE | BOOL_FALSE => Ok(0),
        BYTE..=STRUCT => Ok(1),
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
    let mut w = Walker::new(&body[start..]);
    w.file_metadata()
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
            let mut w = Walker::new(&data[offset..]);
            let compressed = w
                .strukt(PAGE_HEADER, MAX_DEPTH, Some(COMPRESSED_PAGE_SIZE))
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

    #[test]
    fn varints_wrap_their_shifts_like_the_parquet_crate() {
        // Ten continuation bytes put the eleventh group at shift 70, which the crate's
        // `wrapping_shl` turns into shift 6.
        let mut bytes = vec![0x80; 10];
        bytes.push(0x01);
        assert_eq!(Walker::new(&bytes).varint(), Ok(64));
        assert_eq!(Walker::new(&[0xac, 0x02]).varint(), Ok(300));
    }

    #[test]
    fn field_id_deltas_that_overflow_are_refused() {
        // Long-form id 32767, then a delta of 1.
        let bytes = [0x05, 0xfe, 0xff, 0x03, 0x00, 0x15, 0x00, 0x00];
        assert!(walk(&bytes).unwrap_err().contains("overflows"));
    }

    fn walk(bytes: &[u8]) -> Result<Option<i64>, String> {
        Walker::new(bytes).strukt(PAGE_HEADER, MAX_DEPTH, Some(COMPRESSED_PAGE_SIZE))
    }

    #[test]
    fn walks_well_formed_structs() {
        // A page header {1: 0, 2: -1, 3: 100} with an unknown field 9: struct {1: list<i32>
        // [1, -1], 2: map<i32, double> {1: 0.0}, 3: binary "ab", 4: true}.
        let mut s = vec![0x15, 0x00, 0x15, 0x01, 0x15, 0xc8, 0x01, 0x6c];
        s.extend_from_slice(&[0x19, 0x25, 0x02, 0x01, 0x1b, 0x01, 0x57, 0x02]);
        s.extend_from_slice(&[0; 8]);
        s.extend_from_slice(&[0x18, 0x02, b'a', b'b', 0x11, 0x00, 0x00]);
        assert_eq!(walk(&s), Ok(Some(100)));
        // Long-form field ids and a struct without the wanted field.
        assert_eq!(walk(&[0x05, 0xc8, 0x01, 0x03, 0x00]), Ok(None));
        // A data page header with statistics.
        let s = [
            0x15, 0x02, 0x15, 0x02, 0x15, 0x02, 0x2c, 0x15, 0x02, 0x15, 0x00, 0x15, 0x00,
        ];
        let stats = [
            0x15, 0x00, 0x1c, 0x18, 0x01, b'z', 0x18, 0x01, b'a', 0x51, 0x00, 0x00, 0x00,
        ];
        assert_eq!(walk(&[&s[..], &stats].concat()), Ok(Some(1)));
    }

    #[test]
    fn known_fields_must_have_their_types() {
        // compressed_page_size declared as a binary, a list or a struct: the parquet crate
        // reads a varint there whatever the declaration.
        assert!(walk(&[0x38, 0x02, 0x00, 0x00, 0x00]).is_err());
        assert!(walk(&[0x39, 0x15, 0x01, 0x00]).is_err());
        // A list of the wrong element type.
        let s = [0x29, 0x18, 0x01, b'x', 0x00];
        assert!(
            Walker::new(&s)
                .strukt(COLUMN_META_DATA, MAX_DEPTH, None)
                .is_err()
        );
        // Integer widths are interchangeable: all varints.
        assert_eq!(walk(&[0x36, 0x04, 0x00]), Ok(Some(2)));
    }

    #[test]
    fn guarded_readers_fail_after_end_of_file() {
        use parquet::file::reader::ChunkReader;

        let file = GuardedBytes(Bytes::from_static(b"abc"));
        let mut r = file.get_read(1).unwrap();
        let mut buf = [0u8; 4];
        assert_eq!(r.read(&mut buf).unwrap(), 2);
        assert_eq!(&buf[..2], b"bc");
        assert_eq!(r.read(&mut buf).unwrap(), 0);
        assert!(r.read(&mut buf).is_err());
        assert_eq!(r.read(&mut []).unwrap(), 0);
        assert!(file.get_read(4).is_err());
        assert_eq!(file.get_bytes(0, 2).unwrap(), "ab");
    }

    #[test]
    fn boolean_elements_take_no_bytes_but_are_bounded() {
        // Unknown field 9, list<bool> of 3, then field 3 (100) right after the list header,
        // as the parquet crate reads it.
        assert_eq!(
            walk(&[0x99, 0x31, 0x05, 0x06, 0xc8, 0x01, 0x00]),
            Ok(Some(100))
        );
        // 6 bytes of input allow 6 such elements in all.
        assert!(walk(&[0x99, 0x61, 0x00, 0x00, 0x00, 0x00]).is_ok());
        assert!(walk(&[0x99, 0x81, 0x00, 0x00, 0x00, 0x00, 0x00]).is_err());
        assert!(walk(&[0x99, 0x41, 0x19, 0x41, 0x00, 0x00]).is_err());
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
