//! Episodes: the levels of a multi-level run (`run_spec.rs`) played one
//! after another in one session.
//!
//! One kernel owns exactly one level. When a level ends and the run's advance
//! policy says another follows, the actor swaps in a fresh kernel for the next
//! level; nothing is written for the swap itself, because which level is live
//! is a pure function of the durable transcripts (a level is live once its
//! predecessor ended in a way the policy advances on), so a restart lands on
//! the same level (`rehydrate_run`).
//!
//! What seats see stays one session: envelope revisions keep increasing across
//! levels (`revision_base` + the level kernel's cursor; a level starts one past
//! the last revision of the level before), so tick ids and default submission
//! ids never repeat, and `gaos.session.episode {id, index}` names the level.
//! Level `i > 0` stores its events under `<sessionId>/level/<i>` (a `/` is
//! never part of a session id).
//!
//! A run that advances on reset (`advanceOn: "reset"`) also needs its
//! [`ResetMark`]: the one write that says a seat started the next level
//! (`actor/reset.rs`), so a level of such a run is live once its
//! predecessor ended and its reset is durable.

use gaos_kernel::GameStatus;
use gaos_session::ErrorCode;
use std::sync::Arc;

use gaos_json::{Map, Value};
use gaos_kernel::event::SessionTranscript;
use gaos_kernel::protocol::make_tick_id;
use gaos_kernel::replay::{RunFinalizeOptions, finalize_run_replay};
use gaos_kernel::{CommandSubmission, DynReducer, EventBody, Game, SessionEvent, SessionKernel};

use super::SessionActor;
use super::finalize::identity_perm;
use crate::config::SessionConfig;
use crate::envelope::{self, EpisodeMark, Finalization};
use crate::error::HostError;
use crate::run_spec::AdvanceOn;
use crate::storage::StoreReader;

/// The last level a seat's reset started, and the session revision the
/// reset was asked at (an exact retry names it again).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ResetMark {
    pub level: usize,
    pub revision: u64,
}

impl ResetMark {
    /// As persisted (`session_state` `runReset`).
    pub(crate) fn to_json(self) -> String {
        format!(r#"{{"level":{},"revision":{}}}"#, self.level, self.revision)
    }

    pub(crate) fn parse(text: &str) -> Result<Self, String> {
        let value = gaos_json::parse(text).map_err(|e| format!("the stored run reset is not JSON: {e}"))?;
        let field = |name: &str| {
            value.get(name).and_then(Value::as_u64).ok_or_else(|| format!("the stored run reset has no {name}"))
        };
        Ok(ResetMark { level: field("level")? as usize, revision: field("revision")? })
    }
}

/// Where a session is in its run; a session that is not a run stays at
/// level 0 with no offset.
#[derive(Debug, Default)]
pub(crate) struct Episodes {
    index: usize,
    /// Added to the live kernel's cursor to give the envelope revision.
    revision_base: u64,
    /// Added to the live kernel's transition revisions to give what streams
    /// and snapshots say (`streams.rs`), so they too keep increasing.
    pub(super) transition_base: u64,
    /// The transcripts of the levels already played, in order.
    pub(super) finished: Vec<SessionTranscript>,
    /// The last reset a seat made (runs that advance on reset).
    pub(super) reset: Option<ResetMark>,
}

/// The storage key of level `index`'s events.
pub(crate) fn events_key(session_id: &str, index: usize) -> String {
    if index == 0 { session_id.to_owned() } else { format!("{session_id}/level/{index}") }
}

/// The status of a kernel's terminal resolution (`None` while it plays).
fn ended_status(kernel: &SessionKernel<DynReducer>) -> Option<GameStatus> {
    if !kernel.is_terminal() {
        return None;
    }
    kernel.events().iter().rev().find_map(|e| match &e.body {
        EventBody::Resolution { result, .. } => Some(result.status),
        _ => None,
    })
}

fn fresh_level(
    config: &SessionConfig,
    game: &Arc<dyn Game>,
    index: usize,
) -> Option<Result<SessionKernel<DynReducer>, String>> {
    let options = config.level_options(game, index)?;
    Some(SessionKernel::from_shared(Arc::new(options)).map_err(|e| e.to_string()))
}

impl Episodes {
    /// The session revision of `kernel`'s window (`kernel` is the live level).
    pub(crate) fn revision_at_start(&self, kernel: &SessionKernel<DynReducer>) -> u64 {
        self.revision_base + kernel.cursor()
    }

