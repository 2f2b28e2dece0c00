//! Mutated replays never make the verifier panic, and strict verification
//! never accepts a replay whose gameplay changed.
//!
//! Replays come from real kernel sessions of a small test game (`duel`,
//! below) whose every input, level parameter and seed shows in some seat's
//! view, so the recorded checkpoint digests pin them. Mutations: byte flips,
//! dropped, duplicated and swapped lines, changed numbers.
//!
//! "Gameplay" is everything except what a replay carries only for
//! identification or audit: the session id, format version, level ids and
//! versions, extensions and extension records, checkpoint records (strict
//! mode recomputes their digests, but a missing one changes nothing), host
//! times, timeout ids and reasons, and submission ids.

use std::sync::{Arc, OnceLock};

use gaos_json::{Value, obj};
use gaos_kernel::replay::{
    AdvancePolicy, FinalizeOptions, ReplaySource, RunFinalizeOptions, Stage, Verdict, VerifyOptions, finalize_replay,
    finalize_run_replay, verify_replay,
};
use gaos_kernel::{
    Cadence, CommandContext, CommandSubmission, DynReducer, Game, GameError, GameRef, KernelOptions, LevelSpec,
    ReplayMetrics, SeedPolicy, SessionKernel, SessionTranscript, SubmittedAction, TickReducer, TimeoutContext,
    TimeoutInput, erase_reducer, run_level_seed,
};
use proptest::prelude::*;

const SEATS: [&str; 2] = ["east", "west"];

/// `duel`: two seats add numbers for `rounds` rounds; east wins (stars =
/// margin, at most 3) when its score is higher. Each seat's view shows a
/// secret drawn from the seed and the level's `bonus`.
#[derive(Clone, Debug, PartialEq)]
struct DuelState {
    rounds: u64,
    bonus: u64,
    round: u64,
    score: [u64; 2],
    secret: [u64; 2],
    actions_used: u64,
}

struct DuelReducer;

fn seat_index(seat: &str) -> Option<usize> {
    SEATS.iter().position(|s| *s == seat)
}

impl TickReducer for DuelReducer {
    type State = DuelState;

    fn init(&self, level: &Value, seed: u32) -> Result<DuelState, GameError> {
        let field = |key: &str| {
            level.get(key).and_then(Value::as_u64).ok_or_else(|| GameError::new(format!("duel: level needs {key}")))
        };
        let seed = u64::from(seed);
        Ok(DuelState {
            rounds: field("rounds")?,
            bonus: field("bonus")?,
            round: 0,
            score: [0, 0],
            secret: [seed % 97, (seed / 97) % 89],
            actions_used: 0,
        })
    }

    fn advance(&self, mut state: DuelState, inputs: &[SubmittedAction]) -> Result<DuelState, GameError> {
        let mut seen = [false; 2];
        for input in inputs {
            let seat = input.seat.as_deref().ok_or_else(|| GameError::new("duel: input without seat"))?;
            let i = seat_index(seat).ok_or_else(|| GameError::new(format!("duel: unknown seat {seat}")))?;
            if std::mem::replace(&mut seen[i], true) {
                return Err(GameError::new(format!("duel: {seat} played twice")));
            }
            let n = input.index_usize().ok_or_else(|| GameError::new("duel: index must be a non-negative integer"))?;
            state.score[i] += n as u64 + if n as u64 == state.secret[i] % 4 { state.bonus } else { 0 };
        }
        state.round += 1;
        state.actions_used += inputs.len() as u64;
        Ok(state)
    }

    fn view(&self, state: &DuelState) -> Value {
        let mut view = obj! {
            "participation" => obj! { "mode" => "simultaneous", "seats" => vec![Value::from("east"), Value::from("west")] },
            "round" => state.round,
            "bonus" => state.bonus,
            "score" => obj! { "east" => state.score[0], "west" => state.score[1] },
        };
        let status = if state.round < state.rounds {
            "playing"
        } else if state.score[0] > state.score[1] {
            view.insert("stars".into(), (state.score[0] - state.score[1]).min(3).into());
            "won"
        } else {
            "failed"
        };
        view.insert("status".into(), status.into());
        view.into()
    }

    fn view_for(&self, state: &DuelState, seat: &str) -> Value {
        let mut view = self.view(state);
        if let (Some(map), Some(i)) = (view.as_object_mut(), seat_index(seat)) {
            map.insert("secret".into(), state.secret[i].into());
        }
        view
    }

