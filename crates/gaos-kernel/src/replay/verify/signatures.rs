//! The RFC-010 signature and chain check of a replay (the reference's
//! `recheckReplaySignatures`, kernel spec §5.7 step 2 and §5.9): no game code.
//!
//! Every submission of a rostered seat is a link of that seat's chain, in
//! record order (resolution inputs with a seat and submission id, action
//! lines, `commit-mismatch`, `interest`, `interaction`): its
//! `prevChainHash` must be the seat's head (the genesis first), and the head
//! moves to the SHA-256 of its preimage. A link may be unsigned, but then a
//! later valid signature of the seat (a signed link or a periodic
//! `seat-signature` over the head) must cover it in the same level within
//! `signingTier.N` ticks; commit–reveal links must be signed themselves
//! (tier 1), interest declarations too (tier 2). Problems are the
//! reference's sentences, so reports compare across implementations.

use gaos_json::Value;

use crate::replay::model::{ChainFields, RecordBody, ReplayView};
use crate::signing::{
    ChainHash, PeriodicAttestation, Roster, SubmissionLink, chain_link, decode_chain_hash, decode_signature, to_base64,
};

/// Overall state of a replay's signatures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SignatureState {
    /// Every chain reproduces, every policy holds and every signature is valid.
    Signed,
    /// Something is missing or invalid (see the problems).
    Partial,
    /// Not a signed replay (no roster, or a format before 1.2).
    Unsigned,
}

impl SignatureState {
    /// `signed`, `partial` or `unsigned`.
    pub fn as_str(self) -> &'static str {
        match self {
            SignatureState::Signed => "signed",
            SignatureState::Partial => "partial",
            SignatureState::Unsigned => "unsigned",
        }
    }
}

/// One seat's line of the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeatSignatureReport {
    /// The seat.
    pub seat: String,
    /// Its submissions (chain links) in the replay.
    pub submissions: u64,
    /// Valid signatures: signed links plus periodic signatures.
    pub valid_signatures: u64,
    /// Whether every link continued the chain from the genesis.
    pub chain_reproduced: bool,
    /// Whether every link was covered in time (and required signatures present).
    pub policy_satisfied: bool,
    /// The head after the last link (base64).
    pub chain_head: String,
}

/// What the signature check found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignatureReport {
    /// Overall state.
    pub state: SignatureState,
    /// Each problem, naming the record and the seat.
    pub problems: Vec<String>,
    /// One line per rostered seat, in roster order.
    pub seats: Vec<SeatSignatureReport>,
    /// Where each problem is (parallel to `problems`): the replay line (1 for
    /// the header) and the seat.
    pub sites: Vec<(usize, String)>,
}

impl SignatureReport {
    fn unsigned() -> Self {
        SignatureReport { state: SignatureState::Unsigned, problems: Vec::new(), seats: Vec::new(), sites: Vec::new() }
    }

    /// Whether the replay is signed and every check passed.
    pub fn is_signed(&self) -> bool {
        self.state == SignatureState::Signed && self.problems.is_empty()
    }

    /// `{state, problems, seats: [{seat, submissions, validSignatures,
    /// chainReproduced, policySatisfied, chainHead}]}`, the reference's shape.
    pub fn to_value(&self) -> Value {
        let seats = self
            .seats
            .iter()
            .map(|s| {
                let mut m = gaos_json::Map::new();
                m.insert("seat".into(), s.seat.clone().into());
                m.insert("submissions".into(), s.submissions.into());
                m.insert("validSignatures".into(), s.valid_signatures.into());
                m.insert("chainReproduced".into(), s.chain_reproduced.into());
                m.insert("policySatisfied".into(), s.policy_satisfied.into());
                m.insert("chainHead".into(), s.chain_head.clone().into());
                Value::Object(m)
            })
            .collect();
        let mut map = gaos_json::Map::new();
        map.insert("state".into(), self.state.as_str().into());
        map.insert("problems".into(), Value::Array(self.problems.iter().map(|p| p.clone().into()).collect()));
        map.insert("seats".into(), Value::Array(seats));
        Value::Object(map)
    }
}

