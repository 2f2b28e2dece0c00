//! What a seat (or a spectator) sees: the envelope of the current window,
//! its finalization status, the creator's first envelope and snapshots.

use gaos_json::{Map, Value, sha256_hex};

use super::SessionActor;
use crate::answers::{Answer, FINALIZE_KEY};
use crate::envelope::{self, Finalization, Pending};
use crate::error::HostError;
use crate::signing::{SIGNING_EXTENSION, awaiting_extension, chain_extension};
use crate::storage::{AnswerKind, SessionStatus};

impl SessionActor {
    pub(super) fn finalization(&self) -> Finalization {
        if self.status == SessionStatus::Finalized
            && let Some(answer) = self.answers.get(AnswerKind::Finalize, FINALIZE_KEY)
        {
            return Finalization::Finalized { result_digest: sha256_hex(answer.body.as_bytes()) };
        }
        if self.kernel.is_terminal() { Finalization::Terminal } else { Finalization::Live }
    }

    pub(super) fn seat_observation(&self, seat: &str, view: &Value, can_act: bool, done: bool) -> Value {
        let legal = if can_act && !done { self.game.legal_actions(view, seat) } else { Vec::new() };
        envelope::observation(view, legal, done)
    }

    /// The envelope `seat` sees now (spectators: the public view).
    pub(super) fn observe(&self, seat: Option<&str>) -> Result<Answer, HostError> {
        let done = self.kernel.is_terminal();
        let mut ext = envelope::base_extensions(&self.episode_mark(), &self.finalization());
        let Some(seat) = seat else {
            let tick = envelope::observation(self.kernel.full_view(), Vec::new(), done);
            return Ok(Answer::of(200, &envelope::envelope(&self.id, self.revision(), tick, None, ext)));
        };
        if let (Some(roster), Some(position)) = (&self.kernel.options().signing, self.kernel.chain_position(seat)) {
            ext.insert(SIGNING_EXTENSION.into(), chain_extension(roster, &position));
        } else if self.config.awaits_seat_keys() {
            ext.insert(SIGNING_EXTENSION.into(), awaiting_extension(&self.config.awaiting_seat_keys()));
        }
        let view = self.kernel.observe(seat).map_err(|e| HostError::forbidden(e.to_string()))?;
        let window = self.kernel.window();
        let submitted = window.intents.contains_key(seat);
        let awaiting = window.awaiting();
        if submitted && !awaiting.is_empty() && !done {
            let tick = self.seat_observation(seat, &view, false, done);
            let pending = Pending { submitted: window.submitted(), awaiting, accepted: None };
            return Ok(Answer::of(202, &envelope::envelope(&self.id, self.revision(), tick, Some(pending), ext)));
        }
        let tick = self.seat_observation(seat, &view, !submitted, done);
        Ok(Answer::of(200, &envelope::envelope(&self.id, self.revision(), tick, None, ext)))
    }

    /// The create answer: the creator seat's envelope with `extensions`
    /// (credentials, policy, lease) added.
    pub(super) fn creator_envelope(&self, extensions: Map) -> Result<Answer, HostError> {
        let creator = self.config.creator.clone();
        self.observe(Some(&creator)).map(|a| {
            let mut value = gaos_json::parse(&a.body).expect("our own canonical JSON");
            if let Some(ext) =
                value.as_object_mut().and_then(|m| m.get_mut("extensions")).and_then(Value::as_object_mut)
            {
                ext.extend(extensions);
            }
            Answer::json(201, &value)
        })
    }

    /// `GET /snapshot`: the seat's view as one delta after `after`.
    pub(super) fn snapshot(&self, seat: &str, after: Option<u64>) -> Result<Answer, HostError> {
        if let Some(reason) = &self.leases.revoked {
            return Err(HostError::revoked(reason));
        }
        // `after` names a session transition revision (a run's levels
        // continue the count); one of an earlier level is below this level's
        // floor, like a compacted revision.
        let after = self.level_after(after).map_err(|floor| {
            crate::error::from_kernel(gaos_kernel::KernelError::ResyncRequired(gaos_kernel::error::ResyncRequired {
                requested_transition_revision: after.unwrap_or(0),
                retention_floor: floor,
                current_transition_revision: self.session_transition_revision(),
            }))
        })?;
        self.kernel.snapshot(seat, after).map(|d| Answer::json(200, &self.session_delta(&d).to_value())).map_err(|e| {
            match e {
                // Below the retention floor: 409 resync_required, and the
                // client asks again without `after` for a full snapshot.
                e @ gaos_kernel::KernelError::ResyncRequired(_) => crate::error::from_kernel(e),
                e => HostError::invalid_request(e.to_string()),
            }
        })
    }
}
