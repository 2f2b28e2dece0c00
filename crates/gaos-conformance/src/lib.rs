//! Driver for `gaos.conformance-script` v1 (see the conformance pack's
//! SCRIPT-FORMAT.md): runs every step against [`gaos_kernel::SessionKernel`]
//! with the game the script names, taken from the [`GameRegistry`] the caller
//! gives ([`run_script_with`]; [`run_script`] uses the built-in games), and
//! writes the output layout
//! (`results.jsonl`, `header.<i>.json`, `events.<i>.jsonl`,
//! `deltas.<i>.<seat>.jsonl`, `final.<i>.json`, `<label>.gaos-replay.jsonl`).
//!
//! Every argument of a kernel call is passed as the script wrote it, missing
//! ones included, so the kernel's own checks, in the reference's order,
//! decide a step's error (SCRIPT-FORMAT.md §4.1): ingest's `seat`,
//! `submissionId`, `command`, `revision` and envelope fields, `advance`'s
//! `target`, `timeout` and `forcedInput`, an extension's `lane` and `record`,
//! `observe`/`snapshot`'s `seat` and `after`, `finalize`'s `perm` and
//! `visibility`, `finalizeRun`'s `seed` and `perm`. The driver refuses a
//! script ([`ScriptError`]) only for its own structure, which no kernel call
//! sees: an unknown `op` or field; `then`, `label` and `withHeld` (a hold
//! needs a unique label, `commit`/`abort`/`withHeld` name held transitions);
//! an `envelope` that is not an object; the kernel spec of the script and of
//! `session` steps (SCRIPT-FORMAT.md §1.1; a seed the kernel refuses is the
//! step's error); `finalizeRun`'s `sessions` (indices of existing sessions);
//! and an `advancePolicy` other than the two of kernel spec §5.6, whose
//! meaning the spec does not give.
//!
//! ```no_run
//! let summary = gaos_conformance::run_script_file(
//!     std::path::Path::new("../shared/conformance/scripts/hilo-ingest.json"),
//!     std::path::Path::new("out/hilo-ingest"),
//! ).unwrap();
//! println!("{} steps, {} failed as expected", summary.steps, summary.errors);
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use gaos_games::GameRegistry;
use gaos_json::{Map, Value, canonical_json};
use gaos_kernel::replay::{AdvancePolicy, finalize_replay_value, finalize_run_replay_value};
use gaos_kernel::{
    Cadence, DynReducer, Game, KernelError, KernelOptions, ObservationDelta, Prepared, SeedPolicy, SessionKernel,
    SessionLimits, run_level_seed, seed_from_value,
};
use thiserror::Error;

/// A script the driver cannot run (as opposed to a step that fails, which is
/// part of the expected output).
#[derive(Debug, Error)]
pub enum ScriptError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("script is not valid JSON: {0}")]
    Json(String),
    #[error("invalid script: {0}")]
    Invalid(String),
}

fn invalid(message: impl Into<String>) -> ScriptError {
    ScriptError::Invalid(message.into())
}

/// What a run did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunSummary {
    pub name: String,
    pub steps: usize,
    /// Steps whose record has `ok: false`.
    pub errors: usize,
    pub files: Vec<String>,
}

/// Read a script file and write its output directory, with the built-in games.
pub fn run_script_file(script: &Path, out_dir: &Path) -> Result<RunSummary, ScriptError> {
    run_script_file_with(&GameRegistry::builtin(), script, out_dir)
}

/// Read a script file and write its output directory; the script's game is
/// looked up in `registry`.
pub fn run_script_file_with(registry: &GameRegistry, script: &Path, out_dir: &Path) -> Result<RunSummary, ScriptError> {
    let output = run_script_with(registry, &read_script(script)?)?;
    output.write_to(out_dir)?;
    Ok(output.summary())
}

/// Read and parse a script file (see [`parse_script`]).
pub fn read_script(script: &Path) -> Result<Value, ScriptError> {
    let text = std::fs::read_to_string(script).map_err(|source| ScriptError::Io { path: script.into(), source })?;
    parse_script(&text)
}

/// The game id a parsed script names (its `game` field), so a caller can
/// pick or load the game before running it.
pub fn script_game_id(script: &Value) -> Option<&str> {
    script.get("game").and_then(Value::as_str)
}

