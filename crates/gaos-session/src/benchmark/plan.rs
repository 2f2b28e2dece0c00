//! Canonical planning: tasks in manifest order, then seeds as authored,
//! then episodes `0..n−1`.

use gaos_json::{Map, Value, fnv1a32};

use crate::benchmark::error::BenchmarkError;
use crate::benchmark::manifest::BenchmarkManifest;

/// One planned episode: `{index, taskId, seed, episode, maxSteps}`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct EpisodePlan {
    /// Position in the plan (from 0).
    pub index: u64,
    /// The task.
    pub task_id: String,
    /// The seed (the session seed of the episode).
    pub seed: u32,
    /// The episode number for this task and seed (from 0).
    pub episode: u64,
    /// The task's `maxSteps`.
    pub max_steps: u64,
}

impl EpisodePlan {
    /// `"<taskId>-seed-<seed>-episode-<episode>"`.
    pub fn episode_id(&self) -> String {
        format!("{}-seed-{}-episode-{}", self.task_id, self.seed, self.episode)
    }

    /// A seed for this episode's agent, derived from (task, seed, episode)
    /// alone: `fnv1a32(episode id)`. Episodes never share a driver seed by
    /// construction order, so results do not depend on `--jobs` or on
    /// which worker ran what.
    pub fn driver_seed(&self) -> u32 {
        fnv1a32(&self.episode_id())
    }

    /// The plan entry as JSON.
    pub fn to_value(&self) -> Value {
        let mut map = Map::new();
        map.insert("index".into(), self.index.into());
        map.insert("taskId".into(), self.task_id.clone().into());
        map.insert("seed".into(), self.seed.into());
        map.insert("episode".into(), self.episode.into());
        map.insert("maxSteps".into(), self.max_steps.into());
        Value::Object(map)
    }

    /// Read a plan entry (exactly the five fields).
    pub fn from_value(value: &Value) -> Result<Self, String> {
        let map = value.as_object().ok_or("a plan entry must be an object")?;
        if let Some(key) =
            map.keys().find(|k| !["index", "taskId", "seed", "episode", "maxSteps"].contains(&k.as_str()))
        {
            return Err(format!("a plan entry has an unknown field {key:?}"));
        }
        let uint = |key: &str| map.get(key).and_then(Value::as_u64).ok_or(format!("plan.{key} must be an integer ≥ 0"));
        Ok(EpisodePlan {
            index: uint("index")?,
            task_id: map.get("taskId").and_then(Value::as_str).ok_or("plan.taskId must be a string")?.to_owned(),
            seed: map.get("seed").and_then(Value::as_u32).ok_or("plan.seed must be a u32")?,
            episode: uint("episode")?,
            max_steps: uint("maxSteps")?,
        })
    }
}

/// The canonical plan of a (validated) manifest.
///
/// ```
/// use gaos_session::benchmark::{BenchmarkManifest, plan_episodes};
///
/// let manifest = BenchmarkManifest::parse(r#"{
///   "schema": "gaos.benchmark-manifest.v1",
///   "benchmark": {"id": "b", "version": "1", "adapter": "gaos/maze"},
///   "tasks": [{"id": "tiny", "seeds": [7, 3], "episodes": 2, "maxSteps": 40}],
///   "scoring": {"plugin": "gaos.score.outcome", "aggregation": "mean"},
///   "submission": {"requireSignedSeats": false, "requireCompleteCoverage": true}
/// }"#).expect("a valid manifest");
/// let ids: Vec<String> = plan_episodes(&manifest).iter().map(|p| p.episode_id()).collect();
/// assert_eq!(ids, [
///     "tiny-seed-7-episode-0", "tiny-seed-7-episode-1", "tiny-seed-3-episode-0", "tiny-seed-3-episode-1",
/// ]);
/// ```
pub fn plan_episodes(manifest: &BenchmarkManifest) -> Vec<EpisodePlan> {
    let mut plan = Vec::new();
    for task in &manifest.tasks {
        for &seed in &task.seeds {
            for episode in 0..task.episodes {
                plan.push(EpisodePlan {
                    index: plan.len() as u64,
                    task_id: task.id.clone(),
                    seed,
                    episode,
                    max_steps: task.max_steps,
                });
            }
        }
    }
    plan
}

/// The plan as a JSON array.
pub fn plan_value(plan: &[EpisodePlan]) -> Value {
    Value::Array(plan.iter().map(EpisodePlan::to_value).collect())
}

/// Read a JSON array of plan entries.
pub fn plan_from_value(value: &Value) -> Result<Vec<EpisodePlan>, BenchmarkError> {
    value
        .as_array()
        .ok_or_else(|| BenchmarkError::Checkpoint("plan must be an array".into()))?
        .iter()
        .map(|entry| EpisodePlan::from_value(entry).map_err(BenchmarkError::Checkpoint))
        .collect()
}
