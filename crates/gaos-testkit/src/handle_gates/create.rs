//! Which seat a create opens: the same on every transport, since both
//! handles open through the contract's `LifecycleHandle::create`.

use gaos_runner::{ErrorCode, SessionError, SessionPolicy};

use super::{GateHost, json};

/// Lifecycle spec §4: `createSessionHandle(request, policy, participantId =
/// "player")`. A create that names its seat opens that seat, one that
/// declares `seats` opens the first, and one that names none opens
/// `"player"`; a game without that seat is refused before any session exists,
/// with words that say to name the seat.
pub async fn a_create_that_names_no_seat_opens_the_player_seat(host: &mut impl GateHost) {
    let policy = SessionPolicy::host_default();
    // gaos/maze's one seat is "player".
    let maze = host.create(&json(r#"{"game":"gaos/maze","levelId":"tiny","seed":1}"#), &policy).await.expect("create");
    assert_eq!((maze.creator.as_str(), maze.handle.seat()), ("player", "player"));
    let first = maze.handle.observe().await.expect("the player observes its own seat");
    assert!(!first.legal_actions().is_empty(), "the player has moves: {:?}", first.tick());
    maze.handle.act(first.legal_actions()[0].clone()).await.expect("and acts as the player");

    let declared = host.create(&json(r#"{"game":"conformance/counter","seats":["a","b"]}"#), &policy).await;
    assert_eq!(declared.expect("create").creator, "a", "the first declared seat");
    let named = host.create(&json(r#"{"game":"conformance/counter","participantId":"b"}"#), &policy).await;
    assert_eq!(named.expect("create").creator, "b", "the named seat");

    let live = host.live_sessions().await;
    match host.create(&json(r#"{"game":"conformance/counter","seed":2}"#), &policy).await {
        Err(SessionError::Host { status: 400, code: Some(ErrorCode::InvalidRequest), message }) => {
            assert!(message.contains("participantId") && message.contains("\"player\""), "{message}");
            crate::words::assert_users_words("a create that names no seat", &message);
        }
        Err(other) => panic!("refused with another error: {other}"),
        Ok(created) => panic!("counter has no seat \"player\", yet seat {} was opened", created.creator),
    }
    assert_eq!(host.live_sessions().await, live, "the refused create made no session");
}
