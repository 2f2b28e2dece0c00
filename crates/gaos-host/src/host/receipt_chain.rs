//! `GET /v1/sessions/{id}/receipts`: the session's attach receipt chain,
//! oldest first, at any time (before finalize too), for the operator and
//! the session's seats; `gaos_session::receipts::verify_receipt_chain`
//! checks it, and the finalized replay carries the same chain.

use gaos_json::Value;

use super::Host;
use crate::actor::Command;
use crate::auth::Caller;
use crate::error::HostError;

impl Host {
    /// `GET /v1/sessions/{id}/receipts`.
    pub async fn receipt_chain(&self, caller: &Caller, id: &str) -> Result<Value, HostError> {
        match caller {
            Caller::Operator => {}
            Caller::Seat { session_id, .. } if session_id == id => {}
            // The replay carries the chain once the game is over; during
            // play, who attached when is for the seats and the operator.
            Caller::Spectator { session_id } if session_id == id => {
                return Err(HostError::forbidden(
                    "the receipt chain is read with a seat token or the operator token; \
                     a spectator finds it in the replay once the game is over",
                ));
            }
            Caller::Seat { .. } | Caller::Spectator { .. } => {
                return Err(HostError::forbidden("this token belongs to another session"));
            }
        }
        let handle = self.session(id).await?;
        handle.ask(|reply| Command::ReceiptChain { reply }).await
    }
}
