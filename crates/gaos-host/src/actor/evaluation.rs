//! The `evaluation` of a finalize result, by policy (RFC-018 §7):
//! - `none`: no evaluation;
//! - `practice`: `{kind, evaluator?, publishable: false, score?}`; when the
//!   evaluator names a built-in scoring plugin the score is computed, but
//!   it is never publishable;
//! - `official`: the score bound to the session's manifest, computed by
//!   re-simulating the host's own replay with the replay verifier (the same
//!   check `gaos bench verify` runs), with the verification facts and the
//!   policy's `verifierReference`.
//!
//! Every refusal happens before finalize writes anything: an official
//! session must keep replay evidence (`finalize_not_permitted`), a request
//! naming a manifest digest must name the bound one (`manifest_mismatch`),
//! and the episode must be covered: a planned task and seed, and no more
//! decisions of the scored seat than the task's `maxSteps`
//! (`coverage_unmet`).

use gaos_session::ErrorCode;
use std::sync::Arc;

use gaos_json::{Map, Value, obj};
use gaos_kernel::{EventBody, Game, GameRef, SessionEvent};
use gaos_session::benchmark::{
    BenchmarkManifest, EpisodePlan, VerificationState, check_episode_replay, scoring_plugin,
};
use gaos_session::{EvaluationPolicy, EvidenceKind};

use super::SessionActor;
use crate::error::HostError;

/// Where a finalize request may name the manifest digest it expects:
/// `extensions["gaos.session.evaluation"].manifestDigest`.
pub(crate) const EXT_EVALUATION: &str = "gaos.session.evaluation";

impl SessionActor {
    /// Commands of `seat` the transcript's `events` hold.
    fn accepted_commands(events: &[SessionEvent], seat: &str) -> u64 {
        let count = events
            .iter()
            .filter(|e| matches!(&e.body, EventBody::IntentAccepted { participant_id, .. } if participant_id == seat))
            .count();
        count as u64
    }

    /// The result's `evaluation` (`None` when the policy evaluates
    /// nothing), or why this session may not be finalized. `request` is the
    /// finalize body; `replay` the host's replay of the session and `events`
    /// its durable events (the live kernel may hold only a tail).
    pub(super) fn evaluation(
        &self,
        request: &Map,
        replay: &str,
        events: &[SessionEvent],
    ) -> Result<Option<Value>, HostError> {
        let steps = Self::accepted_commands(events, &self.config.creator);
        match self.config.policy.evaluation_policy() {
            EvaluationPolicy::None => Ok(None),
            EvaluationPolicy::Practice { evaluator } => Ok(Some(self.practice(evaluator.as_deref(), replay, steps))),
            EvaluationPolicy::Official(official) => {
                if self.config.policy.evidence() == EvidenceKind::None {
                    return Err(HostError::new(
                        ErrorCode::FinalizeNotPermitted,
                        "the policy keeps no evidence (evidence.kind \"none\"), and an official score is only given \
                         with the replay it is bound to; play it as practice, or create it with evidence \"replay\" \
                         or \"verification\"",
                    ));
                }
                let named =
                    request.get("extensions").and_then(|e| e.get(EXT_EVALUATION)).and_then(|e| e.get("manifestDigest"));
                if let Some(named) = named
                    && named.as_str() != Some(official.manifest_digest.as_str())
                {
                    return Err(HostError::new(
                        ErrorCode::ManifestMismatch,
                        format!(
                            "this session's score is bound to manifest digest {}, the finalize request names {named}",
                            official.manifest_digest
                        ),
                    )
                    // At finalize the mismatch is with the session's own binding.
                    .with_status(axum::http::StatusCode::CONFLICT));
                }
                let manifest = self
                    .config
                    .manifest
                    .as_ref()
                    .map(BenchmarkManifest::from_value)
                    .transpose()
                    .map_err(|e| HostError::internal(format!("the session's stored manifest is unreadable: {e}")))?
                    .ok_or_else(|| HostError::internal("an official session was stored without its manifest"))?;
                let plan = self.covered_plan(&manifest, steps)?;
                Ok(Some(self.official(&manifest, &plan, replay, steps)))
            }
        }
    }

