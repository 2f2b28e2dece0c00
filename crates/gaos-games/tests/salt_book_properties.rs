//! Property test of the salt book (kernel spec §4.12 "Salt book", issue 13
//! acceptance 3) on the sealed commit–reveal game: random salts shared
//! between the seats, random honest and mismatching reveals (rejections),
//! and crashes between transitions or between persist and commit.
//!
//! Two simulated hosts run the same operations: `live` never crashes,
//! `crashy` rehydrates from its store at every crash point. Checked after
//! every operation:
//! - the digests and the transcripts are identical (warnings never reach the
//!   state or the log);
//! - each kernel's `warnings` are what the spec's salt book predicts from a
//!   model of its book: consulted in canonical input order before each
//!   reveal's hash check, first identity kept, the salts recorded before a
//!   mismatch kept. A rehydrated kernel's book is the one the log rebuilds:
//!   every reveal of a resolution and every rejection's attempted reveal,
//!   first seen wins, so it lacks the salts of honest reveals checked before
//!   a mismatch (the divergence the spec allows, "reproduce that");
//! - wherever the two books agree on the salts an advance consults, the
//!   live and the rehydrated warnings are identical.
//!
//! `PROPTEST_CASES` raises the case count locally.

mod sim_host;

use std::collections::BTreeMap;

use gaos_json::obj;
use gaos_kernel::commitment::{CommitmentBinding, commitment_hash};
use gaos_kernel::{Cadence, PreparedResult, SessionWarning};
use proptest::prelude::*;
use sim_host::{SimHost, Step, advance, game_options, ingest, json};

const SESSION: &str = "salt-book-properties";
const SEATS: [&str; 2] = ["north", "south"];
const SALTS: [&str; 3] =
    ["00112233445566778899aabbccddeeff", "ffeeddccbbaa99887766554433221100", "0123456789abcdef0123456789abcdef"];
const MESSAGE: &str = "commitment salt was reused within this session";

/// A salt book model: salt → the first seat that used it (commitment id is
/// always 0 in the sealed game, so the seat is the identity).
type Book = BTreeMap<&'static str, usize>;

/// Where a crash interrupts the operation it follows.
#[derive(Debug, Clone, Copy)]
enum Crash {
    None,
    /// After the transition committed.
    AfterCommit,
    /// Its events persisted, its commit never observed.
    BetweenPersistAndCommit,
}

#[derive(Debug, Clone)]
enum Op {
    /// `seat` reveals: its own salt and bid, or (dishonest) a pool salt and
    /// another bid, which always mismatches.
    Reveal {
        seat: usize,
        honest: bool,
        salt: usize,
        crash: Crash,
    },
    Advance {
        crash: Crash,
    },
}

#[derive(Debug, Clone)]
struct Case {
    /// Each seat's commitment salt (often the same one).
    salts: [usize; 2],
    bids: [u64; 2],
    commit_crash: Crash,
    ops: Vec<Op>,
}

fn crash() -> impl Strategy<Value = Crash> {
    prop_oneof![4 => Just(Crash::None), 1 => Just(Crash::AfterCommit), 1 => Just(Crash::BetweenPersistAndCommit)]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0..2usize, any::<bool>(), 0..SALTS.len(), crash())
            .prop_map(|(seat, honest, salt, crash)| Op::Reveal { seat, honest, salt, crash }),
        2 => crash().prop_map(|crash| Op::Advance { crash }),
    ]
}

fn case() -> impl Strategy<Value = Case> {
    ([0..SALTS.len(), 0..SALTS.len()], [0..50u64, 0..50u64], crash(), prop::collection::vec(op(), 1..16))
        .prop_map(|(salts, bids, commit_crash, ops)| Case { salts, bids, commit_crash, ops })
}

/// A reveal a seat holds in the open window.
#[derive(Debug, Clone, Copy)]
struct Pending {
    salt: &'static str,
    matches: bool,
}

/// Both hosts and the spec's models of their salt books.
struct Run {
    live: SimHost,
    crashy: SimHost,
    live_book: Book,
    crashy_book: Book,
    /// What rehydration rebuilds from the log so far.
    logged_book: Book,
    pending: [Option<Pending>; 2],
    ended: bool,
    submissions: u32,
}

