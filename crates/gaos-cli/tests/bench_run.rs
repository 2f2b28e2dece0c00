//! `gaos bench` through the real binary: a run killed with SIGKILL and
//! resumed finishes with the same scores and bundle digests as an
//! uninterrupted run (without redoing completed episodes); `verify` accepts
//! what `run` packs and reports tampering; bad input exits 2 with the
//! field or file named.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::Value;

const GAOS: &str = env!("CARGO_BIN_EXE_gaos");

/// A scratch directory removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let path = std::env::temp_dir().join(format!("gaos-bench-{name}-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&path).expect("scratch dir");
        Scratch(path)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// 24 short maze episodes: enough to stop a run part-way.
const MANIFEST: &str = r#"{
  "schema": "gaos.benchmark-manifest.v1",
  "benchmark": { "id": "resume-test", "version": "1", "adapter": "gaos/maze" },
  "tasks": [
    { "id": "tiny", "seeds": [1, 2, 3, 4, 5, 6, 7, 8], "episodes": 2, "maxSteps": 60 },
    { "id": "small", "seeds": [11, 12, 13, 14], "episodes": 2, "maxSteps": 120, "weight": 2 }
  ],
  "scoring": { "plugin": "gaos.score.maze", "aggregation": "weighted-mean" },
  "submission": { "requireSignedSeats": false, "requireCompleteCoverage": true }
}"#;

fn write_manifest(dir: &Path, text: &str) -> PathBuf {
    let path = dir.join("manifest.json");
    std::fs::write(&path, text).expect("write the manifest");
    path
}

fn gaos(args: &[&str]) -> Output {
    Command::new(GAOS).args(args).output().expect("run gaos")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Run `gaos bench run ... --json` and return its summary.
fn bench_json(args: &[&str]) -> (Value, String) {
    let output = gaos(&[&["bench", "run", "--json"], args].concat());
    let stdout = text(&output.stdout);
    let stderr = text(&output.stderr);
    assert!(output.status.success(), "gaos bench run {args:?} failed:\n{stdout}\n{stderr}");
    let summary = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("summary is not JSON ({e}): {stdout}"));
    (summary, stderr)
}

/// Episode ids of a run's checkpoint (`checkpoint.json` plus its journal)
/// under `key`: `completed` or `inProgress`.
fn checkpoint_ids(path: &Path, key: &str) -> BTreeSet<String> {
    let id = |entry: &Value| {
        let plan = &entry["plan"];
        format!("{}-seed-{}-episode-{}", plan["taskId"].as_str().unwrap_or(""), plan["seed"], plan["episode"])
    };
    let mut completed = BTreeSet::new();
    let mut in_progress = BTreeSet::new();
    let read = |path: &Path| std::fs::read_to_string(path).unwrap_or_default();
    if let Ok(value) = serde_json::from_str::<Value>(&read(path)) {
        completed.extend(value["completed"].as_array().into_iter().flatten().map(id));
        in_progress.extend(value["inProgress"].as_array().into_iter().flatten().map(id));
    }
    let journal = read(&PathBuf::from(format!("{}.journal", path.display())));
    for line in journal.lines().skip(1) {
        let Ok(record) = serde_json::from_str::<Value>(line) else { break };
        if let Some(entry) = record.get("completed") {
            in_progress.remove(&id(entry));
            completed.insert(id(entry));
        } else if let Some(entry) = record.get("inProgress")
            && !completed.contains(&id(entry))
        {
            in_progress.insert(id(entry));
        }
    }
    if key == "completed" { completed } else { in_progress }
}

/// Start `gaos bench run ARGS` and SIGKILL it once its checkpoint lists
/// three completed episodes.
fn run_until_killed(args: &[&str], checkpoint: &Path, env: &[(&str, &str)]) {
    let mut child = Command::new(GAOS)
        .args([&["bench", "run"], args].concat())
        .envs(env.iter().copied())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn gaos bench run");
    let ready = || checkpoint_ids(checkpoint, "completed").len() >= 3;
    gaos_testkit::kill::kill_when(&mut child, ready, Duration::from_secs(120), "the run (it needs more episodes)");
}

