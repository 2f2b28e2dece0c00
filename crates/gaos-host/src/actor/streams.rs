//! Observation streams: each seat's deltas, the spectators' public frames
//! and lease events, as server-sent events (`GET .../stream`).

use std::collections::HashMap;
use std::sync::Arc;

use gaos_json::{Value, canonical_json};
use gaos_kernel::ObservationDelta;
use tokio::sync::broadcast;

use super::SessionActor;
use crate::error::HostError;
use crate::wire;

/// Items a stream buffers for a slow reader before it is told to resync.
const STREAM_BUFFER: usize = 256;

/// One server-sent event: its name (`delta`, `public`, `lease`) and data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamItem {
    pub event: &'static str,
    pub data: String,
}

/// A live observation stream: the first items, then the live channel.
pub struct Subscription {
    pub initial: Vec<Arc<StreamItem>>,
    pub live: broadcast::Receiver<Arc<StreamItem>>,
}

/// The broadcast channels of one session.
pub(super) struct Streams {
    pub seats: HashMap<String, broadcast::Sender<Arc<StreamItem>>>,
    pub spectator: broadcast::Sender<Arc<StreamItem>>,
}

impl Streams {
    pub(super) fn new(seats: &[String]) -> Self {
        Streams {
            seats: seats.iter().map(|s| (s.clone(), broadcast::channel(STREAM_BUFFER).0)).collect(),
            spectator: broadcast::channel(STREAM_BUFFER).0,
        }
    }

    /// End every open stream of the session (it was revoked): each channel
    /// is replaced, so its readers see it closed after what it already
    /// holds (the revocation's lease event).
    pub(super) fn close_all(&mut self) {
        let seats: Vec<String> = self.seats.keys().cloned().collect();
        *self = Streams::new(&seats);
    }
}

impl SessionActor {
    pub(super) fn subscribe(&self, seat: Option<&str>, after: Option<u64>) -> Result<Subscription, HostError> {
        if let Some(reason) = &self.leases.revoked {
            return Err(HostError::revoked(reason));
        }
        match seat {
            Some(seat) => {
                let tx = self
                    .streams
                    .seats
                    .get(seat)
                    .ok_or_else(|| HostError::forbidden(format!("unknown seat {seat:?}")))?;
                let live = tx.subscribe();
                let mut initial = Vec::new();
                if after != Some(self.session_transition_revision()) {
                    // Below the retention floor (a compacted kernel), or in
                    // an earlier level of a run, the reader resyncs from a
                    // full snapshot instead.
                    let snapshot = match self.level_after(after) {
                        Ok(after) => match self.kernel.snapshot(seat, after) {
                            Err(gaos_kernel::KernelError::ResyncRequired(_)) => self.kernel.snapshot(seat, None),
                            other => other,
                        },
                        Err(_) => self.kernel.snapshot(seat, None),
                    }
                    .map_err(|e| HostError::invalid_request(e.to_string()))?;
                    initial.push(self.delta_item(&snapshot));
                }
                Ok(Subscription { initial, live })
            }
            None => Ok(Subscription {
                initial: vec![Arc::new(StreamItem { event: "public", data: self.public_frame() })],
                live: self.streams.spectator.subscribe(),
            }),
        }
    }

    /// The live transition revision as streams and snapshots count it:
    /// continuing across a run's levels (each level's kernel counts from 0).
    pub(super) fn session_transition_revision(&self) -> u64 {
        self.episodes.transition_base + self.kernel.transition_revision()
    }

    /// A client's `after` (a session transition revision) as the live
    /// level's kernel counts it; `Err` with the level's first revision when
    /// it names an earlier level (the client resyncs).
    pub(super) fn level_after(&self, after: Option<u64>) -> Result<Option<u64>, u64> {
        let base = self.episodes.transition_base;
        match after {
            Some(after) if after < base => Err(base),
            after => Ok(after.map(|a| a - base)),
        }
    }

    /// A delta of the live level as a stream item, its transition revision
    /// counted for the session.
    fn delta_item(&self, delta: &ObservationDelta) -> Arc<StreamItem> {
        Arc::new(StreamItem { event: "delta", data: canonical_json(&self.session_delta(delta).to_value()) })
    }

    /// `delta` with its transition revision counted for the session (a copy
    /// only in a run's later levels).
    pub(super) fn session_delta<'a>(&self, delta: &'a ObservationDelta) -> std::borrow::Cow<'a, ObservationDelta> {
        let base = self.episodes.transition_base;
        if base == 0 {
            return std::borrow::Cow::Borrowed(delta);
        }
        let mut delta = delta.clone();
        delta.transition_revision += base;
        for rejection in &mut delta.rejections {
            rejection.transition_revision += base;
        }
        std::borrow::Cow::Owned(delta)
    }

    pub(super) fn publish(&self, deltas: &[ObservationDelta]) {
        for delta in deltas {
            if let Some(tx) = self.streams.seats.get(&delta.seat)
                && tx.receiver_count() > 0
            {
                let _ = tx.send(self.delta_item(delta));
            }
        }
        if !deltas.is_empty() && self.streams.spectator.receiver_count() > 0 {
            let _ = self.streams.spectator.send(Arc::new(StreamItem { event: "public", data: self.public_frame() }));
        }
    }

    /// A run's next level started (no transition of its own): each seat's
    /// stream gets the level's full snapshot, spectators its frame.
    pub(super) fn publish_level_start(&self) {
        for (seat, tx) in &self.streams.seats {
            if tx.receiver_count() > 0
                && let Ok(snapshot) = self.kernel.snapshot(seat, None)
            {
                let _ = tx.send(self.delta_item(&snapshot));
            }
        }
        if self.streams.spectator.receiver_count() > 0 {
            let _ = self.streams.spectator.send(Arc::new(StreamItem { event: "public", data: self.public_frame() }));
        }
    }

    fn public_frame(&self) -> String {
        canonical_json(&wire::value(&wire::PublicFrame {
            kind: "public",
            transition_revision: self.session_transition_revision(),
            tick: self.kernel.tick(),
            view: self.kernel.full_view(),
        }))
    }

    pub(super) fn publish_lease(&self, record: &Value) {
        let item = Arc::new(StreamItem { event: "lease", data: canonical_json(record) });
        for tx in self.streams.seats.values() {
            let _ = tx.send(Arc::clone(&item));
        }
        let _ = self.streams.spectator.send(item);
    }
}
