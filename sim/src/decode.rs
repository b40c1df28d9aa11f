//! The oracle's own reading of rows: from a set of live files that the oracle's replay of
//! the log produced (paths with their deletion-vector descriptors, as the log's JSON or a
//! checkpoint's Parquet spells them), the sorted `(id, v)` rows that version holds. It
//! owns the decoding of the simulated table's data files (Parquet, read with the `parquet`
//! crate's Arrow reader, which is not the engine), of deletion vectors (descriptor, Z85,
//! the DV file's entry with its CRC, the portable 64-bit Roaring bitmap; PROTOCOL.md
//! "Deletion Vector Format") and of a classic checkpoint's `add` column. It calls nothing
//! of the engine: an engine bug in scan or DV application cannot judge itself here.
//!
//! Only what the simulated engine writes needs decoding (one Parquet file per add with the
//! columns `id` and `v`, DVs stored `u` with or without a random prefix, `i` inline, and
//! `p` under the store's root); anything else, or anything damaged, is an `Err` naming the
//! file, never a panic.

use std::collections::{BTreeMap, HashMap};

use alluvium::arrow::array::{Array, ArrayRef, Int32Array, Int64Array, StringArray, StructArray};
use bytes::Bytes;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use roaring::RoaringTreemap;
use serde_json::Value;

/// The magic number before a portable 64-bit Roaring bitmap (little-endian).
const ROARING_MAGIC: u32 = 1_681_511_377;

/// A deletion vector's descriptor, as the log or a checkpoint records it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Dv {
    pub(crate) storage_type: String,
    pub(crate) path_or_inline: String,
    pub(crate) offset: Option<i64>,
    pub(crate) size: i64,
    pub(crate) cardinality: i64,
}

impl Dv {
    /// The descriptor in an action's `deletionVector` JSON.
    pub(crate) fn from_json(v: &Value) -> Result<Dv, String> {
        let text = |k: &str| {
            v.get(k)
                .and_then(Value::as_str)
                .map(str::to_string)
                .ok_or_else(|| format!("a deletion vector without {k}: {v}"))
        };
        let int = |k: &str| {
            v.get(k)
                .and_then(Value::as_i64)
                .ok_or_else(|| format!("a deletion vector without {k}: {v}"))
        };
        Ok(Dv {
            storage_type: text("storageType")?,
            path_or_inline: text("pathOrInlineDv")?,
            offset: v.get("offset").and_then(Value::as_i64),
            size: int("sizeInBytes")?,
            cardinality: int("cardinality")?,
        })
    }

    /// The identity a file's logical version has with its path (Delta's DV unique id).
    pub(crate) fn unique_id(&self) -> String {
        match self.offset {
            Some(o) => format!("{}{}@{o}", self.storage_type, self.path_or_inline),
            None => format!("{}{}", self.storage_type, self.path_or_inline),
        }
    }
}

/// One live file of a version: its size and its deletion vector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LiveFile {
    pub(crate) size: i64,
    pub(crate) dv: Option<Dv>,
}

/// The live files of a version, by (path, DV unique id): the protocol's logical file.
pub(crate) type Files = BTreeMap<(String, String), LiveFile>;

/// Where the decoder gets bytes from: a path relative to the table root to the object's
/// bytes (`None`: no such object). The oracle reads the simulated store directly.
pub(crate) type Source<'a> = &'a dyn Fn(&str) -> Option<Bytes>;

/// Decodes rows, keeping each data file's rows and each deletion vector once (a run's
/// versions share most of their files).
pub(crate) struct Decoder<'a> {
    source: Source<'a>,
    /// The root URI of the store, which `p` paths start with.
    root: String,
    data: HashMap<String, Vec<(i64, i64)>>,
    dvs: HashMap<Dv, RoaringTreemap>,
    /// Whether the last failure was a file that does not exist (as retention may leave an
    /// old version), rather than a damaged one.
    missing: bool,
}

