//! A strict screen over a checkpoint's Thrift (footer and page headers), run before the
//! `parquet` crate decodes them, because that decoder can spin for minutes or overflow the
//! stack on a few hostile bytes: it skips unknown lists of booleans without reading their
//! elements, reads a known field as its expected type whatever type the bytes declare, and
//! builds schemas recursively.
//!
//! The screen does not imitate the crate. It accepts only the canonical compact-protocol
//! encoding that every reader, strict or lenient, reads the same way, and refuses anything
//! else as a corrupt checkpoint:
//!
//! * varints of at most ten bytes, with no padding groups and no bits past 64;
//! * field ids that strictly increase within a struct (no duplicates, no overflow), and a
//!   stop byte that is exactly zero;
//! * known fields (the tables below, from `parquet.thrift`) declared with their own type
//!   (any integer width for an integer), list elements of the declared type;
//! * unknown fields of the basic types only (no UUIDs), and no non-empty collection of
//!   booleans (readers disagree on whether such elements take a byte);
//! * collection sizes written in the short form when they fit it, no larger than
//!   `i32::MAX`, and no larger than the bytes left (every accepted element takes at least one
//!   byte, so the walk is linear in its input);
//! * nesting at most [`MAX_DEPTH`] values deep, and schemas at most [`MAX_SCHEMA_DEPTH`]
//!   groups deep.
//!
//! Thrift writers produce exactly this encoding (every checkpoint of the conformance tables,
//! from Spark and delta-rs among others, passes). The tables list the fields the crate
//! reads, so an upgrade of `parquet` must be re-checked against them:
//! the workspace pins it, and a test fails when the locked version leaves
//! [`SCREENED_PARQUET_VERSION`]. [`GuardedBytes`] adds a second fence: the crate's readers
//! fail instead of reporting end of file twice.

use std::io::Read;

use bytes::Bytes;
use parquet::file::metadata::{ColumnChunkMetaData, ParquetMetaData};

/// The `parquet` release whose Thrift decoder the field tables were checked against.
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) const SCREENED_PARQUET_VERSION: &str = "60.1.0";

/// The deepest nesting of structs and collections accepted (Parquet metadata nests about
/// eight deep; the crate's own limit is 64).
const MAX_DEPTH: u32 = 32;

/// The deepest nesting of groups accepted in a checkpoint's schema (Arrow C++ has the same
/// limit for nested types).
pub(crate) const MAX_SCHEMA_DEPTH: usize = 64;

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

/// `PageHeader.compressed_page_size` (field 3, i32).
const COMPRESSED_PAGE_SIZE: i16 = 3;
/// `FileMetaData.schema` (field 2, list<SchemaElement>).
const FILE_SCHEMA: i16 = 2;
/// `SchemaElement.num_children` (field 5, i32).
const NUM_CHILDREN: i16 = 5;

/// The type a known field has in `parquet.thrift`.
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

/// The known fields of a struct: id and type, in id order.
type Fields = &'static [(i16, Ty)];

// The structs of `parquet.thrift` that the `parquet` crate reads from a footer or a page
// header, with the fields it reads (named in the comments, in id order). Unions are structs.
#[rustfmt::skip]
mod spec {
    use super::Fields;
    use super::Ty::{Binary, Bool, Byte, Double, Int, List, Struct};

