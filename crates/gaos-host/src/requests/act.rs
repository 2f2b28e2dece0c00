//! `POST /v1/sessions/{id}/actions`: a command submission.

use gaos_json::{Value, canonical_json_with_member, sha256_hex};
use gaos_kernel::CommandSubmission;
use gaos_session::ErrorCode;

use super::FromBody;
use crate::error::HostError;

/// A command submission read once: the submission as the kernel reads it
/// (lenient fields, so arbitrary input fails the check the reference fails,
/// at its step), the body's fingerprint (exact retries) and the command's
/// canonical JSON (its size bound, the kernel's ingest), both from one
/// canonical pass over the body.
///
/// Decoding never fails: a body that is not an object is refused in the
/// act's own check order (`invalid_submission`, after the session's state).
#[derive(Debug, Clone)]
pub struct ActRequest {
    /// `None` when the body is not a JSON object.
    pub(crate) submission: Option<CommandSubmission>,
    /// Whether `participantId` is a string (the lenient submission reads a
    /// missing or mistyped one as `""`).
    pub(crate) names_participant: bool,
    /// SHA-256 of the body's canonical JSON.
    pub(crate) fingerprint: String,
    /// The canonical JSON of `command`, when the body has one.
    pub(crate) canonical_command: Option<String>,
}

impl ActRequest {
    /// Read a submission body.
    pub fn from_value(body: Value) -> Self {
        let (canonical, command) = canonical_json_with_member(&body, "command");
        let canonical_command = command.map(|span| canonical[span].to_owned());
        let fingerprint = sha256_hex(canonical.as_bytes());
        let names_participant = matches!(body.get("participantId"), Some(Value::String(_)));
        let submission = CommandSubmission::from_value(&body).ok();
        ActRequest { submission, names_participant, fingerprint, canonical_command }
    }

    /// The request an HTTP client sending `submission` makes.
    pub fn from_submission(submission: &CommandSubmission) -> Self {
        Self::from_value(submission.to_value())
    }

    /// Bytes of the command's canonical JSON (what `--max-command-bytes`
    /// bounds), when the body has a command.
    pub fn command_bytes(&self) -> Option<usize> {
        self.canonical_command.as_ref().map(String::len)
    }
}

impl FromBody for ActRequest {
    // lifecycle.md §1: what the reference answers for an unreadable act.
    const MALFORMED: ErrorCode = ErrorCode::InvalidSubmission;

    fn from_body(body: Value) -> Result<Self, HostError> {
        Ok(Self::from_value(body))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::answers::fingerprint;

    #[test]
    fn one_pass_gives_the_fingerprint_and_the_command() {
        let body = gaos_json::parse(
            r#"{"participantId":"a","sessionId":"s","submissionId":"1","command":{"n":1.0,"m":[2]},"revision":0}"#,
        )
        .expect("JSON");
        let request = ActRequest::from_value(body.clone());
        assert_eq!(request.fingerprint, fingerprint(&body), "the stored answers' fingerprint, unchanged");
        assert_eq!(request.canonical_command.as_deref(), Some(r#"{"m":[2],"n":1}"#));
        assert_eq!(request.command_bytes(), Some(15));
        assert!(request.names_participant);
        assert_eq!(request.submission.as_ref().map(|s| s.participant_id.as_str()), Some("a"));
    }

    #[test]
    fn any_json_is_a_request_whose_defects_wait_for_their_check() {
        let not_an_object = ActRequest::from_value(Value::Array(Vec::new()));
        assert!(not_an_object.submission.is_none() && not_an_object.command_bytes().is_none());
        let mistyped = ActRequest::from_value(gaos_json::parse(r#"{"participantId":5}"#).expect("JSON"));
        assert!(!mistyped.names_participant);
        assert_eq!(mistyped.submission.map(|s| s.participant_id), Some(String::new()));
    }
}
