//! [`run_benchmark`]: the authored plan, executed by `jobs` workers, every
//! episode through a [`SessionFactory`] and [`run_session`], with the
//! checkpoint made durable when an episode starts and when it completes
//! (journal line, fsynced; see [`crate::benchmark::checkpoint`]).

use std::collections::{BTreeMap, VecDeque};
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use gaos_json::{Value, canonical_json};
use tokio_util::sync::CancellationToken;

use crate::benchmark::checkpoint::{
    AgentIdentity, CHECKPOINT_SCHEMA, Checkpoint, CompletedEpisode, InProgressEpisode, JournalRecord,
    ResourceObservations, journal_header, journal_path, write_atomic,
};
use crate::benchmark::error::BenchmarkError;
use crate::benchmark::factory::{EpisodeSeat, SessionFactory};
use crate::benchmark::manifest::BenchmarkManifest;
use crate::benchmark::plan::{EpisodePlan, plan_episodes, plan_value};
use crate::benchmark::scoring::{Aggregate, ScoringPlugin, aggregate_scores};
use crate::clock::{Clock, MonotonicClock};
use crate::driver::add_costs;
use crate::error::RunError;
use crate::run::{FinalizeMode, RunEvents, RunOptions, RunOutcome, RunPolicy, run_session};

/// Hooks for progress displays and tests. Every method has a default that
/// does nothing; all are called from worker tasks.
pub trait BenchmarkObserver: Send + Sync {
    /// The run starts: `total` planned episodes, `completed` already done
    /// (resume), `in_progress` to attach.
    fn planned(&self, total: usize, completed: usize, in_progress: usize) {
        let _ = (total, completed, in_progress);
    }

    /// An episode's sessions are ready (`attached`: an earlier run started it).
    fn episode_started(&self, plan: &EpisodePlan, attached: bool) {
        let _ = (plan, attached);
    }

    /// An episode completed and is in the checkpoint.
    fn episode_completed(&self, episode: &CompletedEpisode) {
        let _ = episode;
    }

    /// An episode failed (the run stops).
    fn episode_failed(&self, plan: &EpisodePlan, error: &str) {
        let _ = (plan, error);
    }

    /// Callbacks for `run_session` of one seat of one episode.
    fn run_events(&self, plan: &EpisodePlan, seat: &str) -> Option<Box<dyn RunEvents>> {
        let _ = (plan, seat);
        None
    }
}

/// Options of [`run_benchmark`].
pub struct BenchmarkOptions {
    /// Episodes run at once (≥ 1).
    pub jobs: usize,
    /// The agent (recorded in the checkpoint; a resume must match it).
    pub agent: AgentIdentity,
    /// Continue this checkpoint.
    pub resume: Option<Checkpoint>,
    /// Where the checkpoint is written, with its journal beside it (none:
    /// in memory only).
    pub checkpoint_path: Option<PathBuf>,
    /// Start at most this many episodes (new or attached) in this call.
    pub max_new_episodes: Option<usize>,
    /// Progress hooks.
    pub observer: Option<Arc<dyn BenchmarkObserver>>,
    /// Stop starting episodes and interrupt running ones (they stay in
    /// progress, to be attached by a resume).
    pub cancel: CancellationToken,
    /// What each episode's `wallClockMs` is measured with (default: the
    /// monotonic clock; a simulated clock makes bundles reproducible).
    pub clock: Arc<dyn Clock>,
}

impl BenchmarkOptions {
    /// `jobs` workers for `agent`, nothing else.
    pub fn new(jobs: usize, agent: AgentIdentity) -> Self {
        BenchmarkOptions {
            jobs,
            agent,
            resume: None,
            checkpoint_path: None,
            max_new_episodes: None,
            observer: None,
            cancel: CancellationToken::new(),
            clock: Arc::new(MonotonicClock),
        }
    }
}

