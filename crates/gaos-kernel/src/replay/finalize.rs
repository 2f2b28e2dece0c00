//! `finalizeReplay` and `finalizeRunReplay`: project terminal transcripts
//! into `gaos.replay` 1.3 artifacts.

use crate::view::GameStatus;
use gaos_json::{Map, Value, canonical_json};

use super::format::{ReplayArtifact, ReplayBody};
use super::validate::validate_replay;
use crate::action::SubmittedAction;
use crate::audit::validate_timeout_audit;
use crate::error::{AdvanceCode, KernelError};
use crate::event::{
    CanonicalInput, EventBody, ResolutionCause, SeedPolicy, SessionEvent, SessionHeader, SessionTranscript,
};
use crate::seed::{run_level_seed, seed_from_value};

/// Options of [`finalize_replay`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FinalizeOptions {
    /// Wire permutation: `perm[wire − 1] == canonical − 1` for `Action N` ids.
    pub perm: Vec<u64>,
    /// `"full"` or `"seat:<id>"`; seat visibility drops attempted reveals.
    pub visibility: Option<String>,
    /// `header.extensions` (the session's dmath declaration is added).
    pub extensions: Option<Map>,
    /// Copy each event's advisory `hostTime` into its record.
    pub include_host_time: bool,
}

/// Whether a run may continue past a level that was not won.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AdvancePolicy {
    /// Every non-final level must be won (the default).
    #[default]
    WinToAdvance,
    /// Levels are played in order whatever their result.
    PlayAllLevels,
}

/// Options of [`finalize_run_replay`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunFinalizeOptions {
    /// The run seed; level `i` must have been played with `runLevelSeed(seed, i)`.
    pub seed: u32,
    /// Wire permutation, as in [`FinalizeOptions::perm`].
    pub perm: Vec<u64>,
    /// Whether levels before the last must have been won.
    pub advance_policy: AdvancePolicy,
    /// `"full"` or `"seat:<id>"`, as in [`FinalizeOptions::visibility`].
    pub visibility: Option<String>,
    /// `header.extensions` (the sessions' dmath declaration is added).
    pub extensions: Option<Map>,
    /// Copy each event's advisory `hostTime` into its record.
    pub include_host_time: bool,
}

/// The options of one `finalizeReplay` call with `perm` and `visibility` as
/// the caller passed them (`None`: absent). The typed options convert into
/// this; [`finalize_replay_value`] takes a script's values unchanged.
#[derive(Clone, Copy)]
struct ReplayArgs<'a> {
    perm: Option<&'a Value>,
    visibility: Option<&'a Value>,
    extensions: Option<&'a Map>,
    include_host_time: bool,
}

fn perm_value(perm: &[u64]) -> Value {
    Value::Array(perm.iter().map(|&p| p.into()).collect())
}

/// One finalized level: its header entry and its records (numbered later).
#[derive(Clone)]
struct Segment {
    level: Map,
    records: Vec<Map>,
    result_status: GameStatus,
    result_stars: Option<f64>,
    actions_used: u64,
}

/// `wireId = "Action " + (perm.indexOf(N − 1) + 1)` for a canonical id
/// `Action N` (kernel spec §5.5 step 3), with JavaScript's meaning for
/// whatever `perm` the caller passed: an array is searched with strict
/// equality, so an entry `"0"`, `0.5` or `null` never matches and the id
/// becomes `Action 0`, which validation then refuses; a string has an
/// `indexOf` too (its header `perm` fails validation whatever the id); any
/// other value (or none) has no `indexOf`: a TypeError.
fn wire_id(canonical_id: &str, perm: Option<&Value>) -> Result<String, KernelError> {
    match canonical_id.strip_prefix("Action ").and_then(|n| n.parse::<u64>().ok()) {
        Some(n) if n >= 1 && canonical_id == format!("Action {n}") => {
            let wire = match perm {
                Some(Value::Array(items)) => {
                    items.iter().position(|p| p.as_f64() == Some((n - 1) as f64)).map_or(0, |i| i + 1)
                }
                Some(Value::String(_)) => 0,
                _ => return Err(KernelError::type_error("perm must be an array (perm.indexOf is not a function)")),
            };
            Ok(format!("Action {wire}"))
        }
        _ => Ok(canonical_id.to_owned()),
    }
}