    /// The planned episode this session covers (the scored seat made
    /// `steps` decisions), or `coverage_unmet`.
    fn covered_plan(&self, manifest: &BenchmarkManifest, steps: u64) -> Result<EpisodePlan, HostError> {
        let unmet = |why: String| HostError::new(ErrorCode::CoverageUnmet, why);
        let task = manifest
            .task(&self.config.level_id)
            .ok_or_else(|| unmet(format!("level {:?} is no task of the manifest", self.config.level_id)))?;
        if !task.seeds.contains(&self.config.seed) {
            return Err(unmet(format!("seed {} is not planned for task {:?}", self.config.seed, task.id)));
        }
        if steps > task.max_steps {
            return Err(unmet(format!(
                "seat {} made {steps} decisions, more than the task's maxSteps {}; the episode is not covered by \
                 the manifest, so no official score can be bound",
                self.config.creator, task.max_steps
            )));
        }
        // One session is one episode; the host cannot tell which of a
        // seed's episodes it is, and the scoring plugins do not depend on it.
        Ok(EpisodePlan {
            index: 0,
            task_id: task.id.clone(),
            seed: self.config.seed,
            episode: 0,
            max_steps: task.max_steps,
        })
    }

    /// The session's own game, for re-simulating its replay.
    fn resolver(&self) -> impl Fn(&GameRef) -> Option<Arc<dyn Game>> + '_ {
        move |_| Some(Arc::clone(&self.game))
    }

    fn official(&self, manifest: &BenchmarkManifest, plan: &EpisodePlan, replay: &str, steps: u64) -> Value {
        let scorer = scoring_plugin(&manifest.scoring.plugin).expect("the create checked the scoring plugin");
        let game_id = self.game.game_ref().id;
        let check = check_episode_replay(replay, &game_id, plan, &self.resolver(), scorer.as_ref());
        let (score, facts, outcome) = match &check {
            Ok(check) => {
                let mut reasons = check.reasons.clone();
                if manifest.submission.require_signed_seats && !check.signed {
                    reasons.push(
                        "the manifest requires signed seats (submission.requireSignedSeats), and this \
                                  episode's moves were not signed"
                            .into(),
                    );
                }
                let states =
                    [VerificationState::Verified, check.semantics(), check.evidence_complete(), check.signatures()];
                (check.score, facts(states, &reasons), check.terminal_outcome.clone())
            }
            Err(why) => {
                let failed = VerificationState::Failed;
                (
                    None,
                    facts([failed, failed, failed, VerificationState::Unverified], std::slice::from_ref(why)),
                    Value::Null,
                )
            }
        };
        let signed_ok =
            |c: &gaos_session::benchmark::ReplayCheck| c.signed || !manifest.submission.require_signed_seats;
        let publishable = check.as_ref().is_ok_and(|c| c.reasons.is_empty() && c.score.is_some() && signed_ok(c));
        let mut map = obj! {
            "kind" => "official",
            "benchmarkId" => manifest.benchmark.id.clone(),
            "benchmarkVersion" => manifest.benchmark.version.clone(),
            "manifestDigest" => manifest.digest(),
            "scoring" => obj! { "plugin" => manifest.scoring.plugin.clone() },
            "episode" => obj! {
                "taskId" => plan.task_id.clone(),
                "seed" => plan.seed,
                "maxSteps" => plan.max_steps,
                "steps" => steps,
            },
            "score" => score.map_or(Value::Null, Value::Number),
            "terminalOutcome" => outcome,
            "verification" => facts,
            "publishable" => publishable,
        };
        if let Some(reference) = self.config.policy.verifier_reference() {
            map.insert("verifierReference".into(), reference);
        }
        Value::Object(map)
    }

    fn practice(&self, evaluator: Option<&str>, replay: &str, steps: u64) -> Value {
        let mut map = obj! { "kind" => "practice", "publishable" => false };
        let Some(evaluator) = evaluator else { return Value::Object(map) };
        map.insert("evaluator".into(), evaluator.into());
        // A practice evaluator that names a built-in plugin gets its score
        // of the re-simulated outcome; anything else is the product's.
        if let Ok(scorer) = scoring_plugin(evaluator) {
            let plan = EpisodePlan {
                index: 0,
                task_id: self.config.level_id.clone(),
                seed: self.config.seed,
                episode: 0,
                max_steps: steps,
            };
            let game_id = self.game.game_ref().id;
            if let Ok(check) = check_episode_replay(replay, &game_id, &plan, &self.resolver(), scorer.as_ref()) {
                map.insert("score".into(), check.score.map_or(Value::Null, Value::Number));
            }
        }
        Value::Object(map)
    }
}

/// The RFC-015 facts a host can establish for one episode: `replay`
/// (re-simulated by the host's verifier), `semantics`, `evidenceComplete`,
/// `signatures` (`verified` for an RFC-010 signed replay, else `unverified`).
fn facts([replay, semantics, complete, signatures]: [VerificationState; 4], reasons: &[String]) -> Value {
    obj! {
        "replay" => replay.as_str(),
        "semantics" => semantics.as_str(),
        "evidenceComplete" => complete.as_str(),
        "signatures" => signatures.as_str(),
        "reasons" => Value::Array(reasons.iter().map(|r| Value::from(r.as_str())).collect()),
    }
    .into()
}
