use crate::value::{Map, Value};

/// Where canonical text goes: a `String`, a byte buffer, or a digest that
/// consumes the text without materializing it. Chunks are always whole
/// UTF-8 sequences.
pub trait CanonicalSink {
    fn push_str(&mut self, s: &str);
}

impl CanonicalSink for String {
    #[inline]
    fn push_str(&mut self, s: &str) {
        String::push_str(self, s);
    }
}

impl CanonicalSink for Vec<u8> {
    #[inline]
    fn push_str(&mut self, s: &str) {
        self.extend_from_slice(s.as_bytes());
    }
}

/// `canonicalJson(value)`: keys in code-point order, no whitespace,
/// `JSON.stringify` string escaping, ECMAScript number formatting.
pub fn canonical_json(value: &Value) -> String {
    let mut out = String::with_capacity(64);
    write_canonical(value, &mut out);
    out
}

/// Canonical JSON as UTF-8 bytes.
pub fn canonical_json_bytes(value: &Value) -> Vec<u8> {
    canonical_json(value).into_bytes()
}

/// The canonical text of `value` and, when `value` is an object holding
/// `key`, the byte range of that member's value in the text: one pass gives
/// a request's canonical bytes (its fingerprint) and a part of it (a
/// command's canonical JSON and its size), which is `canonical_json` of
/// that part.
///
/// ```
/// let body = gaos_json::parse(r#"{"z": 1, "command": {"b": [2.0], "a": "x"}}"#).unwrap();
/// let (text, command) = gaos_json::canonical_json_with_member(&body, "command");
/// assert_eq!(text, r#"{"command":{"a":"x","b":[2]},"z":1}"#);
/// assert_eq!(&text[command.unwrap()], r#"{"a":"x","b":[2]}"#);
/// ```
pub fn canonical_json_with_member(value: &Value, key: &str) -> (String, Option<std::ops::Range<usize>>) {
    let mut out = String::with_capacity(256);
    let Value::Object(map) = value else {
        write_canonical(value, &mut out);
        return (out, None);
    };
    let mut member = None;
    out.push('{');
    for (i, (name, item)) in map.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_string(name, &mut out);
        out.push(':');
        let start = out.len();
        write_canonical(item, &mut out);
        if name == key {
            member = Some(start..out.len());
        }
    }
    out.push('}');
    (out, member)
}

/// Write the canonical text of `value` into `sink`.
pub fn write_canonical<S: CanonicalSink + ?Sized>(value: &Value, sink: &mut S) {
    match value {
        Value::Null => sink.push_str("null"),
        Value::Bool(true) => sink.push_str("true"),
        Value::Bool(false) => sink.push_str("false"),
        Value::Number(x) => write_number(*x, sink),
        Value::String(s) => write_string(s, sink),
        Value::Array(items) => {
            sink.push_str("[");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    sink.push_str(",");
                }
                write_canonical(item, sink);
            }
            sink.push_str("]");
        }
        Value::Object(map) => write_canonical_object(map, sink),
    }
}

/// Write the canonical text of an object given as a [`Map`].
pub fn write_canonical_object<S: CanonicalSink + ?Sized>(map: &Map, sink: &mut S) {
    sink.push_str("{");
    for (i, (key, item)) in map.iter().enumerate() {
        if i > 0 {
            sink.push_str(",");
        }
        write_string(key, sink);
        sink.push_str(":");
        write_canonical(item, sink);
    }
    sink.push_str("}");
}

/// ECMAScript `Number::toString` for a finite double.
pub(crate) fn write_number<S: CanonicalSink + ?Sized>(x: f64, sink: &mut S) {
    if x.fract() == 0.0 && x.abs() < 1e16 {
        // Integral: plain digits (`-0` prints `0`).
        let mut buf = itoa::Buffer::new();
        sink.push_str(buf.format(x as i64));
    } else {
        let mut buf = ryu_js::Buffer::new();
        sink.push_str(buf.format_finite(x));
    }
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// `JSON.stringify` string escaping: `"` `\` and C0 controls only.
pub(crate) fn write_string<S: CanonicalSink + ?Sized>(s: &str, sink: &mut S) {
    sink.push_str("\"");
    let bytes = s.as_bytes();
    // Most strings (ids, keys, names) need no escape: one scan the compiler
    // vectorizes, then the whole string at once.
    if !bytes.iter().any(|&b| b < 0x20 || b == b'"' || b == b'\\') {
        sink.push_str(s);
        sink.push_str("\"");
        return;
    }
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let escape: &str = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            0x08 => "\\b",
            0x0c => "\\f",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x00..=0x1f => "",
            _ => continue,
        };
        if start < i {
            sink.push_str(&s[start..i]);
        }
        if escape.is_empty() {
            let code = [b'\\', b'u', b'0', b'0', HEX[(b >> 4) as usize], HEX[(b & 0xf) as usize]];
            sink.push_str(std::str::from_utf8(&code).expect("ASCII escape"));
        } else {
            sink.push_str(escape);
        }
        start = i + 1;
    }
    if start < bytes.len() {
        sink.push_str(&s[start..]);
    }
    sink.push_str("\"");
}

// A value prints as its canonical JSON text: the formatting lives with the
// canonical writer, so `value` does not depend on this module.
impl std::fmt::Debug for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&canonical_json(self))
    }
}

impl std::fmt::Display for Value {
    /// Canonical JSON text.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&canonical_json(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn num(x: f64) -> String {
        let mut s = String::new();
        write_number(x, &mut s);
        s
    }

    #[test]
    fn numbers_follow_ecmascript() {
        assert_eq!(num(0.0), "0");
        assert_eq!(num(-0.0), "0");
        assert_eq!(num(1.0), "1");
        assert_eq!(num(0.1), "0.1");
        assert_eq!(num(1e-6), "0.000001");
        assert_eq!(num(1e-7), "1e-7");
        assert_eq!(num(-2.5e-7), "-2.5e-7");
        assert_eq!(num(5e-324), "5e-324");
        assert_eq!(num(4503599627370495.5), "4503599627370495.5");
        assert_eq!(num(9007199254740991.0), "9007199254740991");
        assert_eq!(num(-9007199254740991.0), "-9007199254740991");
    }

    #[test]
    fn a_member_span_is_the_canonical_text_of_that_member() {
        for text in [r#"{"command":null}"#, r#"{"a":1,"command":[1,{"y":"\n","x":0.5}],"zz":{}}"#, r#"{"a":1}"#, "[1]"]
        {
            let value = crate::parse(text).expect("JSON");
            let (canonical, span) = canonical_json_with_member(&value, "command");
            assert_eq!(canonical, canonical_json(&value), "{text}");
            let expected = value.get("command").map(canonical_json);
            assert_eq!(span.map(|r| canonical[r].to_owned()), expected, "{text}");
        }
    }

    #[test]
    fn strings_escape_like_json_stringify() {
        let mut s = String::new();
        write_string("a\"b\\c\u{8}\u{c}\n\r\t\u{1}\u{1f}/\u{7f}\u{2028}é", &mut s);
        assert_eq!(s, "\"a\\\"b\\\\c\\b\\f\\n\\r\\t\\u0001\\u001f/\u{7f}\u{2028}é\"");
    }
}