fn project_action_fields(action: &SubmittedAction, out: &mut Map) {
    let fields = action.to_map();
    {
        for key in [
            "payload",
            "x",
            "y",
            "index",
            "boardId",
            "zoneId",
            "seat",
            "targets",
            "commit",
            "reveal",
            "verifiedPayload",
        ] {
            if let Some(v) = fields.get(key) {
                out.insert(key.into(), v.clone());
            }
        }
    }
}

fn project_input(input: &CanonicalInput, perm: Option<&Value>) -> Result<Value, KernelError> {
    let mut out = Map::new();
    out.insert("canonicalId".into(), input.action.id.clone().into());
    out.insert("wireId".into(), wire_id(&input.action.id, perm)?.into());
    project_action_fields(&input.action, &mut out);
    if let Some(id) = &input.submission_id {
        out.insert("submissionId".into(), id.clone().into());
    }
    if let Some(c) = &input.canonical_command {
        out.insert("canonicalCommand".into(), c.clone().into());
    }
    if let Some(c) = input.cursor {
        out.insert("cursor".into(), c.into());
    }
    for (key, value) in
        [("clientTime", &input.client_time), ("prevChainHash", &input.prev_chain_hash), ("sig", &input.sig)]
    {
        if let Some(v) = value {
            out.insert(key.into(), v.clone());
        }
    }
    Ok(Value::Object(out))
}

fn record(kind: &str, event: &SessionEvent, include_host_time: bool) -> Map {
    let mut out = Map::new();
    out.insert("kind".into(), kind.into());
    if include_host_time && let Some(t) = event.host_time {
        out.insert("hostTime".into(), t.into());
    }
    out
}

/// Finalize one transcript into its records and level entry: steps 1–3 of
/// kernel spec §5.5 (timeout audit, terminal result, projection through
/// `perm`); the artifact's validation (step 4) is [`assemble`]'s.
fn finalize_segment(
    transcript: &SessionTranscript,
    level_seed: u32,
    options: &ReplayArgs<'_>,
) -> Result<Segment, KernelError> {
    validate_timeout_audit(&transcript.events, &transcript.header.seats).map_err(KernelError::type_error)?;
    let terminal = transcript.events.iter().rev().find_map(|e| match &e.body {
        EventBody::Resolution { result, .. } => Some(result),
        _ => None,
    });
    let result = match terminal {
        Some(result) if result.status.is_terminal() => result.clone(),
        _ => {
            return Err(KernelError::advance(
                AdvanceCode::Terminal,
                "a replay can only be finalized once the session reached a terminal result",
            ));
        }
    };
    let full_visibility = options.visibility.is_none_or(|v| v.as_str() == Some("full"));
    let perm = options.perm;
    let mut records = Vec::new();
    for event in &transcript.events {
        let host = options.include_host_time;
        let projected = match &event.body {
            EventBody::IntentAccepted { .. } => continue,
            EventBody::Resolution { tick, cause, inputs, system_input, .. } => {
                let mut r = record("resolution", event, host);
                r.insert("tick".into(), (*tick).into());
                r.insert(
                    "cause".into(),
                    match cause {
                        ResolutionCause::Complete => "complete",
                        ResolutionCause::Timeout => "timeout",
                        ResolutionCause::Tick => "tick",
                    }
                    .into(),
                );
                let projected = inputs.iter().map(|i| project_input(i, perm)).collect::<Result<Vec<_>, _>>()?;
                r.insert("inputs".into(), Value::Array(projected));
                if *cause == ResolutionCause::Timeout {
                    let system = system_input
                        .as_deref()
                        .or_else(|| inputs.iter().rev().find(|i| i.submission_id.is_none()))
                        .ok_or_else(|| KernelError::type_error("a timeout resolution has no system input"))?;
                    r.insert("systemInput".into(), project_input(system, perm)?);
                }
                r
            }
            EventBody::Timeout { tick, timeout_id, window_ref, participant_id, reason, timeout_policy_ref } => {
                let mut r = record("timeout", event, host);
                r.insert("tick".into(), (*tick).into());
                r.insert("timeoutId".into(), timeout_id.clone().into());
                r.insert("windowRef".into(), (*window_ref).into());
                r.insert("participantId".into(), participant_id.clone().into());
                r.insert("reason".into(), reason.clone().into());
                if let Some(p) = timeout_policy_ref {
                    r.insert("timeoutPolicyRef".into(), p.clone().into());
                }
                r
            }
            EventBody::Extension { lane, record: body, .. } => {
                let mut r = record("extension", event, host);
                r.insert("lane".into(), lane.clone().into());
                r.insert("record".into(), Value::Object(body.clone()));
                r
            }
            EventBody::SeatSignature { tick, participant_id, client_time, prev_chain_hash, sig } => {
                let mut r = record("seat-signature", event, host);
                r.insert("tick".into(), (*tick).into());
                r.insert("participantId".into(), participant_id.clone().into());
                r.insert("clientTime".into(), (*client_time).into());
                r.insert("prevChainHash".into(), prev_chain_hash.clone().into());
                r.insert("sig".into(), sig.clone().into());
                r
            }
            EventBody::Checkpoint { tick, digest } => {
                let mut r = record("checkpoint", event, host);
                r.insert("tick".into(), (*tick).into());
                r.insert("digest".into(), (*digest).into());
                r
            }
            EventBody::Rejection {
                tick,
                participant_id,
                submission_id,
                commitment_id,
                scheme,
                attempted_reveal,
                canonical_command,
                cursor,
                client_time,
                prev_chain_hash,
                sig,
                ..
            } => {
                let mut r = record("commit-mismatch", event, host);
                r.insert("tick".into(), (*tick).into());
                r.insert("participantId".into(), participant_id.clone().into());
                r.insert("submissionId".into(), submission_id.clone().into());
                r.insert("commitmentId".into(), (*commitment_id).into());
                r.insert("scheme".into(), scheme.clone().into());
                if full_visibility {
                    r.insert(
                        "attemptedReveal".into(),
                        gaos_json::to_value(attempted_reveal).expect("attempted reveal is JSON"),
                    );
                }
                if let Some(c) = canonical_command {
                    r.insert("canonicalCommand".into(), c.clone().into());
                }
                if let Some(c) = cursor {
                    r.insert("cursor".into(), (*c).into());
                }
                for (key, value) in [("clientTime", client_time), ("prevChainHash", prev_chain_hash), ("sig", sig)] {
                    if let Some(v) = value {
                        r.insert(key.into(), v.clone());
                    }
                }
                r
            }
        };
        records.push(projected);
    }
    let header = &transcript.header;
    let mut level = Map::new();
    level.insert("id".into(), header.level_id.clone().into());
    if let Some(v) = &header.level_version {
        level.insert("version".into(), v.clone());
    }
    level.insert("seed".into(), level_seed.into());
    level.insert("level".into(), header.level.clone());
    let mut level_result = Map::new();
    level_result.insert("status".into(), result.status.as_str().into());
    level_result.insert("stars".into(), result.stars.map_or(Value::Null, Value::Number));
    level_result.insert("actionsUsed".into(), result.actions_used.into());
    level.insert("result".into(), Value::Object(level_result));
    Ok(Segment {
        level,
        records,
        result_status: result.status,
        result_stars: result.stars,
        actions_used: result.actions_used,
    })
}

