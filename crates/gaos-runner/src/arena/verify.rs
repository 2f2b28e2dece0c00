//! `gaos arena verify`: recompute a tournament from its replays.
//!
//! [`check_match`] re-simulates one replay with the game (the kernel's
//! verifier plus the receipt chain, as every verifier of record runs it),
//! checks it is the planned match (game, level, seed, finished) and
//! recomputes its result: the game's ranking, the referee's tagged moves,
//! the steps. [`verify_arena`] compares every recorded result with its
//! recomputation, recomputes the standings and ratings from the
//! recomputed results, and checks the plan, the files and every digest.
//! Reasons come in that order, so the first names the first match (or
//! number) that differs.

use std::collections::{BTreeMap, BTreeSet};

use gaos_json::{Value, canonical_json, canonical_sha256_hex, sha256_hex};
use gaos_kernel::GameStatus;
use gaos_kernel::replay::{GameResolver, Verdict, VerifyOptions};
use gaos_session::replay_receipts::verify_session_replay;

use crate::arena::bundle::{ARENA_BUNDLE_SCHEMA, ARENA_FILES, ArenaBundle, DIGESTS_FILE, GameIdentity, digests};
use crate::arena::manifest::ArenaManifest;
use crate::arena::plan::plan_matches;
use crate::arena::result::{MatchRecord, MatchResult, game_ranking, replay_conduct};
use crate::arena::standings::standings;

/// Why a replay is not its match's, if it is not.
fn binding_problem(replay: &str, game_id: &str, record: &MatchRecord) -> Option<String> {
    let header = replay.lines().next().and_then(|line| gaos_json::parse(line).ok())?;
    let game = header.get("game");
    let ids = [game.and_then(|g| g.get("id")), game.and_then(|g| g.get("adapter")).and_then(|a| a.get("id"))];
    if !ids.iter().any(|id| id.and_then(Value::as_str) == Some(game_id)) {
        return Some(format!("the replay plays {}, not {game_id}", game.map_or("no game".into(), canonical_json)));
    }
    let levels = header.get("levels").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    let [level] = levels else { return Some(format!("the replay has {} levels, a match plays one", levels.len())) };
    let (id, seed) = (level.get("id").and_then(Value::as_str), level.get("seed").and_then(Value::as_u32));
    if id != Some(record.level_id.as_str()) || seed != Some(record.seed) {
        return Some(format!(
            "the replay plays level {id:?} with seed {seed:?}, the match level {:?} with seed {}",
            record.level_id, record.seed
        ));
    }
    None
}

/// Re-simulate a match's replay and recompute its result (see the module
/// docs). `Err` says why the replay does not establish one.
pub fn check_match(
    record: &MatchRecord,
    replay: &str,
    game_id: &str,
    resolver: &dyn GameResolver,
) -> Result<MatchResult, String> {
    let report = verify_session_replay(replay, resolver, &VerifyOptions::default());
    if !report.is_accepted() {
        let problems = report.problems.to_strings().into_iter().take(3).collect::<Vec<_>>().join("; ");
        let stage = report.stage.map(|s| format!(" at stage {}", s.as_str())).unwrap_or_default();
        return Err(format!("the replay does not verify ({}{stage}): {problems}", report.verdict));
    }
    if let Some(problem) = binding_problem(replay, game_id, record) {
        return Err(problem);
    }
    let last = report.levels.last().ok_or("the replay re-simulated no level")?;
    if last.status.as_deref().is_none_or(|s| s == GameStatus::Playing.as_str()) {
        return Err("the replay ends before the game does".into());
    }
    let seats: Vec<String> = record.seats.iter().map(|(seat, _)| seat.clone()).collect();
    let game = game_ranking(last.outcome.as_ref().unwrap_or(&Value::Null), &seats)?;
    let conduct = replay_conduct(replay)?;
    if !conduct.seat_keys.is_empty() && report.verdict != Verdict::AcceptedSigned {
        return Err(format!("the replay names seat keys but verifies {}, not accepted-signed", report.verdict));
    }
    Ok(MatchResult::new(&game, conduct))
}

/// What [`verify_arena`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct ArenaVerification {
    /// No reasons.
    pub valid: bool,
    /// Every reason the bundle is not valid, the first difference first.
    pub reasons: Vec<String>,
    /// Matches in the bundle.
    pub matches: usize,
    /// The standings recomputed from the replays (when every match was).
    pub standings: Option<Value>,
    /// The content digest recomputed from what the bundle says.
    pub content_digest: String,
    /// The package digest recomputed from its files.
    pub package_digest: String,
}

fn ranking_text(ranking: &[(String, u64)]) -> String {
    let parts: Vec<String> = ranking.iter().map(|(seat, rank)| format!("{seat} #{rank}")).collect();
    parts.join(", ")
}

