//! [`SeatLog`]: this server's record of the seat's decisions (what the
//! `transcript` recipe tool answers).

use std::sync::{Mutex, PoisonError};

use gaos_json::{Map, Value};
use gaos_session::Observation;

use crate::error::ToolError;

/// Most decisions a [`SeatLog`] keeps (the oldest go first).
pub const MAX_LOGGED_DECISIONS: usize = 10_000;

/// The seat's decisions submitted through this server, in order.
#[derive(Debug, Default)]
pub struct SeatLog {
    decisions: Mutex<Vec<Value>>,
}

impl SeatLog {
    /// Record one `act`: the command, the cursor it was sent at and how the
    /// host answered (the new revision, or the refusal's code).
    pub fn record(&self, command: &Value, tick_id: &str, revision: u64, answer: Result<&Observation, &ToolError>) {
        let mut decisions = self.decisions.lock().unwrap_or_else(PoisonError::into_inner);
        let mut entry = Map::new();
        entry.insert("step".into(), decisions.len().into());
        entry.insert("tickId".into(), tick_id.into());
        entry.insert("revision".into(), revision.into());
        entry.insert("action".into(), command.clone());
        match answer {
            Ok(observation) => {
                entry.insert("accepted".into(), true.into());
                entry.insert("pending".into(), observation.is_pending().into());
                entry.insert("resultRevision".into(), observation.revision().into());
            }
            Err(error) => {
                entry.insert("accepted".into(), false.into());
                entry.insert("code".into(), error.code.as_str().into());
            }
        }
        if decisions.len() == MAX_LOGGED_DECISIONS {
            decisions.remove(0);
        }
        decisions.push(Value::Object(entry));
    }

    /// Every recorded decision, oldest first.
    pub fn decisions(&self) -> Vec<Value> {
        self.decisions.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }
}
