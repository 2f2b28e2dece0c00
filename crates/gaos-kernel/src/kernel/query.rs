//! Read-only queries of the live kernel: counters, views, digests,
//! transcript and snapshots.

use std::collections::BTreeMap;
use std::sync::Arc;

use gaos_json::CanonicalSink;
use gaos_json::Value;

use super::SessionKernel;
use super::ingest::identity_key;
use super::resolve::notice;
use crate::error::KernelError;
use crate::event::{EventLog, SessionHeader, SessionTranscript};
use crate::observation::{DeltaBody, DeltaOrigin, ObservationDelta};
use crate::options::{KernelOptions, ResolvedLimits};
use crate::protocol::IntentWindow;
use crate::reducer::TickReducer;
use crate::view::GameStatus;

impl<R> SessionKernel<R>
where
    R: TickReducer,
    R::State: Clone + 'static,
{
    pub fn options(&self) -> &Arc<KernelOptions<R>> {
        &self.options
    }
    pub fn session_id(&self) -> &str {
        &self.options.session_id
    }
    pub fn limits(&self) -> &ResolvedLimits {
        &self.limits
    }
    /// The gameplay window revision.
    pub fn cursor(&self) -> u64 {
        self.live.cursor
    }
    pub fn tick(&self) -> u64 {
        self.live.tick
    }
    /// Revision of the last committed transition.
    pub fn transition_revision(&self) -> u64 {
        self.live.transition_revision
    }
    /// The open window.
    pub fn window(&self) -> &IntentWindow {
        &self.live.window
    }
    /// The reducer state (read-only).
    pub fn state(&self) -> &R::State {
        &self.live.state
    }
    /// The full (unpartitioned) view. Never send it to a seat.
    pub fn full_view(&self) -> &Value {
        &self.live.full_view
    }
    /// The full view's status (`playing`, `won`, `failed`, `ended`).
    pub fn status(&self) -> &str {
        self.game_status().as_str()
    }
    /// The full view's status, typed.
    pub fn game_status(&self) -> GameStatus {
        // Every committed view passed `facts`, so its status is valid.
        GameStatus::of_view(&self.live.full_view).unwrap_or(GameStatus::Playing)
    }
    /// True once the full view's status is no longer `playing`.
    pub fn is_terminal(&self) -> bool {
        self.game_status().is_terminal()
    }

    pub(super) fn seat_index(&self, seat: &str) -> Result<usize, KernelError> {
        self.options
            .seats
            .iter()
            .position(|s| s == seat)
            // An undeclared seat is out of range (RangeError), like the
            // reference's `observe`/`snapshot` (SCRIPT-FORMAT.md §4).
            .ok_or_else(|| KernelError::range_error(format!("unknown seat {seat:?}")))
    }

    /// `observe(seat)` with the seat as a caller passed it: anything but a
    /// declared seat's name (another type included) is a RangeError.
    pub fn observe_value(&self, seat: &Value) -> Result<Arc<Value>, KernelError> {
        self.observe(seat_name(seat)?)
    }

    /// `snapshot(seat, after)` with the arguments as a caller passed them
    /// (SCRIPT-FORMAT.md §4): an undeclared seat is a RangeError, `after`
    /// absent or `null` means 0, and an `after` that is not a non-negative
    /// integer cannot be a transition revision (RangeError).
    pub fn snapshot_value(&self, seat: &Value, after: Option<&Value>) -> Result<ObservationDelta, KernelError> {
        let seat = seat_name(seat)?;
        let after = match after {
            None | Some(Value::Null) => None,
            Some(v) => {
                Some(v.as_u64().ok_or_else(|| KernelError::range_error("after must be a non-negative integer"))?)
            }
        };
        self.snapshot(seat, after)
    }

    /// `observe(seat)`: the seat's current partitioned view.
    pub fn observe(&self, seat: &str) -> Result<Arc<Value>, KernelError> {
        Ok(Arc::clone(&self.live.seat_views[self.seat_index(seat)?].view))
    }

    /// `observeAll()`: every declared seat's view.
    pub fn observe_all(&self) -> BTreeMap<String, Arc<Value>> {
        self.options
            .seats
            .iter()
            .zip(&self.live.seat_views)
            .map(|(seat, v)| (seat.clone(), Arc::clone(&v.view)))
            .collect()
    }

    /// The canonical text of a seat's view (cached).
    pub fn observe_canonical(&self, seat: &str) -> Result<Arc<str>, KernelError> {
        Ok(Arc::clone(&self.live.seat_views[self.seat_index(seat)?].canonical))
    }

    /// The identities accepted since the retention floor, as `(participant,
    /// submission id)` in no particular order: what `compact` hands over to
    /// the `HistoryLookup`, so an embedder stores them with the checkpoint it
    /// compacts onto (and needs no per-transition index).
    pub fn accepted_since_floor(&self) -> Vec<(String, String)> {
        self.live
            .accepted
            .iter()
            .filter_map(|key| key.split_once('\u{0}'))
            .map(|(participant, submission)| (participant.to_owned(), submission.to_owned()))
            .collect()
    }

    /// Whether `(participant, submission_id)` was ever accepted (the
    /// permanent identity index): a host needs stored answers only for these.
    /// Below the retention floor the history lookup answers; when it fails
    /// the answer is `true`, so a caller looks for a stored answer rather
    /// than treating a possibly used identity as fresh.
    pub fn was_accepted(&self, participant: &str, submission_id: &str) -> bool {
        self.live.accepted.contains(&identity_key(participant, submission_id))
            || self.accepted_before_floor(participant, submission_id).unwrap_or(true)
    }

    /// Seats the open window still awaits, in window order.
    pub fn awaiting_seats(&self) -> Vec<String> {
        self.live.window.awaiting()
    }

    pub fn view_revision(&self, seat: &str) -> Result<u64, KernelError> {
        Ok(self.live.seat_views[self.seat_index(seat)?].revision)
    }

    /// `digest()`: FNV-1a of `{"cursor":C,"tick":T,"views":{...}}`.
    pub fn digest(&self) -> u32 {
        Self::kernel_digest(&self.options, &self.sorted_seats, self.live.cursor, self.live.tick, &self.live.seat_views)
    }

    /// Lowercase hex SHA-256 of
    /// `{"cursor":C,"tick":T,"views":{<seat>:<view>,...}}` over the declared
    /// seats in code-point order, each view canonical (the preimage of
    /// [`Self::digest`], hashed with SHA-256).
    ///
    /// Not for a seat: the preimage holds every seat's hidden view, so a seat
    /// can test guesses against it. A host gives a seat a digest keyed with
    /// its own secret over [`Self::attach_state_preimage`] instead.
    pub fn attach_state_digest(&self) -> String {
        let seats = self.sorted_seats.iter().map(|&index| (self.options.seats[index].as_str(), index));
        crate::digest::sha256_of_views(self.live.cursor, self.live.tick, seats, |index, sink| {
            sink.push_str(&self.live.seat_views[index].canonical)
        })
    }

    /// The text [`Self::attach_state_digest`] hashes:
    /// `{"cursor":C,"tick":T,"views":{<seat>:<view>,...}}`. The host keys its
    /// receipt's `stateDigest` over it (the kernel holds no secret and draws
    /// no randomness).
    pub fn attach_state_preimage(&self) -> String {
        let seats = self.sorted_seats.iter().map(|&index| (self.options.seats[index].as_str(), index));
        crate::digest::preimage_of_views(self.live.cursor, self.live.tick, seats, |index, sink| {
            sink.push_str(&self.live.seat_views[index].canonical)
        })
    }

    /// `sessionHeader()`.
    pub fn session_header(&self) -> SessionHeader {
        self.options.header()
    }

    /// The persisted events so far.
    pub fn events(&self) -> &EventLog {
        &self.live.events
    }

    /// `liveTranscript()`.
    pub fn live_transcript(&self) -> SessionTranscript {
        SessionTranscript { header: self.session_header(), events: self.live.events.to_vec() }
    }

    /// `snapshot(seat, afterTransitionRevision)`: a resynchronization delta
    /// with every durable rejection notice after `after` (default: the
    /// retention floor, 0 before any compaction). An `after` below the
    /// floor asks for notices the kernel no longer holds:
    /// [`KernelError::ResyncRequired`]; the client resyncs with `after`
    /// absent.
    pub fn snapshot(&self, seat: &str, after: Option<u64>) -> Result<ObservationDelta, KernelError> {
        let index = self.seat_index(seat)?;
        let floor = self.live.retention_floor;
        let after = after.unwrap_or(floor);
        if after < floor {
            return Err(KernelError::ResyncRequired(crate::error::ResyncRequired {
                requested_transition_revision: after,
                retention_floor: floor,
                current_transition_revision: self.live.transition_revision,
            }));
        }
        if after > self.live.transition_revision {
            return Err(KernelError::range_error(format!(
                "afterTransitionRevision {after} is beyond the live transition revision {}",
                self.live.transition_revision
            )));
        }
        let sv = &self.live.seat_views[index];
        let rejections =
            self.live.rejections.iter().filter(|r| r.transition_revision > after).map(|r| notice(seat, r)).collect();
        Ok(ObservationDelta {
            seat: seat.into(),
            scope_id: seat.into(),
            transition_revision: self.live.transition_revision,
            view_revision: sv.revision,
            tick: self.live.tick,
            codec: "v2".into(),
            origin: DeltaOrigin::Snapshot,
            acknowledgements: Vec::new(),
            rejections,
            body: DeltaBody::Snapshot { view: Arc::clone(&sv.view) },
            view_digest: sv.digest,
        })
    }
}