/// Read a script's JSON text. Numbers are read as JavaScript reads them
/// (SCRIPT-FORMAT.md §4): an integer beyond the safe range becomes the
/// nearest double and reaches the kernel, which refuses it at its own step;
/// the script as a whole is never refused for it.
pub fn parse_script(text: &str) -> Result<Value, ScriptError> {
    gaos_json::parse_lenient(text).map_err(|e| ScriptError::Json(e.to_string()))
}

/// The files a run produces, by name.
#[derive(Debug, Clone, Default)]
pub struct ScriptOutput {
    pub name: String,
    pub files: BTreeMap<String, String>,
    pub steps: usize,
    pub errors: usize,
}

impl ScriptOutput {
    pub fn summary(&self) -> RunSummary {
        RunSummary {
            name: self.name.clone(),
            steps: self.steps,
            errors: self.errors,
            files: self.files.keys().cloned().collect(),
        }
    }

    /// Write every file into `dir` (created if needed).
    pub fn write_to(&self, dir: &Path) -> Result<(), ScriptError> {
        std::fs::create_dir_all(dir).map_err(|source| ScriptError::Io { path: dir.into(), source })?;
        for (name, content) in &self.files {
            let path = dir.join(name);
            std::fs::write(&path, content).map_err(|source| ScriptError::Io { path, source })?;
        }
        Ok(())
    }
}

struct Session {
    options: Arc<KernelOptions<DynReducer>>,
    kernel: SessionKernel<DynReducer>,
    deltas: BTreeMap<String, Vec<String>>,
}

struct Held {
    prepared: Prepared<gaos_kernel::AnyState>,
}

struct Runner {
    game: Arc<dyn Game>,
    sessions: Vec<Session>,
    current: usize,
    held: BTreeMap<String, Held>,
    results: Vec<String>,
    files: BTreeMap<String, String>,
    errors: usize,
}

fn error_value(e: &KernelError, phase: &str) -> Value {
    let mut map = Map::new();
    map.insert("kind".into(), e.kind().into());
    map.insert("code".into(), e.code().into());
    map.insert("phase".into(), phase.into());
    Value::Object(map)
}

fn allowed(step: &Map, op: &str, fields: &[&str]) -> Result<(), ScriptError> {
    for key in step.keys() {
        if key != "op" && key != "note" && !fields.contains(&key.as_str()) {
            return Err(invalid(format!("step {op} has unknown field {key:?}")));
        }
    }
    Ok(())
}

fn req<'a>(step: &'a Map, key: &str, op: &str) -> Result<&'a Value, ScriptError> {
    step.get(key).ok_or_else(|| invalid(format!("step {op} needs {key:?}")))
}

fn req_str<'a>(step: &'a Map, key: &str, op: &str) -> Result<&'a str, ScriptError> {
    req(step, key, op)?.as_str().ok_or_else(|| invalid(format!("step {op}: {key:?} must be a string")))
}

