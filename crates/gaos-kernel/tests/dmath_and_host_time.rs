//! The two options RFC-006 §3.1 lists that the kernel records but never acts
//! on (issue 13 item 5):
//! - `dmath`: recorded in the session header, compared by rehydration (the
//!   header is compared canonically), carried into the replay's
//!   `header.extensions.dmath` and checked there;
//! - a host-time provider: `hostTime` on every event when configured,
//!   omitted otherwise, preserved exactly by rehydration, copied into a
//!   replay only when finalization asks for it, ignored by verification.
//!   The kernel never reads a clock: the provider is injected.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use gaos_json::{Value, obj};
use gaos_kernel::replay::{FinalizeOptions, Verdict, VerifyOptions, finalize_replay, validate_replay, verify_replay};
use gaos_kernel::{
    CommandContext, CommandSubmission, DMATH_ALGORITHM, Dmath, DmathBackend, DynReducer, Game, GameError, GameRef,
    HostTime, KernelOptions, LevelSpec, ReplayMetrics, SessionKernel, SubmittedAction, TickReducer, erase_reducer,
};

const SESSION: &str = "dmath-host-time";

/// One seat steps towards `goal`; reaching it wins one star.
struct StepsReducer;

impl TickReducer for StepsReducer {
    type State = (u64, u64);
    fn init(&self, level: &Value, _seed: u32) -> Result<(u64, u64), GameError> {
        Ok((0, level.get("goal").and_then(Value::as_u64).ok_or_else(|| GameError::new("steps: goal"))?))
    }
    fn advance(&self, (n, goal): (u64, u64), inputs: &[SubmittedAction]) -> Result<(u64, u64), GameError> {
        Ok((n + inputs.len() as u64, goal))
    }
    fn view(&self, &(n, goal): &(u64, u64)) -> Value {
        let mut view = obj! { "steps" => n };
        if n >= goal {
            view.insert("status".into(), "won".into());
            view.insert("stars".into(), 1u32.into());
        } else {
            view.insert("status".into(), "playing".into());
        }
        view.into()
    }
    fn replay_metrics(&self, &(n, _): &(u64, u64)) -> Option<ReplayMetrics> {
        Some(ReplayMetrics { actions_used: n })
    }
}

struct Steps;

impl Game for Steps {
    fn game_ref(&self) -> GameRef {
        GameRef::conventional("tests/steps")
    }
    fn description(&self) -> &str {
        "test game"
    }
    fn seats(&self) -> Vec<String> {
        vec!["solo".into()]
    }
    fn levels(&self) -> Vec<LevelSpec> {
        Vec::new()
    }
    fn reducer(&self) -> DynReducer {
        erase_reducer(StepsReducer)
    }
    fn command_to_action(&self, _command: &Value, ctx: &CommandContext<'_>) -> Result<SubmittedAction, GameError> {
        Ok(SubmittedAction::new("Action 1").with_seat(ctx.participant_id))
    }
    fn legal_actions(&self, _: &Value, _: &str) -> Vec<Value> {
        Vec::new()
    }
}

fn resolve(game: &GameRef) -> Option<Arc<dyn Game>> {
    (game.id == "tests/steps").then(|| Arc::new(Steps) as Arc<dyn Game>)
}

fn options(host_time: HostTime, dmath: Option<Dmath>) -> Arc<KernelOptions<DynReducer>> {
    let game: Arc<dyn Game> = Arc::new(Steps);
    let options = KernelOptions::builder(&game, SESSION)
        .level("only", obj! { "goal" => 2u32 }.into())
        .host_time(host_time)
        .dmath(dmath)
        .build();
    Arc::new(options)
}

/// A provider counting up from `start` by 10 ms per call.
fn clock(start: i64) -> HostTime {
    let next = Arc::new(AtomicI64::new(start));
    HostTime::Provider(Arc::new(move || next.fetch_add(10, Ordering::SeqCst)))
}

