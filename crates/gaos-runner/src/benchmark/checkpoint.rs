//! `gaos.benchmark-run-checkpoint.v1` (lifecycle spec §5): the run's
//! durable progress, and its atomic file writes.
//!
//! `{schema, manifestDigest, agent: {kind, id}, plan, completed: [{plan,
//! score, replay, terminalOutcome, observations: {steps, wallClockMs?, tokens?,
//! cost?, provider?, …}}], inProgress?:
//! [{plan, attachment, attachReceiptDigest?}]}`, both lists sorted by plan
//! index. An in-progress entry carries the opaque attachment a
//! [`crate::benchmark::SessionFactory`] needs to attach the episode's
//! sessions again (for gaos-rs: the session id and the seat tokens), so the
//! file is written with mode 0600.
//!
//! \[P\] On disk a run keeps `checkpoint.json` (exactly this shape, replaced
//! atomically) and `checkpoint.json.journal`: one canonical JSON line per
//! change since (`{"inProgress": entry}` when an episode starts,
//! `{"completed": entry}` when it ends), each fsynced before the run goes
//! on. Rewriting the whole file on every change would cost O(n²) bytes over
//! a run (every completed entry carries its replay); the journal makes each
//! change O(1), and the checkpoint is rewritten (compacted) only when the
//! journal outgrows it, and at the end of every run. [`Checkpoint::load`]
//! reads both.

use std::io::Write;
use std::path::{Path, PathBuf};

use gaos_json::{Map, Value, canonical_json};

use crate::benchmark::error::BenchmarkError;
use crate::benchmark::plan::{EpisodePlan, plan_from_value, plan_value};
use crate::journal_lines::{JournalLine, journal_lines};

/// The checkpoint schema id.
pub const CHECKPOINT_SCHEMA: &str = "gaos.benchmark-run-checkpoint.v1";

/// The schema id of a checkpoint journal's header line.
pub const JOURNAL_SCHEMA: &str = "gaos.benchmark-run-journal.v1";

/// The journal that goes with a checkpoint file (`<checkpoint>.journal`).
pub fn journal_path(checkpoint: &Path) -> PathBuf {
    let mut name = checkpoint.as_os_str().to_owned();
    name.push(".journal");
    PathBuf::from(name)
}

/// The journal's first line: `{agent, manifestDigest, schema}` (canonical, no newline).
pub fn journal_header(manifest_digest: &str, agent: &AgentIdentity) -> String {
    let mut map = Map::new();
    map.insert("schema".into(), JOURNAL_SCHEMA.into());
    map.insert("manifestDigest".into(), manifest_digest.into());
    map.insert("agent".into(), agent.to_value());
    canonical_json(&Value::Object(map))
}

/// One journal line: an episode started or completed.
#[derive(Debug, Clone, PartialEq)]
pub enum JournalRecord {
    /// `{"inProgress": entry}`.
    Started(InProgressEpisode),
    /// `{"completed": entry}`.
    Completed(CompletedEpisode),
}

impl JournalRecord {
    /// The record as one canonical JSON line (no newline). `completed` is the
    /// entry's canonical JSON when the caller already has it.
    pub fn line(&self, completed: Option<&str>) -> String {
        match self {
            JournalRecord::Started(entry) => format!("{{\"inProgress\":{}}}", canonical_json(&entry.to_value())),
            JournalRecord::Completed(entry) => match completed {
                Some(text) => format!("{{\"completed\":{text}}}"),
                None => format!("{{\"completed\":{}}}", canonical_json(&entry.to_value())),
            },
        }
    }

    fn from_value(value: &Value) -> Result<Self, String> {
        let map = value.as_object().ok_or("a journal record must be an object")?;
        match (map.get("inProgress"), map.get("completed"), map.len()) {
            (Some(entry), None, 1) => Ok(JournalRecord::Started(InProgressEpisode::from_value(entry)?)),
            (None, Some(entry), 1) => Ok(JournalRecord::Completed(CompletedEpisode::from_value(entry)?)),
            _ => Err("a journal record is {\"inProgress\": entry} or {\"completed\": entry}".into()),
        }
    }
}

/// `agent.kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AgentKind {
    /// An agent running in this process (random, scripted, first-legal, human).
    Local,
    /// A hosted model provider.
    Provider,
    /// An agent CLI.
    Cli,
}

impl AgentKind {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            AgentKind::Local => "local",
            AgentKind::Provider => "provider",
            AgentKind::Cli => "cli",
        }
    }

    /// The kind with wire name `text`.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "local" => Some(AgentKind::Local),
            "provider" => Some(AgentKind::Provider),
            "cli" => Some(AgentKind::Cli),
            _ => None,
        }
    }
}