/// The artifact of `segments` (level `i` is `segments[i]`), validated like
/// the reference's `createReplayArtifact` (kernel spec §5.5 step 4).
fn assemble(
    transcript: &SessionTranscript,
    seed: u32,
    seed_policy: SeedPolicy,
    segments: Vec<Segment>,
    options: &ReplayArgs<'_>,
) -> Result<ReplayArtifact, KernelError> {
    let mut levels = Vec::new();
    let mut records = Vec::new();
    let mut total_stars = 0.0;
    let mut total_actions = 0u64;
    for (index, segment) in segments.into_iter().enumerate() {
        let mut level = segment.level;
        level.insert("index".into(), index.into());
        levels.push(Value::Object(level));
        if segment.result_status == GameStatus::Won {
            total_stars += segment.result_stars.unwrap_or(0.0);
        }
        total_actions += segment.actions_used;
        for mut r in segment.records {
            r.insert("n".into(), records.len().into());
            r.insert("levelIndex".into(), index.into());
            records.push(r);
        }
    }
    let header = &transcript.header;
    let mut out = Map::new();
    out.insert("kind".into(), "header".into());
    out.insert("format".into(), "gaos.replay".into());
    out.insert("formatVersion".into(), "1.3".into());
    out.insert("sessionId".into(), header.session_id.clone().into());
    out.insert("game".into(), gaos_json::to_value(&header.game).expect("game ref is JSON"));
    out.insert("seed".into(), seed.into());
    out.insert("seedPolicy".into(), seed_policy.as_str().into());
    if let Some(perm) = options.perm {
        out.insert("perm".into(), perm.clone());
    }
    out.insert("levels".into(), Value::Array(levels));
    let mut totals = Map::new();
    totals.insert("totalStars".into(), Value::Number(total_stars));
    totals.insert("totalActionsUsed".into(), total_actions.into());
    out.insert("totals".into(), Value::Object(totals));
    if let Some(v) = options.visibility {
        out.insert("visibility".into(), v.clone());
    }
    let mut ext = options.extensions.cloned().unwrap_or_default();
    if let Some(dmath) = &header.dmath {
        ext.insert("dmath".into(), dmath.clone());
    }
    if !ext.is_empty() {
        out.insert("extensions".into(), Value::Object(ext));
    }
    for (key, value) in [
        ("seatKeys", &header.seat_keys),
        ("signaturePolicy", &header.signature_policy),
        ("timeoutPolicy", &header.timeout_policy),
    ] {
        if let Some(v) = value {
            out.insert(key.into(), v.clone());
        }
    }
    let artifact = ReplayArtifact { header: out, body: ReplayBody::Records(records) };
    // Like the reference's createReplayArtifact: never hand out an artifact
    // the format refuses (a product action id outside perm, a fractional
    // index, ...).
    validate_replay(&artifact)?;
    Ok(artifact)
}

