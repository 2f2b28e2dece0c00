//! Per-record checks beside re-simulation: command and timeout mappings,
//! timeout placement, checkpoint digests and (strict) window invariants.

use super::{InputPath, LevelRun, Recheck, projected, same_projection};
use crate::action::SubmittedAction;
use crate::digest::kernel_digest;
use crate::event::ResolutionCause;
use crate::game::{CommandContext, TimeoutContext, TimeoutInput};
use crate::replay::format::describe;
use crate::replay::model::{InputView, LevelView, RecordBody, RecordView, ResolutionView, TimeoutView};
use crate::view::participants_of;

impl<'v> Recheck<'v> {
    /// `canonicalCommand` must map, through the game's command mapper, to
    /// the recorded action.
    pub(super) fn check_command(
        &mut self,
        line: usize,
        path: InputPath,
        input: &InputView,
        authored: &SubmittedAction,
        tick: u64,
    ) {
        let (Some(submission_id), Some(text), Some(cursor), Some(seat)) =
            (input.submission_id(), input.canonical_command(), input.cursor(), authored.seat.as_deref())
        else {
            return;
        };
        let command = match gaos_json::parse(text) {
            Ok(command) => command,
            Err(e) => {
                self.problems.at(line, path.field("canonicalCommand"), format!("is not JSON: {e}"));
                return;
            }
        };
        if !self.view.version.has_integrity_rules() && gaos_json::canonical_json(&command) != text {
            self.problems.at(line, path.field("canonicalCommand"), "is not canonical JSON text");
            return;
        }
        if !self.game.has_command_mapper() {
            if !self.noted_no_command_mapper {
                self.noted_no_command_mapper = true;
                self.note("recorded commands were not re-mapped: the adapter has no command mapper".into());
            }
            return;
        }
        let ctx =
            CommandContext { session_id: &self.view.session_id, participant_id: seat, submission_id, cursor, tick };
        match self.game.command_to_action(&command, &ctx) {
            Err(e) => self.problems.at(
                line,
                path.field("canonicalCommand"),
                format!("the game's command mapping refuses {text}: {e}"),
            ),
            Ok(mut mapped) => {
                if mapped.seat.is_none() {
                    mapped.seat = Some(seat.to_owned());
                }
                if !same_projection(&mapped, authored) {
                    self.problems.at(
                        line,
                        path.field(""),
                        format!(
                            "the game maps canonicalCommand {text} to {}, but the record holds {}",
                            describe(&projected(&mapped), 200),
                            describe(&projected(authored), 200)
                        ),
                    );
                }
            }
        }
    }

    /// A timeout resolution's system input must be what the game's timeout
    /// mapper derives (when the game has one).
    pub(super) fn check_timeout_mapping(
        &mut self,
        level: &LevelView,
        line: usize,
        timeout: &TimeoutView,
        timeout_line: usize,
        system: &SubmittedAction,
    ) {
        let input = TimeoutInput {
            timeout_id: timeout.timeout_id.clone(),
            tick: timeout.tick as f64,
            participant_id: timeout.participant_id.clone(),
            reason: timeout.reason.clone(),
            timeout_policy_ref: timeout.timeout_policy_ref.clone(),
        };
        let ctx = TimeoutContext {
            session_id: self.view.session_id.clone(),
            game: self.view.game.clone(),
            level_id: level.id.clone(),
            level_version: level.version.clone(),
            level: level.level.clone(),
            seed: level.seed,
            participant_id: timeout.participant_id.clone(),
            window_ref: timeout.window_ref,
        };
        match self.game.timeout_to_action(&ctx, &input) {
            None => {
                if !self.noted_no_timeout_mapper {
                    self.noted_no_timeout_mapper = true;
                    self.note(
                        "timeout system inputs were replayed as recorded: the game has no timeout mapper to re-derive \
                         them"
                            .into(),
                    );
                }
            }
            Some(Err(e)) => {
                self.problems.at(line, "resolution.systemInput", format!("the game's timeout mapper fails here: {e}"))
            }
            Some(Ok(mut mapped)) => {
                if mapped.seat.is_none() {
                    mapped.seat = timeout.participant_id.clone();
                }
                if !same_projection(&mapped, system) {
                    self.problems.at(
                        line,
                        "resolution.systemInput",
                        format!(
                            "the game's timeout mapper derives {} for the timeout on line {timeout_line}, but the \
                             record holds {}",
                            describe(&projected(&mapped), 200),
                            describe(&projected(system), 200)
                        ),
                    );
                }
            }
        }
    }

    pub(super) fn timeout(
        &mut self,
        run: &mut LevelRun,
        record: &RecordView,
        index: usize,
        timeout: &TimeoutView,
        next: Option<&RecordView>,
    ) {
        run.pending_timeout = Some(index);
        if !self.strict {
            return;
        }
        let line = record.line;
        if timeout.timeout_policy_ref.is_none() && timeout.tick != timeout.window_ref {
            self.problems.at(
                line,
                "timeout.tick",
                format!("is {}, but windowRef is {}", timeout.tick, timeout.window_ref),
            );
        }
        if timeout.window_ref != run.cursor {
            self.problems.at(
                line,
                "timeout.windowRef",
                format!("is {}, but the open window of the level is {}", timeout.window_ref, run.cursor),
            );
        }
        if let Some(seat) = &timeout.participant_id
            && !self.seats.contains(seat)
        {
            self.problems.at(line, "timeout.participantId", format!("{seat} is not a seat of {}", self.view.game.id));
        }
        let followed = match next.map(|r| &r.body) {
            Some(RecordBody::Resolution(res)) => res.cause == ResolutionCause::Timeout,
            Some(RecordBody::CommitMismatch(m)) => m.tick == timeout.window_ref,
            _ => false,
        };
        if !followed {
            self.problems.at(
                line,
                "timeout",
                "must be directly followed by its timeout resolution (or the commit-mismatch that cancelled it)",
            );
        }
    }

