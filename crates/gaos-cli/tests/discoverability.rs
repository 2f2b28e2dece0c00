//! What a newcomer finds without reading the source, through the real
//! `gaos` binary: `gaos games` lists every game it serves (a game module
//! given with `--game` included) as a table and as JSON; every command's
//! `--help` names the environment variables it reads and no internal work
//! item; `gaos --version` names the version and the commit it was built from.

use std::path::{Path, PathBuf};
use std::process::Command;

use gaos_testkit::http::get;
use gaos_testkit::server::TestServer;
use serde_json::{Value, json};

const GAOS: &str = env!("CARGO_BIN_EXE_gaos");

#[path = "../build/commit.rs"]
mod commit;

fn bids_module() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/modules/bids.mjs")
}

/// Run `gaos ARGS`; (exit code, stdout, stderr).
fn gaos(args: &[&str]) -> (Option<i32>, String, String) {
    let output = Command::new(GAOS).args(args).output().unwrap_or_else(|e| panic!("gaos {args:?}: {e}"));
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    (output.status.code(), text(&output.stdout), text(&output.stderr))
}

#[test]
fn gaos_games_lists_built_in_games_and_a_module_as_a_table() {
    let module = bids_module();
    let (code, table, stderr) = gaos(&["games", "--game", module.to_str().expect("utf-8 path")]);
    assert_eq!(code, Some(0), "{stderr}");
    let lines: Vec<&str> = table.lines().collect();
    let header: Vec<&str> = lines[0].split_whitespace().collect();
    assert_eq!(header, ["GAME", "SEATS", "LEVELS", "CADENCE", "ORIGIN"], "{table}");
    let row = |id: &str| {
        lines.iter().find(|line| line.starts_with(&format!("{id} "))).unwrap_or_else(|| panic!("no row {id}:\n{table}"))
    };
    let hilo = row("conformance/hilo");
    assert!(hilo.contains("alice, bob") && hilo.contains("turns") && hilo.ends_with("built in"), "{hilo}");
    assert!(row("conformance/race").contains(" ticks 10/s "), "a ticks game shows its rate:\n{table}");
    assert!(row("gaos/maze").contains("tiny"), "{table}");
    let bids = row("js/bids");
    assert!(bids.contains("red, blue") && bids.contains("default") && bids.contains("turns"), "{bids}");
    assert!(bids.contains(&format!("module {}", module.display())), "the module's path: {bids}");
    assert!(table.contains("\n7 games."), "a count closes the table:\n{table}");
}

#[test]
fn gaos_games_json_is_the_hosts_listing_plus_the_module() {
    let server = TestServer::start(GAOS);
    let served = get(server.base_url(), "/v1/games", Some(server.operator_token())).json();
    let (code, stdout, stderr) = gaos(&["games", "--json"]);
    assert_eq!(code, Some(0), "{stderr}");
    let listed: Value = serde_json::from_str(&stdout).expect("one JSON document");
    assert_eq!(listed, served, "gaos games --json is the body of GET /v1/games for the same games");

    let module = bids_module();
    let (code, stdout, stderr) = gaos(&["games", "--json", "--game", module.to_str().expect("utf-8 path")]);
    assert_eq!(code, Some(0), "{stderr}");
    let listed: Value = serde_json::from_str(&stdout).expect("one JSON document");
    let games = listed["games"].as_array().expect("games");
    let bids = games.iter().find(|g| g["id"] == json!("js/bids")).unwrap_or_else(|| panic!("js/bids: {listed}"));
    assert_eq!(bids["seats"], json!(["red", "blue"]));
    assert_eq!(bids["cadence"], json!({"mode": "turns"}));
    assert_eq!(bids["origin"]["kind"], json!("module"));
    assert_eq!(bids["origin"]["path"], json!(module.display().to_string()));
    let sha256 = bids["origin"]["sha256"].as_str().expect("sha256");
    assert!(sha256.len() == 64 && sha256.bytes().all(|b| b.is_ascii_hexdigit()), "{sha256}");
    assert_eq!(games.len(), 7, "the six built-in games and the module: {listed}");
}

