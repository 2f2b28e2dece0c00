//! State digests over the kernel's seat views (kernel spec §1.4): the one
//! definition of the preimage `{"cursor":C,"tick":T,"views":{<seat>:<view>,...}}`
//! (seats in code-point order), shared by the live kernel (views already
//! canonical), replay verification (views recomputed) and the attach
//! receipt's `stateDigest` (SHA-256 of the same text).

use gaos_json::{CanonicalSink, Fnv1a32, Value, hex_encode, write_canonical};
use sha2::{Digest, Sha256};

use crate::reducer::TickReducer;

/// The kernel state digest (§1.4): FNV-1a of
/// `{"cursor":C,"tick":T,"views":{<seat>:<view_for(state, seat)>,...}}` with
/// `sorted_seats` in code-point order.
pub fn kernel_digest<R: TickReducer + ?Sized>(
    reducer: &R,
    state: &R::State,
    sorted_seats: &[String],
    cursor: u64,
    tick: u64,
) -> u32 {
    digest_of_views(cursor, tick, sorted_seats.iter().map(|seat| (seat.as_str(), seat)), |seat, h| {
        write_canonical(&reducer.view_for(state, seat), h)
    })
}

/// FNV-1a 32 of the state preimage, each view written by `write_view`.
pub(crate) fn digest_of_views<'a, T>(
    cursor: u64,
    tick: u64,
    seats: impl IntoIterator<Item = (&'a str, T)>,
    write_view: impl FnMut(T, &mut Fnv1a32),
) -> u32 {
    let mut h = Fnv1a32::new();
    write_state_preimage(&mut h, cursor, tick, seats, write_view);
    h.finish()
}

/// Lowercase hex SHA-256 of the UTF-8 state preimage (the attach receipt's
/// `stateDigest`).
pub(crate) fn sha256_of_views<'a, T>(
    cursor: u64,
    tick: u64,
    seats: impl IntoIterator<Item = (&'a str, T)>,
    write_view: impl FnMut(T, &mut Sha256Sink),
) -> String {
    let mut sink = Sha256Sink(Sha256::new());
    write_state_preimage(&mut sink, cursor, tick, seats, write_view);
    hex_encode(&sink.0.finalize())
}

/// The UTF-8 state preimage itself, for a host that keys its own digest
/// over it (the attach receipt's `stateDigest` is an HMAC of this text).
pub(crate) fn preimage_of_views<'a, T>(
    cursor: u64,
    tick: u64,
    seats: impl IntoIterator<Item = (&'a str, T)>,
    write_view: impl FnMut(T, &mut String),
) -> String {
    let mut text = String::new();
    write_state_preimage(&mut text, cursor, tick, seats, write_view);
    text
}

/// Feeds UTF-8 text to SHA-256.
pub(crate) struct Sha256Sink(Sha256);

impl CanonicalSink for Sha256Sink {
    fn push_str(&mut self, s: &str) {
        self.0.update(s.as_bytes());
    }
}

/// Write `{"cursor":C,"tick":T,"views":{<seat>:<view>,...}}`, seats in the
/// order given.
fn write_state_preimage<'a, T, S: CanonicalSink>(
    sink: &mut S,
    cursor: u64,
    tick: u64,
    seats: impl IntoIterator<Item = (&'a str, T)>,
    mut write_view: impl FnMut(T, &mut S),
) {
    let mut num = itoa::Buffer::new();
    sink.push_str("{\"cursor\":");
    sink.push_str(num.format(cursor));
    sink.push_str(",\"tick\":");
    sink.push_str(num.format(tick));
    sink.push_str(",\"views\":{");
    for (i, (seat, view)) in seats.into_iter().enumerate() {
        if i > 0 {
            sink.push_str(",");
        }
        write_canonical(&Value::String(seat.to_owned()), sink);
        sink.push_str(":");
        write_view(view, sink);
    }
    sink.push_str("}}");
}
