//! Official evaluation at create: which benchmark manifest a session's
//! score is bound to.
//!
//! A policy `{evaluation: {kind: "official", benchmarkId, benchmarkVersion,
//! manifestDigest}}` names its manifest by digest only, so the host must
//! hold the manifest itself to score the session at finalize. It comes
//! from one of two places, and both bind the same bytes because the digest
//! is checked:
//! - the host's [`ManifestRegistry`] (`gaos serve --manifest FILE`,
//!   repeatable), looked up by digest;
//! - the create request's own `manifest` field (the full manifest object).
//!
//! The create is refused (`422`, no session made) when neither has it
//! (`unknown_manifest`), when the manifest's digest, id or version differ
//! from the policy's (`manifest_mismatch`), when the host cannot score it
//! (`unknown_scoring_plugin`), or when the session is not an episode the
//! manifest plans (`not_planned`: the game is the adapter, `levelId` a task,
//! `seed` one of its seeds, the level the game's own with the task's
//! `maxSteps`). The resolved manifest is stored with the session, so
//! finalize after a restart scores against the same bytes whatever the
//! registry then holds.

use gaos_session::ErrorCode;
use std::collections::BTreeMap;
use std::sync::Arc;

use gaos_games::GameRegistry;
use gaos_json::{Value, canonical_json};
use gaos_kernel::Game;
use gaos_session::SessionPolicy;
use gaos_session::benchmark::{BenchmarkManifest, BenchmarkTask, scoring_plugin};

use crate::config::SessionConfig;
use crate::error::HostError;

/// The manifests a host holds for official evaluation, by digest.
#[derive(Debug, Clone, Default)]
pub struct ManifestRegistry {
    by_digest: BTreeMap<String, Arc<BenchmarkManifest>>,
}

impl ManifestRegistry {
    /// No manifests.
    pub fn new() -> Self {
        ManifestRegistry::default()
    }

    /// Hold `manifest` (a second copy of the same digest is a no-op). Its
    /// scoring plugin must be one this host can run.
    pub fn register(&mut self, manifest: BenchmarkManifest) -> Result<String, String> {
        scoring_plugin(&manifest.scoring.plugin).map_err(|e| e.to_string())?;
        let digest = manifest.digest();
        self.by_digest.insert(digest.clone(), Arc::new(manifest));
        Ok(digest)
    }

    /// The manifest with `digest`.
    pub fn get(&self, digest: &str) -> Option<Arc<BenchmarkManifest>> {
        self.by_digest.get(digest).cloned()
    }

    /// The digests held, sorted.
    pub fn digests(&self) -> impl Iterator<Item = &str> {
        self.by_digest.keys().map(String::as_str)
    }
}

/// The manifest a new session's official evaluation is bound to (stored
/// in its config), or `None` when it is not official; refuses what
/// [`bind_manifest`] and [`check_planned`] refuse.
pub(crate) fn bound_manifest(
    config: &SessionConfig,
    inline: Option<&Value>,
    manifests: &ManifestRegistry,
    registry: &GameRegistry,
    game: &Arc<dyn Game>,
) -> Result<Option<Value>, HostError> {
    let Some(manifest) = bind_manifest(&config.policy, inline, manifests)? else { return Ok(None) };
    if config.run.is_some() {
        // A manifest plans episodes of one task level at one seed; a run's
        // levels are no such episode, so no official score could be bound.
        return Err(unprocessable(
            ErrorCode::NotPlanned,
            "a multi-level run is no episode a benchmark manifest plans (one task level at one planned seed): create one session per planned episode, as `gaos bench run` does, or play the run under practice evaluation",
        ));
    }
    check_planned(&manifest, registry, game, &config.level_id, &config.level, config.seed)?;
    Ok(Some(manifest.value().clone()))
}

fn unprocessable(code: ErrorCode, message: impl Into<String>) -> HostError {
    HostError::new(code, message)
}