/// A record position of a link or attestation: (level, tick, order).
#[derive(Debug, Clone, Copy)]
struct Position {
    level: usize,
    tick: u64,
    order: usize,
}

struct SeatCheck {
    submissions: u64,
    valid: u64,
    chain_reproduced: bool,
    policy_satisfied: bool,
    head: ChainHash,
    broken: bool,
    links: Vec<Position>,
    attestations: Vec<Position>,
}

/// One chain link of the replay, in record order.
struct Link<'v> {
    seat: &'v str,
    level: usize,
    tick: u64,
    line: usize,
    label: String,
    submission_id: Option<&'v str>,
    canonical_command: Option<&'v str>,
    cursor: Option<u64>,
    chain: Option<&'v ChainFields>,
    required_tier: Option<u8>,
}

/// One periodic `seat-signature`.
struct Periodic<'v> {
    seat: &'v str,
    level: usize,
    tick: u64,
    line: usize,
    label: String,
    chain: Option<&'v ChainFields>,
}

enum Item<'v> {
    Link(Link<'v>),
    Periodic(Periodic<'v>),
}

fn items(view: &ReplayView) -> Vec<Item<'_>> {
    let mut out = Vec::new();
    for (n, record) in view.records.iter().enumerate() {
        let (level, line) = (record.level_index, record.line);
        match &record.body {
            RecordBody::Resolution(r) | RecordBody::Action(r) => {
                let action_line = matches!(record.body, RecordBody::Action(_));
                for (j, input) in r.inputs.iter().enumerate() {
                    let (Some(seat), Some(submission_id)) = (input.seat(), input.submission_id()) else { continue };
                    let label = if action_line { format!("action {n}") } else { format!("resolution {n} input {j}") };
                    out.push(Item::Link(Link {
                        seat,
                        level,
                        tick: r.tick.unwrap_or(0),
                        line,
                        label,
                        submission_id: Some(submission_id),
                        canonical_command: input.canonical_command(),
                        cursor: input.cursor(),
                        chain: input.chain(),
                        required_tier: (input.commit().is_some() || input.reveal().is_some()).then_some(1),
                    }));
                }
            }
            RecordBody::CommitMismatch(m) => out.push(Item::Link(Link {
                seat: &m.participant_id,
                level,
                tick: m.tick,
                line,
                label: format!("commit-mismatch {n}"),
                submission_id: Some(&m.submission_id),
                canonical_command: m.canonical_command.as_deref(),
                cursor: m.cursor,
                chain: m.chain.as_deref(),
                required_tier: Some(1),
            })),
            RecordBody::Interest { tick, participant_id, submission_id, canonical_command, cursor, chain } => {
                out.push(Item::Link(Link {
                    seat: participant_id,
                    level,
                    tick: *tick,
                    line,
                    label: format!("interest {n}"),
                    submission_id: Some(submission_id),
                    canonical_command: canonical_command.as_deref(),
                    cursor: *cursor,
                    chain: chain.as_deref(),
                    required_tier: Some(2),
                }))
            }
            RecordBody::Interaction(i) => out.push(Item::Link(Link {
                seat: &i.participant_id,
                level,
                tick: i.tick,
                line,
                label: format!("interaction {n}"),
                submission_id: Some(&i.submission_id),
                canonical_command: i.canonical_command.as_deref(),
                cursor: Some(i.cursor),
                chain: i.chain.as_deref(),
                required_tier: None,
            })),
            RecordBody::SeatSignature { tick, participant_id, chain } => out.push(Item::Periodic(Periodic {
                seat: participant_id,
                level,
                tick: *tick,
                line,
                label: format!("seat-signature {n}"),
                chain: chain.as_deref(),
            })),
            RecordBody::Timeout(_) | RecordBody::Extension { .. } | RecordBody::Checkpoint { .. } => {}
        }
    }
    out
}

/// Check the signatures and chains of a replay (unsigned when it declares no
/// roster or is older than 1.2).
pub fn check_signatures(view: &ReplayView) -> SignatureReport {
    let Some(roster) = view.roster.as_ref().filter(|_| view.version.has_integrity_rules()) else {
        return SignatureReport::unsigned();
    };
    Checker::new(view, roster).run(view)
}