/// Build kernel options from a script's kernel spec. A seed the kernel
/// refuses is the inner error (a step result), a malformed spec the outer.
fn kernel_options(
    game: &Arc<dyn Game>,
    spec: &Value,
) -> Result<Result<KernelOptions<DynReducer>, KernelError>, ScriptError> {
    let map = spec.as_object().ok_or_else(|| invalid("kernel spec must be an object"))?;
    for key in map.keys() {
        let known = [
            "sessionId",
            "levelId",
            "levelVersion",
            "level",
            "seed",
            "seedPolicy",
            "seats",
            "cadence",
            "limits",
            "timeoutToAction",
        ];
        if !known.contains(&key.as_str()) {
            return Err(invalid(format!("kernel spec has unknown field {key:?}")));
        }
    }
    let text = |key: &str| -> Result<String, ScriptError> {
        map.get(key)
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| invalid(format!("kernel spec needs string {key:?}")))
    };
    let seed = match map.get("seed") {
        Some(Value::Object(s)) => {
            let run_seed = seed_from_value(s.get("runSeed").unwrap_or(&Value::Null));
            let index = s
                .get("levelIndex")
                .and_then(Value::as_u64)
                .filter(|i| gaos_json::is_safe_integer(*i as f64))
                .ok_or_else(|| KernelError::type_error("levelIndex must be a non-negative safe integer"));
            run_seed.and_then(|seed| index.and_then(|i| run_level_seed(seed, i).map_err(KernelError::type_error)))
        }
        Some(v) => seed_from_value(v),
        None => return Err(invalid("kernel spec needs a seed")),
    };
    let seed = match seed {
        Ok(seed) => seed,
        Err(e) => return Ok(Err(e)),
    };
    let seed_policy = match text("seedPolicy")?.as_str() {
        "explicit" => SeedPolicy::Explicit,
        "gaos.run-level-seed.v1" => SeedPolicy::RunLevelSeedV1,
        other => return Err(invalid(format!("unknown seedPolicy {other:?}"))),
    };
    let seats = map
        .get("seats")
        .and_then(Value::as_array)
        .ok_or_else(|| invalid("kernel spec needs seats"))?
        .iter()
        .map(|s| s.as_str().map(str::to_owned).ok_or_else(|| invalid("seats must be strings")))
        .collect::<Result<Vec<_>, _>>()?;
    let cadence = Cadence::from_value(map.get("cadence").ok_or_else(|| invalid("kernel spec needs a cadence"))?)
        .map_err(invalid)?;
    let with_mapper = map.get("timeoutToAction").and_then(Value::as_bool).unwrap_or(false);
    let mut options = KernelOptions::builder(game, &text("sessionId")?)
        .level(&text("levelId")?, map.get("level").cloned().ok_or_else(|| invalid("kernel spec needs a level"))?)
        .level_version(map.get("levelVersion").cloned())
        .seed(seed, seed_policy)
        .seats(seats)
        .cadence(cadence)
        .timeout_mapper(with_mapper)
        .build();
    if let Some(limits) = map.get("limits") {
        options.limits = SessionLimits::from_value(limits).map_err(invalid)?;
    }
    Ok(Ok(options))
}

impl Runner {
    fn session(&self) -> &Session {
        &self.sessions[self.current]
    }

    fn new_session(&mut self, spec: &Value) -> Result<Result<(), KernelError>, ScriptError> {
        let options = match kernel_options(&self.game, spec)? {
            Ok(options) => Arc::new(options),
            Err(e) => return Ok(Err(e)),
        };
        match SessionKernel::from_shared(Arc::clone(&options)) {
            Ok(kernel) => {
                self.sessions.push(Session { options, kernel, deltas: BTreeMap::new() });
                self.current = self.sessions.len() - 1;
                Ok(Ok(()))
            }
            Err(e) => Ok(Err(e)),
        }
    }

    fn after(&self) -> Value {
        let k = &self.session().kernel;
        let mut map = Map::new();
        map.insert("session".into(), self.current.into());
        map.insert("cursor".into(), k.cursor().into());
        map.insert("tick".into(), k.tick().into());
        map.insert("digest".into(), k.digest().into());
        Value::Object(map)
    }

    fn state(&self) -> Map {
        let k = &self.session().kernel;
        let mut map = Map::new();
        map.insert("cursor".into(), k.cursor().into());
        map.insert("tick".into(), k.tick().into());
        map.insert("digest".into(), k.digest().into());
        map.insert("awaitingSeats".into(), Value::Array(k.awaiting_seats().into_iter().map(Value::from).collect()));
        let mut revisions = Map::new();
        for seat in &self.session().options.seats {
            revisions.insert(seat.clone(), k.view_revision(seat).expect("declared seat").into());
        }
        map.insert("viewRevisions".into(), Value::Object(revisions));
        map.insert("eventCount".into(), k.events().len().into());
        map.insert("lastTransitionRevision".into(), k.events().last().map_or(0, |e| e.transition_revision).into());
        map
    }

    fn deliver(&mut self, step: usize, deltas: &[ObservationDelta]) {
        let session = &mut self.sessions[self.current];
        for delta in deltas {
            let mut line = Map::new();
            line.insert("step".into(), step.into());
            line.insert("delta".into(), delta.to_value());
            session.deltas.entry(delta.seat.clone()).or_default().push(canonical_json(&Value::Object(line)));
        }
    }

