//! Replay verification (`recheckReplayArtifact`, kernel spec §5.7, plus
//! strict checks beyond the reference).
//!
//! Stages, each run only when the previous one found nothing:
//!
//! 1. **parse** — the JSONL reads and the artifact satisfies every
//!    structural rule of §5 ([`super::validate`]); no game code runs.
//! 2. **structure** — rules checked on a parsed artifact without game code:
//!    the structural rules again for an artifact built in memory, and in
//!    strict mode canonical bytes and explicit level seeds.
//! 3. **recheck** — the game is resolved by its game/adapter reference and
//!    every level re-simulated: `init(level, level.seed)`, one `advance` per
//!    resolution with the recorded inputs (commit–reveal re-verified), each
//!    recorded command re-mapped through the game's command mapper and each
//!    timeout's system input through its timeout mapper; then status, stars
//!    and actionsUsed per level and the totals are compared. Strict mode also
//!    recomputes every checkpoint digest and checks the kernel's window
//!    invariants (tick == cursor, participants, causes, timeout adjacency).
//!
//! Verdicts: `malformed` (parse/structure), `rejected` (recheck found a
//! problem), `unverifiable` (no game for the replay, or records this verifier
//! cannot replay), `accepted-unsigned`.
//!
//! Decisions where the reference leaves room (or that go beyond it):
//! - The game must be registered under exactly the replay's game and adapter
//!   ids and versions; another version is `unverifiable`, not guessed at.
//! - A command is re-mapped with context `{sessionId, participantId: seat,
//!   submissionId, cursor, tick: resolution tick}`; the mapped action is
//!   compared on the replay projection (`extra` product fields and
//!   `verifiedPayload` are not part of a replay). A mapper that refuses a
//!   recorded command, or a timeout mapper that fails, is a problem.
//! - A timeout's system input is compared with the game's timeout mapper
//!   (seat defaulted to the timed-out seat, as the kernel does); a game
//!   without a mapper leaves the recorded input as it is (a note says so).
//! - A `commit-mismatch` without `attemptedReveal` (seat visibility) is
//!   rechecked from its `canonicalCommand` when the game maps it to a reveal.
//! - `interaction` records need the game's RFC-020 command classifier, which
//!   [`Game`] does not have: such replays are `unverifiable`.
//! - RFC-010 signatures are not checked: a replay declaring seat keys is
//!   judged as an unsigned one (a note says so).
//! - Strict mode: the bytes are canonical JSONL, explicit-seed levels use the
//!   header seed, each checkpoint's tick and kernel digest (§1.4, over the
//!   game's declared seats) match the re-simulation, resolution ticks and
//!   input cursors equal the level cursor, inputs come from the window's
//!   participants in sorted order, causes fit (`complete` iff everyone
//!   submitted), a timeout record directly precedes its timeout resolution
//!   and names the system input's seat, and recorded `verifiedPayload`s equal
//!   the verified reveals. What a conforming kernel writes passes.

use std::fmt;
use std::sync::Arc;

use gaos_json::Value;

use super::format::{ReplayArtifact, describe};
use super::problem::ProblemList;
use super::read::{decode_utf8, read_view};
use super::validate::{
    CommitMismatchView, InputView, LevelView, RecordBody, RecordView, ReplayView, ResolutionView, TimeoutView,
    validate_replay,
};
use crate::action::{RevealEnvelope, SubmittedAction};
use crate::commitment::{CommitmentBook, RevealCheck, SaltOwner};
pub use crate::digest::kernel_digest;
use crate::error::GameError;
use crate::event::{ResolutionCause, SeedPolicy};
use crate::game::{CommandContext, Game, GameRef, TimeoutContext, TimeoutInput};
use crate::reducer::{AnyState, DynReducer, TickReducer};
use crate::view::participants_of;

/// Most empty ticks a legacy (action-only) replay may ask the verifier to
/// simulate between its actions; beyond it the file is `unverifiable`.
pub const MAX_EMPTY_TICKS: u64 = 1_000_000;

/// Most diagnostic notes a report keeps.
const MAX_NOTES: usize = 100;

/// Finds the game that can re-run a replay from its `header.game`
/// (game id, adapter id and versions). Closures work:
/// `|game: &GameRef| registry.by_adapter(&game.adapter.id)`.
pub trait GameResolver {
    /// The game for `game`, or `None` when it is unknown.
    fn resolve(&self, game: &GameRef) -> Option<Arc<dyn Game>>;
}

impl<F> GameResolver for F
where
    F: Fn(&GameRef) -> Option<Arc<dyn Game>>,
{
    fn resolve(&self, game: &GameRef) -> Option<Arc<dyn Game>> {
        self(game)
    }
}

/// Verification options.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VerifyOptions {
    /// Also require canonical bytes, recompute checkpoint digests and check
    /// the kernel's window invariants (what a conforming kernel writes).
    pub strict: bool,
}

/// What to verify: file bytes, text, or an artifact already in memory.
#[derive(Debug, Clone, Copy)]
pub enum ReplaySource<'a> {
    /// Raw file bytes (must be UTF-8).
    Bytes(&'a [u8]),
    /// JSONL text.
    Text(&'a str),
    /// A parsed or finalized artifact (its structural problems are reported
    /// at stage `structure`; its bytes are canonical by construction).
    Artifact(&'a ReplayArtifact),
}

impl<'a> From<&'a str> for ReplaySource<'a> {
    fn from(text: &'a str) -> Self {
        ReplaySource::Text(text)
    }
}

impl<'a> From<&'a String> for ReplaySource<'a> {
    fn from(text: &'a String) -> Self {
        ReplaySource::Text(text)
    }
}

