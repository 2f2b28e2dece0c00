//! Every script of the shared conformance pack and of its randomized pack
//! (`fuzz/`) reproduces the reference outputs byte for byte, and every
//! script of the project's own pack
//! (`conformance/` at the repository root: edge cases of kernel spec §4.10
//! and §4.12 and SCRIPT-FORMAT.md §4) reproduces its reviewed outputs.

use std::path::Path;

use gaos_testkit::conformance_outputs::{compare_outputs, project_conformance_dir, script_paths};
use gaos_testkit::{conformance_dir, fuzz_conformance_dir};

/// Runs every script of `pack` with the built-in games and compares its
/// outputs with the pack's `expected/`; at least `at_least` scripts.
fn assert_pack_matches(pack: &Path, at_least: usize) {
    let scripts = script_paths(pack);
    assert!(scripts.len() >= at_least, "expected the full pack of scripts, found {}", scripts.len());
    let mut problems = Vec::new();
    for script in &scripts {
        let value = gaos_conformance::read_script(script).expect("script JSON");
        let output = gaos_conformance::run_script(&value).unwrap_or_else(|e| panic!("{}: {e}", script.display()));
        problems.extend(compare_outputs(&output.name, &output.files, &pack.join("expected").join(&output.name)));
    }
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
}

#[test]
fn every_script_matches_the_reference_outputs() {
    assert_pack_matches(&conformance_dir(), 12);
}

/// The randomized scripts (long, with about a quarter of edge steps: wrong
/// argument types, held transitions completed late, finalize with bad perms
/// and visibility, runs with faulty levels) match the reference too.
#[test]
fn every_fuzz_script_matches_the_reference_outputs() {
    assert_pack_matches(&fuzz_conformance_dir(), 15);
}

/// The project pack: the same layout as the shared one. With
/// `GAOS_CONFORMANCE_BLESS=1` the outputs are (re)written into `expected/`
/// instead of compared; every blessed output is reviewed by hand against
/// the spec (conformance/README.md says what each script checks).
#[test]
fn every_project_script_matches_its_reviewed_outputs() {
    let dir = project_conformance_dir();
    let scripts = script_paths(&dir);
    assert!(scripts.len() >= 10, "expected the project pack, found {} scripts", scripts.len());
    let bless = std::env::var_os("GAOS_CONFORMANCE_BLESS").is_some();
    let mut problems = Vec::new();
    for script in &scripts {
        let value = gaos_conformance::read_script(script).expect("script JSON");
        let output = gaos_conformance::run_script(&value).unwrap_or_else(|e| panic!("{}: {e}", script.display()));
        let expected = dir.join("expected").join(&output.name);
        if bless {
            let _ = std::fs::remove_dir_all(&expected);
            output.write_to(&expected).expect("write expected outputs");
            continue;
        }
        problems.extend(compare_outputs(&output.name, &output.files, &expected));
    }
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
}

/// The driver runs the game of the registry it is given, not a built-in one
/// behind the caller's back: without the script's game it refuses the script.
#[test]
fn the_driver_uses_the_registry_it_is_given() {
    let script = gaos_conformance::read_script(&conformance_dir().join("scripts/hilo-ingest.json")).expect("script");
    let empty = gaos_games::GameRegistry::new();
    let error = gaos_conformance::run_script_with(&empty, &script).expect_err("no hilo in an empty registry");
    assert!(error.to_string().contains("conformance/hilo"), "{error}");
    let builtin = gaos_conformance::run_script_with(&gaos_games::GameRegistry::builtin(), &script).expect("runs");
    assert_eq!(builtin.files, gaos_conformance::run_script(&script).expect("runs").files);
}
