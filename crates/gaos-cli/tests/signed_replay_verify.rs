//! `gaos replay verify` on every case of `replays/signed/index.json`
//! through the real binary: the reference's verdict and stage, its per-seat
//! signature report in `--json`, and text output that names seat and record.

use std::path::PathBuf;
use std::process::Command;

use gaos_json::Value;
use gaos_testkit::{array_field, conformance_dir, read_conformance_json, str_field};

fn signed_cases() -> (Vec<Value>, Vec<PathBuf>) {
    let index = read_conformance_json("replays/signed/index.json");
    let cases = array_field(&index, "cases").to_vec();
    assert_eq!(cases.len(), 12);
    let files = cases.iter().map(|c| conformance_dir().join("replays/signed").join(str_field(c, "file"))).collect();
    (cases, files)
}

#[test]
fn signed_json_verdicts_and_reports_match_every_case() {
    let (cases, files) = signed_cases();
    let output = Command::new(env!("CARGO_BIN_EXE_gaos"))
        .args(["replay", "verify", "--json"])
        .args(&files)
        .output()
        .expect("run gaos");
    assert_eq!(output.status.code(), Some(1), "some cases are rejected or malformed");
    let stdout = String::from_utf8(output.stdout).expect("UTF-8");
    let lines: Vec<Value> = stdout.lines().map(|l| gaos_json::parse(l).expect("JSON line")).collect();
    assert_eq!(lines.len(), cases.len());
    for (case, line) in cases.iter().zip(&lines) {
        let file = str_field(case, "file");
        assert_eq!(str_field(line, "verdict"), str_field(case, "verdict"), "{file}: {line}");
        assert_eq!(line.get("stage").and_then(Value::as_str), case.get("stage").and_then(Value::as_str), "{file}");
        let expected = case.get("signatures").filter(|s| !s.is_null());
        let unsigned = expected.is_some_and(|s| s.get("state").and_then(Value::as_str) == Some("unsigned"));
        match (expected, line.get("signatures")) {
            (Some(want), Some(got)) => {
                assert_eq!(gaos_json::canonical_json(got), gaos_json::canonical_json(want), "{file}")
            }
            (Some(_), None) => assert!(unsigned, "{file}: a signed replay's line carries its report"),
            (None, got) => assert!(got.is_none(), "{file}: no report for a file that did not parse"),
        }
    }
}

#[test]
fn signed_text_output_names_seat_and_record() {
    let (_, files) = signed_cases();
    let forged = files.iter().find(|f| f.ends_with("hilo-signed.forged-sig.gaos-replay.jsonl")).expect("case");
    let valid = files.iter().find(|f| f.ends_with("hilo-signed.gaos-replay.jsonl")).expect("case");
    let output = Command::new(env!("CARGO_BIN_EXE_gaos"))
        .args(["replay", "verify"])
        .args([valid, forged])
        .output()
        .expect("run gaos");
    let text = String::from_utf8(output.stdout).expect("UTF-8");
    assert!(text.contains("hilo-signed.gaos-replay.jsonl: accepted-signed"), "{text}");
    assert!(text.contains("forged-sig.gaos-replay.jsonl: rejected (stage signatures)"), "{text}");
    assert!(
        text.contains("line 6: signatures of seat alice: resolution 4 input 0 has an invalid Ed25519 signature"),
        "{text}"
    );
    assert!(text.contains("1 accepted-signed, 0 accepted-unsigned, 0 unverifiable, 1 rejected"), "{text}");
    assert_eq!(output.status.code(), Some(1));
    let inspect =
        Command::new(env!("CARGO_BIN_EXE_gaos")).args(["replay", "inspect"]).arg(valid).output().expect("run gaos");
    let text = String::from_utf8(inspect.stdout).expect("UTF-8");
    assert!(text.contains("signatures   RFC-010, signed"), "{text}");
    assert!(
        text.contains("alice      3 submissions, 3 valid signatures, chain reproduced, policy satisfied"),
        "{text}"
    );
}
