//! Retention (`gaos serve --retention-ms`): how long this host keeps a
//! session. A session older than that (host clock, from its creation) is
//! *expired*: every route of it answers `410 expired`, and nothing of it can
//! change again. A create whose policy names a retention policy
//! (`durability.retention {kind: "host-policy", policyId}`) must name this
//! host's, so a client learns at create what it was promised.

use gaos_json::Value;
use gaos_session::ErrorCode;

use crate::error::HostError;

/// The default `--retention-policy-id`.
pub const DEFAULT_RETENTION_POLICY_ID: &str = "gaos.host.retention.v1";

/// The host's retention setting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Retention {
    /// What `durability.retention.policyId` must say, when a policy names one.
    pub policy_id: String,
    /// A session is kept this long after its creation.
    pub max_age_ms: u64,
}

impl Retention {
    /// Whether a session created at `created_at_ms` is expired at `now_ms`.
    pub fn is_expired(&self, created_at_ms: i64, now_ms: i64) -> bool {
        now_ms.saturating_sub(created_at_ms) >= self.max_age_ms as i64
    }

    /// The answer of every route of an expired session.
    pub fn expired(session_id: &str) -> HostError {
        HostError::new(
            ErrorCode::Expired,
            format!("session {session_id} is past this host's retention and no longer served"),
        )
    }
}

/// `410 expired` for a loaded session past `retention` at `now_ms`.
pub(crate) fn refuse_expired(
    retention: Option<&Retention>,
    id: &str,
    loaded: &Result<crate::actor::ActorHandle, HostError>,
    now_ms: i64,
) -> Result<(), HostError> {
    match (loaded, retention) {
        (Ok(handle), Some(retention)) if retention.is_expired(handle.created_at_ms, now_ms) => {
            Err(Retention::expired(id))
        }
        _ => Ok(()),
    }
}

/// Check the retention a create's policy asks for against the host's
/// (`None`: the host keeps sessions for ever, which any policy may name).
pub(crate) fn check_policy(policy: &Value, retention: Option<&Retention>) -> Result<(), HostError> {
    let Some(retention) = retention else { return Ok(()) };
    let asked = policy.get("durability").and_then(|d| d.get("retention")).and_then(|r| r.get("policyId"));
    match asked.and_then(Value::as_str) {
        Some(id) if id != retention.policy_id => Err(HostError::new(
            ErrorCode::UnknownRetentionPolicy,
            format!(
                "policy.durability.retention.policyId {id:?} is not this host's retention policy {:?} (sessions are kept {} ms)",
                retention.policy_id, retention.max_age_ms
            ),
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_expires_once_its_age_reaches_the_retention() {
        let retention = Retention { policy_id: "keep-a-day".into(), max_age_ms: 1_000 };
        assert!(!retention.is_expired(5_000, 5_999));
        assert!(retention.is_expired(5_000, 6_000));
        let error = Retention::expired("s-1");
        assert_eq!((error.status.as_u16(), error.code.as_str()), (410, "expired"));
    }

    #[test]
    fn a_policy_may_name_only_the_hosts_retention_policy() {
        let retention = Retention { policy_id: "keep-a-day".into(), max_age_ms: 1_000 };
        let policy = |id: &str| {
            gaos_json::parse(&format!(r#"{{"durability":{{"retention":{{"kind":"host-policy","policyId":"{id}"}}}}}}"#))
                .expect("JSON")
        };
        assert!(check_policy(&policy("keep-a-day"), Some(&retention)).is_ok());
        let refused = check_policy(&policy("keep-for-ever"), Some(&retention)).expect_err("another policy");
        assert_eq!(refused.code, "unknown_retention_policy");
        assert!(check_policy(&policy("anything"), None).is_ok(), "a host that keeps everything keeps any promise");
        assert!(check_policy(&gaos_json::parse("{}").unwrap(), Some(&retention)).is_ok());
    }
}
