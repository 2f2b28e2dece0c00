//! Controller leases (spec/lease.md): who may drive each seat, and what a
//! lapse does. Pure state machine: every operation takes the current time
//! (milliseconds on the host clock) and returns its decision plus the lease
//! events to record; the session actor persists them and applies the effects.
//!
//! States of a seat's current claim (lease.md §3): Active, Paused (a
//! deliberate safety pause on a live claim), Lapsed (ran out while active, or
//! over a pause), Revoked (the session was stopped). A token whose claim was
//! replaced by a newer one is Superseded.

use std::collections::BTreeMap;

use gaos_json::{Map, Value};
use serde::{Deserialize, Serialize};

/// How a caller presents itself for a seat.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Presented {
    /// SHA-256 of the `Gaos-Lease` token, when sent (lease-aware callers).
    pub token_hash: Option<String>,
    /// `Gaos-Lease-Epoch`, when sent.
    pub epoch: Option<u64>,
}

impl Presented {
    pub fn lease_aware(&self) -> bool {
        self.token_hash.is_some()
    }
}

/// A dispatch on a seat.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeaseOp {
    Act,
    Renew,
    Heartbeat,
    Pause(String),
    Resume,
    Stop(String),
    /// The holder gives the seat up without stopping the session (a
    /// handover): the seat is left without a claim, so the next controller
    /// takes it at once, and the released token can never drive again.
    Release,
}

/// State of a claim as callers see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClaimState {
    Active,
    Paused,
    Lapsed,
    Superseded,
    Revoked,
}

impl ClaimState {
    pub fn as_str(self) -> &'static str {
        match self {
            ClaimState::Active => "active",
            ClaimState::Paused => "paused",
            ClaimState::Lapsed => "lapsed",
            ClaimState::Superseded => "superseded",
            ClaimState::Revoked => "revoked",
        }
    }
}

/// One claim on a seat.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Claim {
    pub epoch: u64,
    pub token_hash: String,
    pub holder_id: String,
    pub duration_ms: u64,
    pub issued_at: i64,
    pub renewed_at: i64,
    pub expires_at: i64,
    /// The lapse of this claim was recorded (once).
    pub lapse_recorded: bool,
}

/// Lease state of one seat.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SeatLease {
    pub current: Option<Claim>,
    /// Token hashes of superseded claims, with their epochs.
    pub superseded: BTreeMap<String, u64>,
    /// A deliberate safety pause (survives renewal and takeover).
    pub safety_paused: bool,
    pub pause_reasons: Vec<String>,
    /// The epoch of the last released claim, so the next claim on the
    /// then-free seat still gets a newer epoch (fencing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub released_epoch: Option<u64>,
}

impl SeatLease {
    /// The epoch of a claim taken on this seat while it has none: newer
    /// than every claim it had before.
    fn next_free_epoch(&self) -> u64 {
        let superseded = self.superseded.values().copied().max().unwrap_or(0);
        self.released_epoch.unwrap_or(0).max(superseded) + 1
    }
}

/// Why a dispatch was refused (each maps to an HTTP error).
#[derive(Debug, Clone, PartialEq)]
pub enum LeaseError {
    /// 409: the presented claim lapsed; renew first.
    Expired { seat: String, epoch: u64 },
    /// 409: another writer holds (or took) the seat.
    WriterConflict { seat: String, holder_id: Option<String>, epoch: u64 },
    /// 409: the seat is deliberately paused; resume first. `events`: lease
    /// events of effects that stand although the act is refused (a
    /// lease-unaware act renews a lapsed claim, or takes an implicit one,
    /// before it meets the pause); the caller records them.
    Paused { seat: String, reasons: Vec<String>, events: Vec<LeaseEvent> },
    /// 410: the session was revoked.
    Revoked { reason: String },
    /// 403: the lease token does not belong to this seat.
    CapabilityRejected(String),
}

/// What happened to a claim; its `as_str` is the record's `event` field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LeaseEventKind {
    ClaimTaken,
    Takeover,
    LeaseExpired,
    LeaseRenewed,
    Paused,
    Resumed,
    Released,
    Revoked,
}

