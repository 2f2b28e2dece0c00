//! The epochs this host claimed, and one claim at a time per session.
//!
//! Two requests for a session this host does not serve yet both find it
//! unclaimed; if each claimed it, the second claim would fence the load the
//! first one started, and under a burst of requests neither would ever
//! write. So claims of one session take turns, and a request that finds the
//! row at the epoch this host claimed serves it without claiming again.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Mutex;

use tokio::sync::{Mutex as TurnLock, MutexGuard};

/// Claim locks, shared by sessions whose ids hash alike (a bounded set:
/// a lock per session would grow with every session ever claimed).
const TURNS: usize = 64;

/// More remembered claims than this start the memory afresh: forgetting a
/// claim costs one extra claim (a new epoch) on the session's next load,
/// never a wrong write.
const MAX_REMEMBERED: usize = 100_000;

pub(super) struct Claims {
    epochs: Mutex<HashMap<String, i64>>,
    turns: Vec<TurnLock<()>>,
}

impl Default for Claims {
    fn default() -> Self {
        Claims { epochs: Mutex::new(HashMap::new()), turns: (0..TURNS).map(|_| TurnLock::new(())).collect() }
    }
}

impl Claims {
    fn epochs(&self) -> std::sync::MutexGuard<'_, HashMap<String, i64>> {
        self.epochs.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Wait for this session's turn to claim.
    pub(super) async fn turn(&self, session_id: &str) -> MutexGuard<'_, ()> {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        session_id.hash(&mut hasher);
        self.turns[(hasher.finish() % TURNS as u64) as usize].lock().await
    }

    /// The epoch this host claimed the session at, if it remembers one.
    pub(super) fn epoch(&self, session_id: &str) -> Option<i64> {
        self.epochs().get(session_id).copied()
    }

    pub(super) fn record(&self, session_id: &str, epoch: i64) {
        let mut epochs = self.epochs();
        if epochs.len() >= MAX_REMEMBERED && !epochs.contains_key(session_id) {
            epochs.clear();
        }
        epochs.insert(session_id.to_owned(), epoch);
    }

    pub(super) fn forget(&self, session_id: &str) {
        self.epochs().remove(session_id);
    }

    /// Forget every claim (this host's membership lapsed: whatever it wrote
    /// before must be fenced by a fresh claim).
    pub(super) fn clear(&self) {
        self.epochs().clear();
    }
}

#[cfg(test)]
mod tests {
    use super::Claims;

    #[test]
    fn claims_are_remembered_forgotten_and_bounded() {
        let claims = Claims::default();
        claims.record("s-1", 4);
        assert_eq!(claims.epoch("s-1"), Some(4));
        claims.record("s-1", 5);
        assert_eq!(claims.epoch("s-1"), Some(5));
        claims.forget("s-1");
        assert_eq!(claims.epoch("s-1"), None);
        for i in 0..super::MAX_REMEMBERED + 10 {
            claims.record(&format!("s-{i}"), 1);
        }
        assert!(claims.epochs().len() <= super::MAX_REMEMBERED);
        claims.clear();
        assert_eq!(claims.epoch("s-7"), None);
    }

    #[tokio::test]
    async fn a_sessions_claims_take_turns() {
        let claims = std::sync::Arc::new(Claims::default());
        let first = claims.turn("s-1").await;
        let waiting = {
            let claims = std::sync::Arc::clone(&claims);
            tokio::spawn(async move {
                let _turn = claims.turn("s-1").await;
            })
        };
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        assert!(!waiting.is_finished(), "the second claim waits for the first");
        drop(first);
        waiting.await.expect("the second claim gets its turn");
    }
}
