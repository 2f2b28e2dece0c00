//! `gaos serve --arena-reports DIR` (issue 31): the host lists the
//! tournaments in DIR, serves each one's report (its standings the bundle's
//! own, the chart an image), and each match's link opens it in the replay
//! viewer, which re-simulates it and shows its verdict — in a real headless
//! Chromium. Paths that leave DIR, name no tournament or go through a
//! symbolic link are 404s.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use gaos_testkit::browser::Browser;
use gaos_testkit::http::get;
use gaos_testkit::server::{TempDir, TestServer};

const GAOS: &str = env!("CARGO_BIN_EXE_gaos");
const WAIT: Duration = Duration::from_secs(15);

const MANIFEST: &str = r#"{
  "schema": "gaos.arena-manifest.v1",
  "arena": {"id": "served-ladder", "version": "1", "adapter": "conformance/tictactoe"},
  "levels": [{"id": "default", "seeds": [1, 2]}],
  "entrants": [{"id": "first-legal", "driver": "first-legal"}, {"id": "random", "driver": "random"},
               {"id": "random-7", "driver": "random:7"}],
  "rating": {"bootstrap": 100, "seed": 3}
}"#;

#[test]
fn the_host_serves_a_tournaments_report_and_opens_its_matches_in_the_replay_viewer() {
    let runs = TempDir::new("gaos-arena-reports");
    let manifest = runs.path().join("manifest.json");
    std::fs::write(&manifest, MANIFEST).unwrap();
    let out = runs.path().join("ladder");
    let ran = Command::new(GAOS)
        .args(["arena", "run", manifest.to_str().unwrap(), "--out", out.to_str().unwrap(), "--json"])
        .output()
        .expect("gaos arena run");
    assert!(ran.status.success(), "{}", String::from_utf8_lossy(&ran.stderr));
    // A link to a directory outside DIR is not a tournament of DIR.
    let outside = TempDir::new("gaos-arena-outside");
    std::fs::create_dir_all(outside.path().join("bundle")).unwrap();
    std::fs::write(outside.path().join("bundle/manifest.json"), MANIFEST).unwrap();
    std::os::unix::fs::symlink(outside.path(), runs.path().join("linked")).unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("bundle/manifest.json"),
        out.join("bundle/replays/x.gaos-replay.jsonl"),
    )
    .unwrap();

    let dir = runs.path().to_str().unwrap().to_owned();
    let server = TestServer::start_with(GAOS, &["--arena-reports", &dir]);
    let base = server.base_url().to_owned();
    for path in [
        "/arena/nope/",
        "/arena/linked/",
        "/arena/linked/bundle/manifest.json",
        "/arena/..%2F/",
        "/arena/ladder/bundle/replays/..%2F..%2Fmanifest.json",
        "/arena/ladder/bundle/replays/x.gaos-replay.jsonl",
        "/arena/ladder/bundle/host/anything",
        "/arena/ladder/journal.jsonl",
    ] {
        assert_eq!(get(&base, path, None).status, 404, "{path}");
    }
    let listing = get(&base, "/arena/", None).text();
    assert!(listing.contains("/arena/ladder/") && !listing.contains("linked"), "{listing}");
    let page = get(&base, "/arena/ladder/", None);
    assert_eq!(page.status, 200, "{}", page.text());
    let csp = page.header("content-security-policy").unwrap_or_default().to_owned();
    assert!(
        csp.contains("default-src 'none'") && csp.contains("img-src data:") && !csp.contains("script-src"),
        "{csp}"
    );
    let served = page.text();
    let standings = get(&base, "/arena/ladder/bundle/standings.json", None);
    assert_eq!(standings.status, 200);
    let standings: serde_json::Value = serde_json::from_str(&standings.text()).expect("standings.json");
    let leader = standings["entrants"][0]["id"].as_str().unwrap().to_owned();
    assert!(served.contains(&format!("<th scope=\"row\">{leader}</th><td class=\"rating\">")), "{served}");
    assert!(served.contains("src=\"data:image/svg+xml;base64,") && !served.contains("<svg"), "the chart is an image");

    let browser = Browser::start();
    browser.goto(&format!("{base}/replay#token={}", server.operator_token()));
    browser.wait_for("#replay-file", WAIT);
    browser.goto(&format!("{base}/arena/"));
    browser.click(&browser.wait_for("#runs a", WAIT));
    browser.wait_for("#standings", WAIT);
    let links = browser.find_all("a.open-replay");
    assert_eq!(links.len(), 12, "one viewer link per match (3 pairings, both orders, 2 seeds)");
    let href = browser.attribute(&links[1], "href").unwrap();
    assert!(href.contains("/replay#src=/arena/ladder/bundle/replays/001-default-1-random-vs-first-legal"), "{href}");
    let screenshot = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/screenshots/arena-report.png");
    browser.screenshot(&screenshot);
    browser.click(&links[1]);
    browser.wait_until("document.getElementById('verdict').textContent.includes('accepted-unsigned')", WAIT);
    let status = browser.text(&browser.find("#status").unwrap());
    assert!(status.starts_with("conformance/tictactoe · step 0 of "), "{status}");
}
