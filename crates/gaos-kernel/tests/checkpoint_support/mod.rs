//! A seeded player for the checkpoint tests: it drives a conformance game
//! (gaos-games) through the kernel the way a host does — persist the
//! prepared events, then commit — choosing legal commands, extensions,
//! sealed-bid commits and (sometimes mismatching) reveals with its own
//! deterministic generator, and optionally checkpoints and compacts as it
//! goes.

// Each test binary uses a different part of this module.
#![allow(dead_code)]

use std::sync::Arc;

use gaos_games::GameRegistry;
use gaos_json::{Value, canonical_json, obj};
use gaos_kernel::commitment::{CommitmentBinding, commitment_hash};
use gaos_kernel::{
    Cadence, CommandSubmission, CompactRequest, DynReducer, Game, KernelCheckpoint, KernelError, KernelOptions,
    MemoryHistory, Prepared, SessionEvent, SessionKernel, SessionLimits,
};

/// The conformance games and a level that makes each play long enough to
/// hold many crash points.
pub fn conformance_games() -> Vec<(&'static str, Value)> {
    vec![
        ("conformance/counter", gaos_json::parse(r#"{"rounds":12}"#).expect("json")),
        ("conformance/hilo", gaos_json::parse(r#"{"handSize":8,"maxCard":9}"#).expect("json")),
        ("conformance/tictactoe", Value::Null),
        ("conformance/race", gaos_json::parse(r#"{"length":12}"#).expect("json")),
        ("conformance/sealed", gaos_json::parse(r#"{"maxBid":100}"#).expect("json")),
    ]
}

/// Options of session `session` of `game_id` at `level`.
pub fn options_for(
    game_id: &str,
    level: &Value,
    session: &str,
    limits: SessionLimits,
) -> Arc<KernelOptions<DynReducer>> {
    let game: Arc<dyn Game> = GameRegistry::builtin().get(game_id).expect("a built-in game");
    // `null`: the game's first declared level.
    let level = if level.is_null() { game.levels()[0].level.clone() } else { level.clone() };
    let mut options = KernelOptions::builder(&game, session).level("default", level).cadence(game.cadence()).build();
    options.limits = limits;
    Arc::new(options)
}

/// A checkpoint the player stored, with the revision it holds.
#[derive(Clone)]
pub struct Stored {
    pub revision: u64,
    pub json: String,
}

pub struct Player {
    pub game: Arc<dyn Game>,
    pub options: Arc<KernelOptions<DynReducer>>,
    pub kernel: SessionKernel<DynReducer>,
    /// Every persisted event, in order (the embedder's durable log).
    pub store: Vec<SessionEvent>,
    /// The durable history lookup over `store`.
    pub history: Arc<MemoryHistory>,
    /// Checkpoints taken, oldest first.
    pub checkpoints: Vec<Stored>,
    /// Every submission that was accepted, for retries.
    pub accepted: Vec<CommandSubmission>,
    rng: u32,
    next_submission: u64,
    /// Sealed bids: (salt, bid) per seat, chosen at commit time.
    sealed: Vec<(String, String, u64)>,
}

impl Player {
    pub fn new(options: Arc<KernelOptions<DynReducer>>, seed: u32) -> Self {
        let game: Arc<dyn Game> = GameRegistry::builtin().get(&options.game.id).expect("a built-in game");
        let kernel = SessionKernel::from_shared(Arc::clone(&options)).expect("valid options");
        Player {
            game,
            options,
            kernel,
            store: Vec::new(),
            history: Arc::new(MemoryHistory::new()),
            checkpoints: Vec::new(),
            accepted: Vec::new(),
            rng: seed | 1,
            next_submission: 0,
            sealed: Vec::new(),
        }
    }

    /// xorshift32: uniform enough for choosing among a few commands.
    pub fn random(&mut self, n: u32) -> u32 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 17;
        self.rng ^= self.rng << 5;
        self.rng % n.max(1)
    }

    /// Persist, then commit (the host's order).
    pub fn persist_and_commit(&mut self, mut prepared: Prepared<gaos_kernel::AnyState>) {
        self.store.extend(prepared.events().iter().cloned());
        self.history.record(prepared.events());
        self.kernel.commit(&mut prepared).expect("a fresh transition commits");
    }

    /// Take a checkpoint of the live state and store it.
    pub fn store_checkpoint(&mut self) -> KernelCheckpoint {
        let checkpoint = self.kernel.checkpoint().expect("conformance games checkpoint");
        self.checkpoints.push(Stored { revision: checkpoint.transition_revision(), json: checkpoint.to_json() });
        checkpoint
    }

    /// Store the compacted checkpoint and compact onto it.
    pub fn compact(&mut self) {
        let checkpoint = self.kernel.compacted_checkpoint().expect("conformance games checkpoint");
        self.checkpoints.push(Stored { revision: checkpoint.transition_revision(), json: checkpoint.to_json() });
        let request = CompactRequest {
            checkpoint_digest: checkpoint.integrity_digest(),
            checkpoint_durably_committed: true,
            history_durably_committed: true,
        };
        let history: Arc<dyn gaos_kernel::HistoryLookup> = self.history.clone();
        self.kernel.compact(&checkpoint, request, history).expect("compaction of a durable checkpoint");
        assert_eq!(
            self.kernel.checkpoint().expect("checkpoint").to_json(),
            checkpoint.to_json(),
            "the compacted checkpoint is the checkpoint of the compacted kernel"
        );
    }

    fn submission(&mut self, seat: &str, command: Value) -> CommandSubmission {
        self.next_submission += 1;
        let id = format!("{seat}-{}", self.next_submission);
        CommandSubmission::new(&self.options.session_id, self.kernel.cursor(), seat, &id, command)
    }

    /// A command for `seat` in the open window.
    fn command_for(&mut self, seat: &str) -> Value {
        if self.options.game.id == "conformance/sealed" {
            return self.sealed_command(seat);
        }
        let view = self.kernel.observe(seat).expect("declared seat");
        let legal = self.game.legal_actions(&view, seat);
        assert!(!legal.is_empty(), "{} offers {seat} no command in {}", self.options.game.id, canonical_json(&view));
        let pick = self.random(legal.len() as u32) as usize;
        legal[pick].clone()
    }

    /// Commit a bid at cursor 0, reveal it at cursor 1 (one reveal in four
    /// with the wrong bid: a `rejection`).
    fn sealed_command(&mut self, seat: &str) -> Value {
        if self.kernel.cursor() == 0 {
            let salt = format!("{:08x}{:08x}{:08x}{:08x}", self.random(u32::MAX), self.random(9), 7u32, self.rng);
            let bid = u64::from(self.random(101));
            let payload: Value = obj! { "bid" => bid }.into();
            let binding =
                CommitmentBinding { session_id: &self.options.session_id, seat, commitment_id: 0, window_ref: 0 };
            let hash = commitment_hash(&binding, &salt, &payload).expect("hashable");
            self.sealed.retain(|(s, ..)| s != seat);
            self.sealed.push((seat.to_owned(), salt, bid));
            return obj! { "commit" => hash }.into();
        }
        let (_, salt, bid) = self.sealed.iter().find(|(s, ..)| s == seat).cloned().expect("committed before");
        let bid = if self.random(4) == 0 { bid + 1 } else { bid };
        obj! { "reveal" => obj! { "salt" => salt, "bid" => bid } }.into()
    }

    /// One committed transition; false once the game has ended.
    pub fn step(&mut self) -> bool {
        if self.kernel.is_terminal() {
            return false;
        }
        if self.random(12) == 0 {
            let record = obj! { "note" => self.random(1000) };
            let prepared = self.kernel.prepare_extension("test/notes", &record.into()).expect("an extension");
            self.persist_and_commit(prepared);
            return true;
        }
        let awaiting = self.kernel.awaiting_seats();
        let ticks = matches!(self.options.cadence, Cadence::Ticks(_));
        let advance = awaiting.is_empty() || (ticks && self.random(3) == 0);
        if advance {
            let target = ticks.then(|| self.kernel.tick() as f64);
            let prepared = self.kernel.prepare_advance(target).expect("the window resolves");
            self.persist_and_commit(prepared);
            return true;
        }
        let seat = awaiting[self.random(awaiting.len() as u32) as usize].clone();
        let command = self.command_for(&seat);
        let submission = self.submission(&seat, command);
        let prepared = self.kernel.prepare_ingest(&submission).expect("a legal command is accepted");
        self.persist_and_commit(prepared);
        self.accepted.push(submission);
        true
    }

    /// Play to the end (or `max` transitions), checkpointing every
    /// `checkpoint_every` transitions and compacting every `compact_every`.
    pub fn play(&mut self, max: usize, checkpoint_every: Option<u64>, compact_every: Option<u64>) {
        for _ in 0..max {
            if !self.step() {
                break;
            }
            let revision = self.kernel.transition_revision();
            if compact_every.is_some_and(|n| revision.is_multiple_of(n)) {
                self.compact();
            } else if checkpoint_every.is_some_and(|n| revision.is_multiple_of(n)) {
                self.store_checkpoint();
            }
        }
    }
}

/// Events of `store` up to and including transition `revision`.
pub fn prefix(store: &[SessionEvent], revision: u64) -> Vec<SessionEvent> {
    store.iter().filter(|e| e.transition_revision <= revision).cloned().collect()
}

/// Events of `store` after `after`, up to and including `revision`.
pub fn between(store: &[SessionEvent], after: u64, revision: u64) -> Vec<SessionEvent> {
    store.iter().filter(|e| e.transition_revision > after && e.transition_revision <= revision).cloned().collect()
}

/// Everything an observer can ask two kernels, as one comparable text:
/// counters, digest, every seat's view and snapshot (rejection notices after
/// `after`), the window, and the answer to a retry of every submission in
/// `retries`.
pub fn observable(kernel: &SessionKernel<DynReducer>, after: u64, retries: &[CommandSubmission]) -> String {
    let mut out = format!(
        "revision {} cursor {} tick {} digest {} status {} awaiting {:?}\n",
        kernel.transition_revision(),
        kernel.cursor(),
        kernel.tick(),
        kernel.digest(),
        kernel.status(),
        kernel.awaiting_seats()
    );
    for seat in &kernel.options().seats {
        let snapshot = kernel.snapshot(seat, Some(after)).expect("a snapshot");
        out.push_str(&format!(
            "{seat}: rev {} view {} rejections {}\n",
            kernel.view_revision(seat).expect("declared"),
            kernel.observe_canonical(seat).expect("declared"),
            canonical_json(&gaos_json::to_value(&snapshot.rejections).expect("json"))
        ));
    }
    out.push_str(&format!("window {}\n", canonical_json(&gaos_json::to_value(kernel.window()).expect("json"))));
    for submission in retries {
        let answer = match kernel.prepare_ingest(submission) {
            Ok(prepared) => format!("ok {:?} events {}", prepared.result(), prepared.events().len()),
            Err(e) => answer_of(&e),
        };
        let accepted =
            kernel.was_accepted(&submission.participant_id, submission.submission_id.as_deref().unwrap_or(""));
        out.push_str(&format!("retry {:?}: {answer} accepted {accepted}\n", submission.submission_id));
    }
    out
}

pub fn answer_of(e: &KernelError) -> String {
    format!("{} {}: {e}", e.kind(), e.code())
}

/// A checkpoint's text without its salt book (and so without its integrity
/// digest). The salt book is the one piece of protocol state a live kernel
/// and a rehydrated one may legitimately disagree on (kernel spec §4.12: the
/// log records only the rejected reveal of a mismatching resolution, the
/// live book also the reveals checked before it); it feeds only
/// `salt_reuse` warnings, never events or views.
pub fn without_salts(checkpoint: &KernelCheckpoint) -> String {
    let mut value = checkpoint.to_value();
    let map = value.as_object_mut().expect("an object");
    map.remove("integrityDigest");
    map.get_mut("protocol").and_then(Value::as_object_mut).expect("protocol").remove("seenSalts");
    canonical_json(&value)
}
