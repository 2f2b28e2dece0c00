//! What a tool call answers ([`ToolOutput`]) and the argument checks every
//! tool shares, so the seat tools and the recipe tools use them without
//! depending on each other.

use gaos_json::{MAX_SAFE_INTEGER, Map, Value};
use gaos_session::Observation;

use crate::error::ToolError;
use crate::render;
use crate::seat::SeatSession;

/// What a tool call answers: text for the model, structured content (a JSON
/// object) and whether it is a tool error.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    /// Text a model reads.
    pub text: String,
    /// The same facts as JSON.
    pub structured: Map,
    /// A tool error (`isError: true`).
    pub is_error: bool,
}

impl ToolOutput {
    pub(crate) fn ok(text: String, structured: Map) -> Self {
        ToolOutput { text, structured, is_error: false }
    }

    /// A tool error.
    pub fn error(error: &ToolError) -> Self {
        ToolOutput { text: error.to_text(), structured: error.to_map(), is_error: true }
    }

    /// The error code of a tool error.
    pub fn error_code(&self) -> Option<&str> {
        if self.is_error { self.structured.get("code").and_then(Value::as_str) } else { None }
    }
}

pub(crate) type Arguments = serde_json::Map<String, serde_json::Value>;

pub(crate) fn only_known(tool: &str, arguments: &Arguments, known: &[&str]) -> Result<(), ToolError> {
    if let Some(key) = arguments.keys().find(|k| !known.contains(&k.as_str())) {
        let takes = if known.is_empty() {
            "takes no arguments".to_owned()
        } else {
            format!("takes only {}", known.iter().map(|k| format!("\"{k}\"")).collect::<Vec<_>>().join(" and "))
        };
        return Err(ToolError::invalid_argument(format!("{tool}: unknown argument \"{key}\" ({tool} {takes})")));
    }
    Ok(())
}

/// A non-negative integer argument (integral floats such as `2.0` pass).
pub(crate) fn uint_argument(tool: &str, name: &str, value: &serde_json::Value) -> Result<u64, ToolError> {
    let n = value.as_u64().or_else(|| {
        value.as_f64().filter(|f| *f >= 0.0 && f.fract() == 0.0 && *f <= MAX_SAFE_INTEGER).map(|f| f as u64)
    });
    n.ok_or_else(|| {
        ToolError::invalid_argument(format!("{tool}: \"{name}\" must be a non-negative integer, not {value}"))
    })
}

pub(crate) fn observation_output(seat: &dyn SeatSession, observation: &Observation, lead: Option<&str>) -> ToolOutput {
    let handle = seat.handle();
    let mut text = render::observation_text(observation, handle.seat(), handle.state());
    if let Some(lead) = lead {
        text = format!("{lead}\n{text}");
    }
    ToolOutput::ok(text, render::observation_json(observation, handle.seat(), handle.state()))
}
