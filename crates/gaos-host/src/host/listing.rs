//! `GET /v1/sessions`: the stored sessions, with what the live ones say of
//! themselves.

use std::collections::HashMap;
use std::sync::Arc;

use gaos_json::Value;

use super::{Host, blocking};
use crate::actor::{ActorHandle, Command, SessionSummary};
use crate::auth::Caller;
use crate::error::HostError;
use crate::storage::SessionStatus;
use crate::wire;

impl Host {
    /// `GET /v1/sessions` (operator).
    pub async fn list(&self, caller: &Caller, status: Option<SessionStatus>) -> Result<Value, HostError> {
        Self::require_operator(caller)?;
        let reader = Arc::clone(&self.inner.reader);
        let records = blocking(move || reader.list_sessions(status)).await?;
        let live: Vec<(String, ActorHandle)> = {
            let sessions = self.sessions_read();
            sessions.iter().filter_map(|(id, slot)| slot.get().map(|h| (id.clone(), h.clone()))).collect()
        };
        let mut summaries: HashMap<String, SessionSummary> = HashMap::new();
        for (id, handle) in live {
            let (reply, wait) = tokio::sync::oneshot::channel();
            if handle.tx.send(Command::Summary { reply }).await.is_ok()
                && let Ok(summary) = wait.await
            {
                summaries.insert(id, summary);
            }
        }
        let sessions = records
            .into_iter()
            .map(|record| {
                let live = summaries.get(&record.id);
                wire::SessionRow {
                    status: live.map(|s| s.status).unwrap_or(record.status).as_str(),
                    cursor: live.map(|s| s.cursor),
                    tick: live.map(|s| s.tick),
                    seats: live.map(|s| s.seats.clone()),
                    seat_states: live.map(|s| s.seat_states.clone()),
                    paused: live.map(|s| s.paused),
                    id: record.id,
                    game: record.game_id,
                    created_at: record.created_at_ms,
                }
            })
            .collect();
        Ok(wire::value(&wire::SessionList { sessions }))
    }
}
