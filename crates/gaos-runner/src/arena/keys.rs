//! Signed matches: the keys of entrants with a `seatKey`, and which key each
//! seat of a match signs with.
//!
//! A match is signed (RFC-010) when any of its entrants has a key: the
//! session's roster must name every seat, so the other seats sign too, with
//! a key derived from the first keyed seat's key and the match (the way
//! `gaos bench run --seat-key` signs seats without a key file), so a
//! resumed match signs with the same keys without a secret in the journal.
//! Only a keyed entrant's signatures say something about the entrant: that
//! the holder of its key file made its moves.

use std::collections::BTreeMap;
use std::path::Path;

use gaos_session::signing::SeatSigningKey;

use crate::arena::error::ArenaError;
use crate::arena::manifest::ArenaManifest;
use crate::arena::plan::MatchPlan;
use crate::host_seats::{SignedSeat, signed_seats};

/// The signing keys of the entrants that have a `seatKey`.
#[derive(Debug, Clone, Default)]
pub struct EntrantKeys {
    keys: BTreeMap<String, SeatSigningKey>,
}

impl EntrantKeys {
    /// Read every entrant's `seatKey` file (relative to `manifest_dir`).
    pub fn load(manifest: &ArenaManifest, manifest_dir: &Path) -> Result<Self, ArenaError> {
        let mut keys = BTreeMap::new();
        for (i, entrant) in manifest.entrants.iter().enumerate() {
            let Some(file) = &entrant.seat_key else { continue };
            let key = SeatSigningKey::read_file(&manifest_dir.join(file))
                .map_err(|e| ArenaError::Manifest(format!("entrants[{i}].seatKey: {e}")))?;
            keys.insert(entrant.id.clone(), key);
        }
        Ok(EntrantKeys { keys })
    }

    /// Every seat of `plan` (in `seats` order) with the key it signs with:
    /// its entrant's, else one derived for the match; all unsigned when
    /// none of the match's entrants has a key.
    pub(crate) fn for_match(&self, plan: &MatchPlan, seats: &[String]) -> Vec<SignedSeat> {
        let own = |seat: &str| plan.entrant(seat).and_then(|entrant| self.keys.get(entrant)).cloned();
        signed_seats(seats, own, &plan.session_id())
    }
}
