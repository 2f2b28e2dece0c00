//! Gates about evaluated finalization (RFC-018 §7, issue 18 item 1): an
//! official result carries the manifest-bound score, the digest it is bound
//! to, the host's verification facts and the policy's `verifierReference`;
//! a create or finalize that breaks the binding, a policy that does not
//! permit an official finalize and an uncovered episode are refused with a
//! typed code and change nothing; practice scores are never publishable.

use gaos_json::{Map, Value, canonical_json, canonical_sha256_hex};
use gaos_runner::ErrorCode;
use gaos_runner::benchmark::{EpisodePlan, scoring_plugin};
use gaos_runner::{FinalizeRequest, HandleState, SessionError, SessionHandle, SessionPolicy};

use super::{GateHost, json, official_manifest, official_request, seat_handles};

/// Official evaluation of [`official_manifest`] with `evidence`.
fn official_with_evidence(digest: &str, evidence: &str) -> SessionPolicy {
    SessionPolicy::from_value(&json(&format!(
        r#"{{"evaluation":{{"kind":"official","benchmarkId":"counter-bench","benchmarkVersion":"1","manifestDigest":"{digest}"}},
            "durability":{{"attachable":true}},"evidence":{evidence},"publication":{{"kind":"none"}}}}"#
    )))
    .expect("policy")
}

