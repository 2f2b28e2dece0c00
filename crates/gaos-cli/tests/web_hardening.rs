//! Issue 26, item 7, against the real `gaos serve` and, for what a browser
//! does with the headers, Debian's Chromium:
//! - a loopback host refuses foreign `Host` names (a DNS-rebinding page
//!   could read `/bench/` and `/metrics`), `--allowed-host` widens it;
//! - every response says `X-Content-Type-Options: nosniff` and
//!   `X-Frame-Options: DENY`, the pages' CSP `frame-ancestors 'none'`, and
//!   a page of another origin cannot show the host's pages in a frame;
//! - a run's `scores.svg` is an image in the report: its `<meta refresh>`
//!   no longer navigates the visitor away.

use std::time::Duration;

mod bench_support;

use bench_support::one_episode_run;
use gaos_testkit::browser::Browser;
use gaos_testkit::http::*;
use gaos_testkit::server::{TempDir, TestServer};

const GAOS: &str = env!("CARGO_BIN_EXE_gaos");
const WAIT: Duration = Duration::from_secs(15);

/// A chart that navigates away when its markup is pasted into a page.
const HOSTILE_SVG: &str = r#"<svg xmlns="http://www.w3.org/2000/svg" width="120" height="40"><meta http-equiv="refresh" content="0;url=/healthz"/><text x="4" y="24">scores</text></svg>"#;

/// `GET path` with `Host: host`.
fn get_as(base: &str, host: &str, path: &str) -> Response {
    let request = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
    send_raw(base, request.as_bytes()).expect("a raw request")
}

fn assert_headers(what: &str, response: &Response) {
    assert_eq!(response.header("x-content-type-options"), Some("nosniff"), "{what}: {:?}", response.headers);
    assert_eq!(response.header("x-frame-options"), Some("DENY"), "{what}: {:?}", response.headers);
}

#[test]
fn a_loopback_host_answers_only_its_own_names() {
    let reports = TempDir::new("gaos-host-names");
    let server = TestServer::start_with(GAOS, &["--bench-reports", reports.path().to_str().unwrap()]);
    let base = server.base_url();
    let port = base.rsplit(':').next().unwrap();
    for path in ["/metrics", "/bench/", "/healthz", "/"] {
        let refused = get_as(base, &format!("rebound.example:{port}"), path);
        assert_error(&refused, 403, "forbidden_host");
        assert!(refused.text().contains("--allowed-host"), "{}", refused.text());
        assert_headers("a refused Host", &refused);
        for own in [format!("127.0.0.1:{port}"), format!("localhost:{port}"), format!("[::1]:{port}")] {
            assert_eq!(get_as(base, &own, path).status, 200, "{own} {path}");
        }
    }
    drop(server);
    let server = TestServer::start_with(GAOS, &["--allowed-host", "games.example"]);
    assert_eq!(get_as(server.base_url(), "games.example:80", "/metrics").status, 200, "--allowed-host widens it");
    assert_error(&get_as(server.base_url(), "rebound.example", "/metrics"), 403, "forbidden_host");
}

#[test]
fn every_answer_carries_the_security_headers() {
    let server = TestServer::start(GAOS);
    let base = server.base_url();
    for (what, response) in [
        ("a page", get(base, "/", None)),
        ("an asset", get(base, "/assets/app.css", None)),
        ("JSON", get(base, "/healthz", None)),
        ("an API error", get(base, "/v1/sessions", None)),
        ("an unknown route", get(base, "/nope", None)),
        ("a refusal before routing", get(base, &format!("/{}", "x".repeat(70 * 1024)), None)),
    ] {
        assert_headers(what, &response);
    }
    let page = get(base, "/", None);
    let csp = page.header("content-security-policy").unwrap_or_default();
    assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
}

#[test]
fn in_a_browser_no_other_origin_frames_a_page_and_a_charts_markup_runs_nothing() {
    let reports = TempDir::new("gaos-hostile-chart");
    let run = one_episode_run(GAOS, reports.path(), "run1");
    std::fs::write(run.join("scores.svg"), HOSTILE_SVG).unwrap();
    let server = TestServer::start_with(GAOS, &["--bench-reports", reports.path().to_str().unwrap()]);
    let base = server.base_url();
    let browser = Browser::start();

    // The report shows the chart as an image and stays where it is.
    browser.goto(&format!("{base}/bench/run1/"));
    browser.wait_for("#chart", WAIT);
    browser.wait_until("document.getElementById('chart').complete", WAIT);
    std::thread::sleep(Duration::from_millis(1500));
    assert!(browser.url().ends_with("/bench/run1/"), "the chart navigated the visitor to {}", browser.url());
    assert!(browser.find("#tasks").is_some(), "the report is still shown");

    // A page of another origin (here an opaque one) framing the host's home page.
    let framing =
        format!("data:text/html,<iframe id=\"victim\" src=\"{base}/\" width=\"600\" height=\"400\"></iframe>");
    browser.goto(&framing);
    let frame = browser.wait_for("#victim", WAIT);
    std::thread::sleep(Duration::from_millis(1500));
    browser.enter_frame(&frame);
    let inside =
        browser.execute("return [document.URL, document.title, document.body ? document.body.innerText : '']", vec![]);
    browser.leave_frame();
    let inside = inside.to_string();
    assert!(!inside.contains("GAOS host"), "the host's page was shown in another origin's frame: {inside}");
    assert!(inside.contains("chrome-error://"), "the browser refused to show it: {inside}");
}