impl<'a> From<&'a [u8]> for ReplaySource<'a> {
    fn from(bytes: &'a [u8]) -> Self {
        ReplaySource::Bytes(bytes)
    }
}

impl<'a> From<&'a ReplayArtifact> for ReplaySource<'a> {
    fn from(artifact: &'a ReplayArtifact) -> Self {
        ReplaySource::Artifact(artifact)
    }
}

/// The classification of a replay.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// Does not parse or breaks the format's structural rules; no game code ran.
    Malformed,
    /// Structurally valid, but re-simulation, the result comparison, the
    /// commit–reveal check or a command/timeout mapping check found a problem.
    Rejected,
    /// The game is unknown (or the replay needs something this verifier
    /// cannot run), so nothing could be re-simulated to the end.
    Unverifiable,
    /// No problem found; unsigned, so this is the best verdict it can get.
    AcceptedUnsigned,
}

impl Verdict {
    /// `malformed`, `rejected`, `unverifiable` or `accepted-unsigned`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Malformed => "malformed",
            Verdict::Rejected => "rejected",
            Verdict::Unverifiable => "unverifiable",
            Verdict::AcceptedUnsigned => "accepted-unsigned",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where verification stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stage {
    /// Reading the JSONL and its structural rules.
    Parse,
    /// Structural rules of an in-memory artifact, strict byte/seed rules.
    Structure,
    /// Re-simulation with the game.
    Recheck,
}

impl Stage {
    /// `parse`, `structure` or `recheck`.
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Parse => "parse",
            Stage::Structure => "structure",
            Stage::Recheck => "recheck",
        }
    }
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What re-simulation produced for one level (all `None` when the level
/// could not be replayed to its end).
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayedLevel {
    /// Level index.
    pub index: usize,
    /// Final view status.
    pub status: Option<String>,
    /// Final view stars.
    pub stars: Option<f64>,
    /// Final actionsUsed.
    pub actions_used: Option<u64>,
    /// Final view `outcome`, when the game reports one.
    pub outcome: Option<Value>,
    /// Resolutions replayed in this level.
    pub resolutions: u64,
}

/// The result of [`verify_replay`].
#[derive(Debug, Clone, PartialEq)]
pub struct VerifyReport {
    /// The classification.
    pub verdict: Verdict,
    /// Where it stopped (`None` when accepted).
    pub stage: Option<Stage>,
    /// Problems, each naming a line and field.
    pub problems: ProblemList,
    /// Non-fatal diagnostics (verified mismatches, checks that could not run).
    pub notes: Vec<String>,
    /// Per-level re-simulation results (empty before stage recheck).
    pub levels: Vec<ReplayedLevel>,
    /// Resolutions re-simulated in total.
    pub resolutions: u64,
}

impl VerifyReport {
    fn stopped(verdict: Verdict, stage: Stage, problems: ProblemList) -> Self {
        VerifyReport { verdict, stage: Some(stage), problems, notes: Vec::new(), levels: Vec::new(), resolutions: 0 }
    }

    /// Whether the verdict is `accepted-unsigned`.
    pub fn is_accepted(&self) -> bool {
        self.verdict == Verdict::AcceptedUnsigned
    }
}

/// Verify a replay: read and validate it (stage `parse`), apply the
/// game-free structure rules (stage `structure`), then re-simulate every
/// level with the game `resolver` finds (stage `recheck`).
///
/// Text is streamed: each line is parsed, validated and kept only as a
/// compact typed record, so memory stays well below the size of the parsed
/// JSON.
pub fn verify_replay<'a>(
    source: impl Into<ReplaySource<'a>>,
    resolver: &dyn GameResolver,
    options: &VerifyOptions,
) -> VerifyReport {
    match source.into() {
        ReplaySource::Bytes(bytes) => match decode_utf8(bytes) {
            Ok(text) => verify_text(text, resolver, options),
            Err(e) => VerifyReport::stopped(Verdict::Malformed, Stage::Parse, e.problems),
        },
        ReplaySource::Text(text) => verify_text(text, resolver, options),
        ReplaySource::Artifact(artifact) => match validate_replay(artifact) {
            Ok(view) => verify_view(&view, ProblemList::new(), resolver, options),
            Err(e) => VerifyReport::stopped(Verdict::Malformed, Stage::Structure, e.problems),
        },
    }
}

fn verify_text(text: &str, resolver: &dyn GameResolver, options: &VerifyOptions) -> VerifyReport {
    match read_view(text, options.strict) {
        Ok((view, byte_problems)) => verify_view(&view, byte_problems, resolver, options),
        Err(problems) => VerifyReport::stopped(Verdict::Malformed, Stage::Parse, problems),
    }
}

