//! Property test of the session kernel's invariants under random host
//! schedules: interleaved valid and invalid ingests, exact duplicates,
//! conflicting retries, advances (turns) and tick targets (ticks), timeouts,
//! extensions, persistence failures (abort), held transitions committed after
//! others (stale), and crashes with or without a persisted-but-uncommitted
//! transition. Runs on counter and hilo (turns) and race (ticks).
//!
//! Invariants checked after every operation:
//! - the kernel's transcript equals the durable store (persist before publish);
//! - `viewRevision(seat) == cursor == tick` for every seat (no interactions);
//! - an accepted identity is accepted once and applied at most once;
//! - every seat's client view, built only from delivered deltas and snapshot
//!   resyncs, equals `observe(seat)`;
//! - every prepared transition completes exactly once (a second completion
//!   errors, an abort after an abort is a no-op), and its draft is discarded
//!   or the state it replaced retired exactly once (counted by the isolation);
//! - an exact retry is answered from its receipt while the receipt is
//!   retained and refused (`stale_tick`) once evicted; an id reused with
//!   another command is a `conflict`, or `unknown_submission` once evicted;
//! - a rehydrated kernel equals the live one (digest, cursor, tick, revisions,
//!   awaiting seats, every seat's view, transcript).
//!
//! A failing case prints the operation sequence; `PROPTEST_CASES` raises the
//! case count locally.

mod sim_host;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use gaos_json::{Value, obj};
use gaos_kernel::{
    AnyState, Cadence, IngestReceipt, KernelError, Prepared, SessionLimits, StateIsolation, SubmittedAction,
};
use proptest::prelude::*;
use sim_host::{SimHost, Step, fingerprint, game_options, identity_uses, json, ticks, with_limits};

const MAX_HELD: usize = 4;
const MAX_EXTENSION_BYTES: f64 = 48.0;

/// Which revision a random submission addresses.
#[derive(Debug, Clone, Copy)]
enum Revision {
    Open,
    Previous,
    Next,
}

/// Which seat a random submission comes from.
#[derive(Debug, Clone, Copy)]
enum SeatChoice {
    /// The n-th seat the open window still awaits (any seat if none).
    Awaiting(usize),
    Any(usize),
}

/// Which submission id a random submission carries.
#[derive(Debug, Clone, Copy)]
enum IdChoice {
    /// An id never used before.
    Fresh,
    /// One of a few ids, likely used before (duplicates, reuse after eviction).
    Reused(u8),
}

/// A transition the host prepares.
#[derive(Debug, Clone)]
enum Transition {
    Ingest {
        seat: SeatChoice,
        id: IdChoice,
        command: u8,
        revision: Revision,
    },
    /// Turns: a plain advance (or, for `ahead % 4 == 3`, a forbidden target).
    /// Ticks: target `tick + ahead`.
    Advance {
        ahead: u8,
    },
    /// `None` is a window-wide timeout.
    Timeout {
        seat: Option<usize>,
    },
    Extension {
        bytes: u8,
    },
}

#[derive(Debug, Clone)]
enum Op {
    /// Prepare, persist, commit, deliver.
    Run(Transition),
    /// Prepare; persisting fails, so the host aborts.
    PersistFails(Transition),
    /// Prepare and keep the transition open.
    Hold(Transition),
    /// Commit or abort a held transition (stale if anything committed since).
    CompleteHeld { pick: usize, commit: bool },
    /// Resend an accepted submission byte for byte.
    ExactRetry { pick: usize },
    /// Reuse an accepted submission id with another command, at the open window.
    ConflictingRetry { pick: usize },
    /// Lose the kernel; optionally a held transition was persisted but its
    /// commit never observed.
    Crash { persist_held: Option<usize> },
}

