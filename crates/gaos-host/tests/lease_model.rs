//! Model-based property test of the controller-lease engine against a small
//! pure model of the state table in spec/lease.md §3, with the invariants of
//! §4 checked after every step.

use std::collections::BTreeSet;

use gaos_host::lease::{ClaimState, LeaseBook, LeaseError, LeaseOp, Presented};
use proptest::prelude::*;

const SEAT: &str = "alice";
const DURATION: u64 = 1_000;

/// One step of a scenario.
#[derive(Debug, Clone)]
enum Step {
    /// A lease-aware controller attaches (takes a claim).
    Claim,
    /// Controller `k` (mod the claims taken so far), or a lease-unaware
    /// caller (`None`), dispatches.
    Act(Option<usize>, u32),
    Renew(Option<usize>),
    Heartbeat(Option<usize>),
    Pause(Option<usize>),
    Resume(Option<usize>),
    Stop(Option<usize>),
    OperatorPause,
    EmergencyStop,
    Wait(u64),
}

fn step() -> impl Strategy<Value = Step> {
    let who = prop_oneof![3 => (0usize..4).prop_map(Some), 1 => Just(None)];
    prop_oneof![
        2 => Just(Step::Claim),
        6 => (who.clone(), 0u32..6).prop_map(|(w, s)| Step::Act(w, s)),
        3 => who.clone().prop_map(Step::Renew),
        1 => who.clone().prop_map(Step::Heartbeat),
        2 => who.clone().prop_map(Step::Pause),
        2 => who.clone().prop_map(Step::Resume),
        1 => who.prop_map(Step::Stop),
        1 => Just(Step::OperatorPause),
        1 => Just(Step::EmergencyStop),
        5 => prop_oneof![Just(1u64), Just(400), Just(999), Just(1_000), Just(1_500), Just(5_000)].prop_map(Step::Wait),
    ]
}

/// The reference model: exactly the table of lease.md §3.
#[derive(Debug, Default)]
struct Model {
    /// Epoch of each controller's claim, by controller index.
    claims: Vec<u64>,
    epoch: u64,
    expires_at: i64,
    safety: bool,
    revoked: bool,
    /// Implicit claim of lease-unaware callers exists (epoch 1 only).
    any_claim: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MState {
    Active,
    Paused,
    LapsedByLapse,
    LapsedOverPause,
    Superseded,
    Revoked,
}

impl Model {
    fn state_of(&self, epoch: Option<u64>, now: i64) -> MState {
        if self.revoked {
            return MState::Revoked;
        }
        if epoch.is_some_and(|e| e != self.epoch) {
            return MState::Superseded;
        }
        match (now >= self.expires_at, self.safety) {
            (true, false) => MState::LapsedByLapse,
            (true, true) => MState::LapsedOverPause,
            (false, true) => MState::Paused,
            (false, false) => MState::Active,
        }
    }

    fn slide(&mut self, now: i64) {
        self.expires_at = now + DURATION as i64;
    }

    /// Expected result code of an op (`"ok"` or the error code).
    fn apply(&mut self, who: Option<usize>, op: &LeaseOp, now: i64) -> &'static str {
        if self.revoked {
            return "revoked";
        }
        let epoch = match who {
            Some(k) => match self.claims.get(k) {
                Some(e) => Some(*e),
                None => return "capability_rejected",
            },
            None => None,
        };
        if who.is_none() && !self.any_claim {
            // A lease-unaware caller on a seat without a claim.
            return match op {
                LeaseOp::Pause(_) => {
                    self.safety = true;
                    "ok"
                }
                LeaseOp::Stop(_) => {
                    self.revoked = true;
                    "ok"
                }
                _ => {
                    self.any_claim = true;
                    self.epoch = 1;
                    self.slide(now);
                    match op {
                        LeaseOp::Act if self.safety => "session_paused",
                        LeaseOp::Resume => {
                            self.safety = false;
                            "ok"
                        }
                        _ => "ok",
                    }
                }
            };
        }
        let state = self.state_of(epoch, now);
        let lease_unaware = who.is_none();
        match (state, op) {
            (MState::Revoked, _) => "revoked",
            (MState::Superseded, LeaseOp::Pause(_)) => {
                self.safety = true;
                "ok"
            }
            (MState::Superseded, _) => "writer_conflict",
            (MState::Active, LeaseOp::Pause(_)) => {
                self.slide(now);
                self.safety = true;
                "ok"
            }
            (MState::Active | MState::Paused, LeaseOp::Stop(_)) => {
                self.revoked = true;
                "ok"
            }
            (MState::Active, _) => {
                self.slide(now);
                "ok"
            }
            (MState::Paused, LeaseOp::Act) => "session_paused",
            (MState::Paused, LeaseOp::Resume) => {
                self.slide(now);
                self.safety = false;
                "ok"
            }
            (MState::Paused, _) => {
                self.slide(now);
                "ok"
            }
            (MState::LapsedByLapse | MState::LapsedOverPause, LeaseOp::Stop(_)) => {
                self.revoked = true;
                "ok"
            }
            (MState::LapsedByLapse | MState::LapsedOverPause, LeaseOp::Renew) => {
                self.slide(now);
                "ok"
            }
            (MState::LapsedByLapse | MState::LapsedOverPause, LeaseOp::Pause(_)) => {
                self.safety = true;
                "ok"
            }
            (MState::LapsedByLapse | MState::LapsedOverPause, LeaseOp::Act | LeaseOp::Resume) if lease_unaware => {
                // The host renews implicitly for lease-unaware callers.
                self.slide(now);
                match op {
                    LeaseOp::Act if self.safety => "session_paused",
                    LeaseOp::Resume => {
                        self.safety = false;
                        "ok"
                    }
                    _ => "ok",
                }
            }
            (MState::LapsedByLapse | MState::LapsedOverPause, _) => "lease_expired",
        }
    }

