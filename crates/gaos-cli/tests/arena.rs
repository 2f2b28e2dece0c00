//! `gaos arena` through the real binary (issue 31): a round robin on a
//! hidden-information game with a Python agent; agents that write garbage,
//! crash, stall or play illegal moves, each handled by the policy while the
//! tournament completes; a run killed with SIGKILL and resumed packs the
//! same bundle as an uninterrupted one; `gaos arena verify` accepts what
//! `run` packs and refuses an edited replay move or result line, naming the
//! match; a game module beside the manifest is played and its SHA-256
//! recorded and checked; bad manifests exit 2 naming the field; the
//! `process` driver in `gaos play` and `gaos bench run`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use gaos_testkit::kill::kill_when;
use gaos_testkit::server::TempDir;

use serde_json::Value;

const GAOS: &str = env!("CARGO_BIN_EXE_gaos");

/// A scratch directory (removed on drop) with helpers for its files.
struct Scratch(TempDir);

impl Scratch {
    fn new(name: &str) -> Self {
        Scratch(TempDir::new(&format!("gaos-arena-{name}")))
    }

    fn write(&self, name: &str, text: &str) -> String {
        let path = self.0.path().join(name);
        std::fs::write(&path, text).expect("write a scratch file");
        path.to_str().expect("UTF-8 path").to_owned()
    }

    fn path(&self, name: &str) -> String {
        self.0.path().join(name).to_str().expect("UTF-8 path").to_owned()
    }
}

fn python() -> String {
    std::env::var("GAOS_PYTHON").unwrap_or_else(|_| "python3".into())
}

fn gaos(args: &[&str]) -> Output {
    Command::new(GAOS).args(args).output().expect("run gaos")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `gaos arena run ARGS --json`: its summary and stderr; it must succeed.
fn arena_json(args: &[&str]) -> (Value, String) {
    let output = gaos(&[&["arena", "run", "--json"], args].concat());
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert!(output.status.success(), "gaos arena run {args:?} failed:\n{stdout}\n{stderr}");
    let summary = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"));
    (summary, stderr)
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

/// A hilo agent: plays its highest card. It checks what it is shown — its
/// own hand, never the other seat's — and says so on stderr.
const GREEDY: &str = r#"
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        print("start", message["game"], message["seat"], message["levelId"], message["seed"], message["entrant"], file=sys.stderr)
    elif message["type"] == "decide":
        view = message["observation"]
        hidden = [k for k in view if k not in ("hand", "seat") and "hand" in json.dumps(view[k]) and k != "handCounts"]
        print("sees own hand" if "hand" in view and view["seat"] == message["seat"] and not hidden and "hands" not in view else "SAW TOO MUCH", file=sys.stderr)
        hand = view["hand"]
        print(json.dumps({"command": {"card": max(range(len(hand)), key=lambda i: hand[i])}}), flush=True)
    elif message["type"] == "end":
        print("end", json.dumps(message["outcome"]["ranking"]), file=sys.stderr)
"#;

/// The built-in entrants `random` and `first`, then a Python agent `id` running `script`.
fn with_agent(id: &str, script: &str) -> String {
    format!(
        r#"{{"id": "random", "driver": "random"}}, {{"id": "first", "driver": "first-legal"}},
           {{"id": "{id}", "driver": "process", "command": ["{}", "{script}"]}}"#,
        python()
    )
}

fn hilo_manifest(entrants: &str, extra: &str) -> String {
    format!(
        r#"{{"schema": "gaos.arena-manifest.v1",
  "arena": {{"id": "hilo-test", "version": "1", "adapter": "conformance/hilo"}},
  "levels": [{{"id": "default", "seeds": [1, 2]}}],
  "entrants": [{entrants}],
  "rating": {{"bootstrap": 60, "seed": 7}}{extra}}}"#
    )
}

