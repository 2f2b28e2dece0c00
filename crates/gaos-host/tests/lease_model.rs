//! Model-based property test of the controller-lease engine
//! (`gaos_host::lease`) on a session of several seats, with controllers
//! taking over seats, deliberate pauses, an emergency stop, a moving clock,
//! and a kernel behind it: every act goes, as in the session actor, through
//! the stored-answer check, then the lease book, then the kernel.
//!
//! Each step runs twice, on the real `LeaseBook` and on an independent
//! reference model written from spec/lease.md (the rules it follows are
//! quoted where they are used); the answers must agree, and after every step
//! the invariants of lease.md §4 are checked against the real book by
//! probing it (on a copy), not by reading back fields it sets itself:
//! - at most one live claim per seat: of every token ever issued for a
//!   seat, at most one may drive it, and exactly the one the model says;
//! - a lapse implies an expired lease: once the model says a claim lapsed,
//!   its holder's act is refused with `lease_expired`, and the book recorded
//!   that lapse exactly once (`lease_expired` events, counted per seat);
//! - a revoked session never acts again;
//! - a submission reaches the kernel at most once, and the kernel receives
//!   exactly the submissions the model grants, in order;
//! - renew never resumes a safety pause;
//! - a release frees the seat without a lapse: the released token never
//!   drives again, and the next claim gets a newer epoch.

use std::collections::BTreeMap;

use gaos_host::lease::{LeaseBook, LeaseError, LeaseEvent, LeaseOp, Presented};
use proptest::prelude::*;

const SEATS: [&str; 2] = ["alice", "bob"];
const DURATION: u64 = 1_000;

/// Who dispatches on a seat.
#[derive(Debug, Clone, Copy)]
enum Who {
    /// The seat's controller `k` (mod the claims taken on the seat so far),
    /// presenting its lease token.
    Controller(usize),
    /// A lease-unaware caller with only the seat's bearer token.
    Unaware,
    /// Controller `k` of the *other* seat, presenting its token here.
    Foreign(usize),
}

#[derive(Debug, Clone, Copy)]
enum OpKind {
    Renew,
    Heartbeat,
    Pause,
    Resume,
    Stop,
    Release,
}

/// One step of a scenario.
#[derive(Debug, Clone)]
enum Step {
    /// A lease-aware controller attaches to the seat (takes a claim).
    Claim(usize),
    /// `who` submits its pending submission (or a new one) on the seat.
    /// `answer_lost`: the caller never sees the answer, so it will send the
    /// same submission again (an exact retry).
    Act {
        seat: usize,
        who: Who,
        answer_lost: bool,
    },
    Op(usize, Who, OpKind),
    /// The operator pauses the seat (free, rule 6).
    OperatorPause(usize),
    EmergencyStop,
    /// The clock moves; the eager expiry timer runs (rule 3).
    Wait(u64),
}

fn step() -> impl Strategy<Value = Step> {
    let seat = 0usize..SEATS.len();
    let who = prop_oneof![
        6 => (0usize..3).prop_map(Who::Controller),
        2 => Just(Who::Unaware),
        1 => (0usize..3).prop_map(Who::Foreign),
    ];
    let op = prop_oneof![
        3 => Just(OpKind::Renew),
        1 => Just(OpKind::Heartbeat),
        2 => Just(OpKind::Pause),
        2 => Just(OpKind::Resume),
        1 => Just(OpKind::Stop),
        2 => Just(OpKind::Release),
    ];
    prop_oneof![
        3 => seat.clone().prop_map(Step::Claim),
        8 => (seat.clone(), who.clone(), prop::bool::weighted(0.2))
            .prop_map(|(seat, who, answer_lost)| Step::Act { seat, who, answer_lost }),
        5 => (seat.clone(), who, op).prop_map(|(s, w, o)| Step::Op(s, w, o)),
        1 => seat.prop_map(Step::OperatorPause),
        1 => Just(Step::EmergencyStop),
        5 => prop_oneof![Just(1u64), Just(400), Just(999), Just(1_000), Just(1_500), Just(5_000)].prop_map(Step::Wait),
    ]
}

