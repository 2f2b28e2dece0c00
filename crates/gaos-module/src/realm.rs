//! Separate module state per session in one locked realm.
//!
//! A module's code can keep data between calls in module-level variables
//! and in objects only its closures reach. One engine serves many sessions,
//! so each isolated game ([`gaos_kernel::Game::isolate`]: one per session,
//! replay verification or web request) gets a [`RealmKey`] of its own, and
//! an engine runs each key's calls in that key's own instance of the module
//! graph: every file compiled and evaluated again under names only that
//! instance's imports resolve to (`realm:7:/games/duel.mjs`). What all
//! instances share, the realm's intrinsics and its global object, the
//! prelude freezes before any module code runs (`prelude.js`, `lockdown`).
//!
//! We chose instances over a QuickJS context per session (measured on the
//! 2-core machine, release build: a context with the prelude costs ~6 ms
//! and ~300 KiB, an instance of the JS counter's three files ~0.6 ms and
//! ~26 KiB) and over restoring a snapshot per call (QuickJS has none). QuickJS frees a context's modules only with the
//! context, so an engine keeps a bounded number of live instances and is
//! replaced once it has made many (see [`Instances`]).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

/// Which module instance a call runs in.
pub(crate) type RealmKey = u64;

/// The instance an engine loads first: calls of a game that was not
/// isolated (a library caller's, `kernel-bench`'s single session) and of a
/// verifier adapter.
pub(crate) const SHARED: RealmKey = 0;

/// Live instances an engine keeps; beyond this the least recently used is
/// forgotten (its realm gets a fresh instance when it calls again).
const MAX_LIVE_INSTANCES: usize = 256;

/// Instances an engine makes before it is replaced (their modules are
/// freed only with the engine's context, and each makes the next one's
/// imports and the garbage collector a little slower).
const MAX_INSTANCES_PER_ENGINE: usize = 512;

/// Instances made between two measurements of the engine's memory (a
/// measurement walks the whole heap).
const MEASURE_EVERY: usize = 32;

static NEXT_KEY: AtomicU64 = AtomicU64::new(1);

/// A realm key no other isolated game has.
pub(crate) fn fresh_key() -> RealmKey {
    NEXT_KEY.fetch_add(1, Ordering::Relaxed)
}

/// The prefix of module names in a realm other than [`SHARED`]. Resolved
/// file names are absolute paths (they start with `/`), so no import
/// specifier can name another realm's instance.
const PREFIX: &str = "realm:";

/// The name of module file `path` in `realm`'s instance.
pub(crate) fn instance_name(realm: RealmKey, path: &str) -> String {
    if realm == SHARED { path.to_owned() } else { format!("{PREFIX}{realm}:{path}") }
}

/// `name` split into its realm prefix (empty for [`SHARED`]) and the file path.
pub(crate) fn split_name(name: &str) -> (&str, &str) {
    if let Some(rest) = name.strip_prefix(PREFIX)
        && let Some((digits, _)) = rest.split_once(':')
        && !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
    {
        let cut = PREFIX.len() + digits.len() + 1;
        return name.split_at(cut);
    }
    ("", name)
}

/// One engine's module instances: which realms have one, in use order, and
/// whether the engine has made enough to be replaced.
#[derive(Debug, Default)]
pub(crate) struct Instances {
    last_used: HashMap<RealmKey, u64>,
    uses: u64,
    made: usize,
    over_memory: bool,
}

impl Instances {
    /// Note a call in `realm`; false when this engine has no instance for it.
    pub(crate) fn touch(&mut self, realm: RealmKey) -> bool {
        self.uses += 1;
        match self.last_used.get_mut(&realm) {
            Some(used) => {
                *used = self.uses;
                true
            }
            None => false,
        }
    }

    /// Record a new instance of `realm`; the realm whose instance is
    /// forgotten to make room, if any.
    pub(crate) fn add(&mut self, realm: RealmKey) -> Option<RealmKey> {
        self.made += 1;
        self.last_used.insert(realm, self.uses);
        if self.last_used.len() <= MAX_LIVE_INSTANCES {
            return None;
        }
        let oldest = self.last_used.iter().min_by_key(|(_, used)| **used).map(|(key, _)| *key)?;
        self.last_used.remove(&oldest);
        Some(oldest)
    }

    /// Whether to measure the engine's memory after the instance just made.
    pub(crate) fn measure_now(&self) -> bool {
        self.made.is_multiple_of(MEASURE_EVERY)
    }

    /// The engine's memory after an instance was made.
    pub(crate) fn note_memory(&mut self, used: usize, limit: usize) {
        self.over_memory |= used > limit / 2;
    }

    /// True once the engine should be replaced.
    pub(crate) fn spent(&self) -> bool {
        self.over_memory || self.made >= MAX_INSTANCES_PER_ENGINE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_carry_their_realm_and_nothing_else_looks_like_one() {
        assert_eq!(instance_name(SHARED, "/g/duel.mjs"), "/g/duel.mjs");
        assert_eq!(instance_name(7, "/g/duel.mjs"), "realm:7:/g/duel.mjs");
        assert_eq!(split_name("realm:7:/g/duel.mjs"), ("realm:7:", "/g/duel.mjs"));
        assert_eq!(split_name("/g/duel.mjs"), ("", "/g/duel.mjs"));
        assert_eq!(split_name("realm::/g"), ("", "realm::/g"));
        assert_eq!(split_name("realm:x:/g"), ("", "realm:x:/g"));
        assert_ne!(fresh_key(), fresh_key());
    }

    #[test]
    fn instances_are_bounded_and_an_engine_is_spent_after_many() {
        let mut instances = Instances::default();
        for key in 1..=MAX_LIVE_INSTANCES as u64 {
            assert!(!instances.touch(key));
            assert_eq!(instances.add(key), None);
        }
        assert!(instances.touch(1), "realm 1 is now the most recently used");
        assert_eq!(instances.add(10_000), Some(2), "the least recently used goes");
        assert!(!instances.spent());
        for key in 0..MAX_INSTANCES_PER_ENGINE as u64 {
            instances.add(20_000 + key);
        }
        assert!(instances.spent());
        let mut small = Instances::default();
        small.note_memory(40, 64);
        assert!(small.spent(), "past half the memory limit");
    }
}
