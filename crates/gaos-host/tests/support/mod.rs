//! What several host tests build the same way: JSON from text, and an act
//! request of the counter game.

use gaos_host::requests::ActRequest;
use gaos_json::Value;

pub fn json(text: &str) -> Value {
    gaos_json::parse(text).expect("test JSON")
}

/// Seat `seat`'s `{"n": n}` for the window at `revision` of `session`, its
/// submission id `seat:revision`.
pub fn submission(session: &str, revision: u64, seat: &str, n: u64) -> ActRequest {
    ActRequest::from_value(json(&format!(
        r#"{{"protocol":"gaos.ticks","protocolVersion":"1.0","sessionId":"{session}","tickId":"{session}:{revision}",
            "revision":{revision},"participantId":"{seat}","submissionId":"{seat}:{revision}","command":{{"n":{n}}}}}"#
    )))
}
