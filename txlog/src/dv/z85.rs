//! Z85 (ZeroMQ RFC 32), the base-85 text encoding Delta uses for deletion-vector UUIDs and
//! inline deletion vectors.

const ALPHABET: &[u8; 85] =
    b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";

const INVALID: u8 = 0xff;

const fn decode_table() -> [u8; 256] {
    let mut t = [INVALID; 256];
    let mut i = 0;
    while i < 85 {
        t[ALPHABET[i] as usize] = i as u8;
        i += 1;
    }
    t
}

static DECODE: [u8; 256] = decode_table();

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
/// # Errors
/// See [`Z85Error`].
pub fn decode(text: &str) -> Result<Vec<u8>, Z85Error> {
    let bytes = text.as_bytes();
    if !bytes.len().is_multiple_of(5) {
        return Err(Z85Error::BadLength(bytes.len()));
    }
    let mut out = Vec::with_capacity(bytes.len() / 5 * 4);
    for (g, chunk) in bytes.chunks_exact(5).enumerate() {
        let mut value: u64 = 0;
        for (i, &c) in chunk.iter().enumerate() {
            let d = DECODE[c as usize];
            if d == INVALID {
                return Err(Z85Error::BadChar(g * 5 + i));
            }
            value = value * 85 + u64::from(d);
        }
        let value = u32::try_from(value).map_err(|_| Z85Error::Overflow(g * 5))?;
        out.extend_from_slice(&value.to_be_bytes());
    }
    Ok(out)
}

/// Encodes bytes as Z85. The input is zero-padded to a multiple of 4 bytes first (as Delta
/// does for inline deletion vectors; the descriptor's size says how many bytes are real).
pub fn encode(data: &[u8]) -> String {
    let mut out = String::with_capacity(data.len().div_ceil(4) * 5);
    for chunk in data.chunks(4) {
        let mut word = [0u8; 4];
        word[..chunk.len()].copy_from_slice(chunk);
        let mut value = u32::from_be_bytes(word);
        let mut group = [0u8; 5];
        for slot in group.iter_mut().rev() {
            *slot = ALPHABET[(value % 85) as usize];
            value /= 85;
        }
        for c in group {
            out.push(char::from(c));
        }
    }
    out
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
    }

    #[test]
    fn pads_to_whole_words() {
        let text = encode(&[1, 2, 3]);
        assert_eq!(text.len(), 5);
        assert_eq!(decode(&text).unwrap(), vec![1, 2, 3, 0]);
    }
}
