//! Crash safety of the durable host: `gaos serve` is SIGKILLed at random
//! moments while client threads play several counter sessions. After every
//! restart the clients resubmit the exact bytes of their in-flight
//! submissions, and the test resubmits every acknowledged one: each answer
//! must equal the first answer byte for byte. At the end every acknowledged
//! submission is in the transcript exactly once, the game totals add up, and
//! every session finalizes and its replay verifies.
//!
//! The kill schedule is random; its seed is printed and can be replayed with
//! `GAOS_TEST_SEED=<seed>`.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use gaos_testkit::fixtures::Rng;
use gaos_testkit::http::*;
use gaos_testkit::server::{TempDir, TestServer};
use serde_json::{Value, json};

const GAOS: &str = env!("CARGO_BIN_EXE_gaos");
const SESSIONS: usize = 4;
const ROUNDS: u64 = 25;
const KILLS: usize = 7;
/// How long a client keeps retrying one request across restarts.
const RETRY_LIMIT: Duration = Duration::from_secs(60);

/// One submission a client sent (possibly several times).
#[derive(Debug, Clone)]
struct Sent {
    session: usize,
    seat: String,
    submission_id: String,
    body: Vec<u8>,
    /// The first answer received: status and exact bytes.
    first: Option<(u16, Vec<u8>)>,
}

struct Shared {
    base: RwLock<String>,
    sent: Mutex<Vec<Sent>>,
    acknowledged: AtomicUsize,
    /// Submissions whose first send was cut off by a kill and were resent.
    resent_in_flight: AtomicUsize,
    /// Clients start no new submission while set (in-flight ones continue).
    paused: AtomicBool,
    stop: AtomicBool,
}

impl Shared {
    fn base(&self) -> String {
        self.base.read().expect("base url").clone()
    }

    /// Record an answer; a later answer to the same submission must equal the first.
    fn answered(&self, index: usize, status: u16, body: Vec<u8>) {
        let mut sent = self.sent.lock().expect("sent log");
        let entry = &mut sent[index];
        match &entry.first {
            None => {
                entry.first = Some((status, body));
                self.acknowledged.fetch_add(1, Ordering::SeqCst);
            }
            Some((s, b)) => {
                let (first, again) = (String::from_utf8_lossy(b), String::from_utf8_lossy(&body));
                assert!(
                    (*s, b.as_slice()) == (status, body.as_slice()),
                    "a retry of {}/{} answered differently from the first answer:\n first: {s} {first}\n retry: {status} {again}",
                    entry.seat,
                    entry.submission_id
                );
            }
        }
    }
}

/// The counter command of `seat` at `revision` (distinct, so totals check).
fn command_n(seat: &str, revision: u64) -> u64 {
    revision * 2 + u64::from(seat == "b") + 1
}

/// Retry `request` across restarts until the server answers.
fn until_answered(shared: &Shared, what: &str, request: impl FnMut(&str) -> std::io::Result<Response>) -> Response {
    until_answered_counting(shared, what, request).0
}

/// [`until_answered`], also returning how many attempts failed first.
fn until_answered_counting(
    shared: &Shared,
    what: &str,
    mut request: impl FnMut(&str) -> std::io::Result<Response>,
) -> (Response, usize) {
    let deadline = Instant::now() + RETRY_LIMIT;
    let mut failed = 0;
    loop {
        match request(&shared.base()) {
            Ok(response) => return (response, failed),
            Err(e) => {
                failed += 1;
                assert!(Instant::now() < deadline, "{what}: the server never came back: {e}");
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    }
}

/// Stops everyone when a client thread panics.
struct StopOnPanic<'a>(&'a Shared);

impl Drop for StopOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.stop.store(true, Ordering::SeqCst);
        }
    }
}

/// Play `seat` of `session` to the end.
fn play_seat(shared: &Shared, index: usize, session: &Session, seat: &str) {
    let _guard = StopOnPanic(shared);
    let token = session.token(seat);
    loop {
        if shared.stop.load(Ordering::Relaxed) {
            return;
        }
        if shared.paused.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(1));
            continue;
        }
        let observed = until_answered(shared, "observe", |base| try_get(base, &session.path("tick"), Some(token)));
        assert_eq!(observed.status, 200, "{seat} observes: {}", observed.text());
        let envelope = observed.json();
        if envelope["tick"]["done"] == json!(true) {
            return;
        }
        let submitted = envelope["submittedParticipants"].as_array().is_some_and(|s| s.contains(&json!(seat)));
        if envelope["kind"] == json!("pending") && submitted {
            std::thread::sleep(Duration::from_millis(2));
            continue;
        }
        let revision = envelope["revision"].as_u64().expect("revision");
        let submission_id = format!("{seat}:{revision}");
        let body = submission(&envelope, seat, &submission_id, json!({"n": command_n(seat, revision)}));
        let body = body.to_string().into_bytes();
        let entry = {
            let mut sent = shared.sent.lock().expect("sent log");
            sent.push(Sent {
                session: index,
                seat: seat.to_owned(),
                submission_id: submission_id.clone(),
                body: body.clone(),
                first: None,
            });
            sent.len() - 1
        };
        // The exact same bytes are resent after every crash until answered.
        let (response, failed) = until_answered_counting(shared, "act", |base| {
            try_post_bytes(base, &session.path("actions"), Some(token), &body)
        });
        if failed > 0 {
            shared.resent_in_flight.fetch_add(1, Ordering::SeqCst);
        }
        assert!(
            response.is_success(),
            "{seat}'s submission {submission_id} (in flight across a crash or not) must be accepted: {} {}",
            response.status,
            response.text()
        );
        shared.answered(entry, response.status, response.body);
    }
}

