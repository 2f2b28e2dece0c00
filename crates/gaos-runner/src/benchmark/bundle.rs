//! `gaos.benchmark-bundle.v1` (lifecycle spec §5): packing a complete run,
//! the bundle's canonical files, its content and package digests, and
//! reading a bundle directory back.
//!
//! Files (canonical JSON plus `\n`): `manifest.json`; `submission.json` =
//! `{...submission, contentDigest, manifestDigest, schema}`; `scores.json` =
//! `{aggregate, episodes: [{id, plan, terminalOutcome, score, replayDigest,
//! selfReportedObservations?, replayEncoding}]}`; `verification.json` (the
//! facts, all `not-observed` when packed); `README.md`; and
//! `episodes/<encodeURIComponent(id)>.gaos-replay.jsonl`. The package digest
//! is SHA-256 over `path \0 utf8len \0 content` of every file in sorted path
//! order, so it does not depend on how the files are stored.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use gaos_json::{Map, Value, canonical_json, canonical_sha256_hex, sha256_hex};

use crate::benchmark::checkpoint::{AgentKind, CompletedEpisode, ResourceObservations};
use crate::benchmark::error::BenchmarkError;
use crate::benchmark::manifest::BenchmarkManifest;
use crate::benchmark::orchestrate::{BenchmarkRun, BenchmarkStatus};
use crate::benchmark::verify::empty_facts;
use gaos_session::encode_uri_component;

/// The bundle schema id.
pub const BUNDLE_SCHEMA: &str = "gaos.benchmark-bundle.v1";

/// Files every bundle holds besides its episode replays.
pub const BUNDLE_FILES: [&str; 5] =
    ["manifest.json", "submission.json", "scores.json", "verification.json", "README.md"];

/// Most files a bundle directory may hold when read back.
pub const MAX_BUNDLE_FILES: usize = 2_000_005;

/// `submission`: `{submissionId, agentId, agentKind}` (attestations are not
/// produced by gaos-rs; ones found in a bundle are kept but never trusted).
#[derive(Debug, Clone, PartialEq)]
pub struct Submission {
    /// The submission id (`submission-<manifestDigest[0..12]>` by default).
    pub submission_id: String,
    /// The agent id.
    pub agent_id: String,
    /// The agent kind (`local`, `provider`, `cli`).
    pub agent_kind: String,
    /// Attestations carried by a read bundle (not part of the content digest).
    pub attestations: Option<Value>,
}

impl Submission {
    /// A submission for an agent (no attestations).
    pub fn new(submission_id: impl Into<String>, agent_id: impl Into<String>, agent_kind: AgentKind) -> Self {
        Submission {
            submission_id: submission_id.into(),
            agent_id: agent_id.into(),
            agent_kind: agent_kind.as_str().into(),
            attestations: None,
        }
    }

    fn unsigned(&self) -> Map {
        let mut map = Map::new();
        map.insert("submissionId".into(), self.submission_id.clone().into());
        map.insert("agentId".into(), self.agent_id.clone().into());
        map.insert("agentKind".into(), self.agent_kind.clone().into());
        map
    }

    fn full(&self) -> Map {
        let mut map = self.unsigned();
        if let Some(attestations) = &self.attestations {
            map.insert("attestations".into(), attestations.clone());
        }
        map
    }
}

/// One episode of a bundle. Fields a tampered bundle could break are kept
/// as JSON, so verification can report them instead of failing to read.
#[derive(Debug, Clone, PartialEq)]
pub struct BundleEpisode {
    /// `<taskId>-seed-<seed>-episode-<n>`.
    pub id: String,
    /// The plan entry.
    pub plan: Value,
    /// The replay: JSONL text (a string, ending in exactly one `\n`) or JSON.
    pub replay: Value,
    /// The terminal outcome.
    pub terminal_outcome: Value,
    /// The carried score.
    pub score: Value,
    /// `sha256hex(canonicalJson(replay))`.
    pub replay_digest: String,
    /// The run's measurements (not verified; the name is the trust label).
    pub self_reported_observations: Option<Value>,
    /// When the benchmark's game is a game module: the SHA-256 of the
    /// module the episode ran (`gaos bench verify` insists it matches).
    pub adapter_sha256: Option<String>,
}