/// A game under test.
struct GameSpec {
    game_id: &'static str,
    level: &'static str,
    seats: [&'static str; 2],
    cadence: fn() -> Cadence,
    /// `(full view, seat, command number)` → command; mostly commands the
    /// game accepts, and (except for race, which accepts anything) some it refuses.
    command: fn(&Value, &str, u8) -> Value,
    /// The input of a timeout when the game has no mapper (hilo and race map timeouts).
    forced: Option<fn() -> SubmittedAction>,
}

const COUNTER: GameSpec = GameSpec {
    game_id: "conformance/counter",
    level: r#"{"rounds":4}"#,
    seats: ["a", "b"],
    cadence: || Cadence::Turns,
    command: |_, _, k| if k < 5 { obj! { "n" => k }.into() } else { Value::from("not a command") },
    forced: Some(|| SubmittedAction::new("Action 1").with_index(0.0)),
};

const HILO: GameSpec = GameSpec {
    game_id: "conformance/hilo",
    level: r#"{"handSize":4,"maxCard":9}"#,
    seats: ["alice", "bob"],
    cadence: || Cadence::Turns,
    // A card of the seat's hand (the view shows how many it holds), or card 9: never held.
    command: |view, seat, k| {
        let held = view.get("handCounts").and_then(|c| c.get(seat)).and_then(Value::as_u64).unwrap_or(0);
        let card = if k < 5 && held > 0 { u64::from(k) % held } else { 9 };
        obj! { "card" => card }.into()
    },
    forced: None,
};

const RACE: GameSpec = GameSpec {
    game_id: "conformance/race",
    level: r#"{"length":16}"#,
    seats: ["p1", "p2"],
    cadence: || ticks(4.0),
    command: |_, _, k| obj! { "boost" => k }.into(),
    forced: None,
};

/// The simulated host plus what the test remembers about it.
struct Harness {
    spec: &'static GameSpec,
    host: SimHost,
    /// Open transitions with the step that prepared them.
    held: Vec<(Prepared<AnyState>, Step)>,
    /// Every accepted submission, as sent (with its concrete revision), and its receipt.
    accepted: Vec<(Step, IngestReceipt)>,
    /// Fresh submission ids handed out so far.
    fresh_ids: u32,
    retention: u64,
    isolation: Arc<CountingIsolation>,
    /// Drafts no completion can clean up: those of held transitions lost
    /// with a crashed kernel, and those handed to a reducer whose `advance`
    /// failed (it takes the draft by value and drops it with its error).
    untracked_drafts: isize,
}

/// `Clone` isolation that counts its calls: forks − discards − retires is
/// the number of drafts held by open transitions (or lost in a crash), so a
/// completion that cleans up twice or not at all shows.
#[derive(Default)]
struct CountingIsolation {
    forks: AtomicUsize,
    discards: AtomicUsize,
    retires: AtomicUsize,
}

impl CountingIsolation {
    fn open_drafts(&self) -> isize {
        let count = |c: &AtomicUsize| c.load(Ordering::SeqCst) as isize;
        count(&self.forks) - count(&self.discards) - count(&self.retires)
    }
}

impl StateIsolation<AnyState> for CountingIsolation {
    fn fork(&self, state: &AnyState) -> AnyState {
        self.forks.fetch_add(1, Ordering::SeqCst);
        state.clone()
    }
    fn discard(&self, _draft: AnyState) {
        self.discards.fetch_add(1, Ordering::SeqCst);
    }
    fn retire(&self, _previous: AnyState) {
        self.retires.fetch_add(1, Ordering::SeqCst);
    }
}

impl Harness {
    fn new(spec: &'static GameSpec, retention: f64) -> Self {
        let limits = SessionLimits {
            receipt_retention: Some(retention),
            max_catch_up_ticks: Some(3.0),
            max_extension_bytes: Some(MAX_EXTENSION_BYTES),
            ..SessionLimits::default()
        };
        let options = game_options(spec.game_id, "prop-session", json(spec.level), &spec.seats, (spec.cadence)());
        let mut options = with_limits(options, limits);
        let isolation = Arc::new(CountingIsolation::default());
        options.state_isolation = Some(Arc::clone(&isolation) as Arc<dyn StateIsolation<AnyState>>);
        Harness {
            spec,
            host: SimHost::new(options),
            held: Vec::new(),
            accepted: Vec::new(),
            fresh_ids: 0,
            retention: retention as u64,
            isolation,
            untracked_drafts: 0,
        }
    }

