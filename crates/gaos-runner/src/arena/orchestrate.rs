//! [`run_arena`]: the planned matches, played by `jobs` workers, every
//! match through the [`ArenaFactory`] and [`run_session`] per seat, with
//! the journal made durable when a match starts and when it completes
//! ([`crate::arena::journal`]).

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use gaos_json::{Value, sha256_hex};
use gaos_session::FinalizeRequest;
use tokio_util::sync::CancellationToken;

use crate::arena::error::ArenaError;
use crate::arena::factory::{ArenaFactory, MatchSeat};
use crate::arena::journal::{self, Journal, JournalState};
use crate::arena::manifest::ArenaManifest;
use crate::arena::plan::MatchPlan;
use crate::arena::result::{MatchRecord, MatchResult, game_ranking, replay_conduct};
use crate::benchmark::checkpoint::write_atomic;
use crate::clock::{Clock, MonotonicClock};
use crate::error::RunError;
use crate::run::{FinalizeMode, RunOptions, RunOutcome, RunPolicy, run_session};

/// Hooks for progress displays and tests; all default to nothing and are
/// called from worker tasks.
pub trait ArenaObserver: Send + Sync {
    /// The run starts: `total` planned matches, `completed` already done
    /// (kept from an earlier run), `in_progress` to attach.
    fn planned(&self, total: usize, completed: &[MatchRecord], in_progress: usize) {
        let _ = (total, completed, in_progress);
    }

    /// A match's sessions are ready (`attached`: an earlier run started it).
    fn match_started(&self, plan: &MatchPlan, attached: bool) {
        let _ = (plan, attached);
    }

    /// A match completed and is in the journal.
    fn match_completed(&self, record: &MatchRecord) {
        let _ = record;
    }

    /// A match failed (the run stops).
    fn match_failed(&self, plan: &MatchPlan, error: &str) {
        let _ = (plan, error);
    }
}

/// Options of [`run_arena`].
pub struct ArenaOptions {
    /// Matches played at once (≥ 1).
    pub jobs: usize,
    /// The run's directory: `journal.jsonl`, `replays/`, `logs/`.
    pub dir: PathBuf,
    /// Continue the run in `dir` (its journal must exist); else `dir` must
    /// hold no journal.
    pub resume: bool,
    /// Start at most this many matches (new or attached) in this call.
    pub max_new_matches: Option<usize>,
    /// Progress hooks.
    pub observer: Option<Arc<dyn ArenaObserver>>,
    /// Stop starting matches and interrupt running ones (they stay in
    /// progress, to be attached by a resume).
    pub cancel: CancellationToken,
    /// What each match's `wallClockMs` is measured with (a simulated clock
    /// makes bundles reproducible).
    pub clock: Arc<dyn Clock>,
}

impl ArenaOptions {
    /// `jobs` workers writing to `dir`, nothing else.
    pub fn new(jobs: usize, dir: impl Into<PathBuf>) -> Self {
        ArenaOptions {
            jobs,
            dir: dir.into(),
            resume: false,
            max_new_matches: None,
            observer: None,
            cancel: CancellationToken::new(),
            clock: Arc::new(MonotonicClock),
        }
    }
}

/// Whether every planned match completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArenaStatus {
    /// All matches completed.
    Complete,
    /// Cancelled, or capped by `max_new_matches`; resume to finish.
    Interrupted,
}

/// The result of [`run_arena`].
#[derive(Debug, Clone, PartialEq)]
pub struct ArenaRun {
    /// Complete or interrupted.
    pub status: ArenaStatus,
    /// Completed matches, in plan order.
    pub records: Vec<MatchRecord>,
    /// Matches kept from an earlier run, and matches attached.
    pub resumed: Option<(usize, usize)>,
}

struct Shared {
    factory: Arc<ArenaFactory>,
    max_steps: u64,
    dir: PathBuf,
    journal: Journal,
    state: Mutex<JournalState>,
    queue: Mutex<VecDeque<MatchPlan>>,
    observer: Option<Arc<dyn ArenaObserver>>,
    clock: Arc<dyn Clock>,
    stop: CancellationToken,
    failure: Mutex<Option<ArenaError>>,
}

impl Shared {
    fn state(&self) -> std::sync::MutexGuard<'_, JournalState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn fail(&self, error: ArenaError) {
        self.failure.lock().unwrap_or_else(PoisonError::into_inner).get_or_insert(error);
        self.stop.cancel();
    }
}