impl BundleEpisode {
    fn to_value(&self) -> Value {
        let mut map = Map::new();
        map.insert("id".into(), self.id.clone().into());
        map.insert("plan".into(), self.plan.clone());
        map.insert("replay".into(), self.replay.clone());
        map.insert("terminalOutcome".into(), self.terminal_outcome.clone());
        map.insert("score".into(), self.score.clone());
        map.insert("replayDigest".into(), self.replay_digest.clone().into());
        if let Some(observations) = &self.self_reported_observations {
            map.insert("selfReportedObservations".into(), observations.clone());
        }
        if let Some(sha256) = &self.adapter_sha256 {
            map.insert("adapterSha256".into(), sha256.clone().into());
        }
        Value::Object(map)
    }

    fn score_entry(&self) -> Value {
        let mut map = Map::new();
        map.insert("id".into(), self.id.clone().into());
        map.insert("plan".into(), self.plan.clone());
        map.insert("terminalOutcome".into(), self.terminal_outcome.clone());
        map.insert("score".into(), self.score.clone());
        map.insert("replayDigest".into(), self.replay_digest.clone().into());
        if let Some(observations) = &self.self_reported_observations {
            map.insert("selfReportedObservations".into(), observations.clone());
        }
        if let Some(sha256) = &self.adapter_sha256 {
            map.insert("adapterSha256".into(), sha256.clone().into());
        }
        map.insert(
            "replayEncoding".into(),
            if matches!(self.replay, Value::String(_)) { "jsonl" } else { "json" }.into(),
        );
        Value::Object(map)
    }

    /// The file name of the episode's replay in a bundle.
    pub fn file_name(&self) -> String {
        format!("episodes/{}.gaos-replay.jsonl", encode_uri_component(&self.id))
    }

    fn file_contents(&self) -> String {
        match &self.replay {
            Value::String(text) => normalize_replay(text),
            other => format!("{}\n", canonical_json(other)),
        }
    }
}

/// A replay string ending in exactly one `\n`.
pub fn normalize_replay(text: &str) -> String {
    format!("{}\n", text.trim_end_matches('\n'))
}

/// A benchmark bundle.
#[derive(Debug, Clone, PartialEq)]
pub struct Bundle {
    /// The content digest it claims.
    pub content_digest: String,
    /// The schema it claims.
    pub schema: String,
    /// The manifest it carries (verifiers should compare it with an
    /// independent copy).
    pub manifest: Value,
    /// The manifest digest it claims.
    pub manifest_digest: String,
    /// The submission.
    pub submission: Submission,
    /// Episodes, in plan order.
    pub episodes: Vec<BundleEpisode>,
    /// The carried `{aggregateScore, taskScores}`.
    pub scores: Value,
}

impl Bundle {
    /// `sha256hex(canonicalJson({schema, manifest, manifestDigest,
    /// submission: {submissionId, agentId, agentKind}, episodes, scores}))`,
    /// recomputed from the contents.
    pub fn compute_content_digest(&self) -> String {
        let mut content = Map::new();
        content.insert("schema".into(), self.schema.clone().into());
        content.insert("manifest".into(), self.manifest.clone());
        content.insert("manifestDigest".into(), self.manifest_digest.clone().into());
        content.insert("submission".into(), Value::Object(self.submission.unsigned()));
        content.insert("episodes".into(), Value::Array(self.episodes.iter().map(BundleEpisode::to_value).collect()));
        content.insert("scores".into(), self.scores.clone());
        canonical_sha256_hex(&Value::Object(content))
    }

    /// The bundle's canonical files, with `verification` as `verification.json`.
    pub fn files(&self, verification: &Value) -> BTreeMap<String, String> {
        let mut files = BTreeMap::new();
        files.insert("manifest.json".to_owned(), format!("{}\n", canonical_json(&self.manifest)));
        let mut submission = self.submission.full();
        submission.insert("contentDigest".into(), self.content_digest.clone().into());
        submission.insert("manifestDigest".into(), self.manifest_digest.clone().into());
        submission.insert("schema".into(), self.schema.clone().into());
        files.insert("submission.json".to_owned(), format!("{}\n", canonical_json(&Value::Object(submission))));
        let mut scores = Map::new();
        scores.insert("aggregate".into(), self.scores.clone());
        scores.insert("episodes".into(), Value::Array(self.episodes.iter().map(BundleEpisode::score_entry).collect()));
        files.insert("scores.json".to_owned(), format!("{}\n", canonical_json(&Value::Object(scores))));
        files.insert("verification.json".to_owned(), format!("{}\n", canonical_json(verification)));
        files.insert("README.md".to_owned(), readme(&self.content_digest));
        for episode in &self.episodes {
            files.insert(episode.file_name(), episode.file_contents());
        }
        files
    }

