//! The `gaos.kernel-checkpoint` 1.0 document: its shape, its integrity
//! digest, and every refusal of a tampered or mismatched checkpoint on read
//! and on restore.

mod checkpoint_support;
mod support;

use std::sync::Arc;

use checkpoint_support::{Player, between, options_for};
use gaos_json::{Value, canonical_json, sha256_hex};
use gaos_kernel::{CheckpointCode, KernelCheckpoint, KernelError, SessionKernel, SessionLimits};

fn counter_player(session: &str) -> Player {
    let level = gaos_json::parse(r#"{"rounds":20}"#).expect("json");
    let mut player = Player::new(options_for("conformance/counter", &level, session, SessionLimits::default()), 5);
    player.play(25, None, None);
    player
}

/// SHA-256 of the canonical document without `integrityDigest`, computed
/// here from the text, not by the kernel.
fn reseal(mut value: Value) -> Value {
    let map = value.as_object_mut().expect("an object");
    map.remove("integrityDigest");
    let digest = sha256_hex(canonical_json(&Value::Object(map.clone())).as_bytes());
    map.insert("integrityDigest".into(), digest.into());
    value
}

fn code_of(result: Result<impl Sized, KernelError>) -> Option<CheckpointCode> {
    match result {
        Err(KernelError::Checkpoint { code, .. }) => Some(code),
        Err(other) => panic!("expected a checkpoint refusal, got {other:?}"),
        Ok(_) => None,
    }
}

#[test]
fn a_checkpoint_has_the_reference_shape_and_round_trips_through_canonical_json() {
    let player = counter_player("shape");
    let checkpoint = player.kernel.checkpoint().expect("counter checkpoints");
    let value = checkpoint.to_value();
    let keys: Vec<&str> = value.as_object().expect("object").keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "codec",
            "format",
            "formatVersion",
            "header",
            "integrityDigest",
            "protocol",
            "reducerState",
            "retentionFloor",
            "stateDigest",
            "watermark",
            "window"
        ]
    );
    assert_eq!(value.get("format").and_then(Value::as_str), Some("gaos.kernel-checkpoint"));
    assert_eq!(value.get("formatVersion").and_then(Value::as_str), Some("1.0"));
    assert_eq!(canonical_json(value.get("codec").expect("codec")), r#"{"id":"gaos.json","version":"1"}"#);
    let protocol: Vec<&str> =
        value.get("protocol").and_then(Value::as_object).expect("protocol").keys().map(String::as_str).collect();
    assert_eq!(
        protocol,
        [
            "commitments",
            "expiredReceiptKeys",
            "historicalInterestCommands",
            "historicalSubmissionKeys",
            "intentActions",
            "interests",
            "nextCommitmentIds",
            "receipts",
            "rejections",
            "seenSalts",
            "views"
        ]
    );
    let kernel = &player.kernel;
    let watermark = value.get("watermark").expect("watermark");
    assert_eq!(watermark.get("transitionRevision").and_then(Value::as_u64), Some(kernel.transition_revision()));
    assert_eq!(watermark.get("cursor").and_then(Value::as_u64), Some(kernel.cursor()));
    assert_eq!(watermark.get("tick").and_then(Value::as_u64), Some(kernel.tick()));
    assert_eq!(value.get("stateDigest").and_then(Value::as_u64), Some(u64::from(kernel.digest())));
    assert_eq!(value.get("retentionFloor").and_then(Value::as_u64), Some(0));
    assert_eq!(
        canonical_json(value.get("header").expect("header")),
        canonical_json(&kernel.session_header().to_value())
    );
    // §1.6: SHA-256 of the canonical document without the digest itself.
    assert_eq!(canonical_json(&reseal(value.clone())), canonical_json(&value));
    assert_eq!(checkpoint.integrity_digest().len(), 64);
    // The stored text is canonical and reads back to the same checkpoint.
    let text = checkpoint.to_json();
    assert_eq!(text, canonical_json(&gaos_json::parse(&text).expect("json")));
    let read = KernelCheckpoint::from_json(&text).expect("reads back");
    assert_eq!(read, checkpoint);
    assert_eq!(read.to_json(), text);
    // Restoring without a tail gives the same kernel, which checkpoints to the same text.
    let restored = SessionKernel::restore(Arc::clone(&player.options), &read, Vec::new(), None).expect("restores");
    assert_eq!(restored.checkpoint().expect("checkpoint").to_json(), text);
}

#[test]
fn a_tampered_document_fails_its_integrity_digest() {
    let player = counter_player("tamper");
    let value = player.kernel.checkpoint().expect("checkpoint").to_value();
    let mut tampered = value.clone();
    let state = tampered.as_object_mut().and_then(|m| m.get_mut("reducerState")).and_then(Value::as_object_mut);
    state.expect("an object state").insert("total".into(), Value::Number(1e6));
    assert_eq!(code_of(KernelCheckpoint::from_value(&tampered)), Some(CheckpointCode::Integrity));
    let text = canonical_json(&tampered);
    match KernelCheckpoint::from_json(&text) {
        Err(e @ KernelError::Checkpoint { code: CheckpointCode::Integrity, .. }) => {
            let message = e.to_string();
            assert!(message.contains("integrityDigest"), "{message}");
            assert_eq!((e.kind(), e.code()), ("checkpoint", "integrity"));
        }
        other => panic!("expected an integrity refusal, got {other:?}"),
    }
    let mut wrong_format = value.clone();
    wrong_format.as_object_mut().expect("object").insert("formatVersion".into(), "2.0".into());
    assert_eq!(code_of(KernelCheckpoint::from_value(&reseal(wrong_format))), Some(CheckpointCode::Malformed));
    let mut extra = value.clone();
    extra.as_object_mut().expect("object").insert("surprise".into(), true.into());
    assert_eq!(code_of(KernelCheckpoint::from_value(&reseal(extra))), Some(CheckpointCode::Malformed));
    assert_eq!(code_of(KernelCheckpoint::from_json("{")), Some(CheckpointCode::Malformed));
}