    fn has_view_for(&self) -> bool {
        true
    }

    fn replay_metrics(&self, state: &DuelState) -> Option<ReplayMetrics> {
        Some(ReplayMetrics { actions_used: state.actions_used })
    }
}

struct Duel;

impl Game for Duel {
    fn game_ref(&self) -> GameRef {
        GameRef::conventional("tests/duel")
    }
    fn description(&self) -> &str {
        "test game"
    }
    fn seats(&self) -> Vec<String> {
        SEATS.iter().map(|s| (*s).to_owned()).collect()
    }
    fn levels(&self) -> Vec<LevelSpec> {
        Vec::new()
    }
    fn reducer(&self) -> DynReducer {
        erase_reducer(DuelReducer)
    }
    fn command_to_action(&self, command: &Value, ctx: &CommandContext<'_>) -> Result<SubmittedAction, GameError> {
        let n = command.get("n").and_then(Value::as_f64).ok_or_else(|| GameError::new("duel: command needs n"))?;
        Ok(SubmittedAction::new("Action 1").with_index(n).with_seat(ctx.participant_id))
    }
    fn has_timeout_mapper(&self) -> bool {
        true
    }
    fn timeout_to_action(
        &self,
        _: &TimeoutContext,
        timeout: &TimeoutInput,
    ) -> Option<Result<SubmittedAction, GameError>> {
        let seat = timeout.participant_id.clone()?;
        Some(Ok(SubmittedAction::new("Action 1").with_index(0.0).with_seat(seat)))
    }
    fn legal_actions(&self, _: &Value, _: &str) -> Vec<Value> {
        Vec::new()
    }
}

fn resolve(game: &GameRef) -> Option<Arc<dyn Game>> {
    (game.id == "tests/duel").then(|| Arc::new(Duel) as Arc<dyn Game>)
}

/// Play one level: `moves[r]` are the two seats' numbers in round r; a
/// `None` for west is a timeout (the mapper plays 0).
fn play(session: &str, seed: u32, rounds: u64, bonus: u64, moves: &[(u64, Option<u64>)]) -> SessionTranscript {
    let game: Arc<dyn Game> = Arc::new(Duel);
    let level: Value = obj! { "rounds" => rounds, "bonus" => bonus }.into();
    let seats = SEATS.iter().map(|s| (*s).to_owned()).collect();
    let options = KernelOptions::builder(&game, session)
        .level(&format!("duel-{seed}"), level)
        .seed(seed, SeedPolicy::Explicit)
        .seats(seats)
        .cadence(Cadence::Turns)
        .timeout_mapper(true)
        .build();
    let mut kernel = SessionKernel::new(options).expect("kernel");
    let apply = |kernel: &mut SessionKernel<DynReducer>, prepared| {
        let mut prepared = prepared;
        kernel.commit(&mut prepared).expect("commit");
    };
    let chat: Value = obj! { "text" => "gl hf" }.into();
    let prepared = kernel.prepare_extension("chat", &chat).expect("extension");
    apply(&mut kernel, prepared);
    for (round, (east, west)) in moves.iter().enumerate() {
        let cursor = kernel.cursor();
        let command = |n: u64| -> Value { obj! { "n" => n }.into() };
        let submission = CommandSubmission::new(session, cursor, "east", &format!("e-{round}"), command(*east));
        let prepared = kernel.prepare_ingest(&submission).expect("ingest east");
        apply(&mut kernel, prepared);
        match west {
            Some(n) => {
                let submission = CommandSubmission::new(session, cursor, "west", &format!("w-{round}"), command(*n));
                let prepared = kernel.prepare_ingest(&submission).expect("ingest west");
                apply(&mut kernel, prepared);
                let prepared = kernel.prepare_advance(None).expect("advance");
                apply(&mut kernel, prepared);
            }
            None => {
                let timeout = TimeoutInput::new(&format!("t-{round}"), kernel.tick(), Some("west"), "elapsed");
                let prepared = kernel.prepare_timeout(&timeout, None).expect("timeout");
                apply(&mut kernel, prepared);
            }
        }
    }
    kernel.live_transcript()
}

