//! Issue 26, item 8, through the real binary: a game module whose views
//! differ on re-simulation (`tests/modules/flaky.mjs`, a module-level counter
//! bumped by `legalActions`) is rejected by every verifier of record, and a
//! session of it that no longer rehydrates is a typed `410 revoked`, not a
//! `500 internal`.
//!
//! - `gaos replay verify --adapter` compares checkpoint digests (before, only
//!   `--strict` did);
//! - the replay viewer's `POST /v1/replays/frames` verdict rejects it;
//! - benchmark verification (`gaos bench run` verifies its bundle from disk,
//!   `gaos bench verify`) refuses it (the host's official evaluation runs the
//!   same `check_episode_replay`);
//! - after finalize, `GET /replay` (which loads the session again) answers
//!   `410 revoked` naming `rehydrate_failed`, and so does every later call.

use std::path::{Path, PathBuf};
use std::process::Command;

use gaos_testkit::http::*;
use gaos_testkit::server::{TempDir, TestServer};
use serde_json::{Value, json};

const GAOS: &str = env!("CARGO_BIN_EXE_gaos");

fn flaky() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/modules/flaky.mjs")
}

fn path_text(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 path")
}

/// One act of the solo seat at its current window (the envelope it reads
/// asks the module for legal actions, which is what makes it flaky).
fn step(base: &str, session: &Session, id: &str, command: Value) {
    let envelope = tick(base, session, session.token("solo"));
    let answer = act(base, session, "solo", &submission(&envelope, "solo", id, command));
    assert_eq!(answer.status, 200, "{}", answer.text());
}

#[test]
fn a_module_whose_views_differ_on_re_simulation_fails_every_verifier_of_record() {
    let module = flaky();
    let server = TestServer::start_with(GAOS, &["--game", path_text(&module)]);
    let base = server.base_url();
    let session = create_session(base, server.operator_token(), &json!({"game": "test/flaky", "seed": 1}));
    step(base, &session, "one", json!({}));
    step(base, &session, "two", json!({}));
    step(base, &session, "end", json!({"end": true}));
    let replay = get(base, &session.path("replay"), Some(session.token("solo")));
    assert_eq!(replay.status, 200, "the live session answers its replay: {}", replay.text());
    let dir = TempDir::new("gaos-flaky-replay");
    let file = dir.path().join("flaky.gaos-replay.jsonl");
    std::fs::write(&file, &replay.body).expect("write the replay");

    // gaos replay verify --adapter, without --strict.
    let output = Command::new(GAOS)
        .args(["replay", "verify", "--json", "--adapter", path_text(&module), path_text(&file)])
        .output()
        .expect("gaos replay verify runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let report: Value = serde_json::from_str(stdout.lines().next().unwrap_or("")).expect("a JSON report");
    assert_eq!(report["verdict"], json!("rejected"), "{report}");
    assert!(report.to_string().contains("checkpoint.digest"), "the problem is the checkpoint digest: {report}");
    assert_eq!(output.status.code(), Some(1));

    // The replay viewer's verdict.
    let frames = post_bytes(base, "/v1/replays/frames", Some(session.token("solo")), &replay.body);
    assert_eq!(frames.status, 200, "{}", frames.text());
    assert_eq!(frames.json()["verdict"], json!("rejected"), "{}", frames.text());

    // After finalize the session leaves memory; loading it again re-runs the
    // module, which does not reproduce the transcript: a typed revocation.
    let result = post(base, &session.path("finalize"), Some(session.token("solo")), &json!({"requestId": "fin"}));
    assert_eq!(result.status, 200, "{}", result.text());
    for route in ["replay", "tick", "result"] {
        let answer = get(base, &session.path(route), Some(session.token("solo")));
        assert_error(&answer, 410, "revoked");
        assert!(answer.text().contains("rehydrate_failed"), "{route}: {}", answer.text());
    }
}

#[test]
fn benchmark_verification_refuses_a_module_whose_views_differ_on_re_simulation() {
    let scratch = TempDir::new("gaos-flaky-bench");
    std::fs::copy(flaky(), scratch.path().join("flaky.mjs")).expect("copy the module");
    let manifest = scratch.path().join("manifest.json");
    let text = json!({
        "schema": "gaos.benchmark-manifest.v1",
        "benchmark": { "id": "flaky", "version": "1", "adapter": "./flaky.mjs" },
        "tasks": [{ "id": "default", "seeds": [1], "episodes": 1, "maxSteps": 20 }],
        "scoring": { "plugin": "gaos.score.outcome", "aggregation": "mean" },
        "submission": { "requireSignedSeats": false, "requireCompleteCoverage": true }
    });
    std::fs::write(&manifest, text.to_string()).expect("write the manifest");
    let out = scratch.path().join("run");
    let output = Command::new(GAOS)
        .args(["bench", "run", path_text(&manifest), "--driver", "first-legal", "--out", path_text(&out)])
        .output()
        .expect("gaos bench run runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stdout.contains("verified:       yes"), "the bundle was verified:\n{stdout}\n{stderr}");
    let bundle = out.join("bundle");
    assert!(bundle.is_dir(), "the run packed its bundle:\n{stdout}\n{stderr}");
    let verify = Command::new(GAOS)
        .args(["bench", "verify", "--json", path_text(&bundle), "--manifest", path_text(&manifest)])
        .output()
        .expect("gaos bench verify runs");
    let stdout = String::from_utf8_lossy(&verify.stdout);
    assert_eq!(verify.status.code(), Some(1), "{stdout}{}", String::from_utf8_lossy(&verify.stderr));
    let result: Value = serde_json::from_str(stdout.trim()).expect("JSON");
    assert_eq!(result["valid"], json!(false), "{result}");
    assert!(result.to_string().contains("checkpoint"), "the checkpoint digest is named: {result}");
}
