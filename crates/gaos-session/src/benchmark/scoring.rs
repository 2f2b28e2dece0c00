//! Scoring plugins (one score per episode, from its terminal outcome) and
//! aggregation with the reference arithmetic.
//!
//! A terminal outcome is what gaos-host's finalize answers and what replay
//! verification recomputes: `{status, stars, actionsUsed, outcome?}`.
//!
//! Built-in plugins:
//!
//! | id | score |
//! |---|---|
//! | `gaos.score.outcome` | 1 when `status` is `won`, else 0 |
//! | `gaos.score.stars` | `stars / 3` (0 without stars) |
//! | `gaos.score.maze` | won: `outcome.shortestPath / outcome.moves` (1 on a shortest path), else 0 |
//!
//! Aggregation is exact: a task's score is the sum of its episode scores,
//! left to right in plan order from 0, divided by their count; the
//! aggregate walks tasks in manifest order with `total += s·w; W += w` and
//! returns `total` (`sum`) or `total / W`. Verifiers compare these numbers
//! exactly, so the order of float operations is part of the contract.

use gaos_json::{Map, Value};

use crate::benchmark::error::BenchmarkError;
use crate::benchmark::manifest::{Aggregation, BenchmarkManifest};
use crate::benchmark::plan::EpisodePlan;

/// Scores one episode from its terminal outcome.
pub trait ScoringPlugin: Send + Sync {
    /// The plugin id named by `scoring.plugin`.
    fn id(&self) -> &str;

    /// The episode's score (must be finite). `outcome` is
    /// `{status, stars, actionsUsed, outcome?}`.
    fn score(&self, plan: &EpisodePlan, outcome: &Value) -> Result<f64, String>;
}

/// Ids of the built-in plugins.
pub const BUILTIN_SCORERS: [&str; 3] = ["gaos.score.outcome", "gaos.score.stars", "gaos.score.maze"];

struct OutcomeScorer;
struct StarsScorer;
struct MazeScorer;

fn status(outcome: &Value) -> Result<&str, String> {
    outcome.get("status").and_then(Value::as_str).ok_or_else(|| "the terminal outcome has no status".to_owned())
}

impl ScoringPlugin for OutcomeScorer {
    fn id(&self) -> &str {
        "gaos.score.outcome"
    }

    fn score(&self, _plan: &EpisodePlan, outcome: &Value) -> Result<f64, String> {
        Ok(if status(outcome)? == "won" { 1.0 } else { 0.0 })
    }
}

impl ScoringPlugin for StarsScorer {
    fn id(&self) -> &str {
        "gaos.score.stars"
    }

    fn score(&self, _plan: &EpisodePlan, outcome: &Value) -> Result<f64, String> {
        status(outcome)?;
        match outcome.get("stars") {
            None | Some(Value::Null) => Ok(0.0),
            Some(Value::Number(stars)) => Ok(stars / 3.0),
            Some(other) => Err(format!("stars must be a number or null, found {other}")),
        }
    }
}

impl ScoringPlugin for MazeScorer {
    fn id(&self) -> &str {
        "gaos.score.maze"
    }

    fn score(&self, _plan: &EpisodePlan, outcome: &Value) -> Result<f64, String> {
        if status(outcome)? != "won" {
            return Ok(0.0);
        }
        let read = |key: &str| {
            outcome.get("outcome").and_then(|o| o.get(key)).and_then(Value::as_u64).ok_or_else(|| {
                format!("gaos.score.maze needs outcome.{key} (a gaos/maze episode); the outcome is {outcome}")
            })
        };
        let (moves, shortest) = (read("moves")?, read("shortestPath")?);
        Ok(shortest as f64 / moves.max(shortest).max(1) as f64)
    }
}

/// The built-in plugin `id`, or an error listing the known ones.
pub fn scoring_plugin(id: &str) -> Result<Box<dyn ScoringPlugin>, BenchmarkError> {
    Ok(match id {
        "gaos.score.outcome" => Box::new(OutcomeScorer),
        "gaos.score.stars" => Box::new(StarsScorer),
        "gaos.score.maze" => Box::new(MazeScorer),
        other => {
            return Err(BenchmarkError::Scoring(format!(
                "unknown scoring plugin {other:?}; built-in plugins: {}",
                BUILTIN_SCORERS.join(", ")
            )));
        }
    })
}

/// Task scores and the aggregate (`{aggregateScore, taskScores}`).
#[derive(Debug, Clone, PartialEq)]
pub struct Aggregate {
    /// The aggregate score.
    pub aggregate_score: f64,
    /// Each task's score, in manifest order.
    pub task_scores: Vec<(String, f64)>,
}

impl Aggregate {
    /// `{aggregateScore, taskScores: {taskId: score}}`.
    pub fn to_value(&self) -> Value {
        let mut tasks = Map::new();
        for (id, score) in &self.task_scores {
            tasks.insert(id.clone(), Value::Number(*score));
        }
        let mut map = Map::new();
        map.insert("aggregateScore".into(), Value::Number(self.aggregate_score));
        map.insert("taskScores".into(), Value::Object(tasks));
        Value::Object(map)
    }
}

/// Aggregate per-episode scores (any order; they are put in plan order).
/// Every task must have exactly `seeds × episodes` scores, all finite.
pub fn aggregate_scores(
    manifest: &BenchmarkManifest,
    episodes: &[(EpisodePlan, f64)],
) -> Result<Aggregate, BenchmarkError> {
    let mut ordered: Vec<&(EpisodePlan, f64)> = episodes.iter().collect();
    ordered.sort_by_key(|(plan, _)| plan.index);
    let mut task_scores = Vec::with_capacity(manifest.tasks.len());
    for task in &manifest.tasks {
        let scores: Vec<f64> = ordered.iter().filter(|(p, _)| p.task_id == task.id).map(|(_, s)| *s).collect();
        let expected = task.seeds.len() as u64 * task.episodes;
        if scores.len() as u64 != expected {
            return Err(BenchmarkError::Scoring(format!(
                "task {:?} has {} episode scores, expected {expected}",
                task.id,
                scores.len()
            )));
        }
        if let Some(bad) = scores.iter().find(|s| !s.is_finite()) {
            return Err(BenchmarkError::Scoring(format!("task {:?} has a non-finite score {bad}", task.id)));
        }
        let sum = scores.iter().fold(0.0, |sum, score| sum + score);
        task_scores.push((task.id.clone(), sum / scores.len() as f64));
    }
    if let Some((plan, _)) = ordered.iter().find(|(p, _)| manifest.task(&p.task_id).is_none()) {
        return Err(BenchmarkError::Scoring(format!(
            "episode {} belongs to no task of the manifest",
            plan.episode_id()
        )));
    }
    let aggregation = manifest.scoring.aggregation;
    let mut total = 0.0;
    let mut weights = 0.0;
    for (task, (_, score)) in manifest.tasks.iter().zip(&task_scores) {
        let weight = if aggregation == Aggregation::WeightedMean { task.weight.unwrap_or(1.0) } else { 1.0 };
        total += score * weight;
        weights += weight;
    }
    let aggregate_score = match aggregation {
        Aggregation::Sum => total,
        _ if weights > 0.0 => total / weights,
        _ => return Err(BenchmarkError::Scoring("the aggregate task weight must be greater than zero".into())),
    };
    Ok(Aggregate { aggregate_score, task_scores })
}