    /// The package digest of the canonical files (with the packed,
    /// all-`not-observed` verification facts).
    pub fn package_digest(&self) -> String {
        package_digest(&self.files(&empty_facts()))
    }
}

/// The README every bundle carries. Its text is part of the package
/// digest, so it is the reference's, byte for byte.
fn readme(content_digest: &str) -> String {
    [
        "# GAOS benchmark submission",
        "",
        &format!("Content digest: `{content_digest}`"),
        "",
        "Verify independently with:",
        "",
        "```sh",
        "gaos benchmark verify submission.gaos-bench --manifest benchmark.json --adapter adapter.mjs",
        "```",
        "",
    ]
    .join("\n")
}

/// SHA-256 hex of the concatenated `path \0 utf8len \0 content` of every
/// file, in sorted path order.
pub fn package_digest(files: &BTreeMap<String, String>) -> String {
    let mut bytes = Vec::with_capacity(files.values().map(String::len).sum::<usize>() + files.len() * 64);
    for (path, content) in files {
        bytes.extend_from_slice(path.as_bytes());
        bytes.push(0);
        bytes.extend_from_slice(content.len().to_string().as_bytes());
        bytes.push(0);
        bytes.extend_from_slice(content.as_bytes());
    }
    sha256_hex(&bytes)
}

/// A packed bundle: the bundle, its files and its package digest.
#[derive(Debug, Clone, PartialEq)]
pub struct PackedBundle {
    /// The bundle.
    pub bundle: Bundle,
    /// Its canonical files.
    pub files: BTreeMap<String, String>,
    /// Their package digest.
    pub digest: String,
}

/// Build the bundle episode of a completed episode (replay normalized,
/// its digest computed).
pub fn bundle_episode(completed: &CompletedEpisode) -> BundleEpisode {
    let replay = match &completed.replay {
        Value::String(text) => Value::String(normalize_replay(text)),
        other => other.clone(),
    };
    BundleEpisode {
        id: completed.plan.episode_id(),
        plan: completed.plan.to_value(),
        replay_digest: canonical_sha256_hex(&replay),
        replay,
        terminal_outcome: completed.terminal_outcome.clone(),
        score: Value::Number(completed.score),
        self_reported_observations: Some(completed.observations.to_value()),
        adapter_sha256: None,
    }
}

/// Pack a complete run (`packBenchmarkRun`).
pub fn pack_run(
    manifest: &BenchmarkManifest,
    run: &BenchmarkRun,
    submission: Submission,
) -> Result<PackedBundle, BenchmarkError> {
    pack_run_with_module(manifest, run, submission, None)
}

/// [`pack_run`] for a benchmark whose game is a game module: every
/// episode records the module's SHA-256 (`adapterSha256`).
pub fn pack_run_with_module(
    manifest: &BenchmarkManifest,
    run: &BenchmarkRun,
    submission: Submission,
    module_sha256: Option<&str>,
) -> Result<PackedBundle, BenchmarkError> {
    let aggregate = match (&run.status, &run.aggregate) {
        (BenchmarkStatus::Complete, Some(aggregate)) => aggregate,
        _ => return Err(BenchmarkError::Bundle("only a complete benchmark run can be packed".into())),
    };
    let manifest_digest = manifest.digest();
    if run.checkpoint.manifest_digest != manifest_digest {
        return Err(BenchmarkError::Bundle("the run belongs to a different manifest".into()));
    }
    let mut completed: Vec<&CompletedEpisode> = run.checkpoint.completed.iter().collect();
    completed.sort_by_key(|c| c.plan.index);
    let mut bundle = Bundle {
        content_digest: String::new(),
        schema: BUNDLE_SCHEMA.into(),
        manifest: manifest.value().clone(),
        manifest_digest,
        submission,
        episodes: completed
            .into_iter()
            .map(|c| BundleEpisode { adapter_sha256: module_sha256.map(str::to_owned), ..bundle_episode(c) })
            .collect(),
        scores: aggregate.to_value(),
    };
    bundle.content_digest = bundle.compute_content_digest();
    let files = bundle.files(&empty_facts());
    let digest = package_digest(&files);
    Ok(PackedBundle { bundle, files, digest })
}

