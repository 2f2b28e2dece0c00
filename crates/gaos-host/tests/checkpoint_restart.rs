//! Issue 19 item 2 through the real host and SQLite: a session checkpointed
//! every few transitions and killed/reopened at seeded random points answers
//! exactly as the same database rehydrated from its whole log (checkpoints
//! deleted): views, snapshots, attach receipts (state and transcript
//! digests), the transcript, exact retries of submissions accepted long
//! before the retention floor, refused reuses of old identities, and the
//! play that follows.

use std::path::Path;
use std::sync::Arc;

use gaos_host::auth::Caller;
use gaos_host::lease::Presented;
use gaos_host::requests::{ActRequest, AttachRequest, CreateRequest};
use gaos_host::{Answer, Host, HostError, HostOptions};
use gaos_json::Value;
use gaos_testkit::server::TempDir;

const SESSION: &str = "long-counter";

fn attach_request(text: &str) -> AttachRequest {
    AttachRequest::from_value(json(text)).expect("an attach request")
}

fn create_request(text: &str) -> CreateRequest {
    CreateRequest::from_value(json(text)).expect("a create request")
}

fn json(text: &str) -> Value {
    gaos_json::parse(text).expect("test JSON")
}

fn submission(revision: u64, seat: &str, n: u64) -> ActRequest {
    ActRequest::from_value(json(&format!(
        r#"{{"protocol":"gaos.ticks","protocolVersion":"1.0","sessionId":"{SESSION}","tickId":"{SESSION}:{revision}",
            "revision":{revision},"participantId":"{seat}","submissionId":"{seat}:{revision}","command":{{"n":{n}}}}}"#
    )))
}

fn seat(name: &str) -> Caller {
    Caller::Seat { session_id: SESSION.into(), seat: name.into() }
}

async fn open(dir: &Path, checkpoint_every: u64, lazy: bool) -> Host {
    let (writer, reader) = gaos_host::storage::sqlite::open(&dir.join("gaos.sqlite3")).expect("a database");
    let host_key = gaos_host::host_key::HostKey::load_or_create(dir).expect("a host key");
    let options = HostOptions { host_key, checkpoint_every, ..HostOptions::new(gaos_games::GameRegistry::builtin()) };
    if lazy {
        Host::open_lazy(Box::new(writer), Arc::new(reader), "operator", options).await.expect("a host")
    } else {
        Host::open(Box::new(writer), Arc::new(reader), "operator", options).await.expect("a host").0
    }
}

/// A small deterministic generator (the crash points are seeded).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, below: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) % below
    }
}

async fn round(host: &Host, revision: u64) -> Vec<Answer> {
    let mut answers = Vec::new();
    for (name, n) in [("a", revision % 7), ("b", revision % 5 + 1)] {
        let answer = host.act(&seat(name), SESSION, Presented::default(), submission(revision, name, n)).await;
        answers.push(answer.unwrap_or_else(|e| panic!("round {revision} seat {name}: {e:?}")));
    }
    answers
}

