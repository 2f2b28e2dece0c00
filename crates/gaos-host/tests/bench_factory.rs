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

/// Two hilo episodes under a manifest that requires signed seats.
const SIGNED_MANIFEST: &str = r#"{
  "schema": "gaos.benchmark-manifest.v1",
  "benchmark": { "id": "signed-test", "version": "1", "adapter": "conformance/hilo" },
  "tasks": [{ "id": "default", "seeds": [3, 4], "episodes": 1, "maxSteps": 10 }],
  "scoring": { "plugin": "gaos.score.outcome", "aggregation": "mean" },
  "submission": { "requireSignedSeats": true, "requireCompleteCoverage": true }
}"#;

/// Run the signed-seats benchmark on a fresh host (`signing`: alice's key,
/// bob's derived per episode), then pack and verify its bundle; the host's
/// official results of every episode are returned too.
async fn signed_seats_run(
    dir: &std::path::Path,
    signing: Option<gaos_runner::signing::SeatSigningKey>,
) -> (gaos_runner::benchmark::BundleVerification, Vec<Value>) {
    use gaos_runner::benchmark::{ReplayEpisodeVerifier, Submission, pack_run, verify_bundle};
    let manifest = BenchmarkManifest::parse(SIGNED_MANIFEST).expect("valid");
    let host = open_bench_host(dir, GameRegistry::builtin()).await.expect("host");
    let game = GameRegistry::builtin().get("conformance/hilo").expect("built in");
    let factory = HostedEpisodeFactory::new(
        InProcessEpisodeHost::new(&host),
        &manifest,
        GameInfo::from_game(game.as_ref()),
        DriverAssignment::parse(&["first-legal".into()]).expect("valid"),
        DriverSettings::new(0, "player"),
    )
    .expect("a valid factory");
    let factory = match signing {
        Some(key) => factory.signed_by([("alice".to_owned(), key)].into()).expect("alice is a seat"),
        None => factory,
    };
    let agent = factory.agent();
    let scorer: Arc<dyn gaos_runner::benchmark::ScoringPlugin> =
        Arc::from(scoring_plugin("gaos.score.outcome").expect("built in"));
    let run = run_benchmark(&manifest, Arc::clone(&scorer), Arc::new(factory), BenchmarkOptions::new(1, agent.clone()))
        .await
        .expect("runs");
    assert_eq!(run.status, BenchmarkStatus::Complete);
    let mut results = Vec::new();
    for completed in &run.checkpoint.completed {
        let id = gaos_runner::benchmark::episode_session_id(&completed.plan);
        let answer = host.result(&gaos_host::auth::Caller::Operator, &id).await.expect("a finalized result");
        results.push(gaos_json::parse(&answer.body).expect("JSON"));
    }
    let packed = pack_run(&manifest, &run, Submission::new("s", agent.id, agent.kind)).expect("packs");
    let registry = GameRegistry::builtin();
    let resolver = |g: &gaos_kernel::GameRef| registry.get(&g.id);
    let verifier = ReplayEpisodeVerifier::new(&manifest, &resolver, scorer.as_ref());
    (verify_bundle(&packed.bundle, &manifest, &verifier), results)
}

