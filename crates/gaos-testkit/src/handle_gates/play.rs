//! Gates about playing: one handle type for every kind of play (g1), pacing
//! (g7), fresh agents per episode (g8), waiting on the change feed, and a
//! model-backed driver through the real host.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use gaos_json::{Value, canonical_json};
use gaos_runner::drivers::{FirstLegalDriver, HumanDriver, OpenAiConfig, OpenAiDriver, RandomDriver};
use gaos_runner::{
    AgentDriver, Conversation, FinalizeMode, FinalizeRequest, Observation, Pacing, Presenter, RunError, RunOptions,
    RunOutcome, RunPolicy, SessionPolicy, Usage, run_session, wait_backoff,
};

use super::drivers::{Coached, Counting, Remembering, Screen, Slow, fake_provider};
use super::{GateHost, accepted, gameplay, json, official_policy, official_request, play, seat_handles};

/// One kind of play: its name, session policy, seat drivers, run policy and presenter.
type Mode = (&'static str, SessionPolicy, Vec<Box<dyn AgentDriver>>, RunPolicy, Option<Arc<dyn Presenter>>);

/// g1: normal, guided, autonomous, watched and headless benchmark play all
/// run one handle type through `run_session`.
pub async fn g1_same_handle_type_for_normal_guided_autonomous_watched_and_headless_play(host: &mut impl GateHost) {
    let request = r#"{"game":"conformance/counter","level":{"rounds":3},"participantId":"a"}"#;
    let human = || -> Box<dyn AgentDriver> {
        Box::new(HumanDriver::new(std::io::Cursor::new(b"2\n3\n4\n".to_vec()), std::io::sink()))
    };
    let screen = Arc::new(Screen::default());
    let modes: Vec<Mode> = vec![
        (
            "normal",
            SessionPolicy::host_default(),
            vec![human(), Box::new(RandomDriver::new(1))],
            RunPolicy::default(),
            None,
        ),
        (
            "guided",
            SessionPolicy::host_default(),
            vec![Box::new(Coached(Box::new(FirstLegalDriver::new()))), Box::new(RandomDriver::new(2))],
            RunPolicy { pacing: Pacing::Paced, ..RunPolicy::default() },
            Some(screen.clone()),
        ),
        (
            "autonomous",
            SessionPolicy::host_default(),
            vec![Box::new(RandomDriver::new(3)), Box::new(RandomDriver::new(4))],
            RunPolicy::default(),
            None,
        ),
        (
            "watched-benchmark",
            official_policy(),
            vec![Box::new(RandomDriver::new(5)), Box::new(RandomDriver::new(6))],
            RunPolicy { pacing: Pacing::Paced, ..RunPolicy::default() },
            Some(screen.clone()),
        ),
        (
            "headless-benchmark",
            official_policy(),
            vec![Box::new(RandomDriver::new(7)), Box::new(RandomDriver::new(8))],
            RunPolicy::default(),
            None,
        ),
    ];
    for (mode, policy, drivers, run_policy, presenter) in modes {
        // One handle type for every mode, used only through the trait.
        // Benchmark modes play the manifest's planned episode (3 rounds too).
        let request = if mode.ends_with("benchmark") { official_request() } else { request.to_owned() };
        let (id, handles) = seat_handles(host, &request, &policy, &["a", "b"]).await;
        let (outcomes, result) = play(&handles, drivers, run_policy, presenter).await;
        assert_eq!(result.outcome.get("status"), Some(&Value::from("ended")), "{mode}");
        let events = host.transcript(&id).await;
        let submitted: usize = outcomes.iter().map(|o| o.decisions.len()).sum();
        assert_eq!(accepted(&events).len(), submitted, "{mode}: every decision is one accepted command");
        assert_eq!(submitted, 6, "{mode}: 3 rounds × 2 seats");
        if mode == "normal" {
            assert_eq!(outcomes[0].commands(), vec![json(r#"{"n":1}"#), json(r#"{"n":2}"#), json(r#"{"n":3}"#)]);
        }
        if mode == "guided" {
            assert!(
                outcomes[0].decisions.iter().all(|d| d.message.as_deref().is_some_and(|m| m.starts_with("coach:")))
            );
        }
        if mode.ends_with("benchmark") {
            let evaluation = result.evaluation.as_ref().and_then(|e| e.get("kind"));
            assert_eq!(evaluation, Some(&Value::from("official")), "{mode}");
        }
    }
    assert!(screen.0.load(Ordering::SeqCst) > 0, "watched modes presented their observations");
}

fn normalize(text: &str, id: &str) -> String {
    text.replace(id, "<session>")
}

/// g7: pacing never changes commands, transcript, outcome or replay.
pub async fn g7_paced_and_unpaced_runs_produce_identical_commands_transcripts_and_outcomes(host: &mut impl GateHost) {
    let mut runs = Vec::new();
    for pacing in [Pacing::Paced, Pacing::Unpaced] {
        let policy = SessionPolicy::host_default();
        let (id, handles) = seat_handles(
            host,
            r#"{"game":"conformance/tictactoe","seed":11,"participantId":"x"}"#,
            &policy,
            &["x", "o"],
        )
        .await;
        let drivers: Vec<Box<dyn AgentDriver>> = vec![Box::new(RandomDriver::new(21)), Box::new(RandomDriver::new(22))];
        let screen: Arc<dyn Presenter> = Arc::new(Screen::default());
        let (outcomes, result) =
            play(&handles, drivers, RunPolicy { pacing, ..RunPolicy::default() }, Some(screen)).await;
        let commands: Vec<Vec<Value>> = outcomes.iter().map(RunOutcome::commands).collect();
        let events = gameplay(&host.transcript(&id).await);
        // Tictactoe is sequential, so even arrival order is fixed: compare
        // the whole gameplay transcript (minus ids and wall-clock times).
        let transcript: Vec<String> = events
            .iter()
            .skip(1) // the header carries the creation time
            .map(|e| normalize(&canonical_json(e), &id))
            .collect();
        let replay = normalize(result.replay_text().expect("replay"), &id);
        let outcome = canonical_json(&result.outcome);
        runs.push((commands, transcript, outcome, replay.lines().skip(1).map(str::to_owned).collect::<Vec<_>>()));
    }
    assert!(!runs[0].0[0].is_empty());
    assert_eq!(runs[0], runs[1], "pacing never changes commands, transcript, outcome or replay");
}

/// Every session and episode identity a run observed.
fn identities(outcomes: &[&RunOutcome]) -> (BTreeSet<String>, BTreeSet<String>) {
    let observations = || outcomes.iter().flat_map(|o| o.observations.iter());
    let sessions = observations().map(Observation::session_id).map(str::to_owned).collect();
    let episodes = observations().filter_map(Observation::episode).map(|e| e.id).collect();
    (sessions, episodes)
}

/// g8: fresh-per-episode resets the agent at every episode, never the
/// session. The host announces one episode per session, so a multi-episode
/// run is several sessions played by the same two agents; a continuous run
/// of the same agents is the control (their memory must carry over). Then a
/// second run on a session already under way gets fresh agents while the
/// session continues where it was.
pub async fn g8_fresh_per_episode_resets_only_the_agent(host: &mut impl GateHost) {
    const EPISODES: usize = 3;
    const ROUNDS: usize = 2;
    let request = r#"{"game":"conformance/counter","level":{"rounds":2},"participantId":"a"}"#;
    let policy = SessionPolicy::host_default();
    for conversation in [Conversation::FreshPerEpisode, Conversation::Continuous] {
        let run_policy = RunPolicy { conversation, finalize: FinalizeMode::Caller, ..RunPolicy::default() };
        let mut agents = [Remembering::default(), Remembering::default()];
        let mut seen_sessions = BTreeSet::new();
        for episode in 0..EPISODES {
            let (id, handles) = seat_handles(host, request, &policy, &["a", "b"]).await;
            let [a, b] = &mut agents;
            let (ra, rb) = tokio::join!(
                run_session(handles[0].as_ref(), a, RunOptions::new(run_policy)),
                run_session(handles[1].as_ref(), b, RunOptions::new(run_policy)),
            );
            let (ra, rb) = (ra.expect("a"), rb.expect("b"));
            let (sessions, episodes) = identities(&[&ra, &rb]);
            assert_eq!(sessions.into_iter().collect::<Vec<_>>(), vec![id.clone()], "one session per episode");
            assert_eq!(episodes.len(), 1, "the host announces one episode per session");
            assert!(seen_sessions.insert(id.clone()), "every episode is a session of its own");
            for (seat, agent) in ["a", "b"].iter().zip(&agents) {
                let made = &agent.memory_at_decision[episode * ROUNDS..];
                let expected: Vec<usize> = match conversation {
                    // A fresh agent at the episode's first decision, which
                    // then remembers the episode's earlier decisions.
                    Conversation::FreshPerEpisode => (0..ROUNDS).collect(),
                    Conversation::Continuous => (episode * ROUNDS..(episode + 1) * ROUNDS).collect(),
                };
                assert_eq!(made, expected, "{conversation:?}, episode {episode}, seat {seat}: the agent's memory");
                let resets = if conversation == Conversation::FreshPerEpisode { episode + 1 } else { 0 };
                assert_eq!(
                    agent.resets, resets,
                    "{conversation:?}, episode {episode}, seat {seat}: one reset per episode"
                );
            }
            assert_eq!(accepted(&host.transcript(&id).await).len(), 2 * ROUNDS, "the episode's session played out");
            handles[0].finalize(FinalizeRequest::default()).await.expect("finalize");
        }
    }

    // A new run on a session under way (a restarted agent process): the
    // agent starts fresh, the session does not.
    let request = r#"{"game":"conformance/counter","level":{"rounds":3},"participantId":"a"}"#;
    let (id, handles) = seat_handles(host, request, &policy, &["a", "b"]).await;
    let fresh = RunPolicy {
        conversation: Conversation::FreshPerEpisode,
        finalize: FinalizeMode::Caller,
        ..RunPolicy::default()
    };
    let mut agents = [Remembering::default(), Remembering::default()];
    let [a, b] = &mut agents;
    let (first_a, first_b) = tokio::join!(
        run_session(handles[0].as_ref(), a, RunOptions::new(fresh).max_decisions(1)),
        run_session(handles[1].as_ref(), b, RunOptions::new(fresh).max_decisions(1)),
    );
    for first in [first_a, first_b] {
        assert_eq!(first.expect_err("stopped after one decision"), RunError::DecisionLimit(1));
    }
    let head = handles[0].observe().await.expect("observe").revision();
    assert!(head > 0, "the first round resolved");
    let [a, b] = &mut agents;
    let (ra, rb) = tokio::join!(
        run_session(handles[0].as_ref(), a, RunOptions::new(fresh)),
        run_session(handles[1].as_ref(), b, RunOptions::new(fresh)),
    );
    let (ra, rb) = (ra.expect("a"), rb.expect("b"));
    for (agent, run) in agents.iter().zip([&ra, &rb]) {
        assert_eq!(agent.resets, 2, "a reset at the start of each run");
        assert_eq!(agent.memory_at_decision, vec![0, 0, 1], "fresh again at the second run's first decision");
        assert_eq!(run.observations[0].revision(), head, "the second run starts at the session's head, not over");
    }
    let (sessions, _) = identities(&[&ra, &rb]);
    assert_eq!(sessions.into_iter().collect::<Vec<_>>(), vec![id.clone()], "the game session identity never changes");
    assert_eq!(accepted(&host.transcript(&id).await).len(), 6, "3 rounds × 2 seats: nothing replayed, nothing lost");
}

/// A seat waiting for the other sleeps on the handle's change feed (in
/// process) or its bounded backoff (HTTP has no change feed: the default
/// [`wait_backoff`]) instead of busy-polling.
pub async fn a_waiting_seat_sleeps_on_the_change_feed_instead_of_polling(host: &mut impl GateHost) {
    const THINK: Duration = Duration::from_millis(150);
    let (_, handles) = seat_handles(
        host,
        r#"{"game":"conformance/tictactoe","participantId":"x"}"#,
        &SessionPolicy::host_default(),
        &["x", "o"],
    )
    .await;
    let o = Counting { inner: handles[1].as_ref(), observes: AtomicUsize::new(0), waits: AtomicUsize::new(0) };
    let caller = RunPolicy { finalize: FinalizeMode::Caller, ..RunPolicy::default() };
    let (mut slow, mut first) = (Slow(THINK), FirstLegalDriver::new());
    let (x, o_run) = tokio::join!(
        run_session(handles[0].as_ref(), &mut slow, RunOptions::new(caller)),
        run_session(&o, &mut first, RunOptions::new(caller)),
    );
    let (x, o_run) = (x.expect("x"), o_run.expect("o"));
    let turns = x.decisions.len() + o_run.decisions.len();
    assert!(turns >= 5);
    // x thinks ~150 ms per move; a busy poll would observe thousands of
    // times. On the change feed o looks about once per x move; on a backoff
    // once per backoff step that fits in x's thinking time.
    let per_move = if host.has_change_feed() { 4 } else { 2 + backoff_steps_within(THINK) };
    let observes = o.observes.load(Ordering::SeqCst);
    assert!(
        observes <= per_move * x.decisions.len() + 4,
        "o observed {observes} times for {} x moves (at most {per_move} per move)",
        x.decisions.len()
    );
    assert!(o.waits.load(Ordering::SeqCst) >= x.decisions.len() - 1);
}

/// How many consecutive [`wait_backoff`] sleeps start within `span`.
fn backoff_steps_within(span: Duration) -> usize {
    let mut slept = Duration::ZERO;
    let mut steps = 0;
    while slept < span {
        slept += wait_backoff(steps as u32);
        steps += 1;
    }
    steps
}

/// The OpenAI-compatible driver (against a fake provider) plays a whole
/// match through the real host.
pub async fn the_openai_driver_plays_a_whole_match_through_the_host(host: &mut impl GateHost) {
    let base_url = fake_provider().await;
    let (_, handles) = seat_handles(
        host,
        r#"{"game":"conformance/counter","level":{"rounds":3},"participantId":"a"}"#,
        &SessionPolicy::host_default(),
        &["a", "b"],
    )
    .await;
    let config = OpenAiConfig { base_url, model: "fake".into(), api_key: Some("k".into()), ..OpenAiConfig::default() };
    let drivers: Vec<Box<dyn AgentDriver>> =
        vec![Box::new(OpenAiDriver::new(config).expect("driver")), Box::new(FirstLegalDriver::new())];
    let (outcomes, result) = play(&handles, drivers, RunPolicy::default(), None).await;
    // Counter offers {"n":0..3}: the model's re-asked answer is always the last, n = 3.
    assert_eq!(outcomes[0].commands(), vec![json(r#"{"n":3}"#); 3]);
    let usage = outcomes[0].decisions.iter().filter_map(|d| d.usage).fold(Usage::default(), |a, b| a + b);
    assert_eq!(usage, Usage { input_tokens: 300, output_tokens: 30, cost: None }, "two requests per decision");
    assert_eq!(result.outcome.get("status"), Some(&Value::from("ended")));
}