/// A seat argument's name; a value that is not a string names no declared
/// seat (RangeError, like an undeclared one).
fn seat_name(seat: &Value) -> Result<&str, KernelError> {
    seat.as_str().ok_or_else(|| KernelError::range_error(format!("unknown seat {}", gaos_json::canonical_json(seat))))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use gaos_json::{Value, canonical_json, obj, sha256_hex};

    use crate::action::SubmittedAction;
    use crate::error::GameError;
    use crate::event::SeedPolicy;
    use crate::game::GameRef;
    use crate::kernel::SessionKernel;
    use crate::options::{Cadence, HostTime, KernelOptions, SessionLimits};
    use crate::reducer::TickReducer;

    /// Each seat sees its own name and the round; seats are declared out of
    /// code-point order so the digest must sort them.
    struct PerSeat;

    impl TickReducer for PerSeat {
        type State = u64;
        fn init(&self, _level: &Value, _seed: u32) -> Result<u64, GameError> {
            Ok(0)
        }
        fn advance(&self, round: u64, _inputs: &[SubmittedAction]) -> Result<u64, GameError> {
            Ok(round + 1)
        }
        fn view(&self, round: &u64) -> Value {
            obj! { "status" => "playing", "hud" => obj! { "actionsUsed" => *round as u32 } }.into()
        }
        fn view_for(&self, round: &u64, seat: &str) -> Value {
            obj! { "status" => "playing", "seat" => seat, "round" => *round as u32, "hud" => obj! { "actionsUsed" => *round as u32 } }
                .into()
        }
        fn has_view_for(&self) -> bool {
            true
        }
    }

    fn kernel() -> SessionKernel<PerSeat> {
        SessionKernel::new(KernelOptions {
            session_id: "s".into(),
            game: GameRef::conventional("tests/state-digest"),
            level_id: "only".into(),
            level_version: None,
            reducer: PerSeat,
            level: Value::Null,
            seed: 0,
            seed_policy: SeedPolicy::Explicit,
            seats: vec!["red".into(), "blue".into(), "Zed".into()],
            cadence: Cadence::Ticks(crate::protocol::TickRate::new(10.0).expect("a valid rate")),
            host_time: HostTime::None,
            dmath: None,
            command_to_action: Arc::new(|_, _| Ok(SubmittedAction::new("Action 1"))),
            timeout_to_action: None,
            limits: SessionLimits::default(),
            state_isolation: None,
            signing: None,
            timeout_policy: None,
        })
        .expect("valid options")
    }

    /// The preimage the host built by hand before the kernel owned it.
    fn hand_built(kernel: &SessionKernel<PerSeat>) -> String {
        let mut preimage = format!("{{\"cursor\":{},\"tick\":{},\"views\":{{", kernel.cursor(), kernel.tick());
        let mut seats = kernel.options().seats.clone();
        seats.sort();
        for (i, seat) in seats.iter().enumerate() {
            if i > 0 {
                preimage.push(',');
            }
            preimage.push_str(&canonical_json(&Value::String(seat.clone())));
            preimage.push(':');
            preimage.push_str(&kernel.observe_canonical(seat).expect("declared seat"));
        }
        preimage.push_str("}}");
        sha256_hex(preimage.as_bytes())
    }

    #[test]
    fn attach_state_digest_is_sha256_of_the_sorted_seat_views() {
        let mut kernel = kernel();
        assert_eq!(kernel.attach_state_digest(), hand_built(&kernel));
        let pinned = sha256_hex(
            concat!(
                r#"{"cursor":0,"tick":0,"views":{"#,
                r#""Zed":{"hud":{"actionsUsed":0},"round":0,"seat":"Zed","status":"playing"},"#,
                r#""blue":{"hud":{"actionsUsed":0},"round":0,"seat":"blue","status":"playing"},"#,
                r#""red":{"hud":{"actionsUsed":0},"round":0,"seat":"red","status":"playing"}}}"#
            )
            .as_bytes(),
        );
        assert_eq!(kernel.attach_state_digest(), pinned);
        assert_eq!(sha256_hex(kernel.attach_state_preimage().as_bytes()), pinned, "the digest hashes the preimage");
        let advance = kernel.prepare_advance(Some(1.0)).expect("two ticks are due");
        kernel.apply_now(advance).expect("commits");
        assert_eq!(kernel.cursor(), 2);
        assert_eq!(kernel.attach_state_digest(), hand_built(&kernel));
        assert_ne!(kernel.attach_state_digest(), pinned);
    }
}