fn verify_view(
    view: &ReplayView,
    byte_problems: ProblemList,
    resolver: &dyn GameResolver,
    options: &VerifyOptions,
) -> VerifyReport {
    if options.strict {
        let mut problems = byte_problems;
        if view.seed_policy == SeedPolicy::Explicit {
            for level in &view.levels {
                if level.seed != view.seed {
                    problems.at(
                        1,
                        format!("header.levels[{}].seed", level.index),
                        format!(
                            "is {}, but an explicit-seed replay plays every level with the header seed {}",
                            level.seed, view.seed
                        ),
                    );
                }
            }
        }
        if !problems.is_empty() {
            return VerifyReport::stopped(Verdict::Malformed, Stage::Structure, problems);
        }
    }
    let unverifiable = |message: String| {
        let mut problems = ProblemList::new();
        problems.at(1, "header.game", message);
        VerifyReport::stopped(Verdict::Unverifiable, Stage::Recheck, problems)
    };
    let wanted = &view.game;
    let Some(game) = resolver.resolve(wanted) else {
        return unverifiable(format!(
            "no game is registered for adapter {}@{} (game {}@{}), so the replay cannot be re-simulated",
            wanted.adapter.id, wanted.adapter.version, wanted.id, wanted.version
        ));
    };
    let registered = game.game_ref();
    if &registered != wanted {
        return unverifiable(format!(
            "the registered game is {}@{} (adapter {}@{}), but the replay was played with {}@{} (adapter {}@{}); \
             another version may have other rules",
            registered.id,
            registered.version,
            registered.adapter.id,
            registered.adapter.version,
            wanted.id,
            wanted.version,
            wanted.adapter.id,
            wanted.adapter.version
        ));
    }
    Recheck::new(view, &*game, options.strict).run()
}

fn status_of(view: &Value) -> Option<&'static str> {
    match view.get("status").and_then(Value::as_str) {
        Some("playing") => Some("playing"),
        Some("won") => Some("won"),
        Some("failed") => Some("failed"),
        Some("ended") => Some("ended"),
        _ => None,
    }
}

fn number(x: Option<f64>) -> String {
    x.map_or_else(|| "null".to_owned(), |x| Value::Number(x).to_string())
}

/// The projected fields of an action (what a replay records), for equality
/// and messages: `extra` and `verifiedPayload` are not part of the projection.
fn projected(action: &SubmittedAction) -> Value {
    let mut copy = action.clone();
    copy.extra.clear();
    copy.verified_payload = None;
    copy.to_value()
}

fn same_projection(a: &SubmittedAction, b: &SubmittedAction) -> bool {
    a.id == b.id
        && a.payload == b.payload
        && a.x == b.x
        && a.y == b.y
        && a.index == b.index
        && a.board_id == b.board_id
        && a.zone_id == b.zone_id
        && a.seat == b.seat
        && a.targets == b.targets
        && a.commit == b.commit
        && a.reveal == b.reveal
}

/// Where an input sits in its record, for field paths.
#[derive(Debug, Clone, Copy)]
enum InputPath {
    /// `resolution.inputs[j]`.
    Listed(usize),
    /// `action` (an action line is its own single input).
    Line,
}

impl InputPath {
    fn field(self, name: &str) -> String {
        let base = match self {
            InputPath::Listed(j) => format!("resolution.inputs[{j}]"),
            InputPath::Line => "action".to_owned(),
        };
        if name.is_empty() { base } else { format!("{base}.{name}") }
    }
}

/// Seats are booked per level; `usize` origins are replay lines (of the
/// commit, and of the first reveal using a salt).
type LevelSeat<'v> = (usize, &'v str);

/// Re-simulation state of one level.
struct LevelRun {
    state: Option<AnyState>,
    view: Value,
    status: &'static str,
    cursor: u64,
    terminal_line: Option<usize>,
    last_resolution_tick: Option<u64>,
    /// Index (in `view.records`) of the timeout waiting for its resolution.
    pending_timeout: Option<usize>,
    previous_kind: Option<&'static str>,
    legacy_last_tick: Option<u64>,
    legacy_inferred_tick: u64,
    halted: bool,
    resolutions: u64,
}

struct Recheck<'v> {
    view: &'v ReplayView,
    game: &'v dyn Game,
    reducer: DynReducer,
    seats: Vec<String>,
    sorted_seats: Vec<String>,
    strict: bool,
    problems: ProblemList,
    unverifiable: ProblemList,
    notes: Vec<String>,
    dropped_notes: usize,
    book: CommitmentBook<LevelSeat<'v>, usize>,
    actions: Vec<SubmittedAction>,
    empty_ticks: u64,
    noted_no_timeout_mapper: bool,
}

impl<'v> Recheck<'v> {
    fn new(view: &'v ReplayView, game: &'v dyn Game, strict: bool) -> Self {
        let seats = game.seats();
        let mut sorted_seats = seats.clone();
        sorted_seats.sort();
        Recheck {
            view,
            game,
            reducer: game.reducer(),
            seats,
            sorted_seats,
            strict,
            problems: ProblemList::new(),
            unverifiable: ProblemList::new(),
            notes: Vec::new(),
            dropped_notes: 0,
            book: CommitmentBook::new(),
            actions: Vec::new(),
            empty_ticks: 0,
            noted_no_timeout_mapper: false,
        }
    }

    fn note(&mut self, note: String) {
        if self.notes.len() < MAX_NOTES {
            self.notes.push(note);
        } else {
            self.dropped_notes += 1;
        }
    }

