//! The object-container reader: the header, its schema, and every record decoded against it.
//!
//! Input is untrusted (a damaged or foreign metadata file): every length is checked against
//! what remains, nesting is bounded, and the work is bounded by the input's size, so no input
//! panics, hangs or allocates more than a small multiple of its own size.

use serde_json::Value;

use super::MAGIC;
use super::encode::Datum;

/// How deeply a schema or a value may nest.
const MAX_DEPTH: usize = 64;

/// An Avro schema, as far as this reader understands it.
#[derive(Debug, Clone, PartialEq)]
pub enum Schema {
    /// `null`
    Null,
    /// `boolean`
    Boolean,
    /// `int`
    Int,
    /// `long`
    Long,
    /// `float`
    Float,
    /// `double`
    Double,
    /// `bytes`
    Bytes,
    /// `string`
    String,
    /// `fixed` of the given size.
    Fixed(usize),
    /// A union of the branches.
    Union(Vec<Schema>),
    /// An array of items.
    Array(Box<Schema>),
    /// A record: its fields' names, Iceberg field ids (the `field-id` attribute) and schemas.
    Record(Vec<(String, Option<i64>, Schema)>),
}

impl Schema {
    /// Parses a schema's JSON text.
    ///
    /// # Errors
    /// A message naming what is not understood (named-type references, maps, enums: none
    /// occur in Iceberg's manifest schemas).
    pub fn parse(text: &str) -> Result<Schema, String> {
        let v: Value =
            serde_json::from_str(text).map_err(|e| format!("schema is not JSON: {e}"))?;
        Self::from_json(&v, 0)
    }

    fn from_json(v: &Value, depth: usize) -> Result<Schema, String> {
        if depth > MAX_DEPTH {
            return Err("schema nests too deeply".into());
        }
        match v {
            Value::String(s) => primitive(s),
            Value::Array(branches) => branches
                .iter()
                .map(|b| Self::from_json(b, depth + 1))
                .collect::<Result<Vec<_>, _>>()
                .map(Schema::Union),
            Value::Object(o) => {
                let ty = o.get("type").ok_or("schema object without a type")?;
                match ty.as_str() {
                    Some("record") => {
                        let fields = o
                            .get("fields")
                            .and_then(Value::as_array)
                            .ok_or("record without fields")?;
                        let mut out = Vec::with_capacity(fields.len().min(1024));
                        for f in fields {
                            let name = f
                                .get("name")
                                .and_then(Value::as_str)
                                .ok_or("record field without a name")?;
                            let id = f.get("field-id").and_then(Value::as_i64);
                            let schema = Self::from_json(
                                f.get("type").ok_or("field without a type")?,
                                depth + 1,
                            )?;
                            out.push((name.to_string(), id, schema));
                        }
                        Ok(Schema::Record(out))
                    }
                    Some("array") => Ok(Schema::Array(Box::new(Self::from_json(
                        o.get("items").ok_or("array without items")?,
                        depth + 1,
                    )?))),
                    Some("fixed") => o
                        .get("size")
                        .and_then(Value::as_u64)
                        .and_then(|s| usize::try_from(s).ok())
                        .map(Schema::Fixed)
                        .ok_or_else(|| "fixed without a size".to_string()),
                    Some(_) => Self::from_json(ty, depth + 1),
                    None => Self::from_json(ty, depth + 1),
                }
            }
            _ => Err(format!("unexpected schema JSON {v}")),
        }
    }
}

fn primitive(name: &str) -> Result<Schema, String> {
    Ok(match name {
        "null" => Schema::Null,
        "boolean" => Schema::Boolean,
        "int" => Schema::Int,
        "long" => Schema::Long,
        "float" => Schema::Float,
        "double" => Schema::Double,
        "bytes" => Schema::Bytes,
        "string" => Schema::String,
        other => return Err(format!("unsupported Avro type `{other}`")),
    })
}

/// A cursor over untrusted bytes with a work budget.
struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
    budget: usize,
}

