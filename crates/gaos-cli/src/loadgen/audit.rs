//! After a run, the durability check: every acknowledged submission is in
//! its session's transcript exactly once (none lost, none applied twice),
//! and how long sessions were unavailable (from a seat's first failed try to
//! its next acknowledged one), which is what a host failover costs.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;

use gaos_json::Value;

/// What the audit found.
#[derive(Debug, Default)]
pub(super) struct Audit {
    pub sessions: usize,
    pub acknowledged: usize,
    /// Acknowledged submissions missing from their session's transcript.
    pub lost: usize,
    /// Submission ids accepted more than once in a transcript.
    pub doubled: usize,
    /// The first problem found, in words.
    pub first_problem: Option<String>,
    /// Per session that had an outage: its longest one.
    pub outages: Vec<Duration>,
}

impl Audit {
    /// The `q` quantile of the outages (zero when there were none).
    pub fn outage(&self, q: f64) -> Duration {
        if self.outages.is_empty() {
            return Duration::ZERO;
        }
        let mut sorted = self.outages.clone();
        sorted.sort();
        let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
        sorted[rank - 1]
    }
}

/// `(participantId, submissionId)` of every `intent-accepted` event of a
/// transcript (JSON lines: a header, then one event per line).
fn accepted(transcript: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    for line in transcript.lines().skip(1).filter(|l| !l.trim().is_empty()) {
        let event = gaos_json::parse(line).map_err(|e| format!("a transcript line is not JSON: {e}"))?;
        if event.get("kind").and_then(Value::as_str) == Some("intent-accepted") {
            let field = |k: &str| event.get(k).and_then(Value::as_str).unwrap_or_default().to_owned();
            out.push((field("participantId"), field("submissionId")));
        }
    }
    Ok(out)
}

/// Check the acknowledged `(seat, submission id)`s of each session against
/// its transcript, fetched by `fetch` (which tries every host).
pub(super) async fn audit<F, Fut>(
    acked: &HashMap<Arc<str>, Vec<(String, String)>>,
    outages: &HashMap<Arc<str>, Duration>,
    fetch: F,
) -> Audit
where
    F: Fn(Arc<str>) -> Fut,
    Fut: std::future::Future<Output = Result<String, String>>,
{
    let mut audit = Audit { sessions: acked.len(), ..Audit::default() };
    audit.outages = outages.values().copied().collect();
    for (session, acks) in acked {
        audit.acknowledged += acks.len();
        let transcript = match fetch(Arc::clone(session)).await {
            Ok(text) => text,
            Err(e) => {
                audit.lost += acks.len();
                audit.first_problem.get_or_insert(format!("the transcript of {session} could not be read: {e}"));
                continue;
            }
        };
        let found = match accepted(&transcript) {
            Ok(found) => found,
            Err(e) => {
                audit.first_problem.get_or_insert(format!("{session}: {e}"));
                continue;
            }
        };
        let mut counts: BTreeMap<&(String, String), usize> = BTreeMap::new();
        for identity in &found {
            *counts.entry(identity).or_default() += 1;
        }
        for (identity, n) in &counts {
            if *n > 1 {
                audit.doubled += 1;
                audit
                    .first_problem
                    .get_or_insert(format!("{session}: {} {} was accepted {n} times", identity.0, identity.1));
            }
        }
        for ack in acks {
            if !counts.contains_key(ack) {
                audit.lost += 1;
                audit.first_problem.get_or_insert(format!(
                    "{session}: the acknowledged submission {} of {} is not in the transcript",
                    ack.1, ack.0
                ));
            }
        }
    }
    audit
}

#[cfg(test)]
mod tests {
    use super::*;

    fn transcript(ids: &[(&str, &str)]) -> String {
        let mut text = String::from("{\"header\":true}\n");
        for (seat, id) in ids {
            text.push_str(&format!(
                "{{\"kind\":\"intent-accepted\",\"participantId\":\"{seat}\",\"submissionId\":\"{id}\"}}\n"
            ));
            text.push_str("{\"kind\":\"resolution\"}\n");
        }
        text
    }

    #[tokio::test]
    async fn lost_and_doubled_submissions_are_counted() {
        let session: Arc<str> = "s".into();
        let acked = HashMap::from([(
            Arc::clone(&session),
            vec![
                ("a".to_owned(), "a-0".to_owned()),
                ("a".to_owned(), "a-1".to_owned()),
                ("b".to_owned(), "b-0".to_owned()),
            ],
        )]);
        let text = transcript(&[("a", "a-0"), ("b", "b-0"), ("b", "b-0")]);
        let outages = HashMap::from([(Arc::clone(&session), Duration::from_millis(2500))]);
        let found = audit(&acked, &outages, |_| {
            let text = text.clone();
            async move { Ok(text) }
        })
        .await;
        assert_eq!((found.acknowledged, found.lost, found.doubled), (3, 1, 1));
        assert!(found.first_problem.is_some());
        assert_eq!(found.outage(0.99), Duration::from_millis(2500));
        let clean = audit(&acked, &HashMap::new(), |_| {
            let text = transcript(&[("a", "a-0"), ("a", "a-1"), ("b", "b-0")]);
            async move { Ok(text) }
        })
        .await;
        assert_eq!((clean.lost, clean.doubled, clean.first_problem.as_deref()), (0, 0, None));
        assert_eq!(clean.outage(0.5), Duration::ZERO);
    }
}
