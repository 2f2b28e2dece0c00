//! `gaos.benchmark-manifest.v1` (lifecycle spec §5): reading, validation
//! and the manifest digest.
//!
//! Validation is strict: unknown fields are refused with their path, so a
//! typo never silently changes what a benchmark means.

use gaos_json::{Map, Value, canonical_sha256_hex};

use crate::benchmark::error::BenchmarkError;

/// The manifest schema id.
pub const MANIFEST_SCHEMA: &str = "gaos.benchmark-manifest.v1";

/// Most episodes a manifest may plan (a bound on memory and checkpoint size).
pub const MAX_PLANNED_EPISODES: u64 = 1_000_000;

/// `benchmark`: `{id, version, adapter}`. In gaos-rs the adapter is the id
/// of the game every episode plays (e.g. `gaos/maze`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BenchmarkIdentity {
    /// Benchmark id.
    pub id: String,
    /// Benchmark version.
    pub version: String,
    /// The game (adapter) id.
    pub adapter: String,
}

/// One task: `{id, seeds, episodes, maxSteps, weight?}`.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchmarkTask {
    /// Task id (in gaos-rs, a level id of the adapter game).
    pub id: String,
    /// Seeds, as authored (unique, each a u32).
    pub seeds: Vec<u32>,
    /// Episodes per seed (≥ 1).
    pub episodes: u64,
    /// Most decisions of the scored seat per episode (≥ 1).
    pub max_steps: u64,
    /// Weight under `weighted-mean` (finite, ≥ 0; default 1).
    pub weight: Option<f64>,
}

/// `scoring.aggregation`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Aggregation {
    /// Mean of the task scores.
    Mean,
    /// Mean weighted by `task.weight` (default 1).
    WeightedMean,
    /// Sum of the task scores.
    Sum,
}

impl Aggregation {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Aggregation::Mean => "mean",
            Aggregation::WeightedMean => "weighted-mean",
            Aggregation::Sum => "sum",
        }
    }
}

/// `scoring`: `{plugin, aggregation}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BenchmarkScoring {
    /// Scoring plugin id (see [`crate::benchmark::scoring`]).
    pub plugin: String,
    /// How task scores combine.
    pub aggregation: Aggregation,
}

/// `submission`: what a verifier must see verified.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SubmissionPolicy {
    /// Every seat's commands must be signed.
    pub require_signed_seats: bool,
    /// Evidence must cover every episode completely.
    pub require_complete_coverage: bool,
}

/// One `authorityRequirements` entry (an external attestation a verifier
/// must find).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthorityRequirement {
    /// `identity`, `time`, `publication`, `tail-anchor`, `model-identity` or `hidden-test`.
    pub claim: String,
    /// `identity`, `timestamp`, `transparency` or `witness`.
    pub purpose: String,
    /// The authority.
    pub authority_id: String,
    /// Accepted attestation schemas (at least one).
    pub accepted_schemas: Vec<String>,
    /// Whether a missing attestation invalidates the submission.
    pub required: bool,
}

const CLAIMS: [&str; 6] = ["identity", "time", "publication", "tail-anchor", "model-identity", "hidden-test"];
const PURPOSES: [&str; 4] = ["identity", "timestamp", "transparency", "witness"];
const REVOCATION: [&str; 3] = ["ignore", "reject-revoked", "require-valid"];

/// A validated manifest. The JSON it was read from is kept: it is what the
/// digest covers and what a bundle's `manifest.json` holds.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchmarkManifest {
    /// `benchmark`.
    pub benchmark: BenchmarkIdentity,
    /// `tasks`, in authored order.
    pub tasks: Vec<BenchmarkTask>,
    /// `scoring`.
    pub scoring: BenchmarkScoring,
    /// `submission`.
    pub submission: SubmissionPolicy,
    /// `authorityRequirements` (empty when absent).
    pub authority_requirements: Vec<AuthorityRequirement>,
    value: Value,
}

fn bad(path: &str, why: impl std::fmt::Display) -> BenchmarkError {
    BenchmarkError::Manifest(format!("{path}: {why}"))
}

fn object<'a>(value: &'a Value, path: &str, known: &[&str]) -> Result<&'a Map, BenchmarkError> {
    let map = value.as_object().ok_or_else(|| bad(path, format!("must be an object, not {}", value.type_name())))?;
    if let Some(key) = map.keys().find(|k| !known.contains(&k.as_str())) {
        let at = if path.is_empty() { key.clone() } else { format!("{path}.{key}") };
        return Err(bad(&at, format!("unknown field (known: {})", known.join(", "))));
    }
    Ok(map)
}

fn field<'a>(map: &'a Map, path: &str, key: &str) -> Result<&'a Value, BenchmarkError> {
    map.get(key).ok_or_else(|| bad(&join(path, key), "is required"))
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() { key.to_owned() } else { format!("{path}.{key}") }
}

