//! Periodic seat signatures (RFC-010 `seat-signature`, kernel spec §5.9):
//! a seat whose `signingTier.N` lets it send chained but unsigned moves
//! covers them with one signature over its chain head at the current tick
//! (`POST /v1/sessions/{id}/seat-signature`). The kernel checks the head and
//! the signature; the host records the event like any transition.
//!
//! A signature that covers nothing new (every link of the seat's chain is
//! already signed or covered, such as an exact retry after a lost answer) is
//! checked the same way and answered without a write, so a seat cannot grow
//! the session's log with signatures that add nothing.

use gaos_kernel::SeatSignatureInput;
use gaos_session::ErrorCode;

use super::SessionActor;
use crate::answers::Answer;
use crate::error::{HostError, from_kernel};
use crate::requests::SeatSignatureRequest;

impl SessionActor {
    pub(super) async fn seat_signature(
        &mut self,
        seat: &str,
        request: SeatSignatureRequest,
    ) -> Result<Answer, HostError> {
        self.ensure_writable()?;
        if !self.config.is_signed() {
            return Err(HostError::invalid_request(format!(
                "session {} is not signed (its create named no seatKeys), so it takes no seat signatures",
                self.id
            )));
        }
        self.require_seat_keys()?;
        let tick = self.kernel.tick();
        if request.tick != tick {
            return Err(HostError::new(
                ErrorCode::StaleTick,
                format!(
                    "the signature is for tick {} but the session is at tick {tick}: sign your chain head at tick \
                     {tick}",
                    request.tick
                ),
            ));
        }
        let input = SeatSignatureInput {
            participant_id: seat.to_owned(),
            tick: request.tick,
            client_time: request.client_time,
            prev_chain_hash: request.prev_chain_hash,
            sig: request.sig,
        };
        let mut prepared = self.kernel.prepare_seat_signature(&input).map_err(from_kernel)?;
        if self.kernel.uncovered_since(seat).is_none() {
            // Valid, but it covers nothing that is not covered already.
            self.kernel.abort(&mut prepared).map_err(from_kernel)?;
            return self.observe(Some(seat));
        }
        self.run_transition(prepared, Vec::new()).await?;
        self.observe(Some(seat))
    }
}
