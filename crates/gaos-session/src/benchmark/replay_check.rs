//! The one re-simulation check of a benchmark episode's replay, shared by
//! `gaos bench verify` (gaos-runner's `ReplayEpisodeVerifier`) and a host's
//! official-evaluation finalize, so the two cannot disagree about what an
//! episode scored.
//!
//! The replay must be accepted by the kernel's verifier (re-simulated with
//! the game the resolver finds, checkpoint digests recomputed; any attach
//! receipts it carries verify), belong to the episode (the benchmark's
//! game, the plan's seed and the task's level) and end in a terminal
//! result; the score is the manifest's plugin applied to the re-simulated
//! terminal outcome, never to a carried one.

use gaos_json::{Map, Value};
use gaos_kernel::GameStatus;
use gaos_kernel::replay::{GameResolver, ReplayedLevel, VerifyOptions};

use crate::benchmark::plan::EpisodePlan;
use crate::benchmark::scoring::ScoringPlugin;
use crate::replay_receipts::verify_session_replay;

/// A verification fact's state (the RFC-015 wire names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum VerificationState {
    /// Checked and holds.
    Verified,
    /// Could not be established.
    Unverified,
    /// Checked and does not hold.
    Failed,
    /// The manifest does not ask for it.
    NotRequired,
    /// Nothing was looked at.
    NotObserved,
}

impl VerificationState {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            VerificationState::Verified => "verified",
            VerificationState::Unverified => "unverified",
            VerificationState::Failed => "failed",
            VerificationState::NotRequired => "not-required",
            VerificationState::NotObserved => "not-observed",
        }
    }

    /// `Verified` when `holds`, else `Failed`.
    pub fn from_check(holds: bool) -> Self {
        if holds { VerificationState::Verified } else { VerificationState::Failed }
    }
}

/// What re-simulating an accepted replay established.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayCheck {
    /// The re-simulated terminal outcome (`{status, stars, actionsUsed, outcome?}`).
    pub terminal_outcome: Value,
    /// The manifest plugin's score of that outcome (`None` when it failed).
    pub score: Option<f64>,
    /// The replay reaches the end of the game.
    pub complete: bool,
    /// Why the replay does not belong to the episode or could not be
    /// scored (empty: the semantics hold).
    pub reasons: Vec<String>,
    /// The replay is RFC-010 signed and every seat's signatures verified
    /// (`accepted-signed`).
    pub signed: bool,
}

impl ReplayCheck {
    /// The signatures fact: `verified` for a signed replay whose every
    /// seat's chain and signatures check out, `unverified` for an unsigned
    /// one (a signed replay that fails its check never gets here).
    pub fn signatures(&self) -> VerificationState {
        if self.signed { VerificationState::Verified } else { VerificationState::Unverified }
    }

    /// The semantics fact: re-simulated, of this episode, scored.
    pub fn semantics(&self) -> VerificationState {
        VerificationState::from_check(self.reasons.is_empty())
    }

    /// The evidence-complete fact: the replay covers the whole episode.
    pub fn evidence_complete(&self) -> VerificationState {
        VerificationState::from_check(self.complete)
    }
}

/// The terminal outcome of a replay's last level, in the shape gaos-host's
/// finalize answers: `{status, stars, actionsUsed, outcome?}`.
pub fn terminal_outcome(level: &ReplayedLevel) -> Value {
    let mut map = Map::new();
    map.insert("status".into(), level.status.clone().map_or(Value::Null, Value::from));
    map.insert("stars".into(), level.stars.map_or(Value::Null, Value::Number));
    map.insert("actionsUsed".into(), level.actions_used.map_or(Value::Null, Value::from));
    if let Some(outcome) = &level.outcome {
        map.insert("outcome".into(), outcome.clone());
    }
    Value::Object(map)
}

/// Reasons the replay's header does not belong to `plan` of game `game_id`.
fn binding_problems(text: &str, game_id: &str, plan: &EpisodePlan) -> Vec<String> {
    let mut reasons = Vec::new();
    let Some(header) = text.lines().next().and_then(|line| gaos_json::parse(line).ok()) else {
        return vec!["the replay has no readable header".into()];
    };
    let game = header.get("game");
    let id = game.and_then(|g| g.get("id")).and_then(Value::as_str);
    let adapter_id = game.and_then(|g| g.get("adapter")).and_then(|a| a.get("id")).and_then(Value::as_str);
    if id != Some(game_id) && adapter_id != Some(game_id) {
        reasons.push(format!("the replay plays game {}, not the benchmark's {game_id:?}", crate::words::quoted(id)));
    }
    let level = header.get("levels").and_then(Value::as_array).and_then(|l| l.first());
    let seed = level.and_then(|l| l.get("seed")).and_then(Value::as_u32);
    if seed != Some(plan.seed) {
        reasons.push(format!(
            "the replay's level seed is {}, the plan's seed is {}",
            crate::words::shown(seed),
            plan.seed
        ));
    }
    let level_id = level.and_then(|l| l.get("id")).and_then(Value::as_str);
    if level_id != Some(plan.task_id.as_str()) {
        reasons.push(format!(
            "the replay plays level {}, not the task's {:?}",
            crate::words::quoted(level_id),
            plan.task_id
        ));
    }
    reasons
}

/// Re-simulate `text` (gaos.replay JSONL) as episode `plan` of game
/// `game_id` and score it with `scorer`. `Err` says why the kernel's
/// verifier rejected the replay.
pub fn check_episode_replay(
    text: &str,
    game_id: &str,
    plan: &EpisodePlan,
    resolver: &dyn GameResolver,
    scorer: &dyn ScoringPlugin,
) -> Result<ReplayCheck, String> {
    // Checkpoint digests too: a game (module) whose views differ on
    // re-simulation does not get a verified score.
    let report = verify_session_replay(text, resolver, &VerifyOptions::of_record());
    let signed = report.verdict == gaos_kernel::replay::Verdict::AcceptedSigned;
    if !report.is_accepted() {
        let mut why = format!("replay verification: {}", report.verdict);
        if let Some(stage) = report.stage {
            why.push_str(&format!(" at stage {}", stage.as_str()));
        }
        let problems = report.problems.to_strings();
        if !problems.is_empty() {
            why.push_str(&format!(": {}", problems.into_iter().take(3).collect::<Vec<_>>().join("; ")));
        }
        return Err(why);
    }
    let mut reasons = binding_problems(text, game_id, plan);
    let Some(last) = report.levels.last() else {
        return Err("the replay re-simulated no level".into());
    };
    let outcome = terminal_outcome(last);
    let complete = last.status.as_deref().is_some_and(|s| s != GameStatus::Playing.as_str());
    if !complete {
        reasons.push("the replay ends before the game does".into());
    }
    let score = match scorer.score(plan, &outcome) {
        Ok(score) if score.is_finite() => Some(score),
        Ok(score) => {
            reasons.push(format!("{} returned a non-finite score {score}", scorer.id()));
            None
        }
        Err(e) => {
            reasons.push(format!("{}: {e}", scorer.id()));
            None
        }
    };
    Ok(ReplayCheck { terminal_outcome: outcome, score, complete, reasons, signed })
}
