//! Seat keys registered at attach (issue 30, item 3 "or a seat registers its
//! key at attach, before its first move"), on a real `gaos serve`: a create
//! names alice's key and lets bob register his at attach
//! (`seatKeysAtAttach`). Until bob has, nobody moves (`409
//! seat_keys_pending`, nothing persisted) and the envelope says whose key is
//! awaited; a key fixed at create or registered before cannot be replaced
//! (`409 seat_key_fixed`, nothing changed); bob registers through the Rust
//! client (`AttachRequest::registering_key`); the registration survives a
//! host restart; both seats then play signed and the finalized replay
//! carries the final roster and verifies `accepted-signed`.

use gaos_runner::AttachRequest;
use gaos_runner::signing::SeatSigningKey;
use gaos_testkit::http::*;
use gaos_testkit::server::{TempDir, TestServer};
use serde_json::{Value, json};
use signed_support::{GAOS, play_signed, verify_text};

mod signed_support;

const POLICY: &str = "gaos.submission.ed25519.v1";

fn key(byte: u8) -> SeatSigningKey {
    SeatSigningKey::from_seed([byte; 32])
}

/// A roster entry as the tests send it.
fn entry(key: &SeatSigningKey, seat: &str) -> Value {
    serde_json::from_str(&key.seat_key(seat, 1).to_string()).expect("a roster entry is JSON")
}

/// The roster hash the kernel derives for `entries`.
fn roster_hash(entries: &[Value]) -> String {
    let value = gaos_json::parse(&Value::Array(entries.to_vec()).to_string()).expect("JSON");
    let roster = gaos_kernel::signing::Roster::from_value(&value).expect("a roster");
    gaos_kernel::signing::to_base64(roster.hash())
}

fn attach(base: &str, session: &Session, seat: &str, request_id: &str, seat_key: Option<Value>) -> Response {
    let mut body = json!({"requestId": request_id});
    if let Some(seat_key) = seat_key {
        body["seatKey"] = seat_key;
    }
    post(base, &session.path("attach"), Some(session.token(seat)), &body)
}