/// Whether every planned episode completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BenchmarkStatus {
    /// All episodes completed; the aggregate exists.
    Complete,
    /// Cancelled, or capped by `max_new_episodes`; resume to finish.
    Interrupted,
}

/// The result of [`run_benchmark`].
#[derive(Debug, Clone, PartialEq)]
pub struct BenchmarkRun {
    /// Complete or interrupted.
    pub status: BenchmarkStatus,
    /// The final checkpoint (what was written last).
    pub checkpoint: Checkpoint,
    /// Task scores and aggregate (complete runs only).
    pub aggregate: Option<Aggregate>,
}

/// The checkpoint as it evolves, with each completed entry's canonical JSON
/// cached so a write costs one concatenation, not a re-serialization.
struct State {
    completed: BTreeMap<u64, (CompletedEpisode, String)>,
    in_progress: BTreeMap<u64, InProgressEpisode>,
}

/// A journal smaller than this is never compacted (a compaction rewrites
/// the whole checkpoint).
const MIN_JOURNAL_BYTES: u64 = 4 << 20;

/// The open journal: appended to, fsynced per record.
struct Journal {
    file: Option<std::fs::File>,
    bytes: u64,
    compact_at: u64,
}

/// The run's durable state: `checkpoint.json` plus its journal (see
/// [`crate::benchmark::checkpoint`]).
struct Store {
    path: Option<PathBuf>,
    head: String,
    tail: String,
    header: String,
    state: Mutex<State>,
    journal: tokio::sync::Mutex<Journal>,
}

fn io_error(what: &str, path: &std::path::Path, e: impl std::fmt::Display) -> BenchmarkError {
    BenchmarkError::Io(format!("cannot {what} {}: {e}", path.display()))
}

impl Store {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The checkpoint file: canonical JSON plus `\n` (keys in code-point order).
    fn render(&self, state: &State) -> String {
        let mut out = String::with_capacity(self.head.len() + self.tail.len() + state.completed.len() * 512);
        out.push_str(&self.head);
        for (i, (_, text)) in state.completed.values().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(text);
        }
        out.push(']');
        if !state.in_progress.is_empty() {
            let entries: Vec<Value> = state.in_progress.values().map(InProgressEpisode::to_value).collect();
            out.push_str(",\"inProgress\":");
            out.push_str(&canonical_json(&Value::Array(entries)));
        }
        out.push_str(&self.tail);
        out
    }

    /// Apply a change in memory and make it durable: append its journal
    /// line (fsynced), or compact when the journal has outgrown the checkpoint.
    async fn record(&self, record: JournalRecord) -> Result<(), BenchmarkError> {
        let line = {
            let mut state = self.lock();
            match &record {
                JournalRecord::Started(entry) => {
                    state.in_progress.insert(entry.plan.index, entry.clone());
                    record.line(None)
                }
                JournalRecord::Completed(entry) => {
                    let text = canonical_json(&entry.to_value());
                    let line = record.line(Some(&text));
                    state.in_progress.remove(&entry.plan.index);
                    state.completed.insert(entry.plan.index, (entry.clone(), text));
                    line
                }
            }
        };
        let Some(path) = &self.path else { return Ok(()) };
        let mut journal = self.journal.lock().await;
        let file = match &journal.file {
            Some(file) if journal.bytes + (line.len() as u64) < journal.compact_at => {
                file.try_clone().map_err(|e| io_error("append to", &journal_path(path), e))?
            }
            _ => return self.compact_locked(&mut journal).await,
        };
        let target = journal_path(path);
        let length = line.len() as u64 + 1;
        tokio::task::spawn_blocking(move || {
            let mut file = file;
            file.write_all(line.as_bytes())?;
            file.write_all(b"\n")?;
            file.sync_data()
        })
        .await
        .map_err(|e| BenchmarkError::Io(format!("the journal writer failed: {e}")))?
        .map_err(|e| io_error("append to", &target, e))?;
        journal.bytes += length;
        Ok(())
    }

    /// Rewrite `checkpoint.json` from the current state and start an empty journal.
    async fn compact(&self) -> Result<(), BenchmarkError> {
        if self.path.is_none() {
            return Ok(());
        }
        let mut journal = self.journal.lock().await;
        self.compact_locked(&mut journal).await
    }

    async fn compact_locked(&self, journal: &mut Journal) -> Result<(), BenchmarkError> {
        let Some(path) = self.path.clone() else { return Ok(()) };
        let text = self.render(&self.lock());
        let header = format!("{}\n", self.header);
        let checkpoint_bytes = text.len() as u64;
        let journal_file = journal_path(&path);
        journal.file = None;
        let file = tokio::task::spawn_blocking(move || -> Result<std::fs::File, BenchmarkError> {
            write_atomic(&path, text.as_bytes()).map_err(|e| io_error("write the checkpoint", &path, e))?;
            // A crash right here leaves the old journal beside the new
            // checkpoint; replaying it is harmless (records are idempotent).
            write_atomic(&journal_file, header.as_bytes()).map_err(|e| io_error("reset", &journal_file, e))?;
            std::fs::OpenOptions::new().append(true).open(&journal_file).map_err(|e| io_error("open", &journal_file, e))
        })
        .await
        .map_err(|e| BenchmarkError::Io(format!("the checkpoint writer failed: {e}")))??;
        journal.file = Some(file);
        journal.bytes = self.header.len() as u64 + 1;
        journal.compact_at = checkpoint_bytes.max(MIN_JOURNAL_BYTES);
        Ok(())
    }

    fn checkpoint(&self, manifest_digest: &str, agent: &AgentIdentity, plan: &[EpisodePlan]) -> Checkpoint {
        let state = self.lock();
        Checkpoint {
            manifest_digest: manifest_digest.to_owned(),
            agent: agent.clone(),
            plan: plan.to_vec(),
            completed: state.completed.values().map(|(c, _)| c.clone()).collect(),
            in_progress: state.in_progress.values().cloned().collect(),
        }
    }
}