    fn run(mut self) -> VerifyReport {
        let view = self.view;
        if view.signed {
            self.note(
                "the replay declares RFC-010 seat keys; this verifier does not check signatures, so it is judged as \
                 an unsigned replay"
                    .into(),
            );
        }
        let mut levels = Vec::with_capacity(view.levels.len());
        for level in &view.levels {
            let start = view.records.partition_point(|r| r.level_index < level.index);
            levels.push(self.level(level, start, view.level_records(level.index)));
        }
        if levels.iter().all(|l| l.status.is_some()) {
            let stars: f64 =
                levels.iter().filter(|l| l.status.as_deref() == Some("won")).map(|l| l.stars.unwrap_or(0.0)).sum();
            let actions: u64 = levels.iter().filter_map(|l| l.actions_used).sum();
            if stars != view.totals.total_stars {
                self.problems.at(
                    1,
                    "header.totals.totalStars",
                    format!("recorded {}, replayed {}", number(Some(view.totals.total_stars)), number(Some(stars))),
                );
            }
            if actions != view.totals.total_actions_used {
                self.problems.at(
                    1,
                    "header.totals.totalActionsUsed",
                    format!("recorded {}, replayed {actions}", view.totals.total_actions_used),
                );
            }
        }
        if self.dropped_notes > 0 {
            let dropped = self.dropped_notes;
            self.notes.push(format!("... and {dropped} more notes"));
        }
        let resolutions = levels.iter().map(|l| l.resolutions).sum();
        let (verdict, stage, problems) = if !self.problems.is_empty() {
            let mut problems = self.problems;
            problems.extend(self.unverifiable);
            (Verdict::Rejected, Some(Stage::Recheck), problems)
        } else if !self.unverifiable.is_empty() {
            (Verdict::Unverifiable, Some(Stage::Recheck), self.unverifiable)
        } else {
            (Verdict::AcceptedUnsigned, None, ProblemList::new())
        };
        VerifyReport { verdict, stage, problems, notes: self.notes, levels, resolutions }
    }

    fn level(&mut self, level: &'v LevelView, start: usize, records: &'v [RecordView]) -> ReplayedLevel {
        let mut replayed = ReplayedLevel {
            index: level.index,
            status: None,
            stars: None,
            actions_used: None,
            outcome: None,
            resolutions: 0,
        };
        let state = match self.reducer.init(&level.level, level.seed) {
            Ok(state) => state,
            Err(e) => {
                self.problems.at(
                    1,
                    format!("header.levels[{}].level", level.index),
                    format!("the game cannot start this level (seed {}): {e}", level.seed),
                );
                return replayed;
            }
        };
        let view = self.reducer.view(&state);
        let mut run = LevelRun {
            state: Some(state),
            view,
            status: "playing",
            cursor: 0,
            terminal_line: None,
            last_resolution_tick: None,
            pending_timeout: None,
            previous_kind: None,
            legacy_last_tick: None,
            legacy_inferred_tick: 0,
            halted: false,
            resolutions: 0,
        };
        if !self.refresh_status(&mut run, 1, &format!("header.levels[{}].level", level.index)) {
            return replayed;
        }
        for (k, record) in records.iter().enumerate() {
            if run.halted {
                break;
            }
            match &record.body {
                RecordBody::Resolution(res) => {
                    let tick = res.tick.unwrap_or(0);
                    self.resolve(&mut run, level, record, res, tick, "resolution");
                }
                RecordBody::Action(res) => {
                    let tick = if self.view.grouped {
                        res.tick.unwrap_or(0)
                    } else {
                        match self.legacy_empty_ticks(&mut run, record, res) {
                            Some(tick) => tick,
                            None => break,
                        }
                    };
                    self.resolve(&mut run, level, record, res, tick, "action");
                }
                RecordBody::Timeout(timeout) => self.timeout(&mut run, record, start + k, timeout, records.get(k + 1)),
                RecordBody::Checkpoint { tick, digest } => self.checkpoint(&run, record, *tick, *digest),
                RecordBody::CommitMismatch(mismatch) => self.commit_mismatch(&mut run, level.index, record, mismatch),
                RecordBody::Interaction(_) => {
                    self.unverifiable.at(
                        record.line,
                        "interaction",
                        "interaction records change game state through the game's command classifier (RFC-020), \
                         which this verifier cannot run",
                    );
                    run.halted = true;
                }
                RecordBody::Extension { .. } | RecordBody::SeatSignature { .. } | RecordBody::Interest { .. } => {}
            }
            run.previous_kind = Some(record.body.kind());
        }
        replayed.resolutions = run.resolutions;
        if run.halted {
            return replayed;
        }
        let Some(state) = run.state.as_ref() else {
            return replayed;
        };
        let stars = run.view.get("stars").and_then(Value::as_f64);
        let actions_used = match self.reducer.replay_metrics(state) {
            Some(metrics) => Some(metrics.actions_used),
            None => run.view.get("hud").and_then(|hud| hud.get("actionsUsed")).and_then(Value::as_u64),
        };
        let field = |name: &str| format!("header.levels[{}].result.{name}", level.index);
        let recorded = &level.result;
        if run.status != recorded.status.as_str() {
            let message = format!("recorded {}, replayed {}", recorded.status.as_str(), run.status);
            self.problems.at(1, field("status"), message);
        }
        if stars != recorded.stars {
            let message = format!("recorded {}, replayed {}", number(recorded.stars), number(stars));
            self.problems.at(1, field("stars"), message);
        }
        match actions_used {
            Some(used) if used != recorded.actions_used => self.problems.at(
                1,
                field("actionsUsed"),
                format!("recorded {}, replayed {used}", recorded.actions_used),
            ),
            Some(_) => {}
            None => self.problems.at(
                1,
                field("actionsUsed"),
                "the game reports no actionsUsed (no replay metrics and no hud.actionsUsed in its view)",
            ),
        }
        replayed.status = Some(run.status.to_owned());
        replayed.stars = stars;
        replayed.actions_used = actions_used;
        replayed.outcome = run.view.get("outcome").cloned();
        replayed
    }

