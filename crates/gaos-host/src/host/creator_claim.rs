//! The creator's claim at create: taken only when the create request asks
//! for one (`"lease": {}` or `{"durationMs": N}`). A claim nobody asked for
//! would lock the seat's real controller (an agent handed the seat token)
//! out with `writer_conflict` until it lapsed (issue 18, item 6).

use gaos_json::Value;

use crate::auth::token_hash;
use crate::config::SessionConfig;
use crate::error::HostError;
use crate::host_key::HostKey;
use crate::lease::LeaseBook;
use crate::wire;

/// The new session's lease book and, when a claim was asked for, the
/// `gaos.host.lease` extension of the create answer (with its token).
pub(super) fn creator_claim(
    asked: bool,
    config: &SessionConfig,
    host_key: &HostKey,
    default_ms: u64,
    now: i64,
) -> Result<(LeaseBook, Option<wire::LeaseExtension>), HostError> {
    let mut leases = LeaseBook::default();
    if !asked {
        return Ok((leases, None));
    }
    // The token derives from the host key, so a stored copy of the create
    // answer needs none (host_key.rs).
    let lease_token = host_key.create_token("gaos_lease_", &config.session_id, "");
    let holder = config
        .policy
        .value()
        .get("controller")
        .and_then(|c| c.get("id"))
        .and_then(Value::as_str)
        .unwrap_or("creator")
        .to_owned();
    let duration = config.lease_ms.unwrap_or(default_ms);
    let granted = leases
        .claim(&config.creator, &holder, &token_hash(&lease_token), duration, now)
        .map_err(|_| HostError::internal("a fresh session has no claims"))?;
    let extension = wire::LeaseExtension {
        token: Some(lease_token),
        epoch: granted.epoch,
        expires_at: now + duration as i64,
        duration_ms: duration,
    };
    Ok((leases, Some(extension)))
}
