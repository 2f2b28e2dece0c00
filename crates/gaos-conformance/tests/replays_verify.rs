//! Every replay our kernel writes for the conformance scripts verifies,
//! in default and in strict mode — except `hilo-timeout-forced`, whose
//! forced timeout input (card 1) is not what hilo's timeout mapper derives
//! (card 0), so index.json classes it `rejected`.

use std::sync::Arc;

use gaos_games::GameRegistry;
use gaos_kernel::replay::{Stage, Verdict, VerifyOptions, verify_replay};
use gaos_kernel::{Game, GameRef};
use gaos_testkit::conformance_dir;

fn scripts() -> Vec<std::path::PathBuf> {
    let mut scripts: Vec<_> = std::fs::read_dir(conformance_dir().join("scripts"))
        .expect("scripts dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    scripts.sort();
    assert!(scripts.len() >= 12, "expected the full pack of scripts, found {}", scripts.len());
    scripts
}

#[test]
fn kernel_replays_of_every_script_verify() {
    let registry = GameRegistry::builtin();
    let resolve = |game: &GameRef| -> Option<Arc<dyn Game>> { registry.by_adapter(&game.adapter.id) };
    let mut checked = 0;
    let mut failures = Vec::new();
    for script in scripts() {
        let text = std::fs::read_to_string(&script).expect("script");
        let value = gaos_json::parse(&text).expect("script JSON");
        let output = gaos_conformance::run_script(&value).unwrap_or_else(|e| panic!("{}: {e}", script.display()));
        for (file, replay) in output.files.iter().filter(|(name, _)| name.ends_with(".gaos-replay.jsonl")) {
            let label = format!("{}/{file}", output.name);
            let forced = output.name == "hilo-timeout-forced";
            for strict in [false, true] {
                let report = verify_replay(replay, &resolve, &VerifyOptions { strict, ..VerifyOptions::default() });
                let expected = if forced { Verdict::Rejected } else { Verdict::AcceptedUnsigned };
                if report.verdict != expected {
                    failures.push(format!(
                        "{label} (strict {strict}): expected {expected}, got {} at {:?}: {:?}",
                        report.verdict,
                        report.stage,
                        report.problems.to_strings()
                    ));
                }
                if forced {
                    assert_eq!(report.stage, Some(Stage::Recheck), "{label}");
                    assert!(
                        report
                            .problems
                            .to_strings()
                            .iter()
                            .any(|p| p.contains("resolution.systemInput") && p.contains("timeout mapper")),
                        "{label}: the rejection must name the forced system input: {:?}",
                        report.problems.to_strings()
                    );
                } else {
                    assert!(report.resolutions > 0, "{label}: nothing was re-simulated");
                }
            }
            checked += 1;
        }
    }
    assert!(failures.is_empty(), "{} replays did not verify as expected:\n{}", failures.len(), failures.join("\n"));
    assert!(checked >= 12, "expected at least 12 kernel replays, found {checked}");
}
