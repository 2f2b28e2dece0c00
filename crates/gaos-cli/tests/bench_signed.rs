//! `gaos bench run --seat-key` (issue 30): benchmark entrants with a key sign
//! their moves. Under a manifest with `submission.requireSignedSeats: true`,
//! a run without a key is refused before any episode; with the benchmarked
//! seat's key (from `gaos keygen`) every seat signs (the other seat with a
//! key derived per episode), the bundle verifies with signatures
//! `verified`, and each replay's roster holds the entrant's own public key.

use std::path::Path;
use std::process::{Command, Output};

use gaos_testkit::server::TempDir;
use serde_json::Value;

const GAOS: &str = env!("CARGO_BIN_EXE_gaos");

const MANIFEST: &str = r#"{
  "schema": "gaos.benchmark-manifest.v1",
  "benchmark": { "id": "signed-hilo", "version": "1", "adapter": "conformance/hilo" },
  "tasks": [{ "id": "default", "seeds": [3, 4], "episodes": 1, "maxSteps": 10 }],
  "scoring": { "plugin": "gaos.score.outcome", "aggregation": "mean" },
  "submission": { "requireSignedSeats": true, "requireCompleteCoverage": true }
}"#;

fn gaos(args: &[&str]) -> Output {
    Command::new(GAOS).args(args).output().expect("run gaos")
}

fn path(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

#[test]
fn entrants_sign_with_their_key_and_a_signed_seats_manifest_needs_one() {
    let dir = TempDir::new("gaos-bench-signed");
    let manifest = dir.path().join("manifest.json");
    std::fs::write(&manifest, MANIFEST).expect("write the manifest");
    let key = dir.path().join("alice.key");
    let made = gaos(&["keygen", "--seat", "alice", "--out", path(&key)]);
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    let out = dir.path().join("run");
    let run = |extra: &[&str]| {
        gaos(&[&["bench", "run", path(&manifest), "--driver", "first-legal", "--out", path(&out)], extra].concat())
    };

    // Without a key the run is refused before any episode.
    let refused = run(&[]);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("submission.requireSignedSeats") && stderr.contains("--seat-key"), "{stderr}");
    assert!(!out.join("checkpoint.json").exists(), "nothing ran");
    let wrong = run(&["--seat-key", &format!("carol={}", path(&key))]);
    assert_eq!(wrong.status.code(), Some(2), "{}", String::from_utf8_lossy(&wrong.stderr));

    // With alice's key every episode is signed and the bundle verifies.
    let signed = run(&["--seat-key", &format!("alice={}", path(&key))]);
    assert!(
        signed.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&signed.stdout),
        String::from_utf8_lossy(&signed.stderr)
    );
    let verify = gaos(&["bench", "verify", path(&out.join("bundle")), "--json"]);
    let stdout = String::from_utf8_lossy(&verify.stdout);
    assert_eq!(verify.status.code(), Some(0), "{stdout}");
    let result: Value = serde_json::from_str(stdout.trim()).expect("JSON");
    assert_eq!(result["valid"], true, "{result}");
    assert_eq!(result["facts"]["signatures"], "verified", "{result}");
    let entry: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("alice.key.pub")).expect("the .pub file"))
            .expect("a roster entry");
    for episode in ["default-seed-3-episode-0", "default-seed-4-episode-0"] {
        let replay = std::fs::read_to_string(out.join(format!("bundle/episodes/{episode}.gaos-replay.jsonl")))
            .expect("the episode's replay");
        let header: Value = serde_json::from_str(replay.lines().next().expect("a header")).expect("JSON");
        assert_eq!(header["seatKeys"][0], entry, "{episode}: alice signs with her own key");
        assert_eq!(header["seatKeys"][1]["id"], "bob");
        let verdict = gaos(&[
            "replay",
            "verify",
            "--json",
            path(&out.join(format!("bundle/episodes/{episode}.gaos-replay.jsonl"))),
        ]);
        let verdict: Value = serde_json::from_slice(&verdict.stdout).expect("JSON");
        assert_eq!(verdict["verdict"], "accepted-signed", "{verdict}");
    }
}