struct Checker<'r> {
    session_id: &'r str,
    roster: &'r Roster,
    checks: Vec<SeatCheck>,
    problems: Vec<String>,
    sites: Vec<(usize, String)>,
    material: u64,
    valid: u64,
}

impl<'r> Checker<'r> {
    fn new(view: &'r ReplayView, roster: &'r Roster) -> Self {
        let checks = roster
            .keys()
            .iter()
            .map(|key| SeatCheck {
                submissions: 0,
                valid: 0,
                chain_reproduced: true,
                policy_satisfied: true,
                head: roster.genesis(&view.session_id, &key.id).unwrap_or([0; 32]),
                broken: false,
                links: Vec::new(),
                attestations: Vec::new(),
            })
            .collect();
        Checker {
            session_id: &view.session_id,
            roster,
            checks,
            problems: Vec::new(),
            sites: Vec::new(),
            material: 0,
            valid: 0,
        }
    }

    fn problem(&mut self, line: usize, seat: &str, message: String) {
        self.problems.push(message);
        self.sites.push((line, seat.to_owned()));
    }

    fn seat(&self, seat: &str) -> Option<usize> {
        self.roster.keys().iter().position(|k| k.id == seat)
    }

    fn run(mut self, view: &ReplayView) -> SignatureReport {
        for (order, item) in items(view).into_iter().enumerate() {
            match item {
                Item::Periodic(p) => self.periodic(p, order),
                Item::Link(l) => self.link(l, order),
            }
        }
        self.coverage();
        let seats: Vec<SeatSignatureReport> = self
            .roster
            .keys()
            .iter()
            .zip(&self.checks)
            .map(|(key, c)| SeatSignatureReport {
                seat: key.id.clone(),
                submissions: c.submissions,
                valid_signatures: c.valid,
                chain_reproduced: c.chain_reproduced,
                policy_satisfied: c.policy_satisfied,
                chain_head: to_base64(&c.head),
            })
            .collect();
        let complete = seats.iter().all(|s| s.chain_reproduced && s.policy_satisfied);
        let state = if self.material == 0 {
            if seats.iter().any(|s| s.submissions > 0) { SignatureState::Partial } else { SignatureState::Signed }
        } else if complete && self.valid == self.material {
            SignatureState::Signed
        } else {
            SignatureState::Partial
        };
        SignatureReport { state, problems: self.problems, seats, sites: self.sites }
    }

    fn periodic(&mut self, p: Periodic<'_>, order: usize) {
        let Some(index) = self.seat(p.seat) else {
            self.problem(p.line, p.seat, format!("{} names seat outside header.seatKeys", p.label));
            return;
        };
        let chain = p.chain.cloned().unwrap_or_default();
        if chain.sig.is_some() {
            self.material += 1;
        }
        let head = chain.prev_chain_hash.as_deref().and_then(|h| decode_chain_hash(h).ok());
        if head != Some(self.checks[index].head) {
            let check = &mut self.checks[index];
            check.chain_reproduced = false;
            check.policy_satisfied = false;
            self.problem(p.line, p.seat, format!("{} does not sign seat {}'s current chain head", p.label, p.seat));
            return;
        }
        let (Some(client_time), Some(sig)) = (chain.client_time, chain.sig.as_deref()) else {
            self.checks[index].policy_satisfied = false;
            self.problem(p.line, p.seat, format!("{} is missing clientTime or sig", p.label));
            return;
        };
        let head = self.checks[index].head;
        let attestation = PeriodicAttestation {
            session_id: self.session_id,
            seat: p.seat,
            tick: p.tick,
            client_time,
            chain_head: &head,
        };
        if !self.verified(p.seat, attestation.preimage(), sig) {
            self.checks[index].policy_satisfied = false;
            self.problem(p.line, p.seat, format!("{} has an invalid Ed25519 signature", p.label));
            return;
        }
        self.valid += 1;
        let check = &mut self.checks[index];
        check.valid += 1;
        check.attestations.push(Position { level: p.level, tick: p.tick, order });
    }

