//! The seat tools against a real host (over its HTTP API, as both MCP
//! transports drive it): a full hilo match with the information boundary
//! checked on every result, a lease lapse recovered by `act`, pause and
//! resume, and bad input that is a tool error and changes nothing.

mod support;

use gaos_mcp::remote::LeaseMode;
use gaos_mcp::stdio::is_permanent_attach_failure;
use support::*;

const CLAIM: LeaseMode = LeaseMode::Claim { duration_ms: 60_000 };

/// A hilo session whose creator seat (alice) holds a claim (`"lease": {}`)
/// that the tests hand over to alice's server.
fn hilo(seed: u32, hand_size: u32) -> String {
    format!(
        r#"{{"game":"conformance/hilo","seed":{seed},"level":{{"handSize":{hand_size},"maxCard":1000000}},"lease":{{}}}}"#
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hilo_match_through_the_tools_keeps_each_hand_hidden_and_survives_a_lapse() {
    let test = start_host().await;
    let created = test.create(&hilo(7, 4)).await;
    let id = created.session_id.clone();
    // alice drives under the creator's claim (handed over); bob takes his own.
    let alice = test.attach(&created, "alice", LeaseMode::Adopt { lease_token: created.creator_lease() }).await;
    let bob = test.attach(&created, "bob", CLAIM).await;

    let alice_status = ok(call(alice.as_ref(), "status", "").await);
    assert_eq!(field(&alice_status, &["lease", "holderId"]).as_str(), Some("creator"), "{}", alice_status.text);
    assert_eq!(field(&alice_status, &["lease", "state"]).as_str(), Some("active"));
    let bob_status = ok(call(bob.as_ref(), "status", "").await);
    let bob_epoch = field(&bob_status, &["lease", "epoch"]).as_u64().expect("an epoch");
    let alice_epoch = field(&alice_status, &["lease", "epoch"]).as_u64().expect("an epoch");

    let mut alice_hand = hand(&ok(call(alice.as_ref(), "observe", "").await));
    let mut bob_hand = hand(&ok(call(bob.as_ref(), "observe", "").await));
    assert_eq!((alice_hand.len(), bob_hand.len()), (4, 4));
    let mut all: Vec<u64> = alice_hand.iter().chain(&bob_hand).copied().collect();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), 8, "the boundary check needs distinct cards; pick another seed");

    for round in 0..4u64 {
        let seen_by_alice = ok(call(alice.as_ref(), "observe", "").await);
        assert_eq!(field(&seen_by_alice, &["turn"]).as_str(), Some("yours"));
        assert_eq!(field(&seen_by_alice, &["view", "round"]).as_u64(), Some(round));
        assert!(seen_by_alice.text.contains("Legal: card 0"), "{}", seen_by_alice.text);
        assert_hides(&seen_by_alice, &bob_hand, "bob");
        alice_hand = hand(&seen_by_alice);

        if round == 1 {
            // Both seats think for longer than their leases: the claims lapse.
            test.advance_clock(400_000).await;
            wait_for_lease_state(alice.as_ref(), "lapsed").await;
            wait_for_lease_state(bob.as_ref(), "lapsed").await;
        }

        let submitted = ok(call(alice.as_ref(), "act", r#"{"index":0}"#).await);
        assert_eq!(field(&submitted, &["kind"]).as_str(), Some("pending"), "{}", submitted.text);
        assert!(submitted.text.contains("waiting for bob"), "{}", submitted.text);
        assert_hides(&submitted, &bob_hand, "bob");

        let seen_by_bob = ok(call(bob.as_ref(), "observe", "").await);
        assert_hides(&seen_by_bob, &alice_hand, "alice");
        let legal = field(&seen_by_bob, &["legalActions"]).as_array().expect("legal actions").clone();
        let last = gaos_json::canonical_json(legal.last().expect("bob may play"));
        let resolved = ok(call(bob.as_ref(), "act", &format!(r#"{{"command":{last}}}"#)).await);
        assert_eq!(field(&resolved, &["kind"]).as_str(), Some("tick"), "{}", resolved.text);
        assert_eq!(field(&resolved, &["view", "round"]).as_u64(), Some(round + 1));
        assert_hides(&resolved, &alice_hand, "alice");
        bob_hand = hand(&resolved);

        if round == 1 {
            // act renewed the same claims (rule 8): same epochs, active again.
            for (seat, epoch) in [(&alice, alice_epoch), (&bob, bob_epoch)] {
                let status = ok(call(seat.as_ref(), "status", "").await);
                assert_eq!(field(&status, &["lease", "state"]).as_str(), Some("active"), "{}", status.text);
                assert_eq!(field(&status, &["lease", "epoch"]).as_u64(), Some(epoch), "{}", status.text);
            }
        }
    }

    // The recovery is observable: a lapse and a renewal per seat.
    let records = test.lease_records(&id).await;
    for seat in ["alice", "bob"] {
        for event in ["lease_expired", "lease_renewed"] {
            assert!(
                records
                    .iter()
                    .any(|r| at(r, &["event"]).as_str() == Some(event) && at(r, &["seat"]).as_str() == Some(seat)),
                "no {event} for {seat} in {records:?}"
            );
        }
    }

    let over = ok(call(alice.as_ref(), "observe", "").await);
    assert_eq!(field(&over, &["turn"]).as_str(), Some("over"));
    assert!(over.text.contains("The game is over."), "{}", over.text);
    let finalized_by_alice = ok(call(alice.as_ref(), "finalize", "").await);
    let finalized_by_bob = ok(call(bob.as_ref(), "finalize", "").await);
    assert_eq!(finalized_by_alice.structured, finalized_by_bob.structured, "one result, whoever finalizes");
    assert_eq!(field(&finalized_by_alice, &["status"]).as_str(), Some("finalized"));
    let replay = ok(call(alice.as_ref(), "replay", "").await);
    let text = field(&replay, &["replay"]).as_str().expect("the replay text");
    assert!(text.lines().next().is_some_and(|header| header.contains("gaos.replay")), "{text}");
    assert_eq!(field(&replay, &["lines"]).as_u64(), Some(text.lines().count() as u64));
    // The final view stays readable after finalize.
    let after = ok(call(bob.as_ref(), "observe", "").await);
    assert_eq!(
        (field(&after, &["turn"]).as_str(), field(&after, &["handle"]).as_str()),
        (Some("over"), Some("finalized"))
    );
}

/// A tool error with `code` that left the session exactly as it was.
async fn refused(test: &TestHost, id: &str, seat: &dyn gaos_mcp::SeatSession, tool: &str, args: &str, code: &str) {
    let events = test.event_count(id).await;
    let before = ok(call(seat, "observe", "").await);
    let output = call(seat, tool, args).await;
    assert!(output.is_error, "{tool} {args} should fail with {code}:\n{}", output.text);
    assert_eq!(output.error_code(), Some(code), "{tool} {args}:\n{}", output.text);
    assert!(output.text.starts_with(&format!("error [{code}]: ")), "{}", output.text);
    assert!(!field(&output, &["error"]).as_str().unwrap_or_default().is_empty());
    assert_eq!(test.event_count(id).await, events, "{tool} {args} changed the transcript");
    let after = ok(call(seat, "observe", "").await);
    assert_eq!(before.structured, after.structured, "{tool} {args} changed the seat's view");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_tool_input_is_a_tool_error_that_changes_nothing() {
    let test = start_host().await;
    let created = test.create(&hilo(11, 1)).await;
    let id = created.session_id.clone();
    let alice = test.attach(&created, "alice", LeaseMode::Adopt { lease_token: created.creator_lease() }).await;
    let bob = test.attach(&created, "bob", CLAIM).await;
    let a = alice.as_ref();

    // Unknown actions and wrong parameter types: the game refuses them.
    refused(&test, &id, a, "act", r#"{"command":{"fold":true}}"#, "illegal_command").await;
    refused(&test, &id, a, "act", r#"{"command":{"card":"two"}}"#, "illegal_command").await;
    refused(&test, &id, a, "act", r#"{"command":{"card":99}}"#, "illegal_command").await;
    refused(&test, &id, a, "act", r#"{"command":"card 0"}"#, "illegal_command").await;
    // Malformed tool input: refused before anything is sent.
    for args in [
        r#"{"index":5}"#,
        r#"{"index":-1}"#,
        r#"{"index":"0"}"#,
        r#"{"index":0.5}"#,
        "{}",
        r#"{"command":{"card":0},"index":0}"#,
        r#"{"command":null}"#,
        r#"{"card":0}"#,
    ] {
        refused(&test, &id, a, "act", args, "invalid_argument").await;
    }
    refused(&test, &id, a, "observe", r#"{"waitMs":600000}"#, "invalid_argument").await;
    refused(&test, &id, a, "observe", r#"{"waitMs":"soon"}"#, "invalid_argument").await;
    refused(&test, &id, a, "pause", r#"{"reason":5}"#, "invalid_argument").await;
    refused(&test, &id, a, "status", r#"{"verbose":true}"#, "invalid_argument").await;
    refused(&test, &id, a, "finalize", "", "not_terminal").await;
    refused(&test, &id, a, "replay", "", "not_terminal").await;
    let unknown = call(a, "shuffle", "").await;
    assert_eq!(unknown.error_code(), Some("unknown_tool"));

    // Acting out of turn: a second command in the same window.
    ok(call(a, "act", r#"{"index":0}"#).await);
    refused(&test, &id, a, "act", r#"{"command":{"card":0}}"#, "conflicting_intent").await;
    refused(&test, &id, a, "act", r#"{"index":0}"#, "no_legal_actions").await;
    let error = call(a, "act", r#"{"command":{"card":0}}"#).await;
    assert!(error.text.contains("Current state:"), "a refused act shows the state to decide again:\n{}", error.text);
    assert_eq!(field(&error, &["observation", "turn"]).as_str(), Some("waiting"));

    // bob's move ends the one-round game.
    ok(call(bob.as_ref(), "act", r#"{"index":0}"#).await);
    let over = ok(call(a, "observe", "").await);
    assert_eq!(field(&over, &["turn"]).as_str(), Some("over"));
    refused(&test, &id, a, "act", r#"{"index":0}"#, "no_legal_actions").await;
    refused(&test, &id, a, "act", r#"{"command":{"card":0}}"#, "game_over").await;

    // Acting after finalize.
    ok(call(a, "finalize", "").await);
    let events = test.event_count(&id).await;
    let late = call(a, "act", r#"{"command":{"card":0}}"#).await;
    assert_eq!(late.error_code(), Some("session_finalized"), "{}", late.text);
    let late_bob = call(bob.as_ref(), "act", r#"{"command":{"card":0}}"#).await;
    assert!(late_bob.is_error, "{}", late_bob.text);
    assert_eq!(test.event_count(&id).await, events);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acting_out_of_turn_in_a_sequential_game_is_refused() {
    let test = start_host().await;
    let created = test
        .create(r#"{"game":"conformance/tictactoe","participantId":"x","level":{"board":".........","first":"x"},"lease":{}}"#)
        .await;
    let id = created.session_id.clone();
    let x = test.attach(&created, "x", LeaseMode::Adopt { lease_token: created.creator_lease() }).await;
    let o = test.attach(&created, "o", CLAIM).await;
    let seen = ok(call(o.as_ref(), "observe", "").await);
    assert_eq!(field(&seen, &["turn"]).as_str(), Some("waiting"), "{}", seen.text);
    assert!(seen.text.contains("Waiting for x to move."), "{}", seen.text);
    refused(&test, &id, o.as_ref(), "act", r#"{"command":{"cell":4}}"#, "unknown_participant").await;
    ok(call(x.as_ref(), "act", r#"{"command":{"cell":4}}"#).await);
    // The refused move left o's turn to come intact.
    let now = ok(call(o.as_ref(), "observe", "").await);
    assert_eq!(field(&now, &["turn"]).as_str(), Some("yours"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pause_is_free_and_resume_needs_the_claim() {
    let test = start_host().await;
    let created = test.create(&hilo(5, 3)).await;
    let alice = test.attach(&created, "alice", LeaseMode::Adopt { lease_token: created.creator_lease() }).await;
    let a = alice.as_ref();
    let paused = ok(call(a, "pause", r#"{"reason":"the view looks odd"}"#).await);
    assert_eq!(field(&paused, &["lease", "state"]).as_str(), Some("paused"), "{}", paused.text);
    assert!(paused.text.contains("paused: the view looks odd"), "{}", paused.text);
    refused(&test, &created.session_id, a, "act", r#"{"index":0}"#, "session_paused").await;
    ok(call(a, "resume", "").await);
    ok(call(a, "act", r#"{"index":0}"#).await);

    // A pause survives a lapse and its renewal; resume renews, then resumes.
    ok(call(a, "pause", "").await);
    test.advance_clock(400_000).await;
    wait_for_lease_state(a, "lapsed").await;
    ok(call(a, "pause", r#"{"reason":"again"}"#).await); // pausing stays free
    let resumed = ok(call(a, "resume", "").await);
    assert_eq!(field(&resumed, &["lease", "state"]).as_str(), Some("active"), "{}", resumed.text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seat_with_a_live_claim_is_not_taken_twice() {
    let test = start_host().await;
    let created = test.create(&hilo(3, 2)).await;
    let _bob = test.attach(&created, "bob", CLAIM).await;
    let second = test.try_attach(&created, "bob", CLAIM).await.expect_err("one writer per seat");
    assert_eq!(second.code(), Some(&gaos_session::ErrorCode::WriterConflict), "{second}");
    assert!(!is_permanent_attach_failure(&second), "a live claim may lapse: retried on the next call");
    // The creator's claim blocks a new claim on alice until it lapses...
    let blocked = test.try_attach(&created, "alice", CLAIM).await.expect_err("the creator holds alice");
    assert!(blocked.to_string().contains("creator"), "the refusal names the holder: {blocked}");
    // ...and a token that is not the seat's claim is refused for good.
    let bogus = LeaseMode::Adopt { lease_token: "gaos_lease_not_a_claim".into() };
    let refused = test.try_attach(&created, "alice", bogus).await.expect_err("not alice's claim");
    assert!(is_permanent_attach_failure(&refused), "{refused}");
}

#[test]
#[should_panic(expected = "hidden hand")]
fn the_boundary_check_catches_a_shown_card() {
    let mut structured = gaos_json::Map::new();
    structured.insert("view".into(), json(r#"{"hand":[123456],"history":[{"alice":7,"bob":654321}]}"#));
    let output = gaos_mcp::ToolOutput { text: "Your hand: 123456".into(), structured, is_error: false };
    // 654321 was played (public), 1722123456789 is a timestamp: neither counts.
    assert_hides(&output, &[654321], "bob");
    assert!(!mentions_number("expiresAt 1722123456789", 123456));
    assert_hides(&output, &[123456], "bob");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn observe_waits_for_the_seats_move_within_its_bound() {
    let test = start_host().await;
    let created = test.create(&hilo(9, 2)).await;
    let alice = test.attach(&created, "alice", LeaseMode::Adopt { lease_token: created.creator_lease() }).await;
    let bob = test.attach(&created, "bob", CLAIM).await;
    ok(call(alice.as_ref(), "act", r#"{"index":0}"#).await);

    // Nobody moves: the wait ends at its bound, still waiting.
    let started = std::time::Instant::now();
    let still = ok(call(alice.as_ref(), "observe", r#"{"waitMs":150}"#).await);
    assert_eq!(field(&still, &["turn"]).as_str(), Some("waiting"), "{}", still.text);
    assert!(started.elapsed() >= std::time::Duration::from_millis(150));

    // bob moves while alice waits: the wait ends with alice's move.
    let mover = tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        ok(call(bob.as_ref(), "act", r#"{"index":0}"#).await)
    });
    let started = std::time::Instant::now();
    let turn = ok(call(alice.as_ref(), "observe", r#"{"waitMs":30000}"#).await);
    assert_eq!(field(&turn, &["turn"]).as_str(), Some("yours"), "{}", turn.text);
    assert_eq!(field(&turn, &["view", "round"]).as_u64(), Some(1));
    assert!(started.elapsed() < std::time::Duration::from_secs(10), "the wait ended on the change");
    mover.await.expect("bob moved");
}

/// The agent-CLI recipe tools (lifecycle.md §6) on seats that took their own
/// claims right after a create that asked for none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recipe_tools_act_with_an_action_refuse_reset_and_list_the_seats_decisions() {
    let test = start_host().await;
    let created = test.create(r#"{"game":"conformance/hilo","seed":4,"level":{"handSize":1,"maxCard":1000000}}"#).await;
    let id = created.session_id.clone();
    let alice = test.attach(&created, "alice", CLAIM).await;
    let bob = test.attach(&created, "bob", CLAIM).await;
    let events = test.event_count(&id).await;
    for (arguments, code) in [
        (r#"{"action":5}"#, "invalid_argument"),
        (r#"{"action":{"card":0},"command":{"card":0}}"#, "invalid_argument"),
        (r#"{"seed":4294967296}"#, "invalid_argument"),
        (r#"{}"#, "reset_not_allowed"),
        (r#"{"seed":7}"#, "reset_not_allowed"),
    ] {
        let tool = if arguments.contains("action") { "act" } else { "reset" };
        let refused = call(alice.as_ref(), tool, arguments).await;
        assert_eq!(refused.error_code(), Some(code), "{tool} {arguments}: {}", refused.text);
    }
    assert_eq!(test.event_count(&id).await, events, "refusals change nothing");
    let refused = call(alice.as_ref(), "act", r#"{"action":{"card":9}}"#).await;
    assert_eq!(refused.error_code(), Some("illegal_command"), "{}", refused.text);
    ok(call(alice.as_ref(), "act", r#"{"action":{"card":0}}"#).await);
    ok(call(bob.as_ref(), "act", r#"{"action":{"card":0}}"#).await);

    let transcript = ok(call(alice.as_ref(), "transcript", "{}").await);
    let decisions = field(&transcript, &["decisions"]).as_array().expect("decisions");
    let summary: Vec<(bool, String)> = decisions
        .iter()
        .map(|d| {
            let accepted = d.get("accepted").and_then(gaos_json::Value::as_bool).unwrap_or(false);
            (accepted, d.get("action").map(gaos_json::canonical_json).unwrap_or_default())
        })
        .collect();
    let expected = [(false, r#"{"card":9}"#.to_owned()), (true, r#"{"card":0}"#.to_owned())];
    assert_eq!(summary, expected, "{}", transcript.text);
    assert_eq!(decisions[0].get("code"), Some(&json(r#""illegal_command""#)));
    assert_eq!(field(&transcript, &["gameOver"]), &json("true"), "{}", transcript.text);
    assert!(transcript.text.contains("2 decisions"), "{}", transcript.text);
    let bobs = ok(call(bob.as_ref(), "transcript", "").await);
    assert_eq!(field(&bobs, &["decisions"]).as_array().map(Vec::len), Some(1), "only bob's own decisions");
}

/// A seat whose finalize meets a result another client fixed with its own
/// request id answers that stored result (`GET /result`), not a conflict.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finalize_answers_the_result_another_client_fixed() {
    let test = start_host().await;
    let created = test.create(r#"{"game":"conformance/hilo","seed":8,"level":{"handSize":1,"maxCard":1000000}}"#).await;
    let id = created.session_id.clone();
    let alice = test.attach(&created, "alice", CLAIM).await;
    let bob = test.attach(&created, "bob", CLAIM).await;
    ok(call(alice.as_ref(), "act", r#"{"index":0}"#).await);
    ok(call(bob.as_ref(), "act", r#"{"index":0}"#).await);
    let caller = gaos_host::auth::Caller::Seat { session_id: id.clone(), seat: "bob".into() };
    let request = gaos_host::requests::FinalizeRequest::from_value(json(r#"{"requestId":"bobs-own-client"}"#));
    let fixed = test.host.finalize(&caller, &id, request.expect("a request")).await.expect("finalize");
    assert_eq!(fixed.status, 200);
    let answered = ok(call(alice.as_ref(), "finalize", "").await);
    let stored = json(&fixed.body);
    assert_eq!(field(&answered, &["outcome"]), at(&stored, &["outcome"]), "{}", answered.text);
    assert_eq!(
        field(&answered, &["extensions", "gaos.session.request"]).as_str(),
        Some("bobs-own-client"),
        "the result bob's client fixed: {}",
        answered.text
    );
}
