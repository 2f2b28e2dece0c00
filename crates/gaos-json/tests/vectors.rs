//! The canonical JSON and FNV-1a vectors of the shared conformance pack.

use gaos_json::{JsonErrorKind, canonical_json, fnv1a32, hex_encode, parse};
use gaos_testkit::{array_field, read_conformance_json, str_field};

#[test]
fn canonical_json_accept_vectors() {
    let vectors = read_conformance_json("vectors/canonical-json.json");
    let accept = array_field(&vectors, "accept");
    assert!(accept.len() >= 10, "suspiciously few accept vectors");
    for case in accept {
        let name = str_field(case, "name");
        let value = parse(str_field(case, "input")).unwrap_or_else(|e| panic!("{name}: {e}"));
        let canonical = canonical_json(&value);
        assert_eq!(canonical, str_field(case, "canonical"), "{name}");
        assert_eq!(hex_encode(canonical.as_bytes()), str_field(case, "canonicalUtf8Hex"), "{name}");
        // Canonical output parses back to the same value and is a fixed point.
        assert_eq!(parse(&canonical).unwrap(), value, "{name}");
        assert_eq!(canonical_json(&parse(&canonical).unwrap()), canonical, "{name}");
    }
}

#[test]
fn canonical_json_reject_vectors() {
    let vectors = read_conformance_json("vectors/canonical-json.json");
    let reject = array_field(&vectors, "reject");
    assert!(!reject.is_empty());
    for case in reject {
        let name = str_field(case, "name");
        let err = parse(str_field(case, "input")).expect_err(name);
        let expected = match str_field(case, "reject") {
            "unsafe-integer" => JsonErrorKind::UnsafeInteger,
            "non-finite-number" => JsonErrorKind::NonFiniteNumber,
            "lone-surrogate" => JsonErrorKind::LoneSurrogate,
            other => panic!("{name}: unknown reject class {other}"),
        };
        assert_eq!(err.kind, expected, "{name}");
        assert_eq!(err.kind.class(), str_field(case, "reject"), "{name}");
    }
}

#[test]
fn fnv1a32_vectors() {
    let vectors = read_conformance_json("vectors/fnv1a32.json");
    let cases = array_field(&vectors, "cases");
    assert!(!cases.is_empty());
    for case in cases {
        let input = str_field(case, "input");
        let expected = case.get("fnv1a").and_then(|v| v.as_u64()).expect("fnv1a");
        assert_eq!(u64::from(fnv1a32(input)), expected, "{input:?}");
        // The streaming hasher agrees when fed in char-boundary pieces.
        let mut h = gaos_json::Fnv1a32::new();
        let mut buf = [0u8; 4];
        for c in input.chars() {
            h.update(c.encode_utf8(&mut buf));
        }
        assert_eq!(u64::from(h.finish()), expected, "{input:?} streamed");
    }
}
