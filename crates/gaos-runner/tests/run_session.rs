//! `SessionHandle` state machine and `run_session` policies, against a toy
//! in-memory host (`ToyHost`): one seat, legal actions `{"n":0..2}`, the game
//! ends after a set number of accepted commands, optional episodes and
//! optional "other seat still thinking" pending answers. End-to-end tests
//! through the real host live in gaos-host and gaos-cli.

use gaos_runner::ErrorCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use gaos_json::{Map, Value, canonical_json, obj};
use gaos_runner::drivers::{FirstLegalDriver, RandomDriver, ScriptedDriver};
use gaos_runner::receipts::{AttachReceipt, ReceiptBody};
use gaos_runner::{
    AgentDriver, BoxFuture, CancellationToken, CommandSubmission, Conversation, Decision, DriverContext, DriverError,
    EpisodeIdentity, FinalizeMode, FinalizeRequest, HandleState, LifecycleHandle, Observation, Pacing, Presenter,
    RunError, RunEvents, RunOptions, RunPolicy, RunStatus, SessionBinding, SessionError, SessionHandle, SessionPolicy,
    SessionResult, SessionTransport, run_session,
};

const SESSION: &str = "s-toy";
const SEAT: &str = "player";

/// The authoritative state of the toy host.
#[derive(Default)]
struct ToyState {
    /// Accepted commands.
    commands: Vec<Value>,
    /// Accepted submission ids.
    submission_ids: Vec<String>,
    /// Answered finalize request (canonical) and result.
    finalized: Option<(String, Value)>,
    /// Pending answers still to give after the last submission.
    pending_left: usize,
}

struct ToyHost {
    steps: usize,
    episode_every: Option<usize>,
    /// After each accepted command, this many observes answer "pending,
    /// awaiting another seat" before the window resolves.
    pending_after_act: usize,
    /// Give those answers as resolved envelopes whose view says it is
    /// another seat's turn (`participation.sequential.activeSeat`), not pending.
    other_turn: bool,
    state: Mutex<ToyState>,
    observes: AtomicUsize,
    submits: AtomicUsize,
    finalizes: AtomicUsize,
    waits: AtomicUsize,
}

impl ToyHost {
    fn new(steps: usize) -> Arc<ToyHost> {
        Self::with(steps, None, 0)
    }

    fn with(steps: usize, episode_every: Option<usize>, pending_after_act: usize) -> Arc<ToyHost> {
        Arc::new(ToyHost {
            steps,
            episode_every,
            pending_after_act,
            other_turn: false,
            state: Mutex::new(ToyState::default()),
            observes: AtomicUsize::new(0),
            submits: AtomicUsize::new(0),
            finalizes: AtomicUsize::new(0),
            waits: AtomicUsize::new(0),
        })
    }

    fn state(&self) -> std::sync::MutexGuard<'_, ToyState> {
        self.state.lock().expect("toy state")
    }

    fn envelope(&self, state: &ToyState) -> Value {
        let n = state.commands.len();
        let done = n >= self.steps;
        let legal: Vec<Value> = if done { Vec::new() } else { (0..3u32).map(|k| obj! { "n" => k }.into()).collect() };
        let total: u64 = state.commands.iter().filter_map(|c| c.get("n").and_then(Value::as_u64)).sum();
        let waiting = state.pending_left > 0 && !done;
        let active = if waiting { "other" } else { SEAT };
        let tick = obj! {
            "participation" => obj! { "mode" => "sequential", "activeSeat" => active },
            "status" => if done { "ended" } else { "playing" },
            "moves" => n,
            "total" => total,
            "legalActions" => legal,
            "done" => done
        };
        let mut ext = Map::new();
        let episode = self.episode_every.map_or(0, |e| (n.min(self.steps.saturating_sub(1))) / e);
        ext.insert("gaos.session.episode".into(), obj! { "id" => format!("{SESSION}-ep"), "index" => episode }.into());
        if done {
            ext.insert("gaos.session.finalization".into(), obj! { "status" => "terminal" }.into());
        }
        let mut env = obj! {
            "protocol" => "gaos.ticks",
            "protocolVersion" => "1.0",
            "kind" => "tick",
            "sessionId" => SESSION,
            "tickId" => format!("{SESSION}:{n}"),
            "revision" => n,
            "tick" => tick,
            "extensions" => ext
        };
        if waiting && !self.other_turn {
            env.insert("kind".into(), "pending".into());
            env.insert("submittedParticipants".into(), Value::Array(vec![]));
            env.insert("awaitingParticipants".into(), Value::Array(vec!["other".into()]));
        }
        Value::Object(env)
    }
}

