//! The extension check order (kernel spec §4.11, issue 28 item 2): (1) the
//! session has not ended, (2) the lane is a non-empty string, (3) the record
//! is a JSON object, (4) inside the value domain, (5) at most
//! `maxExtensionBytes`. Every combination of session state, lane, record and
//! size is tried, through both entry points (the typed one takes a string
//! lane only), against the first failing check.

// `Prepared` is not `Debug`, so `expect_err` is not available.
#![allow(clippy::err_expect)]

use gaos_json::{Value, parse_lenient};
use gaos_kernel::{SessionKernel, SessionLimits, SubmittedAction, TimeoutInput};

mod support;
use support::{Rounds, rounds_kernel_options};

/// Records of at most this many bytes fit.
const MAX_BYTES: f64 = 16.0;

fn kernel(ended: bool) -> SessionKernel<Rounds> {
    let mut options = rounds_kernel_options("ext", "tests/extension-order", Rounds { ends_after: Some(1) });
    options.limits = SessionLimits { max_extension_bytes: Some(MAX_BYTES), ..SessionLimits::default() };
    let mut k = SessionKernel::new(options).expect("valid options");
    if ended {
        let forced = SubmittedAction::new("Action 1");
        let p = k.prepare_timeout(&TimeoutInput::new("t", 0, None, "elapsed"), Some(&forced)).expect("times out");
        k.apply_now(p).expect("commits");
        assert!(k.is_terminal());
    }
    k
}

fn json(text: &str) -> Value {
    parse_lenient(text).expect("test JSON")
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Lane {
    Good,
    Empty,
    NotAString,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Record {
    Small,
    Oversized,
    NotAnObject,
    OutOfDomain,
    OutOfDomainAndOversized,
}

fn lane_values(lane: Lane) -> Vec<Value> {
    match lane {
        Lane::Good => vec![json(r#""notes""#)],
        Lane::Empty => vec![json(r#""""#)],
        Lane::NotAString => ["5", "null", "[\"notes\"]", "{}", "true"].into_iter().map(json).collect(),
    }
}

fn record_values(record: Record) -> Vec<Value> {
    let texts: &[&str] = match record {
        Record::Small => &[r#"{"a":1}"#, "{}"],
        Record::Oversized => &[r#"{"text":"xxxxxxxxxxxxxxxxxxxx"}"#],
        Record::NotAnObject => &["7", r#""text""#, "[1,2]", "null", r#"["xxxxxxxxxxxxxxxxxxxxxxxx"]"#],
        Record::OutOfDomain => &[r#"{"v":-9007199254740993}"#],
        Record::OutOfDomainAndOversized => &[r#"{"v":9007199254740993,"pad":"xxxxxxxxxxxxxxxxxxxx"}"#],
    };
    texts.iter().map(|t| json(t)).collect()
}

/// The first failing check of kernel spec §4.11, or `None` if none fails.
fn expected(ended: bool, lane: Lane, record: Record) -> Option<(&'static str, &'static str)> {
    const TYPE: (&str, &str) = ("argument", "type");
    if ended {
        return Some(("advance", "terminal"));
    }
    if lane != Lane::Good {
        return Some(TYPE);
    }
    match record {
        Record::Small => None,
        Record::NotAnObject | Record::OutOfDomain | Record::OutOfDomainAndOversized => Some(TYPE),
        Record::Oversized => Some(("argument", "range")),
    }
}

#[test]
fn every_combination_fails_at_its_first_failing_check() {
    let lanes = [Lane::Good, Lane::Empty, Lane::NotAString];
    let records =
        [Record::Small, Record::Oversized, Record::NotAnObject, Record::OutOfDomain, Record::OutOfDomainAndOversized];
    let mut tried = 0;
    for ended in [false, true] {
        let k = kernel(ended);
        for lane in lanes {
            for record in records {
                let want = expected(ended, lane, record);
                for lane_value in lane_values(lane) {
                    for record_value in record_values(record) {
                        let at = format!("ended {ended}, lane {lane_value:?}, record {record_value:?}");
                        let got = k
                            .prepare_extension_value(&lane_value, &record_value)
                            .map(|_| ())
                            .map_err(|e| (e.kind(), e.code()));
                        assert_eq!(got.err(), want, "{at}");
                        if let Some(lane) = lane_value.as_str() {
                            let typed =
                                k.prepare_extension(lane, &record_value).map(|_| ()).map_err(|e| (e.kind(), e.code()));
                            assert_eq!(typed.err(), want, "typed: {at}");
                        }
                        tried += 1;
                    }
                }
            }
        }
    }
    assert!(tried > 100, "{tried} combinations");
}

/// The size is measured in UTF-8 bytes of the canonical record: 16 bytes
/// fit, 17 do not, and a two-byte character counts twice.
#[test]
fn the_size_limit_counts_utf8_bytes_of_the_canonical_record() {
    let k = kernel(false);
    let lane = json(r#""notes""#);
    // `{"t":"…"}` is 8 bytes around the text.
    assert!(k.prepare_extension_value(&lane, &json(r#"{"t":"xxxxxxxx"}"#)).is_ok());
    let over = k.prepare_extension_value(&lane, &json(r#"{"t":"xxxxxxxxx"}"#)).err().expect("17 bytes");
    assert_eq!((over.kind(), over.code()), ("argument", "range"));
    let wide = k.prepare_extension_value(&lane, &json(r#"{"t":"ééééx"}"#)).err().expect("9 characters, 17 bytes");
    assert_eq!((wide.kind(), wide.code()), ("argument", "range"));
}