#[test]
fn a_killed_run_resumes_without_redoing_episodes_and_packs_the_same_bundle() {
    let scratch = Scratch::new("resume");
    let manifest = write_manifest(&scratch.0, MANIFEST);
    let manifest = manifest.to_str().expect("UTF-8 path");
    let whole = scratch.0.join("whole");
    let killed = scratch.0.join("killed");

    // A simulated clock (every episode takes 9 ms) makes the recorded
    // wallClockMs the same in both runs, so whole bundles compare.
    let clock = ["--test-clock-ms", "9"];
    let (reference, _) =
        bench_json(&[&[manifest, "--jobs", "2", "--out", whole.to_str().expect("UTF-8")], &clock[..]].concat());
    assert_eq!(reference["status"], "complete");
    assert_eq!(reference["verified"], true);
    assert_eq!(reference["episodes"], 24);

    // Start the same run and SIGKILL it once the checkpoint shows completed episodes.
    let checkpoint = killed.join("checkpoint.json");
    let killed_args = [&[manifest, "--jobs", "2", "--out", killed.to_str().expect("UTF-8")], &clock[..]].concat();
    run_until_killed(&killed_args, &checkpoint, &[]);
    let kept = checkpoint_ids(&checkpoint, "completed");
    let in_progress = checkpoint_ids(&checkpoint, "inProgress");
    assert!(!kept.is_empty() && kept.len() < 24, "killed part-way: {} completed", kept.len());

    let (resumed, stderr) = bench_json(&[&killed_args[..], &["--resume"]].concat());
    assert_eq!(resumed["status"], "complete");
    assert_eq!(resumed["resumed"]["kept"], kept.len());
    assert_eq!(resumed["resumed"]["attached"], in_progress.len());
    assert_eq!(resumed["episodesThisRun"], 24 - kept.len());
    // No completed episode ran again; every in-progress one was attached, not recreated.
    for line in stderr.lines() {
        if let Some(id) = line.strip_prefix("start ").or_else(|| line.strip_prefix("attach ")) {
            assert!(!kept.contains(id), "{id} was completed before the kill but ran again:\n{stderr}");
        }
    }
    for id in &in_progress {
        assert!(stderr.lines().any(|l| l == format!("attach {id}")), "{id} was not attached:\n{stderr}");
    }
    // The same scores and the same bundle, byte for byte (replays included:
    // an action repeated after the resume would change them).
    assert_eq!(resumed["scores"], reference["scores"]);
    assert_eq!(resumed["contentDigest"], reference["contentDigest"]);
    assert_eq!(resumed["packageDigest"], reference["packageDigest"]);
    assert_eq!(resumed["verified"], true);
    // Every episode carries its measured wall clock, in the bundle and on the progress lines.
    for dir in [&whole, &killed] {
        let scores: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("bundle/scores.json")).expect("scores"))
                .expect("JSON");
        let episodes = scores["episodes"].as_array().expect("episodes");
        assert_eq!(episodes.len(), 24);
        for episode in episodes {
            assert_eq!(episode["selfReportedObservations"]["wallClockMs"], 9, "{episode}");
        }
        let report = std::fs::read_to_string(dir.join("report.html")).expect("the report");
        assert_eq!(report.matches("<td class=\"wall-clock\">9 ms</td>").count(), 24, "{report}");
    }
    assert!(stderr.lines().any(|l| l.starts_with("done ") && l.contains(" ms 9 ")), "{stderr}");

    // Both bundles verify from disk, and the chart names every task.
    for dir in [&whole, &killed] {
        let output = gaos(&["bench", "verify", dir.to_str().expect("UTF-8"), "--manifest", manifest]);
        assert_eq!(output.status.code(), Some(0), "{}", text(&output.stdout));
        let svg = std::fs::read_to_string(dir.join("scores.svg")).expect("the chart");
        assert!(svg.starts_with("<svg") && svg.contains("tiny") && svg.contains("small"), "{svg}");
    }
}