/// The base replays the mutations start from.
fn bases() -> &'static [String] {
    static BASES: OnceLock<Vec<String>> = OnceLock::new();
    BASES.get_or_init(|| {
        let single = play("duel-one", 4242, 4, 5, &[(3, Some(1)), (2, None), (1, Some(1)), (0, Some(2))]);
        let single = finalize_replay(&single, &FinalizeOptions { perm: vec![0], ..FinalizeOptions::default() })
            .expect("finalize")
            .to_jsonl();
        let run_seed = 77;
        let levels = [
            play("duel-run", run_level_seed(run_seed, 0).expect("seed"), 2, 3, &[(2, Some(0)), (1, Some(1))]),
            play(
                "duel-run",
                run_level_seed(run_seed, 1).expect("seed"),
                3,
                7,
                &[(0, Some(3)), (1, None), (2, Some(2))],
            ),
        ];
        let run = finalize_run_replay(
            &levels,
            &RunFinalizeOptions {
                seed: run_seed,
                perm: vec![0],
                advance_policy: AdvancePolicy::PlayAllLevels,
                ..RunFinalizeOptions::default()
            },
        )
        .expect("finalize run")
        .to_jsonl();
        vec![single, run]
    })
}

#[derive(Debug, Clone)]
enum Mutation {
    Flip { at: usize, xor: u8 },
    Drop { line: usize },
    Duplicate { line: usize, to: usize },
    Swap { a: usize, b: usize },
    Number { which: usize, to: i64 },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        3 => (any::<usize>(), 1u8..=255).prop_map(|(at, xor)| Mutation::Flip { at, xor }),
        1 => any::<usize>().prop_map(|line| Mutation::Drop { line }),
        1 => (any::<usize>(), any::<usize>()).prop_map(|(line, to)| Mutation::Duplicate { line, to }),
        1 => (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::Swap { a, b }),
        3 => (any::<usize>(), prop_oneof![-2i64..=12, Just(4242), Just(1 << 40)])
            .prop_map(|(which, to)| Mutation::Number { which, to }),
    ]
}

fn apply(text: &str, mutation: &Mutation) -> Vec<u8> {
    let mut lines: Vec<&str> = text.lines().collect();
    let join = |lines: &[&str]| -> Vec<u8> {
        let mut out = lines.join("\n").into_bytes();
        out.push(b'\n');
        out
    };
    match *mutation {
        Mutation::Flip { at, xor } => {
            let mut bytes = text.as_bytes().to_vec();
            let at = at % bytes.len();
            bytes[at] ^= xor;
            bytes
        }
        Mutation::Drop { line } => {
            lines.remove(line % lines.len());
            join(&lines)
        }
        Mutation::Duplicate { line, to } => {
            let copy = lines[line % lines.len()];
            lines.insert(to % (lines.len() + 1), copy);
            join(&lines)
        }
        Mutation::Swap { a, b } => {
            let n = lines.len();
            lines.swap(a % n, b % n);
            join(&lines)
        }
        Mutation::Number { which, to } => {
            // Digit runs, including those inside strings (canonical commands).
            let bytes = text.as_bytes();
            let mut runs = Vec::new();
            let mut i = 0;
            while i < bytes.len() {
                if bytes[i].is_ascii_digit() {
                    let start = i;
                    while i < bytes.len() && bytes[i].is_ascii_digit() {
                        i += 1;
                    }
                    runs.push((start, i));
                } else {
                    i += 1;
                }
            }
            let (start, end) = runs[which % runs.len()];
            let mut out = text[..start].to_owned();
            out.push_str(&to.to_string());
            out.push_str(&text[end..]);
            out.into_bytes()
        }
    }
}