impl LeaseEventKind {
    pub fn as_str(self) -> &'static str {
        match self {
            LeaseEventKind::ClaimTaken => "claim_taken",
            LeaseEventKind::Takeover => "takeover",
            LeaseEventKind::LeaseExpired => "lease_expired",
            LeaseEventKind::LeaseRenewed => "lease_renewed",
            LeaseEventKind::Paused => "paused",
            LeaseEventKind::Resumed => "resumed",
            LeaseEventKind::Released => "released",
            LeaseEventKind::Revoked => "revoked",
        }
    }

    /// Whether the event goes on the transcript's `gaos.lease` lane. Taking
    /// a claim on a free seat is not recorded: it changes nobody's rights.
    pub fn is_recorded(self) -> bool {
        self != LeaseEventKind::ClaimTaken
    }
}

/// A kind compares equal to its wire string (`event.kind() == "paused"`).
impl PartialEq<&str> for LeaseEventKind {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// A lease event to record on the `gaos.lease` extension lane.
#[derive(Debug, Clone, PartialEq)]
pub struct LeaseEvent {
    kind: LeaseEventKind,
    pub record: Map,
}

impl LeaseEvent {
    fn new(kind: LeaseEventKind, seat: &str, holder_id: &str, epoch: u64) -> Self {
        let mut record = Map::new();
        record.insert("event".into(), kind.as_str().into());
        record.insert("seat".into(), seat.into());
        record.insert("holderId".into(), holder_id.into());
        record.insert("epoch".into(), epoch.into());
        LeaseEvent { kind, record }
    }

    fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.record.insert(key.into(), value.into());
        self
    }

    pub fn kind(&self) -> LeaseEventKind {
        self.kind
    }
}

/// The outcome of an allowed dispatch.
#[derive(Debug, Clone, PartialEq)]
pub struct Granted {
    pub epoch: u64,
    pub events: Vec<LeaseEvent>,
    /// A new claim taken implicitly for a lease-unaware caller.
    pub implicit_claim: bool,
}

/// Lease state of a whole session.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LeaseBook {
    pub seats: BTreeMap<String, SeatLease>,
    /// Set once the session was revoked (final).
    pub revoked: Option<String>,
}

/// The holder id of implicit claims of lease-unaware callers.
pub const BEARER_HOLDER: &str = "bearer";

impl LeaseBook {
    pub fn to_json(&self) -> String {
        gaos_json::to_canonical_string(self).expect("the lease book is JSON")
    }

    pub fn from_json(text: &str) -> Result<Self, String> {
        let value = gaos_json::parse(text).map_err(|e| e.to_string())?;
        gaos_json::from_value(value).map_err(|e| e.to_string())
    }

    fn seat(&mut self, seat: &str) -> &mut SeatLease {
        self.seats.entry(seat.to_owned()).or_default()
    }

    /// Current state of `seat`'s current claim at `now` (None: no claim).
    pub fn state(&self, seat: &str, now: i64) -> Option<ClaimState> {
        if self.revoked.is_some() {
            return Some(ClaimState::Revoked);
        }
        let lease = self.seats.get(seat)?;
        let claim = lease.current.as_ref()?;
        Some(if now >= claim.expires_at {
            ClaimState::Lapsed
        } else if lease.safety_paused {
            ClaimState::Paused
        } else {
            ClaimState::Active
        })
    }

    /// Whether `seat`'s clock-driven progress is paused (lapsed or safety).
    pub fn seat_paused(&self, seat: &str, now: i64) -> bool {
        matches!(self.state(seat, now), Some(ClaimState::Lapsed | ClaimState::Paused))
            || self.seats.get(seat).is_some_and(|l| l.safety_paused)
    }

    /// Whether any seat is paused (ticks sessions stop their scheduler).
    pub fn any_paused(&self, now: i64) -> bool {
        self.seats.keys().any(|s| self.seat_paused(s, now))
    }