    /// Read status from the current view; a view without one halts the level.
    fn refresh_status(&mut self, run: &mut LevelRun, line: usize, field: &str) -> bool {
        match status_of(&run.view) {
            Some(status) => {
                run.status = status;
                true
            }
            None => {
                self.problems.at(
                    line,
                    field,
                    format!(
                        "the game's view has no valid status (playing, won, failed or ended): {}",
                        describe(&run.view, 120)
                    ),
                );
                run.halted = true;
                false
            }
        }
    }

    /// Legacy bodies: `advance([])` for every tick skipped before an action
    /// (TickReducers only). Returns the action's effective tick, or `None`
    /// when the level halted.
    fn legacy_empty_ticks(&mut self, run: &mut LevelRun, record: &RecordView, res: &ResolutionView) -> Option<u64> {
        let effective = match res.tick {
            Some(tick) => {
                run.legacy_inferred_tick = tick;
                tick
            }
            None => run.legacy_inferred_tick,
        };
        if run.legacy_last_tick.is_some_and(|t| effective <= t) {
            return Some(effective);
        }
        let first_empty = run.legacy_last_tick.map_or(0, |t| t + 1);
        run.legacy_last_tick = Some(effective);
        if !self.reducer.supports_empty_ticks() || effective <= first_empty {
            return Some(effective);
        }
        let gap = effective - first_empty;
        if self.empty_ticks + gap > MAX_EMPTY_TICKS {
            self.unverifiable.at(
                record.line,
                "action.tick",
                format!("needs {gap} empty ticks before it; this verifier simulates at most {MAX_EMPTY_TICKS}"),
            );
            run.halted = true;
            return None;
        }
        self.empty_ticks += gap;
        for _ in 0..gap {
            let state = run.state.take()?;
            match self.reducer.advance(state, &[]) {
                Ok(next) => run.state = Some(next),
                Err(e) => {
                    self.problems.at(
                        record.line,
                        "action.tick",
                        format!("an empty tick before this action failed: {e}"),
                    );
                    run.halted = true;
                    return None;
                }
            }
            run.cursor += 1;
        }
        if let Some(state) = run.state.as_ref() {
            run.view = self.reducer.view(state);
        }
        self.refresh_status(run, record.line, "action").then_some(effective)
    }

    /// One reducer call with the recorded inputs (after the command,
    /// commit–reveal and timeout-mapping checks).
    fn resolve(
        &mut self,
        run: &mut LevelRun,
        level: &'v LevelView,
        record: &'v RecordView,
        res: &'v ResolutionView,
        tick: u64,
        kind: &'static str,
    ) {
        let line = record.line;
        let pending_timeout = run.pending_timeout.take();
        if run.status != "playing" {
            let after = run.terminal_line.map_or_else(String::new, |l| format!(" after line {l}"));
            self.problems.at(
                line,
                kind,
                format!(
                    "comes after the level ended (status {}{after}): nothing resolves once a level is over",
                    run.status
                ),
            );
            run.halted = true;
            return;
        }
        let path = |j: usize| if kind == "action" { InputPath::Line } else { InputPath::Listed(j) };
        if self.strict && kind == "resolution" {
            self.strict_window(run, record, res, pending_timeout);
        }
        let mut actions = std::mem::take(&mut self.actions);
        actions.clear();
        for (j, input) in res.inputs.iter().enumerate() {
            let mut action = input.action();
            if input.is_user_input() {
                self.check_command(line, path(j), input, &action, tick);
            }
            let seat = input.seat();
            if let Some(commit) = input.commit() {
                let Some(seat) = seat else {
                    self.problems.at(line, path(j).field("commit"), "a commitment needs the committing seat");
                    continue;
                };
                let key = (level.index, seat);
                let expected = self.book.view().next_id(&key);
                if commit.commitment_id != expected {
                    self.problems.at(
                        line,
                        path(j).field("commit.commitmentId"),
                        format!("is {}, but {seat}'s next commitment id is {expected}", commit.commitment_id),
                    );
                    continue;
                }
                self.book.record_commit(key, expected, commit.hash.clone(), tick, line);
            }
            if let Some(reveal) = input.reveal() {
                if !self.verify_reveal(level.index, line, path(j), seat, reveal) {
                    continue;
                }
                if self.strict && input.verified_payload() != Some(&reveal.payload) {
                    self.problems.at(
                        line,
                        path(j).field("verifiedPayload"),
                        "must equal the verified reveal's payload (the kernel records it for every verified reveal)",
                    );
                }
                action.verified_payload = Some(reveal.payload.clone());
            }
            actions.push(action);
        }
        if res.cause == ResolutionCause::Timeout
            && let (Some(system), Some(timeout_index)) = (res.system_input, pending_timeout)
            && let Some(RecordView { line: timeout_line, body: RecordBody::Timeout(timeout), .. }) =
                self.view.records.get(timeout_index)
        {
            self.check_timeout_mapping(level, line, timeout, *timeout_line, &res.inputs[system].action());
        }
        let advanced = match run.state.take() {
            Some(state) => self.reducer.advance(state, &actions),
            None => Err(GameError::new("the level has no state to advance")),
        };
        self.actions = actions;
        match advanced {
            Ok(next) => {
                run.view = self.reducer.view(&next);
                run.state = Some(next);
            }
            Err(e) => {
                self.problems.at(line, kind, format!("the game refuses this resolution on replay: {e}"));
                run.halted = true;
                return;
            }
        }
        run.cursor += 1;
        run.resolutions += 1;
        run.last_resolution_tick = Some(tick);
        if self.refresh_status(run, line, kind) && run.status != "playing" {
            run.terminal_line = Some(line);
        }
    }