/// Resubmit every acknowledged submission; each answer must be the first
/// one. Returns how many were resubmitted.
fn resubmit_acknowledged(shared: &Shared, sessions: &[Session]) -> usize {
    let acknowledged: Vec<(usize, Sent)> = {
        let sent = shared.sent.lock().expect("sent log");
        sent.iter().enumerate().filter(|(_, s)| s.first.is_some()).map(|(i, s)| (i, s.clone())).collect()
    };
    for (index, sent) in &acknowledged {
        let session = &sessions[sent.session];
        let response = until_answered(shared, "resubmit", |base| {
            try_post_bytes(base, &session.path("actions"), Some(session.token(&sent.seat)), &sent.body)
        });
        shared.answered(*index, response.status, response.body);
    }
    acknowledged.len()
}

#[test]
fn acknowledged_submissions_survive_sigkill_exactly_once() {
    let (mut rng, seed) = Rng::from_time();
    eprintln!("crash schedule seed: {seed} (rerun with GAOS_TEST_SEED={seed})");
    let mut server = TestServer::start(GAOS);
    let operator = server.operator_token.clone();
    let sessions: Vec<Session> = (0..SESSIONS)
        .map(|_| {
            create_session(
                &server.base_url,
                &operator,
                &json!({"game": "conformance/counter", "level": {"rounds": ROUNDS}}),
            )
        })
        .collect();
    let shared = Arc::new(Shared {
        base: RwLock::new(server.base_url.clone()),
        sent: Mutex::new(Vec::new()),
        acknowledged: AtomicUsize::new(0),
        resent_in_flight: AtomicUsize::new(0),
        paused: AtomicBool::new(false),
        stop: AtomicBool::new(false),
    });

    let mut clients = Vec::new();
    for (index, session) in sessions.iter().enumerate() {
        for seat in ["a", "b"] {
            let (shared, session) = (Arc::clone(&shared), session.clone());
            clients.push(std::thread::spawn(move || play_seat(&shared, index, &session, seat)));
        }
    }

    // Kill after a random number of new acknowledgements plus a random delay,
    // so every kill lands while the clients are playing.
    let total = SESSIONS * 2 * ROUNDS as usize;
    let mut kills = 0;
    let mut resubmitted = 0;
    while kills < KILLS {
        let target = shared.acknowledged.load(Ordering::SeqCst) + rng.range(1, 6) as usize;
        let deadline = Instant::now() + RETRY_LIMIT;
        while shared.acknowledged.load(Ordering::SeqCst) < target.min(total) && !shared.stop.load(Ordering::SeqCst) {
            assert!(Instant::now() < deadline, "the clients stopped making progress");
            std::thread::sleep(Duration::from_millis(1));
        }
        if shared.acknowledged.load(Ordering::SeqCst) >= total || shared.stop.load(Ordering::SeqCst) {
            break;
        }
        std::thread::sleep(Duration::from_millis(rng.range(0, 10)));
        server.restart();
        kills += 1;
        // The clients finish (resend) what was in flight but start nothing
        // new while every acknowledged submission is resubmitted.
        shared.paused.store(true, Ordering::SeqCst);
        *shared.base.write().expect("base url") = server.base_url.clone();
        resubmitted += resubmit_acknowledged(&shared, &sessions);
        shared.paused.store(false, Ordering::SeqCst);
    }

    let mut failures = Vec::new();
    for client in clients {
        if let Err(panic) = client.join() {
            shared.stop.store(true, Ordering::Relaxed);
            failures.push(panic.downcast_ref::<String>().cloned().unwrap_or_else(|| "a client panicked".into()));
        }
    }
    assert!(failures.is_empty(), "client failures: {failures:#?}");
    assert_eq!(kills, KILLS, "every kill landed during play (seed {seed})");
    let resent = shared.resent_in_flight.load(Ordering::SeqCst);
    assert!(resent > 0, "some kill cut off a submission in flight (seed {seed})");

    // One more restart after everything finished, then check the whole record.
    server.restart();
    *shared.base.write().expect("base url") = server.base_url.clone();
    resubmitted += resubmit_acknowledged(&shared, &sessions);
    let base = server.base_url.clone();
    let sent = shared.sent.lock().expect("sent log").clone();
    assert_eq!(sent.len(), total, "one submission per seat per round, however many crashes");
    let dir = TempDir::new("gaos-crash-replays");
    for (index, session) in sessions.iter().enumerate() {
        let mine: Vec<&Sent> = sent.iter().filter(|s| s.session == index).collect();
        assert!(mine.iter().all(|s| s.first.is_some()), "every submission was acknowledged in the end");
        let (_, events) = transcript(&base, &operator, session);
        let mut in_transcript: BTreeMap<(String, String), usize> = BTreeMap::new();
        for identity in accepted_identities(&events) {
            *in_transcript.entry(identity).or_default() += 1;
        }
        for s in &mine {
            let count = in_transcript.get(&(s.seat.clone(), s.submission_id.clone())).copied().unwrap_or(0);
            assert_eq!(count, 1, "{}/{} is in the transcript {count} times", s.seat, s.submission_id);
        }
        assert_eq!(in_transcript.len(), mine.len(), "the transcript holds only submissions that were sent");
        let expected_total: u64 = (0..ROUNDS).map(|r| command_n("a", r) + command_n("b", r)).sum();
        let end = tick(&base, session, session.token("a"));
        assert_eq!(end["tick"]["status"], json!("ended"));
        assert_eq!(end["tick"]["round"], json!(ROUNDS));
        assert_eq!(end["tick"]["total"], json!(expected_total), "each submission counted exactly once");
        let resolutions = events.iter().filter(|e| e["kind"] == json!("resolution")).count() as u64;
        assert_eq!(resolutions, ROUNDS, "one resolution per round");
        finalize_and_verify(GAOS, &base, dir.path(), session, "b", &format!("crash-{index}"));
    }
    eprintln!("{kills} kills, {resent} in-flight submissions resent, {resubmitted} acknowledged ones resubmitted");

    // Finalization is durable too: after another SIGKILL the result, the
    // replay and the refusal of further acts are unchanged.
    let finalized = |base: &str| -> Vec<(Vec<u8>, Vec<u8>)> {
        sessions
            .iter()
            .map(|session| {
                let request = json!({"requestId": format!("finalize:{}", session.id), "metadata": {"by": "b"}});
                let result = post(base, &session.path("finalize"), Some(session.token("a")), &request);
                assert_eq!(result.status, 200, "{}", result.text());
                let replay = get(base, &session.path("replay"), Some(session.token("a")));
                assert_eq!(replay.status, 200);
                (result.body, replay.body)
            })
            .collect()
    };
    let before = finalized(&server.base_url);
    server.restart();
    assert!(before == finalized(&server.base_url), "finalize results and replays survive a crash byte for byte");
    let last = sent.last().expect("a submission");
    let session = &sessions[last.session];
    let late = post_bytes(&server.base_url, &session.path("actions"), Some(session.token(&last.seat)), &last.body);
    assert_error(&late, 409, "session_finalized");
}