    /// The earliest future expiry among live claims (for the eager timer).
    pub fn next_expiry(&self, now: i64) -> Option<i64> {
        if self.revoked.is_some() {
            return None;
        }
        self.seats
            .values()
            .filter_map(|l| l.current.as_ref())
            .filter(|c| !c.lapse_recorded)
            .map(|c| c.expires_at.max(now))
            .min()
    }

    /// Record every lapse that is due (eager timer and lazy checks).
    /// `pauses_session`: whether a lapse stops the session clock (ticks).
    pub fn expire_due(&mut self, now: i64, pauses_session: bool) -> Vec<LeaseEvent> {
        if self.revoked.is_some() {
            return Vec::new();
        }
        let mut events = Vec::new();
        for (seat, lease) in self.seats.iter_mut() {
            if let Some(claim) = lease.current.as_mut()
                && now >= claim.expires_at
                && !claim.lapse_recorded
            {
                claim.lapse_recorded = true;
                events.push(
                    LeaseEvent::new(LeaseEventKind::LeaseExpired, seat, &claim.holder_id, claim.epoch)
                        .with("pausedSession", pauses_session),
                );
            }
        }
        events
    }

    /// Take a claim for `seat` (create, attach): refused while another claim
    /// is live (`writer_conflict`); a lapsed claim is taken over (new epoch).
    pub fn claim(
        &mut self,
        seat: &str,
        holder_id: &str,
        token_hash: &str,
        duration_ms: u64,
        now: i64,
    ) -> Result<Granted, LeaseError> {
        if let Some(reason) = &self.revoked {
            return Err(LeaseError::Revoked { reason: reason.clone() });
        }
        let lease = self.seat(seat);
        let mut events = Vec::new();
        let epoch = match &lease.current {
            Some(current) if now < current.expires_at => {
                return Err(LeaseError::WriterConflict {
                    seat: seat.to_owned(),
                    holder_id: Some(current.holder_id.clone()),
                    epoch: current.epoch,
                });
            }
            Some(current) => {
                let next = current.epoch + 1;
                let previous = current.clone();
                lease.superseded.insert(previous.token_hash.clone(), previous.epoch);
                events.push(
                    LeaseEvent::new(LeaseEventKind::Takeover, seat, holder_id, next)
                        .with("previousHolderId", previous.holder_id.as_str())
                        .with("previousEpoch", previous.epoch),
                );
                next
            }
            None => {
                let epoch = lease.next_free_epoch();
                events.push(LeaseEvent::new(LeaseEventKind::ClaimTaken, seat, holder_id, epoch));
                epoch
            }
        };
        lease.current = Some(Claim {
            epoch,
            token_hash: token_hash.to_owned(),
            holder_id: holder_id.to_owned(),
            duration_ms,
            issued_at: now,
            renewed_at: now,
            expires_at: now + duration_ms as i64,
            lapse_recorded: false,
        });
        Ok(Granted { epoch, events, implicit_claim: false })
    }