/// Both seats play `rounds` rounds of the counter (each reads the next window first).
async fn play_rounds(handles: &[Box<dyn SessionHandle>], rounds: usize) {
    for round in 0..rounds {
        for handle in handles {
            if round > 0 {
                handle.observe().await.expect("observe the next window");
            }
            handle.act(json(r#"{"n":1}"#)).await.expect("act");
        }
    }
    handles[0].observe().await.expect("observe the end");
}

fn code(result: Result<impl Sized, SessionError>) -> Option<String> {
    result.err().and_then(|e| e.code().map(ErrorCode::to_string))
}

fn naming_digest(request_id: &str, digest: &str) -> FinalizeRequest {
    let mut evaluation = Map::new();
    evaluation.insert("manifestDigest".into(), digest.into());
    let mut extensions = Map::new();
    extensions.insert("gaos.session.evaluation".into(), Value::Object(evaluation));
    FinalizeRequest { extensions: Some(extensions), ..FinalizeRequest::with_id(request_id) }
}

/// An official finalize returns the score bound to the manifest (the
/// manifest's plugin on the re-simulated outcome), the digest, verified
/// facts and the verifier reference; naming another digest is refused
/// first and leaves the session unfinalized.
pub async fn official_finalize_returns_the_manifest_bound_score_and_verification_facts(host: &mut impl GateHost) {
    let manifest = official_manifest();
    let digest = canonical_sha256_hex(&manifest);
    let evidence = r#"{"kind":"verification","verifierReference":{"id":"gaos-rs","uri":"gaos replay verify"}}"#;
    let policy = official_with_evidence(&digest, evidence);
    let (id, handles) = seat_handles(host, &official_request(), &policy, &["a", "b"]).await;
    play_rounds(&handles, 3).await;

    let wrong = handles[0].finalize(naming_digest("wrong-digest", &"0".repeat(64))).await;
    assert_eq!(code(wrong).as_deref(), Some("manifest_mismatch"));
    assert_eq!(handles[0].state(), HandleState::Terminal, "a refused finalize changes nothing");
    assert_ne!(host.session_status(&id).await, "finalized");

    let result = handles[0].finalize(naming_digest("bound", &digest)).await.expect("the official finalize");
    let evaluation = Value::Object(result.evaluation.clone().expect("an official result carries its evaluation"));
    let field = |key: &str| evaluation.get(key).cloned().unwrap_or(Value::Null);
    assert_eq!(field("kind"), Value::from("official"));
    assert_eq!(field("benchmarkId"), Value::from("counter-bench"));
    assert_eq!(field("benchmarkVersion"), Value::from("1"));
    assert_eq!(field("manifestDigest"), Value::from(digest.as_str()));
    assert_eq!(field("publishable"), Value::Bool(true));
    assert_eq!(canonical_json(&field("verifierReference")), r#"{"id":"gaos-rs","uri":"gaos replay verify"}"#);
    assert_eq!(
        canonical_json(&field("verification")),
        r#"{"evidenceComplete":"verified","reasons":[],"replay":"verified","semantics":"verified","signatures":"unverified"}"#
    );
    assert_eq!(canonical_json(&field("episode")), r#"{"maxSteps":5,"seed":1,"steps":3,"taskId":"default"}"#);
    // The re-simulated outcome is the live one, and the score is the
    // manifest's plugin applied to it.
    assert_eq!(field("terminalOutcome"), result.outcome);
    let plan = EpisodePlan { index: 0, task_id: "default".into(), seed: 1, episode: 0, max_steps: 5 };
    let plugin = scoring_plugin("gaos.score.outcome").expect("built in");
    let expected = plugin.score(&plan, &result.outcome).expect("scored");
    assert_eq!(field("score"), Value::Number(expected));
    host.verify_replay("official", result.replay_text().expect("replay evidence"));
    assert_eq!(host.session_status(&id).await, "finalized");
}

/// Creates that break the binding are refused; an official session whose
/// policy keeps no evidence, or whose episode the manifest does not cover,
/// cannot be finalized (and stays unfinalized); practice is never publishable.
pub async fn finalize_refuses_what_the_policy_or_coverage_forbids_and_practice_is_not_publishable(
    host: &mut impl GateHost,
) {
    let manifest = official_manifest();
    let digest = canonical_sha256_hex(&manifest);
    let replay = r#"{"kind":"replay"}"#;
    let create_code = |result: Result<super::Created, SessionError>| code(result);
    let inline = |extra: &str| {
        format!(
            r#"{{"game":"conformance/counter","participantId":"a","manifest":{}{extra}}}"#,
            canonical_json(&manifest)
        )
    };
    // The host holds no manifest of this digest, and the request carries none.
    let unknown = official_with_evidence(&"ab".repeat(32), replay);
    let request = json(r#"{"game":"conformance/counter","levelId":"default","seed":1,"participantId":"a"}"#);
    assert_eq!(create_code(host.create(&request, &unknown).await).as_deref(), Some("unknown_manifest"));
    // The manifest carried is not the one the policy binds.
    let carried = json(&inline(r#","levelId":"default","seed":1"#));
    assert_eq!(create_code(host.create(&carried, &unknown).await).as_deref(), Some("manifest_mismatch"));
    // Not an episode the manifest plans: another seed, or another level.
    let policy = official_with_evidence(&digest, replay);
    for extra in
        [r#","levelId":"default","seed":2"#, r#","levelId":"long","seed":1"#, r#","level":{"rounds":1},"seed":1"#]
    {
        let request = json(&inline(extra));
        assert_eq!(create_code(host.create(&request, &policy).await).as_deref(), Some("not_planned"), "{extra}");
    }

    // No evidence: an official score is never given without its replay.
    let bare = official_with_evidence(&digest, r#"{"kind":"none"}"#);
    let (id, handles) = seat_handles(host, &official_request(), &bare, &["a", "b"]).await;
    play_rounds(&handles, 3).await;
    assert_eq!(code(handles[0].finalize(FinalizeRequest::default()).await).as_deref(), Some("finalize_not_permitted"));
    assert_eq!(handles[0].state(), HandleState::Terminal);
    assert_ne!(host.session_status(&id).await, "finalized");

    // Coverage: the scored seat needs 3 decisions, the task allows 2.
    let tight = json(&canonical_json(&manifest).replace(r#""maxSteps":5"#, r#""maxSteps":2"#));
    let tight_policy = official_with_evidence(&canonical_sha256_hex(&tight), replay);
    let request = format!(
        r#"{{"game":"conformance/counter","levelId":"default","seed":1,"participantId":"a","manifest":{}}}"#,
        canonical_json(&tight)
    );
    let (id, handles) = seat_handles(host, &request, &tight_policy, &["a", "b"]).await;
    play_rounds(&handles, 3).await;
    let unmet = handles[0].finalize(FinalizeRequest::default()).await;
    let error = unmet.expect_err("coverage unmet");
    assert_eq!(error.code(), Some(&ErrorCode::CoverageUnmet));
    assert!(error.to_string().contains("maxSteps 2"), "{error}");
    assert_ne!(host.session_status(&id).await, "finalized");

    // Practice: a score of the evaluator's plugin, never publishable.
    let practice = SessionPolicy::host_default()
        .with_evaluation(&gaos_runner::EvaluationPolicy::Practice { evaluator: Some("gaos.score.outcome".into()) });
    let normal = r#"{"game":"conformance/counter","level":{"rounds":1},"participantId":"a"}"#;
    let (_, handles) = seat_handles(host, normal, &practice, &["a", "b"]).await;
    play_rounds(&handles, 1).await;
    let result = handles[0].finalize(FinalizeRequest::default()).await.expect("practice finalizes");
    let evaluation = Value::Object(result.evaluation.expect("practice is evaluated"));
    assert_eq!(
        canonical_json(&evaluation),
        r#"{"evaluator":"gaos.score.outcome","kind":"practice","publishable":false,"score":0}"#
    );
}
