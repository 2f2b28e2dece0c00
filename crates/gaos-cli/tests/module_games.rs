//! JavaScript game modules end to end through the real `gaos` binary
//! (issue 14, Acceptance 2 and 4): a two-seat module hosted by `gaos serve
//! --game`, played to the end over HTTP, finalized, and its replay verified
//! by `gaos replay verify --adapter` with the same file; the same through
//! `gaos play`; a session whose module changed between runs is refused with
//! both digests while other sessions go on; a module that loops forever in
//! `advance` fails its session within the call limit and the host serves on.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use gaos_testkit::http::*;
use gaos_testkit::server::{TempDir, TestServer};
use serde_json::{Value, json};

const GAOS: &str = env!("CARGO_BIN_EXE_gaos");

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/modules").join(name)
}

/// The JS port of conformance/counter (the one BENCHMARKS.md measures).
fn counter_port() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance/modules/counter.mjs")
}

fn text(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 path")
}

/// `gaos replay verify --json [--adapter FILE] REPLAY`: (report, exit code).
fn verify(replay: &Path, adapter: Option<&Path>) -> (Value, i32) {
    let mut command = Command::new(GAOS);
    command.args(["replay", "verify", "--json"]);
    if let Some(adapter) = adapter {
        command.arg("--adapter").arg(adapter);
    }
    let output = command.arg(replay).output().expect("gaos replay verify runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let report = serde_json::from_str(stdout.lines().next().unwrap_or(""))
        .unwrap_or_else(|e| panic!("no JSON report ({e}): {stdout} {}", String::from_utf8_lossy(&output.stderr)));
    (report, output.status.code().unwrap_or(-1))
}

/// The `/v1/games` row of `id`.
fn listed(server: &TestServer, id: &str) -> Value {
    let games = get(server.base_url(), "/v1/games", Some(server.operator_token())).json();
    games["games"]
        .as_array()
        .expect("games")
        .iter()
        .find(|g| g["id"] == json!(id))
        .unwrap_or_else(|| panic!("{id} is listed: {games}"))
        .clone()
}

fn play_bids(base: &str, session: &Session) {
    for (round, (red, blue)) in [(6, 2), (1, 5), (3, 2)].into_iter().enumerate() {
        let moves = [("red", json!({"bid": red})), ("blue", json!({"bid": blue}))];
        play_simultaneous_window(base, session, &moves, &format!("round-{round}"));
    }
}

#[test]
fn a_module_game_is_served_played_finalized_and_verified_with_the_same_file() {
    let bids = fixture("bids.mjs");
    let server = TestServer::start_with(GAOS, &["--game", text(&bids)]);
    let base = server.base_url();
    let row = listed(&server, "js/bids");
    assert_eq!(row["origin"]["kind"], json!("module"), "{row}");
    assert_eq!(row["origin"]["path"], json!(text(&bids)));
    assert_eq!(row["origin"]["sha256"].as_str().map(str::len), Some(64), "{row}");
    assert_eq!(row["seats"], json!(["red", "blue"]));
    assert_eq!(listed(&server, "conformance/hilo")["origin"], json!({"kind": "builtin"}));

    let session = create_session(base, server.operator_token(), &json!({"game": "js/bids", "seed": 1}));
    let refused = act(base, &session, "red", &submission(&session.created, "red", "greedy", json!({"bid": 11})));
    assert_error(&refused, 422, "illegal_command");
    assert!(refused.text().contains("your budget"), "the module's message reaches the seat: {}", refused.text());
    play_bids(base, &session);
    let red = tick(base, &session, session.token("red"));
    assert_eq!(red["tick"]["budget"], json!(0), "{red}");
    assert_eq!(tick(base, &session, session.token("blue"))["tick"]["budget"], json!(1));
    assert!(!tick(base, &session, &session.spectator).to_string().contains("budget"), "budgets are per seat");

    let finalize = json!({"requestId": "finalize-bids"});
    let result = post(base, &session.path("finalize"), Some(session.token("red")), &finalize);
    assert_eq!(result.status, 200, "{}", result.text());
    assert_eq!(result.json()["outcome"]["outcome"]["ranking"][0]["seat"], json!("red"));
    let replay = get(base, &session.path("replay"), Some(session.token("red")));
    assert_eq!(replay.status, 200);
    let dir = TempDir::new("gaos-module-replay");
    let file = dir.path().join("bids.gaos-replay.jsonl");
    std::fs::write(&file, &replay.body).expect("write the replay");

    let (report, code) = verify(&file, Some(&bids));
    assert_eq!(report["verdict"], json!("accepted-unsigned"), "{report}");
    assert_eq!(code, 0);
    let (report, code) = verify(&file, None);
    assert_eq!(report["verdict"], json!("unverifiable"), "without the module the game is unknown: {report}");
    assert_eq!(code, 3);
}

#[test]
fn gaos_play_plays_a_module_game_in_process() {
    let bids = fixture("bids.mjs");
    let dir = TempDir::new("gaos-module-play");
    let replay = dir.path().join("play.gaos-replay.jsonl");
    let output = Command::new(GAOS)
        .args(["play", "--game", text(&bids), "--seed", "3", "--json", "--out", text(&replay)])
        .output()
        .expect("gaos play runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let (report, code) = verify(&replay, Some(&bids));
    assert_eq!(report["verdict"], json!("accepted-unsigned"), "{report}");
    assert_eq!(code, 0);
}

#[test]
fn a_session_whose_module_changed_is_refused_with_both_digests_and_others_go_on() {
    let dir = TempDir::new("gaos-module-digest");
    let module = dir.path().join("bids.mjs");
    let original = std::fs::read_to_string(fixture("bids.mjs")).expect("the fixture");
    std::fs::write(&module, &original).expect("copy the module");
    let mut server = TestServer::start_with(GAOS, &["--game", text(&module)]);
    let old = listed(&server, "js/bids")["origin"]["sha256"].as_str().expect("sha256").to_owned();
    let operator = server.operator_token().to_owned();
    let moved = create_session(server.base_url(), &operator, &json!({"game": "js/bids", "sessionId": "moved"}));
    let other =
        create_session(server.base_url(), &operator, &json!({"game": "conformance/hilo", "sessionId": "other"}));

    std::fs::write(&module, format!("{original}\n// a later edit\n")).expect("edit the module");
    server.restart();
    let new = listed(&server, "js/bids")["origin"]["sha256"].as_str().expect("sha256").to_owned();
    assert_ne!(old, new);
    let refused = get(server.base_url(), &moved.path("tick"), Some(moved.token("red")));
    assert_error(&refused, 409, "module_changed");
    let message = refused.json()["error"].as_str().expect("a message").to_owned();
    assert!(message.contains(&old) && message.contains(&new), "the refusal names both digests: {message}");
    let failed = get(server.base_url(), "/v1/admin/reconcile", Some(&operator)).json();
    assert_eq!(failed["failed"][0]["sessionId"], json!("moved"), "{failed}");
    let fine = get(server.base_url(), &other.path("tick"), Some(other.token("alice")));
    assert_eq!(fine.status, 200, "other sessions are unaffected: {}", fine.text());

    // The refusal changed nothing: with the original module back, the session resumes.
    std::fs::write(&module, &original).expect("restore the module");
    server.restart();
    let resumed = get(server.base_url(), &moved.path("tick"), Some(moved.token("red")));
    assert_eq!(resumed.status, 200, "{}", resumed.text());
    play_bids(server.base_url(), &moved);
}

#[test]
fn a_module_that_loops_forever_fails_its_session_within_the_limit_and_the_host_serves_on() {
    let spin = fixture("spin.mjs");
    let server = TestServer::start_with(GAOS, &["--game", text(&spin), "--module-call-ms", "200"]);
    let base = server.base_url();
    let stuck = create_session(base, server.operator_token(), &json!({"game": "js/spin"}));
    let healthy = create_session(base, server.operator_token(), &json!({"game": "js/spin"}));
    let (_, events_before) = transcript(base, server.operator_token(), &stuck);

    let first = act(base, &stuck, "a", &submission(&stuck.created, "a", "a-0", json!({"n": 13})));
    assert_eq!(first.status, 202, "{}", first.text());
    let envelope = tick(base, &stuck, stuck.token("b"));
    let started = Instant::now();
    let failed = act(base, &stuck, "b", &submission(&envelope, "b", "b-0", json!({"n": 1})));
    let took = started.elapsed();
    assert!(took < Duration::from_secs(30), "the call limit stopped the loop (took {took:?})");
    assert_error(&failed, 410, "revoked");
    let reason = failed.json()["error"].as_str().expect("a message").to_owned();
    assert!(
        reason.contains("reducer_failed") && reason.contains("reducer.advance of js/spin") && reason.contains("200 ms"),
        "the revocation names the module, the call and the limit: {reason}"
    );
    let (_, events_after) = transcript(base, server.operator_token(), &stuck);
    let resolutions = |events: &[Value]| events.iter().filter(|e| e["kind"] == json!("resolution")).count();
    assert_eq!(resolutions(&events_after), resolutions(&events_before), "nothing resolved was persisted");
    assert_error(&get(base, &stuck.path("tick"), Some(stuck.token("a"))), 410, "revoked");

    let moves = [("a", json!({"n": 1})), ("b", json!({"n": 2}))];
    let answer = play_simultaneous_window(base, &healthy, &moves, "fine");
    assert_eq!(answer["tick"]["total"], json!(3), "{answer}");
}

/// A minimal MCP client over stdio: newline-delimited JSON-RPC 2.0 to a
/// `gaos mcp` child (initialize, then `tools/call`).
struct McpClient {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: std::io::BufReader<std::process::ChildStdout>,
    next_id: u64,
}

impl McpClient {
    fn start(base: &str, session: &Session, seat: &str) -> McpClient {
        let mut child = Command::new(GAOS)
            .args(["mcp", "--host", base, "--session", &session.id, "--seat", seat])
            .env("GAOS_SEAT_TOKEN", session.token(seat))
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("gaos mcp starts");
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = std::io::BufReader::new(child.stdout.take().expect("piped stdout"));
        let mut client = McpClient { child, stdin, stdout, next_id: 1 };
        let init = client.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "module-test", "version": "1"}}),
        );
        assert!(init["result"]["serverInfo"].is_object(), "{init}");
        client.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        client
    }

    fn send(&mut self, message: &Value) {
        use std::io::Write;
        writeln!(self.stdin, "{message}").expect("write to gaos mcp");
        self.stdin.flush().expect("flush");
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        use std::io::BufRead;
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            assert!(self.stdout.read_line(&mut line).expect("read from gaos mcp") > 0, "gaos mcp closed stdout");
            let message: Value = serde_json::from_str(&line).expect("a JSON-RPC message");
            if message["id"] == json!(id) {
                return message;
            }
        }
    }

    /// `tools/call NAME ARGUMENTS`: the result's text, failing on a tool error.
    fn call(&mut self, name: &str, arguments: Value) -> String {
        let answer = self.request("tools/call", json!({"name": name, "arguments": arguments}));
        let result = &answer["result"];
        assert_ne!(result["isError"], json!(true), "{name} failed: {answer}");
        result["content"][0]["text"].as_str().unwrap_or_else(|| panic!("a text result: {answer}")).to_owned()
    }
}

