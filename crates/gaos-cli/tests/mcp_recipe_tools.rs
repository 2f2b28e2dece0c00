//! The agent-CLI recipe tools (issue 18, item 5; `spec/lifecycle.md` §6)
//! driven by the official Python MCP client (PyPI `mcp`) against a real
//! `gaos serve`: a whole conformance/hilo match played with only `observe
//! {}`, `act {"action": {...}}`, `reset` and `transcript`, once over stdio
//! (`gaos mcp` children) and once over the host's `/mcp` mount (see
//! `tests/mcp/mcp_recipe_client.py` for every check), then a two-level run
//! advanced with `reset`. The replays of the match and of the run are
//! verified here with `gaos replay verify`.
//!
//! A missing Python package is a failure that says how to install it, never
//! a skip.

mod lease_support;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use gaos_testkit::http::*;
use gaos_testkit::server::{TempDir, TestServer};
use lease_support::*;
use serde_json::json;

const GAOS: &str = env!("CARGO_BIN_EXE_gaos");
const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp/mcp_recipe_client.py");
const ROUNDS: usize = 3;
const SCRIPT_TIMEOUT: Duration = Duration::from_secs(180);

fn python() -> String {
    std::env::var("GAOS_PYTHON").unwrap_or_else(|_| "python3".to_owned())
}

fn play_over(transport: &str) {
    let python = python();
    let probe = Command::new(&python).args(["-c", "import mcp, mcp.client.stdio, mcp.client.streamable_http"]).output();
    match probe {
        Ok(output) if output.status.success() => {}
        _ => panic!(
            "the official Python MCP client is not installed for {python}: install it with \
             `{python} -m pip install 'mcp==2.3.0'` (.ci/run does this before the tests)"
        ),
    }
    let server = TestServer::start(GAOS);
    let base = server.base_url.clone();
    // No "lease": neither seat is claimed, so both agents play at once.
    let request = json!({"game": "conformance/hilo", "seed": 21, "level": {"handSize": ROUNDS, "maxCard": 1_000_000}});
    let session = create_session(&base, &server.operator_token, &request);
    let level = json!({"handSize": 1, "maxCard": 1_000_000});
    let run_request = json!({"game": "conformance/hilo", "seed": 5, "run": {
        "levels": [{"levelId": "first", "level": level}, {"levelId": "second", "level": level}],
        "advancePolicy": "play-all-levels", "advanceOn": "reset"}});
    let run = create_session(&base, &server.operator_token, &run_request);
    let mut child = Command::new(&python)
        .arg(SCRIPT)
        .arg(transport)
        .env("GAOS_BIN", GAOS)
        .env("GAOS_URL", &base)
        .env("GAOS_SESSION", &session.id)
        .env("GAOS_ALICE_TOKEN", session.token("alice"))
        .env("GAOS_BOB_TOKEN", session.token("bob"))
        .env("GAOS_ROUNDS", ROUNDS.to_string())
        .env("GAOS_RUN_SESSION", &run.id)
        .env("GAOS_RUN_ALICE_TOKEN", run.token("alice"))
        .env("GAOS_RUN_BOB_TOKEN", run.token("bob"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {python} {SCRIPT}: {e}"));
    let deadline = Instant::now() + SCRIPT_TIMEOUT;
    while child.try_wait().expect("wait for the script").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let output = child.wait_with_output().expect("the script's output");
    let (stdout, stderr) = (String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "the Python MCP client failed over {transport}:\n{stdout}\n{stderr}");
    assert!(stdout.contains(&format!("{ROUNDS} rounds through the recipe tools")), "{stdout}");

    // The match the recipe tools played is a real, verifiable one.
    let dir = TempDir::new("gaos-mcp-recipe");
    let replay = download_replay(&base, &session, "bob");
    verify_replay(GAOS, dir.path(), &format!("recipe-{transport}"), &replay);
    // So is the run the reset tool advanced: both levels, one replay.
    let replay = download_replay(&base, &run, "bob");
    let header: serde_json::Value = serde_json::from_str(replay.lines().next().expect("a header")).expect("header");
    assert_eq!(header["levels"].as_array().map(Vec::len), Some(2), "{header}");
    verify_replay(GAOS, dir.path(), &format!("recipe-run-{transport}"), &replay);
}

#[test]
fn the_python_mcp_client_plays_hilo_with_the_recipe_tools_over_stdio() {
    play_over("stdio");
}

#[test]
fn the_python_mcp_client_plays_hilo_with_the_recipe_tools_over_streamable_http() {
    play_over("http");
}
