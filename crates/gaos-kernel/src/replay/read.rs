//! Reading replay JSONL (§5.2): split on `\r?\n`, drop trailing blank lines,
//! refuse interior blank lines, parse every line as one JSON object.
//!
//! Two readers: [`read_jsonl`] keeps every line as a JSON object (a
//! [`ReplayArtifact`] that re-serializes byte for byte), and [`read_replay`]
//! streams: each line is parsed, validated, turned into a compact typed
//! record and dropped, which is what verification of large files needs.

use gaos_json::{Map, Value};

use super::format::{FormatVersion, ReplayArtifact, ReplayBody, describe};
use super::problem::{ProblemList, ReplayFormatError, ReplayProblem};
use super::validate::{RecordView, ReplayView, Validator, validate_replay};

/// Parse and validate a replay file (`parseReplayJsonl`), keeping every line
/// as a JSON object. Every problem names its line and field.
///
/// ```
/// use gaos_kernel::replay::parse_replay_jsonl;
///
/// let err = parse_replay_jsonl("{\"kind\":\"header\"}\n\n{}\n").unwrap_err();
/// assert_eq!(err.problems.problems()[0].to_string(), "line 2: the line must not be blank");
/// ```
pub fn parse_replay_jsonl(text: &str) -> Result<ReplayArtifact, ReplayFormatError> {
    let artifact = read_jsonl(text)?;
    validate_replay(&artifact)?;
    Ok(artifact)
}

/// Parse and validate a replay file into its typed view, one line at a time
/// (memory stays proportional to the compact records, not to the JSON trees).
pub fn read_replay(text: &str) -> Result<ReplayView, ReplayFormatError> {
    read_view(text, false).map(|(view, _)| view).map_err(|problems| ReplayFormatError { problems })
}

/// [`read_replay`] for raw bytes: invalid UTF-8 is reported with its line.
pub fn read_replay_bytes(bytes: &[u8]) -> Result<ReplayView, ReplayFormatError> {
    read_replay(decode_utf8(bytes)?)
}

/// The bytes as UTF-8, or a problem naming the line of the first bad byte.
pub(crate) fn decode_utf8(bytes: &[u8]) -> Result<&str, ReplayFormatError> {
    std::str::from_utf8(bytes).map_err(|e| {
        let offset = e.valid_up_to();
        let line = 1 + bytes[..offset].iter().filter(|&&b| b == b'\n').count();
        let mut problems = ProblemList::new();
        problems.at(line, "", format!("the file is not valid UTF-8 (byte {offset})"));
        ReplayFormatError { problems }
    })
}

/// How a physical line ends.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ending {
    Lf,
    CrLf,
    /// The last line, without a newline.
    Eof,
}

/// One physical line: its content (without `\r?\n`) and its ending.
struct Line<'t> {
    number: usize,
    content: &'t str,
    ending: Ending,
}

/// Physical lines as §5.2 splits them (`\r?\n`); the final piece after the
/// last `\n` is a line only when it is not empty.
fn physical_lines(text: &str) -> impl Iterator<Item = Line<'_>> {
    text.split_inclusive('\n').enumerate().map(|(i, piece)| match piece.strip_suffix('\n') {
        Some(body) => match body.strip_suffix('\r') {
            Some(content) => Line { number: i + 1, content, ending: Ending::CrLf },
            None => Line { number: i + 1, content: body, ending: Ending::Lf },
        },
        None => Line { number: i + 1, content: piece, ending: Ending::Eof },
    })
}

fn parse_object(line: &Line<'_>, label: &str, problems: &mut ProblemList) -> Option<Map> {
    match gaos_json::parse(line.content) {
        Ok(Value::Object(map)) => Some(map),
        Ok(other) => {
            let message = format!("every line must be a JSON object, found {}", describe(&other, 60));
            problems.at(line.number, label, message);
            None
        }
        Err(e) => {
            problems.at(line.number, "", format!("the line is not valid JSON: {e}"));
            None
        }
    }
}

/// Parse the JSONL into an artifact without the structural checks: every
/// line must be a JSON object. Grouped records are chosen as the reference
/// does: a 1.1+ header and at least one line whose kind is not `action`.
pub fn read_jsonl(text: &str) -> Result<ReplayArtifact, ReplayFormatError> {
    let mut problems = ProblemList::new();
    let mut objects: Vec<Map> = Vec::new();
    let mut blanks: Vec<usize> = Vec::new();
    let mut first = true;
    for line in physical_lines(text) {
        if line.content.trim().is_empty() {
            blanks.push(line.number);
            continue;
        }
        for blank in blanks.drain(..) {
            problems.at(blank, "", "the line must not be blank");
        }
        let label = if std::mem::take(&mut first) { "header" } else { "record" };
        if let Some(map) = parse_object(&line, label, &mut problems) {
            objects.push(map);
        }
    }
    if objects.is_empty() && problems.is_empty() {
        problems.push(ReplayProblem::file("the file is empty: a replay needs at least its header line"));
    }
    if !problems.is_empty() {
        return Err(ReplayFormatError { problems });
    }
    let mut lines = objects.into_iter();
    let header = lines.next().expect("at least the header line parsed");
    let body: Vec<Map> = lines.collect();
    let grouped =
        grouped_version(&header) && body.iter().any(|line| line.get("kind").and_then(Value::as_str) != Some("action"));
    let body = if grouped { ReplayBody::Records(body) } else { ReplayBody::Actions(body) };
    Ok(ReplayArtifact { header, body })
}

