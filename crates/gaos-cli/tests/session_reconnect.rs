//! Issue 18 item 3 over HTTP, against a real `gaos serve`: `run_session`
//! survives a host restart mid-match (re-attaching at the durable head with
//! backoff and resending the interrupted submission under its own id), and
//! a seat whose token is rotated mid-match refreshes it once through its
//! credential source.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use gaos_client::SessionClient;
use gaos_client::handle::{RemoteCreated, RemoteSessionHandle};
use gaos_runner::drivers::RandomDriver;
use gaos_runner::{
    AttachRequest, Decision, FinalizeMode, FinalizeRequest, Reattached, Reconnecting, RunError, RunEvents, RunOptions,
    RunOutcome, RunPolicy, SessionHandle, SessionPolicy, SessionResult, run_session,
};
use gaos_testkit::http;
use gaos_testkit::server::TestServer;

const GAOS: &str = env!("CARGO_BIN_EXE_gaos");
const MATCH: &str = r#"{"game":"conformance/hilo","seed":7,"participantId":"alice"}"#;

fn verification_policy() -> SessionPolicy {
    let policy = r#"{"evaluation":{"kind":"none"},"durability":{"attachable":true},
        "evidence":{"kind":"verification","attachReceipts":true},"publication":{"kind":"none"}}"#;
    SessionPolicy::from_value(&gaos_json::parse(policy).expect("JSON")).expect("policy")
}

async fn create_match(base_url: &str, operator_token: &str) -> (RemoteCreated, RemoteSessionHandle) {
    let operator = SessionClient::new(base_url, operator_token).expect("operator client");
    let policy = verification_policy();
    let request = gaos_json::parse(MATCH).expect("JSON");
    let created = RemoteSessionHandle::create(&operator, &request, &policy).await.expect("create");
    let client = created.seat_client("bob").expect("bob's client");
    let bob = RemoteSessionHandle::attach(client, &created.session_id, &AttachRequest::new("attach-bob"), &policy)
        .await
        .expect("attach bob");
    (created, bob)
}

/// Both seats to the end (caller finalization), then one finalize.
async fn play(
    alice: &dyn SessionHandle,
    bob: &dyn SessionHandle,
    alice_events: &mut dyn RunEvents,
    bob_events: &mut dyn RunEvents,
) -> Result<([RunOutcome; 2], SessionResult), RunError> {
    let policy = RunPolicy { finalize: FinalizeMode::Caller, ..RunPolicy::default() };
    let (mut alice_driver, mut bob_driver) = (RandomDriver::new(1), RandomDriver::new(2));
    let (a, b) = tokio::join!(
        run_session(alice, &mut alice_driver, RunOptions::new(policy).events(alice_events)),
        run_session(bob, &mut bob_driver, RunOptions::new(policy).events(bob_events)),
    );
    let outcomes = [a?, b?];
    let result = alice.finalize(FinalizeRequest::default()).await?;
    Ok((outcomes, result))
}

/// `(participantId, submissionId)` of every accepted intent, from the operator transcript.
fn accepted(base_url: &str, operator_token: &str, session_id: &str) -> Vec<(String, String)> {
    let response = http::get(base_url, &format!("/v1/sessions/{session_id}/transcript"), Some(operator_token));
    assert_eq!(response.status, 200, "{}", response.text());
    let events: Vec<serde_json::Value> =
        response.text().lines().skip(1).map(|l| serde_json::from_str(l).expect("event")).collect();
    http::accepted_identities(&events)
}

/// Records the reconnect events of a run.
#[derive(Default)]
struct Watch {
    reconnecting: Vec<Reconnecting>,
    reattached: Vec<Reattached>,
}

impl RunEvents for Watch {
    fn on_reconnecting(&mut self, reconnecting: &Reconnecting) {
        self.reconnecting.push(reconnecting.clone());
    }
    fn on_reattached(&mut self, reattached: &Reattached) {
        self.reattached.push(reattached.clone());
    }
}

/// Kills the host right after this seat's `at`-th decision (so that
/// decision's submission meets a dead host) and brings it back on the same
/// address and data directory after `down`.
struct KillAfterDecision {
    server: Arc<Mutex<TestServer>>,
    at: usize,
    decisions: usize,
    down: Duration,
    restarter: Option<std::thread::JoinHandle<()>>,
    watch: Watch,
}