    /// Decide a dispatch on `seat` at `now` and apply its lease effects
    /// (lease.md §3). `pauses_session` as in [`LeaseBook::expire_due`];
    /// `default_duration_ms` for implicit claims.
    pub fn dispatch(
        &mut self,
        seat: &str,
        presented: &Presented,
        op: &LeaseOp,
        now: i64,
        pauses_session: bool,
        default_duration_ms: u64,
    ) -> Result<Granted, LeaseError> {
        if let Some(reason) = &self.revoked {
            return Err(LeaseError::Revoked { reason: reason.clone() });
        }
        // Lazy expiry first: a lapse is recorded before anything else happens.
        let mut events = self.expire_due(now, pauses_session);
        let lease = self.seat(seat);
        if *op == LeaseOp::Release {
            return Self::release(lease, seat, presented, events);
        }
        let current_epoch = lease.current.as_ref().map_or(0, |c| c.epoch);
        // Which claim does the caller drive?
        match &presented.token_hash {
            Some(hash) => {
                let is_current = lease.current.as_ref().is_some_and(|c| &c.token_hash == hash);
                if !is_current {
                    if lease.superseded.contains_key(hash) {
                        // Superseded: only pausing stays free.
                        if let LeaseOp::Pause(reason) = op {
                            return Ok(Self::pause_seat(lease, seat, reason, current_epoch, events));
                        }
                        return Err(LeaseError::WriterConflict {
                            seat: seat.to_owned(),
                            holder_id: lease.current.as_ref().map(|c| c.holder_id.clone()),
                            epoch: current_epoch,
                        });
                    }
                    return Err(LeaseError::CapabilityRejected(format!(
                        "the lease token does not belong to seat {seat:?} of this session"
                    )));
                }
                if let Some(sent) = presented.epoch
                    && sent < current_epoch
                {
                    return Err(LeaseError::WriterConflict {
                        seat: seat.to_owned(),
                        holder_id: lease.current.as_ref().map(|c| c.holder_id.clone()),
                        epoch: current_epoch,
                    });
                }
            }
            None => {
                // Fencing holds for callers that send only the epoch.
                if presented.epoch.is_some_and(|sent| sent < current_epoch) {
                    return Err(LeaseError::WriterConflict {
                        seat: seat.to_owned(),
                        holder_id: lease.current.as_ref().map(|c| c.holder_id.clone()),
                        epoch: current_epoch,
                    });
                }
                // Lease-unaware callers act under the seat's current claim;
                // a seat without one gets an implicit claim on first driving.
                if lease.current.is_none() {
                    if let LeaseOp::Pause(reason) = op {
                        return Ok(Self::pause_seat(lease, seat, reason, 0, events));
                    }
                    if let LeaseOp::Stop(_) = op {
                        // Stopping is safe from anyone entitled to the seat
                        // (rule 7); the caller revokes the session.
                        return Ok(Granted { epoch: 0, events, implicit_claim: false });
                    }
                    if matches!(op, LeaseOp::Act | LeaseOp::Resume | LeaseOp::Renew | LeaseOp::Heartbeat) {
                        let epoch = lease.next_free_epoch();
                        lease.current = Some(Claim {
                            epoch,
                            token_hash: String::new(),
                            holder_id: BEARER_HOLDER.into(),
                            duration_ms: default_duration_ms,
                            issued_at: now,
                            renewed_at: now,
                            expires_at: now + default_duration_ms as i64,
                            lapse_recorded: false,
                        });
                        events.push(
                            LeaseEvent::new(LeaseEventKind::ClaimTaken, seat, BEARER_HOLDER, epoch)
                                .with("implicit", true),
                        );
                        let granted = Self::apply_live(lease, seat, op, now, events)?;
                        return Ok(Granted { implicit_claim: true, ..granted });
                    }
                }
            }
        }
        let Some(claim) = lease.current.clone() else {
            return Err(LeaseError::CapabilityRejected(format!("seat {seat:?} has no claim to drive")));
        };
        let lapsed = now >= claim.expires_at;
        if !lapsed {
            return Self::apply_live(lease, seat, op, now, events);
        }
        // Lapsed (by lapse, or over a safety pause).
        match op {
            LeaseOp::Renew => {
                Self::slide(lease, now);
                events.push(LeaseEvent::new(LeaseEventKind::LeaseRenewed, seat, &claim.holder_id, claim.epoch));
                Ok(Granted { epoch: claim.epoch, events, implicit_claim: false })
            }
            LeaseOp::Act | LeaseOp::Resume if !presented.lease_aware() => {
                // Driving-seam recovery done by the host for lease-unaware
                // callers: renew the lapsed claim, then dispatch.
                Self::slide(lease, now);
                events.push(
                    LeaseEvent::new(LeaseEventKind::LeaseRenewed, seat, &claim.holder_id, claim.epoch)
                        .with("implicit", true),
                );
                Self::apply_live(lease, seat, op, now, events)
            }
            LeaseOp::Pause(reason) => Ok(Self::pause_seat(lease, seat, reason, claim.epoch, events)),
            LeaseOp::Stop(_) | LeaseOp::Release => Ok(Granted { epoch: claim.epoch, events, implicit_claim: false }),
            LeaseOp::Act | LeaseOp::Resume | LeaseOp::Heartbeat => {
                Err(LeaseError::Expired { seat: seat.to_owned(), epoch: claim.epoch })
            }
        }
    }

