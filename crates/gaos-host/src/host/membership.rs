//! What the cluster asks of a host (`crate::cluster`): which sessions it
//! serves from memory, forgetting them when they may have moved, checking a
//! session's game module before claiming it, and loading a claimed one.

use std::sync::Arc;

use super::Host;
use crate::cluster::{Cluster, SessionHome};
use crate::config::SessionConfig;
use crate::error::HostError;
use crate::metrics::Metrics;

impl Host {
    /// The cluster this host is a member of (`--store postgres://…`).
    pub fn cluster(&self) -> Option<&Arc<Cluster>> {
        self.inner.options.cluster.as_ref()
    }

    /// This host's node id (`Gaos-Node`, the session owner column).
    pub fn node_id(&self) -> &str {
        &self.inner.options.node_id
    }
}

impl SessionHome for Host {
    fn serves_locally(&self, session_id: &str) -> bool {
        self.sessions_read().get(session_id).and_then(|slot| slot.get()).is_some_and(|h| !h.is_stopped())
    }

    fn forget_session(&self, session_id: &str) {
        let mut sessions = self.sessions_write();
        if sessions.remove(session_id).is_some() {
            self.inner.metrics.set_session_slots(sessions.len());
            self.inner.credentials.forget_session(session_id);
        }
    }

    fn forget_all_sessions(&self) -> usize {
        let dropped: Vec<String> = {
            let mut sessions = self.sessions_write();
            let ids = sessions.keys().cloned().collect();
            sessions.clear();
            self.inner.metrics.set_session_slots(0);
            ids
        };
        for id in &dropped {
            self.inner.credentials.forget_session(id);
        }
        dropped.len()
    }

    fn check_module_of(&self, session_id: &str, stored_config: &str) -> Result<(), HostError> {
        let Ok(config) =
            gaos_json::parse(stored_config).map_err(|e| e.to_string()).and_then(|v| SessionConfig::from_value(&v))
        else {
            // An unreadable configuration fails the load itself, with its reason.
            return Ok(());
        };
        if self.registry().get(&config.game).is_none() {
            return Err(HostError::new(
                gaos_session::ErrorCode::ModuleChanged,
                format!(
                    "session {session_id} plays {}, which this host does not serve; every host of a cluster must \
                     serve the same games and modules",
                    config.game
                ),
            ));
        }
        crate::games::check_module(self.registry(), session_id, &config.game, config.module_sha256.as_deref())
    }

    fn metrics(&self) -> &Metrics {
        &self.inner.metrics
    }

    fn load_owned<'a>(
        &'a self,
        session_id: &'a str,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), HostError>> + Send + 'a>> {
        Box::pin(async move { self.session(session_id).await.map(drop) })
    }
}