#[test]
fn a_round_robin_on_a_hidden_information_game_with_a_python_agent() {
    let scratch = Scratch::new("round-robin");
    scratch.write("greedy.py", GREEDY);
    let manifest = scratch.write("arena.json", &hilo_manifest(&with_agent("greedy", "greedy.py"), ""));
    let out = scratch.path("out");
    // Run from another directory: the agent still starts beside the manifest.
    let (summary, stderr) = arena_json(&[&manifest, "--out", &out, "--jobs", "2"]);
    assert_eq!(summary["status"], "complete", "{summary}");
    assert_eq!(summary["verified"], true, "{summary}");
    assert_eq!(summary["matches"], 12, "3 pairings × 2 seat orders × 2 seeds");
    assert!(stderr.contains("standings after 12/12: "), "live standings on stderr:\n{stderr}");

    let bundle = PathBuf::from(&out).join("bundle");
    let matches = lines(&bundle.join("matches.jsonl"));
    assert_eq!(matches.len(), 12);
    for line in &matches {
        let keys: BTreeSet<&str> = line.as_object().expect("an object").keys().map(String::as_str).collect();
        for key in [
            "match",
            "levelId",
            "seed",
            "seats",
            "ranking",
            "forfeits",
            "replay",
            "replaySha256",
            "steps",
            "wallClockMs",
        ] {
            assert!(keys.contains(key), "{key} missing from {line}");
        }
        assert_eq!(line["forfeits"], serde_json::json!([]), "{line}");
        assert_eq!(line["steps"], 6, "three rounds of two cards: {line}");
        let replay = bundle.join(line["replay"].as_str().expect("a path"));
        assert!(replay.is_file(), "{}", replay.display());
    }
    // The agent played in every match it was in, from the manifest's
    // directory, seeing only its own hand; its stderr is the match's log.
    let with_greedy: Vec<&Value> =
        matches.iter().filter(|m| m["seats"].as_object().is_some_and(|s| s.values().any(|e| e == "greedy"))).collect();
    assert_eq!(with_greedy.len(), 8);
    for line in with_greedy {
        let log = std::fs::read_to_string(bundle.join(format!("logs/{}.log", line["match"].as_str().unwrap())))
            .expect("the match's log");
        let seat = line["seats"].as_object().unwrap().iter().find(|(_, e)| *e == "greedy").unwrap().0.clone();
        assert!(
            log.contains(&format!("[{seat}] start conformance/hilo {seat} default {} greedy", line["seed"])),
            "{log}"
        );
        assert_eq!(log.matches(&format!("[{seat}] sees own hand")).count(), 3, "{log}");
        assert!(!log.contains("SAW TOO MUCH"), "{log}");
        assert!(log.contains(&format!("[{seat}] end [")), "the end message carries the outcome: {log}");
    }
    assert_eq!(
        std::fs::read_dir(bundle.join("logs")).unwrap().count(),
        8,
        "only matches with an agent process have logs"
    );

    let standings: Value =
        serde_json::from_str(&std::fs::read_to_string(bundle.join("standings.json")).unwrap()).unwrap();
    let entrants = standings["entrants"].as_array().expect("entrants");
    assert_eq!(entrants.len(), 3);
    for entrant in entrants {
        assert_eq!(entrant["matches"], 8, "{entrant}");
        let (low, rating, high) = (
            entrant["ci95"][0].as_f64().unwrap(),
            entrant["rating"].as_f64().unwrap(),
            entrant["ci95"][1].as_f64().unwrap(),
        );
        assert!(low <= rating && rating <= high, "{entrant}");
    }
    assert_eq!(standings["method"]["kind"], "bradley-terry");
    assert_eq!(standings["pairwise"]["greedy"]["random"]["games"], 4);

    // The report: standings with intervals, the pairwise matrix, the chart
    // as an image (never inline markup), a replay link per match.
    let report = std::fs::read_to_string(bundle.join("report.html")).expect("the report");
    for id in ["id=\"standings\"", "id=\"pairwise\"", "id=\"matches\"", "src=\"data:image/svg+xml;base64,"] {
        assert!(report.contains(id), "{id} missing from the report");
    }
    assert!(!report.contains("<svg"), "the chart is an image, not inline markup");
    assert_eq!(report.matches("download>replay file</a>").count(), 12);
    let svg = std::fs::read_to_string(bundle.join("ratings.svg")).expect("the chart");
    assert!(svg.starts_with("<svg") && svg.contains("greedy") && svg.contains("random"), "{svg}");

    let verified = gaos(&["arena", "verify", &out, "--manifest", &manifest]);
    assert_eq!(verified.status.code(), Some(0), "{}{}", text(&verified.stdout), text(&verified.stderr));
    assert!(text(&verified.stdout).starts_with("valid: "), "{}", text(&verified.stdout));
}