/// A resealed document (integrity passes) whose content contradicts the
/// kernel is refused on restore with the check that catches it.
#[test]
fn restore_refuses_a_checkpoint_that_contradicts_the_options_or_itself() {
    let player = counter_player("contradict");
    let options = Arc::clone(&player.options);
    let value = player.kernel.checkpoint().expect("checkpoint").to_value();
    let restore = |edit: &dyn Fn(&mut gaos_json::Map)| {
        let mut doc = value.clone();
        edit(doc.as_object_mut().expect("object"));
        let checkpoint = KernelCheckpoint::from_value(&reseal(doc)).expect("integrity holds after resealing");
        code_of(SessionKernel::restore(Arc::clone(&options), &checkpoint, Vec::new(), None))
    };
    let nested = |map: &mut gaos_json::Map, path: &[&str], v: Value| {
        let mut at = map;
        for key in &path[..path.len() - 1] {
            at = at.get_mut(*key).and_then(Value::as_object_mut).expect("a nested object");
        }
        at.insert(path[path.len() - 1].into(), v);
    };
    assert_eq!(restore(&|_| {}), None, "the untouched document restores");
    assert_eq!(restore(&|m| nested(m, &["header", "seed"], 99u32.into())), Some(CheckpointCode::Header));
    assert_eq!(restore(&|m| nested(m, &["codec", "id"], "gaos.cbor".into())), Some(CheckpointCode::Codec));
    assert_eq!(restore(&|m| nested(m, &["watermark", "cursor"], 999u32.into())), Some(CheckpointCode::Watermark));
    assert_eq!(restore(&|m| nested(m, &["window", "tickId"], "contradict:999".into())), Some(CheckpointCode::Window));
    assert_eq!(restore(&|m| nested(m, &["stateDigest"], 7u32.into())), Some(CheckpointCode::StateDigest));
    // A state whose views differ from the recorded ones.
    assert_eq!(
        restore(&|m| nested(m, &["reducerState", "total"], Value::Number(123456.0))),
        Some(CheckpointCode::Views)
    );
    assert_eq!(restore(&|m| nested(m, &["reducerState", "nonsense"], true.into())), Some(CheckpointCode::Malformed));
    // Another session's options.
    let other = options_for(
        "conformance/counter",
        &gaos_json::parse(r#"{"rounds":20}"#).expect("json"),
        "another",
        SessionLimits::default(),
    );
    let checkpoint = KernelCheckpoint::from_value(&value).expect("reads");
    assert_eq!(code_of(SessionKernel::restore(other, &checkpoint, Vec::new(), None)), Some(CheckpointCode::Header));
}

#[test]
fn the_tail_must_continue_right_after_the_watermark() {
    let mut player = counter_player("tail");
    let checkpoint = player.store_checkpoint();
    let at = checkpoint.transition_revision();
    player.play(12, None, None);
    let options = Arc::clone(&player.options);
    let tail = between(&player.store, at, u64::MAX);
    assert!(tail.len() > 4, "the session went on after the checkpoint");
    let restored = SessionKernel::restore(Arc::clone(&options), &checkpoint, tail.clone(), None).expect("restores");
    assert_eq!(restored.digest(), player.kernel.digest());
    assert_eq!(restored.events().len(), tail.len(), "the restored log is the tail");
    // Starting inside the checkpoint, skipping a transition, or a gap.
    let overlapping = between(&player.store, at - 1, u64::MAX);
    assert_eq!(
        code_of(SessionKernel::restore(Arc::clone(&options), &checkpoint, overlapping, None)),
        Some(CheckpointCode::Tail)
    );
    let late = between(&player.store, at + 1, u64::MAX);
    assert_eq!(
        code_of(SessionKernel::restore(Arc::clone(&options), &checkpoint, late, None)),
        Some(CheckpointCode::Tail)
    );
    let mut gap = tail.clone();
    let second = gap.iter().position(|e| e.transition_revision == at + 2).expect("a second transition");
    gap.retain(|e| e.transition_revision != at + 2);
    assert!(second > 0);
    assert_eq!(
        code_of(SessionKernel::restore(Arc::clone(&options), &checkpoint, gap, None)),
        Some(CheckpointCode::Tail)
    );
    // A tail event the game cannot reproduce is the rehydrate refusal.
    let mut forged = tail;
    if let gaos_kernel::EventBody::Checkpoint { digest, .. } = &mut forged
        .iter_mut()
        .find(|e| matches!(e.body, gaos_kernel::EventBody::Checkpoint { .. }))
        .expect("a checkpoint event")
        .body
    {
        *digest ^= 1;
    }
    let refused = SessionKernel::restore(options, &checkpoint, forged, None).err().expect("refused");
    assert!(refused.to_string().contains("checkpoint"), "{refused}");
}

#[test]
fn a_reducer_that_cannot_encode_its_state_cannot_checkpoint() {
    let kernel = SessionKernel::from_shared(support::rounds_options("plain", "tests/rounds")).expect("valid");
    match kernel.checkpoint() {
        Err(e @ KernelError::Checkpoint { code: CheckpointCode::Unsupported, .. }) => {
            assert!(e.to_string().contains("tests/rounds"), "{e}");
        }
        other => panic!("expected unsupported, got {other:?}"),
    }
}
