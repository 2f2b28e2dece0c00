//! `openai`: any OpenAI-compatible chat-completions endpoint (OpenAI,
//! OpenRouter, Ollama, vLLM, llama.cpp, ...) picks each action through
//! function calling.
//!
//! Each decision sends the seat's observation and the numbered legal actions
//! with one tool, `choose_action({index, reasoning?})` (or
//! `choose_action({action, reasoning?})` when the host lists no legal
//! actions), and forces the model to call it. An answer that is not a legal
//! choice (bad index, no tool call, unparseable arguments) is refused with a
//! message saying why, and the model is asked again, at most
//! [`OpenAiConfig::max_reasks`] times. Token usage (`usage.prompt_tokens`,
//! `usage.completion_tokens`) is summed over the attempts of a decision.
//!
//! The conversation is kept across decisions (bounded to the last
//! [`OpenAiConfig::max_history_turns`] decisions); `reset` forgets it, which
//! is what fresh-per-episode runs do at episode transitions.

use std::time::Duration;

use gaos_json::{Map, Value, canonical_json, obj};

use crate::driver::{AgentDriver, Decision, DriverContext, InterruptMode, InterruptOutcome, InterruptRequest, Usage};
use crate::error::DriverError;
use gaos_session::BoxFuture;

/// Default endpoint base (`{base}/chat/completions`).
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";
/// Default model.
pub const DEFAULT_MODEL: &str = "gpt-4o-mini";
/// Environment variable read for the API key by default.
pub const DEFAULT_API_KEY_ENV: &str = "OPENAI_API_KEY";
/// Largest provider answer read.
pub const MAX_RESPONSE_BYTES: usize = 4 * 1024 * 1024;

const TOOL_NAME: &str = "choose_action";

/// Settings of an [`OpenAiDriver`]. `Debug` never prints the key.
#[derive(Clone)]
pub struct OpenAiConfig {
    /// Endpoint base URL; requests go to `{base_url}/chat/completions`.
    pub base_url: String,
    /// The model.
    pub model: String,
    /// The API key itself (takes precedence over the environment).
    pub api_key: Option<String>,
    /// Environment variable holding the key. `None` reads
    /// `OPENAI_API_KEY` if set and otherwise sends no key (local servers);
    /// a named variable must be set.
    pub api_key_env: Option<String>,
    /// Re-asks after an illegal or unreadable answer (default 2).
    pub max_reasks: u32,
    /// Past decisions kept in the conversation (default 8).
    pub max_history_turns: usize,
    /// Timeout of one provider request (default 120 s).
    pub timeout: Duration,
    /// Replaces the default system prompt.
    pub system_prompt: Option<String>,
    /// Sampling temperature, when set.
    pub temperature: Option<f64>,
}

impl std::fmt::Debug for OpenAiConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiConfig")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("api_key_env", &self.api_key_env)
            .field("max_reasks", &self.max_reasks)
            .field("max_history_turns", &self.max_history_turns)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl Default for OpenAiConfig {
    fn default() -> Self {
        OpenAiConfig {
            base_url: DEFAULT_BASE_URL.into(),
            model: DEFAULT_MODEL.into(),
            api_key: None,
            api_key_env: None,
            max_reasks: 2,
            max_history_turns: 8,
            timeout: Duration::from_secs(120),
            system_prompt: None,
            temperature: None,
        }
    }
}

/// The `openai` driver (see the module docs).
pub struct OpenAiDriver {
    config: OpenAiConfig,
    id: String,
    label: String,
    url: String,
    api_key: Option<String>,
    http: reqwest::Client,
    /// Past decisions, each its complete message exchange.
    history: Vec<Vec<Value>>,
    /// The prompt of an interrupt, told with the next decision.
    interrupt_prompt: Option<String>,
}

impl std::fmt::Debug for OpenAiDriver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiDriver").field("config", &self.config).finish_non_exhaustive()
    }
}