    /// Move past a finished level to the fresh `next` one.
    fn advance(&mut self, finished: &SessionKernel<DynReducer>) {
        self.revision_base += finished.cursor() + 1;
        self.transition_base += finished.transition_revision() + 1;
        self.finished.push(finished.live_transcript());
        self.index += 1;
    }
}

/// After a restart: from level 0's rehydrated kernel, walk on through every
/// level the run reached, each rehydrated from its own stored events.
pub(crate) async fn rehydrate_run(
    config: &SessionConfig,
    game: &Arc<dyn Game>,
    reader: &Arc<dyn StoreReader>,
    first: SessionKernel<DynReducer>,
    reset: Option<ResetMark>,
) -> Result<(SessionKernel<DynReducer>, Episodes), HostError> {
    let mut kernel = first;
    let mut episodes = Episodes { reset, ..Episodes::default() };
    while let Some(options) = next_level_options(config, game, episodes.index, &kernel, reset) {
        let options = Arc::new(options);
        let key = events_key(&config.session_id, episodes.index + 1);
        let reader = Arc::clone(reader);
        let stored = tokio::task::spawn_blocking(move || reader.load_events(&key))
            .await
            .map_err(|e| HostError::internal(format!("loading a level's events failed: {e}")))?
            .map_err(|e| HostError::unavailable(format!("loading a level's events failed: {e}")))?;
        let mut events = Vec::with_capacity(stored.len());
        for event in &stored {
            let value = gaos_json::parse(&event.body).map_err(|e| {
                HostError::internal(format!(
                    "event {} of {} level {} is not JSON: {e}",
                    event.seq,
                    config.session_id,
                    episodes.index + 1
                ))
            })?;
            events.push(SessionEvent::from_value(&value).map_err(HostError::internal)?);
        }
        let next = SessionKernel::rehydrate(options, None, events).map_err(|e| {
            HostError::internal(format!(
                "level {} of {} failed to rehydrate: {e}",
                episodes.index + 1,
                config.session_id
            ))
        })?;
        episodes.advance(&kernel);
        kernel = next;
    }
    Ok((kernel, episodes))
}

/// The options of the level after `index` when `kernel` (level `index`)
/// ended and the run advances (on reset: once the reset is recorded).
fn next_level_options(
    config: &SessionConfig,
    game: &Arc<dyn Game>,
    index: usize,
    kernel: &SessionKernel<DynReducer>,
    reset: Option<ResetMark>,
) -> Option<gaos_kernel::KernelOptions<DynReducer>> {
    let status = ended_status(kernel)?;
    let run = config.run.as_ref()?;
    if !run.advances_after(index, status) {
        return None;
    }
    if run.advance_on == AdvanceOn::Reset && reset.is_none_or(|r| r.level <= index) {
        return None;
    }
    config.level_options(game, index + 1)
}

/// Why the live level of a run cannot be followed by a reset now, if it
/// cannot (`actor/reset.rs` turns it into the refusal).
pub(super) enum NoNextLevel {
    /// The level is still being played.
    InPlay,
    /// The run ended with this level (its last, or a loss under win-to-advance).
    RunOver { status: GameStatus, last: bool },
}

impl SessionActor {
    /// The envelope revision of the live window.
    pub(super) fn revision(&self) -> u64 {
        self.episodes.revision_base + self.kernel.cursor()
    }

    /// The revision a prepared resolution of the live level reaches at `cursor`.
    pub(super) fn revision_at(&self, cursor: u64) -> u64 {
        self.episodes.revision_base + cursor
    }

    /// `gaos.session.episode` of the live level.
    pub(super) fn episode_mark(&self) -> EpisodeMark {
        self.episode_mark_ended(self.live_level_ended())
    }

    /// How the live level ended, as committed (`None`: still in play).
    pub(super) fn live_level_ended(&self) -> Option<GameStatus> {
        ended_status(&self.kernel)
    }

    /// `gaos.session.episode` of the live level once it ended with `ended`
    /// (`None`: still in play), for an answer built from a resolution before
    /// the kernel commits it.
    pub(super) fn episode_mark_ended(&self, ended: Option<GameStatus>) -> EpisodeMark {
        let mut mark = self.mark_of(self.episodes.index);
        mark.awaiting_reset = self.config.run.as_ref().is_some_and(|run| {
            run.advance_on == AdvanceOn::Reset
                && ended.is_some_and(|status| run.advances_after(self.episodes.index, status))
        });
        mark
    }

    fn mark_of(&self, index: usize) -> EpisodeMark {
        match &self.config.run {
            None => EpisodeMark::single(&self.id),
            Some(run) => EpisodeMark {
                id: format!("{}:level-{index}", self.id),
                index: index as u64,
                level_id: Some(run.levels[index].id.clone()),
                awaiting_reset: false,
            },
        }
    }

    /// Where the live level's events are stored.
    pub(super) fn events_key(&self) -> String {
        events_key(&self.id, self.episodes.index)
    }

    /// Whether an accepted submission may belong to an earlier level (its
    /// stored answer is then looked up even though this kernel never saw it).
    pub(super) fn has_earlier_levels(&self) -> bool {
        self.episodes.index > 0
    }

