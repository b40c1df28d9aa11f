//! Deletion-vector formats and descriptors on arbitrary bytes.
//!
//! Properties:
//! * `decode_bitmap`, `decode_file_entry`, `z85::decode`, `z85::decode_inline`,
//!   `DeletionVectorDescriptor::location`
//!   and `read_deletion_vector` never panic;
//! * a decoded bitmap re-encodes to bytes that decode to the same bitmap, and reads back
//!   unchanged from a DV file (`u` descriptor) and from inline Z85 (`i` descriptor);
//! * a DV-file entry wrapping the input (correct size and CRC) decodes exactly as the bare
//!   input does;
//! * Z85: text that decodes re-encodes to itself, and bytes (a multiple of 4) survive
//!   encode + decode.
#![no_main]

use alluvium_storage::{InMemoryStore, ObjectStore, StorePath};
use alluvium_txlog::dv::{
    DeletionVectorDescriptor, DvLocation, decode_bitmap, decode_file_entry, encode_bitmap,
    encode_file, read_deletion_vector, z85,
};
use arbitrary::{Arbitrary, Unstructured};
use bytes::Bytes;
use libfuzzer_sys::fuzz_target;
use roaring::RoaringTreemap;

/// The bitmap must read back unchanged through a `u` descriptor and an `i` descriptor.
fn check_bitmap_storage(bitmap: &RoaringTreemap, file_offset_pad: usize) {
    let cardinality = i64::try_from(bitmap.len()).expect("cardinality fits i64");

    // A DV file holding the bitmap after `file_offset_pad` other (empty) bitmaps.
    let mut bitmaps = vec![RoaringTreemap::new(); file_offset_pad];
    bitmaps.push(bitmap.clone());
    let (file, entries) = encode_file(&bitmaps);
    let (offset, size) = *entries.last().expect("one entry per bitmap");
    let uuid = uuid_of(&file);
    let (Ok(offset), Ok(size)) = (i32::try_from(offset), i32::try_from(size)) else {
        return;
    };
    let desc = DeletionVectorDescriptor::for_uuid_file("ab", uuid, offset, size, cardinality);
    let store = InMemoryStore::new();
    let Ok(DvLocation::Relative { path, .. }) = desc.location() else {
        panic!("a `u` descriptor must resolve")
    };
    let key = StorePath::parse(path).expect("generated DV path must be valid");
    store.put(&key, Bytes::from(file)).expect("in-memory put");
    let read =
        read_deletion_vector(&store, &desc).expect("DV file written by encode_file must read back");
    assert_eq!(&read, bitmap, "bitmap changed through a DV file");

    let serialized = encode_bitmap(bitmap);
    let inline = DeletionVectorDescriptor {
        storage_type: "i".into(),
        path_or_inline_dv: z85::encode(&serialized),
        offset: None,
        size_in_bytes: i32::try_from(serialized.len()).expect("small input"),
        cardinality,
    };
    let read = read_deletion_vector(&store, &inline).expect("inline DV must read back");
    assert_eq!(&read, bitmap, "bitmap changed through inline Z85");
}

/// A UUID derived from the data, so that runs are reproducible.
fn uuid_of(data: &[u8]) -> uuid::Uuid {
    let mut b = [0u8; 16];
    for (i, x) in data.iter().enumerate() {
        b[i % 16] ^= *x;
    }
    uuid::Uuid::from_bytes(b)
}

fn check_bitmap(data: &[u8]) {
    let decoded = decode_bitmap(data);

    // The same bytes framed as a well-formed DV-file entry decode identically.
    let mut entry = Vec::with_capacity(data.len() + 8);
    entry.extend_from_slice(
        &u32::try_from(data.len())
            .expect("small input")
            .to_be_bytes(),
    );
    entry.extend_from_slice(data);
    entry.extend_from_slice(&crc32(data).to_be_bytes());
    let framed = decode_file_entry(&entry, data.len());
    assert_eq!(
        framed.as_ref().ok(),
        decoded.as_ref().ok(),
        "framing changed the decoded bitmap"
    );

    // The raw bytes as an entry, with the size the entry itself claims.
    if let Some(size) = data.first_chunk::<4>() {
        let _ = decode_file_entry(data, u32::from_be_bytes(*size) as usize);
    }

    let Ok(bitmap) = decoded else { return };
    let encoded = encode_bitmap(&bitmap);
    let again = decode_bitmap(&encoded).expect("an encoded bitmap must decode");
    assert_eq!(again, bitmap, "bitmap round trip changed the bitmap");
    check_bitmap_storage(&bitmap, data.len() % 3);
}

fn crc32(data: &[u8]) -> u32 {
    // CRC-32 (IEEE), bitwise; independent of the library's implementation.
    let mut crc = !0u32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

fn check_z85(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    // The inline-DV decoder accepts a `#`-padded tail on top of strict Z85: never a panic,
    // and on strict Z85 the same bytes.
    let inline = z85::decode_inline(&text);
    if let Ok(bytes) = z85::decode(&text) {
        assert_eq!(inline.as_deref(), Ok(bytes.as_slice()), "inline decoding differs");
        assert_eq!(bytes.len(), text.len() / 5 * 4);
        assert_eq!(
            z85::encode(&bytes),
            text,
            "decodable Z85 text is not canonical"
        );
    }
    let words = &data[..data.len() / 4 * 4];
    let encoded = z85::encode(words);
    assert_eq!(
        z85::decode(&encoded).as_deref(),
        Ok(words),
        "Z85 round trip changed the bytes"
    );
}

fn check_descriptor(data: &[u8]) -> arbitrary::Result<()> {
    let mut u = Unstructured::new(data);
    let storage_type = match u.int_in_range(0..=3u8)? {
        0 => "u".to_string(),
        1 => "i".to_string(),
        2 => "p".to_string(),
        _ => String::arbitrary(&mut u)?,
    };
    let path_or_inline_dv = String::arbitrary(&mut u)?;
    let desc = DeletionVectorDescriptor {
        storage_type,
        path_or_inline_dv,
        offset: Option::<i32>::arbitrary(&mut u)?,
        size_in_bytes: i32::arbitrary(&mut u)?,
        cardinality: i64::arbitrary(&mut u)?,
    };
    let _ = desc.unique_id();
    let file = u.take_rest();
    let store = InMemoryStore::new();
    match desc.location() {
        Ok(DvLocation::Relative { path, offset }) => {
            assert!(path.contains("deletion_vector_"));
            assert!(offset <= i32::MAX as u64);
            if let Ok(key) = StorePath::parse(path) {
                store
                    .put(&key, Bytes::copy_from_slice(file))
                    .expect("in-memory put");
            }
        }
        Ok(DvLocation::Inline(bytes)) => {
            assert_eq!(
                Ok(bytes.len()),
                usize::try_from(desc.size_in_bytes),
                "inline data not cut to size"
            );
        }
        Ok(DvLocation::Absolute { .. }) | Err(_) => {}
    }
    let _ = read_deletion_vector(&store, &desc);
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    check_bitmap(data);
    check_z85(data);
    let _ = check_descriptor(data);
});