    /// The concrete host step of a random transition (ingests get an explicit revision).
    fn step(&mut self, transition: &Transition) -> Step {
        let kernel = &self.host.kernel;
        match *transition {
            Transition::Ingest { seat, id, command, revision } => {
                let awaiting = kernel.awaiting_seats();
                let seat = match seat {
                    SeatChoice::Awaiting(n) if !awaiting.is_empty() => awaiting[n % awaiting.len()].clone(),
                    SeatChoice::Awaiting(n) | SeatChoice::Any(n) => self.spec.seats[n % 2].to_owned(),
                };
                let id = match id {
                    IdChoice::Fresh => {
                        self.fresh_ids += 1;
                        format!("{seat}-{}", 100 + self.fresh_ids)
                    }
                    IdChoice::Reused(k) => format!("{seat}-{k}"),
                };
                let revision = match revision {
                    Revision::Open => kernel.cursor(),
                    Revision::Previous => kernel.cursor().saturating_sub(1),
                    Revision::Next => kernel.cursor() + 1,
                };
                let command = (self.spec.command)(kernel.full_view(), &seat, command);
                Step::IngestAt { seat, id, command, revision }
            }
            Transition::Advance { ahead } => match kernel.options().cadence {
                Cadence::Turns => Step::Advance((ahead % 4 == 3).then_some(kernel.tick())),
                Cadence::Ticks(_) => Step::Advance(Some(kernel.tick() + u64::from(ahead))),
            },
            Transition::Timeout { seat } => Step::Timeout {
                seat: seat.map(|s| self.spec.seats[s].to_owned()),
                forced: self.spec.forced.map(|forced| Box::new(forced())),
            },
            Transition::Extension { bytes } => {
                Step::Extension { lane: "pad".into(), record: obj! { "pad" => "x".repeat(usize::from(bytes)) }.into() }
            }
        }
    }

    /// `prepare` through the host, checking that a failed prepare leaves no
    /// draft behind, except the one a failing reducer consumed.
    fn prepare(&mut self, step: &Step) -> Result<Prepared<AnyState>, KernelError> {
        let before = self.isolation.open_drafts();
        let result = self.host.prepare(step);
        if let Err(e) = &result {
            let dropped = self.isolation.open_drafts() - before;
            let at_most = isize::from(e.code() == "reducer_failed");
            assert!((0..=at_most).contains(&dropped), "{step:?} failed ({e}) and left {dropped} drafts behind");
            self.untracked_drafts += dropped;
        }
        result
    }

    /// Whether the receipt of an accepted submission is still retained: its
    /// window is within `receiptRetention` windows of the open one.
    fn retained(&self, receipt: &IngestReceipt) -> bool {
        receipt.cursor + self.retention >= self.host.kernel.cursor()
    }

    fn remember_acceptance(&mut self, committed: &Prepared<AnyState>, step: &Step) {
        if let (false, Some(receipt)) = (committed.is_noop(), committed.receipt()) {
            self.accepted.push((step.clone(), receipt.clone()));
        }
    }

    /// Persist and commit a transition whose base is live, then deliver it.
    fn publish(&mut self, mut prepared: Prepared<AnyState>, step: &Step) {
        self.host.persist(&prepared);
        self.host.kernel.commit(&mut prepared).expect("a transition on the live base commits");
        assert_eq!(code(self.host.kernel.commit(&mut prepared)), "already_completed", "double commit");
        assert_eq!(code(self.host.kernel.abort(&mut prepared)), "already_completed", "abort after commit");
        let deltas = prepared.deltas().to_vec();
        self.host.deliver(&deltas);
        self.remember_acceptance(&prepared, step);
    }

