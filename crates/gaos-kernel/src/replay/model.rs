//! The typed view of a structurally valid `gaos.replay` artifact: what
//! validation produces and the verifier and `gaos replay inspect` walk.
//! Inputs are kept compact (a 100,000-resolution replay holds 200,000).

use gaos_json::{Map, Value};

use crate::action::{ActionTarget, CommitEnvelope, RevealEnvelope, SubmittedAction};
use crate::event::{ResolutionCause, SeedPolicy};
use crate::game::GameRef;
use crate::replay::format::FormatVersion;
use crate::signing::Roster;

/// The RFC-010 chain fields of a submission as recorded (1.2+ replays keep
/// them all together or not at all; `sig` needs the other two).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ChainFields {
    /// `clientTime`.
    pub client_time: Option<u64>,
    /// `prevChainHash` (canonical base64 of 32 bytes).
    pub prev_chain_hash: Option<Box<str>>,
    /// `sig` (canonical base64 of 64 bytes).
    pub sig: Option<Box<str>>,
}

impl ChainFields {
    /// The fields of `map`; `None` when it has none of them.
    pub(crate) fn of(map: &Map) -> Option<Box<Self>> {
        Self::read(map.get("clientTime"), map.get("prevChainHash"), map.get("sig"))
    }

    pub(crate) fn read(
        client_time: Option<&Value>,
        prev_chain_hash: Option<&Value>,
        sig: Option<&Value>,
    ) -> Option<Box<Self>> {
        if client_time.is_none() && prev_chain_hash.is_none() && sig.is_none() {
            return None;
        }
        let text = |v: Option<&Value>| v.and_then(Value::as_str).map(Box::<str>::from);
        Some(Box::new(ChainFields {
            client_time: client_time.and_then(Value::as_u64),
            prev_chain_hash: text(prev_chain_hash),
            sig: text(sig),
        }))
    }
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
    pub(crate) wire_id: u32,
    pub(crate) canonical_id: u32,
    pub(crate) seat: Option<Box<str>>,
    pub(crate) index: Option<f64>,
    pub(crate) submission_id: Option<Box<str>>,
    pub(crate) canonical_command: Option<Box<str>>,
    pub(crate) cursor: Option<u64>,
    pub(crate) details: Option<Box<InputDetails>>,
    pub(crate) chain: Option<Box<ChainFields>>,
}

/// The fields most inputs do not have.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct InputDetails {
    pub(crate) payload: Option<Value>,
    pub(crate) x: Option<f64>,
    pub(crate) y: Option<f64>,
    pub(crate) board_id: Option<String>,
    pub(crate) zone_id: Option<String>,
    pub(crate) targets: Option<Vec<ActionTarget>>,
    pub(crate) commit: Option<CommitEnvelope>,
    pub(crate) reveal: Option<RevealEnvelope>,
    pub(crate) verified_payload: Option<Value>,
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

    /// The RFC-010 chain fields, when recorded.
    pub fn chain(&self) -> Option<&ChainFields> {
        self.chain.as_deref()
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
    /// Its RFC-010 chain fields, when recorded.
    pub chain: Option<Box<ChainFields>>,
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
    /// `canonicalCommand`, when it is a string.
    pub canonical_command: Option<String>,
    /// Its RFC-010 chain fields, when recorded.
    pub chain: Option<Box<ChainFields>>,
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
        /// `clientTime`, `prevChainHash` (the head it signs) and `sig`.
        chain: Option<Box<ChainFields>>,
    },
    /// An RFC-010 interest declaration (not replayed, but a chain link).
    Interest {
        /// Tick.
        tick: u64,
        /// The declaring seat.
        participant_id: String,
        /// Its submission id.
        submission_id: String,
        /// `canonicalCommand`, when it is a string.
        canonical_command: Option<String>,
        /// `cursor`, when recorded.
        cursor: Option<u64>,
        /// Its chain fields.
        chain: Option<Box<ChainFields>>,
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
    /// The signing roster of a signed 1.2+ replay (`header.seatKeys` with
    /// `signaturePolicy`).
    pub roster: Option<Roster>,
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
