//! Issue 18, acceptance 2: a benchmark run with an official-evaluation
//! manifest on a running `gaos serve` yields host-side scores equal to the
//! orchestrator's, and a bundle `gaos bench verify` accepts. The host holds
//! the manifest (`--manifest`), so a create that names only its digest is
//! bound too.

use std::path::Path;
use std::process::Command;

use gaos_testkit::http::{get, post};
use gaos_testkit::server::{TempDir, TestServer};
use serde_json::{Value, json};

const GAOS: &str = env!("CARGO_BIN_EXE_gaos");

const MANIFEST: &str = r#"{
  "schema": "gaos.benchmark-manifest.v1",
  "benchmark": { "id": "official-maze", "version": "1", "adapter": "gaos/maze" },
  "tasks": [
    { "id": "tiny", "seeds": [1, 2, 3], "episodes": 1, "maxSteps": 60 },
    { "id": "small", "seeds": [11], "episodes": 2, "maxSteps": 120, "weight": 2 }
  ],
  "scoring": { "plugin": "gaos.score.maze", "aggregation": "weighted-mean" },
  "submission": { "requireSignedSeats": false, "requireCompleteCoverage": true }
}"#;

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The session a bundle episode's replay was recorded in (its header names it).
fn replay_session(bundle: &Path, episode_id: &str) -> String {
    let path = bundle.join(format!("episodes/{episode_id}.gaos-replay.jsonl"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let header: Value = serde_json::from_str(text.lines().next().expect("a header line")).expect("header JSON");
    header["sessionId"].as_str().unwrap_or_else(|| panic!("the replay header names its session: {header}")).to_owned()
}

#[test]
fn an_official_benchmark_on_gaos_serve_has_host_scores_equal_to_the_orchestrators_and_verifies() {
    let scratch = TempDir::new("gaos-official-bench");
    let manifest_path = scratch.path().join("manifest.json");
    std::fs::write(&manifest_path, MANIFEST).expect("write the manifest");
    let manifest_arg = manifest_path.to_str().expect("UTF-8 path");
    let server = TestServer::start_with(GAOS, &["--manifest", manifest_arg]);
    let out = scratch.path().join("run");
    let output = Command::new(GAOS)
        .args(["bench", "run", "--json", manifest_arg, "--jobs", "2", "--host", server.base_url()])
        .args(["--out", out.to_str().expect("UTF-8")])
        .env("GAOS_OPERATOR_TOKEN", server.operator_token())
        .output()
        .expect("run gaos bench");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}\n{}\n{}", String::from_utf8_lossy(&output.stderr), server.stderr_tail());
    let summary: Value = serde_json::from_str(stdout.trim()).expect("JSON summary");
    assert_eq!(summary["status"], "complete");

    // Every episode's host-side official result: bound to this manifest,
    // verified by the host, and scored exactly as the orchestrator scored it.
    let bundle = out.join("bundle");
    let scores = read_json(&bundle.join("scores.json"));
    let episodes = scores["episodes"].as_array().expect("scored episodes");
    assert_eq!(episodes.len(), 5);
    let digest = read_json(&bundle.join("submission.json"))["manifestDigest"].clone();
    let mut nonzero = 0;
    for episode in episodes {
        let id = episode["id"].as_str().expect("episode id");
        let session = replay_session(&bundle, id);
        let answer = get(server.base_url(), &format!("/v1/sessions/{session}/result"), Some(server.operator_token()));
        assert_eq!(answer.status, 200, "{id}: {}", answer.text());
        let evaluation = &answer.json()["evaluation"];
        assert_eq!(evaluation["kind"], "official", "{id}: {evaluation}");
        assert_eq!(evaluation["manifestDigest"], digest, "{id}");
        assert_eq!(evaluation["benchmarkId"], "official-maze");
        assert_eq!(evaluation["verification"]["replay"], "verified", "{id}: {evaluation}");
        assert_eq!(evaluation["verification"]["semantics"], "verified", "{id}: {evaluation}");
        assert_eq!(evaluation["publishable"], true);
        assert_eq!(evaluation["score"], episode["score"], "{id}: the host's score is the orchestrator's");
        assert_eq!(evaluation["terminalOutcome"], episode["terminalOutcome"], "{id}");
        if episode["score"].as_f64().is_some_and(|s| s > 0.0) {
            nonzero += 1;
        }
    }
    assert!(nonzero > 0, "some maze episode scored above 0, so equal scores mean something: {scores}");

    let verify = Command::new(GAOS)
        .args(["bench", "verify", bundle.to_str().expect("UTF-8"), "--manifest", manifest_arg, "--json"])
        .output()
        .expect("run gaos bench verify");
    let report = String::from_utf8_lossy(&verify.stdout);
    assert_eq!(verify.status.code(), Some(0), "{report}");
    let report: Value = serde_json::from_str(report.trim()).expect("JSON verdict");
    assert_eq!(report["valid"], true, "{report}");

    // The host holds the manifest: a create naming only its digest is bound.
    let policy = json!({
        "evaluation": {"kind": "official", "benchmarkId": "official-maze", "benchmarkVersion": "1", "manifestDigest": digest},
        "durability": {"attachable": true}, "evidence": {"kind": "replay"}, "publication": {"kind": "none"}
    });
    let body = json!({"game": "gaos/maze", "levelId": "tiny", "seed": 2, "policy": policy});
    let created = post(server.base_url(), "/v1/sessions", Some(server.operator_token()), &body);
    assert_eq!(created.status, 201, "{}", created.text());
    let unplanned = json!({"game": "gaos/maze", "levelId": "tiny", "seed": 4, "policy": policy});
    let refused = post(server.base_url(), "/v1/sessions", Some(server.operator_token()), &unplanned);
    assert_eq!((refused.status, refused.code().as_deref()), (422, Some("not_planned")), "{}", refused.text());
    // A multi-level run is no planned episode, even of planned levels and seed.
    let run = json!({"game": "gaos/maze", "seed": 2, "policy": policy, "run": {"levels": ["tiny", "small"]}});
    let refused = post(server.base_url(), "/v1/sessions", Some(server.operator_token()), &run);
    assert_eq!((refused.status, refused.code().as_deref()), (422, Some("not_planned")), "{}", refused.text());
    assert!(refused.text().contains("multi-level run"), "{}", refused.text());
}
