//! Signed sessions (RFC-010, kernel spec §4.8 step 2, §5.9): each seat's
//! chain head, the ingest checks, periodic seat signatures.
//!
//! The reference kernel checks only the shape of the chain fields and leaves
//! the cryptography to the verifier. This kernel also refuses what would make
//! the finalized replay fail verification, before anything is persisted: a
//! submission without chain fields, a `prevChainHash` that is not the seat's
//! head, a signature that does not verify, an unsigned commit or reveal
//! (tier 1), and an unsigned submission once the seat's oldest uncovered one
//! can no longer be covered within `signingTier.N` ticks by anything but a
//! signature on this one.
//!
//! Chain heads move only with committed events ([`SeatChains::absorb`]), the
//! same function on the live path and on rehydration: a link joins the chain
//! where the replay will record it (its resolution, or its commit-mismatch),
//! at that record's tick.

use std::collections::BTreeMap;

use gaos_json::Value;

use super::SessionKernel;
use super::commit::Patch;
use super::prepared::{Prepared, PreparedResult};
use crate::action::SubmittedAction;
use crate::error::{IntentErrorCode, KernelError};
use crate::event::{CanonicalInput, EventBody};
use crate::reducer::TickReducer;
use crate::signing::{
    ChainHash, PeriodicAttestation, Roster, SubmissionLink, chain_link, decode_chain_hash, decode_signature, to_base64,
};

/// One seat's chain as the replay will see it at the current position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct SeatChain {
    /// The head after the seat's last recorded link (its genesis first).
    pub(super) head: ChainHash,
    /// Links recorded so far.
    pub(super) links: u64,
    /// Tick of the oldest recorded link no valid signature covers yet.
    pub(super) uncovered_since: Option<u64>,
}

/// Every rostered seat's chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct SeatChains {
    seats: BTreeMap<String, SeatChain>,
}

/// The chain fields of a submission, decoded.
pub(super) struct ChainClaim {
    pub(super) client_time: u64,
    pub(super) prev_chain_hash: ChainHash,
    pub(super) sig: Option<[u8; 64]>,
}

impl SeatChains {
    pub(super) fn new(session_id: &str, roster: &Roster) -> Result<Self, KernelError> {
        let mut seats = BTreeMap::new();
        for key in roster.keys() {
            let head = roster.genesis(session_id, &key.id).map_err(KernelError::type_error)?;
            seats.insert(key.id.clone(), SeatChain { head, links: 0, uncovered_since: None });
        }
        Ok(SeatChains { seats })
    }

    pub(super) fn seat(&self, seat: &str) -> Option<&SeatChain> {
        self.seats.get(seat)
    }

    /// Move the heads with one committed (or rehydrated) event.
    pub(super) fn absorb(&mut self, session_id: &str, body: &EventBody) {
        match body {
            EventBody::Resolution { tick, inputs, .. } => {
                for input in inputs {
                    self.absorb_input(session_id, *tick, input);
                }
            }
            EventBody::Rejection {
                tick,
                participant_id,
                submission_id,
                canonical_command,
                cursor,
                client_time,
                prev_chain_hash,
                sig,
                ..
            } => {
                if let (Some(command), Some(cursor), Ok(claim)) =
                    (canonical_command, cursor, claim_of(client_time.as_ref(), prev_chain_hash.as_ref(), sig.as_ref()))
                {
                    self.link(session_id, participant_id, submission_id, *cursor, *tick, command, claim);
                }
            }
            EventBody::SeatSignature { participant_id, .. } => {
                if let Some(chain) = self.seats.get_mut(participant_id) {
                    chain.uncovered_since = None;
                }
            }
            _ => {}
        }
    }

