//! Every case of `replays/signed/index.json` (RFC-010 signed replays, valid
//! and tampered) gets the reference's verdict, stage and per-seat signature
//! report — problems word for word — in default and in strict mode.

use std::sync::Arc;

use gaos_games::GameRegistry;
use gaos_json::Value;
use gaos_kernel::replay::{Stage, Verdict, VerifyOptions, verify_replay};
use gaos_kernel::{Game, GameRef};
use gaos_testkit::{array_field, conformance_dir, read_conformance_json, str_field};

#[test]
fn every_signed_replay_case_gets_the_reference_verdict() {
    let registry = GameRegistry::builtin();
    let resolve = |game: &GameRef| -> Option<Arc<dyn Game>> { registry.by_adapter(&game.adapter.id) };
    let index = read_conformance_json("replays/signed/index.json");
    let cases = array_field(&index, "cases");
    assert_eq!(cases.len(), 12, "the pack has twelve signed cases");
    let dir = conformance_dir().join("replays/signed");
    let mut verdicts = std::collections::BTreeMap::new();
    for case in cases {
        let file = str_field(case, "file");
        let bytes = std::fs::read(dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        for strict in [false, true] {
            let report = verify_replay(bytes.as_slice(), &resolve, &VerifyOptions { strict, ..Default::default() });
            let label = format!("{file} (strict {strict})");
            assert_eq!(report.verdict.as_str(), str_field(case, "verdict"), "{label}: {:?}", report.problems);
            let stage = case.get("stage").and_then(Value::as_str);
            assert_eq!(report.stage.map(Stage::as_str), stage, "{label}: {:?}", report.problems);
            match case.get("signatures") {
                Some(Value::Null) | None => assert!(report.signatures.is_none(), "{label}: nothing parsed"),
                Some(expected) => {
                    let got = report.signatures.as_ref().expect("a report").to_value();
                    assert_eq!(gaos_json::canonical_json(&got), gaos_json::canonical_json(expected), "{label}");
                }
            }
            if report.verdict == Verdict::Rejected && report.stage == Some(Stage::Signatures) {
                // The rejection names the record and the seat.
                let problems = report.problems.to_strings();
                assert!(!problems.is_empty() && problems.iter().all(|p| p.contains("seat")), "{label}: {problems:?}");
            }
        }
        *verdicts.entry(str_field(case, "verdict").to_owned()).or_insert(0) += 1;
    }
    let count = |v: &str| verdicts.get(v).copied().unwrap_or(0);
    assert_eq!((count("accepted-signed"), count("rejected")), (4, 6), "{verdicts:?}");
}
