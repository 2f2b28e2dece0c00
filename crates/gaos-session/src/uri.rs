//! `encodeURIComponent`, for URL path segments (session and seat ids) and
//! bundle file names.

/// `encodeURIComponent`: everything but `A-Z a-z 0-9 - _ . ! ~ * ' ( )` as
/// `%XX` of its UTF-8 bytes (bundle file names, URL path segments).
///
/// ```
/// assert_eq!(gaos_session::encode_uri_component("s 1/ä!"), "s%201%2F%C3%A4!");
/// ```
pub fn encode_uri_component(text: &str) -> String {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut out = String::with_capacity(text.len());
    for &byte in text.as_bytes() {
        if byte.is_ascii_alphanumeric() || b"-_.!~*'()".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push('%');
            out.push(char::from(HEX[usize::from(byte >> 4)]));
            out.push(char::from(HEX[usize::from(byte & 0x0f)]));
        }
    }
    out
}
