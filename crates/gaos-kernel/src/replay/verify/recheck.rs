//! The re-simulation loop: every level from `init`, one reducer call per
//! resolution (or legacy action line), then results and totals compared.

use std::collections::BTreeSet;
use std::sync::Arc;

use gaos_json::Value;

use super::{
    InputPath, LevelRun, MAX_EMPTY_TICKS, MAX_NOTES, Recheck, ReplayedLevel, Stage, Verdict, VerifyReport, number,
};
use crate::commitment::CommitmentBook;
use crate::error::GameError;
use crate::event::ResolutionCause;
use crate::game::{Game, isolated};
use crate::replay::format::describe;
use crate::replay::model::{LevelView, RecordBody, RecordView, ReplayView, ResolutionView};
use crate::replay::problem::ProblemList;
use crate::replay::verify::{GameResolver, LevelContext, VerifyOptions};
use crate::view::GameStatus;

impl<'v> Recheck<'v> {
    pub(super) fn new(
        view: &'v ReplayView,
        game: Arc<dyn Game>,
        resolver: &'v dyn GameResolver,
        options: VerifyOptions,
    ) -> Self {
        // One replay's re-simulation shares nothing observable with another's
        // (or with a live session of the same game).
        let game = isolated(&game);
        let mut seats = game.seats();
        if seats.is_empty() {
            // A game that declares no seats (a verifier adapter knows only
            // reducers) is checked against the seats the replay names.
            seats = seats_named_in(view);
        }
        let mut sorted_seats = seats.clone();
        sorted_seats.sort();
        Recheck {
            view,
            replay_game: Arc::clone(&game),
            resolver,
            reducer: game.reducer(),
            game,
            seats,
            sorted_seats,
            strict: options.strict,
            checkpoints: options.strict || options.checkpoints,
            problems: ProblemList::new(),
            unverifiable: ProblemList::new(),
            notes: Vec::new(),
            dropped_notes: 0,
            book: CommitmentBook::new(),
            actions: Vec::new(),
            empty_ticks: 0,
            noted_no_timeout_mapper: false,
            noted_no_command_mapper: false,
        }
    }

    pub(super) fn note(&mut self, note: String) {
        if self.notes.len() < MAX_NOTES {
            self.notes.push(note);
        } else {
            self.dropped_notes += 1;
        }
    }

    pub(super) fn run(mut self) -> VerifyReport {
        let view = self.view;
        let mut levels = Vec::with_capacity(view.levels.len());
        for level in &view.levels {
            let start = view.records.partition_point(|r| r.level_index < level.index);
            levels.push(self.level(level, start, view.level_records(level.index)));
        }
        if levels.iter().all(|l| l.status.is_some()) {
            let stars: f64 =
                levels.iter().filter(|l| l.status.as_deref() == Some("won")).map(|l| l.stars.unwrap_or(0.0)).sum();
            let actions: u64 = levels.iter().filter_map(|l| l.actions_used).sum();
            if stars != view.totals.total_stars {
                self.problems.at(
                    1,
                    "header.totals.totalStars",
                    format!("recorded {}, replayed {}", number(Some(view.totals.total_stars)), number(Some(stars))),
                );
            }
            if actions != view.totals.total_actions_used {
                self.problems.at(
                    1,
                    "header.totals.totalActionsUsed",
                    format!("recorded {}, replayed {actions}", view.totals.total_actions_used),
                );
            }
        }
        if self.dropped_notes > 0 {
            let dropped = self.dropped_notes;
            self.notes.push(format!("... and {dropped} more notes"));
        }
        let resolutions = levels.iter().map(|l| l.resolutions).sum();
        let (verdict, stage, problems) = if !self.problems.is_empty() {
            let mut problems = self.problems;
            problems.extend(self.unverifiable);
            (Verdict::Rejected, Some(Stage::Recheck), problems)
        } else if !self.unverifiable.is_empty() {
            (Verdict::Unverifiable, Some(Stage::Recheck), self.unverifiable)
        } else {
            (Verdict::AcceptedUnsigned, None, ProblemList::new())
        };
        VerifyReport { verdict, stage, problems, notes: self.notes, levels, resolutions, signatures: None }
    }

