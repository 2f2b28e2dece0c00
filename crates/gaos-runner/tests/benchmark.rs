//! Benchmark orchestration: manifest validation and digest, canonical plans,
//! the reference aggregation arithmetic, the bundle golden vector, and
//! runs against an in-memory host (`ToyHost`: one seat adds 1 or 2 per
//! command until it reaches the seed's target, won on the exact target).
//! End-to-end runs through gaos-host and the `gaos bench` binary live in
//! gaos-host and gaos-cli.

#[allow(dead_code)] // each test binary uses part of the shared template module
mod manifest_template;

use gaos_runner::ErrorCode;
use manifest_template::manifest_with;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use gaos_json::{Value, canonical_json, obj};
use gaos_runner::benchmark::{
    AgentIdentity, AgentKind, BenchmarkError, BenchmarkManifest, BenchmarkObserver, BenchmarkOptions, BenchmarkRun,
    BenchmarkStatus, Checkpoint, CompletedEpisode, DriverAssignment, EpisodePlan, EpisodeSeat, EpisodeSession,
    FactoryError, InProgressEpisode, ResourceObservations, SessionFactory, Submission, pack_run, plan_episodes,
    run_benchmark, scoring_plugin,
};
use gaos_runner::drivers::DriverSettings;
use gaos_runner::{
    BoxFuture, CancellationToken, CommandSubmission, Decision, LifecycleHandle, ManualClock, Observation, RunEvents,
    SessionBinding, SessionError, SessionHandle, SessionResult, SessionTransport, SteppingClock,
};

// ------------------------------------------------------------ toy host runs

/// One session of the toy game: add 1 or 2 per command until the total
/// reaches the target (`3 + seed % 5`); won on the exact target.
struct ToySession {
    target: u64,
    commands: Vec<Value>,
    submission_ids: Vec<String>,
    finalized: Option<Value>,
}

#[derive(Default)]
struct ToyHost {
    sessions: Mutex<HashMap<String, ToySession>>,
    creates: AtomicUsize,
    attaches: AtomicUsize,
}

impl ToyHost {
    fn total(session: &ToySession) -> u64 {
        session.commands.iter().filter_map(|c| c.get("n").and_then(Value::as_u64)).sum()
    }

    fn envelope(&self, id: &str) -> Result<Observation, SessionError> {
        let sessions = self.sessions.lock().expect("toy host");
        let session = sessions.get(id).ok_or_else(|| SessionError::host(404, ErrorCode::UnknownSession, id))?;
        let n = session.commands.len() as u64;
        let total = Self::total(session);
        let done = total >= session.target;
        let legal: Vec<Value> =
            if done { Vec::new() } else { vec![obj! { "n" => 1u32 }.into(), obj! { "n" => 2u32 }.into()] };
        let tick = obj! { "total" => total, "target" => session.target, "legalActions" => legal, "done" => done };
        let value = obj! {
            "protocol" => "gaos.ticks", "protocolVersion" => "1.0", "kind" => "tick",
            "sessionId" => id, "tickId" => format!("{id}:{n}"), "revision" => n, "tick" => tick
        };
        Observation::from_value(&value.into(), Some(id))
    }
}

struct ToyTransport {
    host: Arc<ToyHost>,
}

impl SessionTransport for ToyTransport {
    fn observe<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Observation, SessionError>> {
        Box::pin(async move { self.host.envelope(id) })
    }

    fn submit<'a>(&'a self, submission: &'a CommandSubmission) -> BoxFuture<'a, Result<Observation, SessionError>> {
        Box::pin(async move {
            let id = submission.session_id.as_str();
            {
                let mut sessions = self.host.sessions.lock().expect("toy host");
                let session =
                    sessions.get_mut(id).ok_or_else(|| SessionError::host(404, ErrorCode::UnknownSession, id))?;
                let submission_id = submission.submission_id.clone().unwrap_or_default();
                // Exact retries are idempotent, as on a real host.
                if !session.submission_ids.contains(&submission_id) {
                    session.submission_ids.push(submission_id);
                    session.commands.push(submission.command.clone().unwrap_or(Value::Null));
                }
            }
            self.host.envelope(id)
        })
    }

