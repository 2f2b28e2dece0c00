//! `gaos serve --store`: where sessions are kept, and a host's identity in
//! a cluster of hosts on one PostgreSQL (docs/cluster.md).

use std::time::Duration;

use gaos_host::cluster::{ClusterOptions, DEFAULT_NODE_LEASE_MS};
use gaos_host::serve::StoreChoice;

/// The store flags of `gaos serve`.
#[derive(Debug, Clone, clap::Args)]
pub struct StoreArgs {
    /// Where sessions are stored. Omitted: the embedded SQLite database in
    /// --data (one host). `postgres://USER[:PASSWORD]@HOST:PORT/DB`:
    /// PostgreSQL, which several hosts share as a cluster, each session
    /// owned by one host at a time (docs/cluster.md).
    #[arg(long, env = "GAOS_STORE", value_name = "URL")]
    pub store: Option<String>,
    /// This host's id in a cluster. Default: the machine's host name and the
    /// port of --listen (`name:8899`).
    #[arg(long, value_name = "ID")]
    pub node_id: Option<String>,
    /// The URL the other hosts of a cluster reach this one at (requests for
    /// its sessions are forwarded there). Default: http:// and --listen.
    #[arg(long, value_name = "URL")]
    pub advertise: Option<String>,
    /// How long a host's cluster membership lives without a heartbeat (ms):
    /// a host silent this long (killed, stopped, cut off) loses its sessions
    /// to the others. Heartbeats go every third of it.
    #[arg(long, default_value_t = DEFAULT_NODE_LEASE_MS, value_name = "MS")]
    pub node_lease_ms: u64,
}

impl StoreArgs {
    /// The store these flags choose for a host listening on `listen`.
    pub fn choice(&self, listen: &str) -> Result<StoreChoice, String> {
        let Some(url) = self.store.as_deref().map(str::trim).filter(|u| !u.is_empty()) else {
            if self.node_id.is_some() || self.advertise.is_some() {
                return Err("--node-id and --advertise name a host of a cluster: give --store postgres://…".into());
            }
            return Ok(StoreChoice::Sqlite);
        };
        if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
            return Err(format!(
                "--store {url:?} is not a PostgreSQL URL (postgres://USER@HOST:PORT/DB); omit it for the embedded SQLite store"
            ));
        }
        if self.node_lease_ms < 300 {
            return Err("--node-lease-ms must be at least 300".into());
        }
        if let Some(id) = &self.node_id
            && (id.trim().is_empty() || id.len() > 128)
        {
            return Err("--node-id must be 1 to 128 characters".into());
        }
        let advertise = match &self.advertise {
            Some(url) if url.starts_with("http://") || url.starts_with("https://") => {
                Some(url.trim_end_matches('/').to_owned())
            }
            Some(url) => return Err(format!("--advertise {url:?} must be an http:// URL")),
            None if listen.starts_with("0.0.0.0:") || listen.starts_with("[::]:") => {
                return Err(format!(
                    "--listen {listen} is every interface: give --advertise with the address other hosts reach this one at"
                ));
            }
            None => None,
        };
        Ok(StoreChoice::Postgres(ClusterOptions {
            store_url: url.to_owned(),
            node_id: self.node_id.clone(),
            advertise,
            node_lease: Duration::from_millis(self.node_lease_ms),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(store: Option<&str>) -> StoreArgs {
        StoreArgs { store: store.map(str::to_owned), node_id: None, advertise: None, node_lease_ms: 3000 }
    }

    #[test]
    fn sqlite_is_the_default_and_cluster_flags_need_a_store() {
        assert!(matches!(args(None).choice("127.0.0.1:8899"), Ok(StoreChoice::Sqlite)));
        let mut lonely = args(None);
        lonely.node_id = Some("a".into());
        assert!(lonely.choice("127.0.0.1:8899").expect_err("needs --store").contains("--store"));
        assert!(args(Some("mysql://x")).choice("127.0.0.1:1").is_err());
    }

    #[test]
    fn a_cluster_host_gets_a_node_id_and_an_advertised_url() {
        let Ok(StoreChoice::Postgres(options)) =
            args(Some("postgres://gaos@127.0.0.1:5432/gaos")).choice("127.0.0.1:9001")
        else {
            panic!("a cluster store");
        };
        let bound: std::net::SocketAddr = "127.0.0.1:9001".parse().expect("an address");
        let (node_id, advertise) = options.identity(bound);
        assert!(node_id.ends_with(":9001"), "{node_id}");
        assert_eq!(advertise, "http://127.0.0.1:9001");
        assert!(args(Some("postgres://x@h/db")).choice("0.0.0.0:9001").expect_err("wildcard").contains("--advertise"));
    }
}
