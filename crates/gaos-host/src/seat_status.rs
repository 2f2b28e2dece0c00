//! `GET /v1/sessions/{id}/seats`: where a live session stands, seat by
//! seat, for its pages (any token of the session, or the operator): which
//! seats submitted in the open window and which are awaited, each seat's
//! lease (state, holder kind, expiry) and whether progress is paused, plus
//! the game's id (the pages ask the game for its picture of a view).
//!
//! Nothing a seat submitted is in it; who submitted is what the pending
//! envelope already tells every seat.

use gaos_json::Value;
use serde::Serialize;

use crate::actor::{Command, SeatState};
use crate::auth::Caller;
use crate::error::HostError;
use crate::host::Host;

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct SeatStatus {
    session_id: String,
    game: String,
    status: &'static str,
    cursor: u64,
    tick: u64,
    paused: bool,
    seats: Vec<SeatState>,
}

impl Host {
    /// `GET /v1/sessions/{id}/seats`.
    pub async fn seat_status(&self, caller: &Caller, id: &str) -> Result<Value, HostError> {
        if !caller.may_read(id) {
            return Err(HostError::forbidden("this token belongs to another session"));
        }
        let handle = self.session(id).await?;
        let (reply, wait) = tokio::sync::oneshot::channel();
        handle
            .tx
            .send(Command::Summary { reply })
            .await
            .map_err(|_| HostError::unavailable("the session actor has stopped"))?;
        let summary = wait.await.map_err(|_| HostError::unavailable("the session actor dropped the request"))?;
        let status = SeatStatus {
            session_id: id.to_owned(),
            game: summary.game,
            status: summary.status.as_str(),
            cursor: summary.cursor,
            tick: summary.tick,
            paused: summary.paused,
            seats: summary.seat_states,
        };
        Ok(crate::wire::value(&status))
    }
}
