//! `gaos arena run --host A,B`: a tournament on two running hosts that share
//! an operator token (as a cluster's do), match i on host i mod 2, killed
//! with SIGKILL part-way and resumed there; its standings are the same as an
//! in-process run's (the hosts name their sessions, so replays differ, but
//! every result and rating follows from the seeds and the drivers).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use gaos_testkit::http::get;
use gaos_testkit::kill::kill_when;
use gaos_testkit::server::{TempDir, TestServer};
use serde_json::Value;

const GAOS: &str = env!("CARGO_BIN_EXE_gaos");

const MANIFEST: &str = r#"{
  "schema": "gaos.arena-manifest.v1",
  "arena": {"id": "two-hosts", "version": "1", "adapter": "conformance/hilo"},
  "levels": [{"id": "default", "seeds": [1, 2, 3, 4]}, {"id": "long", "seeds": [9]}],
  "entrants": [{"id": "random", "driver": "random"}, {"id": "first", "driver": "first-legal"},
               {"id": "seven", "driver": "random:7"}],
  "rating": {"bootstrap": 50, "seed": 5}
}"#;

/// A host whose operator token is `token`.
fn host(token: &str) -> (TempDir, TestServer) {
    let data = TempDir::new("gaos-arena-host");
    std::fs::write(data.path().join("operator-token"), format!("{token}\n")).expect("the token file");
    let server = TestServer::start_in(GAOS, data.path(), &[]);
    (data, server)
}

fn completed(journal: &Path) -> usize {
    std::fs::read_to_string(journal).unwrap_or_default().lines().filter(|l| l.starts_with("{\"completed\"")).count()
}

fn summary(output: std::process::Output) -> Value {
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_str(stdout.trim()).expect("the --json summary")
}

#[test]
fn a_tournament_spreads_over_hosts_and_resumes_there() {
    let token = "gaos_op_shared-by-the-cluster";
    let (_a_data, a) = host(token);
    let (_b_data, b) = host(token);
    let scratch = TempDir::new("gaos-arena-hosts");
    let manifest = scratch.path().join("arena.json");
    std::fs::write(&manifest, MANIFEST).unwrap();
    let manifest = manifest.to_str().unwrap();
    let hosts = format!("{},{}", a.base_url(), b.base_url());
    let out: PathBuf = scratch.path().join("remote");
    let args = ["arena", "run", manifest, "--out", out.to_str().unwrap(), "--host", &hosts, "--jobs", "2", "--json"];

    let mut child = Command::new(GAOS)
        .args(args)
        .env("GAOS_OPERATOR_TOKEN", token)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn gaos arena run");
    let journal = out.join("journal.jsonl");
    kill_when(&mut child, || completed(&journal) >= 3, Duration::from_secs(120), "the tournament");
    let kept = completed(&out.join("journal.jsonl"));
    assert!(kept < 30, "killed part-way");

    let resumed = summary(
        Command::new(GAOS).args(args).arg("--resume").env("GAOS_OPERATOR_TOKEN", token).output().expect("resume"),
    );
    assert_eq!(resumed["verified"], true, "{resumed}");
    assert_eq!(resumed["matches"], 30);
    assert_eq!(resumed["resumed"]["kept"], kept);
    assert!(!out.join("host").exists(), "a run on hosts keeps no host of its own");
    // Match i went to host i mod 2: fifteen finalized sessions each (a session
    // created just before the kill, and not yet journaled, is left unplayed).
    for server in [&a, &b] {
        let listing = get(server.base_url(), "/v1/sessions", Some(token));
        assert_eq!(listing.status, 200);
        let sessions: Value = serde_json::from_str(&listing.text()).expect("JSON");
        let finalized = sessions["sessions"].as_array().into_iter().flatten().filter(|s| s["status"] == "finalized");
        assert_eq!(finalized.count(), 15, "{sessions}");
    }

    let local = scratch.path().join("local");
    let reference = summary(
        Command::new(GAOS)
            .args(["arena", "run", manifest, "--out", local.to_str().unwrap(), "--json"])
            .output()
            .unwrap(),
    );
    assert_eq!(resumed["standings"], reference["standings"], "the same results and ratings on hosts and in process");
    assert_ne!(resumed["contentDigest"], reference["contentDigest"], "the hosts named the sessions");
    let verify = Command::new(GAOS).args(["arena", "verify", out.to_str().unwrap(), "--manifest", manifest]).output();
    assert_eq!(verify.expect("verify").status.code(), Some(0));
}
