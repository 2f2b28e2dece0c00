//! Helpers for the multi-level run tests (`tests/session_runs.rs`,
//! `tests/run_reset.rs`): JSON literals and the attachable replay-evidence
//! policy both create their runs under.

#![allow(dead_code)] // each test binary uses a different subset

use gaos_json::Value;
use gaos_runner::SessionPolicy;

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