/// `agent`: who played. A resume must name the same agent.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AgentIdentity {
    /// Its kind.
    pub kind: AgentKind,
    /// A stable id (gaos-rs: the `--driver` assignment, e.g. `random`).
    pub id: String,
}

impl AgentIdentity {
    /// `{kind, id}`.
    pub fn to_value(&self) -> Value {
        let mut map = Map::new();
        map.insert("kind".into(), self.kind.as_str().into());
        map.insert("id".into(), self.id.clone().into());
        Value::Object(map)
    }
}

/// `observations`: what the runner measured about one episode
/// (`{steps, wallClockMs?, tokens?, cost?, provider?}`, lifecycle spec §5).
/// `wallClockMs` is measured on the run's clock
/// ([`crate::benchmark::BenchmarkOptions::clock`]) and recorded once, when
/// the episode completes, so a resumed run keeps the value measured before
/// the interruption; a run on a simulated clock packs the same bundle
/// whether or not it was interrupted.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceObservations {
    /// Decisions of the scored seat (≤ the task's `maxSteps`).
    pub steps: u64,
    /// Milliseconds from the scored seat's first observe until its finalize
    /// was answered (for an attached episode: in the run that finished it).
    pub wall_clock_ms: Option<u64>,
    /// Model tokens, when the driver reported usage.
    pub tokens: Option<u64>,
    /// The summed cost the driver reported, in the provider's currency
    /// units (finite, ≥ 0); absent when no decision reported one.
    pub cost: Option<f64>,
    /// The model provider the scored seat's driver called (e.g. `openai`).
    pub provider: Option<String>,
    /// Any further fields a checkpoint carried (kept verbatim).
    pub extra: Map,
}

impl ResourceObservations {
    /// Only `steps` measured.
    pub fn steps(steps: u64) -> Self {
        ResourceObservations { steps, wall_clock_ms: None, tokens: None, cost: None, provider: None, extra: Map::new() }
    }

    /// `{steps, wallClockMs?, tokens?, cost?, provider?, …}`.
    pub fn to_value(&self) -> Value {
        let mut map = self.extra.clone();
        map.insert("steps".into(), self.steps.into());
        if let Some(ms) = self.wall_clock_ms {
            map.insert("wallClockMs".into(), ms.into());
        }
        if let Some(tokens) = self.tokens {
            map.insert("tokens".into(), tokens.into());
        }
        if let Some(cost) = self.cost {
            map.insert("cost".into(), Value::Number(cost));
        }
        if let Some(provider) = &self.provider {
            map.insert("provider".into(), provider.clone().into());
        }
        Value::Object(map)
    }

    /// Read `observations` (or a bundle's `selfReportedObservations`):
    /// `steps`, `wallClockMs` and `tokens` non-negative safe integers,
    /// `cost` a finite non-negative number, `provider` a non-empty string;
    /// other fields are kept as they are.
    pub fn from_value(value: &Value) -> Result<Self, String> {
        let mut extra = value.as_object().ok_or("observations must be an object")?.clone();
        let count = |value: Value, key: &str| {
            value
                .as_u64()
                .filter(|_| value.as_f64().is_some_and(gaos_json::is_safe_integer))
                .ok_or(format!("observations.{key} must be a non-negative integer"))
        };
        let steps = count(extra.remove("steps").ok_or("observations.steps is required")?, "steps")?;
        let wall_clock_ms = extra.remove("wallClockMs").map(|v| count(v, "wallClockMs")).transpose()?;
        let tokens = extra.remove("tokens").map(|v| count(v, "tokens")).transpose()?;
        let cost = match extra.remove("cost") {
            None => None,
            Some(Value::Number(cost)) if cost.is_finite() && cost >= 0.0 => Some(cost),
            Some(_) => return Err("observations.cost must be a finite non-negative number".into()),
        };
        let provider = match extra.remove("provider") {
            None => None,
            Some(Value::String(provider)) if !provider.is_empty() => Some(provider),
            Some(_) => return Err("observations.provider must be a non-empty string".into()),
        };
        Ok(ResourceObservations { steps, wall_clock_ms, tokens, cost, provider, extra })
    }
}

/// One completed episode.
#[derive(Debug, Clone, PartialEq)]
pub struct CompletedEpisode {
    /// Its plan entry.
    pub plan: EpisodePlan,
    /// Its score (finite).
    pub score: f64,
    /// The replay (`gaos.replay` JSONL text as a string).
    pub replay: Value,
    /// The terminal outcome (`{status, stars, actionsUsed, outcome?}`).
    pub terminal_outcome: Value,
    /// Measurements.
    pub observations: ResourceObservations,
}