#[test]
fn a_ticks_session_keeps_its_clock_across_sigkill() {
    let mut server = TestServer::start(GAOS);
    let operator = server.operator_token.clone();
    let session = create_session(
        &server.base_url,
        &operator,
        &json!({"game": "conformance/race", "cadence": {"mode": "ticks", "ticksPerSecond": 20}}),
    );
    wait_until(Duration::from_secs(20), "the race to start moving", || {
        tick(&server.base_url, &session, session.token("p1"))["revision"].as_u64() >= Some(2)
    });
    server.restart();
    let restarted = tick(&server.base_url, &session, session.token("p1"));
    assert!(restarted["revision"].as_u64() >= Some(2), "no resolved tick was lost: {restarted}");
    let mut end = Value::Null;
    wait_until(Duration::from_secs(20), "the race to finish after the restart", || {
        end = tick(&server.base_url, &session, session.token("p2"));
        end["tick"]["done"] == json!(true)
    });
    let view = &end["tick"];
    assert_eq!(view["status"], json!("ended"));
    assert_eq!(view["pos"], json!({"p1": 12, "p2": 12}), "nobody boosted: both reach the line together");
    let (_, events) = transcript(&server.base_url, &operator, &session);
    let resolutions = events.iter().filter(|e| e["kind"] == json!("resolution")).count();
    assert_eq!(json!(resolutions), view["tick"], "one resolution per tick, none repeated or lost");
    let dir = TempDir::new("gaos-crash-race");
    finalize_and_verify(GAOS, &server.base_url, dir.path(), &session, "p1", "race-after-crash");
}