// ----- the reference model -------------------------------------------------------

/// One seat in the model.
#[derive(Debug, Default, Clone)]
struct ModelSeat {
    /// Epoch of each lease-aware controller's claim, by controller index.
    claims: Vec<u64>,
    /// The seat's current epoch (0: never claimed; an implicit claim of a
    /// lease-unaware caller has an epoch but no controller).
    epoch: u64,
    expires_at: i64,
    /// A deliberate safety pause (rule 6: only an explicit resume clears it).
    safety: bool,
    /// The current claim's lapse was recorded (rule 3: "records the lapse once").
    lapse_recorded: bool,
    /// Lapses recorded so far.
    lapses: usize,
    /// The current claim was released: the seat has none (its epoch stays,
    /// so the next claim gets a newer one).
    released: bool,
}

/// Outcome of a claim or dispatch: `"ok"` or the error code.
type Code = &'static str;

/// Who the model sees dispatching.
#[derive(Debug, Clone, Copy)]
enum Caller {
    /// A lease token: the seat's controller `Some(k)`, or a token that is
    /// not one of this seat's (`None`).
    Aware(Option<usize>),
    /// Only the seat's bearer token.
    Unaware,
}

/// What is dispatched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Act,
    Renew,
    Heartbeat,
    Pause,
    Resume,
    Stop,
    Release,
}

#[derive(Debug)]
struct Model {
    seats: Vec<ModelSeat>,
    /// Rule 7: revocation is final.
    revoked: bool,
    /// Submissions whose act was accepted (the host's stored answers).
    answered: Vec<String>,
}

impl Model {
    fn new() -> Model {
        Model { seats: vec![ModelSeat::default(); SEATS.len()], revoked: false, answered: Vec::new() }
    }

    /// §1: a claim is live when it exists, is not revoked and `now < expiresAt`.
    fn live(&self, seat: usize, now: i64) -> bool {
        let s = &self.seats[seat];
        !self.revoked && s.epoch > 0 && !s.released && now < s.expires_at
    }

    /// Rule 3: when a claim lapses the host records the lapse, once
    /// (eagerly by a timer, and lazily on every call).
    fn record_lapses(&mut self, now: i64) {
        if self.revoked {
            return;
        }
        for s in &mut self.seats {
            if s.epoch > 0 && !s.released && now >= s.expires_at && !s.lapse_recorded {
                s.lapse_recorded = true;
                s.lapses += 1;
            }
        }
    }

    /// Rule 2: use renews: the expiry is re-armed before the op's effect.
    fn slide(&mut self, seat: usize, now: i64) {
        let s = &mut self.seats[seat];
        s.expires_at = now + DURATION as i64;
        s.lapse_recorded = false;
    }

    /// Rule 1: one writer per seat: a live claim refuses a second one with
    /// `writer_conflict`; a lapsed one is taken over with the next epoch
    /// (rule 10: epochs strictly increase per seat).
    fn claim(&mut self, seat: usize, now: i64) -> Code {
        if self.revoked {
            return "revoked";
        }
        if self.live(seat, now) {
            return "writer_conflict";
        }
        let s = &mut self.seats[seat];
        s.epoch += 1;
        s.released = false;
        let epoch = s.epoch;
        s.claims.push(epoch);
        self.slide(seat, now);
        "ok"
    }

