//! Reading an append-only JSONL journal (a benchmark run's, an arena's):
//! one JSON value per line, each line written and fsynced whole, except
//! possibly the last, which a crash may have torn.

use gaos_json::Value;

/// One line of a journal.
pub(crate) struct JournalLine {
    /// Its number, from 1 (the header is line 1).
    pub number: usize,
    /// The line's value.
    pub value: Value,
    /// The last line, without its newline: a write that may not have
    /// finished. A record in it that does not read is dropped, not an error.
    pub torn: bool,
}

/// The lines of `text`. A torn last line that is not JSON ends the list;
/// any other line that is not JSON is an error naming it.
pub(crate) fn journal_lines(text: &str) -> Result<Vec<JournalLine>, String> {
    let complete = text.lines().count() - usize::from(!text.is_empty() && !text.ends_with('\n'));
    let mut lines = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let torn = index >= complete;
        match gaos_json::parse(line) {
            Ok(value) => lines.push(JournalLine { number: index + 1, value, torn }),
            Err(_) if torn => break,
            Err(e) => return Err(format!("line {} is not JSON: {e}", index + 1)),
        }
    }
    Ok(lines)
}
