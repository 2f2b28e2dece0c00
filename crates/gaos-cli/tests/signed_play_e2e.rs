//! Signed play end to end (issue 30): a hilo match on a real `gaos serve`
//! whose two seats sign every move — alice through the Rust client
//! (`RemoteSessionHandle::with_signing_key`), bob through `gaos mcp
//! --seat-key` driven by the official Python MCP client — finalizes to a
//! replay `gaos replay verify` reports `accepted-signed`. The same replay
//! rewritten as a dishonest host would (one of bob's moves changed and the
//! match re-simulated with the kernel, everything consistent but bob's
//! signature) is `rejected` at stage signatures naming bob; a submission
//! with a bad signature is refused live (`400 invalid_signature`) and
//! changes nothing. Keys come from `gaos keygen`.

use gaos_games::GameRegistry;
use gaos_kernel::replay::{FinalizeOptions, finalize_replay};
use gaos_kernel::{Cadence, CommandSubmission, KernelOptions, SeedPolicy, SessionKernel};
use gaos_runner::AttachRequest;
use gaos_runner::signing::SeatSigningKey;
use gaos_testkit::http::*;
use gaos_testkit::server::{TempDir, TestServer};
use serde_json::{Value, json};
use signed_support::{GAOS, play_signed, verify_json};
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};

mod signed_support;

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp/mcp_signed_seat.py");

fn python() -> String {
    std::env::var("GAOS_PYTHON").unwrap_or_else(|_| "python3".to_owned())
}

/// Fail (never skip) when the Python MCP client is not installed.
fn require_python_mcp() {
    let python = python();
    let output = Command::new(&python).args(["-c", "import mcp, mcp.client.stdio"]).output();
    match output {
        Ok(output) if output.status.success() => {}
        Ok(output) => panic!(
            "the official Python MCP client is not installed for {python}:\n{}\ninstall it with `{python} -m pip \
             install 'mcp==2.3.0'`; scripts/test does this before the tests",
            String::from_utf8_lossy(&output.stderr)
        ),
        Err(e) => panic!("cannot run {python} ({e}): install CPython 3.10+ and then `pip install mcp`"),
    }
}

/// `gaos keygen` for `seat`: the key file and its roster entry.
fn keygen(dir: &Path, seat: &str) -> (SeatSigningKey, Value) {
    let out = dir.join(format!("{seat}.key"));
    let status = Command::new(GAOS).args(["keygen", "--seat", seat, "--out"]).arg(&out).output().expect("run keygen");
    assert!(status.status.success(), "keygen: {}", String::from_utf8_lossy(&status.stderr));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&out).expect("key file").permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "the private key file is 0600");
    }
    let public = std::fs::read_to_string(dir.join(format!("{seat}.key.pub"))).expect("the .pub file");
    let entry: Value = serde_json::from_str(public.trim()).expect("a roster entry");
    assert_eq!(String::from_utf8_lossy(&status.stdout).trim(), public.trim(), "keygen prints the roster entry");
    (SeatSigningKey::read_file(&out).expect("the key file reads back"), entry)
}

