//! `gaos_json::parse`: arbitrary bytes never panic, and canonical output
//! parses back to the same value and is a fixed point.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(value) = gaos_json::parse_bytes(data) else {
        return;
    };
    let canonical = gaos_json::canonical_json(&value);
    let again = gaos_json::parse(&canonical).expect("canonical JSON parses");
    assert_eq!(again, value, "canonical JSON round-trips");
    assert_eq!(gaos_json::canonical_json(&again), canonical, "canonical JSON is a fixed point");
});
