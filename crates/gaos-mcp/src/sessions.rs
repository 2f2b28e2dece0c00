//! The MCP sessions of the `/mcp` mount, bounded: at most
//! [`SessionLimits::per_token`] per bearer token and [`SessionLimits::per_host`]
//! in all, the oldest closed first, and each closed after
//! [`SessionLimits::idle`] without a request. Every tool is keyed by the
//! bearer token (the seat registry, `registry.rs`), so a client whose
//! session was closed loses nothing but the session id: its next request is
//! answered `404` and it initializes again, as the transport prescribes.
//!
//! Before this, one seat token could open 1,500 sessions in a second (+131
//! MB, each kept for rmcp's default five minutes).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::transport::streamable_http_server::session::SessionId;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

/// How many MCP sessions the mount keeps, and for how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionLimits {
    /// Sessions one bearer token may hold; a new one closes its oldest.
    pub per_token: usize,
    /// Sessions of all tokens together; a new one closes the oldest.
    pub per_host: usize,
    /// A session with no request for this long is closed.
    pub idle: Duration,
}

impl Default for SessionLimits {
    /// 4 per token, 512 in all, closed after 2 minutes without a request.
    fn default() -> Self {
        SessionLimits { per_token: 4, per_host: 512, idle: Duration::from_secs(120) }
    }
}

#[derive(Default)]
struct Book {
    /// Every session, oldest first, with the token (hash) that opened it.
    order: VecDeque<(SessionId, String)>,
    per_token: HashMap<String, usize>,
}

/// The sessions opened through the mount and the manager that holds them.
pub(crate) struct SessionBook {
    limits: SessionLimits,
    manager: Arc<LocalSessionManager>,
    book: Mutex<Book>,
}

impl SessionBook {
    /// A book over a fresh session manager whose idle keep-alive is `limits.idle`.
    pub(crate) fn new(limits: SessionLimits) -> SessionBook {
        let mut manager = LocalSessionManager::default();
        manager.session_config.keep_alive = Some(limits.idle);
        let limits = SessionLimits { per_token: limits.per_token.max(1), per_host: limits.per_host.max(1), ..limits };
        SessionBook { limits, manager: Arc::new(manager), book: Mutex::new(Book::default()) }
    }

    pub(crate) fn manager(&self) -> Arc<LocalSessionManager> {
        Arc::clone(&self.manager)
    }

    /// Note a session `token` (its hash) just opened, closing whatever the
    /// limits no longer leave room for.
    pub(crate) async fn opened(&self, token: String, id: SessionId) {
        let evicted = self.record(token, id);
        for id in evicted {
            // Closing a session that already ended (idle, DELETE) is a no-op.
            let _ = rmcp::transport::streamable_http_server::session::SessionManager::close_session(
                self.manager.as_ref(),
                &id,
            )
            .await;
        }
    }

    /// Note a session closed by its client.
    pub(crate) fn closed(&self, id: &SessionId) {
        let mut book = self.book.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(at) = book.order.iter().position(|(known, _)| known == id) {
            let (_, token) = book.order.remove(at).expect("the position exists");
            book.release(&token);
        }
    }

    /// Sessions the book holds.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.book.lock().unwrap_or_else(PoisonError::into_inner).order.len()
    }

    fn record(&self, token: String, id: SessionId) -> Vec<SessionId> {
        let mut book = self.book.lock().unwrap_or_else(PoisonError::into_inner);
        let mut evicted = Vec::new();
        if book.per_token.get(&token).copied().unwrap_or(0) >= self.limits.per_token
            && let Some(at) = book.order.iter().position(|(_, owner)| *owner == token)
        {
            let (oldest, owner) = book.order.remove(at).expect("the position exists");
            book.release(&owner);
            evicted.push(oldest);
        }
        if book.order.len() >= self.limits.per_host
            && let Some((oldest, owner)) = book.order.pop_front()
        {
            book.release(&owner);
            evicted.push(oldest);
        }
        *book.per_token.entry(token.clone()).or_default() += 1;
        book.order.push_back((id, token));
        evicted
    }
}

impl Book {
    fn release(&mut self, token: &str) {
        if let Some(count) = self.per_token.get_mut(token) {
            *count -= 1;
            if *count == 0 {
                self.per_token.remove(token);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u32) -> SessionId {
        SessionId::from(format!("s{n}"))
    }

    #[test]
    fn the_oldest_session_of_a_token_and_of_the_host_make_way() {
        let book = SessionBook::new(SessionLimits { per_token: 2, per_host: 3, idle: Duration::from_secs(1) });
        assert!(book.record("a".into(), id(1)).is_empty());
        assert!(book.record("a".into(), id(2)).is_empty());
        assert_eq!(book.record("a".into(), id(3)), vec![id(1)], "a's oldest");
        assert!(book.record("b".into(), id(4)).is_empty());
        assert_eq!(book.record("c".into(), id(5)), vec![id(2)], "the host's oldest");
        assert_eq!(book.len(), 3);
        book.closed(&id(3));
        assert_eq!(book.len(), 2);
        assert!(book.record("a".into(), id(6)).is_empty(), "a holds one again");
    }
}