#[test]
fn a_seat_registers_its_key_at_attach_before_anyone_moves_and_the_replay_is_accepted_signed() {
    let mut server = TestServer::start(GAOS);
    let dir = TempDir::new("gaos-signed-attach");
    let (alice, bob) = (key(1), key(2));
    let request = json!({"game": "conformance/hilo", "seed": 11, "participantId": "alice",
        "seatKeys": [entry(&alice, "alice")], "seatKeysAtAttach": ["bob"], "signaturePolicy": {"scheme": POLICY}});
    let session = create_session(&server.base_url, &server.operator_token, &request);
    let base = server.base_url.clone();

    // Until bob's key is known nobody moves; the envelope says whose key is awaited.
    let envelope = tick(&base, &session, session.token("alice"));
    assert_eq!(
        envelope["extensions"]["gaos.session.signing"],
        json!({"scheme": POLICY, "awaitingSeatKeys": ["bob"]}),
        "{envelope}"
    );
    let before = transcript(&base, &server.operator_token, &session);
    let early = act(&base, &session, "alice", &submission(&envelope, "alice", "early", json!({"card": 0})));
    assert_error(&early, 409, "seat_keys_pending");
    assert!(early.text().contains("bob"), "the refusal names the awaited seat: {}", early.text());

    // A key fixed at create is not replaced; the same key is a no-op; a
    // seat registers only its own key; a malformed entry is refused.
    assert_error(&attach(&base, &session, "alice", "a-1", Some(entry(&key(9), "alice"))), 409, "seat_key_fixed");
    assert_eq!(attach(&base, &session, "alice", "a-2", Some(entry(&alice, "alice"))).status, 200);
    assert_error(&attach(&base, &session, "bob", "b-0", Some(entry(&bob, "alice"))), 400, "invalid_request");
    let mut malformed = entry(&bob, "bob");
    malformed["alg"] = json!("RSA");
    assert_error(&attach(&base, &session, "bob", "b-00", Some(malformed)), 400, "invalid_request");
    assert_eq!(
        tick(&base, &session, session.token("bob"))["extensions"]["gaos.session.signing"]["awaitingSeatKeys"],
        json!(["bob"])
    );
    let (header, events) = transcript(&base, &server.operator_token, &session);
    assert_eq!(accepted_identities(&events), accepted_identities(&before.1), "no move was taken");
    assert!(header.get("seatKeys").is_none(), "the kernel is not signed before the roster is complete: {header}");

    // bob registers through the Rust client: the roster is complete.
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        let client = gaos_client::SessionClient::builder(&base)
            .token(session.token("bob"))
            .participant_id("bob")
            .build()
            .expect("client");
        let registering = AttachRequest::new("bob-register").registering_key("bob", &bob);
        gaos_client::handle::RemoteSessionHandle::attach(
            client,
            &session.id,
            &registering,
            &gaos_runner::SessionPolicy::host_default(),
        )
        .await
        .expect("bob registers his key at attach");
    });
    let roster = [entry(&alice, "alice"), entry(&bob, "bob")];
    let signing = &tick(&base, &session, session.token("alice"))["extensions"]["gaos.session.signing"];
    assert_eq!(signing["rosterHash"], json!(roster_hash(&roster)), "{signing}");
    assert_eq!(signing["submissions"], json!(0));

    // The registration is durable, and fixed: another key for bob changes nothing.
    server.restart();
    let base = server.base_url.clone();
    let (header, _) = transcript(&base, &server.operator_token, &session);
    assert_eq!(header["seatKeys"], json!(roster), "the header carries the final roster: {header}");
    let other = attach(&base, &session, "bob", "b-2", Some(entry(&key(8), "bob")));
    assert_error(&other, 409, "seat_key_fixed");
    let (after, _) = transcript(&base, &server.operator_token, &session);
    assert_eq!(after, header, "a refused registration changes nothing");

    // Both seats play signed through the Rust client (bob's attach names his
    // key again: the same key is a no-op).
    let again = AttachRequest::new("bob-play").registering_key("bob", &bob);
    let alice_attach = AttachRequest::new("alice-play");
    let (alice_moves, bob_moves) = runtime.block_on(async {
        let alice_play = play_signed(&base, &session.id, "alice", session.token("alice"), alice, &alice_attach);
        let bob_play = play_signed(&base, &session.id, "bob", session.token("bob"), bob, &again);
        tokio::join!(alice_play, bob_play)
    });
    assert!(alice_moves > 0 && bob_moves > 0);

    let finalized = post(&base, &session.path("finalize"), Some(session.token("alice")), &json!({"requestId": "f"}));
    assert_eq!(finalized.status, 200, "{}", finalized.text());
    let report = &finalized.json()["extensions"]["gaos.session.signatures"];
    assert_eq!(report["state"], json!("signed"), "{report}");
    for seat in report["seats"].as_array().expect("seats") {
        assert_eq!(seat["signed"], json!(true), "{seat}");
    }
    let replay = get(&base, &session.path("replay"), Some(session.token("bob"))).text();
    let replay_header: Value = serde_json::from_str(replay.lines().next().expect("header")).expect("JSON");
    assert_eq!(replay_header["seatKeys"], json!(roster));
    let verdict = verify_text(dir.path(), "registered", &replay);
    assert_eq!(verdict["verdict"], json!("accepted-signed"), "{verdict}");
}

