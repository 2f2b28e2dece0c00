//! Issue 14, Acceptance 1 through the command line: `gaos conformance run
//! --game-module conformance/modules/<game>.mjs SCRIPT --out DIR` reproduces
//! every script of the reference pack and of the project's pack byte for byte
//! with the JS port in place of the built-in game (gaos-module's
//! `conformance_ports.rs` checks the same through the library, plus what the
//! scripts do not reach). The randomized scripts of the shared pack's
//! `fuzz/` (issue 28) reproduce theirs both with the built-in games and with
//! the ports.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use gaos_testkit::conformance_outputs::{compare_outputs, project_conformance_dir, script_paths};
use gaos_testkit::server::TempDir;
use gaos_testkit::{conformance_dir, fuzz_conformance_dir};

/// Every file of `dir` (flat, as the script layout is), name → text.
fn read_outputs(dir: &Path) -> BTreeMap<String, String> {
    std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|entry| {
            let path = entry.expect("dir entry").path();
            let name = path.file_name().expect("a file name").to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&path).expect("an output file is text"))
        })
        .collect()
}

/// Runs every script of `pack` whose game has a port, with the port (or,
/// without `ports`, every script with the built-in games); returns the
/// problems and how many ran.
fn run_pack(pack: &Path, scratch: &Path, ports: bool) -> (Vec<String>, usize) {
    let modules = project_conformance_dir().join("modules");
    let mut problems = Vec::new();
    let mut ran = 0;
    for script in script_paths(pack) {
        let text = std::fs::read_to_string(&script).expect("script");
        let value: serde_json::Value = serde_json::from_str(&text).expect("script JSON");
        let game = value["game"].as_str().unwrap_or_else(|| panic!("{} names no game", script.display()));
        let name = value["name"].as_str().expect("a script has a name");
        let out = scratch.join(format!("{}-{name}-{}", pack.file_name().unwrap().to_string_lossy(), ports));
        let mut command = Command::new(env!("CARGO_BIN_EXE_gaos"));
        command.args(["conformance", "run"]).arg(&script).arg("--out").arg(&out);
        if ports {
            let port = game.strip_prefix("conformance/").map(|name| modules.join(format!("{name}.mjs")));
            let Some(port) = port.filter(|path| path.is_file()) else {
                println!("skipped {}: no JS port of {game}", script.display());
                continue;
            };
            command.arg("--game-module").arg(&port);
        }
        let output = command.output().expect("gaos runs");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{}: gaos conformance run failed: {stderr}", script.display());
        assert_eq!(
            stderr.contains(&format!("replaces the built-in game {game}")),
            ports,
            "{}: a port's replacement (and only that) is announced on stderr: {stderr:?}",
            script.display()
        );
        problems.extend(compare_outputs(name, &read_outputs(&out), &pack.join("expected").join(name)));
        ran += 1;
    }
    (problems, ran)
}

#[test]
fn every_conformance_script_reproduces_its_outputs_through_the_cli_with_the_js_ports() {
    let scratch = TempDir::new("gaos-conformance-ports");
    let (mut problems, shared) = run_pack(&conformance_dir(), scratch.path(), true);
    assert!(shared >= 12, "expected the full reference pack to run with ports, ran {shared}");
    let (project_problems, project) = run_pack(&project_conformance_dir(), scratch.path(), true);
    assert!(project >= 1, "the project's pack has scripts for the ported games");
    problems.extend(project_problems);
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
}

#[test]
fn every_fuzz_script_reproduces_the_reference_outputs_through_the_cli() {
    let scratch = TempDir::new("gaos-conformance-fuzz");
    for ports in [false, true] {
        let (problems, ran) = run_pack(&fuzz_conformance_dir(), scratch.path(), ports);
        assert!(ran >= 15, "expected the 15 fuzz scripts to run (ports: {ports}), ran {ran}");
        assert!(problems.is_empty(), "ports: {ports}: {} problems:\n{}", problems.len(), problems.join("\n"));
    }
}