/// How a recorded result differs from its recomputation, field by field.
fn result_differences(recorded: &MatchResult, replayed: &MatchResult) -> Vec<String> {
    let mut out = Vec::new();
    if recorded.ranking != replayed.ranking {
        out.push(format!(
            "ranking: the line says {}, the replay gives {}",
            ranking_text(&recorded.ranking),
            ranking_text(&replayed.ranking)
        ));
    }
    if recorded.forfeits != replayed.forfeits {
        out.push(format!("forfeits: the line says {:?}, the replay shows {:?}", recorded.forfeits, replayed.forfeits));
    }
    if recorded.substitutions != replayed.substitutions {
        out.push(format!(
            "substitutions: the line says {:?}, the replay shows {:?}",
            recorded.substitutions, replayed.substitutions
        ));
    }
    if recorded.steps != replayed.steps {
        out.push(format!("steps: the line says {}, the replay holds {}", recorded.steps, replayed.steps));
    }
    if recorded.seat_keys != replayed.seat_keys {
        out.push(format!(
            "seatKeys: the line says {:?}, the replay's roster is {:?}",
            recorded.seat_keys, replayed.seat_keys
        ));
    }
    out
}

/// Every match of an entrant with a `seatKey` must be signed, and with one
/// key throughout: a key that changes between matches is not the entrant's.
fn keyed_entrant_problems(manifest: &ArenaManifest, recomputed: &[MatchRecord]) -> Vec<String> {
    let mut out = Vec::new();
    for entrant in manifest.entrants.iter().filter(|e| e.seat_key.is_some()) {
        let mut first: Option<(&str, &str)> = None;
        for record in recomputed {
            let Some((seat, _)) = record.seats.iter().find(|(_, e)| *e == entrant.id) else { continue };
            let Some(key) = record.result.seat_keys.get(seat) else {
                out.push(format!(
                    "match {}: entrant {} has a seatKey, and the match is not signed",
                    record.id, entrant.id
                ));
                continue;
            };
            match first {
                None => first = Some((record.id.as_str(), key.as_str())),
                Some((_, known)) if known == key => {}
                Some((earlier, known)) => out.push(format!(
                    "match {}: entrant {} signs with key {key}, and with {known} in match {earlier}",
                    record.id, entrant.id
                )),
            }
        }
    }
    out
}

/// The first place two JSON values differ: `(path, left, right)`.
fn first_difference(left: &Value, right: &Value, path: &str) -> Option<(String, String, String)> {
    match (left, right) {
        (Value::Object(a), Value::Object(b)) => {
            let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            keys.into_iter().find_map(|key| {
                let at = if path.is_empty() { key.clone() } else { format!("{path}.{key}") };
                match (a.get(key), b.get(key)) {
                    (Some(x), Some(y)) => first_difference(x, y, &at),
                    (x, y) => Some((
                        at,
                        x.map_or("nothing".into(), canonical_json),
                        y.map_or("nothing".into(), canonical_json),
                    )),
                }
            })
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            a.iter().zip(b).enumerate().find_map(|(i, (x, y))| first_difference(x, y, &format!("{path}[{i}]")))
        }
        _ if canonical_json(left) == canonical_json(right) => None,
        _ => Some((path.to_owned(), canonical_json(left), canonical_json(right))),
    }
}

/// Verify `bundle` against `manifest` (an independent copy, or the
/// bundle's own) and the game it names (`game`: the id and module SHA-256
/// the verifier loaded; `seats` in order). `checked[i]` is
/// [`check_match`] of `bundle.records[i]`'s replay (`Err` also when the
/// bundle lacks it), computed by the caller, in parallel if it likes.
pub fn verify_arena(
    bundle: &ArenaBundle,
    manifest: &ArenaManifest,
    game: &GameIdentity,
    seats: &[String],
    checked: &[Result<MatchResult, String>],
) -> ArenaVerification {
    let mut reasons = Vec::new();
    let mut later = Vec::new();
    if canonical_sha256_hex(&bundle.manifest) != manifest.digest() {
        reasons.push("manifest.json differs from the manifest given to verify it with".to_owned());
    }
    if &bundle.game != game {
        reasons.push(format!(
            "the bundle's game is {}, the verifier's {}",
            canonical_json(&bundle.game.to_value()),
            canonical_json(&game.to_value())
        ));
    }
    let plan = match plan_matches(manifest, &game.id, seats) {
        Ok(plan) => plan,
        Err(e) => {
            reasons.push(format!("the manifest cannot be planned: {e}"));
            Vec::new()
        }
    };
    if bundle.records.len() != plan.len() {
        later.push(format!("matches.jsonl has {} matches, the manifest plans {}", bundle.records.len(), plan.len()));
    }
    let mut recomputed: Vec<MatchRecord> = Vec::with_capacity(bundle.records.len());
    for (i, record) in bundle.records.iter().enumerate() {
        let id = &record.id;
        if let Some(Err(why)) = plan.get(i).map(|p| record.matches_plan(p)) {
            reasons.push(format!("match {id} (line {}): not the planned match: {why}", i + 1));
        }
        match bundle.files.get(&record.replay) {
            Some(text) if sha256_hex(text.as_bytes()) != record.replay_sha256 => reasons.push(format!(
                "match {id}: replaySha256 says {}, {} hashes to {}",
                record.replay_sha256,
                record.replay,
                sha256_hex(text.as_bytes())
            )),
            Some(_) => {}
            None => reasons.push(format!("match {id}: the bundle has no {}", record.replay)),
        }
        match checked.get(i) {
            Some(Ok(result)) => {
                for difference in result_differences(&record.result, result) {
                    reasons.push(format!("match {id}: {difference}"));
                }
                recomputed.push(MatchRecord { result: result.clone(), ..record.clone() });
            }
            Some(Err(why)) => reasons.push(format!("match {id}: {why}")),
            None => reasons.push(format!("match {id}: not checked")),
        }
    }
    reasons.extend(keyed_entrant_problems(manifest, &recomputed));
    let mut recomputed_standings = None;
    if recomputed.len() == bundle.records.len() && bundle.records.len() == plan.len() {
        let fresh = standings(manifest, &recomputed).to_value();
        if let Some((path, carried, computed)) = first_difference(&bundle.standings, &fresh, "") {
            reasons.push(format!("standings.json {path}: the file says {carried}, the replays give {computed}"));
        }
        recomputed_standings = Some(fresh);
    } else {
        later.push("the standings were not recomputed: not every planned match verified".into());
    }
    reasons.extend(later);
    let (content_digest, package_digest) = check_files(bundle, &plan_files(&plan), &mut reasons);
    ArenaVerification {
        valid: reasons.is_empty(),
        reasons,
        matches: bundle.records.len(),
        standings: recomputed_standings,
        content_digest,
        package_digest,
    }
}