/// Play `replay`'s moves again as a dishonest host would, with this kernel
/// (unsigned: the host has no seat's key): bob's first move is `rewrite`n,
/// everything else (every recorded clientTime, prevChainHash and sig
/// included) kept, the result re-simulated, then the signing header put back.
fn replay_as_host(replay: &str, rewrite: Option<Value>) -> String {
    let lines: Vec<gaos_json::Value> = replay.lines().map(|l| gaos_json::parse(l).expect("JSON line")).collect();
    let header = &lines[0];
    let get = |v: &gaos_json::Value, k: &str| v.get(k).cloned().unwrap_or_else(|| panic!("no {k} in {v}"));
    let level = get(header, "levels").as_array().expect("levels")[0].clone();
    let game = GameRegistry::builtin().get("conformance/hilo").expect("hilo");
    let session = get(header, "sessionId").as_str().expect("id").to_owned();
    let options = KernelOptions::builder(&game, &session)
        .level(get(&level, "id").as_str().expect("level id"), get(&level, "level"))
        .level_version(level.get("version").cloned())
        .seed(get(header, "seed").as_u32().expect("seed"), SeedPolicy::Explicit)
        .cadence(Cadence::Turns)
        .timeout_mapper(true)
        .build();
    let mut kernel = SessionKernel::new(options).expect("options");
    let mut rewrite = rewrite;
    for record in lines[1..].iter().filter(|r| r.get("kind").and_then(|k| k.as_str()) == Some("resolution")) {
        for input in get(record, "inputs").as_array().expect("inputs") {
            let seat = get(input, "seat").as_str().expect("seat").to_owned();
            let mut command =
                gaos_json::parse(get(input, "canonicalCommand").as_str().expect("command")).expect("json");
            if seat == "bob"
                && let Some(other) = rewrite.take()
            {
                command = gaos_json::parse(&other.to_string()).expect("command");
            }
            let cursor = get(input, "cursor").as_u64().expect("cursor");
            let id = get(input, "submissionId");
            let mut sub = CommandSubmission::new(&session, cursor, &seat, id.as_str().expect("id"), command);
            (sub.client_time, sub.prev_chain_hash, sub.sig) =
                (input.get("clientTime").cloned(), input.get("prevChainHash").cloned(), input.get("sig").cloned());
            let prepared = kernel.prepare_ingest(&sub).expect("the host's kernel takes it");
            kernel.apply_now(prepared).expect("commit");
        }
        let prepared = kernel.prepare_advance(None).expect("the window resolves");
        kernel.apply_now(prepared).expect("commit");
    }
    let perm = get(header, "perm").as_array().expect("perm").iter().map(|p| p.as_u64().expect("u64")).collect();
    let extensions = header.get("extensions").and_then(|e| e.as_object()).cloned();
    let artifact =
        finalize_replay(&kernel.live_transcript(), &FinalizeOptions { perm, extensions, ..Default::default() })
            .expect("finalize");
    let text = artifact.to_jsonl();
    let (first, rest) = text.split_once('\n').expect("a header line");
    let mut new_header = gaos_json::parse(first).expect("header");
    let map = new_header.as_object_mut().expect("object");
    for key in ["seatKeys", "signaturePolicy"] {
        map.insert(key.into(), get(header, key));
    }
    format!("{}\n{rest}", gaos_json::canonical_json(&new_header))
}

fn run_bob(env: &[(&str, String)]) -> std::process::Child {
    Command::new(python())
        .arg(SCRIPT)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {} {SCRIPT}: {e}", python()))
}