#[test]
fn creates_and_attaches_that_misuse_seat_keys_at_attach_are_refused() {
    let server = TestServer::start(GAOS);
    let (base, operator) = (server.base_url.clone(), server.operator_token.clone());
    let alice = entry(&key(1), "alice");
    let refused = |body: Value, needle: &str| {
        let response = post(&base, "/v1/sessions", Some(&operator), &body);
        assert_error(&response, 400, "invalid_request");
        assert!(response.text().contains(needle), "{needle:?} in {}", response.text());
    };
    let hilo = |extra: Value| {
        let mut body =
            json!({"game": "conformance/hilo", "seats": ["alice", "bob"], "signaturePolicy": {"scheme": POLICY}});
        for (k, v) in extra.as_object().expect("fields") {
            body[k] = v.clone();
        }
        body
    };
    refused(hilo(json!({"seatKeysAtAttach": ["carol"]})), "not a seat");
    refused(hilo(json!({"seatKeysAtAttach": ["bob", "bob"]})), "twice");
    refused(hilo(json!({"seatKeysAtAttach": []})), "non-empty");
    refused(hilo(json!({"seatKeys": [alice], "seatKeysAtAttach": ["alice", "bob"]})), "exactly once");
    refused(hilo(json!({"seatKeys": [alice]})), "exactly once");
    let mut unsigned = hilo(json!({"seatKeysAtAttach": ["bob"]}));
    unsigned.as_object_mut().expect("object").remove("signaturePolicy");
    refused(unsigned, "signaturePolicy");

    // Every seat may register at attach; an unsigned session takes no seat key.
    let all = create_session(&base, &operator, &hilo(json!({"seatKeys": [], "seatKeysAtAttach": ["alice", "bob"]})));
    let signing = &tick(&base, &all, all.token("alice"))["extensions"]["gaos.session.signing"];
    assert_eq!(signing["awaitingSeatKeys"], json!(["alice", "bob"]));
    let plain = create_session(&base, &operator, &json!({"game": "conformance/hilo", "seats": ["alice", "bob"]}));
    let answer = attach(&base, &plain, "alice", "a", Some(alice));
    assert_error(&answer, 400, "invalid_request");
    assert!(answer.text().contains("not signed"), "{}", answer.text());
}

/// `gaos mcp --seat-key` (its `RemoteSeat`, which the stdio and HTTP MCP
/// servers attach with): a seat the session awaits registers the key it
/// signs with at attach; attaching again (the key is fixed by then) sends
/// none and succeeds; a seat whose key the create fixed sends none either.
#[test]
fn the_mcp_seat_registers_its_signing_key_when_the_session_awaits_it() {
    use gaos_mcp::SeatSession;
    use gaos_mcp::remote::{DEFAULT_LEASE_MS, LeaseMode, RemoteSeat, SeatOptions};
    let server = TestServer::start(GAOS);
    let base = server.base_url.clone();
    let (alice, bob) = (key(1), key(2));
    let request = json!({"game": "conformance/hilo", "seed": 3, "participantId": "alice",
        "seatKeys": [entry(&alice, "alice")], "seatKeysAtAttach": ["bob"], "signaturePolicy": {"scheme": POLICY}});
    let session = create_session(&base, &server.operator_token, &request);
    let options = |seat: &str, key: &SeatSigningKey| SeatOptions {
        host_url: base.clone(),
        session_id: session.id.clone(),
        seat: seat.to_owned(),
        seat_token: session.token(seat).to_owned(),
        lease: LeaseMode::Claim { duration_ms: DEFAULT_LEASE_MS },
        keep_alive: false,
        signing_key: Some(key.clone()),
    };
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        let attached = RemoteSeat::attach(options("bob", &bob)).await.expect("bob's MCP seat attaches");
        attached.release().await.expect("bob's MCP seat leaves");
    });
    let signing = &tick(&base, &session, session.token("alice"))["extensions"]["gaos.session.signing"];
    assert!(signing.get("awaitingSeatKeys").is_none(), "the roster is complete: {signing}");
    let roster = [entry(&alice, "alice"), entry(&bob, "bob")];
    assert_eq!(signing["rosterHash"], json!(roster_hash(&roster)), "bob's key is the one registered");
    let (header, _) = transcript(&base, &server.operator_token, &session);
    assert_eq!(header["seatKeys"], json!(roster));

    // Attaching again, and alice (fixed at create), send no key and succeed.
    runtime.block_on(async {
        let again = RemoteSeat::attach(options("bob", &bob)).await.expect("bob attaches again");
        again.release().await.expect("bob leaves again");
        let alice_seat = RemoteSeat::attach(options("alice", &alice)).await.expect("alice's MCP seat attaches");
        alice_seat.release().await.expect("alice leaves");
    });
    let (after, _) = transcript(&base, &server.operator_token, &session);
    assert_eq!(after["seatKeys"], json!(roster), "nothing else was registered");
}
