//! Issue 18 item 5 against a real `gaos serve`: `reset` starts the next
//! level of a run created with `"advanceOn": "reset"`, through the handle
//! (`SessionHandle::reset`) and over HTTP (`POST .../reset`). A reset is
//! refused while the level plays, with a seed, after the run's last level
//! and for a session of one episode, each refusal changing nothing; an
//! exact retry starts no second level; the reset survives a restart; and
//! finalizing instead of resetting ends the run after the levels played.

mod run_support;

use gaos_client::SessionClient;
use gaos_client::handle::RemoteSessionHandle;
use gaos_json::Value;
use gaos_runner::drivers::FirstLegalDriver;
use gaos_runner::{
    AttachRequest, FinalizeMode, FinalizeRequest, HandleState, RunOptions, RunPolicy, SessionError, SessionHandle,
    run_session,
};
use gaos_testkit::http;
use gaos_testkit::server::TestServer;
use run_support::{create_with_b, json, policy};

const GAOS: &str = env!("CARGO_BIN_EXE_gaos");

/// Counter levels of 2 and 1 rounds; the second starts only on reset.
const RUN: &str = r#"{"game":"conformance/counter","participantId":"a","seed":11,
    "run":{"levels":[{"levelId":"two","level":{"rounds":2}},{"levelId":"one","level":{"rounds":1}}],
           "advancePolicy":"play-all-levels","advanceOn":"reset"}}"#;

fn caller() -> RunPolicy {
    RunPolicy { finalize: FinalizeMode::Caller, ..RunPolicy::default() }
}

/// Both seats play the live level to its end; neither finalizes.
async fn play_level(a: &RemoteSessionHandle, b: &RemoteSessionHandle) {
    let (mut da, mut db) = (FirstLegalDriver::new(), FirstLegalDriver::new());
    let (ra, rb) = tokio::join!(
        run_session(a, &mut da, RunOptions::new(caller())),
        run_session(b, &mut db, RunOptions::new(caller()))
    );
    ra.expect("a plays the level");
    rb.expect("b plays the level");
}

fn code_of(error: &SessionError) -> Option<&str> {
    error.code().map(gaos_runner::ErrorCode::as_str)
}

fn episode_index(observation: &gaos_runner::Observation) -> Option<u64> {
    observation.episode().and_then(|e| e.index)
}