/// The transport of one handle: the toy host, shared.
#[derive(Clone)]
struct Toy(Arc<ToyHost>);

impl SessionTransport for Toy {
    fn observe<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<Observation, SessionError>> {
        Box::pin(async move {
            self.0.observes.fetch_add(1, Ordering::SeqCst);
            let mut state = self.0.state();
            let value = self.0.envelope(&state);
            state.pending_left = state.pending_left.saturating_sub(1);
            Observation::from_value(&value, Some(session_id))
        })
    }

    fn submit<'a>(&'a self, submission: &'a CommandSubmission) -> BoxFuture<'a, Result<Observation, SessionError>> {
        Box::pin(async move {
            self.0.submits.fetch_add(1, Ordering::SeqCst);
            let mut state = self.0.state();
            if state.finalized.is_some() {
                return Err(SessionError::host(409, ErrorCode::SessionFinalized, "finalized"));
            }
            if state.commands.len() >= self.0.steps {
                return Err(SessionError::host(409, ErrorCode::Terminal, "the game ended"));
            }
            if submission.revision != state.commands.len() as f64 {
                return Err(SessionError::host(409, ErrorCode::StaleTick, "stale"));
            }
            if submission.command.as_ref().and_then(|c| c.get("n")).and_then(Value::as_u64).is_some_and(|n| n > 2) {
                return Err(SessionError::host(422, ErrorCode::IllegalCommand, "n must be 0, 1 or 2"));
            }
            let id = submission.submission_id.clone().expect("the handle sends an id");
            state.submission_ids.push(id);
            state.commands.push(submission.command.clone().expect("a command"));
            state.pending_left = self.0.pending_after_act;
            let value = self.0.envelope(&state);
            Observation::from_value(&value, Some(&submission.session_id))
        })
    }

    fn finalize<'a>(&'a self, session_id: &'a str, request: &'a Value) -> BoxFuture<'a, Result<Value, SessionError>> {
        Box::pin(async move {
            self.0.finalizes.fetch_add(1, Ordering::SeqCst);
            let mut state = self.0.state();
            let canonical = canonical_json(request);
            if let Some((stored, result)) = &state.finalized {
                if *stored == canonical {
                    return Ok(result.clone());
                }
                return Err(SessionError::host(409, ErrorCode::FinalizeConflict, "other request"));
            }
            if state.commands.len() < self.0.steps {
                return Err(SessionError::host(409, ErrorCode::NotTerminal, "not yet"));
            }
            let outcome = obj! { "moves" => state.commands.len(), "commands" => Value::Array(state.commands.clone()) };
            let result: Value =
                obj! { "sessionId" => session_id, "status" => "finalized", "outcome" => outcome }.into();
            state.finalized = Some((canonical, result.clone()));
            Ok(result)
        })
    }

    fn wait_for_change<'a>(
        &'a self,
        _session_id: &'a str,
        _after_revision: u64,
        _attempt: u32,
    ) -> BoxFuture<'a, Result<(), SessionError>> {
        Box::pin(async move {
            self.0.waits.fetch_add(1, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(1)).await;
            Ok(())
        })
    }
}

fn handle(host: &Arc<ToyHost>) -> LifecycleHandle<Toy> {
    let revision = host.state().commands.len() as u64;
    LifecycleHandle::new(
        Toy(Arc::clone(host)),
        SessionBinding::new(SESSION, revision, SEAT),
        SessionPolicy::host_default(),
        None,
        false,
    )
    .expect("a valid head")
}

fn unpaced() -> RunPolicy {
    RunPolicy::default()
}

fn paced() -> RunPolicy {
    RunPolicy { pacing: Pacing::Paced, ..RunPolicy::default() }
}

