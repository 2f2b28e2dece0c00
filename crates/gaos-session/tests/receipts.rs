//! Attach receipts against `vectors/attach-receipt.json` and the golden
//! vectors of lifecycle spec §3.

use gaos_json::{Value, obj, parse};
use gaos_session::receipts::{
    AttachReceipt, RECEIPT_SCHEMA, ReceiptBody, ReceiptError, receipt_digest, receipt_preimage, receipt_preimage_value,
    receipt_value_digest, verify_receipt_chain, verify_typed_receipt_chain,
};
use gaos_testkit::{array_field, read_conformance_json, str_field};

#[test]
fn vector_receipts_digests_and_round_trips() {
    let vectors = read_conformance_json("vectors/attach-receipt.json");
    let receipts = array_field(&vectors, "receipts");
    assert!(receipts.len() >= 3);
    for case in receipts {
        let value = case.get("receipt").expect("receipt");
        let expected_digest = str_field(case, "receiptDigest");
        assert_eq!(receipt_preimage_value(value).as_deref(), Some(str_field(case, "preimage")));
        assert_eq!(receipt_value_digest(value).as_deref(), Some(expected_digest));
        assert_eq!(str_field(value, "receiptDigest"), expected_digest);

        let typed = AttachReceipt::from_value(value).expect("typed receipt");
        assert_eq!(receipt_preimage(&typed).unwrap(), str_field(case, "preimage"));
        assert_eq!(receipt_digest(&typed).unwrap(), expected_digest);
        assert!(typed.digest_matches());
        assert_eq!(&typed.to_value().unwrap(), value, "round trip keeps absent fields absent");

        // Rebuilding from the body gives the identical receipt.
        let body = ReceiptBody {
            session_id: typed.session_id.clone(),
            request_id: typed.request_id.clone(),
            sequence: typed.sequence,
            revision: typed.revision,
            transcript_digest: typed.transcript_digest.clone(),
            state_digest: typed.state_digest.clone(),
            attached_at: typed.attached_at,
            previous_receipt_digest: typed.previous_receipt_digest.clone(),
            controller: typed.controller.clone(),
            extensions: typed.extensions.clone(),
        };
        assert_eq!(AttachReceipt::new(body).expect("valid"), typed);
    }
}

#[test]
fn vector_chains_validity_and_problem_counts() {
    let vectors = read_conformance_json("vectors/attach-receipt.json");
    let chains = array_field(&vectors, "chains");
    assert!(chains.len() >= 5);
    for chain in chains {
        let name = str_field(chain, "name");
        let result = verify_receipt_chain(array_field(chain, "receipts"));
        let valid = chain.get("valid").and_then(Value::as_bool).expect("valid");
        let count = chain.get("problemCount").and_then(Value::as_u64).expect("problemCount");
        assert_eq!(result.valid, valid, "{name}: {:?}", result.problems);
        assert_eq!(result.problems.len() as u64, count, "{name}: {:?}", result.problems);
        assert_eq!(result.valid, result.problems.is_empty(), "{name}");
    }
}

#[test]
fn golden_vectors_of_the_lifecycle_spec() {
    let first =
        AttachReceipt::new(ReceiptBody::new("session-1", "attach-1", 0, 4, "transcript-4", "state-4")).expect("valid");
    assert_eq!(first.receipt_digest, "e0c3af9753a30c96d9b55f1204417ff7b83f2bf8314c8bea8f89380f984c3da5");
    assert_eq!(first.schema, RECEIPT_SCHEMA);
    let second =
        AttachReceipt::new(ReceiptBody::next(&first, "attach-2", 6, "transcript-6", "state-6")).expect("valid");
    assert_eq!((second.sequence, second.previous_receipt_digest.as_deref()), (1, Some(first.receipt_digest.as_str())));
    assert_eq!(second.receipt_digest, "195ea17aa08cc9df3ee8893373af060cb6dd74b068f98d342000b16eff4cb6bf");
    let check = verify_typed_receipt_chain(&[first.clone(), second.clone()]);
    assert!(check.valid && check.problems.is_empty(), "{:?}", check.problems);
    // Out of order: the first receipt carries a link, sequence and revision go backwards, the link breaks.
    let check = verify_typed_receipt_chain(&[second, first]);
    assert!(!check.valid);
    assert_eq!(check.problems.len(), 4, "{:?}", check.problems);
}

fn receipt(sequence: u64, revision: u64, previous: Option<&AttachReceipt>) -> AttachReceipt {
    let body = match previous {
        Some(prev) => ReceiptBody { sequence, ..ReceiptBody::next(prev, format!("r{sequence}"), revision, "t", "s") },
        None => ReceiptBody::new("sess", format!("r{sequence}"), sequence, revision, "t", "s"),
    };
    AttachReceipt::new(body).expect("valid")
}

fn problems(chain: &[Value]) -> Vec<String> {
    verify_receipt_chain(chain).problems
}

