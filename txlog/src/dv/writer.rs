//! Writing deletion vectors (PROTOCOL.md "Deletion Vector File Storage Format",
//! "Deletion Vector Descriptor Schema"): many bitmaps of one commit into one
//! `<prefix>/deletion_vector_<uuid>.bin` file, one descriptor each.
//!
//! The file is fresh for every commit (data and DV files are never overwritten, PROTOCOL.md
//! "Data Files"); the caller uploads it with put-if-absent before committing, so a commit
//! that fails leaves an unreferenced file that VACUUM removes later.

use roaring::RoaringTreemap;

use super::DeletionVectorDescriptor;
use super::format::{encode_bitmap, encode_file};
use super::z85;
use crate::{LogError, Result};

/// Characters of a random directory prefix: lower-case letters and digits, safe in every
/// object store and needing no URI escaping.
const PREFIX_ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";

/// A DV file ready to upload: its table-relative path, bytes, and one descriptor per bitmap
/// given to [`DvFileWriter::finish`], in the same order.
#[derive(Debug, Clone)]
pub struct DvFile {
    /// Path relative to the table root: `[<prefix>/]deletion_vector_<uuid>.bin`.
    pub path: String,
    /// The file's bytes (format version byte, then the entries).
    pub bytes: Vec<u8>,
    /// The descriptor of each bitmap (storage type `u`, with offset, size and cardinality).
    pub descriptors: Vec<DeletionVectorDescriptor>,
}

/// Lays out the deletion vectors of one commit in one file.
#[derive(Debug, Clone)]
pub struct DvFileWriter {
    uuid: uuid::Uuid,
    prefix: String,
}

impl DvFileWriter {
    /// A writer for a new file named by a fresh random UUID, under a random directory
    /// prefix of `random_prefix_len` characters when the table asks for one
    /// (`delta.randomizeFilePrefixes`, see
    /// [`crate::properties::TableProperties::random_prefix_length`]).
    pub fn new(random_prefix_len: Option<usize>) -> Self {
        let uuid = alluvium_storage::ids::new_uuid();
        let prefix = match random_prefix_len {
            Some(n) if n > 0 => random_prefix(n),
            _ => String::new(),
        };
        DvFileWriter { uuid, prefix }
    }

    /// A writer with a given UUID and prefix (tests, reproducible layouts). The prefix must
    /// be a relative directory path without leading or trailing `/`.
    pub fn with_name(uuid: uuid::Uuid, prefix: &str) -> Self {
        DvFileWriter {
            uuid,
            prefix: prefix.to_string(),
        }
    }

    /// The table-relative path of the file.
    pub fn path(&self) -> String {
        let name = format!("deletion_vector_{}.bin", self.uuid);
        if self.prefix.is_empty() {
            name
        } else {
            format!("{}/{name}", self.prefix)
        }
    }

    /// Encodes `bitmaps` (0-based physical row positions) into the file and returns it with
    /// one descriptor per bitmap. Empty bitmaps are encoded too (cardinality 0), but callers
    /// should not attach those to files.
    ///
    /// # Errors
    /// [`LogError::CorruptDeletionVector`] when a position has its top bit set (the
    /// portable Roaring layout forbids it) or the file would exceed the 2 GiB offsets of
    /// the descriptor.
    pub fn finish(self, bitmaps: &[RoaringTreemap]) -> Result<DvFile> {
        let path = self.path();
        let bad = |reason: String| LogError::CorruptDeletionVector {
            location: path.clone(),
            reason,
        };
        for b in bitmaps {
            if b.max().is_some_and(|m| m >> 63 != 0) {
                return Err(bad("row position with the top bit set".into()));
            }
        }
        let (bytes, entries) = encode_file(bitmaps);
        if i32::try_from(bytes.len()).is_err() {
            return Err(bad(format!(
                "deletion vector file of {} bytes is too large",
                bytes.len()
            )));
        }
        let mut descriptors = Vec::with_capacity(bitmaps.len());
        for (b, (offset, size)) in bitmaps.iter().zip(entries) {
            let offset = i32::try_from(offset).map_err(|_| bad("offset overflow".into()))?;
            let size = i32::try_from(size).map_err(|_| bad("size overflow".into()))?;
            let cardinality =
                i64::try_from(b.len()).map_err(|_| bad("cardinality overflow".into()))?;
            descriptors.push(DeletionVectorDescriptor::for_uuid_file(
                &self.prefix,
                self.uuid,
                offset,
                size,
                cardinality,
            ));
        }
        Ok(DvFile {
            path,
            bytes,
            descriptors,
        })
    }
}

