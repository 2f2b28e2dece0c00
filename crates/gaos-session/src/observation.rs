//! [`Observation`]: one `TickResult` envelope as a handle returns it, with
//! the readings `run_session` and drivers need (legal actions, done,
//! episode, finalization), and [`EpisodeIdentity`].

use gaos_json::{Map, Value};
use gaos_kernel::GameStatus;
use gaos_kernel::{SessionBinding, TickEnvelope};

use crate::error::SessionError;
use crate::extensions::{EXT_EPISODE, EXT_FINALIZATION};

/// One `TickResult` envelope (lifecycle spec §2), checked: protocol
/// constants, non-blank ids, `tick` present, valid pending seat lists.
///
/// `tick` is the seat's observation. On gaos-host it is the seat's view plus
/// `legalActions` (the commands the seat may submit now) and `done`.
///
/// ```
/// use gaos_session::Observation;
///
/// let envelope = gaos_json::parse(
///     r#"{"protocol":"gaos.ticks","protocolVersion":"1.0","kind":"tick","sessionId":"s-1",
///         "tickId":"s-1:3","revision":3,"tick":{"status":"playing","legalActions":[{"n":1}],"done":false},
///         "extensions":{"gaos.session.episode":{"id":"s-1","index":0}}}"#,
/// ).expect("JSON");
/// let observation = Observation::from_value(&envelope, Some("s-1")).expect("a valid envelope");
/// assert_eq!(observation.revision(), 3);
/// assert_eq!(observation.legal_actions().len(), 1);
/// assert!(!observation.is_done());
/// assert_eq!(observation.episode().map(|e| e.id), Some("s-1".to_owned()));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Observation {
    /// The checked envelope.
    pub envelope: TickEnvelope,
}

impl Observation {
    /// Wrap an envelope after checking it.
    pub fn from_envelope(envelope: TickEnvelope) -> Result<Self, SessionError> {
        envelope.validate().map_err(|e| SessionError::Protocol(format!("invalid tick envelope: {e}")))?;
        Ok(Observation { envelope })
    }

    /// Read and check an envelope object ([`parse_tick_envelope`]); with
    /// `expected_session`, its `sessionId` must be that session.
    pub fn from_value(value: &Value, expected_session: Option<&str>) -> Result<Self, SessionError> {
        let envelope = parse_tick_envelope(value.clone(), expected_session).map_err(SessionError::Protocol)?;
        Ok(Observation { envelope })
    }

    /// The envelope as JSON.
    pub fn to_value(&self) -> Value {
        self.envelope.to_value()
    }

    /// The session.
    pub fn session_id(&self) -> &str {
        &self.envelope.session_id
    }

    /// The session revision (cursor) of the envelope.
    pub fn revision(&self) -> u64 {
        self.envelope.revision
    }

    /// The opaque tick id of the envelope.
    pub fn tick_id(&self) -> &str {
        &self.envelope.tick_id
    }

    /// The binding of `seat` at this envelope's cursor.
    pub fn binding(&self, seat: &str) -> SessionBinding {
        SessionBinding::from_envelope(&self.envelope, seat)
    }

    /// The seat's observation (`tick`; on a pending envelope the last resolved one).
    pub fn tick(&self) -> &Value {
        &self.envelope.tick
    }

    /// `kind == "pending"`: the window still awaits other seats.
    pub fn is_pending(&self) -> bool {
        self.envelope.is_pending()
    }

    /// Seats that submitted in the open window (pending envelopes only).
    pub fn submitted(&self) -> &[String] {
        self.envelope.submitted_participants.as_deref().unwrap_or_default()
    }

    /// Seats the open window still awaits (pending envelopes only).
    pub fn awaiting(&self) -> &[String] {
        self.envelope.awaiting_participants.as_deref().unwrap_or_default()
    }

    /// True when this envelope is pending and `seat` is one of the awaited seats.
    pub fn awaits(&self, seat: &str) -> bool {
        self.awaiting().iter().any(|s| s == seat)
    }

    /// `tick.legalActions`, or empty when absent.
    pub fn legal_actions(&self) -> &[Value] {
        self.tick().get("legalActions").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default()
    }

    /// `tick.systemActions` (empty when the host lists none): actions
    /// outside the game's own that a driver may also choose.
    pub fn system_actions(&self) -> &[Value] {
        self.tick().get("systemActions").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default()
    }

    /// `tick.actionDefinitions`, when the host sends them.
    pub fn action_definitions(&self) -> Option<&Value> {
        self.tick().get("actionDefinitions").filter(|v| !v.is_null())
    }