/// Write a bundle's files under `dir` (created; refuses to overwrite any file).
pub fn write_bundle_dir(dir: &Path, files: &BTreeMap<String, String>) -> Result<(), BenchmarkError> {
    let io = |path: &Path, e: std::io::Error| BenchmarkError::Io(format!("cannot write {}: {e}", path.display()));
    std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    for (relative, contents) in files {
        if relative.split('/').any(|part| part.is_empty() || part == "." || part == "..") {
            return Err(BenchmarkError::Bundle(format!("unsafe bundle path {relative:?}")));
        }
        let target = dir.join(relative);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|e| io(parent, e))?;
        }
        let mut file =
            std::fs::OpenOptions::new().write(true).create_new(true).open(&target).map_err(|e| io(&target, e))?;
        std::io::Write::write_all(&mut file, contents.as_bytes()).map_err(|e| io(&target, e))?;
    }
    Ok(())
}

/// Why a bundle directory could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BundleReadError {
    /// The directory or a file could not be read at all.
    Io(String),
    /// The files are not a canonical bundle (missing, extra or altered files).
    Malformed(String),
}

impl std::fmt::Display for BundleReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BundleReadError::Io(message) => write!(f, "{message}"),
            BundleReadError::Malformed(message) => write!(f, "not a canonical bundle: {message}"),
        }
    }
}

impl std::error::Error for BundleReadError {}

pub(crate) fn list_files(root: &Path) -> Result<BTreeSet<String>, BundleReadError> {
    let mut found = BTreeSet::new();
    let mut stack: Vec<(PathBuf, String)> = vec![(root.to_path_buf(), String::new())];
    while let Some((dir, prefix)) = stack.pop() {
        let entries = std::fs::read_dir(&dir)
            .map_err(|e| BundleReadError::Io(format!("cannot read the directory {}: {e}", dir.display())))?;
        for entry in entries {
            let entry = entry.map_err(|e| BundleReadError::Io(format!("cannot list {}: {e}", dir.display())))?;
            let name = entry.file_name().into_string().map_err(|name| {
                BundleReadError::Malformed(format!("{} holds a file name that is not UTF-8: {name:?}", dir.display()))
            })?;
            let relative = if prefix.is_empty() { name.clone() } else { format!("{prefix}/{name}") };
            let kind = entry
                .file_type()
                .map_err(|e| BundleReadError::Io(format!("cannot stat {}: {e}", entry.path().display())))?;
            if kind.is_symlink() {
                return Err(BundleReadError::Malformed(format!("the bundle holds a symbolic link {relative}")));
            } else if kind.is_dir() {
                stack.push((entry.path(), relative));
            } else if kind.is_file() {
                found.insert(relative);
                if found.len() > MAX_BUNDLE_FILES {
                    return Err(BundleReadError::Malformed(format!("more than {MAX_BUNDLE_FILES} files")));
                }
            } else {
                return Err(BundleReadError::Malformed(format!("{relative} is not a regular file")));
            }
        }
    }
    Ok(found)
}

fn read_text(root: &Path, relative: &str) -> Result<String, BundleReadError> {
    let path = root.join(relative);
    let bytes =
        std::fs::read(&path).map_err(|e| BundleReadError::Io(format!("cannot read {}: {e}", path.display())))?;
    String::from_utf8(bytes).map_err(|_| BundleReadError::Malformed(format!("{relative} is not UTF-8")))
}

fn read_json(root: &Path, relative: &str) -> Result<Value, BundleReadError> {
    gaos_json::parse(&read_text(root, relative)?)
        .map_err(|e| BundleReadError::Malformed(format!("{relative} is not JSON: {e}")))
}

