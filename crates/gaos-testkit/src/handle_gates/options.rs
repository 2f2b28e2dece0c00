//! The per-call options of the handle contract (issue 18 item 4):
//! `act_with` names its submission id, and both `act_with` and
//! `observe_with` honour a timeout and a cancellation token, the same on
//! every transport.

use std::time::Duration;

use gaos_json::{Value, obj};
use gaos_runner::{ActOptions, CancellationToken, ObserveOptions, SessionError};

use super::{GateHost, accepted, seat_handles, verification_policy};

fn n(value: u32) -> Value {
    obj! { "n" => value }.into()
}

/// An explicit submission id reaches the host unchanged; the default id the
/// handle announces is the one the next plain `act` sends; a cancelled or
/// blank call sends nothing; a generous timeout changes nothing.
pub async fn act_and_observe_options_name_the_submission_and_bound_the_call(host: &mut impl GateHost) {
    let policy = verification_policy();
    let request = r#"{"game":"conformance/counter","level":{"rounds":2},"participantId":"a"}"#;
    let (id, handles) = seat_handles(host, request, &policy, &["a", "b"]).await;
    let (a, b) = (&handles[0], &handles[1]);

    // Nothing is sent for a call cancelled before it starts, or a blank id.
    let cancelled = CancellationToken::new();
    cancelled.cancel();
    let refused = a.act_with(n(1), ActOptions::new().cancel(cancelled.clone())).await.expect_err("cancelled");
    assert_eq!(refused, SessionError::Cancelled { operation: "act" });
    let observed = a.observe_with(ObserveOptions::new().cancel(cancelled)).await.expect_err("cancelled");
    assert_eq!(observed, SessionError::Cancelled { operation: "observe" });
    let blank = a.act_with(n(1), ActOptions::new().submission_id("  ")).await.expect_err("blank id");
    assert!(matches!(blank, SessionError::InvalidArgument(_)), "{blank}");
    assert!(accepted(&host.transcript(&id).await).is_empty(), "nothing reached the host");

    // Round 1: a names its id; b uses the default the handle announces.
    let bounded = ObserveOptions::new().timeout(Duration::from_secs(30));
    a.observe_with(bounded.clone()).await.expect("observe within the timeout");
    a.act_with(n(1), ActOptions::new().submission_id("a-first").timeout(Duration::from_secs(30))).await.expect("act");
    b.observe().await.expect("observe");
    let b_default = b.next_submission_id();
    assert!(b_default.starts_with("b:"), "{b_default}");
    b.act(n(2)).await.expect("act");

    // Round 2: a's default id after an explicit one still follows the rule.
    a.observe_with(bounded).await.expect("observe");
    let a_default = a.next_submission_id();
    assert_eq!(a.next_submission_id(), a_default, "announcing the id uses nothing up");
    a.act(n(3)).await.expect("act");
    b.observe().await.expect("observe");
    b.act(n(0)).await.expect("act");

    let ids: Vec<(String, String)> =
        accepted(&host.transcript(&id).await).into_iter().map(|(seat, id, _)| (seat, id)).collect();
    let quoted = |s: &str| format!("{s:?}");
    assert_eq!(
        ids,
        vec![
            (quoted("a"), quoted("a-first")),
            (quoted("b"), quoted(&b_default)),
            (quoted("a"), quoted(&a_default)),
            (quoted("b"), ids[3].1.clone()),
        ],
        "the host recorded the named and the announced ids"
    );
}
