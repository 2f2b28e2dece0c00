//! A thinking holder (issue 7, acceptance 3; spec/lease.md rule 3): a seat
//! whose lease lapses while it thinks is paused, so its turn deadline never
//! plays for it, and in ticks cadence the session's scheduler stops while
//! the seat is lapsed. Time is crossed with the host's test clock.

mod lease_support;

use gaos_testkit::http::*;
use gaos_testkit::server::{TempDir, TestServer};
use lease_support::*;
use serde_json::{Value, json};

const GAOS: &str = env!("CARGO_BIN_EXE_gaos");
/// The per-turn deadline.
const TURN_MS: u64 = 10_000;
/// The thinking holder's lease: shorter than a turn.
const LEASE_MS: u64 = 4_000;

fn server() -> TestServer {
    TestServer::start_with(GAOS, &["--test-clock", "--lease-min-ms", "100"])
}

fn create(base: &str, op: &str, lease_ms: u64) -> (Session, Lease) {
    let session = create_session(
        base,
        op,
        &json!({
            "game": "conformance/tictactoe",
            "level": tictactoe_level(),
            "seed": 5,
            "timeouts": {"turnMs": TURN_MS},
            "lease": {"durationMs": lease_ms},
        }),
    );
    let lease = lease_of(&session.created);
    (session, lease)
}

/// `seat` marks `cell` at the current cursor; asserts it resolved.
#[track_caller]
fn play(base: &str, session: &Session, seat: &str, lease: Option<&Lease>, cell: u64, id: &str) {
    let envelope = envelope_of(base, session, seat);
    let response = act_as(base, session, seat, lease, &submission(&envelope, seat, id, json!({"cell": cell})));
    assert_eq!(response.status, 200, "{seat} plays {cell}: {}", response.text());
    assert_eq!(response.json()["revision"].as_u64(), envelope["revision"].as_u64().map(|r| r + 1));
}

/// x wins along the top row; o answers at once, x thinks before each move.
const MOVES: [(&str, u64, &str); 5] = [("x", 0, "x0"), ("o", 3, "o0"), ("x", 1, "x1"), ("o", 4, "o1"), ("x", 2, "x2")];

#[test]
fn a_thinking_holder_lapses_past_its_turn_deadline_and_is_never_played_for() {
    let server = server();
    let (base, op) = (&server.base_url, &server.operator_token);
    let dir = TempDir::new("gaos-lease-thinking");

    // Control: with a live claim the turn deadline does play for the seat
    // (tictactoe's timeout mapper passes), so its absence below means something.
    let (control, _) = create(base, op, 30_000);
    advance_clock(base, op, TURN_MS + 1);
    let mut control_events = Vec::new();
    wait_until(std::time::Duration::from_secs(5), "the control session's turn timeout", || {
        control_events = transcript(base, op, &control).1;
        !timeouts_for(&control_events, "x").is_empty()
    });
    assert_eq!(envelope_of(base, &control, "o")["tick"]["passes"], json!(1), "x's turn was passed for it");

    // The uninterrupted run: same commands, nobody thinks.
    let (straight, straight_lease) = create(base, op, LEASE_MS);
    for (seat, cell, id) in MOVES {
        play(base, &straight, seat, (seat == "x").then_some(&straight_lease), cell, id);
    }
    finalize_and_verify(GAOS, base, dir.path(), &straight, "o", "thinking-uninterrupted");
    let straight_replay = download_replay(base, &straight, "o");

    // The thinking run: before each of its moves x lets its lease lapse and
    // its turn deadline pass (twice over), then renews and plays.
    let (session, lease) = create(base, op, LEASE_MS);
    let mut x_lapses = 0;
    for (seat, cell, id) in MOVES {
        if seat == "o" {
            play(base, &session, "o", None, cell, id);
            continue;
        }
        let cursor = envelope_of(base, &session, "x")["revision"].clone();
        advance_clock(base, op, LEASE_MS + 1);
        x_lapses += 1;
        let records = session_lease_records(base, op, &session);
        let x_expired = records.iter().filter(|r| r["event"] == json!("lease_expired") && r["seat"] == json!("x"));
        assert_eq!(x_expired.count(), x_lapses, "x's lapse is recorded eagerly: {records:?}");
        assert_eq!(lease_state(base, &session, "x", Some(&lease)), "lapsed");
        // Past the turn deadline while lapsed, then past it once more.
        advance_clock(base, op, TURN_MS);
        advance_clock(base, op, TURN_MS + 1);
        let (_, events) = transcript(base, op, &session);
        assert_eq!(timeouts_for(&events, "x"), Vec::<Value>::new(), "no timeout fires for a lapsed seat");
        let envelope = envelope_of(base, &session, "x");
        assert_eq!(envelope["revision"], cursor, "nothing was played for x");
        assert_eq!(envelope["tick"]["passes"], json!(0));
        let refused = act_as(base, &session, "x", Some(&lease), &submission(&envelope, "x", id, json!({"cell": cell})));
        assert_error(&refused, 409, "lease_expired");
        let renewed = renew(base, &session, "x", Some(&lease));
        assert_eq!(renewed.status, 200, "{}", renewed.text());
        assert_eq!(renewed.json()["state"], json!("active"));
        play(base, &session, "x", Some(&lease), cell, id);
    }
    assert_eq!(x_lapses, 3, "x lapsed before each of its moves");

    let (_, events) = transcript(base, op, &session);
    let timeouts: Vec<&Value> = events
        .iter()
        .filter(|e| {
            e["kind"] == json!("timeout") || (e["kind"] == json!("resolution") && e["cause"] == json!("timeout"))
        })
        .collect();
    assert_eq!(timeouts, Vec::<&Value>::new(), "no timeout fired in the thinking run");
    let x_events: Vec<String> = lease_records(&events)
        .iter()
        .filter(|r| r["seat"] == json!("x"))
        .map(|r| r["event"].as_str().unwrap_or("?").to_owned())
        .collect();
    assert_eq!(x_events, ["lease_expired", "lease_renewed"].repeat(3));

    finalize_and_verify(GAOS, base, dir.path(), &session, "o", "thinking");
    let replay = download_replay(base, &session, "o");
    assert!(!replay_extensions(&replay).is_empty(), "the lapses are in the replay's extension lane");
    assert_eq!(gameplay(&replay), gameplay(&straight_replay), "the gameplay equals the uninterrupted run's");
    assert_eq!(gameplay(&replay)["levels"][0]["result"]["status"], json!("won"));
}

