//! Bundle verification (`verifyBenchmarkBundle`, lifecycle spec §5): recompute
//! the digests, check the episode set against the plan of an independently
//! supplied manifest, re-verify every replay, recompute every score and the
//! aggregate, and list every reason the bundle is not valid.
//!
//! [`ReplayEpisodeVerifier`] verifies one episode with the kernel's replay
//! verifier ([`gaos_kernel::replay::verify_replay`]) and a game resolver
//! (gaos-games' registry), then scores the re-simulated terminal outcome
//! with the manifest's scoring plugin. Carried scores are compared, never
//! trusted.

use gaos_json::{Map, Value, canonical_json, canonical_sha256_hex};
use gaos_kernel::replay::GameResolver;
pub use gaos_session::benchmark::VerificationState;
use gaos_session::benchmark::check_episode_replay;

use crate::benchmark::bundle::{BUNDLE_SCHEMA, Bundle, BundleEpisode};
use crate::benchmark::manifest::BenchmarkManifest;
use crate::benchmark::plan::{EpisodePlan, plan_episodes};
use crate::benchmark::scoring::{Aggregate, ScoringPlugin, aggregate_scores};

/// Fact keys of `SubmissionVerificationFacts`, besides `externalAuthorities` and `reasons`.
const FACT_KEYS: [&str; 13] = [
    "replay",
    "signatures",
    "semantics",
    "evidenceComplete",
    "organizerReproduced",
    "implementationOpen",
    "modelIdentityAttested",
    "hiddenTestCompliant",
    "accountIdentityAttested",
    "timeAttested",
    "publicationLogged",
    "tailAnchored",
    "availabilityObserved",
];

/// The facts a bundle is packed with: every state `not-observed`, no
/// authorities, no reasons (`verification.json` of a fresh bundle).
pub fn empty_facts() -> Value {
    let mut map = Map::new();
    for key in FACT_KEYS {
        map.insert(key.into(), VerificationState::NotObserved.as_str().into());
    }
    map.insert("externalAuthorities".into(), Value::Array(Vec::new()));
    map.insert("reasons".into(), Value::Array(Vec::new()));
    Value::Object(map)
}

/// What an episode verifier found.
#[derive(Debug, Clone, PartialEq)]
pub struct EpisodeVerification {
    /// The replay verified.
    pub replay_valid: bool,
    /// The recomputed score (`None` when it could not be computed).
    pub score: Option<f64>,
    /// The recomputed terminal outcome (`null` when unknown).
    pub terminal_outcome: Value,
    /// Seat signatures.
    pub signatures: VerificationState,
    /// Game semantics (re-simulation, the replay belongs to this episode).
    pub semantics: VerificationState,
    /// The evidence covers the whole episode.
    pub evidence_complete: VerificationState,
    /// Problems found.
    pub reasons: Vec<String>,
}

impl EpisodeVerification {
    fn failed(reason: String) -> Self {
        EpisodeVerification {
            replay_valid: false,
            score: None,
            terminal_outcome: Value::Null,
            signatures: VerificationState::Failed,
            semantics: VerificationState::Failed,
            evidence_complete: VerificationState::Failed,
            reasons: vec![reason],
        }
    }
}

/// Verifies one bundle episode (`verifyEpisode`).
pub trait EpisodeVerifier: Sync {
    /// Check the episode's replay and recompute its outcome and score.
    fn verify_episode(&self, episode: &BundleEpisode) -> EpisodeVerification;
}

/// Verifies episodes with the kernel's replay verifier: the replay must be
/// accepted (re-simulated with the game the resolver finds), be for the
/// manifest's game (`benchmark.adapter`), the plan's seed and the task's
/// level, and end in a terminal result; the score is the manifest's
/// plugin applied to the re-simulated terminal outcome.
pub struct ReplayEpisodeVerifier<'a> {
    resolver: &'a (dyn GameResolver + Sync),
    scorer: &'a dyn ScoringPlugin,
    adapter: String,
}