impl Reader<'_> {
    fn byte(&mut self) -> Result<u8, String> {
        let b = *self.data.get(self.pos).ok_or("unexpected end of file")?;
        self.pos += 1;
        Ok(b)
    }

    fn long(&mut self) -> Result<i64, String> {
        let mut n: u64 = 0;
        for shift in (0..70).step_by(7) {
            let b = self.byte()?;
            if shift == 63 && b > 1 {
                return Err("varint overflows 64 bits".into());
            }
            n |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(((n >> 1) as i64) ^ -((n & 1) as i64));
            }
        }
        Err("varint longer than 10 bytes".into())
    }

    fn take(&mut self, len: usize) -> Result<&[u8], String> {
        let end = self.pos.checked_add(len).filter(|e| *e <= self.data.len());
        let end = end.ok_or("a length runs past the end of the file")?;
        let s = &self.data[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    fn bytes(&mut self) -> Result<Vec<u8>, String> {
        let len = usize::try_from(self.long()?).map_err(|_| "negative length")?;
        Ok(self.take(len)?.to_vec())
    }

    fn spend(&mut self) -> Result<(), String> {
        self.budget = self
            .budget
            .checked_sub(1)
            .ok_or("too many values for the file's size")?;
        Ok(())
    }

    fn datum(&mut self, schema: &Schema, depth: usize) -> Result<Datum, String> {
        if depth > MAX_DEPTH {
            return Err("value nests too deeply".into());
        }
        self.spend()?;
        Ok(match schema {
            Schema::Null => Datum::Null,
            Schema::Boolean => match self.byte()? {
                0 => Datum::Boolean(false),
                1 => Datum::Boolean(true),
                b => return Err(format!("boolean byte {b}")),
            },
            Schema::Int => {
                Datum::Int(i32::try_from(self.long()?).map_err(|_| "int out of range".to_string())?)
            }
            Schema::Long => Datum::Long(self.long()?),
            Schema::Float => {
                let b: [u8; 4] = self.take(4)?.try_into().map_err(|_| "short float")?;
                Datum::Float(f32::from_le_bytes(b))
            }
            Schema::Double => {
                let b: [u8; 8] = self.take(8)?.try_into().map_err(|_| "short double")?;
                Datum::Double(f64::from_le_bytes(b))
            }
            Schema::Bytes => Datum::Bytes(self.bytes()?),
            Schema::String => Datum::String(
                String::from_utf8(self.bytes()?).map_err(|_| "string is not UTF-8".to_string())?,
            ),
            Schema::Fixed(n) => Datum::Fixed(self.take(*n)?.to_vec()),
            Schema::Union(branches) => {
                let i = self.long()?;
                let b = usize::try_from(i)
                    .ok()
                    .and_then(|i| branches.get(i))
                    .ok_or_else(|| format!("union branch {i} does not exist"))?;
                Datum::Union(i as u32, Box::new(self.datum(b, depth + 1)?))
            }
            Schema::Array(item) => {
                let mut items = Vec::new();
                loop {
                    let mut count = self.long()?;
                    if count == 0 {
                        break;
                    }
                    if count < 0 {
                        // A negative count is followed by the block's size in bytes.
                        count = count.checked_neg().ok_or("array block count overflows")?;
                        self.long()?;
                    }
                    for _ in 0..count {
                        items.push(self.datum(item, depth + 1)?);
                    }
                }
                Datum::Array(items)
            }
            Schema::Record(fields) => Datum::Record(
                fields
                    .iter()
                    .map(|(_, _, s)| self.datum(s, depth + 1))
                    .collect::<Result<_, _>>()?,
            ),
        })
    }
}

/// A decoded container file: its metadata (`avro.schema` included), schema and records.
#[derive(Debug, Clone, PartialEq)]
pub struct Container {
    /// The header's key-value metadata, in file order.
    pub metadata: Vec<(String, Vec<u8>)>,
    /// The writer's schema.
    pub schema: Schema,
    /// Every record.
    pub records: Vec<Datum>,
}

impl Container {
    /// A metadata value as text.
    pub fn meta(&self, key: &str) -> Option<&str> {
        self.metadata
            .iter()
            .find(|(k, _)| k == key)
            .and_then(|(_, v)| std::str::from_utf8(v).ok())
    }
}

/// Reads an object-container file written with the `null` codec.
///
/// # Errors
/// A message saying what is wrong: not Avro, an unsupported codec or schema, a truncated
/// or inconsistent block, a sync marker that does not match.
pub fn read_container(data: &[u8]) -> Result<Container, String> {
    let mut r = Reader {
        data,
        pos: 0,
        budget: data.len().saturating_mul(2).saturating_add(1024),
    };
    if r.take(4)? != MAGIC {
        return Err("not an Avro object-container file".into());
    }
    let mut metadata = Vec::new();
    loop {
        let mut count = r.long()?;
        if count == 0 {
            break;
        }
        if count < 0 {
            count = count
                .checked_neg()
                .ok_or("metadata block count overflows")?;
            r.long()?;
        }
        for _ in 0..count {
            r.spend()?;
            let k = String::from_utf8(r.bytes()?).map_err(|_| "metadata key is not UTF-8")?;
            let v = r.bytes()?;
            metadata.push((k, v));
        }
    }
    let find = |key: &str| {
        metadata
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_slice())
    };
    match find("avro.codec") {
        None | Some(b"null") => {}
        Some(other) => {
            return Err(format!(
                "unsupported codec `{}`",
                String::from_utf8_lossy(other)
            ));
        }
    }
    let schema_text = find("avro.schema").ok_or("no avro.schema in the header")?;
    let schema =
        Schema::parse(std::str::from_utf8(schema_text).map_err(|_| "schema is not UTF-8")?)?;
    let sync = r.take(16)?.to_vec();
    let mut records = Vec::new();
    while r.pos < data.len() {
        let count = r.long()?;
        let size = usize::try_from(r.long()?).map_err(|_| "negative block size")?;
        let start = r.pos;
        if count < 0 {
            return Err("negative block count".into());
        }
        for _ in 0..count {
            records.push(r.datum(&schema, 0)?);
        }
        if r.pos - start != size {
            return Err(format!(
                "block says {size} bytes, its records take {}",
                r.pos - start
            ));
        }
        if r.take(16)? != sync.as_slice() {
            return Err("sync marker does not match the header's".into());
        }
    }
    Ok(Container {
        metadata,
        schema,
        records,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::avro::write_container;

    const SCHEMA: &str = r#"{"type":"record","name":"r","fields":[
        {"name":"a","type":"long","field-id":1},
        {"name":"b","type":["null","string"],"field-id":2},
        {"name":"c","type":{"type":"array","items":{"type":"record","name":"kv","fields":[
            {"name":"key","type":"int","field-id":3},{"name":"value","type":"bytes","field-id":4}]},
            "logicalType":"map"},"field-id":5},
        {"name":"d","type":"boolean","field-id":6}]}"#;

    fn record(i: i64) -> Datum {
        Datum::Record(vec![
            Datum::Long(i * 1_000_003 - 7),
            Datum::optional((i % 2 == 0).then(|| Datum::String(format!("é{i}")))),
            Datum::Array(
                (0..i % 3)
                    .map(|k| {
                        Datum::Record(vec![Datum::Int(k as i32), Datum::Bytes(vec![k as u8; 3])])
                    })
                    .collect(),
            ),
            Datum::Boolean(i % 5 == 0),
        ])
    }

    #[test]
    fn what_is_written_reads_back() {
        let records: Vec<Datum> = (0..50).map(record).collect();
        let file = write_container(SCHEMA, &[("format-version", "2".into())], &records);
        let c = read_container(&file).unwrap();
        assert_eq!(c.records, records);
        assert_eq!(c.meta("format-version"), Some("2"));
        let Schema::Record(fields) = &c.schema else {
            panic!()
        };
        assert_eq!(fields[2].1, Some(5));
        let empty = write_container(SCHEMA, &[], &[]);
        assert!(read_container(&empty).unwrap().records.is_empty());
    }

    #[test]
    fn damage_is_an_error_not_a_panic() {
        let records: Vec<Datum> = (0..5).map(record).collect();
        let file = write_container(SCHEMA, &[], &records);
        // A cut exactly after the header leaves a valid file of no records.
        let header = write_container(SCHEMA, &[], &[]).len();
        for cut in (0..file.len()).filter(|c| *c != header) {
            assert!(read_container(&file[..cut]).is_err(), "cut at {cut}");
        }
        let mut flipped = file.clone();
        let last = flipped.len() - 1;
        flipped[last] ^= 0xff;
        assert!(read_container(&flipped).is_err());
        assert!(read_container(b"Obj\x01\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01").is_err());
    }
}
