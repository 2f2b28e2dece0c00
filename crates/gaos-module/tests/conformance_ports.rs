//! Issue 14, Acceptance 1: the JS ports of the five conformance games
//! (`conformance/modules/*.mjs` at the repository root), each loaded in place
//! of the built-in game with the same id, reproduce every script of the
//! shared pack (its randomized `fuzz/` scripts included) and of the
//! project's pack byte for byte. The ports also agree
//! with the built-in games on what the scripts do not reach: their metadata,
//! their views along played-out games over every shipped level, their legal
//! moves and their timeout mappings; and they re-simulate every case of the
//! shared pack's replay corpus to the verdict the reference gave.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use gaos_conformance::{read_script, run_script_with, script_game_id};
use gaos_games::GameRegistry;
use gaos_json::{Value, canonical_json};
use gaos_kernel::replay::{VerifyOptions, VerifyReport, verify_replay};
use gaos_kernel::{
    COMMIT_SCHEME, CommandContext, CommitEnvelope, Game, GameRef, SubmittedAction, TickReducer, TimeoutContext,
    TimeoutInput,
};
use gaos_module::{ModuleGame, ModuleLimits};
use gaos_testkit::conformance_outputs::{compare_outputs, project_conformance_dir, script_paths};
use gaos_testkit::{array_field, conformance_dir, fuzz_conformance_dir, read_conformance_json, str_field};

const PORTED: [&str; 5] =
    ["conformance/counter", "conformance/hilo", "conformance/race", "conformance/sealed", "conformance/tictactoe"];

fn modules_dir() -> PathBuf {
    project_conformance_dir().join("modules")
}

/// The port of `game_id`: `conformance/hilo` → `conformance/modules/hilo.mjs`.
fn port_path(game_id: &str) -> Option<PathBuf> {
    let name = game_id.strip_prefix("conformance/")?;
    let path = modules_dir().join(format!("{name}.mjs"));
    path.is_file().then_some(path)
}

