//! Deletion vectors (PROTOCOL.md "Deletion Vectors"): the descriptor in `add`/`remove`, where
//! its bitmap lives, and the binary formats.
//!
//! A deletion vector marks rows of a data file (0-based physical row indexes) as deleted.
//! Storage types:
//! * `u`: a file `<prefix>/deletion_vector_<uuid>.bin` under the table root; the descriptor
//!   holds the prefix and the Z85 text of the UUID's 16 bytes.
//! * `p`: a file at an absolute URI.
//! * `i`: the bitmap itself, Z85-encoded inline.

mod format;
mod writer;
pub mod z85;

use serde::{Deserialize, Serialize};

pub use format::{
    DV_FILE_FORMAT_VERSION, PORTABLE_ROARING_MAGIC, decode_bitmap, decode_file_entry,
    encode_bitmap, encode_file,
};

pub use writer::{
    DvFile, DvFileWriter, INLINE_DV_MAX_BYTES, encoded_bitmap_len, inline_descriptor,
};

use crate::{LogError, Result};

/// The deletion-vector descriptor stored in `add.deletionVector` / `remove.deletionVector`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeletionVectorDescriptor {
    /// `u`, `i` or `p`.
    pub storage_type: String,
    /// Prefix + Z85 UUID (`u`), inline Z85 data (`i`) or an absolute URI (`p`).
    pub path_or_inline_dv: String,
    /// Byte offset of the DV inside its file (absent for inline DVs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<i32>,
    /// Size of the serialized bitmap in bytes.
    pub size_in_bytes: i32,
    /// Number of deleted rows.
    pub cardinality: i64,
}

/// Where the bitmap of a deletion vector is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DvLocation {
    /// Inline: the serialized bitmap itself.
    Inline(Vec<u8>),
    /// In a file under the table root (table-relative path) at `offset`.
    Relative {
        /// Path relative to the table root.
        path: String,
        /// Offset of the entry (its size field) in the file.
        offset: u64,
    },
    /// In a file at an absolute URI at `offset`.
    Absolute {
        /// The decoded URI.
        uri: String,
        /// Offset of the entry in the file.
        offset: u64,
    },
}

impl DeletionVectorDescriptor {
    /// The identifier that, with the file path, identifies a logical file in log replay:
    /// `storageType + pathOrInlineDv (+ "@" + offset)`.
    pub fn unique_id(&self) -> String {
        match self.offset {
            Some(o) => format!("{}{}@{o}", self.storage_type, self.path_or_inline_dv),
            None => format!("{}{}", self.storage_type, self.path_or_inline_dv),
        }
    }

    /// Resolves where the bitmap lives.
    ///
    /// # Errors
    /// [`LogError::CorruptDeletionVector`] for an unknown storage type, a malformed UUID or
    /// inline payload, or a negative size/offset.
    pub fn location(&self) -> Result<DvLocation> {
        let bad = |reason: String| LogError::CorruptDeletionVector {
            location: self.path_or_inline_dv.clone(),
            reason,
        };
        if self.size_in_bytes < 0 || self.cardinality < 0 {
            return Err(bad("negative size or cardinality".into()));
        }
        // A missing offset means the first entry, right after the format version byte.
        let offset =
            u64::try_from(self.offset.unwrap_or(1)).map_err(|_| bad("negative offset".into()))?;
        match self.storage_type.as_str() {
            "u" => {
                let text = &self.path_or_inline_dv;
                if text.len() < 20 || !text.is_char_boundary(text.len() - 20) {
                    return Err(bad(
                        "a `u` deletion vector needs a 20-character Z85 UUID".into()
                    ));
                }
                let (prefix, encoded) = text.split_at(text.len() - 20);
                let bytes = z85::decode(encoded).map_err(|e| bad(e.to_string()))?;
                let uuid = uuid::Uuid::from_slice(&bytes).map_err(|e| bad(e.to_string()))?;
                let name = format!("deletion_vector_{uuid}.bin");
                let path = if prefix.is_empty() {
                    name
                } else {
                    format!("{prefix}/{name}")
                };
                Ok(DvLocation::Relative { path, offset })
            }
            "p" => {
                let uri = crate::path::percent_decode(&self.path_or_inline_dv)
                    .map_err(|e| bad(format!("bad absolute path: {e}")))?;
                Ok(DvLocation::Absolute { uri, offset })
            }
            "i" => {
                let mut data =
                    z85::decode_inline(&self.path_or_inline_dv).map_err(|e| bad(e.to_string()))?;
                let size =
                    usize::try_from(self.size_in_bytes).map_err(|_| bad("bad size".into()))?;
                if size > data.len() {
                    return Err(bad(format!(
                        "inline data has {} bytes, descriptor says {size}",
                        data.len()
                    )));
                }
                data.truncate(size);
                Ok(DvLocation::Inline(data))
            }
            other => Err(bad(format!("unknown storage type {other:?}"))),
        }
    }

    /// Builds the descriptor of a `u` deletion vector stored in
    /// `<prefix>/deletion_vector_<uuid>.bin` at `offset`.
    pub fn for_uuid_file(
        prefix: &str,
        uuid: uuid::Uuid,
        offset: i32,
        size_in_bytes: i32,
        cardinality: i64,
    ) -> Self {
        DeletionVectorDescriptor {
            storage_type: "u".to_string(),
            path_or_inline_dv: format!("{prefix}{}", z85::encode(uuid.as_bytes())),
            offset: Some(offset),
            size_in_bytes,
            cardinality,
        }
    }
}