impl<'a> ReplayEpisodeVerifier<'a> {
    /// A verifier for `manifest`'s game, resolving games with `resolver` and
    /// scoring with `scorer`.
    pub fn new(
        manifest: &BenchmarkManifest,
        resolver: &'a (dyn GameResolver + Sync),
        scorer: &'a dyn ScoringPlugin,
    ) -> Self {
        ReplayEpisodeVerifier { resolver, scorer, adapter: manifest.benchmark.adapter.clone() }
    }

    /// Expect replays of game `game_id` instead of `benchmark.adapter` (a
    /// manifest whose adapter is a game module file plays the module's game).
    pub fn for_game(mut self, game_id: &str) -> Self {
        self.adapter = game_id.to_owned();
        self
    }
}

impl EpisodeVerifier for ReplayEpisodeVerifier<'_> {
    fn verify_episode(&self, episode: &BundleEpisode) -> EpisodeVerification {
        let plan = match EpisodePlan::from_value(&episode.plan) {
            Ok(plan) => plan,
            Err(e) => return EpisodeVerification::failed(format!("the episode's plan is unreadable: {e}")),
        };
        let Value::String(text) = &episode.replay else {
            return EpisodeVerification::failed("the replay must be gaos.replay JSONL text".into());
        };
        let check = match check_episode_replay(text, &self.adapter, &plan, self.resolver, self.scorer) {
            Ok(check) => check,
            Err(why) => return EpisodeVerification::failed(why),
        };
        let signatures = check.signatures();
        EpisodeVerification {
            replay_valid: true,
            score: check.score,
            semantics: check.semantics(),
            evidence_complete: check.evidence_complete(),
            terminal_outcome: check.terminal_outcome,
            // Verified for an RFC-010 signed replay (accepted-signed).
            signatures,
            reasons: check.reasons,
        }
    }
}

/// One episode's verification facts.
#[derive(Debug, Clone, PartialEq)]
pub struct EpisodeFact {
    /// The episode id the bundle claims.
    pub id: String,
    /// The verifier's findings.
    pub verification: EpisodeVerification,
    /// Every reason this episode is not valid (bundle checks and the verifier's).
    pub reasons: Vec<String>,
}

/// The submission-level facts.
#[derive(Debug, Clone, PartialEq)]
pub struct SubmissionFacts {
    /// Every replay verified.
    pub replay: VerificationState,
    /// Seat signatures.
    pub signatures: VerificationState,
    /// Game semantics.
    pub semantics: VerificationState,
    /// Complete evidence.
    pub evidence_complete: VerificationState,
    /// Facts about external authorities, by `SubmissionVerificationFacts` key.
    pub authorities: Vec<(&'static str, VerificationState)>,
    /// Every reason the bundle is not valid.
    pub reasons: Vec<String>,
}

/// The result of [`verify_bundle`].
#[derive(Debug, Clone, PartialEq)]
pub struct BundleVerification {
    /// No reasons.
    pub valid: bool,
    /// The package digest of the bundle's canonical files.
    pub bundle_digest: String,
    /// The content digest recomputed from the bundle.
    pub content_digest: String,
    /// The recomputed aggregate (only when every episode passed).
    pub aggregate: Option<Aggregate>,
    /// Per-episode facts, in bundle order.
    pub episodes: Vec<EpisodeFact>,
    /// Submission facts and reasons.
    pub facts: SubmissionFacts,
}

impl BundleVerification {
    /// `{valid, bundleDigest, contentDigest, aggregate?, episodeFacts, facts}` as JSON.
    pub fn to_value(&self) -> Value {
        let state = |s: VerificationState| Value::from(s.as_str());
        let mut facts = Map::new();
        for key in FACT_KEYS {
            facts.insert(key.into(), state(VerificationState::NotObserved));
        }
        facts.insert("replay".into(), state(self.facts.replay));
        facts.insert("signatures".into(), state(self.facts.signatures));
        facts.insert("semantics".into(), state(self.facts.semantics));
        facts.insert("evidenceComplete".into(), state(self.facts.evidence_complete));
        for (key, value) in &self.facts.authorities {
            facts.insert((*key).into(), state(*value));
        }
        facts.insert("externalAuthorities".into(), Value::Array(Vec::new()));
        facts.insert("reasons".into(), Value::Array(self.facts.reasons.iter().map(Value::from).collect()));
        let episodes: Vec<Value> = self
            .episodes
            .iter()
            .map(|fact| {
                let v = &fact.verification;
                let mut map = Map::new();
                map.insert("id".into(), fact.id.clone().into());
                map.insert("replayValid".into(), v.replay_valid.into());
                map.insert("score".into(), v.score.map_or(Value::Null, Value::Number));
                map.insert("terminalOutcome".into(), v.terminal_outcome.clone());
                map.insert("signatures".into(), state(v.signatures));
                map.insert("semantics".into(), state(v.semantics));
                map.insert("evidenceComplete".into(), state(v.evidence_complete));
                map.insert("reasons".into(), Value::Array(fact.reasons.iter().map(Value::from).collect()));
                Value::Object(map)
            })
            .collect();
        let mut map = Map::new();
        map.insert("valid".into(), self.valid.into());
        map.insert("bundleDigest".into(), self.bundle_digest.clone().into());
        map.insert("contentDigest".into(), self.content_digest.clone().into());
        if let Some(aggregate) = &self.aggregate {
            map.insert("aggregate".into(), aggregate.to_value());
        }
        map.insert("episodeFacts".into(), Value::Array(episodes));
        map.insert("facts".into(), Value::Object(facts));
        Value::Object(map)
    }
}

fn combined(states: &[VerificationState], not_required: bool) -> VerificationState {
    if not_required {
        VerificationState::NotRequired
    } else if states.contains(&VerificationState::Failed) {
        VerificationState::Failed
    } else if !states.is_empty() && states.iter().all(|s| *s == VerificationState::Verified) {
        VerificationState::Verified
    } else {
        VerificationState::Unverified
    }
}

fn authority_fact(claim: &str) -> &'static str {
    match claim {
        "identity" => "accountIdentityAttested",
        "time" => "timeAttested",
        "publication" => "publicationLogged",
        "tail-anchor" => "tailAnchored",
        "model-identity" => "modelIdentityAttested",
        _ => "hiddenTestCompliant",
    }
}

