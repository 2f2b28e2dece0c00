//! `gaos replay verify` and `gaos replay inspect` through the real binary,
//! against every case of the reference pack's `replays/index.json`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use gaos_json::Value;
use gaos_testkit::{array_field, conformance_dir, read_conformance_json, str_field};

fn gaos() -> Command {
    Command::new(env!("CARGO_BIN_EXE_gaos"))
}

fn run(args: &[&str], files: &[PathBuf]) -> Output {
    gaos().args(args).args(files).output().expect("run the gaos binary")
}

fn replays() -> PathBuf {
    conformance_dir().join("replays")
}

/// The `--json` lines of a run, one object per file.
fn json_lines(output: &Output) -> Vec<Value> {
    String::from_utf8(output.stdout.clone())
        .expect("UTF-8 output")
        .lines()
        .map(|line| gaos_json::parse(line).unwrap_or_else(|e| panic!("not a JSON line: {line}: {e}")))
        .collect()
}

fn stage(value: &Value) -> Option<&str> {
    match value.get("stage") {
        Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s),
        other => panic!("stage must be a string or null, found {other:?}"),
    }
}

/// A scratch directory for this test process.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gaos-replay-verify-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

#[test]
fn json_verdicts_match_every_index_case() {
    let index = read_conformance_json("replays/index.json");
    let cases = array_field(&index, "cases");
    assert!(cases.len() >= 60, "expected the full list of replay cases, found {}", cases.len());
    let files: Vec<PathBuf> = cases.iter().map(|c| replays().join(str_field(c, "file"))).collect();
    let output = run(&["replay", "verify", "--json"], &files);
    assert_eq!(output.status.code(), Some(1), "some cases are malformed or rejected: exit 1");
    let lines = json_lines(&output);
    assert_eq!(lines.len(), cases.len(), "one JSON line per file");
    let mut mismatches = Vec::new();
    for ((case, line), path) in cases.iter().zip(&lines).zip(&files) {
        let file = str_field(case, "file");
        assert_eq!(str_field(line, "file"), path.display().to_string(), "lines come in argument order");
        let keys: Vec<&String> = line.as_object().expect("object").keys().collect();
        assert_eq!(keys, ["file", "problems", "stage", "verdict"], "{file}: exactly these keys");
        let want_verdict = str_field(case, "verdict");
        let want_stage = case.get("stage").and_then(Value::as_str);
        if str_field(line, "verdict") != want_verdict || stage(line) != want_stage {
            mismatches.push(format!(
                "{file}: expected {want_verdict} at {want_stage:?}, got {} at {:?}: {}",
                str_field(line, "verdict"),
                stage(line),
                line.get("problems").map(Value::to_string).unwrap_or_default()
            ));
            continue;
        }
        let problems = array_field(line, "problems");
        if want_verdict == "accepted-unsigned" {
            assert!(problems.is_empty(), "{file}: an accepted replay has no problems: {problems:?}");
        } else {
            assert!(!problems.is_empty(), "{file}: a {want_verdict} replay must say why");
            for problem in problems {
                let text = problem.as_str().expect("problems are strings");
                let (line_part, rest) = text.split_once(": ").unwrap_or_default();
                let field = rest.split_once(": ").map(|(field, _)| field).unwrap_or_default();
                assert!(
                    line_part.starts_with("line ") && line_part[5..].parse::<usize>().is_ok() && !field.is_empty(),
                    "{file}: every problem names its line and field, got {text:?}"
                );
            }
        }
    }
    assert!(mismatches.is_empty(), "{} cases disagree with index.json:\n{}", mismatches.len(), mismatches.join("\n"));
}