/// Ingest and resolve `rounds` times (two rounds end the game).
fn play(kernel: &mut SessionKernel<DynReducer>, rounds: usize) {
    for _ in 0..rounds {
        let id = format!("s-{}", kernel.cursor());
        let submission = CommandSubmission::new(SESSION, kernel.cursor(), "solo", &id, obj! {}.into());
        let prepared = kernel.prepare_ingest(&submission).expect("accepted");
        kernel.apply_now(prepared).expect("commits");
        let prepared = kernel.prepare_advance(None).expect("complete");
        kernel.apply_now(prepared).expect("commits");
    }
}

fn session(host_time: HostTime, dmath: Option<Dmath>, rounds: usize) -> SessionKernel<DynReducer> {
    let mut kernel = SessionKernel::from_shared(options(host_time, dmath)).expect("kernel");
    play(&mut kernel, rounds);
    kernel
}

#[test]
fn dmath_is_recorded_in_the_header_and_carried_into_the_replay() {
    let dmath = Dmath::dmath_1(DmathBackend::Wasm);
    let kernel = session(HostTime::None, Some(dmath.clone()), 2);
    let expected: Value = obj! { "algorithm" => DMATH_ALGORITHM, "backend" => "wasm" }.into();
    assert_eq!(kernel.session_header().dmath, Some(expected.clone()));
    assert_eq!(Dmath::from_value(&expected), Ok(dmath));
    let replay = finalize_replay(&kernel.live_transcript(), &FinalizeOptions { perm: vec![0], ..Default::default() })
        .expect("finalizes");
    let extensions = replay.header.get("extensions").expect("extensions");
    assert_eq!(extensions.get("dmath"), Some(&expected));
    validate_replay(&replay).expect("a dmath-1 replay validates");
    let text = replay.to_jsonl();
    assert_eq!(
        verify_replay(&text, &resolve, &VerifyOptions { strict: true, ..VerifyOptions::default() }).verdict,
        Verdict::AcceptedUnsigned
    );
    // A replay declaring another algorithm is refused before any game code runs.
    let other = text.replace("\"algorithm\":\"dmath-1\"", "\"algorithm\":\"dmath-2\"");
    assert_ne!(other, text);
    let report = verify_replay(&other, &resolve, &VerifyOptions::default());
    assert_ne!(report.verdict, Verdict::AcceptedUnsigned);
    assert_eq!(report.resolutions, 0, "nothing was re-simulated");
    // Without a declaration there is no header field and no extension.
    let plain = session(HostTime::None, None, 2);
    assert_eq!(plain.session_header().dmath, None);
    assert!(!plain.session_header().to_value().as_object().expect("object").contains_key("dmath"));
}

#[test]
fn construction_refuses_an_unknown_dmath_algorithm() {
    let other = Dmath { algorithm: "dmath-2".into(), backend: DmathBackend::Js };
    let error = SessionKernel::from_shared(options(HostTime::None, Some(other))).err().expect("refused");
    assert!(error.to_string().contains("dmath.algorithm"), "{error}");
    assert!(Dmath::from_value(&obj! { "algorithm" => "dmath-1", "backend" => "native" }.into()).is_err());
    assert!(Dmath::from_value(&obj! { "algorithm" => "dmath-1", "backend" => "js", "x" => 1u32 }.into()).is_err());
}

#[test]
fn rehydrate_refuses_a_header_whose_dmath_differs_from_the_options() {
    let declared = Some(Dmath::dmath_1(DmathBackend::Js));
    let kernel = session(HostTime::None, declared.clone(), 1);
    let events = kernel.events().to_vec();
    let header = kernel.session_header();
    SessionKernel::rehydrate(options(HostTime::None, declared.clone()), Some(&header), events.clone())
        .expect("the same declaration rehydrates");
    for other in [None, Some(Dmath::dmath_1(DmathBackend::Wasm))] {
        let refused = SessionKernel::rehydrate(options(HostTime::None, other.clone()), Some(&header), events.clone());
        assert!(refused.is_err(), "a transcript declaring {declared:?} rehydrated with {other:?}");
    }
}

