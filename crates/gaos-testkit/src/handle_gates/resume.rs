//! Gates about resuming: an interrupted run attaches and continues without
//! duplicate actions (g10), also across a host restart, and a lapsed lease
//! is renewed with the same submission retried once.

use gaos_json::{Value, obj};
use gaos_runner::drivers::ScriptedDriver;
use gaos_runner::receipts::verify_typed_receipt_chain;
use gaos_runner::{AttachRequest, CancellationToken, FinalizeMode, RunError, RunOptions, RunPolicy, SessionPolicy};
use gaos_runner::{SessionHandle, run_session};

use super::drivers::InterruptAfter;
use super::{GateHost, accepted, json, lease_events, play, verification_policy};

fn script(moves: &[u32]) -> ScriptedDriver {
    ScriptedDriver::new(moves.iter().map(|n| obj! { "n" => *n }.into()).collect())
}

/// g10: a seat's run is interrupted mid-match; the seat attaches in a "new
/// process" at the durable head and plays the rest, nothing duplicated.
pub async fn g10_interrupted_runs_attach_and_continue_without_duplicate_actions(host: &mut impl GateHost) {
    let policy = verification_policy();
    let request = json(r#"{"game":"conformance/counter","level":{"rounds":4},"participantId":"a"}"#);
    let created = host.create(&request, &policy).await.expect("create");
    let id = created.session_id.clone();
    let b = host.attach(&id, "b", &AttachRequest::new("b"), &policy).await.expect("attach b");
    // Seat a plays 2 of its 4 rounds, then its process is interrupted.
    let cancel = CancellationToken::new();
    let mut a_driver =
        InterruptAfter { inner: Box::new(script(&[1, 2, 3, 0])), after: 2, made: 0, cancel: cancel.clone() };
    let b_run = async {
        let mut driver = script(&[3, 3, 3, 3]);
        let caller = RunPolicy { finalize: FinalizeMode::Caller, ..RunPolicy::default() };
        run_session(b.as_ref(), &mut driver, RunOptions::new(caller)).await
    };
    let host_ref = &*host;
    let a_run = async {
        let interrupted =
            run_session(created.handle.as_ref(), &mut a_driver, RunOptions::new(RunPolicy::default()).cancel(cancel))
                .await;
        assert_eq!(interrupted.expect_err("interrupted"), RunError::Cancelled);
        created.handle.close();
        // The seat resumes in a new process: attach at the durable head and
        // run the rest of its script.
        let resumed = host_ref.attach(&id, "a", &AttachRequest::new("a-resume"), &policy).await.expect("attach");
        assert_eq!(resumed.receipt().expect("receipt").sequence, 1, "the resume receipt follows b's");
        let mut rest = script(&[3, 0]);
        run_session(resumed.as_ref(), &mut rest, RunOptions::new(RunPolicy::default())).await
    };
    let (a_outcome, b_outcome) = tokio::join!(a_run, b_run);
    let a_outcome = a_outcome.expect("the resumed run completes");
    b_outcome.expect("b completes");
    assert_eq!(a_outcome.decisions.len(), 2);
    let result = a_outcome.result.expect("finalized");
    let accepted = accepted(&host.transcript(&id).await);
    assert_eq!(accepted.len(), 8, "4 rounds × 2 seats, nothing duplicated: {accepted:?}");
    let a_commands: Vec<String> = accepted.iter().filter(|(s, _, _)| s == "\"a\"").map(|(_, _, c)| c.clone()).collect();
    assert_eq!(a_commands, vec!["{\"n\":1}", "{\"n\":2}", "{\"n\":3}", "{\"n\":0}"]);
    let mut ids: Vec<&String> = accepted.iter().map(|(_, id, _)| id).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 8, "every accepted submission id is unique");
    assert_eq!(result.outcome.get("status"), Some(&Value::from("ended")));
    host.verify_replay("g10-interrupted", result.replay_text().expect("replay"));
}