    /// A dispatch, by the table of §3 and rule 11.
    fn dispatch(&mut self, seat: usize, caller: Caller, op: Op, now: i64) -> Code {
        // Revoked: every call answers `revoked` (rule 7).
        if self.revoked {
            return "revoked";
        }
        self.record_lapses(now);
        let current = self.seats[seat].epoch;
        let free = current == 0 || self.seats[seat].released;
        if op == Op::Release {
            return self.release(seat, caller, free);
        }
        match caller {
            Caller::Aware(controller) => {
                let Some(epoch) = controller.and_then(|k| self.seats[seat].claims.get(k).copied()) else {
                    // A token that was never issued for this seat.
                    return "capability_rejected";
                };
                if epoch != current || free {
                    // Superseded: `writer_conflict`, except pausing, which is free.
                    if op == Op::Pause {
                        self.seats[seat].safety = true;
                        return "ok";
                    }
                    return "writer_conflict";
                }
                self.on_current_claim(seat, op, now, false)
            }
            Caller::Unaware if free => match op {
                // Pausing is free and stopping is safe from anyone entitled
                // to the seat: neither needs (or takes) a claim.
                Op::Pause => {
                    self.seats[seat].safety = true;
                    "ok"
                }
                Op::Stop => {
                    self.revoked = true;
                    "ok"
                }
                // Rule 11: a seat without a claim gets one implicitly on its
                // first driving call.
                _ => {
                    self.seats[seat].epoch += 1;
                    self.seats[seat].released = false;
                    self.slide(seat, now);
                    self.on_current_claim(seat, op, now, true)
                }
            },
            Caller::Unaware => self.on_current_claim(seat, op, now, true),
        }
    }

    /// `release`: the current claim's holder gives the seat up, live or
    /// lapsed, and a deliberate pause stays. Releasing when there is
    /// nothing to give up (a free seat, a claim already superseded) changes
    /// nothing; a lease-unaware caller releases only an implicit claim.
    fn release(&mut self, seat: usize, caller: Caller, free: bool) -> Code {
        if free {
            return "ok";
        }
        let s = &mut self.seats[seat];
        let holder = s.claims.iter().position(|e| *e == s.epoch);
        match (caller, holder) {
            (Caller::Aware(None), _) => return "capability_rejected",
            (Caller::Aware(Some(k)), _) if s.claims[k] != s.epoch => return "ok",
            (Caller::Aware(Some(_)), _) | (Caller::Unaware, None) => {}
            (Caller::Unaware, Some(_)) => return "writer_conflict",
        }
        s.released = true;
        "ok"
    }

    /// The rows Active, Paused(safety), Lapsed(by-lapse) and
    /// Lapsed(over-pause) of §3 for the seat's current claim.
    fn on_current_claim(&mut self, seat: usize, op: Op, now: i64, unaware: bool) -> Code {
        if !self.live(seat, now) {
            match op {
                // "A lapsed holder may still stop" (rule 7).
                Op::Stop => {
                    self.revoked = true;
                    return "ok";
                }
                // Renew re-acquires; it resumes only the lapse's own pause,
                // never a safety pause (rules 5, 6).
                Op::Renew => {
                    self.slide(seat, now);
                    return "ok";
                }
                // Pausing is free: no renewal.
                Op::Pause => {
                    self.seats[seat].safety = true;
                    return "ok";
                }
                // Rule 11: for lease-unaware callers the host renews a lapsed
                // claim nobody superseded, then dispatches.
                Op::Act | Op::Resume if unaware => self.slide(seat, now),
                // Rule 4: the typed, recoverable refusal.
                Op::Act | Op::Resume | Op::Heartbeat => return "lease_expired",
                // Handled first (`dispatch`).
                Op::Release => return "ok",
            }
        }
        match op {
            // Paused(safety): acting is refused (and does not renew).
            Op::Act if self.seats[seat].safety => "session_paused",
            Op::Stop => {
                self.slide(seat, now);
                self.revoked = true;
                "ok"
            }
            Op::Resume => {
                self.slide(seat, now);
                self.seats[seat].safety = false;
                "ok"
            }
            Op::Pause => {
                self.slide(seat, now);
                self.seats[seat].safety = true;
                "ok"
            }
            Op::Act | Op::Renew | Op::Heartbeat => {
                self.slide(seat, now);
                "ok"
            }
            Op::Release => "ok",
        }
    }

    /// An act of `submission`. As in the host: a revoked session refuses
    /// it; a stored answer answers an exact retry without a dispatch (so a
    /// retry can never be registered twice, rule 4); otherwise it is a
    /// dispatch, and only a granted one reaches the kernel. Returns the code
    /// and whether the kernel receives the submission.
    fn act(&mut self, seat: usize, caller: Caller, submission: &str, now: i64) -> (Code, bool) {
        if self.revoked {
            return ("revoked", false);
        }
        if self.answered.iter().any(|s| s == submission) {
            return ("ok", false);
        }
        let code = self.dispatch(seat, caller, Op::Act, now);
        if code == "ok" {
            self.answered.push(submission.to_owned());
        }
        (code, code == "ok")
    }