    /// Empty structs (the members of `TimeUnit`, `ColumnOrder`, ...) and skipped ones.
    const EMPTY: Fields = &[];
    /// key, value
    const KEY_VALUE: Fields = &[(1, Binary), (2, Binary)];
    /// MILLIS, MICROS, NANOS
    const TIME_UNIT: Fields = &[(1, Struct(EMPTY)), (2, Struct(EMPTY)), (3, Struct(EMPTY))];
    /// isAdjustedToUTC, unit (`TimeType` and `TimestampType`)
    const TIME_TYPE: Fields = &[(1, Bool), (2, Struct(TIME_UNIT))];
    /// STRING, MAP, LIST, ENUM, DECIMAL {scale, precision}, DATE, TIME, TIMESTAMP,
    /// INTEGER {bitWidth, isSigned}, UNKNOWN, JSON, BSON, UUID, FLOAT16,
    /// VARIANT {specification_version}, GEOMETRY {crs}, GEOGRAPHY {crs, algorithm}, 19
    const LOGICAL_TYPE: Fields = &[
        (1, Struct(EMPTY)), (2, Struct(EMPTY)), (3, Struct(EMPTY)), (4, Struct(EMPTY)),
        (5, Struct(&[(1, Int), (2, Int)])), (6, Struct(EMPTY)), (7, Struct(TIME_TYPE)),
        (8, Struct(TIME_TYPE)), (10, Struct(&[(1, Byte), (2, Bool)])), (11, Struct(EMPTY)),
        (12, Struct(EMPTY)), (13, Struct(EMPTY)), (14, Struct(EMPTY)), (15, Struct(EMPTY)),
        (16, Struct(&[(1, Byte)])), (17, Struct(&[(1, Binary)])),
        (18, Struct(&[(1, Binary), (2, Int)])), (19, Struct(EMPTY)),
    ];
    /// type, type_length, repetition_type, name, num_children, converted_type, scale,
    /// precision, field_id, logicalType
    pub(super) const SCHEMA_ELEMENT: Fields = &[
        (1, Int), (2, Int), (3, Int), (4, Binary), (5, Int), (6, Int), (7, Int), (8, Int),
        (9, Int), (10, Struct(LOGICAL_TYPE)),
    ];
    /// max, min, null_count, distinct_count, max_value, min_value, is_max_value_exact,
    /// is_min_value_exact, 9
    const STATISTICS: Fields = &[
        (1, Binary), (2, Binary), (3, Int), (4, Int), (5, Binary), (6, Binary), (7, Bool),
        (8, Bool), (9, Int),
    ];
    /// xmin, xmax, ymin, ymax, zmin, zmax, mmin, mmax
    const BOUNDING_BOX: Fields = &[
        (1, Double), (2, Double), (3, Double), (4, Double), (5, Double), (6, Double),
        (7, Double), (8, Double),
    ];
    /// type, encodings, path_in_schema, codec, num_values, total_uncompressed_size,
    /// total_compressed_size, key_value_metadata, data_page_offset, index_page_offset,
    /// dictionary_page_offset, statistics, encoding_stats {page_type, encoding, count},
    /// bloom_filter_offset, bloom_filter_length, size_statistics
    /// {unencoded_byte_array_data_bytes, repetition_level_histogram,
    /// definition_level_histogram}, geospatial_statistics {bbox, geospatial_types}
    pub(super) const COLUMN_META_DATA: Fields = &[
        (1, Int), (2, List(&Int)), (3, List(&Binary)), (4, Int), (5, Int), (6, Int), (7, Int),
        (8, List(&Struct(KEY_VALUE))), (9, Int), (10, Int), (11, Int), (12, Struct(STATISTICS)),
        (13, List(&Struct(&[(1, Int), (2, Int), (3, Int)]))), (14, Int), (15, Int),
        (16, Struct(&[(1, Int), (2, List(&Int)), (3, List(&Int))])),
        (17, Struct(&[(1, Struct(BOUNDING_BOX)), (2, List(&Int))])),
    ];
    /// ENCRYPTION_WITH_FOOTER_KEY, ENCRYPTION_WITH_COLUMN_KEY {path_in_schema, key_metadata}
    const COLUMN_CRYPTO_META_DATA: Fields =
        &[(1, Struct(EMPTY)), (2, Struct(&[(1, List(&Binary)), (2, Binary)]))];
    /// file_path, file_offset, meta_data, offset_index_offset, offset_index_length,
    /// column_index_offset, column_index_length, crypto_metadata, encrypted_column_metadata
    const COLUMN_CHUNK: Fields = &[
        (1, Binary), (2, Int), (3, Struct(COLUMN_META_DATA)), (4, Int), (5, Int), (6, Int),
        (7, Int), (8, Struct(COLUMN_CRYPTO_META_DATA)), (9, Binary),
    ];
    /// columns, total_byte_size, num_rows, sorting_columns {column_idx, descending,
    /// nulls_first}, file_offset, total_compressed_size, ordinal
    const ROW_GROUP: Fields = &[
        (1, List(&Struct(COLUMN_CHUNK))), (2, Int), (3, Int),
        (4, List(&Struct(&[(1, Int), (2, Bool), (3, Bool)]))), (5, Int), (6, Int), (7, Int),
    ];
    /// TYPE_ORDER, 2, 3
    const COLUMN_ORDER: Fields = &[(1, Struct(EMPTY)), (2, Struct(EMPTY)), (3, Struct(EMPTY))];
    /// aad_prefix, aad_file_unique, supply_aad_prefix (`AesGcmV1` and `AesGcmCtrV1`)
    const AES_GCM: Fields = &[(1, Binary), (2, Binary), (3, Bool)];
    /// version, schema, num_rows, row_groups, key_value_metadata, created_by, column_orders,
    /// encryption_algorithm {AES_GCM_V1, AES_GCM_CTR_V1}, footer_signing_key_metadata
    pub(super) const FILE_META_DATA: Fields = &[
        (1, Int), (2, List(&Struct(SCHEMA_ELEMENT))), (3, Int), (4, List(&Struct(ROW_GROUP))),
        (5, List(&Struct(KEY_VALUE))), (6, Binary), (7, List(&Struct(COLUMN_ORDER))),
        (8, Struct(&[(1, Struct(AES_GCM)), (2, Struct(AES_GCM))])), (9, Binary),
    ];
    /// num_values, encoding, definition_level_encoding, repetition_level_encoding,
    /// statistics
    const DATA_PAGE_HEADER: Fields =
        &[(1, Int), (2, Int), (3, Int), (4, Int), (5, Struct(STATISTICS))];
    /// num_values, num_nulls, num_rows, encoding, definition_levels_byte_length,
    /// repetition_levels_byte_length, is_compressed, statistics
    const DATA_PAGE_HEADER_V2: Fields = &[
        (1, Int), (2, Int), (3, Int), (4, Int), (5, Int), (6, Int), (7, Bool),
        (8, Struct(STATISTICS)),
    ];
    /// type, uncompressed_page_size, compressed_page_size, crc, data_page_header,
    /// index_page_header, dictionary_page_header {num_values, encoding, is_sorted},
    /// data_page_header_v2
    pub(super) const PAGE_HEADER: Fields = &[
        (1, Int), (2, Int), (3, Int), (4, Int), (5, Struct(DATA_PAGE_HEADER)), (6, Struct(EMPTY)),
        (7, Struct(&[(1, Int), (2, Int), (3, Bool)])), (8, Struct(DATA_PAGE_HEADER_V2)),
    ];
}

