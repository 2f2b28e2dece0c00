//! A small benchmark run on disk for the `/bench/` tests
//! (`tests/bench_reports_symlinks.rs`, `tests/web_hardening.rs`): one maze
//! episode run by the real `gaos bench run` into a reports directory.

use std::path::{Path, PathBuf};
use std::process::Command;

const MANIFEST: &str = r#"{
  "schema": "gaos.benchmark-manifest.v1",
  "benchmark": { "id": "one-episode", "version": "1", "adapter": "gaos/maze" },
  "tasks": [{ "id": "tiny", "seeds": [1], "episodes": 1, "maxSteps": 60 }],
  "scoring": { "plugin": "gaos.score.maze", "aggregation": "weighted-mean" },
  "submission": { "requireSignedSeats": false, "requireCompleteCoverage": true }
}"#;

/// Run one maze episode with `gaos` into `reports/NAME` (its output
/// directory: `bundle/`, `scores.svg`, `report.html`) and return that path.
pub fn one_episode_run(gaos: &str, reports: &Path, name: &str) -> PathBuf {
    let manifest = reports.join("manifest.json");
    std::fs::write(&manifest, MANIFEST).expect("write the manifest");
    let run = reports.join(name);
    let ran = Command::new(gaos)
        .args(["bench", "run", manifest.to_str().expect("UTF-8"), "--out", run.to_str().expect("UTF-8")])
        .output()
        .expect("gaos bench run");
    assert!(ran.status.success(), "{}", String::from_utf8_lossy(&ran.stderr));
    run
}
