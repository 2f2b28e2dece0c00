//! `to_canonical_string` writes typed values straight to text: for every
//! shape serde can hand it (structs in declaration order, enums in each
//! tagging, flattened and repeated keys, numeric keys, options skipped) the
//! text and the errors are those of `canonical_json(&to_value(x)?)`.

use std::collections::{BTreeMap, HashMap};

use gaos_json::{JsonErrorKind, Value, canonical_json, to_canonical_string, to_value};
use serde::Serialize;

fn both<T: Serialize>(value: &T) -> (Result<String, JsonErrorKind>, Result<String, JsonErrorKind>) {
    let direct = to_canonical_string(value).map_err(|e| e.kind);
    let through_value = to_value(value).map(|v| canonical_json(&v)).map_err(|e| e.kind);
    (direct, through_value)
}

fn agree<T: Serialize>(value: &T) -> String {
    let (direct, through_value) = both(value);
    assert_eq!(direct, through_value);
    direct.expect("serializes")
}

fn refuse<T: Serialize>(value: &T) -> JsonErrorKind {
    let (direct, through_value) = both(value);
    assert_eq!(direct, through_value);
    direct.expect_err("refused")
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Unsorted {
    zeta: u32,
    alpha: &'static str,
    middle_name: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    skipped: Option<u8>,
    nested: Vec<Inner>,
}

#[derive(Serialize)]
struct Inner {
    z: bool,
    a: (i64, char),
}

#[derive(Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
enum Internal {
    IntentAccepted { seat: String, at: u64 },
    Tick,
}

#[derive(Serialize)]
#[serde(tag = "t", content = "c")]
enum Adjacent {
    Pair(u8, u8),
    One(String),
}

#[derive(Serialize)]
#[serde(untagged)]
enum Untagged {
    Number(f64),
    Text(String),
}

#[derive(Serialize)]
enum External {
    Unit,
    Newtype(Inner),
    Tuple(u8, &'static str),
    Struct { y: u8, b: u8 },
}

#[derive(Serialize)]
struct Flattened {
    b: u8,
    #[serde(flatten)]
    rest: BTreeMap<String, Value>,
}

#[test]
fn typed_values_of_every_shape_write_the_same_text() {
    let unsorted = Unsorted {
        zeta: 3,
        alpha: "a\"b\\c\n\u{1}é😀",
        middle_name: Some(-0.0),
        skipped: None,
        nested: vec![Inner { z: true, a: (-9_007_199_254_740_991, 'x') }],
    };
    assert_eq!(
        agree(&unsorted),
        r#"{"alpha":"a\"b\\c\n\u0001é😀","middleName":0,"nested":[{"a":[-9007199254740991,"x"],"z":true}],"zeta":3}"#
    );
    assert_eq!(
        agree(&Internal::IntentAccepted { seat: "b".into(), at: 7 }),
        r#"{"at":7,"kind":"intent-accepted","seat":"b"}"#
    );
    assert_eq!(agree(&Internal::Tick), r#"{"kind":"tick"}"#);
    assert_eq!(agree(&Adjacent::Pair(1, 2)), r#"{"c":[1,2],"t":"Pair"}"#);
    agree(&Adjacent::One("x".into()));
    assert_eq!(agree(&vec![Untagged::Number(0.1), Untagged::Text("t".into())]), r#"[0.1,"t"]"#);
    assert_eq!(agree(&External::Unit), r#""Unit""#);
    assert_eq!(agree(&External::Newtype(Inner { z: false, a: (1, 'q') })), r#"{"Newtype":{"a":[1,"q"],"z":false}}"#);
    assert_eq!(agree(&External::Tuple(1, "s")), r#"{"Tuple":[1,"s"]}"#);
    assert_eq!(agree(&External::Struct { y: 2, b: 1 }), r#"{"Struct":{"b":1,"y":2}}"#);
    assert_eq!(agree(&Option::<u8>::None), "null");
    assert_eq!(agree(&()), "null");
    assert_eq!(agree(&Vec::<u8>::new()), "[]");
    assert_eq!(agree(&BTreeMap::<String, u8>::new()), "{}");
}

#[test]
fn a_repeated_key_keeps_the_last_member_as_a_map_insert_does() {
    let mut rest = BTreeMap::new();
    rest.insert("b".to_owned(), Value::from("from the flattened map"));
    rest.insert("a".to_owned(), Value::from(1u8));
    assert_eq!(agree(&Flattened { b: 9, rest }), r#"{"a":1,"b":"from the flattened map"}"#);
}

#[test]
fn numeric_and_unit_variant_keys_are_keyed_as_the_value_path_keys_them() {
    let by_number: HashMap<u64, u8> = [(10, 1), (9, 2), (100, 3)].into_iter().collect();
    assert_eq!(agree(&by_number), r#"{"10":1,"100":3,"9":2}"#);
    #[derive(Serialize, PartialEq, Eq, Hash)]
    enum Key {
        Left,
    }
    let by_variant: HashMap<Key, u8> = [(Key::Left, 1)].into_iter().collect();
    assert_eq!(agree(&by_variant), r#"{"Left":1}"#);
}

#[test]
fn values_outside_the_json_domain_are_refused_alike() {
    assert_eq!(refuse(&f64::NAN), JsonErrorKind::NonFiniteNumber);
    assert_eq!(refuse(&vec![1.0, f64::INFINITY]), JsonErrorKind::NonFiniteNumber);
    assert_eq!(refuse(&9_007_199_254_740_992u64), JsonErrorKind::UnsafeInteger);
    assert_eq!(refuse(&-9_007_199_254_740_992i64), JsonErrorKind::UnsafeInteger);
    assert_eq!(refuse(&u128::MAX), JsonErrorKind::UnsafeInteger);
    assert_eq!(refuse(&9_007_199_254_740_992.0f64), JsonErrorKind::UnsafeInteger);
    let by_bool: BTreeMap<bool, u8> = [(true, 1)].into_iter().collect();
    assert_eq!(refuse(&by_bool), JsonErrorKind::Unsupported);
    let by_unsafe: BTreeMap<u64, u8> = [(u64::MAX, 1)].into_iter().collect();
    assert_eq!(refuse(&by_unsafe), JsonErrorKind::UnsafeInteger);
    assert_eq!(refuse(&serde_bytes_like()), JsonErrorKind::Unsupported);
}

/// A value that serializes as raw bytes.
fn serde_bytes_like() -> impl Serialize {
    struct Bytes;
    impl Serialize for Bytes {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.serialize_bytes(b"raw")
        }
    }
    Bytes
}

#[test]
fn nested_out_of_order_objects_with_escaped_keys_are_each_put_in_order() {
    #[derive(Serialize)]
    struct Outer {
        z: HashMap<String, Vec<BTreeMap<String, u8>>>,
        #[serde(rename = "\u{1}control")]
        control: u8,
        a: Inner,
    }
    let mut deep = BTreeMap::new();
    deep.insert("\"quoted\"".to_owned(), 1);
    deep.insert("plain".to_owned(), 2);
    let z: HashMap<String, Vec<BTreeMap<String, u8>>> =
        [("\n".to_owned(), vec![deep.clone()]), ("\\".to_owned(), vec![]), ("b".to_owned(), vec![deep])]
            .into_iter()
            .collect();
    let text = agree(&Outer { z, control: 3, a: Inner { z: true, a: (0, ' ') } });
    assert!(text.starts_with(r#"{"\u0001control":3,"a":{"a":[0," "],"z":true},"z":{"\n":[{"\"quoted\"":1"#), "{text}");
}