impl Drop for McpClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn an_mcp_agent_plays_a_seat_of_a_module_game() {
    let dir = TempDir::new("gaos-module-mcp");
    std::fs::copy(fixture("bids.mjs"), dir.path().join("bids.mjs")).expect("copy the module");
    // --games DIR serves every module in the directory.
    let server = TestServer::start_with(GAOS, &["--games", text(dir.path())]);
    let base = server.base_url();
    let session = create_session(base, server.operator_token(), &json!({"game": "js/bids", "seed": 5}));
    let mut blue = McpClient::start(base, &session, "blue");
    let observed = blue.call("observe", json!({}));
    assert!(observed.contains("budget"), "blue sees its budget: {observed}");
    for (round, (red, bid)) in [(2, 4), (5, 1), (1, 3)].into_iter().enumerate() {
        let envelope = tick(base, &session, session.token("red"));
        let red_answer =
            act(base, &session, "red", &submission(&envelope, "red", &format!("red-{round}"), json!({"bid": red})));
        assert_eq!(red_answer.status, 202, "{}", red_answer.text());
        blue.call("act", json!({"command": {"bid": bid}}));
        assert_eq!(tick(base, &session, session.token("red"))["tick"]["round"], json!(round + 1));
    }
    let ended = tick(base, &session, session.token("blue"));
    assert_eq!(ended["tick"]["status"], json!("ended"), "{ended}");
    assert_eq!(ended["tick"]["wins"], json!({"blue": 2, "red": 1}), "{ended}");
}