#[test]
fn verify_accepts_a_packed_bundle_and_reports_tampering() {
    let scratch = Scratch::new("verify");
    let small = MANIFEST
        .replace("[1, 2, 3, 4, 5, 6, 7, 8], \"episodes\": 2", "[1, 2], \"episodes\": 1")
        .replace("[11, 12, 13, 14], \"episodes\": 2", "[11], \"episodes\": 1");
    let manifest = write_manifest(&scratch.0, &small);
    let out = scratch.0.join("run");
    let output = gaos(&["bench", "run", manifest.to_str().expect("UTF-8"), "--out", out.to_str().expect("UTF-8")]);
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{stdout}\n{}", text(&output.stderr));
    // The table: one row per task, then the aggregate; then the bundle facts.
    for needle in
        ["task", "mean score", "tiny", "small", "aggregate (weighted-mean)", "package digest:", "verified:       yes"]
    {
        assert!(stdout.contains(needle), "{needle:?} missing from:\n{stdout}");
    }
    // OUT/report.html: the task scores, the chart, and each episode with its
    // outcome and a link to its replay file in the bundle.
    let report = std::fs::read_to_string(out.join("report.html")).expect("the report");
    let svg_text = std::fs::read_to_string(out.join("scores.svg")).expect("the chart");
    // The chart is an image (issue 26: a scores.svg is never pasted into the page).
    let chart = format!("src=\"data:image/svg+xml;base64,{}\"", gaos_json::base64_encode(svg_text.as_bytes()));
    assert!(report.contains(&chart) && report.contains("id=\"tasks\""), "{report}");
    assert!(!report.contains("<svg"), "no markup of the chart in the page: {report}");
    for episode in ["tiny-seed-1-episode-0", "tiny-seed-2-episode-0", "small-seed-11-episode-0"] {
        let link = format!("href=\"bundle/episodes/{episode}.gaos-replay.jsonl\"");
        assert!(report.contains(episode) && report.contains(&link), "{episode} and {link} in the report");
        assert!(
            out.join(format!("bundle/episodes/{episode}.gaos-replay.jsonl")).is_file(),
            "the link points at a file"
        );
    }
    assert!(report.contains("/replay"), "the report points to the replay viewer");
    let bundle = out.join("bundle");
    let verify = |dir: &Path, extra: &[&str]| {
        let output = gaos(&[&["bench", "verify", dir.to_str().expect("UTF-8")], extra].concat());
        (output.status.code(), text(&output.stdout), text(&output.stderr))
    };
    let (code, stdout, _) = verify(&bundle, &["--json"]);
    assert_eq!(code, Some(0), "{stdout}");
    let result: Value = serde_json::from_str(stdout.trim()).expect("JSON");
    assert_eq!(result["valid"], true);
    assert_eq!(result["facts"]["replay"], "verified");
    assert_eq!(result["facts"]["semantics"], "verified");
    assert_eq!(result["facts"]["signatures"], "not-required");
    assert_eq!(result["episodeFacts"].as_array().map(Vec::len), Some(3));

    // A changed move in a replay: its digest and its re-simulation both fail.
    let tampered = scratch.0.join("tampered");
    copy_dir(&bundle, &tampered);
    let replay = tampered.join("episodes/tiny-seed-1-episode-0.gaos-replay.jsonl");
    let original = std::fs::read_to_string(&replay).expect("replay");
    let changed = ["\\\"n\\\"", "\\\"e\\\"", "\\\"s\\\"", "\\\"w\\\""]
        .iter()
        .find_map(|d| original.find(d).map(|at| (at, *d)))
        .map(|(at, d)| {
            let other = if d.contains('n') { "\\\"s\\\"" } else { "\\\"n\\\"" };
            format!("{}{other}{}", &original[..at], &original[at + d.len()..])
        })
        .expect("a move in the replay");
    std::fs::write(&replay, changed).expect("tamper");
    let (code, stdout, _) = verify(&tampered, &[]);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(stdout.contains("invalid") && stdout.contains("tiny-seed-1-episode-0: replay digest mismatch"), "{stdout}");

    // An inflated carried score (still canonical JSON) is caught by recomputation.
    let inflated = scratch.0.join("inflated");
    copy_dir(&bundle, &inflated);
    let scores_path = inflated.join("scores.json");
    let scores: Value = serde_json::from_str(&std::fs::read_to_string(&scores_path).expect("scores")).expect("JSON");
    let first = scores["episodes"][0]["score"].as_f64().expect("a score");
    let bumped = std::fs::read_to_string(&scores_path).expect("scores").replacen(
        &format!("\"score\":{}", fmt_js(first)),
        "\"score\":0.999",
        1,
    );
    std::fs::write(&scores_path, bumped).expect("tamper");
    let (code, stdout, _) = verify(&inflated, &[]);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(stdout.contains("carried score 0.999 differs"), "{stdout}");

    // An independent manifest that differs from the bundle's.
    let other = write_manifest(&scratch.0.join("run"), &small.replace("\"version\": \"1\"", "\"version\": \"2\""));
    let (code, stdout, _) = verify(&bundle, &["--manifest", other.to_str().expect("UTF-8")]);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(stdout.contains("does not match the independently supplied manifest"), "{stdout}");

    // Usage and IO errors exit 2.
    let (code, _, stderr) = verify(&scratch.0.join("no-such-dir"), &[]);
    assert_eq!(code, Some(2), "{stderr}");
}

