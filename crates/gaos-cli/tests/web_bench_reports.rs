//! `gaos serve --bench-reports DIR` (issue 17 item 6): the host lists the
//! benchmark runs in DIR, serves each run's report (the page `gaos bench
//! run` writes, its aggregate and task scores the bundle's own), and each
//! episode's link opens it in the replay viewer, which re-simulates it and
//! shows its verdict — in a real headless Chromium. Paths that leave DIR or
//! name no run are 404s.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use gaos_testkit::browser::Browser;
use gaos_testkit::http::get;
use gaos_testkit::server::{TempDir, TestServer};

const GAOS: &str = env!("CARGO_BIN_EXE_gaos");
const WAIT: Duration = Duration::from_secs(15);

const MANIFEST: &str = r#"{
  "schema": "gaos.benchmark-manifest.v1",
  "benchmark": { "id": "served-report", "version": "1", "adapter": "gaos/maze" },
  "tasks": [
    { "id": "tiny", "seeds": [1, 2], "episodes": 1, "maxSteps": 60 },
    { "id": "small", "seeds": [11], "episodes": 1, "maxSteps": 120, "weight": 2 }
  ],
  "scoring": { "plugin": "gaos.score.maze", "aggregation": "weighted-mean" },
  "submission": { "requireSignedSeats": false, "requireCompleteCoverage": true }
}"#;

#[test]
fn the_host_serves_a_runs_report_and_opens_its_episodes_in_the_replay_viewer() {
    let runs = TempDir::new("gaos-bench-reports");
    let manifest = runs.path().join("manifest.json");
    std::fs::write(&manifest, MANIFEST).unwrap();
    let out = runs.path().join("maze-run");
    let ran = Command::new(GAOS)
        .args(["bench", "run", manifest.to_str().unwrap(), "--out", out.to_str().unwrap(), "--json"])
        .output()
        .expect("gaos bench run");
    assert!(ran.status.success(), "{}", String::from_utf8_lossy(&ran.stderr));
    let summary: serde_json::Value = serde_json::from_slice(&ran.stdout).expect("the --json summary");
    let aggregate = summary["scores"]["aggregateScore"].as_f64().expect("the run's aggregate");

    let dir = runs.path().to_str().unwrap().to_owned();
    let server = TestServer::start_with(GAOS, &["--bench-reports", &dir]);
    let base = server.base_url().to_owned();

    // Paths outside a run are not found; the report is a no-script page.
    for path in [
        "/bench/nope/",
        "/bench/..%2F/",
        "/bench/maze-run/bundle/episodes/..%2Fmanifest.json",
        "/bench/maze-run/bundle/episodes/x.gaos-replay.jsonl",
    ] {
        assert_eq!(get(&base, path, None).status, 404, "{path}");
    }
    let page = get(&base, "/bench/maze-run/", None);
    assert_eq!(page.status, 200, "{}", page.text());
    let csp = page.header("content-security-policy").unwrap_or_default().to_owned();
    assert!(csp.contains("default-src 'none'") && !csp.contains("script-src"), "{csp}");
    let served = page.text();
    let written = std::fs::read_to_string(out.join("report.html")).unwrap();
    let aggregate_of =
        |html: &str| html.split("id=\"aggregate\">").nth(1).and_then(|r| r.split('<').next()).map(str::to_owned);
    assert_eq!(aggregate_of(&served), aggregate_of(&written), "the served report carries the run's aggregate");
    assert_eq!(aggregate_of(&served), Some(format!("{aggregate:.4}")));

    let browser = Browser::start();
    // The viewer re-simulates with a token of the host, given once and kept in the tab.
    browser.goto(&format!("{base}/replay#token={}", server.operator_token()));
    browser.wait_for("#replay-file", WAIT);
    browser.goto(&format!("{base}/bench/"));
    browser.click(&browser.wait_for("#runs a", WAIT));
    browser.wait_for("#episodes", WAIT);
    let links = browser.find_all("a.open-replay");
    assert_eq!(links.len(), 3, "one viewer link per episode");
    let href = browser.attribute(&links[2], "href").unwrap();
    assert!(href.contains("/replay#src=/bench/maze-run/bundle/episodes/small-seed-11-episode-0"), "{href}");
    let screenshot = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/screenshots/bench-report.png");
    browser.execute("document.getElementById('tasks').scrollIntoView()", vec![]);
    browser.screenshot(&screenshot);
    browser.click(&links[2]);
    browser.wait_until("document.getElementById('verdict').textContent.includes('accepted-unsigned')", WAIT);
    let status = browser.text(&browser.find("#status").unwrap());
    assert!(status.starts_with("gaos/maze · step 0 of "), "{status}");
    let steps: usize = status.split(" of ").nth(1).unwrap().split_whitespace().next().unwrap().parse().unwrap();
    assert!(steps > 0, "the episode has steps: {status}");
    browser.click(&browser.find("#step-forward").unwrap());
    browser.wait_until("document.getElementById('status').textContent.includes('step 1 of')", WAIT);
}
