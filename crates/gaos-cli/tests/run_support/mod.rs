//! Helpers for the multi-level run tests (`tests/session_runs.rs`,
//! `tests/run_reset.rs`): JSON literals, the attachable replay-evidence
//! policy both create their runs under, and a two-seat create.

#![allow(dead_code)] // each test binary uses a different subset

use gaos_client::SessionClient;
use gaos_client::handle::{RemoteCreated, RemoteSessionHandle};
use gaos_json::Value;
use gaos_runner::{AttachRequest, SessionPolicy};

pub fn json(text: &str) -> Value {
    gaos_json::parse(text).expect("test JSON")
}

/// Attachable, replay evidence, no evaluation or publication.
pub fn policy() -> SessionPolicy {
    SessionPolicy::from_value(&json(
        r#"{"evaluation":{"kind":"none"},"durability":{"attachable":true},
            "evidence":{"kind":"replay"},"publication":{"kind":"none"}}"#,
    ))
    .expect("policy")
}

/// Create `request` under `policy` as the operator (the creator is seat
/// `a`) and attach seat `b` with its own token.
pub async fn create_with_b(
    operator: &SessionClient,
    request: &Value,
    policy: &SessionPolicy,
) -> (RemoteCreated, RemoteSessionHandle) {
    let created = RemoteSessionHandle::create(operator, request, policy).await.expect("create");
    let b = RemoteSessionHandle::attach(
        created.seat_client("b").expect("b"),
        &created.session_id,
        &AttachRequest::new("attach-b"),
        policy,
    )
    .await
    .expect("attach b");
    (created, b)
}