    fn apply(&mut self, op: &Op) {
        match op {
            Op::Run(transition) => {
                let step = self.step(transition);
                if let Ok(prepared) = self.prepare(&step) {
                    self.publish(prepared, &step);
                }
            }
            Op::PersistFails(transition) => {
                let step = self.step(transition);
                if let Ok(mut prepared) = self.prepare(&step) {
                    let before = fingerprint(&self.host.kernel);
                    let kernel = &mut self.host.kernel;
                    assert_eq!(code(kernel.abort(&mut prepared)), "ok");
                    assert_eq!(code(kernel.abort(&mut prepared)), "ok", "abort is idempotent");
                    assert_eq!(code(kernel.commit(&mut prepared)), "already_completed", "commit after abort");
                    assert_eq!(fingerprint(kernel), before, "an abort changes nothing");
                }
            }
            Op::Hold(transition) => {
                let step = self.step(transition);
                if self.held.len() < MAX_HELD
                    && let Ok(prepared) = self.prepare(&step)
                {
                    self.held.push((prepared, step));
                }
            }
            Op::CompleteHeld { pick, commit } => {
                if self.held.is_empty() {
                    return;
                }
                let (mut prepared, step) = self.held.remove(pick % self.held.len());
                let kernel = &mut self.host.kernel;
                let live_base = prepared.base_transition_revision() == kernel.transition_revision();
                if *commit && live_base {
                    self.publish(prepared, &step);
                } else if *commit {
                    let before = fingerprint(kernel);
                    assert_eq!(code(kernel.commit(&mut prepared)), "stale", "a held transition on an old base");
                    assert_eq!(code(kernel.abort(&mut prepared)), "ok", "abort after the automatic abort");
                    assert_eq!(code(kernel.commit(&mut prepared)), "already_completed");
                    assert_eq!(fingerprint(kernel), before, "a stale commit changes nothing");
                } else {
                    assert_eq!(code(kernel.abort(&mut prepared)), "ok");
                    assert_eq!(code(kernel.commit(&mut prepared)), "already_completed", "commit after abort");
                }
            }
            Op::ExactRetry { pick } => {
                if self.accepted.is_empty() {
                    return;
                }
                let (step, original) = self.accepted[pick % self.accepted.len()].clone();
                let outcome = self.prepare(&step);
                if self.retained(&original) {
                    // Honored from the receipt, even after the window resolved or the session ended.
                    let mut duplicate = outcome.unwrap_or_else(|e| panic!("{step:?}: a retained receipt, but {e}"));
                    assert!(duplicate.is_noop(), "{step:?} was accepted again: {:?}", duplicate.result());
                    let resolved = original.cursor < self.host.kernel.cursor();
                    let expected =
                        IngestReceipt { status: gaos_kernel::ReceiptStatus::Duplicate, resolved, ..original };
                    assert_eq!(duplicate.receipt(), Some(&expected), "the duplicate receipt of {step:?}");
                    self.host.kernel.commit(&mut duplicate).expect("a noop on the live base commits");
                } else {
                    // Evicted: its window is behind the open one, and that is reported first.
                    assert_eq!(outcome.map(|_| ()).map_err(|e| e.code()), Err("stale_tick"), "{step:?}");
                }
            }
            Op::ConflictingRetry { pick } => {
                if self.accepted.is_empty() {
                    return;
                }
                let (Step::IngestAt { seat, id, command, .. }, original) = &self.accepted[pick % self.accepted.len()]
                else {
                    unreachable!("accepted steps are ingests");
                };
                let mut other = command.as_object().cloned().unwrap_or_default();
                other.insert("retry".into(), true.into());
                let step = Step::IngestAt {
                    seat: seat.clone(),
                    id: id.clone(),
                    command: other.into(),
                    revision: self.host.kernel.cursor(),
                };
                let expected = if self.retained(original) {
                    "conflict"
                } else if self.host.kernel.is_terminal() {
                    "terminal"
                } else {
                    "unknown_submission"
                };
                let outcome = self.prepare(&step).map(|_| ()).map_err(|e| e.code());
                assert_eq!(outcome, Err(expected), "{step:?} reuses an accepted id");
            }
            Op::Crash { persist_held } => self.crash(*persist_held),
        }
    }