fn host() -> SimHost {
    SimHost::new(game_options("conformance/sealed", SESSION, json(r#"{"maxBid":100}"#), &SEATS, Cadence::Turns))
}

fn salt_reuse(seat: usize) -> SessionWarning {
    SessionWarning {
        code: "salt_reuse".into(),
        message: MESSAGE.into(),
        participant_id: SEATS[seat].into(),
        commitment_id: 0,
    }
}

/// The spec's resolution of the reveal window against `book`: warnings, the
/// book after it, and the seat whose reveal mismatched (if any).
fn predict(book: &Book, pending: &[Option<Pending>; 2]) -> (Vec<SessionWarning>, Book, Option<usize>) {
    let mut book = book.clone();
    let mut warnings = Vec::new();
    for (seat, reveal) in pending.iter().enumerate() {
        let Some(reveal) = reveal else { continue };
        match book.get(reveal.salt) {
            Some(&owner) if owner != seat => warnings.push(salt_reuse(seat)),
            Some(_) => {}
            None => {
                book.insert(reveal.salt, seat);
            }
        }
        if !reveal.matches {
            return (warnings, book, Some(seat));
        }
    }
    (warnings, book, None)
}

/// First seen wins.
fn note(book: &mut Book, salt: &'static str, seat: usize) {
    book.entry(salt).or_insert(seat);
}

impl Run {
    fn new() -> Self {
        Run {
            live: host(),
            crashy: host(),
            live_book: Book::new(),
            crashy_book: Book::new(),
            logged_book: Book::new(),
            pending: [None, None],
            ended: false,
            submissions: 0,
        }
    }

    /// Run `step` on both hosts (`crashy` crashing as told) and return both
    /// results; the hosts must agree on everything durable.
    fn both(&mut self, step: &Step, crash: Crash) -> (PreparedResult, PreparedResult) {
        let live = self.live.execute(step).unwrap_or_else(|e| panic!("{step:?}: {e}"));
        let crashy = match crash {
            Crash::None | Crash::AfterCommit => self.crashy.execute(step).unwrap_or_else(|e| panic!("{step:?}: {e}")),
            Crash::BetweenPersistAndCommit => {
                let prepared = self.crashy.prepare(step).unwrap_or_else(|e| panic!("{step:?}: {e}"));
                self.crashy.persist(&prepared);
                prepared.result().clone()
            }
        };
        if !matches!(crash, Crash::None) {
            self.crashy.crash_and_rehydrate();
            self.crashy.resync_clients();
            self.crashy_book = self.logged_book.clone();
        }
        assert_eq!(self.crashy.kernel.digest(), self.live.kernel.digest(), "{step:?}: digests");
        assert_eq!(self.crashy.store, self.live.store, "{step:?}: transcripts");
        (live, crashy)
    }

    fn commit_round(&mut self, case: &Case) {
        for seat in 0..2 {
            let binding = CommitmentBinding { session_id: SESSION, seat: SEATS[seat], commitment_id: 0, window_ref: 0 };
            let payload = obj! { "bid" => case.bids[seat] }.into();
            let hash = commitment_hash(&binding, SALTS[case.salts[seat]], &payload).expect("a well-formed commitment");
            self.both(
                &ingest(SEATS[seat], &format!("{}-commit", SEATS[seat]), &format!(r#"{{"commit":"{hash}"}}"#)),
                Crash::None,
            );
        }
        let (live, crashy) = self.both(&advance(), case.commit_crash);
        assert_eq!(warnings(&live), vec![], "commits consult no salt");
        assert_eq!(warnings(&crashy), vec![]);
    }

    fn reveal(&mut self, case: &Case, seat: usize, honest: bool, salt: usize, crash: Crash) {
        if self.ended || self.pending[seat].is_some() {
            return;
        }
        let own = SALTS[case.salts[seat]];
        let (salt, bid) = if honest { (own, case.bids[seat]) } else { (SALTS[salt], case.bids[seat] + 1) };
        self.submissions += 1;
        let id = format!("{}-reveal-{}", SEATS[seat], self.submissions);
        let command = format!(r#"{{"reveal":{{"salt":"{salt}","bid":{bid}}}}}"#);
        self.both(&ingest(SEATS[seat], &id, &command), crash);
        self.pending[seat] = Some(Pending { salt, matches: honest });
    }

    fn advance(&mut self, crash: Crash) {
        if self.ended || self.pending.iter().any(Option::is_none) {
            return;
        }
        let (live_expected, live_book, rejected) = predict(&self.live_book, &self.pending);
        let (crashy_expected, crashy_book, crashy_rejected) = predict(&self.crashy_book, &self.pending);
        assert_eq!(rejected, crashy_rejected, "a mismatch does not depend on the salt book");
        let consulted: Vec<&str> = self.pending.iter().flatten().map(|p| p.salt).collect();
        let books_agree = consulted.iter().all(|salt| self.live_book.get(salt) == self.crashy_book.get(salt));
        // The log: a rejection records only the rejected reveal; a resolution every reveal.
        match rejected {
            Some(seat) => note(&mut self.logged_book, self.pending[seat].expect("pending").salt, seat),
            None => {
                for (seat, reveal) in self.pending.iter().enumerate() {
                    note(&mut self.logged_book, reveal.expect("pending").salt, seat);
                }
            }
        }
        self.live_book = live_book;
        self.crashy_book = crashy_book;
        let (live, crashy) = self.both(&advance(), crash);
        assert_eq!(warnings(&live), live_expected, "live warnings");
        assert_eq!(warnings(&crashy), crashy_expected, "warnings of the rehydrated kernel");
        if books_agree {
            assert_eq!(warnings(&live), warnings(&crashy), "the books agree on every consulted salt");
        }
        match rejected {
            Some(seat) => self.pending[seat] = None,
            None => self.ended = true,
        }
    }
}

fn warnings(result: &PreparedResult) -> Vec<SessionWarning> {
    match result {
        PreparedResult::Advance(summary) => summary.warnings.clone(),
        other => panic!("not an advance: {other:?}"),
    }
}

fn config() -> ProptestConfig {
    // Modest by default so CI stays fast; PROPTEST_CASES overrides.
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(128);
    ProptestConfig { cases, ..ProptestConfig::default() }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn salt_book_warnings_and_digests_agree_live_and_after_rehydrate(case in case()) {
        let mut run = Run::new();
        run.commit_round(&case);
        for op in &case.ops {
            match *op {
                Op::Reveal { seat, honest, salt, crash } => run.reveal(&case, seat, honest, salt, crash),
                Op::Advance { crash } => run.advance(crash),
            }
        }
        // Finish honestly: each held mismatching reveal is rejected first
        // (one per advance), then the auction settles.
        for _ in 0..3 {
            for seat in 0..2 {
                run.reveal(&case, seat, true, 0, Crash::None);
            }
            run.advance(Crash::AfterCommit);
        }
        prop_assert!(run.ended);
    }
}