struct Shared {
    factory: Arc<dyn SessionFactory>,
    scorer: Arc<dyn ScoringPlugin>,
    observer: Option<Arc<dyn BenchmarkObserver>>,
    clock: Arc<dyn Clock>,
    store: Store,
    queue: Mutex<VecDeque<EpisodePlan>>,
    /// Cancelled by the caller or by the first failure.
    stop: CancellationToken,
    failure: Mutex<Option<BenchmarkError>>,
}

/// Run (or continue) a benchmark.
///
/// The plan is [`plan_episodes`]; with `resume`, the checkpoint must match
/// the manifest digest, the plan and the agent, and its completed episodes
/// are kept (never run again) while its in-progress episodes are attached
/// ([`SessionFactory::attach_episode`]) and continued. The remaining
/// episodes go, in plan order, to `min(jobs, remaining)` workers. For each
/// episode a worker creates (or attaches) its sessions, records the
/// in-progress entry durably before any action, runs every seat with
/// [`run_session`] (`{unpaced, continuous}`; the scored seat finalizes,
/// limited to the task's `maxSteps` decisions), scores the terminal outcome,
/// and records the completed entry durably.
///
/// The first failing episode stops the run with its error; completed
/// episodes stay in the checkpoint. Cancellation stops it with status
/// `Interrupted`, leaving running episodes in progress.
pub async fn run_benchmark(
    manifest: &BenchmarkManifest,
    scorer: Arc<dyn ScoringPlugin>,
    factory: Arc<dyn SessionFactory>,
    options: BenchmarkOptions,
) -> Result<BenchmarkRun, BenchmarkError> {
    let BenchmarkOptions { jobs, agent, resume, checkpoint_path, max_new_episodes, observer, cancel, clock } = options;
    if jobs == 0 {
        return Err(BenchmarkError::Options("jobs must be at least 1".into()));
    }
    let plan = plan_episodes(manifest);
    let manifest_digest = manifest.digest();
    let mut state = State { completed: BTreeMap::new(), in_progress: BTreeMap::new() };
    if let Some(checkpoint) = resume {
        checkpoint.check_resumable(&manifest_digest, &plan, &agent)?;
        for episode in checkpoint.completed {
            let text = canonical_json(&episode.to_value());
            state.completed.insert(episode.plan.index, (episode, text));
        }
        for episode in checkpoint.in_progress {
            state.in_progress.insert(episode.plan.index, episode);
        }
    }
    let pending: VecDeque<EpisodePlan> = plan
        .iter()
        .filter(|p| !state.completed.contains_key(&p.index))
        .take(max_new_episodes.unwrap_or(usize::MAX))
        .cloned()
        .collect();
    if let Some(observer) = &observer {
        observer.planned(plan.len(), state.completed.len(), state.in_progress.len());
    }
    let head = format!("{{\"agent\":{},\"completed\":[", canonical_json(&agent.to_value()));
    let tail = format!(
        ",\"manifestDigest\":{},\"plan\":{},\"schema\":{}}}\n",
        canonical_json(&Value::from(manifest_digest.clone())),
        canonical_json(&plan_value(&plan)),
        canonical_json(&Value::from(CHECKPOINT_SCHEMA)),
    );
    let workers = jobs.min(pending.len());
    let shared = Arc::new(Shared {
        factory,
        scorer,
        observer,
        clock,
        store: Store {
            path: checkpoint_path,
            head,
            tail,
            header: journal_header(&manifest_digest, &agent),
            state: Mutex::new(state),
            journal: tokio::sync::Mutex::new(Journal { file: None, bytes: 0, compact_at: 0 }),
        },
        queue: Mutex::new(pending),
        stop: cancel.child_token(),
        failure: Mutex::new(None),
    });
    // The files exist from the start, so even a run killed before its
    // first episode can be resumed.
    shared.store.compact().await?;
    let mut tasks = Vec::with_capacity(workers);
    for _ in 0..workers {
        let shared = Arc::clone(&shared);
        tasks.push(tokio::spawn(async move { worker(&shared).await }));
    }
    for task in tasks {
        if let Err(e) = task.await {
            record_failure(&shared, BenchmarkError::Io(format!("a benchmark worker panicked: {e}")));
        }
    }
    shared.store.compact().await?;
    if let Some(error) = shared.failure.lock().unwrap_or_else(PoisonError::into_inner).take() {
        return Err(error);
    }
    let checkpoint = shared.store.checkpoint(&manifest_digest, &agent, &plan);
    if checkpoint.completed.len() != plan.len() {
        return Ok(BenchmarkRun { status: BenchmarkStatus::Interrupted, checkpoint, aggregate: None });
    }
    let scores: Vec<(EpisodePlan, f64)> = checkpoint.completed.iter().map(|c| (c.plan.clone(), c.score)).collect();
    let aggregate = aggregate_scores(manifest, &scores)?;
    Ok(BenchmarkRun { status: BenchmarkStatus::Complete, checkpoint, aggregate: Some(aggregate) })
}