    pub(super) fn level(&mut self, level: &'v LevelView, start: usize, records: &'v [RecordView]) -> ReplayedLevel {
        let mut replayed = ReplayedLevel {
            index: level.index,
            status: None,
            stars: None,
            actions_used: None,
            outcome: None,
            resolutions: 0,
        };
        let dmath = view_dmath(self.view);
        let context = LevelContext { game: &self.view.game, level, dmath };
        match self.resolver.resolve_level(&self.replay_game, &context) {
            Some(game) => {
                if !Arc::ptr_eq(&game, &self.game) {
                    let game = isolated(&game);
                    self.reducer = game.reducer();
                    self.game = game;
                }
            }
            None => {
                self.unverifiable.at(
                    1,
                    format!("header.levels[{}]", level.index),
                    "the adapter resolves no reducer for this level, so it cannot be re-simulated",
                );
                return replayed;
            }
        }
        let state = match self.reducer.init(&level.level, level.seed) {
            Ok(state) => state,
            Err(e) => {
                self.problems.at(
                    1,
                    format!("header.levels[{}].level", level.index),
                    format!("the game cannot start this level (seed {}): {e}", level.seed),
                );
                return replayed;
            }
        };
        let view = self.reducer.view(&state);
        let mut run = LevelRun {
            state: Some(state),
            view,
            status: GameStatus::Playing,
            cursor: 0,
            terminal_line: None,
            last_resolution_tick: None,
            pending_timeout: None,
            previous_kind: None,
            legacy_last_tick: None,
            legacy_inferred_tick: 0,
            halted: false,
            resolutions: 0,
        };
        if !self.refresh_status(&mut run, 1, &format!("header.levels[{}].level", level.index)) {
            return replayed;
        }
        for (k, record) in records.iter().enumerate() {
            if run.halted {
                break;
            }
            match &record.body {
                RecordBody::Resolution(res) => {
                    let tick = res.tick.unwrap_or(0);
                    self.resolve(&mut run, level, record, res, tick, "resolution");
                }
                RecordBody::Action(res) => {
                    let tick = if self.view.grouped {
                        res.tick.unwrap_or(0)
                    } else {
                        match self.legacy_empty_ticks(&mut run, record, res) {
                            Some(tick) => tick,
                            None => break,
                        }
                    };
                    self.resolve(&mut run, level, record, res, tick, "action");
                }
                RecordBody::Timeout(timeout) => self.timeout(&mut run, record, start + k, timeout, records.get(k + 1)),
                RecordBody::Checkpoint { tick, digest } => self.checkpoint(&run, record, *tick, *digest),
                RecordBody::CommitMismatch(mismatch) => self.commit_mismatch(&mut run, level.index, record, mismatch),
                RecordBody::Interaction(_) => {
                    self.unverifiable.at(
                        record.line,
                        "interaction",
                        "interaction records change game state through the game's command classifier (RFC-020), \
                         which this verifier cannot run",
                    );
                    run.halted = true;
                }
                RecordBody::Extension { .. } | RecordBody::SeatSignature { .. } | RecordBody::Interest { .. } => {}
            }
            run.previous_kind = Some(record.body.kind());
        }
        replayed.resolutions = run.resolutions;
        if run.halted {
            return replayed;
        }
        let Some(state) = run.state.as_ref() else {
            return replayed;
        };
        let stars = run.view.get("stars").and_then(Value::as_f64);
        let actions_used = match self.reducer.replay_metrics(state) {
            Some(metrics) => Some(metrics.actions_used),
            None => run.view.get("hud").and_then(|hud| hud.get("actionsUsed")).and_then(Value::as_u64),
        };
        let field = |name: &str| format!("header.levels[{}].result.{name}", level.index);
        let recorded = &level.result;
        if run.status.as_str() != recorded.status.as_str() {
            let message = format!("recorded {}, replayed {}", recorded.status.as_str(), run.status);
            self.problems.at(1, field("status"), message);
        }
        if stars != recorded.stars {
            let message = format!("recorded {}, replayed {}", number(recorded.stars), number(stars));
            self.problems.at(1, field("stars"), message);
        }
        match actions_used {
            Some(used) if used != recorded.actions_used => self.problems.at(
                1,
                field("actionsUsed"),
                format!("recorded {}, replayed {used}", recorded.actions_used),
            ),
            Some(_) => {}
            None => self.problems.at(
                1,
                field("actionsUsed"),
                "the game reports no actionsUsed (no replay metrics and no hud.actionsUsed in its view)",
            ),
        }
        replayed.status = Some(run.status.as_str().to_owned());
        replayed.stars = stars;
        replayed.actions_used = actions_used;
        replayed.outcome = run.view.get("outcome").cloned();
        replayed
    }

