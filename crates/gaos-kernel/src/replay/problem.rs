//! Problems found in a replay, each pointing at a line and a field.

use std::fmt;

use crate::error::KernelError;

/// Most problems one check keeps; the rest are only counted, so a hostile
/// file with a million broken lines cannot make a million messages.
pub const MAX_PROBLEMS: usize = 100;

/// One problem: where (JSONL line, field path) and what.
///
/// Displays as `line 3: resolution.inputs[1].wireId: <message>`. The field
/// path starts with the line's kind (`header`, `resolution`, `checkpoint`,
/// ...). Lines count from 1 and include the header line; for an artifact that
/// was built in memory they are the lines its JSONL would have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayProblem {
    /// 1-based JSONL line, when the problem belongs to one line.
    pub line: Option<usize>,
    /// Field path within the line (`resolution.inputs[1].wireId`); empty when
    /// the problem is about the whole line or file.
    pub field: String,
    /// What is wrong, in a sentence.
    pub message: String,
}

impl ReplayProblem {
    /// A problem at `line`, `field`.
    pub fn at(line: usize, field: impl Into<String>, message: impl Into<String>) -> Self {
        ReplayProblem { line: Some(line), field: field.into(), message: message.into() }
    }

    /// A problem about the whole file.
    pub fn file(message: impl Into<String>) -> Self {
        ReplayProblem { line: None, field: String::new(), message: message.into() }
    }
}

impl fmt::Display for ReplayProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(line) = self.line {
            write!(f, "line {line}: ")?;
        }
        if !self.field.is_empty() {
            write!(f, "{}: ", self.field)?;
        }
        f.write_str(&self.message)
    }
}

/// A bounded list of problems: the first [`MAX_PROBLEMS`] are kept, the
/// others counted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProblemList {
    kept: Vec<ReplayProblem>,
    omitted: usize,
}

impl ProblemList {
    /// An empty list.
    pub fn new() -> Self {
        Self::default()
    }

    /// Add a problem (counted only, once the list is full).
    pub fn push(&mut self, problem: ReplayProblem) {
        if self.kept.len() < MAX_PROBLEMS {
            self.kept.push(problem);
        } else {
            self.omitted += 1;
        }
    }

    /// Add a problem at `line`, `field`.
    pub fn at(&mut self, line: usize, field: impl Into<String>, message: impl Into<String>) {
        self.push(ReplayProblem::at(line, field, message));
    }

    /// Whether nothing was found.
    pub fn is_empty(&self) -> bool {
        self.kept.is_empty() && self.omitted == 0
    }

    /// Total number of problems found (kept and omitted).
    pub fn len(&self) -> usize {
        self.kept.len() + self.omitted
    }

    /// The kept problems.
    pub fn problems(&self) -> &[ReplayProblem] {
        &self.kept
    }

    /// How many problems were found beyond the kept ones.
    pub fn omitted(&self) -> usize {
        self.omitted
    }

    /// Append every problem of `other`.
    pub fn extend(&mut self, other: ProblemList) {
        for problem in other.kept {
            self.push(problem);
        }
        self.omitted += other.omitted;
    }

    /// The problems as display strings, with a closing `... and N more`
    /// entry when some were omitted.
    pub fn to_strings(&self) -> Vec<String> {
        let mut out: Vec<String> = self.kept.iter().map(ToString::to_string).collect();
        if self.omitted > 0 {
            out.push(format!("... and {} more problems", self.omitted));
        }
        out
    }
}

/// A replay that does not parse or breaks the format's structural rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayFormatError {
    /// What is wrong, line by line.
    pub problems: ProblemList,
}

impl fmt::Display for ReplayFormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid gaos.replay artifact: {}", self.problems.to_strings().join("; "))
    }
}

impl std::error::Error for ReplayFormatError {}

impl From<ReplayFormatError> for KernelError {
    fn from(e: ReplayFormatError) -> Self {
        KernelError::replay(e.problems.to_strings())
    }
}
