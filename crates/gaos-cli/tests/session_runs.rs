//! Issue 18 item 2 against a real `gaos serve`: a session that is a
//! multi-level run. The host advances level by level, says which level an
//! envelope belongs to (`gaos.session.episode {id, index}`), resumes at the
//! right level after a restart, and finalizes one run replay that
//! `gaos replay verify` accepts. Gate G8: under fresh-per-episode the driver
//! is reset exactly at each level transition, never for the first level, and
//! the session id never changes.

mod run_support;

use std::sync::{Arc, Mutex};

use gaos_client::SessionClient;
use gaos_client::handle::RemoteSessionHandle;
use gaos_json::{Value, obj};
use gaos_runner::{
    AgentDriver, AttachRequest, BoxFuture, Conversation, Decision, DriverContext, DriverError, EpisodeIdentity,
    FinalizeMode, Observation, RunError, RunEvents, RunOptions, RunPolicy, SessionHandle, run_session,
};
use gaos_testkit::http;
use gaos_testkit::server::TestServer;
use run_support::{create_with_b, json, policy};

const GAOS: &str = env!("CARGO_BIN_EXE_gaos");

/// Counter levels of 2, 3 and 1 rounds, played whatever their result
/// (a counter level ends, it is never won).
const RUN: &str = r#"{"game":"conformance/counter","participantId":"a","seed":7,
    "run":{"levels":[{"levelId":"two","level":{"rounds":2}},{"levelId":"three","level":{"rounds":3}},
                     {"levelId":"one","level":{"rounds":1}}],
           "advancePolicy":"play-all-levels"}}"#;

/// Plays `n = 1` and notes, at each `reset`, how many decisions it had made.
#[derive(Default)]
struct Counting {
    decisions: u64,
    resets_at: Arc<Mutex<Vec<u64>>>,
}

impl AgentDriver for Counting {
    fn id(&self) -> &str {
        "counting"
    }
    fn label(&self) -> &str {
        "counts its resets"
    }
    fn reset(&mut self) {
        self.resets_at.lock().expect("resets").push(self.decisions);
    }
    fn act<'a>(&'a mut self, _: DriverContext<'a>) -> BoxFuture<'a, Result<Decision, DriverError>> {
        self.decisions += 1;
        Box::pin(async { Ok(Decision::action(obj! { "n" => 1u32 }.into())) })
    }
}

/// Every observation's session, revision and episode, and each episode change.
#[derive(Default)]
struct Watch {
    seen: Vec<(String, u64, Option<u64>)>,
    changes: Vec<EpisodeIdentity>,
}

impl RunEvents for Watch {
    fn on_observation(&mut self, observation: &Observation) {
        let index = observation.episode().and_then(|e| e.index);
        self.seen.push((observation.session_id().to_owned(), observation.revision(), index));
    }
    fn on_episode_change(&mut self, episode: &EpisodeIdentity) {
        self.changes.push(episode.clone());
    }
}

fn fresh() -> RunPolicy {
    RunPolicy { conversation: Conversation::FreshPerEpisode, ..RunPolicy::default() }
}

fn events_of(server: &TestServer, session_id: &str) -> Vec<Vec<serde_json::Value>> {
    let response =
        http::get(&server.base_url, &format!("/v1/sessions/{session_id}/transcript"), Some(&server.operator_token));
    assert_eq!(response.status, 200, "{}", response.text());
    // One header line per level, each followed by that level's events.
    let mut levels: Vec<Vec<serde_json::Value>> = Vec::new();
    for line in response.text().lines() {
        let value: serde_json::Value = serde_json::from_str(line).expect("a transcript line");
        if value.get("levelId").is_some() && value.get("kind").is_none() {
            levels.push(Vec::new());
        } else {
            levels.last_mut().expect("a header first").push(value);
        }
    }
    levels
}

