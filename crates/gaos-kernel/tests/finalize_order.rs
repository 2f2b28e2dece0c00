//! The check orders of `finalizeReplay` (kernel spec §5.5) and
//! `finalizeRunReplay` (§5.6), issue 28 items 1 and 3, with `perm`,
//! `visibility` and the run seed as a caller passed them.
//!
//! `finalizeReplay`: timeout audit, a terminal result (`advance`/`terminal`),
//! the projection through `perm` (`perm.indexOf`: a TypeError when `perm` has
//! none), then the artifact's validation (`replay-format`/`invalid`).
//!
//! `finalizeRunReplay`: at least one level and a u32 run seed, then level by
//! level its header, its seed, its own `finalizeReplay`, win-to-advance, and
//! only then the next level; the run's artifact is validated last. Every
//! combination of per-level faults, perms and policies is checked against
//! that order written out once more below, independently of the kernel.

use gaos_json::{Value, obj, parse_lenient};
use gaos_kernel::replay::{
    AdvancePolicy, FinalizeOptions, RunFinalizeOptions, finalize_replay, finalize_replay_value, finalize_run_replay,
    finalize_run_replay_value,
};
use gaos_kernel::{
    CommandSubmission, GameError, KernelError, SessionKernel, SessionTranscript, SubmittedAction, TickReducer,
    run_level_seed,
};

mod support;
use support::test_kernel_options;

/// Both seats play `Action 1` every window; after `rounds` windows the game
/// ends with the level's `status`.
struct Finish;

impl TickReducer for Finish {
    type State = (u64, u64, String);
    fn init(&self, level: &Value, _seed: u32) -> Result<Self::State, GameError> {
        let rounds = level.get("rounds").and_then(Value::as_u64).unwrap_or(1);
        let status = level.get("status").and_then(Value::as_str).unwrap_or("won").to_owned();
        Ok((0, rounds, status))
    }
    fn advance(&self, (round, rounds, status): Self::State, _: &[SubmittedAction]) -> Result<Self::State, GameError> {
        Ok((round + 1, rounds, status))
    }
    fn view(&self, (round, rounds, status): &Self::State) -> Value {
        let status = if round >= rounds { status.as_str() } else { "playing" };
        obj! { "status" => status, "hud" => obj! { "actionsUsed" => *round } }.into()
    }
}

const RUN_SEED: u32 = 4242;

/// A session of `Finish` that plays `played` of `rounds` windows.
fn transcript(session: &str, seed: u32, rounds: u64, played: u64, status: &str) -> SessionTranscript {
    let mut options = test_kernel_options(session, "tests/finalize-order", Finish);
    options.level_id = format!("level-{seed}");
    options.level = obj! { "rounds" => rounds, "status" => status }.into();
    options.seed = seed;
    let mut k = SessionKernel::new(options).expect("valid options");
    for round in 0..played {
        for seat in ["a", "b"] {
            let command: Value = obj! { "id" => "Action 1", "seat" => seat }.into();
            let sub = CommandSubmission::new(session, k.cursor(), seat, &format!("{seat}-{round}"), command);
            let p = k.prepare_ingest(&sub).expect("ingest");
            k.apply_now(p).expect("commit");
        }
        let p = k.prepare_advance(None).expect("advance");
        k.apply_now(p).expect("commit");
    }
    k.live_transcript()
}

fn json(text: &str) -> Value {
    parse_lenient(text).expect("test JSON")
}

fn code(result: Result<impl Sized, KernelError>) -> Option<(&'static str, &'static str)> {
    result.err().map(|e| (e.kind(), e.code()))
}

const TYPE: Option<(&str, &str)> = Some(("argument", "type"));
const TERMINAL: Option<(&str, &str)> = Some(("advance", "terminal"));
const INVALID: Option<(&str, &str)> = Some(("replay-format", "invalid"));

/// How a `perm` fares once the session is terminal (its only action is
/// `Action 1`): valid, refused by validation, or without `indexOf`.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Perm {
    Valid,
    Refused,
    NoIndexOf,
}