impl OpenAiDriver {
    /// A driver with these settings; resolves the API key now.
    pub fn new(config: OpenAiConfig) -> Result<Self, DriverError> {
        let base = config.base_url.trim().trim_end_matches('/');
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(DriverError::Config(format!("the base URL {:?} must start with http:// or https://", base)));
        }
        if config.model.trim().is_empty() {
            return Err(DriverError::Config("the model name is empty".into()));
        }
        let api_key = match (&config.api_key, &config.api_key_env) {
            (Some(key), _) => Some(key.clone()),
            (None, Some(name)) => match std::env::var(name) {
                Ok(key) if !key.trim().is_empty() => Some(key.trim().to_owned()),
                _ => return Err(DriverError::Config(format!("the API key variable {name} is not set"))),
            },
            (None, None) => std::env::var(DEFAULT_API_KEY_ENV).ok().filter(|k| !k.trim().is_empty()),
        };
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(config.timeout)
            .build()
            .map_err(|e| DriverError::Config(format!("cannot build the HTTP client: {e}")))?;
        Ok(OpenAiDriver {
            id: format!("openai:{}", config.model),
            label: format!("{} via {base}", config.model),
            url: format!("{base}/chat/completions"),
            api_key,
            http,
            history: Vec::new(),
            interrupt_prompt: None,
            config,
        })
    }

    /// Decisions currently remembered in the conversation.
    pub fn history_len(&self) -> usize {
        self.history.len()
    }

    fn system_prompt(&self, context: &DriverContext<'_>) -> String {
        let own = self.config.system_prompt.clone().unwrap_or_else(|| {
            format!(
                "You play seat {:?} of a turn-based game session. Each turn you get your seat's observation \
                 and the numbered legal actions. Call the {TOOL_NAME} tool exactly once with the index of \
                 the action you choose.",
                context.seat
            )
        });
        // The run's prompt adds to the driver's own, which carries the tool rules.
        match context.system_prompt {
            Some(run) if !run.trim().is_empty() => format!("{own}\n\n{run}"),
            _ => own,
        }
    }

    fn tool(&self, legal: &[Value]) -> Value {
        let mut properties = Map::new();
        let required = if legal.is_empty() {
            properties.insert(
                "action".into(),
                obj! { "type" => "object", "description" => "The command to submit, as a JSON object." }.into(),
            );
            "action"
        } else {
            properties.insert(
                "index".into(),
                obj! {
                    "type" => "integer",
                    "minimum" => 0u32,
                    "maximum" => (legal.len() - 1) as u64,
                    "description" => "Index of the chosen action in the legal action list."
                }
                .into(),
            );
            "index"
        };
        properties.insert(
            "reasoning".into(),
            obj! { "type" => "string", "description" => "One short sentence: why this action." }.into(),
        );
        let parameters = obj! {
            "type" => "object",
            "properties" => Value::Object(properties),
            "required" => Value::Array(vec![required.into()]),
            "additionalProperties" => false
        };
        let function = obj! {
            "name" => TOOL_NAME,
            "description" => "Submit your action for this turn.",
            "parameters" => Value::Object(parameters)
        };
        obj! { "type" => "function", "function" => Value::Object(function) }.into()
    }

    async fn call(&self, messages: &[Value], legal: &[Value]) -> Result<(Value, Usage), DriverError> {
        let mut body = obj! {
            "model" => self.config.model.clone(),
            "messages" => Value::Array(messages.to_vec()),
            "tools" => Value::Array(vec![self.tool(legal)]),
            "tool_choice" => Value::Object(obj! {
                "type" => "function",
                "function" => Value::Object(obj! { "name" => TOOL_NAME })
            })
        };
        if let Some(t) = self.config.temperature
            && let Ok(t) = Value::number(t)
        {
            body.insert("temperature".into(), t);
        }
        let mut request = self
            .http
            .post(&self.url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header(reqwest::header::ACCEPT, "application/json")
            .body(canonical_json(&Value::Object(body)));
        if let Some(key) = &self.api_key {
            request = request.bearer_auth(key);
        }
        let provider = |what: String| DriverError::Provider(format!("{}: {what}", self.url));
        let mut response = request.send().await.map_err(|e| provider(format!("no answer ({e})")))?;
        let status = response.status();
        let mut bytes = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| provider(format!("the answer broke off ({e})")))? {
            if bytes.len() + chunk.len() > MAX_RESPONSE_BYTES {
                return Err(provider(format!("the answer is larger than {MAX_RESPONSE_BYTES} bytes")));
            }
            bytes.extend_from_slice(&chunk);
        }
        if !status.is_success() {
            let text: String = String::from_utf8_lossy(&bytes).chars().take(500).collect();
            return Err(provider(format!("HTTP {}: {text}", status.as_u16())));
        }
        let answer = gaos_json::parse_bytes(&bytes).map_err(|e| provider(format!("the answer is not JSON ({e})")))?;
        let count = |key: &str| answer.get("usage").and_then(|u| u.get(key)).and_then(Value::as_u64).unwrap_or(0);
        // Only some endpoints (e.g. OpenRouter) say what a call cost; a
        // value that is not a finite non-negative number is not a cost.
        let cost = answer
            .get("usage")
            .and_then(|u| u.get("cost"))
            .and_then(Value::as_f64)
            .filter(|c| c.is_finite() && *c >= 0.0);
        let usage = Usage { input_tokens: count("prompt_tokens"), output_tokens: count("completion_tokens"), cost };
        let message = answer
            .get("choices")
            .and_then(Value::as_array)
            .and_then(|c| c.first())
            .and_then(|c| c.get("message"))
            .filter(|m| m.is_object())
            .cloned()
            .ok_or_else(|| provider("the answer has no choices[0].message".into()))?;
        Ok((message, usage))
    }
}

