//! Benchmark episodes on the in-process host (`HostedEpisodeFactory` over
//! `InProcessEpisodeHost`): one durable session per episode with a fixed
//! id, resumes that attach mid-episode without repeating accepted actions,
//! a stop between create and checkpoint, and a stop between finalize and
//! checkpoint.

use std::sync::Arc;

use gaos_games::GameRegistry;
use gaos_host::bench::{InProcessEpisodeHost, open_bench_host};
use gaos_json::Value;
use gaos_runner::benchmark::{
    BenchmarkManifest, BenchmarkOptions, BenchmarkStatus, DriverAssignment, EpisodeSession, GameInfo,
    HostedEpisodeFactory, InProgressEpisode, SessionFactory, plan_episodes, run_benchmark, scoring_plugin,
};
use gaos_runner::drivers::DriverSettings;
use gaos_runner::{RunError, RunOptions, run_session};

const MANIFEST: &str = r#"{
  "schema": "gaos.benchmark-manifest.v1",
  "benchmark": { "id": "host-test", "version": "1", "adapter": "gaos/maze" },
  "tasks": [{ "id": "small", "seeds": [5, 6], "episodes": 2, "maxSteps": 120 }],
  "scoring": { "plugin": "gaos.score.maze", "aggregation": "mean" },
  "submission": { "requireSignedSeats": false, "requireCompleteCoverage": true }
}"#;

