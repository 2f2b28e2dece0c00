//! Rule tests for each conformance game: dealing, scoring, endings, views,
//! command mapping, validation refusals, timeout mappers and legal actions.

use gaos_games::counter::{CounterGame, CounterReducer};
use gaos_games::hilo::{HiloGame, HiloReducer};
use gaos_games::race::{RaceGame, RaceReducer};
use gaos_games::sealed::{SealedGame, SealedReducer};
use gaos_games::tictactoe::{Mark, TicTacToeGame, TicTacToeReducer, TicTacToeState};
use gaos_json::{Value, canonical_json, parse};
use gaos_kernel::{CommandContext, Game, GameRef, SubmittedAction, TickReducer, TimeoutContext, TimeoutInput};

fn json(text: &str) -> Value {
    parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn ctx(seat: &str) -> CommandContext<'_> {
    CommandContext { session_id: "s", participant_id: seat, submission_id: "sub", cursor: 0, tick: 0 }
}

fn timeout_ctx(game: &dyn Game, seat: Option<&str>) -> TimeoutContext {
    TimeoutContext {
        session_id: "s".into(),
        game: game.game_ref(),
        level_id: "default".into(),
        level_version: None,
        level: game.levels()[0].level.clone(),
        seed: 0,
        participant_id: seat.map(Into::into),
        window_ref: 0,
    }
}

fn mapped(game: &dyn Game, command: &str, seat: &str) -> String {
    canonical_json(&game.command_to_action(&json(command), &ctx(seat)).expect(command).to_value())
}

fn timed_out(game: &dyn Game, seat: Option<&str>) -> Result<SubmittedAction, gaos_kernel::GameError> {
    let timeout = TimeoutInput::new("t", 0, seat, "elapsed");
    game.timeout_to_action(&timeout_ctx(game, seat), &timeout).expect("the game has a timeout mapper")
}

fn act(id: &str, seat: &str) -> SubmittedAction {
    SubmittedAction::new(id).with_seat(seat)
}

fn view_text<R: TickReducer>(reducer: &R, state: &R::State) -> String {
    canonical_json(&reducer.view(state))
}

// ---------------------------------------------------------------- counter