/// Rule 3, ticks cadence: while a seat is lapsed the session's scheduler
/// stops advancing (`pausedSession: true`); renewal starts it again.
#[test]
fn a_lapse_stops_the_ticks_scheduler_until_renewal() {
    let server = server();
    let (base, op) = (&server.base_url, &server.operator_token);
    let session = create_session(
        base,
        op,
        &json!({
            "game": "conformance/race",
            "level": {"length": 1000},
            "cadence": {"mode": "ticks", "ticksPerSecond": 1},
            "lease": {"durationMs": 5_000},
        }),
    );
    let lease = lease_of(&session.created);
    let tick_of = || envelope_of(base, &session, "p1")["tick"]["tick"].as_u64().expect("the race's tick");

    // The scheduler runs on the host clock.
    let t0 = tick_of();
    advance_clock(base, op, 2_500);
    wait_until(std::time::Duration::from_secs(5), "scheduled ticks", || tick_of() >= t0 + 2);
    let heartbeat = seat_post(base, &session, "p1", "lease/heartbeat", Some(&lease), &json!({}));
    assert_eq!(heartbeat.status, 200, "{}", heartbeat.text());

    advance_clock(base, op, 6_000);
    let records = recorded_lease_events(base, op, &session, "lease_expired", 1);
    assert_eq!(
        records.last(),
        Some(
            &json!({"event": "lease_expired", "seat": "p1", "holderId": "creator", "epoch": 1, "pausedSession": true})
        )
    );
    let stopped_at = tick_of();
    advance_clock(base, op, 10_000);
    advance_clock(base, op, 10_000);
    assert_eq!(tick_of(), stopped_at, "no tick while p1 is lapsed");
    let (_, events) = transcript(base, op, &session);
    assert_eq!(events.last().map(|e| e["kind"].clone()), Some(json!("extension")), "the lapse is the last event");

    let renewed = renew(base, &session, "p1", Some(&lease));
    assert_eq!(renewed.status, 200, "{}", renewed.text());
    advance_clock(base, op, 2_500);
    wait_until(std::time::Duration::from_secs(5), "ticks after renewal", || tick_of() >= stopped_at + 2);
}

/// Rule 3: a lapse pauses the seat's clock-driven progress, so its turn
/// clock stops where it stood and runs on from there after renewal: time
/// spent lapsed never counts against the turn, and live time still does.
#[test]
fn a_lapse_stops_the_turn_clock_where_it_stood() {
    let server = server();
    let (base, op) = (&server.base_url, &server.operator_token);
    let (session, lease) = create(base, op, LEASE_MS);
    let x_timeouts = || timeouts_for(&transcript(base, op, &session).1, "x").len();

    // x's turn began at creation: LEASE_MS of it run live, then x lapses
    // and stays lapsed until shortly before the turn's original deadline.
    advance_clock(base, op, LEASE_MS + 1);
    recorded_lease_events(base, op, &session, "lease_expired", 1);
    advance_clock(base, op, TURN_MS - LEASE_MS - 1_000);
    assert_eq!(x_timeouts(), 0);
    let renewed = renew(base, &session, "x", Some(&lease));
    assert_eq!(renewed.status, 200, "{}", renewed.text());

    // TURN_MS - LEASE_MS (6 s) of the turn are left: 1.5 s + 3 s of live
    // thinking (kept live by heartbeats) stay within it...
    advance_clock(base, op, 1_500);
    assert_eq!(x_timeouts(), 0, "the time x spent lapsed does not count against its turn");
    assert_eq!(seat_post(base, &session, "x", "lease/heartbeat", Some(&lease), &json!({})).status, 200);
    advance_clock(base, op, 3_000);
    assert_eq!(x_timeouts(), 0, "4.5 s of the 6 s left are used");
    assert_eq!(seat_post(base, &session, "x", "lease/heartbeat", Some(&lease), &json!({})).status, 200);
    // ... and 2 s more exhaust it: the turn times out for the live holder.
    advance_clock(base, op, 2_000);
    wait_until(std::time::Duration::from_secs(5), "x's turn timeout", || x_timeouts() == 1);
    let envelope = envelope_of(base, &session, "o");
    assert_eq!(envelope["tick"]["passes"], json!(1), "x's turn was passed for it");
    assert_eq!(envelope["revision"], json!(1));
}