/// A model answer read as a choice: the action, or why it is refused.
struct Choice {
    action: Value,
    reasoning: Option<String>,
}

fn observation_text(context: &DriverContext<'_>) -> String {
    let mut view = context.observation.clone();
    if let Some(map) = view.as_object_mut() {
        map.remove("legalActions");
    }
    let mut text = format!("Decision {}. Observation:\n{}\n\n", context.step + 1, canonical_json(&view));
    if context.legal_actions.is_empty() {
        text.push_str("No legal action list is given; call choose_action with the command object to submit.");
    } else {
        text.push_str("Legal actions:\n");
        for (i, action) in context.legal_actions.iter().enumerate() {
            text.push_str(&format!("{i}: {}\n", canonical_json(action)));
        }
        text.push_str(&format!(
            "Call choose_action with the index (0 to {}) of the action you choose.",
            context.legal_actions.len() - 1
        ));
    }
    if !context.system_actions.is_empty() {
        let listed: Vec<String> = context.system_actions.iter().map(canonical_json).collect();
        text.push_str(&format!("\nThe host also lists these system actions: {}.", listed.join(", ")));
    }
    for note in context.guidance {
        text.push_str(&format!("\nGuidance from a person watching: {note}"));
    }
    text
}

/// Read the arguments of a `choose_action` call against the legal actions.
fn read_arguments(arguments: &Value, legal: &[Value]) -> Result<Choice, String> {
    let reasoning = arguments.get("reasoning").and_then(Value::as_str).map(str::to_owned);
    if legal.is_empty() {
        return match arguments.get("action") {
            Some(action) if action.is_object() => Ok(Choice { action: action.clone(), reasoning }),
            _ => Err("the arguments must carry \"action\": the command object to submit".into()),
        };
    }
    if let Some(index) = arguments.get("index") {
        return match index.as_u64() {
            Some(i) if (i as usize) < legal.len() => Ok(Choice { action: legal[i as usize].clone(), reasoning }),
            _ => Err(format!(
                "index {} is not a legal action index (choose an integer from 0 to {})",
                canonical_json(index),
                legal.len() - 1
            )),
        };
    }
    if let Some(action) = arguments.get("action") {
        let wanted = canonical_json(action);
        return legal
            .iter()
            .find(|a| canonical_json(a) == wanted)
            .map(|a| Choice { action: a.clone(), reasoning: reasoning.clone() })
            .ok_or_else(|| format!("the action {wanted} is not one of the legal actions"));
    }
    Err("the arguments must carry \"index\": the index of a legal action".into())
}