use spec::{FILE_META_DATA, PAGE_HEADER, SCHEMA_ELEMENT};

impl Ty {
    /// Whether a value declared with type `code` is encoded as this type: exactly this type,
    /// except that every integer width is the same zigzag varint.
    fn declared_as(self, code: u8) -> bool {
        match self {
            Int => matches!(code, I16 | I32 | I64),
            Byte => code == BYTE,
            Double => code == DOUBLE,
            Binary => code == BINARY,
            Bool => matches!(code, BOOL_TRUE | BOOL_FALSE),
            Struct(_) => code == STRUCT,
            List(_) => code == LIST,
        }
    }
}

/// The fewest bytes a collection element of type `code` takes, `None` for types refused as
/// elements (booleans, whose size readers disagree on, and codes past `STRUCT`).
fn element_len(code: u8) -> Option<u64> {
    match code {
        DOUBLE => Some(8),
        BYTE..=STRUCT => Some(1),
        _ => None,
    }
}

/// One level deeper than `depth` levels left.
fn deeper(depth: u32) -> Result<u32, String> {
    depth
        .checked_sub(1)
        .ok_or_else(|| format!("Thrift data nested deeper than {MAX_DEPTH} levels"))
}

struct Walker<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl Walker<'_> {
    fn new(buf: &[u8]) -> Walker<'_> {
        Walker { buf, pos: 0 }
    }

    fn error<T>(&self, what: impl std::fmt::Display) -> Result<T, String> {
        Err(format!("{what} at offset {}", self.pos))
    }

    fn remaining(&self) -> u64 {
        (self.buf.len() - self.pos) as u64
    }

    fn take(&mut self, n: u64) -> Result<(), String> {
        if n > self.remaining() {
            return self.error(format_args!(
                "Thrift data needs {n} bytes, {} left,",
                self.remaining()
            ));
        }
        self.pos += n as usize;
        Ok(())
    }

    fn byte(&mut self) -> Result<u8, String> {
        let Some(&b) = self.buf.get(self.pos) else {
            return self.error("Thrift data truncated");
        };
        self.pos += 1;
        Ok(b)
    }

    /// A canonical unsigned LEB128 varint: at most ten bytes, no bits past 64, and no
    /// trailing zero group (which would make a second encoding of the same value).
    fn varint(&mut self) -> Result<u64, String> {
        let mut value = 0u64;
        for i in 0..10 {
            let b = self.byte()?;
            if (i == 9 && b > 1) || (i > 0 && b == 0) {
                return self.error("non-canonical Thrift varint");
            }
            value |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        self.error("over-long Thrift varint")
    }

    fn int(&mut self) -> Result<i64, String> {
        let v = self.varint()?;
        Ok((v >> 1) as i64 ^ -((v & 1) as i64))
    }

    /// A size (of a binary value or a collection) whose `n` items take at least `item_len`
    /// bytes each: at most `i32::MAX`, and no more than the bytes left.
    fn size(&mut self, n: u64, item_len: u64) -> Result<u64, String> {
        if n > i32::MAX as u64 || n.saturating_mul(item_len) > self.remaining() {
            return self.error(format_args!(
                "Thrift size {n} exceeds the {} bytes left",
                self.remaining()
            ));
        }
        Ok(n)
    }

    fn binary(&mut self) -> Result<(), String> {
        let n = self.varint()?;
        let n = self.size(n, 1)?;
        self.take(n)
    }

    /// The header of a list or set: the element type and the number of elements. Elements
    /// of a non-empty collection must be of a type [`element_len`] accepts.
    fn list_header(&mut self) -> Result<(u8, u64), String> {
        let header = self.byte()?;
        let elem = header & 0x0f;
        let n = match header >> 4 {
            15 => match self.varint()? {
                n if n < 15 => return self.error("Thrift list size in the long form"),
                n => n,
            },
            n => u64::from(n),
        };
        if n == 0 {
            return match elem {
                BOOL_TRUE..=STRUCT => Ok((elem, 0)),
                _ => self.error(format_args!("invalid Thrift element type {elem}")),
            };
        }
        let Some(len) = element_len(elem) else {
            return self.error(format_args!("Thrift list of element type {elem}"));
        };
        Ok((elem, self.size(n, len)?))
    }

    /// Skips a value declared as `code` (of a field the tables do not know).
    fn skip(&mut self, code: u8, depth: u32) -> Result<(), String> {
        match code {
            BOOL_TRUE | BOOL_FALSE => Ok(()),
            BYTE => self.take(1),
            I16 | I32 | I64 => self.varint().map(drop),
            DOUBLE => self.take(8),
            BINARY => self.binary(),
            LIST | SET => {
                let depth = deeper(depth)?;
                let (elem, n) = self.list_header()?;
                (0..n).try_for_each(|_| self.skip(elem, depth))
            }
            MAP => {
                let depth = deeper(depth)?;
                let n = self.varint()?;
                if n == 0 {
                    return Ok(());
                }
                let kv = self.byte()?;
                let (key, value) = (kv >> 4, kv & 0x0f);
                let (Some(k), Some(v)) = (element_len(key), element_len(value)) else {
                    return self.error(format_args!("Thrift map of types {key} and {value}"));
                };
                for _ in 0..self.size(n, k + v)? {
                    self.skip(key, depth)?;
                    self.skip(value, depth)?;
                }
                Ok(())
            }
            STRUCT => self.strukt(&[], depth, None).map(drop),
            other => self.error(format_args!("unsupported Thrift type {other}")),
        }
    }

    /// The next field header of a struct, `None` at its stop byte.
    fn field_header(&mut self, last_id: &mut i16) -> Result<Option<(i16, u8)>, String> {
        let header = self.byte()?;
        let code = header & 0x0f;
        if header == STOP {
            return Ok(None);
        }
        if code == STOP {
            return self.error(format_args!("Thrift stop byte {header:#04x}"));
        }
        let id = match header >> 4 {
            0 => self.int()?,
            delta => i64::from(*last_id) + i64::from(delta),
        };
        match i16::try_from(id) {
            Ok(id) if id > *last_id => {
                *last_id = id;
                Ok(Some((id, code)))
            }
            _ => self.error(format_args!("Thrift field id {id} after {last_id}")),
        }
    }

    /// Walks a struct whose known fields are `fields`, up to and including its stop byte;
    /// returns the value of the i32 field `want`, if present. (A value out of the i32 range
    /// is refused: a reader that truncates it would follow another layout.)
    fn strukt(
        &mut self,
        fields: Fields,
        depth: u32,
        want: Option<i16>,
    ) -> Result<Option<i32>, String> {
        let depth = deeper(depth)?;
        let mut last_id = 0;
        let mut found = None;
        while let Some((id, code)) = self.field_header(&mut last_id)? {
            let value = self.field(fields, id, code, depth)?;
            if Some(id) == want {
                match value.map(i32::try_from).transpose() {
                    Ok(v) => found = v,
                    Err(_) => return self.error(format_args!("field {id} out of the i32 range")),
                }
            }
        }
        Ok(found)
    }

    /// Walks field `id` declared as `code` of a struct whose known fields are `fields`.
    fn field(
        &mut self,
        fields: Fields,
        id: i16,
        code: u8,
        depth: u32,
    ) -> Result<Option<i64>, String> {
        match fields.iter().find(|(f, _)| *f == id) {
            None => self.skip(code, depth).map(|()| None),
            Some(&(_, ty)) if ty.declared_as(code) => self.read(ty, depth),
            Some(_) => self.error(format_args!(
                "field {id} declared with Thrift type {code} where another is expected"
            )),
        }
    }

    /// Reads a value of type `ty`; returns it if it is an integer.
    fn read(&mut self, ty: Ty, depth: u32) -> Result<Option<i64>, String> {
        match ty {
            Int => return self.int().map(Some),
            Byte => self.take(1)?,
            Double => self.take(8)?,
            Binary => self.binary()?,
            Bool => {}
            Struct(fields) => {
                self.strukt(fields, depth, None)?;
            }
            List(elem) => {
                let depth = deeper(depth)?;
                for _ in 0..self.typed_list_header(*elem)? {
                    self.read(*elem, depth)?;
                }
            }
        }
        Ok(None)
    }

    /// The header of a list whose elements are `elem`; returns their count.
    fn typed_list_header(&mut self, elem: Ty) -> Result<u64, String> {
        match self.list_header()? {
            (code, n) if n > 0 && !elem.declared_as(code) => self.error(format_args!(
                "list declared with element type {code} where another is expected"
            )),
            (_, n) => Ok(n),
        }
    }

    /// Walks a `FileMetaData` struct, checking the nesting of its schema.
    fn file_metadata(&mut self) -> Result<(), String> {
        let mut last_id = 0;
        while let Some((id, code)) = self.field_header(&mut last_id)? {
            if id != FILE_SCHEMA || code != LIST {
                self.field(FILE_META_DATA, id, code, MAX_DEPTH)?;
                continue;
            }
            // Groups still expecting children, innermost last.
            let mut open: Vec<i32> = Vec::new();
            for _ in 0..self.typed_list_header(Struct(SCHEMA_ELEMENT))? {
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
///
/// It holds the whole file, or one range of it (a footer, a row group) read on its own: a
/// read outside the range fails, so the crate's readers can only decode what was fetched.
#[derive(Clone)]
pub(crate) struct GuardedBytes {
    data: Bytes,
    /// The offset of `data` in the file.
    start: u64,
    /// The file's length.
    file_len: u64,
}

impl GuardedBytes {
    /// A whole file.
    pub(crate) fn whole(data: Bytes) -> GuardedBytes {
        let file_len = data.len() as u64;
        GuardedBytes {
            data,
            start: 0,
            file_len,
        }
    }

    /// The bytes at `start` of a file of `file_len` bytes (the caller read them from there,
    /// so `start + data.len() <= file_len`).
    pub(crate) fn range(start: u64, data: Bytes, file_len: u64) -> GuardedBytes {
        GuardedBytes {
            data,
            start,
            file_len,
        }
    }

    /// The bytes held.
    pub(crate) fn bytes(&self) -> &Bytes {
        &self.data
    }

    /// The position in `data` of file offset `at`, if the range holds it (its end included).
    fn local(&self, at: u64) -> Option<usize> {
        at.checked_sub(self.start)
            .and_then(|i| usize::try_from(i).ok())
            .filter(|&i| i <= self.data.len())
    }

    fn outside(&self, at: u64) -> parquet::errors::ParquetError {
        parquet::errors::ParquetError::EOF(format!(
            "read at offset {at} outside the {} bytes read at offset {} of a {}-byte file",
            self.data.len(),
            self.start,
            self.file_len
        ))
    }
}

impl parquet::file::reader::Length for GuardedBytes {
    fn len(&self) -> u64 {
        self.file_len
    }
}

impl parquet::file::reader::ChunkReader for GuardedBytes {
    type T = GuardedReader;

    fn get_read(&self, start: u64) -> parquet::errors::Result<GuardedReader> {
        match self.local(start) {
            Some(pos) => Ok(GuardedReader {
                data: self.data.clone(),
                pos,
                at_eof: false,
            }),
            None => Err(self.outside(start)),
        }
    }

    fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<Bytes> {
        match self.local(start) {
            Some(pos) => self.data.get_bytes(pos as u64, length),
            None => Err(self.outside(start)),
        }
    }
}

/// A reader over the rest of a checkpoint that reports end of file once, then fails.
///
/// It reads at a position in the shared bytes: the decoder reads page headers in many small
/// reads, and advancing a `Bytes` handle would touch its reference count at every one.
pub(crate) struct GuardedReader {
    data: Bytes,
    /// The next byte to read; never past the end.
    pos: usize,
    at_eof: bool,
}

impl Read for GuardedReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let rest = self.data.get(self.pos..).unwrap_or_default();
        if rest.is_empty() && !buf.is_empty() {
            if self.at_eof {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    "Thrift data runs past the end of the file",
                ));
            }
            self.at_eof = true;
            return Ok(0);
        }
        let n = buf.len().min(rest.len());
        buf[..n].copy_from_slice(&rest[..n]);
        self.pos += n;
        Ok(n)
    }
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
    Walker::new(&body[start..])
        .file_metadata()
        .map_err(|e| format!("malformed footer: {e}"))
}