fn create_dir(path: &Path) -> Result<(), ArenaError> {
    std::fs::create_dir_all(path).map_err(|e| ArenaError::Io(format!("cannot create {}: {e}", path.display())))
}

/// Play (or continue) a tournament.
///
/// With `resume`, the journal in `dir` must belong to this manifest, game
/// and plan; its completed matches are kept (never played again) and its
/// started ones attached ([`ArenaFactory::attach`]) and continued. The
/// rest go, in plan order, to `min(jobs, remaining)` workers. For each
/// match a worker creates (or attaches) its sessions, journals the start
/// before any move, runs every seat with [`run_session`] (at most
/// `maxSteps` decisions each), finalizes through the first seat, writes
/// the replay, and journals the completed line.
///
/// An agent never stops the run (its referee applies `illegalMoves`); the
/// first match that fails otherwise (a host error, a game that outlasts
/// `maxSteps`) stops it with that error, completed matches kept.
pub async fn run_arena(
    manifest: &ArenaManifest,
    plan: &[MatchPlan],
    factory: Arc<ArenaFactory>,
    options: ArenaOptions,
) -> Result<ArenaRun, ArenaError> {
    let ArenaOptions { jobs, dir, resume, max_new_matches, observer, cancel, clock } = options;
    if jobs == 0 {
        return Err(ArenaError::Options("--jobs must be at least 1".into()));
    }
    let journal_path = dir.join("journal.jsonl");
    let header = journal::header(&manifest.digest(), factory.game_id(), plan.len());
    let state = if resume {
        if !journal_path.exists() {
            return Err(ArenaError::Resume(format!("{} holds no run to resume (no journal.jsonl)", dir.display())));
        }
        let index_of = |id: &str| plan.iter().find(|p| p.id == id).map(|p| p.index);
        journal::load(&journal_path, &header, index_of)?
    } else {
        if journal_path.exists() {
            return Err(ArenaError::Options(format!(
                "{} already holds a run; pass --resume to continue it, or choose another --out",
                dir.display()
            )));
        }
        JournalState::default()
    };
    for sub in ["replays", "logs"] {
        create_dir(&dir.join(sub))?;
    }
    let journal = Journal::open(&journal_path, &header)?;
    let resumed = resume.then_some((state.completed.len(), state.started.len()));
    if let Some(observer) = &observer {
        let kept: Vec<MatchRecord> = state.completed.values().cloned().collect();
        observer.planned(plan.len(), &kept, state.started.len());
    }
    let pending: VecDeque<MatchPlan> = plan
        .iter()
        .filter(|p| !state.completed.contains_key(&p.index))
        .take(max_new_matches.unwrap_or(usize::MAX))
        .cloned()
        .collect();
    let workers = jobs.min(pending.len());
    let shared = Arc::new(Shared {
        factory,
        max_steps: manifest.max_steps,
        dir,
        journal,
        state: Mutex::new(state),
        queue: Mutex::new(pending),
        observer,
        clock,
        stop: cancel.child_token(),
        failure: Mutex::new(None),
    });
    let tasks: Vec<_> = (0..workers)
        .map(|_| {
            let shared = Arc::clone(&shared);
            tokio::spawn(async move { worker(&shared).await })
        })
        .collect();
    for task in tasks {
        if let Err(e) = task.await {
            shared.fail(ArenaError::Io(format!("an arena worker panicked: {e}")));
        }
    }
    if let Some(error) = shared.failure.lock().unwrap_or_else(PoisonError::into_inner).take() {
        return Err(error);
    }
    let records: Vec<MatchRecord> = shared.state().completed.values().cloned().collect();
    let status = if records.len() == plan.len() { ArenaStatus::Complete } else { ArenaStatus::Interrupted };
    Ok(ArenaRun { status, records, resumed })
}

async fn worker(shared: &Shared) {
    loop {
        if shared.stop.is_cancelled() {
            return;
        }
        let Some(plan) = shared.queue.lock().unwrap_or_else(PoisonError::into_inner).pop_front() else { return };
        if let Err(message) = play_match(shared, &plan).await {
            if let Some(observer) = &shared.observer {
                observer.match_failed(&plan, &message);
            }
            shared.fail(ArenaError::Match { id: plan.id.clone(), message });
            return;
        }
    }
}

