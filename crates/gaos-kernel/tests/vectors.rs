//! Seed, RNG and commitment vectors of the shared conformance pack
//! (`run-level-seed.json`, `mulberry32.json`, `commitment-sha256-v1.json`).

use gaos_json::{Value, hex_encode};
use gaos_kernel::commitment::{CommitmentBinding, commitment_hash, commitment_preimage, verify_reveal};
use gaos_kernel::seed::Mulberry32;
use gaos_kernel::{CommitEnvelope, RevealEnvelope, mulberry32, roll, run_level_seed, seeded_permutation};
use gaos_testkit::{array_field, read_conformance_json, str_field};

fn u64_field(value: &Value, key: &str) -> u64 {
    value.get(key).and_then(Value::as_u64).unwrap_or_else(|| panic!("missing integer field {key} in {value}"))
}

fn u32_field(value: &Value, key: &str) -> u32 {
    u32::try_from(u64_field(value, key)).unwrap_or_else(|_| panic!("{key} is not a u32 in {value}"))
}

fn f64_field(value: &Value, key: &str) -> f64 {
    value.get(key).and_then(Value::as_f64).unwrap_or_else(|| panic!("missing number field {key} in {value}"))
}

#[test]
fn run_level_seed_vectors() {
    let vectors = read_conformance_json("vectors/run-level-seed.json");
    let cases = array_field(&vectors, "cases");
    assert!(cases.len() >= 10, "suspiciously few run-level-seed cases");
    for case in cases {
        let seed = u32_field(case, "seed");
        let index = u64_field(case, "levelIndex");
        let value = run_level_seed(seed, index).unwrap_or_else(|e| panic!("{case}: {e}"));
        assert_eq!(u64::from(value), u64_field(case, "value"), "{case}");
    }
}

#[test]
fn mulberry32_draw_vectors() {
    let vectors = read_conformance_json("vectors/mulberry32.json");
    let cases = array_field(&vectors, "mulberry32");
    assert!(!cases.is_empty());
    for case in cases {
        let seed = u32_field(case, "seed");
        let draws = array_field(case, "draws");
        assert!(!draws.is_empty());
        let mut rng = mulberry32(seed);
        for (i, expected) in draws.iter().enumerate() {
            let expected = expected.as_f64().expect("draw");
            // Exact equality: a draw is a u32 divided by 2^32, so no rounding slack.
            assert_eq!(rng.next_f64(), expected, "seed {seed} draw {i}");
        }
        let below_half = case.get("firstDrawBelowHalf").and_then(Value::as_bool).expect("firstDrawBelowHalf");
        assert_eq!(Mulberry32::new(seed).next_f64() < 0.5, below_half, "seed {seed}");
    }
}

#[test]
fn roll_vectors() {
    let vectors = read_conformance_json("vectors/mulberry32.json");
    let cases = array_field(&vectors, "roll");
    assert!(!cases.is_empty());
    for case in cases {
        let value = roll(u32_field(case, "seed"), str_field(case, "key"));
        assert_eq!(value, f64_field(case, "value"), "{case}");
    }
}

#[test]
fn seeded_permutation_vectors() {
    let vectors = read_conformance_json("vectors/mulberry32.json");
    let cases = array_field(&vectors, "seededPermutation");
    assert!(!cases.is_empty());
    for case in cases {
        let n = usize::try_from(u64_field(case, "n")).expect("n");
        let expected: Vec<usize> = array_field(case, "value")
            .iter()
            .map(|v| usize::try_from(v.as_u64().expect("index")).expect("index"))
            .collect();
        assert_eq!(seeded_permutation(n, u32_field(case, "seed")), expected, "{case}");
    }
}

/// The binding of a case, or `None` when a field is outside the Rust types
/// (e.g. a commitment id above u32), which is itself a rejection.
fn binding(case: &Value) -> Option<CommitmentBinding<'_>> {
    Some(CommitmentBinding {
        session_id: str_field(case, "sessionId"),
        seat: str_field(case, "seat"),
        commitment_id: u32::try_from(case.get("commitmentId")?.as_u64()?).ok()?,
        window_ref: case.get("windowRef")?.as_u64()?,
    })
}

#[test]
fn commitment_hash_vectors() {
    let vectors = read_conformance_json("vectors/commitment-sha256-v1.json");
    let cases = array_field(&vectors, "cases");
    assert!(cases.len() >= 5);
    for case in cases {
        let name = str_field(case, "name");
        let binding = binding(case).unwrap_or_else(|| panic!("{name}: binding out of range"));
        let salt = str_field(case, "salt");
        let payload = case.get("payload").expect("payload");
        let preimage = commitment_preimage(&binding, salt, payload).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(hex_encode(&preimage), str_field(case, "preimageHex"), "{name}");
        let hash = commitment_hash(&binding, salt, payload).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(hash, str_field(case, "hash"), "{name}");
    }
}

#[test]
fn commitment_reject_vectors() {
    let vectors = read_conformance_json("vectors/commitment-sha256-v1.json");
    let cases = array_field(&vectors, "reject");
    assert!(!cases.is_empty());
    for case in cases {
        let name = str_field(case, "name");
        let Some(binding) = binding(case) else {
            // Refused before hashing: the id does not fit the u32 field.
            assert!(name.contains("commitmentId"), "{name}: unexpected out-of-range binding");
            continue;
        };
        let payload = case.get("payload").expect("payload");
        let salt = str_field(case, "salt");
        assert!(commitment_preimage(&binding, salt, payload).is_err(), "{name}: preimage accepted");
        assert!(commitment_hash(&binding, salt, payload).is_err(), "{name}: hash accepted");
    }
}

#[test]
fn commitment_verify_vectors() {
    let vectors = read_conformance_json("vectors/commitment-sha256-v1.json");
    let cases = array_field(&vectors, "verify");
    assert!(!cases.is_empty());
    for case in cases {
        let binding = binding(case.get("binding").expect("binding")).expect("binding in range");
        let commit: CommitEnvelope =
            gaos_json::from_value(case.get("commitment").expect("commitment").clone()).expect("commitment");
        let reveal: RevealEnvelope =
            gaos_json::from_value(case.get("reveal").expect("reveal").clone()).expect("reveal");
        let ok = case.get("ok").and_then(Value::as_bool).expect("ok");
        assert_eq!(verify_reveal(&binding, &commit, &reveal), Ok(ok), "{case}");
    }
}