    fn push(&mut self, step: usize, op: &str, mut record: Map) {
        record.insert("step".into(), step.into());
        record.insert("op".into(), op.into());
        let ok = !record.contains_key("error");
        if !ok {
            self.errors += 1;
        }
        record.insert("ok".into(), ok.into());
        record.insert("after".into(), self.after());
        self.results.push(canonical_json(&Value::Object(record)));
    }

    fn run_step(&mut self, index: usize, step: &Value) -> Result<(), ScriptError> {
        let map = step.as_object().ok_or_else(|| invalid(format!("step {index} must be an object")))?;
        let op = map.get("op").and_then(Value::as_str).ok_or_else(|| invalid(format!("step {index} needs an op")))?;
        match op {
            "ingest" | "advance" | "timeout" | "extension" => self.transition_step(index, op, map),
            "commit" | "abort" => self.complete_step(index, op, map),
            "observe" | "snapshot" | "state" => self.query_step(index, op, map),
            "rehydrate" => self.rehydrate_step(index, map),
            "session" => {
                allowed(map, op, &["kernel"])?;
                let mut record = Map::new();
                match self.new_session(req(map, "kernel", op)?)? {
                    Ok(()) => {
                        let mut result = Map::new();
                        result.insert("session".into(), self.current.into());
                        result.insert("header".into(), self.session().kernel.session_header().to_value());
                        record.insert("result".into(), Value::Object(result));
                    }
                    Err(e) => {
                        record.insert("error".into(), error_value(&e, "session"));
                    }
                }
                self.push(index, op, record);
                Ok(())
            }
            "finalize" | "finalizeRun" => self.finalize_step(index, op, map),
            other => Err(invalid(format!("step {index}: unknown op {other:?}"))),
        }
    }

    fn prepare(
        &self,
        op: &str,
        map: &Map,
    ) -> Result<Result<Prepared<gaos_kernel::AnyState>, KernelError>, ScriptError> {
        let kernel = &self.session().kernel;
        Ok(match op {
            "ingest" => {
                allowed(map, op, &["seat", "submissionId", "command", "revision", "envelope", "then", "label"])?;
                let revision = match map.get("revision") {
                    Some(v) => v.clone(),
                    None => kernel.cursor().into(),
                };
                let session_id = kernel.session_id().to_owned();
                // `SESSION + ":" + R` in JavaScript: a string revision is
                // joined as is, a number in its JavaScript form.
                let revision_text = match &revision {
                    Value::String(text) => text.clone(),
                    other => canonical_json(other),
                };
                let tick_id = format!("{session_id}:{revision_text}");
                let mut sub = Map::new();
                sub.insert("protocol".into(), gaos_kernel::PROTOCOL_ID.into());
                sub.insert("protocolVersion".into(), gaos_kernel::PROTOCOL_VERSION.into());
                sub.insert("sessionId".into(), session_id.into());
                sub.insert("tickId".into(), tick_id.into());
                sub.insert("revision".into(), revision);
                // Passed as written: a missing or wrongly typed field is the
                // kernel's to refuse (SCRIPT-FORMAT.md §4).
                for (key, field) in
                    [("participantId", "seat"), ("submissionId", "submissionId"), ("command", "command")]
                {
                    if let Some(value) = map.get(field) {
                        sub.insert(key.into(), value.clone());
                    }
                }
                if let Some(envelope) = map.get("envelope") {
                    let envelope = envelope.as_object().ok_or_else(|| invalid("envelope must be an object"))?;
                    for (k, v) in envelope {
                        sub.insert(k.clone(), v.clone());
                    }
                }
                kernel.prepare_ingest_value(&Value::Object(sub))
            }
            "advance" => {
                allowed(map, op, &["target", "then", "label"])?;
                kernel.prepare_advance_value(map.get("target"))
            }
            "timeout" => {
                allowed(map, op, &["timeout", "forcedInput", "then", "label"])?;
                // As written, even a missing timeout: the kernel's check
                // order decides (kernel spec §4.10).
                kernel.prepare_timeout_value(map.get("timeout").unwrap_or(&Value::Null), map.get("forcedInput"))
            }
            "extension" => {
                allowed(map, op, &["lane", "record", "then", "label"])?;
                let missing = Value::Null;
                kernel
                    .prepare_extension_value(map.get("lane").unwrap_or(&missing), map.get("record").unwrap_or(&missing))
            }
            _ => unreachable!("transition ops are matched by the caller"),
        })
    }

