//! The `openai` driver against a local chat-completions server started in
//! the test (axum on 127.0.0.1:0): function calling, a re-ask after an
//! illegal answer, usage tokens, conversation history and reset, giving up,
//! provider errors and key configuration.

#![cfg(feature = "openai")]

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use gaos_json::{Value, canonical_json, obj};
use gaos_runner::drivers::{OpenAiConfig, OpenAiDriver};
use gaos_runner::{AgentDriver, DriverContext, DriverError, InterruptMode, InterruptOutcome, InterruptRequest, Usage};

/// What the fake provider answers, in order, and what it received.
#[derive(Default)]
struct Provider {
    answers: VecDeque<(u16, String)>,
    requests: Vec<(Option<String>, Value)>,
}

type Shared = Arc<Mutex<Provider>>;

async fn completions(State(provider): State<Shared>, headers: HeaderMap, body: Bytes) -> (StatusCode, String) {
    let request = gaos_json::parse_bytes(&body).expect("the driver sends JSON");
    let auth = headers.get("authorization").and_then(|v| v.to_str().ok()).map(str::to_owned);
    let mut provider = provider.lock().expect("provider");
    provider.requests.push((auth, request));
    let (status, body) = provider.answers.pop_front().unwrap_or((500, "{\"error\":\"no answer scripted\"}".into()));
    (StatusCode::from_u16(status).expect("status"), body)
}

async fn start(answers: Vec<(u16, String)>) -> (String, Shared) {
    let provider: Shared = Arc::new(Mutex::new(Provider { answers: answers.into(), requests: Vec::new() }));
    let app = Router::new().route("/v1/chat/completions", post(completions)).with_state(Arc::clone(&provider));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let address = listener.local_addr().expect("address");
    tokio::spawn(async move { axum::serve(listener, app).await.expect("serve") });
    (format!("http://{address}/v1/"), provider)
}

/// A chat-completions answer calling `tool` with `arguments` (a JSON text).
fn tool_answer(call_id: &str, tool: &str, arguments: &str, prompt: u64, completion: u64) -> (u16, String) {
    let call: Value = obj! {
        "id" => call_id, "type" => "function",
        "function" => obj! { "name" => tool, "arguments" => arguments }
    }
    .into();
    let message = obj! { "role" => "assistant", "content" => Value::Null, "tool_calls" => vec![call] };
    let choice = obj! { "index" => 0u32, "message" => message, "finish_reason" => "tool_calls" };
    let usage =
        obj! { "prompt_tokens" => prompt, "completion_tokens" => completion, "total_tokens" => prompt + completion };
    let answer = obj! { "id" => "chatcmpl-1", "object" => "chat.completion", "model" => "m", "choices" => vec![Value::from(choice)], "usage" => usage };
    (200, canonical_json(&answer.into()))
}

/// `answer` with `usage.cost` set (what OpenRouter-style endpoints add).
fn with_cost((status, body): (u16, String), cost: f64) -> (u16, String) {
    let mut answer = gaos_json::parse(&body).expect("JSON");
    if let Some(Value::Object(usage)) = answer.as_object_mut().and_then(|a| a.get_mut("usage")) {
        usage.insert("cost".into(), Value::Number(cost));
    }
    (status, canonical_json(&answer))
}

fn text_answer(content: &str) -> (u16, String) {
    let message = obj! { "role" => "assistant", "content" => content };
    let answer = obj! { "choices" => vec![Value::from(obj! { "index" => 0u32, "message" => message })] };
    (200, canonical_json(&answer.into()))
}

fn config(base_url: &str) -> OpenAiConfig {
    OpenAiConfig {
        base_url: base_url.into(),
        model: "test-model".into(),
        api_key: Some("test-key".into()),
        timeout: Duration::from_secs(10),
        ..OpenAiConfig::default()
    }
}

fn legal() -> Vec<Value> {
    (0..3u32).map(|card| obj! { "card" => card }.into()).collect()
}

fn observation(legal: &[Value]) -> Value {
    obj! { "hand" => vec![Value::from(4u32), Value::from(9u32), Value::from(2u32)], "legalActions" => legal.to_vec(), "done" => false }
        .into()
}

fn ctx<'a>(observation: &'a Value, legal: &'a [Value], step: u64) -> DriverContext<'a> {
    DriverContext::new(observation, legal, step, "s-1", "alice")
}

fn messages(request: &Value) -> &[Value] {
    request.get("messages").and_then(Value::as_array).expect("messages")
}