    fn finalize<'a>(&'a self, id: &'a str, _: &'a Value) -> BoxFuture<'a, Result<Value, SessionError>> {
        Box::pin(async move {
            let mut sessions = self.host.sessions.lock().expect("toy host");
            let session = sessions.get_mut(id).ok_or_else(|| SessionError::host(404, ErrorCode::UnknownSession, id))?;
            if let Some(result) = &session.finalized {
                return Ok(result.clone());
            }
            let total = ToyHost::total(session);
            let status = if total == session.target { "won" } else { "failed" };
            let replay = format!("{id} {}\n", canonical_json(&Value::Array(session.commands.clone())));
            let outcome = obj! { "status" => status, "stars" => Value::Null, "actionsUsed" => session.commands.len() };
            let result: Value =
                obj! { "sessionId" => id, "status" => "finalized", "outcome" => outcome, "replay" => replay }.into();
            session.finalized = Some(result.clone());
            Ok(result)
        })
    }
}

/// The factory of the toy host: one session per episode, named after it.
struct ToyFactory {
    host: Arc<ToyHost>,
    drivers: DriverAssignment,
    /// Wrap each driver in [`Metered`].
    metered: bool,
}

impl ToyFactory {
    fn new(host: &Arc<ToyHost>) -> Self {
        ToyFactory {
            host: Arc::clone(host),
            drivers: DriverAssignment::parse(&["random".into()]).expect("valid"),
            metered: false,
        }
    }

    fn handle(&self, id: &str) -> Result<Box<dyn SessionHandle>, FactoryError> {
        let revision = self.host.envelope(id)?.revision();
        let handle = LifecycleHandle::new(
            ToyTransport { host: Arc::clone(&self.host) },
            SessionBinding::new(id, revision, "player"),
            gaos_runner::SessionPolicy::host_default(),
            None,
            false,
        )?;
        Ok(Box::new(handle))
    }

    fn seat(&self, plan: &EpisodePlan, id: &str) -> Result<EpisodeSeat, FactoryError> {
        let accepted = self.host.sessions.lock().expect("toy host").get(id).map_or(0, |s| s.commands.len() as u64);
        let mut driver = self.drivers.build("player", plan, &DriverSettings::new(0, "player"))?;
        driver.resume_after(accepted);
        if self.metered {
            driver = Box::new(Metered(driver));
        }
        Ok(EpisodeSeat { handle: self.handle(id)?, driver, accepted })
    }
}

impl SessionFactory for ToyFactory {
    fn create_episode<'a>(&'a self, plan: &'a EpisodePlan) -> BoxFuture<'a, Result<EpisodeSession, FactoryError>> {
        Box::pin(async move {
            self.host.creates.fetch_add(1, Ordering::SeqCst);
            let id = format!("toy-{}", plan.index);
            let session = ToySession {
                target: 3 + u64::from(plan.seed % 5),
                commands: vec![],
                submission_ids: vec![],
                finalized: None,
            };
            self.host.sessions.lock().expect("toy host").insert(id.clone(), session);
            Ok(EpisodeSession {
                seats: vec![self.seat(plan, &id)?],
                attachment: obj! { "sessionId" => id.clone() }.into(),
                attach_receipt_digest: None,
            })
        })
    }

    fn attach_episode<'a>(
        &'a self,
        in_progress: &'a InProgressEpisode,
    ) -> BoxFuture<'a, Result<EpisodeSession, FactoryError>> {
        Box::pin(async move {
            self.host.attaches.fetch_add(1, Ordering::SeqCst);
            let id =
                in_progress.attachment.get("sessionId").and_then(Value::as_str).ok_or("no session id".to_owned())?;
            Ok(EpisodeSession {
                seats: vec![self.seat(&in_progress.plan, id)?],
                attachment: in_progress.attachment.clone(),
                attach_receipt_digest: None,
            })
        })
    }
}

/// A driver as a model provider would be: the inner driver's choice, with
/// 10 + 2 tokens and a cost of 0.25 per decision, from provider `toy-llm`.
struct Metered(Box<dyn gaos_runner::AgentDriver>);