    fn absorb_input(&mut self, session_id: &str, tick: u64, input: &CanonicalInput) {
        let (Some(seat), Some(submission_id), Some(command), Some(cursor)) =
            (&input.participant_id, &input.submission_id, &input.canonical_command, input.cursor)
        else {
            return;
        };
        if let Ok(claim) = claim_of(input.client_time.as_ref(), input.prev_chain_hash.as_ref(), input.sig.as_ref()) {
            self.link(session_id, seat, submission_id, cursor, tick, command, claim);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn link(
        &mut self,
        session_id: &str,
        seat: &str,
        submission_id: &str,
        cursor: u64,
        tick: u64,
        command: &str,
        claim: ChainClaim,
    ) {
        let Some(chain) = self.seats.get_mut(seat) else { return };
        let link = SubmissionLink {
            session_id,
            seat,
            submission_id,
            cursor,
            tick,
            client_time: claim.client_time,
            canonical_command: command,
            prev_chain_hash: &claim.prev_chain_hash,
        };
        if let Ok(preimage) = link.preimage() {
            chain.head = chain_link(&preimage);
        }
        chain.links += 1;
        if claim.sig.is_some() {
            chain.uncovered_since = None;
        } else if chain.uncovered_since.is_none() {
            chain.uncovered_since = Some(tick);
        }
    }
}

/// Decode chain fields (all shapes were checked at ingest).
pub(super) fn claim_of(
    client_time: Option<&Value>,
    prev_chain_hash: Option<&Value>,
    sig: Option<&Value>,
) -> Result<ChainClaim, String> {
    let client_time = client_time
        .and_then(Value::as_u64)
        .ok_or("a signed session's submission carries clientTime and prevChainHash (kernel spec §4.8)")?;
    let prev = prev_chain_hash.and_then(Value::as_str).ok_or("prevChainHash must be a string")?;
    let prev_chain_hash = decode_chain_hash(prev).map_err(|e| format!("prevChainHash {e}"))?;
    let sig = match sig {
        None => None,
        Some(v) => Some(decode_signature(v.as_str().ok_or("sig must be a string")?).map_err(|e| format!("sig {e}"))?),
    };
    Ok(ChainClaim { client_time, prev_chain_hash, sig })
}

/// `{participantId, tick, clientTime, prevChainHash, sig}` of
/// `prepareSeatSignature`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeatSignatureInput {
    /// The attesting seat.
    pub participant_id: String,
    /// Must be the session's current tick.
    pub tick: u64,
    /// The seat's clock (a non-negative safe integer).
    pub client_time: u64,
    /// The seat's current chain head (canonical base64).
    pub prev_chain_hash: String,
    /// Ed25519 over the periodic preimage (canonical base64).
    pub sig: String,
}

/// What the kernel knows of a seat's chain (for a seat's client resuming
/// its chain).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainPosition {
    /// The head the seat's next submission must name as `prevChainHash`.
    pub chain_head: String,
    /// Links recorded so far.
    pub submissions: u64,
}

