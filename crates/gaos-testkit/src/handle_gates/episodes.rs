//! A run that advances on reset, through the handle: `SessionHandle::reset`
//! starts the next level once the live one ended, turns the terminal handle
//! active again, and a reset with a seed or during play changes nothing.

use gaos_json::Value;
use gaos_runner::ErrorCode;
use gaos_runner::drivers::FirstLegalDriver;
use gaos_runner::{AgentDriver, FinalizeMode, FinalizeRequest, HandleState, RunOptions, RunPolicy, run_session};

use super::{GateHost, json, seat_handles};

const RUN: &str = r#"{"game":"conformance/counter","participantId":"a","seed":4,
    "run":{"levels":[{"levelId":"first","level":{"rounds":1}},{"levelId":"second","level":{"rounds":2}}],
           "advancePolicy":"play-all-levels","advanceOn":"reset"}}"#;

fn episode_index(observation: &gaos_runner::Observation) -> Option<u64> {
    observation.episode().and_then(|e| e.index)
}

pub async fn reset_starts_the_next_level_of_a_run_that_advances_on_reset(host: &mut impl GateHost) {
    let policy = gaos_runner::SessionPolicy::host_default();
    let (id, handles) = seat_handles(host, RUN, &policy, &["a", "b"]).await;
    let play_level = || async {
        let runs = handles.iter().map(|handle| async move {
            let mut driver: Box<dyn AgentDriver> = Box::new(FirstLegalDriver::new());
            let policy = RunPolicy { finalize: FinalizeMode::Caller, ..RunPolicy::default() };
            run_session(handle.as_ref(), driver.as_mut(), RunOptions::new(policy)).await.expect("the level is played")
        });
        futures_util::future::join_all(runs).await
    };
    let refused = handles[0].reset(None).await.expect_err("level 0 is being played");
    assert_eq!(refused.code(), Some(&ErrorCode::LevelInPlay), "{refused}");

    play_level().await;
    assert_eq!(handles[0].state(), HandleState::Terminal);
    let refused = handles[0].reset(Some(1)).await.expect_err("the run fixes its seeds");
    assert_eq!(refused.code(), Some(&ErrorCode::ResetSeedFixed), "{refused}");
    let events_at_end = host.transcript(&id).await.len();

    let started = handles[0].reset(None).await.expect("reset");
    assert_eq!(episode_index(&started), Some(1));
    assert_eq!(handles[0].state(), HandleState::Active, "the reset turns the terminal handle active");
    // The other seat's handle learns of the new level from its next observation.
    let seen = handles[1].observe().await.expect("observe");
    assert_eq!(episode_index(&seen), Some(1));
    assert_eq!(handles[1].state(), HandleState::Active);
    assert_eq!(host.transcript(&id).await.len(), events_at_end + 1, "level 1's header line, no event yet");

    play_level().await;
    let refused = handles[1].reset(None).await.expect_err("no level follows the last");
    assert_eq!(refused.code(), Some(&ErrorCode::RunOver), "{refused}");
    let result = handles[0].finalize(FinalizeRequest::default()).await.expect("finalize");
    let replay = result.replay_text().expect("the replay rides in the result").to_owned();
    let header = json(replay.lines().next().expect("a header"));
    let levels = header.get("levels").and_then(Value::as_array).map(Vec::len);
    assert_eq!(levels, Some(2), "the run replay holds both levels");
    host.verify_replay("gate-run-reset", &replay);
}