    fn slide(lease: &mut SeatLease, now: i64) {
        if let Some(claim) = lease.current.as_mut() {
            claim.renewed_at = now;
            claim.expires_at = now + claim.duration_ms as i64;
            claim.lapse_recorded = false;
        }
    }

    fn pause_seat(lease: &mut SeatLease, seat: &str, reason: &str, epoch: u64, mut events: Vec<LeaseEvent>) -> Granted {
        let holder = lease.current.as_ref().map_or(BEARER_HOLDER.to_owned(), |c| c.holder_id.clone());
        if !lease.safety_paused {
            lease.safety_paused = true;
            events.push(LeaseEvent::new(LeaseEventKind::Paused, seat, &holder, epoch).with("reason", reason));
        }
        if !lease.pause_reasons.iter().any(|r| r == reason) {
            lease.pause_reasons.push(reason.to_owned());
        }
        Granted { epoch, events, implicit_claim: false }
    }

    /// A dispatch on a live claim: use renews first, then the op's effect.
    fn apply_live(
        lease: &mut SeatLease,
        seat: &str,
        op: &LeaseOp,
        now: i64,
        mut events: Vec<LeaseEvent>,
    ) -> Result<Granted, LeaseError> {
        let claim = lease.current.clone().expect("a live claim exists");
        let epoch = claim.epoch;
        match op {
            LeaseOp::Act => {
                if lease.safety_paused {
                    let reasons = lease.pause_reasons.clone();
                    return Err(LeaseError::Paused { seat: seat.to_owned(), reasons, events });
                }
                Self::slide(lease, now);
            }
            LeaseOp::Renew | LeaseOp::Heartbeat => Self::slide(lease, now),
            LeaseOp::Pause(reason) => {
                Self::slide(lease, now);
                return Ok(Self::pause_seat(lease, seat, reason, epoch, events));
            }
            LeaseOp::Resume => {
                Self::slide(lease, now);
                if lease.safety_paused {
                    lease.safety_paused = false;
                    lease.pause_reasons.clear();
                    events.push(LeaseEvent::new(LeaseEventKind::Resumed, seat, &claim.holder_id, epoch));
                }
            }
            LeaseOp::Stop(_) => Self::slide(lease, now),
            // Handled before any claim is driven (`dispatch`): nothing to slide.
            LeaseOp::Release => {}
        }
        Ok(Granted { epoch, events, implicit_claim: false })
    }

    /// `release`: the current claim's holder gives the seat up (live or
    /// lapsed). A deliberate pause stays (it survives any change of holder).
    /// Releasing a claim that is already gone (released, superseded) or a
    /// seat without a claim changes nothing, so a retry is harmless; a
    /// lease-unaware caller may release only the implicit claim it drives.
    fn release(
        lease: &mut SeatLease,
        seat: &str,
        presented: &Presented,
        mut events: Vec<LeaseEvent>,
    ) -> Result<Granted, LeaseError> {
        let Some(claim) = lease.current.clone() else {
            let epoch = lease.released_epoch.unwrap_or(0);
            return Ok(Granted { epoch, events, implicit_claim: false });
        };
        let conflict = || LeaseError::WriterConflict {
            seat: seat.to_owned(),
            holder_id: Some(claim.holder_id.clone()),
            epoch: claim.epoch,
        };
        match &presented.token_hash {
            Some(hash) if *hash == claim.token_hash => {
                if presented.epoch.is_some_and(|sent| sent < claim.epoch) {
                    return Err(conflict());
                }
            }
            Some(hash) if lease.superseded.contains_key(hash) => {
                return Ok(Granted { epoch: claim.epoch, events, implicit_claim: false });
            }
            Some(_) => {
                return Err(LeaseError::CapabilityRejected(format!(
                    "the lease token does not belong to seat {seat:?} of this session"
                )));
            }
            None if claim.token_hash.is_empty() => {}
            None => return Err(conflict()),
        }
        if !claim.token_hash.is_empty() {
            lease.superseded.insert(claim.token_hash.clone(), claim.epoch);
        }
        lease.current = None;
        lease.released_epoch = Some(claim.epoch);
        events.push(LeaseEvent::new(LeaseEventKind::Released, seat, &claim.holder_id, claim.epoch));
        Ok(Granted { epoch: claim.epoch, events, implicit_claim: false })
    }