    /// A submission as the live level's kernel reads it: the session's
    /// revision and tick id turned into the level's own.
    pub(super) fn level_submission(&self, mut submission: CommandSubmission) -> Result<CommandSubmission, HostError> {
        let base = self.episodes.revision_base;
        if base == 0 {
            return Ok(submission);
        }
        let revision = submission.revision;
        if revision.fract() != 0.0 || revision < 0.0 {
            return Ok(submission); // the kernel's own check names the defect
        }
        let revision = revision as u64;
        if revision < base {
            return Err(HostError::new(
                ErrorCode::StaleTick,
                format!(
                    "revision {revision} belongs to an earlier level of this run; observe the current one ({})",
                    self.revision()
                ),
            ));
        }
        if submission.tick_id == make_tick_id(&self.id, revision) {
            submission.tick_id = make_tick_id(&self.id, revision - base);
        }
        submission.revision = (revision - base) as f64;
        Ok(submission)
    }

    /// The first envelope of the next level as `seat` will see it, when the
    /// resolution that ends the live level at `cursor` with `status` makes
    /// the run advance (what the act that ended the level is answered).
    pub(super) fn next_level_envelope(
        &self,
        seat: &str,
        status: GameStatus,
        cursor: u64,
        ext_extra: Map,
    ) -> Option<gaos_kernel::TickEnvelope> {
        let run = self.config.run.as_ref()?;
        if !run.advances_after(self.episodes.index, status) || run.advance_on == AdvanceOn::Reset {
            return None;
        }
        let next = match fresh_level(&self.config, &self.game, self.episodes.index + 1)? {
            Ok(kernel) => kernel,
            Err(e) => {
                tracing::error!(session = %self.id, error = %e, "the run's next level cannot start");
                return None;
            }
        };
        let view = next.observe(seat).ok()?;
        let legal = self.game.legal_actions(&view, seat);
        let tick = envelope::observation(&view, legal, false);
        let mut ext = envelope::base_extensions(&self.mark_of(self.episodes.index + 1), &Finalization::Live);
        ext.extend(ext_extra);
        Some(envelope::envelope(&self.id, self.revision_at(cursor) + 1, tick, None, ext))
    }

    /// After a committed transition: when the live level ended and the run
    /// advances, start the next level (several, should one end at once).
    pub(super) fn advance_episode_if_due(&mut self) {
        while let Some(options) =
            next_level_options(&self.config, &self.game, self.episodes.index, &self.kernel, self.episodes.reset)
        {
            let next = match SessionKernel::from_shared(Arc::new(options)) {
                Ok(kernel) => kernel,
                Err(e) => {
                    tracing::error!(session = %self.id, error = %e, "the run's next level cannot start");
                    return;
                }
            };
            self.episodes.advance(&self.kernel);
            self.kernel = next;
            self.transcript = self.transcript.next_level(&self.kernel);
            // The level's start is no transition of its own: streams get its
            // full snapshot now, not a patch against a state they never had.
            self.publish_level_start();
            tracing::info!(session = %self.id, level = self.episodes.index, "the run advanced to its next level");
        }
    }

    /// Whether a run goes on at once into its next level when the live level
    /// ends with `status` (what `advance_episode_if_due` will do after the
    /// commit): the policy advances, and the next level starts at the
    /// level's end or its reset was already asked.
    pub(super) fn level_end_continues(&self, status: GameStatus) -> bool {
        let Some(run) = self.config.run.as_ref() else { return false };
        run.advances_after(self.episodes.index, status)
            && self.episodes.index + 1 < run.levels.len()
            && (run.advance_on != AdvanceOn::Reset
                || self.episodes.reset.is_some_and(|r| r.level > self.episodes.index))
    }

    /// Whether the live level has ended so that a reset may start the next.
    pub(super) fn next_level_available(&self) -> Result<(), NoNextLevel> {
        let Some(status) = ended_status(&self.kernel) else { return Err(NoNextLevel::InPlay) };
        let advances = self.config.run.as_ref().is_some_and(|run| run.advances_after(self.episodes.index, status));
        if advances {
            return Ok(());
        }
        let last = self.config.run.as_ref().is_none_or(|run| self.episodes.index + 1 >= run.levels.len());
        Err(NoNextLevel::RunOver { status, last })
    }

    /// Every level a run played, in order, the live one last (`None` for a
    /// session that is not a run). A run is never compacted, so its
    /// kernels hold every event.
    pub(super) fn run_transcripts(&self) -> Option<Vec<SessionTranscript>> {
        self.config.run.as_ref()?;
        let mut transcripts = self.episodes.finished.clone();
        transcripts.push(self.kernel.live_transcript());
        Some(transcripts)
    }

    /// The run replay (`finalize_run_replay` over every level played), or
    /// `None` for a session that is not a run.
    pub(super) fn run_replay_text(&self) -> Option<Result<String, HostError>> {
        let run = self.config.run.as_ref()?;
        let transcripts = self.run_transcripts()?;
        let replay = self.replay_extensions().and_then(|extensions| {
            let options = RunFinalizeOptions {
                seed: self.config.seed,
                perm: identity_perm(transcripts.iter().flat_map(|t| t.events.iter())),
                advance_policy: run.advance,
                visibility: None,
                extensions,
                include_host_time: false,
            };
            finalize_run_replay(&transcripts, &options)
                .map(|artifact| artifact.to_jsonl())
                .map_err(|e| HostError::internal(format!("finalizing the run replay failed: {e}")))
        });
        Some(replay)
    }
}