fn text(map: &Map, path: &str, key: &str) -> Result<String, BenchmarkError> {
    match field(map, path, key)? {
        Value::String(s) if !s.is_empty() => Ok(s.clone()),
        Value::String(_) => Err(bad(&join(path, key), "must be a non-empty string")),
        other => Err(bad(&join(path, key), format!("must be a non-empty string, not {}", other.type_name()))),
    }
}

fn boolean(map: &Map, path: &str, key: &str) -> Result<bool, BenchmarkError> {
    field(map, path, key)?.as_bool().ok_or_else(|| bad(&join(path, key), "must be true or false"))
}

fn strings(value: &Value, path: &str, allow_empty: bool) -> Result<Vec<String>, BenchmarkError> {
    let items = value.as_array().ok_or_else(|| bad(path, "must be an array of strings"))?;
    if items.is_empty() && !allow_empty {
        return Err(bad(path, "must not be empty"));
    }
    items
        .iter()
        .enumerate()
        .map(|(i, item)| match item {
            Value::String(s) if !s.is_empty() => Ok(s.clone()),
            _ => Err(bad(&format!("{path}[{i}]"), "must be a non-empty string")),
        })
        .collect()
}

fn positive_integer(map: &Map, path: &str, key: &str) -> Result<u64, BenchmarkError> {
    let value = field(map, path, key)?;
    match value.as_u64() {
        Some(n) if n >= 1 => Ok(n),
        _ => Err(bad(&join(path, key), format!("must be an integer ≥ 1, found {value}"))),
    }
}

fn task(value: &Value, path: &str) -> Result<BenchmarkTask, BenchmarkError> {
    let map = object(value, path, &["id", "seeds", "episodes", "maxSteps", "weight"])?;
    let id = text(map, path, "id")?;
    let seeds_value = field(map, path, "seeds")?;
    let items = seeds_value.as_array().ok_or_else(|| bad(&join(path, "seeds"), "must be an array of seeds"))?;
    if items.is_empty() {
        return Err(bad(&join(path, "seeds"), "must hold at least one seed"));
    }
    let mut seeds = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let seed = item.as_u32().ok_or_else(|| {
            bad(&format!("{path}.seeds[{i}]"), format!("must be an integer in 0..=4294967295, found {item}"))
        })?;
        if seeds.contains(&seed) {
            return Err(bad(&format!("{path}.seeds[{i}]"), format!("seed {seed} appears twice in task {id:?}")));
        }
        seeds.push(seed);
    }
    let weight = match map.get("weight") {
        None => None,
        Some(Value::Number(w)) if *w >= 0.0 => Some(*w),
        Some(other) => return Err(bad(&join(path, "weight"), format!("must be a number ≥ 0, found {other}"))),
    };
    Ok(BenchmarkTask {
        id,
        seeds,
        episodes: positive_integer(map, path, "episodes")?,
        max_steps: positive_integer(map, path, "maxSteps")?,
        weight,
    })
}

fn authority(value: &Value, path: &str) -> Result<AuthorityRequirement, BenchmarkError> {
    let map = object(
        value,
        path,
        &[
            "claim",
            "purpose",
            "authorityId",
            "keyIds",
            "pinnedRootDigests",
            "acceptedSchemas",
            "acceptedAlgorithms",
            "revocationPolicy",
            "required",
        ],
    )?;
    let one_of = |key: &str, allowed: &[&str]| -> Result<String, BenchmarkError> {
        let value = text(map, path, key)?;
        if allowed.contains(&value.as_str()) {
            Ok(value)
        } else {
            Err(bad(&join(path, key), format!("must be one of {}, found {value:?}", allowed.join(", "))))
        }
    };
    let claim = one_of("claim", &CLAIMS)?;
    let purpose = one_of("purpose", &PURPOSES)?;
    if map.contains_key("revocationPolicy") {
        one_of("revocationPolicy", &REVOCATION)?;
    }
    for key in ["keyIds", "pinnedRootDigests", "acceptedAlgorithms"] {
        if let Some(list) = map.get(key) {
            strings(list, &join(path, key), true)?;
        }
    }
    Ok(AuthorityRequirement {
        claim,
        purpose,
        authority_id: text(map, path, "authorityId")?,
        accepted_schemas: strings(field(map, path, "acceptedSchemas")?, &join(path, "acceptedSchemas"), false)?,
        required: boolean(map, path, "required")?,
    })
}