fn perms() -> Vec<(Option<Value>, Perm)> {
    let mut perms: Vec<(Option<Value>, Perm)> = Vec::new();
    for valid in ["[0]", "[0,1]", "[1,0]", "[2,0,1]"] {
        perms.push((Some(json(valid)), Perm::Valid));
    }
    for refused in
        ["[]", "[1]", "[0,0]", "[0,2]", r#"["0"]"#, "[0.5]", "[-1]", "[null]", "[0.0,\"1\"]", r#""0""#, r#""01""#]
    {
        perms.push((Some(json(refused)), Perm::Refused));
    }
    for no_index_of in ["null", "0", "5", "true", "{}", r#"{"0":0}"#] {
        perms.push((Some(json(no_index_of)), Perm::NoIndexOf));
    }
    perms.push((None, Perm::NoIndexOf));
    perms
}

fn visibilities() -> Vec<(Option<Value>, bool)> {
    let mut all = vec![(None, true)];
    for (text, valid) in [
        (r#""full""#, true),
        (r#""seat:a""#, true),
        (r#""seat:zed""#, true),
        ("null", false),
        ("5", false),
        (r#"["full"]"#, false),
        (r#""Full""#, false),
        (r#""seat:""#, false),
        (r#""SEAT:a""#, false),
        (r#""partial""#, false),
    ] {
        all.push((Some(json(text)), valid));
    }
    all
}

#[test]
fn finalize_checks_terminal_then_perm_then_the_artifact() {
    let playing = transcript("one", 1, 2, 1, "won");
    let ended = transcript("one", 1, 2, 2, "won");
    for (perm, kind) in perms() {
        for (visibility, visible) in visibilities() {
            let at = format!("perm {perm:?}, visibility {visibility:?}");
            let got = |t: &SessionTranscript| code(finalize_replay_value(t, perm.as_ref(), visibility.as_ref()));
            assert_eq!(got(&playing), TERMINAL, "playing: {at}");
            let want = match kind {
                Perm::NoIndexOf => TYPE,
                Perm::Refused => INVALID,
                Perm::Valid if !visible => INVALID,
                Perm::Valid => None,
            };
            assert_eq!(got(&ended), want, "ended: {at}");
        }
    }
}

/// The typed options are the same call with a well-typed perm: the same
/// bytes when it succeeds.
#[test]
fn typed_finalize_is_the_value_call_with_typed_arguments() {
    let ended = transcript("one", 1, 2, 2, "won");
    let typed = finalize_replay(&ended, &FinalizeOptions { perm: vec![1, 0], ..FinalizeOptions::default() });
    let value = finalize_replay_value(&ended, Some(&json("[1,0]")), None);
    assert_eq!(typed.expect("typed").to_jsonl(), value.expect("value").to_jsonl());
    let seat = FinalizeOptions { perm: vec![0], visibility: Some("seat:a".into()), ..FinalizeOptions::default() };
    let value = finalize_replay_value(&ended, Some(&json("[0]")), Some(&json(r#""seat:a""#)));
    assert_eq!(finalize_replay(&ended, &seat).expect("typed").to_jsonl(), value.expect("value").to_jsonl());
}

/// What is wrong with one level of a run.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Fault {
    None,
    /// Played under another session id (only for levels after the first).
    OtherSession,
    /// Played with a seed that is not `runLevelSeed(seed, i)`.
    WrongSeed,
    /// Not terminal yet.
    Playing,
    /// Ended without a win.
    Failed,
}

const FAULTS: [Fault; 5] = [Fault::None, Fault::OtherSession, Fault::WrongSeed, Fault::Playing, Fault::Failed];

fn level(i: usize, fault: Fault) -> SessionTranscript {
    let seed = run_level_seed(RUN_SEED, i as u64).expect("seed");
    match fault {
        Fault::None => transcript("run", seed, 1, 1, "won"),
        Fault::OtherSession => transcript("other", seed, 1, 1, "won"),
        Fault::WrongSeed => transcript("run", seed ^ 1, 1, 1, "won"),
        Fault::Playing => transcript("run", seed, 2, 1, "won"),
        Fault::Failed => transcript("run", seed, 1, 1, "failed"),
    }
}

/// Kernel spec §5.6 as the reference runs it, written from the spec.
fn expected_run(faults: &[Fault], perm: Perm, policy: AdvancePolicy) -> Option<(&'static str, &'static str)> {
    for (i, fault) in faults.iter().enumerate() {
        match fault {
            Fault::OtherSession | Fault::WrongSeed => return TYPE,
            Fault::Playing => return TERMINAL,
            _ => {}
        }
        match perm {
            Perm::NoIndexOf => return TYPE,
            Perm::Refused => return INVALID,
            Perm::Valid => {}
        }
        if policy == AdvancePolicy::WinToAdvance && i + 1 < faults.len() && *fault == Fault::Failed {
            return TYPE;
        }
    }
    None
}

fn combinations(levels: usize) -> Vec<Vec<Fault>> {
    let mut all = vec![Vec::new()];
    for i in 0..levels {
        let faults = FAULTS.iter().filter(|f| i > 0 || **f != Fault::OtherSession);
        all = all.iter().flat_map(|prefix| faults.clone().map(move |f| [prefix.clone(), vec![*f]].concat())).collect();
    }
    all
}

#[test]
fn finalize_run_checks_level_by_level() {
    let run_perms: Vec<(Option<Value>, Perm)> = vec![
        (Some(json("[0]")), Perm::Valid),
        (Some(json("[1,0]")), Perm::Valid),
        (Some(json("[0,0]")), Perm::Refused),
        (Some(json(r#"["0"]"#)), Perm::Refused),
        (Some(json("[-1]")), Perm::Refused),
        (Some(json("null")), Perm::NoIndexOf),
        (None, Perm::NoIndexOf),
    ];
    let mut checked = 0;
    for levels in 1..=3 {
        for faults in combinations(levels) {
            let transcripts: Vec<SessionTranscript> = faults.iter().enumerate().map(|(i, f)| level(i, *f)).collect();
            for (perm, kind) in &run_perms {
                for policy in [AdvancePolicy::WinToAdvance, AdvancePolicy::PlayAllLevels] {
                    let want = expected_run(&faults, *kind, policy);
                    let seed = Value::from(RUN_SEED);
                    let got = finalize_run_replay_value(&transcripts, Some(&seed), perm.as_ref(), policy);
                    let at = format!("levels {faults:?}, perm {perm:?}, {policy:?}");
                    assert_eq!(code(got), want, "{at}");
                    if let Some(Value::Array(items)) = perm
                        && let Some(typed) = items.iter().map(Value::as_u64).collect::<Option<Vec<u64>>>()
                    {
                        let options = RunFinalizeOptions {
                            seed: RUN_SEED,
                            perm: typed,
                            advance_policy: policy,
                            ..RunFinalizeOptions::default()
                        };
                        assert_eq!(code(finalize_run_replay(&transcripts, &options)), want, "typed: {at}");
                    }
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 1000, "{checked} runs");
}

#[test]
fn a_run_needs_levels_and_a_u32_seed_before_anything_else() {
    let seed = Value::from(RUN_SEED);
    assert_eq!(code(finalize_run_replay_value(&[], Some(&seed), Some(&json("[0]")), AdvancePolicy::default())), TYPE);
    let playing = [level(0, Fault::Playing)];
    for bad in ["-1", "4294967296", "1.5", r#""4242""#, "null"] {
        let got = finalize_run_replay_value(&playing, Some(&json(bad)), Some(&json("[0]")), AdvancePolicy::default());
        assert_eq!(code(got), TYPE, "seed {bad}");
    }
    let got = finalize_run_replay_value(&playing, None, Some(&json("[0]")), AdvancePolicy::default());
    assert_eq!(code(got), TYPE, "no seed");
}

/// A well-formed run through the value entry point is the typed run, byte
/// for byte.
#[test]
fn a_valid_run_is_the_same_through_both_entry_points() {
    let transcripts = [level(0, Fault::None), level(1, Fault::Failed)];
    let seed = Value::from(RUN_SEED);
    let value = finalize_run_replay_value(&transcripts, Some(&seed), Some(&json("[0]")), AdvancePolicy::WinToAdvance)
        .expect("the last level may fail");
    let options = RunFinalizeOptions { seed: RUN_SEED, perm: vec![0], ..RunFinalizeOptions::default() };
    assert_eq!(value.to_jsonl(), finalize_run_replay(&transcripts, &options).expect("typed").to_jsonl());
}