    /// The seats of the open window as the seat's view declares them
    /// (kernel spec §2.1/§2.3 `SessionView`): `participation.sequential` →
    /// `[activeSeat]`, `participation.simultaneous` → `seats`, else
    /// `activeSeat` → `[activeSeat]`. `None` when the view declares neither
    /// (then every seat may be in the window).
    pub fn window_participants(&self) -> Option<Vec<String>> {
        let tick = self.tick();
        let strings = |v: &Value| -> Vec<String> {
            v.as_array().map(|a| a.iter().filter_map(Value::as_str).map(str::to_owned).collect()).unwrap_or_default()
        };
        if let Some(participation) = tick.get("participation") {
            match participation.get("mode").and_then(Value::as_str) {
                Some("sequential") => {
                    return Some(
                        participation
                            .get("activeSeat")
                            .and_then(Value::as_str)
                            .map(str::to_owned)
                            .into_iter()
                            .collect(),
                    );
                }
                Some("simultaneous") => return participation.get("seats").map(strings),
                _ => {}
            }
        }
        tick.get("activeSeat").and_then(Value::as_str).map(|s| vec![s.to_owned()])
    }

    /// True unless the view declares window participants without `seat`
    /// (another seat's turn).
    pub fn seat_in_window(&self, seat: &str) -> bool {
        self.window_participants().is_none_or(|seats| seats.iter().any(|s| s == seat))
    }

    /// The runner's default terminal test (lifecycle spec §4): `tick.done`
    /// is `true`, or `tick.status` is a string other than `"playing"`.
    pub fn is_done(&self) -> bool {
        let tick = self.tick();
        if tick.get("done").and_then(Value::as_bool) == Some(true) {
            return true;
        }
        matches!(tick.get("status"), Some(Value::String(s)) if s != GameStatus::Playing.as_str())
    }

    /// The envelope's extensions.
    pub fn extensions(&self) -> Option<&Map> {
        self.envelope.extensions.as_ref()
    }

    /// `extensions["gaos.session.episode"]`, when present with a string `id`.
    pub fn episode(&self) -> Option<EpisodeIdentity> {
        EpisodeIdentity::from_value(self.extensions()?.get(EXT_EPISODE)?)
    }

    /// `extensions["gaos.session.finalization"].status` (`terminal` or `finalized`).
    pub fn finalization_status(&self) -> Option<&str> {
        self.extensions()?.get(EXT_FINALIZATION)?.get("status")?.as_str()
    }

    /// The finalization status, typed (`None` when absent or unknown).
    pub fn finalization(&self) -> Option<FinalizationStatus> {
        finalization(self.extensions())
    }

    /// True when the finalization extension says the session's game is over
    /// (`terminal`, or already `finalized`): a handle that sees it turns terminal.
    pub fn announces_terminal(&self) -> bool {
        announces_terminal(self.extensions())
    }
}

/// Read and check a tick envelope (`TickResult`) against lifecycle spec §2:
/// protocol constants, non-blank ids, `tick` present (may be null), a known
/// `kind`, unique and disjoint pending lists with at least one awaited seat,
/// `acceptedParticipantId` among the submitted seats, and `sessionId` equal
/// to the session asked about (when `expected_session` is given).
pub fn parse_tick_envelope(body: Value, expected_session: Option<&str>) -> Result<TickEnvelope, String> {
    let map =
        body.as_object().ok_or_else(|| format!("a tick envelope must be a JSON object, got {}", body.type_name()))?;
    if !map.contains_key("tick") {
        return Err("the tick envelope has no \"tick\" member (it is required, and may be null)".into());
    }
    let envelope: TickEnvelope = gaos_json::from_value(body).map_err(|e| format!("malformed tick envelope: {e}"))?;
    envelope.validate().map_err(|e| format!("invalid tick envelope: {e}"))?;
    if let Some(expected) = expected_session
        && envelope.session_id != expected
    {
        return Err(format!("the envelope is for session {:?}, not the requested {expected:?}", envelope.session_id));
    }
    Ok(envelope)
}

/// True when envelope (or attach answer) `extensions` carry
/// `gaos.session.finalization` with status `terminal` or `finalized`.
pub fn announces_terminal(extensions: Option<&Map>) -> bool {
    finalization(extensions).is_some()
}

/// `gaos.session.finalization.status`: the game ended (`terminal`), or the
/// session's result is fixed (`finalized`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FinalizationStatus {
    /// The game is over; the session may be finalized.
    Terminal,
    /// The session was finalized.
    Finalized,
}

