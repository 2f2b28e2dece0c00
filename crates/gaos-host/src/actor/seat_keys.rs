//! Seat keys registered at attach (RFC-010, issue 30): a signed session
//! whose create named seats in `seatKeysAtAttach` waits for those seats to
//! bring their public key (`seatKey` of the attach request, a `seatKeys`
//! entry) before anyone moves.
//!
//! Why before *anyone's* first move, not only the registering seat's: every
//! seat's chain starts at a genesis derived from the hash of the whole
//! roster (kernel spec §5.9), so a key added after some seat moved would
//! change that seat's genesis under its signed moves. Until the roster is
//! complete the session's kernel is unsigned and takes no move (`409
//! seat_keys_pending`) and its timers stand still; the registration that
//! completes it rebuilds the kernel from the same events (only extensions,
//! such as lease events, can exist by then) with the full roster, so the
//! header, the finalized replay's `seatKeys` and every genesis are those of
//! the final roster. A registered key is fixed: another one for the seat is
//! `409 seat_key_fixed` and changes nothing.

use std::sync::Arc;

use gaos_json::Value;
use gaos_kernel::SessionKernel;
use gaos_kernel::signing::SeatKey;
use gaos_session::ErrorCode;

use super::SessionActor;
use crate::error::HostError;
use crate::signing::registered_keys_json;
use crate::storage::{SessionStateKey, WriteOp};

impl SessionActor {
    /// The key an attach's `seatKey` registers for `seat`: `None` when
    /// there is none, or when it is the key already fixed for the seat (a
    /// repeated registration changes nothing); refused when the session is
    /// not signed, the entry names another seat, or the seat's key is fixed
    /// to another one.
    pub(super) fn seat_key_to_register(&self, seat: &str, value: Option<&Value>) -> Result<Option<SeatKey>, HostError> {
        let Some(value) = value else { return Ok(None) };
        let key = SeatKey::from_value(value, 0)
            .map_err(|e| HostError::invalid_request(e.replacen("seatKeys[0]", "seatKey", 1)))?;
        if key.id != seat {
            return Err(HostError::invalid_request(format!(
                "seatKey.id is {:?}, but this attach is seat {seat:?}'s: a seat registers its own key",
                key.id
            )));
        }
        if !self.config.is_signed() {
            return Err(HostError::invalid_request(format!(
                "session {} is not signed (its create named no seatKeys or seatKeysAtAttach), so an attach cannot \
                 register a seat key",
                self.id
            )));
        }
        match self.config.seat_key(seat) {
            Some(fixed) if *fixed == key => Ok(None),
            Some(fixed) => Err(HostError::new(
                ErrorCode::SeatKeyFixed,
                format!(
                    "seat {seat}'s key is already fixed (public key {}, {}); a registered key never changes, so this \
                     attach registered nothing",
                    fixed.public_key_base64(),
                    if self.config.seat_keys_at_attach.iter().any(|s| s == seat) {
                        "registered at an earlier attach"
                    } else {
                        "named by the create's seatKeys"
                    }
                ),
            )),
            // Every seat without a fixed key is one that registers at attach,
            // and no seat moved yet (`require_seat_keys`).
            None => Ok(Some(key)),
        }
    }

    /// Take a registered key up (in memory; the caller persists the
    /// returned op with its answer, and a failed write stops the actor, so
    /// memory never runs ahead of the store). The registration that
    /// completes the roster makes the kernel signed.
    pub(super) fn register_seat_key(&mut self, key: SeatKey) -> Result<WriteOp, HostError> {
        debug_assert!(self.config.awaiting_seat_keys().contains(&key.id), "only an awaited key is registered");
        self.config.registered_keys.push(key);
        if self.config.roster().is_some() {
            let options = Arc::new(self.config.kernel_options(&self.game));
            let events = self.kernel.live_transcript().events;
            match SessionKernel::rehydrate(options, None, events) {
                Ok(kernel) => self.kernel = kernel,
                Err(e) => {
                    self.config.registered_keys.pop();
                    return Err(HostError::internal(format!(
                        "the session's kernel did not take its complete roster: {e}"
                    )));
                }
            }
            tracing::info!(session = %self.id, "every seat key is registered: the session is signed");
            self.arm_timers();
        }
        Ok(WriteOp::SessionState {
            session_id: self.id.clone(),
            key: SessionStateKey::SeatKeys,
            value: registered_keys_json(&self.config.registered_keys),
        })
    }

    /// Refuse a move while a signed session still waits for seat keys.
    pub(super) fn require_seat_keys(&self) -> Result<(), HostError> {
        let awaiting = self.config.awaiting_seat_keys();
        if awaiting.is_empty() {
            return Ok(());
        }
        Err(HostError::new(
            ErrorCode::SeatKeysPending,
            format!(
                "session {} is signed and waits for the key of seat {} (registered with seatKey at attach): no seat \
                 moves before every key is known, because each seat's chain starts from the hash of the whole roster",
                self.id,
                awaiting.join(", ")
            ),
        ))
    }
}
