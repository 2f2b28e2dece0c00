//! Acceptance of the MCP server with a real MCP client that is not ours:
//! the official Python SDK (PyPI `mcp`) plays a full conformance/hilo match
//! against a real `gaos serve --test-clock`, once over stdio (`gaos mcp`
//! children) and once over the host's streamable-HTTP `/mcp` mount, with a
//! forced lease lapse mid-game that `act` recovers from (see
//! `tests/mcp/mcp_hilo_client.py` for every check). The replay it downloads
//! is verified here with `gaos replay verify`.
//!
//! A missing Python package is a failure that says how to install it, never
//! a skip: CI installs it in `.ci/run`.

mod lease_support;

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use gaos_testkit::fixtures::hilo_deal;
use gaos_testkit::http::*;
use gaos_testkit::server::{TempDir, TestServer};
use lease_support::*;
use serde_json::{Value, json};

const GAOS: &str = env!("CARGO_BIN_EXE_gaos");
const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp/mcp_hilo_client.py");
/// Rounds of the match (hilo's hand size).
const ROUNDS: usize = 5;
const MAX_CARD: u32 = 1_000_000;
/// bob's new claim; alice adopts the creator's (the host default, 300 s).
const LEASE_MS: u64 = 60_000;
/// The clock jump that lapses both claims.
const ADVANCE_MS: u64 = 400_000;
/// Longest a script run may take.
const SCRIPT_TIMEOUT: Duration = Duration::from_secs(240);

fn python() -> String {
    std::env::var("GAOS_PYTHON").unwrap_or_else(|_| "python3".to_owned())
}

/// Fail (never skip) when the Python MCP client is not installed.
fn require_python_mcp() {
    let python = python();
    let output =
        Command::new(&python).args(["-c", "import mcp, mcp.client.stdio, mcp.client.streamable_http"]).output();
    match output {
        Ok(output) if output.status.success() => {}
        Ok(output) => panic!(
            "the official Python MCP client is not installed for {python}: `import mcp` failed:\n{}\n\
             install it with `{python} -m pip install 'mcp==2.3.0'` (pip install mcp); .ci/run does this before the tests",
            String::from_utf8_lossy(&output.stderr)
        ),
        Err(e) => panic!("cannot run {python} ({e}): install CPython 3.10+ and then `pip install mcp`"),
    }
}

/// A seed whose deal has 2×ROUNDS distinct cards, none equal to a lease
/// duration, so a card number in a result can only be that card.
fn distinct_deal() -> (u32, Vec<u64>, Vec<u64>) {
    (1u32..)
        .map(|seed| {
            let (alice, bob) = hilo_deal(seed, ROUNDS, MAX_CARD);
            (seed, alice, bob)
        })
        .find(|(_, alice, bob)| {
            let mut all: Vec<u64> = alice.iter().chain(bob).copied().collect();
            all.sort_unstable();
            all.dedup();
            all.len() == 2 * ROUNDS && !all.iter().any(|c| [LEASE_MS, 300_000, ADVANCE_MS].contains(c))
        })
        .expect("some seed deals distinct cards")
}

fn run_script(transport: &str, env: &[(&str, String)]) {
    let mut child = Command::new(python())
        .arg(SCRIPT)
        .arg(transport)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {} {SCRIPT}: {e}", python()));
    let mut stdout = child.stdout.take().expect("piped stdout");
    let mut stderr = child.stderr.take().expect("piped stderr");
    let out = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stdout.read_to_string(&mut text);
        text
    });
    let err = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let deadline = Instant::now() + SCRIPT_TIMEOUT;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for the script") {
            break Some(status);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let (stdout, stderr) = (out.join().unwrap_or_default(), err.join().unwrap_or_default());
    match status {
        Some(status) if status.success() => println!("{stdout}"),
        Some(status) => panic!("the Python MCP client failed over {transport} ({status}):\n{stdout}\n{stderr}"),
        None => panic!(
            "the Python MCP client did not finish over {transport} within {SCRIPT_TIMEOUT:?}:\n{stdout}\n{stderr}"
        ),
    }
}