/// The subcommands of `gaos [path] --help`, from its "Commands:" list.
fn subcommands(help: &str) -> Vec<String> {
    let Some(start) = help.find("Commands:\n") else { return Vec::new() };
    help[start + "Commands:\n".len()..]
        .lines()
        .take_while(|line| line.starts_with("  "))
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_help_names_the_environment_it_reads_and_no_work_item() {
    let mut pending = vec![Vec::<String>::new()];
    let mut leaves = 0;
    while let Some(path) = pending.pop() {
        let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
        args.push("--help");
        let (code, help, stderr) = gaos(&args);
        assert_eq!(code, Some(0), "gaos {args:?}: {stderr}");
        let shown = format!("gaos {}", args.join(" "));
        assert!(help.contains("Environment"), "{shown} names the environment it reads:\n{help}");
        let lower = help.to_lowercase();
        for internal in
            ["issue 1", "issue 2", "issue 3", "issue 4", "issue 5", "issue 6", "issue 7", "issue 8", "issue 9"]
        {
            assert!(!lower.contains(internal), "{shown} mentions an internal work item ({internal}):\n{help}");
        }
        let children = subcommands(&help);
        if children.is_empty() {
            leaves += 1;
        }
        for child in children {
            let mut next = path.clone();
            next.push(child);
            pending.push(next);
        }
    }
    assert!(leaves >= 18, "every subcommand was visited ({leaves})");

    let help = |args: &[&str]| gaos(args).1;
    let serve = help(&["serve", "--help"]);
    for name in ["GAOS_OPERATOR_TOKEN", "RUST_LOG"] {
        assert!(serve.contains(name), "gaos serve --help names {name}:\n{serve}");
    }
    let new = help(&["session", "new", "--help"]);
    assert!(new.contains("GAOS_HOST") && new.contains("GAOS_OPERATOR_TOKEN"), "{new}");
    let mcp = help(&["mcp", "--help"]);
    assert!(mcp.contains("GAOS_SEAT_TOKEN") && mcp.contains("GAOS_HOST"), "{mcp}");
    let play = help(&["play", "--help"]);
    assert!(play.contains("GAOS_OPERATOR_TOKEN") && play.contains("OPENAI_API_KEY"), "{play}");
    let verify = help(&["replay", "verify", "--help"]);
    assert!(verify.contains("reads no environment variables"), "{verify}");
    let top = help(&["--help"]);
    assert!(top.contains("GAOS_OPERATOR_TOKEN") && top.contains("gaos serve"), "gaos --help sums them up:\n{top}");
}

#[test]
fn the_version_names_the_commit_the_binary_was_built_from() {
    let (code, stdout, stderr) = gaos(&["--version"]);
    assert_eq!(code, Some(0), "{stderr}");
    let version = stdout.trim();
    let prefix = format!("gaos {} (commit ", env!("CARGO_PKG_VERSION"));
    assert!(version.starts_with(&prefix) && version.ends_with(')'), "{version}");
    match commit::describe(Path::new(env!("CARGO_MANIFEST_DIR"))) {
        Some(head) => {
            assert!(version.contains(&head.id), "the version names HEAD {}: {version}", head.id);
            assert!(head.id.len() == 40 && head.id.bytes().all(|b| b.is_ascii_hexdigit()), "{}", head.id);
            assert!(!head.watch.is_empty(), "the build reruns when HEAD moves");
        }
        None => assert!(version.contains("commit unknown"), "outside a git checkout: {version}"),
    }
}

#[test]
fn a_build_outside_a_git_checkout_says_its_commit_is_unknown() {
    let outside = gaos_testkit::server::TempDir::new("no-git");
    assert!(commit::describe(outside.path()).is_none(), "a directory outside any checkout has no commit");
    assert_eq!(commit::version_note(None, None), "commit unknown: built outside a git checkout");
    assert_eq!(commit::version_note(None, Some("0123abc")), "commit 0123abc", "a packager may name it");
}
