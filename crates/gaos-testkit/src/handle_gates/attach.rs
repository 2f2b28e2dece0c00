//! Gates about attaching: create and attach land at the durable head (g2),
//! attach cannot roll back, fork, swap identity or touch gameplay (g3),
//! exact retries and receipt chains (g4), and closing is local (g9).

use gaos_json::{Value, obj};
use gaos_runner::ErrorCode;
use gaos_runner::receipts::verify_typed_receipt_chain;
use gaos_runner::{
    AttachRequest, ControllerKind, HandleState, SessionBinding, SessionControllerIdentity, SessionError,
};
use gaos_runner::{SessionHandle, SessionPolicy};

use super::{GateHost, accepted, gameplay, json, seat_handles, verification_policy};

/// g2: create and attach return the same handle type, bound at the durable head.
pub async fn g2_create_and_attach_return_the_same_handle_type_at_the_durable_head(host: &mut impl GateHost) {
    let policy = verification_policy();
    let created =
        host.create(&json(r#"{"game":"conformance/counter","participantId":"a"}"#), &policy).await.expect("create");
    let id = created.session_id.clone();
    let a: &dyn SessionHandle = created.handle.as_ref();
    assert_eq!((a.seat(), a.state(), a.binding().revision), ("a", HandleState::Active, 0));
    // Advance the session: round 0 resolves.
    let b0 = host.attach(&id, "b", &AttachRequest::new("b-0"), &policy).await.expect("attach");
    assert_eq!(b0.receipt().expect("verification policy issues receipts").revision, 0, "attach too");
    a.act(json(r#"{"n":1}"#)).await.expect("a acts");
    b0.act(json(r#"{"n":2}"#)).await.expect("b acts");
    let head = a.observe().await.expect("observe");
    assert!(head.revision() > 0);
    // A new attach lands at the durable head: same type, same cursor.
    let b1 = host.attach(&id, "b", &AttachRequest::new("b-1"), &policy).await.expect("attach");
    assert_eq!(b1.binding(), SessionBinding::new(&id, head.revision(), "b"));
    let receipt = b1.receipt().expect("verification policy issues receipts");
    assert_eq!(receipt.revision, head.revision());
    let first = b1.observe().await.expect("observe");
    assert_eq!((first.revision(), first.tick().get("total")), (head.revision(), Some(&Value::from(3u32))));
    // And the adopted head of a product route is the same type too.
    let existing = obj! {
        "sessionId" => id.clone(),
        "tick" => first.tick().clone(),
        "binding" => gaos_json::to_value(&b1.binding()).expect("binding")
    };
    let adopted = host.adopt(&id, "b", &existing.into(), &policy).expect("adopt");
    assert_eq!(adopted.observe().await.expect("observe").tick(), first.tick());
    adopted.act(json(r#"{"n":0}"#)).await.expect("the adopted handle acts at the head");
}

/// g3: attach never rolls back, forks, replaces the pinned controller or
/// mutates gameplay.
pub async fn g3_attach_cannot_roll_back_fork_replace_identity_or_mutate_gameplay(host: &mut impl GateHost) {
    let controller = SessionControllerIdentity::new(ControllerKind::LocalAgent, "bot-a").with_version("1");
    let policy = verification_policy().with_controller(&controller);
    let (id, handles) = seat_handles(
        host,
        r#"{"game":"conformance/hilo","seed":7,"participantId":"alice"}"#,
        &policy,
        &["alice", "bob"],
    )
    .await;
    handles[0].act(json(r#"{"card":0}"#)).await.expect("alice");
    handles[1].act(json(r#"{"card":1}"#)).await.expect("bob");
    let before = gameplay(&host.transcript(&id).await);
    let head = handles[1].observe().await.expect("observe");
    // Re-attach bob with the pinned controller: allowed, at the head.
    let request = AttachRequest { controller: Some(controller.clone()), ..AttachRequest::new("bob-again") };
    let again = host.attach(&id, "bob", &request, &policy).await.expect("attach");
    assert_eq!(again.binding().revision, head.revision(), "no rollback: the head is where the game is");
    assert_eq!(gameplay(&host.transcript(&id).await), before, "attach never mutates gameplay");

    // Replacing the controller identity: refused locally against the policy…
    let other = SessionControllerIdentity::new(ControllerKind::Human, "somebody-else");
    let request = AttachRequest { controller: Some(other.clone()), ..AttachRequest::new("bob-swap") };
    let local = host.attach(&id, "bob", &request, &policy).await;
    assert!(matches!(local, Err(SessionError::InvalidArgument(_))), "{:?}", local.as_ref().err());
    // …and by the host, which pinned it at create.
    let lax = SessionPolicy::host_default();
    let remote = host.attach(&id, "bob", &request, &lax).await;
    assert_eq!(
        remote.as_ref().err().and_then(SessionError::code),
        Some(&ErrorCode::ControllerMismatch),
        "{:?}",
        remote.as_ref().err()
    );

    // No cursor can be asked for: an attach body naming a revision is refused.
    let fork = host.attach_raw(&id, "bob", &json(r#"{"requestId":"fork","revision":0}"#)).await;
    assert_eq!(fork.err().as_deref(), Some("invalid_request"));
    assert_eq!(gameplay(&host.transcript(&id).await), before, "refused attaches change nothing");
    assert_eq!(handles[0].observe().await.expect("observe").revision(), head.revision());
}

/// g4: an exact attach retry returns the identical receipt, a reused
/// request id at a later head is refused, and the receipt chain verifies.
pub async fn g4_exact_attach_retries_are_idempotent_and_receipt_chains_verify(host: &mut impl GateHost) {
    let controller = SessionControllerIdentity::new(ControllerKind::Provider, "bot").with_model("m-1");
    let policy = verification_policy().with_controller(&controller);
    let created = host
        .create(&json(r#"{"game":"conformance/hilo","seed":3,"participantId":"alice"}"#), &policy)
        .await
        .expect("create");
    let id = created.session_id.clone();
    let with_controller =
        |request_id: &str| AttachRequest { controller: Some(controller.clone()), ..AttachRequest::new(request_id) };
    let first = host.attach(&id, "alice", &with_controller("r-1"), &policy).await.expect("attach");
    let retry = host.attach(&id, "alice", &with_controller("r-1"), &policy).await.expect("exact retry");
    assert_eq!(first.receipt(), retry.receipt(), "the same request at the same revision returns the same receipt");
    let second = host.attach(&id, "bob", &AttachRequest::new("r-2"), &policy).await.expect("attach");
    first.act(json(r#"{"card":0}"#)).await.expect("alice");
    second.act(json(r#"{"card":0}"#)).await.expect("bob");
    let reused = host.attach(&id, "alice", &with_controller("r-1"), &policy).await;
    assert_eq!(
        reused.err().as_ref().and_then(SessionError::code),
        Some(&ErrorCode::AttachRequestReused),
        "no replay of an old head"
    );
    let third = host.attach(&id, "bob", &AttachRequest::new("r-3"), &policy).await.expect("attach");
    let chain: Vec<_> = [&first, &second, &third].iter().map(|h| h.receipt().expect("receipt")).collect();
    assert_eq!(chain.iter().map(|r| r.sequence).collect::<Vec<_>>(), vec![0, 1, 2]);
    let verified = verify_typed_receipt_chain(&chain);
    assert!(verified.valid, "{:?}", verified.problems);
    assert!(chain[2].revision > chain[0].revision);
    assert_eq!(chain[2].revision, third.binding().revision, "the receipt names the binding's revision");

    let swapped = AttachRequest {
        controller: Some(SessionControllerIdentity::new(ControllerKind::Human, "someone")),
        ..AttachRequest::new("swap")
    };
    let refused = host.attach(&id, "bob", &swapped, &SessionPolicy::host_default()).await;
    assert_eq!(refused.err().as_ref().and_then(SessionError::code), Some(&ErrorCode::ControllerMismatch));
    assert_eq!(accepted(&host.transcript(&id).await).len(), 2, "attaches never add or remove gameplay");
}

/// g9: closing a handle is local: nothing is appended, the session stays
/// active, and another handle continues it.
pub async fn g9_closing_a_handle_never_touches_authoritative_state(host: &mut impl GateHost) {
    let policy = SessionPolicy::host_default();
    let (id, handles) = seat_handles(
        host,
        r#"{"game":"conformance/hilo","seed":5,"participantId":"alice"}"#,
        &policy,
        &["alice", "bob"],
    )
    .await;
    handles[0].act(json(r#"{"card":1}"#)).await.expect("alice");
    let before = host.transcript(&id).await;
    for handle in &handles {
        handle.close();
        handle.close();
        assert_eq!(handle.state(), HandleState::Closed);
    }
    assert_eq!(host.transcript(&id).await, before, "closing appends nothing");
    assert_eq!(host.session_status(&id).await, "active", "closing neither finalizes nor abandons");
    assert!(matches!(handles[1].act(json(r#"{"card":0}"#)).await, Err(SessionError::Closed { .. })));
    // Another handle continues the same session.
    let bob = host.attach(&id, "bob", &AttachRequest::new("bob-2"), &policy).await.expect("attach");
    let answer = bob.act(json(r#"{"card":0}"#)).await.expect("bob");
    assert!(!answer.is_pending(), "bob's command resolves the window alice opened");
    assert_eq!(answer.envelope.kind, "tick");
}
