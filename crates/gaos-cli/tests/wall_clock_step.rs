//! Monotonic time (issue 15, item 3; spec/lease.md rule 10): a +2 h step of
//! the wall clock while leases are held lapses no lease, plays no timeout
//! move and fires no burst of ticks.
//!
//! The real `gaos serve` runs under libfaketime (Debian's `faketime`
//! package; `scripts/test` installs it): `FAKETIME_TIMESTAMP_FILE` is re-read
//! on every clock reading (`FAKETIME_NO_CACHE=1`), so the test steps the
//! server's wall clock by rewriting that file after the leases were taken,
//! and `FAKETIME_DONT_FAKE_MONOTONIC=1` leaves the monotonic clock alone, as
//! an NTP step would. That the step reached the server is checked on its
//! `Date` header, which hyper takes from the wall clock.

mod lease_support;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use gaos_testkit::http::*;
use gaos_testkit::server::TempDir;
use lease_support::*;
use serde_json::json;

const GAOS: &str = env!("CARGO_BIN_EXE_gaos");
const LIBFAKETIME: &str = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";
const OPERATOR: &str = "gaos_op_wall_clock_step_test";
/// Leases and the turn deadline: far longer than the test runs in real
/// time, far shorter than the step.
const LEASE_MS: u64 = 60_000;
const TURN_MS: u64 = 60_000;
const STEP: &str = "+2h";

/// `gaos serve` under libfaketime, killed on drop.
struct FakedServer {
    child: Child,
    base: String,
}

impl Drop for FakedServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_faked(data: &Path, timestamp_file: &Path) -> FakedServer {
    let mut child = Command::new(GAOS)
        .args(["serve", "--listen", "127.0.0.1:0", "--lease-min-ms", "100", "--data"])
        .arg(data)
        .env("GAOS_OPERATOR_TOKEN", OPERATOR)
        .env("LD_PRELOAD", LIBFAKETIME)
        .env("FAKETIME_TIMESTAMP_FILE", timestamp_file)
        .env("FAKETIME_NO_CACHE", "1")
        .env("FAKETIME_DONT_FAKE_MONOTONIC", "1")
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start gaos serve");
    let stdout = child.stdout.take().expect("piped stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some(address) = line.strip_prefix("gaos serve: listening on ") {
                let _ = tx.send(address.trim().to_owned());
            }
        }
    });
    let base = rx.recv_timeout(Duration::from_secs(60)).expect("the faked server prints its address");
    FakedServer { child, base }
}

/// The server's `Date` header, as seconds since the epoch.
fn server_date(base: &str) -> i64 {
    let response = get(base, "/healthz", None);
    let date = response.header("date").expect("a Date header").to_owned();
    httpdate_seconds(&date).unwrap_or_else(|| panic!("an IMF-fixdate: {date:?}"))
}

/// `Sun, 06 Nov 1994 08:49:37 GMT` → seconds since the epoch.
fn httpdate_seconds(text: &str) -> Option<i64> {
    let parts: Vec<&str> = text.split_whitespace().collect();
    let [_, day, month, year, time, "GMT"] = parts.as_slice() else { return None };
    let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    let month = months.iter().position(|m| m == month)? as i64 + 1;
    let (day, year): (i64, i64) = (day.parse().ok()?, year.parse().ok()?);
    let hms: Vec<i64> = time.split(':').map(|p| p.parse().ok()).collect::<Option<_>>()?;
    // Days from the civil date (proleptic Gregorian).
    let (y, m) = if month <= 2 { (year - 1, month + 9) } else { (year, month - 3) };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * m + 2) / 5 + day - 1;
    let days = era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468;
    Some(days * 86_400 + hms.first()? * 3_600 + hms.get(1)? * 60 + hms.get(2)?)
}

fn real_now() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0)
}