/// Read a bundle directory: exactly the canonical file set (the five fixed
/// files plus one replay per `scores.json` episode), every file byte-equal
/// to its canonical rendering (`verification.json` as packed), no links or
/// other entries.
pub fn read_bundle_dir(root: &Path) -> Result<Bundle, BundleReadError> {
    let malformed = |why: String| BundleReadError::Malformed(why);
    if !root.is_dir() {
        return Err(BundleReadError::Io(format!("{} is not a directory", root.display())));
    }
    let actual = list_files(root)?;
    for required in BUNDLE_FILES {
        if !actual.contains(required) {
            return Err(malformed(format!("the bundle has no {required}")));
        }
    }
    let manifest = read_json(root, "manifest.json")?;
    let submission_value = read_json(root, "submission.json")?;
    let scores_value = read_json(root, "scores.json")?;
    let submission_map =
        submission_value.as_object().ok_or_else(|| malformed("submission.json is not an object".into()))?;
    let text = |key: &str| -> Result<String, BundleReadError> {
        submission_map
            .get(key)
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| malformed(format!("submission.json has no string {key}")))
    };
    let known = ["submissionId", "agentId", "agentKind", "attestations", "contentDigest", "manifestDigest", "schema"];
    if let Some(key) = submission_map.keys().find(|k| !known.contains(&k.as_str())) {
        return Err(malformed(format!("submission.json has an unknown field {key:?}")));
    }
    let submission = Submission {
        submission_id: text("submissionId")?,
        agent_id: text("agentId")?,
        agent_kind: text("agentKind")?,
        attestations: submission_map.get("attestations").cloned(),
    };
    let scores_map = scores_value.as_object().ok_or_else(|| malformed("scores.json is not an object".into()))?;
    let entries = scores_map
        .get("episodes")
        .and_then(Value::as_array)
        .ok_or_else(|| malformed("scores.json has no episodes array".into()))?;
    let mut expected: BTreeSet<String> = BUNDLE_FILES.iter().map(|s| (*s).to_owned()).collect();
    let mut episodes = Vec::with_capacity(entries.len());
    for (i, entry) in entries.iter().enumerate() {
        let at = |why: &str| malformed(format!("scores.json episodes[{i}]: {why}"));
        let map = entry.as_object().ok_or_else(|| at("not an object"))?;
        let field = |key: &str| map.get(key).cloned().ok_or_else(|| at(&format!("no {key}")));
        let id = field("id")?.as_str().map(str::to_owned).ok_or_else(|| at("id is not a string"))?;
        // Not verified (the name says so), but of the documented shape.
        if let Some(observations) = map.get("selfReportedObservations") {
            ResourceObservations::from_value(observations)
                .map_err(|e| at(&format!("selfReportedObservations: {e}")))?;
        }
        let mut episode = BundleEpisode {
            id,
            plan: field("plan")?,
            replay: Value::Null,
            terminal_outcome: field("terminalOutcome")?,
            score: field("score")?,
            replay_digest: field("replayDigest")?.as_str().map(str::to_owned).ok_or_else(|| at("replayDigest"))?,
            self_reported_observations: map.get("selfReportedObservations").cloned(),
            adapter_sha256: map.get("adapterSha256").and_then(Value::as_str).map(str::to_owned),
        };
        let file = episode.file_name();
        if !expected.insert(file.clone()) {
            return Err(malformed(format!("two episodes use the file {file}")));
        }
        if !actual.contains(&file) {
            return Err(malformed(format!("the bundle has no {file}")));
        }
        let contents = read_text(root, &file)?;
        episode.replay = match map.get("replayEncoding").and_then(Value::as_str) {
            Some("jsonl") => Value::String(contents),
            Some("json") => gaos_json::parse(&contents).map_err(|e| malformed(format!("{file} is not JSON: {e}")))?,
            _ => return Err(at("replayEncoding must be jsonl or json")),
        };
        episodes.push(episode);
    }
    let extra: Vec<&String> = actual.difference(&expected).collect();
    if !extra.is_empty() {
        let names: Vec<&str> = extra.iter().take(5).map(|s| s.as_str()).collect();
        return Err(malformed(format!("unexpected files: {}", names.join(", "))));
    }
    let bundle = Bundle {
        content_digest: text("contentDigest")?,
        schema: text("schema")?,
        manifest,
        manifest_digest: text("manifestDigest")?,
        submission,
        episodes,
        scores: scores_map.get("aggregate").cloned().ok_or_else(|| malformed("scores.json has no aggregate".into()))?,
    };
    // verification.json must hold the packed (all `not-observed`) facts: a
    // bundle cannot vouch for itself.
    for (relative, canonical) in bundle.files(&empty_facts()) {
        if read_text(root, &relative)? != canonical {
            return Err(malformed(format!("{relative} is not in canonical form")));
        }
    }
    Ok(bundle)
}
