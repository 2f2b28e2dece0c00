//! The persist funnel under injected store faults (`storage/faults.rs`): a
//! write that fails changes nothing a caller can see, a write whose answer
//! was lost is found in the store on the resend (never applied twice), a
//! fenced write stops the actor, and the status that ends a session is
//! stored in the same batch as the transition that ends it.

use std::sync::Arc;

use gaos_host::auth::Caller;
use gaos_host::lease::Presented;
use gaos_host::requests::CreateRequest;
use gaos_host::storage::faults::{Faults, FaultyStore};
use gaos_host::storage::{SessionStatus, StoreReader};
use gaos_host::{Host, HostOptions};
use gaos_json::Value;
use gaos_session::ErrorCode;
use gaos_testkit::server::TempDir;

mod support;
use support::{json, submission};

struct Fixture {
    host: Host,
    faults: Faults,
    reader: Arc<dyn StoreReader>,
    id: String,
    _dir: TempDir,
}

impl Fixture {
    async fn new(rounds: u32) -> Fixture {
        let dir = TempDir::new("gaos-persist-faults");
        let (writer, reader) = gaos_host::storage::sqlite::open(&dir.path().join("gaos.sqlite3")).expect("a database");
        let (store, faults) = FaultyStore::wrap(writer);
        let reader: Arc<dyn StoreReader> = Arc::new(reader);
        let options = HostOptions::new(gaos_games::GameRegistry::builtin());
        let (host, _) = Host::open(Box::new(store), Arc::clone(&reader), "operator", options).await.expect("a host");
        let body = format!(r#"{{"game":"conformance/counter","level":{{"rounds":{rounds}}}}}"#);
        let created = host
            .create(&Caller::Operator, CreateRequest::from_value(json(&body)).expect("a create request"))
            .await
            .expect("created");
        let id = json(&created.body).get("sessionId").and_then(Value::as_str).expect("sessionId").to_owned();
        Fixture { host, faults, reader, id, _dir: dir }
    }

    async fn act(&self, seat: &str, revision: u64) -> Result<gaos_host::Answer, gaos_host::HostError> {
        let caller = Caller::Seat { session_id: self.id.clone(), seat: seat.into() };
        self.host.act(&caller, &self.id, Presented::default(), submission(&self.id, revision, seat, 1)).await
    }

    async fn revision(&self) -> u64 {
        let caller = Caller::Seat { session_id: self.id.clone(), seat: "a".into() };
        let answer = self.host.observe(&caller, &self.id).await.expect("observe");
        json(&answer.body).get("revision").and_then(Value::as_u64).expect("revision")
    }

    /// How often `submission_id` was accepted in the stored transcript.
    fn accepted(&self, submission_id: &str) -> usize {
        let needle = format!(r#""submissionId":"{submission_id}""#);
        let events = self.reader.load_events(&self.id).expect("events");
        events.iter().filter(|e| e.body.contains(r#""kind":"intent-accepted""#) && e.body.contains(&needle)).count()
    }

    fn status(&self) -> SessionStatus {
        self.reader.load_session(&self.id).expect("load").expect("the session").status
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_write_changes_nothing_and_its_resend_lands_once() {
    let f = Fixture::new(3).await;
    assert_eq!(f.act("a", 0).await.expect("a acts").status, 202);
    f.faults.fail_next(1);
    let refused = f.act("b", 0).await.expect_err("the write fails");
    assert_eq!((refused.status.as_u16(), &refused.code), (503, &ErrorCode::Unavailable), "{refused}");
    // Nothing moved: the window still waits for b.
    assert_eq!(f.revision().await, 0);
    assert_eq!(f.accepted("b:0"), 0);
    let resent = f.act("b", 0).await.expect("the resend lands");
    assert_eq!(resent.status, 200, "{}", resent.body);
    assert_eq!(f.revision().await, 1);
    assert_eq!((f.accepted("a:0"), f.accepted("b:0")), (1, 1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_whose_answer_was_lost_is_answered_from_the_store_on_resend() {
    let f = Fixture::new(3).await;
    assert_eq!(f.act("a", 0).await.expect("a acts").status, 202);
    f.faults.lose_ack_next(1);
    let lost = f.act("b", 0).await.expect_err("the answer is lost");
    assert_eq!(lost.status.as_u16(), 503, "{lost}");
    // The actor reloads from the store, where b's move is: the resend gets
    // the stored answer, and the move is in the transcript once.
    let resent = f.act("b", 0).await.expect("the resend is answered");
    assert_eq!(resent.status, 200, "{}", resent.body);
    assert_eq!(f.revision().await, 1);
    assert_eq!((f.accepted("a:0"), f.accepted("b:0")), (1, 1));
    let again = f.act("b", 0).await.expect("every later resend");
    assert_eq!(again.body, resent.body, "the same bytes every time");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fenced_write_stops_the_actor_and_answers_fenced() {
    let f = Fixture::new(3).await;
    assert_eq!(f.act("a", 0).await.expect("a acts").status, 202);
    f.faults.fence(&f.id);
    let fenced = f.act("b", 0).await.expect_err("fenced");
    assert_eq!((fenced.status.as_u16(), &fenced.code), (503, &ErrorCode::Fenced), "{fenced}");
    assert_eq!(f.accepted("b:0"), 0, "nothing of a fenced batch is stored");
    // The host forgot the actor: the next request loads the session from
    // the store again (here it is fenced again, as a deposed host would be).
    let again = f.act("b", 0).await.expect_err("still fenced");
    assert_eq!(again.code, ErrorCode::Fenced);
    assert_eq!(f.accepted("b:0"), 0);
}

/// Whether a batch stores a resolution.
fn resolves(batch: &gaos_host::storage::WriteBatch) -> bool {
    batch.ops.iter().any(|op| match op {
        gaos_host::storage::WriteOp::Events { events, .. } => {
            events.iter().any(|e| e.body.contains(r#""kind":"resolution""#))
        }
        _ => false,
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ending_transition_stores_the_terminal_status_in_its_own_batch() {
    let f = Fixture::new(1).await;
    assert_eq!(f.act("a", 0).await.expect("a acts").status, 202);
    // Only the batch that stores the resolution may fail: when it does,
    // neither the end nor the status is stored (they travel together).
    f.faults.fail_matching(Some(Box::new(resolves)));
    f.act("b", 0).await.expect_err("the write fails");
    assert_eq!(f.status(), SessionStatus::Active);
    assert_eq!(f.revision().await, 0);
    f.faults.fail_matching(None);
    assert_eq!(f.act("b", 0).await.expect("resent").status, 200);
    // Read straight after the answer: no later write was needed for it.
    assert_eq!(f.status(), SessionStatus::Terminal);
}