#[test]
fn problems_point_at_the_tampered_line_and_field() {
    let expect = [
        ("tampered/hilo-ingest.unknown-field.gaos-replay.jsonl", "line 2: resolution.note: unknown property"),
        ("tampered/hilo-ingest.record-n.gaos-replay.jsonl", "line 3: checkpoint.n: must be 1"),
        ("tampered/tictactoe-timeout-mapper.wire-id.gaos-replay.jsonl", "line 2: resolution.inputs[0].wireId: "),
        ("tampered/hilo-ingest.perm.gaos-replay.jsonl", "line 1: header.perm[0]: "),
        ("tampered/race-ticks-catchup.derived-seed.gaos-replay.jsonl", "line 1: header.levels[0].seed: "),
        ("tampered/race-ticks-catchup.tick-order.gaos-replay.jsonl", "line 4: resolution.tick: "),
        ("tampered/hilo-ingest.card-index.gaos-replay.jsonl", "line 2: resolution.inputs[0]: the game maps"),
        ("tampered/hilo-ingest.totals-actions.gaos-replay.jsonl", "line 1: header.totals.totalActionsUsed: recorded 7"),
        ("original/hilo-timeout-forced.gaos-replay.jsonl", "line 3: resolution.systemInput: the game's timeout mapper"),
        ("tampered/sealed-commit-reveal.mismatch-not-a-mismatch.gaos-replay.jsonl", "not a mismatch"),
        (
            "tampered/race-ticks-catchup.after-terminal.gaos-replay.jsonl",
            "line 16: resolution: comes after the level ended",
        ),
    ];
    let files: Vec<PathBuf> = expect.iter().map(|(file, _)| replays().join(file)).collect();
    let lines = json_lines(&run(&["replay", "verify", "--json"], &files));
    for ((file, needle), line) in expect.iter().zip(&lines) {
        let problems: Vec<&str> = array_field(line, "problems").iter().filter_map(Value::as_str).collect();
        assert!(problems.iter().any(|p| p.contains(needle)), "{file}: no problem contains {needle:?}: {problems:?}");
    }
}

#[test]
fn strict_mode_checks_bytes_digests_and_kernel_invariants() {
    let originals: Vec<PathBuf> = std::fs::read_dir(replays().join("original"))
        .expect("original replays")
        .map(|e| e.expect("entry").path())
        .collect();
    let lines = json_lines(&run(&["replay", "verify", "--json", "--strict"], &originals));
    for line in &lines {
        let file = str_field(line, "file");
        let want = if file.contains("hilo-timeout-forced") { "rejected" } else { "accepted-unsigned" };
        assert_eq!(str_field(line, "verdict"), want, "{file} in strict mode: {line}");
    }
    let strict = [
        ("tampered/hilo-ingest.whitespace.gaos-replay.jsonl", "malformed", Some("structure")),
        ("tampered/race-ticks-catchup.whitespace.gaos-replay.jsonl", "malformed", Some("structure")),
        ("tampered/hilo-ingest.checkpoint-digest.gaos-replay.jsonl", "rejected", Some("recheck")),
        ("tampered/sealed-commit-reveal.checkpoint-digest.gaos-replay.jsonl", "rejected", Some("recheck")),
        // Same result, other hands: the recorded digests give the seed away.
        ("tampered/hilo-ingest.seed.gaos-replay.jsonl", "rejected", Some("recheck")),
    ];
    let files: Vec<PathBuf> = strict.iter().map(|(file, ..)| replays().join(file)).collect();
    let output = run(&["replay", "verify", "--json", "--strict"], &files);
    assert_eq!(output.status.code(), Some(1));
    for ((file, verdict, stage_name), line) in strict.iter().zip(&json_lines(&output)) {
        assert_eq!(str_field(line, "verdict"), *verdict, "{file}: {line}");
        assert_eq!(stage(line), *stage_name, "{file}: {line}");
    }
}