impl gaos_runner::AgentDriver for Metered {
    fn id(&self) -> &str {
        self.0.id()
    }
    fn label(&self) -> &str {
        "metered"
    }
    fn provider(&self) -> Option<&str> {
        Some("toy-llm")
    }
    fn act<'a>(
        &'a mut self,
        context: gaos_runner::DriverContext<'a>,
    ) -> BoxFuture<'a, Result<Decision, gaos_runner::DriverError>> {
        Box::pin(async move {
            let decision = self.0.act(context).await?;
            let usage = gaos_runner::Usage { input_tokens: 10, output_tokens: 2, cost: Some(0.25) };
            Ok(Decision { usage: Some(usage), ..decision })
        })
    }
}

/// Counts every `run_session` callback, per episode; can cancel the run
/// after a number of decisions (a stand-in for a killed process).
#[derive(Default)]
struct Counting {
    observations: Mutex<BTreeMap<String, usize>>,
    decisions: Mutex<BTreeMap<String, usize>>,
    finalized: Mutex<BTreeMap<String, usize>>,
    started: Mutex<Vec<(String, bool)>>,
    cancel_after: Option<(usize, CancellationToken)>,
    total_decisions: AtomicUsize,
}

struct SeatEvents {
    episode: String,
    counting: Arc<Counting>,
}

impl RunEvents for SeatEvents {
    fn on_observation(&mut self, _: &Observation) {
        *self.counting.observations.lock().expect("lock").entry(self.episode.clone()).or_default() += 1;
    }
    fn on_decision(&mut self, _: &Decision) {
        *self.counting.decisions.lock().expect("lock").entry(self.episode.clone()).or_default() += 1;
        let total = self.counting.total_decisions.fetch_add(1, Ordering::SeqCst) + 1;
        if let Some((limit, token)) = &self.counting.cancel_after
            && total >= *limit
        {
            token.cancel();
        }
    }
    fn on_finalized(&mut self, _: &SessionResult) {
        *self.counting.finalized.lock().expect("lock").entry(self.episode.clone()).or_default() += 1;
    }
}

struct Observer(Arc<Counting>);

impl BenchmarkObserver for Observer {
    fn episode_started(&self, plan: &EpisodePlan, attached: bool) {
        self.0.started.lock().expect("lock").push((plan.episode_id(), attached));
    }
    fn run_events(&self, plan: &EpisodePlan, _seat: &str) -> Option<Box<dyn RunEvents>> {
        Some(Box::new(SeatEvents { episode: plan.episode_id(), counting: Arc::clone(&self.0) }))
    }
}

const TOY_TASKS: &str = r#"[{"id":"short","seeds":[1,2,3],"episodes":2,"maxSteps":10},
                           {"id":"long","seeds":[4,5],"episodes":3,"maxSteps":10,"weight":2}]"#;

/// What every toy episode measures on the simulated clock of [`toy_run_on`].
const TOY_EPISODE_MS: u64 = 7;

fn toy_manifest() -> BenchmarkManifest {
    BenchmarkManifest::parse(&manifest_with(TOY_TASKS, "gaos.score.outcome", "weighted-mean")).expect("valid")
}

fn agent() -> AgentIdentity {
    DriverAssignment::parse(&["random".into()]).expect("valid").agent("player")
}

async fn toy_run(
    jobs: usize,
    options: impl FnOnce(&mut BenchmarkOptions),
) -> (Result<BenchmarkRun, BenchmarkError>, Arc<Counting>, Arc<ToyHost>) {
    let host = Arc::new(ToyHost::default());
    toy_run_on(&host, jobs, Arc::new(Counting::default()), options).await
}