#[test]
fn entrants_with_a_key_sign_and_a_manifest_requiring_signed_seats_refuses_unsigned_episodes() {
    use gaos_runner::benchmark::VerificationState;
    let dir = scratch("signed");
    let alice = gaos_runner::signing::SeatSigningKey::from_seed([7; 32]);
    runtime().block_on(async {
        // Signed: alice with her key, bob with one derived for each episode.
        let (verified, results) = signed_seats_run(&dir.0.join("signed"), Some(alice.clone())).await;
        assert!(verified.valid, "{:?}", verified.facts.reasons);
        assert_eq!(verified.facts.signatures, VerificationState::Verified);
        for result in &results {
            let evaluation = result.get("evaluation").expect("an official evaluation");
            assert_eq!(evaluation.get("publishable"), Some(&Value::Bool(true)), "{result}");
            let seats = result.get("extensions").and_then(|e| e.get("gaos.session.signatures")).expect("report");
            assert_eq!(seats.get("state").and_then(Value::as_str), Some("signed"), "{seats}");
            let replay = result.get("replay").and_then(Value::as_str).unwrap_or_default().to_owned();
            let header = gaos_json::parse(replay.lines().next().unwrap_or("{}")).expect("header");
            let keys = header.get("seatKeys").and_then(Value::as_array).cloned().unwrap_or_default();
            assert_eq!(keys.first(), Some(&alice.seat_key("alice", 1)), "alice's own key is in the roster");
        }

        // Unsigned episodes: bundle verification and the official evaluation refuse them.
        let (verified, results) = signed_seats_run(&dir.0.join("unsigned"), None).await;
        assert!(!verified.valid);
        assert!(
            verified.facts.reasons.iter().any(|r| r.contains("signed-seat evidence is required")),
            "{:?}",
            verified.facts.reasons
        );
        for result in &results {
            let evaluation = result.get("evaluation").expect("an official evaluation");
            assert_eq!(evaluation.get("publishable"), Some(&Value::Bool(false)), "{result}");
            assert!(evaluation.to_string().contains("submission.requireSignedSeats"), "{evaluation}");
        }
    });
}

/// Run every seat of `session` at once, each stopping after `limit`
/// decisions (or at the end of the game); the scored seat's outcome.
async fn run_seats(session: EpisodeSession, limit: u64) -> Result<gaos_runner::RunOutcome, RunError> {
    let mut runs = Vec::new();
    for mut seat in session.seats {
        runs.push(tokio::spawn(async move {
            run_session(seat.handle.as_ref(), seat.driver.as_mut(), RunOptions::default().max_decisions(limit)).await
        }));
    }
    let mut outcomes = Vec::new();
    for run in runs {
        outcomes.push(run.await.expect("the seat's task"));
    }
    outcomes.into_iter().next().expect("a scored seat")
}

#[test]
fn a_signed_episode_resumes_and_every_seat_signs_with_the_same_keys() {
    let dir = scratch("signed-resume");
    let manifest = BenchmarkManifest::parse(SIGNED_MANIFEST).expect("valid");
    let plan = plan_episodes(&manifest);
    let alice = gaos_runner::signing::SeatSigningKey::from_seed([7; 32]);
    let factory = |host: &gaos_host::Host| {
        let game = GameRegistry::builtin().get("conformance/hilo").expect("built in");
        HostedEpisodeFactory::new(
            InProcessEpisodeHost::new(host),
            &manifest,
            GameInfo::from_game(game.as_ref()),
            DriverAssignment::parse(&["first-legal".into()]).expect("valid"),
            DriverSettings::new(0, "player"),
        )
        .and_then(|f| f.signed_by([("alice".to_owned(), alice.clone())].into()))
        .expect("a signed factory")
    };
    runtime().block_on(async {
        let host = open_bench_host(&dir.0.join("host"), GameRegistry::builtin()).await.expect("host");
        let session = factory(&host).create_episode(&plan[0]).await.expect("creates");
        let attachment = session.attachment.clone();
        assert!(run_seats(session, 1).await.is_err(), "stopped after one signed move per seat");
        // A new factory (a resumed run) re-derives bob's key and signs on.
        let in_progress = InProgressEpisode { plan: plan[0].clone(), attachment, attach_receipt_digest: None };
        let resumed = factory(&host).attach_episode(&in_progress).await.expect("attaches");
        assert_eq!(resumed.seats.iter().map(|s| s.accepted).collect::<Vec<_>>(), vec![1, 1]);
        let result = run_seats(resumed, 10).await.expect("runs").result.expect("finalized");
        let report =
            result.extensions.as_ref().and_then(|e| e.get("gaos.session.signatures")).expect("a report").clone();
        assert_eq!(report.get("state").and_then(Value::as_str), Some("signed"), "{report}");
    });
}