    fn transition_step(&mut self, index: usize, op: &str, map: &Map) -> Result<(), ScriptError> {
        let then = match map.get("then") {
            None => "commit",
            Some(v) => v.as_str().ok_or_else(|| invalid("then must be a string"))?,
        };
        let label = match map.get("label") {
            None => None,
            Some(v) => Some(v.as_str().ok_or_else(|| invalid("label must be a string"))?.to_owned()),
        };
        if then == "hold" && label.is_none() {
            return Err(invalid(format!("step {index}: hold needs a label")));
        }
        let mut record = Map::new();
        if let Some(label) = &label {
            record.insert("label".into(), label.clone().into());
        }
        let mut prepared = match self.prepare(op, map)? {
            Err(e) => {
                record.insert("outcome".into(), "error".into());
                record.insert("error".into(), error_value(&e, "prepare"));
                self.push(index, op, record);
                return Ok(());
            }
            Ok(p) => p,
        };
        record.insert("base".into(), prepared.base_transition_revision().into());
        record.insert("next".into(), prepared.next_transition_revision().into());
        record.insert("result".into(), prepared.result().to_value());
        record.insert("events".into(), Value::Array(prepared.events().iter().map(|e| e.to_value()).collect()));
        record.insert("deltas".into(), Value::Array(prepared.deltas().iter().map(|d| d.to_value()).collect()));
        match then {
            "commit" => match self.sessions[self.current].kernel.commit(&mut prepared) {
                Ok(()) => {
                    record.insert("outcome".into(), "committed".into());
                    let deltas = prepared.deltas().to_vec();
                    self.deliver(index, &deltas);
                }
                Err(e) => {
                    record.insert("outcome".into(), "error".into());
                    record.insert("error".into(), error_value(&e, "commit"));
                }
            },
            "abort" => match self.sessions[self.current].kernel.abort(&mut prepared) {
                Ok(()) => {
                    record.insert("outcome".into(), "aborted".into());
                }
                Err(e) => {
                    record.insert("outcome".into(), "error".into());
                    record.insert("error".into(), error_value(&e, "abort"));
                }
            },
            "hold" => {
                let label = label.clone().expect("checked above");
                if self.held.contains_key(&label) {
                    return Err(invalid(format!("label {label:?} is used twice")));
                }
                self.held.insert(label, Held { prepared });
                record.insert("outcome".into(), "held".into());
            }
            other => return Err(invalid(format!("unknown then {other:?}"))),
        }
        self.push(index, op, record);
        Ok(())
    }

    fn complete_step(&mut self, index: usize, op: &str, map: &Map) -> Result<(), ScriptError> {
        allowed(map, op, &["label"])?;
        let label = req_str(map, "label", op)?.to_owned();
        let mut held = self.held.remove(&label).ok_or_else(|| invalid(format!("unknown label {label:?}")))?;
        let mut record = Map::new();
        record.insert("label".into(), label.clone().into());
        let kernel = &mut self.sessions[self.current].kernel;
        let outcome = if op == "commit" { kernel.commit(&mut held.prepared) } else { kernel.abort(&mut held.prepared) };
        match outcome {
            Ok(()) => {
                if op == "commit" {
                    record.insert("outcome".into(), "committed".into());
                    let deltas = held.prepared.deltas().to_vec();
                    self.deliver(index, &deltas);
                } else {
                    record.insert("outcome".into(), "aborted".into());
                }
            }
            Err(e) => {
                record.insert("outcome".into(), "error".into());
                record.insert("error".into(), error_value(&e, op));
            }
        }
        self.held.insert(label, held);
        self.push(index, op, record);
        Ok(())
    }