/// One seat's run: at most `limit` decisions, the caller finalizes. A
/// failure cancels the other seats (they would wait for it forever).
async fn run_seat(
    seat: MatchSeat,
    limit: u64,
    cancel: CancellationToken,
    clock: Arc<dyn Clock>,
) -> (MatchSeat, Result<RunOutcome, RunError>) {
    let mut seat = seat;
    let policy = RunPolicy { finalize: FinalizeMode::Caller, ..RunPolicy::default() };
    let options = RunOptions::new(policy).cancel(cancel.clone()).clock(clock).max_decisions(limit);
    let outcome = run_session(seat.handle.as_ref(), seat.driver.as_mut(), options).await;
    if matches!(&outcome, Err(e) if *e != RunError::Cancelled) {
        cancel.cancel();
    }
    (seat, outcome)
}

/// Play one match to completion (or until cancelled: it stays in progress).
async fn play_match(shared: &Shared, plan: &MatchPlan) -> Result<(), String> {
    let earlier = shared.state().started.get(&plan.index).cloned();
    let attached = earlier.is_some();
    let session = match &earlier {
        Some(attachment) => shared.factory.attach(plan, attachment).await,
        None => shared.factory.create(plan).await,
    }
    .map_err(|e| format!("cannot {} its session: {e}", if attached { "attach" } else { "create" }))?;
    if earlier.as_ref() != Some(&session.attachment) {
        // Durable before the first move, so a resume attaches instead of
        // creating the match again.
        shared.journal.started(plan.index, &session.attachment).await.map_err(|e| e.to_string())?;
        shared.state().started.insert(plan.index, session.attachment.clone());
    }
    if let Some(observer) = &shared.observer {
        observer.match_started(plan, attached);
    }
    let cancel = shared.stop.child_token();
    let mut stopwatch = shared.clock.stopwatch();
    let tasks: Vec<_> = session
        .seats
        .into_iter()
        .map(|seat| {
            let limit = shared.max_steps.saturating_sub(seat.accepted);
            tokio::spawn(run_seat(seat, limit, cancel.clone(), Arc::clone(&shared.clock)))
        })
        .collect();
    let mut seats = Vec::with_capacity(tasks.len());
    let mut failure: Option<String> = None;
    let mut cancelled = false;
    for task in tasks {
        let (seat, outcome) = task.await.map_err(|e| format!("a seat's run task failed: {e}"))?;
        match outcome {
            Ok(_) => {}
            Err(RunError::Cancelled) => cancelled = true,
            Err(RunError::DecisionLimit(_)) => {
                failure.get_or_insert(format!(
                    "seat {}: the game did not end within maxSteps ({} decisions of one seat); raise maxSteps \
                     for this game",
                    seat.seat, shared.max_steps
                ));
            }
            Err(other) => {
                failure.get_or_insert(format!("seat {}: {other}", seat.seat));
            }
        }
        seats.push(seat);
    }
    if let Some(message) = failure {
        return Err(message);
    }
    if cancelled {
        return Ok(());
    }
    let first = seats.first().ok_or("the match has no seat")?;
    let result = first.handle.finalize(FinalizeRequest::default()).await.map_err(|e| format!("finalize: {e}"))?;
    let wall_clock_ms = u64::try_from(stopwatch.elapsed().as_millis()).unwrap_or(u64::MAX).min((1 << 53) - 1);
    for seat in &seats {
        seat.handle.close();
    }
    let replay = result.replay_text().ok_or("the finalize result carries no replay")?;
    let replay = format!("{}\n", replay.trim_end_matches('\n'));
    let names: Vec<String> = seats.iter().map(|s| s.seat.clone()).collect();
    let game = game_ranking(result.outcome.get("outcome").unwrap_or(&Value::Null), &names)?;
    let conduct = replay_conduct(&replay)?;
    let target = shared.dir.join(plan.replay_file());
    write_atomic(&target, replay.as_bytes()).map_err(|e| format!("cannot write {}: {e}", target.display()))?;
    let faults = seats
        .iter()
        .map(|s| (s.seat.clone(), s.conduct.lock().unwrap_or_else(PoisonError::into_inner).faults))
        .filter(|(_, n)| *n > 0)
        .collect();
    let record = MatchRecord {
        id: plan.id.clone(),
        level_id: plan.level_id.clone(),
        seed: plan.seed,
        seats: plan.seats.clone(),
        result: MatchResult::new(&game, conduct),
        faults,
        replay: plan.replay_file(),
        replay_sha256: sha256_hex(replay.as_bytes()),
        wall_clock_ms,
    };
    shared.journal.completed(&record).await.map_err(|e| e.to_string())?;
    {
        let mut state = shared.state();
        state.started.remove(&plan.index);
        state.completed.insert(plan.index, record.clone());
    }
    if let Some(observer) = &shared.observer {
        observer.match_completed(&record);
    }
    Ok(())
}
