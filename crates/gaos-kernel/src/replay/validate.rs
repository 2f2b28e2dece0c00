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

use gaos_json::{Map, Value};

use crate::action::{CommitEnvelope, RevealEnvelope};
use crate::replay::format::{FormatVersion, ReplayArtifact, ReplayBody, describe};
use crate::replay::identities::IdentityIndex;
use crate::replay::problem::{ProblemList, ReplayFormatError};

mod header;
mod input;
mod keys;
mod records;

pub use crate::replay::model::{
    ChainFields, CommitMismatchView, InputView, InteractionView, LevelResultView, LevelStatus, LevelView, RecordBody,
    RecordView, ReplayView, ResolutionView, TimeoutView, TotalsView,
};

pub use crate::game::TIMEOUT_POLICY_REF;
/// The only `extensions.dmath.algorithm` a replay may declare.
pub const DMATH_ALGORITHM: &str = crate::dmath::DMATH_ALGORITHM;
/// `signaturePolicy.scheme` of RFC-010 signed replays.
pub const SIGNATURE_SCHEME: &str = "gaos.submission.ed25519.v1";

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
}