#[test]
fn a_benchmark_naming_a_module_runs_records_its_digest_per_episode_and_verifies() {
    let dir = TempDir::new("gaos-module-bench");
    std::fs::create_dir_all(dir.path().join("game")).expect("a game directory");
    let module = dir.path().join("game/bids.mjs");
    let original = std::fs::read_to_string(fixture("bids.mjs")).expect("the fixture");
    std::fs::write(&module, &original).expect("copy the module");
    let manifest = dir.path().join("bench.json");
    let body = json!({
        "schema": "gaos.benchmark-manifest.v1",
        "benchmark": {"id": "bids", "version": "1", "adapter": "./game/bids.mjs"},
        "tasks": [{"id": "default", "seeds": [4], "episodes": 2, "maxSteps": 10}],
        "scoring": {"plugin": "gaos.score.outcome", "aggregation": "mean"},
        "submission": {"requireSignedSeats": false, "requireCompleteCoverage": true}
    });
    std::fs::write(&manifest, body.to_string()).expect("write the manifest");
    let out = dir.path().join("run");
    let run = Command::new(GAOS)
        .args(["bench", "run", text(&manifest), "--out", text(&out), "--json"])
        .output()
        .expect("gaos bench run");
    assert!(run.status.success(), "{}\n{}", String::from_utf8_lossy(&run.stdout), String::from_utf8_lossy(&run.stderr));

    let scores: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("bundle/scores.json")).expect("scores.json"))
            .expect("JSON");
    let episodes = scores["episodes"].as_array().expect("episodes");
    assert_eq!(episodes.len(), 2);
    let digest = episodes[0]["adapterSha256"].as_str().expect("the episode records the module digest").to_owned();
    assert_eq!(digest.len(), 64);
    assert_eq!(episodes[1]["adapterSha256"], json!(digest));

    let bench_verify = |extra: &[&str]| {
        let output = Command::new(GAOS)
            .args([&["bench", "verify", text(&out), "--json"], extra].concat())
            .output()
            .expect("gaos bench verify");
        (String::from_utf8_lossy(&output.stdout).into_owned(), output.status.code().unwrap_or(-1))
    };
    let (report, code) = bench_verify(&["--manifest", text(&manifest)]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(serde_json::from_str::<Value>(&report).expect("JSON")["valid"], json!(true), "{report}");
    let (_, code) = bench_verify(&[]);
    assert_eq!(code, 2, "without --manifest or --adapter the module cannot be found");
    let (report, code) = bench_verify(&["--adapter", text(&module)]);
    assert_eq!(code, 0, "{report}");

    // Another module under the same game id: every episode is refused by digest.
    std::fs::write(&module, format!("{original}\n// changed rules\n")).expect("edit the module");
    let (report, code) = bench_verify(&["--manifest", text(&manifest)]);
    assert_eq!(code, 1, "{report}");
    let report: Value = serde_json::from_str(&report).expect("JSON");
    assert_eq!(report["valid"], json!(false));
    assert!(report.to_string().contains(&digest), "the reasons name the recorded digest: {report}");
}

