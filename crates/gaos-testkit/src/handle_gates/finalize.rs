//! Gates about finalizing: one operation for every kind of session (g5),
//! exact retries return the host's bytes (g6), and finished sessions cost
//! nothing once their handles are gone.

use gaos_runner::ErrorCode;
use std::time::Duration;

use gaos_json::{Value, obj};
use gaos_runner::{FinalizeRequest, HandleState, SessionError, SessionPolicy};

use super::{GateHost, json, official_policy, official_request, seat_handles};

/// g5: one finalize operation for normal and evaluated sessions, only once
/// the game ended.
pub async fn g5_one_finalize_operation_for_normal_and_evaluated_sessions(host: &mut impl GateHost) {
    let normal = r#"{"game":"conformance/counter","level":{"rounds":1},"participantId":"a"}"#.to_owned();
    // (policy, request, rounds to play, evaluated)
    let cases = [(SessionPolicy::host_default(), normal, 1, false), (official_policy(), official_request(), 3, true)];
    for (policy, request, rounds, evaluated) in cases {
        let (_, handles) = seat_handles(host, &request, &policy, &["a", "b"]).await;
        let early = handles[0].finalize(FinalizeRequest::default()).await;
        assert_eq!(early.err().as_ref().and_then(SessionError::code), Some(&ErrorCode::NotTerminal));
        for round in 0..rounds {
            if round > 0 {
                // Each seat reads the next window before acting in it.
                handles[0].observe().await.expect("a observes");
                handles[1].observe().await.expect("b observes");
            }
            handles[0].act(json(r#"{"n":1}"#)).await.expect("a");
            handles[1].act(json(r#"{"n":1}"#)).await.expect("b");
        }
        let observed = handles[0].observe().await.expect("observe");
        assert_eq!(observed.finalization_status(), Some("terminal"));
        assert_eq!(handles[0].state(), HandleState::Terminal);
        let result = handles[0].finalize(FinalizeRequest::default()).await.expect("the one finalize");
        assert_eq!(result.outcome.get("status"), Some(&Value::from("ended")));
        assert_eq!(result.evaluation.is_some(), evaluated);
        if let Some(evaluation) = &result.evaluation {
            // The official score is bound to the manifest and re-simulated.
            assert_eq!(
                evaluation.get("manifestDigest"),
                Some(&Value::from(gaos_json::canonical_sha256_hex(&super::official_manifest())))
            );
            assert_eq!(evaluation.get("score"), Some(&Value::Number(0.0)), "counter ends, it is never won");
            assert_eq!(evaluation.get("verification").and_then(|v| v.get("replay")), Some(&Value::from("verified")));
        }
        assert!(result.replay_text().is_some_and(|r| r.contains("gaos.replay")), "replay evidence is included");
        host.verify_replay(if evaluated { "g5-evaluated" } else { "g5-normal" }, result.replay_text().expect("replay"));
        assert_eq!(handles[0].state(), HandleState::Finalized);
        let late = handles[1].act(json(r#"{"n":1}"#)).await;
        assert!(late.is_err(), "no gameplay after finalize");
    }
    // Finalizing before the game ends is refused by the host.
    let (_, handles) = seat_handles(
        host,
        r#"{"game":"conformance/counter","participantId":"a"}"#,
        &SessionPolicy::host_default(),
        &["a", "b"],
    )
    .await;
    let early = handles[0].finalize(FinalizeRequest::default()).await;
    assert_eq!(early.err().as_ref().and_then(SessionError::code), Some(&ErrorCode::NotTerminal));
    assert_eq!(handles[0].state(), HandleState::Active);
}

/// g6: exact finalize retries, from any handle or straight to the host,
/// return identical bytes; a different request conflicts in the handle and
/// at the host.
pub async fn g6_exact_finalize_retries_return_identical_bytes(host: &mut impl GateHost) {
    let policy = SessionPolicy::host_default();
    let (id, handles) = seat_handles(
        host,
        r#"{"game":"conformance/counter","level":{"rounds":1},"participantId":"a"}"#,
        &policy,
        &["a", "b"],
    )
    .await;
    handles[0].act(json(r#"{"n":2}"#)).await.expect("a");
    handles[1].act(json(r#"{"n":3}"#)).await.expect("b");
    let mut metadata = gaos_json::Map::new();
    metadata.insert("label".into(), "run-1".into());
    let request = FinalizeRequest { metadata: Some(metadata), ..FinalizeRequest::with_id("fin-1") };
    let first = handles[0].finalize(request.clone()).await.expect("finalize");
    let cached = handles[0].finalize(request.clone()).await.expect("cached");
    let other_handle = handles[1].finalize(request.clone()).await.expect("exact retry from another handle");
    let direct = host.finalize_raw(&id, &request.to_value(&id)).await;
    assert_eq!(cached.canonical(), first.canonical());
    assert_eq!(other_handle.canonical(), first.canonical());
    assert_eq!(direct, first.canonical(), "the host's stored bytes, byte for byte");
    let conflict = handles[1].finalize(FinalizeRequest::with_id("fin-2")).await;
    assert!(
        matches!(conflict, Err(SessionError::FinalizeConflict { .. })),
        "the handle's cache refuses it: {:?}",
        conflict.as_ref().err()
    );
    let binding = gaos_json::to_value(&handles[1].binding()).expect("b");
    let existing = obj! { "sessionId" => id.clone(), "tick" => Value::Null, "binding" => binding };
    let adopted = host.adopt(&id, "b", &existing.into(), &policy).expect("adopt");
    let conflict = adopted.finalize(FinalizeRequest::with_id("fin-2")).await;
    assert_eq!(
        conflict.err().as_ref().and_then(SessionError::code),
        Some(&ErrorCode::FinalizeConflict),
        "the host refuses it too"
    );
    let late = handles[1].act(json(r#"{"n":1}"#)).await;
    assert!(late.is_err(), "no gameplay after finalize");
}

/// A finalized session leaves the host's session map; once the last handle
/// is gone its actor must stop (not keep polling closed channels), so
/// thousands of finished benchmark episodes cost nothing.
pub async fn a_finalized_sessions_actor_stops_when_its_handles_are_dropped(host: &mut impl GateHost) {
    let policy = SessionPolicy::host_default();
    for _ in 0..3 {
        let (_, handles) = seat_handles(
            host,
            r#"{"game":"conformance/counter","level":{"rounds":1},"participantId":"a"}"#,
            &policy,
            &["a", "b"],
        )
        .await;
        handles[0].act(json(r#"{"n":1}"#)).await.expect("a");
        handles[1].act(json(r#"{"n":1}"#)).await.expect("b");
        handles[0].finalize(FinalizeRequest::default()).await.expect("finalize");
    }
    let mut live = host.live_sessions().await;
    for _ in 0..200 {
        if live == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
        live = host.live_sessions().await;
    }
    assert_eq!(live, 0, "every finalized session's actor has stopped");
}
