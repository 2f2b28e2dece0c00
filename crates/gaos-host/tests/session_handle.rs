//! RFC-018 release-gate tests through the real host, in process: the
//! `InProcessSessionHandle` over `Host` (SQLite in a temp dir), driven by
//! `run_session` with the built-in drivers. Test names carry the §12 gate
//! they prove (`g1_...` = gate 1). The same gates over HTTP are in
//! `crates/gaos-cli/tests/session_handle_remote.rs`.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use gaos_host::auth::Caller;
use gaos_host::handle::{InProcessCreated, InProcessSessionHandle, open_local_host};
use gaos_host::lease::Presented;
use gaos_host::{Host, HostOptions};
use gaos_json::{Value, canonical_json, obj};
use gaos_runner::drivers::{FirstLegalDriver, HumanDriver, RandomDriver, ScriptedDriver};
use gaos_runner::receipts::verify_typed_receipt_chain;
use gaos_runner::{
    AgentDriver, AttachRequest, BoxFuture, CancellationToken, ControllerKind, Conversation, Decision, DriverContext,
    DriverError, FinalizeMode, FinalizeRequest, HandleState, Observation, Pacing, Presenter, RunError, RunOptions,
    RunOutcome, RunPolicy, RunStatus, SessionBinding, SessionControllerIdentity, SessionError, SessionHandle,
    SessionPolicy, SessionResult, run_session,
};
use gaos_testkit::server::TempDir;

fn json(text: &str) -> Value {
    gaos_json::parse(text).expect("test JSON")
}

async fn local_host(options: HostOptions) -> (Host, TempDir) {
    let dir = TempDir::new("gaos-handle");
    let host = open_local_host(dir.path(), options).await.expect("host");
    (host, dir)
}

fn verification_policy() -> SessionPolicy {
    SessionPolicy::from_value(&json(
        r#"{"evaluation":{"kind":"none"},"durability":{"attachable":true},
            "evidence":{"kind":"verification","attachReceipts":true},"publication":{"kind":"none"}}"#,
    ))
    .expect("policy")
}

fn official_policy() -> SessionPolicy {
    SessionPolicy::from_value(&json(
        r#"{"evaluation":{"kind":"official","benchmarkId":"counter-bench","benchmarkVersion":"1","manifestDigest":"abc"},
            "durability":{"attachable":true},"evidence":{"kind":"verification","attachReceipts":true},
            "publication":{"kind":"eligible","policyId":"p","policyVersion":"1"}}"#,
    ))
    .expect("policy")
}

/// Create a session and attach every other seat: one handle per seat, in
/// seat order (the creator first).
async fn seat_handles(
    host: &Host,
    request: &str,
    policy: &SessionPolicy,
    seats: &[&str],
) -> (String, Vec<InProcessSessionHandle>) {
    let created: InProcessCreated = InProcessSessionHandle::create(host, &json(request), policy).await.expect("create");
    assert_eq!(created.creator, seats[0]);
    let id = created.session_id.clone();
    let mut handles = Vec::new();
    for seat in &seats[1..] {
        let token = created.seat_token(seat).expect("a seat token");
        let request = AttachRequest::new(format!("attach-{seat}"));
        handles.push(InProcessSessionHandle::attach(host, token, &id, &request, policy).await.expect("attach"));
    }
    handles.insert(0, created.handle);
    (id, handles)
}

/// Run every seat concurrently (caller finalization), then finalize once.
async fn play(
    handles: &[&dyn SessionHandle],
    drivers: Vec<Box<dyn AgentDriver>>,
    policy: RunPolicy,
    presenter: Option<Arc<dyn Presenter>>,
) -> (Vec<RunOutcome>, SessionResult) {
    let policy = RunPolicy { finalize: FinalizeMode::Caller, ..policy };
    let runs = handles.iter().zip(drivers).map(|(handle, mut driver)| {
        let presenter = presenter.clone();
        async move {
            let mut options = RunOptions::new(policy);
            if let Some(p) = presenter {
                options = options.presenter(p);
            }
            run_session(*handle, driver.as_mut(), options).await
        }
    });
    let outcomes: Vec<RunOutcome> = futures_util::future::join_all(runs)
        .await
        .into_iter()
        .collect::<Result<_, _>>()
        .expect("every seat's run completes");
    for outcome in &outcomes {
        assert_eq!(outcome.status, RunStatus::Terminal);
    }
    let result = handles[0].finalize(FinalizeRequest::default()).await.expect("finalize");
    (outcomes, result)
}

async fn transcript(host: &Host, id: &str) -> Vec<Value> {
    let text = host.transcript(&Caller::Operator, id).await.expect("transcript");
    text.lines().map(json).collect()
}

/// Accepted intents of the transcript: (seat, submissionId, command).
fn accepted(events: &[Value]) -> Vec<(String, String, String)> {
    events
        .iter()
        .filter(|e| e.get("kind").and_then(Value::as_str) == Some("intent-accepted"))
        .map(|e| {
            let field = |k: &str| canonical_json(e.get(k).unwrap_or(&Value::Null));
            (field("participantId"), field("submissionId"), field("command"))
        })
        .collect()
}