/// The replay and log paths a plan may have.
fn plan_files(plan: &[crate::arena::plan::MatchPlan]) -> (BTreeSet<String>, BTreeSet<String>) {
    (plan.iter().map(|p| p.replay_file()).collect(), plan.iter().map(|p| p.log_file()).collect())
}

/// Check the file set and every digest; returns the recomputed content and
/// package digests.
fn check_files(
    bundle: &ArenaBundle,
    (replays, logs): &(BTreeSet<String>, BTreeSet<String>),
    reasons: &mut Vec<String>,
) -> (String, String) {
    for required in ARENA_FILES {
        if !bundle.files.contains_key(required) {
            reasons.push(format!("the bundle has no {required}"));
        }
    }
    let unexpected: Vec<&str> = bundle
        .files
        .keys()
        .filter(|p| !ARENA_FILES.contains(&p.as_str()) && !replays.contains(*p) && !logs.contains(*p))
        .map(String::as_str)
        .take(5)
        .collect();
    if !unexpected.is_empty() {
        reasons.push(format!("unexpected files: {}", unexpected.join(", ")));
    }
    let mut files = bundle.files.clone();
    files.remove(DIGESTS_FILE);
    let fresh = digests(&bundle.manifest, &bundle.game, &bundle.records, &bundle.standings, &files);
    let field = |v: &Value, key: &str| match v.get(key) {
        Some(Value::String(text)) => text.clone(),
        Some(other) => canonical_json(other),
        None => "nothing".into(),
    };
    if bundle.digests.get("schema").and_then(Value::as_str) != Some(ARENA_BUNDLE_SCHEMA) {
        reasons
            .push(format!("digests.json schema is {}, not {ARENA_BUNDLE_SCHEMA:?}", field(&bundle.digests, "schema")));
    }
    for key in ["manifestDigest", "contentDigest"] {
        if bundle.digests.get(key) != fresh.get(key) {
            reasons.push(format!(
                "digests.json {key} is {}, the bundle's contents hash to {}",
                field(&bundle.digests, key),
                field(&fresh, key)
            ));
        }
    }
    let listed: BTreeMap<String, Value> = bundle
        .digests
        .get("files")
        .and_then(Value::as_object)
        .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default();
    for (path, hash) in fresh.get("files").and_then(Value::as_object).into_iter().flatten() {
        match listed.get(path) {
            Some(listed) if listed == hash => {}
            Some(listed) => {
                reasons.push(format!("{path}: digests.json lists sha256 {listed}, the file hashes to {hash}"))
            }
            None => reasons.push(format!("{path} is not listed in digests.json")),
        }
    }
    for path in listed.keys().filter(|p| !files.contains_key(*p)) {
        reasons.push(format!("digests.json lists {path}, which the bundle does not hold"));
    }
    if bundle.digests.get("packageDigest") != fresh.get("packageDigest") {
        reasons.push(format!(
            "digests.json packageDigest is {}, the files hash to {}",
            field(&bundle.digests, "packageDigest"),
            field(&fresh, "packageDigest")
        ));
    }
    let text = |key: &str| fresh.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
    (text("contentDigest"), text("packageDigest"))
}