/// The gameplay content of a replay text (see the module docs).
fn gameplay(text: &str) -> Vec<Value> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let Ok(Value::Object(mut map)) = gaos_json::parse(line) else {
            out.push(Value::String(line.to_owned()));
            continue;
        };
        map.remove("hostTime");
        if i == 0 {
            for key in ["sessionId", "formatVersion", "visibility", "extensions"] {
                map.remove(key);
            }
            if let Some(Value::Array(levels)) = map.get_mut("levels") {
                for level in levels.iter_mut().filter_map(Value::as_object_mut) {
                    for key in ["id", "version", "extensions"] {
                        level.remove(key);
                    }
                    if let Some(result) = level.get_mut("result").and_then(Value::as_object_mut) {
                        result.remove("extensions");
                    }
                }
            }
            if let Some(totals) = map.get_mut("totals").and_then(Value::as_object_mut) {
                totals.remove("extensions");
            }
        } else {
            match map.get("kind").and_then(Value::as_str) {
                Some("checkpoint" | "extension") => continue,
                Some("timeout") => {
                    map.remove("timeoutId");
                    map.remove("reason");
                }
                _ => {}
            }
            map.remove("n");
            map.remove("submissionId");
            for key in ["inputs"] {
                if let Some(Value::Array(inputs)) = map.get_mut(key) {
                    for input in inputs.iter_mut().filter_map(Value::as_object_mut) {
                        input.remove("submissionId");
                    }
                }
            }
            if let Some(system) = map.get_mut("systemInput").and_then(Value::as_object_mut) {
                system.remove("submissionId");
            }
        }
        out.push(Value::Object(map));
    }
    out
}

#[test]
fn bases_verify_in_both_modes() {
    for (i, base) in bases().iter().enumerate() {
        for strict in [false, true] {
            let report = verify_replay(base.as_str(), &resolve, &VerifyOptions { strict, ..VerifyOptions::default() });
            assert_eq!(report.verdict, Verdict::AcceptedUnsigned, "base {i} strict {strict}: {:?}", report.problems);
        }
    }
}

#[test]
fn a_timeout_input_that_is_not_the_mappers_is_rejected() {
    let base = &bases()[0];
    let forced = base.replacen(
        r#"{"canonicalId":"Action 1","index":0,"seat":"west","wireId":"Action 1"}"#,
        r#"{"canonicalId":"Action 1","index":1,"seat":"west","wireId":"Action 1"}"#,
        2,
    );
    assert_ne!(&forced, base, "the base replay has a mapped timeout input");
    let report = verify_replay(forced.as_str(), &resolve, &VerifyOptions::default());
    assert_eq!(report.verdict, Verdict::Rejected, "{:?}", report.problems);
    assert!(report.problems.to_strings().iter().any(|p| p.contains("resolution.systemInput")));
}

