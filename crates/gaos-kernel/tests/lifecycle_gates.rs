//! RFC-006 §M merge gates 4 and 5: the prepared-transition lifecycle
//! (commit, explicit abort, stale auto-abort, foreign and double completion,
//! discard and retire exactly once), run against two reducers:
//!
//! - [`ImmutableTally`] builds a fresh state on every `advance`;
//! - [`SharedTally`] mutates its state in place, and that state is a handle to
//!   a shared structure (`Arc<Mutex<_>>`), so its derived `Clone` is shallow
//!   and the default `Clone` isolation would NOT isolate a draft from live
//!   state. Its sessions use a [`CountingIsolation`] whose `fork` deep-copies.
//!
//! Every suite function runs once per reducer (see `lifecycle_suite!`).

use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use gaos_json::{Value, canonical_json, obj};
use gaos_kernel::{
    Cadence, CommandMapper, CommandSubmission, GameError, GameRef, HostTime, KernelError, KernelOptions, Prepared,
    SeedPolicy, SessionKernel, SessionLimits, StateIsolation, SubmittedAction, TickReducer, TimeoutInput,
};

const ROUNDS: u64 = 3;
const SEATS: [&str; 2] = ["a", "b"];
/// An input with this index makes the next view invalid (status `exploded`).
const POISON: f64 = 666.0;

static NEXT_HANDLE: AtomicU64 = AtomicU64::new(1);

/// A process-wide unique identity for a state object (for exactly-once ledgers).
fn next_handle() -> u64 {
    NEXT_HANDLE.fetch_add(1, Ordering::Relaxed)
}

/// The game both reducers implement: every round each seat adds a number.
#[derive(Debug, Clone, PartialEq, Default)]
struct Tally {
    round: u64,
    log: Vec<f64>,
    poisoned: bool,
}

impl Tally {
    fn advance(&mut self, inputs: &[SubmittedAction]) {
        for input in inputs {
            let n = input.index.unwrap_or(0.0);
            self.poisoned |= n == POISON;
            self.log.push(n);
        }
        self.round += 1;
    }

    fn view(&self) -> Value {
        let status = if self.poisoned {
            "exploded"
        } else if self.round >= ROUNDS {
            "ended"
        } else {
            "playing"
        };
        let log: Vec<Value> = self.log.iter().map(|n| Value::Number(*n)).collect();
        obj! {
            "status" => status,
            "participation" => obj! { "mode" => "simultaneous", "seats" => vec![Value::from("a"), Value::from("b")] },
            "round" => self.round,
            "log" => log,
            "hud" => obj! { "actionsUsed" => self.log.len() },
        }
        .into()
    }
}

/// What the suite needs from a reducer under test.
trait Fixture: TickReducer<State: Clone + 'static> + Default + 'static {
    /// A deep copy of the game content of a state.
    fn tally(state: &Self::State) -> Tally;
    /// The identity of a state object.
    fn handle(state: &Self::State) -> u64;
    /// A deep copy with a new identity (what a correct `fork` returns).
    fn deep_fork(state: &Self::State) -> Self::State;
}

/// Builds a fresh state object on every advance; never mutates its input.
#[derive(Debug, Clone, Copy, Default)]
struct ImmutableTally;

#[derive(Debug, Clone)]
struct ImmutableState {
    handle: u64,
    tally: Tally,
}

impl TickReducer for ImmutableTally {
    type State = ImmutableState;
    fn init(&self, _level: &Value, _seed: u32) -> Result<ImmutableState, GameError> {
        Ok(ImmutableState { handle: next_handle(), tally: Tally::default() })
    }
    fn advance(&self, state: ImmutableState, inputs: &[SubmittedAction]) -> Result<ImmutableState, GameError> {
        let mut tally = state.tally.clone();
        tally.advance(inputs);
        Ok(ImmutableState { handle: next_handle(), tally })
    }
    fn view(&self, state: &ImmutableState) -> Value {
        state.tally.view()
    }
}

impl Fixture for ImmutableTally {
    fn tally(state: &ImmutableState) -> Tally {
        state.tally.clone()
    }
    fn handle(state: &ImmutableState) -> u64 {
        state.handle
    }
    fn deep_fork(state: &ImmutableState) -> ImmutableState {
        ImmutableState { handle: next_handle(), tally: state.tally.clone() }
    }
}

/// Mutates the shared structure in place and returns the same state object.
#[derive(Debug, Clone, Copy, Default)]
struct SharedTally;