#[test]
fn counter_totals_rounds_and_ending() {
    let r = CounterReducer;
    let s = r.init(&json(r#"{"rounds":2}"#), 99).unwrap();
    assert_eq!(
        view_text(&r, &s),
        r#"{"participation":{"mode":"simultaneous","seats":["a","b"]},"round":0,"status":"playing","total":0}"#
    );
    let s = r.advance(s, &[act("Action 1", "a").with_index(2.0), act("Action 1", "b").with_index(3.0)]).unwrap();
    // A seatless forced input without index adds 0 but counts as an action.
    let s = r.advance(s, &[SubmittedAction::new("Action 1")]).unwrap();
    assert_eq!((s.round, s.total, s.actions_used), (2, 5.0, 3));
    assert_eq!(r.replay_metrics(&s).unwrap().actions_used, 3);
    assert_eq!(
        canonical_json(&r.view_for(&s, "b")),
        r#"{"participation":{"mode":"simultaneous","seats":["a","b"]},"round":2,"seat":"b","status":"ended","total":5}"#
    );
    assert!(r.has_view_for());
    // Empty windows are fine too.
    let s = r.advance(s, &[]).unwrap();
    assert_eq!(s.round, 3);
}

#[test]
fn counter_refuses_bad_levels_and_leaves_overflowing_totals_to_the_kernel() {
    let r = CounterReducer;
    assert!(r.init(&json(r#"{"rounds":-1}"#), 0).is_err());
    assert!(r.init(&json(r#"{"rounds":"3"}"#), 0).is_err());
    assert!(r.init(&json("[]"), 0).is_err());
    let s = r.init(&json(r#"{"rounds":3}"#), 0).unwrap();
    // A JavaScript sum past 2^53 is not the reducer's error: the view shows
    // it and the kernel refuses that view as `invalid_view`
    // (SCRIPT-FORMAT.md §4).
    let s = r
        .advance(s, &[act("Action 1", "a").with_index(9e15), act("Action 1", "b").with_index(9e15)])
        .expect("the reducer sums like JavaScript");
    assert_eq!(s.total, 1.8e16);
    assert!(gaos_json::check_value(&r.view(&s)).is_err());
}

#[test]
fn counter_commands_and_legal_actions() {
    let g = CounterGame;
    assert_eq!(mapped(&g, r#"{"n":4}"#, "a"), r#"{"id":"Action 1","index":4,"seat":"a"}"#);
    for bad in [r#"{"n":"4"}"#, r#"{"m":4}"#, "4", "null", r#"[{"n":4}]"#] {
        let err = g.command_to_action(&json(bad), &ctx("a")).expect_err(bad);
        assert!(err.message.contains("conformance/counter"), "{bad}: {}", err.message);
    }
    assert!(!g.has_timeout_mapper());
    let reducer = g.reducer();
    let state = reducer.init(&json(r#"{"rounds":1}"#), 0).unwrap();
    let view = reducer.view_for(&state, "a");
    let legal = g.legal_actions(&view, "a");
    assert_eq!(legal.len(), 4);
    for command in &legal {
        g.command_to_action(command, &ctx("a")).expect("legal actions map");
    }
    assert!(g.legal_actions(&view, "zed").is_empty(), "not a participant");
    let ended = reducer.advance(state, &[]).unwrap();
    assert!(g.legal_actions(&reducer.view_for(&ended, "a"), "a").is_empty());
}

// ---------------------------------------------------------------- hilo

#[test]
fn hilo_deals_with_the_lcg() {
    let r = HiloReducer;
    let s = r.init(&json(r#"{"handSize":3,"maxCard":9}"#), 7).unwrap();
    assert_eq!(s.hands, [vec![4, 4, 5], vec![5, 1, 1]]);
    // maxCard 1 deals only ones; handSize 0 is already over.
    let s = r.init(&json(r#"{"handSize":4,"maxCard":1}"#), 123).unwrap();
    assert_eq!(s.hands, [vec![1; 4], vec![1; 4]]);
    let s = r.init(&json(r#"{"handSize":0,"maxCard":5}"#), 1).unwrap();
    assert_eq!(r.view(&s).get("status").unwrap(), &"ended");
    assert!(r.init(&json(r#"{"handSize":3,"maxCard":0}"#), 1).is_err());
    assert!(r.init(&json(r#"{"handSize":3}"#), 1).is_err());
}

#[test]
fn hilo_rounds_score_and_rank() {
    let r = HiloReducer;
    let s = r.init(&json(r#"{"handSize":3,"maxCard":9}"#), 7).unwrap();
    // alice [4,4,5] plays index 2 (5); bob [5,1,1] plays index 0 (5): a tie.
    let s = r.advance(s, &[act("Action 1", "bob").with_index(0.0), act("Action 1", "alice").with_index(2.0)]).unwrap();
    assert_eq!(s.hands, [vec![4, 4], vec![1, 1]]);
    assert_eq!(s.score, [0, 0]);
    let s = r.advance(s, &[act("Action 1", "alice").with_index(1.0), act("Action 1", "bob").with_index(0.0)]).unwrap();
    assert_eq!(s.score, [1, 0]);
    let alice_view = r.view_for(&s, "alice");
    assert_eq!(alice_view.get("hand").unwrap().to_string(), "[4]");
    assert_eq!(alice_view.get("seat").unwrap(), &"alice");
    assert_eq!(r.view(&s).get("hand"), None, "the full view hides hands");
    assert_eq!(r.view(&s).get("outcome").unwrap().to_string(), r#"{"kind":"ongoing"}"#);
    let s = r.advance(s, &[act("Action 1", "alice").with_index(0.0), act("Action 1", "bob").with_index(0.0)]).unwrap();
    assert_eq!(s.score, [2, 0]);
    assert_eq!(
        view_text(&r, &s),
        concat!(
            r#"{"handCounts":{"alice":0,"bob":0},"history":[{"alice":5,"bob":5,"winner":null},"#,
            r#"{"alice":4,"bob":1,"winner":"alice"},{"alice":4,"bob":1,"winner":"alice"}],"#,
            r#""outcome":{"kind":"decided","ranking":[{"rank":1,"score":2,"seat":"alice"},{"rank":2,"score":0,"seat":"bob"}]},"#,
            r#""participation":{"mode":"simultaneous","seats":["alice","bob"]},"round":3,"score":{"alice":2,"bob":0},"status":"ended"}"#
        )
    );
    assert_eq!(r.replay_metrics(&s).unwrap().actions_used, 6);
    assert_eq!(r.view_for(&s, "carol").get("hand").unwrap().to_string(), "[]");
}

#[test]
fn hilo_ranks_ties_equally_in_seat_order() {
    let r = HiloReducer;
    let s = r.init(&json(r#"{"handSize":1,"maxCard":1}"#), 0).unwrap();
    let s = r.advance(s, &[act("Action 1", "alice").with_index(0.0), act("Action 1", "bob").with_index(0.0)]).unwrap();
    assert_eq!(
        r.view(&s).get("outcome").unwrap().to_string(),
        r#"{"kind":"decided","ranking":[{"rank":1,"score":0,"seat":"alice"},{"rank":1,"score":0,"seat":"bob"}]}"#
    );
}

#[test]
fn hilo_advance_refuses_broken_windows() {
    let r = HiloReducer;
    let fresh = || r.init(&json(r#"{"handSize":2,"maxCard":9}"#), 3).unwrap();
    let a = |i: f64| act("Action 1", "alice").with_index(i);
    let b = |i: f64| act("Action 1", "bob").with_index(i);
    assert!(r.advance(fresh(), &[a(0.0)]).is_err(), "one seat missing");
    assert!(r.advance(fresh(), &[a(0.0), a(1.0)]).is_err(), "same seat twice");
    assert!(r.advance(fresh(), &[a(0.0), b(2.0)]).is_err(), "index past the hand");
    assert!(r.advance(fresh(), &[a(0.5), b(0.0)]).is_err(), "fractional index");
    assert!(r.advance(fresh(), &[a(-1.0), b(0.0)]).is_err(), "negative index");
    assert!(r.advance(fresh(), &[a(0.0), SubmittedAction::new("Action 1").with_index(0.0)]).is_err(), "no seat");
    assert!(r.advance(fresh(), &[a(0.0), act("Action 1", "carol").with_index(0.0)]).is_err(), "unknown seat");
    assert!(r.advance(fresh(), &[]).is_err());
}

#[test]
fn hilo_validation_commands_timeouts_and_legal_actions() {
    let g = HiloGame;
    let r = HiloReducer;
    let s = r.init(&json(r#"{"handSize":3,"maxCard":9}"#), 7).unwrap();
    r.validate_command(&s, "alice", &act("Action 1", "alice").with_index(2.0)).unwrap();
    for (seat, action) in [
        ("alice", act("Action 1", "alice").with_index(3.0)),
        ("alice", act("Action 1", "alice").with_index(1.5)),
        ("alice", act("Action 1", "alice")),
        ("alice", act("Action 2", "alice").with_index(0.0)),
        ("carol", act("Action 1", "carol").with_index(0.0)),
    ] {
        assert!(r.validate_command(&s, seat, &action).is_err(), "{action:?}");
    }
    assert_eq!(mapped(&g, r#"{"card":7}"#, "bob"), r#"{"id":"Action 1","index":7,"seat":"bob"}"#);
    assert!(g.command_to_action(&json(r#"{"card":"a"}"#), &ctx("bob")).is_err());
    assert!(g.command_to_action(&json("7"), &ctx("bob")).is_err());
    assert!(g.has_timeout_mapper());
    assert_eq!(
        canonical_json(&timed_out(&g, Some("bob")).unwrap().to_value()),
        r#"{"id":"Action 1","index":0,"seat":"bob"}"#
    );
    assert!(timed_out(&g, None).is_err(), "window-wide timeouts have no mapped action");

    let legal = g.legal_actions(&r.view_for(&s, "alice"), "alice");
    assert_eq!(canonical_json(&Value::Array(legal)), r#"[{"card":0},{"card":1},{"card":2}]"#);
    assert!(g.legal_actions(&r.view(&s), "alice").is_empty(), "the full view carries no hand");
    assert!(g.legal_actions(&r.view_for(&s, "carol"), "carol").is_empty());
}

// ---------------------------------------------------------------- race

#[test]
fn race_course_moves_and_finish() {
    let r = RaceReducer;
    let s = r.init(&json(r#"{"length":3}"#), 0).unwrap();
    assert_eq!(
        view_text(&r, &s),
        concat!(
            r#"{"course":{"cell-00":"start","cell-01":"track","cell-02":"finish"},"outcome":{"kind":"ongoing"},"#,
            r#""participation":{"mode":"simultaneous","seats":["p1","p2"]},"pos":{"p1":0,"p2":0},"status":"playing","tick":0}"#
        )
    );
    // p1 boosts, p2 coasts: p1 +2, p2 +1.
    let coast = SubmittedAction::new("Action 1").with_payload(json(r#"{"coast":true}"#)).with_seat("p2");
    let s = r.advance(s, &[act("Action 1", "p1"), coast]).unwrap();
    assert_eq!((s.pos, s.tick, s.actions_used), ([2, 1], 1, 2));
    // An empty tick moves both by one; p1 reaches the finish.
    let s = r.advance(s, &[]).unwrap();
    assert_eq!(s.pos, [3, 2]);
    assert_eq!(
        r.view(&s).get("outcome").unwrap().to_string(),
        r#"{"kind":"decided","ranking":[{"rank":1,"score":3,"seat":"p1"},{"rank":2,"score":2,"seat":"p2"}]}"#
    );
    assert_eq!(r.view(&s).get("status").unwrap(), &"ended");
    assert_eq!(r.replay_metrics(&s).unwrap().actions_used, 2);
    // `payload.coast` must be exactly `true`.
    let s = r.init(&json(r#"{"length":9}"#), 0).unwrap();
    let not_coast = SubmittedAction::new("Action 1").with_payload(json(r#"{"coast":1}"#)).with_seat("p2");
    assert_eq!(r.advance(s, &[not_coast]).unwrap().pos, [1, 2]);
}

#[test]
fn race_course_keys_have_at_least_two_digits() {
    let r = RaceReducer;
    let view = r.view(&r.init(&json(r#"{"length":101}"#), 0).unwrap());
    let course = view.get("course").and_then(Value::as_object).unwrap();
    assert_eq!(course.len(), 101);
    assert_eq!(course.get("cell-07").unwrap(), &"track");
    assert_eq!(course.get("cell-99").unwrap(), &"track");
    assert_eq!(course.get("cell-100").unwrap(), &"finish");
    let one = r.view(&r.init(&json(r#"{"length":1}"#), 0).unwrap());
    assert_eq!(one.get("course").unwrap().to_string(), r#"{"cell-00":"start"}"#);
}

#[test]
fn race_validation_commands_timeouts_and_legal_actions() {
    let g = RaceGame;
    let r = RaceReducer;
    let s = r.init(&json(r#"{"length":12}"#), 0).unwrap();
    assert!(r.validate_command(&s, "p1", &act("Action 1", "p1")).is_ok());
    assert!(r.validate_command(&s, "p1", &act("Action 2", "p1")).is_err());
    assert!(r.advance(s.clone(), &[SubmittedAction::new("Action 1")]).is_err(), "a boost needs a seat");
    assert!(r.advance(s.clone(), &[act("Action 1", "p3")]).is_err());
    for command in [r#"{"boost":true}"#, r#"{"coast":true}"#, "null", "[1]"] {
        assert_eq!(mapped(&g, command, "p2"), r#"{"id":"Action 1","seat":"p2"}"#, "{command}");
    }
    assert_eq!(
        canonical_json(&timed_out(&g, Some("p1")).unwrap().to_value()),
        r#"{"id":"Action 1","payload":{"coast":true},"seat":"p1"}"#
    );
    assert!(timed_out(&g, None).is_err());
    let view = r.view(&s);
    assert_eq!(canonical_json(&Value::Array(g.legal_actions(&view, "p1"))), r#"[{"boost":true}]"#);
    assert!(g.legal_actions(&view, "p3").is_empty());
}

// ---------------------------------------------------------------- sealed

#[test]
fn sealed_commit_then_reveal() {
    let r = SealedReducer;
    let s = r.init(&json(r#"{"maxBid":100}"#), 11).unwrap();
    assert_eq!(
        view_text(&r, &s),
        concat!(
            r#"{"bids":{},"committed":[],"outcome":{"kind":"ongoing"},"participation":{"mode":"simultaneous","seats":["north","south"]},"#,
            r#""phase":"commit","round":0,"status":"playing"}"#
        )
    );
    let s = r.advance(s, &[act("Action 1", "south"), act("Action 1", "north")]).unwrap();
    assert_eq!(r.view(&s).get("phase").unwrap(), &"reveal");
    assert_eq!(r.view(&s).get("committed").unwrap().to_string(), r#"["north","south"]"#);
    assert_eq!(r.view(&s).get("bids").unwrap().to_string(), "{}");
    let reveal = |seat: &str, payload: Option<&str>| {
        let mut a = act("Action 1", seat);
        a.verified_payload = payload.map(json);
        a
    };
    let s = r.advance(s, &[reveal("north", Some(r#"{"bid":42}"#)), reveal("south", Some(r#"{"bid":57}"#))]).unwrap();
    assert_eq!(
        view_text(&r, &s),
        concat!(
            r#"{"bids":{"north":42,"south":57},"committed":["north","south"],"#,
            r#""outcome":{"kind":"decided","ranking":[{"rank":1,"score":57,"seat":"south"},{"rank":2,"score":42,"seat":"north"}]},"#,
            r#""participation":{"mode":"simultaneous","seats":["north","south"]},"phase":"done","round":2,"status":"ended"}"#
        )
    );
    assert_eq!(r.replay_metrics(&s).unwrap().actions_used, 4);
    assert!(r.advance(s, &[reveal("north", None), reveal("south", None)]).is_err(), "already settled");
}

#[test]
fn sealed_invalid_bids_count_as_zero() {
    let r = SealedReducer;
    let s = r.init(&json(r#"{"maxBid":50}"#), 0).unwrap();
    let s = r.advance(s, &[act("Action 1", "north"), act("Action 1", "south")]).unwrap();
    for (north, south, expected) in [
        (Some(r#"{"bid":51}"#), Some(r#"{"bid":50}"#), [0, 50]),
        (Some(r#"{"bid":2.5}"#), Some(r#"{"bid":-1}"#), [0, 0]),
        (Some(r#"{"bid":"7"}"#), None, [0, 0]),
        (Some(r#"{"bid":0}"#), Some(r#"[7]"#), [0, 0]),
    ] {
        let mut n = act("Action 1", "north");
        n.verified_payload = north.map(json);
        let mut so = act("Action 1", "south");
        so.verified_payload = south.map(json);
        assert_eq!(r.advance(s.clone(), &[n, so]).unwrap().bids, Some(expected));
    }
}

#[test]
fn sealed_refuses_wrong_seats_and_wrong_phases() {
    let r = SealedReducer;
    let s = r.init(&json(r#"{"maxBid":100}"#), 0).unwrap();
    assert!(r.advance(s.clone(), &[act("Action 1", "north")]).is_err());
    assert!(r.advance(s.clone(), &[act("Action 1", "north"), act("Action 1", "north")]).is_err());
    assert!(r.advance(s.clone(), &[act("Action 1", "north"), SubmittedAction::new("Action 1")]).is_err());

    let g = SealedGame;
    let commit = g.command_to_action(&json(r#"{"commit":"ab"}"#), &ctx("north")).unwrap();
    let reveal = g.command_to_action(&json(r#"{"reveal":{"salt":"00","bid":1}}"#), &ctx("north")).unwrap();
    assert!(r.validate_command(&s, "north", &commit).is_ok());
    assert!(r.validate_command(&s, "north", &reveal).is_err(), "round 0 needs a commit");
    assert!(r.validate_command(&s, "north", &act("Action 2", "north")).is_err());
    let s = r.advance(s, &[act("Action 1", "north"), act("Action 1", "south")]).unwrap();
    assert!(r.validate_command(&s, "north", &reveal).is_ok());
    assert!(r.validate_command(&s, "north", &commit).is_err(), "round 1 needs a reveal");
}

#[test]
fn sealed_commands_round_trip_through_commitments() {
    use gaos_kernel::commitment::{CommitmentBinding, verify_reveal};
    let g = SealedGame;
    let hash = "2fe98f1043742b1b291a4147382a535b82097e8262a7ec315125b0163d791db3";
    let commit = g.command_to_action(&json(&format!(r#"{{"commit":"{hash}"}}"#)), &ctx("north")).unwrap();
    assert_eq!(
        canonical_json(&commit.to_value()),
        format!(
            r#"{{"commit":{{"commitmentId":0,"hash":"{hash}","scheme":"gaos.commit.sha256.v1"}},"id":"Action 1","seat":"north"}}"#
        )
    );
    let binding = CommitmentBinding { session_id: "cf-sealed", seat: "north", commitment_id: 0, window_ref: 0 };
    for (bid, ok) in [(42, true), (43, false)] {
        let command = json(&format!(r#"{{"reveal":{{"salt":"00112233445566778899aabbccddeeff","bid":{bid}}}}}"#));
        let reveal = g.command_to_action(&command, &ctx("north")).unwrap();
        let envelope = reveal.reveal.expect("reveal envelope");
        assert_eq!(envelope.payload.to_string(), format!(r#"{{"bid":{bid}}}"#));
        assert_eq!(verify_reveal(&binding, commit.commit.as_ref().unwrap(), &envelope), Ok(ok));
    }
    // Envelope fields pass through as given (SCRIPT-FORMAT.md §4): a shape
    // the typed envelope cannot hold travels in `extra`, for the kernel's
    // envelope check (`conflict`).
    for (odd, key) in [
        (r#"{"commit":5}"#, "commit"),
        (r#"{"reveal":{"bid":1}}"#, "reveal"),
        (r#"{"reveal":{"salt":7,"bid":1}}"#, "reveal"),
        (r#"{"reveal":{"salt":"00"}}"#, "reveal"),
    ] {
        let action = g.command_to_action(&json(odd), &ctx("north")).expect(odd);
        assert!(action.commit.is_none() && action.reveal.is_none(), "{odd}");
        assert!(action.extra.contains_key(key), "{odd}");
    }
    let salt = g.command_to_action(&json(r#"{"reveal":{"salt":7,"bid":1}}"#), &ctx("north")).unwrap();
    assert_eq!(canonical_json(&salt.extra["reveal"]), r#"{"commitmentId":0,"payload":{"bid":1},"salt":7}"#);
    for bad in [r#"{"commit":"ab","reveal":{"salt":"00","bid":1}}"#, r#"{}"#, r#""commit""#] {
        assert!(g.command_to_action(&json(bad), &ctx("north")).is_err(), "{bad}");
    }
    assert!(!g.has_timeout_mapper());
    let view = SealedReducer.view(&SealedReducer.init(&json(r#"{"maxBid":100}"#), 0).unwrap());
    assert!(g.legal_actions(&view, "north").is_empty(), "commitments need client-side secrets");
}

// ---------------------------------------------------------------- tictactoe

fn ttt(board: &str, first: &str) -> TicTacToeState {
    TicTacToeReducer.init(&json(&format!(r#"{{"board":"{board}","first":"{first}"}}"#)), 0).unwrap()
}

fn play(state: TicTacToeState, cell: usize) -> TicTacToeState {
    assert_eq!(TicTacToeReducer.view(&state).get("status").unwrap(), &"playing", "move into a decided game");
    let seat = state.to_move.as_str();
    TicTacToeReducer.advance(state, &[act(&format!("Action {}", cell + 1), seat)]).unwrap()
}

#[test]
fn tictactoe_first_mover_from_the_seed() {
    let r = TicTacToeReducer;
    let level = json(r#"{"board":".........","first":"seed"}"#);
    // mulberry32 first draws: seed 0 → 0.266 (x), seed 1 → 0.627 (o), 1013903483 → 0.160 (x).
    assert_eq!(r.init(&level, 0).unwrap().to_move, Mark::X);
    assert_eq!(r.init(&level, 1).unwrap().to_move, Mark::O);
    assert_eq!(r.init(&level, 1_013_903_483).unwrap().to_move, Mark::X);
    assert_eq!(r.init(&json(r#"{"board":".........","first":"o"}"#), 0).unwrap().to_move, Mark::O);
    for bad in [
        r#"{"board":"........","first":"x"}"#,
        r#"{"board":"..........","first":"x"}"#,
        r#"{"board":"X........","first":"x"}"#,
        r#"{"board":".........","first":"y"}"#,
        r#"{"board":"........é","first":"x"}"#,
        r#"{"first":"x"}"#,
    ] {
        assert!(r.init(&json(bad), 0).is_err(), "{bad}");
    }
}

#[test]
fn tictactoe_x_line_stars_by_moves() {
    let r = TicTacToeReducer;
    // Five moves: x 0, o 3, x 1, o 4, x 2 → won with 3 stars.
    let mut s = ttt(".........", "x");
    for cell in [0, 3, 1, 4, 2] {
        s = play(s, cell);
    }
    assert_eq!(
        view_text(&r, &s),
        concat!(
            r#"{"board":"xxxoo....","moves":5,"outcome":{"kind":"decided","ranking":[{"rank":1,"seat":"x"},{"rank":2,"seat":"o"}],"reason":"line"},"#,
            r#""participation":{"activeSeat":"o","mode":"sequential"},"passes":0,"stars":3,"status":"won","toMove":"o"}"#
        )
    );
    // Seven moves → 2 stars; nine → 1 star.
    let mut s = ttt(".........", "x");
    for cell in [0, 1, 2, 3, 4, 5, 6] {
        s = play(s, cell);
    }
    assert_eq!(r.view(&s).get("stars").unwrap().to_string(), "2");
    let mut s = ttt(".........", "x");
    for cell in [0, 1, 2, 3, 4, 5, 7, 6, 8] {
        s = play(s, cell);
    }
    assert_eq!(s.board_str(), "xoxoxooxx");
    assert_eq!(r.view(&s).get("status").unwrap(), &"won");
    assert_eq!(r.view(&s).get("stars").unwrap().to_string(), "1");
    assert_eq!(r.replay_metrics(&s).unwrap().actions_used, 9);
}

#[test]
fn tictactoe_o_line_fails_and_full_board_draws() {
    let r = TicTacToeReducer;
    let s = play(ttt("xx.oo.x..", "o"), 5);
    let view = r.view(&s);
    assert_eq!(view.get("status").unwrap(), &"failed");
    assert_eq!(view.get("stars"), None);
    assert_eq!(
        view.get("outcome").unwrap().to_string(),
        r#"{"kind":"decided","ranking":[{"rank":1,"seat":"o"},{"rank":2,"seat":"x"}],"reason":"line"}"#
    );
    let s = play(ttt("xoxxooox.", "x"), 8);
    let view = r.view(&s);
    assert_eq!(s.board_str(), "xoxxoooxx");
    assert_eq!(view.get("status").unwrap(), &"ended");
    assert_eq!(view.get("stars"), None, "an ended view never carries stars");
    assert_eq!(
        view.get("outcome").unwrap().to_string(),
        r#"{"kind":"decided","ranking":[{"rank":1,"seat":"o"},{"rank":1,"seat":"x"}],"reason":"draw"}"#
    );
    // An x line is checked before an o line.
    assert_eq!(r.view(&ttt("xxxooo...", "x")).get("status").unwrap(), &"won");
}

#[test]
fn tictactoe_passes_and_sequential_participation() {
    let r = TicTacToeReducer;
    let s = ttt(".........", "x");
    assert_eq!(r.view(&s).get("participation").unwrap().to_string(), r#"{"activeSeat":"x","mode":"sequential"}"#);
    let pass = SubmittedAction::new("Action 1").with_payload(json(r#"{"pass":true}"#)).with_seat("x");
    let s = r.advance(s, &[pass]).unwrap();
    assert_eq!((s.board_str().as_str(), s.to_move, s.moves, s.passes), (".........", Mark::O, 1, 1));
    assert_eq!(r.view(&s).get("participation").unwrap().get("activeSeat").unwrap(), &"o");
    assert!(r.advance(s.clone(), &[]).is_err(), "exactly one input");
    assert!(r.advance(s.clone(), &[act("Action 1", "o"), act("Action 2", "o")]).is_err());
    assert!(r.advance(s.clone(), &[act("Action 1", "x")]).is_err(), "not x's turn");
    assert!(r.advance(s.clone(), &[act("Action 0", "o")]).is_err(), "not a cell");
    assert!(r.advance(play(s, 0), &[act("Action 1", "x")]).is_err(), "cell taken");
}

#[test]
fn tictactoe_validation_and_commands() {
    let g = TicTacToeGame;
    let r = TicTacToeReducer;
    let s = ttt("x........", "o");
    assert!(r.validate_command(&s, "o", &act("Action 2", "o")).is_ok());
    assert!(r.validate_command(&s, "x", &act("Action 2", "x")).is_err(), "wrong seat");
    assert!(r.validate_command(&s, "o", &act("Action 1", "o")).is_err(), "taken");
    assert!(r.validate_command(&s, "o", &act("Action 0", "o")).is_err());
    assert!(r.validate_command(&s, "o", &act("Action 10", "o")).is_err());
    assert!(r.validate_command(&s, "o", &act("Action 01", "o")).is_err());
    let pass = SubmittedAction::new("Action 0").with_payload(json(r#"{"pass":true}"#)).with_seat("o");
    assert!(r.validate_command(&s, "o", &pass).is_ok(), "a pass is always legal for the mover");
    assert!(r.validate_command(&s, "x", &pass).is_err(), "but only for the mover");

    assert_eq!(mapped(&g, r#"{"cell":0}"#, "x"), r#"{"id":"Action 1","seat":"x"}"#);
    assert_eq!(mapped(&g, r#"{"cell":8}"#, "o"), r#"{"id":"Action 9","seat":"o"}"#);
    for other in [r#"{"cell":9}"#, r#"{"cell":-1}"#, r#"{"cell":1.5}"#, r#"{"cell":"a"}"#, r#"{}"#, "3", "null"] {
        assert_eq!(mapped(&g, other, "x"), r#"{"id":"Action 0","seat":"x"}"#, "{other}");
    }
    assert_eq!(
        canonical_json(&timed_out(&g, Some("o")).unwrap().to_value()),
        r#"{"id":"Action 1","payload":{"pass":true},"seat":"o"}"#
    );
    assert!(timed_out(&g, None).is_err());
}

#[test]
fn tictactoe_legal_actions_follow_the_turn() {
    let g = TicTacToeGame;
    let r = TicTacToeReducer;
    let s = ttt("xo.x.o...", "x");
    let view = r.view(&s);
    let legal = g.legal_actions(&view, "x");
    assert_eq!(
        canonical_json(&Value::Array(legal.clone())),
        r#"[{"cell":2},{"cell":4},{"cell":6},{"cell":7},{"cell":8}]"#
    );
    for command in &legal {
        let action = g.command_to_action(command, &ctx("x")).unwrap();
        r.validate_command(&s, "x", &action).expect("legal actions validate");
    }
    assert!(g.legal_actions(&view, "o").is_empty(), "not o's turn");
    let won = play(s, 6);
    assert!(g.legal_actions(&r.view(&won), "o").is_empty(), "game over");
}

// ---------------------------------------------------------------- all games

#[test]
fn every_game_ships_a_playable_default_level() {
    let registry = gaos_games::GameRegistry::builtin();
    for game in registry.list() {
        let id = game.game_ref().id;
        assert_eq!(game.game_ref(), GameRef::conventional(&id));
        assert!(!game.description().is_empty());
        let levels = game.levels();
        // Conformance games name their first level `default` (GAMES.md);
        // product games name theirs (gaos/maze: tiny, small, ...).
        assert!(!levels.is_empty(), "{id}");
        if id.starts_with("conformance/") {
            assert_eq!(levels[0].id, "default", "{id}");
        }
        let reducer = game.reducer();
        for level in &levels {
            let state = reducer.init(&level.level, 42).unwrap_or_else(|e| panic!("{id}/{}: {e}", level.id));
            assert_eq!(reducer.view(&state).get("status").unwrap(), &"playing", "{id}/{}", level.id);
            assert!(reducer.replay_metrics(&state).is_some(), "{id}");
            let offered: usize = game
                .seats()
                .iter()
                .map(|seat| {
                    let legal = game.legal_actions(&reducer.view_for(&state, seat), seat);
                    for command in &legal {
                        let action = game.command_to_action(command, &ctx(seat)).unwrap();
                        reducer.validate_command(&state, seat, &action).unwrap_or_else(|e| panic!("{id}: {e}"));
                    }
                    legal.len()
                })
                .sum();
            assert_eq!(offered == 0, id == gaos_games::sealed::GAME_ID, "{id}: legal actions offered {offered}");
        }
    }
}