    fn query_step(&mut self, index: usize, op: &str, map: &Map) -> Result<(), ScriptError> {
        let mut record = Map::new();
        let result: Result<Value, KernelError> = match op {
            "observe" => {
                allowed(map, op, &["seat"])?;
                self.session().kernel.observe_value(map.get("seat").unwrap_or(&Value::Null)).map(|v| (*v).clone())
            }
            "snapshot" => {
                allowed(map, op, &["seat", "after"])?;
                // As written: `after` absent or null means 0 (SCRIPT-FORMAT.md §4).
                let seat = map.get("seat").unwrap_or(&Value::Null);
                let snapshot = self.session().kernel.snapshot_value(seat, map.get("after"));
                match snapshot {
                    Ok(delta) => {
                        self.deliver(index, std::slice::from_ref(&delta));
                        Ok(delta.to_value())
                    }
                    Err(e) => Err(e),
                }
            }
            _ => {
                allowed(map, op, &[])?;
                Ok(Value::Object(self.state()))
            }
        };
        match result {
            Ok(value) => record.insert("result".into(), value),
            Err(e) => record.insert("error".into(), error_value(&e, "query")),
        };
        self.push(index, op, record);
        Ok(())
    }

    fn rehydrate_step(&mut self, index: usize, map: &Map) -> Result<(), ScriptError> {
        allowed(map, "rehydrate", &["withHeld"])?;
        let mut events = self.session().kernel.events().to_vec();
        if let Some(labels) = map.get("withHeld") {
            let labels = labels.as_array().ok_or_else(|| invalid("withHeld must be an array"))?;
            for label in labels {
                let label = label.as_str().ok_or_else(|| invalid("withHeld labels must be strings"))?;
                let held = self.held.get(label).ok_or_else(|| invalid(format!("unknown label {label:?}")))?;
                events.extend(held.prepared.events().iter().cloned());
            }
        }
        let session = &self.sessions[self.current];
        let header = session.kernel.session_header();
        let mut record = Map::new();
        match SessionKernel::rehydrate(Arc::clone(&session.options), Some(&header), events) {
            Ok(kernel) => {
                self.sessions[self.current].kernel = kernel;
                record.insert("result".into(), Value::Object(self.state()));
            }
            Err(e) => {
                record.insert("error".into(), error_value(&e, "rehydrate"));
            }
        }
        self.push(index, "rehydrate", record);
        Ok(())
    }

    fn finalize_step(&mut self, index: usize, op: &str, map: &Map) -> Result<(), ScriptError> {
        let label = match map.get("label") {
            None => "replay".to_owned(),
            Some(v) => v.as_str().ok_or_else(|| invalid("label must be a string"))?.to_owned(),
        };
        // `perm`, `visibility` and the run `seed` are passed as written, even
        // when missing or wrongly typed (SCRIPT-FORMAT.md §4.1): the kernel's
        // checks, in the reference's order, decide the step's error.
        let perm = map.get("perm");
        let artifact = if op == "finalize" {
            allowed(map, op, &["perm", "visibility", "label"])?;
            let transcript = self.session().kernel.live_transcript();
            finalize_replay_value(&transcript, perm, map.get("visibility"))
        } else {
            allowed(map, op, &["sessions", "seed", "perm", "advancePolicy", "label"])?;
            // Which sessions' transcripts form the run is the script's own
            // structure, not a kernel argument.
            let indices = req(map, "sessions", op)?
                .as_array()
                .ok_or_else(|| invalid("sessions must be an array"))?
                .iter()
                .map(|s| {
                    s.as_u64()
                        .map(|i| i as usize)
                        .filter(|i| *i < self.sessions.len())
                        .ok_or_else(|| invalid("sessions must name existing sessions"))
                })
                .collect::<Result<Vec<usize>, _>>()?;
            // The kernel spec (§5.6) names only these two policies; what the
            // reference does with any other value is not written down, so a
            // script with one is refused rather than guessed at.
            let advance_policy = match map.get("advancePolicy").map(|v| v.as_str()) {
                None => AdvancePolicy::WinToAdvance,
                Some(Some("win-to-advance")) => AdvancePolicy::WinToAdvance,
                Some(Some("play-all-levels")) => AdvancePolicy::PlayAllLevels,
                Some(other) => return Err(invalid(format!("unknown advancePolicy {other:?}"))),
            };
            let transcripts: Vec<_> = indices.iter().map(|&i| self.sessions[i].kernel.live_transcript()).collect();
            finalize_run_replay_value(&transcripts, map.get("seed"), perm, advance_policy)
        };
        let mut record = Map::new();
        match artifact {
            Ok(artifact) => {
                let text = artifact.to_jsonl();
                let lines = artifact.line_count();
                let file = format!("{label}.gaos-replay.jsonl");
                self.files.insert(file.clone(), text);
                let mut result = Map::new();
                result.insert("file".into(), file.into());
                result.insert("lines".into(), lines.into());
                record.insert("result".into(), Value::Object(result));
            }
            Err(e) => {
                record.insert("error".into(), error_value(&e, op));
            }
        }
        self.push(index, op, record);
        Ok(())
    }
}