#[test]
fn host_time_is_recorded_once_per_event_when_configured_and_omitted_otherwise() {
    let timed = session(clock(1_700_000_000_000), None, 2);
    let times: Vec<Option<u64>> = timed.events().iter().map(|e| e.host_time).collect();
    let expected: Vec<Option<u64>> = (0..times.len() as u64).map(|k| Some(1_700_000_000_000 + 10 * k)).collect();
    assert_eq!(times, expected, "one provider call per event, in event order");
    let untimed = session(HostTime::None, None, 2);
    assert!(untimed.events().iter().all(|e| e.host_time.is_none()));
    assert!(untimed.events().iter().all(|e| !e.canonical().contains("hostTime")), "omitted, never null");
    // Host time never reaches the state.
    assert_eq!(timed.digest(), untimed.digest());
    // A provider outside the safe-integer range is refused, not recorded.
    let kernel = SessionKernel::from_shared(options(HostTime::Provider(Arc::new(|| -1)), None)).expect("kernel");
    let submission = CommandSubmission::new(SESSION, 0, "solo", "s-0", obj! {}.into());
    let error = kernel.prepare_ingest(&submission).expect_err("refused");
    assert!(error.to_string().contains("hostTime"), "{error}");
}

#[test]
fn rehydrate_preserves_recorded_host_times_exactly() {
    let live = session(clock(5_000), None, 1);
    let recorded = live.events().to_vec();
    // Another clock, or none: the recorded values stay as they are.
    for host_time in [clock(9_000_000), HostTime::None] {
        let mut rebuilt =
            SessionKernel::rehydrate(options(host_time, None), None, recorded.clone()).expect("rehydrates");
        assert_eq!(rebuilt.events().to_vec(), recorded);
        play(&mut rebuilt, 1);
        assert_eq!(rebuilt.events().to_vec()[..recorded.len()], recorded);
    }
    // Timestamp-free events rehydrate into a kernel with a clock.
    let untimed = session(HostTime::None, None, 1).events().to_vec();
    let mut rebuilt = SessionKernel::rehydrate(options(clock(42), None), None, untimed.clone()).expect("rehydrates");
    assert_eq!(rebuilt.events().to_vec(), untimed);
    play(&mut rebuilt, 1);
    assert_eq!(rebuilt.events().to_vec()[untimed.len()].host_time, Some(42), "new events take the provider's time");
}

#[test]
fn finalize_copies_host_time_only_when_asked_and_verification_ignores_it() {
    let kernel = session(clock(1_000), None, 2);
    let transcript = kernel.live_transcript();
    let finalize = |include_host_time| {
        let options = FinalizeOptions { perm: vec![0], include_host_time, ..Default::default() };
        finalize_replay(&transcript, &options).expect("finalizes").to_jsonl()
    };
    let (without, with) = (finalize(false), finalize(true));
    assert!(!without.contains("hostTime"));
    assert!(with.lines().skip(1).all(|line| line.contains("\"hostTime\":")), "every record carries its hostTime");
    assert_eq!(without, default_replay(&session(HostTime::None, None, 2)), "the default projection is clock-free");
    for text in [&without, &with] {
        let report = verify_replay(text, &resolve, &VerifyOptions { strict: true, ..VerifyOptions::default() });
        assert_eq!(report.verdict, Verdict::AcceptedUnsigned, "{:?}", report.problems);
    }
    // Other host times verify the same way.
    let shifted = with.replace("\"hostTime\":1", "\"hostTime\":7");
    assert_ne!(shifted, with);
    assert_eq!(
        verify_replay(&shifted, &resolve, &VerifyOptions { strict: true, ..VerifyOptions::default() }).verdict,
        Verdict::AcceptedUnsigned
    );
}

/// The default finalization of `kernel`'s transcript.
fn default_replay(kernel: &SessionKernel<DynReducer>) -> String {
    let options = FinalizeOptions { perm: vec![0], ..Default::default() };
    finalize_replay(&kernel.live_transcript(), &options).expect("finalizes").to_jsonl()
}
