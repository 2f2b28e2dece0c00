//! Structural validation of `gaos.replay` artifacts (kernel spec §5.3–5.4,
//! the reference's `validateReplayArtifact`) and the typed view of a valid
//! artifact that the verifier and `gaos replay inspect` walk.
//!
//! Everything here runs without game code. The rules: strict property sets
//! at every level; header shape, seeds (derived policy: `levels[i].seed ==
//! runLevelSeed(seed, i)`), `perm` a bijection, level results (`ended` only
//! from 1.3, and then without stars), `extensions.dmath.algorithm` is
//! `dmath-1`; records numbered `n = 0, 1, ...`, `levelIndex` in range and
//! non-decreasing; action ids `Action N` within `perm` with
//! `perm[wire − 1] == canonical − 1`; `(levelIndex, seat, submissionId)`
//! unique; a `timeout` resolution carries a `systemInput` equal to one of
//! its inputs (and only a timeout does); resolution ticks non-decreasing per
//! level; the 1.2+ integrity-field rules; v1.0 refuses the 1.1 fields;
//! interactions need 1.4.
//!
//! The validator takes one line at a time and keeps a compact typed record
//! of it, so a reader can drop each parsed line right away: a 100,000
//! resolution replay never exists as 200,000 JSON object trees at once.

use std::fmt;

use gaos_json::{Map, Value, canonical_json};

use super::format::{FormatVersion, ReplayArtifact, ReplayBody, describe};
use super::identities::IdentityIndex;
use super::problem::{ProblemList, ReplayFormatError};
use crate::action::{ActionTarget, COMMIT_SCHEME, CommitEnvelope, RevealEnvelope, SubmittedAction};
use crate::commitment::is_commitment_hash;
use crate::event::{ResolutionCause, SeedPolicy};
use crate::game::{AdapterRef, GameRef};
use crate::hash::{StableHashMap, new_map};
use crate::protocol::is_valid_participant_id;
use crate::seed::run_level_seed;

/// `timeoutPolicyRef` of timeouts governed by `header.timeoutPolicy`.
pub const TIMEOUT_POLICY_REF: &str = "header.timeoutPolicy";
/// The only `extensions.dmath.algorithm` a replay may declare.
pub const DMATH_ALGORITHM: &str = "dmath-1";
/// `signaturePolicy.scheme` of RFC-010 signed replays.
pub const SIGNATURE_SCHEME: &str = "gaos.submission.ed25519.v1";

/// Kinds a record may have.
const RECORD_KINDS: &[&str] = &[
    "action",
    "resolution",
    "timeout",
    "extension",
    "interest",
    "interaction",
    "checkpoint",
    "commit-mismatch",
    "seat-signature",
];

fn is_header_key(k: &str) -> bool {
    matches!(
        k,
        "kind"
            | "format"
            | "formatVersion"
            | "sessionId"
            | "game"
            | "seed"
            | "seedPolicy"
            | "perm"
            | "levels"
            | "totals"
            | "visibility"
            | "seatKeys"
            | "signaturePolicy"
            | "timeoutPolicy"
            | "extensions"
    )
}

fn is_common_key(k: &str) -> bool {
    matches!(k, "kind" | "n" | "levelIndex" | "hostTime")
}

fn is_resolution_key(k: &str) -> bool {
    is_common_key(k) || matches!(k, "tick" | "inputs" | "cause" | "systemInput")
}

fn is_timeout_key(k: &str) -> bool {
    is_common_key(k)
        || matches!(k, "tick" | "timeoutId" | "windowRef" | "participantId" | "reason" | "timeoutPolicyRef")
}

fn is_extension_key(k: &str) -> bool {
    is_common_key(k) || matches!(k, "lane" | "record")
}

fn is_checkpoint_key(k: &str) -> bool {
    is_common_key(k) || matches!(k, "tick" | "digest")
}

fn is_commit_mismatch_key(k: &str) -> bool {
    is_common_key(k)
        || matches!(
            k,
            "tick"
                | "participantId"
                | "submissionId"
                | "commitmentId"
                | "scheme"
                | "attemptedReveal"
                | "canonicalCommand"
                | "cursor"
                | "clientTime"
                | "prevChainHash"
                | "sig"
        )
}

fn is_seat_signature_key(k: &str) -> bool {
    is_common_key(k) || matches!(k, "tick" | "participantId" | "clientTime" | "prevChainHash" | "sig")
}

fn is_interest_key(k: &str) -> bool {
    is_common_key(k)
        || matches!(
            k,
            "tick"
                | "cursor"
                | "participantId"
                | "submissionId"
                | "scopeId"
                | "declaration"
                | "canonicalCommand"
                | "clientTime"
                | "prevChainHash"
                | "sig"
        )
}

fn is_interaction_key(k: &str) -> bool {
    is_common_key(k)
        || matches!(
            k,
            "tick"
                | "cursor"
                | "participantId"
                | "submissionId"
                | "command"
                | "canonicalCommand"
                | "clientTime"
                | "prevChainHash"
                | "sig"
        )
}

/// Status of a finished level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LevelStatus {
    /// The level was won (may carry stars).
    Won,
    /// The level was lost.
    Failed,
    /// The session ended without win or loss (1.3+; never stars).
    Ended,
}

impl LevelStatus {
    /// The status string of views and results.
    pub fn as_str(self) -> &'static str {
        match self {
            LevelStatus::Won => "won",
            LevelStatus::Failed => "failed",
            LevelStatus::Ended => "ended",
        }
    }
}

/// `levels[i].result`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LevelResultView {
    /// `status`.
    pub status: LevelStatus,
    /// `stars` (`null` → `None`).
    pub stars: Option<f64>,
    /// `actionsUsed`.
    pub actions_used: u64,
}

/// One entry of `header.levels`.
#[derive(Debug, Clone, PartialEq)]
pub struct LevelView {
    /// Position in the run (equals `index`).
    pub index: usize,
    /// Level id (unique in the run).
    pub id: String,
    /// Optional level version (string or number).
    pub version: Option<Value>,
    /// The seed `init` receives.
    pub seed: u32,
    /// The reducer's level input.
    pub level: Value,
    /// The recorded result.
    pub result: LevelResultView,
}

/// `header.totals`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TotalsView {
    /// Σ stars of won levels.
    pub total_stars: f64,
    /// Σ actionsUsed.
    pub total_actions_used: u64,
}

/// One recorded input of a resolution (or the single input of an action
/// line), kept compact: a 100,000-resolution replay holds 200,000 of them.
#[derive(Debug, Clone, PartialEq)]
pub struct InputView {
    wire_id: u32,
    canonical_id: u32,
    seat: Option<Box<str>>,
    index: Option<f64>,
    submission_id: Option<Box<str>>,
    canonical_command: Option<Box<str>>,
    cursor: Option<u64>,
    details: Option<Box<InputDetails>>,
}

/// The fields most inputs do not have.
#[derive(Debug, Clone, PartialEq, Default)]
struct InputDetails {
    payload: Option<Value>,
    x: Option<f64>,
    y: Option<f64>,
    board_id: Option<String>,
    zone_id: Option<String>,
    targets: Option<Vec<ActionTarget>>,
    commit: Option<CommitEnvelope>,
    reveal: Option<RevealEnvelope>,
    verified_payload: Option<Value>,
}

impl InputView {
    /// `wireId` as its number N (`Action N`).
    pub fn wire_id(&self) -> u32 {
        self.wire_id
    }

    /// `canonicalId` as its number N (`Action N`), the action the reducer sees.
    pub fn canonical_id(&self) -> u32 {
        self.canonical_id
    }

    /// `seat`, when present.
    pub fn seat(&self) -> Option<&str> {
        self.seat.as_deref()
    }

    /// `submissionId`, when it is a string (user inputs have one).
    pub fn submission_id(&self) -> Option<&str> {
        self.submission_id.as_deref()
    }

    /// `canonicalCommand`, when it is a string.
    pub fn canonical_command(&self) -> Option<&str> {
        self.canonical_command.as_deref()
    }

    /// `cursor`, when it is a non-negative integer.
    pub fn cursor(&self) -> Option<u64> {
        self.cursor
    }

    /// Whether this is a user input (it carries a submission id).
    pub fn is_user_input(&self) -> bool {
        self.submission_id.is_some()
    }

    /// The commitment envelope, if the input commits.
    pub fn commit(&self) -> Option<&CommitEnvelope> {
        self.details.as_ref().and_then(|d| d.commit.as_ref())
    }

    /// The reveal envelope, if the input reveals.
    pub fn reveal(&self) -> Option<&RevealEnvelope> {
        self.details.as_ref().and_then(|d| d.reveal.as_ref())
    }