#[tokio::test]
async fn handle_moves_active_terminal_finalized_closed() {
    let host = ToyHost::new(2);
    let h = handle(&host);
    assert_eq!(h.state(), HandleState::Active);
    let first = h.observe().await.expect("observe");
    assert_eq!(first.revision(), 0);
    h.act(obj! { "n" => 1u32 }.into()).await.expect("act");
    let last = h.act(obj! { "n" => 2u32 }.into()).await.expect("act");
    assert!(last.is_done());
    assert_eq!(h.state(), HandleState::Terminal, "the finalization extension turns the handle terminal");
    assert_eq!(h.binding().revision, 2, "each answer's cursor becomes the binding");

    let refused = h.act(obj! { "n" => 0u32 }.into()).await;
    assert!(matches!(refused, Err(SessionError::InvalidState { operation: "act", state: HandleState::Terminal })));
    h.observe().await.expect("terminal handles still observe");

    let result = h.finalize(FinalizeRequest::default()).await.expect("finalize");
    assert_eq!(h.state(), HandleState::Finalized);
    assert_eq!(host.finalizes.load(Ordering::SeqCst), 1);
    let again = h.finalize(FinalizeRequest::default()).await.expect("exact repeat");
    assert_eq!(again, result);
    assert_eq!(again.canonical(), result.canonical());
    assert_eq!(host.finalizes.load(Ordering::SeqCst), 1, "an exact repeat sends no request");
    let conflict = h.finalize(FinalizeRequest::with_id("other")).await;
    assert!(matches!(conflict, Err(SessionError::FinalizeConflict { .. })), "{conflict:?}");
    assert_eq!(host.finalizes.load(Ordering::SeqCst), 1);
    let observe = h.observe().await;
    assert!(matches!(observe, Err(SessionError::InvalidState { operation: "observe", .. })), "{observe:?}");

    h.close();
    h.close();
    assert_eq!(h.state(), HandleState::Closed);
    assert!(matches!(h.observe().await, Err(SessionError::Closed { .. })));
    assert!(matches!(h.finalize(FinalizeRequest::default()).await, Err(SessionError::Closed { .. })));
    assert!(matches!(h.act(Value::Null).await, Err(SessionError::Closed { .. })));
    assert_eq!(
        host.state().submission_ids,
        vec![format!("player:{SESSION}:0:0"), format!("player:{SESSION}:1:0")],
        "default submission ids are <seat>:<tickId>:<n>"
    );
}

#[tokio::test]
async fn submission_ids_count_per_tick_like_the_reference() {
    // A host that keeps the cursor (pending) gets n = 0, 1, ... at one tick.
    struct Stuck(Arc<Mutex<Vec<String>>>);
    impl SessionTransport for Stuck {
        fn observe<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Result<Observation, SessionError>> {
            Box::pin(async { Err(SessionError::Transport("unused".into())) })
        }
        fn submit<'a>(&'a self, s: &'a CommandSubmission) -> BoxFuture<'a, Result<Observation, SessionError>> {
            self.0.lock().expect("ids").push(s.submission_id.clone().expect("id"));
            Box::pin(async { Err(SessionError::host(422, ErrorCode::IllegalCommand, "no")) })
        }
        fn finalize<'a>(&'a self, _: &'a str, _: &'a Value) -> BoxFuture<'a, Result<Value, SessionError>> {
            Box::pin(async { Err(SessionError::Transport("unused".into())) })
        }
    }
    let ids = Arc::new(Mutex::new(Vec::new()));
    let h = LifecycleHandle::new(
        Stuck(Arc::clone(&ids)),
        SessionBinding::new("s-1", 4, "a"),
        SessionPolicy::host_default(),
        None,
        false,
    )
    .expect("head");
    for _ in 0..3 {
        let e = h.act(Value::Null).await.expect_err("refused");
        assert!(e.is_illegal_action());
    }
    assert_eq!(*ids.lock().expect("ids"), vec!["a:s-1:4:0", "a:s-1:4:1", "a:s-1:4:2"]);
}

#[tokio::test]
async fn g9_closing_a_handle_never_touches_authoritative_state() {
    let host = ToyHost::new(3);
    let h = handle(&host);
    h.observe().await.expect("observe");
    h.act(obj! { "n" => 1u32 }.into()).await.expect("act");
    let before = (host.state().commands.clone(), host.submits.load(Ordering::SeqCst));
    let requests_before = host.observes.load(Ordering::SeqCst) + host.finalizes.load(Ordering::SeqCst);
    h.close();
    assert_eq!(h.state(), HandleState::Closed);
    assert_eq!((host.state().commands.clone(), host.submits.load(Ordering::SeqCst)), before);
    assert_eq!(host.observes.load(Ordering::SeqCst) + host.finalizes.load(Ordering::SeqCst), requests_before);
    assert!(host.state().finalized.is_none(), "close never finalizes");
    // The session is still there for the next handle.
    let next = handle(&host);
    let outcome = run_session(&next, &mut FirstLegalDriver::new(), RunOptions::new(unpaced())).await.expect("run");
    assert_eq!(outcome.decisions.len(), 2, "the next handle continues where the first stopped");
    assert_eq!(host.state().commands.len(), 3);
}

