//! The benchmark contract without a host: manifests (the reference
//! template digest, refusals naming the field), plans, scoring arithmetic
//! and bundles packed to the reference vector.

mod manifest_template;

use gaos_json::{Value, canonical_json, obj};
use gaos_runner::benchmark::{
    AgentIdentity, AgentKind, BenchmarkManifest, BenchmarkRun, BenchmarkStatus, Checkpoint, CompletedEpisode,
    EpisodePlan, ResourceObservations, Submission, aggregate_scores, encode_uri_component, pack_run, plan_episodes,
    scoring_plugin,
};
use manifest_template::{TEMPLATE, manifest_with};

fn manifest(tasks: &str) -> BenchmarkManifest {
    BenchmarkManifest::parse(&manifest_with(tasks, "gaos.score.outcome", "mean")).expect("a valid manifest")
}

// ------------------------------------------------------------------ manifest

#[test]
fn the_init_template_reproduces_the_reference_manifest_digest() {
    let manifest = BenchmarkManifest::parse(TEMPLATE).expect("the template is valid");
    assert_eq!(manifest.digest(), "2c82bd80f1a683af9d26485a7c3708bb4b02eb8b8d0e12e00a0264b5beca377d");
    // Key order and whitespace do not matter; any change of content does.
    let reordered = BenchmarkManifest::parse(&canonical_json(manifest.value())).expect("valid");
    assert_eq!(reordered.digest(), manifest.digest());
    let other = BenchmarkManifest::parse(&TEMPLATE.replace("101", "102")).expect("valid");
    assert_ne!(other.digest(), manifest.digest());
}