/// Verify `bundle` against an independently supplied `manifest`, checking
/// every episode with `verifier`. Records a reason for: a wrong schema or
/// digest; a manifest that differs from the supplied one; an unplanned,
/// duplicated or misplaced episode, or one with the wrong id or replay
/// digest; an episode the verifier rejects, or whose carried score or
/// outcome differs from the verifier's; a missing episode; an aggregate
/// mismatch (recomputed only when every episode passed); unverified
/// semantics; signatures or complete coverage the manifest requires but
/// nothing verified; a required external attestation (gaos-rs verifies
/// none, so a required one is always missing).
pub fn verify_bundle(
    bundle: &Bundle,
    manifest: &BenchmarkManifest,
    verifier: &dyn EpisodeVerifier,
) -> BundleVerification {
    let mut reasons = Vec::new();
    let bundle_digest = bundle.package_digest();
    if bundle.schema != BUNDLE_SCHEMA {
        reasons.push(format!("unsupported bundle schema {:?}", bundle.schema));
    }
    let manifest_digest = manifest.digest();
    if bundle.manifest_digest != manifest_digest || canonical_sha256_hex(&bundle.manifest) != manifest_digest {
        reasons.push("the bundle's manifest does not match the independently supplied manifest".into());
    }
    let content_digest = bundle.compute_content_digest();
    if bundle.content_digest != content_digest {
        reasons.push(format!(
            "content digest mismatch: the bundle claims {}, its contents hash to {content_digest}",
            bundle.content_digest
        ));
    }
    let plan = plan_episodes(manifest);
    let expected_ids: std::collections::BTreeSet<String> = plan.iter().map(EpisodePlan::episode_id).collect();
    let mut seen = std::collections::BTreeSet::new();
    let mut facts: Vec<EpisodeFact> = Vec::with_capacity(bundle.episodes.len());
    let mut recomputed: Vec<(EpisodePlan, f64)> = Vec::new();
    for (position, episode) in bundle.episodes.iter().enumerate() {
        let mut local = Vec::new();
        if !expected_ids.contains(&episode.id) {
            local.push("the manifest plans no such episode".to_owned());
        }
        if !seen.insert(episode.id.clone()) {
            local.push("duplicate episode".into());
        }
        let planned = plan.get(position);
        let plan_matches = planned.is_some_and(|p| {
            p.index == position as u64 && canonical_json(&p.to_value()) == canonical_json(&episode.plan)
        });
        if !plan_matches {
            local.push("the episode's plan does not exactly match the authored plan".into());
        }
        match EpisodePlan::from_value(&episode.plan) {
            Ok(p) if p.episode_id() == episode.id => {}
            _ => local.push("the episode id does not match its plan".into()),
        }
        if canonical_sha256_hex(&episode.replay) != episode.replay_digest {
            local.push("replay digest mismatch".into());
        }
        let verification = verifier.verify_episode(episode);
        local.extend(verification.reasons.iter().cloned());
        if !verification.replay_valid {
            local.push("episode replay verification failed".into());
        }
        if verification.score.map(Value::Number) != Some(episode.score.clone()) {
            local.push(format!(
                "the carried score {} differs from the recomputed {}",
                episode.score,
                verification.score.map_or("none".to_owned(), |s| s.to_string())
            ));
        }
        if canonical_json(&verification.terminal_outcome) != canonical_json(&episode.terminal_outcome) {
            local.push("the carried terminal outcome differs from the replay's".into());
        }
        if local.is_empty()
            && let (Some(planned), Some(score)) = (planned, verification.score)
        {
            recomputed.push((planned.clone(), score));
        }
        facts.push(EpisodeFact { id: episode.id.clone(), verification, reasons: local });
    }
    for id in &expected_ids {
        if !seen.contains(id) {
            reasons.push(format!("missing required episode {id}"));
        }
    }
    if seen.len() != expected_ids.len() {
        reasons.push("the bundle's episode set differs from the manifest's plan".into());
    }
    for fact in &facts {
        reasons.extend(fact.reasons.iter().map(|r| format!("{}: {r}", fact.id)));
    }
    let mut aggregate = None;
    if recomputed.len() == plan.len() && reasons.is_empty() {
        match aggregate_scores(manifest, &recomputed) {
            Ok(recomputed) => {
                if canonical_json(&recomputed.to_value()) != canonical_json(&bundle.scores) {
                    reasons.push("the carried task or aggregate scores are incorrect".into());
                }
                aggregate = Some(recomputed);
            }
            Err(e) => reasons.push(e.to_string()),
        }
    }
    let mut authorities = Vec::new();
    for requirement in &manifest.authority_requirements {
        let key = authority_fact(&requirement.claim);
        if requirement.required {
            authorities.push((key, VerificationState::Failed));
            reasons.push(format!(
                "required {} attestation from {} is missing or invalid (gaos-rs verifies no external attestations)",
                requirement.claim, requirement.authority_id
            ));
        }
    }
    let states = |f: fn(&EpisodeVerification) -> VerificationState| -> Vec<VerificationState> {
        facts.iter().map(|fact| f(&fact.verification)).collect()
    };
    let replay = if facts.iter().all(|f| f.verification.replay_valid) {
        VerificationState::Verified
    } else {
        VerificationState::Failed
    };
    let signatures = combined(&states(|v| v.signatures), !manifest.submission.require_signed_seats);
    let semantics = combined(&states(|v| v.semantics), false);
    let evidence_complete = combined(&states(|v| v.evidence_complete), !manifest.submission.require_complete_coverage);
    if manifest.submission.require_signed_seats && signatures != VerificationState::Verified {
        reasons.push("signed-seat evidence is required but was not verified".into());
    }
    if manifest.submission.require_complete_coverage && evidence_complete != VerificationState::Verified {
        reasons.push("complete evidence coverage is required but was not verified".into());
    }
    if semantics != VerificationState::Verified {
        reasons.push("episode semantics were not verified".into());
    }
    BundleVerification {
        valid: reasons.is_empty(),
        bundle_digest,
        content_digest,
        aggregate,
        episodes: facts,
        facts: SubmissionFacts { replay, signatures, semantics, evidence_complete, authorities, reasons },
    }
}
