//! Avro binary encoding of a value tree, and the object-container writer.
//!
//! The encoder trusts its caller to build [`Datum`]s that match the schema text it writes
//! in the header: both come from the same module (`manifest`, `manifest_list`), and the
//! round-trip tests decode every file written with the schema read back from its header.

use md5::{Digest, Md5};

use super::MAGIC;

/// A value to encode: the shapes Iceberg's manifest schemas use.
#[derive(Debug, Clone, PartialEq)]
pub enum Datum {
    /// Avro `null`.
    Null,
    /// Avro `boolean`.
    Boolean(bool),
    /// Avro `int`.
    Int(i32),
    /// Avro `long`.
    Long(i64),
    /// Avro `float`.
    Float(f32),
    /// Avro `double`.
    Double(f64),
    /// Avro `bytes`.
    Bytes(Vec<u8>),
    /// Avro `string`.
    String(String),
    /// Avro `fixed`: the bytes, exactly the schema's size.
    Fixed(Vec<u8>),
    /// A union value: the index of its branch and the value.
    Union(u32, Box<Datum>),
    /// Avro `array`.
    Array(Vec<Datum>),
    /// Avro `record`: the fields in schema order.
    Record(Vec<Datum>),
}

impl Datum {
    /// `["null", T]` holding `value`, or null.
    pub fn optional(value: Option<Datum>) -> Datum {
        match value {
            None => Datum::Union(0, Box::new(Datum::Null)),
            Some(v) => Datum::Union(1, Box::new(v)),
        }
    }
}

/// Appends `v` zig-zag varint encoded (Avro `long`; `int` uses the same encoding).
pub(crate) fn put_long(out: &mut Vec<u8>, v: i64) {
    let mut n = ((v << 1) ^ (v >> 63)) as u64;
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_long(out, b.len() as i64);
    out.extend_from_slice(b);
}

/// Appends the binary encoding of `d`.
pub(crate) fn encode(out: &mut Vec<u8>, d: &Datum) {
    match d {
        Datum::Null => {}
        Datum::Boolean(b) => out.push(u8::from(*b)),
        Datum::Int(v) => put_long(out, i64::from(*v)),
        Datum::Long(v) => put_long(out, *v),
        Datum::Float(v) => out.extend_from_slice(&v.to_le_bytes()),
        Datum::Double(v) => out.extend_from_slice(&v.to_le_bytes()),
        Datum::Bytes(b) => put_bytes(out, b),
        Datum::String(s) => put_bytes(out, s.as_bytes()),
        Datum::Fixed(b) => out.extend_from_slice(b),
        Datum::Union(branch, v) => {
            put_long(out, i64::from(*branch));
            encode(out, v);
        }
        Datum::Array(items) => {
            // One block holding every item, then the zero-count end marker.
            if !items.is_empty() {
                put_long(out, items.len() as i64);
                for item in items {
                    encode(out, item);
                }
            }
            put_long(out, 0);
        }
        Datum::Record(fields) => {
            for f in fields {
                encode(out, f);
            }
        }
    }
}

/// Writes an object-container file: the header (magic, metadata with `avro.schema` and
/// `avro.codec = null`, then `metadata` in the order given), one data block holding every
/// record, and the sync marker.
///
/// `records` may be values or references to them.
///
/// The sync marker is the MD5 of the schema and the encoded records, so equal content gives
/// equal bytes (Avro asks only that the marker be unlikely to occur in the data).
pub fn write_container<I>(schema_json: &str, metadata: &[(&str, String)], records: I) -> Vec<u8>
where
    I: IntoIterator,
    I::Item: std::borrow::Borrow<Datum>,
{
    use std::borrow::Borrow;
    // Records are encoded one at a time, so a caller can produce them lazily and a large
    // manifest never exists twice in memory (as values and as bytes).
    let mut body = Vec::new();
    let mut count: i64 = 0;
    for r in records {
        encode(&mut body, r.borrow());
        count += 1;
    }
    let mut hasher = Md5::new();
    hasher.update(schema_json.as_bytes());
    hasher.update(&body);
    let sync: [u8; 16] = hasher.finalize().into();

    let mut out = Vec::with_capacity(body.len() + schema_json.len() + 256);
    out.extend_from_slice(MAGIC);
    let mut meta: Vec<(&str, &[u8])> = vec![
        ("avro.schema", schema_json.as_bytes()),
        ("avro.codec", b"null"),
    ];
    meta.extend(metadata.iter().map(|(k, v)| (*k, v.as_bytes())));
    put_long(&mut out, meta.len() as i64);
    for (k, v) in meta {
        put_bytes(&mut out, k.as_bytes());
        put_bytes(&mut out, v);
    }
    put_long(&mut out, 0);
    out.extend_from_slice(&sync);
    if count > 0 {
        put_long(&mut out, count);
        put_long(&mut out, body.len() as i64);
        out.extend_from_slice(&body);
        out.extend_from_slice(&sync);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longs_are_zigzag_varints() {
        // The Avro specification's examples.
        for (v, want) in [
            (0i64, vec![0x00u8]),
            (-1, vec![0x01]),
            (1, vec![0x02]),
            (-2, vec![0x03]),
            (2, vec![0x04]),
            (-64, vec![0x7f]),
            (64, vec![0x80, 0x01]),
        ] {
            let mut out = Vec::new();
            put_long(&mut out, v);
            assert_eq!(out, want, "{v}");
        }
    }

    #[test]
    fn equal_content_gives_equal_files() {
        let rec = [Datum::Record(vec![Datum::Long(7)])];
        let schema = r#"{"type":"record","name":"r","fields":[{"name":"a","type":"long"}]}"#;
        assert_eq!(
            write_container(schema, &[], &rec),
            write_container(schema, &[], &rec)
        );
        let other = [Datum::Record(vec![Datum::Long(8)])];
        assert_ne!(
            write_container(schema, &[], &rec),
            write_container(schema, &[], &other)
        );
    }
}
