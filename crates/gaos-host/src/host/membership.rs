//! What the cluster asks of a host (`crate::cluster`): which sessions it
//! serves from memory, forgetting them when they may have moved, checking a
//! session's game module before claiming it, and loading a claimed one.

use std::sync::Arc;

use super::Host;
use crate::actor::ActorHandle;
use crate::cluster::Cluster;
use crate::config::SessionConfig;
use crate::error::HostError;

impl Host {
    /// The cluster this host is a member of (`--store postgres://…`).
    pub fn cluster(&self) -> Option<&Arc<Cluster>> {
        self.inner.options.cluster.as_ref()
    }

    /// This host's node id (`Gaos-Node`, the session owner column).
    pub fn node_id(&self) -> &str {
        &self.inner.options.node_id
    }

    /// Whether a live actor of `session_id` runs here (loaded, and not
    /// stopped after a failed or fenced write).
    pub fn serves_locally(&self, session_id: &str) -> bool {
        self.sessions_read().get(session_id).and_then(|slot| slot.get()).is_some_and(|h| !h.is_stopped())
    }

    /// Drop this host's actor of `session_id`, if any: its session may have
    /// moved. The actor ends once no request holds its handle (a write it
    /// still tries is fenced by the store).
    pub fn forget_session(&self, session_id: &str) {
        let mut sessions = self.sessions_write();
        if sessions.remove(session_id).is_some() {
            self.inner.metrics.set_session_slots(sessions.len());
            self.inner.credentials.forget_session(session_id);
        }
    }

    /// Drop every session in memory (this host's membership lapsed).
    /// Returns how many there were.
    pub fn forget_all_sessions(&self) -> usize {
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

    /// Refuse to claim a session whose game (module) this host does not
    /// serve the same way: every host of a cluster must load the same
    /// modules, byte for byte.
    pub(crate) fn check_module_of(&self, session_id: &str, stored_config: &str) -> Result<(), HostError> {
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

    /// Load a session this host just claimed (the sweep's adoption), so
    /// its timers run.
    pub(crate) async fn load_owned(&self, session_id: &str) -> Result<ActorHandle, HostError> {
        self.session(session_id).await
    }
}
