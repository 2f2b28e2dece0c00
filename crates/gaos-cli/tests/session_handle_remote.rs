//! RFC-018 release gates over HTTP: `RemoteSessionHandle` (gaos-client)
//! against a real `gaos serve`. The gates are `gaos_testkit::handle_gates`,
//! the same suite the in-process lane (`crates/gaos-host/tests/session_handle.rs`)
//! runs; this file says how to reach the host over HTTP, and adds what only
//! a separate process can show: the same match over HTTP and in process,
//! and `gaos play` in process and on a host.

use std::process::Command;

use gaos_client::SessionClient;
use gaos_client::handle::{RemoteCreated, RemoteSessionHandle};
use gaos_host::HostOptions;
use gaos_host::handle::{InProcessSessionHandle, open_local_host};
use gaos_json::{Value, canonical_json};
use gaos_runner::drivers::RandomDriver;
use gaos_runner::{
    AgentDriver, AttachRequest, FinalizeMode, FinalizeRequest, RunOptions, RunOutcome, RunPolicy, SessionError,
    SessionHandle, SessionPolicy, SessionResult, run_session,
};
use gaos_testkit::handle_gates::{Created, GateHost, SeatTokens, Setup};
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

/// A real `gaos serve` (its own data directory), reached over HTTP.
struct OverHttp {
    server: TestServer,
    tokens: SeatTokens,
}

async fn start(setup: Setup) -> OverHttp {
    let flags: &[&str] = if setup.test_clock { &["--test-clock"] } else { &[] };
    OverHttp { server: TestServer::start_with(GAOS, flags), tokens: SeatTokens::default() }
}

gaos_testkit::handle_gate_tests!(start);

/// The same gates on a host whose store is PostgreSQL (a one-host cluster:
/// its writes fenced, its sessions claimed, its clock the database's).
mod on_postgresql {
    use super::*;

    async fn start(setup: Setup) -> OverHttp {
        let url = gaos_testkit::postgres::server().database("gates");
        let mut flags = vec!["--store", url.as_str(), "--node-id", "gates"];
        if setup.test_clock {
            flags.push("--test-clock");
        }
        OverHttp { server: TestServer::start_with(GAOS, &flags), tokens: SeatTokens::default() }
    }

    gaos_testkit::handle_gate_tests!(start);
}

impl OverHttp {
    fn seat_client(&self, session_id: &str, seat: &str) -> SessionClient {
        let token = self.tokens.get(session_id, seat);
        SessionClient::builder(&self.server.base_url).token(&token).participant_id(seat).build().expect("seat client")
    }

    fn operator_get(&self, path: &str) -> http::Response {
        let response = http::get(&self.server.base_url, path, Some(&self.server.operator_token));
        assert_eq!(response.status, 200, "GET {path}: {}", response.text());
        response
    }
}

fn boxed(handle: RemoteSessionHandle) -> Box<dyn SessionHandle> {
    Box::new(handle)
}

/// A gaos-json value as the raw client's JSON.
fn wire(value: &Value) -> serde_json::Value {
    serde_json::from_str(&canonical_json(value)).expect("JSON")
}

impl GateHost for OverHttp {
    async fn create(&self, request: &Value, policy: &SessionPolicy) -> Result<Created, SessionError> {
        let created = RemoteSessionHandle::create(&operator(&self.server), request, policy).await?;
        self.tokens.remember(&created.session_id, &created.credentials.seats);
        let holds_lease = created.handle.transport().holds_lease();
        Ok(Created {
            session_id: created.session_id,
            creator: created.creator,
            handle: boxed(created.handle),
            holds_lease,
        })
    }

    async fn attach(
        &self,
        session_id: &str,
        seat: &str,
        request: &AttachRequest,
        policy: &SessionPolicy,
    ) -> Result<Box<dyn SessionHandle>, SessionError> {
        RemoteSessionHandle::attach(self.seat_client(session_id, seat), session_id, request, policy).await.map(boxed)
    }

    fn adopt(
        &self,
        session_id: &str,
        seat: &str,
        existing: &Value,
        policy: &SessionPolicy,
    ) -> Result<Box<dyn SessionHandle>, SessionError> {
        RemoteSessionHandle::from_existing(self.seat_client(session_id, seat), existing, policy).map(boxed)
    }

    async fn attach_raw(&self, session_id: &str, seat: &str, body: &Value) -> Result<(), String> {
        let token = self.tokens.get(session_id, seat);
        let path = format!("/v1/sessions/{session_id}/attach");
        let response = http::post(&self.server.base_url, &path, Some(&token), &wire(body));
        if response.is_success() { Ok(()) } else { Err(response.code().unwrap_or_else(|| response.text())) }
    }

    async fn finalize_raw(&self, session_id: &str, body: &Value) -> String {
        let path = format!("/v1/sessions/{session_id}/finalize");
        let response = http::post(&self.server.base_url, &path, Some(&self.server.operator_token), &wire(body));
        assert_eq!(response.status, 200, "{}", response.text());
        response.text()
    }

    async fn transcript(&self, session_id: &str) -> Vec<Value> {
        let text = self.operator_get(&format!("/v1/sessions/{session_id}/transcript")).text();
        text.lines().map(|line| gaos_json::parse(line).expect("transcript line")).collect()
    }

    async fn session_status(&self, session_id: &str) -> String {
        let listed = self.operator_get("/v1/sessions").json();
        let rows = listed["sessions"].as_array().expect("a session list");
        let row = rows.iter().find(|r| r["id"] == session_id).expect("the session's row");
        row["status"].as_str().expect("status").to_owned()
    }

    async fn advance_clock(&self, ms: i64) {
        let moved = http::post(
            &self.server.base_url,
            "/v1/admin/clock",
            Some(&self.server.operator_token),
            &serde_json::json!({"advanceMs": ms}),
        );
        assert_eq!(moved.status, 200, "{}", moved.text());
    }

    async fn live_sessions(&self) -> u64 {
        let text = self.operator_get("/metrics").text();
        let line = text.lines().find(|l| l.starts_with("gaos_live_sessions ")).expect("gaos_live_sessions");
        line["gaos_live_sessions ".len()..].trim().parse().expect("a count")
    }

    async fn restart(&mut self) {
        // A new process on the same data directory (and a new port).
        self.server.restart();
    }

    fn has_change_feed(&self) -> bool {
        false
    }

    fn verify_replay(&self, name: &str, replay: &str) {
        http::verify_replay(GAOS, self.server.data_dir(), name, replay);
    }
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
    let host = open_local_host(dir.path(), HostOptions::new(gaos_games::GameRegistry::builtin())).await.expect("host");
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