#[test]
fn chain_problem_rules() {
    let r0 = receipt(0, 1, None);
    let r1 = receipt(1, 1, Some(&r0)); // equal revision is fine
    assert!(problems(&[r0.to_value().unwrap(), r1.to_value().unwrap()]).is_empty());
    assert!(verify_receipt_chain(&[]).valid, "an empty chain has no problems");

    // Wrong schema: one problem, and the receipt is skipped (r1 is checked against r0).
    let mut foreign = r0.to_value().unwrap();
    foreign.as_object_mut().unwrap().insert("schema".into(), "other.v1".into());
    let p = problems(&[r0.to_value().unwrap(), foreign, r1.to_value().unwrap()]);
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(p[0].contains("schema"), "{p:?}");
    assert_eq!(problems(&[Value::Null, r0.to_value().unwrap()]).len(), 1, "a non-object is skipped too");

    // Session change (re-sealed so only the session differs... and the link).
    let other_session =
        AttachReceipt::new(ReceiptBody { session_id: "elsewhere".into(), ..ReceiptBody::next(&r0, "x", 1, "t", "s") })
            .unwrap();
    let p = problems(&[r0.to_value().unwrap(), other_session.to_value().unwrap()]);
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(p[0].contains("sessionId"), "{p:?}");

    // Revision going down.
    let lower = receipt(1, 0, Some(&r0));
    let p = problems(&[r0.to_value().unwrap(), lower.to_value().unwrap()]);
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(p[0].contains("revision"), "{p:?}");

    // Missing link on a later receipt.
    let unlinked = AttachReceipt::new(ReceiptBody::new("sess", "r1", 1, 1, "t", "s")).unwrap();
    let p = problems(&[r0.to_value().unwrap(), unlinked.to_value().unwrap()]);
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(p[0].contains("previousReceiptDigest"), "{p:?}");

    // Blank fields and bad numbers (re-digested so only these rules fire).
    let mut bad = r0.to_value().unwrap();
    let map = bad.as_object_mut().unwrap();
    map.insert("requestId".into(), " ".into());
    map.insert("stateDigest".into(), 5u32.into());
    map.insert("sequence".into(), Value::Number(-1.0));
    map.insert("revision".into(), Value::Number(0.5));
    let digest = receipt_value_digest(&bad).unwrap();
    bad.as_object_mut().unwrap().insert("receiptDigest".into(), digest.into());
    let p = problems(&[bad]);
    assert_eq!(p.len(), 4, "{p:?}");

    // Missing digest, and a tampered field.
    let mut missing = r0.to_value().unwrap();
    missing.as_object_mut().unwrap().remove("receiptDigest");
    assert_eq!(problems(&[missing]).len(), 1);
    let mut tampered = r0.to_value().unwrap();
    tampered.as_object_mut().unwrap().insert("attachedAt".into(), 5u32.into());
    assert_eq!(problems(&[tampered]).len(), 1);
}

#[test]
fn construction_and_decoding_refuse_bad_receipts() {
    let blank = ReceiptBody::new("sess", "", 0, 0, "t", "s");
    assert_eq!(AttachReceipt::new(blank), Err(ReceiptError::Blank("requestId")));
    let unsafe_seq = ReceiptBody::new("sess", "r", 1 << 60, 0, "t", "s");
    assert_eq!(AttachReceipt::new(unsafe_seq), Err(ReceiptError::UnsafeInteger("sequence")));
    let nan = ReceiptBody { attached_at: Some(f64::NAN), ..ReceiptBody::new("sess", "r", 0, 0, "t", "s") };
    assert_eq!(AttachReceipt::new(nan), Err(ReceiptError::NonFiniteAttachedAt));

    let full = AttachReceipt::new(ReceiptBody {
        attached_at: Some(1.5),
        controller: Some(obj! { "kind" => "cli", "id" => "me" }),
        extensions: Some(obj! {}),
        ..ReceiptBody::new("sess", "r", 0, 0, "t", "s")
    })
    .unwrap();
    let text = full.to_value().unwrap().to_string();
    assert!(text.contains(r#""attachedAt":1.5"#) && text.contains(r#""extensions":{}"#), "{text}");
    assert!(!text.contains("null") && !text.contains("previousReceiptDigest"), "{text}");

    let with_unknown = parse(&text.replacen('{', r#"{"extra":1,"#, 1)).unwrap();
    assert!(matches!(AttachReceipt::from_value(&with_unknown), Err(ReceiptError::Shape(_))));
    let wrong_schema = parse(&text.replace(RECEIPT_SCHEMA, "gaos.other.v1")).unwrap();
    assert!(matches!(AttachReceipt::from_value(&wrong_schema), Err(ReceiptError::Shape(_))));
    assert!(AttachReceipt::from_value(&Value::Null).is_err());

    // A receipt built by hand outside the JSON domain fails softly, never panics.
    let mut hand_built = full.clone();
    hand_built.attached_at = Some(f64::INFINITY);
    assert!(hand_built.to_value().is_err());
    assert!(receipt_digest(&hand_built).is_err() && receipt_preimage(&hand_built).is_err());
    assert!(!hand_built.digest_matches());
    let mut huge = full.clone();
    huge.revision = u64::MAX;
    let check = verify_typed_receipt_chain(&[full, hand_built, huge]);
    assert_eq!(check.problems.len(), 2, "{:?}", check.problems);
}