impl FinalizationStatus {
    /// The wire name (`terminal`, `finalized`).
    pub fn as_str(self) -> &'static str {
        match self {
            FinalizationStatus::Terminal => "terminal",
            FinalizationStatus::Finalized => "finalized",
        }
    }

    /// The status with wire name `text`.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "terminal" => Some(FinalizationStatus::Terminal),
            "finalized" => Some(FinalizationStatus::Finalized),
            _ => None,
        }
    }
}

/// The finalization status in envelope (or answer) `extensions`; `None`
/// when absent or not one of the two statuses.
pub fn finalization(extensions: Option<&Map>) -> Option<FinalizationStatus> {
    extensions?.get(EXT_FINALIZATION)?.get("status")?.as_str().and_then(FinalizationStatus::parse)
}

/// `gaos.session.episode`: `{id, index?, ...}`. A change of `id` or `index`
/// between two observations is an episode transition.
#[derive(Debug, Clone, PartialEq)]
pub struct EpisodeIdentity {
    /// The episode id.
    pub id: String,
    /// The episode index, when the host states one.
    pub index: Option<u64>,
    /// The whole extension object (products may add fields).
    pub value: Value,
}

impl EpisodeIdentity {
    /// Read the extension; `None` unless it is an object with a string `id`.
    pub fn from_value(value: &Value) -> Option<Self> {
        let id = value.get("id")?.as_str()?.to_owned();
        let index = value.get("index").and_then(Value::as_u64);
        Some(EpisodeIdentity { id, index, value: value.clone() })
    }

    /// True when `other` names another episode (id or index differ).
    pub fn differs_from(&self, other: &EpisodeIdentity) -> bool {
        self.id != other.id || self.index != other.index
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_tick(tick: &str) -> Observation {
        let text = format!(
            r#"{{"protocol":"gaos.ticks","protocolVersion":"1.0","kind":"tick","sessionId":"s","tickId":"s:0","revision":0,"tick":{tick}}}"#
        );
        Observation::from_value(&gaos_json::parse(&text).expect("JSON"), None).expect("envelope")
    }

    #[test]
    fn window_participants_follow_the_session_view_rules() {
        let sequential = with_tick(r#"{"participation":{"mode":"sequential","activeSeat":"o"},"activeSeat":"x"}"#);
        assert_eq!(sequential.window_participants(), Some(vec!["o".to_owned()]));
        assert!(!sequential.seat_in_window("x") && sequential.seat_in_window("o"));
        let simultaneous = with_tick(r#"{"participation":{"mode":"simultaneous","seats":["a","b"]}}"#);
        assert!(
            simultaneous.seat_in_window("a") && simultaneous.seat_in_window("b") && !simultaneous.seat_in_window("c")
        );
        let active = with_tick(r#"{"activeSeat":"green"}"#);
        assert_eq!(active.window_participants(), Some(vec!["green".to_owned()]));
        let opaque = with_tick(r#"[1,2,3]"#);
        assert_eq!(opaque.window_participants(), None);
        assert!(opaque.seat_in_window("anyone"), "an undeclared window may include every seat");
    }

    #[test]
    fn finalization_statuses_are_read_typed() {
        let extensions = |status: &str| {
            gaos_json::parse(&format!(r#"{{"gaos.session.finalization":{{"status":"{status}"}}}}"#))
                .expect("JSON")
                .as_object()
                .cloned()
        };
        assert_eq!(finalization(extensions("terminal").as_ref()), Some(FinalizationStatus::Terminal));
        assert_eq!(finalization(extensions("finalized").as_ref()), Some(FinalizationStatus::Finalized));
        assert_eq!(finalization(extensions("later").as_ref()), None);
        assert!(
            !announces_terminal(extensions("later").as_ref()) && announces_terminal(extensions("terminal").as_ref())
        );
        for status in [FinalizationStatus::Terminal, FinalizationStatus::Finalized] {
            assert_eq!(FinalizationStatus::parse(status.as_str()), Some(status));
        }
    }

    #[test]
    fn done_and_terminal_readings() {
        assert!(with_tick(r#"{"done":true}"#).is_done());
        assert!(with_tick(r#"{"status":"won"}"#).is_done());
        assert!(!with_tick(r#"{"status":"playing","done":false}"#).is_done());
        assert!(!with_tick("null").is_done());
        assert!(!with_tick("null").announces_terminal());
    }
}