impl CompletedEpisode {
    /// The entry as JSON.
    pub fn to_value(&self) -> Value {
        let mut map = Map::new();
        map.insert("plan".into(), self.plan.to_value());
        map.insert("score".into(), Value::Number(self.score));
        map.insert("replay".into(), self.replay.clone());
        map.insert("terminalOutcome".into(), self.terminal_outcome.clone());
        map.insert("observations".into(), self.observations.to_value());
        Value::Object(map)
    }

    fn from_value(value: &Value) -> Result<Self, String> {
        let map = value.as_object().ok_or("a completed entry must be an object")?;
        let get = |key: &str| map.get(key).ok_or(format!("a completed entry needs {key}"));
        Ok(CompletedEpisode {
            plan: EpisodePlan::from_value(get("plan")?)?,
            score: get("score")?.as_f64().ok_or("a completed entry's score must be a number")?,
            replay: get("replay")?.clone(),
            terminal_outcome: get("terminalOutcome")?.clone(),
            observations: ResourceObservations::from_value(get("observations")?)?,
        })
    }
}

/// One episode that started but has not completed: what is needed to
/// attach its sessions again.
#[derive(Debug, Clone, PartialEq)]
pub struct InProgressEpisode {
    /// Its plan entry.
    pub plan: EpisodePlan,
    /// The factory's attachment reference (opaque to the orchestrator).
    pub attachment: Value,
    /// Digest of the attach receipt, when the host issued one.
    pub attach_receipt_digest: Option<String>,
}

impl InProgressEpisode {
    /// The entry as JSON.
    pub fn to_value(&self) -> Value {
        let mut map = Map::new();
        map.insert("plan".into(), self.plan.to_value());
        map.insert("attachment".into(), self.attachment.clone());
        if let Some(digest) = &self.attach_receipt_digest {
            map.insert("attachReceiptDigest".into(), digest.clone().into());
        }
        Value::Object(map)
    }

    fn from_value(value: &Value) -> Result<Self, String> {
        let map = value.as_object().ok_or("an in-progress entry must be an object")?;
        Ok(InProgressEpisode {
            plan: EpisodePlan::from_value(map.get("plan").ok_or("an in-progress entry needs plan")?)?,
            attachment: map.get("attachment").cloned().ok_or("an in-progress entry needs attachment")?,
            attach_receipt_digest: match map.get("attachReceiptDigest") {
                None => None,
                Some(v) => Some(v.as_str().ok_or("attachReceiptDigest must be a string")?.to_owned()),
            },
        })
    }
}

/// A run's checkpoint.
#[derive(Debug, Clone, PartialEq)]
pub struct Checkpoint {
    /// The manifest digest.
    pub manifest_digest: String,
    /// The agent.
    pub agent: AgentIdentity,
    /// The canonical plan.
    pub plan: Vec<EpisodePlan>,
    /// Completed episodes, by plan index.
    pub completed: Vec<CompletedEpisode>,
    /// Started, unfinished episodes, by plan index.
    pub in_progress: Vec<InProgressEpisode>,
}

impl Checkpoint {
    /// The checkpoint as JSON (`inProgress` omitted when empty).
    pub fn to_value(&self) -> Value {
        let mut map = Map::new();
        map.insert("schema".into(), CHECKPOINT_SCHEMA.into());
        map.insert("manifestDigest".into(), self.manifest_digest.clone().into());
        map.insert("agent".into(), self.agent.to_value());
        map.insert("plan".into(), plan_value(&self.plan));
        map.insert("completed".into(), Value::Array(self.completed.iter().map(CompletedEpisode::to_value).collect()));
        if !self.in_progress.is_empty() {
            map.insert(
                "inProgress".into(),
                Value::Array(self.in_progress.iter().map(InProgressEpisode::to_value).collect()),
            );
        }
        Value::Object(map)
    }