fn existing_start(revision: u64, extensions: Option<Value>) -> Value {
    let mut m = obj! {
        "sessionId" => SESSION,
        "tick" => obj! { "status" => "playing", "legalActions" => vec![Value::from(obj! { "n" => 0u32 })], "done" => false },
        "binding" => gaos_json::to_value(&SessionBinding::new(SESSION, revision, SEAT)).expect("binding")
    };
    if let Some(ext) = extensions {
        m.insert("extensions".into(), ext);
    }
    Value::Object(m)
}

fn receipt(revision: u64) -> AttachReceipt {
    AttachReceipt::new(ReceiptBody::new(SESSION, "attach-1", 0, revision, "t", "s")).expect("receipt")
}

#[tokio::test]
async fn adopts_an_existing_durable_head_and_consumes_its_initial_tick_without_a_request() {
    let host = ToyHost::new(2);
    let policy = SessionPolicy::host_default();
    // A SessionAttach projection: tick + binding + receipt at the same revision.
    let mut existing = existing_start(0, Some(obj! { "x.product" => 1u32 }.into()));
    existing.as_object_mut().expect("object").insert("receipt".into(), receipt(0).to_value().expect("json"));
    let h = LifecycleHandle::from_existing(Toy(Arc::clone(&host)), &existing, &policy).expect("adopted");
    assert_eq!((h.session_id(), h.seat(), h.state()), (SESSION, SEAT, HandleState::Active));
    assert_eq!(h.receipt(), Some(receipt(0)));
    let first = h.observe().await.expect("observe");
    assert_eq!(host.observes.load(Ordering::SeqCst), 0, "the adopted tick is consumed without a request");
    assert_eq!(first.envelope.kind, "tick", "projections are resolved heads");
    assert_eq!(first.tick_id(), format!("{SESSION}:0"));
    assert_eq!(first.extensions().and_then(|e| e.get("x.product")), Some(&Value::from(1u32)));
    h.observe().await.expect("observe");
    assert_eq!(host.observes.load(Ordering::SeqCst), 1, "later observes ask the host");

    // A full initialTick envelope (pending allowed) with attachReceipt.
    let pending: Value = obj! {
        "protocol" => "gaos.ticks", "protocolVersion" => "1.0", "kind" => "pending", "sessionId" => SESSION,
        "tickId" => format!("{SESSION}:0"), "revision" => 0u32, "tick" => Value::Null,
        "submittedParticipants" => vec![Value::from(SEAT)], "awaitingParticipants" => vec![Value::from("other")]
    }
    .into();
    let existing: Value = obj! {
        "sessionId" => SESSION,
        "initialTick" => pending,
        "binding" => gaos_json::to_value(&SessionBinding::new(SESSION, 0, SEAT)).expect("binding"),
        "attachReceipt" => receipt(0).to_value().expect("json")
    }
    .into();
    let h = LifecycleHandle::from_existing(Toy(Arc::clone(&host)), &existing, &policy).expect("adopted");
    assert!(h.observe().await.expect("observe").is_pending());
}