struct Scratch(std::path::PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn scratch(name: &str) -> Scratch {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let dir = std::env::temp_dir().join(format!("gaos-host-bench-{name}-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch");
    Scratch(dir)
}

fn new_factory(host: &gaos_host::Host, manifest: &BenchmarkManifest) -> HostedEpisodeFactory<InProcessEpisodeHost> {
    let game = GameRegistry::builtin().get("gaos/maze").expect("built in");
    HostedEpisodeFactory::new(
        InProcessEpisodeHost::new(host),
        manifest,
        GameInfo::from_game(game.as_ref()),
        DriverAssignment::parse(&["random".into()]).expect("valid"),
        DriverSettings::new(0, "player"),
    )
    .expect("a valid factory")
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime")
}

/// Run the scored seat of an episode session to its end.
async fn finish(session: EpisodeSession, limit: u64) -> Result<gaos_runner::RunOutcome, RunError> {
    let mut seat = session.seats.into_iter().next().expect("one seat");
    run_session(seat.handle.as_ref(), seat.driver.as_mut(), RunOptions::default().max_decisions(limit)).await
}

#[test]
fn episodes_are_durable_sessions_with_fixed_ids_and_resume_mid_episode() {
    let dir = scratch("resume");
    let manifest = BenchmarkManifest::parse(MANIFEST).expect("valid");
    let plan = plan_episodes(&manifest);
    runtime().block_on(async {
        let host = open_bench_host(&dir.0.join("host"), GameRegistry::builtin()).await.expect("host");
        let factory = new_factory(&host, &manifest);
        // The reference: episode 0 played straight through.
        let session = factory.create_episode(&plan[0]).await.expect("creates");
        assert_eq!(session.attachment.get("sessionId").and_then(Value::as_str), Some("bench-0-small-seed-5-episode-0"));
        let whole = finish(session, 120).await.expect("runs");
        let whole_result = whole.result.expect("finalized");

        // Episode 1 stopped after 5 decisions, then attached from its attachment.
        let session = factory.create_episode(&plan[1]).await.expect("creates");
        let attachment = session.attachment.clone();
        let stopped = finish(session, 5).await;
        assert_eq!(stopped.expect_err("stops at the limit"), RunError::DecisionLimit(5));
        let in_progress = InProgressEpisode { plan: plan[1].clone(), attachment, attach_receipt_digest: None };
        let attached = factory.attach_episode(&in_progress).await.expect("attaches");
        assert_eq!(attached.seats[0].accepted, 5, "the session holds five accepted moves");
        let rest = finish(attached, 115).await.expect("runs to the end");

        // A fresh host, fresh sessions: episode 1 straight through must equal stopped + resumed.
        let other = scratch("reference");
        let reference_host = open_bench_host(&other.0.join("host"), GameRegistry::builtin()).await.expect("host");
        let reference = new_factory(&reference_host, &manifest).create_episode(&plan[1]).await.expect("creates");
        let straight = finish(reference, 120).await.expect("runs");
        assert_eq!(straight.decisions.len(), 5 + rest.decisions.len());
        let (a, b) = (straight.result.expect("finalized"), rest.result.expect("finalized"));
        assert_eq!(a.replay_text(), b.replay_text(), "same replay: nothing repeated, nothing skipped");
        assert_eq!(a.outcome, b.outcome);
        assert!(whole_result.replay_text().is_some());
    });
}

#[test]
fn a_stop_between_create_and_checkpoint_or_between_finalize_and_checkpoint_loses_nothing() {
    let dir = scratch("gaps");
    let manifest = BenchmarkManifest::parse(MANIFEST).expect("valid");
    let plan = plan_episodes(&manifest);
    runtime().block_on(async {
        let host = open_bench_host(&dir.0.join("host"), GameRegistry::builtin()).await.expect("host");
        let factory = new_factory(&host, &manifest);
        // Created, then the run stopped before recording it: creating again
        // takes the same session over (new seat tokens) at its head.
        let first = factory.create_episode(&plan[0]).await.expect("creates");
        let first_id = first.seats[0].handle.session_id().to_owned();
        let partial = finish(first, 3).await;
        assert!(partial.is_err());
        let again = factory.create_episode(&plan[0]).await.expect("takes the session over");
        assert_eq!(again.seats[0].handle.session_id(), first_id);
        assert_eq!(again.seats[0].accepted, 3);
        let attachment = again.attachment.clone();
        let done = finish(again, 117).await.expect("finishes");
        let result = done.result.expect("finalized");

        // Finalized, then the run stopped before recording it: attaching
        // adopts the finalized head and run_session gets the same result.
        let in_progress = InProgressEpisode { plan: plan[0].clone(), attachment, attach_receipt_digest: None };
        let adopted = factory.attach_episode(&in_progress).await.expect("adopts the finalized session");
        let repeat = finish(adopted, 120).await.expect("repeats the finalize");
        assert!(repeat.decisions.is_empty());
        assert_eq!(repeat.result.expect("finalized").canonical(), result.canonical());
    });
}

#[test]
fn a_whole_benchmark_runs_on_the_in_process_host_with_fixed_session_ids() {
    let dir = scratch("whole");
    let manifest = BenchmarkManifest::parse(MANIFEST).expect("valid");
    runtime().block_on(async {
        let host = open_bench_host(&dir.0.join("host"), GameRegistry::builtin()).await.expect("host");
        let factory = new_factory(&host, &manifest);
        let agent = factory.agent();
        assert_eq!((agent.kind.as_str(), agent.id.as_str()), ("local", "random"));
        let scorer = Arc::from(scoring_plugin("gaos.score.maze").expect("built in"));
        let run =
            run_benchmark(&manifest, scorer, Arc::new(factory), BenchmarkOptions::new(2, agent)).await.expect("runs");
        assert_eq!(run.status, BenchmarkStatus::Complete);
        assert_eq!(run.checkpoint.completed.len(), 4);
        for completed in &run.checkpoint.completed {
            let replay = completed.replay.as_str().expect("JSONL text");
            assert!(replay.contains(&format!("\"sessionId\":\"bench-{}-", completed.plan.index)), "{replay}");
            assert_eq!(
                completed.terminal_outcome.get("actionsUsed").and_then(Value::as_u64),
                Some(completed.observations.steps)
            );
        }
    });
}

#[test]
fn an_in_progress_episode_whose_session_is_gone_starts_over() {
    let dir = scratch("gone");
    let manifest = BenchmarkManifest::parse(MANIFEST).expect("valid");
    let plan = plan_episodes(&manifest);
    runtime().block_on(async {
        let host = open_bench_host(&dir.0.join("first"), GameRegistry::builtin()).await.expect("host");
        let session = new_factory(&host, &manifest).create_episode(&plan[2]).await.expect("creates");
        let attachment = session.attachment.clone();
        assert!(finish(session, 4).await.is_err(), "stopped part-way");
        // A new, empty host (its data lost): the attachment names a session it never had.
        let fresh = open_bench_host(&dir.0.join("second"), GameRegistry::builtin()).await.expect("host");
        let in_progress = InProgressEpisode { plan: plan[2].clone(), attachment, attach_receipt_digest: None };
        let restarted = new_factory(&fresh, &manifest).attach_episode(&in_progress).await.expect("starts over");
        assert_eq!(restarted.seats[0].accepted, 0);
        let replay = finish(restarted, 120).await.expect("runs").result.expect("finalized");
        // Deterministic drivers: the same episode as if nothing had happened.
        let third = open_bench_host(&dir.0.join("third"), GameRegistry::builtin()).await.expect("host");
        let straight = new_factory(&third, &manifest).create_episode(&plan[2]).await.expect("creates");
        let straight = finish(straight, 120).await.expect("runs").result.expect("finalized");
        assert_eq!(replay.replay_text(), straight.replay_text());
    });
}
