//! The JS port of conformance/counter runs through `SessionKernel` exactly
//! like the built-in Rust counter: same views, digests and transcript.

mod support;

use std::sync::Arc;

use gaos_games::counter::CounterGame;
use gaos_kernel::{DynReducer, Game, KernelOptions, SeedPolicy, SessionKernel};
use support::{advance, json, load, submit};

fn kernel_for(game: Arc<dyn Game>) -> SessionKernel<DynReducer> {
    let options = KernelOptions::builder(&game, "counter-1")
        .level("default", json(r#"{"rounds":3}"#))
        .seed(7, SeedPolicy::Explicit)
        .build();
    SessionKernel::new(options).expect("the kernel starts")
}

fn play(kernel: &mut SessionKernel<DynReducer>) {
    for round in 0..3u32 {
        submit(kernel, "a", &format!("a{round}"), &format!(r#"{{"n":{round}}}"#)).expect("a submits");
        submit(kernel, "b", &format!("b{round}"), r#"{"n":10}"#).expect("b submits");
        advance(kernel).expect("the window resolves");
    }
}

fn transcript_text(kernel: &SessionKernel<DynReducer>) -> Vec<String> {
    let transcript = kernel.live_transcript();
    let mut lines = vec![gaos_json::canonical_json(&transcript.header.to_value())];
    lines.extend(transcript.events.iter().map(|e| gaos_json::canonical_json(&e.to_value())));
    lines
}

#[test]
fn the_js_counter_matches_the_builtin_counter_event_for_event() {
    let module = load("counter.mjs");
    assert_eq!(module.game_ref(), CounterGame.game_ref());
    assert_eq!(module.seats(), CounterGame.seats());
    let mut js = kernel_for(Arc::new(module));
    let mut rust = kernel_for(Arc::new(CounterGame));
    assert_eq!(js.digest(), rust.digest());
    play(&mut js);
    play(&mut rust);
    assert_eq!(js.full_view(), rust.full_view());
    assert_eq!(js.full_view().get("status").and_then(|s| s.as_str()), Some("ended"));
    for seat in ["a", "b"] {
        assert_eq!(js.observe_canonical(seat).unwrap(), rust.observe_canonical(seat).unwrap());
    }
    assert_eq!(js.digest(), rust.digest());
    assert_eq!(transcript_text(&js), transcript_text(&rust));
}

#[test]
fn commands_map_through_the_module() {
    let module = load("counter.mjs");
    let mut kernel = kernel_for(Arc::new(module.clone()));
    let refused = submit(&mut kernel, "a", "a-bad", r#"{"n":"x"}"#).unwrap_err();
    assert_eq!(refused.code(), "illegal_command");
    assert!(refused.to_string().contains(r#"a counter command is {"n": <integer>}"#), "{refused}");
    let view = kernel.observe("a").unwrap();
    assert_eq!(module.legal_actions(&view, "a"), vec![json(r#"{"n":1}"#), json(r#"{"n":2}"#)]);
}

#[test]
fn one_module_serves_sessions_on_many_threads() {
    let module = load("counter.mjs");
    let reference = {
        let mut rust = kernel_for(Arc::new(CounterGame));
        play(&mut rust);
        rust.digest()
    };
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let module = module.clone();
            std::thread::spawn(move || {
                let mut digests = Vec::new();
                for _ in 0..5 {
                    let mut js = kernel_for(Arc::new(module.clone()));
                    play(&mut js);
                    digests.push(js.digest());
                }
                digests
            })
        })
        .collect();
    for thread in threads {
        assert!(thread.join().expect("no panic").iter().all(|d| *d == reference));
    }
}