#[test]
fn signed_hilo_match_on_gaos_serve_through_the_rust_client_and_the_python_mcp_client() {
    require_python_mcp();
    let server = TestServer::start(GAOS);
    let base = server.base_url.clone();
    let dir = TempDir::new("gaos-signed-play");
    let (alice_key, alice_entry) = keygen(dir.path(), "alice");
    let (_, bob_entry) = keygen(dir.path(), "bob");
    let request = json!({"game": "conformance/hilo", "seed": 11, "participantId": "alice",
        "seatKeys": [alice_entry, bob_entry], "signaturePolicy": {"scheme": "gaos.submission.ed25519.v1"}});
    let session = create_session(&base, &server.operator_token, &request);

    // A bad signature is refused live and changes nothing.
    let envelope = tick(&base, &session, session.token("alice"));
    let signing = &envelope["extensions"]["gaos.session.signing"];
    assert_eq!(signing["submissions"], json!(0), "{envelope}");
    let mut forged = submission(&envelope, "alice", "forged-1", json!({"card": 0}));
    forged["clientTime"] = json!(1);
    forged["prevChainHash"] = signing["chainHead"].clone();
    forged["sig"] = json!(gaos_kernel::signing::to_base64(&[7u8; 64]));
    let before = transcript(&base, &server.operator_token, &session);
    assert_error(&act(&base, &session, "alice", &forged), 400, "invalid_signature");
    let mut unchained = submission(&envelope, "alice", "forged-2", json!({"card": 0}));
    unchained["clientTime"] = json!(1);
    unchained["prevChainHash"] = json!(gaos_kernel::signing::to_base64(&[1u8; 32]));
    assert_error(&act(&base, &session, "alice", &unchained), 400, "invalid_signature");
    assert_eq!(transcript(&base, &server.operator_token, &session), before, "nothing was persisted");
    assert_eq!(tick(&base, &session, session.token("alice")), envelope, "the seat sees the same window");

    // bob: the Python MCP client through `gaos mcp --seat-key`.
    let mut bob = run_bob(&[
        ("GAOS_BIN", GAOS.to_owned()),
        ("GAOS_URL", base.clone()),
        ("GAOS_SESSION", session.id.clone()),
        ("GAOS_SEAT", "bob".to_owned()),
        ("GAOS_SEAT_TOKEN", session.token("bob").to_owned()),
        ("GAOS_SEAT_KEY", dir.path().join("bob.key").display().to_string()),
    ]);
    // alice: the Rust client, signing with her key.
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let attach = AttachRequest::new("signed-e2e-alice");
    let alice_moves =
        runtime.block_on(play_signed(&base, &session.id, "alice", session.token("alice"), alice_key, &attach));
    let mut out = String::new();
    let mut err = String::new();
    let status = bob.wait().expect("bob's client");
    bob.stdout.take().expect("stdout").read_to_string(&mut out).expect("read");
    bob.stderr.take().expect("stderr").read_to_string(&mut err).expect("read");
    assert!(status.success(), "the Python MCP seat failed: {out}\n{err}");
    assert!(out.contains("bob:") && out.contains("signed moves through gaos mcp"), "{out}");
    assert!(alice_moves > 0);

    // The finalized result says per seat that its moves were signed.
    let finalized = post(&base, &session.path("finalize"), Some(session.token("alice")), &json!({"requestId": "e2e"}));
    assert_eq!(finalized.status, 200, "{}", finalized.text());
    let result = finalized.json();
    let report = &result["extensions"]["gaos.session.signatures"];
    assert_eq!(report["state"], json!("signed"), "{report}");
    for seat in report["seats"].as_array().expect("seats") {
        assert_eq!(seat["signed"], json!(true), "{seat}");
        assert_eq!(seat["validSignatures"], seat["submissions"], "every move signed: {seat}");
    }

    let replay = get(&base, &session.path("replay"), Some(session.token("bob"))).text();
    let honest = dir.path().join("honest.gaos-replay.jsonl");
    std::fs::write(&honest, &replay).expect("write");
    let verdict = verify_json(&honest);
    assert_eq!(verdict["verdict"], json!("accepted-signed"), "{verdict}");
    assert_eq!(verdict["signatures"]["state"], json!("signed"));

    // The host's kernel, fed the same moves, writes the same bytes ...
    assert_eq!(replay_as_host(&replay, None), replay, "the dishonest host's tool is faithful");
    // ... and with one of bob's moves rewritten, only bob's signature betrays it.
    let forged_replay = replay_as_host(&replay, Some(json!({"card": 1})));
    assert_ne!(forged_replay, replay);
    let forged_file = dir.path().join("rewritten.gaos-replay.jsonl");
    std::fs::write(&forged_file, &forged_replay).expect("write");
    let verdict = verify_json(&forged_file);
    assert_eq!((verdict["verdict"].clone(), verdict["stage"].clone()), (json!("rejected"), json!("signatures")));
    let problems = verdict["problems"].to_string();
    assert!(
        problems.contains("signatures of seat bob") && problems.contains("invalid Ed25519 signature"),
        "{problems}"
    );
}
