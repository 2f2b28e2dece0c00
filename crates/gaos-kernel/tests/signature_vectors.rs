//! Every vector of `vectors/signatures.json` (RFC-010,
//! `gaos.submission.ed25519.v1`): roster hashes (declared order and
//! variants), genesis links, submission and periodic preimages, chain heads,
//! signatures, and the strict Ed25519 verify cases (the reference's verdict,
//! not OpenSSL's, on every edge case).

use gaos_json::{Value, canonical_json, hex_encode};
use gaos_kernel::signing::{
    PeriodicAttestation, Roster, SeatKey, SubmissionLink, chain_link, decode_chain_hash, roster_hash, to_base64,
    verify_ed25519_base64,
};
use gaos_testkit::{array_field, read_conformance_json, str_field};

fn u64_field(value: &Value, key: &str) -> u64 {
    value.get(key).and_then(Value::as_u64).unwrap_or_else(|| panic!("missing integer field {key} in {value}"))
}

fn f<'a>(value: &'a Value, key: &str) -> &'a Value {
    value.get(key).unwrap_or_else(|| panic!("missing field {key}"))
}

fn roster(value: &Value) -> Roster {
    Roster::from_value(value).unwrap_or_else(|e| panic!("roster {value}: {e}"))
}

#[test]
fn roster_hash_and_its_variants() {
    let vectors = read_conformance_json("vectors/signatures.json");
    let declared = f(&vectors, "roster");
    let keys = roster(f(declared, "seatKeys"));
    let mut sorted: Vec<Value> = keys.keys().iter().map(SeatKey::to_value).collect();
    sorted.sort_by(|a, b| str_field(a, "id").cmp(str_field(b, "id")));
    assert_eq!(canonical_json(&Value::Array(sorted)), str_field(declared, "canonicalJson"));
    assert_eq!(to_base64(keys.hash()), str_field(declared, "rosterHash"));
    assert_eq!(canonical_json(&keys.to_value()), canonical_json(f(declared, "seatKeys")), "declared order is kept");
    let variants = array_field(declared, "variants");
    assert_eq!(variants.len(), 3);
    for variant in variants {
        let keys = roster(f(variant, "seatKeys"));
        assert_eq!(to_base64(&roster_hash(keys.keys())), str_field(variant, "rosterHash"), "{variant}");
    }
}

#[test]
fn genesis_links() {
    let vectors = read_conformance_json("vectors/signatures.json");
    let keys = roster(f(f(&vectors, "roster"), "seatKeys"));
    let cases = array_field(&vectors, "genesis");
    assert_eq!(cases.len(), 3);
    for case in cases {
        let seat = str_field(case, "seat");
        assert_eq!(to_base64(keys.hash()), str_field(case, "rosterHash"));
        let genesis = keys.genesis(str_field(case, "sessionId"), seat).expect("valid text");
        assert_eq!(to_base64(&genesis), str_field(case, "chainHash"), "{seat}");
    }
}