async fn toy_run_on(
    host: &Arc<ToyHost>,
    jobs: usize,
    counting: Arc<Counting>,
    options: impl FnOnce(&mut BenchmarkOptions),
) -> (Result<BenchmarkRun, BenchmarkError>, Arc<Counting>, Arc<ToyHost>) {
    let manifest = toy_manifest();
    let mut run_options = BenchmarkOptions::new(jobs, agent());
    run_options.observer = Some(Arc::new(Observer(Arc::clone(&counting))));
    // A simulated clock: every episode takes exactly TOY_EPISODE_MS, so
    // runs compare whole (wallClockMs included) whatever the scheduling.
    run_options.clock = Arc::new(SteppingClock::new(Duration::from_millis(TOY_EPISODE_MS)));
    options(&mut run_options);
    let scorer = Arc::from(scoring_plugin(&manifest.scoring.plugin).expect("built in"));
    let result = run_benchmark(&manifest, scorer, Arc::new(ToyFactory::new(host)), run_options).await;
    (result, counting, Arc::clone(host))
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime")
}

#[test]
fn benchmarks_run_through_run_session() {
    runtime().block_on(async {
        let (run, counting, host) = toy_run(3, |_| {}).await;
        let run = run.expect("the run completes");
        assert_eq!(run.status, BenchmarkStatus::Complete);
        let plan = plan_episodes(&toy_manifest());
        // Every episode was created through the factory and driven by
        // run_session: it saw observations, made the decisions recorded as
        // its steps, and run_session finalized it exactly once.
        assert_eq!(host.creates.load(Ordering::SeqCst), plan.len());
        let decisions = counting.decisions.lock().expect("lock").clone();
        let finalized = counting.finalized.lock().expect("lock").clone();
        let observations = counting.observations.lock().expect("lock").clone();
        for completed in &run.checkpoint.completed {
            let id = completed.plan.episode_id();
            assert_eq!(finalized.get(&id), Some(&1), "{id}");
            assert!(observations.get(&id).is_some_and(|n| *n > completed.observations.steps as usize), "{id}");
            assert_eq!(decisions.get(&id).copied().unwrap_or(0) as u64, completed.observations.steps, "{id}");
            let sessions = host.sessions.lock().expect("lock");
            let session = &sessions[&format!("toy-{}", completed.plan.index)];
            assert_eq!(session.commands.len() as u64, completed.observations.steps, "{id}: commands = steps");
            assert!(session.finalized.is_some());
        }
        // Results are in canonical plan order whatever the scheduling.
        let order: Vec<u64> = run.checkpoint.completed.iter().map(|c| c.plan.index).collect();
        assert_eq!(order, (0..plan.len() as u64).collect::<Vec<_>>());
        let aggregate = run.aggregate.expect("complete runs aggregate");
        assert!(aggregate.aggregate_score > 0.0 && aggregate.aggregate_score < 1.0, "{aggregate:?}");
    });
}

/// The code (comments and doc comments dropped) of every source file of
/// the runner's benchmark module, by path relative to `src/`.
fn benchmark_sources() -> Vec<(String, String)> {
    fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display())) {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = vec![src.join("benchmark.rs")];
    walk(&src.join("benchmark"), &mut files);
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
            let code: Vec<&str> = text.lines().filter(|l| !l.trim_start().starts_with("//")).collect();
            (path.strip_prefix(&src).expect("under src").display().to_string(), code.join("\n"))
        })
        .collect()
}

/// What a benchmark source file does that breaks ARCHITECTURE.md's
/// "every benchmark episode runs through a SessionHandle and run_session;
/// the orchestrator never talks to a host or a game directly".
fn benchmark_session_violations(sources: &[(String, String)]) -> Vec<String> {
    // A handle or transport of the benchmark's own: a second live-session type.
    let own_session_type = ["SessionHandle for", "SessionTransport for", "LifecycleHandle", "forward_session_handle!"];
    // The orchestrator reaching past the handle: the host, the game, the kernel,
    // or the handle's own moves (run_session makes those).
    let past_the_handle = [
        "EpisodeHost",
        "gaos_kernel",
        "gaos_games",
        "dyn Game",
        ".transport(",
        ".act(",
        ".observe(",
        ".wait_for_change(",
    ];
    let mut problems = Vec::new();
    for (path, code) in sources {
        for needle in own_session_type {
            if code.contains(needle) {
                problems.push(format!("{path}: `{needle}`: benchmarks add no live-session type of their own"));
            }
        }
        if path.ends_with("orchestrate.rs") {
            for needle in past_the_handle {
                if code.contains(needle) {
                    problems.push(format!("{path}: `{needle}`: the orchestrator talks to a host or a game directly"));
                }
            }
            if !code.contains("run_session(") {
                problems.push(format!("{path}: episodes do not run through run_session"));
            }
        }
    }
    problems
}