    fn claim(&mut self, now: i64) -> &'static str {
        if self.revoked {
            return "revoked";
        }
        if self.any_claim && now < self.expires_at {
            return "writer_conflict";
        }
        self.epoch += 1;
        self.any_claim = true;
        self.claims.push(self.epoch);
        self.slide(now);
        "ok"
    }
}

fn code(result: &Result<gaos_host::lease::Granted, LeaseError>) -> &'static str {
    match result {
        Ok(_) => "ok",
        Err(LeaseError::Expired { .. }) => "lease_expired",
        Err(LeaseError::WriterConflict { .. }) => "writer_conflict",
        Err(LeaseError::Paused { .. }) => "session_paused",
        Err(LeaseError::Revoked { .. }) => "revoked",
        Err(LeaseError::CapabilityRejected(_)) => "capability_rejected",
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn lease_engine_follows_the_state_table(steps in prop::collection::vec(step(), 1..60)) {
        let mut book = LeaseBook::default();
        let mut model = Model::default();
        let mut tokens: Vec<String> = Vec::new();
        let mut now: i64 = 1_000_000;
        for (i, step) in steps.iter().enumerate() {
            let presented = |who: &Option<usize>, tokens: &[String]| -> Presented {
                match who {
                    Some(k) if !tokens.is_empty() => Presented {
                        token_hash: Some(tokens[k % tokens.len()].clone()),
                        epoch: None,
                    },
                    Some(k) => Presented { token_hash: Some(format!("unknown-{k}")), epoch: None },
                    None => Presented::default(),
                }
            };
            let model_who = |who: &Option<usize>, tokens: &[String]| -> Option<usize> {
                match who {
                    Some(k) if !tokens.is_empty() => Some(k % tokens.len()),
                    Some(_) => Some(usize::MAX),
                    None => None,
                }
            };
            match step {
                Step::Wait(ms) => {
                    now += *ms as i64;
                    book.expire_due(now, false);
                    continue;
                }
                Step::Claim => {
                    let token = format!("token-{}", tokens.len());
                    let got = book.claim(SEAT, &format!("holder-{}", tokens.len()), &token, DURATION, now);
                    let want = model.claim(now);
                    prop_assert_eq!(code(&got), want, "step {} {:?}", i, step);
                    if got.is_ok() {
                        tokens.push(token);
                    }
                }
                Step::EmergencyStop => {
                    book.revoke("emergency", "operator");
                    model.revoked = true;
                }
                Step::OperatorPause => {
                    book.pause_free(SEAT, "operator");
                    if !model.revoked {
                        model.safety = true;
                    }
                }
                Step::Act(who, _submission) => {
                    let p = presented(who, &tokens);
                    let got = book.dispatch(SEAT, &p, &LeaseOp::Act, now, false, DURATION);
                    let want = model.apply(model_who(who, &tokens), &LeaseOp::Act, now);
                    prop_assert_eq!(code(&got), want, "step {} {:?}", i, step);
                }
                Step::Renew(who) | Step::Heartbeat(who) | Step::Pause(who) | Step::Resume(who) | Step::Stop(who) => {
                    let op = match step {
                        Step::Renew(_) => LeaseOp::Renew,
                        Step::Heartbeat(_) => LeaseOp::Heartbeat,
                        Step::Pause(_) => LeaseOp::Pause("uncertain".into()),
                        Step::Resume(_) => LeaseOp::Resume,
                        _ => LeaseOp::Stop("done".into()),
                    };
                    let safety_before_renew = book.seats.get(SEAT).is_some_and(|l| l.safety_paused);
                    let p = presented(who, &tokens);
                    let got = book.dispatch(SEAT, &p, &op, now, false, DURATION);
                    if got.is_ok() && matches!(op, LeaseOp::Stop(_)) {
                        book.revoke("done", "seat");
                    }
                    let want = model.apply(model_who(who, &tokens), &op, now);
                    prop_assert_eq!(code(&got), want, "step {} {:?}", i, step);
                    // Renewal never resumes a deliberate pause.
                    if matches!(op, LeaseOp::Renew | LeaseOp::Heartbeat) && safety_before_renew {
                        prop_assert!(book.seats.get(SEAT).is_some_and(|l| l.safety_paused), "renew resumed a pause");
                    }
                }
            }
            // Invariants after every step.
            let state = book.state(SEAT, now);
            if let Some(ClaimState::Lapsed) = state {
                let claim = book.seats[SEAT].current.as_ref().expect("a lapsed claim exists");
                prop_assert!(now >= claim.expires_at, "a lapse implies an expired lease");
            }
            if model.revoked {
                prop_assert_eq!(state.unwrap_or(ClaimState::Revoked), ClaimState::Revoked);
                let p = Presented::default();
                let again = book.dispatch(SEAT, &p, &LeaseOp::Act, now, false, DURATION);
                prop_assert_eq!(code(&again), "revoked", "a revoked session never acts again");
            }
            let live: BTreeSet<u64> = book
                .seats
                .values()
                .filter_map(|l| l.current.as_ref())
                .filter(|c| now < c.expires_at)
                .map(|c| c.epoch)
                .collect();
            prop_assert!(live.len() <= 1, "at most one live claim per seat");
            prop_assert_eq!(book.seats.get(SEAT).is_some_and(|l| l.safety_paused), model.safety, "pause state");
        }
    }
}