#[test]
fn validates_adopted_identity_and_initializes_terminal_status_from_the_tick() {
    let host = ToyHost::new(2);
    let policy = SessionPolicy::host_default();
    let adopt = |existing: &Value| LifecycleHandle::from_existing(Toy(Arc::clone(&host)), existing, &policy);
    let refuse = |existing: Value, needle: &str| match adopt(&existing) {
        Err(SessionError::InvalidExisting(why)) => assert!(why.contains(needle), "{why:?} should mention {needle:?}"),
        other => panic!("expected InvalidExisting({needle}), got {other:?}"),
    };

    refuse(Value::from("nope"), "object");
    let mut e = existing_start(0, None);
    e.as_object_mut().expect("object").insert("sessionId".into(), " ".into());
    refuse(e, "sessionId");
    let mut e = existing_start(0, None);
    e.as_object_mut().expect("object").insert("sessionId".into(), "s-other".into());
    refuse(e, "one session");
    let mut e = existing_start(0, None);
    e.as_object_mut().expect("object").remove("tick");
    refuse(e, "initialTick or tick");
    let mut e = existing_start(0, None);
    e.as_object_mut().expect("object").insert("binding".into(), obj! { "sessionId" => SESSION }.into());
    refuse(e, "binding");
    // A receipt from another revision, another session, or with a bad digest.
    let mut e = existing_start(3, None);
    e.as_object_mut().expect("object").insert("receipt".into(), receipt(2).to_value().expect("json"));
    refuse(e, "revision 2");
    let mut e = existing_start(0, None);
    let mut forged = receipt(0).to_value().expect("json");
    forged.as_object_mut().expect("object").insert("stateDigest".into(), "forged".into());
    e.as_object_mut().expect("object").insert("receipt".into(), forged);
    refuse(e, "does not match");
    // An initialTick whose cursor is not the binding's.
    let tick: Value = obj! {
        "protocol" => "gaos.ticks", "protocolVersion" => "1.0", "kind" => "tick", "sessionId" => SESSION,
        "tickId" => format!("{SESSION}:5"), "revision" => 5u32, "tick" => Value::Null
    }
    .into();
    let e: Value = obj! {
        "sessionId" => SESSION, "initialTick" => tick,
        "binding" => gaos_json::to_value(&SessionBinding::new(SESSION, 4, SEAT)).expect("binding")
    }
    .into();
    refuse(e, "cursor");

    // A terminal finalization extension starts the handle terminal.
    let e = existing_start(2, Some(obj! { "gaos.session.finalization" => obj! { "status" => "terminal" } }.into()));
    let h = adopt(&e).expect("adopted");
    assert_eq!(h.state(), HandleState::Terminal);
}

/// Counts resets; picks the first legal action.
struct CountingDriver {
    resets: usize,
}

impl AgentDriver for CountingDriver {
    fn id(&self) -> &str {
        "counting"
    }
    fn label(&self) -> &str {
        "counting"
    }
    fn reset(&mut self) {
        self.resets += 1;
    }
    fn act<'a>(&'a mut self, context: DriverContext<'a>) -> BoxFuture<'a, Result<Decision, DriverError>> {
        let action = context.legal_actions.last().cloned().ok_or(DriverError::NoLegalActions);
        Box::pin(async move { action.map(Decision::action) })
    }
}

#[derive(Default)]
struct Recorder {
    attached: usize,
    observations: Vec<u64>,
    decisions: Vec<Value>,
    episodes: Vec<EpisodeIdentity>,
    finalized: Vec<SessionResult>,
}

impl RunEvents for Recorder {
    fn on_attached(&mut self, _receipt: &AttachReceipt) {
        self.attached += 1;
    }
    fn on_observation(&mut self, observation: &Observation) {
        self.observations.push(observation.revision());
    }
    fn on_decision(&mut self, decision: &Decision) {
        self.decisions.push(decision.action.clone());
    }
    fn on_episode_change(&mut self, episode: &EpisodeIdentity) {
        self.episodes.push(episode.clone());
    }
    fn on_finalized(&mut self, result: &SessionResult) {
        self.finalized.push(result.clone());
    }
}

#[tokio::test]
async fn g8_fresh_per_episode_resets_only_the_agent() {
    for (conversation, expected_resets) in [(Conversation::FreshPerEpisode, 3), (Conversation::Continuous, 0)] {
        let host = ToyHost::with(6, Some(2), 0);
        let h = handle(&host);
        let mut driver = CountingDriver { resets: 0 };
        let mut events = Recorder::default();
        let policy = RunPolicy { conversation, ..RunPolicy::default() };
        let outcome =
            run_session(&h, &mut driver, RunOptions::new(policy).events(&mut events)).await.expect("the run completes");
        // Episodes 0, 1, 2: a reset at the start and at the two transitions.
        assert_eq!(driver.resets, expected_resets, "{conversation:?}");
        let indexes: Vec<Option<u64>> = events.episodes.iter().map(|e| e.index).collect();
        assert_eq!(indexes, vec![Some(0), Some(1), Some(2)]);
        assert_eq!(outcome.status, RunStatus::Finalized);
        assert!(outcome.observations.iter().all(|o| o.session_id() == SESSION), "one authoritative session");
        assert_eq!(host.state().commands.len(), 6);
        assert_eq!(events.decisions.len(), 6);
        assert_eq!(events.finalized.len(), 1);
        assert_eq!(Some(&events.finalized[0]), outcome.result.as_ref());
    }
}

/// Sleeps a little per observation; counts what it saw and the most
/// presentations ever in flight; fails at observation `fail_at`, if set.
struct SlowPresenter {
    delay: Duration,
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
    seen: Mutex<Vec<u64>>,
    fail_at: Option<u64>,
}