fn play_over(transport: &str) {
    require_python_mcp();
    let server = TestServer::start_with(GAOS, &["--test-clock"]);
    let base = server.base_url.clone();
    let (seed, alice_hand, bob_hand) = distinct_deal();
    // The creator's claim (`"lease": {}`) is handed over to alice's server.
    let request = json!({"game": "conformance/hilo", "seed": seed, "level": {"handSize": ROUNDS, "maxCard": MAX_CARD}, "lease": {}});
    let session = create_session(&base, &server.operator_token, &request);
    let creator_lease = session.created["extensions"]["gaos.host.lease"]["token"].as_str().expect("lease").to_owned();
    let dir = TempDir::new("gaos-mcp-python");
    let replay_path = dir.path().join("replay.jsonl");
    let env = [
        ("GAOS_BIN", GAOS.to_owned()),
        ("GAOS_URL", base.clone()),
        ("GAOS_SESSION", session.id.clone()),
        ("GAOS_OPERATOR_TOKEN", server.operator_token.clone()),
        ("GAOS_ALICE_TOKEN", session.token("alice").to_owned()),
        ("GAOS_BOB_TOKEN", session.token("bob").to_owned()),
        ("GAOS_ALICE_LEASE", creator_lease),
        ("GAOS_HANDS", json!({"alice": alice_hand, "bob": bob_hand}).to_string()),
        ("GAOS_LEASE_MS", LEASE_MS.to_string()),
        ("GAOS_ADVANCE_MS", ADVANCE_MS.to_string()),
        ("GAOS_REPLAY_OUT", replay_path.display().to_string()),
    ];
    run_script(transport, &env);

    // The recovery was transparent to the agent but is on the record: each
    // seat's claim lapsed once and was renewed at the same epoch.
    let records = session_lease_records(&base, &server.operator_token, &session);
    for seat in ["alice", "bob"] {
        let of = |event: &str| -> Vec<&Value> {
            records.iter().filter(|r| r["event"] == json!(event) && r["seat"] == json!(seat)).collect()
        };
        let (lapses, renewals) = (of("lease_expired"), of("lease_renewed"));
        assert_eq!(lapses.len(), 1, "{seat}: one lapse in {records:?}");
        assert_eq!(renewals.len(), 1, "{seat}: one renewal in {records:?}");
        assert_eq!(lapses[0]["epoch"], renewals[0]["epoch"], "{seat}: the same claim was renewed");
    }
    assert!(kinds(&records).iter().any(|k| k == "paused") && kinds(&records).iter().any(|k| k == "resumed"));
    let replay = std::fs::read_to_string(&replay_path).expect("the script wrote the replay");
    verify_replay(GAOS, dir.path(), &format!("mcp-{transport}"), &replay);
    assert_eq!(replay, download_replay(&base, &session, "bob"), "the replay tool answers the host's replay");
}

#[test]
fn the_python_mcp_client_plays_hilo_over_stdio() {
    play_over("stdio");
}

#[test]
fn the_python_mcp_client_plays_hilo_over_streamable_http() {
    play_over("http");
}

/// `/mcp` drives a seat: no token, an unknown token or a token that is not
/// a seat's is refused before any MCP processing (no Python needed).
#[test]
fn the_mcp_endpoint_needs_a_seat_token() {
    let server = TestServer::start(GAOS);
    let base = server.base_url.clone();
    let session = create_session(&base, &server.operator_token, &json!({"game": "conformance/hilo"}));
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "probe", "version": "0"}}});
    let body = initialize.to_string().into_bytes();
    let mcp = |token: Option<&str>, extra: &[(&str, &str)]| {
        let auth = token.map(|t| format!("Bearer {t}"));
        let mut headers: Vec<(&str, &str)> =
            vec![("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream")];
        if let Some(auth) = auth.as_deref() {
            headers.push(("Authorization", auth));
        }
        headers.extend_from_slice(extra);
        send(&base, "POST", "/mcp", &headers, Some(&body)).expect("POST /mcp")
    };
    for token in
        [None, Some("gaos_seat_not_a_token"), Some(server.operator_token.as_str()), Some(session.spectator.as_str())]
    {
        let refused = mcp(token, &[]);
        assert_error(&refused, 401, "unauthorized");
        assert_eq!(refused.header("www-authenticate"), Some("Bearer"));
    }
    assert_error(&mcp(Some(session.token("bob")), &[("Gaos-Lease-Ms", "soon")]), 400, "invalid_request");
    let accepted = mcp(Some(session.token("bob")), &[]);
    assert_eq!(accepted.status, 200, "a seat token passes: {}", accepted.text());
}