fn record_failure(shared: &Shared, error: BenchmarkError) {
    let mut failure = shared.failure.lock().unwrap_or_else(PoisonError::into_inner);
    if failure.is_none() {
        *failure = Some(error);
    }
    shared.stop.cancel();
}

async fn worker(shared: &Shared) {
    loop {
        if shared.stop.is_cancelled() {
            return;
        }
        let Some(plan) = shared.queue.lock().unwrap_or_else(PoisonError::into_inner).pop_front() else { return };
        match run_episode(shared, &plan).await {
            Ok(()) => {}
            Err(error) => {
                if let Some(observer) = &shared.observer {
                    observer.episode_failed(&plan, &error.to_string());
                }
                record_failure(shared, error);
                return;
            }
        }
    }
}

/// Run one episode to completion (or until cancelled: then it stays in progress).
async fn run_episode(shared: &Shared, plan: &EpisodePlan) -> Result<(), BenchmarkError> {
    let episode = plan.episode_id();
    let fail = |message: String| BenchmarkError::Episode { episode: episode.clone(), message };
    let earlier = shared.store.lock().in_progress.get(&plan.index).cloned();
    let attached = earlier.is_some();
    let session = match earlier {
        Some(in_progress) => {
            let session = shared
                .factory
                .attach_episode(&in_progress)
                .await
                .map_err(|e| fail(format!("cannot attach its sessions: {e}")))?;
            // The factory may have taken the sessions over with new
            // credentials, or started the episode over: record where it is now.
            if session.attachment != in_progress.attachment
                || session.attach_receipt_digest != in_progress.attach_receipt_digest
            {
                let entry = InProgressEpisode {
                    plan: plan.clone(),
                    attachment: session.attachment.clone(),
                    attach_receipt_digest: session.attach_receipt_digest.clone(),
                };
                shared.store.record(JournalRecord::Started(entry)).await?;
            }
            session
        }
        None => {
            let session = shared
                .factory
                .create_episode(plan)
                .await
                .map_err(|e| fail(format!("cannot create its sessions: {e}")))?;
            let entry = InProgressEpisode {
                plan: plan.clone(),
                attachment: session.attachment.clone(),
                attach_receipt_digest: session.attach_receipt_digest.clone(),
            };
            // Durable before the first action, so a resume attaches instead
            // of creating the episode again.
            shared.store.record(JournalRecord::Started(entry)).await?;
            session
        }
    };
    if session.seats.is_empty() {
        return Err(fail("the session factory returned no seat".into()));
    }
    if let Some(observer) = &shared.observer {
        observer.episode_started(plan, attached);
    }
    let episode_cancel = shared.stop.child_token();
    let provider = session.seats[0].driver.provider().map(str::to_owned);
    let mut tasks = Vec::with_capacity(session.seats.len());
    for (position, seat) in session.seats.into_iter().enumerate() {
        let scored = position == 0;
        let events = shared.observer.as_ref().and_then(|o| o.run_events(plan, seat.handle.seat()));
        let limit = scored.then(|| plan.max_steps.saturating_sub(seat.accepted));
        let cancel = episode_cancel.clone();
        let clock = Arc::clone(&shared.clock);
        tasks.push(tokio::spawn(run_seat(seat, scored, limit, events, cancel, clock)));
    }
    let mut outcomes: Vec<(String, u64, Result<RunOutcome, RunError>)> = Vec::with_capacity(tasks.len());
    for task in tasks {
        outcomes.push(task.await.map_err(|e| fail(format!("a seat's run task failed: {e}")))?);
    }
    // A seat that failed stops its siblings; report the cause, not the
    // cancellations it caused.
    if let Some((seat, _, Err(error))) =
        outcomes.iter().find(|(_, _, r)| matches!(r, Err(e) if *e != RunError::Cancelled))
    {
        let message = match error {
            RunError::DecisionLimit(n) => format!(
                "seat {seat}: the game did not end within the task's maxSteps ({}; {n} decisions in this run)",
                plan.max_steps
            ),
            other => format!("seat {seat}: {other}"),
        };
        return Err(fail(message));
    }
    let (seat, accepted, scored) = outcomes.swap_remove(0);
    let outcome = match scored {
        Ok(outcome) => outcome,
        // Cancelled by the caller: the episode stays in progress.
        Err(_) => return Ok(()),
    };
    let result = outcome.result.as_ref().ok_or_else(|| fail(format!("seat {seat}: the run did not finalize")))?;
    let replay = match &result.replay {
        Some(replay @ Value::String(_)) => replay.clone(),
        Some(other) => {
            return Err(fail(format!("the finalize result's replay is {}, not JSONL text", other.type_name())));
        }
        None => return Err(fail("the finalize result carries no replay (the policy asks for replay evidence)".into())),
    };
    let steps = accepted + outcome.decisions.len() as u64;
    if steps > plan.max_steps {
        return Err(fail(format!("seat {seat} made {steps} decisions, more than maxSteps {}", plan.max_steps)));
    }
    let tokens = outcome
        .decisions
        .iter()
        .filter_map(|d| d.usage)
        .map(|u| u.input_tokens.saturating_add(u.output_tokens))
        .reduce(u64::saturating_add);
    let cost = outcome.decisions.iter().filter_map(|d| d.usage.and_then(|u| u.cost)).map(Some).fold(None, add_costs);
    let wall_clock_ms = u64::try_from(outcome.wall_clock.as_millis()).unwrap_or(u64::MAX).min(MAX_SAFE_MS);
    let score = shared.scorer.score(plan, &result.outcome).map_err(|e| fail(format!("{}: {e}", shared.scorer.id())))?;
    if !score.is_finite() {
        return Err(fail(format!("{} returned a non-finite score", shared.scorer.id())));
    }
    check_host_score(result.evaluation.as_ref(), score).map_err(fail)?;
    let completed = CompletedEpisode {
        plan: plan.clone(),
        score,
        replay,
        terminal_outcome: result.outcome.clone(),
        observations: ResourceObservations {
            steps,
            wall_clock_ms: Some(wall_clock_ms),
            tokens,
            cost,
            provider,
            extra: Default::default(),
        },
    };
    shared.store.record(JournalRecord::Completed(completed.clone())).await?;
    if let Some(observer) = &shared.observer {
        observer.episode_completed(&completed);
    }
    Ok(())
}

