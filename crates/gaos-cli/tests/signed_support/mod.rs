//! Helpers for the signed-play tests (`tests/signed_*.rs`): `gaos replay
//! verify --json` on a file, and one seat played through the Rust client
//! with its signing key.

#![allow(dead_code)] // each test binary uses a different subset

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use gaos_client::SessionClient;
use gaos_client::handle::RemoteSessionHandle;
use gaos_kernel::signing::{SubmissionLink, decode_chain_hash, to_base64};
use gaos_runner::signing::SeatSigningKey;
use gaos_runner::{AttachRequest, SessionHandle, SessionPolicy};
use serde_json::{Value, json};

pub const GAOS: &str = env!("CARGO_BIN_EXE_gaos");

/// `gaos replay verify --json FILE`.
pub fn verify_json(file: &Path) -> Value {
    let output = Command::new(GAOS).args(["replay", "verify", "--json"]).arg(file).output().expect("run verify");
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("verify --json: {e}: {output:?}"))
}

/// Write `replay` into `dir` and verify it.
pub fn verify_text(dir: &Path, name: &str, replay: &str) -> Value {
    let file = dir.join(format!("{name}.gaos-replay.jsonl"));
    std::fs::write(&file, replay).expect("write the replay");
    verify_json(&file)
}

/// Attach `seat` through the Rust client with `attach`, sign with `key`,
/// and play its first legal action whenever it has one until the game is
/// over (within two minutes). Returns how many moves the seat made.
pub async fn play_signed(
    base: &str,
    session_id: &str,
    seat: &str,
    token: &str,
    key: SeatSigningKey,
    attach: &AttachRequest,
) -> u64 {
    let client = SessionClient::builder(base).token(token).participant_id(seat).build().expect("a client for the seat");
    let handle = RemoteSessionHandle::attach(client, session_id, attach, &SessionPolicy::host_default())
        .await
        .unwrap_or_else(|e| panic!("attach {seat}: {e}"))
        .with_signing_key(key);
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut moves = 0;
    loop {
        assert!(Instant::now() < deadline, "the match did not end in time");
        let observation = handle.observe().await.expect("observe");
        if observation.is_done() {
            break moves;
        }
        match observation.legal_actions().first() {
            Some(command) => {
                handle.act(command.clone()).await.unwrap_or_else(|e| panic!("{seat}'s signed move: {e}"));
                moves += 1;
            }
            _ => tokio::time::sleep(Duration::from_millis(30)).await,
        }
    }
}

/// `seat`'s next submission on its chain (cursor and tick = the envelope's
/// revision), signed when `sign`, else chained only.
pub fn chained(envelope: &Value, seat: &str, id: &str, command: Value, key: &SeatSigningKey, sign: bool) -> Value {
    let mut body = gaos_testkit::http::submission(envelope, seat, id, command.clone());
    let head_text = envelope["extensions"]["gaos.session.signing"]["chainHead"].as_str().expect("a chain head");
    let head = decode_chain_hash(head_text).expect("32 bytes");
    let revision = envelope["revision"].as_u64().expect("revision");
    let canonical = gaos_json::canonical_json(&gaos_json::parse(&command.to_string()).expect("JSON"));
    let client_time = 1_000 + revision;
    let link = SubmissionLink {
        session_id: envelope["sessionId"].as_str().expect("session"),
        seat,
        submission_id: id,
        cursor: revision,
        tick: revision,
        client_time,
        canonical_command: &canonical,
        prev_chain_hash: &head,
    };
    let preimage = link.preimage().expect("a preimage");
    body["clientTime"] = json!(client_time);
    body["prevChainHash"] = json!(head_text);
    if sign {
        body["sig"] = json!(to_base64(&key.sign(&preimage)));
    }
    body
}
