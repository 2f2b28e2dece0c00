//! The seats the `/mcp` mount drives: who an authenticated request is for
//! ([`McpCaller`], put into the request by [`crate::http`]'s
//! authentication) and the bounded per-token [`SeatRegistry`] the server
//! ([`crate::server`]) finds a call's seat in. Its own module so the HTTP
//! mount and the server both use it without using each other.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use gaos_json::sha256_hex;

use crate::remote::{LeaseMode, RemoteSeat, SeatOptions};
use crate::seat::{Attachment, SeatSession};

/// Who an authenticated `/mcp` request drives, put into the request's
/// extensions by the authentication layer.
#[derive(Clone)]
pub struct McpCaller {
    /// The session of the token.
    pub session_id: String,
    /// The seat of the token.
    pub seat: String,
    token: String,
    lease: LeaseMode,
}

impl McpCaller {
    /// The caller of an authenticated request: its token, the session and
    /// seat the token drives, and how a first attach obtains the claim.
    pub(crate) fn new(session_id: String, seat: String, token: String, lease: LeaseMode) -> Self {
        McpCaller { session_id, seat, token, lease }
    }
}

impl std::fmt::Debug for McpCaller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpCaller")
            .field("session_id", &self.session_id)
            .field("seat", &self.seat)
            .finish_non_exhaustive()
    }
}

struct Entry {
    attachment: Arc<Attachment>,
    last_used: u64,
}

/// The seats attached for bearer tokens, keyed by the token's SHA-256 and
/// bounded (least recently used first out; an evicted seat's claim is not
/// released, it lapses unless a new attach takes it over).
pub struct SeatRegistry {
    host_url: String,
    capacity: usize,
    uses: AtomicU64,
    entries: Mutex<HashMap<String, Entry>>,
}

impl std::fmt::Debug for SeatRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SeatRegistry").field("host_url", &self.host_url).field("len", &self.len()).finish()
    }
}

impl SeatRegistry {
    /// A registry attaching seats on the host at `host_url`, keeping at most
    /// `capacity` (at least 1).
    pub fn new(host_url: impl Into<String>, capacity: usize) -> Self {
        SeatRegistry {
            host_url: host_url.into(),
            capacity: capacity.max(1),
            uses: AtomicU64::new(0),
            entries: Mutex::new(HashMap::new()),
        }
    }

    /// Seats currently kept.
    pub fn len(&self) -> usize {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner).len()
    }

    /// True when no seat is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The attachment of `caller`'s token, created on first use.
    pub fn attachment(&self, caller: &McpCaller) -> Arc<Attachment> {
        let key = sha256_hex(caller.token.as_bytes());
        let now = self.uses.fetch_add(1, Ordering::Relaxed);
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(entry) = entries.get_mut(&key) {
            entry.last_used = now;
            return Arc::clone(&entry.attachment);
        }
        if entries.len() >= self.capacity
            && let Some(oldest) = entries.iter().min_by_key(|(_, e)| e.last_used).map(|(k, _)| k.clone())
        {
            entries.remove(&oldest);
        }
        let options = SeatOptions {
            host_url: self.host_url.clone(),
            session_id: caller.session_id.clone(),
            seat: caller.seat.clone(),
            seat_token: caller.token.clone(),
            lease: caller.lease.clone(),
            // The seat stays in the registry after its client went away, so
            // only driving keeps its claim (no heartbeat).
            keep_alive: false,
            signing_key: None,
        };
        let attachment = Arc::new(Attachment::new(Box::new(move || {
            let options = options.clone();
            Box::pin(async move {
                let seat = RemoteSeat::attach(options).await?;
                Ok(Arc::new(seat) as Arc<dyn SeatSession>)
            })
        })));
        entries.insert(key, Entry { attachment: Arc::clone(&attachment), last_used: now });
        attachment
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caller(token: &str) -> McpCaller {
        McpCaller {
            session_id: "s-1".into(),
            seat: "alice".into(),
            token: token.into(),
            lease: LeaseMode::Claim { duration_ms: 1000 },
        }
    }

    #[test]
    fn one_attachment_per_token_and_a_bounded_registry() {
        let registry = SeatRegistry::new("http://127.0.0.1:1", 2);
        let a = registry.attachment(&caller("token-a"));
        assert!(Arc::ptr_eq(&a, &registry.attachment(&caller("token-a"))), "a token keeps its attachment");
        let _b = registry.attachment(&caller("token-b"));
        let _ = registry.attachment(&caller("token-a")); // a is now the most recent
        let _c = registry.attachment(&caller("token-c"));
        assert_eq!(registry.len(), 2);
        assert!(Arc::ptr_eq(&a, &registry.attachment(&caller("token-a"))), "the least recently used (b) went");
    }
}
