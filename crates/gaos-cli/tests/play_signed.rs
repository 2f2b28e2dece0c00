//! `gaos play --seat-key SEAT=FILE` (issue 30): a match whose seats sign,
//! alice with her `gaos keygen` key, bob with one made for the match; its
//! replay names alice's own key and verifies `accepted-signed`.

use std::process::Command;

use gaos_testkit::server::TempDir;
use serde_json::Value;

const GAOS: &str = env!("CARGO_BIN_EXE_gaos");

#[test]
fn gaos_play_signs_each_seat_with_its_key() {
    let dir = TempDir::new("gaos-play-signed");
    let key = dir.path().join("alice.key");
    let replay = dir.path().join("match.gaos-replay.jsonl");
    let made = Command::new(GAOS).args(["keygen", "--seat", "alice", "--out"]).arg(&key).output().expect("keygen");
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    let played = Command::new(GAOS)
        .args(["play", "--game", "conformance/hilo", "--seat-key"])
        .arg(format!("alice={}", key.display()))
        .arg("--out")
        .arg(&replay)
        .output()
        .expect("gaos play");
    assert!(played.status.success(), "{}", String::from_utf8_lossy(&played.stderr));
    let text = std::fs::read_to_string(&replay).expect("the replay");
    let header: Value = serde_json::from_str(text.lines().next().expect("a header")).expect("JSON");
    let entry: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("alice.key.pub")).expect(".pub")).expect("JSON");
    assert_eq!(header["seatKeys"][0], entry, "alice signs with her own key");
    let verify = Command::new(GAOS).args(["replay", "verify", "--json"]).arg(&replay).output().expect("verify");
    let verdict: Value = serde_json::from_slice(&verify.stdout).expect("JSON");
    assert_eq!(verdict["verdict"], "accepted-signed", "{verdict}");
    let unknown = Command::new(GAOS)
        .args(["play", "--game", "conformance/hilo", "--seat-key"])
        .arg(format!("carol={}", key.display()))
        .output()
        .expect("gaos play");
    let stderr = String::from_utf8_lossy(&unknown.stderr);
    assert!(!unknown.status.success() && stderr.contains("no seat \"carol\""), "{stderr}");
}