/// `finalizeReplay(transcript, options)`: a one-level 1.3 artifact of a
/// terminal transcript.
pub fn finalize_replay(
    transcript: &SessionTranscript,
    options: &FinalizeOptions,
) -> Result<ReplayArtifact, KernelError> {
    let perm = perm_value(&options.perm);
    let visibility = options.visibility.as_deref().map(Value::from);
    finalize_one(
        transcript,
        &ReplayArgs {
            perm: Some(&perm),
            visibility: visibility.as_ref(),
            extensions: options.extensions.as_ref(),
            include_host_time: options.include_host_time,
        },
    )
}

/// `finalizeReplay(transcript, {perm, visibility?})` with `perm` and
/// `visibility` as a caller passed them (`None`: absent), as the
/// conformance driver passes a script's (SCRIPT-FORMAT.md §4.1): whatever
/// they hold reaches the checks of kernel spec §5.5 in its order, so a
/// non-terminal session is `advance`/`terminal` before any look at them, a
/// `perm` without `indexOf` is a TypeError at the first `Action N` input, and
/// a `perm` that is no bijection or a `visibility` that is neither `"full"`
/// nor `"seat:<id>"` (`null` included: it is written into the header) fails
/// the artifact's validation (`replay-format`/`invalid`).
pub fn finalize_replay_value(
    transcript: &SessionTranscript,
    perm: Option<&Value>,
    visibility: Option<&Value>,
) -> Result<ReplayArtifact, KernelError> {
    finalize_one(transcript, &ReplayArgs { perm, visibility, extensions: None, include_host_time: false })
}

fn finalize_one(transcript: &SessionTranscript, options: &ReplayArgs<'_>) -> Result<ReplayArtifact, KernelError> {
    let header = &transcript.header;
    let level_seed = match header.seed_policy {
        SeedPolicy::Explicit => header.seed,
        SeedPolicy::RunLevelSeedV1 => run_level_seed(header.seed, 0).expect("index 0 is exact"),
    };
    let segment = finalize_segment(transcript, level_seed, options)?;
    assemble(transcript, header.seed, header.seed_policy, vec![segment], options)
}

/// `finalizeRunReplay(transcripts, options)`: ordered one-level transcripts
/// as one derived-seed run (check order: [`finalize_run`]).
pub fn finalize_run_replay(
    transcripts: &[SessionTranscript],
    options: &RunFinalizeOptions,
) -> Result<ReplayArtifact, KernelError> {
    let perm = perm_value(&options.perm);
    let visibility = options.visibility.as_deref().map(Value::from);
    let args = ReplayArgs {
        perm: Some(&perm),
        visibility: visibility.as_ref(),
        extensions: options.extensions.as_ref(),
        include_host_time: options.include_host_time,
    };
    finalize_run(transcripts, Ok(options.seed), options.advance_policy, &args)
}

/// `finalizeRunReplay(transcripts, {seed, perm, advancePolicy?})` with `seed`
/// and `perm` as a caller passed them (`None`: absent), as the conformance
/// driver passes a script's: a seed that is not a u32 is a TypeError, and
/// `perm` reaches each level's `finalizeReplay` as in
/// [`finalize_replay_value`].
pub fn finalize_run_replay_value(
    transcripts: &[SessionTranscript],
    seed: Option<&Value>,
    perm: Option<&Value>,
    advance_policy: AdvancePolicy,
) -> Result<ReplayArtifact, KernelError> {
    let seed = seed_from_value(seed.unwrap_or(&Value::Null));
    let args = ReplayArgs { perm, visibility: None, extensions: None, include_host_time: false };
    finalize_run(transcripts, seed, advance_policy, &args)
}

