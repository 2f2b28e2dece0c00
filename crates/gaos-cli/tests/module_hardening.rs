//! Issue 26, items 1, 3 and 9, through the real `gaos serve`: a game module
//! written with the mistakes the attacks used (gaos-module's
//! `tests/modules/leaky.mjs`, whose crate-level tests are `isolation.rs`).
//!
//! - Item 3: one session's seed left in a module-level variable or on
//!   `globalThis` never shows in another session's view, and a seat's
//!   `{"__proto__": ...}` fed to a deep merge fails that seat's own session
//!   instead of polluting `Object.prototype` for every session, new ones and
//!   those rehydrated after a restart.
//! - Item 1: a view that shares one array under many keys is refused while
//!   it is read out of the engine (by size, `--module-max-value-bytes`, or
//!   by the call's deadline), in bounded time and memory; the session is
//!   revoked naming module, export and limit, and nothing is persisted.
//! - Item 9: a mapped action whose id is not `Action N` is refused at the act
//!   with `illegal_command`, not at finalize with `500 internal`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use gaos_testkit::http::*;
use gaos_testkit::server::TestServer;
use serde_json::{Value, json};

const GAOS: &str = env!("CARGO_BIN_EXE_gaos");

fn leaky() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../gaos-module/tests/modules/leaky.mjs")
}

fn serve(extra: &[&str]) -> TestServer {
    let module = leaky();
    let mut args = vec!["--game", module.to_str().expect("a UTF-8 path")];
    args.extend_from_slice(extra);
    TestServer::start_with(GAOS, &args)
}

fn new_session(server: &TestServer, seed: u32) -> Session {
    create_session(server.base_url(), server.operator_token(), &json!({"game": "test/leaky", "seed": seed}))
}

/// The solo seat's view.
fn view(server: &TestServer, session: &Session) -> Value {
    tick(server.base_url(), session, session.token("solo"))["tick"].clone()
}

/// One act of the solo seat at its current window.
fn step(server: &TestServer, session: &Session, id: &str, command: Value) -> Response {
    let envelope = tick(server.base_url(), session, session.token("solo"));
    act(server.base_url(), session, "solo", &submission(&envelope, "solo", id, command))
}

#[test]
fn module_level_state_and_the_prototype_stay_with_their_session_also_after_a_restart() {
    let mut server = serve(&[]);
    let a = new_session(&server, 111);
    assert_eq!(view(&server, &a)["seedBefore"], Value::Null);
    let b = new_session(&server, 222);
    let seen = view(&server, &b);
    assert_eq!(seen["seedBefore"], Value::Null, "session a's seed reached session b's init: {seen}");
    assert_eq!(seen["globalSeed"], Value::Null, "a seed on globalThis reached another session: {seen}");
    assert_eq!(seen["lastSeed"], json!(222));
    let answer = step(&server, &a, "a-1", json!({}));
    assert_eq!(answer.status, 200, "{}", answer.text());
    assert_eq!(view(&server, &a)["lastSeed"], json!(111), "session b's seed reached session a's view");

    // The attack: a deep merge that follows "__proto__".
    let polluted = step(&server, &a, "a-2", json!({"prefs": {"__proto__": {"trusted": true}}}));
    assert_error(&polluted, 410, "revoked");
    assert!(polluted.text().contains("test/leaky"), "the failure names the module: {}", polluted.text());
    let answer = step(&server, &b, "b-1", json!({"prefs": {"colour": "red"}}));
    assert_eq!(answer.status, 200, "the other session plays on: {}", answer.text());
    assert_eq!(view(&server, &b)["trusted"], Value::Null, "Object.prototype was polluted for session b");
    let c = new_session(&server, 333);
    assert_eq!(view(&server, &c)["trusted"], Value::Null, "Object.prototype was polluted for a new session");

    // A restart rehydrates every session from its events: the refused
    // command was never stored, so nothing replays it.
    server.restart();
    for session in [&b, &c] {
        assert_eq!(view(&server, session)["trusted"], Value::Null, "polluted again after the restart");
    }
    assert_error(&get(server.base_url(), &a.path("tick"), Some(a.token("solo"))), 410, "revoked");
}