impl BenchmarkManifest {
    /// Read and validate a manifest: the schema, non-empty identity strings,
    /// at least one task, unique task ids, unique u32 seeds per task,
    /// `episodes ≥ 1`, `maxSteps ≥ 1`, `weight ≥ 0`, a known aggregation,
    /// boolean submission flags, well-formed and unique authority
    /// requirements, and no unknown field anywhere.
    pub fn from_value(value: &Value) -> Result<Self, BenchmarkError> {
        let map = object(
            value,
            "",
            &[
                "schema",
                "benchmark",
                "tasks",
                "scoring",
                "submission",
                "observationModalities",
                "agentInterface",
                "authorityRequirements",
            ],
        )?;
        match map.get("schema") {
            Some(Value::String(s)) if s == MANIFEST_SCHEMA => {}
            Some(other) => return Err(bad("schema", format!("must be {MANIFEST_SCHEMA:?}, found {other}"))),
            None => return Err(bad("schema", format!("is required ({MANIFEST_SCHEMA:?})"))),
        }
        let identity = object(field(map, "", "benchmark")?, "benchmark", &["id", "version", "adapter"])?;
        let benchmark = BenchmarkIdentity {
            id: text(identity, "benchmark", "id")?,
            version: text(identity, "benchmark", "version")?,
            adapter: text(identity, "benchmark", "adapter")?,
        };
        let scoring_map = object(field(map, "", "scoring")?, "scoring", &["plugin", "aggregation"])?;
        let aggregation = match text(scoring_map, "scoring", "aggregation")?.as_str() {
            "mean" => Aggregation::Mean,
            "weighted-mean" => Aggregation::WeightedMean,
            "sum" => Aggregation::Sum,
            other => {
                return Err(bad("scoring.aggregation", format!("must be mean, weighted-mean or sum, found {other:?}")));
            }
        };
        let scoring = BenchmarkScoring { plugin: text(scoring_map, "scoring", "plugin")?, aggregation };
        let submission_map =
            object(field(map, "", "submission")?, "submission", &["requireSignedSeats", "requireCompleteCoverage"])?;
        let submission = SubmissionPolicy {
            require_signed_seats: boolean(submission_map, "submission", "requireSignedSeats")?,
            require_complete_coverage: boolean(submission_map, "submission", "requireCompleteCoverage")?,
        };
        if let Some(modalities) = map.get("observationModalities") {
            strings(modalities, "observationModalities", true)?;
        }
        if map.contains_key("agentInterface") {
            text(map, "", "agentInterface")?;
        }
        let mut authority_requirements = Vec::new();
        if let Some(list) = map.get("authorityRequirements") {
            let items = list.as_array().ok_or_else(|| bad("authorityRequirements", "must be an array"))?;
            for (i, item) in items.iter().enumerate() {
                let path = format!("authorityRequirements[{i}]");
                let requirement = authority(item, &path)?;
                if authority_requirements.iter().any(|r: &AuthorityRequirement| {
                    r.claim == requirement.claim && r.authority_id == requirement.authority_id
                }) {
                    return Err(bad(
                        &path,
                        format!("duplicate authority requirement {}:{}", requirement.claim, requirement.authority_id),
                    ));
                }
                authority_requirements.push(requirement);
            }
        }
        let task_values = field(map, "", "tasks")?.as_array().ok_or_else(|| bad("tasks", "must be an array"))?;
        if task_values.is_empty() {
            return Err(bad("tasks", "must hold at least one task"));
        }
        let mut tasks: Vec<BenchmarkTask> = Vec::with_capacity(task_values.len());
        let mut planned: u64 = 0;
        for (i, item) in task_values.iter().enumerate() {
            let path = format!("tasks[{i}]");
            let task = task(item, &path)?;
            if tasks.iter().any(|t| t.id == task.id) {
                return Err(bad(&join(&path, "id"), format!("duplicate task id {:?}", task.id)));
            }
            planned = planned.saturating_add((task.seeds.len() as u64).saturating_mul(task.episodes));
            tasks.push(task);
        }
        if planned > MAX_PLANNED_EPISODES {
            return Err(bad("tasks", format!("plan {planned} episodes; at most {MAX_PLANNED_EPISODES} are allowed")));
        }
        if aggregation != Aggregation::Sum {
            let total: f64 = tasks
                .iter()
                .map(|t| if aggregation == Aggregation::WeightedMean { t.weight.unwrap_or(1.0) } else { 1.0 })
                .sum();
            if total <= 0.0 {
                return Err(bad("tasks", "the task weights add up to 0, so the weighted mean is undefined"));
            }
        }
        Ok(BenchmarkManifest { benchmark, tasks, scoring, submission, authority_requirements, value: value.clone() })
    }

    /// Parse and validate manifest text.
    pub fn parse(text: &str) -> Result<Self, BenchmarkError> {
        let value = gaos_json::parse(text).map_err(|e| BenchmarkError::Manifest(format!("not JSON: {e}")))?;
        Self::from_value(&value)
    }

    /// The manifest as JSON (exactly what was read).
    pub fn value(&self) -> &Value {
        &self.value
    }

    /// `manifestDigest = sha256hex(canonicalJson(manifest))`.
    pub fn digest(&self) -> String {
        canonical_sha256_hex(&self.value)
    }

    /// The task with id `id`.
    pub fn task(&self, id: &str) -> Option<&BenchmarkTask> {
        self.tasks.iter().find(|t| t.id == id)
    }
}
