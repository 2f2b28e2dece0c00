//! The replay reader and structural validation (kernel spec §5.2–5.4),
//! without game code: the shared pack's replays, the JSONL line rules, and
//! one case per structural rule.

use gaos_kernel::replay::{
    FormatVersion, MAX_PROBLEMS, RecordBody, ReplayFormatError, Stage, Verdict, VerifyOptions, parse_replay_jsonl,
    read_jsonl, read_replay, verify_replay,
};
use gaos_testkit::{array_field, conformance_dir, read_conformance_json, str_field};

fn replay_text(relative: &str) -> String {
    let path = conformance_dir().join("replays").join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

fn problems(result: Result<impl Sized, ReplayFormatError>) -> Vec<String> {
    match result {
        Ok(_) => Vec::new(),
        Err(e) => e.problems.to_strings(),
    }
}

/// Problems of `text`, asserting both readers agree on them.
fn read_problems(text: &str) -> Vec<String> {
    let streamed = problems(read_replay(text));
    let kept = problems(parse_replay_jsonl(text));
    assert_eq!(streamed, kept, "both readers must report the same problems for:\n{text}");
    streamed
}

const HEADER: &str = r#"{"format":"gaos.replay","formatVersion":"1.3","game":{"adapter":{"id":"g/reducer","version":"1"},"id":"g","version":"1"},"kind":"header","levels":[{"id":"l","index":0,"level":{},"result":{"actionsUsed":1,"stars":null,"status":"ended"},"seed":7}],"perm":[1,0],"seed":7,"seedPolicy":"explicit","sessionId":"s","totals":{"totalActionsUsed":1,"totalStars":0}}"#;
const RESOLUTION: &str = r#"{"cause":"complete","inputs":[{"canonicalCommand":"{\"a\":1}","canonicalId":"Action 1","cursor":0,"seat":"p","submissionId":"p-0","wireId":"Action 2"}],"kind":"resolution","levelIndex":0,"n":0,"tick":0}"#;

fn with(header: &str, records: &[&str]) -> String {
    let mut text = String::from(header);
    text.push('\n');
    for record in records {
        text.push_str(record);
        text.push('\n');
    }
    text
}

#[test]
fn parse_stage_cases_of_the_pack_fail_to_read_and_the_others_read() {
    let index = read_conformance_json("replays/index.json");
    for case in array_field(&index, "cases") {
        let file = str_field(case, "file");
        let text = replay_text(file);
        let found = read_problems(&text);
        if case.get("stage").and_then(|s| s.as_str()) == Some("parse") {
            assert!(!found.is_empty(), "{file} must not read");
            assert!(found.iter().all(|p| p.starts_with("line ")), "{file}: {found:?}");
        } else {
            assert!(found.is_empty(), "{file} must read: {found:?}");
        }
    }
}

#[test]
fn strict_byte_check_agrees_with_the_canonical_column() {
    let no_games = |_: &gaos_kernel::GameRef| -> Option<std::sync::Arc<dyn gaos_kernel::Game>> { None };
    let index = read_conformance_json("replays/index.json");
    let mut checked = 0;
    for case in array_field(&index, "cases") {
        let Some(canonical) = case.get("canonical").and_then(|c| c.as_bool()) else {
            continue;
        };
        let file = str_field(case, "file");
        let report = verify_replay(
            replay_text(file).as_str(),
            &no_games,
            &VerifyOptions { strict: true, ..VerifyOptions::default() },
        );
        let expected = if canonical {
            (Verdict::Unverifiable, Some(Stage::Recheck))
        } else {
            (Verdict::Malformed, Some(Stage::Structure))
        };
        assert_eq!((report.verdict, report.stage), expected, "{file}: {:?}", report.problems.to_strings());
        checked += 1;
    }
    assert!(checked >= 40, "expected most cases to carry a canonical flag, found {checked}");
}

#[test]
fn originals_round_trip_byte_for_byte() {
    for entry in std::fs::read_dir(conformance_dir().join("replays/original")).expect("originals") {
        let path = entry.expect("entry").path();
        let text = std::fs::read_to_string(&path).expect("read");
        let artifact = parse_replay_jsonl(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(artifact.to_jsonl(), text, "{}", path.display());
        let view = read_replay(&text).expect("streams too");
        assert_eq!(view.version, FormatVersion::V1_3);
        assert!(view.grouped);
        assert_eq!(view.records.len() + 1, text.lines().count());
    }
}

#[test]
fn jsonl_line_rules() {
    let text = with(HEADER, &[RESOLUTION]);
    assert!(read_problems(&text).is_empty());
    // CRLF line ends and trailing blank lines are accepted.
    let crlf = text.replace('\n', "\r\n") + "\r\n \n\n";
    assert!(read_problems(&crlf).is_empty());
    assert_eq!(read_replay(&crlf).expect("reads"), read_replay(&text).expect("reads"));
    // No trailing newline at all is fine too.
    assert!(read_problems(text.trim_end()).is_empty());
    // An interior blank line is not.
    let blank = format!("{HEADER}\n\n{RESOLUTION}\n");
    assert_eq!(read_problems(&blank), ["line 2: the line must not be blank"]);
    // Nothing at all.
    assert_eq!(read_problems(" \n\n"), ["the file is empty: a replay needs at least its header line"]);
    // Not JSON, and not an object.
    let broken = format!("{HEADER}\n{{\"kind\":\n[1]\n");
    let found = read_problems(&broken);
    assert!(found[0].starts_with("line 2: the line is not valid JSON: "), "{found:?}");
    assert_eq!(found[1], "line 3: record: every line must be a JSON object, found [1]");
}

#[test]
fn grouped_or_legacy_body_is_chosen_like_the_reference() {
    let action = r#"{"canonicalId":"Action 1","kind":"action","levelIndex":0,"n":0,"seat":"p","wireId":"Action 2"}"#;
    let view = read_replay(&with(HEADER, &[action])).expect("reads");
    assert!(!view.grouped, "only action lines: a legacy body");
    assert!(matches!(view.records[0].body, RecordBody::Action(_)));
    let checkpoint = r#"{"digest":1,"kind":"checkpoint","levelIndex":0,"n":1,"tick":1}"#;
    let view = read_replay(&with(HEADER, &[action, checkpoint])).expect("reads");
    assert!(view.grouped, "any other kind: grouped records");
}

/// Each rule, as (replacement in the valid text, expected problem prefix).
#[test]
fn every_structural_rule_names_its_line_and_field() {
    let base = with(HEADER, &[RESOLUTION]);
    let cases: &[(&str, &str, &str)] = &[
        (r#""n":0"#, r#""n":3"#, "line 2: resolution.n: must be 0"),
        (r#""tick":0}"#, r#""tick":0,"note":1}"#, "line 2: resolution.note: unknown property"),
        (r#""seat":"p","#, r#""seat":"p","extra":true,"#, "line 2: resolution.inputs[0].extra: unknown property"),
        (
            r#""wireId":"Action 2""#,
            r#""wireId":"Action 1""#,
            "line 2: resolution.inputs[0].wireId: Action 1 maps to Action 2",
        ),
        (
            r#""wireId":"Action 2""#,
            r#""wireId":"Action 3""#,
            "line 2: resolution.inputs[0].wireId: must be \"Action N\"",
        ),
        (
            r#""wireId":"Action 2""#,
            r#""wireId":"Action 02""#,
            "line 2: resolution.inputs[0].wireId: must be \"Action N\"",
        ),
        (r#""perm":[1,0]"#, r#""perm":[1,1]"#, "line 1: header.perm[1]: repeats 1"),
        (
            r#""levelIndex":0,"n":0"#,
            r#""levelIndex":1,"n":0"#,
            "line 2: resolution.levelIndex: must be a level index in 0..1",
        ),
        (r#""cause":"complete""#, r#""cause":"timeout""#, "line 2: resolution.systemInput: is required"),
        (r#""cause":"complete""#, r#""cause":"later""#, "line 2: resolution.cause: must be complete, timeout or tick"),
        (
            r#""cursor":0,"#,
            "",
            "line 2: resolution.inputs[0].cursor: is missing: submissionId, canonicalCommand and cursor",
        ),
        (
            r#"{\"a\":1}"#,
            r#"{\"a\": 1}"#,
            "line 2: resolution.inputs[0].canonicalCommand: must be canonical JSON bytes",
        ),
        (
            r#""stars":null,"status":"ended""#,
            r#""stars":1,"status":"ended""#,
            "line 1: header.levels[0].result.stars: must be null",
        ),
        (r#""formatVersion":"1.3""#, r#""formatVersion":"1.5""#, "line 1: header.formatVersion: must be one of"),
        (r#""sessionId":"s""#, r#""sessionId":"""#, "line 1: header.sessionId: must be a non-empty string"),
        (
            r#""seed":7,"seedPolicy""#,
            r#""seed":-7,"seedPolicy""#,
            "line 1: header.seed: must be an unsigned 32-bit integer",
        ),
        (
            r#""seedPolicy":"explicit""#,
            r#""seedPolicy":"gaos.run-level-seed.v1""#,
            "line 1: header.levels[0].seed: is 7, but seedPolicy",
        ),
        (r#""index":0,"level""#, r#""index":1,"level""#, "line 1: header.levels[0].index: must be 0"),
        (
            r#""sessionId":"s""#,
            r#""sessionId":"s","extensions":{"dmath":{"algorithm":"dmath-2","backend":"js"}}"#,
            "line 1: header.extensions.dmath.algorithm: must be \"dmath-1\"",
        ),
        (
            r#""kind":"header""#,
            r#""kind":"header","visibility":"seat:""#,
            "line 1: header.visibility: must be \"full\" or \"seat:<id>\"",
        ),
        (
            r#""game":{"adapter":{"id":"g/reducer","version":"1"},"#,
            r#""game":{"adapter":{"id":"g/reducer"},"#,
            "line 1: header.game.adapter.version: must be a non-empty string",
        ),
    ];
    for (from, to, expected) in cases {
        assert!(base.contains(from), "the base text contains {from}");
        let text = base.replacen(from, to, 1);
        let found = read_problems(&text);
        assert!(found.iter().any(|p| p.starts_with(expected)), "{from} -> {to}: expected {expected:?}, got {found:?}");
    }
}

#[test]
fn version_rules() {
    // 1.0: no `ended`, no records, no 1.1 fields on action lines.
    let v10 = HEADER.replace(r#""formatVersion":"1.3""#, r#""formatVersion":"1.0""#);
    let found = read_problems(&with(&v10, &[]));
    assert!(found[0].starts_with("line 1: header.levels[0].result.status: must be won or failed"), "{found:?}");
    // Interactions need 1.4.
    let interaction = r#"{"canonicalCommand":"{\"x\":1}","command":{"x":1},"cursor":0,"kind":"interaction","levelIndex":0,"n":0,"participantId":"p","submissionId":"i-0","tick":0}"#;
    let found = read_problems(&with(HEADER, &[interaction]));
    assert_eq!(found, ["line 2: interaction.kind: interaction records need formatVersion 1.4"]);
    let v14 = HEADER.replace(r#""formatVersion":"1.3""#, r#""formatVersion":"1.4""#);
    assert!(read_problems(&with(&v14, &[interaction])).is_empty());
    // (levelIndex, seat, submissionId) is unique across record kinds.
    let mismatch = r#"{"canonicalCommand":"{}","commitmentId":0,"cursor":1,"kind":"commit-mismatch","levelIndex":0,"n":1,"participantId":"p","scheme":"gaos.commit.sha256.v1","submissionId":"p-0","tick":1}"#;
    let found = read_problems(&with(HEADER, &[RESOLUTION, mismatch]));
    assert_eq!(
        found,
        [
            "line 3: commit-mismatch.submissionId: p/p-0 was already used on line 2: a submission id is used once per seat and level"
        ]
    );
}

#[test]
fn problem_lists_are_bounded() {
    let bad = r#"{"kind":"checkpoint","levelIndex":0,"n":0,"tick":-1,"digest":1}"#;
    let records: Vec<String> = (0..300).map(|i| bad.replace(r#""n":0"#, &format!(r#""n":{i}"#))).collect();
    let refs: Vec<&str> = records.iter().map(String::as_str).collect();
    let err = read_replay(&with(HEADER, &refs)).expect_err("300 bad ticks");
    assert_eq!(err.problems.problems().len(), MAX_PROBLEMS);
    assert_eq!(err.problems.len(), 300);
    assert_eq!(err.problems.to_strings().last().map(String::as_str), Some("... and 200 more problems"));
}

#[test]
fn read_jsonl_keeps_lines_for_byte_exact_output() {
    let text = with(HEADER, &[RESOLUTION]);
    let artifact = read_jsonl(&text).expect("reads");
    assert_eq!(artifact.line_count(), 2);
    assert_eq!(artifact.to_jsonl(), text);
    assert_eq!(artifact.actions().len(), 1, "the action projection of one input");
}
