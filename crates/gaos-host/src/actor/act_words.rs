//! A refused act in the words of the person who sent it. The kernel words
//! its refusals in the protocol's terms (windows, participants, the game's
//! action ids); a seat that acts out of turn, at an old revision or with a
//! command the game refuses hears whose turn it is, which revision to act
//! at, and what the game said about the command it sent. Only the message
//! changes: status, code and details stay those of `from_kernel`.

use gaos_json::Value;
use gaos_kernel::{CommandSubmission, IntentError, IntentErrorCode, KernelError, make_tick_id};

use super::SessionActor;
use crate::error::{HostError, from_kernel};

/// Where a submission said it acts, as the seat sent it (before a run's
/// revisions are translated to the live level's).
#[derive(Debug, Clone)]
pub(super) struct SentAt {
    revision: f64,
    tick_id: String,
}

impl SentAt {
    pub(super) fn of(submission: &CommandSubmission) -> Self {
        SentAt { revision: submission.revision, tick_id: submission.tick_id.clone() }
    }
}

impl SessionActor {
    /// `error`, the kernel's refusal of `submission` (sent at `sent`), as
    /// the seat's answer.
    pub(super) fn refused_act(&self, error: KernelError, sent: &SentAt, submission: &CommandSubmission) -> HostError {
        let words = match &error {
            KernelError::Intent(intent) => self.intent_words(intent, sent, submission),
            _ => None,
        };
        let mut refused = from_kernel(error);
        if let Some(words) = words {
            refused.message = words;
        }
        refused
    }

    fn intent_words(&self, intent: &IntentError, sent: &SentAt, submission: &CommandSubmission) -> Option<String> {
        match intent.code {
            IntentErrorCode::StaleTick => Some(self.stale_words(sent)),
            IntentErrorCode::UnknownParticipant => {
                turn_words(&submission.participant_id, &self.kernel.window().participants)
            }
            IntentErrorCode::IllegalCommand => {
                let reason = intent.cause.as_deref()?;
                let reason = reason.strip_prefix(&format!("{}: ", self.config.game)).unwrap_or(reason);
                let command = submission.command.as_ref().map_or_else(|| "the command".to_owned(), Value::to_string);
                Some(format!("the game refused {command}: {reason}"))
            }
            _ => None,
        }
    }

    /// The revision the seat sent and the one its next submission needs.
    fn stale_words(&self, sent: &SentAt) -> String {
        let open = self.revision();
        let tick_id = make_tick_id(&self.id, open);
        if sent.revision == open as f64 {
            format!(
                "the submission's tickId {:?} is not the open window's {tick_id:?} (revision {open}); send the tickId \
                 and revision of your latest observation",
                sent.tick_id
            )
        } else {
            format!(
                "the submission is for revision {}, but the session is at revision {open} (tickId {tick_id:?}): \
                 observe again and act at revision {open}",
                Value::Number(sent.revision)
            )
        }
    }
}

/// Whose turn it is, said to `seat`, which is not among `movers` (the seats
/// the open window waits for). `None` when there is nobody to name.
fn turn_words(seat: &str, movers: &[String]) -> Option<String> {
    match movers {
        [] => None,
        [mover] => Some(format!("it is {mover}'s turn; {seat} moves after {mover}")),
        [first @ .., last] => {
            Some(format!("it is the turn of {} and {last}; {seat} moves after them", first.join(", ")))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::turn_words;

    #[test]
    fn whose_turn_it_is_names_the_movers() {
        let movers = |names: &[&str]| names.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>();
        assert_eq!(turn_words("o", &movers(&["x"])).as_deref(), Some("it is x's turn; o moves after x"));
        assert_eq!(
            turn_words("c", &movers(&["a", "b"])).as_deref(),
            Some("it is the turn of a and b; c moves after them")
        );
        assert_eq!(
            turn_words("d", &movers(&["a", "b", "c"])).as_deref(),
            Some("it is the turn of a, b and c; d moves after them")
        );
        assert_eq!(turn_words("o", &[]), None);
    }
}