const GARBAGE: &str =
    "import sys\nfor line in sys.stdin:\n    if '\"decide\"' in line:\n        print('this is not JSON', flush=True)\n";
const CRASH: &str = "import sys\nsys.stdin.readline()\nsys.exit(3)\n";
const STALL: &str = "import sys, time\nsys.stdin.readline()\ntime.sleep(3600)\n";
const ILLEGAL: &str = r#"
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "decide":
        print(json.dumps({"command": {"card": 99}}), flush=True)
    elif message["type"] == "refused":
        print("refused", message["code"], file=sys.stderr, flush=True)
"#;

#[test]
fn misbehaving_agents_lose_by_the_policy_and_the_tournament_completes() {
    let scratch = Scratch::new("misbehaving");
    for (name, script) in [("garbage.py", GARBAGE), ("crash.py", CRASH), ("stall.py", STALL), ("illegal.py", ILLEGAL)] {
        scratch.write(name, script);
    }
    let py = python();
    let entrants = format!(
        r#"{{"id": "random", "driver": "random"}},
           {{"id": "garbage", "driver": "process", "command": ["{py}", "garbage.py"]}},
           {{"id": "crash", "driver": "process", "command": ["{py}", "crash.py"]}},
           {{"id": "stall", "driver": "process", "command": ["{py}", "stall.py"], "deadlineMs": 300}},
           {{"id": "illegal", "driver": "process", "command": ["{py}", "illegal.py"]}}"#
    );
    for then in ["forfeit", "random"] {
        let extra = format!(
            r#", "schedule": {{"kind": "gauntlet", "baseline": "random"}}, "illegalMoves": {{"retries": 1, "then": "{then}"}}"#
        );
        let manifest =
            scratch.write(&format!("{then}.json"), &hilo_manifest(&entrants, &extra).replace("[1, 2]", "[1]"));
        let out = scratch.path(then);
        let (summary, _) = arena_json(&[&manifest, "--out", &out, "--jobs", "2"]);
        assert_eq!(summary["verified"], true, "{then}: {summary}");
        let matches = lines(&PathBuf::from(&out).join("bundle/matches.jsonl"));
        assert_eq!(matches.len(), 8, "{then}: every challenger in both seats");
        for line in &matches {
            let seats = line["seats"].as_object().unwrap();
            let (bad, _) = seats.iter().find(|(_, e)| *e != "random").expect("a challenger");
            let (good, _) = seats.iter().find(|(_, e)| *e == "random").expect("the baseline");
            assert!(line["faults"][bad].as_u64().unwrap_or(0) >= 2, "{then}: {line}");
            match then {
                "forfeit" => {
                    assert_eq!(line["forfeits"], serde_json::json!([bad]), "{line}");
                    assert_eq!(line["ranking"][0]["seat"], good.as_str(), "a forfeit loses: {line}");
                    assert_eq!(line["ranking"][1]["rank"], 2, "{line}");
                    assert_eq!(line["substitutions"], serde_json::json!({}), "{line}");
                }
                _ => {
                    assert_eq!(line["forfeits"], serde_json::json!([]), "{line}");
                    assert_eq!(line["substitutions"][bad], 3, "a random move for each of its three: {line}");
                }
            }
        }
        let standings: Value =
            serde_json::from_str(&std::fs::read_to_string(PathBuf::from(&out).join("bundle/standings.json")).unwrap())
                .unwrap();
        if then == "forfeit" {
            assert_eq!(standings["entrants"][0]["id"], "random", "{standings}");
            assert_eq!(standings["entrants"][0]["wins"], 8, "{standings}");
        }
        // Every kind of failure is named in the match's log.
        let logs: String = std::fs::read_dir(PathBuf::from(&out).join("bundle/logs"))
            .unwrap()
            .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
            .collect();
        for words in [
            "is not JSON",
            "exited with status 3",
            "no answer within the deadline of 300 ms",
            "refused illegal_command",
        ] {
            assert!(logs.contains(words), "{then}: {words:?} missing from the logs:\n{logs}");
        }
        let verified = gaos(&["arena", "verify", &out, "--manifest", &manifest]);
        assert_eq!(verified.status.code(), Some(0), "{}", text(&verified.stdout));
    }
}