/// Run a parsed script with the built-in games; returns its output files.
pub fn run_script(script: &Value) -> Result<ScriptOutput, ScriptError> {
    run_script_with(&GameRegistry::builtin(), script)
}

/// Run a parsed script with the game `registry` holds under the script's
/// `game` id (a game module registered in place of a built-in one is run
/// exactly like it); returns its output files.
pub fn run_script_with(registry: &GameRegistry, script: &Value) -> Result<ScriptOutput, ScriptError> {
    let map = script.as_object().ok_or_else(|| invalid("a script must be an object"))?;
    if map.get("format").and_then(Value::as_str) != Some("gaos.conformance-script") {
        return Err(invalid("format must be gaos.conformance-script"));
    }
    if map.get("formatVersion").and_then(Value::as_u64) != Some(1) {
        return Err(invalid("formatVersion must be 1"));
    }
    for key in map.keys() {
        if !["format", "formatVersion", "name", "description", "covers", "game", "kernel", "steps"]
            .contains(&key.as_str())
        {
            return Err(invalid(format!("unknown script field {key:?}")));
        }
    }
    let name = map.get("name").and_then(Value::as_str).ok_or_else(|| invalid("a script needs a name"))?;
    let game_id = script_game_id(script).ok_or_else(|| invalid("a script needs a game"))?;
    let game = registry.get(game_id).ok_or_else(|| {
        invalid(format!("unknown game {game_id:?} (the registry holds {:?})", registry_ids(registry)))
    })?;
    let mut runner = Runner {
        game,
        sessions: Vec::new(),
        current: 0,
        held: BTreeMap::new(),
        results: Vec::new(),
        files: BTreeMap::new(),
        errors: 0,
    };
    let kernel = map.get("kernel").ok_or_else(|| invalid("a script needs a kernel"))?;
    runner.new_session(kernel)?.map_err(|e| invalid(format!("the script's kernel cannot be built: {e}")))?;
    let steps = map.get("steps").and_then(Value::as_array).ok_or_else(|| invalid("a script needs steps"))?;
    for (index, step) in steps.iter().enumerate() {
        runner.run_step(index, step)?;
    }
    let mut files = std::mem::take(&mut runner.files);
    files.insert("results.jsonl".into(), jsonl(&runner.results));
    for (i, session) in runner.sessions.iter().enumerate() {
        let kernel = &session.kernel;
        files.insert(format!("header.{i}.json"), format!("{}\n", canonical_json(&kernel.session_header().to_value())));
        let events: Vec<String> = kernel.events().iter().map(|e| e.canonical()).collect();
        files.insert(format!("events.{i}.jsonl"), jsonl(&events));
        for seat in &session.options.seats {
            let lines = session.deltas.get(seat).cloned().unwrap_or_default();
            files.insert(format!("deltas.{i}.{seat}.jsonl"), jsonl(&lines));
        }
        runner.current = i;
        let mut state = runner.state();
        let mut views = Map::new();
        for (seat, view) in kernel.observe_all() {
            views.insert(seat, (*view).clone());
        }
        state.insert("views".into(), Value::Object(views));
        files.insert(format!("final.{i}.json"), format!("{}\n", canonical_json(&Value::Object(state))));
    }
    Ok(ScriptOutput { name: name.to_owned(), files, steps: steps.len(), errors: runner.errors })
}

fn registry_ids(registry: &GameRegistry) -> Vec<String> {
    registry.list().iter().map(|game| game.game_ref().id).collect()
}

fn jsonl(lines: &[String]) -> String {
    let mut out = String::new();
    for line in lines {
        out.push_str(line);
        out.push('\n');
    }
    out
}