    /// `verifiedPayload` as recorded (a verifier sets its own).
    pub fn verified_payload(&self) -> Option<&Value> {
        self.details.as_ref().and_then(|d| d.verified_payload.as_ref())
    }

    /// The action as authored: `{id: canonicalId, payload, x, y, index,
    /// boardId, zoneId, seat, targets, commit, reveal}` — without the
    /// recorded `verifiedPayload`, which a verifier sets itself once the
    /// reveal checks out.
    pub fn action(&self) -> SubmittedAction {
        let mut action = SubmittedAction {
            id: format!("Action {}", self.canonical_id),
            index: self.index,
            seat: self.seat.as_deref().map(str::to_owned),
            ..SubmittedAction::default()
        };
        if let Some(d) = &self.details {
            action.payload = d.payload.clone();
            action.x = d.x;
            action.y = d.y;
            action.board_id = d.board_id.clone();
            action.zone_id = d.zone_id.clone();
            action.targets = d.targets.clone();
            action.commit = d.commit.clone();
            action.reveal = d.reveal.clone();
        }
        action
    }
}

/// A resolution record (one reducer call), or an action line (a
/// single-input resolution).
#[derive(Debug, Clone, PartialEq)]
pub struct ResolutionView {
    /// The tick; always present on resolution records, optional on action lines.
    pub tick: Option<u64>,
    /// Why the window resolved (`complete` for action lines).
    pub cause: ResolutionCause,
    /// The inputs in recorded (canonical) order.
    pub inputs: Vec<InputView>,
    /// Index of the input equal to `systemInput` (timeouts).
    pub system_input: Option<usize>,
}

/// A `timeout` record.
#[derive(Debug, Clone, PartialEq)]
pub struct TimeoutView {
    /// Tick the timeout was taken at.
    pub tick: u64,
    /// Host id of the timeout.
    pub timeout_id: String,
    /// Cursor of the window that timed out.
    pub window_ref: u64,
    /// The timed-out seat (`None`: window-wide).
    pub participant_id: Option<String>,
    /// Why (`elapsed`, `disconnect`, product reasons).
    pub reason: String,
    /// `header.timeoutPolicy` for policy-governed timeouts.
    pub timeout_policy_ref: Option<String>,
}

/// A `commit-mismatch` record: a reveal the kernel refused.
#[derive(Debug, Clone, PartialEq)]
pub struct CommitMismatchView {
    /// The open tick when the reveal was refused.
    pub tick: u64,
    /// The seat that revealed.
    pub participant_id: String,
    /// Its submission id.
    pub submission_id: String,
    /// The commitment the reveal named.
    pub commitment_id: u32,
    /// `(salt, payload)` of the refused reveal (dropped under seat visibility).
    pub attempted_reveal: Option<(String, Value)>,
    /// The refused submission's canonical command, when recorded as a string.
    pub canonical_command: Option<String>,
    /// The refused submission's cursor, when recorded.
    pub cursor: Option<u64>,
}

/// An `interaction` record (1.4, RFC-020).
#[derive(Debug, Clone, PartialEq)]
pub struct InteractionView {
    /// Tick of the interaction.
    pub tick: u64,
    /// Cursor it applied at.
    pub cursor: u64,
    /// The acting seat.
    pub participant_id: String,
    /// Its submission id.
    pub submission_id: String,
    /// The command.
    pub command: Value,
}

/// What a record is.
#[derive(Debug, Clone, PartialEq)]
pub enum RecordBody {
    /// A grouped resolution: one reducer call.
    Resolution(ResolutionView),
    /// An action line (legacy body or an `action` record): one single-input reducer call.
    Action(ResolutionView),
    /// A timeout decision.
    Timeout(TimeoutView),
    /// A non-gameplay extension record.
    Extension {
        /// Lane name.
        lane: String,
        /// The record.
        record: Map,
    },
    /// A checkpoint digest (diagnostic kernel digest, §1.4).
    Checkpoint {
        /// Tick after the transition.
        tick: u64,
        /// Recorded digest.
        digest: u32,
    },
    /// A refused reveal.
    CommitMismatch(CommitMismatchView),
    /// A periodic RFC-010 chain attestation (not replayed).
    SeatSignature {
        /// Tick.
        tick: u64,
        /// The attesting seat.
        participant_id: String,
    },
    /// An RFC-010 interest declaration (not replayed).
    Interest {
        /// Tick.
        tick: u64,
        /// The declaring seat.
        participant_id: String,
    },
    /// An RFC-020 interaction.
    Interaction(InteractionView),
}

impl RecordBody {
    /// The record's `kind`.
    pub fn kind(&self) -> &'static str {
        match self {
            RecordBody::Resolution(_) => "resolution",
            RecordBody::Action(_) => "action",
            RecordBody::Timeout(_) => "timeout",
            RecordBody::Extension { .. } => "extension",
            RecordBody::Checkpoint { .. } => "checkpoint",
            RecordBody::CommitMismatch(_) => "commit-mismatch",
            RecordBody::SeatSignature { .. } => "seat-signature",
            RecordBody::Interest { .. } => "interest",
            RecordBody::Interaction(_) => "interaction",
        }
    }
}

/// One line after the header.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordView {
    /// 1-based JSONL line.
    pub line: usize,
    /// The level it belongs to.
    pub level_index: usize,
    /// What it is.
    pub body: RecordBody,
}

/// A structurally valid replay in typed form.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayView {
    /// `formatVersion`.
    pub version: FormatVersion,
    /// `sessionId`.
    pub session_id: String,
    /// `game` (with adapter).
    pub game: GameRef,
    /// Run seed.
    pub seed: u32,
    /// How level seeds relate to the run seed.
    pub seed_policy: SeedPolicy,
    /// Wire → canonical action permutation.
    pub perm: Vec<u32>,
    /// The levels, in run order.
    pub levels: Vec<LevelView>,
    /// Recorded totals.
    pub totals: TotalsView,
    /// `full` or `seat:<id>`.
    pub visibility: Option<String>,
    /// `timeoutPolicy.windowTicks` (1.2+ tick-bounded timeouts).
    pub timeout_window_ticks: Option<u64>,
    /// Whether the header declares RFC-010 seat keys (a signed replay).
    pub signed: bool,
    /// `header.extensions`.
    pub extensions: Option<Map>,
    /// Grouped records (`true`) or a legacy action-only body (`false`).
    pub grouped: bool,
    /// The lines after the header, in order.
    pub records: Vec<RecordView>,
}

impl ReplayView {
    /// Records of level `index` (levelIndex never decreases, so they are
    /// contiguous).
    pub fn level_records(&self, index: usize) -> &[RecordView] {
        let start = self.records.partition_point(|r| r.level_index < index);
        let end = self.records.partition_point(|r| r.level_index <= index);
        &self.records[start..end]
    }

    /// Number of resolutions (resolution records and action lines).
    pub fn resolution_count(&self) -> usize {
        self.records.iter().filter(|r| matches!(r.body, RecordBody::Resolution(_) | RecordBody::Action(_))).count()
    }
}

/// Validate an artifact and return its typed view (`validateReplayArtifact`).
pub fn validate_replay(artifact: &ReplayArtifact) -> Result<ReplayView, ReplayFormatError> {
    let mut v = Validator::new();
    let mut view = v.header(&artifact.header);
    match &artifact.body {
        ReplayBody::Records(records) => {
            if !v.version.has_records() {
                v.problems.at(1, "header.formatVersion", "grouped records need formatVersion 1.1 or later");
            }
            for (i, map) in records.iter().enumerate() {
                if let Some(record) = v.record(i, i + 2, map) {
                    v.records.push(record);
                }
            }
        }
        ReplayBody::Actions(actions) => {
            for (i, map) in actions.iter().enumerate() {
                if let Some(record) = v.action_line(i, i + 2, map) {
                    v.records.push(record);
                }
            }
        }
    }
    let grouped = matches!(artifact.body, ReplayBody::Records(_));
    match view.as_mut() {
        Some(view) if v.problems.is_empty() => {
            view.grouped = grouped;
            view.records = std::mem::take(&mut v.records);
        }
        _ => return Err(ReplayFormatError { problems: v.problems }),
    }
    Ok(view.expect("checked above"))
}

#[derive(Clone, Copy)]
enum Prefix<'s> {
    Str(&'s str),
    Level(usize),
    Input(usize),
}

impl fmt::Display for Prefix<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Prefix::Str(s) => f.write_str(s),
            Prefix::Level(i) => write!(f, "header.levels[{i}]"),
            Prefix::Input(i) => write!(f, "resolution.inputs[{i}]"),
        }
    }
}

/// Where a check looks: a line and a field prefix (formatted only on error).
#[derive(Clone, Copy)]
struct Ctx<'s> {
    line: usize,
    prefix: Prefix<'s>,
}