    /// Read status from the current view; a view without one halts the level.
    pub(super) fn refresh_status(&mut self, run: &mut LevelRun, line: usize, field: &str) -> bool {
        match GameStatus::of_view(&run.view) {
            Some(status) => {
                run.status = status;
                true
            }
            None => {
                self.problems.at(
                    line,
                    field,
                    format!(
                        "the game's view has no valid status (playing, won, failed or ended): {}",
                        describe(&run.view, 120)
                    ),
                );
                run.halted = true;
                false
            }
        }
    }

    /// Legacy bodies: `advance([])` for every tick skipped before an action
    /// (TickReducers only). Returns the action's effective tick, or `None`
    /// when the level halted.
    pub(super) fn legacy_empty_ticks(
        &mut self,
        run: &mut LevelRun,
        record: &RecordView,
        res: &ResolutionView,
    ) -> Option<u64> {
        let effective = match res.tick {
            Some(tick) => {
                run.legacy_inferred_tick = tick;
                tick
            }
            None => run.legacy_inferred_tick,
        };
        if run.legacy_last_tick.is_some_and(|t| effective <= t) {
            return Some(effective);
        }
        let first_empty = run.legacy_last_tick.map_or(0, |t| t + 1);
        run.legacy_last_tick = Some(effective);
        if !self.reducer.supports_empty_ticks() || effective <= first_empty {
            return Some(effective);
        }
        let gap = effective - first_empty;
        if self.empty_ticks + gap > MAX_EMPTY_TICKS {
            self.unverifiable.at(
                record.line,
                "action.tick",
                format!("needs {gap} empty ticks before it; this verifier simulates at most {MAX_EMPTY_TICKS}"),
            );
            run.halted = true;
            return None;
        }
        self.empty_ticks += gap;
        for _ in 0..gap {
            let state = run.state.take()?;
            match self.reducer.advance(state, &[]) {
                Ok(next) => run.state = Some(next),
                Err(e) => {
                    self.problems.at(
                        record.line,
                        "action.tick",
                        format!("an empty tick before this action failed: {e}"),
                    );
                    run.halted = true;
                    return None;
                }
            }
            run.cursor += 1;
        }
        if let Some(state) = run.state.as_ref() {
            run.view = self.reducer.view(state);
        }
        self.refresh_status(run, record.line, "action").then_some(effective)
    }