    /// The controller index that holds the seat's live claim, if any
    /// (an implicit claim has none).
    fn live_controller(&self, seat: usize, now: i64) -> Option<usize> {
        let s = &self.seats[seat];
        self.live(seat, now).then(|| s.claims.iter().position(|e| *e == s.epoch)).flatten()
    }

    /// The controller whose current claim lapsed, if any.
    fn lapsed_controller(&self, seat: usize, now: i64) -> Option<usize> {
        let s = &self.seats[seat];
        (!self.revoked && s.epoch > 0 && !s.released && !self.live(seat, now))
            .then(|| s.claims.iter().position(|e| *e == s.epoch))
            .flatten()
    }
}

// ----- the implementation side: the lease book behind the actor's act order -------

/// The real lease book with what the session actor puts around it for an
/// act: the revoked check, stored answers, and the kernel it forwards to.
#[derive(Default)]
struct Host {
    book: LeaseBook,
    answered: Vec<String>,
    /// Every submission the kernel received, in order.
    kernel: Vec<String>,
    /// `lease_expired` events recorded, by seat.
    lapses: BTreeMap<String, usize>,
}

fn code(result: &Result<gaos_host::lease::Granted, LeaseError>) -> Code {
    match result {
        Ok(_) => "ok",
        Err(LeaseError::Expired { .. }) => "lease_expired",
        Err(LeaseError::WriterConflict { .. }) => "writer_conflict",
        Err(LeaseError::Paused { .. }) => "session_paused",
        Err(LeaseError::Revoked { .. }) => "revoked",
        Err(LeaseError::CapabilityRejected(_)) => "capability_rejected",
    }
}

impl Host {
    fn record(&mut self, events: &[LeaseEvent]) {
        for event in events.iter().filter(|e| e.kind() == "lease_expired") {
            let seat = event.record.get("seat").and_then(gaos_json::Value::as_str).expect("a seat").to_owned();
            *self.lapses.entry(seat).or_default() += 1;
        }
    }

    fn dispatch(&mut self, seat: &str, presented: &Presented, op: &LeaseOp, now: i64) -> Code {
        let result = self.book.dispatch(seat, presented, op, now, false, DURATION);
        match &result {
            Ok(granted) => self.record(&granted.events.clone()),
            Err(LeaseError::Paused { events, .. }) => self.record(&events.clone()),
            Err(_) => {}
        }
        if result.is_ok() && matches!(op, LeaseOp::Stop(_)) {
            self.book.revoke("done", "seat");
        }
        code(&result)
    }

    fn act(&mut self, seat: &str, presented: &Presented, submission: &str, now: i64) -> Code {
        if self.book.revoked.is_some() {
            return "revoked";
        }
        if self.answered.iter().any(|s| s == submission) {
            return "ok";
        }
        let code = self.dispatch(seat, presented, &LeaseOp::Act, now);
        if code == "ok" {
            self.answered.push(submission.to_owned());
            self.kernel.push(submission.to_owned());
        }
        code
    }
}

fn lease_op(op: Op) -> LeaseOp {
    match op {
        Op::Act => LeaseOp::Act,
        Op::Renew => LeaseOp::Renew,
        Op::Heartbeat => LeaseOp::Heartbeat,
        Op::Pause => LeaseOp::Pause("uncertain".into()),
        Op::Resume => LeaseOp::Resume,
        Op::Stop => LeaseOp::Stop("done".into()),
        Op::Release => LeaseOp::Release,
    }
}

/// Lease tokens issued per seat, by controller index.
#[derive(Default)]
struct Tokens(Vec<Vec<String>>);