impl RunEvents for KillAfterDecision {
    fn on_decision(&mut self, _: &Decision) {
        self.decisions += 1;
        if self.decisions == self.at {
            let server = Arc::clone(&self.server);
            server.lock().expect("server").kill();
            let down = self.down;
            self.restarter =
                Some(std::thread::spawn(move || server.lock().expect("server").restart_at_same_address(down)));
        }
    }
    fn on_reconnecting(&mut self, reconnecting: &Reconnecting) {
        self.watch.on_reconnecting(reconnecting);
    }
    fn on_reattached(&mut self, reattached: &Reattached) {
        self.watch.on_reattached(reattached);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_match_survives_a_host_restart_without_a_duplicate_submission() {
    // The same match on a host that never stops: what the interrupted one must equal.
    let steady = TestServer::start(GAOS);
    let (created, bob) = create_match(&steady.base_url, &steady.operator_token).await;
    let (steady_outcomes, steady_result) =
        play(&created.handle, &bob, &mut Watch::default(), &mut Watch::default()).await.expect("steady match");
    drop(steady);

    let server = Arc::new(Mutex::new(TestServer::start(GAOS)));
    let (base_url, operator_token) = {
        let s = server.lock().expect("server");
        (s.base_url.clone(), s.operator_token.clone())
    };
    let (created, bob) = create_match(&base_url, &operator_token).await;
    let mut alice_events = KillAfterDecision {
        server: Arc::clone(&server),
        at: 2,
        decisions: 0,
        down: Duration::from_millis(1500),
        restarter: None,
        watch: Watch::default(),
    };
    let mut bob_events = Watch::default();
    let (outcomes, result) =
        play(&created.handle, &bob, &mut alice_events, &mut bob_events).await.expect("the match survives the restart");
    alice_events.restarter.take().expect("the host was restarted").join().expect("restart");

    // Alice's second submission met a dead host: the runner reported the
    // loss, re-attached at the durable head and resent that submission.
    let watch = &alice_events.watch;
    assert!(!watch.reconnecting.is_empty(), "the loss is reported");
    assert!(watch.reconnecting.iter().all(|r| r.error.is_transient()));
    let delays: Vec<Duration> = watch.reconnecting.iter().map(|r| r.delay).collect();
    assert!(delays.windows(2).all(|w| w[0] <= w[1]), "backoff grows: {delays:?}");
    let reattached = watch.reattached.iter().find(|r| r.resending.is_some()).expect("a re-attach with a resend");
    let resent = reattached.resending.clone().expect("resent id");
    assert!(resent.starts_with("alice:"), "{resent}");

    // Nothing was lost or doubled: the same commands as the steady match,
    // one accepted intent per decision, every submission id once, and the
    // resent id among them exactly once.
    for (seat, (interrupted, steady)) in outcomes.iter().zip(&steady_outcomes).enumerate() {
        assert_eq!(interrupted.commands(), steady.commands(), "seat {seat} made the same commands");
    }
    let ids = accepted(&base_url, &operator_token, &created.session_id);
    let decisions: usize = outcomes.iter().map(|o| o.decisions.len()).sum();
    assert_eq!(ids.len(), decisions, "one accepted intent per decision: {ids:?}");
    let distinct: HashSet<&(String, String)> = ids.iter().collect();
    assert_eq!(distinct.len(), ids.len(), "no submission id twice: {ids:?}");
    assert_eq!(ids.iter().filter(|(_, id)| *id == resent).count(), 1, "the resent submission landed once");
    assert_eq!(result.outcome, steady_result.outcome, "the same outcome");

    let s = server.lock().expect("server");
    http::verify_replay(GAOS, s.data_dir(), "reconnect-hilo", result.replay_text().expect("replay"));
}

/// Rotates alice's seat token (operator `POST .../seats/alice/token`) right
/// after her `at`-th decision and puts the new token where her credential
/// source looks.
struct RotateAfterDecision {
    base_url: String,
    operator_token: String,
    session_id: String,
    at: usize,
    decisions: usize,
    slot: Arc<Mutex<String>>,
}

impl RunEvents for RotateAfterDecision {
    fn on_decision(&mut self, _: &Decision) {
        self.decisions += 1;
        if self.decisions == self.at {
            let path = format!("/v1/sessions/{}/seats/alice/token", self.session_id);
            let response = http::post(&self.base_url, &path, Some(&self.operator_token), &serde_json::json!({}));
            assert_eq!(response.status, 200, "{}", response.text());
            let token = response.json()["token"].as_str().expect("a new token").to_owned();
            *self.slot.lock().expect("slot") = token;
        }
    }
}

fn source(slot: &Arc<Mutex<String>>) -> Arc<dyn gaos_client::CredentialSource> {
    let slot = Arc::clone(slot);
    Arc::new(move || {
        let token = slot.lock().expect("slot").clone();
        async move { Ok::<String, String>(token) }
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rotated_seat_token_is_refreshed_once_through_the_credential_source() {
    let server = TestServer::start(GAOS);
    let (created, bob) = create_match(&server.base_url, &server.operator_token).await;
    let slot = Arc::new(Mutex::new(String::new()));
    created.handle.transport().set_credential_source(Some(source(&slot)));
    let mut rotate = RotateAfterDecision {
        base_url: server.base_url.clone(),
        operator_token: server.operator_token.clone(),
        session_id: created.session_id.clone(),
        at: 2,
        decisions: 0,
        slot: Arc::clone(&slot),
    };
    let (outcomes, result) = play(&created.handle, &bob, &mut rotate, &mut Watch::default())
        .await
        .expect("the match goes on with the refreshed token");
    assert!(rotate.decisions >= 2, "the token was rotated mid-match");
    let ids = accepted(&server.base_url, &server.operator_token, &created.session_id);
    assert_eq!(ids.len(), outcomes.iter().map(|o| o.decisions.len()).sum::<usize>(), "{ids:?}");
    http::verify_replay(GAOS, server.data_dir(), "refresh-hilo", result.replay_text().expect("replay"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refreshed_token_the_host_refuses_too_fails_clearly() {
    let server = TestServer::start(GAOS);
    let (created, _bob) = create_match(&server.base_url, &server.operator_token).await;
    let path = format!("/v1/sessions/{}/seats/alice/token", created.session_id);
    let rotated = http::post(&server.base_url, &path, Some(&server.operator_token), &serde_json::json!({}));
    assert_eq!(rotated.status, 200, "{}", rotated.text());
    // The source hands back a token that is no longer valid.
    let stale = Arc::new(Mutex::new(created.credentials.seat("alice").expect("alice's old token").to_owned()));
    created.handle.transport().set_credential_source(Some(source(&stale)));
    let error = created.handle.observe().await.expect_err("the stale token is refused");
    assert_eq!(error.status(), Some(401), "{error}");
    assert!(error.to_string().contains("the refreshed credential was refused too"), "{error}");

    // Without a source a 401 is the plain refusal (no refresh attempted).
    created.handle.transport().set_credential_source(None);
    let plain = created.handle.observe().await.expect_err("refused");
    assert_eq!(plain.status(), Some(401));
    assert!(!plain.to_string().contains("refreshed"), "{plain}");
}