#[test]
fn kernel_bench_runs_a_module_counter_that_replaces_the_built_in_one_with_a_notice() {
    let output = Command::new(GAOS)
        .args(["kernel-bench", "--transitions", "30", "--json", "--game-module", text(&counter_port())])
        .output()
        .expect("gaos kernel-bench");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(
        stderr.lines().filter(|l| l.contains("replaces")).collect::<Vec<_>>(),
        ["game module conformance/counter replaces the built-in game conformance/counter"]
    );
    let report: Value = serde_json::from_slice(&output.stdout).expect("a JSON report");
    assert_eq!(report["transitions"], json!(30), "{report}");

    let refused = Command::new(GAOS)
        .args(["kernel-bench", "--transitions", "3", "--game-module", text(&counter_port()), "--module-call-ms", "0"])
        .output()
        .expect("gaos kernel-bench");
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--module-call-ms"));
}

#[test]
fn replay_verify_takes_a_verifier_adapter_in_the_reference_shape() {
    let bids = fixture("bids.mjs");
    let verifier = fixture("bids-verifier.mjs");
    let dir = TempDir::new("gaos-module-verifier");
    let replay = dir.path().join("bids.gaos-replay.jsonl");
    let output = Command::new(GAOS)
        .args(["play", "--game", text(&bids), "--seed", "5", "--out", text(&replay)])
        .output()
        .expect("gaos play runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));

    // No adapter: the game is unknown to verify, so the replay is unverifiable.
    let (report, code) = verify(&replay, None);
    assert_eq!(report["verdict"], json!("unverifiable"), "{report}");
    assert_eq!(code, 3);
    // The verifier adapter (resolveReplayReducer + semanticAdapterForLevel) re-simulates it.
    let (report, code) = verify(&replay, Some(&verifier));
    assert_eq!(report["verdict"], json!("accepted-unsigned"), "{report}");
    assert_eq!(code, 0);

    // A tampered replay is rejected by the adapter's reducer, not waved through.
    let original = std::fs::read_to_string(&replay).expect("replay");
    let tampered_path = dir.path().join("tampered.gaos-replay.jsonl");
    let tampered = original.replacen("\"actionsUsed\":6", "\"actionsUsed\":7", 1);
    assert_ne!(tampered, original, "the replay records the level's actions to tamper with");
    std::fs::write(&tampered_path, tampered).expect("write");
    let (report, code) = verify(&tampered_path, Some(&verifier));
    assert_ne!(report["verdict"], json!("accepted-unsigned"), "{report}");
    assert_eq!(code, 1);

    // Two verifier adapters would both claim every replay: refused as usage.
    let output = Command::new(GAOS)
        .args(["replay", "verify", "--adapter", text(&verifier), "--adapter", text(&verifier), text(&replay)])
        .output()
        .expect("gaos replay verify runs");
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("give at most one"), "{output:?}");
}