impl SlowPresenter {
    fn new(delay_ms: u64, fail_at: Option<u64>) -> Arc<SlowPresenter> {
        Arc::new(SlowPresenter {
            delay: Duration::from_millis(delay_ms),
            in_flight: AtomicUsize::new(0),
            max_in_flight: AtomicUsize::new(0),
            seen: Mutex::new(Vec::new()),
            fail_at,
        })
    }
}

impl Presenter for SlowPresenter {
    fn present<'a>(
        &'a self,
        observation: &'a Observation,
        _cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
            self.max_in_flight.fetch_max(now, Ordering::SeqCst);
            tokio::time::sleep(self.delay).await;
            self.in_flight.fetch_sub(1, Ordering::SeqCst);
            self.seen.lock().expect("seen").push(observation.revision());
            if self.fail_at == Some(observation.revision()) {
                return Err(format!("the screen broke at revision {}", observation.revision()));
            }
            Ok(())
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn g7_paced_and_unpaced_runs_submit_identical_commands_and_outcomes() {
    let mut runs = Vec::new();
    for policy in [paced(), unpaced()] {
        let host = ToyHost::with(8, Some(3), 1);
        let h = handle(&host);
        let presenter = SlowPresenter::new(3, None);
        let outcome = run_session(&h, &mut RandomDriver::new(42), RunOptions::new(policy).presenter(presenter.clone()))
            .await
            .expect("the run completes");
        let mut seen = presenter.seen.lock().expect("seen").clone();
        seen.sort_unstable();
        let revisions: Vec<u64> = outcome.observations.iter().map(Observation::revision).collect();
        let mut sorted = revisions.clone();
        sorted.sort_unstable();
        assert_eq!(seen, sorted, "{policy:?}: every observation is presented once");
        let state = host.state();
        runs.push((
            outcome.commands(),
            state.commands.clone(),
            state.submission_ids.clone(),
            outcome.result.expect("finalized").canonical(),
            revisions,
        ));
    }
    assert_eq!(runs[0], runs[1], "pacing never changes commands, transcript, outcome or observations");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unpaced_presentation_is_bounded_and_background_failures_surface() {
    let host = ToyHost::new(12);
    let h = handle(&host);
    let presenter = SlowPresenter::new(20, None);
    let policy = RunPolicy { max_pending_presentations: 2, ..RunPolicy::default() };
    run_session(&h, &mut FirstLegalDriver::new(), RunOptions::new(policy).presenter(presenter.clone()))
        .await
        .expect("the run completes");
    assert_eq!(presenter.max_in_flight.load(Ordering::SeqCst), 2, "at most 2 presentations in flight");
    assert_eq!(presenter.seen.lock().expect("seen").len(), 13, "the run awaits every presentation at the end");

    // A failing background presentation stops the run.
    let host = ToyHost::new(12);
    let h = handle(&host);
    let presenter = SlowPresenter::new(1, Some(2));
    let error = run_session(&h, &mut FirstLegalDriver::new(), RunOptions::new(unpaced()).presenter(presenter))
        .await
        .expect_err("the failure surfaces");
    assert!(matches!(&error, RunError::Presentation(m) if m.contains("revision 2")), "{error}");
    assert!(host.state().finalized.is_none());

    // A paced failure stops it at once.
    let host = ToyHost::new(12);
    let h = handle(&host);
    let presenter = SlowPresenter::new(1, Some(0));
    let error = run_session(&h, &mut FirstLegalDriver::new(), RunOptions::new(paced()).presenter(presenter))
        .await
        .expect_err("the failure surfaces");
    assert!(matches!(error, RunError::Presentation(_)));
    assert!(host.state().commands.is_empty(), "paced: nothing was played after the failed presentation");
}

/// Never decides; the run must be cancelled out of it.
struct Thinking;

impl AgentDriver for Thinking {
    fn id(&self) -> &str {
        "thinking"
    }
    fn label(&self) -> &str {
        "thinking"
    }
    fn act<'a>(&'a mut self, _context: DriverContext<'a>) -> BoxFuture<'a, Result<Decision, DriverError>> {
        Box::pin(std::future::pending())
    }
}

#[tokio::test]
async fn cancellation_stops_the_run_and_leaves_the_session_untouched() {
    let host = ToyHost::new(5);
    let h = handle(&host);
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(20)).await;
        trigger.cancel();
    });
    let error = run_session(&h, &mut Thinking, RunOptions::new(unpaced()).cancel(cancel)).await.expect_err("cancelled");
    assert_eq!(error, RunError::Cancelled);
    assert_eq!(h.state(), HandleState::Active, "cancellation is not a lifecycle step");
    assert!(host.state().commands.is_empty());

    // Already cancelled: nothing is even observed.
    let cancel = CancellationToken::new();
    cancel.cancel();
    let before = host.observes.load(Ordering::SeqCst);
    let error = run_session(&h, &mut FirstLegalDriver::new(), RunOptions::new(unpaced()).cancel(cancel))
        .await
        .expect_err("cancelled");
    assert_eq!(error, RunError::Cancelled);
    assert_eq!(host.observes.load(Ordering::SeqCst), before);
}