/// The largest serialized bitmap (magic number included) that DML writes inline (storage
/// type `i`, PROTOCOL.md "Deletion Vector Descriptor Schema") instead of in a DV file.
///
/// 64 bytes hold the positions of a few rows (a 1-row bitmap takes 34 bytes); as Z85 text
/// they are at most 80 characters, a few dozen more than a file descriptor's path and
/// offset, while a DV file costs an upload and two syncs before the commit and a request for
/// every reader. Larger bitmaps go to a file, where the log and every checkpoint do not
/// repeat them.
pub const INLINE_DV_MAX_BYTES: usize = 64;

/// The length of `bitmap` serialized as a DV (magic number and portable Roaring layout),
/// without serializing it.
pub fn encoded_bitmap_len(bitmap: &RoaringTreemap) -> usize {
    4 + bitmap.serialized_size()
}

/// The descriptor of an inline (`i`) deletion vector holding `bitmap`: the serialized
/// bitmap zero-padded to a multiple of 4 bytes, as Z85 text; `sizeInBytes` is the unpadded
/// length, which readers cut the decoded bytes back to.
pub fn inline_descriptor(bitmap: &RoaringTreemap) -> DeletionVectorDescriptor {
    let mut data = encode_bitmap(bitmap);
    let size = data.len();
    while !data.len().is_multiple_of(4) {
        data.push(0);
    }
    DeletionVectorDescriptor {
        storage_type: "i".to_string(),
        path_or_inline_dv: z85::encode(&data),
        offset: None,
        size_in_bytes: i32::try_from(size).unwrap_or(i32::MAX),
        cardinality: i64::try_from(bitmap.len()).unwrap_or(i64::MAX),
    }
}