    /// A free pause of `seat` (operator, superseded holders): no renewal.
    pub fn pause_free(&mut self, seat: &str, reason: &str) -> Vec<LeaseEvent> {
        if self.revoked.is_some() {
            return Vec::new();
        }
        let lease = self.seat(seat);
        let epoch = lease.current.as_ref().map_or(0, |c| c.epoch);
        Self::pause_seat(lease, seat, reason, epoch, Vec::new()).events
    }

    /// Whether this book differs from `persisted` by more than lease slides
    /// of under a tenth of their duration (which are persisted lazily).
    pub fn drifted_from(&self, persisted: &LeaseBook) -> bool {
        if self.revoked != persisted.revoked || self.seats.len() != persisted.seats.len() {
            return true;
        }
        for (seat, now) in &self.seats {
            let Some(then) = persisted.seats.get(seat) else { return true };
            if now.superseded != then.superseded
                || now.safety_paused != then.safety_paused
                || now.pause_reasons != then.pause_reasons
                || now.released_epoch != then.released_epoch
            {
                return true;
            }
            match (&now.current, &then.current) {
                (None, None) => {}
                (Some(a), Some(b)) => {
                    let same_claim = a.epoch == b.epoch
                        && a.token_hash == b.token_hash
                        && a.holder_id == b.holder_id
                        && a.duration_ms == b.duration_ms
                        && a.issued_at == b.issued_at
                        && a.lapse_recorded == b.lapse_recorded;
                    let slack = (a.duration_ms / 10) as i64;
                    if !same_claim || (a.expires_at - b.expires_at).abs() > slack {
                        return true;
                    }
                }
                _ => return true,
            }
        }
        false
    }

    /// Revoke the session (stop, emergency stop, game failure). Final.
    pub fn revoke(&mut self, reason: &str, by: &str) -> Option<LeaseEvent> {
        if self.revoked.is_some() {
            return None;
        }
        self.revoked = Some(reason.to_owned());
        let mut record = Map::new();
        record.insert("event".into(), LeaseEventKind::Revoked.as_str().into());
        record.insert("reason".into(), reason.into());
        record.insert("by".into(), by.into());
        Some(LeaseEvent { kind: LeaseEventKind::Revoked, record })
    }