#[tokio::test]
async fn caller_finalization_returns_terminal_and_leaves_finalize_to_the_caller() {
    let host = ToyHost::new(3);
    let h = handle(&host);
    let policy = RunPolicy { finalize: FinalizeMode::Caller, ..RunPolicy::default() };
    let outcome = run_session(&h, &mut FirstLegalDriver::new(), RunOptions::new(policy)).await.expect("run");
    assert_eq!((outcome.status, outcome.result.is_none()), (RunStatus::Terminal, true));
    assert_eq!(host.finalizes.load(Ordering::SeqCst), 0);
    assert_eq!(h.state(), HandleState::Terminal);
    assert!(outcome.final_observation().expect("observations").is_done());
    let result = h.finalize(FinalizeRequest::default()).await.expect("finalize");
    assert_eq!(result.outcome.get("moves"), Some(&Value::from(3u32)));
    // A run on a terminal handle finalizes without deciding anything.
    let host = ToyHost::new(1);
    let h = handle(&host);
    h.act(obj! { "n" => 0u32 }.into()).await.expect("act");
    let outcome = run_session(&h, &mut Thinking, RunOptions::new(unpaced())).await.expect("run");
    assert_eq!((outcome.status, outcome.decisions.len()), (RunStatus::Finalized, 0));
    // A finalized handle cannot run.
    let error = run_session(&h, &mut Thinking, RunOptions::new(unpaced())).await.expect_err("finalized");
    assert_eq!(error, RunError::InvalidState(HandleState::Finalized));
}

#[tokio::test]
async fn a_waiting_seat_waits_for_change_instead_of_busy_polling() {
    // After each command the other seat "thinks" for 3 observes.
    let host = ToyHost::with(4, None, 3);
    let h = handle(&host);
    let mut events = Recorder::default();
    let outcome = run_session(&h, &mut FirstLegalDriver::new(), RunOptions::new(unpaced()).events(&mut events))
        .await
        .expect("the run completes");
    assert_eq!(outcome.decisions.len(), 4);
    // Per command but the last (which ends the game): a pending act
    // answer, 3 pending observes and the resolved one; each observe after
    // the first follows exactly one wait.
    let waits = host.waits.load(Ordering::SeqCst);
    let observes = host.observes.load(Ordering::SeqCst);
    assert_eq!(waits, observes - 1, "every re-observe follows a wait (the first observe needs none)");
    assert_eq!(waits, 3 * 4);
    // Identical pending observations are reported once.
    let mut dedup = events.observations.clone();
    dedup.dedup();
    assert_eq!(events.observations.len(), outcome.observations.len());
    assert!(outcome.observations.windows(2).all(|w| w[0] != w[1]), "no observation is repeated");
    assert!(dedup.len() <= events.observations.len());

    // The same with resolved answers whose view says it is the other seat's
    // turn: the runner waits instead of asking the driver.
    let host =
        Arc::new(ToyHost { other_turn: true, ..Arc::into_inner(ToyHost::with(4, None, 3)).expect("sole owner") });
    let h = handle(&host);
    let outcome = run_session(&h, &mut FirstLegalDriver::new(), RunOptions::new(unpaced())).await.expect("run");
    assert_eq!(outcome.decisions.len(), 4, "no decision was asked for while the other seat moved");
    assert_eq!(host.waits.load(Ordering::SeqCst), 3 * 4);
    assert!(outcome.observations.iter().all(|o| !o.is_pending()));
}