impl<'a> Decoder<'a> {
    pub(crate) fn new(source: Source<'a>, root: &str) -> Decoder<'a> {
        Decoder {
            source,
            root: root.to_string(),
            data: HashMap::new(),
            dvs: HashMap::new(),
            missing: false,
        }
    }

    /// The rows `files` hold, sorted (duplicates kept, so that a row present twice shows).
    /// After an `Err`, [`Decoder::missing`] tells whether a file was absent.
    pub(crate) fn rows(&mut self, files: &Files) -> Result<Vec<(i64, i64)>, String> {
        self.missing = false;
        let mut rows = Vec::new();
        for ((path, _), f) in files {
            let deleted = match &f.dv {
                Some(dv) => Some(self.deletion_vector(path, dv)?),
                None => None,
            };
            let all = self.data_rows(path)?;
            if let Some(d) = &deleted
                && let Some(max) = d.max()
                && max >= all.len() as u64
            {
                return Err(format!(
                    "the deletion vector of {path} deletes row {max} of {}",
                    all.len()
                ));
            }
            rows.extend(
                all.iter()
                    .enumerate()
                    .filter(|(i, _)| deleted.as_ref().is_none_or(|d| !d.contains(*i as u64)))
                    .map(|(_, r)| *r),
            );
        }
        rows.sort_unstable();
        Ok(rows)
    }

    /// Whether the last [`Decoder::rows`] failed because a file does not exist.
    pub(crate) fn missing(&self) -> bool {
        self.missing
    }

    fn get(&mut self, path: &str, what: &str) -> Result<Bytes, String> {
        let got = (self.source)(path);
        self.missing = got.is_none();
        got.ok_or_else(|| format!("{what} {path} does not exist"))
    }

    /// Every row of a data file, in its physical order (the DV's row indexes).
    fn data_rows(&mut self, path: &str) -> Result<&[(i64, i64)], String> {
        if !self.data.contains_key(path) {
            let key = percent_decode(path)?;
            let bytes = self.get(&key, "the data file")?;
            let rows = parquet_rows(bytes).map_err(|e| format!("data file {path}: {e}"))?;
            self.data.insert(path.to_string(), rows);
        }
        Ok(self.data.get(path).map_or(&[], Vec::as_slice))
    }

    /// The rows a deletion vector deletes, checked against its descriptor's cardinality.
    fn deletion_vector(&mut self, path: &str, dv: &Dv) -> Result<RoaringTreemap, String> {
        if let Some(d) = self.dvs.get(dv) {
            return Ok(d.clone());
        }
        let bitmap = self
            .read_dv(dv)
            .map_err(|e| format!("the deletion vector of {path} ({}): {e}", dv.unique_id()))?;
        if i64::try_from(bitmap.len()).ok() != Some(dv.cardinality) {
            return Err(format!(
                "the deletion vector of {path} holds {} rows; its descriptor says {}",
                bitmap.len(),
                dv.cardinality
            ));
        }
        self.dvs.insert(dv.clone(), bitmap.clone());
        Ok(bitmap)
    }

    fn read_dv(&mut self, dv: &Dv) -> Result<RoaringTreemap, String> {
        let size = usize::try_from(dv.size).map_err(|_| "a negative size".to_string())?;
        // A missing offset is the first entry, after the format-version byte.
        let offset =
            usize::try_from(dv.offset.unwrap_or(1)).map_err(|_| "a negative offset".to_string())?;
        let file = match dv.storage_type.as_str() {
            "i" => {
                let mut data = z85::decode(dv.path_or_inline.as_bytes())
                    .map_err(|e| format!("inline data is not Z85: {e:?}"))?;
                if size > data.len() {
                    return Err(format!("inline data of {} bytes, size {size}", data.len()));
                }
                // Z85 pads to whole words; the descriptor's size says what is real.
                data.truncate(size);
                return bitmap(&data);
            }
            "u" => {
                let text = &dv.path_or_inline;
                let cut = text
                    .len()
                    .checked_sub(20)
                    .filter(|c| text.is_char_boundary(*c));
                let Some(cut) = cut else {
                    return Err("a `u` path needs a 20-character Z85 UUID".into());
                };
                let (prefix, uuid) = text.split_at(cut);
                let uuid = z85::decode(uuid.as_bytes())
                    .map_err(|e| format!("the UUID is not Z85: {e:?}"))?;
                let name = format!("deletion_vector_{}.bin", uuid_text(&uuid)?);
                if prefix.is_empty() {
                    name
                } else {
                    format!("{prefix}/{name}")
                }
            }
            "p" => {
                let uri = percent_decode(&dv.path_or_inline)?;
                let rest = uri
                    .strip_prefix(&self.root)
                    .ok_or_else(|| format!("{uri} is outside the table at {}", self.root))?;
                rest.trim_start_matches('/').to_string()
            }
            other => return Err(format!("unknown storage type {other:?}")),
        };
        let bytes = self.get(&file, "the deletion-vector file")?;
        if bytes.first() != Some(&1) {
            return Err(format!(
                "{file} starts with format version {:?}, not 1",
                bytes.first()
            ));
        }
        let entry = bytes
            .get(offset..)
            .ok_or_else(|| format!("offset {offset} is past the end of {file}"))?;
        let (len, rest) = entry
            .split_first_chunk::<4>()
            .ok_or_else(|| format!("{file}: the entry at {offset} is truncated"))?;
        let len = u32::from_be_bytes(*len) as usize;
        if len != size {
            return Err(format!(
                "{file}: the entry at {offset} has {len} bytes; the descriptor says {size}"
            ));
        }
        let (data, crc) = (rest.get(..size), rest.get(size..size + 4));
        let (Some(data), Some(crc)) = (data, crc) else {
            return Err(format!("{file}: the entry at {offset} is truncated"));
        };
        let stored = u32::from_be_bytes([crc[0], crc[1], crc[2], crc[3]]);
        if stored != crc32fast::hash(data) {
            return Err(format!("{file}: the entry at {offset} fails its CRC"));
        }
        bitmap(data)
    }
}

/// A serialized bitmap: the magic (little-endian), then a portable 64-bit Roaring bitmap
/// with nothing after it.
fn bitmap(data: &[u8]) -> Result<RoaringTreemap, String> {
    let (magic, mut payload) = data
        .split_first_chunk::<4>()
        .ok_or_else(|| format!("a bitmap of {} bytes", data.len()))?;
    if u32::from_le_bytes(*magic) != ROARING_MAGIC {
        return Err(format!("bitmap magic {}", u32::from_le_bytes(*magic)));
    }
    let b = RoaringTreemap::deserialize_from(&mut payload).map_err(|e| format!("bitmap: {e}"))?;
    if !payload.is_empty() {
        return Err(format!("{} bytes after the bitmap", payload.len()));
    }
    Ok(b)
}

/// A UUID's 16 bytes as its hyphenated lower-case text.
fn uuid_text(b: &[u8]) -> Result<String, String> {
    if b.len() != 16 {
        return Err(format!("a UUID of {} bytes", b.len()));
    }
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    Ok(format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    ))
}

