//! The key holder's side of `vectors/signatures.json`: every submission and
//! periodic signature is reproduced byte for byte from the seat's seed
//! (Ed25519 is deterministic), the public keys derive from the seeds, and the
//! evidence for the kernel's own verification rule: `ed25519-dalek`'s
//! `verify_strict` refuses the small-order-component case the reference
//! accepts, so it cannot be the verifier.

use gaos_json::{Value, hex_decode};
use gaos_session::signing::SeatSigningKey;
use gaos_testkit::{array_field, read_conformance_json, str_field};

fn seed_key(seats: &[Value], public_key: &str) -> SeatSigningKey {
    let seat = seats.iter().find(|s| str_field(s, "publicKey") == public_key).expect("a seat with this key");
    let seed: [u8; 32] = hex_decode(str_field(seat, "seedHex")).expect("hex").try_into().expect("32 bytes");
    SeatSigningKey::from_seed(seed)
}

#[test]
fn seeds_reproduce_every_signature_of_the_vectors() {
    let vectors = read_conformance_json("vectors/signatures.json");
    let seats = array_field(&vectors, "seats");
    for seat in seats {
        let seed: [u8; 32] = hex_decode(str_field(seat, "seedHex")).expect("hex").try_into().expect("32 bytes");
        assert_eq!(SeatSigningKey::from_seed(seed).public_key_base64(), str_field(seat, "publicKey"));
    }
    let mut signed = 0;
    for group in ["submissions", "periodic"] {
        for case in array_field(&vectors, group) {
            let key = seed_key(seats, str_field(case, "publicKey"));
            let preimage = hex_decode(str_field(case, "preimageHex")).expect("hex");
            let signature = gaos_kernel::signing::to_base64(&key.sign(&preimage));
            assert_eq!(signature, str_field(case, "signature"), "{}", str_field(case, "name"));
            signed += 1;
        }
    }
    assert_eq!(signed, 10);
}

#[test]
fn key_files_round_trip_and_refuse_a_mismatched_public_key() {
    let key = SeatSigningKey::from_seed([7; 32]);
    let file = key.to_file_value();
    let back = SeatSigningKey::from_file_value(&file).expect("round trip");
    assert_eq!(back.public_key(), key.public_key());
    let mut other = file.clone();
    if let Some(map) = other.as_object_mut() {
        map.insert("publicKey".into(), SeatSigningKey::from_seed([8; 32]).public_key_base64().into());
    }
    assert!(SeatSigningKey::from_file_value(&other).is_err());
    assert!(!format!("{key:?}").contains(&gaos_kernel::signing::to_base64(&[7; 32])), "Debug never shows the seed");
}

#[test]
fn ed25519_dalek_disagrees_with_the_reference_on_a_small_order_component() {
    let vectors = read_conformance_json("vectors/signatures.json");
    let case = array_field(&vectors, "verify")
        .iter()
        .find(|c| str_field(c, "name") == "R with a small-order component")
        .expect("the case");
    assert_eq!(case.get("valid"), Some(&Value::Bool(true)), "the reference accepts it");
    let key: [u8; 32] = gaos_kernel::signing::decode_chain_hash(str_field(case, "publicKey")).expect("key");
    let sig = gaos_kernel::signing::decode_signature(str_field(case, "signature")).expect("sig");
    let message = hex_decode(str_field(case, "messageHex")).expect("hex");
    let dalek = ed25519_dalek::VerifyingKey::from_bytes(&key).expect("a valid key");
    let signature = ed25519_dalek::Signature::from_bytes(&sig);
    assert!(dalek.verify_strict(&message, &signature).is_err(), "cofactorless: refused");
    assert!(gaos_kernel::signing::verify_ed25519(&key, &message, &sig), "the kernel's rule accepts it");
}