impl Tokens {
    /// What `who` presents on `seat`, and who the model sees.
    fn resolve(&self, seat: usize, who: Who) -> (Presented, Caller, String) {
        let aware = |hash: String, caller| (Presented { token_hash: Some(hash), epoch: None }, caller);
        let (presented, caller) = match who {
            Who::Unaware => (Presented::default(), Caller::Unaware),
            Who::Controller(k) => match self.0[seat].len() {
                0 => aware(format!("never-issued-{k}"), Caller::Aware(None)),
                n => aware(self.0[seat][k % n].clone(), Caller::Aware(Some(k % n))),
            },
            Who::Foreign(k) => {
                let other = &self.0[(seat + 1) % SEATS.len()];
                match other.len() {
                    0 => aware(format!("never-issued-{k}"), Caller::Aware(None)),
                    n => aware(other[k % n].clone(), Caller::Aware(None)),
                }
            }
        };
        let key = match caller {
            Caller::Unaware => "bearer".to_owned(),
            Caller::Aware(Some(k)) => format!("controller-{k}"),
            Caller::Aware(None) => format!("stranger-{:?}", presented.token_hash),
        };
        (presented, caller, key)
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn lease_engine_follows_the_state_table(steps in prop::collection::vec(step(), 1..80)) {
        let mut host = Host::default();
        let mut model = Model::new();
        let mut model_kernel: Vec<String> = Vec::new();
        let mut tokens = Tokens(vec![Vec::new(); SEATS.len()]);
        // The submission each caller is trying to get in (kept until it is
        // acknowledged: the driving seam retries the same submissionId).
        let mut pending: BTreeMap<(usize, String), String> = BTreeMap::new();
        let mut next_submission = 0u32;
        let mut now: i64 = 1_000_000;
        for (i, step) in steps.iter().enumerate() {
            match *step {
                Step::Wait(ms) => {
                    now += ms as i64;
                    let events = host.book.expire_due(now, false);
                    host.record(&events);
                    model.record_lapses(now);
                }
                Step::Claim(seat) => {
                    let token = format!("{}-token-{}", SEATS[seat], tokens.0[seat].len());
                    let holder = format!("{}-holder-{}", SEATS[seat], tokens.0[seat].len());
                    let got = host.book.claim(SEATS[seat], &holder, &token, DURATION, now);
                    prop_assert_eq!(code(&got), model.claim(seat, now), "step {} {:?}", i, step);
                    if got.is_ok() {
                        tokens.0[seat].push(token);
                    }
                }
                Step::EmergencyStop => {
                    host.book.revoke("emergency", "operator");
                    model.revoked = true;
                }
                Step::OperatorPause(seat) => {
                    host.book.pause_free(SEATS[seat], "operator");
                    if !model.revoked {
                        model.seats[seat].safety = true;
                    }
                }
                Step::Act { seat, who, answer_lost } => {
                    let (presented, caller, key) = tokens.resolve(seat, who);
                    let submission = pending.entry((seat, key.clone())).or_insert_with(|| {
                        next_submission += 1;
                        format!("{}:{key}:{next_submission}", SEATS[seat])
                    }).clone();
                    let attempt = |host: &mut Host, model: &mut Model, kernel: &mut Vec<String>| {
                        let got = host.act(SEATS[seat], &presented, &submission, now);
                        let (want, delivered) = model.act(seat, caller, &submission, now);
                        if delivered {
                            kernel.push(submission.clone());
                        }
                        (got, want)
                    };
                    let (mut got, want) = attempt(&mut host, &mut model, &mut model_kernel);
                    prop_assert_eq!(got, want, "step {} {:?} ({})", i, step, submission);
                    if got == "lease_expired" {
                        // Rule 8, the driving seam: renew, then retry the
                        // same submission once.
                        let renewed = host.dispatch(SEATS[seat], &presented, &LeaseOp::Renew, now);
                        prop_assert_eq!(renewed, model.dispatch(seat, caller, Op::Renew, now), "step {} renew", i);
                        if renewed == "ok" {
                            let (retried, want) = attempt(&mut host, &mut model, &mut model_kernel);
                            prop_assert_eq!(retried, want, "step {} retry of {}", i, submission);
                            got = retried;
                        }
                    }
                    if got == "ok" && !answer_lost {
                        pending.remove(&(seat, key));
                    }
                }
                Step::Op(seat, who, kind) => {
                    let op = match kind {
                        OpKind::Renew => Op::Renew,
                        OpKind::Heartbeat => Op::Heartbeat,
                        OpKind::Pause => Op::Pause,
                        OpKind::Resume => Op::Resume,
                        OpKind::Stop => Op::Stop,
                        OpKind::Release => Op::Release,
                    };
                    let (presented, caller, _) = tokens.resolve(seat, who);
                    let paused_before = host.book.seats.get(SEATS[seat]).is_some_and(|l| l.safety_paused);
                    let got = host.dispatch(SEATS[seat], &presented, &lease_op(op), now);
                    prop_assert_eq!(got, model.dispatch(seat, caller, op, now), "step {} {:?}", i, step);
                    if matches!(op, Op::Renew | Op::Heartbeat) && paused_before {
                        let paused = host.book.seats.get(SEATS[seat]).is_some_and(|l| l.safety_paused);
                        prop_assert!(paused, "step {}: renew resumed a deliberate pause", i);
                    }
                }
            }
            check_invariants(&host, &model, &model_kernel, &tokens, now, i)?;
        }
    }
}

/// lease.md §4, probed on the real book (on copies, so probing changes nothing).
fn check_invariants(
    host: &Host,
    model: &Model,
    model_kernel: &[String],
    tokens: &Tokens,
    now: i64,
    step: usize,
) -> Result<(), TestCaseError> {
    for (seat, name) in SEATS.iter().enumerate() {
        let probe = |token: &str, op: LeaseOp| {
            let mut copy = host.book.clone();
            let presented = Presented { token_hash: Some(token.to_owned()), epoch: None };
            code(&copy.dispatch(name, &presented, &op, now, false, DURATION))
        };
        // At most one live claim per seat: of every token issued for the
        // seat, only the live claim's holder may drive it.
        let drivers: Vec<usize> =
            (0..tokens.0[seat].len()).filter(|k| probe(&tokens.0[seat][*k], LeaseOp::Heartbeat) == "ok").collect();
        prop_assert!(drivers.len() <= 1, "step {}: several tokens drive {}: {:?}", step, name, drivers);
        prop_assert_eq!(drivers.first().copied(), model.live_controller(seat, now), "step {}: {}'s writer", step, name);
        // A lapse implies an expired lease: the lapsed holder's act is refused
        // with the recoverable error, and the lapse was recorded exactly once.
        if let Some(k) = model.lapsed_controller(seat, now) {
            prop_assert_eq!(probe(&tokens.0[seat][k], LeaseOp::Act), "lease_expired", "step {}: {} lapsed", step, name);
        }
        // Fencing: the seat's current claim has the epoch the model counts
        // (strictly increasing across takeovers, implicit claims and releases).
        let s = &model.seats[seat];
        let want = (s.epoch > 0 && !s.released).then_some(s.epoch);
        let got = host.book.seats.get(*name).and_then(|l| l.current.as_ref()).map(|c| c.epoch);
        prop_assert_eq!(got, want, "step {}: {}'s current epoch", step, name);
        let recorded = host.lapses.get(*name).copied().unwrap_or(0);
        prop_assert_eq!(recorded, model.seats[seat].lapses, "step {}: {}'s lapses recorded once each", step, name);
        let paused = host.book.seats.get(*name).is_some_and(|l| l.safety_paused);
        prop_assert_eq!(paused, model.seats[seat].safety, "step {}: {}'s pause", step, name);
        // A revoked session never acts again.
        if model.revoked {
            let mut copy = host.book.clone();
            let again = copy.dispatch(name, &Presented::default(), &LeaseOp::Act, now, false, DURATION);
            prop_assert_eq!(code(&again), "revoked", "step {}: a revoked session acted", step);
        }
    }
    // A submission reaches the kernel at most once, and the kernel gets
    // exactly what the model granted.
    let mut seen = std::collections::BTreeSet::new();
    for submission in &host.kernel {
        prop_assert!(seen.insert(submission), "step {}: {} reached the kernel twice", step, submission);
    }
    prop_assert_eq!(&host.kernel[..], model_kernel, "step {}: the kernel's submissions", step);
    Ok(())
}