/// A handle to shared, mutable game content: `Clone` copies the handle only.
#[derive(Debug, Clone)]
struct SharedState {
    handle: u64,
    tally: Arc<Mutex<Tally>>,
}

impl TickReducer for SharedTally {
    type State = SharedState;
    fn init(&self, _level: &Value, _seed: u32) -> Result<SharedState, GameError> {
        Ok(SharedState { handle: next_handle(), tally: Arc::new(Mutex::new(Tally::default())) })
    }
    fn advance(&self, state: SharedState, inputs: &[SubmittedAction]) -> Result<SharedState, GameError> {
        state.tally.lock().expect("not poisoned").advance(inputs);
        Ok(state)
    }
    fn view(&self, state: &SharedState) -> Value {
        state.tally.lock().expect("not poisoned").view()
    }
}

impl Fixture for SharedTally {
    fn tally(state: &SharedState) -> Tally {
        state.tally.lock().expect("not poisoned").clone()
    }
    fn handle(state: &SharedState) -> u64 {
        state.handle
    }
    fn deep_fork(state: &SharedState) -> SharedState {
        SharedState { handle: next_handle(), tally: Arc::new(Mutex::new(Self::tally(state))) }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Disposal {
    Discard,
    Retire,
}

/// A deep-copying isolation that counts its calls and records which state
/// object every `discard` and `retire` received.
struct CountingIsolation<F> {
    forks: AtomicUsize,
    discards: AtomicUsize,
    retires: AtomicUsize,
    ledger: Mutex<Vec<(u64, Disposal)>>,
    fixture: PhantomData<fn() -> F>,
}

impl<F: Fixture> CountingIsolation<F> {
    fn new() -> Arc<Self> {
        Arc::new(CountingIsolation {
            forks: AtomicUsize::new(0),
            discards: AtomicUsize::new(0),
            retires: AtomicUsize::new(0),
            ledger: Mutex::new(Vec::new()),
            fixture: PhantomData,
        })
    }

    /// `(forks, discards, retires)` so far.
    fn counts(&self) -> (usize, usize, usize) {
        (self.forks.load(Ordering::SeqCst), self.discards.load(Ordering::SeqCst), self.retires.load(Ordering::SeqCst))
    }

    fn last_disposal(&self) -> Option<(u64, Disposal)> {
        self.ledger.lock().expect("not poisoned").last().copied()
    }

    /// Every draft the kernel held was cleaned up exactly once: no state
    /// object was disposed twice, and every fork ended in one discard or (as
    /// the previous live state of a later commit) one retire.
    fn assert_exactly_once(&self) {
        let ledger = self.ledger.lock().expect("not poisoned");
        let mut handles: Vec<u64> = ledger.iter().map(|(h, _)| *h).collect();
        handles.sort_unstable();
        let total = handles.len();
        handles.dedup();
        assert_eq!(handles.len(), total, "a state object was disposed twice: {ledger:?}");
        let (forks, discards, retires) = self.counts();
        assert_eq!(forks, discards + retires, "forks {forks} != discards {discards} + retires {retires}");
    }
}

impl<F: Fixture> StateIsolation<F::State> for CountingIsolation<F> {
    fn fork(&self, state: &F::State) -> F::State {
        self.forks.fetch_add(1, Ordering::SeqCst);
        F::deep_fork(state)
    }
    fn discard(&self, draft: F::State) {
        self.discards.fetch_add(1, Ordering::SeqCst);
        self.ledger.lock().expect("not poisoned").push((F::handle(&draft), Disposal::Discard));
    }
    fn retire(&self, previous: F::State) {
        self.retires.fetch_add(1, Ordering::SeqCst);
        self.ledger.lock().expect("not poisoned").push((F::handle(&previous), Disposal::Retire));
    }
}

fn command_mapper() -> CommandMapper {
    Arc::new(|command, ctx| {
        let n = command.get("n").and_then(Value::as_f64).ok_or_else(|| GameError::new("command needs a number n"))?;
        Ok(SubmittedAction::new("Action 1").with_index(n).with_seat(ctx.participant_id))
    })
}

fn options<F: Fixture>(isolation: Option<Arc<CountingIsolation<F>>>) -> KernelOptions<F> {
    KernelOptions {
        session_id: "lifecycle".into(),
        game: GameRef::conventional("tests/lifecycle"),
        level_id: "only".into(),
        level_version: None,
        reducer: F::default(),
        level: obj! { "rounds" => ROUNDS }.into(),
        seed: 1,
        seed_policy: SeedPolicy::Explicit,
        seats: SEATS.iter().map(|s| (*s).to_owned()).collect(),
        cadence: Cadence::Turns,
        host_time: HostTime::None,
        dmath: None,
        command_to_action: command_mapper(),
        timeout_to_action: None,
        limits: SessionLimits::default(),
        state_isolation: isolation.map(|iso| iso as Arc<dyn StateIsolation<F::State>>),
        signing: None,
        timeout_policy: None,
    }
}

/// A kernel with a counting, deep-copying isolation.
fn counted<F: Fixture>() -> (SessionKernel<F>, Arc<CountingIsolation<F>>) {
    let isolation = CountingIsolation::<F>::new();
    let kernel = SessionKernel::new(options(Some(Arc::clone(&isolation)))).expect("valid options");
    // Construction probes fork + discard once.
    assert_eq!(isolation.counts(), (1, 1, 0), "construction probes the isolation hooks once");
    (kernel, isolation)
}

fn submission<F: Fixture>(kernel: &SessionKernel<F>, seat: &str, id: &str, n: f64) -> CommandSubmission {
    CommandSubmission::new(kernel.session_id(), kernel.cursor(), seat, id, obj! { "n" => Value::Number(n) }.into())
}

fn commit_ingest<F: Fixture>(kernel: &mut SessionKernel<F>, seat: &str, id: &str, n: f64) {
    let mut prepared = kernel.prepare_ingest(&submission(kernel, seat, id, n)).expect("ingest");
    kernel.commit(&mut prepared).expect("commit ingest");
}

/// Everything a prepare must leave untouched.
#[derive(Debug, Clone, PartialEq)]
struct LiveSnapshot {
    handle: u64,
    tally: Tally,
    digest: u32,
    cursor: u64,
    tick: u64,
    transition_revision: u64,
    awaiting: Vec<String>,
    view_revisions: Vec<u64>,
    views: Vec<String>,
    events: usize,
}

fn live<F: Fixture>(kernel: &SessionKernel<F>) -> LiveSnapshot {
    LiveSnapshot {
        handle: F::handle(kernel.state()),
        tally: F::tally(kernel.state()),
        digest: kernel.digest(),
        cursor: kernel.cursor(),
        tick: kernel.tick(),
        transition_revision: kernel.transition_revision(),
        awaiting: kernel.awaiting_seats(),
        view_revisions: SEATS.iter().map(|s| kernel.view_revision(s).expect("seat")).collect(),
        views: SEATS.iter().map(|s| canonical_json(&kernel.observe(s).expect("seat"))).collect(),
        events: kernel.events().len(),
    }
}

fn code(result: Result<(), KernelError>) -> &'static str {
    match result {
        Ok(()) => "ok",
        Err(e) => e.code(),
    }
}

/// A kernel at cursor 0 whose window holds both seats' intents.
fn ready<F: Fixture>() -> (SessionKernel<F>, Arc<CountingIsolation<F>>) {
    let (mut kernel, isolation) = counted::<F>();
    commit_ingest(&mut kernel, "a", "a-0", 1.0);
    commit_ingest(&mut kernel, "b", "b-0", 2.0);
    assert_eq!(isolation.counts(), (1, 1, 0), "ingests never fork");
    (kernel, isolation)
}

fn commit_publishes_the_draft_and_retires_the_previous_state_exactly_once<F: Fixture>() {
    let (mut kernel, isolation) = ready::<F>();
    let before = live(&kernel);
    let mut prepared = kernel.prepare_advance(None).expect("prepare");
    assert_eq!(isolation.counts(), (2, 1, 0), "one fork per prepared advance");
    assert_eq!(live(&kernel), before, "prepare changed live state");

    kernel.commit(&mut prepared).expect("commit");
    assert_eq!(isolation.counts(), (2, 1, 1), "commit retires once and discards nothing");
    assert_eq!(isolation.last_disposal(), Some((before.handle, Disposal::Retire)), "the previous live state retires");
    assert_ne!(F::handle(kernel.state()), before.handle, "the draft is published");
    assert_eq!(F::tally(kernel.state()), Tally { round: 1, log: vec![1.0, 2.0], poisoned: false });
    assert_eq!((kernel.cursor(), kernel.tick(), kernel.transition_revision()), (1, 1, 3));
    assert_ne!(kernel.digest(), before.digest);

    assert_eq!(code(kernel.commit(&mut prepared)), "already_completed", "double commit");
    assert_eq!(code(kernel.abort(&mut prepared)), "already_completed", "abort after commit");
    assert_eq!(isolation.counts(), (2, 1, 1), "refused completions clean up nothing");
    isolation.assert_exactly_once();
}

fn explicit_abort_discards_the_draft_once_and_is_idempotent<F: Fixture>() {
    let (mut kernel, isolation) = ready::<F>();
    let before = live(&kernel);
    let mut prepared = kernel.prepare_advance(None).expect("prepare");
    let events = prepared.events().to_vec();

    kernel.abort(&mut prepared).expect("abort");
    assert_eq!(isolation.counts(), (2, 2, 0), "abort discards the draft");
    let (discarded, kind) = isolation.last_disposal().expect("a disposal");
    assert_eq!(kind, Disposal::Discard);
    assert_ne!(discarded, before.handle, "abort discards the draft, never the live state");
    assert_eq!(live(&kernel), before, "abort leaves live state and transition revision unchanged");

    assert_eq!(code(kernel.abort(&mut prepared)), "ok", "abort after abort is idempotent");
    assert_eq!(code(kernel.commit(&mut prepared)), "already_completed", "commit after abort");
    assert_eq!(isolation.counts(), (2, 2, 0), "repeated completions clean up nothing");
    assert!(!prepared.is_open());

    // Persistence failed, so the host aborted; a retry prepares the same transition.
    let mut retry = kernel.prepare_advance(None).expect("prepare again");
    assert_eq!(retry.events(), &events[..], "the retry prepares the same events");
    kernel.commit(&mut retry).expect("commit the retry");
    assert_eq!(isolation.counts(), (3, 2, 1));
    assert_eq!(F::tally(kernel.state()).round, 1);
    isolation.assert_exactly_once();
}

fn stale_commit_auto_aborts_and_discards_exactly_once<F: Fixture>() {
    let (mut kernel, isolation) = ready::<F>();
    let mut first = kernel.prepare_advance(None).expect("first prepare");
    let mut second = kernel.prepare_advance(None).expect("competing prepare from the same base");
    assert_eq!(first.base_transition_revision(), second.base_transition_revision());
    assert_eq!(isolation.counts(), (3, 1, 0), "each prepare forks its own draft");

    kernel.commit(&mut first).expect("the first commit wins");
    let after_first = live(&kernel);
    assert_eq!(isolation.counts(), (3, 1, 1));

    assert_eq!(code(kernel.commit(&mut second)), "stale", "the second commit is stale");
    assert!(!second.is_open(), "a stale commit aborts the transition");
    assert_eq!(isolation.counts(), (3, 2, 1), "the stale draft is discarded once");
    assert_eq!(live(&kernel), after_first, "a stale commit publishes nothing");

    assert_eq!(code(kernel.abort(&mut second)), "ok", "abort after the automatic abort is idempotent");
    assert_eq!(code(kernel.commit(&mut second)), "already_completed");
    assert_eq!(isolation.counts(), (3, 2, 1), "no second cleanup");

    // Ingests and noop duplicates go stale the same way (they hold no draft).
    let mut a = kernel.prepare_ingest(&submission(&kernel, "a", "a-1", 3.0)).expect("ingest a");
    let mut duplicate = kernel.prepare_ingest(&submission(&kernel, "a", "a-1", 3.0)).expect("same ingest again");
    kernel.commit(&mut a).expect("commit a");
    assert_eq!(code(kernel.commit(&mut duplicate)), "stale", "a transition prepared on an older base is stale");
    let mut noop = kernel.prepare_ingest(&submission(&kernel, "a", "a-1", 3.0)).expect("exact retry");
    assert!(noop.is_noop(), "an exact retry is a noop duplicate");
    commit_ingest(&mut kernel, "b", "b-1", 4.0);
    assert_eq!(code(kernel.commit(&mut noop)), "stale", "a noop still requires its base to be live");
    assert_eq!(isolation.counts(), (3, 2, 1), "ingests never fork or clean up");
    isolation.assert_exactly_once();
}

fn foreign_completions_are_refused_without_cleanup<F: Fixture>() {
    let (mut kernel, isolation) = ready::<F>();
    let (mut other, other_isolation) = ready::<F>();
    let mut prepared = kernel.prepare_advance(None).expect("prepare");
    let other_before = live(&other);

    assert_eq!(code(other.commit(&mut prepared)), "foreign");
    assert_eq!(code(other.abort(&mut prepared)), "foreign");
    assert!(prepared.is_open(), "a foreign completion leaves the transition open");
    assert_eq!(live(&other), other_before, "a foreign commit publishes nothing");
    assert_eq!(isolation.counts(), (2, 1, 0), "no cleanup for foreign completions");
    assert_eq!(other_isolation.counts(), (1, 1, 0));

    kernel.commit(&mut prepared).expect("its own kernel commits it");
    assert_eq!(isolation.counts(), (2, 1, 1));
    isolation.assert_exactly_once();
    other_isolation.assert_exactly_once();
}

/// Prepare, check live state is untouched, abort, check again.
fn prepare_and_abort<F: Fixture>(
    kernel: &mut SessionKernel<F>,
    what: &str,
    prepare: impl Fn(&SessionKernel<F>) -> Prepared<F::State>,
) {
    let before = live(kernel);
    let mut prepared = prepare(kernel);
    assert_eq!(live(kernel), before, "prepare of {what} changed live state");
    kernel.abort(&mut prepared).expect("abort");
    assert_eq!(live(kernel), before, "abort of {what} changed live state");
}

fn prepare_never_changes_live_state_digest_views_or_cursor<F: Fixture>() {
    let (mut kernel, isolation) = counted::<F>();
    prepare_and_abort(&mut kernel, "an ingest", |k| k.prepare_ingest(&submission(k, "a", "a-0", 1.0)).expect("ingest"));
    prepare_and_abort(&mut kernel, "an extension", |k| {
        k.prepare_extension("chat", &obj! { "text" => "hi" }.into()).expect("extension")
    });
    let forced = SubmittedAction::new("Action 1").with_index(5.0);
    prepare_and_abort(&mut kernel, "a timeout", |k| {
        k.prepare_timeout(&TimeoutInput::new("t-0", 0, Some("b"), "elapsed"), Some(&forced)).expect("timeout")
    });
    commit_ingest(&mut kernel, "a", "a-0", 1.0);
    prepare_and_abort(&mut kernel, "a duplicate", |k| {
        k.prepare_ingest(&submission(k, "a", "a-0", 1.0)).expect("duplicate")
    });
    commit_ingest(&mut kernel, "b", "b-0", 2.0);
    prepare_and_abort(&mut kernel, "an advance", |k| k.prepare_advance(None).expect("advance"));
    assert_eq!(isolation.counts(), (3, 3, 0), "the timeout and the advance each forked and were discarded");
    isolation.assert_exactly_once();
}

fn a_prepare_that_fails_after_forking_discards_its_draft<F: Fixture>() {
    // A view the kernel refuses after the reducer ran.
    let (mut kernel, isolation) = counted::<F>();
    commit_ingest(&mut kernel, "a", "a-0", POISON);
    commit_ingest(&mut kernel, "b", "b-0", 2.0);
    let before = live(&kernel);
    let error = kernel.prepare_advance(None).expect_err("the next view is invalid");
    assert_eq!(error.code(), "invalid_view");
    assert_eq!(isolation.counts(), (2, 2, 0), "the draft of a failed prepare is discarded");
    assert_eq!(live(&kernel), before);
    isolation.assert_exactly_once();

    // A host clock that fails while the events are stamped (after the reducer ran).
    let isolation = CountingIsolation::<F>::new();
    let clock_broken = Arc::new(AtomicBool::new(false));
    let broken = Arc::clone(&clock_broken);
    let mut opts = options(Some(Arc::clone(&isolation)));
    opts.host_time = HostTime::Provider(Arc::new(move || if broken.load(Ordering::SeqCst) { -1 } else { 1_000 }));
    let mut kernel = SessionKernel::new(opts).expect("valid options");
    commit_ingest(&mut kernel, "a", "a-0", 1.0);
    commit_ingest(&mut kernel, "b", "b-0", 2.0);
    clock_broken.store(true, Ordering::SeqCst);
    let error = kernel.prepare_advance(None).expect_err("the host clock fails");
    assert_eq!(error.code(), "range");
    assert_eq!(isolation.counts(), (2, 2, 0), "the draft of a failed prepare is discarded");
    clock_broken.store(false, Ordering::SeqCst);
    let mut prepared = kernel.prepare_advance(None).expect("the clock works again");
    kernel.commit(&mut prepared).expect("commit");
    assert_eq!(isolation.counts(), (3, 2, 1));
    isolation.assert_exactly_once();
}

fn a_full_session_cleans_up_every_draft_exactly_once<F: Fixture>() {
    let (mut kernel, isolation) = counted::<F>();
    for round in 0..ROUNDS {
        commit_ingest(&mut kernel, "a", &format!("a-{round}"), 1.0);
        commit_ingest(&mut kernel, "b", &format!("b-{round}"), 2.0);
        let mut aborted = kernel.prepare_advance(None).expect("prepare");
        kernel.abort(&mut aborted).expect("abort");
        let mut competing = kernel.prepare_advance(None).expect("competing prepare");
        let mut winner = kernel.prepare_advance(None).expect("prepare");
        kernel.commit(&mut winner).expect("commit");
        assert_eq!(code(kernel.commit(&mut competing)), "stale");
    }
    assert!(kernel.is_terminal());
    let rounds = ROUNDS as usize;
    assert_eq!(isolation.counts(), (1 + 3 * rounds, 1 + 2 * rounds, rounds));
    isolation.assert_exactly_once();
    // Rehydration forks and retires once per resolution, and stays balanced.
    let options = Arc::clone(kernel.options());
    let rehydrated = SessionKernel::rehydrate(options, None, kernel.events().to_vec()).expect("rehydrate");
    assert_eq!(rehydrated.digest(), kernel.digest());
    assert_eq!(F::tally(rehydrated.state()), F::tally(kernel.state()));
    isolation.assert_exactly_once();
}

macro_rules! lifecycle_suite {
    ($module:ident, $fixture:ty) => {
        mod $module {
            use super::*;

            #[test]
            fn commit_publishes_the_draft_and_retires_the_previous_state_exactly_once() {
                super::commit_publishes_the_draft_and_retires_the_previous_state_exactly_once::<$fixture>();
            }

            #[test]
            fn explicit_abort_discards_the_draft_once_and_is_idempotent() {
                super::explicit_abort_discards_the_draft_once_and_is_idempotent::<$fixture>();
            }

            #[test]
            fn stale_commit_auto_aborts_and_discards_exactly_once() {
                super::stale_commit_auto_aborts_and_discards_exactly_once::<$fixture>();
            }

            #[test]
            fn foreign_completions_are_refused_without_cleanup() {
                super::foreign_completions_are_refused_without_cleanup::<$fixture>();
            }

            #[test]
            fn prepare_never_changes_live_state_digest_views_or_cursor() {
                super::prepare_never_changes_live_state_digest_views_or_cursor::<$fixture>();
            }

            #[test]
            fn a_prepare_that_fails_after_forking_discards_its_draft() {
                super::a_prepare_that_fails_after_forking_discards_its_draft::<$fixture>();
            }

            #[test]
            fn a_full_session_cleans_up_every_draft_exactly_once() {
                super::a_full_session_cleans_up_every_draft_exactly_once::<$fixture>();
            }
        }
    };
}

lifecycle_suite!(immutable_reducer, ImmutableTally);
lifecycle_suite!(in_place_mutating_reducer, SharedTally);

/// The mutating fixture really needs its custom isolation: under the default
/// `Clone` isolation a prepare writes through the shared handle into live
/// state. (This is what the suite above would catch if `fork` were shallow.)
#[test]
fn default_clone_isolation_would_not_isolate_the_shared_state_fixture() {
    let mut kernel = SessionKernel::new(options::<SharedTally>(None)).expect("valid options");
    commit_ingest(&mut kernel, "a", "a-0", 1.0);
    commit_ingest(&mut kernel, "b", "b-0", 2.0);
    let before = SharedTally::tally(kernel.state());
    let mut prepared = kernel.prepare_advance(None).expect("prepare");
    kernel.abort(&mut prepared).expect("abort");
    assert_ne!(SharedTally::tally(kernel.state()), before, "a shallow fork leaks the draft into live state");

    let isolation = CountingIsolation::<SharedTally>::new();
    let mut kernel = SessionKernel::new(options(Some(isolation))).expect("valid options");
    commit_ingest(&mut kernel, "a", "a-0", 1.0);
    commit_ingest(&mut kernel, "b", "b-0", 2.0);
    let mut prepared = kernel.prepare_advance(None).expect("prepare");
    kernel.abort(&mut prepared).expect("abort");
    assert_eq!(SharedTally::tally(kernel.state()), before, "a deep fork keeps live state intact");
}