impl Ctx<'_> {
    fn field(&self, name: &str) -> String {
        if name.is_empty() { self.prefix.to_string() } else { format!("{}.{name}", self.prefix) }
    }
}

fn found(value: Option<&Value>) -> String {
    match value {
        None => "it is missing".into(),
        Some(v) => format!("found {}", describe(v, 80)),
    }
}

/// `Action N` with N ≥ 1 (no leading zeros), as a number.
pub(crate) fn action_number(id: &str) -> Option<u64> {
    let digits = id.strip_prefix("Action ")?;
    if digits.is_empty() || digits.len() > 15 || digits.starts_with('0') || !digits.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    digits.parse().ok()
}

fn is_salt(salt: &str) -> bool {
    (32..=128).contains(&salt.len())
        && salt.len().is_multiple_of(2)
        && salt.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

fn commit_envelope(value: &Value) -> Option<CommitEnvelope> {
    Some(CommitEnvelope {
        commitment_id: value.get("commitmentId")?.as_u32()?,
        scheme: value.get("scheme")?.as_str()?.to_owned(),
        hash: value.get("hash")?.as_str()?.to_owned(),
    })
}

fn reveal_envelope(value: &Value) -> Option<RevealEnvelope> {
    Some(RevealEnvelope {
        commitment_id: value.get("commitmentId")?.as_u32()?,
        salt: value.get("salt")?.as_str()?.to_owned(),
        payload: value.get("payload")?.clone(),
    })
}

/// Which input a check is looking at (its allowed keys differ).
#[derive(Clone, Copy, PartialEq, Eq)]
enum InputKind {
    /// An entry of `resolution.inputs` or `resolution.systemInput`.
    Listed,
    /// An `action` record of a grouped body.
    Record,
    /// A line of a legacy action-only body.
    Line,
}

impl InputKind {
    fn what(self) -> &'static str {
        match self {
            InputKind::Listed => "a resolution input",
            InputKind::Record => "an action record",
            InputKind::Line => "an action line",
        }
    }
}

/// The RFC-010 identity and chain fields of an input or submission record.
#[derive(Clone, Copy, Default)]
struct Integrity<'m> {
    submission_id: Option<&'m Value>,
    canonical_command: Option<&'m Value>,
    cursor: Option<&'m Value>,
    client_time: Option<&'m Value>,
    prev_chain_hash: Option<&'m Value>,
    sig: Option<&'m Value>,
}

impl<'m> Integrity<'m> {
    fn of(map: &'m Map) -> Self {
        Integrity {
            submission_id: map.get("submissionId"),
            canonical_command: map.get("canonicalCommand"),
            cursor: map.get("cursor"),
            client_time: map.get("clientTime"),
            prev_chain_hash: map.get("prevChainHash"),
            sig: map.get("sig"),
        }
    }
}

/// The fields of an input object, gathered in one pass over its keys.
#[derive(Default)]
struct InputFields<'m> {
    wire_id: Option<&'m Value>,
    canonical_id: Option<&'m Value>,
    payload: Option<&'m Value>,
    x: Option<&'m Value>,
    y: Option<&'m Value>,
    index: Option<&'m Value>,
    board_id: Option<&'m Value>,
    zone_id: Option<&'m Value>,
    seat: Option<&'m Value>,
    targets: Option<&'m Value>,
    commit: Option<&'m Value>,
    reveal: Option<&'m Value>,
    verified_payload: Option<&'m Value>,
    host_time: Option<&'m Value>,
    integrity: Integrity<'m>,
}

/// Line-by-line validator. Feed it the header, then every body line as a
/// record ([`Validator::record`]) or a legacy action line
/// ([`Validator::action_line`]); problems accumulate in `problems`.
pub(crate) struct Validator {
    pub(crate) problems: ProblemList,
    pub(crate) version: FormatVersion,
    pub(crate) records: Vec<RecordView>,
    perm: Vec<u32>,
    perm_valid: bool,
    level_count: usize,
    identities: IdentityIndex,
    buffer: String,
    timeout_window_ticks: Option<u64>,
    has_timeout_policy: bool,
    previous_level: usize,
    last_tick: Option<(usize, u64, usize)>,
    action_base: Option<Option<u64>>,
}

impl Validator {
    pub(crate) fn new() -> Self {
        Self::with_capacity(0, 0)
    }

    /// A validator expecting about `records` body lines and `identities`
    /// submissions (growing the vectors later copies and re-touches memory).
    pub(crate) fn with_capacity(records: usize, identities: usize) -> Self {
        Validator {
            problems: ProblemList::new(),
            version: FormatVersion::V1_4,
            records: Vec::with_capacity(records),
            perm: Vec::new(),
            perm_valid: false,
            level_count: 0,
            identities: IdentityIndex::with_capacity(identities),
            buffer: String::new(),
            timeout_window_ticks: None,
            has_timeout_policy: false,
            previous_level: 0,
            last_tick: None,
            action_base: None,
        }
    }

    fn at(&mut self, ctx: Ctx<'_>, field: &str, message: impl Into<String>) {
        self.problems.at(ctx.line, ctx.field(field), message);
    }

    fn keys(&mut self, ctx: Ctx<'_>, map: &Map, allowed: fn(&str) -> bool, what: &str) {
        for key in map.keys() {
            if !allowed(key) {
                self.at(ctx, key, format!("unknown property (not part of {what})"));
            }
        }
    }

    fn string(&mut self, ctx: Ctx<'_>, map: &Map, key: &str, required: bool) -> Option<String> {
        match map.get(key) {
            None if !required => None,
            Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
            other => {
                let message = format!("must be a non-empty string, {}", found(other));
                self.at(ctx, key, message);
                None
            }
        }
    }

    fn uint(&mut self, ctx: Ctx<'_>, map: &Map, key: &str, required: bool) -> Option<u64> {
        match map.get(key) {
            None if !required => None,
            Some(v) if v.as_u64().is_some() => v.as_u64(),
            other => {
                let message = format!("must be a non-negative safe integer, {}", found(other));
                self.at(ctx, key, message);
                None
            }
        }
    }

    fn u32(&mut self, ctx: Ctx<'_>, map: &Map, key: &str) -> Option<u32> {
        match map.get(key) {
            Some(v) if v.as_u32().is_some() => v.as_u32(),
            other => {
                let message = format!("must be an unsigned 32-bit integer, {}", found(other));
                self.at(ctx, key, message);
                None
            }
        }
    }

    fn object<'m>(&mut self, ctx: Ctx<'_>, map: &'m Map, key: &str, required: bool) -> Option<&'m Map> {
        match map.get(key) {
            None if !required => None,
            Some(Value::Object(inner)) => Some(inner),
            other => {
                let message = format!("must be a JSON object, {}", found(other));
                self.at(ctx, key, message);
                None
            }
        }
    }

    /// The header line; `None` when it is too broken to describe the replay
    /// (problems say why).
    pub(crate) fn header(&mut self, h: &Map) -> Option<ReplayView> {
        let ctx = Ctx { line: 1, prefix: Prefix::Str("header") };
        self.keys(ctx, h, is_header_key, "a gaos.replay header");
        if h.get("kind").and_then(Value::as_str) != Some("header") {
            self.at(
                ctx,
                "kind",
                format!("must be \"header\" (the first line is the header), {}", found(h.get("kind"))),
            );
        }
        if h.get("format").and_then(Value::as_str) != Some(super::format::FORMAT_ID) {
            self.at(ctx, "format", format!("must be \"gaos.replay\", {}", found(h.get("format"))));
        }
        match h.get("formatVersion").and_then(Value::as_str).and_then(FormatVersion::parse) {
            Some(v) => self.version = v,
            None => self.at(
                ctx,
                "formatVersion",
                format!("must be one of 1.0, 1.1, 1.2, 1.3, 1.4, {}", found(h.get("formatVersion"))),
            ),
        }
        if self.version == FormatVersion::V1_0 {
            for key in ["seatKeys", "signaturePolicy", "timeoutPolicy"] {
                if h.contains_key(key) {
                    self.at(ctx, key, "integrity reservations need formatVersion 1.1 or later");
                }
            }
        }
        let session_id = self.string(ctx, h, "sessionId", true);
        let seed = self.u32(ctx, h, "seed");
        let seed_policy = match h.get("seedPolicy").and_then(Value::as_str) {
            Some("explicit") => Some(SeedPolicy::Explicit),
            Some("gaos.run-level-seed.v1") => Some(SeedPolicy::RunLevelSeedV1),
            _ => {
                let message =
                    format!("must be \"explicit\" or \"gaos.run-level-seed.v1\", {}", found(h.get("seedPolicy")));
                self.at(ctx, "seedPolicy", message);
                None
            }
        };
        self.perm(ctx, h.get("perm"));
        let visibility = match h.get("visibility") {
            None => None,
            Some(Value::String(s)) if s == "full" || s.strip_prefix("seat:").is_some_and(|seat| !seat.is_empty()) => {
                Some(s.clone())
            }
            other => {
                let message = format!("must be \"full\" or \"seat:<id>\", {}", found(other));
                self.at(ctx, "visibility", message);
                None
            }
        };
        let extensions = self.object(ctx, h, "extensions", false);
        if let Some(dmath) = extensions.and_then(|e| e.get("dmath"))
            && dmath.get("algorithm").and_then(Value::as_str) != Some(DMATH_ALGORITHM)
        {
            let message = format!(
                "must be \"{DMATH_ALGORITHM}\" (the only deterministic-math algorithm), {}",
                found(dmath.get("algorithm"))
            );
            self.at(ctx, "extensions.dmath.algorithm", message);
        }
        self.integrity_header(ctx, h);
        let game = self.game(ctx, h);
        let levels = self.levels(h, seed, seed_policy);
        let totals = self.totals(ctx, h);
        Some(ReplayView {
            version: self.version,
            session_id: session_id?,
            game: game?,
            seed: seed?,
            seed_policy: seed_policy?,
            perm: self.perm.clone(),
            levels: levels?,
            totals: totals?,
            visibility,
            timeout_window_ticks: self.timeout_window_ticks,
            signed: h.contains_key("seatKeys") && self.version.has_integrity_rules(),
            extensions: extensions.cloned(),
            grouped: false,
            records: Vec::new(),
        })
    }