#[tokio::test]
async fn a_reported_cost_is_summed_over_the_attempts_of_a_decision() {
    let (base, _provider) = start(vec![
        with_cost(tool_answer("call_1", "choose_action", r#"{"index":99}"#, 100, 10), 0.25),
        with_cost(tool_answer("call_2", "choose_action", r#"{"index":2}"#, 120, 8), 0.5),
    ])
    .await;
    let mut driver = OpenAiDriver::new(config(&base)).expect("driver");
    let legal = legal();
    let obs = observation(&legal);
    let decision = driver.act(ctx(&obs, &legal, 0)).await.expect("a decision");
    assert_eq!(decision.usage, Some(Usage { input_tokens: 220, output_tokens: 18, cost: Some(0.75) }));
    let usage = decision.to_value();
    assert_eq!(usage.get("usage").and_then(|u| u.get("cost")), Some(&Value::Number(0.75)));
}

#[tokio::test]
async fn reasks_after_an_illegal_answer_and_records_usage() {
    let (base, provider) = start(vec![
        tool_answer("call_1", "choose_action", r#"{"index":99}"#, 100, 10),
        tool_answer("call_2", "choose_action", r#"{"index":1,"reasoning":"the 9 wins"}"#, 130, 12),
    ])
    .await;
    let mut driver = OpenAiDriver::new(config(&base)).expect("driver");
    assert_eq!(driver.id(), "openai:test-model");
    let legal = legal();
    let obs = observation(&legal);
    let decision = driver.act(ctx(&obs, &legal, 0)).await.expect("a decision");
    assert_eq!(decision.action, legal[1]);
    assert_eq!(decision.reasoning.as_deref(), Some("the 9 wins"));
    assert_eq!(
        decision.usage,
        Some(Usage { input_tokens: 230, output_tokens: 22, cost: None }),
        "usage is summed over re-asks; no cost when the endpoint reports none"
    );
    assert_eq!(driver.provider(), Some("openai"));

    let provider = provider.lock().expect("provider");
    assert_eq!(provider.requests.len(), 2, "one re-ask");
    let (auth, first) = &provider.requests[0];
    assert_eq!(auth.as_deref(), Some("Bearer test-key"));
    assert_eq!(first.get("model"), Some(&Value::from("test-model")));
    let tool = &first.get("tools").and_then(Value::as_array).expect("tools")[0];
    let function = tool.get("function").expect("function");
    assert_eq!(function.get("name"), Some(&Value::from("choose_action")));
    let index = function.get("parameters").and_then(|p| p.get("properties")).and_then(|p| p.get("index"));
    assert_eq!(index.and_then(|i| i.get("maximum")), Some(&Value::from(2u32)), "the index is bounded by the list");
    let forced = first.get("tool_choice").and_then(|c| c.get("function")).and_then(|f| f.get("name"));
    assert_eq!(forced, Some(&Value::from("choose_action")), "the tool call is forced");
    let prompt = messages(first).last().and_then(|m| m.get("content")).and_then(Value::as_str).expect("prompt");
    assert!(prompt.contains("0: {\"card\":0}") && prompt.contains("2: {\"card\":2}"), "{prompt}");
    assert!(prompt.contains("\"hand\":[4,9,2]") && !prompt.contains("legalActions"), "{prompt}");

    // The re-ask answers the refused tool call and says why.
    let (_, second) = &provider.requests[1];
    let reply = messages(second).last().expect("a reply");
    assert_eq!(reply.get("role"), Some(&Value::from("tool")));
    assert_eq!(reply.get("tool_call_id"), Some(&Value::from("call_1")));
    let why = reply.get("content").and_then(Value::as_str).expect("content");
    assert!(why.contains("index 99 is not a legal action index") && why.contains("0 to 2"), "{why}");
    let assistant = &messages(second)[messages(second).len() - 2];
    assert_eq!(assistant.get("role"), Some(&Value::from("assistant")), "the refused answer stays in the exchange");
}

#[tokio::test]
async fn keeps_a_bounded_conversation_and_reset_forgets_it() {
    let answers = (0..4).map(|i| tool_answer(&format!("c{i}"), "choose_action", r#"{"index":0}"#, 1, 1)).collect();
    let (base, provider) = start(answers).await;
    let mut driver = OpenAiDriver::new(OpenAiConfig { max_history_turns: 1, ..config(&base) }).expect("driver");
    let legal = legal();
    let obs = observation(&legal);
    for step in 0..3 {
        driver.act(ctx(&obs, &legal, step)).await.expect("decision");
    }
    assert_eq!(driver.history_len(), 1, "history is bounded");
    driver.reset();
    assert_eq!(driver.history_len(), 0);
    driver.act(ctx(&obs, &legal, 3)).await.expect("decision");
    let provider = provider.lock().expect("provider");
    let sizes: Vec<usize> = provider.requests.iter().map(|(_, r)| messages(r).len()).collect();
    // system + prompt; then + one remembered exchange (user, assistant, tool); after reset: none.
    assert_eq!(sizes, vec![2, 5, 5, 2]);
    let remembered = &messages(&provider.requests[1].1)[1];
    assert!(remembered.get("content").and_then(Value::as_str).is_some_and(|c| c.starts_with("Decision 1.")));
}

#[tokio::test]
async fn gives_up_after_the_bounded_reasks() {
    let (base, provider) = start(vec![
        text_answer("I think the nine."),
        tool_answer("c2", "choose_action", "{not json", 1, 1),
        tool_answer("c3", "choose_action", r#"{"action":{"card":7}}"#, 1, 1),
        tool_answer("c4", "choose_action", r#"{"index":0}"#, 1, 1),
    ])
    .await;
    let mut driver = OpenAiDriver::new(config(&base)).expect("driver");
    let legal = legal();
    let obs = observation(&legal);
    let error = driver.act(ctx(&obs, &legal, 0)).await.expect_err("gives up");
    match &error {
        DriverError::GaveUp { attempts: 3, last_problem } => {
            assert!(last_problem.contains("{\"card\":7} is not one of the legal actions"), "{last_problem}")
        }
        other => panic!("expected GaveUp after 3 attempts, got {other:?}"),
    }
    let provider = provider.lock().expect("provider");
    assert_eq!(provider.requests.len(), 3, "max_reasks = 2 bounds the requests");
    // Without a tool call the reply is a user message.
    let reply = messages(&provider.requests[1].1).last().expect("reply");
    assert_eq!(reply.get("role"), Some(&Value::from("user")));
    assert_eq!(driver.history_len(), 0, "a failed decision is not remembered");
}

#[tokio::test]
async fn accepts_a_legal_action_object_and_a_json_text_answer() {
    let (base, _provider) = start(vec![
        tool_answer("c1", "choose_action", r#"{"action":{"card":2}}"#, 1, 1),
        text_answer(r#"{"index": 0}"#),
    ])
    .await;
    let mut driver = OpenAiDriver::new(config(&base)).expect("driver");
    let legal = legal();
    let obs = observation(&legal);
    assert_eq!(driver.act(ctx(&obs, &legal, 0)).await.expect("decision").action, legal[2]);
    assert_eq!(driver.act(ctx(&obs, &legal, 1)).await.expect("decision").action, legal[0]);
}

#[tokio::test]
async fn provider_failures_and_configuration_are_typed() {
    let (base, _provider) = start(vec![(429, "{\"error\":{\"message\":\"slow down\"}}".into())]).await;
    let mut driver = OpenAiDriver::new(config(&base)).expect("driver");
    let legal = legal();
    let obs = observation(&legal);
    let error = driver.act(ctx(&obs, &legal, 0)).await.expect_err("429");
    assert!(matches!(&error, DriverError::Provider(m) if m.contains("HTTP 429") && m.contains("slow down")), "{error}");

    let missing =
        OpenAiConfig { api_key: None, api_key_env: Some("GAOS_TEST_KEY_THAT_IS_NOT_SET".into()), ..config(&base) };
    assert!(
        matches!(OpenAiDriver::new(missing), Err(DriverError::Config(m)) if m.contains("GAOS_TEST_KEY_THAT_IS_NOT_SET"))
    );
    let bad_url = OpenAiConfig { base_url: "ftp://x".into(), ..config(&base) };
    assert!(matches!(OpenAiDriver::new(bad_url), Err(DriverError::Config(_))));
    assert!(!format!("{:?}", config(&base)).contains("test-key"), "Debug never prints the key");
}

#[tokio::test]
async fn the_context_s_system_prompt_guidance_and_an_interrupt_prompt_reach_the_model() {
    let answers = (0..2).map(|i| tool_answer(&format!("c{i}"), "choose_action", r#"{"index":0}"#, 1, 1)).collect();
    let (base, provider) = start(answers).await;
    let mut driver = OpenAiDriver::new(config(&base)).expect("driver");
    let legal = legal();
    let obs = observation(&legal);
    let system_actions = vec![Value::from(obj! { "system" => "resign" })];
    let guidance = vec!["keep the 9 for last".to_owned()];
    let context = DriverContext {
        system_prompt: Some("Play cautiously."),
        guidance: &guidance,
        system_actions: &system_actions,
        ..ctx(&obs, &legal, 0)
    };
    driver.act(context).await.expect("decision");
    let outcome = driver.interrupt(&InterruptRequest { prompt: Some("the opponent bluffs".into()) }, true);
    assert_eq!(outcome, InterruptOutcome { mode: InterruptMode::Resume, interrupted: true, preserves_context: true });
    driver.act(ctx(&obs, &legal, 1)).await.expect("decision");
    assert_eq!(driver.history_len(), 2, "an interrupt keeps the conversation");

    let provider = provider.lock().expect("provider");
    let content = |request: usize, message: usize| {
        messages(&provider.requests[request].1)[message].get("content").and_then(Value::as_str).unwrap_or("").to_owned()
    };
    let system = content(0, 0);
    assert!(system.contains("choose_action") && system.ends_with("Play cautiously."), "{system}");
    let first = content(0, 1);
    assert!(first.contains("Guidance from a person watching: keep the 9 for last"), "{first}");
    assert!(first.contains(r#"{"system":"resign"}"#), "{first}");
    let last = messages(&provider.requests[1].1).len() - 1;
    let second = content(1, last);
    assert!(second.contains("You were interrupted: the opponent bluffs"), "{second}");
    assert!(!second.contains("Guidance from a person"), "guidance is for one decision: {second}");
}
