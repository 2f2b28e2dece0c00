//! Answers and the answer cache: what a caller gets back, and the stored
//! answers an exact retry gets again byte for byte (acts, attaches,
//! finalize). Pure: the store fallback for evicted act answers is the
//! actor's (it knows the reader); this type only says when it is needed.

use std::collections::{HashMap, VecDeque};

use gaos_json::{Value, canonical_json, sha256_hex};

use crate::storage::{AnswerKind, StoredAnswer};

/// A stored or computed answer: status and exact body bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub status: u16,
    pub body: String,
}

impl Answer {
    pub(crate) fn json(status: u16, value: &Value) -> Self {
        Answer { status, body: canonical_json(value) }
    }

    /// The answer of a typed body (an envelope): its canonical JSON written
    /// straight from the type, without a `Value` in between.
    pub(crate) fn of<T: serde::Serialize>(status: u16, body: &T) -> Self {
        Answer { status, body: gaos_json::to_canonical_string(body).expect("answers are JSON values") }
    }

    /// The stored bytes, answered again.
    pub(crate) fn replayed(stored: &StoredAnswer) -> Self {
        Answer { status: stored.status, body: stored.body.clone() }
    }
}

/// What a stored answer keeps of its request: the SHA-256 of its canonical
/// JSON (an exact retry has the same fingerprint).
pub(crate) fn fingerprint(request: &Value) -> String {
    sha256_hex(canonical_json(request).as_bytes())
}

/// The key of a seat's act answer (seat and submission id) or attach answer
/// (seat and request id).
pub(crate) fn seat_key(seat: &str, id: &str) -> String {
    format!("{seat}\u{0}{id}")
}

/// The key of a session's one finalize answer.
pub(crate) const FINALIZE_KEY: &str = "result";

/// Act answers kept in memory per session; older ones are read back from
/// the store on the rare retry that needs them.
pub(crate) const ACT_ANSWERS_IN_MEMORY: usize = 256;

/// The stored answers of one session held in memory: every attach and
/// finalize answer, and the newest act answers (at most `act_capacity`).
#[derive(Debug)]
pub(crate) struct AnswerCache {
    answers: HashMap<(AnswerKind, String), StoredAnswer>,
    /// Insertion order of act answers, to bound the map.
    act_order: VecDeque<String>,
    act_capacity: usize,
    /// Some act answers may live only in the store: always true for a
    /// session loaded from the store (act answers are not loaded up front),
    /// and once an act answer was evicted.
    acts_in_store: bool,
}

impl AnswerCache {
    /// The cache of a session starting from `stored` (its non-act answers).
    pub(crate) fn from_stored(stored: Vec<StoredAnswer>, act_capacity: usize) -> Self {
        let answers = stored.into_iter().map(|a| ((a.kind, a.key.clone()), a)).collect();
        AnswerCache { answers, act_order: VecDeque::new(), act_capacity, acts_in_store: true }
    }

    pub(crate) fn get(&self, kind: AnswerKind, key: &str) -> Option<&StoredAnswer> {
        self.answers.get(&(kind, key.to_owned()))
    }

    /// Whether a missing act answer must be looked for in the store.
    pub(crate) fn acts_in_store(&self) -> bool {
        self.acts_in_store
    }

    /// Keep an answer that was just made durable.
    pub(crate) fn remember(&mut self, answer: StoredAnswer) {
        if answer.kind == AnswerKind::Act {
            self.act_order.push_back(answer.key.clone());
            while self.act_order.len() > self.act_capacity {
                if let Some(old) = self.act_order.pop_front() {
                    self.answers.remove(&(AnswerKind::Act, old));
                    self.acts_in_store = true;
                }
            }
        }
        self.answers.insert((answer.kind, answer.key.clone()), answer);
    }

    /// Every answer of `kind` held in memory.
    #[cfg(test)]
    pub(crate) fn of_kind(&self, kind: AnswerKind) -> impl Iterator<Item = &StoredAnswer> {
        self.answers.values().filter(move |a| a.kind == kind)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stored(kind: AnswerKind, key: &str) -> StoredAnswer {
        StoredAnswer {
            session_id: "s".into(),
            kind,
            key: key.into(),
            status: 200,
            request: fingerprint(&Value::from(key)),
            body: format!("{{\"k\":\"{key}\"}}"),
        }
    }

    #[test]
    fn a_remembered_answer_is_found_by_kind_and_key() {
        let mut cache = AnswerCache::from_stored(Vec::new(), 4);
        cache.remember(stored(AnswerKind::Act, "a\u{0}1"));
        cache.remember(stored(AnswerKind::Attach, "a\u{0}1"));
        assert_eq!(cache.get(AnswerKind::Act, "a\u{0}1").map(|a| a.kind), Some(AnswerKind::Act));
        assert_eq!(cache.get(AnswerKind::Attach, "a\u{0}1").map(|a| a.kind), Some(AnswerKind::Attach));
        assert!(cache.get(AnswerKind::Finalize, FINALIZE_KEY).is_none());
        assert_eq!(Answer::replayed(cache.get(AnswerKind::Act, "a\u{0}1").expect("kept")).body, "{\"k\":\"a\u{0}1\"}");
    }

    #[test]
    fn only_the_newest_act_answers_stay_and_eviction_is_noted() {
        let mut cache = AnswerCache { acts_in_store: false, ..AnswerCache::from_stored(Vec::new(), 2) };
        cache.remember(stored(AnswerKind::Attach, "x"));
        for key in ["1", "2"] {
            cache.remember(stored(AnswerKind::Act, key));
        }
        assert!(!cache.acts_in_store(), "nothing evicted yet");
        cache.remember(stored(AnswerKind::Act, "3"));
        assert!(cache.acts_in_store(), "the oldest act answer now lives only in the store");
        assert!(cache.get(AnswerKind::Act, "1").is_none());
        assert!(cache.get(AnswerKind::Act, "2").is_some() && cache.get(AnswerKind::Act, "3").is_some());
        assert!(cache.get(AnswerKind::Attach, "x").is_some(), "attach answers are never evicted");
    }

    #[test]
    fn a_loaded_session_looks_in_the_store_for_act_answers() {
        let cache = AnswerCache::from_stored(vec![stored(AnswerKind::Finalize, FINALIZE_KEY)], 8);
        assert!(cache.acts_in_store());
        assert_eq!(cache.of_kind(AnswerKind::Finalize).count(), 1);
        assert_eq!(cache.of_kind(AnswerKind::Attach).count(), 0);
    }

    #[test]
    fn an_exact_retry_has_the_same_fingerprint() {
        let a = gaos_json::parse(r#"{"b":1,"a":[1,2]}"#).expect("JSON");
        let b = gaos_json::parse(r#"{"a":[1,2],"b":1}"#).expect("JSON");
        let c = gaos_json::parse(r#"{"a":[2,1],"b":1}"#).expect("JSON");
        assert_eq!(fingerprint(&a), fingerprint(&b));
        assert_ne!(fingerprint(&a), fingerprint(&c));
    }
}