/// Events that are gameplay (not the `gaos.lease` extension lane).
fn gameplay(events: &[Value]) -> Vec<Value> {
    events.iter().filter(|e| !canonical_json(e).contains("\"gaos.lease\"")).cloned().collect()
}

/// Wraps a driver and adds a coach's note to each decision: guided play
/// is an ordinary driver decoration, not another kind of session.
struct Coached(Box<dyn AgentDriver>);

impl AgentDriver for Coached {
    fn id(&self) -> &str {
        "coached"
    }
    fn label(&self) -> &str {
        "coached"
    }
    fn reset(&mut self) {
        self.0.reset()
    }
    fn act<'a>(&'a mut self, context: DriverContext<'a>) -> BoxFuture<'a, Result<Decision, DriverError>> {
        Box::pin(async move {
            let mut decision = self.0.act(context).await?;
            decision.message = Some(format!("coach: decision {} looks fine", context.step + 1));
            Ok(decision)
        })
    }
}

/// Counts the observations it was shown.
#[derive(Default)]
struct Screen(AtomicUsize);

impl Presenter for Screen {
    fn present<'a>(&'a self, _o: &'a Observation, _c: &'a CancellationToken) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            tokio::time::sleep(Duration::from_millis(1)).await;
            self.0.fetch_add(1, Ordering::SeqCst);
            Ok(())
        })
    }
}