impl<R> SessionKernel<R>
where
    R: TickReducer,
    R::State: Clone + 'static,
{
    /// Whether the session is signed (`seatKeys` + `signaturePolicy`).
    pub fn is_signed(&self) -> bool {
        self.options.signing.is_some()
    }

    /// The tick of `seat`'s oldest chained-but-unsigned submission that no
    /// signature covers yet (`None`: every link of its chain is covered).
    pub fn uncovered_since(&self, seat: &str) -> Option<u64> {
        self.live.chains.as_ref()?.seat(seat)?.uncovered_since
    }

    /// `seat`'s chain position in a signed session: the head its next
    /// submission names as `prevChainHash` (after its pending intent, when
    /// it holds one in the open window).
    pub fn chain_position(&self, seat: &str) -> Option<ChainPosition> {
        let chain = self.live.chains.as_ref()?.seat(seat)?;
        let (mut head, mut links) = (chain.head, chain.links);
        if let Some(intent) = self.live.window.intents.get(seat)
            && let Ok(claim) =
                claim_of(intent.client_time.as_ref(), intent.prev_chain_hash.as_ref(), intent.sig.as_ref())
        {
            let command = gaos_json::canonical_json(&intent.command);
            let link = SubmissionLink {
                session_id: &self.options.session_id,
                seat,
                submission_id: &intent.submission_id,
                cursor: self.live.cursor,
                tick: self.live.tick,
                client_time: claim.client_time,
                canonical_command: &command,
                prev_chain_hash: &claim.prev_chain_hash,
            };
            if let Ok(preimage) = link.preimage() {
                head = chain_link(&preimage);
                links += 1;
            }
        }
        Some(ChainPosition { chain_head: to_base64(&head), submissions: links })
    }

    /// Ingest step 2 (signed sessions only): the chain fields' shapes, as
    /// the reference checks them (`invalid_submission`).
    pub(super) fn check_chain_shape(
        &self,
        client_time: Option<&Value>,
        prev_chain_hash: Option<&Value>,
        sig: Option<&Value>,
    ) -> Result<(), KernelError> {
        if self.options.signing.is_none() {
            return Ok(());
        }
        let invalid = |message: String| KernelError::intent(IntentErrorCode::InvalidSubmission, message);
        if client_time.is_some() != prev_chain_hash.is_some() || (sig.is_some() && client_time.is_none()) {
            return Err(invalid("signed sessions require both clientTime and prevChainHash, with sig optional".into()));
        }
        if client_time.is_some() {
            claim_of(client_time, prev_chain_hash, sig).map_err(invalid)?;
        }
        Ok(())
    }

    /// The link checks of a signed session (after the identity checks): chain
    /// fields present, `prevChainHash` the seat's head, `sig` valid over the
    /// preimage at the open cursor and tick. Returns whether it is signed.
    pub(super) fn check_chain_link(
        &self,
        seat: &str,
        submission_id: &str,
        canonical_command: &str,
        client_time: Option<&Value>,
        prev_chain_hash: Option<&Value>,
        sig: Option<&Value>,
    ) -> Result<bool, KernelError> {
        let (Some(roster), Some(chains)) = (&self.options.signing, &self.live.chains) else {
            return Ok(false);
        };
        let Some(chain) = chains.seat(seat) else {
            return Err(KernelError::signature(format!("seat {seat} has no key in the session's seatKeys")));
        };
        let claim = claim_of(client_time, prev_chain_hash, sig).map_err(KernelError::signature)?;
        if claim.prev_chain_hash != chain.head {
            return Err(KernelError::signature(format!(
                "prevChainHash {} is not seat {seat}'s chain head {} (after {} submissions)",
                to_base64(&claim.prev_chain_hash),
                to_base64(&chain.head),
                chain.links
            )));
        }
        let Some(sig) = claim.sig else { return Ok(false) };
        let link = SubmissionLink {
            session_id: &self.options.session_id,
            seat,
            submission_id,
            cursor: self.live.cursor,
            tick: self.live.tick,
            client_time: claim.client_time,
            canonical_command,
            prev_chain_hash: &claim.prev_chain_hash,
        };
        let preimage = link.preimage().map_err(KernelError::signature)?;
        if !roster.verify(seat, &preimage, &sig) {
            return Err(KernelError::signature(format!(
                "the signature of {seat}'s submission {submission_id} does not verify under its key over the \
                 submission at cursor {} tick {}",
                self.live.cursor, self.live.tick
            )));
        }
        Ok(true)
    }

    /// The signing-tier checks once the action is known: a commit or reveal
    /// must be signed (tier 1), and an unsigned submission is refused when
    /// the seat's oldest uncovered submission would be left uncovered
    /// beyond `signingTier.N` ticks.
    pub(super) fn check_signing_tier(
        &self,
        seat: &str,
        signed: bool,
        action: &SubmittedAction,
    ) -> Result<(), KernelError> {
        let (Some(roster), Some(chains)) = (&self.options.signing, &self.live.chains) else {
            return Ok(());
        };
        if signed {
            return Ok(());
        }
        if action.commit.is_some() || action.reveal.is_some() {
            return Err(KernelError::signature(format!("{seat}'s commit or reveal must be signed (signing tier 1)")));
        }
        let tier = roster.key(seat).map_or(1, |k| k.signing_tier);
        if let Some(since) = chains.seat(seat).and_then(|c| c.uncovered_since)
            && self.live.tick - since >= tier
        {
            return Err(KernelError::signature(format!(
                "{seat} must sign this submission: its unsigned submission at tick {since} needs a signature by \
                 tick {} (signingTier.N = {tier})",
                since + tier
            )));
        }
        Ok(())
    }

    /// `prepareSeatSignature(input)`: record a periodic signature over the
    /// seat's current chain head (allowed after the game ended, so the last
    /// submissions can be covered). Beyond the reference's checks, the head
    /// must be the seat's and the signature must verify.
    pub fn prepare_seat_signature(&self, input: &SeatSignatureInput) -> Result<Prepared<R::State>, KernelError> {
        let (Some(roster), Some(chains)) = (&self.options.signing, &self.live.chains) else {
            return Err(KernelError::conflict("the session has no RFC-010 signature policy"));
        };
        let seat = &input.participant_id;
        let Some(chain) = chains.seat(seat) else {
            return Err(KernelError::conflict(format!("seat signature names an unknown participant {seat}")));
        };
        if input.tick != self.live.tick {
            return Err(KernelError::conflict(format!(
                "seat signature tick {} must equal the current session tick {}",
                input.tick, self.live.tick
            )));
        }
        if input.client_time as f64 > gaos_json::MAX_SAFE_INTEGER {
            return Err(KernelError::type_error("seat signature clientTime must be a non-negative safe integer"));
        }
        let head = decode_chain_hash(&input.prev_chain_hash)
            .map_err(|e| KernelError::type_error(format!("prevChainHash {e}")))?;
        let sig = decode_signature(&input.sig).map_err(|e| KernelError::type_error(format!("sig {e}")))?;
        if head != chain.head {
            return Err(KernelError::signature(format!(
                "prevChainHash {} is not seat {seat}'s chain head {}",
                input.prev_chain_hash,
                to_base64(&chain.head)
            )));
        }
        let attestation = PeriodicAttestation {
            session_id: &self.options.session_id,
            seat,
            tick: input.tick,
            client_time: input.client_time,
            chain_head: &head,
        };
        let preimage = attestation.preimage().map_err(KernelError::type_error)?;
        if !roster.verify(seat, &preimage, &sig) {
            return Err(KernelError::signature(format!(
                "the periodic signature of {seat} at tick {} does not verify under its key",
                input.tick
            )));
        }
        let next = self.live.transition_revision + 1;
        let events = self.finish_events(
            next,
            vec![EventBody::SeatSignature {
                tick: input.tick,
                participant_id: seat.clone(),
                client_time: input.client_time,
                prev_chain_hash: input.prev_chain_hash.clone(),
                sig: input.sig.clone(),
            }],
        )?;
        Ok(self.prepared(next, events, Vec::new(), PreparedResult::Extension, Patch::Extension))
    }
}