#[test]
fn a_two_hour_wall_clock_step_lapses_no_lease_and_fires_no_timeout() {
    assert!(
        Path::new(LIBFAKETIME).exists(),
        "{LIBFAKETIME} is missing: install Debian's faketime package (scripts/test does when run as root)"
    );
    let dir = TempDir::new("gaos-wall-clock-step");
    let timestamp_file = dir.path().join("faketime");
    std::fs::write(&timestamp_file, "+0\n").expect("write the faketime file");
    let server = start_faked(&dir.path().join("data"), &timestamp_file);
    let base = server.base.as_str();
    assert!((server_date(base) - real_now()).abs() < 60, "the server starts on the real wall clock");

    // A turns session with a turn deadline: x holds the creator's claim, o
    // takes its own; it is x's turn.
    let ttt = create_session(
        base,
        OPERATOR,
        &json!({
            "game": "conformance/tictactoe",
            "level": tictactoe_level(),
            "seed": 3,
            "timeouts": {"turnMs": TURN_MS},
            "lease": {"durationMs": LEASE_MS},
        }),
    );
    let x = lease_of(&ttt.created);
    let attach = seat_post(
        base,
        &ttt,
        "o",
        "attach",
        None,
        &json!({"requestId": "o-attach", "lease": {"durationMs": LEASE_MS}}),
    );
    assert_eq!(attach.status, 200, "{}", attach.text());
    let o = lease_of(&attach.json());
    // A ticks session at 2 ticks per second.
    let race = create_session(
        base,
        OPERATOR,
        &json!({
            "game": "conformance/race",
            "level": {"length": 10_000},
            "cadence": {"mode": "ticks", "ticksPerSecond": 2},
            "lease": {"durationMs": LEASE_MS},
        }),
    );
    let race_tick = || envelope_of(base, &race, "p1")["tick"]["tick"].as_u64().expect("the race's tick");
    let tick_before = race_tick();
    let stepped_at = Instant::now();

    // Step the wall clock forward by two hours, and wait until the server
    // reads the stepped clock.
    std::fs::write(&timestamp_file, format!("{STEP}\n")).expect("step the faked clock");
    wait_until(Duration::from_secs(10), "the server's wall clock to step", || server_date(base) - real_now() > 7_000);
    // Time for the actors' timers to notice what a wall-clock host would.
    std::thread::sleep(Duration::from_millis(1_500));

    assert_eq!(lease_state(base, &ttt, "x", Some(&x)), "active", "x's 60 s lease survives the step");
    assert_eq!(lease_state(base, &ttt, "o", Some(&o)), "active", "o's 60 s lease survives the step");
    let (_, events) = transcript(base, OPERATOR, &ttt);
    assert_eq!(kinds(&lease_records(&events)).iter().filter(|k| *k == "lease_expired").count(), 0);
    assert!(timeouts_for(&events, "x").is_empty(), "no timeout move was played for x: {events:?}");
    // Ticks follow real time: at most 2 per real second since the step (plus
    // slack), not the 14,400 a two-hour jump would make due.
    let elapsed = stepped_at.elapsed().as_secs_f64();
    let ticks = race_tick() - tick_before;
    assert!(ticks as f64 <= 2.0 * elapsed + 3.0, "{ticks} ticks in {elapsed:.1} s of real time");
    let race_lease = lease_of(&race.created);
    assert_eq!(lease_state(base, &race, "p1", Some(&race_lease)), "active");

    // And play goes on under the same claims.
    let envelope = envelope_of(base, &ttt, "x");
    let played = act_as(base, &ttt, "x", Some(&x), &submission(&envelope, "x", "x0", json!({"cell": 0})));
    assert_eq!(played.status, 200, "x plays under its claim after the step: {}", played.text());
}

#[test]
fn http_dates_are_read_as_utc_seconds() {
    assert_eq!(httpdate_seconds("Sun, 06 Nov 1994 08:49:37 GMT"), Some(784_111_777));
    assert_eq!(httpdate_seconds("Tue, 01 Dec 2026 13:46:16 GMT"), Some(1_796_132_776));
    assert_eq!(httpdate_seconds("not a date"), None);
}

/// The attach receipt's `attachedAt` is host time: it moves with the test
/// clock (`--test-clock`), like every lease and deadline.
#[test]
fn attached_at_comes_from_the_host_clock() {
    let server = gaos_testkit::server::TestServer::start_with(GAOS, &["--test-clock"]);
    let (base, op) = (&server.base_url, &server.operator_token);
    let session = create_session(base, op, &json!({"game": "conformance/hilo", "policy": receipts_policy()}));
    let hour = 3_600_000;
    advance_clock(base, op, hour);
    let attached = seat_post(base, &session, "bob", "attach", None, &json!({"requestId": "later"}));
    assert_eq!(attached.status, 200, "{}", attached.text());
    let attached_at = attached.json()["receipt"]["attachedAt"].as_i64().expect("attachedAt");
    let real_ms = real_now() * 1_000;
    assert!(attached_at >= real_ms + hour as i64 - 5_000, "attachedAt {attached_at} is an hour ahead of {real_ms}");
}

/// Turn deadlines are persisted as wall-clock time: a host that was down
/// past a turn's deadline plays the timeout as soon as it is back, instead
/// of giving the seat a fresh full turn.
#[test]
fn downtime_counts_against_a_turn_deadline() {
    const TURN: u64 = 4_000;
    let mut server = gaos_testkit::server::TestServer::start(GAOS);
    let op = server.operator_token.clone();
    let session = create_session(
        &server.base_url,
        &op,
        &json!({"game": "conformance/tictactoe", "level": tictactoe_level(), "timeouts": {"turnMs": TURN}, "lease": {"durationMs": 60_000}}),
    );
    server.kill();
    std::thread::sleep(Duration::from_millis(TURN + 500));
    server.restart();
    let restarted = Instant::now();
    let base = server.base_url.clone();
    wait_until(Duration::from_millis(TURN / 2), "the overdue turn to time out after the restart", || {
        !timeouts_for(&transcript(&base, &op, &session).1, "x").is_empty()
    });
    assert!(restarted.elapsed() < Duration::from_millis(TURN), "not a fresh turn after the restart");
}