/// The manifest an official policy's score is bound to, or `None` for any
/// other evaluation. `inline` is the create request's `manifest` field.
pub(crate) fn bind_manifest(
    policy: &SessionPolicy,
    inline: Option<&Value>,
    registry: &ManifestRegistry,
) -> Result<Option<BenchmarkManifest>, HostError> {
    let Some(official) = policy.official_evaluation() else {
        if inline.is_some() {
            return Err(HostError::invalid_request(
                "manifest is only read for an official evaluation (policy.evaluation.kind \"official\")",
            ));
        }
        return Ok(None);
    };
    let manifest = match inline {
        Some(value) => BenchmarkManifest::from_value(value)
            .map_err(|e| HostError::invalid_request(format!("the create request's manifest: {e}")))?,
        None => match registry.get(&official.manifest_digest) {
            Some(manifest) => (*manifest).clone(),
            None => {
                return Err(unprocessable(
                    ErrorCode::UnknownManifest,
                    format!(
                        "this host holds no benchmark manifest with digest {}: pass the manifest in the create \
                         request's \"manifest\" field, or start the host with gaos serve --manifest FILE",
                        official.manifest_digest
                    ),
                ));
            }
        },
    };
    let digest = manifest.digest();
    if digest != official.manifest_digest {
        return Err(unprocessable(
            ErrorCode::ManifestMismatch,
            format!(
                "the policy binds manifest digest {}, but the manifest given has digest {digest}",
                official.manifest_digest
            ),
        ));
    }
    let identity = (&manifest.benchmark.id, &manifest.benchmark.version);
    if identity != (&official.benchmark_id, &official.benchmark_version) {
        return Err(unprocessable(
            ErrorCode::ManifestMismatch,
            format!(
                "the policy names benchmark {} version {}, the manifest is {} version {}",
                official.benchmark_id, official.benchmark_version, identity.0, identity.1
            ),
        ));
    }
    scoring_plugin(&manifest.scoring.plugin).map_err(|e| {
        unprocessable(ErrorCode::UnknownScoringPlugin, format!("this host cannot score the manifest: {e}"))
    })?;
    Ok(Some(manifest))
}

/// The level a planned episode of `task` plays: the game's level named by
/// the task id, with its `maxSteps` (when it has one) set to the task's, as
/// benchmark orchestration creates it.
pub(crate) fn planned_level(game: &dyn Game, task: &BenchmarkTask) -> Option<Value> {
    let mut level = game.levels().into_iter().find(|l| l.id == task.id)?.level;
    if let Some(map) = level.as_object_mut()
        && map.contains_key("maxSteps")
    {
        map.insert("maxSteps".into(), task.max_steps.into());
    }
    Some(level)
}

/// Refuse a session that is not an episode `manifest` plans.
pub(crate) fn check_planned(
    manifest: &BenchmarkManifest,
    registry: &GameRegistry,
    game: &Arc<dyn Game>,
    level_id: &str,
    level: &Value,
    seed: u32,
) -> Result<(), HostError> {
    let adapter = &manifest.benchmark.adapter;
    let game_id = game.game_ref().id;
    // A manifest whose adapter is a game module file names no registered
    // game; the replay check at finalize still binds the module's game.
    if registry.get(adapter).is_some() && &game_id != adapter {
        return Err(unprocessable(
            ErrorCode::NotPlanned,
            format!("the manifest benchmarks game {adapter}, this session plays {game_id}"),
        ));
    }
    let task = manifest.task(level_id).ok_or_else(|| {
        let tasks: Vec<&str> = manifest.tasks.iter().map(|t| t.id.as_str()).collect();
        unprocessable(
            ErrorCode::NotPlanned,
            format!("levelId {level_id:?} is no task of the manifest (tasks: {})", tasks.join(", ")),
        )
    })?;
    if !task.seeds.contains(&seed) {
        return Err(unprocessable(
            ErrorCode::NotPlanned,
            format!("seed {seed} is not planned for task {:?} (seeds: {:?})", task.id, task.seeds),
        ));
    }
    let expected = planned_level(game.as_ref(), task).ok_or_else(|| {
        unprocessable(ErrorCode::NotPlanned, format!("game {game_id} has no level {:?} for the task", task.id))
    })?;
    if canonical_json(&expected) != canonical_json(level) {
        return Err(unprocessable(
            ErrorCode::NotPlanned,
            format!(
                "the level differs from the game's level {:?} with the task's maxSteps; an official episode plays \
                 the planned level (omit \"level\", or send {})",
                task.id,
                canonical_json(&expected)
            ),
        ));
    }
    Ok(())
}