fn grouped_version(header: &Map) -> bool {
    header
        .get("formatVersion")
        .and_then(Value::as_str)
        .and_then(FormatVersion::parse)
        .is_some_and(FormatVersion::has_records)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Body {
    /// Only `action` lines so far in a 1.1+ file: grouped or not is open.
    Undecided,
    Records,
    Actions,
}

/// The streaming reader behind [`read_replay`] and verification: parse and
/// validate line by line. `Err` carries parse-stage problems; `Ok` carries
/// the view and, when `check_bytes`, the lines whose bytes are not canonical
/// JSONL (stage `structure` in strict verification).
pub(crate) fn read_view(text: &str, check_bytes: bool) -> Result<(ReplayView, ProblemList), ProblemList> {
    let mut problems = ProblemList::new();
    let mut bytes = ProblemList::new();
    // Capacity guesses: a record line is at least ~60 bytes, an input ~120.
    // Reserved but untouched capacity costs no memory pages.
    let mut validator = Validator::with_capacity(text.len() / 60, text.len() / 120);
    let mut header: Option<ReplayView> = None;
    let mut body = Body::Undecided;
    let mut pending: Vec<(usize, Map)> = Vec::new();
    let mut index = 0usize;
    let mut blanks: Vec<usize> = Vec::new();
    let mut canonical = String::new();
    let mut seen_header = false;
    let mut last_ending = Ending::Lf;
    for line in physical_lines(text) {
        if line.content.trim().is_empty() {
            blanks.push(line.number);
            continue;
        }
        for blank in blanks.drain(..) {
            problems.at(blank, "", "the line must not be blank");
        }
        last_ending = line.ending;
        let label = if seen_header { "record" } else { "header" };
        let Some(map) = parse_object(&line, label, &mut problems) else {
            seen_header = true;
            continue;
        };
        if check_bytes {
            canonical.clear();
            gaos_json::write_canonical_object(&map, &mut canonical);
            if canonical != line.content {
                let message = "the line is not the canonical JSON of its value (key order, spacing or number form)";
                bytes.at(line.number, "", message);
            } else if line.ending == Ending::CrLf {
                bytes.at(line.number, "", "lines end with \\n, not \\r\\n (canonical JSONL)");
            }
        }
        if !problems.is_empty() {
            // Once the file is malformed, later lines are only checked for JSON syntax.
            seen_header = true;
            continue;
        }
        if !seen_header {
            seen_header = true;
            header = validator.header(&map);
            body = if grouped_version(&map) { Body::Undecided } else { Body::Actions };
            continue;
        }
        let i = index;
        index += 1;
        let is_action = map.get("kind").and_then(Value::as_str) == Some("action");
        match body {
            Body::Actions => {
                let record = validator.action_line(i, line.number, &map);
                push_record(&mut validator, record);
            }
            Body::Records => {
                let record = validator.record(i, line.number, &map);
                push_record(&mut validator, record);
            }
            Body::Undecided if is_action => pending.push((line.number, map)),
            Body::Undecided => {
                body = Body::Records;
                for (j, (number, held)) in pending.drain(..).enumerate() {
                    let record = validator.record(j, number, &held);
                    push_record(&mut validator, record);
                }
                let record = validator.record(i, line.number, &map);
                push_record(&mut validator, record);
            }
        }
    }
    if !seen_header && problems.is_empty() {
        problems.push(ReplayProblem::file("the file is empty: a replay needs at least its header line"));
    }
    if body == Body::Undecided {
        body = Body::Actions;
        for (j, (number, held)) in pending.drain(..).enumerate() {
            let record = validator.action_line(j, number, &held);
            push_record(&mut validator, record);
        }
    }
    if check_bytes && seen_header {
        if !blanks.is_empty() {
            bytes.push(ReplayProblem::file("the file must not end with blank lines (canonical JSONL)"));
        } else if last_ending == Ending::Eof {
            bytes.push(ReplayProblem::file("the file must end with a single \\n (canonical JSONL)"));
        }
    }
    // Like the line-keeping reader: when some line is not a JSON object,
    // report only that (structural checks need every line).
    if problems.is_empty() {
        problems = std::mem::take(&mut validator.problems);
    }
    match header {
        Some(mut view) if problems.is_empty() => {
            view.grouped = body == Body::Records;
            view.records = std::mem::take(&mut validator.records);
            Ok((view, bytes))
        }
        _ => Err(problems),
    }
}

fn push_record(validator: &mut Validator, record: Option<RecordView>) {
    if let Some(record) = record {
        validator.records.push(record);
    }
}