#[tokio::test]
async fn policy_limits_and_driver_failures_are_typed_errors() {
    let host = ToyHost::new(3);
    let h = handle(&host);
    let bad = RunPolicy { max_pending_presentations: 0, ..RunPolicy::default() };
    assert!(matches!(
        run_session(&h, &mut FirstLegalDriver::new(), RunOptions::new(bad)).await,
        Err(RunError::InvalidPolicy(_))
    ));
    let error = run_session(&h, &mut FirstLegalDriver::new(), RunOptions::new(unpaced()).max_decisions(2))
        .await
        .expect_err("limited");
    assert_eq!(error, RunError::DecisionLimit(2));
    assert_eq!(host.state().commands.len(), 2);
    let mut script = ScriptedDriver::new(vec![]);
    let error = run_session(&h, &mut script, RunOptions::new(unpaced())).await.expect_err("exhausted");
    assert!(
        matches!(&error, RunError::Driver { driver, step: 0, error: DriverError::Exhausted { commands: 0 } } if driver == "scripted"),
        "{error:?}"
    );
    // The host refuses an illegal command: the error is the host's, typed.
    let mut script = ScriptedDriver::new(vec![Value::Null]);
    let host = ToyHost::new(1);
    host.state().finalized = Some((String::new(), Value::Null));
    let h = handle(&host);
    let error = run_session(&h, &mut script, RunOptions::new(unpaced())).await.expect_err("refused");
    assert!(matches!(&error, RunError::Session(e) if e.code() == Some(&ErrorCode::SessionFinalized)), "{error:?}");
}

#[tokio::test]
async fn attach_receipts_are_reported_before_the_first_observation() {
    let host = ToyHost::new(1);
    let h = LifecycleHandle::new(
        Toy(Arc::clone(&host)),
        SessionBinding::new(SESSION, 0, SEAT),
        SessionPolicy::host_default(),
        Some(receipt(0)),
        false,
    )
    .expect("head");
    let mut events = Recorder::default();
    run_session(&h, &mut FirstLegalDriver::new(), RunOptions::new(unpaced()).events(&mut events)).await.expect("run");
    assert_eq!(events.attached, 1);
    // A receipt from another revision is refused when the handle is built.
    let error = LifecycleHandle::new(
        Toy(Arc::clone(&host)),
        SessionBinding::new(SESSION, 1, SEAT),
        SessionPolicy::host_default(),
        Some(receipt(0)),
        false,
    )
    .expect_err("mismatch");
    assert!(matches!(error, SessionError::Protocol(_)));
}

#[test]
fn the_runner_and_handles_are_send_and_object_safe() {
    fn is_send<T: Send>(_: &T) {}
    let host = ToyHost::new(1);
    let boxed: Box<dyn SessionHandle> = Box::new(handle(&host));
    let mut driver: Box<dyn AgentDriver> = Box::new(FirstLegalDriver::new());
    let future = run_session(boxed.as_ref(), driver.as_mut(), RunOptions::default());
    is_send(&future);
}

/// A terminal the test reads back.
#[derive(Clone, Default)]
struct Screen(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Screen {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("screen").extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn a_person_whose_move_is_refused_is_told_why_and_asked_again() {
    let host = ToyHost::new(1);
    let h = handle(&host);
    let screen = Screen::default();
    // 7 is not on the menu (re-asked by the driver); {"n":9} is refused by
    // the host (re-asked after the refusal); 2 picks {"n":1}.
    let input = std::io::Cursor::new(b"7\n{\"n\":9}\n2\n".to_vec());
    let mut human = gaos_runner::drivers::HumanDriver::new(input, screen.clone());
    let outcome = run_session(&h, &mut human, RunOptions::new(unpaced())).await.expect("the run goes on");
    assert_eq!(host.state().commands, vec![Value::from(obj! { "n" => 1u32 })]);
    assert_eq!(outcome.commands(), vec![Value::from(obj! { "n" => 1u32 })], "the refused action is not a decision");
    let text = String::from_utf8_lossy(&screen.0.lock().expect("screen")).into_owned();
    assert!(text.contains("7 is not a listed action"), "{text}");
    assert!(text.contains("Not accepted: {\"n\":9} (n must be 0, 1 or 2)"), "{text}");
    assert_eq!(text.matches("decision 1]").count(), 2, "asked again at the same decision: {text}");

    // Any other driver's illegal action still ends the run with the host's error.
    let host = ToyHost::new(1);
    let h = handle(&host);
    let mut script = ScriptedDriver::new(vec![obj! { "n" => 9u32 }.into()]);
    let error = run_session(&h, &mut script, RunOptions::new(unpaced())).await.expect_err("refused");
    assert!(matches!(&error, RunError::Session(e) if e.is_illegal_action()), "{error:?}");
}