fn load(path: &Path) -> ModuleGame {
    ModuleGame::load(path, &ModuleLimits::default()).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The built-in games, with `module` in place of the one with its id.
fn registry_with(module: ModuleGame) -> GameRegistry {
    let id = module.game_ref().id;
    let mut registry = GameRegistry::new();
    for game in GameRegistry::builtin().list() {
        if game.game_ref().id != id {
            registry.register(game).expect("the built-in games have distinct ids");
        }
    }
    registry.register(Arc::new(module)).expect("the module's id was left free for it");
    registry
}

/// Runs every script of `pack` whose game has a port, with the port; returns
/// the problems found and how many scripts ran.
fn run_pack_with_ports(pack: &Path, modules: &Path) -> (Vec<String>, usize) {
    let mut problems = Vec::new();
    let mut ran = 0;
    for script in script_paths(pack) {
        let value = read_script(&script).unwrap_or_else(|e| panic!("{}: {e}", script.display()));
        let game_id = script_game_id(&value).unwrap_or_else(|| panic!("{} names no game", script.display()));
        let port = game_id.strip_prefix("conformance/").map(|name| modules.join(format!("{name}.mjs")));
        let Some(port) = port.filter(|path| path.is_file()) else {
            println!("skipped {}: no JS port of {game_id}", script.display());
            continue;
        };
        let registry = registry_with(load(&port));
        let output = run_script_with(&registry, &value).unwrap_or_else(|e| panic!("{}: {e}", script.display()));
        problems.extend(compare_outputs(&output.name, &output.files, &pack.join("expected").join(&output.name)));
        ran += 1;
    }
    (problems, ran)
}

#[test]
fn every_script_reproduces_its_expected_outputs_with_the_js_ports() {
    let mut problems = Vec::new();
    let (shared, ran_shared) = run_pack_with_ports(&conformance_dir(), &modules_dir());
    problems.extend(shared);
    let (project, ran_project) = run_pack_with_ports(&project_conformance_dir(), &modules_dir());
    problems.extend(project);
    println!("ran {ran_shared} shared and {ran_project} project scripts with the JS ports");
    assert!(ran_shared >= 12, "expected the 12 shared scripts to run with the ports, ran {ran_shared}");
    assert!(ran_project >= 10, "expected the project pack to run with the ports, ran {ran_project}");
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
}

/// Issue 28: the randomized scripts of `fuzz/` too, every one with its port.
#[test]
fn every_fuzz_script_reproduces_the_reference_outputs_with_the_js_ports() {
    let (problems, ran) = run_pack_with_ports(&fuzz_conformance_dir(), &modules_dir());
    assert!(ran >= 15, "expected the 15 fuzz scripts to run with the ports, ran {ran}");
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
}

/// The comparison sees the module's own output: a port whose counter total
/// is off by one no longer reproduces the counter scripts.
#[test]
fn a_wrong_port_does_not_reproduce_the_scripts() {
    let dir = std::env::temp_dir().join(format!("gaos-wrong-port-{}", std::process::id()));
    let lib = dir.join("lib");
    std::fs::create_dir_all(&lib).expect("temp dir");
    for entry in std::fs::read_dir(modules_dir().join("lib")).expect("lib dir") {
        let path = entry.expect("entry").path();
        std::fs::copy(&path, lib.join(path.file_name().expect("file name"))).expect("copy lib file");
    }
    let counter = std::fs::read_to_string(modules_dir().join("counter.mjs")).expect("counter port");
    let wrong = counter.replace("total: state.total,", "total: state.total + 1,");
    assert_ne!(wrong, counter, "the counter port's view changed shape; update this test");
    std::fs::write(dir.join("counter.mjs"), wrong).expect("write wrong port");
    let (problems, ran) = run_pack_with_ports(&conformance_dir(), &dir);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(ran >= 4, "the counter scripts ran with the wrong port ({ran})");
    for script in ["counter-run-play-all", "counter-ticks-window-timeout", "lifecycle", "receipts-retention"] {
        assert!(problems.iter().any(|p| p.starts_with(&format!("{script}: "))), "{script} passed with a wrong port");
    }
}

fn ports() -> Vec<(Arc<dyn Game>, ModuleGame)> {
    let builtin = GameRegistry::builtin();
    PORTED
        .iter()
        .map(|id| {
            let port = port_path(id).unwrap_or_else(|| panic!("no port of {id} in {}", modules_dir().display()));
            (builtin.get(id).expect("built in"), load(&port))
        })
        .collect()
}

#[test]
fn each_port_describes_itself_like_the_built_in_game() {
    for (builtin, module) in ports() {
        let id = builtin.game_ref().id;
        assert_eq!(module.game_ref(), builtin.game_ref(), "{id}: game ref");
        assert_eq!(module.description(), builtin.description(), "{id}: description");
        assert_eq!(module.seats(), builtin.seats(), "{id}: seats");
        assert_eq!(module.levels(), builtin.levels(), "{id}: levels");
        assert_eq!(module.has_timeout_mapper(), builtin.has_timeout_mapper(), "{id}: timeout mapper");
        assert_eq!(module.cadence(), builtin.cadence(), "{id}: cadence");
    }
}

fn json(value: &Value) -> String {
    canonical_json(value)
}

/// Both games played in lockstep from every shipped level and a few seeds:
/// each seat's view and legal moves are equal at every step, the moves are
/// picked from the legal ones (rotating, so different cells and cards are
/// played), counter and race also see windows with missing inputs.
#[test]
fn each_port_plays_like_the_built_in_game() {
    const SEEDS: [u32; 4] = [0, 7, 42, u32::MAX];
    for (builtin, module) in ports() {
        let id = builtin.game_ref().id;
        let partial_windows = id == "conformance/counter" || id == "conformance/race";
        let (rust, js) = (builtin.reducer(), module.reducer());
        let (mut walks, mut finished) = (0, 0);
        for level in builtin.levels() {
            for seed in SEEDS {
                let at = format!("{id} level {} seed {seed}", level.id);
                let mut rust_state = rust.init(&level.level, seed).unwrap_or_else(|e| panic!("{at}: {e}"));
                let mut js_state = js.init(&level.level, seed).unwrap_or_else(|e| panic!("{at}: {e}"));
                walks += 1;
                for step in 0..40usize {
                    let mut inputs = Vec::new();
                    for (i, seat) in builtin.seats().iter().enumerate() {
                        let view = rust.view_for(&rust_state, seat);
                        assert_eq!(json(&js.view_for(&js_state, seat)), json(&view), "{at} step {step}: {seat}'s view");
                        let legal = builtin.legal_actions(&view, seat);
                        let js_legal: Vec<String> = module.legal_actions(&view, seat).iter().map(json).collect();
                        assert_eq!(js_legal, legal.iter().map(json).collect::<Vec<_>>(), "{at} step {step}: {seat}");
                        if legal.is_empty() || (partial_windows && (step + i) % 3 == 0) {
                            continue;
                        }
                        let command = &legal[(step * 7 + i * 3) % legal.len()];
                        let ctx = CommandContext {
                            session_id: "ports",
                            participant_id: seat,
                            submission_id: "s",
                            cursor: step as u64,
                            tick: step as u64,
                        };
                        let action = builtin.command_to_action(command, &ctx).expect("a legal command maps");
                        let js_action = module.command_to_action(command, &ctx).expect("a legal command maps");
                        assert_eq!(js_action, action, "{at} step {step}: {seat}'s action for {}", json(command));
                        inputs.push(action);
                    }
                    let status = rust.view(&rust_state).get("status").and_then(Value::as_str).map(str::to_owned);
                    if status.as_deref() != Some("playing") {
                        finished += 1;
                        break;
                    }
                    // sealed offers no moves (a commitment needs the client's
                    // salt): only its first views are compared here.
                    if inputs.is_empty() && !partial_windows {
                        break;
                    }
                    rust_state = rust.advance(rust_state, &inputs).unwrap_or_else(|e| panic!("{at} step {step}: {e}"));
                    js_state = js.advance(js_state, &inputs).unwrap_or_else(|e| panic!("{at} step {step}: {e}"));
                }
            }
        }
        if id != "conformance/sealed" {
            assert_eq!(finished, walks, "{id}: every walk plays the game to its end");
        }
    }
}

#[test]
fn each_timeout_mapper_maps_a_named_seat_like_the_built_in_game() {
    for (builtin, module) in ports().into_iter().filter(|(game, _)| game.has_timeout_mapper()) {
        let level = builtin.levels().remove(0);
        for seat in builtin.seats() {
            let ctx = TimeoutContext {
                session_id: "ports".into(),
                game: builtin.game_ref(),
                level_id: level.id.clone(),
                level_version: None,
                level: level.level.clone(),
                seed: 7,
                participant_id: Some(seat.clone()),
                window_ref: 0,
            };
            let timeout = TimeoutInput::new("t", 0, Some(&seat), "elapsed");
            let want = builtin.timeout_to_action(&ctx, &timeout).expect("mapper").expect("maps a named seat");
            let got = module.timeout_to_action(&ctx, &timeout).expect("mapper").expect("maps a named seat");
            assert_eq!(got, want, "{}: timeout of {seat}", builtin.game_ref().id);
        }
    }
}

/// sealed, which offers no legal moves, settled with every kind of revealed
/// bid: in range, the bounds, out of range, fractional, not a number, and
/// none at all (a forced input carries no verified payload).
#[test]
fn the_sealed_port_settles_auctions_like_the_built_in_game() {
    let (builtin, module) =
        ports().into_iter().find(|(game, _)| game.game_ref().id == "conformance/sealed").expect("sealed");
    let (rust, js) = (builtin.reducer(), module.reducer());
    let level = gaos_json::parse(r#"{"maxBid": 100}"#).expect("level");
    let bids = ["42", "0", "100", "101", "-1", "1.5", r#""7""#, "none"];
    for north in bids {
        for south in bids {
            let mut rust_state = rust.init(&level, 0).expect("init");
            let mut js_state = js.init(&level, 0).expect("init");
            let commit = |seat: &str| {
                let mut action = SubmittedAction::new("Action 1").with_seat(seat);
                action.commit =
                    Some(CommitEnvelope { commitment_id: 0, scheme: COMMIT_SCHEME.into(), hash: "00".repeat(32) });
                action
            };
            let reveal = |seat: &str, bid: &str| {
                let mut action = SubmittedAction::new("Action 1").with_seat(seat);
                if bid != "none" {
                    action.verified_payload =
                        Some(gaos_json::parse_lenient(&format!(r#"{{"bid": {bid}}}"#)).expect("bid"));
                }
                action
            };
            let windows =
                [vec![commit("south"), commit("north")], vec![reveal("north", north), reveal("south", south)]];
            for inputs in windows {
                rust_state = rust.advance(rust_state, &inputs).expect("rust advance");
                js_state = js.advance(js_state, &inputs).expect("js advance");
                for seat in builtin.seats() {
                    let (want, got) = (rust.view_for(&rust_state, &seat), js.view_for(&js_state, &seat));
                    assert_eq!(json(&got), json(&want), "bids {north}/{south}: {seat}'s view");
                }
            }
        }
    }
}

/// `line N: field` of a verifier problem `line N: field: message`.
fn problem_location(problem: &str) -> &str {
    let end = problem.match_indices(": ").nth(1).map_or(problem.len(), |(i, _)| i);
    &problem[..end]
}

/// Every case of `replays/index.json` (the reference's replays, original and
/// tampered), re-simulated with the ports instead of the built-in games,
/// gets the verdict and stage the index gives; in strict mode (which also
/// recomputes checkpoint digests and insists on canonical bytes) the ports
/// give the verdict, stage and problems the built-in games give.
#[test]
fn the_ports_verify_the_replay_corpus_like_the_reference() {
    let ports: BTreeMap<String, Arc<dyn Game>> = ports()
        .into_iter()
        .map(|(builtin, module)| (builtin.game_ref().id, Arc::new(module) as Arc<dyn Game>))
        .collect();
    let with_ports = |game: &GameRef| -> Option<Arc<dyn Game>> { ports.get(&game.id).cloned() };
    let registry = GameRegistry::builtin();
    let built_in = |game: &GameRef| -> Option<Arc<dyn Game>> { registry.get(&game.id) };
    let index = read_conformance_json("replays/index.json");
    let cases = array_field(&index, "cases");
    assert!(cases.len() >= 60, "expected the full replay corpus, found {} cases", cases.len());
    let mut mismatches = Vec::new();
    let mut resimulated = 0;
    for case in cases {
        let file = str_field(case, "file");
        let bytes = std::fs::read(conformance_dir().join("replays").join(file)).expect("replay file");
        let report =
            verify_replay(bytes.as_slice(), &with_ports, &VerifyOptions { strict: false, ..VerifyOptions::default() });
        let stage = report.stage.map(|stage| stage.to_string());
        let want_stage = case.get("stage").and_then(Value::as_str);
        if report.verdict.to_string() != str_field(case, "verdict") || stage.as_deref() != want_stage {
            mismatches.push(format!(
                "{file}: expected {} at {want_stage:?}, got {} at {stage:?}: {:?}",
                str_field(case, "verdict"),
                report.verdict,
                report.problems.to_strings()
            ));
        }
        resimulated += report.resolutions;
        let strict = VerifyOptions { strict: true, ..VerifyOptions::default() };
        let (js, rust) = (
            verify_replay(bytes.as_slice(), &with_ports, &strict),
            verify_replay(bytes.as_slice(), &built_in, &strict),
        );
        // Problems are compared by where they point (`line N: field`): the
        // text of a game's own refusal names the engine that ran it.
        let outline = |r: &VerifyReport| {
            let at: Vec<String> = r.problems.to_strings().iter().map(|p| problem_location(p).to_owned()).collect();
            (r.verdict, r.stage, r.resolutions, at)
        };
        if outline(&js) != outline(&rust) {
            mismatches.push(format!(
                "{file} (strict): the ports give {:?}, the built-in games {:?}",
                outline(&js),
                outline(&rust)
            ));
        }
    }
    assert!(mismatches.is_empty(), "{} cases disagree:\n{}", mismatches.len(), mismatches.join("\n"));
    assert!(resimulated > 0, "no resolution was re-simulated with the ports");
}
