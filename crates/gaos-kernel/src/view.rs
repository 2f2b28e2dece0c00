//! Facts read from a reducer's full view that the live kernel and the
//! replay verifier share.

use std::fmt;

use gaos_json::Value;
use serde::{Deserialize, Serialize};

use crate::error::KernelError;

/// A view's `status` (kernel spec §2.1): `playing` until the session ends
/// `won`, `failed` or `ended`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GameStatus {
    Playing,
    Won,
    Failed,
    Ended,
}

impl GameStatus {
    /// The status string of views, results and replays.
    pub fn as_str(self) -> &'static str {
        match self {
            GameStatus::Playing => "playing",
            GameStatus::Won => "won",
            GameStatus::Failed => "failed",
            GameStatus::Ended => "ended",
        }
    }

    /// The status a string names, if any.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "playing" => Some(GameStatus::Playing),
            "won" => Some(GameStatus::Won),
            "failed" => Some(GameStatus::Failed),
            "ended" => Some(GameStatus::Ended),
            _ => None,
        }
    }

    /// The `status` of a view, if it is a valid one.
    pub fn of_view(view: &Value) -> Option<Self> {
        view.get("status").and_then(Value::as_str).and_then(Self::parse)
    }

    /// True for every status but `playing`.
    pub fn is_terminal(self) -> bool {
        self != GameStatus::Playing
    }
}

impl fmt::Display for GameStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Window participants from a full view (§2.3).
pub(crate) fn participants_of(view: &Value, seats: &[String]) -> Result<Vec<String>, KernelError> {
    let participation = view.get("participation");
    let mode = participation.and_then(|p| p.get("mode")).and_then(Value::as_str);
    let from_active =
        |v: Option<&Value>| -> Option<Vec<String>> { v.and_then(Value::as_str).map(|s| vec![s.to_owned()]) };
    let participants: Vec<String> = match mode {
        Some("sequential") => from_active(participation.and_then(|p| p.get("activeSeat"))).unwrap_or_default(),
        Some("simultaneous") => participation
            .and_then(|p| p.get("seats"))
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(|s| s.as_str().map(str::to_owned)).collect())
            .unwrap_or_default(),
        _ => from_active(view.get("activeSeat")).unwrap_or_else(|| seats.to_vec()),
    };
    if participants.is_empty() || participants.iter().any(|p| !seats.contains(p)) {
        let mut sorted_declared: Vec<&String> = seats.iter().collect();
        sorted_declared.sort();
        let mut sorted: Vec<&String> = participants.iter().collect();
        sorted.sort();
        return Err(KernelError::type_error(format!(
            "view participants {sorted:?} must be a non-empty subset of the declared seats {sorted_declared:?}"
        )));
    }
    Ok(participants)
}