/// Read an assistant message: its tool call id (if any) and the choice.
fn read_message(message: &Value, legal: &[Value]) -> (Option<String>, Result<Choice, String>) {
    let call = message.get("tool_calls").and_then(Value::as_array).and_then(|calls| calls.first());
    let Some(call) = call else {
        // No tool call: accept a bare JSON answer in the content, if any.
        let content = message.get("content").and_then(Value::as_str).unwrap_or("");
        let parsed = gaos_json::parse(content.trim()).ok().filter(Value::is_object);
        return match parsed {
            Some(arguments) => (None, read_arguments(&arguments, legal)),
            None => (None, Err(format!("the answer did not call {TOOL_NAME}"))),
        };
    };
    let id = call.get("id").and_then(Value::as_str).map(str::to_owned);
    let function = call.get("function");
    if function.and_then(|f| f.get("name")).and_then(Value::as_str) != Some(TOOL_NAME) {
        return (id, Err(format!("the answer called an unknown tool; the only tool is {TOOL_NAME}")));
    }
    let arguments = match function.and_then(|f| f.get("arguments")) {
        Some(Value::String(text)) => gaos_json::parse(text).map_err(|e| format!("the arguments are not JSON ({e})")),
        Some(value @ Value::Object(_)) => Ok(value.clone()),
        _ => Err("the tool call has no arguments".into()),
    };
    (id, arguments.and_then(|a| read_arguments(&a, legal)))
}

fn tool_reply(id: Option<&str>, text: String) -> Value {
    match id {
        Some(id) => obj! { "role" => "tool", "tool_call_id" => id, "content" => text }.into(),
        None => obj! { "role" => "user", "content" => text }.into(),
    }
}

impl AgentDriver for OpenAiDriver {
    fn id(&self) -> &str {
        &self.id
    }

    fn label(&self) -> &str {
        &self.label
    }

    fn provider(&self) -> Option<&str> {
        Some("openai")
    }

    fn reset(&mut self) {
        self.history.clear();
        self.interrupt_prompt = None;
    }

    /// The decision in flight is dropped before its exchange joins the
    /// history, so the conversation so far is intact: resume, telling the
    /// prompt with the next decision.
    fn interrupt(&mut self, request: &InterruptRequest, in_flight: bool) -> InterruptOutcome {
        if let Some(prompt) = &request.prompt {
            self.interrupt_prompt = Some(prompt.clone());
        }
        InterruptOutcome { mode: InterruptMode::Resume, interrupted: in_flight, preserves_context: true }
    }

    fn act<'a>(&'a mut self, context: DriverContext<'a>) -> BoxFuture<'a, Result<Decision, DriverError>> {
        Box::pin(async move {
            let legal = context.legal_actions;
            let mut text = observation_text(&context);
            if let Some(prompt) = self.interrupt_prompt.take() {
                text.push_str(&format!("\nYou were interrupted: {prompt}"));
            }
            let mut turn: Vec<Value> = vec![obj! { "role" => "user", "content" => text }.into()];
            let mut usage = Usage::default();
            let attempts = self.config.max_reasks.saturating_add(1);
            let mut last_problem = String::new();
            for attempt in 1..=attempts {
                let mut messages: Vec<Value> =
                    vec![obj! { "role" => "system", "content" => self.system_prompt(&context) }.into()];
                messages.extend(self.history.iter().flatten().cloned());
                messages.extend(turn.iter().cloned());
                let (message, used) = self.call(&messages, legal).await?;
                usage = usage + used;
                let (call_id, choice) = read_message(&message, legal);
                turn.push(message.clone());
                match choice {
                    Ok(choice) => {
                        turn.push(tool_reply(call_id.as_deref(), "Accepted.".into()));
                        self.history.push(turn);
                        let keep = self.config.max_history_turns;
                        if self.history.len() > keep {
                            self.history.drain(..self.history.len() - keep);
                        }
                        let content = message.get("content").and_then(Value::as_str).filter(|c| !c.trim().is_empty());
                        return Ok(Decision {
                            action: choice.action,
                            reasoning: choice.reasoning,
                            message: content.map(str::to_owned),
                            usage: Some(usage),
                            submission_tag: None,
                        });
                    }
                    Err(problem) => {
                        let remaining = attempts - attempt;
                        turn.push(tool_reply(
                            call_id.as_deref(),
                            format!("Refused: {problem}. Call {TOOL_NAME} again with a legal choice."),
                        ));
                        last_problem = problem;
                        if remaining == 0 {
                            break;
                        }
                    }
                }
            }
            Err(DriverError::GaveUp { attempts, last_problem })
        })
    }
}