#[test]
fn no_benchmark_specific_live_session_type_exists() {
    let sources = benchmark_sources();
    assert!(
        sources.iter().any(|(path, _)| path.ends_with("orchestrate.rs")),
        "the orchestrator was found: {sources:?}"
    );
    let problems = benchmark_session_violations(&sources);
    assert!(problems.is_empty(), "{problems:#?}");
    // The scan itself sees what it looks for: a benchmark file with its own
    // handle, and an orchestrator that acts on a handle, are reported.
    let planted = vec![
        ("benchmark/extra.rs".to_owned(), "impl SessionHandle for EpisodeHandle {}".to_owned()),
        ("benchmark/orchestrate.rs".to_owned(), "handle.act(command).await; run_session(h, d, o)".to_owned()),
    ];
    assert_eq!(benchmark_session_violations(&planted).len(), 2);

    // At run time the factory hands out the one handle trait object (here a
    // LifecycleHandle, the same state machine in-process and HTTP handles
    // use) and the one driver trait object, which run_session drives to the end.
    fn seat_parts(seat: EpisodeSeat) -> (Box<dyn SessionHandle>, Box<dyn gaos_runner::AgentDriver>) {
        (seat.handle, seat.driver)
    }
    runtime().block_on(async {
        let host = Arc::new(ToyHost::default());
        let factory = ToyFactory::new(&host);
        let plan = plan_episodes(&toy_manifest());
        let session = factory.create_episode(&plan[0]).await.expect("creates");
        let (handle, mut driver) = seat_parts(session.seats.into_iter().next().expect("one seat"));
        let outcome = gaos_runner::run_session(handle.as_ref(), driver.as_mut(), gaos_runner::RunOptions::default())
            .await
            .expect("runs");
        assert!(outcome.result.is_some());
    });
}

#[test]
fn results_do_not_depend_on_the_number_of_jobs() {
    let rt = runtime();
    let (one, _, _) = rt.block_on(toy_run(1, |_| {}));
    let (four, _, _) = rt.block_on(toy_run(4, |_| {}));
    let (one, four) = (one.expect("completes"), four.expect("completes"));
    assert_eq!(canonical_json(&one.checkpoint.to_value()), canonical_json(&four.checkpoint.to_value()));
    assert_eq!(one.aggregate, four.aggregate);
}

/// A two-job run on `host` cancelled after 7 decisions, checkpointing to
/// `path`: some episodes are complete, some in progress.
fn run_cancelled_after_seven_decisions(
    rt: &tokio::runtime::Runtime,
    host: &Arc<ToyHost>,
    path: &std::path::Path,
) -> BenchmarkRun {
    let cancel = CancellationToken::new();
    let counting = Arc::new(Counting { cancel_after: Some((7, cancel.clone())), ..Counting::default() });
    let (first, _, _) = rt.block_on(toy_run_on(host, 2, counting, |o| {
        o.cancel = cancel.clone();
        o.checkpoint_path = Some(path.to_path_buf());
    }));
    first.expect("an interrupted run is not an error")
}