#[test]
fn unknown_games_and_other_versions_are_unverifiable() {
    let base = &bases()[0];
    for text in
        [base.replace("tests/duel", "tests/other"), base.replace(r#""version":"1"},"id""#, r#""version":"2"},"id""#)]
    {
        assert_ne!(&text, base);
        let report = verify_replay(text.as_str(), &resolve, &VerifyOptions::default());
        assert_eq!(report.verdict, Verdict::Unverifiable, "{:?}", report.problems);
        assert_eq!(report.stage, Some(Stage::Recheck));
        assert!(report.problems.to_strings()[0].starts_with("line 1: header.game: "));
    }
}

#[test]
fn legacy_action_lines_replay_one_input_at_a_time() {
    // A 1.0 artifact: header plus action lines (n from 1), no records.
    let header = r#"{"format":"gaos.replay","formatVersion":"1.0","game":{"adapter":{"id":"tests/duel/reducer","version":"1"},"id":"tests/duel","version":"1"},"kind":"header","levels":[{"id":"l","index":0,"level":{"bonus":0,"rounds":3},"result":{"actionsUsed":2,"stars":null,"status":"failed"},"seed":1}],"perm":[0],"seed":1,"seedPolicy":"explicit","sessionId":"legacy","totals":{"totalActionsUsed":2,"totalStars":0}}"#;
    let action = |n: u64, seat: &str, index: u64, tick: u64| {
        format!(
            r#"{{"canonicalId":"Action 1","index":{index},"kind":"action","levelIndex":0,"n":{n},"seat":"{seat}","tick":{tick},"wireId":"Action 1"}}"#
        )
    };
    // Ticks 0 and 2: tick 1 is an empty advance, so three rounds are played.
    let text = format!("{header}\n{}\n{}\n", action(1, "east", 1, 0), action(2, "west", 2, 2));
    let report = verify_replay(text.as_str(), &resolve, &VerifyOptions::default());
    assert_eq!(report.verdict, Verdict::AcceptedUnsigned, "{:?}", report.problems);
    assert_eq!(report.levels[0].status.as_deref(), Some("failed"));
    // Without the gap the level is still playing after two rounds.
    let text = format!("{header}\n{}\n{}\n", action(1, "east", 1, 0), action(2, "west", 2, 0));
    let report = verify_replay(text.as_str(), &resolve, &VerifyOptions::default());
    assert_eq!(report.verdict, Verdict::Rejected);
    // 1.0 refuses commitment and submission fields.
    let text = format!("{header}\n{}\n", action(1, "east", 1, 0).replace(r#""n":1"#, r#""n":1,"submissionId":"x""#));
    let report = verify_replay(text.as_str(), &resolve, &VerifyOptions::default());
    assert_eq!(report.verdict, Verdict::Malformed);
    assert!(report.problems.to_strings()[0].contains("action.submissionId: needs formatVersion 1.1"));
}

#[test]
fn artifacts_in_memory_report_structure_problems() {
    let base = &bases()[0];
    let mut artifact = gaos_kernel::replay::parse_replay_jsonl(base).expect("base parses");
    let report = verify_replay(&artifact, &resolve, &VerifyOptions { strict: true, ..VerifyOptions::default() });
    assert_eq!(report.verdict, Verdict::AcceptedUnsigned, "{:?}", report.problems);
    artifact.header.insert("perm".into(), Value::Array(vec![Value::from(1u32)]));
    let report = verify_replay(&artifact, &resolve, &VerifyOptions::default());
    assert_eq!((report.verdict, report.stage), (Verdict::Malformed, Some(Stage::Structure)));
    assert!(report.problems.to_strings()[0].starts_with("line 1: header.perm[0]: "));
}

#[test]
fn finalize_refuses_an_artifact_the_format_refuses() {
    let transcript = play("duel-perm", 9, 1, 0, &[(1, Some(1))]);
    let err = finalize_replay(&transcript, &FinalizeOptions { perm: Vec::new(), ..FinalizeOptions::default() })
        .expect_err("Action 1 is outside an empty perm");
    assert_eq!(err.kind(), "replay-format");
    assert!(err.to_string().contains("resolution.inputs[0].wireId"), "{err}");
}

fn check(base: &str, mutation: &Mutation) -> Result<(), TestCaseError> {
    let mutated = apply(base, mutation);
    let default = verify_replay(ReplaySource::Bytes(&mutated), &resolve, &VerifyOptions::default());
    let strict = verify_replay(
        ReplaySource::Bytes(&mutated),
        &resolve,
        &VerifyOptions { strict: true, ..VerifyOptions::default() },
    );
    if default.verdict == Verdict::Malformed {
        prop_assert_eq!(default.stage, Some(Stage::Parse));
    }
    prop_assert!(!(default.verdict == Verdict::Malformed) || strict.verdict == Verdict::Malformed);
    if strict.verdict == Verdict::AcceptedUnsigned {
        let text = String::from_utf8(mutated).expect("accepted text is UTF-8");
        prop_assert_eq!(
            gameplay(&text),
            gameplay(base),
            "strict mode accepted a gameplay change ({:?}):\n{}",
            mutation,
            text
        );
        prop_assert_eq!(default.verdict, Verdict::AcceptedUnsigned, "strict accepted what default mode did not");
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(768))]

    #[test]
    fn mutated_replays_never_panic_and_strict_never_accepts_gameplay_changes(
        base in 0usize..2,
        mutation in mutation(),
    ) {
        check(&bases()[base], &mutation)?;
    }

    #[test]
    fn two_mutations_at_once(base in 0usize..2, first in mutation(), second in mutation()) {
        let once = String::from_utf8_lossy(&apply(&bases()[base], &first)).into_owned();
        let mutated = apply(&once, &second);
        // Only robustness here: a double mutation may well cancel out.
        for strict in [false, true] {
            let report = verify_replay(ReplaySource::Bytes(&mutated), &resolve, &VerifyOptions { strict, ..VerifyOptions::default() });
            prop_assert!(report.problems.problems().len() <= gaos_kernel::replay::MAX_PROBLEMS);
        }
    }
}

#[test]
fn every_single_byte_flip_of_a_base_is_judged_safely() {
    // Exhaustive over positions for one xor pattern: cheap, and it covers
    // every field of the header and every record kind at least once.
    let base = &bases()[0];
    for at in 0..base.len() {
        check(base, &Mutation::Flip { at, xor: 0x01 }).unwrap_or_else(|e| panic!("flip at {at}: {e}"));
    }
}