    fn perm(&mut self, ctx: Ctx<'_>, value: Option<&Value>) {
        let Some(Value::Array(items)) = value else {
            self.at(ctx, "perm", format!("must be an array (a bijection on 0..n-1), {}", found(value)));
            return;
        };
        let mut seen = vec![false; items.len()];
        let mut perm = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            match item.as_u64().filter(|&p| (p as usize) < items.len()) {
                Some(p) if !seen[p as usize] => {
                    seen[p as usize] = true;
                    perm.push(p as u32);
                }
                Some(p) => {
                    let message = format!("repeats {p}: perm must be a bijection on 0..{}", items.len());
                    self.at(ctx, &format!("perm[{i}]"), message);
                    return;
                }
                None => {
                    let message = format!(
                        "must be an integer in 0..{} (perm is a bijection on 0..n-1), {}",
                        items.len(),
                        found(Some(item))
                    );
                    self.at(ctx, &format!("perm[{i}]"), message);
                    return;
                }
            }
        }
        self.perm = perm;
        self.perm_valid = true;
    }

    fn integrity_header(&mut self, ctx: Ctx<'_>, h: &Map) {
        for key in ["signaturePolicy", "timeoutPolicy"] {
            self.object(ctx, h, key, false);
        }
        if !self.version.has_integrity_rules() {
            return;
        }
        let has_keys = h.contains_key("seatKeys");
        if has_keys != h.contains_key("signaturePolicy") {
            let missing = if has_keys { "signaturePolicy" } else { "seatKeys" };
            self.at(ctx, missing, "seatKeys and signaturePolicy are declared together (1.2+)");
        }
        if let Some(Value::Object(policy)) = h.get("signaturePolicy") {
            let pctx = Ctx { line: 1, prefix: Prefix::Str("header.signaturePolicy") };
            self.keys(pctx, policy, |k| k == "scheme", "a signature policy");
            if policy.get("scheme").and_then(Value::as_str) != Some(SIGNATURE_SCHEME) {
                self.at(pctx, "scheme", format!("must be \"{SIGNATURE_SCHEME}\", {}", found(policy.get("scheme"))));
            }
        }
        if let Some(keys) = h.get("seatKeys") {
            self.seat_keys(keys);
        }
        if let Some(Value::Object(policy)) = h.get("timeoutPolicy") {
            self.has_timeout_policy = true;
            let pctx = Ctx { line: 1, prefix: Prefix::Str("header.timeoutPolicy") };
            self.keys(pctx, policy, |k| k == "mode" || k == "windowTicks", "a timeout policy");
            if policy.get("mode").and_then(Value::as_str) != Some("ticks") {
                self.at(pctx, "mode", format!("must be \"ticks\", {}", found(policy.get("mode"))));
            }
            match policy.get("windowTicks").and_then(Value::as_u64).filter(|&w| w > 0) {
                Some(w) => self.timeout_window_ticks = Some(w),
                None => {
                    let message = format!("must be a positive safe integer, {}", found(policy.get("windowTicks")));
                    self.at(pctx, "windowTicks", message);
                }
            }
        }
    }

    fn seat_keys(&mut self, keys: &Value) {
        let ctx = Ctx { line: 1, prefix: Prefix::Str("header") };
        let Some(entries) = keys.as_array().filter(|a| !a.is_empty()) else {
            self.at(ctx, "seatKeys", format!("must be a non-empty array, {}", found(Some(keys))));
            return;
        };
        let mut ids: Vec<&str> = Vec::new();
        for (i, entry) in entries.iter().enumerate() {
            let field = format!("seatKeys[{i}]");
            let Some(map) = entry.as_object() else {
                self.at(ctx, &field, format!("must be an object, {}", found(Some(entry))));
                continue;
            };
            for key in map.keys() {
                if !matches!(key.as_str(), "id" | "publicKey" | "alg" | "signingTier") {
                    self.at(ctx, &format!("{field}.{key}"), "unknown property (not part of a seat key)");
                }
            }
            match map.get("id").and_then(Value::as_str) {
                Some(id) if is_valid_participant_id(id) => {
                    if ids.contains(&id) {
                        self.at(ctx, &format!("{field}.id"), format!("seat {id} has two keys"));
                    }
                    ids.push(id);
                }
                _ => {
                    let message = format!("must be a participant id, {}", found(map.get("id")));
                    self.at(ctx, &format!("{field}.id"), message);
                }
            }
            let key_ok = map
                .get("publicKey")
                .and_then(Value::as_str)
                .is_some_and(|k| gaos_json::base64_decode_len(k, 32).is_ok());
            if !key_ok {
                self.at(ctx, &format!("{field}.publicKey"), "must be a padded base64 32-byte Ed25519 public key");
            }
            if map.get("alg").and_then(Value::as_str) != Some("Ed25519") {
                self.at(ctx, &format!("{field}.alg"), format!("must be \"Ed25519\", {}", found(map.get("alg"))));
            }
            let tier_ok = map
                .get("signingTier")
                .and_then(Value::as_object)
                .is_some_and(|t| t.len() == 1 && t.get("N").and_then(Value::as_u64).is_some_and(|n| n >= 1));
            if !tier_ok {
                self.at(ctx, &format!("{field}.signingTier"), "must be {\"N\": positive integer}");
            }
        }
    }

    fn game(&mut self, ctx: Ctx<'_>, h: &Map) -> Option<GameRef> {
        let game = self.object(ctx, h, "game", true)?;
        let gctx = Ctx { line: 1, prefix: Prefix::Str("header.game") };
        self.keys(gctx, game, |k| matches!(k, "id" | "version" | "adapter"), "a game reference");
        let id = self.string(gctx, game, "id", true);
        let version = self.string(gctx, game, "version", true);
        let adapter = self.object(gctx, game, "adapter", true).and_then(|adapter| {
            let actx = Ctx { line: 1, prefix: Prefix::Str("header.game.adapter") };
            self.keys(actx, adapter, |k| k == "id" || k == "version", "an adapter reference");
            let id = self.string(actx, adapter, "id", true);
            let version = self.string(actx, adapter, "version", true);
            Some(AdapterRef { id: id?, version: version? })
        });
        Some(GameRef { id: id?, version: version?, adapter: adapter? })
    }

    fn levels(&mut self, h: &Map, seed: Option<u32>, policy: Option<SeedPolicy>) -> Option<Vec<LevelView>> {
        let ctx = Ctx { line: 1, prefix: Prefix::Str("header") };
        let Some(entries) = h.get("levels").and_then(Value::as_array).filter(|l| !l.is_empty()) else {
            self.at(ctx, "levels", format!("must be a non-empty array, {}", found(h.get("levels"))));
            return None;
        };
        self.level_count = entries.len();
        let mut levels = Vec::with_capacity(entries.len());
        let mut ids: StableHashMap<&str, usize> = new_map();
        let mut complete = true;
        for (index, entry) in entries.iter().enumerate() {
            let lctx = Ctx { line: 1, prefix: Prefix::Level(index) };
            let Some(map) = entry.as_object() else {
                self.at(lctx, "", format!("must be an object, {}", found(Some(entry))));
                complete = false;
                continue;
            };
            self.keys(
                lctx,
                map,
                |k| matches!(k, "index" | "id" | "version" | "seed" | "level" | "result" | "extensions"),
                "a level entry",
            );
            if map.get("index").and_then(Value::as_u64) != Some(index as u64) {
                let message = format!("must be {index} (its position in levels), {}", found(map.get("index")));
                self.at(lctx, "index", message);
            }
            let id = self.string(lctx, map, "id", true);
            if let Some(id) = map.get("id").and_then(Value::as_str).filter(|id| !id.is_empty())
                && let Some(first) = ids.insert(id, index)
            {
                self.at(lctx, "id", format!("level id {id:?} is already used by levels[{first}]"));
            }
            let version = map.get("version");
            if let Some(v) = version
                && !matches!(v, Value::String(_) | Value::Number(_))
            {
                self.at(lctx, "version", format!("must be a string or number, {}", found(Some(v))));
            }
            let level_seed = self.u32(lctx, map, "seed");
            if let (Some(level_seed), Some(run_seed), Some(SeedPolicy::RunLevelSeedV1)) = (level_seed, seed, policy) {
                match run_level_seed(run_seed, index as u64) {
                    Ok(expected) if expected == level_seed => {}
                    Ok(expected) => self.at(
                        lctx,
                        "seed",
                        format!(
                            "is {level_seed}, but seedPolicy gaos.run-level-seed.v1 derives \
                             runLevelSeed({run_seed}, {index}) = {expected}"
                        ),
                    ),
                    Err(e) => self.at(lctx, "seed", e),
                }
            }
            let level = map.get("level");
            if level.is_none() {
                self.at(lctx, "level", "is required (the reducer's level input)");
            }
            self.object(lctx, map, "extensions", false);
            let result = self.level_result(index, map);
            match (id, level_seed, level, result) {
                (Some(id), Some(seed), Some(level), Some(result)) => {
                    levels.push(LevelView { index, id, version: version.cloned(), seed, level: level.clone(), result })
                }
                _ => complete = false,
            }
        }
        complete.then_some(levels)
    }

    fn level_result(&mut self, index: usize, map: &Map) -> Option<LevelResultView> {
        let lctx = Ctx { line: 1, prefix: Prefix::Level(index) };
        let result = self.object(lctx, map, "result", true)?;
        let field = |name: &str| format!("header.levels[{index}].result.{name}");
        for key in result.keys() {
            if !matches!(key.as_str(), "status" | "stars" | "actionsUsed" | "extensions") {
                self.problems.at(1, field(key), "unknown property (not part of a level result)");
            }
        }
        let status = match result.get("status").and_then(Value::as_str) {
            Some("won") => Some(LevelStatus::Won),
            Some("failed") => Some(LevelStatus::Failed),
            Some("ended") if self.version.allows_ended() => Some(LevelStatus::Ended),
            _ => {
                let allowed = if self.version.allows_ended() {
                    "won, failed or ended"
                } else {
                    "won or failed (ended needs formatVersion 1.3)"
                };
                let message = format!("must be {allowed}, {}", found(result.get("status")));
                self.problems.at(1, field("status"), message);
                None
            }
        };
        let stars = match result.get("stars") {
            Some(Value::Null) => Some(None),
            Some(Value::Number(x)) => Some(Some(*x)),
            other => {
                self.problems.at(1, field("stars"), format!("must be a number or null, {}", found(other)));
                None
            }
        };
        if status == Some(LevelStatus::Ended) && matches!(stars, Some(Some(_))) {
            self.problems.at(1, field("stars"), "must be null when the status is ended");
        }
        let actions_used = result.get("actionsUsed").and_then(Value::as_u64);
        if actions_used.is_none() {
            let message = format!("must be a non-negative safe integer, {}", found(result.get("actionsUsed")));
            self.problems.at(1, field("actionsUsed"), message);
        }
        if let Some(ext) = result.get("extensions")
            && !ext.is_object()
        {
            self.problems.at(1, field("extensions"), format!("must be a JSON object, {}", found(Some(ext))));
        }
        Some(LevelResultView { status: status?, stars: stars?, actions_used: actions_used? })
    }

    fn totals(&mut self, ctx: Ctx<'_>, h: &Map) -> Option<TotalsView> {
        let totals = self.object(ctx, h, "totals", true)?;
        let tctx = Ctx { line: 1, prefix: Prefix::Str("header.totals") };
        self.keys(tctx, totals, |k| matches!(k, "totalStars" | "totalActionsUsed" | "extensions"), "the totals");
        let stars = totals.get("totalStars").and_then(Value::as_f64);
        if stars.is_none() {
            self.at(tctx, "totalStars", format!("must be a number, {}", found(totals.get("totalStars"))));
        }
        let actions = self.uint(tctx, totals, "totalActionsUsed", true);
        self.object(tctx, totals, "extensions", false);
        Some(TotalsView { total_stars: stars?, total_actions_used: actions? })
    }

    /// `levelIndex` of a line: in range and never going back.
    fn level_index(&mut self, ctx: Ctx<'_>, map: &Map) -> Option<usize> {
        let value = map.get("levelIndex");
        match value.and_then(Value::as_u64) {
            Some(i) if (i as usize) < self.level_count || self.level_count == 0 => {
                let i = i as usize;
                if i < self.previous_level {
                    let message = format!(
                        "is {i}, but an earlier line already belongs to level {}: lines never return to an earlier level",
                        self.previous_level
                    );
                    self.at(ctx, "levelIndex", message);
                    None
                } else {
                    self.previous_level = i;
                    Some(i)
                }
            }
            _ => {
                let message =
                    format!("must be a level index in 0..{} (header.levels), {}", self.level_count, found(value));
                self.at(ctx, "levelIndex", message);
                None
            }
        }
    }

    /// Register `(levelIndex, seat, submissionId)`; a reuse is a problem.
    fn identity(&mut self, ctx: Ctx<'_>, field: &str, level: Option<usize>, seat: Option<&str>, id: Option<&str>) {
        let (Some(level), Some(seat), Some(id)) = (level, seat, id) else {
            return;
        };
        if let Some(first) = self.identities.insert(level, seat, id, ctx.line) {
            self.at(
                ctx,
                field,
                format!(
                    "{seat}/{id} was already used on line {first}: a submission id is used once per seat and level"
                ),
            );
        }
    }

    /// Ticks of resolutions (and action lines) never go back within a level.
    fn tick_order(&mut self, ctx: Ctx<'_>, level: Option<usize>, tick: Option<u64>, what: &str) {
        if let (Some(level), Some(tick)) = (level, tick) {
            match self.last_tick {
                Some((l, t, line)) if l == level && tick < t => self.at(
                    ctx,
                    "tick",
                    format!(
                        "is {tick}, but the level's previous {what} (line {line}) is at tick {t}: ticks never go back"
                    ),
                ),
                _ => self.last_tick = Some((level, tick, ctx.line)),
            }
        }
    }

    /// Action `index` (on physical `line`) of a legacy action-only body.
    pub(crate) fn action_line(&mut self, index: usize, line: usize, map: &Map) -> Option<RecordView> {
        let ctx = Ctx { line, prefix: Prefix::Str("action") };
        let base = *self.action_base.get_or_insert_with(|| match map.get("n").and_then(Value::as_u64) {
            Some(b @ (0 | 1)) => Some(b),
            _ => None,
        });
        if map.get("kind").and_then(Value::as_str) != Some("action") {
            let message = if self.version.has_records() {
                format!("must be \"action\" in an action-only body, {}", found(map.get("kind")))
            } else {
                format!("must be \"action\": formatVersion 1.0 has only action lines, {}", found(map.get("kind")))
            };
            self.at(ctx, "kind", message);
        }
        match base {
            Some(base) if map.get("n").and_then(Value::as_u64) != Some(base + index as u64) => {
                let message =
                    format!("must be {} (contiguous numbering), {}", base + index as u64, found(map.get("n")));
                self.at(ctx, "n", message);
            }
            Some(_) => {}
            None if index == 0 => {
                let message = format!("action numbering must start at 0 or 1, {}", found(map.get("n")));
                self.at(ctx, "n", message);
            }
            None => {}
        }
        let level = self.level_index(ctx, map);
        let tick = self.uint(ctx, map, "tick", false);
        self.tick_order(ctx, level, tick, "action");
        let input = self.input(ctx, map, InputKind::Line)?;
        self.identity(ctx, "submissionId", level, input.seat(), input.submission_id());
        Some(RecordView {
            line,
            level_index: level?,
            body: RecordBody::Action(ResolutionView {
                tick,
                cause: ResolutionCause::Complete,
                inputs: vec![input],
                system_input: None,
            }),
        })
    }

    fn action_id(&mut self, ctx: Ctx<'_>, value: Option<&Value>, key: &str) -> Option<u32> {
        match value.and_then(Value::as_str).and_then(action_number) {
            Some(n) if n as usize <= self.perm.len() || !self.perm_valid => u32::try_from(n).ok(),
            _ => {
                let message =
                    format!("must be \"Action N\" with N in 1..={} (header.perm), {}", self.perm.len(), found(value));
                self.at(ctx, key, message);
                None
            }
        }
    }

    /// One input object (resolution input, systemInput, or action line),
    /// its keys read in a single pass.
    fn input(&mut self, ctx: Ctx<'_>, map: &Map, kind: InputKind) -> Option<InputView> {
        let mut f = InputFields::default();
        for (key, value) in map {
            let slot = match key.as_str() {
                "wireId" => &mut f.wire_id,
                "canonicalId" => &mut f.canonical_id,
                "payload" => &mut f.payload,
                "x" => &mut f.x,
                "y" => &mut f.y,
                "index" => &mut f.index,
                "boardId" => &mut f.board_id,
                "zoneId" => &mut f.zone_id,
                "seat" => &mut f.seat,
                "targets" => &mut f.targets,
                "commit" => &mut f.commit,
                "reveal" => &mut f.reveal,
                "verifiedPayload" => &mut f.verified_payload,
                "submissionId" => &mut f.integrity.submission_id,
                "canonicalCommand" => &mut f.integrity.canonical_command,
                "cursor" => &mut f.integrity.cursor,
                "clientTime" => &mut f.integrity.client_time,
                "prevChainHash" => &mut f.integrity.prev_chain_hash,
                "sig" => &mut f.integrity.sig,
                "hostTime" if kind != InputKind::Listed => &mut f.host_time,
                "kind" | "n" | "levelIndex" | "tick" if kind != InputKind::Listed => continue,
                _ => {
                    self.at(ctx, key, format!("unknown property (not part of {})", kind.what()));
                    continue;
                }
            };
            *slot = Some(value);
        }
        let wire = self.action_id(ctx, f.wire_id, "wireId");
        let canonical = self.action_id(ctx, f.canonical_id, "canonicalId");
        if let (Some(w), Some(c)) = (wire, canonical)
            && self.perm_valid
        {
            let mapped = self.perm[(w - 1) as usize] + 1;
            if mapped != c {
                let message =
                    format!("Action {w} maps to Action {mapped} under header.perm, but canonicalId is Action {c}");
                self.at(ctx, "wireId", message);
            }
        }
        let mut numbers = [None; 3];
        for ((slot, key), value) in numbers.iter_mut().zip(["x", "y", "index"]).zip([f.x, f.y, f.index]) {
            if let Some(v) = value {
                if v.as_i64().is_some() {
                    *slot = v.as_f64();
                } else {
                    self.at(ctx, key, format!("must be a safe integer, {}", found(Some(v))));
                }
            }
        }
        if let Some(v) = f.integrity.client_time
            && v.as_u64().is_none()
        {
            self.at(ctx, "clientTime", format!("must be a non-negative safe integer, {}", found(Some(v))));
        }
        if let Some(v) = f.host_time
            && v.as_u64().is_none()
        {
            self.at(ctx, "hostTime", format!("must be a non-negative safe integer, {}", found(Some(v))));
        }
        if self.version.has_integrity_rules() {
            self.integrity_fields(ctx, f.integrity);
        }
        let mut text = |key: &str, value: Option<&Value>| -> Option<Box<str>> {
            match value? {
                Value::String(s) if !s.is_empty() => Some(s.as_str().into()),
                other => {
                    let message = format!("must be a non-empty string, {}", found(Some(other)));
                    self.problems.at(ctx.line, ctx.field(key), message);
                    None
                }
            }
        };
        let board_id = text("boardId", f.board_id);
        let zone_id = text("zoneId", f.zone_id);
        let seat = text("seat", f.seat);
        if f.commit.is_some() && f.reveal.is_some() {
            self.at(ctx, "reveal", "an input either commits or reveals, not both");
        }
        if f.verified_payload.is_some() && f.reveal.is_none() {
            self.at(ctx, "verifiedPayload", "needs a reveal (it is the payload of a verified reveal)");
        }
        if let Some(commit) = f.commit {
            self.commit(ctx, commit);
        }
        if let Some(reveal) = f.reveal {
            self.reveal(ctx, "reveal", reveal, true);
        }
        let targets = f.targets.and_then(|targets| self.targets(ctx, targets));
        if kind == InputKind::Line && self.version == FormatVersion::V1_0 {
            let i = &f.integrity;
            for (key, value) in [
                ("commit", f.commit),
                ("reveal", f.reveal),
                ("verifiedPayload", f.verified_payload),
                ("submissionId", i.submission_id),
                ("canonicalCommand", i.canonical_command),
                ("cursor", i.cursor),
                ("clientTime", i.client_time),
                ("hostTime", f.host_time),
                ("prevChainHash", i.prev_chain_hash),
                ("sig", i.sig),
            ] {
                if value.is_some() {
                    self.at(ctx, key, "needs formatVersion 1.1 or later (1.0 has no commitment or submission fields)");
                }
            }
        }
        let rare = f.payload.is_some()
            || numbers[0].is_some()
            || numbers[1].is_some()
            || board_id.is_some()
            || zone_id.is_some()
            || targets.is_some()
            || f.commit.is_some()
            || f.reveal.is_some()
            || f.verified_payload.is_some();
        let details = rare.then(|| {
            Box::new(InputDetails {
                payload: f.payload.cloned(),
                x: numbers[0],
                y: numbers[1],
                board_id: board_id.map(String::from),
                zone_id: zone_id.map(String::from),
                targets,
                commit: f.commit.and_then(commit_envelope),
                reveal: f.reveal.and_then(reveal_envelope),
                verified_payload: f.verified_payload.cloned(),
            })
        });
        let boxed = |v: Option<&Value>| v.and_then(Value::as_str).map(Box::<str>::from);
        Some(InputView {
            wire_id: wire?,
            canonical_id: canonical?,
            seat,
            index: numbers[2],
            submission_id: boxed(f.integrity.submission_id),
            canonical_command: boxed(f.integrity.canonical_command),
            cursor: f.integrity.cursor.and_then(Value::as_u64),
            details,
        })
    }

    fn commit(&mut self, ctx: Ctx<'_>, value: &Value) {
        let Some(map) = value.as_object() else {
            self.at(ctx, "commit", format!("must be a commitment envelope object, {}", found(Some(value))));
            return;
        };
        for key in map.keys() {
            if !matches!(key.as_str(), "commitmentId" | "scheme" | "hash") {
                self.at(ctx, &format!("commit.{key}"), "unknown property (not part of a commitment envelope)");
            }
        }
        if map.get("commitmentId").and_then(Value::as_u32).is_none() {
            let message = format!("must be an unsigned 32-bit integer, {}", found(map.get("commitmentId")));
            self.at(ctx, "commit.commitmentId", message);
        }
        if map.get("scheme").and_then(Value::as_str) != Some(COMMIT_SCHEME) {
            self.at(ctx, "commit.scheme", format!("must be \"{COMMIT_SCHEME}\", {}", found(map.get("scheme"))));
        }
        if !map.get("hash").and_then(Value::as_str).is_some_and(is_commitment_hash) {
            self.at(ctx, "commit.hash", format!("must be 64 lowercase hex digits, {}", found(map.get("hash"))));
        }
    }

    fn reveal(&mut self, ctx: Ctx<'_>, field: &str, value: &Value, with_id: bool) {
        let Some(map) = value.as_object() else {
            self.at(ctx, field, format!("must be a reveal object, {}", found(Some(value))));
            return;
        };
        for key in map.keys() {
            let known = matches!(key.as_str(), "salt" | "payload") || (with_id && key == "commitmentId");
            if !known {
                self.at(ctx, &format!("{field}.{key}"), "unknown property (not part of a reveal)");
            }
        }
        if with_id && map.get("commitmentId").and_then(Value::as_u32).is_none() {
            let message = format!("must be an unsigned 32-bit integer, {}", found(map.get("commitmentId")));
            self.at(ctx, &format!("{field}.commitmentId"), message);
        }
        if !map.get("salt").and_then(Value::as_str).is_some_and(is_salt) {
            let message = format!("must be 16..64 bytes of lowercase hex, {}", found(map.get("salt")));
            self.at(ctx, &format!("{field}.salt"), message);
        }
        if !map.contains_key("payload") {
            self.at(ctx, &format!("{field}.payload"), "is required");
        }
    }

    fn targets(&mut self, ctx: Ctx<'_>, value: &Value) -> Option<Vec<ActionTarget>> {
        let Some(targets) = value.as_array() else {
            self.at(ctx, "targets", format!("must be an array, {}", found(Some(value))));
            return None;
        };
        let mut out = Vec::with_capacity(targets.len());
        for (i, target) in targets.iter().enumerate() {
            let parsed = target.as_object().and_then(|t| {
                let only_known = t.keys().all(|k| k == "container" || k == "coord");
                let container = t.get("container").and_then(Value::as_str).filter(|c| !c.is_empty())?;
                let coord = t.get("coord")?;
                only_known.then(|| ActionTarget { container: container.to_owned(), coord: coord.clone() })
            });
            match parsed {
                Some(target) => out.push(target),
                None => self.at(
                    ctx,
                    &format!("targets[{i}]"),
                    format!("must be {{\"container\": non-empty string, \"coord\": ...}}, {}", found(Some(target))),
                ),
            }
        }
        Some(out)
    }

    /// The 1.2+ integrity-field rules of an input or submission record.
    fn integrity_fields(&mut self, ctx: Ctx<'_>, i: Integrity<'_>) {
        let identity =
            [("submissionId", i.submission_id), ("canonicalCommand", i.canonical_command), ("cursor", i.cursor)];
        let chain = [("clientTime", i.client_time), ("prevChainHash", i.prev_chain_hash)];
        let identity_count = identity.iter().filter(|(_, v)| v.is_some()).count();
        let chain_count = chain.iter().filter(|(_, v)| v.is_some()).count();
        if identity_count != 0 && identity_count != identity.len() {
            let missing = identity.iter().find(|(_, v)| v.is_none()).map_or("", |(k, _)| *k);
            self.at(
                ctx,
                missing,
                "is missing: submissionId, canonicalCommand and cursor come all together or not at all (1.2+)",
            );
        }
        if chain_count == 1 {
            let missing = chain.iter().find(|(_, v)| v.is_none()).map_or("", |(k, _)| *k);
            self.at(ctx, missing, "is missing: clientTime and prevChainHash come together or not at all (1.2+)");
        }
        if chain_count != 0 && identity_count != identity.len() {
            self.at(ctx, "clientTime", "chain fields need every submission identity field (1.2+)");
        }
        if i.sig.is_some() && (identity_count != identity.len() || chain_count != chain.len()) {
            self.at(ctx, "sig", "needs every submission identity and chain field (1.2+)");
        }
        if identity_count == identity.len() {
            if i.submission_id.and_then(Value::as_str).is_none_or(str::is_empty) {
                let message = format!("must be a non-empty string, {}", found(i.submission_id));
                self.at(ctx, "submissionId", message);
            }
            if i.cursor.and_then(Value::as_u64).is_none() {
                let message = format!("must be a non-negative safe integer, {}", found(i.cursor));
                self.at(ctx, "cursor", message);
            }
            match i.canonical_command {
                Some(Value::String(text)) => {
                    if let Err(message) = self.canonical_text(text) {
                        self.at(ctx, "canonicalCommand", message);
                    }
                }
                other => {
                    let message = format!("must be canonical JSON text, {}", found(other));
                    self.at(ctx, "canonicalCommand", message);
                }
            }
        }
        if chain_count == chain.len() {
            if i.client_time.and_then(Value::as_u64).is_none() {
                let message = format!("must be a non-negative safe integer, {}", found(i.client_time));
                self.at(ctx, "clientTime", message);
            }
            let ok =
                i.prev_chain_hash.and_then(Value::as_str).is_some_and(|h| gaos_json::base64_decode_len(h, 32).is_ok());
            if !ok {
                self.at(ctx, "prevChainHash", "must be padded base64 of 32 bytes");
            }
        }
        if let Some(sig) = i.sig
            && sig.as_str().is_none_or(|s| gaos_json::base64_decode_len(s, 64).is_err())
        {
            self.at(ctx, "sig", "must be padded base64 of a 64-byte Ed25519 signature");
        }
    }

    /// `text` must be the canonical JSON of what it parses to.
    fn canonical_text(&mut self, text: &str) -> Result<(), String> {
        let value = gaos_json::parse(text).map_err(|e| format!("must be valid canonical JSON text: {e}"))?;
        self.buffer.clear();
        gaos_json::write_canonical(&value, &mut self.buffer);
        if self.buffer != text {
            return Err(format!(
                "must be canonical JSON bytes: {} is not canonical, its canonical form is {}",
                describe(&Value::from(text), 60),
                describe(&Value::from(self.buffer.as_str()), 60)
            ));
        }
        Ok(())
    }

    /// Record `n = index` (on physical `line`) of a grouped body.
    pub(crate) fn record(&mut self, index: usize, line: usize, map: &Map) -> Option<RecordView> {
        let kind = map.get("kind").and_then(Value::as_str).filter(|k| RECORD_KINDS.contains(k));
        let ctx = Ctx { line, prefix: Prefix::Str(kind.unwrap_or("record")) };
        if map.get("n").and_then(Value::as_u64) != Some(index as u64) {
            let message =
                format!("must be {index} (records are numbered 0, 1, ... in file order), {}", found(map.get("n")));
            self.at(ctx, "n", message);
        }
        let level = self.level_index(ctx, map);
        if kind != Some("action") {
            // Action records check these with their other input fields.
            self.uint(ctx, map, "hostTime", false);
            self.uint(ctx, map, "clientTime", false);
        }
        let Some(kind) = kind else {
            let message = format!("must be one of {}, {}", RECORD_KINDS.join(", "), found(map.get("kind")));
            self.at(ctx, "kind", message);
            return None;
        };
        let body = match kind {
            "action" => self.action_record(ctx, map, level),
            "resolution" => self.resolution(ctx, map, level),
            "timeout" => self.timeout(ctx, map),
            "extension" => self.extension(ctx, map),
            "checkpoint" => self.checkpoint(ctx, map),
            "commit-mismatch" => self.commit_mismatch(ctx, map, level),
            "seat-signature" => self.seat_signature(ctx, map),
            "interest" => self.interest(ctx, map, level),
            _ => self.interaction(ctx, map, level),
        };
        Some(RecordView { line, level_index: level?, body: body? })
    }

    fn action_record(&mut self, ctx: Ctx<'_>, map: &Map, level: Option<usize>) -> Option<RecordBody> {
        let tick = self.uint(ctx, map, "tick", false);
        self.tick_order(ctx, level, tick, "resolution");
        let input = self.input(ctx, map, InputKind::Record)?;
        self.identity(ctx, "submissionId", level, input.seat(), input.submission_id());
        Some(RecordBody::Action(ResolutionView {
            tick,
            cause: ResolutionCause::Complete,
            inputs: vec![input],
            system_input: None,
        }))
    }

    fn resolution(&mut self, ctx: Ctx<'_>, map: &Map, level: Option<usize>) -> Option<RecordBody> {
        self.keys(ctx, map, is_resolution_key, "a resolution record");
        let tick = self.uint(ctx, map, "tick", true);
        self.tick_order(ctx, level, tick, "resolution");
        let cause = match map.get("cause").and_then(Value::as_str) {
            Some("complete") => Some(ResolutionCause::Complete),
            Some("timeout") => Some(ResolutionCause::Timeout),
            Some("tick") => Some(ResolutionCause::Tick),
            _ => {
                let message = format!("must be complete, timeout or tick, {}", found(map.get("cause")));
                self.at(ctx, "cause", message);
                None
            }
        };
        let mut inputs = Vec::new();
        let mut raw: &[Value] = &[];
        let mut inputs_ok = true;
        match map.get("inputs") {
            Some(Value::Array(items)) => {
                raw = items;
                inputs.reserve_exact(items.len());
                for (j, item) in items.iter().enumerate() {
                    let ictx = Ctx { line: ctx.line, prefix: Prefix::Input(j) };
                    let Some(input_map) = item.as_object() else {
                        self.at(ictx, "", format!("must be an input object, {}", found(Some(item))));
                        inputs_ok = false;
                        continue;
                    };
                    match self.input(ictx, input_map, InputKind::Listed) {
                        Some(input) => {
                            self.identity(ictx, "submissionId", level, input.seat(), input.submission_id());
                            inputs.push(input);
                        }
                        None => inputs_ok = false,
                    }
                }
            }
            other => {
                self.at(ctx, "inputs", format!("must be an array of inputs, {}", found(other)));
                inputs_ok = false;
            }
        }
        let mut system_input = None;
        match (cause, map.get("systemInput")) {
            (Some(ResolutionCause::Timeout), None) => {
                self.at(ctx, "systemInput", "is required when the cause is timeout (the timeout's system input)")
            }
            (Some(ResolutionCause::Timeout), Some(value)) => {
                let sctx = Ctx { line: ctx.line, prefix: Prefix::Str("resolution.systemInput") };
                match value.as_object() {
                    Some(system) => {
                        self.input(sctx, system, InputKind::Listed);
                        system_input = raw.iter().rposition(|input| input == value);
                        if system_input.is_none() {
                            self.at(ctx, "systemInput", "must equal one of the resolution's inputs (canonically)");
                        }
                    }
                    None => self.at(ctx, "systemInput", format!("must be an input object, {}", found(Some(value)))),
                }
            }
            (Some(_), Some(_)) => self.at(ctx, "systemInput", "is only allowed when the cause is timeout"),
            _ => {}
        }
        if !inputs_ok {
            return None;
        }
        Some(RecordBody::Resolution(ResolutionView { tick: Some(tick?), cause: cause?, inputs, system_input }))
    }

    fn timeout(&mut self, ctx: Ctx<'_>, map: &Map) -> Option<RecordBody> {
        self.keys(ctx, map, is_timeout_key, "a timeout record");
        let tick = self.uint(ctx, map, "tick", true);
        let reason = self.string(ctx, map, "reason", true);
        let timeout_id = self.string(ctx, map, "timeoutId", true);
        let window_ref = self.uint(ctx, map, "windowRef", true);
        let participant_id = match map.get("participantId") {
            Some(Value::Null) => Some(None),
            Some(Value::String(s)) if !s.is_empty() => Some(Some(s.clone())),
            other => {
                let message = format!("must be null or a non-empty seat id, {}", found(other));
                self.at(ctx, "participantId", message);
                None
            }
        };
        let policy_ref = self.string(ctx, map, "timeoutPolicyRef", false);
        if self.version.has_integrity_rules() {
            if !self.has_timeout_policy {
                if policy_ref.is_some() {
                    self.at(ctx, "timeoutPolicyRef", "needs header.timeoutPolicy (1.2+)");
                }
            } else if policy_ref.as_deref() != Some(TIMEOUT_POLICY_REF) {
                let message = format!("must be \"{TIMEOUT_POLICY_REF}\" when the header declares a timeout policy");
                self.at(ctx, "timeoutPolicyRef", message);
            } else if let (Some(window), Some(tick), Some(window_ref)) = (self.timeout_window_ticks, tick, window_ref)
                && tick != window_ref.saturating_add(window)
            {
                let message =
                    format!("must be windowRef + windowTicks = {}, found {tick}", window_ref.saturating_add(window));
                self.at(ctx, "tick", message);
            }
        }
        Some(RecordBody::Timeout(TimeoutView {
            tick: tick?,
            timeout_id: timeout_id?,
            window_ref: window_ref?,
            participant_id: participant_id?,
            reason: reason?,
            timeout_policy_ref: policy_ref,
        }))
    }

    fn extension(&mut self, ctx: Ctx<'_>, map: &Map) -> Option<RecordBody> {
        self.keys(ctx, map, is_extension_key, "an extension record");
        let lane = self.string(ctx, map, "lane", true);
        let record = self.object(ctx, map, "record", true);
        Some(RecordBody::Extension { lane: lane?, record: record?.clone() })
    }

    fn checkpoint(&mut self, ctx: Ctx<'_>, map: &Map) -> Option<RecordBody> {
        self.keys(ctx, map, is_checkpoint_key, "a checkpoint record");
        let tick = self.uint(ctx, map, "tick", true);
        let digest = self.u32(ctx, map, "digest");
        Some(RecordBody::Checkpoint { tick: tick?, digest: digest? })
    }

    fn commit_mismatch(&mut self, ctx: Ctx<'_>, map: &Map, level: Option<usize>) -> Option<RecordBody> {
        self.keys(ctx, map, is_commit_mismatch_key, "a commit-mismatch record");
        let participant_id = self.string(ctx, map, "participantId", true);
        let submission_id = self.string(ctx, map, "submissionId", true);
        self.identity(ctx, "submissionId", level, participant_id.as_deref(), submission_id.as_deref());
        if self.version.has_integrity_rules() {
            self.integrity_fields(ctx, Integrity::of(map));
        }
        let tick = self.uint(ctx, map, "tick", true);
        let commitment_id = self.u32(ctx, map, "commitmentId");
        if map.get("scheme").and_then(Value::as_str) != Some(COMMIT_SCHEME) {
            self.at(ctx, "scheme", format!("must be \"{COMMIT_SCHEME}\", {}", found(map.get("scheme"))));
        }
        let attempted = map.get("attemptedReveal");
        if let Some(value) = attempted {
            self.reveal(ctx, "attemptedReveal", value, false);
        }
        Some(RecordBody::CommitMismatch(CommitMismatchView {
            tick: tick?,
            participant_id: participant_id?,
            submission_id: submission_id?,
            commitment_id: commitment_id?,
            attempted_reveal: attempted
                .and_then(|a| Some((a.get("salt")?.as_str()?.to_owned(), a.get("payload")?.clone()))),
            canonical_command: map.get("canonicalCommand").and_then(Value::as_str).map(str::to_owned),
            cursor: map.get("cursor").and_then(Value::as_u64),
        }))
    }

    fn seat_signature(&mut self, ctx: Ctx<'_>, map: &Map) -> Option<RecordBody> {
        self.keys(ctx, map, is_seat_signature_key, "a seat-signature record");
        let tick = self.uint(ctx, map, "tick", true);
        let participant_id = self.string(ctx, map, "participantId", true);
        if self.version.has_integrity_rules() {
            self.uint(ctx, map, "clientTime", true);
            let chain = map.get("prevChainHash").and_then(Value::as_str);
            if chain.is_none_or(|h| gaos_json::base64_decode_len(h, 32).is_err()) {
                self.at(ctx, "prevChainHash", "must be padded base64 of 32 bytes (1.2+)");
            }
            let sig = map.get("sig").and_then(Value::as_str);
            if sig.is_none_or(|s| gaos_json::base64_decode_len(s, 64).is_err()) {
                self.at(ctx, "sig", "must be padded base64 of a 64-byte Ed25519 signature (1.2+)");
            }
        }
        Some(RecordBody::SeatSignature { tick: tick?, participant_id: participant_id? })
    }

    fn interest(&mut self, ctx: Ctx<'_>, map: &Map, level: Option<usize>) -> Option<RecordBody> {
        self.keys(ctx, map, is_interest_key, "an interest record");
        let participant_id = self.string(ctx, map, "participantId", true);
        let submission_id = self.string(ctx, map, "submissionId", true);
        self.identity(ctx, "submissionId", level, participant_id.as_deref(), submission_id.as_deref());
        if !self.version.has_integrity_rules() {
            self.at(ctx, "kind", "interest records need formatVersion 1.2 or later");
        }
        self.integrity_fields(ctx, Integrity::of(map));
        for key in ["clientTime", "prevChainHash", "sig"] {
            if !map.contains_key(key) {
                self.at(ctx, key, "is required on interest records");
            }
        }
        let tick = self.uint(ctx, map, "tick", true);
        self.uint(ctx, map, "cursor", true);
        let scope = self.string(ctx, map, "scopeId", true);
        match map.get("declaration") {
            None => self.at(ctx, "declaration", "is required"),
            Some(declaration) => {
                let mut expected = Map::new();
                expected.insert("kind".into(), "interest".into());
                expected.insert("scopeId".into(), scope.unwrap_or_default().into());
                expected.insert("declaration".into(), declaration.clone());
                let expected = canonical_json(&Value::Object(expected));
                if map.get("canonicalCommand").and_then(Value::as_str) != Some(expected.as_str()) {
                    let message = "must be the canonical JSON of {kind: \"interest\", scopeId, declaration}";
                    self.at(ctx, "canonicalCommand", message);
                }
            }
        }
        Some(RecordBody::Interest { tick: tick?, participant_id: participant_id? })
    }

    fn interaction(&mut self, ctx: Ctx<'_>, map: &Map, level: Option<usize>) -> Option<RecordBody> {
        self.keys(ctx, map, is_interaction_key, "an interaction record");
        let participant_id = self.string(ctx, map, "participantId", true);
        let submission_id = self.string(ctx, map, "submissionId", true);
        self.identity(ctx, "submissionId", level, participant_id.as_deref(), submission_id.as_deref());
        if !self.version.allows_interactions() {
            self.at(ctx, "kind", "interaction records need formatVersion 1.4");
        }
        let tick = self.uint(ctx, map, "tick", true);
        let cursor = self.uint(ctx, map, "cursor", true);
        let command = map.get("command");
        match command {
            None => self.at(ctx, "command", "is required"),
            Some(command) => {
                if map.get("canonicalCommand").and_then(Value::as_str) != Some(canonical_json(command).as_str()) {
                    self.at(ctx, "canonicalCommand", "must be the canonical JSON of command");
                }
            }
        }
        if self.version.has_integrity_rules() {
            self.integrity_fields(ctx, Integrity::of(map));
        }
        Some(RecordBody::Interaction(InteractionView {
            tick: tick?,
            cursor: cursor?,
            participant_id: participant_id?,
            submission_id: submission_id?,
            command: command?.clone(),
        }))
    }
}
