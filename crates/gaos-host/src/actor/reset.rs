//! Reset: a seat starts the next level of a run that advances on reset
//! (`"run": {..., "advanceOn": "reset"}`), the host side of the agent
//! recipes' `reset {"seed"?}` tool (`POST /v1/sessions/{id}/reset`).
//!
//! A reset never picks a seed. Level seeds are fixed by the run
//! (`runLevelSeed(seed, i)`) so the run replay verifies, and a seat that
//! could name a seed could choose its own deal, or test guesses of the next
//! level's seed against the answer; a `seed` is therefore refused whatever
//! its value, before anything else is looked at.

use gaos_session::ErrorCode;

use super::SessionActor;
use super::episodes::{NoNextLevel, ResetMark};
use crate::answers::Answer;
use crate::error::HostError;
use crate::lease::{LeaseOp, Presented};
use crate::requests::ResetRequest;
use crate::run_spec::AdvanceOn;
use crate::storage::{SessionStateKey, SessionStatus, WriteOp};

impl SessionActor {
    pub(super) async fn reset(
        &mut self,
        seat: &str,
        presented: &Presented,
        request: ResetRequest,
    ) -> Result<Answer, HostError> {
        self.ensure_writable()?;
        if self.config.run.as_ref().is_none_or(|run| run.advance_on != AdvanceOn::Reset) {
            return Err(self.reset_not_allowed());
        }
        if request.seed {
            return Err(HostError::new(
                ErrorCode::ResetSeedFixed,
                "this run fixes every level's seed when it is created (so its replay verifies and no seat picks its \
                 own deal); call reset without a seed",
            ));
        }
        // An exact retry of the reset that started the live level: its
        // answer is the live level's envelope, and nothing is written again.
        if let (Some(asked_at), Some(mark)) = (request.revision, self.episodes.reset)
            && mark.revision == asked_at
            && mark.level == self.episode_mark().index as usize
        {
            return self.observe(Some(seat));
        }
        match self.next_level_available() {
            Ok(()) => {}
            Err(NoNextLevel::InPlay) => {
                return Err(HostError::new(
                    ErrorCode::LevelInPlay,
                    format!(
                        "level {} of this run is still being played; reset starts the next level once it has ended",
                        self.episode_mark().index
                    ),
                ));
            }
            Err(NoNextLevel::RunOver { status, last }) => {
                let why = if last {
                    format!("its last level ended ({status})")
                } else {
                    format!("level {} ended {status:?} and the run advances only on a win", self.episode_mark().index)
                };
                return Err(HostError::new(ErrorCode::RunOver, format!("the run is over: {why}; finalize it")));
            }
        }
        if let Some(asked_at) = request.revision
            && asked_at != self.revision()
        {
            return Err(HostError::new(
                ErrorCode::StaleTick,
                format!("reset asked at revision {asked_at}, but the session is at {}", self.revision()),
            ));
        }
        // Starting a level is a write of the seat's, as an act is.
        self.dispatch_lease(seat, presented, LeaseOp::Act).await?;
        let mark = ResetMark { level: self.episode_mark().index as usize + 1, revision: self.revision() };
        let ops = vec![
            WriteOp::SessionState {
                session_id: self.id.clone(),
                key: SessionStateKey::RunReset,
                value: mark.to_json(),
            },
            WriteOp::SetStatus { session_id: self.id.clone(), status: SessionStatus::Active },
        ];
        self.persist(ops).await?;
        self.episodes.reset = Some(mark);
        self.advance_episode_if_due();
        self.status = SessionStatus::Active;
        self.arm_timers();
        self.observe(Some(seat))
    }

    fn reset_not_allowed(&self) -> HostError {
        let message = match &self.config.run {
            None => format!(
                "session {} plays one episode, whose seed was fixed when it was created, so it allows no new episode: \
                 finalize it and create a new session to play again (or create a run with \"advanceOn\": \"reset\" \
                 to start each next level by reset)",
                self.id
            ),
            Some(_) => format!(
                "session {} is a run whose next level starts as soon as a level ends (advanceOn \"level-end\"), so \
                 there is nothing to reset: observe to see the level being played",
                self.id
            ),
        };
        HostError::new(ErrorCode::ResetNotAllowed, message)
    }
}
