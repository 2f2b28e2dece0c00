//! Property tests: canonical output round-trips and is a fixed point; the
//! parser never panics on arbitrary input.

use gaos_json::{Map, Value, canonical_fnv1a32, canonical_json, fnv1a32, from_value, parse, to_value};
use proptest::prelude::*;

fn number() -> impl Strategy<Value = f64> {
    prop_oneof![
        (-9_007_199_254_740_991i64..=9_007_199_254_740_991i64).prop_map(|i| i as f64),
        any::<i32>().prop_map(f64::from),
        any::<f64>().prop_filter("finite non-integral or safe", |x| {
            x.is_finite() && (x.fract() != 0.0 || x.abs() <= 9_007_199_254_740_991.0)
        }),
        Just(-0.0),
        Just(5e-324),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        number().prop_map(Value::Number),
        any::<String>().prop_map(Value::String),
    ];
    leaf.prop_recursive(6, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            prop::collection::btree_map(any::<String>(), inner, 0..8)
                .prop_map(|m| Value::Object(m.into_iter().collect::<Map>())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn canonical_round_trips(value in json_value()) {
        let text = canonical_json(&value);
        let reparsed = parse(&text).expect("canonical output parses");
        prop_assert_eq!(&reparsed, &value);
        prop_assert_eq!(canonical_json(&reparsed), text.clone());
        prop_assert_eq!(canonical_fnv1a32(&value), fnv1a32(&text));
    }

    #[test]
    fn serde_bridge_round_trips(value in json_value()) {
        let through: Value = from_value(value.clone()).expect("decodes");
        prop_assert_eq!(&through, &value);
        prop_assert_eq!(to_value(&value).expect("encodes"), value);
    }

    #[test]
    fn the_direct_canonical_writer_agrees_with_the_value_path(value in json_value()) {
        prop_assert_eq!(gaos_json::to_canonical_string(&value).expect("a value is JSON"), canonical_json(&value));
        // A map in any entry order, as a `HashMap` hands it to serde.
        if let Value::Object(map) = &value {
            let shuffled: Vec<(String, Value)> = map.iter().rev().map(|(k, v)| (k.clone(), v.clone())).collect();
            let as_map: std::collections::HashMap<String, Value> = shuffled.into_iter().collect();
            prop_assert_eq!(gaos_json::to_canonical_string(&as_map).expect("JSON"), canonical_json(&value));
        }
    }

    #[test]
    fn parser_never_panics_on_bytes(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        let _ = gaos_json::parse_bytes(&bytes);
    }

    #[test]
    fn parser_never_panics_on_near_json(value in json_value(), cut in 0usize..512, byte in any::<u8>()) {
        let mut text = canonical_json(&value).into_bytes();
        if !text.is_empty() {
            let at = cut % text.len();
            text[at] = byte;
            let _ = gaos_json::parse_bytes(&text);
            text.truncate(at);
            let _ = gaos_json::parse_bytes(&text);
        }
    }

    #[test]
    fn agrees_with_serde_json_on_valid_text(value in json_value()) {
        // serde_json is an independent parser: both must read our output alike.
        let text = canonical_json(&value);
        let theirs: serde_json::Value = serde_json::from_str(&text).expect("serde_json parses");
        let ours: Value = serde_json::from_value(theirs).expect("into Value");
        prop_assert_eq!(ours, value);
    }
}
