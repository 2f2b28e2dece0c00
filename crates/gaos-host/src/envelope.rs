//! What the host answers: tick envelopes with the seat's observation
//! (view + `legalActions` + `done`) and the RFC-018 extensions.

use gaos_json::{Map, Value};
use gaos_kernel::{SessionBinding, TickEnvelope};
use gaos_session::FinalizationStatus;

/// Extension keys the host sets: the contract's (gaos-session), which
/// clients read, plus the host's own rejection notices.
pub use gaos_session::{EXT_ATTACH, EXT_CREDENTIALS, EXT_EPISODE, EXT_FINALIZATION, EXT_LEASE, EXT_POLICY};
pub const EXT_REJECTIONS: &str = "gaos.session.rejections";

/// Where a session is in its lifecycle, as envelopes report it.
#[derive(Debug, Clone, PartialEq)]
pub enum Finalization {
    Live,
    Terminal,
    Finalized { result_digest: String },
}

/// The observation a seat receives: its view plus `legalActions` and `done`.
pub fn observation(view: &Value, legal_actions: Vec<Value>, done: bool) -> Value {
    let mut map = view.as_object().cloned().unwrap_or_default();
    map.insert("legalActions".into(), Value::Array(legal_actions));
    map.insert("done".into(), done.into());
    Value::Object(map)
}

/// `gaos.session.episode`: which episode an envelope belongs to. A session
/// that is not a run is one episode named by the session id; the levels of a
/// run are `<sessionId>:level-<i>` with their index and level id.
#[derive(Debug, Clone, PartialEq)]
pub struct EpisodeMark {
    pub id: String,
    pub index: u64,
    pub level_id: Option<String>,
    /// The level ended and a reset starts the next one (a run that
    /// advances on reset): `"awaitingReset": true`, so an agent or a page
    /// knows to offer it.
    pub awaiting_reset: bool,
}

impl EpisodeMark {
    /// The one episode of a session that is not a run.
    pub fn single(session_id: &str) -> Self {
        EpisodeMark { id: session_id.to_owned(), index: 0, level_id: None, awaiting_reset: false }
    }
}

/// Extensions carried by every envelope of a session.
pub fn base_extensions(episode_mark: &EpisodeMark, finalization: &Finalization) -> Map {
    let mut ext = Map::new();
    let mut episode = Map::new();
    episode.insert("id".into(), episode_mark.id.clone().into());
    episode.insert("index".into(), episode_mark.index.into());
    if let Some(level_id) = &episode_mark.level_id {
        episode.insert("levelId".into(), level_id.clone().into());
    }
    if episode_mark.awaiting_reset {
        episode.insert("awaitingReset".into(), true.into());
    }
    ext.insert(EXT_EPISODE.into(), Value::Object(episode));
    match finalization {
        Finalization::Live => {}
        Finalization::Terminal => {
            let mut f = Map::new();
            f.insert("status".into(), FinalizationStatus::Terminal.as_str().into());
            ext.insert(EXT_FINALIZATION.into(), Value::Object(f));
        }
        Finalization::Finalized { result_digest } => {
            let mut f = Map::new();
            f.insert("status".into(), FinalizationStatus::Finalized.as_str().into());
            f.insert("resultDigest".into(), result_digest.clone().into());
            ext.insert(EXT_FINALIZATION.into(), Value::Object(f));
        }
    }
    ext
}

/// Pending-window facts for a pending envelope.
#[derive(Debug, Clone, PartialEq)]
pub struct Pending {
    pub submitted: Vec<String>,
    pub awaiting: Vec<String>,
    pub accepted: Option<String>,
}

/// A resolved or pending tick envelope.
pub fn envelope(
    session_id: &str,
    revision: u64,
    tick: Value,
    pending: Option<Pending>,
    extensions: Map,
) -> TickEnvelope {
    let mut env = match pending {
        Some(p) => TickEnvelope::pending(session_id, revision, tick, p.submitted, p.awaiting, p.accepted),
        None => TickEnvelope::resolved(session_id, revision, tick),
    };
    env.extensions = Some(extensions);
    env
}

/// The binding of `seat` at `revision`.
pub fn binding(session_id: &str, revision: u64, seat: &str) -> Value {
    gaos_json::to_value(&SessionBinding::new(session_id, revision, seat)).expect("a binding is JSON")
}