    /// Read a checkpoint (the schema and every entry's shape are checked;
    /// whether it fits a manifest is [`Checkpoint::check_resumable`]'s job).
    pub fn from_value(value: &Value) -> Result<Self, BenchmarkError> {
        let bad = |why: String| BenchmarkError::Checkpoint(why);
        let map = value.as_object().ok_or_else(|| bad("the checkpoint must be a JSON object".into()))?;
        match map.get("schema").and_then(Value::as_str) {
            Some(CHECKPOINT_SCHEMA) => {}
            Some(other) => return Err(bad(format!("schema must be {CHECKPOINT_SCHEMA:?}, found {other:?}"))),
            None => return Err(bad(format!("schema must be {CHECKPOINT_SCHEMA:?}, and it is missing"))),
        }
        let agent = map.get("agent").ok_or_else(|| bad("agent is required".into()))?;
        let agent = AgentIdentity {
            kind: agent
                .get("kind")
                .and_then(Value::as_str)
                .and_then(AgentKind::parse)
                .ok_or_else(|| bad("agent.kind must be local, provider or cli".into()))?,
            id: agent.get("id").and_then(Value::as_str).ok_or_else(|| bad("agent.id must be a string".into()))?.into(),
        };
        let list = |key: &str| -> Result<Vec<Value>, BenchmarkError> {
            match map.get(key) {
                None if key == "inProgress" => Ok(Vec::new()),
                Some(Value::Array(items)) => Ok(items.clone()),
                _ => Err(bad(format!("{key} must be an array"))),
            }
        };
        Ok(Checkpoint {
            manifest_digest: map
                .get("manifestDigest")
                .and_then(Value::as_str)
                .ok_or_else(|| bad("manifestDigest must be a string".into()))?
                .into(),
            agent,
            plan: plan_from_value(map.get("plan").ok_or_else(|| bad("plan is required".into()))?)?,
            completed: list("completed")?
                .iter()
                .map(|e| CompletedEpisode::from_value(e).map_err(bad))
                .collect::<Result<_, _>>()?,
            in_progress: list("inProgress")?
                .iter()
                .map(|e| InProgressEpisode::from_value(e).map_err(bad))
                .collect::<Result<_, _>>()?,
        })
    }

    /// Read a checkpoint file.
    pub fn read(path: &Path) -> Result<Self, BenchmarkError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| BenchmarkError::Io(format!("cannot read the checkpoint {}: {e}", path.display())))?;
        let value = gaos_json::parse(&text)
            .map_err(|e| BenchmarkError::Checkpoint(format!("{} is not JSON: {e}", path.display())))?;
        Self::from_value(&value)
    }

    /// Apply one journal record (idempotent: a start of a completed episode
    /// is ignored, a repeated completion replaces the same entry).
    pub fn apply(&mut self, record: JournalRecord) {
        match record {
            JournalRecord::Started(entry) => {
                if self.completed.iter().any(|c| c.plan.index == entry.plan.index) {
                    return;
                }
                self.in_progress.retain(|p| p.plan.index != entry.plan.index);
                let at = self.in_progress.partition_point(|p| p.plan.index < entry.plan.index);
                self.in_progress.insert(at, entry);
            }
            JournalRecord::Completed(entry) => {
                self.in_progress.retain(|p| p.plan.index != entry.plan.index);
                self.completed.retain(|c| c.plan.index != entry.plan.index);
                let at = self.completed.partition_point(|c| c.plan.index < entry.plan.index);
                self.completed.insert(at, entry);
            }
        }
    }

    /// Read a run's state: the checkpoint file, then its journal (when there
    /// is one). The journal must belong to the same manifest and agent; a
    /// torn last line (a write the crash interrupted) is ignored.
    pub fn load(path: &Path) -> Result<Self, BenchmarkError> {
        let mut checkpoint = Self::read(path)?;
        let journal = journal_path(path);
        let text = match std::fs::read_to_string(&journal) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(checkpoint),
            Err(e) => return Err(BenchmarkError::Io(format!("cannot read the journal {}: {e}", journal.display()))),
        };
        let bad = |why: String| BenchmarkError::Checkpoint(format!("{}: {why}", journal.display()));
        for JournalLine { number, value, torn } in journal_lines(&text).map_err(bad)? {
            if number == 1 {
                if canonical_json(&value) != journal_header(&checkpoint.manifest_digest, &checkpoint.agent) {
                    return Err(bad("the journal belongs to another run (manifest or agent differ)".into()));
                }
                continue;
            }
            match JournalRecord::from_value(&value) {
                Ok(record) => checkpoint.apply(record),
                Err(_) if torn => break,
                Err(e) => return Err(bad(format!("line {number}: {e}"))),
            }
        }
        Ok(checkpoint)
    }

    /// Check that this checkpoint continues a run of `manifest_digest` with
    /// `plan` and `agent`, and that its entries are sound: each completed
    /// entry matches its plan entry exactly, has a finite score and at most
    /// `maxSteps` steps; no episode appears twice.
    pub fn check_resumable(
        &self,
        manifest_digest: &str,
        plan: &[EpisodePlan],
        agent: &AgentIdentity,
    ) -> Result<(), BenchmarkError> {
        let refuse = |why: String| Err(BenchmarkError::Resume(why));
        if self.manifest_digest != manifest_digest {
            return refuse(format!(
                "the checkpoint is for manifest {}, this manifest is {manifest_digest}",
                self.manifest_digest
            ));
        }
        if canonical_json(&plan_value(&self.plan)) != canonical_json(&plan_value(plan)) {
            return refuse("the checkpoint's plan differs from this manifest's plan".into());
        }
        if &self.agent != agent {
            return refuse(format!(
                "the checkpoint was run by agent {}:{}, not {}:{} (use the same --driver options)",
                self.agent.kind.as_str(),
                self.agent.id,
                agent.kind.as_str(),
                agent.id
            ));
        }
        let mut seen = vec![false; plan.len()];
        let entries = self
            .completed
            .iter()
            .map(|c| (&c.plan, "completed"))
            .chain(self.in_progress.iter().map(|p| (&p.plan, "in-progress")));
        for (entry, what) in entries {
            let Some(expected) = usize::try_from(entry.index).ok().and_then(|i| plan.get(i)) else {
                return refuse(format!("a {what} entry has index {} beyond the plan", entry.index));
            };
            if entry != expected {
                return refuse(format!("the {what} entry {} does not match the plan", expected.episode_id()));
            }
            if std::mem::replace(&mut seen[entry.index as usize], true) {
                return refuse(format!("episode {} appears twice", expected.episode_id()));
            }
        }
        for completed in &self.completed {
            if !completed.score.is_finite() {
                return refuse(format!("episode {} has a non-finite score", completed.plan.episode_id()));
            }
            if completed.observations.steps > completed.plan.max_steps {
                return refuse(format!(
                    "episode {} reports {} steps, more than maxSteps {}",
                    completed.plan.episode_id(),
                    completed.observations.steps,
                    completed.plan.max_steps
                ));
            }
        }
        Ok(())
    }
}