    /// `canonicalCommand` must map, through the game's command mapper, to
    /// the recorded action.
    fn check_command(
        &mut self,
        line: usize,
        path: InputPath,
        input: &InputView,
        authored: &SubmittedAction,
        tick: u64,
    ) {
        let (Some(submission_id), Some(text), Some(cursor), Some(seat)) =
            (input.submission_id(), input.canonical_command(), input.cursor(), authored.seat.as_deref())
        else {
            return;
        };
        let command = match gaos_json::parse(text) {
            Ok(command) => command,
            Err(e) => {
                self.problems.at(line, path.field("canonicalCommand"), format!("is not JSON: {e}"));
                return;
            }
        };
        if !self.view.version.has_integrity_rules() && gaos_json::canonical_json(&command) != text {
            self.problems.at(line, path.field("canonicalCommand"), "is not canonical JSON text");
            return;
        }
        let ctx =
            CommandContext { session_id: &self.view.session_id, participant_id: seat, submission_id, cursor, tick };
        match self.game.command_to_action(&command, &ctx) {
            Err(e) => self.problems.at(
                line,
                path.field("canonicalCommand"),
                format!("the game's command mapping refuses {text}: {e}"),
            ),
            Ok(mut mapped) => {
                if mapped.seat.is_none() {
                    mapped.seat = Some(seat.to_owned());
                }
                if !same_projection(&mapped, authored) {
                    self.problems.at(
                        line,
                        path.field(""),
                        format!(
                            "the game maps canonicalCommand {text} to {}, but the record holds {}",
                            describe(&projected(&mapped), 200),
                            describe(&projected(authored), 200)
                        ),
                    );
                }
            }
        }
    }

    /// Verify a reveal against its commitment; `false` drops the input.
    fn verify_reveal(
        &mut self,
        level: usize,
        line: usize,
        path: InputPath,
        seat: Option<&'v str>,
        reveal: &'v RevealEnvelope,
    ) -> bool {
        let Some(seat) = seat else {
            self.problems.at(line, path.field("reveal"), "a reveal needs the revealing seat");
            return false;
        };
        let key = (level, seat);
        let id = reveal.commitment_id;
        match self.book.view().check_reveal(&self.view.session_id, &key, id, &reveal.salt, &reveal.payload) {
            RevealCheck::Unknown => {
                let message = format!("{seat} has no commitment {id} in this level");
                self.problems.at(line, path.field("reveal.commitmentId"), message);
                false
            }
            RevealCheck::AlreadyRevealed(commitment) => {
                let message = format!("{seat}'s commitment {id} (line {}) was already revealed", commitment.origin);
                self.problems.at(line, path.field("reveal.commitmentId"), message);
                false
            }
            RevealCheck::Unhashable(e) => {
                self.problems.at(line, path.field("reveal"), format!("cannot be hashed: {e}"));
                false
            }
            RevealCheck::Mismatch(commitment) => {
                let committed = commitment.origin;
                self.problems.at(
                    line,
                    path.field("reveal"),
                    format!("commit_mismatch: the reveal does not match {seat}'s commitment {id} (line {committed})"),
                );
                false
            }
            RevealCheck::Match(_) => {
                self.book.mark_revealed(None, &key, id);
                self.note_salt(level, seat, id, line, &reveal.salt);
                true
            }
        }
    }

    fn note_salt(&mut self, level: usize, seat: &'v str, commitment_id: u32, line: usize, salt: &str) {
        let owner = SaltOwner { seat: (level, seat), commitment_id, origin: line };
        if let Some(first) = self.book.note_salt(None, salt, owner) {
            let first = first.origin;
            self.note(format!(
                "line {line}: salt reuse: {seat}'s commitment {commitment_id} reuses the salt first seen on line {first}"
            ));
        }
    }

    /// A timeout resolution's system input must be what the game's timeout
    /// mapper derives (when the game has one).
    fn check_timeout_mapping(
        &mut self,
        level: &LevelView,
        line: usize,
        timeout: &TimeoutView,
        timeout_line: usize,
        system: &SubmittedAction,
    ) {
        let input = TimeoutInput {
            timeout_id: timeout.timeout_id.clone(),
            tick: timeout.tick as f64,
            participant_id: timeout.participant_id.clone(),
            reason: timeout.reason.clone(),
            timeout_policy_ref: timeout.timeout_policy_ref.clone(),
        };
        let ctx = TimeoutContext {
            session_id: self.view.session_id.clone(),
            game: self.view.game.clone(),
            level_id: level.id.clone(),
            level_version: level.version.clone(),
            level: level.level.clone(),
            seed: level.seed,
            participant_id: timeout.participant_id.clone(),
            window_ref: timeout.window_ref,
        };
        match self.game.timeout_to_action(&ctx, &input) {
            None => {
                if !self.noted_no_timeout_mapper {
                    self.noted_no_timeout_mapper = true;
                    self.note(
                        "timeout system inputs were replayed as recorded: the game has no timeout mapper to re-derive \
                         them"
                            .into(),
                    );
                }
            }
            Some(Err(e)) => {
                self.problems.at(line, "resolution.systemInput", format!("the game's timeout mapper fails here: {e}"))
            }
            Some(Ok(mut mapped)) => {
                if mapped.seat.is_none() {
                    mapped.seat = timeout.participant_id.clone();
                }
                if !same_projection(&mapped, system) {
                    self.problems.at(
                        line,
                        "resolution.systemInput",
                        format!(
                            "the game's timeout mapper derives {} for the timeout on line {timeout_line}, but the \
                             record holds {}",
                            describe(&projected(&mapped), 200),
                            describe(&projected(system), 200)
                        ),
                    );
                }
            }
        }
    }

