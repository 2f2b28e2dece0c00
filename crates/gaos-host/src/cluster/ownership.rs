//! Who owns a session, and taking one over.
//!
//! A session row names its owner and an epoch. A host serves a session only
//! after a compare-and-set that names it owner at a new epoch (a *claim*):
//! it claims a session it created, a session whose owner's membership has
//! lapsed (judged by the database's clock), and its own sessions again
//! after a restart (a new epoch fences any stale incarnation). Every write
//! the session's actor makes carries that epoch, and the store refuses it
//! once another claim moved the row on (storage/postgres/schema.rs).

use deadpool_postgres::Pool;

use super::ClusterError;

/// Where a session's requests go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// No such session.
    Unknown,
    /// This host owns it (at `epoch`).
    Local { epoch: i64 },
    /// Another live host owns it.
    Remote { node_id: String, url: String },
}

/// A session row's owner and what the database knows of that owner.
#[derive(Debug, Clone)]
pub(crate) struct OwnerRow {
    pub owner: String,
    pub epoch: i64,
    /// The owner's advertised URL, when it has a membership row.
    pub url: Option<String>,
    /// Whether the owner's membership is live by the database's clock.
    pub live: bool,
    /// The session's stored configuration (to check its game module).
    pub config: String,
}

pub(crate) async fn owner_of(pool: &Pool, session_id: &str) -> Result<Option<OwnerRow>, ClusterError> {
    let client = pool.get().await?;
    let row = client
        .query_opt(
            "SELECT s.owner, s.epoch, n.url,
                    coalesce(now() - n.heartbeat_at < n.lease_ms * interval '1 millisecond', FALSE), s.config
             FROM gaos_sessions s LEFT JOIN gaos_nodes n ON n.node_id = s.owner
             WHERE s.id = $1",
            &[&session_id],
        )
        .await?;
    Ok(row.map(|row| OwnerRow {
        owner: row.get(0),
        epoch: row.get(1),
        url: row.get(2),
        live: row.get(3),
        config: row.get(4),
    }))
}

/// Name `node_id` owner of `session_id` at the next epoch, if the row still
/// names `owner` at `epoch` (compare-and-set). Returns the new epoch, or
/// `None` when another claim came first.
pub(crate) async fn claim(
    pool: &Pool,
    session_id: &str,
    node_id: &str,
    owner: &str,
    epoch: i64,
) -> Result<Option<i64>, ClusterError> {
    let client = pool.get().await?;
    // A batch of the old owner holds the row FOR SHARE until it commits;
    // wait for it, but not for ever (a stopped host's transaction ends after
    // its idle timeout).
    client.batch_execute("SET lock_timeout = '10s'").await?;
    let row = client
        .query_opt(
            "UPDATE gaos_sessions SET owner = $2, epoch = epoch + 1
             WHERE id = $1 AND owner = $3 AND epoch = $4
             RETURNING epoch",
            &[&session_id, &node_id, &owner, &epoch],
        )
        .await?;
    Ok(row.map(|row| row.get(0)))
}

/// Active sessions whose owner's membership lapsed (or never existed), at
/// most `limit`, for the sweep that adopts them (so their timers run again
/// without waiting for a request).
pub(crate) async fn orphans(pool: &Pool, limit: i64) -> Result<Vec<(String, String, i64)>, ClusterError> {
    let client = pool.get().await?;
    let rows = client
        .query(
            "SELECT s.id, s.owner, s.epoch FROM gaos_sessions s LEFT JOIN gaos_nodes n ON n.node_id = s.owner
             WHERE s.status IN ('active', 'terminal')
               AND (n.node_id IS NULL OR now() - n.heartbeat_at >= n.lease_ms * interval '1 millisecond')
             ORDER BY s.id LIMIT $1",
            &[&limit],
        )
        .await?;
    Ok(rows.iter().map(|row| (row.get(0), row.get(1), row.get(2))).collect())
}

/// Node ids of every live member (by the database's clock).
pub(crate) async fn live_nodes(pool: &Pool) -> Result<Vec<String>, ClusterError> {
    let client = pool.get().await?;
    let rows = client
        .query(
            "SELECT node_id FROM gaos_nodes WHERE now() - heartbeat_at < lease_ms * interval '1 millisecond'
             ORDER BY node_id",
            &[],
        )
        .await?;
    Ok(rows.iter().map(|row| row.get(0)).collect())
}

/// Sessions the row names `node_id` owner of (a restarted host takes its
/// own sessions back first).
pub(crate) async fn owned_by(pool: &Pool, node_id: &str) -> Result<Vec<(String, i64)>, ClusterError> {
    let client = pool.get().await?;
    let rows = client
        .query(
            "SELECT id, epoch FROM gaos_sessions WHERE owner = $1 AND status IN ('active', 'terminal') ORDER BY id",
            &[&node_id],
        )
        .await?;
    Ok(rows.iter().map(|row| (row.get(0), row.get(1))).collect())
}

/// The rendezvous (highest random weight) choice among `nodes` for
/// `session_id`: every host computes the same one, so the sweep spreads a
/// lapsed host's sessions over the live ones without two hosts racing for
/// each (a claim's compare-and-set settles any race that remains).
pub(crate) fn rendezvous<'n>(session_id: &str, nodes: &'n [String]) -> Option<&'n str> {
    nodes
        .iter()
        .max_by_key(|node| {
            let digest = gaos_json::sha256_hex(format!("{session_id}\u{0}{node}").as_bytes());
            u64::from_str_radix(&digest[..16], 16).unwrap_or(0)
        })
        .map(String::as_str)
}

#[cfg(test)]
mod tests {
    use super::rendezvous;

    #[test]
    fn rendezvous_is_stable_and_spreads() {
        let nodes: Vec<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
        let mut counts = std::collections::HashMap::new();
        for i in 0..300 {
            let id = format!("s-{i}");
            let chosen = rendezvous(&id, &nodes).expect("a node");
            assert_eq!(rendezvous(&id, &nodes), Some(chosen), "the same choice every time");
            *counts.entry(chosen).or_insert(0) += 1;
        }
        assert_eq!(counts.len(), 3);
        assert!(counts.values().all(|&n| n > 60), "{counts:?}");
        // Removing a node moves only its own sessions.
        let two = vec!["a".to_string(), "b".to_string()];
        for i in 0..300 {
            let id = format!("s-{i}");
            let before = rendezvous(&id, &nodes).expect("a node");
            if before != "c" {
                assert_eq!(rendezvous(&id, &two), Some(before));
            }
        }
        assert_eq!(rendezvous("x", &[]), None);
    }
}
