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
//! 4. **signatures** — a replay declaring an RFC-010 roster (`seatKeys` +
//!    `signaturePolicy`, 1.2+) has every seat's chain reproduced and every
//!    signature and signing policy checked ([`signatures`], no game code).
//!
//! Verdicts: `malformed` (parse/structure), `rejected` (recheck, or the
//! signature check, found a problem), `unverifiable` (no game for the replay,
//! or records this verifier cannot replay), `accepted-signed` (a signed
//! replay whose signatures are complete and valid), `accepted-unsigned`.
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
//! - A signature problem rejects a replay whose re-simulation passed (stage
//!   `signatures`) and one whose game is unknown (a forged signature is
//!   decisive without the game); a re-simulation problem wins (stage
//!   `recheck`, the signature problems appended).
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

use super::format::ReplayArtifact;
use super::problem::ProblemList;
use super::read::{decode_utf8, read_view};
use super::validate::{LevelView, ReplayView, validate_replay};
use crate::action::SubmittedAction;
use crate::commitment::CommitmentBook;

mod checks;
mod commitments;
mod recheck;
pub mod signatures;

pub use signatures::{SeatSignatureReport, SignatureReport, SignatureState, check_signatures};

pub use crate::digest::kernel_digest;
use crate::event::SeedPolicy;
use crate::game::{Game, GameRef};
use crate::reducer::{AnyState, DynReducer};
use crate::view::GameStatus;

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

    /// The game that re-simulates one level (the reference's per-level
    /// `resolveReducer({game, level, dmath?})`): by default the game
    /// resolved for the whole replay. `None` leaves the level unverifiable
    /// (the reference verifier-adapter shape may have no reducer for it).
    fn resolve_level(&self, game: &Arc<dyn Game>, _context: &LevelContext<'_>) -> Option<Arc<dyn Game>> {
        Some(Arc::clone(game))
    }
}

/// What [`GameResolver::resolve_level`] is told about a level.
#[derive(Debug, Clone, Copy)]
pub struct LevelContext<'a> {
    /// `header.game`.
    pub game: &'a GameRef,
    /// The level's header entry.
    pub level: &'a LevelView,
    /// `header.extensions.dmath`, when declared.
    pub dmath: Option<&'a Value>,
}

impl LevelContext<'_> {
    /// `{game, level, dmath?}` as the reference passes it, `level` being the
    /// header's level entry.
    pub fn to_value(&self) -> Value {
        let mut level = gaos_json::Map::new();
        level.insert("index".into(), Value::Number(self.level.index as f64));
        level.insert("id".into(), self.level.id.clone().into());
        if let Some(version) = &self.level.version {
            level.insert("version".into(), version.clone());
        }
        level.insert("seed".into(), Value::Number(f64::from(self.level.seed)));
        level.insert("level".into(), self.level.level.clone());
        let result = &self.level.result;
        let mut recorded = gaos_json::Map::new();
        recorded.insert("status".into(), result.status.as_str().into());
        recorded.insert("stars".into(), result.stars.map_or(Value::Null, Value::Number));
        recorded.insert("actionsUsed".into(), Value::Number(result.actions_used as f64));
        level.insert("result".into(), Value::Object(recorded));
        let mut context = gaos_json::Map::new();
        context.insert("game".into(), gaos_json::to_value(self.game).expect("a game reference is JSON"));
        context.insert("level".into(), Value::Object(level));
        if let Some(dmath) = self.dmath {
            context.insert("dmath".into(), dmath.clone());
        }
        Value::Object(context)
    }
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
    /// Recompute every checkpoint record's digest (over every seat's view)
    /// without the other strict rules: a replay whose views differ on
    /// re-simulation is rejected, as a game module that keeps state between
    /// calls would make it. The verifiers of record (benchmark verification,
    /// official evaluation, the replay viewer, `replay verify --adapter`)
    /// set it; the reference verifier does not look at checkpoints.
    pub checkpoints: bool,
}

impl VerifyOptions {
    /// The options of a verifier of record: checkpoint digests compared.
    pub fn of_record() -> VerifyOptions {
        VerifyOptions { strict: false, checkpoints: true }
    }
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
    /// No problem found, and every submission of every seat is on its
    /// reproduced chain and covered by a valid signature of the seat's key.
    AcceptedSigned,
}