    /// The caller-facing description of `seat`'s claim (`GET /lease`).
    pub fn describe(&self, seat: &str, presented: &Presented, now: i64) -> Value {
        let mut out = Map::new();
        out.insert("seat".into(), seat.into());
        let lease = self.seats.get(seat);
        let current = lease.and_then(|l| l.current.as_ref());
        let superseded = match (&presented.token_hash, lease) {
            (Some(hash), Some(l)) => l.superseded.contains_key(hash),
            _ => false,
        };
        let state = if self.revoked.is_some() {
            Some(ClaimState::Revoked)
        } else if superseded {
            Some(ClaimState::Superseded)
        } else {
            self.state(seat, now)
        };
        out.insert("state".into(), state.map_or(Value::Null, |s| s.as_str().into()));
        if let Some(claim) = current {
            out.insert("epoch".into(), claim.epoch.into());
            out.insert("expiresAt".into(), claim.expires_at.into());
            out.insert("durationMs".into(), claim.duration_ms.into());
            out.insert("holderId".into(), claim.holder_id.clone().into());
        }
        out.insert(
            "pauseReasons".into(),
            Value::Array(lease.map(|l| l.pause_reasons.iter().map(Value::from).collect()).unwrap_or_default()),
        );
        if let Some(reason) = &self.revoked {
            out.insert("revokedReason".into(), reason.clone().into());
        }
        Value::Object(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_kinds_are_their_record_strings_and_only_free_claims_go_unrecorded() {
        let mut book = LeaseBook::default();
        let taken = book.claim("a", "h", "t1", 1_000, 0).expect("a free seat");
        let over = book.claim("a", "h2", "t2", 1_000, 5_000).expect("a lapsed claim is taken over");
        let revoked = book.revoke("stop", "operator").expect("the first revocation");
        for (event, kind) in [
            (&taken.events[0], LeaseEventKind::ClaimTaken),
            (&over.events[0], LeaseEventKind::Takeover),
            (&revoked, LeaseEventKind::Revoked),
        ] {
            assert_eq!(event.kind(), kind);
            assert_eq!(event.record.get("event").and_then(Value::as_str), Some(kind.as_str()));
            assert!(event.kind() == kind.as_str());
        }
        assert!(!LeaseEventKind::ClaimTaken.is_recorded());
        for kind in [
            LeaseEventKind::Takeover,
            LeaseEventKind::LeaseExpired,
            LeaseEventKind::LeaseRenewed,
            LeaseEventKind::Paused,
            LeaseEventKind::Resumed,
            LeaseEventKind::Released,
            LeaseEventKind::Revoked,
        ] {
            assert!(kind.is_recorded(), "{}", kind.as_str());
        }
    }

    #[test]
    fn release_frees_the_seat_fences_the_old_token_and_keeps_a_pause() {
        let mut book = LeaseBook::default();
        let holder = Presented { token_hash: Some("t1".into()), epoch: Some(1) };
        book.claim("a", "mcp", "t1", 1_000, 0).expect("a free seat");
        book.dispatch("a", &holder, &LeaseOp::Pause("check".into()), 10, false, 1_000).expect("pausing is free");
        let released = book.dispatch("a", &holder, &LeaseOp::Release, 20, false, 1_000).expect("the holder releases");
        assert_eq!(released.events.len(), 1);
        assert!(released.events[0].kind() == "released");
        assert_eq!(released.events[0].record.get("epoch").and_then(Value::as_u64), Some(1));
        assert_eq!(book.state("a", 20), None, "the seat has no claim");
        assert!(book.seat_paused("a", 20), "the deliberate pause survives the release");
        // A retry changes nothing; the released token can never drive again.
        let again = book.dispatch("a", &holder, &LeaseOp::Release, 30, false, 1_000).expect("a retry");
        assert!(again.events.is_empty());
        let next = book.claim("a", "mcp-2", "t2", 1_000, 40).expect("the next controller takes the seat at once");
        assert_eq!(next.epoch, 2, "epochs stay strictly increasing across a release");
        for op in [LeaseOp::Renew, LeaseOp::Act, LeaseOp::Heartbeat] {
            let refused = book.dispatch("a", &holder, &op, 50, false, 1_000).expect_err("superseded");
            assert!(matches!(refused, LeaseError::WriterConflict { epoch: 2, .. }), "{op:?}: {refused:?}");
        }
        // Only the holder releases: a bearer-only caller cannot free a
        // lease-aware claim, a foreign token is rejected.
        let bearer = Presented::default();
        let refused = book.dispatch("a", &bearer, &LeaseOp::Release, 60, false, 1_000).expect_err("not the holder");
        assert!(matches!(refused, LeaseError::WriterConflict { .. }), "{refused:?}");
        let foreign = Presented { token_hash: Some("zz".into()), epoch: None };
        let refused = book.dispatch("a", &foreign, &LeaseOp::Release, 60, false, 1_000).expect_err("foreign");
        assert!(matches!(refused, LeaseError::CapabilityRejected(_)), "{refused:?}");
        // A lease-unaware caller releases the implicit claim it drives.
        let mut book = LeaseBook::default();
        let implicit = book.dispatch("b", &bearer, &LeaseOp::Heartbeat, 0, false, 1_000).expect("implicit claim");
        assert!(implicit.implicit_claim);
        book.dispatch("b", &bearer, &LeaseOp::Release, 5, false, 1_000).expect("released");
        let next = book.dispatch("b", &bearer, &LeaseOp::Act, 6, false, 1_000).expect("a new implicit claim");
        assert_eq!(next.epoch, 2);
    }
}