/// Journal ids: `completed` (match ids) and `started` (plan indexes), as a resume would read them.
fn journal(path: &Path) -> (BTreeSet<String>, BTreeSet<u64>) {
    let mut completed = BTreeSet::new();
    let mut started = BTreeSet::new();
    for line in std::fs::read_to_string(path).unwrap_or_default().lines().skip(1) {
        let Ok(record) = serde_json::from_str::<Value>(line) else { break };
        if let Some(line) = record.get("completed") {
            completed.insert(line["match"].as_str().unwrap().to_owned());
            let index: u64 = line["match"].as_str().unwrap().split('-').next().unwrap().parse().unwrap();
            started.remove(&index);
        } else if let Some(entry) = record.get("started") {
            started.insert(entry["index"].as_u64().unwrap());
        }
    }
    (completed, started)
}

/// A hilo agent that plays its highest card and writes nothing else.
const QUIET: &str = "import json, sys\nfor line in sys.stdin:\n    m = json.loads(line)\n    if m['type'] == 'decide':\n        h = m['observation']['hand']\n        print(json.dumps({'index': max(range(len(h)), key=lambda i: h[i])}), flush=True)\n";

#[test]
fn a_killed_run_resumes_without_replaying_matches_and_packs_the_same_bundle() {
    let scratch = Scratch::new("resume");
    scratch.write("quiet.py", QUIET);
    let entrants = format!(r#"{{"id": "seven", "driver": "random:7"}}, {}"#, with_agent("quiet", "quiet.py"));
    let manifest = scratch.write("arena.json", &hilo_manifest(&entrants, "").replace("[1, 2]", "[1, 2, 3]"));
    let (whole, killed) = (scratch.path("whole"), scratch.path("killed"));
    // A simulated clock (every match takes 9 ms) makes wallClockMs the same in both runs.
    let clock = ["--test-clock-ms", "9", "--jobs", "2"];
    let (reference, _) = arena_json(&[&[manifest.as_str(), "--out", &whole], &clock[..]].concat());
    assert_eq!(reference["matches"], 36);

    let args = [&[manifest.as_str(), "--out", &killed], &clock[..]].concat();
    let journal_path = PathBuf::from(&killed).join("journal.jsonl");
    let mut child = Command::new(GAOS)
        .args([&["arena", "run"], &args[..]].concat())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn gaos arena run");
    kill_when(&mut child, || journal(&journal_path).0.len() >= 3, Duration::from_secs(120), "the tournament");
    let (kept, in_progress) = journal(&journal_path);
    assert!(kept.len() < 36, "killed part-way");

    let (resumed, stderr) = arena_json(&[&args[..], &["--resume"]].concat());
    assert_eq!(resumed["resumed"]["kept"], kept.len(), "{resumed}");
    assert_eq!(resumed["resumed"]["attached"], in_progress.len(), "{resumed}");
    assert_eq!(resumed["matchesThisRun"], 36 - kept.len());
    for line in stderr.lines() {
        if let Some(id) = line.strip_prefix("start ").or_else(|| line.strip_prefix("attach ")) {
            assert!(!kept.contains(id), "{id} was completed before the kill but played again:\n{stderr}");
        }
    }
    assert_eq!(stderr.lines().filter(|l| l.starts_with("attach ")).count(), in_progress.len(), "{stderr}");
    // The same bundle, byte for byte: matches, replays, standings, report, chart.
    assert_eq!(resumed["contentDigest"], reference["contentDigest"]);
    assert_eq!(resumed["packageDigest"], reference["packageDigest"]);
    assert_eq!(resumed["verified"], true);
    let verified = gaos(&["arena", "verify", &killed, "--manifest", &manifest]);
    assert_eq!(verified.status.code(), Some(0), "{}", text(&verified.stdout));
}

/// Copy a directory tree.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// `gaos arena verify DIR --manifest M`: exit code and the first reason.
fn verify_first_reason(dir: &Path, manifest: &str) -> (Option<i32>, String) {
    let output = gaos(&["arena", "verify", dir.to_str().unwrap(), "--manifest", manifest]);
    let stdout = text(&output.stdout);
    let first = stdout.lines().find_map(|l| l.strip_prefix("  - ")).unwrap_or_default().to_owned();
    (output.status.code(), first)
}

#[test]
fn verify_refuses_an_edited_replay_move_or_result_line_naming_the_match() {
    let scratch = Scratch::new("verify");
    let entrants = r#"{"id": "random", "driver": "random"}, {"id": "first", "driver": "first-legal"}"#;
    let manifest = scratch.write("arena.json", &hilo_manifest(entrants, ""));
    let out = scratch.path("out");
    arena_json(&[&manifest, "--out", &out]);
    let bundle = PathBuf::from(&out).join("bundle");
    let matches = lines(&bundle.join("matches.jsonl"));
    let target = matches[2]["match"].as_str().unwrap().to_owned();

    // One move of one replay: alice plays another card in the first round.
    let moved = scratch.0.path().join("moved");
    copy_dir(&bundle, &moved);
    let replay = moved.join(matches[2]["replay"].as_str().unwrap());
    let original = std::fs::read_to_string(&replay).unwrap();
    let mut replay_lines: Vec<String> = original.lines().map(str::to_owned).collect();
    let resolution = replay_lines.iter().position(|l| l.contains("\"resolution\"")).expect("a resolution");
    let edited = ["{\\\"card\\\":0}", "{\\\"card\\\":1}", "{\\\"card\\\":2}"]
        .iter()
        .find_map(|card| {
            replay_lines[resolution].contains(card).then(|| {
                let other = if *card == "{\\\"card\\\":0}" { "{\\\"card\\\":1}" } else { "{\\\"card\\\":0}" };
                replay_lines[resolution].replacen(card, other, 1)
            })
        })
        .expect("the resolution names a card");
    replay_lines[resolution] = edited;
    std::fs::write(&replay, format!("{}\n", replay_lines.join("\n"))).unwrap();
    let (code, first) = verify_first_reason(&moved, &manifest);
    assert_eq!(code, Some(1), "{first}");
    assert!(first.starts_with(&format!("match {target}: ")), "the first reason names the match: {first}");

    // One result line: the ranking turned around.
    let flipped = scratch.0.path().join("flipped");
    copy_dir(&bundle, &flipped);
    let mut text_lines: Vec<String> =
        std::fs::read_to_string(flipped.join("matches.jsonl")).unwrap().lines().map(str::to_owned).collect();
    let mut line: Value = serde_json::from_str(&text_lines[2]).unwrap();
    let ranking = line["ranking"].as_array_mut().unwrap();
    let (a, b) = (ranking[0]["seat"].clone(), ranking[1]["seat"].clone());
    ranking[0]["seat"] = b;
    ranking[1]["seat"] = a;
    ranking[0]["rank"] = serde_json::json!(1);
    ranking[1]["rank"] = serde_json::json!(2);
    text_lines[2] = serde_json::to_string(&line).unwrap();
    std::fs::write(flipped.join("matches.jsonl"), format!("{}\n", text_lines.join("\n"))).unwrap();
    let (code, first) = verify_first_reason(&flipped, &manifest);
    assert_eq!(code, Some(1), "{first}");
    assert!(first.starts_with(&format!("match {target}: ranking: the line says ")), "{first}");

    // A rating in standings.json: the number is named.
    let rated = scratch.0.path().join("rated");
    copy_dir(&bundle, &rated);
    let standings = std::fs::read_to_string(rated.join("standings.json")).unwrap();
    let value: Value = serde_json::from_str(&standings).unwrap();
    let rating = value["entrants"][0]["rating"].to_string();
    std::fs::write(
        rated.join("standings.json"),
        standings.replacen(&format!("\"rating\":{rating}"), "\"rating\":1234.5", 1),
    )
    .unwrap();
    let (code, first) = verify_first_reason(&rated, &manifest);
    assert_eq!(code, Some(1));
    assert_eq!(first, format!("standings.json entrants[0].rating: the file says 1234.5, the replays give {rating}"));

    // Another manifest, a stray file, a missing bundle.
    let other = scratch.write("other.json", &hilo_manifest(entrants, "").replace("[1, 2]", "[1, 3]"));
    assert_eq!(verify_first_reason(&bundle, &other).0, Some(1));
    let stray = scratch.0.path().join("stray");
    copy_dir(&bundle, &stray);
    std::fs::write(stray.join("replays/extra.gaos-replay.jsonl"), "{}\n").unwrap();
    let (code, _) = verify_first_reason(&stray, &manifest);
    assert_eq!(code, Some(1));
    assert_eq!(gaos(&["arena", "verify", &scratch.path("nowhere")]).status.code(), Some(2));
    // The untouched bundle still verifies, also against its own manifest.
    assert_eq!(gaos(&["arena", "verify", bundle.to_str().unwrap()]).status.code(), Some(0));
}

#[test]
fn a_game_module_beside_the_manifest_is_played_and_its_sha256_checked() {
    let scratch = Scratch::new("module");
    let modules = gaos_testkit::readme::repo_root().join("conformance/modules");
    std::fs::create_dir_all(scratch.0.path().join("lib")).expect("lib/");
    for file in ["tictactoe.mjs", "lib/random.mjs", "lib/views.mjs"] {
        std::fs::copy(modules.join(file), scratch.0.path().join(file)).expect("copy a module file");
    }
    let manifest = scratch.write(
        "arena.json",
        r#"{"schema": "gaos.arena-manifest.v1",
  "arena": {"id": "module-test", "version": "1", "adapter": "./tictactoe.mjs"},
  "levels": [{"id": "default", "seeds": [1, 2]}],
  "entrants": [{"id": "first", "driver": "first-legal"}, {"id": "random", "driver": "random"}],
  "rating": {"bootstrap": 20, "seed": 1}}"#,
    );
    let out = scratch.path("out");
    let (summary, _) = arena_json(&[&manifest, "--out", &out]);
    assert_eq!(summary["matches"], 4, "{summary}");
    let digests: Value = serde_json::from_str(
        &std::fs::read_to_string(PathBuf::from(&out).join("bundle/digests.json")).expect("digests.json"),
    )
    .expect("JSON");
    let recorded = digests["game"]["adapterSha256"].as_str().expect("the module's SHA-256 is recorded").to_owned();
    assert_eq!(digests["game"]["id"], "conformance/tictactoe");
    assert_eq!(gaos(&["arena", "verify", &out, "--manifest", &manifest]).status.code(), Some(0));
    // Verify needs the module: without --manifest beside it or --adapter, a usage error.
    assert_eq!(gaos(&["arena", "verify", &out]).status.code(), Some(2));
    // Another module under the same path is not the tournament's game.
    let module = scratch.path("tictactoe.mjs");
    let edited = std::fs::read_to_string(&module).expect("the module").replacen("return", "return ", 1);
    std::fs::write(&module, edited).expect("edit the module");
    let refused = gaos(&["arena", "verify", &out, "--manifest", &manifest]);
    let stdout = text(&refused.stdout);
    assert_eq!(refused.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains(&recorded) && stdout.contains("the verifier's"), "{stdout}");
}

