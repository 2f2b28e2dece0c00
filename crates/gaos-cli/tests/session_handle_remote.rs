//! RFC-018 release-gate tests over HTTP: `RemoteSessionHandle` (gaos-client)
//! against a real `gaos serve`, driven by `run_session`, and `gaos play` in
//! process and on a host. Test names carry the §12 gate they prove. The
//! in-process lane of the same gates is `crates/gaos-host/tests/session_handle.rs`.

use std::process::Command;
use std::time::Duration;

use gaos_client::SessionClient;
use gaos_client::handle::{RemoteCreated, RemoteSessionHandle};
use gaos_host::HostOptions;
use gaos_host::handle::{InProcessSessionHandle, open_local_host};
use gaos_json::{Value, canonical_json};
use gaos_runner::drivers::{RandomDriver, ScriptedDriver};
use gaos_runner::receipts::verify_typed_receipt_chain;
use gaos_runner::{
    AgentDriver, AttachRequest, CancellationToken, ControllerKind, FinalizeMode, FinalizeRequest, HandleState,
    RunError, RunOptions, RunOutcome, RunPolicy, SessionControllerIdentity, SessionError, SessionHandle, SessionPolicy,
    SessionResult, run_session,
};
use gaos_testkit::http;
use gaos_testkit::server::{TempDir, TestServer};

const GAOS: &str = env!("CARGO_BIN_EXE_gaos");

fn json(text: &str) -> Value {
    gaos_json::parse(text).expect("test JSON")
}

fn verification_policy() -> SessionPolicy {
    SessionPolicy::from_value(&json(
        r#"{"evaluation":{"kind":"none"},"durability":{"attachable":true},
            "evidence":{"kind":"verification","attachReceipts":true},"publication":{"kind":"none"}}"#,
    ))
    .expect("policy")
}

fn operator(server: &TestServer) -> SessionClient {
    SessionClient::new(&server.base_url, &server.operator_token).expect("operator client")
}

/// Create a session and attach the other seats (creator first).
async fn remote_seats(
    server: &TestServer,
    request: &str,
    policy: &SessionPolicy,
    seats: &[&str],
) -> (RemoteCreated, Vec<RemoteSessionHandle>) {
    let created = RemoteSessionHandle::create(&operator(server), &json(request), policy).await.expect("create");
    assert_eq!(created.creator, seats[0]);
    let mut others = Vec::new();
    for seat in &seats[1..] {
        let client = created.seat_client(seat).expect("seat client");
        let request = AttachRequest::new(format!("attach-{seat}"));
        others.push(RemoteSessionHandle::attach(client, &created.session_id, &request, policy).await.expect("attach"));
    }
    (created, others)
}

/// Run two seats concurrently (caller finalization), then finalize once.
async fn play_two(
    first: &dyn SessionHandle,
    second: &dyn SessionHandle,
    mut drivers: [Box<dyn AgentDriver>; 2],
) -> ([RunOutcome; 2], SessionResult) {
    let policy = RunPolicy { finalize: FinalizeMode::Caller, ..RunPolicy::default() };
    let [d0, d1] = &mut drivers;
    let (a, b) = tokio::join!(
        run_session(first, d0.as_mut(), RunOptions::new(policy)),
        run_session(second, d1.as_mut(), RunOptions::new(policy)),
    );
    let outcomes = [a.expect("first seat"), b.expect("second seat")];
    let result = first.finalize(FinalizeRequest::default()).await.expect("finalize");
    (outcomes, result)
}

/// `(participantId, submissionId)` of the accepted intents, from the operator transcript.
fn accepted(server: &TestServer, session_id: &str) -> Vec<(String, String)> {
    let response =
        http::get(&server.base_url, &format!("/v1/sessions/{session_id}/transcript"), Some(&server.operator_token));
    assert_eq!(response.status, 200, "{}", response.text());
    let events: Vec<serde_json::Value> =
        response.text().lines().skip(1).map(|l| serde_json::from_str(l).expect("event")).collect();
    http::accepted_identities(&events)
}

