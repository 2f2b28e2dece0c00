//! The run's durable progress: `OUT/journal.jsonl`, append-only.
//!
//! The first line is the header `{"schema": "gaos.arena-run-journal.v1",
//! "manifestDigest", "game", "matches"}`; then one canonical JSON line per
//! change, each fsynced before the run goes on: `{"started": {"index",
//! "attachment"}}` when a match's sessions exist (before any move), and
//! `{"completed": <matches.jsonl line>}` once its replay is on disk
//! (`OUT/replays/`, written atomically first). Replays stay out of the
//! journal, so a run of n matches appends O(n) small lines. An attachment
//! holds seat tokens, so the file is mode 0600. A torn last line (the
//! write a crash interrupted) is ignored on load.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use gaos_json::{Map, Value, canonical_json};

use crate::arena::error::ArenaError;
use crate::arena::result::MatchRecord;
use crate::journal_lines::{JournalLine, journal_lines};

/// The journal header's schema id.
pub const JOURNAL_SCHEMA: &str = "gaos.arena-run-journal.v1";

/// What a journal holds once read.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct JournalState {
    /// Matches started and not completed: plan index → attachment.
    pub started: BTreeMap<u64, Value>,
    /// Completed matches: plan index → line.
    pub completed: BTreeMap<u64, MatchRecord>,
}

/// The header line of a run (canonical JSON, no newline).
pub fn header(manifest_digest: &str, game_id: &str, matches: usize) -> String {
    let mut map = Map::new();
    map.insert("schema".into(), JOURNAL_SCHEMA.into());
    map.insert("manifestDigest".into(), manifest_digest.into());
    map.insert("game".into(), game_id.into());
    map.insert("matches".into(), matches.into());
    canonical_json(&Value::Object(map))
}

/// Read a journal; its header must be `expected` (the same manifest, game
/// and plan), and every completed line must name a planned match
/// (`index_of` maps a match id to its plan index).
pub fn load(path: &Path, expected: &str, index_of: impl Fn(&str) -> Option<u64>) -> Result<JournalState, ArenaError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| ArenaError::Resume(format!("cannot read the journal {}: {e}", path.display())))?;
    let bad = |why: String| ArenaError::Resume(format!("{}: {why}", path.display()));
    let mut state = JournalState::default();
    for JournalLine { number, value, torn } in journal_lines(&text).map_err(bad)? {
        if number == 1 {
            if canonical_json(&value) != expected {
                return Err(bad("it belongs to another tournament (the manifest, its game or its plan differ); \
                     use another --out"
                    .into()));
            }
            continue;
        }
        let map = value.as_object().ok_or_else(|| bad(format!("line {number} is not an object")))?;
        if let Some(started) = map.get("started") {
            let index = started.get("index").and_then(Value::as_u64);
            let attachment = started.get("attachment").cloned();
            let (Some(index), Some(attachment)) = (index, attachment) else {
                return Err(bad(format!("line {number}: a started record needs index and attachment")));
            };
            if !state.completed.contains_key(&index) {
                state.started.insert(index, attachment);
            }
        } else if let Some(line_value) = map.get("completed") {
            let record = match MatchRecord::from_value(line_value) {
                Ok(record) => record,
                Err(_) if torn => break,
                Err(e) => return Err(bad(format!("line {number}: {e}"))),
            };
            let index = index_of(&record.id)
                .ok_or_else(|| bad(format!("line {number}: match {:?} is not in the plan", record.id)))?;
            state.started.remove(&index);
            state.completed.insert(index, record);
        } else {
            return Err(bad(format!("line {number}: neither started nor completed")));
        }
    }
    Ok(state)
}

/// The open journal: appended to, one fsynced line per record.
pub struct Journal {
    path: PathBuf,
    file: tokio::sync::Mutex<std::fs::File>,
}

impl Journal {
    /// Open `path` for appending, creating it (mode 0600) with `header`
    /// when it does not exist.
    pub fn open(path: &Path, header: &str) -> Result<Self, ArenaError> {
        let io = |e: std::io::Error| ArenaError::Io(format!("cannot open the journal {}: {e}", path.display()));
        let fresh = !path.exists();
        let mut options = std::fs::OpenOptions::new();
        options.append(true).create(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let mut file = options.open(path).map_err(io)?;
        if fresh {
            file.write_all(format!("{header}\n").as_bytes()).map_err(io)?;
            file.sync_all().map_err(io)?;
        } else {
            // A crash may have torn the last line: cut it off, so the next
            // record starts a line of its own.
            let text = std::fs::read_to_string(path).map_err(io)?;
            if !text.ends_with('\n') {
                let keep = text.rfind('\n').map_or(0, |i| i + 1);
                file.set_len(keep as u64).map_err(io)?;
                file.sync_all().map_err(io)?;
            }
        }
        Ok(Journal { path: path.to_owned(), file: tokio::sync::Mutex::new(file) })
    }

    /// Append `{"started": {index, attachment}}`.
    pub async fn started(&self, index: u64, attachment: &Value) -> Result<(), ArenaError> {
        let mut entry = Map::new();
        entry.insert("index".into(), index.into());
        entry.insert("attachment".into(), attachment.clone());
        let mut record = Map::new();
        record.insert("started".into(), Value::Object(entry));
        self.append(canonical_json(&Value::Object(record))).await
    }

    /// Append `{"completed": line}`.
    pub async fn completed(&self, record: &MatchRecord) -> Result<(), ArenaError> {
        self.append(format!("{{\"completed\":{}}}", canonical_json(&record.to_value()))).await
    }

    async fn append(&self, mut line: String) -> Result<(), ArenaError> {
        line.push('\n');
        let file = self.file.lock().await;
        let handle =
            file.try_clone().map_err(|e| ArenaError::Io(format!("cannot append to {}: {e}", self.path.display())))?;
        let path = self.path.clone();
        tokio::task::spawn_blocking(move || {
            let mut handle = handle;
            handle.write_all(line.as_bytes())?;
            handle.sync_data()
        })
        .await
        .map_err(|e| ArenaError::Io(format!("the journal writer failed: {e}")))?
        .map_err(|e| ArenaError::Io(format!("cannot append to {}: {e}", path.display())))?;
        drop(file);
        Ok(())
    }
}