    fn timeout(
        &mut self,
        run: &mut LevelRun,
        record: &RecordView,
        index: usize,
        timeout: &TimeoutView,
        next: Option<&RecordView>,
    ) {
        run.pending_timeout = Some(index);
        if !self.strict {
            return;
        }
        let line = record.line;
        if timeout.timeout_policy_ref.is_none() && timeout.tick != timeout.window_ref {
            self.problems.at(
                line,
                "timeout.tick",
                format!("is {}, but windowRef is {}", timeout.tick, timeout.window_ref),
            );
        }
        if timeout.window_ref != run.cursor {
            self.problems.at(
                line,
                "timeout.windowRef",
                format!("is {}, but the open window of the level is {}", timeout.window_ref, run.cursor),
            );
        }
        if let Some(seat) = &timeout.participant_id
            && !self.seats.contains(seat)
        {
            self.problems.at(line, "timeout.participantId", format!("{seat} is not a seat of {}", self.view.game.id));
        }
        let followed = match next.map(|r| &r.body) {
            Some(RecordBody::Resolution(res)) => res.cause == ResolutionCause::Timeout,
            Some(RecordBody::CommitMismatch(m)) => m.tick == timeout.window_ref,
            _ => false,
        };
        if !followed {
            self.problems.at(
                line,
                "timeout",
                "must be directly followed by its timeout resolution (or the commit-mismatch that cancelled it)",
            );
        }
    }

    fn checkpoint(&mut self, run: &LevelRun, record: &RecordView, tick: u64, digest: u32) {
        if !self.strict {
            return;
        }
        if tick != run.cursor {
            self.problems.at(
                record.line,
                "checkpoint.tick",
                format!("is {tick}, but the level is at tick {} after {} resolutions", run.cursor, run.cursor),
            );
        }
        let Some(state) = run.state.as_ref() else {
            return;
        };
        let expected = kernel_digest(&*self.reducer, state, &self.sorted_seats, run.cursor, run.cursor);
        if expected != digest {
            self.problems.at(
                record.line,
                "checkpoint.digest",
                format!("recorded {digest}, recomputed {expected} (kernel digest at cursor {})", run.cursor),
            );
        }
    }

    fn commit_mismatch(&mut self, run: &mut LevelRun, level: usize, record: &RecordView, m: &'v CommitMismatchView) {
        run.pending_timeout = None;
        let line = record.line;
        if let Some(last) = run.last_resolution_tick
            && m.tick != last + 1
        {
            self.problems.at(
                line,
                "commit-mismatch.tick",
                format!("is {}, but the open tick after the resolution at tick {last} is {}", m.tick, last + 1),
            );
        }
        if self.strict {
            if m.tick != run.cursor {
                self.problems.at(
                    line,
                    "commit-mismatch.tick",
                    format!("is {}, but the open tick is {}", m.tick, run.cursor),
                );
            }
            if let Some(cursor) = m.cursor
                && cursor != run.cursor
            {
                let message = format!("is {cursor}, but the open window is {}", run.cursor);
                self.problems.at(line, "commit-mismatch.cursor", message);
            }
        }
        let mapped = m.canonical_command.as_deref().map(|text| self.mapped_reveal(m, text, run.cursor));
        if let (Some((salt, payload)), Some(mapped), Some(_)) = (&m.attempted_reveal, &mapped, m.cursor) {
            let expected =
                RevealEnvelope { commitment_id: m.commitment_id, salt: salt.clone(), payload: payload.clone() };
            let show = |r: &RevealEnvelope| describe(&gaos_json::to_value(r).unwrap_or_default(), 160);
            match mapped {
                Err(e) => self.problems.at(
                    line,
                    "commit-mismatch.canonicalCommand",
                    format!("the game's command mapping refuses it: {e}"),
                ),
                Ok(reveal) if reveal.as_ref() != Some(&expected) => self.problems.at(
                    line,
                    "commit-mismatch.attemptedReveal",
                    format!(
                        "the game maps canonicalCommand to reveal {}, but the record holds {}",
                        reveal.as_ref().map_or_else(|| "nothing".to_owned(), show),
                        show(&expected)
                    ),
                ),
                Ok(_) => {}
            }
        }
        let key = (level, m.participant_id.as_str());
        let Some(commitment) = self.book.view().commitment(&key, m.commitment_id) else {
            self.problems.at(
                line,
                "commit-mismatch.commitmentId",
                format!("{} has no commitment {} in this level", m.participant_id, m.commitment_id),
            );
            return;
        };
        if commitment.revealed {
            self.problems.at(
                line,
                "commit-mismatch.commitmentId",
                format!("{}'s commitment {} was already revealed", m.participant_id, m.commitment_id),
            );
            return;
        }
        let (salt, payload, source) = match (&m.attempted_reveal, mapped) {
            (Some((salt, payload)), _) => (salt.clone(), payload.clone(), "attemptedReveal"),
            (None, Some(Ok(Some(reveal)))) if reveal.commitment_id == m.commitment_id => {
                (reveal.salt, reveal.payload, "canonicalCommand")
            }
            _ => {
                self.note(format!(
                    "line {line}: the commit-mismatch of {} carries no attempted reveal, so it cannot be rechecked",
                    m.participant_id
                ));
                return;
            }
        };
        match self.book.view().check_reveal(&self.view.session_id, &key, m.commitment_id, &salt, &payload) {
            RevealCheck::Unknown | RevealCheck::AlreadyRevealed(_) => {}
            RevealCheck::Unhashable(e) => {
                self.problems.at(line, format!("commit-mismatch.{source}"), format!("cannot be hashed: {e}"))
            }
            RevealCheck::Match(commitment) => {
                let committed = commitment.origin;
                self.problems.at(
                    line,
                    format!("commit-mismatch.{source}"),
                    format!(
                        "not a mismatch: this reveal matches {}'s commitment {} (line {committed})",
                        m.participant_id, m.commitment_id
                    ),
                )
            }
            RevealCheck::Mismatch(_) => {
                self.note(format!(
                    "line {line}: verified commit_mismatch of {}'s commitment {} (from {source})",
                    m.participant_id, m.commitment_id
                ));
                if let Some((salt, _)) = &m.attempted_reveal {
                    self.note_salt(level, &m.participant_id, m.commitment_id, line, salt);
                }
            }
        }
    }

