//! Binary formats of deletion vectors.
//!
//! * Bitmap ("serialized deletion vector"): magic `1681511377` as u32 little-endian, then a
//!   64-bit RoaringBitmap in the portable format (u64 LE bucket count; per bucket a u32 LE
//!   high key and a standard 32-bit portable Roaring bitmap).
//! * DV file: one format-version byte (`1`), then entries: u32 **big-endian** size, the
//!   bitmap bytes, CRC-32 (IEEE) u32 **big-endian** over the bitmap bytes. A descriptor's
//!   offset points at an entry's size field.

use roaring::RoaringTreemap;

/// The only DV file format version.
pub const DV_FILE_FORMAT_VERSION: u8 = 1;
/// Magic number of the portable 64-bit Roaring serialization.
pub const PORTABLE_ROARING_MAGIC: u32 = 1_681_511_377;

/// Decodes a serialized bitmap (magic + portable 64-bit Roaring).
///
/// # Errors
/// A message if the magic is wrong or the Roaring payload is malformed or has trailing bytes.
pub fn decode_bitmap(data: &[u8]) -> Result<RoaringTreemap, String> {
    let Some((magic, payload)) = data.split_first_chunk::<4>() else {
        return Err(format!(
            "bitmap of {} bytes is too short for its magic number",
            data.len()
        ));
    };
    let magic = u32::from_le_bytes(*magic);
    if magic != PORTABLE_ROARING_MAGIC {
        return Err(format!("unsupported bitmap magic number {magic}"));
    }
    // Bound the bucket count by what the payload could possibly hold before the Roaring
    // decoder sees it, so a hostile count cannot make it reserve huge amounts of memory.
    let Some((count, _)) = payload.split_first_chunk::<8>() else {
        return Err("bitmap payload is too short for its bucket count".to_string());
    };
    let buckets = u64::from_le_bytes(*count);
    if buckets > (payload.len() as u64) / 12 {
        return Err(format!(
            "bitmap claims {buckets} buckets in {} bytes",
            payload.len()
        ));
    }
    let mut reader = payload;
    let bitmap = RoaringTreemap::deserialize_from(&mut reader)
        .map_err(|e| format!("malformed roaring bitmap: {e}"))?;
    if !reader.is_empty() {
        return Err(format!(
            "{} trailing bytes after the roaring bitmap",
            reader.len()
        ));
    }
    Ok(bitmap)
}

/// Serializes a bitmap (magic + portable 64-bit Roaring).
pub fn encode_bitmap(bitmap: &RoaringTreemap) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 + bitmap.serialized_size());
    out.extend_from_slice(&PORTABLE_ROARING_MAGIC.to_le_bytes());
    // Writing into a Vec cannot fail.
    let _ = bitmap.serialize_into(&mut out);
    out
}

/// Decodes the DV-file entry that starts at `entry` (its size field), checking the size
/// against `expected_size` and the checksum.
///
/// # Errors
/// A message if the entry is truncated, its size disagrees or its CRC does not match.
pub fn decode_file_entry(entry: &[u8], expected_size: usize) -> Result<RoaringTreemap, String> {
    let Some((size, rest)) = entry.split_first_chunk::<4>() else {
        return Err("truncated deletion vector entry".to_string());
    };
    let size = u32::from_be_bytes(*size) as usize;
    if size != expected_size {
        return Err(format!(
            "entry size {size} does not match the descriptor's sizeInBytes {expected_size}"
        ));
    }
    if rest.len() < size + 4 {
        return Err(format!(
            "entry of {size} bytes is truncated ({} bytes available)",
            rest.len()
        ));
    }
    let (data, tail) = rest.split_at(size);
    let mut crc_bytes = [0u8; 4];
    crc_bytes.copy_from_slice(&tail[..4]);
    let stored = u32::from_be_bytes(crc_bytes);
    let actual = crc32fast::hash(data);
    if stored != actual {
        return Err(format!(
            "checksum mismatch: stored {stored:#010x}, computed {actual:#010x}"
        ));
    }
    decode_bitmap(data)
}

/// Encodes a DV file holding `bitmaps`; returns the file bytes and, per bitmap, its
/// `(offset, size_in_bytes)` for the descriptor.
pub fn encode_file(bitmaps: &[RoaringTreemap]) -> (Vec<u8>, Vec<(u64, u32)>) {
    let mut out = vec![DV_FILE_FORMAT_VERSION];
    let mut entries = Vec::with_capacity(bitmaps.len());
    for bitmap in bitmaps {
        let data = encode_bitmap(bitmap);
        let size = u32::try_from(data.len()).unwrap_or(u32::MAX);
        entries.push((out.len() as u64, size));
        out.extend_from_slice(&size.to_be_bytes());
        out.extend_from_slice(&data);
        out.extend_from_slice(&crc32fast::hash(&data).to_be_bytes());
    }
    (out, entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_round_trip_and_corruption_detection() {
        let a: RoaringTreemap = [0u64, 3, 5, 1 << 33].into_iter().collect();
        let b: RoaringTreemap = (10u64..20).collect();
        let (file, entries) = encode_file(&[a.clone(), b.clone()]);
        assert_eq!(file[0], 1);
        let (o, s) = entries[1];
        assert_eq!(
            decode_file_entry(&file[o as usize..], s as usize).unwrap(),
            b
        );
        let (o, s) = entries[0];
        assert_eq!(
            decode_file_entry(&file[o as usize..], s as usize).unwrap(),
            a
        );
        assert!(decode_file_entry(&file[o as usize..], s as usize + 1).is_err());
        let mut corrupt = file.clone();
        corrupt[o as usize + 6] ^= 0xff;
        assert!(
            decode_file_entry(&corrupt[o as usize..], s as usize)
                .unwrap_err()
                .contains("checksum")
        );
        assert!(decode_file_entry(&file[o as usize..o as usize + 6], s as usize).is_err());
    }

    #[test]
    fn bitmap_rejects_bad_magic_and_hostile_counts() {
        assert!(decode_bitmap(&[1, 2, 3]).is_err());
        assert!(decode_bitmap(&[0, 0, 0, 0, 0, 0, 0, 0]).is_err());
        let mut hostile = PORTABLE_ROARING_MAGIC.to_le_bytes().to_vec();
        hostile.extend_from_slice(&u64::MAX.to_le_bytes());
        assert!(decode_bitmap(&hostile).unwrap_err().contains("buckets"));
        let empty = encode_bitmap(&RoaringTreemap::new());
        assert!(decode_bitmap(&empty).unwrap().is_empty());
    }
}