/// `wallClockMs` is a JSON safe integer (2^53 − 1 ms is 285 000 years).
const MAX_SAFE_MS: u64 = (1 << 53) - 1;

/// A host that bound an official score to the manifest must agree with the
/// orchestrator's score, exactly (the same plugin on the same outcome); a
/// host that evaluates nothing is not asked.
fn check_host_score(evaluation: Option<&gaos_json::Map>, score: f64) -> Result<(), String> {
    let Some(evaluation) = evaluation.filter(|e| e.get("kind").and_then(Value::as_str) == Some("official")) else {
        return Ok(());
    };
    match evaluation.get("score") {
        Some(Value::Number(host)) if *host == score => Ok(()),
        Some(other) => Err(format!(
            "the host's official score is {other}, the orchestrator's is {score}: host and manifest disagree \
             about this episode"
        )),
        None => Err("the host's official evaluation carries no score".into()),
    }
}

/// One seat's `run_session`: the scored seat finalizes (automatic), the
/// others stop at the terminal observation. A failure cancels the siblings.
async fn run_seat(
    seat: EpisodeSeat,
    scored: bool,
    limit: Option<u64>,
    mut events: Option<Box<dyn RunEvents>>,
    cancel: CancellationToken,
    clock: Arc<dyn Clock>,
) -> (String, u64, Result<RunOutcome, RunError>) {
    let EpisodeSeat { handle, mut driver, accepted } = seat;
    let policy = RunPolicy {
        finalize: if scored { FinalizeMode::Automatic } else { FinalizeMode::Caller },
        ..RunPolicy::default()
    };
    let mut options = RunOptions::new(policy).cancel(cancel.clone()).clock(clock);
    if let Some(events) = events.as_deref_mut() {
        options = options.events(events);
    }
    if let Some(limit) = limit {
        options = options.max_decisions(limit);
    }
    let outcome = run_session(handle.as_ref(), driver.as_mut(), options).await;
    if matches!(&outcome, Err(e) if *e != RunError::Cancelled) {
        cancel.cancel();
    }
    handle.close();
    (handle.seat().to_owned(), accepted, outcome)
}