    /// The reveal a refused submission's command maps to.
    fn mapped_reveal(
        &self,
        m: &CommitMismatchView,
        text: &str,
        open_cursor: u64,
    ) -> Result<Option<RevealEnvelope>, String> {
        let command = gaos_json::parse(text).map_err(|e| format!("canonicalCommand is not JSON: {e}"))?;
        let ctx = CommandContext {
            session_id: &self.view.session_id,
            participant_id: &m.participant_id,
            submission_id: &m.submission_id,
            cursor: m.cursor.unwrap_or(open_cursor),
            tick: m.tick,
        };
        self.game.command_to_action(&command, &ctx).map(|a| a.reveal).map_err(|e| e.to_string())
    }

    /// Strict: the window invariants a kernel guarantees for a resolution.
    fn strict_window(
        &mut self,
        run: &LevelRun,
        record: &RecordView,
        res: &ResolutionView,
        pending_timeout: Option<usize>,
    ) {
        let line = record.line;
        let tick = res.tick.unwrap_or(0);
        if tick != run.cursor {
            self.problems.at(
                line,
                "resolution.tick",
                format!(
                    "is {tick}, but this is resolution {} of the level (a kernel resolves tick == cursor)",
                    run.cursor
                ),
            );
        }
        let mut participants = match participants_of(&run.view, &self.seats) {
            Ok(participants) => participants,
            Err(e) => {
                self.problems.at(line, "resolution", format!("the game's view names no valid participants: {e}"));
                return;
            }
        };
        participants.sort();
        let mut submitted: Vec<&str> = Vec::new();
        for (j, input) in res.inputs.iter().enumerate() {
            let path = InputPath::Listed(j);
            if !input.is_user_input() {
                if Some(j) != res.system_input || j + 1 != res.inputs.len() {
                    self.problems.at(
                        line,
                        path.field(""),
                        "only the timeout's system input, last in the list, comes without a submission id",
                    );
                }
                continue;
            }
            if input.cursor() != Some(run.cursor) {
                let found = input.cursor().map_or_else(|| "none".to_owned(), |c| c.to_string());
                self.problems.at(
                    line,
                    path.field("cursor"),
                    format!("must be the open window {}, found {found}", run.cursor),
                );
            }
            let Some(seat) = input.seat() else {
                self.problems.at(line, path.field("seat"), "a submission must name its seat");
                continue;
            };
            if !participants.iter().any(|p| p == seat) {
                let message = format!("{seat} is not a participant of this window {participants:?}");
                self.problems.at(line, path.field("seat"), message);
            }
            if submitted.contains(&seat) {
                self.problems.at(line, path.field("seat"), format!("{seat} submits twice in one window"));
            }
            if submitted.last().is_some_and(|last| *last > seat) {
                self.problems.at(line, path.field("seat"), "inputs must be in sorted participant order");
            }
            submitted.push(seat);
        }
        let all_submitted = participants.iter().all(|p| submitted.contains(&p.as_str()));
        match res.cause {
            ResolutionCause::Complete if !all_submitted => self.problems.at(
                line,
                "resolution.cause",
                format!("is complete, but not every participant of {participants:?} submitted"),
            ),
            ResolutionCause::Tick if all_submitted => self.problems.at(
                line,
                "resolution.cause",
                "is tick, but every participant submitted (that resolution is complete)",
            ),
            ResolutionCause::Timeout => {
                let timeout = pending_timeout.and_then(|i| match self.view.records.get(i).map(|r| &r.body) {
                    Some(RecordBody::Timeout(t)) => Some(t),
                    _ => None,
                });
                let Some(timeout) = timeout.filter(|_| run.previous_kind == Some("timeout")) else {
                    self.problems.at(
                        line,
                        "resolution.cause",
                        "a timeout resolution must directly follow its timeout record",
                    );
                    return;
                };
                let system_seat = res.system_input.and_then(|i| res.inputs[i].seat());
                if system_seat != timeout.participant_id.as_deref() {
                    self.problems.at(
                        line,
                        "resolution.systemInput.seat",
                        format!(
                            "must be the timed-out seat {}, found {}",
                            timeout.participant_id.as_deref().unwrap_or("(none: window-wide)"),
                            system_seat.unwrap_or("none")
                        ),
                    );
                }
                if let Some(seat) = timeout.participant_id.as_deref() {
                    if !participants.iter().any(|p| p == seat) {
                        let message = format!("{seat} is not a participant of this window");
                        self.problems.at(line, "resolution.systemInput.seat", message);
                    }
                    if submitted.contains(&seat) {
                        let message = format!("{seat} already submitted in this window");
                        self.problems.at(line, "resolution.systemInput.seat", message);
                    }
                }
            }
            _ => {}
        }
    }
}