fn check_run_replay(replay: &str, server: &TestServer, name: &str) {
    let header: serde_json::Value = serde_json::from_str(replay.lines().next().expect("a header")).expect("header");
    assert_eq!(header["seedPolicy"], "gaos.run-level-seed.v1", "{header}");
    assert_eq!(header["seed"], 7);
    let ids: Vec<&str> =
        header["levels"].as_array().expect("levels").iter().map(|l| l["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["two", "three", "one"]);
    let level_seeds: Vec<u64> =
        header["levels"].as_array().unwrap().iter().map(|l| l["seed"].as_u64().unwrap()).collect();
    let expected: Vec<u64> = (0..3).map(|i| gaos_kernel::run_level_seed(7, i).unwrap() as u64).collect();
    assert_eq!(level_seeds, expected, "level i is played with runLevelSeed(7, i)");
    http::verify_replay(GAOS, server.data_dir(), name, replay);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_advances_level_by_level_and_fresh_per_episode_resets_only_at_transitions() {
    let server = TestServer::start(GAOS);
    let operator = SessionClient::new(&server.base_url, &server.operator_token).expect("operator");
    let (created, b) = create_with_b(&operator, &json(RUN), &policy()).await;

    let resets_at = Arc::new(Mutex::new(Vec::new()));
    let mut agent = Counting { decisions: 0, resets_at: Arc::clone(&resets_at) };
    let mut watch = Watch::default();
    let caller = RunPolicy { finalize: FinalizeMode::Caller, ..RunPolicy::default() };
    let a_run = run_session(&created.handle, &mut agent, RunOptions::new(fresh()).events(&mut watch));
    let b_run = async {
        let mut driver = Counting::default();
        run_session(&b, &mut driver, RunOptions::new(caller)).await
    };
    let (a_outcome, b_outcome) = tokio::join!(a_run, b_run);
    let a_outcome = a_outcome.expect("seat a plays the whole run");
    b_outcome.expect("seat b plays the whole run");

    // G8: the session id never changes; the run start resets (fresh per
    // episode), then exactly the two transitions, after 2 and 2 + 3 rounds.
    assert!(watch.seen.iter().all(|(id, _, _)| id == &created.session_id), "{:?}", watch.seen);
    assert_eq!(*resets_at.lock().unwrap(), vec![0, 2, 5], "reset at the start and at each transition only");
    assert_eq!(agent.decisions, 6);
    let indexes: Vec<Option<u64>> = watch.changes.iter().map(|e| e.index).collect();
    assert_eq!(indexes, [Some(0), Some(1), Some(2)], "one change per level: {:?}", watch.changes);
    let ids: Vec<&str> = watch.changes.iter().map(|e| e.id.as_str()).collect();
    let sid = &created.session_id;
    assert_eq!(ids, [format!("{sid}:level-0"), format!("{sid}:level-1"), format!("{sid}:level-2")]);
    assert_eq!(watch.changes[1].value.get("levelId").and_then(Value::as_str), Some("three"));
    // Revisions never go back across levels (a pending window is seen at
    // its revision more than once), so no tick id repeats; a new level
    // starts past the revision its predecessor ended at.
    let seen: Vec<(u64, u64)> = watch.seen.iter().map(|(_, r, i)| (*r, i.expect("an index"))).collect();
    assert!(seen.windows(2).all(|w| w[0].0 <= w[1].0 && w[0].1 <= w[1].1), "{seen:?}");
    assert!(seen.windows(2).filter(|w| w[0].1 != w[1].1).all(|w| w[0].0 < w[1].0), "{seen:?}");

    // The host's transcript: one segment per level, 2 seats × rounds intents each.
    let levels = events_of(&server, sid);
    let accepted: Vec<usize> = levels.iter().map(|events| http::accepted_identities(events).len()).collect();
    assert_eq!(accepted, [4, 6, 2]);

    let result = a_outcome.result.expect("finalized");
    let replay = result.replay_text().expect("the replay rides in the result");
    check_run_replay(replay, &server, "run-counter");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_mid_run_resumes_at_the_level_the_run_reached() {
    let mut server = TestServer::start(GAOS);
    let operator = SessionClient::new(&server.base_url, &server.operator_token).expect("operator");
    let (created, b) = create_with_b(&operator, &json(RUN), &policy()).await;
    let sid = created.session_id.clone();
    // Level 0 (two rounds) and the first round of level 1.
    let caller = || RunPolicy { finalize: FinalizeMode::Caller, ..RunPolicy::default() };
    let (mut da, mut db) = (Counting::default(), Counting::default());
    let (ra, rb) = tokio::join!(
        run_session(&created.handle, &mut da, RunOptions::new(caller()).max_decisions(3)),
        run_session(&b, &mut db, RunOptions::new(caller()).max_decisions(3)),
    );
    // Both runs stop at their decision limit, with every act answered.
    assert!(matches!(ra, Err(RunError::DecisionLimit(3))), "{ra:?}");
    assert!(matches!(rb, Err(RunError::DecisionLimit(3))), "{rb:?}");
    let before = created.handle.observe().await.expect("observe before the restart");
    assert_eq!(before.episode().and_then(|e| e.index), Some(1));

    server.restart();
    let tokens = created.credentials.clone();
    let seat = |name: &str| {
        SessionClient::new(&server.base_url, tokens.seat(name).expect("a seat token")).expect("seat client")
    };
    let a = RemoteSessionHandle::attach(seat("a"), &sid, &AttachRequest::new("again-a"), &policy()).await.expect("a");
    let b = RemoteSessionHandle::attach(seat("b"), &sid, &AttachRequest::new("again-b"), &policy()).await.expect("b");
    let after = a.observe().await.expect("observe after the restart");
    assert_eq!(after.episode(), before.episode(), "the restarted host is on the same level");
    assert_eq!(after.revision(), before.revision(), "at the same revision");
    assert_eq!(after.tick(), before.tick());

    let (mut da, mut db) = (Counting::default(), Counting::default());
    let (ra, rb) = tokio::join!(
        run_session(&a, &mut da, RunOptions::new(fresh())),
        run_session(&b, &mut db, RunOptions::new(caller()))
    );
    let outcome = ra.expect("a finishes the run");
    rb.expect("b finishes the run");
    assert_eq!(da.decisions, 3, "two rounds of level 1 and the one of level 2 were left");
    let levels = events_of(&server, &sid);
    let accepted: Vec<usize> = levels.iter().map(|events| http::accepted_identities(events).len()).collect();
    assert_eq!(accepted, [4, 6, 2], "no decision was lost or made twice across the restart");
    let replay = outcome.result.expect("finalized").replay_text().expect("replay").to_owned();
    check_run_replay(&replay, &server, "run-restart");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn win_to_advance_ends_the_run_at_a_level_that_was_not_won() {
    let server = TestServer::start(GAOS);
    let operator = SessionClient::new(&server.base_url, &server.operator_token).expect("operator");
    // Counter levels end without a win, so the default policy stops after one.
    let request = json(
        r#"{"game":"conformance/counter","participantId":"a","seed":7,
            "run":{"levels":[{"levelId":"two","level":{"rounds":2}},{"levelId":"one","level":{"rounds":1}}]}}"#,
    );
    let (created, b) = create_with_b(&operator, &request, &policy()).await;
    let caller = RunPolicy { finalize: FinalizeMode::Caller, ..RunPolicy::default() };
    let (mut da, mut db) = (Counting::default(), Counting::default());
    let (ra, rb) = tokio::join!(
        run_session(&created.handle, &mut da, RunOptions::new(fresh())),
        run_session(&b, &mut db, RunOptions::new(caller))
    );
    let outcome = ra.expect("a");
    rb.expect("b");
    assert_eq!(da.decisions, 2, "only the first level was played");
    let replay = outcome.result.expect("finalized").replay_text().expect("replay").to_owned();
    let header: serde_json::Value = serde_json::from_str(replay.lines().next().unwrap()).unwrap();
    assert_eq!(header["levels"].as_array().map(Vec::len), Some(1), "{header}");
    http::verify_replay(GAOS, server.data_dir(), "run-win-to-advance", &replay);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_runs_are_refused_at_create_with_the_field_named() {
    let server = TestServer::start(GAOS);
    for (body, needle) in [
        (r#"{"game":"conformance/counter","run":{"levels":["nope"]}}"#, "no level"),
        (r#"{"game":"conformance/counter","levelId":"default","run":{"levels":["default"]}}"#, "not both"),
        (r#"{"game":"conformance/counter","run":{"levels":["default"],"advancePolicy":"x"}}"#, "advancePolicy"),
    ] {
        let response = http::post(
            &server.base_url,
            "/v1/sessions",
            Some(&server.operator_token),
            &serde_json::from_str(body).unwrap(),
        );
        assert_eq!(response.status, 400, "{body}: {}", response.text());
        assert!(response.text().contains(needle), "{body}: {}", response.text());
    }
}

/// A stale submission from an earlier level is refused, not applied to the
/// level now being played.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_submission_for_an_earlier_level_is_stale() {
    let server = TestServer::start(GAOS);
    let operator = SessionClient::new(&server.base_url, &server.operator_token).expect("operator");
    let request = json(
        r#"{"game":"conformance/counter","participantId":"a",
            "run":{"levels":[{"levelId":"one","level":{"rounds":1}},{"levelId":"two","level":{"rounds":2}}],
                   "advancePolicy":"play-all-levels"}}"#,
    );
    let created = RemoteSessionHandle::create(&operator, &request, &policy()).await.expect("create");
    let sid = created.session_id.clone();
    let token_a = created.credentials.seat("a").expect("a").to_owned();
    let token_b = created.credentials.seat("b").expect("b").to_owned();
    let submit = |token: &str, revision: u64, id: &str| {
        let body = serde_json::json!({
            "protocol": "gaos.ticks", "protocolVersion": "1.0", "sessionId": sid, "tickId": format!("{sid}:{revision}"),
            "revision": revision, "participantId": if token == token_a { "a" } else { "b" }, "submissionId": id,
            "command": {"n": 1}
        });
        http::post(&server.base_url, &format!("/v1/sessions/{sid}/actions"), Some(token), &body)
    };
    assert_eq!(submit(&token_a, 0, "a-0").status, 202);
    let last = submit(&token_b, 0, "b-0");
    assert_eq!(last.status, 200, "{}", last.text());
    let answer = last.json();
    // The act that ended level 0 is answered with level 1's first envelope.
    assert_eq!(answer["extensions"]["gaos.session.episode"]["index"], 1, "{answer}");
    assert_eq!(answer["tick"]["done"], false);
    let revision = answer["revision"].as_u64().expect("revision");
    assert_eq!(revision, 2, "level 0 ended at revision 1; level 1 starts one past it");
    // An exact retry of that act still gets its stored answer.
    let retry = submit(&token_b, 0, "b-0");
    assert_eq!((retry.status, retry.body.clone()), (200, last.body.clone()));
    // A new submission for level 0's window is stale.
    let stale = submit(&token_a, 0, "a-late");
    http::assert_error(&stale, 409, "stale_tick");
    // And the current level takes the current revision.
    assert_eq!(submit(&token_a, revision, "a-1").status, 202);
}