/// Checks every page header of every column chunk, following the chunks' pages as the
/// `parquet` crate's page reader does (from the dictionary page, or the first data page,
/// on by each header's `compressed_page_size`). Chunks whose layout that reader rejects anyway
/// (out of range, inconsistent sizes) are not followed further.
pub(crate) fn check_page_headers(data: &[u8], metadata: &ParquetMetaData) -> Result<(), String> {
    check_chunk_page_headers(
        data,
        0,
        metadata.row_groups().iter().flat_map(|rg| rg.columns()),
    )
}

/// [`check_page_headers`] for the column chunks `columns`, in `data` read at offset `base`
/// of the file (one row group's bytes). Chunks that do not start inside `data` are not
/// followed.
pub(crate) fn check_chunk_page_headers<'a>(
    data: &[u8],
    base: u64,
    columns: impl IntoIterator<Item = &'a ColumnChunkMetaData>,
) -> Result<(), String> {
    for column in columns {
        let start = column
            .dictionary_page_offset()
            .unwrap_or_else(|| column.data_page_offset());
        let (Some(mut offset), Ok(mut remaining)) = (
            u64::try_from(start)
                .ok()
                .and_then(|s| s.checked_sub(base))
                .and_then(|s| usize::try_from(s).ok()),
            usize::try_from(column.compressed_size()),
        ) else {
            continue;
        };
        while remaining > 0 && offset < data.len() {
            let mut w = Walker::new(&data[offset..]);
            let compressed = w
                .strukt(PAGE_HEADER, MAX_DEPTH, Some(COMPRESSED_PAGE_SIZE))
                .map_err(|e| {
                    let at = base.saturating_add(offset as u64);
                    format!("malformed page header at offset {at}: {e}")
                })?;
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
    use super::spec::COLUMN_META_DATA;
    use super::*;

    fn walk(bytes: &[u8]) -> Result<Option<i32>, String> {
        Walker::new(bytes).strukt(PAGE_HEADER, MAX_DEPTH, Some(COMPRESSED_PAGE_SIZE))
    }

    /// The `parquet` version in a lock file's `[[package]]` entry for it.
    fn locked_parquet(lock: &str) -> Option<&str> {
        let entry = lock
            .split("[[package]]")
            .find(|p| p.lines().any(|l| l.trim() == "name = \"parquet\""))?;
        entry
            .lines()
            .find_map(|l| l.trim().strip_prefix("version = \""))
            .and_then(|v| v.strip_suffix('"'))
    }

    #[test]
    fn the_locked_parquet_version_is_the_screened_one() {
        for lock in ["../Cargo.lock", "../fuzz/Cargo.lock"] {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(lock);
            let text = std::fs::read_to_string(&path).unwrap();
            assert_eq!(
                locked_parquet(&text),
                Some(SCREENED_PARQUET_VERSION),
                "{lock} locks another parquet release than the one the Thrift screen \
                 (txlog/src/checkpoint/thrift_check.rs) was checked against: re-check its \
                 field tables against the new release's Thrift decoder (which fields it \
                 reads, as which types), then update SCREENED_PARQUET_VERSION and the pin \
                 in the workspace Cargo.toml"
            );
        }
    }

    /// The screen refuses no checkpoint or sidecar of the conformance tables (written by
    /// Spark, delta-rs and others) that the `parquet` crate reads.
    #[test]
    fn files_of_the_conformance_tables_pass_the_screen() {
        use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

        fn parquet_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    parquet_files(&path, out);
                } else if path.extension().is_some_and(|e| e == "parquet")
                    && path.to_string_lossy().contains("_delta_log")
                {
                    out.push(path);
                }
            }
        }
        let tables = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/data/conformance/tables");
        let mut files = Vec::new();
        parquet_files(&tables, &mut files);
        assert!(files.len() > 100, "{} checkpoint files", files.len());
        let mut screened = 0;
        for path in files {
            let data = Bytes::from(std::fs::read(&path).unwrap());
            let read = ParquetRecordBatchReaderBuilder::try_new(data.clone())
                .and_then(|b| b.build())
                .map(|r| r.collect::<Result<Vec<_>, _>>());
            let Ok(Ok(_)) = read else { continue };
            let builder = ParquetRecordBatchReaderBuilder::try_new(data.clone()).unwrap();
            check_footer(&data).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            check_page_headers(&data, builder.metadata())
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            screened += 1;
        }
        assert!(screened > 100, "{screened} files screened");
    }

    #[test]
    fn varints_must_be_canonical() {
        assert_eq!(Walker::new(&[0xac, 0x02]).varint(), Ok(300));
        let mut max = vec![0xff; 9];
        max.push(0x01);
        assert_eq!(Walker::new(&max).varint(), Ok(u64::MAX));
        // Bits past 64, an eleventh byte, a padding group.
        max[9] = 0x02;
        assert!(Walker::new(&max).varint().is_err());
        let mut long = vec![0x80; 10];
        long.push(0x01);
        assert!(Walker::new(&long).varint().unwrap_err().contains("varint"));
        assert!(Walker::new(&[0x81, 0x00]).varint().is_err());
        assert_eq!(Walker::new(&[0x00]).varint(), Ok(0));
    }

    #[test]
    fn field_ids_must_increase() {
        // Long-form id 32767, then a delta of 1.
        let bytes = [0x05, 0xfe, 0xff, 0x03, 0x00, 0x15, 0x00, 0x00];
        assert!(walk(&bytes).unwrap_err().contains("field id 32768"));
        // Field 1 twice, field 2 then 1 in the long form, field 0.
        assert!(walk(&[0x15, 0x00, 0x05, 0x02, 0x00, 0x00]).is_err());
        assert!(walk(&[0x25, 0x00, 0x05, 0x02, 0x00, 0x00]).is_err());
        assert!(walk(&[0x05, 0x00, 0x00, 0x00]).is_err());
        // A stop byte with bits in its high nibble.
        assert!(walk(&[0x15, 0x00, 0x10]).unwrap_err().contains("stop"));
    }

    #[test]
    fn walks_well_formed_structs() {
        // A page header {1: 0, 2: -1, 3: 100} with an unknown field 9: struct {1: list<i32>
        // [1, -1], 2: map<i32, double> {1: 0.0}, 3: binary "ab", 4: true, 5: set<binary> []}.
        let mut s = vec![0x15, 0x00, 0x15, 0x01, 0x15, 0xc8, 0x01, 0x6c];
        s.extend_from_slice(&[0x19, 0x25, 0x02, 0x01, 0x1b, 0x01, 0x57, 0x02]);
        s.extend_from_slice(&[0; 8]);
        s.extend_from_slice(&[0x18, 0x02, b'a', b'b', 0x11, 0x1a, 0x08, 0x00, 0x00]);
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
        // A list of 15 elements takes the long form.
        let mut s = vec![0x99, 0xf5, 0x0f];
        s.extend_from_slice(&[0; 15]);
        s.push(0x00);
        assert_eq!(walk(&s), Ok(None));
    }

    #[test]
    fn known_fields_must_have_their_types() {
        // compressed_page_size declared as a binary, a list or a struct: the parquet crate
        // reads a varint there whatever the declaration.
        assert!(walk(&[0x38, 0x02, 0x00, 0x00, 0x00]).is_err());
        assert!(walk(&[0x39, 0x15, 0x01, 0x00]).is_err());
        // A list of the wrong element type, a set where a list is expected.
        let s = [0x29, 0x18, 0x01, b'x', 0x00];
        let metadata = |s: &[u8]| Walker::new(s).strukt(COLUMN_META_DATA, MAX_DEPTH, None);
        assert!(metadata(&s).is_err());
        assert!(metadata(&[0x2a, 0x15, 0x00, 0x00]).is_err());
        assert!(metadata(&[0x29, 0x15, 0x00, 0x00]).is_ok());
        // Integer widths are interchangeable: all varints. Values the crate reads as i32
        // must fit one.
        assert_eq!(walk(&[0x36, 0x04, 0x00]), Ok(Some(2)));
        assert!(walk(&[0x36, 0x80, 0x80, 0x80, 0x80, 0x10, 0x00]).is_err());
    }

    #[test]
    fn unknown_fields_of_unsupported_types_are_refused() {
        // A UUID, an invalid type code, and as list elements.
        let mut s = vec![0x9d];
        s.extend_from_slice(&[0; 17]);
        assert!(walk(&s).unwrap_err().contains("type 13"));
        assert!(walk(&[0x9e, 0x00]).is_err());
        assert!(walk(&[0x99, 0x1d, 0x00]).is_err());
        assert!(walk(&[0x99, 0x0e, 0x00]).is_err());
    }

    #[test]
    fn guarded_readers_fail_after_end_of_file() {
        use parquet::file::reader::ChunkReader;

        let file = GuardedBytes::whole(Bytes::from_static(b"abc"));
        let mut r = file.get_read(1).unwrap();
        let mut buf = [0u8; 4];
        assert_eq!(r.read(&mut buf).unwrap(), 2);
        assert_eq!(&buf[..2], b"bc");
        assert_eq!(r.read(&mut buf).unwrap(), 0);
        assert!(r.read(&mut buf).is_err());
        assert_eq!(r.read(&mut []).unwrap(), 0);
        assert!(file.get_read(4).is_err());
        assert_eq!(file.get_bytes(0, 2).unwrap(), "ab");

        // A range of a larger file serves reads inside it only.
        use parquet::file::reader::Length;
        let part = GuardedBytes::range(10, Bytes::from_static(b"xyz"), 20);
        assert_eq!(part.len(), 20);
        assert_eq!(part.get_bytes(11, 2).unwrap(), "yz");
        assert!(part.get_bytes(9, 1).is_err());
        assert!(part.get_bytes(12, 2).is_err());
        assert!(part.get_read(14).is_err());
        let mut r = part.get_read(12).unwrap();
        assert_eq!(r.read(&mut buf).unwrap(), 1);
        assert_eq!(buf[0], b'z');
        assert_eq!(r.read(&mut buf).unwrap(), 0);
        assert!(r.read(&mut buf).is_err());
    }

    #[test]
    fn collections_of_booleans_are_refused_unless_empty() {
        // Unknown field 9, list<bool> of 3: the parquet crate skips it without reading a
        // byte, the spec reads three.
        assert!(
            walk(&[0x99, 0x31, 0x01, 0x01, 0x01, 0x00])
                .unwrap_err()
                .contains("element type 1")
        );
        assert!(walk(&[0x9a, 0x12, 0x01, 0x00]).is_err());
        assert_eq!(walk(&[0x99, 0x01, 0x00]), Ok(None));
        // map<i32, bool> and map<bool, i32> of one entry.
        assert!(walk(&[0x9b, 0x01, 0x51, 0x02, 0x01, 0x00]).is_err());
        assert!(walk(&[0x9b, 0x01, 0x15, 0x01, 0x02, 0x00]).is_err());
    }

    #[test]
    fn rejects_collections_larger_than_their_input() {
        // An unknown field 9 holding list<i32> of 2^31 - 1 elements: 6 bytes of input.
        assert!(walk(&[0x99, 0xf5, 0xff, 0xff, 0xff, 0xff, 0x07, 0x00]).is_err());
        // list<double> of 3 with 20 bytes left; a size past i32::MAX.
        let mut s = vec![0x99, 0x37];
        s.extend_from_slice(&[0; 20]);
        assert!(walk(&s).is_err());
        assert!(walk(&[0x99, 0xf5, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x00]).is_err());
        // A short list in the long form.
        assert!(
            walk(&[0x99, 0xf5, 0x01, 0x00, 0x00])
                .unwrap_err()
                .contains("long form")
        );
        // map<i32, i32> of 2^31 - 1 entries.
        assert!(walk(&[0x9b, 0xff, 0xff, 0xff, 0xff, 0x07, 0x55, 0x00]).is_err());
        // Binary running past the end, truncation, deep nesting.
        assert!(walk(&[0x98, 0x7f, 0x00]).is_err());
        assert!(walk(&[0x15]).is_err());
        assert!(walk(&[0x9c; 200]).unwrap_err().contains("deeper"));
        assert!(walk(&[0x99, 0x19, 0x19, 0x19, 0x19, 0x19, 0x19].repeat(10)).is_err());
    }
}