fn comparable(result: &SessionResult, session_id: &str) -> (String, Vec<String>) {
    let replay = result.replay_text().expect("replay").replace(session_id, "<session>");
    // The header line names the session's creation time; the rest is gameplay.
    (canonical_json(&result.outcome), replay.lines().skip(1).map(str::to_owned).collect())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn g1_g2_remote_and_in_process_handles_play_the_same_match() {
    let server = TestServer::start(GAOS);
    let policy = verification_policy();
    let request = r#"{"game":"conformance/hilo","seed":7,"participantId":"alice"}"#;
    let drivers = || -> [Box<dyn AgentDriver>; 2] { [Box::new(RandomDriver::new(1)), Box::new(RandomDriver::new(2))] };

    let (created, others) = remote_seats(&server, request, &policy, &["alice", "bob"]).await;
    assert_eq!(created.handle.binding().revision, 0, "create returns the handle at the durable head");
    assert_eq!(others[0].receipt().expect("receipt").revision, 0, "attach too");
    let (remote, remote_result) = play_two(&created.handle, &others[0], drivers()).await;
    http::verify_replay(GAOS, server.data_dir(), "remote-hilo", remote_result.replay_text().expect("replay"));

    let dir = TempDir::new("gaos-inproc");
    let host = open_local_host(dir.path(), HostOptions::default()).await.expect("host");
    let local = InProcessSessionHandle::create(&host, &json(request), &policy).await.expect("create");
    let bob = InProcessSessionHandle::attach(
        &host,
        local.seat_token("bob").expect("bob"),
        &local.session_id,
        &AttachRequest::new("attach-bob"),
        &policy,
    )
    .await
    .expect("attach");
    let (in_process, local_result) = play_two(&local.handle, &bob, drivers()).await;

    for seat in 0..2 {
        assert_eq!(remote[seat].commands(), in_process[seat].commands(), "seat {seat}: the same commands");
    }
    assert_eq!(
        comparable(&remote_result, &created.session_id),
        comparable(&local_result, &local.session_id),
        "the same outcome and replay over HTTP and in process"
    );
    assert_eq!(accepted(&server, &created.session_id).len(), 6);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn g3_g4_remote_attach_is_idempotent_verifies_its_chain_and_keeps_the_pinned_identity() {
    let server = TestServer::start(GAOS);
    let controller = SessionControllerIdentity::new(ControllerKind::Provider, "bot").with_model("m-1");
    let policy = verification_policy().with_controller(&controller);
    let (created, others) = remote_seats(
        &server,
        r#"{"game":"conformance/hilo","seed":2,"participantId":"alice"}"#,
        &policy,
        &["alice", "bob"],
    )
    .await;
    let id = created.session_id.clone();
    let attach = |seat: &str, request: AttachRequest, policy: SessionPolicy| {
        let client = created.seat_client(seat).expect("client");
        let id = id.clone();
        async move { RemoteSessionHandle::attach(client, &id, &request, &policy).await }
    };
    let with_controller = AttachRequest { controller: Some(controller.clone()), ..AttachRequest::new("alice-1") };
    let first = attach("alice", with_controller.clone(), policy.clone()).await.expect("attach");
    let retry = attach("alice", with_controller.clone(), policy.clone()).await.expect("exact retry");
    assert_eq!(first.receipt(), retry.receipt(), "an exact retry returns the identical receipt");
    first.act(json(r#"{"card":0}"#)).await.expect("alice");
    others[0].act(json(r#"{"card":0}"#)).await.expect("bob");
    let reused = attach("alice", with_controller, policy.clone()).await;
    assert_eq!(
        reused.err().as_ref().and_then(SessionError::code),
        Some("attach_request_reused"),
        "no replay of an old head"
    );
    let later = attach("bob", AttachRequest::new("bob-2"), policy.clone()).await.expect("attach");
    let chain = [others[0].receipt(), first.receipt(), later.receipt()].map(|r| r.expect("receipt"));
    let verified = verify_typed_receipt_chain(&chain);
    assert!(verified.valid, "{:?}", verified.problems);
    assert_eq!(later.receipt().expect("receipt").revision, later.binding().revision);

    let swapped = AttachRequest {
        controller: Some(SessionControllerIdentity::new(ControllerKind::Human, "someone")),
        ..AttachRequest::new("swap")
    };
    let refused = attach("bob", swapped, SessionPolicy::host_default()).await;
    assert_eq!(refused.err().as_ref().and_then(SessionError::code), Some("controller_mismatch"));
    assert_eq!(accepted(&server, &id).len(), 2, "attaches never add or remove gameplay");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn g5_g6_remote_finalize_is_one_operation_and_exact_retries_return_identical_bytes() {
    let server = TestServer::start(GAOS);
    let policy = SessionPolicy::host_default();
    let (created, others) = remote_seats(
        &server,
        r#"{"game":"conformance/counter","level":{"rounds":1},"participantId":"a"}"#,
        &policy,
        &["a", "b"],
    )
    .await;
    let early = created.handle.finalize(FinalizeRequest::default()).await;
    assert_eq!(early.err().as_ref().and_then(SessionError::code), Some("not_terminal"));
    created.handle.act(json(r#"{"n":1}"#)).await.expect("a");
    others[0].act(json(r#"{"n":2}"#)).await.expect("b");
    assert_eq!(created.handle.observe().await.expect("observe").finalization_status(), Some("terminal"));
    assert_eq!(created.handle.state(), HandleState::Terminal);
    let request = FinalizeRequest::with_id("fin-remote");
    let result = created.handle.finalize(request.clone()).await.expect("finalize");
    let from_b = others[0].finalize(request.clone()).await.expect("an exact retry from the other seat");
    assert_eq!(from_b.canonical(), result.canonical());
    let raw = http::post(
        &server.base_url,
        &format!("/v1/sessions/{}/finalize", created.session_id),
        Some(created.credentials.seat("a").expect("a")),
        &serde_json::json!({"requestId": "fin-remote"}),
    );
    assert_eq!(raw.status, 200);
    assert_eq!(raw.text(), result.canonical(), "the host's bytes, byte for byte");
    let late = others[0].act(json(r#"{"n":1}"#)).await;
    assert!(late.is_err(), "no gameplay after finalize");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn g9_remote_close_is_local() {
    let server = TestServer::start(GAOS);
    let policy = SessionPolicy::host_default();
    let (created, others) = remote_seats(
        &server,
        r#"{"game":"conformance/hilo","seed":4,"participantId":"alice"}"#,
        &policy,
        &["alice", "bob"],
    )
    .await;
    created.handle.act(json(r#"{"card":1}"#)).await.expect("alice");
    let before = accepted(&server, &created.session_id);
    created.handle.close();
    others[0].close();
    assert_eq!(accepted(&server, &created.session_id), before);
    let listed =
        operator(&server).request_json(gaos_client::reqwest::Method::GET, "/v1/sessions", None).await.expect("list");
    let row = listed.body.get("sessions").and_then(Value::as_array).and_then(|s| s.first()).cloned().expect("a row");
    assert_eq!(row.get("status"), Some(&Value::from("active")), "closing neither finalizes nor abandons");
    let bob = RemoteSessionHandle::attach(
        created.seat_client("bob").expect("client"),
        &created.session_id,
        &AttachRequest::new("bob-after-close"),
        &policy,
    )
    .await
    .expect("attach");
    assert!(!bob.act(json(r#"{"card":0}"#)).await.expect("bob").is_pending(), "bob completes the window");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn g10_remote_interrupted_runs_resume_after_a_host_restart_without_duplicate_actions() {
    let dir = TempDir::new("gaos-resume");
    let mut server = TestServer::start_in(GAOS, dir.path(), &[]);
    let policy = verification_policy();
    let (created, others) = remote_seats(
        &server,
        r#"{"game":"conformance/counter","level":{"rounds":4},"participantId":"a"}"#,
        &policy,
        &["a", "b"],
    )
    .await;
    let id = created.session_id.clone();
    let moves = |ns: &[u32]| ScriptedDriver::new(ns.iter().map(|n| json(&format!(r#"{{"n":{n}}}"#))).collect());
    // Both seats play two rounds, then both processes stop (cancelled runs).
    let policy_caller = RunPolicy { finalize: FinalizeMode::Caller, ..RunPolicy::default() };
    let cancel = CancellationToken::new();
    let (mut a1, mut b1) = (moves(&[1, 2]), moves(&[3, 3]));
    let (ra, rb) = tokio::join!(
        run_session(&created.handle, &mut a1, RunOptions::new(policy_caller).cancel(cancel.clone())),
        run_session(&others[0], &mut b1, RunOptions::new(policy_caller).cancel(cancel.clone())),
    );
    for run in [ra, rb] {
        let error = run.expect_err("each script runs out after two rounds");
        assert!(matches!(error, RunError::Driver { .. }), "{error}");
    }
    created.handle.close();
    others[0].close();
    assert_eq!(accepted(&server, &id).len(), 4);

    // The host restarts (a new port); the seats attach at the durable head and continue.
    server.restart();
    let reattach = |seat: &str, request_id: &str| {
        let client = SessionClient::builder(&server.base_url)
            .token(created.credentials.seat(seat).expect("token"))
            .participant_id(seat)
            .build()
            .expect("client");
        let (id, policy, request) = (id.clone(), policy.clone(), AttachRequest::new(request_id));
        async move { RemoteSessionHandle::attach(client, &id, &request, &policy).await.expect("attach") }
    };
    let (a, b) = (reattach("a", "a-resume").await, reattach("b", "b-resume").await);
    assert_eq!(a.binding().revision, b.binding().revision, "both land at the same durable head");
    let (outcomes, result) = play_two(&a, &b, [Box::new(moves(&[3, 0])), Box::new(moves(&[1, 1]))]).await;
    assert_eq!(outcomes.iter().map(|o| o.decisions.len()).sum::<usize>(), 4);
    let ids = accepted(&server, &id);
    assert_eq!(ids.len(), 8, "4 rounds × 2 seats: {ids:?}");
    let mut unique = ids.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), 8, "no accepted action is duplicated");
    assert_eq!(result.outcome.get("status"), Some(&Value::from("ended")));
    http::verify_replay(GAOS, dir.path(), "resumed", result.replay_text().expect("replay"));
    // b's first attach (sequence 0), then the two resumes: the chain
    // continues across the restart and still verifies.
    let chain = [others[0].receipt(), a.receipt(), b.receipt()].map(|r| r.expect("receipt"));
    assert_eq!(chain.iter().map(|r| r.sequence).collect::<Vec<_>>(), vec![0, 1, 2]);
    let verified = verify_typed_receipt_chain(&chain);
    assert!(verified.valid, "{:?}", verified.problems);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lease_expired_is_renewed_and_the_same_submission_retried_once_over_http() {
    let dir = TempDir::new("gaos-lease-handle");
    let server = TestServer::start_in(GAOS, dir.path(), &["--test-clock"]);
    let policy = SessionPolicy::host_default();
    let created = RemoteSessionHandle::create(
        &operator(&server),
        &json(r#"{"game":"conformance/hilo","seed":9,"participantId":"alice","lease":{"durationMs":5000}}"#),
        &policy,
    )
    .await
    .expect("create");
    assert!(created.handle.transport().holds_lease());
    let moved = http::post(
        &server.base_url,
        "/v1/admin/clock",
        Some(&server.operator_token),
        &serde_json::json!({"advanceMs": 6000}),
    );
    assert_eq!(moved.status, 200, "{}", moved.text());
    tokio::time::sleep(Duration::from_millis(50)).await;
    let answer = created.handle.act(json(r#"{"card":0}"#)).await.expect("renewed and retried");
    assert!(answer.is_pending());
    let response = http::get(
        &server.base_url,
        &format!("/v1/sessions/{}/transcript", created.session_id),
        Some(&server.operator_token),
    );
    let text = response.text();
    assert!(text.contains("\"lease_expired\"") && text.contains("\"lease_renewed\""), "{text}");
    assert_eq!(accepted(&server, &created.session_id).len(), 1, "accepted exactly once");
}

fn gaos_play(args: &[&str]) -> (serde_json::Value, String) {
    let output = Command::new(GAOS).arg("play").args(args).output().expect("run gaos play");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "gaos play {args:?} failed: {stdout}\n{stderr}");
    let result = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"));
    (result, stderr)
}

#[test]
fn gaos_play_runs_in_process_and_on_a_host_with_the_same_outcome() {
    let server = TestServer::start(GAOS);
    let dir = TempDir::new("gaos-play");
    let local_out = dir.path().join("local.jsonl");
    let remote_out = dir.path().join("remote.jsonl");
    let seats = ["--seat", "alice", "--driver", "random", "--seat", "bob", "--driver", "first-legal"];
    let common_args = |out: &std::path::Path| {
        let mut args: Vec<String> = ["--game", "conformance/hilo", "--seed", "11", "--json"].map(String::from).to_vec();
        args.extend(seats.map(String::from));
        args.extend(["--out".to_owned(), out.display().to_string()]);
        args
    };
    let local_args = common_args(&local_out);
    let (local, _) = gaos_play(&local_args.iter().map(String::as_str).collect::<Vec<_>>());
    let mut remote_args = common_args(&remote_out);
    remote_args.extend([
        "--host".to_owned(),
        server.base_url.clone(),
        "--token".to_owned(),
        server.operator_token.clone(),
    ]);
    let (remote, _) = gaos_play(&remote_args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(local["outcome"], remote["outcome"], "the same seed and drivers give the same match");
    assert_eq!(local["steps"], serde_json::json!({"alice": 3, "bob": 3}));
    assert_eq!(remote["steps"], local["steps"]);
    for (name, out) in [("play-local", &local_out), ("play-remote", &remote_out)] {
        let replay = std::fs::read_to_string(out).expect("the replay was written");
        http::verify_replay(GAOS, dir.path(), name, &replay);
    }
    // Usage errors exit 2 with a message.
    let output =
        Command::new(GAOS).args(["play", "--game", "conformance/hilo", "--seat", "carol"]).output().expect("run");
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("has no seat \"carol\""));
}