impl Verdict {
    /// `malformed`, `rejected`, `unverifiable` or `accepted-unsigned`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Malformed => "malformed",
            Verdict::Rejected => "rejected",
            Verdict::Unverifiable => "unverifiable",
            Verdict::AcceptedUnsigned => "accepted-unsigned",
            Verdict::AcceptedSigned => "accepted-signed",
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
    /// The attach receipts a session's replay carries in its header
    /// (`extensions["gaos.session.attach"]`): checked by the session layer
    /// (`gaos_session::replay_receipts`) after an accepted re-simulation;
    /// this crate's verifier never stops here.
    Receipts,
    /// RFC-010 signatures and chains ([`check_signatures`]).
    Signatures,
}

impl Stage {
    /// `parse`, `structure`, `recheck`, `receipts` or `signatures`.
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Parse => "parse",
            Stage::Structure => "structure",
            Stage::Recheck => "recheck",
            Stage::Receipts => "receipts",
            Stage::Signatures => "signatures",
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
    /// The RFC-010 signature report (`None` when the replay did not parse;
    /// state `unsigned` for a replay without a roster).
    pub signatures: Option<SignatureReport>,
}

impl VerifyReport {
    fn stopped(verdict: Verdict, stage: Stage, problems: ProblemList) -> Self {
        VerifyReport {
            verdict,
            stage: Some(stage),
            problems,
            notes: Vec::new(),
            levels: Vec::new(),
            resolutions: 0,
            signatures: None,
        }
    }

    /// Whether the verdict is `accepted-unsigned` or `accepted-signed`.
    pub fn is_accepted(&self) -> bool {
        matches!(self.verdict, Verdict::AcceptedUnsigned | Verdict::AcceptedSigned)
    }

    /// Fold the signature report into the verdict.
    fn with_signatures(mut self, report: SignatureReport, signed: bool) -> Self {
        if signed && !report.is_signed() {
            let mut problems = ProblemList::new();
            for ((line, seat), message) in report.sites.iter().zip(&report.problems) {
                problems.at(*line, format!("signatures of seat {seat}"), message.clone());
            }
            if report.problems.is_empty() {
                problems.at(1, "header.seatKeys", "the signatures are incomplete (state partial)");
            }
            match self.verdict {
                Verdict::Rejected => self.problems.extend(problems),
                _ => {
                    self.verdict = Verdict::Rejected;
                    self.stage = Some(Stage::Signatures);
                    self.problems = problems;
                }
            }
        } else if signed && self.verdict == Verdict::AcceptedUnsigned {
            self.verdict = Verdict::AcceptedSigned;
        }
        self.signatures = Some(report);
        self
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
    let signatures = check_signatures(view);
    let signed = view.roster.is_some() && view.version.has_integrity_rules();
    let unverifiable = |message: String| {
        let mut problems = ProblemList::new();
        problems.at(1, "header.game", message);
        VerifyReport::stopped(Verdict::Unverifiable, Stage::Recheck, problems)
            .with_signatures(signatures.clone(), signed)
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
    Recheck::new(view, game, resolver, *options).run().with_signatures(signatures, signed)
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
    status: GameStatus,
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
    /// The game resolved for the replay; `game` is the one of the level
    /// being re-simulated (the same unless the resolver is level-aware).
    replay_game: Arc<dyn Game>,
    resolver: &'v dyn GameResolver,
    game: Arc<dyn Game>,
    reducer: DynReducer,
    seats: Vec<String>,
    sorted_seats: Vec<String>,
    strict: bool,
    /// Compare checkpoint digests ([`VerifyOptions::checkpoints`]; strict does too).
    checkpoints: bool,
    problems: ProblemList,
    unverifiable: ProblemList,
    notes: Vec<String>,
    dropped_notes: usize,
    book: CommitmentBook<LevelSeat<'v>, usize>,
    actions: Vec<SubmittedAction>,
    empty_ticks: u64,
    noted_no_timeout_mapper: bool,
    noted_no_command_mapper: bool,
}
