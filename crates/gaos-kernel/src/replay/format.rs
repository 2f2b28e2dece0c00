//! `gaos.replay` artifacts and their canonical JSONL form.

use gaos_json::{Map, Value, canonical_json};

/// MIME type of replay files.
pub const MEDIA_TYPE: &str = "application/vnd.gaos.replay+jsonl";
/// File extension of replay files.
pub const FILE_EXTENSION: &str = "gaos-replay.jsonl";

/// A replay artifact: the header line plus either grouped `records` (1.1+)
/// or legacy `action` lines.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayArtifact {
    pub header: Map,
    pub body: ReplayBody,
}

/// The lines after the header.
#[derive(Debug, Clone, PartialEq)]
pub enum ReplayBody {
    /// Grouped records (resolution, timeout, extension, checkpoint, ...).
    Records(Vec<Map>),
    /// Legacy one-action-per-line body.
    Actions(Vec<Map>),
}

impl ReplayArtifact {
    /// The lines after the header, as serialized.
    pub fn body_lines(&self) -> &[Map] {
        match &self.body {
            ReplayBody::Records(lines) | ReplayBody::Actions(lines) => lines,
        }
    }

    /// Grouped records, when the artifact has them.
    pub fn records(&self) -> Option<&[Map]> {
        match &self.body {
            ReplayBody::Records(records) => Some(records),
            ReplayBody::Actions(_) => None,
        }
    }

    /// The action view: the legacy lines, or the projection of the records.
    pub fn actions(&self) -> std::borrow::Cow<'_, [Map]> {
        match &self.body {
            ReplayBody::Records(records) => std::borrow::Cow::Owned(project_actions(records)),
            ReplayBody::Actions(actions) => std::borrow::Cow::Borrowed(actions),
        }
    }

    /// Canonical JSONL: one canonical JSON object per line, one trailing `\n`.
    pub fn to_jsonl(&self) -> String {
        let mut out = String::new();
        for line in std::iter::once(&self.header).chain(self.body_lines()) {
            gaos_json::write_canonical_object(line, &mut out);
            out.push('\n');
        }
        out
    }

    /// Number of JSONL lines (header included).
    pub fn line_count(&self) -> usize {
        1 + self.body_lines().len()
    }

    /// `formatVersion` of the header.
    pub fn format_version(&self) -> Option<&str> {
        self.header.get("formatVersion").and_then(Value::as_str)
    }
}

/// The action projection of grouped records: every resolution input becomes
/// `{...input, kind: "action", n, levelIndex, tick}`, numbered from 0.
pub fn project_actions(records: &[Map]) -> Vec<Map> {
    let mut actions = Vec::new();
    for record in records {
        if record.get("kind").and_then(Value::as_str) != Some("resolution") {
            continue;
        }
        let inputs = record.get("inputs").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        for input in inputs {
            let mut action = input.as_object().cloned().unwrap_or_default();
            action.insert("kind".into(), "action".into());
            action.insert("n".into(), actions.len().into());
            if let Some(level) = record.get("levelIndex") {
                action.insert("levelIndex".into(), level.clone());
            }
            if let Some(tick) = record.get("tick") {
                action.insert("tick".into(), tick.clone());
            }
            actions.push(action);
        }
    }
    actions
}

/// Canonical text of one line (for byte comparisons).
pub fn canonical_line(line: &Map) -> String {
    canonical_json(&Value::Object(line.clone()))
}