#[test]
fn bad_manifests_exit_2_with_the_field_named() {
    let scratch = Scratch::new("bad");
    let base = hilo_manifest(r#"{"id": "random", "driver": "random"}, {"id": "first", "driver": "first-legal"}"#, "");
    for (edit, words) in [
        (base.replace(r#""rating""#, r#""extra": 1, "rating""#), "extra: unknown field"),
        (base.replace(r#""driver": "first-legal""#, r#""driver": "process""#), "entrants[1].command: is required"),
        (
            base.replace(r#""id": "default""#, r#""id": "huge""#),
            "levels[0].id: \"huge\" is not a level of conformance/hilo",
        ),
        (base.replace("conformance/hilo", "no/such-game"), "arena.adapter \"no/such-game\" is not a game gaos knows"),
        (base.replace("conformance/hilo", "./missing.mjs"), "missing.mjs"),
        (base.replace(r#""bootstrap": 60"#, r#""bootstrap": 0"#), "rating.bootstrap"),
    ] {
        let manifest = scratch.write("bad.json", &edit);
        let output = gaos(&["arena", "run", &manifest, "--out", &scratch.path("out")]);
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{words}: {stderr}");
        assert!(stderr.contains(words), "{words:?} not in: {stderr}");
    }
    let gauntlet = base.replace(r#""rating""#, r#""schedule": {"kind": "gauntlet", "baseline": "nobody"}, "rating""#);
    let output = gaos(&["arena", "run", &scratch.write("g.json", &gauntlet), "--out", &scratch.path("g")]);
    assert!(
        text(&output.stderr).contains("schedule.baseline: \"nobody\" is not an entrant"),
        "{}",
        text(&output.stderr)
    );
    let output = gaos(&["arena", "run", &scratch.write("ok.json", &base), "--resume", "--out", &scratch.path("fresh")]);
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).contains("holds no run to resume"), "{}", text(&output.stderr));
}

#[test]
fn the_process_driver_plays_in_gaos_play_and_gaos_bench() {
    let scratch = Scratch::new("drivers");
    scratch.write("greedy.py", GREEDY);
    let replay = scratch.path("match.gaos-replay.jsonl");
    let output = Command::new(GAOS)
        .current_dir(scratch.0.path())
        .args(["play", "--game", "conformance/hilo", "--seed", "5", "--out", &replay])
        .args(["--driver", &format!("process:{} greedy.py", python()), "--driver", "random", "--json"])
        .output()
        .expect("gaos play");
    assert!(output.status.success(), "{}", text(&output.stderr));
    let stderr = text(&output.stderr);
    assert!(stderr.contains("start conformance/hilo alice default 5 process:"), "{stderr}");
    assert_eq!(stderr.matches("sees own hand").count(), 3, "{stderr}");
    assert_eq!(gaos(&["replay", "verify", &replay]).status.code(), Some(0));

    // A maze benchmark whose agent takes the first legal move, by index.
    scratch.write("first.py", "import json, sys\nfor line in sys.stdin:\n    if json.loads(line)['type'] == 'decide':\n        print(json.dumps({'index': 0}), flush=True)\n");
    let manifest = scratch.write(
        "maze.json",
        r#"{"schema": "gaos.benchmark-manifest.v1",
  "benchmark": {"id": "maze-process", "version": "1", "adapter": "gaos/maze"},
  "tasks": [{"id": "tiny", "seeds": [1], "episodes": 1, "maxSteps": 40}],
  "scoring": {"plugin": "gaos.score.maze", "aggregation": "mean"},
  "submission": {"requireSignedSeats": false, "requireCompleteCoverage": true}}"#,
    );
    let out = scratch.path("bench");
    let output = gaos(&[
        "bench",
        "run",
        &manifest,
        "--out",
        &out,
        "--json",
        "--driver",
        &format!("process:{} first.py", python()),
    ]);
    assert!(output.status.success(), "{}{}", text(&output.stdout), text(&output.stderr));
    let summary: Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(summary["verified"], true, "{summary}");
}