#[test]
fn a_view_sharing_one_array_is_refused_at_the_value_limit_in_bounded_time_and_memory() {
    // A call limit long enough that the size, not the clock, stops the read
    // (the test binary is a debug build).
    let server = serve(&["--module-call-ms", "5000"]);
    let session = new_session(&server, 1);
    let other = new_session(&server, 2);
    let before = server.peak_rss_kib();
    let started = Instant::now();
    // 150 keys x one 60,000-element array: ~0.5 MB in the engine, ~18 MB
    // (and 9 million values) once every reference is read out.
    let answer = step(&server, &session, "bloat", json!({"bloat": 150}));
    let took = started.elapsed();
    assert_error(&answer, 410, "revoked");
    let text = answer.text();
    for part in ["reducer.advance", "test/leaky", "view(state)", "4194304-byte value limit", "--module-max-value-bytes"]
    {
        assert!(text.contains(part), "{part:?} in {text}");
    }
    assert!(took < Duration::from_secs(4), "refused while reading, after {took:?}");
    let grown_mib = (server.peak_rss_kib().saturating_sub(before)) / 1024;
    assert!(grown_mib < 200, "the host grew by {grown_mib} MiB reading one answer");
    // Nothing of the failed transition was stored, and others play on.
    let (_, events) = transcript(server.base_url(), server.operator_token(), &session);
    assert!(events.iter().all(|e| e["kind"] != json!("resolution")), "a resolution was stored: {events:?}");
    let answer = step(&server, &other, "fine", json!({"bloat": 1}));
    assert_eq!(answer.status, 200, "{}", answer.text());
}

#[test]
fn the_value_limit_and_the_call_deadline_bound_the_read_from_the_command_line() {
    // A tighter limit refuses one 60,000-element array (~120 KB).
    let server = serve(&["--module-max-value-bytes", "100000"]);
    let session = new_session(&server, 1);
    let answer = step(&server, &session, "one", json!({"bloat": 1}));
    assert_error(&answer, 410, "revoked");
    assert!(answer.text().contains("100000-byte value limit"), "{}", answer.text());
    drop(server);

    // No size limit to speak of: the call's deadline stops the read.
    let server = serve(&["--module-call-ms", "250", "--module-max-value-bytes", "1000000000000"]);
    let session = new_session(&server, 1);
    let started = Instant::now();
    let answer = step(&server, &session, "bloat", json!({"bloat": 150}));
    assert_error(&answer, 410, "revoked");
    assert!(answer.text().contains("exceeded the 250 ms call time limit"), "{}", answer.text());
    assert!(started.elapsed() < Duration::from_secs(3), "stopped after {:?}", started.elapsed());
}

#[test]
fn a_mapped_action_that_is_not_action_n_is_refused_at_the_act_and_the_match_finalizes() {
    let server = serve(&[]);
    let base = server.base_url();
    let session = new_session(&server, 5);
    let refused = step(&server, &session, "named", json!({"named": true}));
    assert_error(&refused, 422, "illegal_command");
    let text = refused.text();
    for part in ["commandToAction", "test/leaky", "move-left", "Action N"] {
        assert!(text.contains(part), "{part:?} in {text}");
    }
    let answer = step(&server, &session, "end", json!({"end": true}));
    assert_eq!(answer.status, 200, "{}", answer.text());
    let result = post(base, &session.path("finalize"), Some(session.token("solo")), &json!({"requestId": "fin"}));
    assert_eq!(result.status, 200, "finalize: {}", result.text());
    let replay = get(base, &session.path("replay"), Some(session.token("solo")));
    assert_eq!(replay.status, 200, "{}", replay.text());
    assert!(replay.text().contains(r#""wireId":"Action 1""#), "{}", replay.text());
}
