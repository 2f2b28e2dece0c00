//! Every script of the shared conformance pack reproduces the reference
//! outputs byte for byte, and every script of the project's own pack
//! (`conformance/` at the repository root: edge cases of kernel spec §4.10
//! and §4.12 and SCRIPT-FORMAT.md §4) reproduces its reviewed outputs.

use std::collections::BTreeSet;
use std::path::Path;

use gaos_testkit::conformance_dir;

fn compare_dir(name: &str, output: &gaos_conformance::ScriptOutput, expected: &Path) -> Vec<String> {
    let mut problems = Vec::new();
    let expected_files: BTreeSet<String> = std::fs::read_dir(expected)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", expected.display()))
        .map(|entry| entry.expect("dir entry").file_name().to_string_lossy().into_owned())
        .collect();
    let actual_files: BTreeSet<String> = output.files.keys().cloned().collect();
    for missing in expected_files.difference(&actual_files) {
        problems.push(format!("{name}: MISSING {missing}"));
    }
    for extra in actual_files.difference(&expected_files) {
        problems.push(format!("{name}: EXTRA {extra}"));
    }
    for file in expected_files.intersection(&actual_files) {
        let want = std::fs::read_to_string(expected.join(file)).expect("expected file");
        let got = &output.files[file];
        if &want != got {
            let line = want
                .lines()
                .zip(got.lines())
                .position(|(a, b)| a != b)
                .unwrap_or_else(|| want.lines().count().min(got.lines().count()));
            problems.push(format!(
                "{name}: MISMATCH {file} line {}\n  expected: {}\n  actual:   {}",
                line + 1,
                want.lines().nth(line).unwrap_or("<end>"),
                got.lines().nth(line).unwrap_or("<end>")
            ));
        }
    }
    problems
}

#[test]
fn every_script_matches_the_reference_outputs() {
    let dir = conformance_dir();
    let mut scripts: Vec<_> = std::fs::read_dir(dir.join("scripts"))
        .expect("scripts dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    scripts.sort();
    assert!(scripts.len() >= 12, "expected the full pack of scripts, found {}", scripts.len());
    let mut problems = Vec::new();
    for script in &scripts {
        let text = std::fs::read_to_string(script).expect("script");
        let value = gaos_conformance::parse_script(&text).expect("script JSON");
        let output = gaos_conformance::run_script(&value).unwrap_or_else(|e| panic!("{}: {e}", script.display()));
        problems.extend(compare_dir(&output.name, &output, &dir.join("expected").join(&output.name)));
    }
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
}

/// The project pack: the same layout as the shared one. With
/// `GAOS_CONFORMANCE_BLESS=1` the outputs are (re)written into `expected/`
/// instead of compared; every blessed output is reviewed by hand against
/// the spec (conformance/README.md says what each script checks).
#[test]
fn every_project_script_matches_its_reviewed_outputs() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance");
    let mut scripts: Vec<_> = std::fs::read_dir(dir.join("scripts"))
        .expect("project scripts dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    scripts.sort();
    assert!(scripts.len() >= 10, "expected the project pack, found {} scripts", scripts.len());
    let bless = std::env::var_os("GAOS_CONFORMANCE_BLESS").is_some();
    let mut problems = Vec::new();
    for script in &scripts {
        let text = std::fs::read_to_string(script).expect("script");
        let value = gaos_conformance::parse_script(&text).expect("script JSON");
        let output = gaos_conformance::run_script(&value).unwrap_or_else(|e| panic!("{}: {e}", script.display()));
        let expected = dir.join("expected").join(&output.name);
        if bless {
            let _ = std::fs::remove_dir_all(&expected);
            output.write_to(&expected).expect("write expected outputs");
            continue;
        }
        problems.extend(compare_dir(&output.name, &output, &expected));
    }
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
}
