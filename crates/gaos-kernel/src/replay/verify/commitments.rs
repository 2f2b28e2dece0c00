//! Commit–reveal on replay: reveals re-verified through the commitment book,
//! `commit-mismatch` records rechecked, salt reuse noted.

use super::{InputPath, LevelRun, Recheck};
use crate::action::RevealEnvelope;
use crate::commitment::{RevealCheck, SaltOwner};
use crate::game::CommandContext;
use crate::replay::format::describe;
use crate::replay::model::{CommitMismatchView, RecordView};

impl<'v> Recheck<'v> {
    /// Verify a reveal against its commitment; `false` drops the input.
    pub(super) fn verify_reveal(
        &mut self,
        level: usize,
        line: usize,
        path: InputPath,
        seat: Option<&'v str>,
        reveal: &'v RevealEnvelope,
    ) -> bool {
        let Some(seat) = seat else {
            self.problems.at(line, path.field("reveal"), "a reveal needs the revealing seat");
            return false;
        };
        let key = (level, seat);
        let id = reveal.commitment_id;
        match self.book.view().check_reveal(&self.view.session_id, &key, id, &reveal.salt, &reveal.payload) {
            RevealCheck::Unknown => {
                let message = format!("{seat} has no commitment {id} in this level");
                self.problems.at(line, path.field("reveal.commitmentId"), message);
                false
            }
            RevealCheck::AlreadyRevealed(commitment) => {
                let message = format!("{seat}'s commitment {id} (line {}) was already revealed", commitment.origin);
                self.problems.at(line, path.field("reveal.commitmentId"), message);
                false
            }
            RevealCheck::Unhashable(e) => {
                self.problems.at(line, path.field("reveal"), format!("cannot be hashed: {e}"));
                false
            }
            RevealCheck::Mismatch(commitment) => {
                let committed = commitment.origin;
                self.problems.at(
                    line,
                    path.field("reveal"),
                    format!("commit_mismatch: the reveal does not match {seat}'s commitment {id} (line {committed})"),
                );
                false
            }
            RevealCheck::Match(_) => {
                self.book.mark_revealed(None, &key, id);
                self.note_salt(level, seat, id, line, &reveal.salt);
                true
            }
        }
    }

    pub(super) fn note_salt(&mut self, level: usize, seat: &'v str, commitment_id: u32, line: usize, salt: &str) {
        let owner = SaltOwner { seat: (level, seat), commitment_id, origin: line };
        if let Some(first) = self.book.note_salt(None, salt, owner) {
            let first = first.origin;
            self.note(format!(
                "line {line}: salt reuse: {seat}'s commitment {commitment_id} reuses the salt first seen on line {first}"
            ));
        }
    }

    pub(super) fn commit_mismatch(
        &mut self,
        run: &mut LevelRun,
        level: usize,
        record: &RecordView,
        m: &'v CommitMismatchView,
    ) {
        run.pending_timeout = None;
        let line = record.line;
        if let Some(last) = run.last_resolution_tick
            && m.tick != last + 1
        {
            self.problems.at(
                line,
                "commit-mismatch.tick",
                format!("is {}, but the open tick after the resolution at tick {last} is {}", m.tick, last + 1),
            );
        }
        if self.strict {
            if m.tick != run.cursor {
                self.problems.at(
                    line,
                    "commit-mismatch.tick",
                    format!("is {}, but the open tick is {}", m.tick, run.cursor),
                );
            }
            if let Some(cursor) = m.cursor
                && cursor != run.cursor
            {
                let message = format!("is {cursor}, but the open window is {}", run.cursor);
                self.problems.at(line, "commit-mismatch.cursor", message);
            }
        }
        let mapped = m
            .canonical_command
            .as_deref()
            .filter(|_| self.game.has_command_mapper())
            .map(|text| self.mapped_reveal(m, text, run.cursor));
        if let (Some((salt, payload)), Some(mapped), Some(_)) = (&m.attempted_reveal, &mapped, m.cursor) {
            let expected =
                RevealEnvelope { commitment_id: m.commitment_id, salt: salt.clone(), payload: payload.clone() };
            let show = |r: &RevealEnvelope| describe(&gaos_json::to_value(r).unwrap_or_default(), 160);
            match mapped {
                Err(e) => self.problems.at(
                    line,
                    "commit-mismatch.canonicalCommand",
                    format!("the game's command mapping refuses it: {e}"),
                ),
                Ok(reveal) if reveal.as_ref() != Some(&expected) => self.problems.at(
                    line,
                    "commit-mismatch.attemptedReveal",
                    format!(
                        "the game maps canonicalCommand to reveal {}, but the record holds {}",
                        reveal.as_ref().map_or_else(|| "nothing".to_owned(), show),
                        show(&expected)
                    ),
                ),
                Ok(_) => {}
            }
        }
        let key = (level, m.participant_id.as_str());
        let Some(commitment) = self.book.view().commitment(&key, m.commitment_id) else {
            self.problems.at(
                line,
                "commit-mismatch.commitmentId",
                format!("{} has no commitment {} in this level", m.participant_id, m.commitment_id),
            );
            return;
        };
        if commitment.revealed {
            self.problems.at(
                line,
                "commit-mismatch.commitmentId",
                format!("{}'s commitment {} was already revealed", m.participant_id, m.commitment_id),
            );
            return;
        }
        let (salt, payload, source) = match (&m.attempted_reveal, mapped) {
            (Some((salt, payload)), _) => (salt.clone(), payload.clone(), "attemptedReveal"),
            (None, Some(Ok(Some(reveal)))) if reveal.commitment_id == m.commitment_id => {
                (reveal.salt, reveal.payload, "canonicalCommand")
            }
            _ => {
                self.note(format!(
                    "line {line}: the commit-mismatch of {} carries no attempted reveal, so it cannot be rechecked",
                    m.participant_id
                ));
                return;
            }
        };
        match self.book.view().check_reveal(&self.view.session_id, &key, m.commitment_id, &salt, &payload) {
            RevealCheck::Unknown | RevealCheck::AlreadyRevealed(_) => {}
            RevealCheck::Unhashable(e) => {
                self.problems.at(line, format!("commit-mismatch.{source}"), format!("cannot be hashed: {e}"))
            }
            RevealCheck::Match(commitment) => {
                let committed = commitment.origin;
                self.problems.at(
                    line,
                    format!("commit-mismatch.{source}"),
                    format!(
                        "not a mismatch: this reveal matches {}'s commitment {} (line {committed})",
                        m.participant_id, m.commitment_id
                    ),
                )
            }
            RevealCheck::Mismatch(_) => {
                self.note(format!(
                    "line {line}: verified commit_mismatch of {}'s commitment {} (from {source})",
                    m.participant_id, m.commitment_id
                ));
                if let Some((salt, _)) = &m.attempted_reveal {
                    self.note_salt(level, &m.participant_id, m.commitment_id, line, salt);
                }
            }
        }
    }

    /// The reveal a refused submission's command maps to.
    pub(super) fn mapped_reveal(
        &self,
        m: &CommitMismatchView,
        text: &str,
        open_cursor: u64,
    ) -> Result<Option<RevealEnvelope>, String> {
        let command = gaos_json::parse(text).map_err(|e| format!("canonicalCommand is not JSON: {e}"))?;
        let ctx = CommandContext {
            session_id: &self.view.session_id,
            participant_id: &m.participant_id,
            submission_id: &m.submission_id,
            cursor: m.cursor.unwrap_or(open_cursor),
            tick: m.tick,
        };
        self.game.command_to_action(&command, &ctx).map(|a| a.reveal).map_err(|e| e.to_string())
    }
}
