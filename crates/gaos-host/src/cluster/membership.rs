//! Cluster membership: each host keeps one row of `gaos_nodes` alive with a
//! heartbeat, and every judgement of "lapsed" is made by the database's
//! clock (`now() - heartbeat_at`), never a host's.
//!
//! A host also judges its own membership, conservatively: it counts itself
//! live only until one lease after it *sent* its last successful heartbeat
//! (measured on its monotonic clock, which keeps running while the process
//! is stopped). The database's verdict on that heartbeat can only come
//! later, so a host always stops serving from memory before any other host
//! may claim its sessions. Writes are fenced in the store regardless; this
//! keeps a paused host that wakes up from answering reads from stale memory.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use deadpool_postgres::Pool;

use super::ClusterError;

/// One host's membership.
pub(crate) struct Membership {
    pub node_id: String,
    pub advertise: String,
    pub lease: Duration,
    /// When the last heartbeat that the database acknowledged was sent.
    last_sent_ok: Mutex<Option<Instant>>,
}

impl Membership {
    pub fn new(node_id: String, advertise: String, lease: Duration) -> Self {
        Membership { node_id, advertise, lease, last_sent_ok: Mutex::new(None) }
    }

    /// Renew this host's row; returns the database's clock (ms since the
    /// Unix epoch) at the renewal.
    pub async fn heartbeat(&self, pool: &Pool) -> Result<i64, ClusterError> {
        let sent = Instant::now();
        let client = pool.get().await?;
        let row = client
            .query_one(
                "INSERT INTO gaos_nodes (node_id, url, lease_ms, heartbeat_at) VALUES ($1, $2, $3, now())
                 ON CONFLICT (node_id) DO UPDATE SET url = excluded.url, lease_ms = excluded.lease_ms,
                     heartbeat_at = now()
                 RETURNING (extract(epoch FROM now()) * 1000)::BIGINT",
                &[&self.node_id, &self.advertise, &(self.lease.as_millis() as i64)],
            )
            .await?;
        *self.last_sent_ok.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(sent);
        Ok(row.get(0))
    }

    /// Whether this host may still serve its sessions from memory (see the
    /// module documentation); a safety margin of a tenth of the lease
    /// covers clock-rate differences.
    pub fn is_live(&self) -> bool {
        let last = *self.last_sent_ok.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        last.is_some_and(|sent| sent.elapsed() < self.lease.mul_f64(0.9))
    }

    /// Leave the cluster at shutdown: the row goes, so other hosts may claim
    /// this host's sessions at once instead of after a lease.
    pub async fn leave(&self, pool: &Pool) -> Result<(), ClusterError> {
        let client = pool.get().await?;
        client.execute("DELETE FROM gaos_nodes WHERE node_id = $1", &[&self.node_id]).await?;
        Ok(())
    }
}