/// Reads and decodes the bitmap of a deletion vector, checking its size, checksum and
/// cardinality against the descriptor.
///
/// # Errors
/// [`LogError::CorruptDeletionVector`] naming the DV file (or `inline`), or a storage error
/// if the file is missing.
pub fn read_deletion_vector(
    store: &dyn alluvium_storage::ObjectStore,
    dv: &DeletionVectorDescriptor,
) -> Result<roaring::RoaringTreemap> {
    let bitmap = read_deletion_vector_bitmap(store, dv)?;
    if i64::try_from(bitmap.len()).ok() != Some(dv.cardinality) {
        return Err(LogError::CorruptDeletionVector {
            location: dv_location_text(dv),
            reason: format!(
                "bitmap holds {} rows, descriptor says {}",
                bitmap.len(),
                dv.cardinality
            ),
        });
    }
    Ok(bitmap)
}

/// Where a DV's bitmap lives, for messages: the file, or `inline`.
fn dv_location_text(dv: &DeletionVectorDescriptor) -> String {
    match dv.location() {
        Ok(DvLocation::Inline(_)) => "inline".into(),
        Ok(DvLocation::Relative { path, .. }) => path,
        Ok(DvLocation::Absolute { uri, .. }) => uri,
        Err(_) => dv.path_or_inline_dv.clone(),
    }
}

/// Reads and decodes the bitmap of a deletion vector, checking its size and checksum but
/// not its cardinality (so a checker can tell the two kinds of damage apart; readers use
/// [`read_deletion_vector`]).
///
/// # Errors
/// As [`read_deletion_vector`].
pub fn read_deletion_vector_bitmap(
    store: &dyn alluvium_storage::ObjectStore,
    dv: &DeletionVectorDescriptor,
) -> Result<roaring::RoaringTreemap> {
    let size = usize::try_from(dv.size_in_bytes).unwrap_or(0);
    let entry_len = 4 + size as u64 + 4;
    let (shown, bitmap) = match dv.location()? {
        DvLocation::Inline(data) => ("inline".to_string(), decode_bitmap(&data)),
        DvLocation::Relative { path, offset } => {
            let key = alluvium_storage::StorePath::parse(path.as_str()).map_err(|e| {
                LogError::CorruptDeletionVector {
                    location: path.clone(),
                    reason: e.to_string(),
                }
            })?;
            let data = store.get_range(&key, offset..offset + entry_len)?;
            (path, decode_file_entry(&data, size))
        }
        DvLocation::Absolute { uri, offset } => {
            let data = slice_entry(store.get_external(&uri)?, offset, entry_len, &uri)?;
            (uri, decode_file_entry(&data, size))
        }
    };
    bitmap.map_err(|reason| LogError::CorruptDeletionVector {
        location: shown,
        reason,
    })
}

fn slice_entry(data: bytes::Bytes, offset: u64, len: u64, shown: &str) -> Result<bytes::Bytes> {
    let start = usize::try_from(offset).unwrap_or(usize::MAX);
    let end = usize::try_from(offset.saturating_add(len)).unwrap_or(usize::MAX);
    if end > data.len() || start > end {
        return Err(LogError::CorruptDeletionVector {
            location: shown.to_string(),
            reason: format!(
                "entry at offset {offset} runs past the end of the {}-byte file",
                data.len()
            ),
        });
    }
    Ok(data.slice(start..end))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn desc(storage: &str, text: &str, offset: Option<i32>) -> DeletionVectorDescriptor {
        DeletionVectorDescriptor {
            storage_type: storage.into(),
            path_or_inline_dv: text.into(),
            offset,
            size_in_bytes: 4,
            cardinality: 1,
        }
    }

    #[test]
    fn protocol_example_resolves_to_prefixed_file() {
        let d = desc("u", "ab^-aqEH.-t@S}K{vb[*k^", Some(4));
        assert_eq!(
            d.location().unwrap(),
            DvLocation::Relative {
                path: "ab/deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin".into(),
                offset: 4
            }
        );
        assert_eq!(d.unique_id(), "uab^-aqEH.-t@S}K{vb[*k^@4");
    }

    #[test]
    fn uuid_descriptor_round_trips() {
        let id = uuid::Uuid::new_v4();
        let d = DeletionVectorDescriptor::for_uuid_file("", id, 1, 10, 2);
        assert_eq!(
            d.location().unwrap(),
            DvLocation::Relative {
                path: format!("deletion_vector_{id}.bin"),
                offset: 1
            }
        );
    }

    #[test]
    fn bad_descriptors_are_typed_errors() {
        assert!(desc("u", "short", None).location().is_err());
        assert!(desc("x", "abc", None).location().is_err());
        assert!(desc("i", "abcd", None).location().is_err());
        let mut d = desc("u", "ab^-aqEH.-t@S}K{vb[*k^", Some(-3));
        assert!(d.location().is_err());
        d.offset = None;
        assert!(matches!(
            d.location().unwrap(),
            DvLocation::Relative { offset: 1, .. }
        ));
    }
}
