//! Strict encodings: lowercase hex and canonical padded base64 (RFC 4648).

use thiserror::Error;

/// A refused hex or base64 text.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CodecError {
    #[error("hex text must have an even length")]
    OddHexLength,
    #[error("hex text must use lowercase 0-9a-f only (byte {0})")]
    InvalidHexDigit(usize),
    #[error("base64 text must be padded to a multiple of 4 characters")]
    Base64Length,
    #[error("invalid base64 character at {0}")]
    InvalidBase64Char(usize),
    #[error("base64 text is not canonical (non-zero trailing bits or misplaced padding)")]
    NonCanonicalBase64,
    #[error("expected {expected} bytes, found {found}")]
    WrongLength { expected: usize, found: usize },
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Lowercase hex of `bytes`.
pub fn hex_encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        out.push(HEX[(b >> 4) as usize] as char);
        out.push(HEX[(b & 0xf) as usize] as char);
    }
    out
}

/// Decode lowercase hex; uppercase digits are refused.
pub fn hex_decode(text: &str) -> Result<Vec<u8>, CodecError> {
    let bytes = text.as_bytes();
    if !bytes.len().is_multiple_of(2) {
        return Err(CodecError::OddHexLength);
    }
    let digit = |i: usize| -> Result<u8, CodecError> {
        match bytes[i] {
            b @ b'0'..=b'9' => Ok(b - b'0'),
            b @ b'a'..=b'f' => Ok(b - b'a' + 10),
            _ => Err(CodecError::InvalidHexDigit(i)),
        }
    };
    (0..bytes.len() / 2).map(|i| Ok((digit(2 * i)? << 4) | digit(2 * i + 1)?)).collect()
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard padded base64.
pub fn base64_encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        out.push(B64[(n >> 18) as usize & 63] as char);
        out.push(B64[(n >> 12) as usize & 63] as char);
        out.push(if chunk.len() > 1 { B64[(n >> 6) as usize & 63] as char } else { '=' });
        out.push(if chunk.len() > 2 { B64[n as usize & 63] as char } else { '=' });
    }
    out
}

fn b64_value(c: u8) -> Option<u32> {
    match c {
        b'A'..=b'Z' => Some(u32::from(c - b'A')),
        b'a'..=b'z' => Some(u32::from(c - b'a') + 26),
        b'0'..=b'9' => Some(u32::from(c - b'0') + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    }
}

/// Decode canonical padded base64: the text must re-encode identically.
pub fn base64_decode(text: &str) -> Result<Vec<u8>, CodecError> {
    let bytes = text.as_bytes();
    if !bytes.len().is_multiple_of(4) {
        return Err(CodecError::Base64Length);
    }
    let mut out = Vec::with_capacity(bytes.len() / 4 * 3);
    let quads = bytes.len() / 4;
    for q in 0..quads {
        let quad = &bytes[q * 4..q * 4 + 4];
        let last = q + 1 == quads;
        let pad = quad.iter().rev().take_while(|&&c| c == b'=').count();
        if pad > 2 || (pad > 0 && !last) {
            return Err(CodecError::NonCanonicalBase64);
        }
        let mut n = 0u32;
        for (i, &c) in quad.iter().enumerate() {
            let v = if i >= 4 - pad { 0 } else { b64_value(c).ok_or(CodecError::InvalidBase64Char(q * 4 + i))? };
            n = (n << 6) | v;
        }
        let decoded = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        let keep = 3 - pad;
        // Trailing bits under the padding must be zero for a canonical text.
        if (pad == 1 && n & 0xff != 0) || (pad == 2 && n & 0xffff != 0) {
            return Err(CodecError::NonCanonicalBase64);
        }
        out.extend_from_slice(&decoded[..keep]);
    }
    Ok(out)
}

/// Decode canonical padded base64 that must hold exactly `expected` bytes.
pub fn base64_decode_len(text: &str, expected: usize) -> Result<Vec<u8>, CodecError> {
    if text.len() != expected.div_ceil(3) * 4 {
        return Err(CodecError::WrongLength { expected, found: base64_decode(text)?.len() });
    }
    let bytes = base64_decode(text)?;
    if bytes.len() != expected {
        return Err(CodecError::WrongLength { expected, found: bytes.len() });
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trips_and_refuses_uppercase() {
        assert_eq!(hex_encode(&[0x00, 0xab, 0xff]), "00abff");
        assert_eq!(hex_decode("00abff").unwrap(), vec![0x00, 0xab, 0xff]);
        assert_eq!(hex_decode("AB"), Err(CodecError::InvalidHexDigit(0)));
        assert_eq!(hex_decode("abc"), Err(CodecError::OddHexLength));
    }

    #[test]
    fn base64_is_strict() {
        for (raw, text) in [(&b""[..], ""), (b"f", "Zg=="), (b"fo", "Zm8="), (b"foo", "Zm9v"), (b"foob", "Zm9vYg==")] {
            assert_eq!(base64_encode(raw), text);
            assert_eq!(base64_decode(text).unwrap(), raw);
        }
        assert_eq!(base64_decode("Zh=="), Err(CodecError::NonCanonicalBase64));
        assert_eq!(base64_decode("Zg="), Err(CodecError::Base64Length));
        assert_eq!(base64_decode("Zg==Zg=="), Err(CodecError::NonCanonicalBase64));
        assert_eq!(base64_decode("Z$=="), Err(CodecError::InvalidBase64Char(1)));
        assert!(base64_decode_len("Zm9v", 3).is_ok());
        assert!(base64_decode_len("Zm9v", 32).is_err());
    }
}