#[test]
fn an_interrupted_run_resumes_by_attaching_without_repeating_actions() {
    let rt = runtime();
    let dir = std::env::temp_dir().join(format!("gaos-bench-resume-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("checkpoint.json");
    let (reference, _, _) = rt.block_on(toy_run(2, |_| {}));
    let reference = reference.expect("completes");

    // Cancel after 7 decisions: some episodes are complete, some in progress.
    let host = Arc::new(ToyHost::default());
    let first = run_cancelled_after_seven_decisions(&rt, &host, &path);
    assert_eq!(first.status, BenchmarkStatus::Interrupted);
    assert!(first.aggregate.is_none());
    assert!(!first.checkpoint.in_progress.is_empty(), "the cancelled episodes stay in progress");
    let on_disk = Checkpoint::read(&path).expect("the checkpoint file");
    assert_eq!(on_disk, first.checkpoint);
    assert_eq!(
        std::fs::read_to_string(&path).expect("read"),
        format!("{}\n", canonical_json(&first.checkpoint.to_value())),
        "the file is canonical JSON"
    );
    let completed_before: Vec<u64> = first.checkpoint.completed.iter().map(|c| c.plan.index).collect();
    let creates_before = host.creates.load(Ordering::SeqCst);

    // Resume on the same host: in-progress episodes are attached, completed ones never rerun.
    let counting = Arc::new(Counting::default());
    let (second, counting, host) = rt.block_on(toy_run_on(&host, 2, Arc::clone(&counting), |o| {
        o.resume = Some(on_disk.clone());
        o.checkpoint_path = Some(path.clone());
    }));
    let second = second.expect("the resumed run completes");
    assert_eq!(second.status, BenchmarkStatus::Complete);
    assert_eq!(host.attaches.load(Ordering::SeqCst), first.checkpoint.in_progress.len());
    let started = counting.started.lock().expect("lock").clone();
    for index in &completed_before {
        let id = plan_episodes(&toy_manifest())[*index as usize].episode_id();
        assert!(!started.iter().any(|(e, _)| *e == id), "{id} ran again");
    }
    assert_eq!(
        host.creates.load(Ordering::SeqCst) - creates_before,
        plan_episodes(&toy_manifest()).len() - completed_before.len() - first.checkpoint.in_progress.len()
    );
    // Every session holds exactly its episode's steps: nothing was repeated.
    for completed in &second.checkpoint.completed {
        let sessions = host.sessions.lock().expect("lock");
        let session = &sessions[&format!("toy-{}", completed.plan.index)];
        assert_eq!(session.commands.len() as u64, completed.observations.steps);
    }
    // And the results are those of the uninterrupted run.
    assert_eq!(canonical_json(&second.checkpoint.to_value()), canonical_json(&reference.checkpoint.to_value()));
    assert_eq!(second.aggregate, reference.aggregate);

    // A checkpoint of another agent or manifest is refused.
    let other = AgentIdentity { kind: AgentKind::Local, id: "first-legal".into() };
    let error = on_disk.check_resumable(&toy_manifest().digest(), &plan_episodes(&toy_manifest()), &other);
    assert!(error.is_err_and(|e| e.to_string().contains("agent")));
    let error = on_disk.check_resumable("0000", &plan_episodes(&toy_manifest()), &agent());
    assert!(error.is_err_and(|e| e.to_string().contains("manifest")));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Advances a simulated clock by `per_decision` at every decision of every
/// seat: an episode then lasts exactly `per_decision × steps`.
struct Thinking {
    clock: ManualClock,
    per_decision: Duration,
}

struct ThinkingSeat {
    clock: ManualClock,
    per_decision: Duration,
}

impl RunEvents for ThinkingSeat {
    fn on_decision(&mut self, _: &Decision) {
        self.clock.advance(self.per_decision);
    }
}

impl BenchmarkObserver for Thinking {
    fn run_events(&self, _: &EpisodePlan, _: &str) -> Option<Box<dyn RunEvents>> {
        Some(Box::new(ThinkingSeat { clock: self.clock.clone(), per_decision: self.per_decision }))
    }
}

#[test]
fn each_episode_records_its_wall_clock_time_on_the_run_clock() {
    let clock = ManualClock::new();
    let (run, _, _) = runtime().block_on(toy_run(1, |o| {
        o.clock = Arc::new(clock.clone());
        o.observer = Some(Arc::new(Thinking { clock: clock.clone(), per_decision: Duration::from_millis(3) }));
    }));
    let run = run.expect("completes");
    assert_eq!(run.checkpoint.completed.len(), plan_episodes(&toy_manifest()).len());
    for completed in &run.checkpoint.completed {
        let observations = &completed.observations;
        assert!(observations.steps > 0);
        assert_eq!(observations.wall_clock_ms, Some(3 * observations.steps), "{}", completed.plan.episode_id());
        // The toy's drivers call no provider and report no usage.
        assert_eq!((observations.tokens, observations.cost, observations.provider.as_deref()), (None, None, None));
        let recorded = completed.to_value();
        let recorded = recorded.get("observations").and_then(|o| o.get("wallClockMs"));
        assert_eq!(recorded, Some(&Value::from(3 * observations.steps)));
    }
    // The packed bundle carries them as the episodes' self-reported observations.
    let manifest = toy_manifest();
    let packed = pack_run(&manifest, &run, Submission::new("s", "a", AgentKind::Local)).expect("packs");
    for (episode, completed) in packed.bundle.episodes.iter().zip(&run.checkpoint.completed) {
        let observations = episode.self_reported_observations.as_ref().expect("observations");
        assert_eq!(observations.get("wallClockMs"), Some(&Value::from(3 * completed.observations.steps)));
    }
}

#[test]
fn reported_cost_and_tokens_are_summed_per_episode_with_the_drivers_provider() {
    let manifest = toy_manifest();
    let host = Arc::new(ToyHost::default());
    let factory = ToyFactory { metered: true, ..ToyFactory::new(&host) };
    let mut options = BenchmarkOptions::new(2, agent());
    options.clock = Arc::new(SteppingClock::new(Duration::from_millis(TOY_EPISODE_MS)));
    let scorer = Arc::from(scoring_plugin(&manifest.scoring.plugin).expect("built in"));
    let run = runtime().block_on(run_benchmark(&manifest, scorer, Arc::new(factory), options)).expect("completes");
    for completed in &run.checkpoint.completed {
        let observations = &completed.observations;
        assert_eq!(observations.tokens, Some(12 * observations.steps));
        assert_eq!(observations.cost, Some(0.25 * observations.steps as f64), "quarters add up exactly");
        assert_eq!(observations.provider.as_deref(), Some("toy-llm"));
        assert_eq!(observations.wall_clock_ms, Some(TOY_EPISODE_MS));
    }
    // Checkpoint and bundle carry them, and the bundle reads back.
    let checkpoint = Checkpoint::from_value(&run.checkpoint.to_value()).expect("reads back");
    assert_eq!(checkpoint, run.checkpoint);
    let packed = pack_run(&manifest, &run, Submission::new("s", "a", AgentKind::Local)).expect("packs");
    assert!(packed.files["scores.json"].contains("\"provider\":\"toy-llm\""));
    let dir = std::env::temp_dir().join(format!("gaos-bundle-metered-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    gaos_runner::benchmark::write_bundle_dir(&dir, &packed.files).expect("writes");
    assert_eq!(gaos_runner::benchmark::read_bundle_dir(&dir).expect("reads"), packed.bundle);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_resumed_run_keeps_the_wall_clock_times_recorded_before_the_interruption() {
    let rt = runtime();
    let dir = std::env::temp_dir().join(format!("gaos-bench-resume-clock-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("checkpoint.json");
    let host = Arc::new(ToyHost::default());
    let first = run_cancelled_after_seven_decisions(&rt, &host, &path);
    assert!(!first.checkpoint.completed.is_empty() && !first.checkpoint.in_progress.is_empty());
    let kept: Vec<u64> = first.checkpoint.completed.iter().map(|c| c.plan.index).collect();
    // The resumed run measures on a clock of its own (every episode 1 s):
    // only the episodes it finishes carry its measurements.
    let (second, _, _) = rt.block_on(toy_run_on(&host, 2, Arc::new(Counting::default()), |o| {
        o.resume = Some(Checkpoint::load(&path).expect("the checkpoint"));
        o.checkpoint_path = Some(path.clone());
        o.clock = Arc::new(SteppingClock::new(Duration::from_secs(1)));
    }));
    let second = second.expect("completes");
    assert_eq!(second.status, BenchmarkStatus::Complete);
    for completed in &second.checkpoint.completed {
        let expected = if kept.contains(&completed.plan.index) { TOY_EPISODE_MS } else { 1000 };
        assert_eq!(completed.observations.wall_clock_ms, Some(expected), "{}", completed.plan.episode_id());
    }
    // And the file on disk says the same.
    let on_disk = Checkpoint::load(&path).expect("reads");
    assert_eq!(on_disk.completed, second.checkpoint.completed);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_failing_episode_stops_the_run_with_its_id() {
    // maxSteps 1 cannot reach any target: the decision limit stops the episode.
    let manifest = BenchmarkManifest::parse(&manifest_with(
        r#"[{"id":"tight","seeds":[1],"episodes":1,"maxSteps":1}]"#,
        "gaos.score.outcome",
        "mean",
    ))
    .expect("valid");
    let host = Arc::new(ToyHost::default());
    let result = runtime().block_on(run_benchmark(
        &manifest,
        Arc::from(scoring_plugin("gaos.score.outcome").expect("built in")),
        Arc::new(ToyFactory::new(&host)),
        BenchmarkOptions::new(1, agent()),
    ));
    let error = result.expect_err("the episode cannot finish").to_string();
    assert!(error.contains("tight-seed-1-episode-0") && error.contains("maxSteps"), "{error}");
    let zero = runtime().block_on(run_benchmark(
        &manifest,
        Arc::from(scoring_plugin("gaos.score.outcome").expect("built in")),
        Arc::new(ToyFactory::new(&host)),
        BenchmarkOptions::new(0, agent()),
    ));
    assert!(zero.is_err_and(|e| e.to_string().contains("jobs")));
}

#[test]
fn the_checkpoint_journal_replays_idempotently_and_ignores_a_torn_tail() {
    use gaos_runner::benchmark::checkpoint::{JournalRecord, journal_header, journal_path};

    let dir = std::env::temp_dir().join(format!("gaos-bench-journal-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("checkpoint.json");
    let manifest = toy_manifest();
    let plan = plan_episodes(&manifest);
    let base = Checkpoint {
        manifest_digest: manifest.digest(),
        agent: agent(),
        plan: plan.clone(),
        completed: Vec::new(),
        in_progress: Vec::new(),
    };
    std::fs::write(&path, format!("{}\n", canonical_json(&base.to_value()))).expect("write");
    let started = |i: usize| {
        JournalRecord::Started(InProgressEpisode {
            plan: plan[i].clone(),
            attachment: obj! { "sessionId" => format!("toy-{i}") }.into(),
            attach_receipt_digest: None,
        })
    };
    let completed = |i: usize| {
        JournalRecord::Completed(CompletedEpisode {
            plan: plan[i].clone(),
            score: 1.0,
            replay: Value::from("r\n"),
            terminal_outcome: obj! { "status" => "won" }.into(),
            observations: ResourceObservations::steps(2),
        })
    };
    let lines = [
        journal_header(&base.manifest_digest, &base.agent),
        started(0).line(None),
        started(1).line(None),
        completed(0).line(None),
        started(0).line(None), // a replayed old journal: a start after the completion is ignored
        completed(0).line(None),
    ];
    // The last record is torn (no newline, cut short): it never happened.
    let torn = &started(2).line(None)[..20];
    std::fs::write(journal_path(&path), format!("{}\n{torn}", lines.join("\n"))).expect("write");
    let loaded = Checkpoint::load(&path).expect("loads");
    assert_eq!(loaded.completed.iter().map(|c| c.plan.index).collect::<Vec<_>>(), [0]);
    assert_eq!(loaded.in_progress.iter().map(|p| p.plan.index).collect::<Vec<_>>(), [1]);
    loaded.check_resumable(&base.manifest_digest, &plan, &base.agent).expect("resumable");
    // A journal of another agent is refused, not silently applied.
    let other = AgentIdentity { kind: AgentKind::Local, id: "first-legal".into() };
    std::fs::write(journal_path(&path), format!("{}\n{}\n", journal_header(&base.manifest_digest, &other), lines[1]))
        .expect("write");
    assert!(Checkpoint::load(&path).is_err_and(|e| e.to_string().contains("another run")));
    let _ = std::fs::remove_dir_all(&dir);
}
