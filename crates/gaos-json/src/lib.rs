//! JSON for GAOS: values with JavaScript number semantics, a strict parser,
//! canonical serialization byte-identical to the reference SDK's
//! `canonicalJson`, and the digests and codecs built on it.
//!
//! ```
//! use gaos_json::{canonical_json, fnv1a32, parse};
//!
//! let value = parse(r#"{"b": 1.0, "a": [true, null, 1e-7]}"#).unwrap();
//! let text = canonical_json(&value);
//! assert_eq!(text, r#"{"a":[true,null,1e-7],"b":1}"#);
//! assert_eq!(fnv1a32("é"), 1812687940); // FNV-1a over UTF-16 code units
//! ```
//!
//! Every [`Value`] upholds the reference's value domain (§1.1 of the kernel
//! spec): numbers are finite doubles, integral numbers are safe integers
//! (|x| ≤ 2^53−1), strings are valid Unicode. The parser and the serde bridge
//! ([`to_value`], [`from_value`]) enforce it, so canonical output never fails.

mod canonical;
mod canonical_ser;
mod codec;
mod de;
mod digest;
mod error;
pub use value::map;
mod parse;
mod ser;
mod value;

pub use canonical::{
    CanonicalSink, canonical_json, canonical_json_bytes, canonical_json_with_member, write_canonical,
    write_canonical_object,
};
pub use canonical_ser::to_canonical_string;
pub use codec::{CodecError, base64_decode, base64_decode_len, base64_encode, hex_decode, hex_encode};
pub use de::from_value;
pub use digest::{Fnv1a32, canonical_fnv1a32, canonical_sha256_hex, fnv1a32, sha256, sha256_hex};
pub use error::{JsonError, JsonErrorKind};
pub use parse::{MAX_DEPTH, parse, parse_bytes, parse_lenient};
pub use ser::to_value;
pub use value::{MAX_SAFE_INTEGER, Map, Value, check_value, is_safe_integer};

/// Build a [`Map`] (a JSON object) from `key => value` pairs; values go
/// through `Value::from`.
///
/// ```
/// let view = gaos_json::obj! { "status" => "playing", "round" => 2u32 };
/// assert_eq!(gaos_json::canonical_json(&view.into()), r#"{"round":2,"status":"playing"}"#);
/// ```
#[macro_export]
macro_rules! obj {
    () => { $crate::Map::new() };
    ($($key:expr => $value:expr),+ $(,)?) => {{
        let mut map = $crate::Map::new();
        $( map.insert(::std::string::String::from($key), $crate::Value::from($value)); )+
        map
    }};
}