/// A path of the log (a URI-encoded relative path) as the store's key.
fn percent_decode(path: &str) -> Result<String, String> {
    let b = path.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = path
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| format!("bad percent escape in {path}"))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| format!("{path} decodes to invalid UTF-8"))
}

/// The batches of a Parquet file, read whole.
fn parquet_batches(bytes: Bytes) -> Result<Vec<alluvium::arrow::array::RecordBatch>, String> {
    let reader = ParquetRecordBatchReaderBuilder::try_new(bytes)
        .and_then(|b| b.build())
        .map_err(|e| format!("not Parquet: {e}"))?;
    reader
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("undecodable Parquet: {e}"))
}

/// The `(id, v)` rows of a data file, in its physical order.
fn parquet_rows(bytes: Bytes) -> Result<Vec<(i64, i64)>, String> {
    let mut rows = Vec::new();
    for b in parquet_batches(bytes)? {
        let col = |name: &str| {
            b.column_by_name(name)
                .and_then(|c| c.as_any().downcast_ref::<Int64Array>().cloned())
                .ok_or_else(|| format!("no Int64 column {name}"))
        };
        let (ids, vs) = (col("id")?, col("v")?);
        if ids.null_count() > 0 || vs.null_count() > 0 {
            return Err("null ids or values".into());
        }
        rows.extend(
            ids.values()
                .iter()
                .copied()
                .zip(vs.values().iter().copied()),
        );
    }
    Ok(rows)
}

/// A column of a struct array, by name.
fn field<'b>(s: &'b StructArray, name: &str) -> Option<&'b ArrayRef> {
    s.column_by_name(name)
}

fn str_at(a: Option<&ArrayRef>, i: usize) -> Option<String> {
    let a = a?.as_any().downcast_ref::<StringArray>()?;
    a.is_valid(i).then(|| a.value(i).to_string())
}

fn int_at(a: Option<&ArrayRef>, i: usize) -> Option<i64> {
    let a = a?;
    if !a.is_valid(i) {
        return None;
    }
    if let Some(x) = a.as_any().downcast_ref::<Int64Array>() {
        return Some(x.value(i));
    }
    a.as_any()
        .downcast_ref::<Int32Array>()
        .map(|x| i64::from(x.value(i)))
}