fn reset_over_http(server: &TestServer, session_id: &str, token: &str, body: &str) -> http::Response {
    http::post(
        &server.base_url,
        &format!("/v1/sessions/{session_id}/reset"),
        Some(token),
        &serde_json::from_str(body).unwrap(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reset_starts_the_next_level_once_and_only_when_the_run_allows_it() {
    let mut server = TestServer::start(GAOS);
    let operator = SessionClient::new(&server.base_url, &server.operator_token).expect("operator");
    let (created, b) = create_with_b(&operator, &json(RUN), &policy()).await;
    let sid = created.session_id.clone();
    let a_token = created.credentials.seat("a").expect("a's token").to_owned();
    let a = &created.handle;

    // While level 0 plays: refused, nothing changes.
    let start = a.observe().await.expect("observe");
    let refused = a.reset(None).await.expect_err("the level is being played");
    assert_eq!(code_of(&refused), Some("level_in_play"), "{refused}");
    for (body, code, status) in [
        (r#"{"seed":-1}"#, "invalid_request", 400),
        (r#"{"revision":"x"}"#, "invalid_request", 400),
        (r#"{"seeds":1}"#, "invalid_request", 400),
        (r#"{"seed":3}"#, "reset_seed_fixed", 409),
        (r#"{}"#, "level_in_play", 409),
    ] {
        let answer = reset_over_http(&server, &sid, &a_token, body);
        assert_eq!(answer.status, status, "{body}: {}", answer.text());
        assert_eq!(answer.json()["code"], code, "{body}: {}", answer.text());
    }
    let operator_reset = reset_over_http(&server, &sid, &server.operator_token, "{}");
    assert_eq!(operator_reset.status, 403, "a reset is a seat's: {}", operator_reset.text());
    assert_eq!(a.observe().await.expect("observe").revision(), start.revision(), "refusals change nothing");

    // Level 0 ends; the run waits for a reset (the handle is terminal).
    play_level(a, &b).await;
    let ended = a.observe().await.expect("observe the ended level");
    assert_eq!(episode_index(&ended), Some(0));
    assert!(ended.is_done(), "level 0 is over");
    assert_eq!(a.state(), HandleState::Terminal);
    let mark = ended.episode().expect("an episode").value;
    assert_eq!(mark.get("awaitingReset").and_then(Value::as_bool), Some(true), "{mark:?}");
    let refused = a.reset(Some(5)).await.expect_err("a seed is never taken");
    assert_eq!(code_of(&refused), Some("reset_seed_fixed"), "{refused}");
    assert_eq!(a.state(), HandleState::Terminal, "a refused reset changes nothing");

    // The reset starts level 1: the handle is active again, past the revision level 0 ended at.
    let stream = http::SseReader::open(&server.base_url, &format!("/v1/sessions/{sid}/stream"), &a_token);
    stream.wait_until_open(std::time::Duration::from_secs(10));
    let started = a.reset(None).await.expect("reset");
    assert_eq!(episode_index(&started), Some(1), "{:?}", started.episode());
    assert!(!started.is_done());
    assert!(started.revision() > ended.revision());
    assert_eq!(a.state(), HandleState::Active);
    assert!(started.episode().expect("an episode").value.get("awaitingReset").is_none(), "level 1 plays");
    // An exact retry (the revision the level ended at) starts no second level.
    let retry = reset_over_http(&server, &sid, &a_token, &format!(r#"{{"revision":{}}}"#, ended.revision()));
    assert_eq!(retry.status, 200, "{}", retry.text());
    assert_eq!(retry.json()["revision"], started.revision(), "{}", retry.text());
    // b's handle saw the same end: its reset is that retry, and b plays on.
    let b_started = b.reset(None).await.expect("b's reset is answered with the live level");
    assert_eq!(episode_index(&b_started), Some(1));
    assert_eq!(b_started.revision(), started.revision());
    assert_eq!(b.state(), HandleState::Active);
    // The seat's stream got the new level's full snapshot when it started.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while stream.events().len() < 2 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let (_, events) = stream.stop();
    let snapshots: Vec<serde_json::Value> = events
        .iter()
        .filter(|e| e.event == "delta")
        .map(|e| serde_json::from_str::<serde_json::Value>(&e.data).expect("a delta"))
        .filter(|d| d["origin"] == "snapshot")
        .collect();
    assert_eq!(snapshots.len(), 2, "the stream's first snapshot, then the new level's: {events:?}");
    assert_ne!(snapshots[0]["body"]["view"], snapshots[1]["body"]["view"], "the second is level 1's start");
    // Transition revisions keep counting across levels, as envelope revisions do.
    let (ended_at, started_at) =
        (snapshots[0]["transitionRevision"].as_u64().unwrap(), snapshots[1]["transitionRevision"].as_u64().unwrap());
    assert!(started_at > ended_at, "{snapshots:?}");
    let snapshot = |after: Option<u64>| {
        let query = after.map(|a| format!("?after={a}")).unwrap_or_default();
        http::get(&server.base_url, &format!("/v1/sessions/{sid}/snapshot{query}"), Some(&a_token))
    };
    let earlier_level = snapshot(Some(ended_at));
    assert_eq!(
        (earlier_level.status, earlier_level.json()["code"].clone()),
        (409, "resync_required".into()),
        "{}",
        earlier_level.text()
    );
    let full = snapshot(None);
    assert_eq!(full.status, 200, "{}", full.text());
    assert_eq!(full.json()["transitionRevision"], started_at);
    assert_eq!(snapshot(Some(started_at)).status, 200);
    // A reset sent without a revision now finds level 1 in play.
    assert_eq!(reset_over_http(&server, &sid, &a_token, "{}").json()["code"], "level_in_play");

    // The reset is durable: a restarted host is on level 1.
    server.restart();
    let tokens = created.credentials.clone();
    let seat = |name: &str| SessionClient::new(&server.base_url, tokens.seat(name).expect("token")).expect("client");
    let a = RemoteSessionHandle::attach(seat("a"), &sid, &AttachRequest::new("again-a"), &policy()).await.expect("a");
    let b = RemoteSessionHandle::attach(seat("b"), &sid, &AttachRequest::new("again-b"), &policy()).await.expect("b");
    let after = a.observe().await.expect("observe after the restart");
    assert_eq!(episode_index(&after), Some(1), "the restarted host is on the level the reset started");
    assert_eq!(after.revision(), started.revision());

    // The last level ends: the run is over, and the run replay holds both levels.
    play_level(&a, &b).await;
    let refused = a.reset(None).await.expect_err("no level follows the last");
    assert_eq!(code_of(&refused), Some("run_over"), "{refused}");
    let result = a.finalize(FinalizeRequest::default()).await.expect("finalize");
    let replay = result.replay_text().expect("replay").to_owned();
    let header: serde_json::Value = serde_json::from_str(replay.lines().next().unwrap()).unwrap();
    let ids: Vec<&str> = header["levels"].as_array().unwrap().iter().map(|l| l["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["two", "one"]);
    http::verify_replay(GAOS, server.data_dir(), "run-reset", &replay);
    let late = reset_over_http(&server, &sid, tokens.seat("a").unwrap(), "{}");
    assert_eq!(late.json()["code"], "session_finalized", "{}", late.text());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finalizing_instead_of_resetting_ends_the_run_after_the_levels_played() {
    let server = TestServer::start(GAOS);
    let operator = SessionClient::new(&server.base_url, &server.operator_token).expect("operator");
    let (created, b) = create_with_b(&operator, &json(RUN), &policy()).await;
    play_level(&created.handle, &b).await;
    let result = created.handle.finalize(FinalizeRequest::default()).await.expect("finalize after level 0");
    let replay = result.replay_text().expect("replay").to_owned();
    let header: serde_json::Value = serde_json::from_str(replay.lines().next().unwrap()).unwrap();
    assert_eq!(header["levels"].as_array().map(Vec::len), Some(1), "{header}");
    http::verify_replay(GAOS, server.data_dir(), "run-reset-early", &replay);
    let late = created.handle.reset(None).await.expect_err("a finalized session starts nothing");
    assert!(matches!(late, SessionError::InvalidState { operation: "reset", state: HandleState::Finalized }), "{late}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_of_one_episode_or_a_run_that_advances_at_level_end_has_nothing_to_reset() {
    let server = TestServer::start(GAOS);
    let operator = SessionClient::new(&server.base_url, &server.operator_token).expect("operator");
    for request in [
        r#"{"game":"conformance/counter","participantId":"a","seed":2}"#,
        r#"{"game":"conformance/counter","participantId":"a","seed":2,"run":{"levels":["default"]}}"#,
    ] {
        let created = RemoteSessionHandle::create(&operator, &json(request), &policy()).await.expect("create");
        let before = created.handle.observe().await.expect("observe");
        for seed in [None, Some(9)] {
            let refused = created.handle.reset(seed).await.expect_err("nothing to reset");
            assert_eq!(code_of(&refused), Some("reset_not_allowed"), "{request}: {refused}");
            assert_eq!(refused.status(), Some(409));
        }
        assert_eq!(created.handle.observe().await.expect("observe").revision(), before.revision());
    }
    let bad = http::post(
        &server.base_url,
        "/v1/sessions",
        Some(&server.operator_token),
        &serde_json::json!({"game":"conformance/counter","run":{"levels":["default"],"advanceOn":"later"}}),
    );
    assert_eq!(bad.status, 400, "{}", bad.text());
    assert!(bad.text().contains("advanceOn"), "{}", bad.text());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attach_receipts_of_a_run_digest_the_whole_run_and_survive_a_restart() {
    let mut server = TestServer::start(GAOS);
    let receipts = gaos_runner::SessionPolicy::from_value(&json(
        r#"{"evaluation":{"kind":"none"},"durability":{"attachable":true},
            "evidence":{"kind":"verification","attachReceipts":true},"publication":{"kind":"none"}}"#,
    ))
    .expect("policy");
    let operator = SessionClient::new(&server.base_url, &server.operator_token).expect("operator");
    let created = RemoteSessionHandle::create(&operator, &json(RUN), &receipts).await.expect("create");
    let sid = created.session_id.clone();
    let tokens = created.credentials.clone();
    let attach = |base: String, request: &'static str| {
        let client = SessionClient::new(&base, tokens.seat("b").expect("b's token")).expect("client");
        let policy = receipts.clone();
        let sid = sid.clone();
        async move {
            RemoteSessionHandle::attach(client, &sid, &AttachRequest::new(request), &policy).await.expect("attach b")
        }
    };
    let b = attach(server.base_url.clone(), "b-level-0").await;
    let at_level_0 = b.receipt().expect("a receipt");
    play_level(&created.handle, &b).await;
    created.handle.reset(None).await.expect("reset");
    let b = attach(server.base_url.clone(), "b-level-1").await;
    let at_level_1 = b.receipt().expect("a receipt");
    assert!(at_level_1.revision > at_level_0.revision);
    // Level 1 has not moved yet, but the run has: the digest covers level 0 too.
    assert_ne!(at_level_1.transcript_digest, at_level_0.transcript_digest);

    server.restart();
    let b = attach(server.base_url.clone(), "b-after-restart").await;
    let after = b.receipt().expect("a receipt");
    assert_eq!(after.revision, at_level_1.revision);
    assert_eq!(after.transcript_digest, at_level_1.transcript_digest, "a restarted host digests the same run");
    assert_eq!(after.sequence, 2);
    let chain = gaos_runner::receipts::verify_typed_receipt_chain(&[at_level_0, at_level_1, after]);
    assert!(chain.valid, "{:?}", chain.problems);
}

#[test]
fn gaos_session_reset_starts_the_next_level_from_a_shell() {
    let server = TestServer::start(GAOS);
    let request: serde_json::Value = serde_json::from_str(RUN).expect("the run request");
    let created = http::post(&server.base_url, "/v1/sessions", Some(&server.operator_token), &request);
    assert_eq!(created.status, 201, "{}", created.text());
    let created = created.json();
    let sid = created["sessionId"].as_str().expect("an id").to_owned();
    let token = |seat: &str| created["extensions"]["gaos.host.credentials"]["seats"][seat].as_str().unwrap().to_owned();
    let session = |args: &[&str], seat: &str| {
        let output = std::process::Command::new(GAOS)
            .arg("session")
            .args(args)
            .args(["--host", &server.base_url, "--session", &sid, "--token", &token(seat)])
            .output()
            .expect("run gaos session");
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stdout).into_owned(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    let (code, _, stderr) = session(&["reset"], "a");
    assert_eq!(code, Some(1), "level 0 is being played: {stderr}");
    assert!(stderr.contains("level_in_play"), "{stderr}");
    for _round in 0..2 {
        for seat in ["a", "b"] {
            let (code, _, stderr) = session(&["act", "--seat", seat, r#"{"n":1}"#], seat);
            assert_eq!(code, Some(0), "{stderr}");
        }
    }
    let (code, stdout, stderr) = session(&["reset"], "b");
    assert_eq!(code, Some(0), "{stderr}");
    let envelope: serde_json::Value = serde_json::from_str(stdout.trim()).expect("the envelope");
    assert_eq!(envelope["extensions"]["gaos.session.episode"]["index"], 1, "{envelope}");
    let (code, _, stderr) = session(&["reset"], "a");
    assert_eq!(code, Some(1), "level 1 is being played now: {stderr}");
}

/// The act that ends a level of a run that advances on reset answers with
/// `awaitingReset`, like every tick after it: a client (the play page) that
/// stops listening once the game is over must still learn that a reset is
/// awaited.
#[test]
fn the_act_that_ends_a_level_says_a_reset_is_awaited() {
    let server = TestServer::start(GAOS);
    let body = serde_json::json!({"game": "conformance/counter", "seed": 3, "run": {
        "levels": [{"levelId": "first", "level": {"rounds": 1}}, {"levelId": "second", "level": {"rounds": 1}}],
        "advancePolicy": "play-all-levels", "advanceOn": "reset"}});
    let session = http::create_session(&server.base_url, &server.operator_token, &body);
    let mut answers = Vec::new();
    for seat in ["b", "a"] {
        let envelope = http::tick(&server.base_url, &session, session.token(seat));
        let submission = http::submission(&envelope, seat, &format!("{seat}-1"), serde_json::json!({"n": 1}));
        answers.push(http::act(&server.base_url, &session, seat, &submission));
    }
    let ended = &answers[1];
    assert_eq!(ended.status, 200, "{}", ended.text());
    let mark = &ended.json()["extensions"]["gaos.session.episode"];
    assert_eq!(mark["awaitingReset"], serde_json::json!(true), "{mark}");
    let next = http::tick(&server.base_url, &session, session.token("a"));
    assert_eq!(&next["extensions"]["gaos.session.episode"], mark, "the answer and the next tick agree");
}