    fn link(&mut self, l: Link<'_>, order: usize) {
        let Some(index) = self.seat(l.seat) else {
            self.problem(l.line, l.seat, format!("{} names seat outside header.seatKeys", l.label));
            return;
        };
        {
            let check = &mut self.checks[index];
            check.submissions += 1;
            check.links.push(Position { level: l.level, tick: l.tick, order });
        }
        let chain = l.chain.cloned().unwrap_or_default();
        if chain.sig.is_some() {
            self.material += 1;
        }
        let (Some(submission_id), Some(command), Some(cursor), Some(client_time), Some(prev)) =
            (l.submission_id, l.canonical_command, l.cursor, chain.client_time, chain.prev_chain_hash.as_deref())
        else {
            self.break_chain(index);
            self.problem(l.line, l.seat, format!("{} is missing RFC-010 chain metadata", l.label));
            return;
        };
        let prev = decode_chain_hash(prev).ok();
        if self.checks[index].broken || prev != Some(self.checks[index].head) {
            self.break_chain(index);
            self.problem(l.line, l.seat, format!("{} does not reproduce seat {}'s chain", l.label, l.seat));
            return;
        }
        let canonical = gaos_json::parse(command).is_ok_and(|v| gaos_json::canonical_json(&v) == command);
        if !canonical {
            self.break_chain(index);
            self.problem(l.line, l.seat, format!("{} canonicalCommand is not canonical JSON", l.label));
            return;
        }
        let head = self.checks[index].head;
        let link = SubmissionLink {
            session_id: self.session_id,
            seat: l.seat,
            submission_id,
            cursor,
            tick: l.tick,
            client_time,
            canonical_command: command,
            prev_chain_hash: &head,
        };
        let preimage = match link.preimage() {
            Ok(preimage) => preimage,
            Err(e) => {
                self.break_chain(index);
                self.problem(l.line, l.seat, format!("{} cannot be hashed into the chain: {e}", l.label));
                return;
            }
        };
        self.checks[index].head = chain_link(&preimage);
        let Some(sig) = chain.sig.as_deref() else {
            if let Some(tier) = l.required_tier {
                self.checks[index].policy_satisfied = false;
                self.problem(l.line, l.seat, format!("{} requires a tier-{tier} signature", l.label));
            }
            return;
        };
        if !self.verified(l.seat, Ok(preimage), sig) {
            self.checks[index].policy_satisfied = false;
            self.problem(l.line, l.seat, format!("{} has an invalid Ed25519 signature", l.label));
            return;
        }
        self.valid += 1;
        let check = &mut self.checks[index];
        check.valid += 1;
        check.attestations.push(Position { level: l.level, tick: l.tick, order });
    }

    fn break_chain(&mut self, index: usize) {
        let check = &mut self.checks[index];
        check.broken = true;
        check.chain_reproduced = false;
        check.policy_satisfied = false;
    }

    fn verified(&self, seat: &str, preimage: Result<Vec<u8>, String>, sig: &str) -> bool {
        match (preimage, decode_signature(sig)) {
            (Ok(preimage), Ok(sig)) => self.roster.verify(seat, &preimage, &sig),
            _ => false,
        }
    }

    /// Every link must have a later (or its own) valid signature in the same
    /// level within `signingTier.N` ticks; the first failure per seat is reported.
    fn coverage(&mut self) {
        for index in 0..self.checks.len() {
            let key = &self.roster.keys()[index];
            let (seat, tier) = (key.id.clone(), key.signing_tier);
            let check = &self.checks[index];
            let mut failure = None;
            for link in &check.links {
                let covering = check.attestations.iter().find(|a| a.order >= link.order);
                failure = match covering {
                    None => Some(format!(
                        "seat {seat} has no signed chain head covering submission at level {} tick {}",
                        link.level, link.tick
                    )),
                    Some(c) if c.level != link.level => {
                        Some(format!("seat {seat} crosses a level boundary without signing its chain head"))
                    }
                    Some(c) if c.tick.saturating_sub(link.tick) > tier => Some(format!(
                        "seat {seat} exceeds signingTier.N={tier} for submission at level {} tick {}",
                        link.level, link.tick
                    )),
                    Some(_) => None,
                };
                if failure.is_some() {
                    break;
                }
            }
            if let Some(message) = failure {
                self.checks[index].policy_satisfied = false;
                self.problem(1, &seat, message);
            }
        }
    }
}