/// g10 across a restart: both seats stop after two rounds, the host
/// restarts on the same store, both attach at the same durable head and
/// finish; the receipt chain continues across the restart.
pub async fn g10_interrupted_runs_resume_after_a_host_restart_without_duplicate_actions(host: &mut impl GateHost) {
    let policy = verification_policy();
    let request = json(r#"{"game":"conformance/counter","level":{"rounds":4},"participantId":"a"}"#);
    let created = host.create(&request, &policy).await.expect("create");
    let id = created.session_id.clone();
    let b = host.attach(&id, "b", &AttachRequest::new("attach-b"), &policy).await.expect("attach b");
    // Both seats play two rounds, then both processes stop.
    let caller = RunPolicy { finalize: FinalizeMode::Caller, ..RunPolicy::default() };
    let (mut a1, mut b1) = (script(&[1, 2]), script(&[3, 3]));
    let (ra, rb) = tokio::join!(
        run_session(created.handle.as_ref(), &mut a1, RunOptions::new(caller)),
        run_session(b.as_ref(), &mut b1, RunOptions::new(caller)),
    );
    for run in [ra, rb] {
        let error = run.expect_err("each script runs out after two rounds");
        assert!(matches!(error, RunError::Driver { .. }), "{error}");
    }
    let first_receipt = b.receipt().expect("receipt");
    created.handle.close();
    b.close();
    drop((created, b));
    assert_eq!(accepted(&host.transcript(&id).await).len(), 4);

    host.restart().await;
    let a = host.attach(&id, "a", &AttachRequest::new("a-resume"), &policy).await.expect("attach");
    let b = host.attach(&id, "b", &AttachRequest::new("b-resume"), &policy).await.expect("attach");
    assert_eq!(a.binding().revision, b.binding().revision, "both land at the same durable head");
    let handles: Vec<Box<dyn SessionHandle>> = vec![a, b];
    let (outcomes, result) =
        play(&handles, vec![Box::new(script(&[3, 0])), Box::new(script(&[1, 1]))], caller, None).await;
    assert_eq!(outcomes.iter().map(|o| o.decisions.len()).sum::<usize>(), 4);
    let ids: Vec<(String, String)> =
        accepted(&host.transcript(&id).await).into_iter().map(|(seat, id, _)| (seat, id)).collect();
    assert_eq!(ids.len(), 8, "4 rounds × 2 seats: {ids:?}");
    let mut unique = ids.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), 8, "no accepted action is duplicated");
    assert_eq!(result.outcome.get("status"), Some(&Value::from("ended")));
    host.verify_replay("g10-resumed", result.replay_text().expect("replay"));
    // b's first attach (sequence 0), then the two resumes: the chain
    // continues across the restart and still verifies.
    let chain = [Some(first_receipt), handles[0].receipt(), handles[1].receipt()].map(|r| r.expect("receipt"));
    assert_eq!(chain.iter().map(|r| r.sequence).collect::<Vec<_>>(), vec![0, 1, 2]);
    let verified = verify_typed_receipt_chain(&chain);
    assert!(verified.valid, "{:?}", verified.problems);
}

/// A lapsed controller lease: the handle renews it and retries the same
/// submission, which is accepted once; both steps are in the transcript.
pub async fn lease_expiry_is_renewed_and_the_same_submission_retried_once(host: &mut impl GateHost) {
    let policy = SessionPolicy::host_default();
    let request = json(r#"{"game":"conformance/hilo","seed":9,"participantId":"alice","lease":{"durationMs":5000}}"#);
    let created = host.create(&request, &policy).await.expect("create");
    assert!(created.holds_lease, "the creator holds its claim's lease token");
    host.advance_clock(6_000).await;
    // The clock move is acknowledged only after every actor has re-checked
    // its deadlines, so the lapse is already recorded: no sleep, no polling.
    let lapsed = lease_events(&host.transcript(&created.session_id).await);
    assert!(lapsed.iter().any(|e| e == "lease_expired"), "the acknowledged clock move recorded the lapse: {lapsed:?}");
    let answer = created.handle.act(json(r#"{"card":0}"#)).await.expect("renewed and retried");
    assert!(answer.is_pending(), "alice's card is in; bob has not played");
    let events = host.transcript(&created.session_id).await;
    let lease_events = lease_events(&events);
    assert!(lease_events.iter().any(|e| e == "lease_expired"), "{lease_events:?}");
    assert!(lease_events.iter().any(|e| e == "lease_renewed"), "recovery is observable: {lease_events:?}");
    assert_eq!(accepted(&events).len(), 1, "the retried submission was accepted once");
}