/// Whether `level` may join the run that level 0 (`first`) opened: the same
/// session, game, deterministic math, timeout policy and seat keys.
fn check_same_run(first: &SessionTranscript, level: &SessionTranscript) -> Result<(), KernelError> {
    let (a, b) = (&first.header, &level.header);
    if a.session_id != b.session_id {
        return Err(KernelError::type_error("every level of a run must share the session id"));
    }
    let canon = |v: &Option<Value>| v.as_ref().map(canonical_json).unwrap_or_default();
    let game = |h: &SessionHeader| canonical_json(&gaos_json::to_value(&h.game).expect("game ref is JSON"));
    if game(a) != game(b)
        || canon(&a.dmath) != canon(&b.dmath)
        || canon(&a.timeout_policy) != canon(&b.timeout_policy)
        || (canon(&a.seat_keys), canon(&a.signature_policy)) != (canon(&b.seat_keys), canon(&b.signature_policy))
    {
        return Err(KernelError::type_error(
            "every level of a run must share the game, dmath, timeout policy and seat keys",
        ));
    }
    Ok(())
}

/// The run of kernel spec §5.6, checked in the reference's order, level by
/// level (the first failing check decides the error):
///
/// 1. there is at least one level, and the run seed is a u32 (TypeError);
/// 2. then for each level `i` in order, before level `i + 1` is looked at:
///    1. its header agrees with level 0's: session id, game, dmath, timeout
///       policy, seat keys and signature policy (TypeError);
///    2. its seed policy is `explicit` and its seed `runLevelSeed(seed, i)`
///       (TypeError);
///    3. the level's own `finalizeReplay` (§5.5) with the run's `perm` and
///       `visibility`: timeout audit (TypeError), a terminal result
///       (`advance`/`terminal`), the projection through `perm` (TypeError
///       when `perm` has no `indexOf`), and the validation of that one-level
///       artifact, where a bad `perm` is refused (`replay-format`/`invalid`);
///    4. under `win-to-advance`, a level before the last must be `won`
///       (TypeError);
/// 3. the run's artifact (levels concatenated, `n` global, `levelIndex = i`,
///    `seedPolicy: gaos.run-level-seed.v1`) is validated
///    (`replay-format`/`invalid`).
///
/// So a `perm` that level 0's artifact refuses is `replay-format`/`invalid`
/// even when a later level has another session id or a wrong seed, or level
/// 0 was not won: those checks come after level 0's `finalizeReplay`.
fn finalize_run(
    transcripts: &[SessionTranscript],
    seed: Result<u32, KernelError>,
    advance_policy: AdvancePolicy,
    options: &ReplayArgs<'_>,
) -> Result<ReplayArtifact, KernelError> {
    let first = transcripts.first().ok_or_else(|| KernelError::type_error("a run needs at least one level"))?;
    let seed = seed?;
    let level_options = ReplayArgs { extensions: None, ..*options };
    let mut segments = Vec::with_capacity(transcripts.len());
    for (i, level) in transcripts.iter().enumerate() {
        check_same_run(first, level)?;
        let expected = run_level_seed(seed, i as u64).map_err(KernelError::type_error)?;
        if level.header.seed_policy != SeedPolicy::Explicit || level.header.seed != expected {
            return Err(KernelError::type_error(format!(
                "level {i} must be played with the explicit seed runLevelSeed({seed}, {i}) = {expected}"
            )));
        }
        let segment = finalize_segment(level, level.header.seed, &level_options)?;
        // The level's own artifact is validated (and dropped) here, so that
        // its problems come before any later level's.
        assemble(level, level.header.seed, SeedPolicy::Explicit, vec![segment.clone()], &level_options)?;
        if advance_policy == AdvancePolicy::WinToAdvance
            && i + 1 < transcripts.len()
            && segment.result_status != GameStatus::Won
        {
            return Err(KernelError::type_error(format!(
                "level {i} was not won; under win-to-advance only the final level may end otherwise"
            )));
        }
        segments.push(segment);
    }
    assemble(first, seed, SeedPolicy::RunLevelSeedV1, segments, options)
}