    fn crash(&mut self, persist_held: Option<usize>) {
        let mut lost = std::mem::take(&mut self.held);
        // A held transition may have been persisted (only onto the live base:
        // the store appends conditionally on the transition revision).
        if let Some(pick) = persist_held
            && !lost.is_empty()
        {
            let (mut prepared, step) = lost.remove(pick % lost.len());
            if prepared.base_transition_revision() == self.host.kernel.transition_revision() {
                self.host.persist(&prepared);
                // What the lost kernel would have become; its deltas are never delivered.
                self.host.kernel.commit(&mut prepared).expect("commit");
                self.remember_acceptance(&prepared, &step);
            }
        }
        let expected = fingerprint(&self.host.kernel);
        self.untracked_drafts = self.isolation.open_drafts();
        self.host.crash_and_rehydrate();
        assert_eq!(fingerprint(&self.host.kernel), expected, "the rehydrated kernel differs from the live one");
        for (mut prepared, _) in lost {
            assert_eq!(code(self.host.kernel.commit(&mut prepared)), "foreign", "a lost kernel's transition");
            assert_eq!(code(self.host.kernel.abort(&mut prepared)), "foreign");
        }
        self.host.resync_clients();
    }

    fn check_invariants(&self, after: &Op) {
        let kernel = &self.host.kernel;
        let context = format!("after {after:?}");
        assert_eq!(kernel.events().len(), self.host.store.len(), "{context}: transcript vs store");
        assert!(kernel.events().iter().eq(self.host.store.iter()), "{context}: transcript vs store");
        assert_eq!(kernel.tick(), kernel.cursor(), "{context}: tick and cursor diverged");
        for seat in self.spec.seats {
            assert_eq!(kernel.view_revision(seat).expect("seat"), kernel.cursor(), "{context}: {seat}'s viewRevision");
        }
        for ((seat, id), (accepted, applied)) in identity_uses(&self.host.store) {
            assert_eq!(accepted, 1, "{context}: {seat}/{id} accepted {accepted} times");
            assert!(applied <= 1, "{context}: {seat}/{id} applied {applied} times");
        }
        self.host.assert_clients_match_observe(&context);
        let open = self.isolation.open_drafts() - self.untracked_drafts;
        assert!(
            (0..=self.held.len() as isize).contains(&open),
            "{context}: {open} drafts outstanding with {} held transitions",
            self.held.len()
        );
    }

    /// Complete every held transition, then compare a rehydrated kernel.
    fn finish(&mut self) {
        for (mut prepared, _) in std::mem::take(&mut self.held) {
            let kernel = &mut self.host.kernel;
            assert_eq!(code(kernel.abort(&mut prepared)), "ok");
            assert_eq!(code(kernel.abort(&mut prepared)), "ok");
            assert_eq!(code(kernel.commit(&mut prepared)), "already_completed");
        }
        assert_eq!(self.isolation.open_drafts(), self.untracked_drafts, "every completed draft was cleaned up once");
        let live = fingerprint(&self.host.kernel);
        self.host.crash_and_rehydrate();
        assert_eq!(fingerprint(&self.host.kernel), live, "the rehydrated kernel differs from the live one");
        assert_eq!(self.isolation.open_drafts(), self.untracked_drafts, "rehydration cleans up after itself");
    }
}

fn code(result: Result<(), KernelError>) -> &'static str {
    match result {
        Ok(()) => "ok",
        Err(e) => e.code(),
    }
}

fn run(spec: &'static GameSpec, retention: f64, ops: &[Op]) {
    let mut harness = Harness::new(spec, retention);
    for op in ops {
        harness.apply(op);
        harness.check_invariants(op);
    }
    harness.finish();
}