/// Write `bytes` to `path` atomically: a temporary file in the same
/// directory (mode 0600), fsynced, renamed over `path`, then the directory
/// fsynced, so a crash leaves either the old or the new file, never a torn one.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "checkpoint".into());
    let temporary = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(&temporary)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    drop(file);
    std::fs::rename(&temporary, path)?;
    #[cfg(unix)]
    std::fs::File::open(dir)?.sync_all()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<ResourceObservations, String> {
        ResourceObservations::from_value(&gaos_json::parse(text).expect("JSON"))
    }

    #[test]
    fn observations_round_trip_with_and_without_the_optional_measurements() {
        let full = r#"{"cost":0.125,"note":"kept","provider":"openai","steps":4,"tokens":900,"wallClockMs":1520}"#;
        let read = parse(full).expect("valid");
        assert_eq!(read.steps, 4);
        assert_eq!(read.wall_clock_ms, Some(1520));
        assert_eq!(read.tokens, Some(900));
        assert_eq!(read.cost, Some(0.125));
        assert_eq!(read.provider.as_deref(), Some("openai"));
        assert_eq!(read.extra.get("note"), Some(&Value::from("kept")));
        assert_eq!(canonical_json(&read.to_value()), full, "written back byte for byte");
        // What older runs recorded (steps only) still reads, and writes no new fields.
        let old = parse(r#"{"steps":3}"#).expect("an old checkpoint");
        assert_eq!(old, ResourceObservations::steps(3));
        assert_eq!(canonical_json(&old.to_value()), r#"{"steps":3}"#);
    }

    #[test]
    fn observations_of_the_wrong_type_are_refused_with_the_field_named() {
        for (text, field) in [
            (r#"{}"#, "steps"),
            (r#"{"steps":-1}"#, "steps"),
            (r#"{"steps":2,"wallClockMs":-5}"#, "wallClockMs"),
            (r#"{"steps":2,"wallClockMs":1.5}"#, "wallClockMs"),
            (r#"{"steps":2,"wallClockMs":"12"}"#, "wallClockMs"),
            (r#"{"steps":2,"tokens":true}"#, "tokens"),
            (r#"{"steps":2,"cost":-0.5}"#, "cost"),
            (r#"{"steps":2,"cost":"0.5"}"#, "cost"),
            (r#"{"steps":2,"provider":""}"#, "provider"),
            (r#"{"steps":2,"provider":7}"#, "provider"),
        ] {
            let error = parse(text).expect_err(text);
            assert!(error.contains(&format!("observations.{field}")), "{text}: {error}");
        }
        // An unsafe integer cannot even be parsed, so it never reaches a checkpoint.
        assert!(gaos_json::parse(r#"{"steps":2,"wallClockMs":9007199254740993}"#).is_err());
    }
}