#[test]
fn invalid_manifests_are_refused_with_the_field_named() {
    let task = r#"{"id":"a","seeds":[1],"episodes":1,"maxSteps":5}"#;
    let cases: Vec<(String, &str)> = vec![
        (manifest_with("[]", "p", "mean"), "tasks: must hold at least one task"),
        (manifest_with(&format!("[{task},{task}]"), "p", "mean"), "tasks[1].id: duplicate task id"),
        (manifest_with(r#"[{"id":"a","seeds":[1,2,1],"episodes":1,"maxSteps":5}]"#, "p", "mean"), "tasks[0].seeds[2]"),
        (manifest_with(r#"[{"id":"a","seeds":[4294967296],"episodes":1,"maxSteps":5}]"#, "p", "mean"), "seeds[0]"),
        (manifest_with(r#"[{"id":"a","seeds":[-1],"episodes":1,"maxSteps":5}]"#, "p", "mean"), "seeds[0]"),
        (manifest_with(r#"[{"id":"a","seeds":[1.5],"episodes":1,"maxSteps":5}]"#, "p", "mean"), "seeds[0]"),
        (manifest_with(r#"[{"id":"a","seeds":[],"episodes":1,"maxSteps":5}]"#, "p", "mean"), "tasks[0].seeds"),
        (manifest_with(r#"[{"id":"a","seeds":[1],"episodes":0,"maxSteps":5}]"#, "p", "mean"), "tasks[0].episodes"),
        (manifest_with(r#"[{"id":"a","seeds":[1],"episodes":1,"maxSteps":0}]"#, "p", "mean"), "tasks[0].maxSteps"),
        (manifest_with(r#"[{"id":"a","seeds":[1],"episodes":1,"maxSteps":5,"weight":-1}]"#, "p", "mean"), "weight"),
        (
            manifest_with(r#"[{"id":"a","seeds":[1],"episodes":1,"maxSteps":5,"wieght":1}]"#, "p", "mean"),
            "tasks[0].wieght",
        ),
        (manifest_with(r#"[{"id":"","seeds":[1],"episodes":1,"maxSteps":5}]"#, "p", "mean"), "tasks[0].id"),
        (manifest_with(&format!("[{task}]"), "p", "median"), "scoring.aggregation"),
        (manifest_with(&format!("[{task}]"), "", "mean"), "scoring.plugin"),
        (
            manifest_with(r#"[{"id":"a","seeds":[1],"episodes":1,"maxSteps":5,"weight":0}]"#, "p", "weighted-mean"),
            "weights add up to 0",
        ),
        (TEMPLATE.replace("gaos.benchmark-manifest.v1", "gaos.benchmark-manifest"), "schema"),
        (TEMPLATE.replace(r#""schema""#, r#""extra": 1, "schema""#), "extra: unknown field"),
        (TEMPLATE.replace(r#""adapter""#, r#""adaptor""#), "benchmark.adaptor: unknown field"),
        (TEMPLATE.replace("false", "\"no\""), "submission.requireSignedSeats"),
    ];
    for (text, expected) in cases {
        let error = BenchmarkManifest::parse(&text).expect_err(expected).to_string();
        assert!(error.contains(expected), "expected {expected:?} in {error:?}");
    }
    // Authority requirements: schemas required, duplicates refused, enums checked.
    let authority =
        |entries: &str| TEMPLATE.replace(r#""schema""#, &format!(r#""authorityRequirements": {entries}, "schema""#));
    let one = r#"{"claim":"time","purpose":"timestamp","authorityId":"tsa","acceptedSchemas":["x"],"required":true}"#;
    BenchmarkManifest::parse(&authority(&format!("[{one}]"))).expect("a valid requirement");
    for (entries, expected) in [
        (format!("[{one},{one}]"), "duplicate authority requirement time:tsa"),
        (one.replace(r#"["x"]"#, "[]"), "acceptedSchemas: must not be empty"),
        (one.replace(r#""time""#, r#""weather""#), "claim: must be one of"),
        (one.replace(r#""tsa""#, r#""""#), "authorityId"),
        (one.replace(r#""required":true"#, r#""required":true,"trust":1"#), "authorityRequirements[0].trust"),
    ] {
        let entries = if entries.starts_with('[') { entries } else { format!("[{entries}]") };
        let text = authority(&entries);
        let error = BenchmarkManifest::parse(&text).expect_err(expected).to_string();
        assert!(error.contains(expected), "expected {expected:?} in {error:?}");
    }
}

// ---------------------------------------------------------------------- plan

#[test]
fn the_plan_is_tasks_then_seeds_as_authored_then_episodes() {
    let manifest = manifest(
        r#"[{"id":"b","seeds":[9,2],"episodes":2,"maxSteps":5},{"id":"a","seeds":[0],"episodes":3,"maxSteps":7}]"#,
    );
    let plan = plan_episodes(&manifest);
    let rows: Vec<String> = plan.iter().map(|p| format!("{}:{}", p.index, p.episode_id())).collect();
    assert_eq!(
        rows,
        [
            "0:b-seed-9-episode-0",
            "1:b-seed-9-episode-1",
            "2:b-seed-2-episode-0",
            "3:b-seed-2-episode-1",
            "4:a-seed-0-episode-0",
            "5:a-seed-0-episode-1",
            "6:a-seed-0-episode-2"
        ]
    );
    assert_eq!(canonical_json(&plan[4].to_value()), r#"{"episode":0,"index":4,"maxSteps":7,"seed":0,"taskId":"a"}"#);
    assert_eq!(EpisodePlan::from_value(&plan[4].to_value()), Ok(plan[4].clone()));
    // Driver seeds depend on the plan entry only, and differ between episodes.
    let seeds: std::collections::BTreeSet<u32> = plan.iter().map(EpisodePlan::driver_seed).collect();
    assert_eq!(seeds.len(), plan.len());
    assert_eq!(encode_uri_component("a b/ü!*'()~-_."), "a%20b%2F%C3%BC!*'()~-_.");
}

// ------------------------------------------------------------------- scoring

#[test]
fn aggregation_follows_the_reference_arithmetic_exactly() {
    let tasks = r#"[{"id":"x","seeds":[1,2,3],"episodes":1,"maxSteps":5,"weight":3},
                    {"id":"y","seeds":[1],"episodes":2,"maxSteps":5,"weight":0.5}]"#;
    let scores = [0.1, 0.2, 0.3, 0.7, 0.25];
    let cases: [(&str, f64); 3] = [
        ("mean", (((0.1 + 0.2) + 0.3) / 3.0 + (0.7 + 0.25) / 2.0) / 2.0),
        ("weighted-mean", ((((0.1 + 0.2) + 0.3) / 3.0) * 3.0 + ((0.7 + 0.25) / 2.0) * 0.5) / 3.5),
        ("sum", ((0.1 + 0.2) + 0.3) / 3.0 + (0.7 + 0.25) / 2.0),
    ];
    for (aggregation, expected) in cases {
        let manifest = BenchmarkManifest::parse(&manifest_with(tasks, "p", aggregation)).expect("valid");
        let plan = plan_episodes(&manifest);
        // Scores arrive in any order; they are summed in plan order.
        let mut episodes: Vec<(EpisodePlan, f64)> = plan.iter().cloned().zip(scores).collect();
        episodes.reverse();
        let aggregate = aggregate_scores(&manifest, &episodes).expect("complete");
        assert_eq!(aggregate.aggregate_score.to_bits(), expected.to_bits(), "{aggregation}");
        assert_eq!(aggregate.task_scores[0].1.to_bits(), (((0.1f64 + 0.2) + 0.3) / 3.0).to_bits());
        episodes.pop();
        assert!(aggregate_scores(&manifest, &episodes).is_err(), "a missing episode is refused");
    }
}

#[test]
fn builtin_scorers_and_unknown_plugins() {
    let plan = EpisodePlan { index: 0, task_id: "t".into(), seed: 1, episode: 0, max_steps: 9 };
    let outcome = |text: &str| gaos_json::parse(text).expect("JSON");
    let won = outcome(r#"{"status":"won","stars":2,"actionsUsed":8,"outcome":{"moves":8,"shortestPath":6}}"#);
    let failed = outcome(r#"{"status":"failed","stars":null,"actionsUsed":9}"#);
    let score = |id: &str, o: &Value| scoring_plugin(id).expect("built in").score(&plan, o);
    assert_eq!(score("gaos.score.outcome", &won), Ok(1.0));
    assert_eq!(score("gaos.score.outcome", &failed), Ok(0.0));
    assert_eq!(score("gaos.score.stars", &won), Ok(2.0 / 3.0));
    assert_eq!(score("gaos.score.stars", &failed), Ok(0.0));
    assert_eq!(score("gaos.score.maze", &won), Ok(0.75));
    assert_eq!(score("gaos.score.maze", &failed), Ok(0.0));
    assert!(
        score("gaos.score.maze", &outcome(r#"{"status":"won"}"#))
            .is_err_and(|e| e.contains("gaos.score.maze needs outcome.moves"))
    );
    let Err(error) = scoring_plugin("./score.mjs") else { panic!("unknown plugins are refused") };
    assert!(error.to_string().contains("gaos.score.outcome, gaos.score.stars, gaos.score.maze"), "{error}");
}

// -------------------------------------------------------------------- bundle

#[test]
fn packing_the_reference_vector_reproduces_its_content_and_package_digests() {
    let manifest = BenchmarkManifest::parse(TEMPLATE).expect("valid");
    let plan = plan_episodes(&manifest);
    let completed = CompletedEpisode {
        plan: plan[0].clone(),
        score: 0.5,
        replay: Value::from("line1\n\n"),
        terminal_outcome: obj! { "status" => "won" }.into(),
        observations: ResourceObservations::steps(3),
    };
    let scores = [(plan[0].clone(), 0.5)];
    let run = BenchmarkRun {
        status: BenchmarkStatus::Complete,
        checkpoint: Checkpoint {
            manifest_digest: manifest.digest(),
            agent: AgentIdentity { kind: AgentKind::Local, id: "a".into() },
            plan,
            completed: vec![completed],
            in_progress: Vec::new(),
        },
        aggregate: Some(aggregate_scores(&manifest, &scores).expect("complete")),
    };
    let packed = pack_run(&manifest, &run, Submission::new("s", "a", AgentKind::Local)).expect("packs");
    assert_eq!(packed.bundle.content_digest, "aeadcc9e5b4fb51cb74f0764745d2730736c511c136330a8c8416b14441a688e");
    assert_eq!(packed.digest, "d0cfaaed3b5c7d0df8d3bc257210fbfc691892fcf81c4c44c1323df2065d1d74");
    assert_eq!(packed.files["episodes/task-a-seed-101-episode-0.gaos-replay.jsonl"], "line1\n");
    assert_eq!(packed.bundle.package_digest(), packed.digest);
    // Round trip through a directory, byte for byte.
    let dir = std::env::temp_dir().join(format!("gaos-bundle-vector-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    gaos_runner::benchmark::write_bundle_dir(&dir, &packed.files).expect("writes");
    let read = gaos_runner::benchmark::read_bundle_dir(&dir).expect("reads");
    assert_eq!(read, packed.bundle);
    assert!(gaos_runner::benchmark::write_bundle_dir(&dir, &packed.files).is_err(), "never overwrites");
    std::fs::write(dir.join("notes.txt"), "extra").expect("write");
    let error = gaos_runner::benchmark::read_bundle_dir(&dir).expect_err("extra file").to_string();
    assert!(error.contains("notes.txt"), "{error}");
    std::fs::remove_file(dir.join("notes.txt")).expect("remove");
    std::fs::write(dir.join("scores.json"), packed.files["scores.json"].trim_end()).expect("write");
    let error = gaos_runner::benchmark::read_bundle_dir(&dir).expect_err("altered").to_string();
    assert!(error.contains("scores.json is not in canonical form"), "{error}");
    // Self-reported observations are not verified, but must have the documented types.
    let observations = "\"selfReportedObservations\":{\"steps\":3}";
    assert!(packed.files["scores.json"].contains(observations), "{}", packed.files["scores.json"]);
    for (bad, field) in [
        ("{\"steps\":3,\"wallClockMs\":-1}", "wallClockMs"),
        ("{\"cost\":\"free\",\"steps\":3}", "cost"),
        ("{\"provider\":\"\",\"steps\":3}", "provider"),
    ] {
        let tampered =
            packed.files["scores.json"].replace(observations, &format!("\"selfReportedObservations\":{bad}"));
        std::fs::write(dir.join("scores.json"), tampered).expect("write");
        let error = gaos_runner::benchmark::read_bundle_dir(&dir).expect_err(bad).to_string();
        assert!(error.contains(&format!("selfReportedObservations: observations.{field}")), "{error}");
    }
    let _ = std::fs::remove_dir_all(&dir);
    // Only complete runs pack.
    let interrupted = BenchmarkRun { status: BenchmarkStatus::Interrupted, aggregate: None, ..run };
    assert!(pack_run(&manifest, &interrupted, Submission::new("s", "a", AgentKind::Local)).is_err());
}