fn transition() -> impl Strategy<Value = Transition> {
    let revision = prop_oneof![6 => Just(Revision::Open), 1 => Just(Revision::Previous), 1 => Just(Revision::Next)];
    let seat = prop_oneof![3 => (0..2usize).prop_map(SeatChoice::Awaiting), 1 => (0..2usize).prop_map(SeatChoice::Any)];
    let id = prop_oneof![3 => Just(IdChoice::Fresh), 1 => (0..4u8).prop_map(IdChoice::Reused)];
    prop_oneof![
        8 => (seat, id, 0..6u8, revision)
            .prop_map(|(seat, id, command, revision)| Transition::Ingest { seat, id, command, revision }),
        3 => (0..11u8).prop_map(|ahead| Transition::Advance { ahead }),
        1 => prop::option::weighted(0.8, 0..2usize).prop_map(|seat| Transition::Timeout { seat }),
        1 => (0..64u8).prop_map(|bytes| Transition::Extension { bytes }),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => transition().prop_map(Op::Run),
        1 => transition().prop_map(Op::PersistFails),
        2 => transition().prop_map(Op::Hold),
        2 => (any::<usize>(), any::<bool>()).prop_map(|(pick, commit)| Op::CompleteHeld { pick, commit }),
        2 => any::<usize>().prop_map(|pick| Op::ExactRetry { pick }),
        1 => any::<usize>().prop_map(|pick| Op::ConflictingRetry { pick }),
        2 => prop::option::of(any::<usize>()).prop_map(|persist_held| Op::Crash { persist_held }),
    ]
}

fn retention() -> impl Strategy<Value = f64> {
    prop_oneof![Just(0.0), Just(1.0), Just(64.0)]
}

fn config() -> ProptestConfig {
    // Modest by default so CI stays fast; PROPTEST_CASES overrides.
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(96);
    ProptestConfig { cases, ..ProptestConfig::default() }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn counter_turns_keeps_the_kernel_invariants_under_random_host_schedules(
        retention in retention(),
        ops in prop::collection::vec(op(), 1..80),
    ) {
        run(&COUNTER, retention, &ops);
    }

    #[test]
    fn hilo_turns_keeps_the_kernel_invariants_under_random_host_schedules(
        retention in retention(),
        ops in prop::collection::vec(op(), 1..80),
    ) {
        run(&HILO, retention, &ops);
    }

    #[test]
    fn race_ticks_keeps_the_kernel_invariants_under_random_host_schedules(
        retention in retention(),
        ops in prop::collection::vec(op(), 1..80),
    ) {
        run(&RACE, retention, &ops);
    }
}

/// The schedules above must actually reach the interesting paths; this pins
/// one schedule that exercises every operation kind on every game.
#[test]
fn a_fixed_schedule_reaches_every_operation_kind() {
    let ingest = |seat, id, command| Op::Run(Transition::Ingest { seat, id, command, revision: Revision::Open });
    let (first, second) = (SeatChoice::Any(0), SeatChoice::Any(1));
    let ops = vec![
        ingest(first, IdChoice::Reused(1), 1),
        Op::Hold(Transition::Ingest { seat: second, id: IdChoice::Fresh, command: 2, revision: Revision::Open }),
        Op::Hold(Transition::Extension { bytes: 3 }),
        Op::Crash { persist_held: Some(0) },
        Op::ExactRetry { pick: 0 },
        Op::ExactRetry { pick: 1 },
        Op::ConflictingRetry { pick: 0 },
        Op::PersistFails(Transition::Advance { ahead: 0 }),
        Op::Hold(Transition::Advance { ahead: 0 }),
        Op::Run(Transition::Timeout { seat: Some(1) }),
        Op::CompleteHeld { pick: 0, commit: true },
        ingest(first, IdChoice::Reused(2), 0),
        ingest(second, IdChoice::Fresh, 1),
        Op::Run(Transition::Advance { ahead: 2 }),
        ingest(first, IdChoice::Reused(2), 0),
        Op::ExactRetry { pick: 2 },
        Op::Crash { persist_held: None },
    ];
    for spec in [&COUNTER, &HILO, &RACE] {
        for retention in [0.0, 64.0] {
            let mut harness = Harness::new(spec, retention);
            for op in &ops {
                harness.apply(op);
                harness.check_invariants(op);
            }
            assert!(harness.accepted.len() >= 3, "{}: {} accepted", spec.game_id, harness.accepted.len());
            assert!(harness.host.kernel.cursor() >= 2, "{}: cursor {}", spec.game_id, harness.host.kernel.cursor());
            harness.finish();
        }
    }
}
