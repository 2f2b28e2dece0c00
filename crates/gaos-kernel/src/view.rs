//! Facts read from a reducer's full view that the live kernel and the
//! replay verifier share.

use gaos_json::Value;

use crate::error::KernelError;

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