fn random_prefix(len: usize) -> String {
    let mut out = String::with_capacity(len);
    while out.len() < len {
        for byte in alluvium_storage::ids::new_uuid().as_bytes() {
            if out.len() == len {
                break;
            }
            let i = usize::from(*byte) % PREFIX_ALPHABET.len();
            out.push(char::from(PREFIX_ALPHABET[i]));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dv::{DvLocation, decode_file_entry, read_deletion_vector};
    use alluvium_storage::{InMemoryStore, ObjectStore, StorePath};

    #[test]
    fn several_bitmaps_share_one_file_and_read_back() {
        let a: RoaringTreemap = [0u64, 7, 9_999].into_iter().collect();
        let b: RoaringTreemap = (100u64..160).chain([1 << 33]).collect();
        let w = DvFileWriter::new(None);
        let path = w.path();
        let file = w.finish(&[a.clone(), b.clone()]).unwrap();
        assert_eq!(file.path, path);
        assert!(path.starts_with("deletion_vector_") && path.ends_with(".bin"));
        assert_eq!(file.bytes[0], 1);
        assert_eq!(file.descriptors.len(), 2);
        assert_eq!(file.descriptors[0].offset, Some(1));
        assert!(file.descriptors[1].offset.unwrap() > 1);
        assert_eq!(file.descriptors[0].cardinality, 3);
        assert_eq!(file.descriptors[1].cardinality, 61);
        let store = InMemoryStore::new();
        store
            .put(
                &StorePath::parse(file.path.as_str()).unwrap(),
                file.bytes.clone().into(),
            )
            .unwrap();
        for (d, want) in file.descriptors.iter().zip([&a, &b]) {
            assert_eq!(d.storage_type, "u");
            assert_eq!(d.path_or_inline_dv.len(), 20);
            match d.location().unwrap() {
                DvLocation::Relative { path: p, .. } => assert_eq!(p, file.path),
                other => panic!("{other:?}"),
            }
            assert_eq!(&read_deletion_vector(&store, d).unwrap(), want);
        }
    }

    #[test]
    fn entries_are_big_endian_size_bitmap_crc() {
        let a: RoaringTreemap = [3u64].into_iter().collect();
        let file = DvFileWriter::new(None)
            .finish(std::slice::from_ref(&a))
            .unwrap();
        let d = &file.descriptors[0];
        let size = d.size_in_bytes as usize;
        assert_eq!(&file.bytes[1..5], &(size as u32).to_be_bytes());
        let data = &file.bytes[5..5 + size];
        assert_eq!(&data[..4], &1_681_511_377u32.to_le_bytes());
        assert_eq!(
            &file.bytes[5 + size..9 + size],
            &crc32fast::hash(data).to_be_bytes()
        );
        assert_eq!(file.bytes.len(), 9 + size);
        assert_eq!(decode_file_entry(&file.bytes[1..], size).unwrap(), a);
    }

    #[test]
    fn random_prefix_goes_into_the_path_and_descriptor() {
        let w = DvFileWriter::new(Some(3));
        let file = w.finish(&[(0u64..4).collect()]).unwrap();
        let (prefix, name) = file.path.split_once('/').unwrap();
        assert_eq!(prefix.len(), 3);
        assert!(prefix.bytes().all(|c| PREFIX_ALPHABET.contains(&c)));
        assert!(name.starts_with("deletion_vector_"));
        let d = &file.descriptors[0];
        assert_eq!(d.path_or_inline_dv.len(), 23);
        assert!(d.path_or_inline_dv.starts_with(prefix));
        assert!(
            matches!(d.location().unwrap(), DvLocation::Relative { path, .. } if path == file.path)
        );
    }

    #[test]
    fn spark_written_dv_file_is_reproduced_byte_for_byte() {
        // `table-with-dv-small` (Delta Spark, tests/data/conformance):
        // deletion_vector_61d16c75-6994-46b7-a15b-8b538852e50e.bin, one DV at offset 1 of
        // 36 bytes deleting rows 0 and 9, descriptor "vBn[lx{q8@P<9BNH/isA".
        let spark: [u8; 45] = [
            0x01, 0x00, 0x00, 0x00, 0x24, 0xd1, 0xd3, 0x39, 0x64, 0x01, 0x00, 0x00, 0x00, 0x00,
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x3a, 0x30, 0x00, 0x00, 0x01, 0x00, 0x00,
            0x00, 0x00, 0x00, 0x01, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x09, 0x00, 0x2a,
            0x67, 0x18, 0x46,
        ];
        let id = uuid::Uuid::parse_str("61d16c75-6994-46b7-a15b-8b538852e50e").unwrap();
        let file = DvFileWriter::with_name(id, "")
            .finish(&[[0u64, 9].into_iter().collect()])
            .unwrap();
        assert_eq!(file.bytes, spark);
        assert_eq!(file.path, format!("deletion_vector_{id}.bin"));
        let d = &file.descriptors[0];
        assert_eq!(d.path_or_inline_dv, "vBn[lx{q8@P<9BNH/isA");
        assert_eq!((d.offset, d.size_in_bytes, d.cardinality), (Some(1), 36, 2));
    }

    #[test]
    fn inline_descriptors_read_back() {
        for rows in [vec![0u64], vec![1, 2, 3, 5_000_000_000], (0..100).collect()] {
            let bitmap: RoaringTreemap = rows.into_iter().collect();
            let d = inline_descriptor(&bitmap);
            assert_eq!(d.offset, None);
            assert!(d.path_or_inline_dv.len().is_multiple_of(5));
            let store = InMemoryStore::new();
            assert_eq!(read_deletion_vector(&store, &d).unwrap(), bitmap);
        }
    }

    #[test]
    fn encoded_length_is_the_serialized_length_and_a_few_rows_fit_inline() {
        let one: RoaringTreemap = [7u64].into_iter().collect();
        let few: RoaringTreemap = [1u64, 9, 500, 70_000].into_iter().collect();
        let many: RoaringTreemap = (0..1000u64).map(|i| i * 7).collect();
        for b in [&one, &few, &many] {
            assert_eq!(
                encoded_bitmap_len(b),
                crate::dv::format::encode_bitmap(b).len()
            );
        }
        assert!(encoded_bitmap_len(&one) <= INLINE_DV_MAX_BYTES);
        assert!(encoded_bitmap_len(&few) <= INLINE_DV_MAX_BYTES);
        assert!(encoded_bitmap_len(&many) > INLINE_DV_MAX_BYTES);
    }

    #[test]
    fn top_bit_positions_are_refused() {
        let bad: RoaringTreemap = [1u64 << 63].into_iter().collect();
        assert!(DvFileWriter::new(None).finish(&[bad]).is_err());
    }
}