/// Wall-clock stamps (lease expiries, attach times) differ between two
/// hosts run one after the other; everything else must be equal.
fn without_clock(body: &str) -> String {
    fn strip(value: &mut Value) {
        match value {
            Value::Object(map) => {
                map.remove("expiresAt");
                map.remove("attachedAt");
                map.remove("receiptDigest");
                map.values_mut().for_each(strip);
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    match gaos_json::parse(body) {
        Ok(mut value) => {
            strip(&mut value);
            gaos_json::canonical_json(&value)
        }
        Err(_) => body.to_owned(),
    }
}

fn outcome(result: Result<Answer, HostError>) -> (u16, String) {
    match result {
        Ok(answer) => (answer.status, without_clock(&answer.body)),
        Err(e) => (e.status.as_u16(), e.code.to_string()),
    }
}

/// Everything a client can read or provoke, in a fixed order.
async fn probe(host: &Host, first: &[Answer], next_round: u64) -> Vec<(u16, String)> {
    let mut seen = Vec::new();
    for name in ["a", "b"] {
        seen.push(outcome(host.observe(&seat(name), SESSION).await));
        seen.push(outcome(host.snapshot(&seat(name), SESSION, None).await));
    }
    // An exact retry of the very first submission, long below the floor.
    let retry = host.act(&seat("a"), SESSION, Presented::default(), submission(0, "a", 0)).await;
    assert_eq!(retry.as_ref().ok(), Some(&first[0]), "the oldest exact retry gets its original bytes");
    seen.push(outcome(retry));
    // The same identity with another command is refused, not applied.
    let reuse = host.act(&seat("b"), SESSION, Presented::default(), submission(0, "b", 99)).await;
    assert!(reuse.is_err() || reuse.as_ref().is_ok_and(|a| a.status >= 400), "an old identity is never applied again");
    seen.push(outcome(reuse));
    let attach = attach_request(r#"{"requestId":"probe-attach","participantId":"a"}"#);
    seen.push(outcome(host.attach(&seat("a"), SESSION, Presented::default(), attach).await));
    for revision in next_round..next_round + 4 {
        for answer in round(host, revision).await {
            seen.push((answer.status, without_clock(&answer.body)));
        }
    }
    let attach = attach_request(r#"{"requestId":"probe-attach-2","participantId":"b"}"#);
    seen.push(outcome(host.attach(&seat("b"), SESSION, Presented::default(), attach).await));
    seen.push((0, host.transcript(&Caller::Operator, SESSION).await.expect("the transcript")));
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checkpoint_and_tail_answer_as_the_whole_log_across_random_crash_points() {
    for seed in [1u64, 7, 42] {
        let dir = TempDir::new("gaos-checkpoint-restart");
        let mut rng = Lcg(seed);
        let rounds = 40 + rng.next(20);
        let every = 2 + rng.next(4);
        let mut host = open(dir.path(), every, false).await;
        let create = format!(r#"{{"game":"conformance/counter","sessionId":"{SESSION}","level":{{"rounds":1000}}}}"#);
        host.create(&Caller::Operator, create_request(&create)).await.expect("created");
        let mut first = Vec::new();
        for revision in 0..rounds {
            let answers = round(&host, revision).await;
            if revision == 0 {
                first = answers;
            }
            if revision % 9 == 4 {
                let attach = attach_request(&format!(r#"{{"requestId":"mid-{revision}","participantId":"b"}}"#));
                host.attach(&seat("b"), SESSION, Presented::default(), attach).await.expect("attached");
            }
            // A crash point: the host goes away and a new one reopens the
            // directory (lazily, or with the restart pass).
            if rng.next(4) == 0 {
                drop(host);
                host = open(dir.path(), every, rng.next(2) == 0).await;
            }
        }
        drop(host);

        // The same database without its checkpoints: rehydrated from the log.
        let full = TempDir::new("gaos-checkpoint-full-log");
        let conn = rusqlite::Connection::open(dir.path().join("gaos.sqlite3")).expect("open");
        conn.execute("VACUUM INTO ?1", [full.path().join("gaos.sqlite3").to_str().expect("utf-8 path")])
            .expect("a copy");
        let stored: i64 = conn.query_row("SELECT count(*) FROM checkpoints", [], |r| r.get(0)).expect("count");
        assert_eq!(stored, 1, "seed {seed}: the session has its newest checkpoint");
        std::fs::copy(dir.path().join("host-key"), full.path().join("host-key")).expect("the same host key");
        let copy = rusqlite::Connection::open(full.path().join("gaos.sqlite3")).expect("open the copy");
        copy.execute("DELETE FROM checkpoints", []).expect("checkpoints dropped");
        drop(copy);

        let restored = probe(&open(dir.path(), every, true).await, &first, rounds).await;
        let replayed = probe(&open(full.path(), 0, true).await, &first, rounds).await;
        assert_eq!(restored.len(), replayed.len());
        for (i, (r, f)) in restored.iter().zip(&replayed).enumerate() {
            assert_eq!(r, f, "seed {seed}, probe {i}: checkpoint + tail differs from the whole log");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_below_the_retention_floor_is_told_to_resync_and_recovers_from_a_full_snapshot() {
    let dir = TempDir::new("gaos-checkpoint-resync");
    let host = open(dir.path(), 2, false).await;
    let create = format!(r#"{{"game":"conformance/counter","sessionId":"{SESSION}","level":{{"rounds":1000}}}}"#);
    host.create(&Caller::Operator, create_request(&create)).await.expect("created");
    for revision in 0..10 {
        round(&host, revision).await;
    }
    let refused = host.snapshot(&seat("a"), SESSION, Some(1)).await.expect_err("below the floor");
    assert_eq!((refused.status.as_u16(), refused.code.as_str()), (409, "resync_required"), "{}", refused.message);
    let full = host.snapshot(&seat("a"), SESSION, None).await.expect("a full snapshot");
    assert_eq!(full.status, 200);
    assert!(full.body.contains(r#""round":10"#), "the full snapshot is current: {}", full.body);
    // A stream resuming below the floor starts from that full snapshot.
    let stream = host.subscribe(&seat("a"), SESSION, Some(1)).await.expect("a stream");
    assert_eq!(stream.initial.len(), 1);
    assert_eq!(stream.initial[0].data, full.body, "the stream resyncs from the full snapshot");
}

/// A host that compacts without ever restarting answers its oldest
/// identities from the store: the filter of identities below the floor
/// (`actor/below_floor.rs`) only spares the store the questions about new
/// ones, and never hides an old one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn identities_compacted_away_without_a_restart_are_still_known() {
    let dir = TempDir::new("gaos-checkpoint-no-restart");
    let host = open(dir.path(), 2, false).await;
    // Few retained receipts, so old identities are known only below the floor.
    let create = format!(
        r#"{{"game":"conformance/counter","sessionId":"{SESSION}","level":{{"rounds":1000}},"limits":{{"receiptRetention":4}}}}"#
    );
    host.create(&Caller::Operator, create_request(&create)).await.expect("created");
    let mut answers = Vec::new();
    for revision in 0..30 {
        answers.push(round(&host, revision).await);
    }
    for (revision, first) in answers.iter().enumerate().step_by(7) {
        let revision = revision as u64;
        for (i, name) in ["a", "b"].into_iter().enumerate() {
            let n = if name == "a" { revision % 7 } else { revision % 5 + 1 };
            let retry = host.act(&seat(name), SESSION, Presented::default(), submission(revision, name, n)).await;
            assert_eq!(retry.as_ref().ok(), Some(&first[i]), "round {revision}, {name}: the exact retry's bytes");
            let reuse = host.act(&seat(name), SESSION, Presented::default(), submission(revision, name, 99)).await;
            assert!(
                reuse.as_ref().is_err_and(|e| e.status.as_u16() == 409)
                    || reuse.as_ref().is_ok_and(|a| a.status >= 400),
                "round {revision}, {name}: an old identity with another command is refused: {reuse:?}"
            );
        }
    }
    // New identities are still accepted after all those questions.
    let next = round(&host, 30).await;
    assert!(next.iter().all(|a| a.status < 300), "{next:?}");
}
