//! A signed session's `timeoutPolicy` (kernel spec §4.10: signed sessions
//! need the tick-bounded timeout form) on a real `gaos serve` with a test
//! clock: a create may carry `{"mode":"ticks","windowTicks":N}`; any other
//! form, turns cadence, or a policy on an unsigned session is `400
//! invalid_timeout_policy` naming the rule. The policy reaches the kernel
//! (the transcript header) and the replay header: an incomplete window waits
//! N ticks (one tick resolves nothing), then the missing seat is timed out
//! with the game's mapper at `cursor + N` (`timeoutPolicyRef
//! header.timeoutPolicy`), and the finalized replay verifies
//! `accepted-signed`.

use gaos_client::SessionClient;
use gaos_client::handle::RemoteSessionHandle;
use gaos_runner::signing::SeatSigningKey;
use gaos_runner::{AttachRequest, SessionHandle, SessionPolicy};
use gaos_testkit::http::*;
use gaos_testkit::server::{TempDir, TestServer};
use serde_json::{Value, json};
use signed_support::{GAOS, verify_text};

mod signed_support;

fn entry(key: &SeatSigningKey, seat: &str) -> Value {
    serde_json::from_str(&key.seat_key(seat, 1).to_string()).expect("a roster entry is JSON")
}

/// The race's tick period. The test clock moves on with real time too, so
/// the period is far longer than a loaded machine takes between two steps
/// (at the game's default 100 ms, a slow step let a second tick fire).
const TICK_MS: i64 = 2_000;

fn advance_clock(server: &TestServer, ms: i64) {
    let answer = post(&server.base_url, "/v1/admin/clock", Some(&server.operator_token), &json!({"advanceMs": ms}));
    assert_eq!(answer.status, 200, "{}", answer.text());
}

#[test]
fn a_signed_session_takes_the_tick_bounded_timeout_policy_and_times_out_at_its_deadline() {
    let server = TestServer::start_with(GAOS, &["--test-clock"]);
    let (base, operator) = (server.base_url.clone(), server.operator_token.clone());
    let dir = TempDir::new("gaos-signed-timeout-policy");
    let (p1, p2) = (SeatSigningKey::from_seed([1; 32]), SeatSigningKey::from_seed([2; 32]));
    let bounded = json!({"mode": "ticks", "windowTicks": 2});
    let race = |policy: Value| {
        json!({"game": "conformance/race", "levelId": "sprint", "seed": 3, "participantId": "p1",
            "cadence": {"mode": "ticks", "ticksPerSecond": 1000.0 / TICK_MS as f64},
            "seatKeys": [entry(&p1, "p1"), entry(&p2, "p2")],
            "signaturePolicy": {"scheme": "gaos.submission.ed25519.v1"}, "timeoutPolicy": policy})
    };

    // The host refuses what the kernel could not run, naming the rule.
    let refused = |body: Value, needle: &str| {
        let answer = post(&base, "/v1/sessions", Some(&operator), &body);
        assert_error(&answer, 400, "invalid_timeout_policy");
        let text = answer.text();
        assert!(text.contains(needle), "{needle:?} in {text}");
    };
    for policy in [
        json!({"mode": "turns"}),
        json!({"mode": "ticks", "windowTicks": 0}),
        json!("ticks"),
        json!({"mode": "ticks", "windowTicks": 2, "extra": 1}),
    ] {
        refused(race(policy), "signed sessions need the tick-bounded timeout form (kernel spec §4.10)");
    }
    let mut hilo = race(bounded.clone());
    hilo["game"] = json!("conformance/hilo");
    hilo["seats"] = json!(["p1", "p2"]);
    hilo.as_object_mut().expect("object").remove("levelId");
    hilo.as_object_mut().expect("object").remove("cadence");
    refused(hilo, "turns cadence");
    refused(json!({"game": "conformance/race", "timeoutPolicy": bounded}), "signed sessions");

    let session = create_session(&base, &operator, &race(bounded.clone()));
    let (header, _) = transcript(&base, &operator, &session);
    assert_eq!(header["timeoutPolicy"], bounded, "the policy reaches the kernel: {header}");

    // p1 signs every move through the Rust client; p2 never moves.
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let windows = runtime.block_on(async {
        let client =
            SessionClient::builder(&base).token(session.token("p1")).participant_id("p1").build().expect("client");
        let handle =
            RemoteSessionHandle::attach(client, &session.id, &AttachRequest::new("p1"), &SessionPolicy::host_default())
                .await
                .expect("attach p1")
                .with_signing_key(p1);
        let mut windows = 0;
        loop {
            let observation = handle.observe().await.expect("observe");
            if observation.is_done() {
                break windows;
            }
            assert!(windows < 10, "the race did not end");
            let revision = observation.revision();
            let command = observation.legal_actions().first().cloned().expect("p1 may boost");
            handle.act(command).await.expect("p1's signed move");
            advance_clock(&server, TICK_MS);
            let waiting = tick(&base, &session, session.token("p2"));
            assert_eq!(waiting["revision"], json!(revision), "one tick before the deadline resolves nothing");
            advance_clock(&server, TICK_MS);
            let moved = tick(&base, &session, session.token("p2"));
            assert_eq!(moved["revision"], json!(revision + 1), "at the deadline p2 is timed out: {moved}");
            windows += 1;
        }
    });
    assert_eq!(windows, 3, "p1 boosts to 6 while p2 coasts (sprint, length 5)");

    let finalized = post(&base, &session.path("finalize"), Some(session.token("p1")), &json!({"requestId": "f"}));
    assert_eq!(finalized.status, 200, "{}", finalized.text());
    let replay = get(&base, &session.path("replay"), Some(session.token("p1"))).text();
    let lines: Vec<Value> = replay.lines().map(|l| serde_json::from_str(l).expect("JSON line")).collect();
    assert_eq!(lines[0]["timeoutPolicy"], bounded, "the policy reaches the replay header");
    let timeouts: Vec<&Value> = lines.iter().filter(|r| r["kind"] == json!("timeout")).collect();
    assert_eq!(timeouts.len(), 3);
    for (i, timeout) in timeouts.iter().enumerate() {
        assert_eq!(timeout["timeoutPolicyRef"], json!("header.timeoutPolicy"), "{timeout}");
        assert_eq!(timeout["participantId"], json!("p2"));
        assert_eq!(timeout["tick"], json!(i as u64 + 2), "tick = windowRef + windowTicks: {timeout}");
    }
    let verdict = verify_text(dir.path(), "deadline", &replay);
    assert_eq!(verdict["verdict"], json!("accepted-signed"), "{verdict}");
}