#[test]
fn submission_preimages_chain_heads_and_signatures() {
    let vectors = read_conformance_json("vectors/signatures.json");
    let keys = roster(f(f(&vectors, "roster"), "seatKeys"));
    let session = str_field(&vectors, "sessionId");
    let mut heads = std::collections::BTreeMap::new();
    let cases = array_field(&vectors, "submissions");
    assert_eq!(cases.len(), 8);
    for case in cases {
        let envelope = f(case, "envelope");
        let seat = str_field(envelope, "seat");
        let command = canonical_json(f(envelope, "command"));
        assert_eq!(command, str_field(case, "canonicalCommand"), "{}", str_field(case, "name"));
        let prev = decode_chain_hash(str_field(envelope, "prevChainHash")).expect("base64");
        // Chain order: each seat's first link starts at its genesis, each
        // later one at the head the previous link produced.
        let expected_prev = heads.get(seat).copied().unwrap_or_else(|| keys.genesis(session, seat).expect("genesis"));
        assert_eq!(prev, expected_prev, "{} continues its seat's chain", str_field(case, "name"));
        let link = SubmissionLink {
            session_id: str_field(envelope, "sessionId"),
            seat,
            submission_id: str_field(envelope, "submissionId"),
            cursor: u64_field(envelope, "cursor"),
            tick: u64_field(envelope, "tick"),
            client_time: u64_field(envelope, "clientTime"),
            canonical_command: &command,
            prev_chain_hash: &prev,
        };
        let preimage = link.preimage().expect("valid envelope");
        assert_eq!(hex_encode(&preimage), str_field(case, "preimageHex"), "{}", str_field(case, "name"));
        let head = chain_link(&preimage);
        assert_eq!(to_base64(&head), str_field(case, "chainHash"));
        heads.insert(seat.to_owned(), head);
        assert_eq!(keys.key(seat).expect("seat in roster").public_key_base64(), str_field(case, "publicKey"));
        assert!(verify_ed25519_base64(str_field(case, "publicKey"), &preimage, str_field(case, "signature")));
        let sig = gaos_kernel::signing::decode_signature(str_field(case, "signature")).expect("64 bytes");
        assert!(keys.verify(seat, &preimage, &sig), "the roster verifies {seat}'s link");
        assert!(!keys.verify("nobody", &preimage, &sig), "a seat outside the roster verifies nothing");
    }
}

#[test]
fn periodic_preimages_and_signatures() {
    let vectors = read_conformance_json("vectors/signatures.json");
    let cases = array_field(&vectors, "periodic");
    assert_eq!(cases.len(), 2);
    for case in cases {
        let envelope = f(case, "envelope");
        let head = decode_chain_hash(str_field(envelope, "chainHead")).expect("base64");
        let attestation = PeriodicAttestation {
            session_id: str_field(envelope, "sessionId"),
            seat: str_field(envelope, "seat"),
            tick: u64_field(envelope, "tick"),
            client_time: u64_field(envelope, "clientTime"),
            chain_head: &head,
        };
        let preimage = attestation.preimage().expect("valid");
        assert_eq!(hex_encode(&preimage), str_field(case, "preimageHex"), "{}", str_field(case, "name"));
        assert!(verify_ed25519_base64(str_field(case, "publicKey"), &preimage, str_field(case, "signature")));
    }
}

#[test]
fn verify_cases_match_the_reference_not_openssl() {
    let vectors = read_conformance_json("vectors/signatures.json");
    let cases = array_field(&vectors, "verify");
    assert_eq!(cases.len(), 9);
    let mut disagreements_with_openssl = 0;
    for case in cases {
        let message = gaos_json::hex_decode(str_field(case, "messageHex")).expect("hex");
        let valid = verify_ed25519_base64(str_field(case, "publicKey"), &message, str_field(case, "signature"));
        let expected = f(case, "valid").as_bool().expect("valid");
        assert_eq!(valid, expected, "{}: {}", str_field(case, "name"), str_field(case, "description"));
        if f(case, "nodeCryptoValid").as_bool() != Some(expected) {
            disagreements_with_openssl += 1;
        }
    }
    assert_eq!(disagreements_with_openssl, 3, "the edge cases where the reference and OpenSSL differ are all here");
}

#[test]
fn preimages_refuse_what_the_reference_refuses() {
    let head = [0u8; 32];
    let link = |session: &'static str, seat: &'static str, time: u64| SubmissionLink {
        session_id: session,
        seat,
        submission_id: "s-1",
        cursor: 0,
        tick: 0,
        client_time: time,
        canonical_command: "1",
        prev_chain_hash: &head,
    };
    assert!(link("", "a", 0).preimage().is_err(), "an empty session id");
    assert!(link("s", "", 0).preimage().is_err(), "an empty seat");
    assert!(link("s", "a", 1 << 53).preimage().is_err(), "clientTime beyond 2^53 - 1");
    assert!(link("s", "a", (1 << 53) - 1).preimage().is_ok());
    let long = "x".repeat(65_537);
    let too_long = SubmissionLink { canonical_command: &long, ..link("s", "a", 0) };
    assert!(too_long.preimage().is_err(), "a command over 65536 bytes");
}
