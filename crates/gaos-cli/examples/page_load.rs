//! Page load of the web pages of `gaos serve`, measured in headless Chromium
//! (issue 17 acceptance 3): each page is loaded `--runs` times and the
//! navigation timing (`loadEventEnd`, and when its content is on screen) and
//! the bytes transferred are reported as median and worst, first on an idle
//! host, then while `--load` client threads keep the host busy with moves
//! and reads.
//!
//! ```sh
//! cargo build --release -p gaos-cli && \
//! cargo run --release -p gaos-cli --example page_load -- --gaos $CARGO_TARGET_DIR/release/gaos
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use gaos_testkit::browser::Browser;
use gaos_testkit::http::{get, post};
use gaos_testkit::server::TestServer;
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(20);

struct Args {
    gaos: String,
    runs: usize,
    load: usize,
}

fn args() -> Args {
    let mut out = Args { gaos: String::new(), runs: 15, load: 4 };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().unwrap_or_else(|| panic!("{flag} needs a value"));
        match flag.as_str() {
            "--gaos" => out.gaos = value,
            "--runs" => out.runs = value.parse().expect("--runs N"),
            "--load" => out.load = value.parse().expect("--load N"),
            other => panic!("unknown flag {other} (--gaos PATH --runs N --load THREADS)"),
        }
    }
    assert!(!out.gaos.is_empty(), "--gaos PATH: the gaos binary to serve with (a release build)");
    out
}

fn create(server: &TestServer, game: &str) -> Value {
    let answer = post(server.base_url(), "/v1/sessions", Some(server.operator_token()), &json!({"game": game}));
    assert!(answer.is_success(), "{}", answer.text());
    answer.json()
}

/// One page: (label, URL, a CSS selector that means "its content is shown").
type Page = (&'static str, String, &'static str);

struct Sample {
    load_ms: f64,
    shown_ms: f64,
    bytes: f64,
}

fn measure(browser: &Browser, page: &Page, run: usize) -> Sample {
    let (_, url, ready) = page;
    // A query of its own makes every run a full navigation (the pages ignore it).
    let url = match url.split_once('#') {
        Some((path, fragment)) => format!("{path}?run={run}#{fragment}"),
        None => format!("{url}?run={run}"),
    };
    let started = Instant::now();
    browser.goto(&url);
    browser.wait_for(ready, WAIT);
    let shown_ms = started.elapsed().as_secs_f64() * 1000.0;
    let timing = browser.execute(
        "const n = performance.getEntriesByType('navigation')[0];
         const r = performance.getEntriesByType('resource').filter((e) => e.name.includes('/assets/'));
         return [n.loadEventEnd - n.startTime, n.transferSize + r.reduce((s, e) => s + e.transferSize, 0)];",
        vec![],
    );
    Sample { load_ms: timing[0].as_f64().unwrap_or(f64::NAN), shown_ms, bytes: timing[1].as_f64().unwrap_or(f64::NAN) }
}

fn stats(mut values: Vec<f64>) -> (f64, f64) {
    values.sort_by(|a, b| a.total_cmp(b));
    (values[values.len() / 2], *values.last().unwrap())
}

/// Each sample in a fresh browser: the watch and play pages hold a stream
/// open, and a page left behind may keep its connection (Chromium allows six
/// per host), which would stall the next page's assets.
fn report(label: &str, pages: &[Page], runs: usize) {
    println!("{label}");
    println!("  {:<8} {:>14} {:>14} {:>16} {:>10}", "page", "load median", "load worst", "content median", "bytes");
    for page in pages {
        let samples: Vec<Sample> = (1..=runs)
            .map(|run| {
                let browser = Browser::start();
                browser.goto("about:blank");
                measure(&browser, page, run)
            })
            .collect();
        let (load, load_worst) = stats(samples.iter().map(|s| s.load_ms).collect());
        let (shown, _) = stats(samples.iter().map(|s| s.shown_ms).collect());
        let (bytes, _) = stats(samples.iter().map(|s| s.bytes).collect());
        println!("  {:<8} {load:>11.1} ms {load_worst:>11.1} ms {shown:>13.1} ms {bytes:>10.0}", page.0);
    }
}

/// Client threads playing tictactoe over HTTP and reading ticks, flat out.
fn load(
    server: &TestServer,
    threads: usize,
    stop: &Arc<AtomicBool>,
    requests: &Arc<AtomicU64>,
) -> Vec<std::thread::JoinHandle<()>> {
    (0..threads)
        .map(|_| {
            let base = server.base_url().to_owned();
            let operator = server.operator_token().to_owned();
            let (stop, requests) = (Arc::clone(stop), Arc::clone(requests));
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let created =
                        post(&base, "/v1/sessions", Some(&operator), &json!({"game": "conformance/tictactoe"})).json();
                    let id = created["sessionId"].as_str().unwrap_or_default().to_owned();
                    let seats = created["extensions"]["gaos.host.credentials"]["seats"].clone();
                    for n in 0..9 {
                        if stop.load(Ordering::Relaxed) {
                            return;
                        }
                        let seat = if n % 2 == 0 { "x" } else { "o" };
                        let token = seats[seat].as_str().unwrap_or_default();
                        let envelope = get(&base, &format!("/v1/sessions/{id}/tick"), Some(token)).json();
                        let Some(cell) = envelope["tick"]["legalActions"].get(0).cloned() else { break };
                        let body = json!({
                            "protocol": "gaos.ticks", "protocolVersion": "1.0", "sessionId": id,
                            "tickId": envelope["tickId"], "revision": envelope["revision"],
                            "participantId": seat, "submissionId": format!("{seat}:{n}"), "command": cell,
                        });
                        post(&base, &format!("/v1/sessions/{id}/actions"), Some(token), &body);
                        requests.fetch_add(2, Ordering::Relaxed);
                    }
                }
            })
        })
        .collect()
}

fn main() {
    let args = args();
    let server = TestServer::start(&args.gaos);
    let base = server.base_url().to_owned();
    let hilo = create(&server, "conformance/hilo");
    let id = hilo["sessionId"].as_str().unwrap().to_owned();
    let creds = &hilo["extensions"]["gaos.host.credentials"];
    let alice = creds["seats"]["alice"].as_str().unwrap().to_owned();
    let spectator = creds["spectator"].as_str().unwrap().to_owned();
    let pages: Vec<Page> = vec![
        ("home", format!("{base}/#token={}", server.operator_token()), "tr[data-session]"),
        ("watch", format!("{base}/sessions/{id}#token={spectator}"), "#seat-states"),
        ("play", format!("{base}/sessions/{id}/play#token={alice}&seat=alice"), "button.action"),
        ("replay", format!("{base}/replay#token={spectator}"), "#replay-file"),
    ];
    report("idle host", &pages, args.runs);

    let stop = Arc::new(AtomicBool::new(false));
    let requests = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let workers = load(&server, args.load, &stop, &requests);
    std::thread::sleep(Duration::from_millis(500));
    report(&format!("under load ({} client threads playing tictactoe)", args.load), &pages, args.runs);
    stop.store(true, Ordering::Relaxed);
    for worker in workers {
        let _ = worker.join();
    }
    let rate = requests.load(Ordering::Relaxed) as f64 / started.elapsed().as_secs_f64();
    println!("  load: {rate:.0} HTTP requests/s to the host during the loaded runs");
}
