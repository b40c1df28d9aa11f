//! Z85 (ZeroMQ RFC 32), the base-85 text encoding Delta uses for deletion-vector UUIDs and
//! inline deletion vectors: the `z85` crate's codec, held to the standard (no `#` tails)
//! and to Delta's zero padding, with errors that say where the text is bad.

/// Why a Z85 string could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Z85Error {
    /// The length is not a multiple of 5.
    BadLength(usize),
    /// A character outside the alphabet, at this byte offset.
    BadChar(usize),
    /// A 5-character group encodes a value above `u32::MAX`, at this byte offset.
    Overflow(usize),
}

impl std::fmt::Display for Z85Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Z85Error::BadLength(n) => write!(f, "z85 text length {n} is not a multiple of 5"),
            Z85Error::BadChar(i) => write!(f, "invalid z85 character at offset {i}"),
            Z85Error::Overflow(i) => write!(f, "z85 group at offset {i} overflows 32 bits"),
        }
    }
}

/// Decodes Z85 text into bytes (4 bytes per 5 characters).
///
/// Only standard Z85 is accepted: the `z85` crate also reads a last group led by `#` as a
/// shorter, padded tail (its own extension), which the standard refuses because such a
/// group overflows 32 bits.
///
/// # Errors
/// See [`Z85Error`]; the first bad group, and within it the first bad character, is reported.
pub fn decode(text: &str) -> Result<Vec<u8>, Z85Error> {
    let bytes = text.as_bytes();
    if !bytes.len().is_multiple_of(5) {
        return Err(Z85Error::BadLength(bytes.len()));
    }
    let tail = bytes.len().checked_sub(5).filter(|&t| bytes[t] == b'#');
    let Some(tail) = tail else {
        return z85::decode(bytes).map_err(from_crate);
    };
    // Decoded with a valid leading digit instead, to find any earlier error in order.
    let mut standard = bytes.to_vec();
    standard[tail] = b'0';
    z85::decode(&standard).map_err(from_crate)?;
    Err(Z85Error::Overflow(tail))
}

/// The error of a decode by the `z85` crate (of text whose length is a multiple of 5 and
/// that has no `#` tail, so that its offsets are right).
/// Decodes the text of an INLINE deletion vector: standard Z85 ([`decode`]), or standard
/// Z85 whose last group is the `z85` crate's padded tail (1 to 3 bytes right-aligned, the
/// unused leading characters written as `#`).
///
/// Why: inline vectors written with that crate are in the reference tables (delta-kernel-rs's
/// `cdf-table-with-dv`, read there with the crate), and the reading is unambiguous: a group
/// led by `#` overflows 32 bits, so it is never a standard group. UUIDs stay strict.
///
/// # Errors
/// As [`decode`]; a tail that is not a valid padded tail is [`Z85Error::Overflow`].
pub fn decode_inline(text: &str) -> Result<Vec<u8>, Z85Error> {
    let bytes = text.as_bytes();
    match decode(text) {
        Err(Z85Error::Overflow(at)) if at + 5 == bytes.len() && bytes[at] == b'#' => {
            // Every character before `at` decoded, so they are ASCII and `at` is a boundary.
            let mut out = decode(&text[..at])?;
            let tail = z85::decode(&bytes[at..]).map_err(|_| Z85Error::Overflow(at))?;
            out.extend(tail);
            Ok(out)
        }
        other => other,
    }
}

fn from_crate(e: z85::DecodeError) -> Z85Error {
    match e {
        z85::DecodeError::InvalidLength(n) => Z85Error::BadLength(n),
        z85::DecodeError::InvalidByte(i, _) => Z85Error::BadChar(i),
        z85::DecodeError::InvalidChunk(i) => Z85Error::Overflow(i),
        z85::DecodeError::InvalidTail => Z85Error::Overflow(0),
    }
}

/// Encodes bytes as Z85. The input is zero-padded to a multiple of 4 bytes first (as Delta
/// does for inline deletion vectors; the descriptor's size says how many bytes are real).
pub fn encode(data: &[u8]) -> String {
    if data.len().is_multiple_of(4) {
        return z85::encode(data);
    }
    let mut padded = data.to_vec();
    padded.resize(data.len().next_multiple_of(4), 0);
    z85::encode(padded)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc32_test_vector() {
        let data = [0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B];
        assert_eq!(encode(&data), "HelloWorld");
        assert_eq!(decode("HelloWorld").unwrap(), data);
    }

    #[test]
    fn rejects_bad_input() {
        assert_eq!(decode("abcd"), Err(Z85Error::BadLength(4)));
        assert_eq!(decode("abc\"d"), Err(Z85Error::BadChar(3)));
        assert_eq!(decode("#####"), Err(Z85Error::Overflow(0)));
        // Groups led by `#` overflow, also last (where the `z85` crate reads a padded tail),
        // unless an earlier character is bad.
        assert_eq!(decode("HelloWorld#0000"), Err(Z85Error::Overflow(10)));
        assert_eq!(decode("#0000Hello"), Err(Z85Error::Overflow(0)));
        assert_eq!(decode("Hel\"oWorld#0000"), Err(Z85Error::BadChar(3)));
        assert_eq!(decode("Hello#0\"00"), Err(Z85Error::BadChar(7)));
        assert_eq!(decode("Hello~0000"), Err(Z85Error::BadChar(5)));
        assert_eq!(decode("é000"), Err(Z85Error::BadChar(0)));
        assert_eq!(decode(""), Ok(Vec::new()));
    }

    #[test]
    fn inline_text_may_end_in_a_padded_tail() {
        // Two bytes 03 00, right-aligned in the last group, led by `##`.
        let text = "Hello##093";
        assert_eq!(decode(text), Err(Z85Error::Overflow(5)));
        let mut want = decode("Hello").unwrap();
        want.extend([3, 0]);
        assert_eq!(decode_inline(text).unwrap(), want);
        // Standard text reads as `decode` does; a tail of nothing, or not last, is refused.
        assert_eq!(decode_inline("HelloWorld"), decode("HelloWorld"));
        assert_eq!(decode_inline("Hello#####"), Err(Z85Error::Overflow(5)));
        assert_eq!(decode_inline("##093Hello"), Err(Z85Error::Overflow(0)));
    }

    #[test]
    fn pads_to_whole_words() {
        let text = encode(&[1, 2, 3]);
        assert_eq!(text.len(), 5);
        assert_eq!(decode(&text).unwrap(), vec![1, 2, 3, 0]);
    }
}
