//! `gaos.replay` artifacts and their canonical JSONL form.

use gaos_json::{Map, Value, canonical_json};

/// MIME type of replay files.
pub const MEDIA_TYPE: &str = "application/vnd.gaos.replay+jsonl";
/// File extension of replay files.
pub const FILE_EXTENSION: &str = "gaos-replay.jsonl";
/// `header.format` of every replay.
pub const FORMAT_ID: &str = "gaos.replay";

/// A `formatVersion` this crate reads (§5.1). Later versions only add
/// capabilities, so the variants are ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FormatVersion {
    /// Header plus `action` lines only.
    V1_0,
    /// Grouped records (resolution, timeout, extension, checkpoint, ...).
    V1_1,
    /// RFC-010 integrity-field rules and `interest` records.
    V1_2,
    /// Level status `ended` (written by default).
    V1_3,
    /// `interaction` records.
    V1_4,
}

impl FormatVersion {
    /// Every version, oldest first.
    pub const ALL: [FormatVersion; 5] =
        [FormatVersion::V1_0, FormatVersion::V1_1, FormatVersion::V1_2, FormatVersion::V1_3, FormatVersion::V1_4];

    /// The version named by a `formatVersion` string.
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.as_str() == text)
    }

    /// The `formatVersion` string.
    pub fn as_str(self) -> &'static str {
        match self {
            FormatVersion::V1_0 => "1.0",
            FormatVersion::V1_1 => "1.1",
            FormatVersion::V1_2 => "1.2",
            FormatVersion::V1_3 => "1.3",
            FormatVersion::V1_4 => "1.4",
        }
    }

    /// Whether the version may carry grouped records (1.1+).
    pub fn has_records(self) -> bool {
        self >= FormatVersion::V1_1
    }

    /// Whether the RFC-010 integrity-field rules apply (1.2+).
    pub fn has_integrity_rules(self) -> bool {
        self >= FormatVersion::V1_2
    }

    /// Whether a level may end with status `ended` (1.3+).
    pub fn allows_ended(self) -> bool {
        self >= FormatVersion::V1_3
    }

    /// Whether `interaction` records are allowed (1.4+).
    pub fn allows_interactions(self) -> bool {
        self >= FormatVersion::V1_4
    }
}

/// A replay artifact: the header line plus either grouped `records` (1.1+)
/// or legacy `action` lines. Lines are kept as JSON objects so an artifact
/// re-serializes byte for byte; [`crate::replay::validate_replay`] gives the
/// typed, validated view.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayArtifact {
    /// The header line.
    pub header: Map,
    /// The lines after the header.
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
/// `{...input, kind: "action", n, levelIndex, tick}`, and `action` records are
/// kept as they are; all renumbered from 0.
pub fn project_actions(records: &[Map]) -> Vec<Map> {
    let mut actions = Vec::new();
    for record in records {
        match record.get("kind").and_then(Value::as_str) {
            Some("action") => {
                let mut action = record.clone();
                action.insert("n".into(), actions.len().into());
                actions.push(action);
            }
            Some("resolution") => {
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
            _ => {}
        }
    }
    actions
}

/// Canonical text of one line (for byte comparisons).
pub fn canonical_line(line: &Map) -> String {
    let mut out = String::new();
    gaos_json::write_canonical_object(line, &mut out);
    out
}

/// Canonical text of a value, shortened to `max` bytes for messages.
pub(crate) fn describe(value: &Value, max: usize) -> String {
    let mut text = canonical_json(value);
    if text.len() > max {
        let mut cut = max;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push('…');
    }
    text
}