    pub(super) fn checkpoint(&mut self, run: &LevelRun, record: &RecordView, tick: u64, digest: u32) {
        if !self.checkpoints {
            return;
        }
        if self.strict && tick != run.cursor {
            self.problems.at(
                record.line,
                "checkpoint.tick",
                format!("is {tick}, but the level is at tick {} after {} resolutions", run.cursor, run.cursor),
            );
        }
        let Some(state) = run.state.as_ref() else {
            return;
        };
        let expected = kernel_digest(&*self.reducer, state, &self.sorted_seats, run.cursor, run.cursor);
        if expected != digest {
            self.problems.at(
                record.line,
                "checkpoint.digest",
                format!("recorded {digest}, recomputed {expected} (kernel digest at cursor {})", run.cursor),
            );
        }
    }

    /// Strict: the window invariants a kernel guarantees for a resolution.
    pub(super) fn strict_window(
        &mut self,
        run: &LevelRun,
        record: &RecordView,
        res: &ResolutionView,
        pending_timeout: Option<usize>,
    ) {
        let line = record.line;
        let tick = res.tick.unwrap_or(0);
        if tick != run.cursor {
            self.problems.at(
                line,
                "resolution.tick",
                format!(
                    "is {tick}, but this is resolution {} of the level (a kernel resolves tick == cursor)",
                    run.cursor
                ),
            );
        }
        let mut participants = match participants_of(&run.view, &self.seats) {
            Ok(participants) => participants,
            Err(e) => {
                self.problems.at(line, "resolution", format!("the game's view names no valid participants: {e}"));
                return;
            }
        };
        participants.sort();
        let mut submitted: Vec<&str> = Vec::new();
        for (j, input) in res.inputs.iter().enumerate() {
            let path = InputPath::Listed(j);
            if !input.is_user_input() {
                if Some(j) != res.system_input || j + 1 != res.inputs.len() {
                    self.problems.at(
                        line,
                        path.field(""),
                        "only the timeout's system input, last in the list, comes without a submission id",
                    );
                }
                continue;
            }
            if input.cursor() != Some(run.cursor) {
                let found = input.cursor().map_or_else(|| "none".to_owned(), |c| c.to_string());
                self.problems.at(
                    line,
                    path.field("cursor"),
                    format!("must be the open window {}, found {found}", run.cursor),
                );
            }
            let Some(seat) = input.seat() else {
                self.problems.at(line, path.field("seat"), "a submission must name its seat");
                continue;
            };
            if !participants.iter().any(|p| p == seat) {
                let message = format!("{seat} is not a participant of this window {participants:?}");
                self.problems.at(line, path.field("seat"), message);
            }
            if submitted.contains(&seat) {
                self.problems.at(line, path.field("seat"), format!("{seat} submits twice in one window"));
            }
            if submitted.last().is_some_and(|last| *last > seat) {
                self.problems.at(line, path.field("seat"), "inputs must be in sorted participant order");
            }
            submitted.push(seat);
        }
        let all_submitted = participants.iter().all(|p| submitted.contains(&p.as_str()));
        match res.cause {
            ResolutionCause::Complete if !all_submitted => self.problems.at(
                line,
                "resolution.cause",
                format!("is complete, but not every participant of {participants:?} submitted"),
            ),
            ResolutionCause::Tick if all_submitted => self.problems.at(
                line,
                "resolution.cause",
                "is tick, but every participant submitted (that resolution is complete)",
            ),
            ResolutionCause::Timeout => {
                let timeout = pending_timeout.and_then(|i| match self.view.records.get(i).map(|r| &r.body) {
                    Some(RecordBody::Timeout(t)) => Some(t),
                    _ => None,
                });
                let Some(timeout) = timeout.filter(|_| run.previous_kind == Some("timeout")) else {
                    self.problems.at(
                        line,
                        "resolution.cause",
                        "a timeout resolution must directly follow its timeout record",
                    );
                    return;
                };
                let system_seat = res.system_input.and_then(|i| res.inputs[i].seat());
                if system_seat != timeout.participant_id.as_deref() {
                    self.problems.at(
                        line,
                        "resolution.systemInput.seat",
                        format!(
                            "must be the timed-out seat {}, found {}",
                            timeout.participant_id.as_deref().unwrap_or("(none: window-wide)"),
                            system_seat.unwrap_or("none")
                        ),
                    );
                }
                if let Some(seat) = timeout.participant_id.as_deref() {
                    if !participants.iter().any(|p| p == seat) {
                        let message = format!("{seat} is not a participant of this window");
                        self.problems.at(line, "resolution.systemInput.seat", message);
                    }
                    if submitted.contains(&seat) {
                        let message = format!("{seat} already submitted in this window");
                        self.problems.at(line, "resolution.systemInput.seat", message);
                    }
                }
            }
            _ => {}
        }
    }
}
