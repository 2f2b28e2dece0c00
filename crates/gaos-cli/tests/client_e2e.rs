//! `gaos-client` against the real `gaos serve` binary: a full
//! conformance/hilo match played by two `SessionClient`s (one per seat
//! token), with pending and resolved answers, exact retries, illegal
//! commands, chained attach receipts, finalize and its retry, and the
//! refusal of actions after finalize.

use gaos_client::{AttachRequest, ClientError, Cursor, FinalizeRequest, SessionClient, SubmitOptions};
use gaos_json::Value;
use gaos_runner::receipts::verify_receipt_chain;
use gaos_testkit::server::TestServer;

const GAOS: &str = env!("CARGO_BIN_EXE_gaos");

fn json(text: &str) -> Value {
    gaos_json::parse(text).expect("test JSON")
}

fn seat_client(server: &TestServer, token: &str, seat: &str) -> SessionClient {
    SessionClient::builder(format!("{}/", server.base_url))
        .token(token)
        .participant_id(seat)
        .build()
        .expect("a valid client")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hilo_match_through_session_clients() {
    let server = TestServer::start(GAOS);
    let operator = SessionClient::new(&server.base_url, &server.operator_token).expect("a valid client");
    let request = json(
        r#"{"game":"conformance/hilo","seed":7,"participantId":"alice","policy":{
            "evaluation":{"kind":"none"},"durability":{"attachable":true},
            "evidence":{"kind":"verification","attachReceipts":true},"publication":{"kind":"none"}}}"#,
    );
    let created = operator.create_session(&request).await.expect("create");
    let id = created.session_id.clone();
    assert_eq!(created.status, 201);
    assert_eq!(created.envelope.kind, "tick");
    assert_eq!((created.binding.participant_id.as_str(), created.binding.revision), ("alice", 0));
    assert_eq!(operator.binding(&id), Some(created.binding.clone()));
    let credentials = created.credentials.clone().expect("gaos-host hands out seat tokens");
    assert!(!format!("{credentials:?}").contains("gaos_seat_"), "Debug never prints a token");
    let alice = seat_client(&server, credentials.seat("alice").expect("alice"), "alice");
    let bob = seat_client(&server, credentials.seat("bob").expect("bob"), "bob");

    // A client with no binding refuses an explicit submission id (it cannot
    // know which window the id was first sent to).
    let refused = bob
        .submit_command(
            &id,
            "bob",
            json(r#"{"card":0}"#),
            SubmitOptions { submission_id: Some("x".into()), cursor: None },
        )
        .await;
    assert!(matches!(refused, Err(ClientError::InvalidArgument(_))), "{refused:?}");

    // Attach alice: the first receipt of the chain.
    let attach_alice = AttachRequest { participant_id: Some("alice".into()), ..AttachRequest::new("attach-alice") };
    let first = alice.attach(&id, &attach_alice).await.expect("attach alice");
    let first_receipt = first.receipt.clone().expect("verification policy issues receipts");
    assert_eq!((first_receipt.sequence, first_receipt.revision, first.binding.revision), (0, 0, 0));
    assert_eq!(first.binding.participant_id, "alice");
    let again = alice.attach(&id, &attach_alice).await.expect("attach retry");
    assert_eq!(again, first, "the same request at the same revision returns the identical receipt");

    // An illegal card is a typed 422 and changes nothing.
    let illegal = alice.act(&id, json(r#"{"card":99}"#)).await;
    match &illegal {
        Err(ClientError::IllegalActionRejected { code, .. }) => {
            assert_eq!(code.as_ref().map(gaos_runner::ErrorCode::as_str), Some("illegal_command"))
        }
        other => panic!("expected IllegalActionRejected, got {other:?}"),
    }
    assert_eq!(illegal.as_ref().err().and_then(ClientError::status), Some(422));
    let unchanged = alice.observe(&id).await.expect("observe");
    assert_eq!((unchanged.status, unchanged.envelope.kind.as_str(), unchanged.envelope.revision), (200, "tick", 0));

    // Round 0: alice is pending (202) until bob resolves the window (200).
    let submission =
        alice.prepare_submission(&id, "alice", json(r#"{"card":0}"#), SubmitOptions::default()).await.expect("prepare");
    assert_eq!(submission.submission_id.as_deref(), Some(format!("alice:{}:1", created.envelope.tick_id).as_str()));
    let pending = alice.send_submission(&submission).await.expect("alice acts");
    assert_eq!(pending.status, 202);
    assert!(pending.is_pending());
    assert_eq!(pending.envelope.awaiting_participants.as_deref(), Some(&["bob".to_owned()][..]));
    assert_eq!(pending.envelope.accepted_participant_id.as_deref(), Some("alice"));
    let retried = alice.send_submission(&submission).await.expect("exact retry");
    assert_eq!(retried, pending, "an exact retry returns the stored answer");

    let bob_submission = bob
        .prepare_submission(&id, "bob", json(r#"{"card":0}"#), SubmitOptions::default())
        .await
        .expect("bob reads the cursor first");
    let resolved = bob.send_submission(&bob_submission).await.expect("bob acts");
    assert_eq!((resolved.status, resolved.envelope.kind.as_str(), resolved.envelope.revision), (200, "tick", 1));
    assert_eq!(bob.binding(&id).map(|b| b.revision), Some(1), "the answer's cursor replaces the binding");
    assert_eq!(bob.send_submission(&bob_submission).await.expect("bob retry"), resolved);
    assert_eq!(alice.binding(&id).map(|b| b.revision), Some(0), "alice has not seen the new window yet");
    let stale = alice.act(&id, json(r#"{"card":0}"#)).await;
    assert_eq!(stale.as_ref().err().and_then(ClientError::code), Some(&gaos_runner::ErrorCode::StaleTick), "{stale:?}");
    assert_eq!(alice.observe(&id).await.expect("observe").envelope.revision, 1);

    // Attach bob after the game advanced: the chain links to alice's receipt.
    let attach_bob = AttachRequest { participant_id: Some("bob".into()), ..AttachRequest::new("attach-bob") };
    let second = bob.attach(&id, &attach_bob).await.expect("attach bob");
    let second_receipt = second.receipt.clone().expect("a receipt");
    assert_eq!((second_receipt.sequence, second_receipt.revision), (1, 1));
    assert_eq!(second_receipt.previous_receipt_digest.as_deref(), Some(first_receipt.receipt_digest.as_str()));
    let chain = [first_receipt.to_value().expect("JSON"), second_receipt.to_value().expect("JSON")];
    let verdict = verify_receipt_chain(&chain);
    assert!(verdict.valid, "{:?}", verdict.problems);
    let reused = alice.attach(&id, &attach_alice).await;
    assert_eq!(reused.err().and_then(|e| e.code().map(|c| c.to_string())).as_deref(), Some("attach_request_reused"));

    // Rounds 1 and 2 with default submission ids; the last one ends the game.
    let mut last = resolved;
    for round in 1..3u64 {
        let a = alice.act(&id, json(r#"{"card":0}"#)).await.expect("alice acts");
        assert_eq!((a.status, a.envelope.revision), (202, round));
        last = bob.act(&id, json(r#"{"card":0}"#)).await.expect("bob acts");
        assert_eq!((last.status, last.envelope.revision), (200, round + 1));
        alice.observe(&id).await.expect("alice catches up");
    }
    assert_eq!(last.envelope.tick.get("done"), Some(&Value::Bool(true)), "{:?}", last.envelope.tick);
    let finalization = last.envelope.extensions.as_ref().and_then(|e| e.get("gaos.session.finalization"));
    assert_eq!(finalization, Some(&json(r#"{"status":"terminal"}"#)));

    // Finalize, retry identically, and nothing acts afterwards.
    let result = alice.finalize(&id, &FinalizeRequest::default()).await.expect("finalize");
    assert_eq!(result.status, "finalized");
    assert!(result.replay.as_ref().is_some_and(|r| r.as_str().is_some()), "verification evidence carries the replay");
    assert!(result.artifacts.as_ref().is_some_and(|a| a.iter().any(|a| a.kind == "replay")));
    assert_eq!(bob.finalize(&id, &FinalizeRequest::default()).await.expect("finalize retry"), result);
    let other = FinalizeRequest { request_id: Some("another".into()), ..FinalizeRequest::default() };
    let conflict = bob.finalize(&id, &other).await;
    assert_eq!(conflict.err().and_then(|e| e.code().map(|c| c.to_string())).as_deref(), Some("finalize_conflict"));
    let after = alice.act(&id, json(r#"{"card":0}"#)).await;
    match after {
        Err(ClientError::Api { status: 409, code: Some(code), .. }) => assert_eq!(code, "session_finalized"),
        other => panic!("expected 409 session_finalized, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn counter_submissions_use_distinct_ids_and_explicit_cursors() {
    let server = TestServer::start(GAOS);
    let operator = SessionClient::new(&server.base_url, &server.operator_token).expect("a valid client");
    let created =
        operator.create_session(&json(r#"{"game":"conformance/counter","level":{"rounds":5}}"#)).await.expect("create");
    let id = created.session_id.clone();
    let credentials = created.credentials.clone().expect("tokens");
    let a = seat_client(&server, credentials.seat("a").expect("a"), "a");
    let cursor = Cursor { tick_id: created.envelope.tick_id.clone(), revision: 0 };

    // Two ids at the same cursor differ; the second is a conflicting intent.
    let first = a
        .prepare_submission(
            &id,
            "a",
            json(r#"{"n":1}"#),
            SubmitOptions { cursor: Some(cursor.clone()), ..Default::default() },
        )
        .await
        .expect("prepare");
    let second = a
        .prepare_submission(
            &id,
            "a",
            json(r#"{"n":1}"#),
            SubmitOptions { cursor: Some(cursor.clone()), ..Default::default() },
        )
        .await
        .expect("prepare");
    assert_eq!(first.submission_id.as_deref(), Some(format!("a:{}:0", cursor.tick_id).as_str()));
    assert_eq!(second.submission_id.as_deref(), Some(format!("a:{}:1", cursor.tick_id).as_str()));
    assert_eq!(a.send_submission(&first).await.expect("first").status, 202);
    let conflict = a.send_submission(&second).await;
    assert_eq!(conflict.err().and_then(|e| e.code().map(|c| c.to_string())).as_deref(), Some("conflicting_intent"));

    // An explicit id with an explicit cursor is an exact resend.
    let resend = SubmitOptions { submission_id: first.submission_id.clone(), cursor: Some(cursor) };
    let again = a.submit_command(&id, "a", json(r#"{"n":1}"#), resend).await.expect("resend");
    assert_eq!(again.status, 202);

    // The operator may not act for a seat; the answer is a typed 403.
    let forbidden = operator.submit_command(&id, "a", json(r#"{"n":1}"#), SubmitOptions::default()).await;
    assert_eq!(forbidden.err().and_then(|e| e.status()), Some(403));

    // Other routes of the host through the same client.
    let listed = operator.request_json(gaos_client::reqwest::Method::GET, "/v1/sessions", None).await.expect("list");
    assert_eq!(listed.status, 200);
    assert!(listed.body.get("sessions").and_then(Value::as_array).is_some_and(|s| s.len() == 1));
    let missing = operator.observe("no such/session").await;
    assert_eq!(missing.err().and_then(|e| e.status()), Some(403), "the operator has no seat to observe as");
}