/// What a classic checkpoint holds that the oracle replays: the live files and each
/// application's transaction version.
#[derive(Debug, Default)]
pub(crate) struct Checkpoint {
    pub(crate) files: Files,
    pub(crate) apps: BTreeMap<String, i64>,
}

/// The live files of a classic (single-file) checkpoint: its `add` column. Its `remove`
/// rows are tombstones, not live files.
pub(crate) fn checkpoint_files(bytes: Bytes) -> Result<Files, String> {
    checkpoint(bytes).map(|c| c.files)
}

/// A classic (single-file) checkpoint: its `add` column (its `remove` rows are tombstones,
/// not live files) and its `txn` column.
pub(crate) fn checkpoint(bytes: Bytes) -> Result<Checkpoint, String> {
    let mut files = Files::new();
    let mut apps = BTreeMap::new();
    for b in parquet_batches(bytes)? {
        if let Some(txn) = b
            .column_by_name("txn")
            .and_then(|c| c.as_any().downcast_ref::<StructArray>())
        {
            for i in (0..txn.len()).filter(|i| txn.is_valid(*i)) {
                let app = str_at(field(txn, "appId"), i).ok_or("a txn without an appId")?;
                let version = int_at(field(txn, "version"), i).ok_or("a txn without a version")?;
                if apps.insert(app.clone(), version).is_some() {
                    return Err(format!("appId {app} has two txn rows"));
                }
            }
        }
        let Some(add) = b
            .column_by_name("add")
            .and_then(|c| c.as_any().downcast_ref::<StructArray>())
        else {
            return Err("no add column".into());
        };
        for i in 0..add.len() {
            if !add.is_valid(i) {
                continue;
            }
            let path = str_at(field(add, "path"), i).ok_or("an add without a path")?;
            let size = int_at(field(add, "size"), i).unwrap_or(-1);
            let dv = match field(add, "deletionVector")
                .and_then(|c| c.as_any().downcast_ref::<StructArray>())
            {
                Some(d) if d.is_valid(i) => Some(Dv {
                    storage_type: str_at(field(d, "storageType"), i)
                        .ok_or("a deletion vector without storageType")?,
                    path_or_inline: str_at(field(d, "pathOrInlineDv"), i)
                        .ok_or("a deletion vector without pathOrInlineDv")?,
                    offset: int_at(field(d, "offset"), i),
                    size: int_at(field(d, "sizeInBytes"), i)
                        .ok_or("a deletion vector without sizeInBytes")?,
                    cardinality: int_at(field(d, "cardinality"), i)
                        .ok_or("a deletion vector without cardinality")?,
                }),
                _ => None,
            };
            let id = dv.as_ref().map(Dv::unique_id).unwrap_or_default();
            if files
                .insert((path.clone(), id), LiveFile { size, dv })
                .is_some()
            {
                return Err(format!("{path} is added twice"));
            }
        }
    }
    Ok(Checkpoint { files, apps })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn uuids_and_escapes_read_as_the_protocol_says() {
        // PROTOCOL.md's example: `ab^-aqEH.-t@S}K{vb[*k^` is prefix `ab` and this UUID.
        let uuid = z85::decode("^-aqEH.-t@S}K{vb[*k^").unwrap();
        assert_eq!(
            uuid_text(&uuid).unwrap(),
            "d2c639aa-8816-431a-aaf6-d3fe2512ff61"
        );
        assert_eq!(percent_decode("a%3Db%20c").unwrap(), "a=b c");
        assert!(percent_decode("a%3").is_err());
        assert!(uuid_text(&[1, 2]).is_err());
    }

    #[test]
    fn damaged_deletion_vectors_are_errors() {
        let source = |_: &str| Some(Bytes::from_static(&[1, 0, 0, 0, 9, 1, 2]));
        let mut d = Decoder::new(&source, "memory://");
        let dv = |t: &str, p: &str| Dv {
            storage_type: t.into(),
            path_or_inline: p.into(),
            offset: Some(1),
            size: 9,
            cardinality: 1,
        };
        assert!(d.read_dv(&dv("u", "short")).is_err());
        assert!(d.read_dv(&dv("x", "abc")).is_err());
        assert!(d.read_dv(&dv("i", "abcd")).is_err());
        assert!(d.read_dv(&dv("u", "^-aqEH.-t@S}K{vb[*k^")).is_err());
        assert!(d.read_dv(&dv("p", "file:///elsewhere")).is_err());
    }
}