    /// One reducer call with the recorded inputs (after the command,
    /// commit–reveal and timeout-mapping checks).
    pub(super) fn resolve(
        &mut self,
        run: &mut LevelRun,
        level: &'v LevelView,
        record: &'v RecordView,
        res: &'v ResolutionView,
        tick: u64,
        kind: &'static str,
    ) {
        let line = record.line;
        let pending_timeout = run.pending_timeout.take();
        if run.status.is_terminal() {
            let after = run.terminal_line.map_or_else(String::new, |l| format!(" after line {l}"));
            self.problems.at(
                line,
                kind,
                format!(
                    "comes after the level ended (status {}{after}): nothing resolves once a level is over",
                    run.status
                ),
            );
            run.halted = true;
            return;
        }
        let path = |j: usize| if kind == "action" { InputPath::Line } else { InputPath::Listed(j) };
        if self.strict && kind == "resolution" {
            self.strict_window(run, record, res, pending_timeout);
        }
        let mut actions = std::mem::take(&mut self.actions);
        actions.clear();
        for (j, input) in res.inputs.iter().enumerate() {
            let mut action = input.action();
            if input.is_user_input() {
                self.check_command(line, path(j), input, &action, tick);
            }
            let seat = input.seat();
            if let Some(commit) = input.commit() {
                let Some(seat) = seat else {
                    self.problems.at(line, path(j).field("commit"), "a commitment needs the committing seat");
                    continue;
                };
                let key = (level.index, seat);
                let expected = self.book.view().next_id(&key);
                if commit.commitment_id != expected {
                    self.problems.at(
                        line,
                        path(j).field("commit.commitmentId"),
                        format!("is {}, but {seat}'s next commitment id is {expected}", commit.commitment_id),
                    );
                    continue;
                }
                self.book.record_commit(key, expected, commit.hash.clone(), tick, line);
            }
            if let Some(reveal) = input.reveal() {
                if !self.verify_reveal(level.index, line, path(j), seat, reveal) {
                    continue;
                }
                if self.strict && input.verified_payload() != Some(&reveal.payload) {
                    self.problems.at(
                        line,
                        path(j).field("verifiedPayload"),
                        "must equal the verified reveal's payload (the kernel records it for every verified reveal)",
                    );
                }
                action.verified_payload = Some(reveal.payload.clone());
            }
            actions.push(action);
        }
        if res.cause == ResolutionCause::Timeout
            && let (Some(system), Some(timeout_index)) = (res.system_input, pending_timeout)
            && let Some(RecordView { line: timeout_line, body: RecordBody::Timeout(timeout), .. }) =
                self.view.records.get(timeout_index)
        {
            self.check_timeout_mapping(level, line, timeout, *timeout_line, &res.inputs[system].action());
        }
        let advanced = match run.state.take() {
            Some(state) => self.reducer.advance(state, &actions),
            None => Err(GameError::new("the level has no state to advance")),
        };
        self.actions = actions;
        match advanced {
            Ok(next) => {
                run.view = self.reducer.view(&next);
                run.state = Some(next);
            }
            Err(e) => {
                self.problems.at(line, kind, format!("the game refuses this resolution on replay: {e}"));
                run.halted = true;
                return;
            }
        }
        run.cursor += 1;
        run.resolutions += 1;
        run.last_resolution_tick = Some(tick);
        if self.refresh_status(run, line, kind) && run.status.is_terminal() {
            run.terminal_line = Some(line);
        }
    }
}

/// `header.extensions.dmath`, when declared.
fn view_dmath(view: &ReplayView) -> Option<&Value> {
    view.extensions.as_ref().and_then(|e| e.get("dmath"))
}

/// Every seat a replay's records name (inputs, timeouts, commit mismatches).
fn seats_named_in(view: &ReplayView) -> Vec<String> {
    let mut seats = BTreeSet::new();
    for record in &view.records {
        match &record.body {
            RecordBody::Resolution(res) | RecordBody::Action(res) => {
                seats.extend(res.inputs.iter().filter_map(|i| i.seat()).map(str::to_owned));
            }
            RecordBody::Timeout(timeout) => seats.extend(timeout.participant_id.clone()),
            _ => {}
        }
    }
    seats.into_iter().collect()
}