/// JavaScript number text of a score as canonical JSON writes it (scores
/// here are 0, 1 or short fractions).
fn fmt_js(x: f64) -> String {
    if x.fract() == 0.0 { format!("{}", x as i64) } else { format!("{x}") }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read_dir") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).expect("copy");
        }
    }
}

#[test]
fn bad_manifests_and_options_exit_2_with_the_problem_named() {
    let scratch = Scratch::new("usage");
    let run = |manifest: &str, extra: &[&str]| {
        let path = write_manifest(&scratch.0, manifest);
        let out = scratch.0.join("out");
        let output = gaos(
            &[&["bench", "run", path.to_str().expect("UTF-8"), "--out", out.to_str().expect("UTF-8")], extra].concat(),
        );
        (output.status.code(), text(&output.stderr))
    };
    for (manifest, needle) in [
        (MANIFEST.replace("gaos.score.maze", "./score.mjs"), "unknown scoring plugin \"./score.mjs\""),
        (MANIFEST.replace("\"maxSteps\": 60", "\"maxSteps\": 60, \"budget\": 3"), "tasks[0].budget: unknown field"),
        (MANIFEST.replace("[11, 12, 13, 14]", "[11, 12, 11]"), "tasks[1].seeds[2]"),
        (MANIFEST.replace("gaos/maze", "chess"), "benchmark.adapter \"chess\" is not a game"),
        (MANIFEST.replace("\"tiny\"", "\"huge\""), "task \"huge\" names no level of game gaos/maze"),
    ] {
        let (code, stderr) = run(&manifest, &[]);
        assert_eq!(code, Some(2), "{stderr}");
        assert!(stderr.contains(needle), "{needle:?} missing from: {stderr}");
    }
    let (code, stderr) = run(MANIFEST, &["--resume"]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("no run to resume"), "{stderr}");
    let (code, stderr) = run(MANIFEST, &["--driver", "nobody=random"]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("\"nobody\""), "{stderr}");
    let (code, stderr) = run(MANIFEST, &["--jobs", "0"]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("--jobs"), "{stderr}");
}

#[test]
fn a_killed_run_on_a_remote_host_resumes_with_the_same_scores() {
    let scratch = Scratch::new("remote");
    let manifest = write_manifest(&scratch.0, MANIFEST);
    let manifest = manifest.to_str().expect("UTF-8 path");
    let server = gaos_testkit::server::TestServer::start(GAOS);
    let env = [("GAOS_OPERATOR_TOKEN", server.operator_token.as_str())];
    let local = scratch.0.join("local");
    let remote = scratch.0.join("remote");
    let (reference, _) = bench_json(&[manifest, "--jobs", "2", "--out", local.to_str().expect("UTF-8")]);

    let checkpoint = remote.join("checkpoint.json");
    let remote_args = [manifest, "--jobs", "2", "--out", remote.to_str().expect("UTF-8"), "--host", &server.base_url];
    run_until_killed(&remote_args, &checkpoint, &env);
    let kept = checkpoint_ids(&checkpoint, "completed");
    assert!(!kept.is_empty() && kept.len() < 24);
    let output = Command::new(GAOS)
        .args([&["bench", "run", "--json", "--resume"], &remote_args[..]].concat())
        .envs(env)
        .output()
        .expect("run gaos");
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{stdout}\n{}\n{}", text(&output.stderr), server.stderr_tail());
    let resumed: Value = serde_json::from_str(stdout.trim()).expect("JSON summary");
    assert_eq!(resumed["status"], "complete");
    assert_eq!(resumed["resumed"]["kept"], kept.len());
    assert_eq!(resumed["verified"], true);
    // The host named the sessions (replays differ), but every score is the same.
    assert_eq!(resumed["scores"], reference["scores"]);
    assert!(!remote.join("host").exists(), "a remote run keeps no host of its own");
}