/// One kind of play: its name, session policy, seat drivers, run policy and presenter.
type Mode = (&'static str, SessionPolicy, Vec<Box<dyn AgentDriver>>, RunPolicy, Option<Arc<dyn Presenter>>);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn g1_same_handle_type_for_normal_guided_autonomous_watched_and_headless_play() {
    let (host, _dir) = local_host(HostOptions::default()).await;
    let request = r#"{"game":"conformance/counter","level":{"rounds":3}}"#;
    let human = || -> Box<dyn AgentDriver> {
        Box::new(HumanDriver::new(std::io::Cursor::new(b"2\n3\n4\n".to_vec()), std::io::sink()))
    };
    let screen = Arc::new(Screen::default());
    let modes: Vec<Mode> = vec![
        (
            "normal",
            SessionPolicy::host_default(),
            vec![human(), Box::new(RandomDriver::new(1))],
            RunPolicy::default(),
            None,
        ),
        (
            "guided",
            SessionPolicy::host_default(),
            vec![Box::new(Coached(Box::new(FirstLegalDriver::new()))), Box::new(RandomDriver::new(2))],
            RunPolicy { pacing: Pacing::Paced, ..RunPolicy::default() },
            Some(screen.clone()),
        ),
        (
            "autonomous",
            SessionPolicy::host_default(),
            vec![Box::new(RandomDriver::new(3)), Box::new(RandomDriver::new(4))],
            RunPolicy::default(),
            None,
        ),
        (
            "watched-benchmark",
            official_policy(),
            vec![Box::new(RandomDriver::new(5)), Box::new(RandomDriver::new(6))],
            RunPolicy { pacing: Pacing::Paced, ..RunPolicy::default() },
            Some(screen.clone()),
        ),
        (
            "headless-benchmark",
            official_policy(),
            vec![Box::new(RandomDriver::new(7)), Box::new(RandomDriver::new(8))],
            RunPolicy::default(),
            None,
        ),
    ];
    for (mode, policy, drivers, run_policy, presenter) in modes {
        let (id, handles) = seat_handles(&host, request, &policy, &["a", "b"]).await;
        // One handle type for every mode, used only through the trait.
        let boxed: Vec<Box<dyn SessionHandle>> =
            handles.into_iter().map(|h| Box::new(h) as Box<dyn SessionHandle>).collect();
        let refs: Vec<&dyn SessionHandle> = boxed.iter().map(|h| h.as_ref()).collect();
        let (outcomes, result) = play(&refs, drivers, run_policy, presenter).await;
        assert_eq!(result.outcome.get("status"), Some(&Value::from("ended")), "{mode}");
        let events = transcript(&host, &id).await;
        let submitted: usize = outcomes.iter().map(|o| o.decisions.len()).sum();
        assert_eq!(accepted(&events).len(), submitted, "{mode}: every decision is one accepted command");
        assert_eq!(submitted, 6, "{mode}: 3 rounds × 2 seats");
        if mode == "normal" {
            assert_eq!(outcomes[0].commands(), vec![json(r#"{"n":1}"#), json(r#"{"n":2}"#), json(r#"{"n":3}"#)]);
        }
        if mode == "guided" {
            assert!(
                outcomes[0].decisions.iter().all(|d| d.message.as_deref().is_some_and(|m| m.starts_with("coach:")))
            );
        }
        if mode.ends_with("benchmark") {
            let evaluation = result.evaluation.as_ref().and_then(|e| e.get("kind"));
            assert_eq!(evaluation, Some(&Value::from("official")), "{mode}");
        }
    }
    assert!(screen.0.load(Ordering::SeqCst) > 0, "watched modes presented their observations");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn g2_create_and_attach_return_the_same_handle_type_at_the_durable_head() {
    let (host, _dir) = local_host(HostOptions::default()).await;
    let policy = verification_policy();
    let created = InProcessSessionHandle::create(&host, &json(r#"{"game":"conformance/counter"}"#), &policy)
        .await
        .expect("create");
    let a: &InProcessSessionHandle = &created.handle;
    assert_eq!((a.seat(), a.state(), a.binding().revision), ("a", HandleState::Active, 0));
    let b_token = created.seat_token("b").expect("b").to_owned();
    // Advance the session: round 0 resolves.
    let b0 = InProcessSessionHandle::attach(&host, &b_token, &created.session_id, &AttachRequest::new("b-0"), &policy)
        .await
        .expect("attach");
    a.act(json(r#"{"n":1}"#)).await.expect("a acts");
    b0.act(json(r#"{"n":2}"#)).await.expect("b acts");
    let head = a.observe().await.expect("observe");
    assert!(head.revision() > 0);
    // A new attach lands at the durable head: same type, same cursor.
    let b1: InProcessSessionHandle =
        InProcessSessionHandle::attach(&host, &b_token, &created.session_id, &AttachRequest::new("b-1"), &policy)
            .await
            .expect("attach");
    assert_eq!(b1.binding(), SessionBinding::new(&created.session_id, head.revision(), "b"));
    let receipt = b1.receipt().expect("verification policy issues receipts");
    assert_eq!(receipt.revision, head.revision());
    let first = b1.observe().await.expect("observe");
    assert_eq!((first.revision(), first.tick().get("total")), (head.revision(), Some(&Value::from(3u32))));
    // And the adopted head of a product route is the same type too.
    let existing = obj! {
        "sessionId" => created.session_id.clone(),
        "tick" => first.tick().clone(),
        "binding" => gaos_json::to_value(&b1.binding()).expect("binding")
    };
    let adopted: InProcessSessionHandle =
        InProcessSessionHandle::from_existing(&host, &b_token, &existing.into(), &policy).expect("adopt");
    assert_eq!(adopted.observe().await.expect("observe").tick(), first.tick());
    adopted.act(json(r#"{"n":0}"#)).await.expect("the adopted handle acts at the head");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn g3_attach_cannot_roll_back_fork_replace_identity_or_mutate_gameplay() {
    let (host, _dir) = local_host(HostOptions::default()).await;
    let controller = SessionControllerIdentity::new(ControllerKind::LocalAgent, "bot-a").with_version("1");
    let policy = verification_policy().with_controller(&controller);
    let (id, handles) = seat_handles(
        &host,
        r#"{"game":"conformance/hilo","seed":7,"participantId":"alice"}"#,
        &policy,
        &["alice", "bob"],
    )
    .await;
    handles[0].act(json(r#"{"card":0}"#)).await.expect("alice");
    handles[1].act(json(r#"{"card":1}"#)).await.expect("bob");
    let before = gameplay(&transcript(&host, &id).await);
    let head = handles[1].observe().await.expect("observe");
    let bob_token = {
        // Re-attach bob with the pinned controller: allowed, at the head.
        let request = AttachRequest { controller: Some(controller.clone()), ..AttachRequest::new("bob-again") };
        let created_token = host_seat_token(&host, &id, "bob").await;
        let again =
            InProcessSessionHandle::attach(&host, &created_token, &id, &request, &policy).await.expect("attach");
        assert_eq!(again.binding().revision, head.revision(), "no rollback: the head is where the game is");
        created_token
    };
    assert_eq!(gameplay(&transcript(&host, &id).await), before, "attach never mutates gameplay");

    // Replacing the controller identity: refused locally against the policy…
    let other = SessionControllerIdentity::new(ControllerKind::Human, "somebody-else");
    let request = AttachRequest { controller: Some(other.clone()), ..AttachRequest::new("bob-swap") };
    let local = InProcessSessionHandle::attach(&host, &bob_token, &id, &request, &policy).await;
    assert!(matches!(local, Err(SessionError::InvalidArgument(_))), "{local:?}");
    // …and by the host, which pinned it at create.
    let lax = SessionPolicy::host_default();
    let remote = InProcessSessionHandle::attach(&host, &bob_token, &id, &request, &lax).await;
    assert_eq!(remote.as_ref().err().and_then(SessionError::code), Some("controller_mismatch"), "{remote:?}");

    // No cursor can be asked for: an attach body naming a revision is refused.
    let caller = host.caller(Some(&bob_token)).expect("caller");
    let fork = host.attach(&caller, &id, Presented::default(), json(r#"{"requestId":"fork","revision":0}"#)).await;
    assert_eq!(fork.err().map(|e| e.code), Some("invalid_request".to_owned()));
    assert_eq!(gameplay(&transcript(&host, &id).await), before, "refused attaches change nothing");
    assert_eq!(handles[0].observe().await.expect("observe").revision(), head.revision());
}

/// A seat token issued anew by the operator (the create answer's tokens are
/// not kept by `seat_handles`).
async fn host_seat_token(host: &Host, id: &str, seat: &str) -> String {
    let issued = host.reissue_seat_token(&Caller::Operator, id, seat).await.expect("reissue");
    issued.get("token").and_then(Value::as_str).expect("token").to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn g4_exact_attach_retries_are_idempotent_and_receipt_chains_verify() {
    let (host, _dir) = local_host(HostOptions::default()).await;
    let policy = verification_policy();
    let created = InProcessSessionHandle::create(&host, &json(r#"{"game":"conformance/hilo","seed":3}"#), &policy)
        .await
        .expect("create");
    let id = created.session_id.clone();
    let alice = created.seat_token("alice").expect("alice").to_owned();
    let bob = created.seat_token("bob").expect("bob").to_owned();
    let attach = |token: String, request_id: &'static str| {
        let (host, id, policy) = (host.clone(), id.clone(), policy.clone());
        async move { InProcessSessionHandle::attach(&host, &token, &id, &AttachRequest::new(request_id), &policy).await }
    };
    let first = attach(alice.clone(), "r-1").await.expect("attach");
    let retry = attach(alice.clone(), "r-1").await.expect("exact retry");
    assert_eq!(first.receipt(), retry.receipt(), "the same request at the same revision returns the same receipt");
    let second = attach(bob.clone(), "r-2").await.expect("attach");
    first.act(json(r#"{"card":0}"#)).await.expect("alice");
    second.act(json(r#"{"card":0}"#)).await.expect("bob");
    let reused = attach(alice.clone(), "r-1").await;
    assert_eq!(reused.err().as_ref().and_then(SessionError::code), Some("attach_request_reused"));
    let third = attach(bob, "r-3").await.expect("attach");
    let chain: Vec<_> = [&first, &second, &third].iter().map(|h| h.receipt().expect("receipt")).collect();
    assert_eq!(chain.iter().map(|r| r.sequence).collect::<Vec<_>>(), vec![0, 1, 2]);
    let verified = verify_typed_receipt_chain(&chain);
    assert!(verified.valid, "{:?}", verified.problems);
    assert!(third.receipt().expect("receipt").revision > first.receipt().expect("receipt").revision);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn g5_one_finalize_operation_for_normal_and_evaluated_sessions() {
    let (host, _dir) = local_host(HostOptions::default()).await;
    for (policy, evaluated) in [(SessionPolicy::host_default(), false), (official_policy(), true)] {
        let (_, handles) =
            seat_handles(&host, r#"{"game":"conformance/counter","level":{"rounds":1}}"#, &policy, &["a", "b"]).await;
        handles[0].act(json(r#"{"n":1}"#)).await.expect("a");
        handles[1].act(json(r#"{"n":1}"#)).await.expect("b");
        let result = handles[0].finalize(FinalizeRequest::default()).await.expect("the one finalize");
        assert_eq!(result.outcome.get("status"), Some(&Value::from("ended")));
        assert_eq!(result.evaluation.is_some(), evaluated);
        assert!(result.replay_text().is_some_and(|r| r.contains("gaos.replay")), "replay evidence is included");
        assert_eq!(handles[0].state(), HandleState::Finalized);
        let late = handles[1].act(json(r#"{"n":1}"#)).await;
        assert!(late.is_err(), "no gameplay after finalize");
    }
    // Finalizing before the game ends is refused by the host.
    let (_, handles) =
        seat_handles(&host, r#"{"game":"conformance/counter"}"#, &SessionPolicy::host_default(), &["a", "b"]).await;
    let early = handles[0].finalize(FinalizeRequest::default()).await;
    assert_eq!(early.err().as_ref().and_then(SessionError::code), Some("not_terminal"));
    assert_eq!(handles[0].state(), HandleState::Active);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn g6_exact_finalize_retries_return_identical_bytes() {
    let (host, _dir) = local_host(HostOptions::default()).await;
    let policy = SessionPolicy::host_default();
    let (id, handles) =
        seat_handles(&host, r#"{"game":"conformance/counter","level":{"rounds":1}}"#, &policy, &["a", "b"]).await;
    handles[0].act(json(r#"{"n":2}"#)).await.expect("a");
    handles[1].act(json(r#"{"n":3}"#)).await.expect("b");
    let mut metadata = gaos_json::Map::new();
    metadata.insert("label".into(), "run-1".into());
    let request = FinalizeRequest { metadata: Some(metadata), ..FinalizeRequest::with_id("fin-1") };
    let first = handles[0].finalize(request.clone()).await.expect("finalize");
    let cached = handles[0].finalize(request.clone()).await.expect("cached");
    let other_handle = handles[1].finalize(request.clone()).await.expect("exact retry from another handle");
    let direct = host.finalize(&Caller::Operator, &id, request.to_value(&id)).await.expect("direct");
    assert_eq!(cached.canonical(), first.canonical());
    assert_eq!(other_handle.canonical(), first.canonical());
    assert_eq!(direct.body, first.canonical(), "the host's stored bytes, byte for byte");
    let conflict = handles[1].finalize(FinalizeRequest::with_id("fin-2")).await;
    assert!(
        matches!(conflict, Err(SessionError::FinalizeConflict { .. })),
        "the handle's cache refuses it: {conflict:?}"
    );
    let fresh = host_seat_token(&host, &id, "b").await;
    let adopted = InProcessSessionHandle::from_existing(
        &host,
        &fresh,
        &obj! { "sessionId" => id.clone(), "tick" => Value::Null, "binding" => gaos_json::to_value(&handles[1].binding()).expect("b") }.into(),
        &policy,
    )
    .expect("adopt");
    let conflict = adopted.finalize(FinalizeRequest::with_id("fin-2")).await;
    assert_eq!(
        conflict.err().as_ref().and_then(SessionError::code),
        Some("finalize_conflict"),
        "the host refuses it too"
    );
}

fn normalize(text: &str, id: &str) -> String {
    text.replace(id, "<session>")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn g7_paced_and_unpaced_runs_produce_identical_commands_transcripts_and_outcomes() {
    let (host, _dir) = local_host(HostOptions::default()).await;
    let mut runs = Vec::new();
    for pacing in [Pacing::Paced, Pacing::Unpaced] {
        let policy = SessionPolicy::host_default();
        let (id, handles) =
            seat_handles(&host, r#"{"game":"conformance/tictactoe","seed":11}"#, &policy, &["x", "o"]).await;
        let refs: Vec<&dyn SessionHandle> = handles.iter().map(|h| h as &dyn SessionHandle).collect();
        let drivers: Vec<Box<dyn AgentDriver>> = vec![Box::new(RandomDriver::new(21)), Box::new(RandomDriver::new(22))];
        let screen: Arc<dyn Presenter> = Arc::new(Screen::default());
        let (outcomes, result) = play(&refs, drivers, RunPolicy { pacing, ..RunPolicy::default() }, Some(screen)).await;
        let commands: Vec<Vec<Value>> = outcomes.iter().map(RunOutcome::commands).collect();
        let events = gameplay(&transcript(&host, &id).await);
        // Tictactoe is sequential, so even arrival order is fixed: compare
        // the whole gameplay transcript (minus ids and wall-clock times).
        let transcript: Vec<String> = events
            .iter()
            .skip(1) // the header carries the creation time
            .map(|e| normalize(&canonical_json(e), &id))
            .collect();
        let replay = normalize(result.replay_text().expect("replay"), &id);
        let outcome = canonical_json(&result.outcome);
        runs.push((commands, transcript, outcome, replay.lines().skip(1).map(str::to_owned).collect::<Vec<_>>()));
    }
    assert!(!runs[0].0[0].is_empty());
    assert_eq!(runs[0], runs[1], "pacing never changes commands, transcript, outcome or replay");
}

/// Counts resets; otherwise first-legal.
struct Resets(usize);

impl AgentDriver for Resets {
    fn id(&self) -> &str {
        "resets"
    }
    fn label(&self) -> &str {
        "resets"
    }
    fn reset(&mut self) {
        self.0 += 1;
    }
    fn act<'a>(&'a mut self, context: DriverContext<'a>) -> BoxFuture<'a, Result<Decision, DriverError>> {
        let action = context.legal_actions.first().cloned().ok_or(DriverError::NoLegalActions);
        Box::pin(async move { action.map(Decision::action) })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn g8_fresh_per_episode_resets_only_the_agent() {
    let (host, _dir) = local_host(HostOptions::default()).await;
    let (id, handles) = seat_handles(
        &host,
        r#"{"game":"conformance/counter","level":{"rounds":2}}"#,
        &SessionPolicy::host_default(),
        &["a", "b"],
    )
    .await;
    let fresh = RunPolicy {
        conversation: Conversation::FreshPerEpisode,
        finalize: FinalizeMode::Caller,
        ..RunPolicy::default()
    };
    let mut a = Resets(0);
    let mut b = Resets(0);
    let (ra, rb) = tokio::join!(
        run_session(&handles[0], &mut a, RunOptions::new(fresh)),
        run_session(&handles[1], &mut b, RunOptions::new(fresh)),
    );
    let (ra, rb) = (ra.expect("a"), rb.expect("b"));
    // gaos-host announces one episode per session: a reset at the start only.
    assert_eq!((a.0, b.0), (1, 1));
    let sessions: std::collections::BTreeSet<&str> =
        ra.observations.iter().chain(&rb.observations).map(Observation::session_id).collect();
    assert_eq!(sessions.into_iter().collect::<Vec<_>>(), vec![id.as_str()], "the game session identity never changes");
    let episodes: std::collections::BTreeSet<String> =
        ra.observations.iter().filter_map(|o| o.episode()).map(|e| e.id).collect();
    assert_eq!(episodes.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn g9_closing_a_handle_never_touches_authoritative_state() {
    let (host, _dir) = local_host(HostOptions::default()).await;
    let policy = SessionPolicy::host_default();
    let (id, handles) =
        seat_handles(&host, r#"{"game":"conformance/hilo","seed":5}"#, &policy, &["alice", "bob"]).await;
    handles[0].act(json(r#"{"card":1}"#)).await.expect("alice");
    let before = transcript(&host, &id).await;
    let listed = host.list(&Caller::Operator, None).await.expect("list");
    for handle in &handles {
        handle.close();
        handle.close();
        assert_eq!(handle.state(), HandleState::Closed);
    }
    assert_eq!(transcript(&host, &id).await, before, "closing appends nothing");
    assert_eq!(host.list(&Caller::Operator, None).await.expect("list"), listed, "the session is still active");
    assert!(matches!(handles[1].act(json(r#"{"card":0}"#)).await, Err(SessionError::Closed { .. })));
    // Another handle continues the same session.
    let token = host_seat_token(&host, &id, "bob").await;
    let bob = InProcessSessionHandle::attach(&host, &token, &id, &AttachRequest::new("bob-2"), &policy)
        .await
        .expect("attach");
    let answer = bob.act(json(r#"{"card":0}"#)).await.expect("bob");
    assert_eq!(answer.envelope.kind, "tick", "bob's command resolves the window alice opened");
}

/// Decides like the inner driver and cancels the run after `after` decisions.
struct InterruptAfter {
    inner: Box<dyn AgentDriver>,
    after: usize,
    made: usize,
    cancel: CancellationToken,
}

impl AgentDriver for InterruptAfter {
    fn id(&self) -> &str {
        "interrupt-after"
    }
    fn label(&self) -> &str {
        "interrupt-after"
    }
    fn act<'a>(&'a mut self, context: DriverContext<'a>) -> BoxFuture<'a, Result<Decision, DriverError>> {
        Box::pin(async move {
            if self.made == self.after {
                self.cancel.cancel();
                return std::future::pending().await;
            }
            self.made += 1;
            self.inner.act(context).await
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn g10_interrupted_runs_attach_and_continue_without_duplicate_actions() {
    let (host, _dir) = local_host(HostOptions::default()).await;
    let policy = verification_policy();
    let created =
        InProcessSessionHandle::create(&host, &json(r#"{"game":"conformance/counter","level":{"rounds":4}}"#), &policy)
            .await
            .expect("create");
    let id = created.session_id.clone();
    let a_token = created.seat_token("a").expect("a").to_owned();
    let b = InProcessSessionHandle::attach(
        &host,
        created.seat_token("b").expect("b"),
        &id,
        &AttachRequest::new("b"),
        &policy,
    )
    .await
    .expect("attach b");
    let script = |moves: &[u32]| ScriptedDriver::new(moves.iter().map(|n| obj! { "n" => *n }.into()).collect());
    // Seat a plays 2 of its 4 rounds, then its process is interrupted.
    let cancel = CancellationToken::new();
    let mut a_driver =
        InterruptAfter { inner: Box::new(script(&[1, 2, 3, 0])), after: 2, made: 0, cancel: cancel.clone() };
    let b_run = async {
        let mut driver = script(&[3, 3, 3, 3]);
        run_session(
            &b,
            &mut driver,
            RunOptions::new(RunPolicy { finalize: FinalizeMode::Caller, ..RunPolicy::default() }),
        )
        .await
    };
    let a_run = async {
        let interrupted =
            run_session(&created.handle, &mut a_driver, RunOptions::new(RunPolicy::default()).cancel(cancel)).await;
        assert_eq!(interrupted.expect_err("interrupted"), RunError::Cancelled);
        created.handle.close();
        // The seat resumes in a new process: attach at the durable head and
        // run the rest of its script.
        let resumed = InProcessSessionHandle::attach(&host, &a_token, &id, &AttachRequest::new("a-resume"), &policy)
            .await
            .expect("attach");
        assert_eq!(resumed.receipt().expect("receipt").sequence, 1, "the resume receipt follows b's");
        let mut rest = ScriptedDriver::new(vec![json(r#"{"n":3}"#), json(r#"{"n":0}"#)]);
        run_session(&resumed, &mut rest, RunOptions::new(RunPolicy::default())).await
    };
    let (a_outcome, b_outcome) = tokio::join!(a_run, b_run);
    let a_outcome = a_outcome.expect("the resumed run completes");
    b_outcome.expect("b completes");
    assert_eq!(a_outcome.decisions.len(), 2);
    let result = a_outcome.result.expect("finalized");
    let events = transcript(&host, &id).await;
    let accepted = accepted(&events);
    assert_eq!(accepted.len(), 8, "4 rounds × 2 seats, nothing duplicated: {accepted:?}");
    let a_commands: Vec<String> = accepted.iter().filter(|(s, _, _)| s == "\"a\"").map(|(_, _, c)| c.clone()).collect();
    assert_eq!(a_commands, vec!["{\"n\":1}", "{\"n\":2}", "{\"n\":3}", "{\"n\":0}"]);
    let mut ids: Vec<&String> = accepted.iter().map(|(_, id, _)| id).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 8, "every accepted submission id is unique");
    assert_eq!(result.outcome.get("status"), Some(&Value::from("ended")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lease_expiry_is_renewed_and_the_same_submission_retried_once() {
    let (host, _dir) = local_host(HostOptions { test_clock: true, ..HostOptions::default() }).await;
    let policy = SessionPolicy::host_default();
    let created = InProcessSessionHandle::create(
        &host,
        &json(r#"{"game":"conformance/hilo","seed":9,"lease":{"durationMs":5000}}"#),
        &policy,
    )
    .await
    .expect("create");
    assert!(created.handle.transport().holds_lease(), "the creator holds its claim's lease token");
    host.advance_clock(&Caller::Operator, 6_000).await.expect("clock");
    tokio::time::sleep(Duration::from_millis(50)).await;
    let answer = created.handle.act(json(r#"{"card":0}"#)).await.expect("renewed and retried");
    assert!(answer.is_pending(), "alice's card is in; bob has not played");
    let events = transcript(&host, &created.session_id).await;
    let lease_events: Vec<String> = events
        .iter()
        .filter_map(|e| e.get("record").and_then(|r| r.get("event")).and_then(Value::as_str).map(str::to_owned))
        .collect();
    assert!(lease_events.iter().any(|e| e == "lease_expired"), "{lease_events:?}");
    assert!(lease_events.iter().any(|e| e == "lease_renewed"), "recovery is observable: {lease_events:?}");
    assert_eq!(accepted(&events).len(), 1, "the retried submission was accepted once");
}

/// A decorator that counts the calls a runner makes (products may wrap a
/// handle like this; the runner cannot tell).
struct Counting<'a> {
    inner: &'a dyn SessionHandle,
    observes: AtomicUsize,
    waits: AtomicUsize,
}

impl SessionHandle for Counting<'_> {
    fn session_id(&self) -> &str {
        self.inner.session_id()
    }
    fn seat(&self) -> &str {
        self.inner.seat()
    }
    fn policy(&self) -> &SessionPolicy {
        self.inner.policy()
    }
    fn state(&self) -> HandleState {
        self.inner.state()
    }
    fn binding(&self) -> SessionBinding {
        self.inner.binding()
    }
    fn receipt(&self) -> Option<gaos_runner::AttachReceipt> {
        self.inner.receipt()
    }
    fn observe(&self) -> BoxFuture<'_, Result<Observation, SessionError>> {
        self.observes.fetch_add(1, Ordering::SeqCst);
        self.inner.observe()
    }
    fn act(&self, command: Value) -> BoxFuture<'_, Result<Observation, SessionError>> {
        self.inner.act(command)
    }
    fn finalize(&self, request: FinalizeRequest) -> BoxFuture<'_, Result<SessionResult, SessionError>> {
        self.inner.finalize(request)
    }
    fn close(&self) {
        self.inner.close()
    }
    fn wait_for_change(&self, after: u64, attempt: u32) -> BoxFuture<'_, Result<(), SessionError>> {
        self.waits.fetch_add(1, Ordering::SeqCst);
        self.inner.wait_for_change(after, attempt)
    }
}

/// Thinks for a while before each decision.
struct Slow(Duration);

impl AgentDriver for Slow {
    fn id(&self) -> &str {
        "slow"
    }
    fn label(&self) -> &str {
        "slow"
    }
    fn act<'a>(&'a mut self, context: DriverContext<'a>) -> BoxFuture<'a, Result<Decision, DriverError>> {
        let action = context.legal_actions.first().cloned().ok_or(DriverError::NoLegalActions);
        let delay = self.0;
        Box::pin(async move {
            tokio::time::sleep(delay).await;
            action.map(Decision::action)
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_seat_sleeps_on_the_change_feed_instead_of_polling() {
    let (host, _dir) = local_host(HostOptions::default()).await;
    let (_, handles) =
        seat_handles(&host, r#"{"game":"conformance/tictactoe"}"#, &SessionPolicy::host_default(), &["x", "o"]).await;
    let o = Counting { inner: &handles[1], observes: AtomicUsize::new(0), waits: AtomicUsize::new(0) };
    let caller = RunPolicy { finalize: FinalizeMode::Caller, ..RunPolicy::default() };
    let (mut slow, mut first) = (Slow(Duration::from_millis(150)), FirstLegalDriver::new());
    let (x, o_run) = tokio::join!(
        run_session(&handles[0], &mut slow, RunOptions::new(caller)),
        run_session(&o, &mut first, RunOptions::new(caller)),
    );
    let (x, o_run) = (x.expect("x"), o_run.expect("o"));
    let turns = x.decisions.len() + o_run.decisions.len();
    assert!(turns >= 5);
    // x thinks ~150 ms per move; a busy poll would observe thousands of
    // times. On the change feed o looks about once per x move.
    let observes = o.observes.load(Ordering::SeqCst);
    assert!(observes <= 4 * x.decisions.len() + 4, "o observed {observes} times for {} x moves", x.decisions.len());
    assert!(o.waits.load(Ordering::SeqCst) >= x.decisions.len() - 1);
}

/// A chat-completions endpoint that always calls `choose_action` with the
/// last legal index it was offered (read back from the tool schema), after
/// one illegal answer per decision.
async fn fake_provider() -> String {
    use axum::body::Bytes;
    use axum::routing::post;
    let turns = Arc::new(AtomicUsize::new(0));
    let app = axum::Router::new().route(
        "/v1/chat/completions",
        post(move |body: Bytes| {
            let turns = Arc::clone(&turns);
            async move {
                let request = gaos_json::parse_bytes(&body).expect("JSON");
                let max = request
                    .get("tools")
                    .and_then(|t| t.as_array())
                    .and_then(|t| t.first())
                    .and_then(|t| t.get("function"))
                    .and_then(|f| f.get("parameters"))
                    .and_then(|p| p.get("properties"))
                    .and_then(|p| p.get("index"))
                    .and_then(|i| i.get("maximum"))
                    .and_then(Value::as_u64)
                    .expect("an index tool");
                let n = turns.fetch_add(1, Ordering::SeqCst);
                let index = if n.is_multiple_of(2) { max + 1 } else { max };
                let arguments = format!("{{\"index\":{index}}}");
                let call = obj! { "id" => format!("call-{n}"), "type" => "function",
                "function" => obj! { "name" => "choose_action", "arguments" => arguments } };
                let message =
                    obj! { "role" => "assistant", "content" => Value::Null, "tool_calls" => vec![Value::from(call)] };
                let answer = obj! {
                    "choices" => vec![Value::from(obj! { "index" => 0u32, "message" => message })],
                    "usage" => obj! { "prompt_tokens" => 50u32, "completion_tokens" => 5u32 }
                };
                canonical_json(&answer.into())
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let address = listener.local_addr().expect("address");
    tokio::spawn(async move { axum::serve(listener, app).await.expect("serve") });
    format!("http://{address}/v1")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_openai_driver_plays_a_whole_match_through_the_host() {
    use gaos_runner::drivers::{OpenAiConfig, OpenAiDriver};
    let base_url = fake_provider().await;
    let (host, _dir) = local_host(HostOptions::default()).await;
    let (_, handles) = seat_handles(
        &host,
        r#"{"game":"conformance/counter","level":{"rounds":3}}"#,
        &SessionPolicy::host_default(),
        &["a", "b"],
    )
    .await;
    let config = OpenAiConfig { base_url, model: "fake".into(), api_key: Some("k".into()), ..OpenAiConfig::default() };
    let drivers: Vec<Box<dyn AgentDriver>> =
        vec![Box::new(OpenAiDriver::new(config).expect("driver")), Box::new(FirstLegalDriver::new())];
    let refs: Vec<&dyn SessionHandle> = handles.iter().map(|h| h as &dyn SessionHandle).collect();
    let (outcomes, result) = play(&refs, drivers, RunPolicy::default(), None).await;
    // Counter offers {"n":0..3}: the model's re-asked answer is always the last, n = 3.
    assert_eq!(outcomes[0].commands(), vec![json(r#"{"n":3}"#); 3]);
    let usage = outcomes[0].decisions.iter().filter_map(|d| d.usage).fold(gaos_runner::Usage::default(), |a, b| a + b);
    assert_eq!(usage, gaos_runner::Usage { input_tokens: 300, output_tokens: 30 }, "two requests per decision");
    assert_eq!(result.outcome.get("status"), Some(&Value::from("ended")));
}

/// A finalized session leaves the host's session map; once the last handle
/// is gone its actor must stop (not keep polling closed channels), so
/// thousands of finished benchmark episodes cost nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finalized_sessions_actor_stops_when_its_handles_are_dropped() {
    use std::sync::atomic::Ordering::Relaxed;
    let (host, _dir) = local_host(HostOptions::default()).await;
    let policy = SessionPolicy::host_default();
    for _ in 0..3 {
        let (_, handles) =
            seat_handles(&host, r#"{"game":"conformance/counter","level":{"rounds":1}}"#, &policy, &["a", "b"]).await;
        handles[0].act(json(r#"{"n":1}"#)).await.expect("a");
        handles[1].act(json(r#"{"n":1}"#)).await.expect("b");
        handles[0].finalize(FinalizeRequest::default()).await.expect("finalize");
    }
    let mut live = host.metrics().live_sessions.load(Relaxed);
    for _ in 0..200 {
        if live == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
        live = host.metrics().live_sessions.load(Relaxed);
    }
    assert_eq!(live, 0, "every finalized session's actor has stopped");
}