#[test]
fn exit_codes_and_human_output() {
    let accepted = replays().join("original/hilo-ingest.gaos-replay.jsonl");
    let output = run(&["replay", "verify"], std::slice::from_ref(&accepted));
    assert_eq!(output.status.code(), Some(0));
    let text = String::from_utf8(output.stdout).expect("UTF-8");
    assert!(text.contains("accepted-unsigned"), "{text}");

    // An unknown game is unverifiable: exit 3.
    let dir = scratch("exit-codes");
    let original = std::fs::read_to_string(&accepted).expect("read replay");
    let unknown = dir.join("unknown-game.gaos-replay.jsonl");
    std::fs::write(&unknown, original.replace("conformance/hilo", "product/unknown")).expect("write");
    let output = run(&["replay", "verify", "--json"], &[accepted.clone(), unknown.clone()]);
    assert_eq!(output.status.code(), Some(3), "only unverifiable besides accepted: exit 3");
    let lines = json_lines(&output);
    assert_eq!(str_field(&lines[1], "verdict"), "unverifiable");
    assert_eq!(stage(&lines[1]), Some("recheck"));

    // Malformed or rejected wins over unverifiable: exit 1.
    let rejected = replays().join("tampered/hilo-ingest.totals-actions.gaos-replay.jsonl");
    let output = run(&["replay", "verify"], &[unknown.clone(), rejected]);
    assert_eq!(output.status.code(), Some(1));

    // IO errors: exit 2, still one JSON line per file.
    let missing = dir.join("missing.gaos-replay.jsonl");
    let output = run(&["replay", "verify", "--json"], &[accepted.clone(), missing]);
    assert_eq!(output.status.code(), Some(2));
    let lines = json_lines(&output);
    assert_eq!(lines.len(), 2);
    assert!(lines[1].get("error").and_then(Value::as_str).is_some_and(|e| e.contains("cannot read")));

    // Usage errors: exit 2.
    assert_eq!(run(&["replay", "verify", "--jobs", "0"], &[accepted]).status.code(), Some(2));
    assert_eq!(run(&["replay", "verify"], &[]).status.code(), Some(2));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn many_files_in_parallel_keep_their_order() {
    let accepted = replays().join("original/race-ticks-catchup.gaos-replay.jsonl");
    let rejected = replays().join("tampered/race-ticks-catchup.totals-actions.gaos-replay.jsonl");
    let files: Vec<PathBuf> = (0..400).map(|i| if i % 7 == 3 { rejected.clone() } else { accepted.clone() }).collect();
    let output = run(&["replay", "verify", "--json", "--jobs", "2"], &files);
    assert_eq!(output.status.code(), Some(1));
    let lines = json_lines(&output);
    assert_eq!(lines.len(), files.len());
    for (i, line) in lines.iter().enumerate() {
        let want = if i % 7 == 3 { "rejected" } else { "accepted-unsigned" };
        assert_eq!(str_field(line, "verdict"), want, "file {i}");
    }
}

#[test]
fn inspect_prints_header_levels_seats_outcome_and_resolutions() {
    let file = replays().join("original/tictactoe-run.run.gaos-replay.jsonl");
    let output = gaos().args(["replay", "inspect"]).arg(&file).output().expect("run gaos");
    assert_eq!(output.status.code(), Some(0));
    let text = String::from_utf8(output.stdout).expect("UTF-8");
    for needle in [
        "gaos.replay 1.3",
        "conformance/tictactoe@1",
        "seed         777 (gaos.run-level-seed.v1)",
        "levels (3)",
        "recorded  won  stars 3  actionsUsed 5",
        "replayed  won  stars 3  actionsUsed 5",
        "seats   o, x",
        "outcome accepted-unsigned",
        "resolution tick 0 complete: x Action 1 (wire Action 9) [x0]",
    ] {
        assert!(text.contains(needle), "inspect output lacks {needle:?}:\n{text}");
    }
    let broken = replays().join("tampered/hilo-ingest.perm.gaos-replay.jsonl");
    let output = gaos().args(["replay", "inspect"]).arg(&broken).output().expect("run gaos");
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("header.perm[0]"));
}

#[test]
fn invalid_utf8_is_malformed_at_parse() {
    let dir = scratch("utf8");
    let path = dir.join("bad.gaos-replay.jsonl");
    let mut bytes = std::fs::read(replays().join("original/lifecycle.gaos-replay.jsonl")).expect("read replay");
    let second_line = bytes.iter().position(|&b| b == b'\n').expect("two lines") + 5;
    bytes[second_line] = 0xff;
    std::fs::write(&path, bytes).expect("write");
    let lines = json_lines(&run(&["replay", "verify", "--json"], std::slice::from_ref(&path)));
    assert_eq!(str_field(&lines[0], "verdict"), "malformed");
    assert_eq!(stage(&lines[0]), Some("parse"));
    let problem = array_field(&lines[0], "problems")[0].as_str().unwrap_or_default().to_owned();
    assert!(problem.starts_with("line 2: "), "{problem}");
    std::fs::remove_dir_all(Path::new(&dir)).ok();
}
