//! One engine instance: a QuickJS runtime with the sandbox prelude and one
//! module loaded, called through string-in, string-out host functions.
//!
//! An instance keeps nothing a game can observe between calls (states cross
//! the boundary as JSON text each time), so any instance of a module can
//! serve any session. After a call crosses the time or memory limit the
//! instance is thrown away: an interrupted QuickJS call can leave the
//! module's own objects half-updated.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rquickjs::function::Args;
use rquickjs::{Array, Context, Ctx, Function, Module, Object, Runtime, Value};

use crate::crossing::DomainReader;
use crate::error::ModuleError;
use crate::sources::Sources;
use crate::{ModuleLimits, PRELUDE};

/// Native stack the engine may use per call; QuickJS turns deeper recursion
/// into a catchable `RangeError` instead of overflowing the thread's stack
/// (test and tokio worker threads have 2 MiB).
const MAX_STACK_BYTES: usize = 512 * 1024;

/// Console output kept per call; the rest is counted and dropped.
const MAX_LOG_LINES_PER_CALL: usize = 20;
const MAX_LOG_BYTES_PER_LINE: usize = 1024;

/// The host functions of a bound module (see `prelude.js`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HostFn {
    Init,
    Advance,
    ViewFor,
    Validate,
    Command,
    Timeout,
    Legal,
    /// Re-derive a stored state (a restored checkpoint).
    Derive,
    /// A module's `render(view, seat)` (markup, not a JSON value).
    Render,
}

impl HostFn {
    const ALL: [HostFn; 9] = [
        HostFn::Init,
        HostFn::Advance,
        HostFn::ViewFor,
        HostFn::Validate,
        HostFn::Command,
        HostFn::Timeout,
        HostFn::Legal,
        HostFn::Derive,
        HostFn::Render,
    ];

    fn property(self) -> &'static str {
        match self {
            HostFn::Init => "init",
            HostFn::Advance => "advance",
            HostFn::ViewFor => "viewFor",
            HostFn::Validate => "validate",
            HostFn::Command => "command",
            HostFn::Timeout => "timeout",
            HostFn::Legal => "legal",
            HostFn::Derive => "derive",
            HostFn::Render => "render",
        }
    }

    /// How the host reads the function's answer.
    fn reading(self) -> Reading {
        match self {
            HostFn::Init | HostFn::Advance | HostFn::Derive => Reading::Derived,
            HostFn::Command => Reading::Value("command"),
            HostFn::Timeout => Reading::Value("timeout"),
            HostFn::Legal => Reading::Value("legal"),
            HostFn::ViewFor | HostFn::Validate | HostFn::Render => Reading::Text,
        }
    }

    /// The module's export the call runs, for messages.
    pub(crate) fn export(self) -> &'static str {
        match self {
            HostFn::Init => "reducer.init",
            HostFn::Advance => "reducer.advance",
            HostFn::ViewFor => "reducer.viewFor",
            HostFn::Validate => "reducer.validateCommand",
            HostFn::Command => "commandToAction",
            HostFn::Timeout => "timeoutToAction",
            HostFn::Legal => "legalActions",
            HostFn::Derive => "reducer.view (of a restored state)",
            HostFn::Render => "render",
        }
    }
}

/// How a host function answers (see `prelude.js`).
#[derive(Debug, Clone, Copy)]
enum Reading {
    /// A string: a refusal reason, or a view as JSON text.
    Text,
    /// A mapper's result as it is; the name is its `explain` slot.
    Value(&'static str),
    /// `[stateText, view, replayMetrics, ...viewFor]`.
    Derived,
}

/// A host function's answer, read out of the engine.
#[derive(Debug)]
pub(crate) enum Answer {
    Text(String),
    Value(gaos_json::Value),
    /// The state as JSON text and each derived part (view, replayMetrics,
    /// viewFor per seat): its value, or why it is not in the value domain.
    Derived {
        state: String,
        parts: Vec<Result<gaos_json::Value, String>>,
    },
}

/// Indices of the explain functions after `HostFn::ALL` in the bound list.
const EXPLAIN: usize = HostFn::ALL.len();
const EXPLAIN_PART: usize = HostFn::ALL.len() + 1;

/// One argument of a host function.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Arg<'a> {
    Text(&'a str),
    Number(f64),
}

/// Why a call failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CallFailure {
    /// The module threw, or returned a value outside the JSON domain.
    Module(String),
    /// The call did something no game may do, found outside its own
    /// exception (a dynamic `import()`); the message does not name the call.
    Sandbox(String),
    /// The call ran past the per-call time limit (the instance is discarded).
    TimeLimit,
    /// The instance ran out of its memory limit (the instance is discarded).
    MemoryLimit,
}

/// Per-call bookkeeping the interrupt handler and `console` read.
struct Guard {
    epoch: Instant,
    /// Nanoseconds after `epoch`; `u64::MAX` when no call is running.
    deadline: AtomicU64,
    fired: AtomicBool,
    log: Mutex<LogState>,
}

struct LogState {
    module: String,
    call: &'static str,
    lines: usize,
}

impl Guard {
    fn arm(&self, limit: Duration, call: &'static str) {
        let now = self.epoch.elapsed();
        let deadline = now.saturating_add(limit).as_nanos().min(u128::from(u64::MAX - 1)) as u64;
        self.fired.store(false, Ordering::Relaxed);
        self.deadline.store(deadline, Ordering::Relaxed);
        let mut log = self.log.lock().unwrap_or_else(|p| p.into_inner());
        log.call = call;
        log.lines = 0;
    }

    fn disarm(&self) {
        self.deadline.store(u64::MAX, Ordering::Relaxed);
        let log = self.log.lock().unwrap_or_else(|p| p.into_inner());
        if log.lines > MAX_LOG_LINES_PER_CALL {
            tracing::warn!(
                target: "gaos_module::console",
                module = %log.module,
                call = log.call,
                "{} more console lines of this call were dropped",
                log.lines - MAX_LOG_LINES_PER_CALL
            );
        }
    }

    fn should_interrupt(&self) -> bool {
        let deadline = self.deadline.load(Ordering::Relaxed);
        if deadline != u64::MAX && self.epoch.elapsed().as_nanos() >= u128::from(deadline) {
            self.fired.store(true, Ordering::Relaxed);
            return true;
        }
        false
    }

    fn console(&self, level: &str, text: &str) {
        let mut log = self.log.lock().unwrap_or_else(|p| p.into_inner());
        log.lines += 1;
        if log.lines > MAX_LOG_LINES_PER_CALL {
            return;
        }
        let mut end = text.len().min(MAX_LOG_BYTES_PER_LINE);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let text = &text[..end];
        let (module, call) = (log.module.as_str(), log.call);
        match level {
            "error" => tracing::error!(target: "gaos_module::console", module, call, "{text}"),
            "warn" => tracing::warn!(target: "gaos_module::console", module, call, "{text}"),
            "debug" => tracing::debug!(target: "gaos_module::console", module, call, "{text}"),
            _ => tracing::info!(target: "gaos_module::console", module, call, "{text}"),
        }
    }
}

/// What the engine binds the module as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Binding {
    /// A game module (`export default { game, ... }`).
    Game,
    /// The reference verifier-adapter shape (`resolveReplayReducer`).
    Adapter,
    /// Only load the module graph (for its digest).
    Digest,
}

pub(crate) struct Engine {
    // Field order is drop order: the context before its runtime.
    // The bound host functions (`Vec<Function>`) and, for an adapter, its
    // entry object (`Object`) live in the context's userdata, out of reach
    // of the module's code.
    bound: bool,
    level_key: Option<String>,
    /// The module's files; after loading, a resolve is a dynamic `import()`.
    sources: Sources,
    context: Context,
    runtime: Runtime,
    guard: Arc<Guard>,
    limits: ModuleLimits,
}

impl Engine {
    /// A fresh instance with the module loaded and bound; for a game module
    /// also the module's description (`meta`, JSON text).
    pub(crate) fn new(
        sources: &Sources,
        limits: &ModuleLimits,
        binding: Binding,
    ) -> Result<(Engine, String), ModuleError> {
        let path = sources.entry().to_path_buf();
        let engine_error = |e: rquickjs::Error| ModuleError::Engine { path: path.clone(), message: e.to_string() };
        let runtime = Runtime::new().map_err(engine_error)?;
        runtime.set_memory_limit(limits.memory_limit_bytes);
        runtime.set_max_stack_size(MAX_STACK_BYTES);
        let guard = Arc::new(Guard {
            epoch: Instant::now(),
            deadline: AtomicU64::new(u64::MAX),
            fired: AtomicBool::new(false),
            log: Mutex::new(LogState { module: sources.entry_name(), call: "load", lines: 0 }),
        });
        let interrupt = Arc::clone(&guard);
        runtime.set_interrupt_handler(Some(Box::new(move || interrupt.should_interrupt())));
        runtime.set_loader(sources.resolver(), sources.loader());
        let context = Context::full(&runtime).map_err(engine_error)?;
        let mut engine = Engine {
            bound: false,
            level_key: None,
            sources: sources.clone(),
            context,
            runtime,
            guard,
            limits: *limits,
        };
        let meta = engine.load(sources, binding)?;
        Ok((engine, meta))
    }

    fn load(&mut self, sources: &Sources, binding: Binding) -> Result<String, ModuleError> {
        let path = sources.entry().to_path_buf();
        let source = sources.entry_source()?;
        let file_label = path.file_name().map_or_else(|| sources.entry_name(), |n| n.to_string_lossy().into_owned());
        self.guard.arm(self.limits.call_time_limit, "load");
        let guard = Arc::clone(&self.guard);
        let result = self.context.with(|ctx| -> Result<LoadOutcome, LoadFailure> {
            let run = || -> rquickjs::Result<LoadOutcome> {
                let log = Function::new(ctx.clone(), move |level: String, text: String| guard.console(&level, &text))?;
                let prelude: Function = ctx.eval_with_options(PRELUDE, prelude_options())?;
                let entry_points: Object = prelude.call((log,))?;
                let prototypes: Vec<Object> = entry_points.get("prototypes")?;
                store(&ctx, prototypes)?;
                let module = Module::declare(ctx.clone(), sources.entry_name(), source.as_bytes())?;
                let (module, promise) = module.eval()?;
                promise.finish::<()>()?;
                let namespace = module.namespace()?;
                match binding {
                    Binding::Game => {
                        let bind: Function = entry_points.get("bind")?;
                        let bound: Array = bind.call((namespace, file_label.as_str()))?;
                        let meta: String = bound.get(0)?;
                        let host: Object = bound.get(1)?;
                        bind_host(&ctx, &host)?;
                        Ok(LoadOutcome { meta, bound: true })
                    }
                    Binding::Adapter => {
                        let bind: Function = entry_points.get("bindAdapter")?;
                        let adapter: Object = bind.call((namespace, file_label.as_str()))?;
                        store(&ctx, adapter)?;
                        Ok(LoadOutcome { meta: String::new(), bound: false })
                    }
                    Binding::Digest => Ok(LoadOutcome { meta: String::new(), bound: false }),
                }
            };
            run().map_err(|e| {
                let (message, shape) = exception_message(&ctx, e);
                LoadFailure { message, shape }
            })
        });
        self.guard.disarm();
        sources.seal();
        match result {
            Ok(outcome) => {
                self.bound = outcome.bound;
                Ok(outcome.meta)
            }
            Err(failure) => Err(self.load_error(sources, failure)),
        }
    }

    fn load_error(&self, sources: &Sources, failure: LoadFailure) -> ModuleError {
        let path = sources.entry().to_path_buf();
        if let Some(problem) = sources.take_problem() {
            match problem.into_error() {
                Ok(error) => return error,
                Err(message) => return ModuleError::Evaluate { path, message },
            }
        }
        let LoadFailure { message, shape } = failure;
        if shape {
            return ModuleError::Shape { path, message };
        }
        if self.guard.fired.load(Ordering::Relaxed) {
            let limit = self.limits.call_time_limit.as_millis();
            return ModuleError::Limit { path, message: format!("exceeded the {limit} ms time limit") };
        }
        if is_out_of_memory(&message) {
            let limit = self.limits.memory_limit_bytes;
            return ModuleError::Limit { path, message: format!("exceeded the {limit}-byte memory limit") };
        }
        ModuleError::Evaluate { path, message }
    }

    /// Bind the reducer a verifier adapter resolves for one level context
    /// (kept until another context is asked for). `None`: the adapter has
    /// no reducer for this level; otherwise the per-level meta (JSON text).
    pub(crate) fn bind_level(&mut self, context_text: &str, seats_text: &str) -> Result<Option<String>, CallFailure> {
        self.guard.arm(self.limits.call_time_limit, "resolveReplayReducer");
        let result = self.context.with(|ctx| -> Result<Option<String>, String> {
            let run = || -> rquickjs::Result<Option<String>> {
                let adapter: Object = ctx
                    .userdata::<Object>()
                    .map(|a| a.clone())
                    .ok_or_else(|| rquickjs::Error::new_from_js("module", "verifier adapter"))?;
                let for_level: Function = adapter.get("forLevel")?;
                let bound: Value = for_level.call((context_text, seats_text))?;
                let _ = ctx.remove_userdata::<Vec<Function>>();
                let Some(bound) = bound.into_array() else { return Ok(None) };
                let meta: String = bound.get(0)?;
                let host: Object = bound.get(1)?;
                bind_host(&ctx, &host)?;
                Ok(Some(meta))
            };
            run().map_err(|e| exception_message(&ctx, e).0)
        });
        self.drain_jobs();
        self.guard.disarm();
        let result = self.classify(result);
        self.bound = matches!(result, Ok(Some(_)));
        self.level_key = result.is_ok().then(|| context_text.to_owned());
        result
    }

    /// The level context the bound functions belong to (adapters only).
    pub(crate) fn level_key(&self) -> Option<&str> {
        self.level_key.as_deref()
    }

    /// Run one host function under the time limit.
    pub(crate) fn call(&mut self, function: HostFn, args: &[Arg<'_>]) -> Result<Answer, CallFailure> {
        if !self.bound {
            return Err(CallFailure::Module("no reducer is bound for this level".into()));
        }
        let index = HostFn::ALL.iter().position(|f| *f == function).expect("every host function is listed");
        self.guard.arm(self.limits.call_time_limit, function.export());
        let result = self.context.with(|ctx| {
            let run = || -> rquickjs::Result<Result<Answer, String>> {
                let (f, explain) = ctx
                    .userdata::<Vec<Function>>()
                    .map(|fns| {
                        (
                            fns[index].clone(),
                            fns[if matches!(function.reading(), Reading::Derived) { EXPLAIN_PART } else { EXPLAIN }]
                                .clone(),
                        )
                    })
                    .ok_or_else(|| rquickjs::Error::new_from_js("module", "bound game"))?;
                let mut js_args = Args::new(ctx.clone(), args.len());
                for arg in args {
                    match *arg {
                        Arg::Text(text) => js_args.push_arg(text)?,
                        Arg::Number(x) => js_args.push_arg(x)?,
                    }
                }
                let answer: Value = js_args.apply(&f)?;
                read_answer(&ctx, function, answer, &explain)
            };
            run().unwrap_or_else(|e| Err(exception_message(&ctx, e).0))
        });
        self.drain_jobs();
        self.guard.disarm();
        self.classify(result)
    }

    /// Promise jobs a call queued run inside the same call (and its time
    /// limit), so nothing of one call is left to run during the next.
    fn drain_jobs(&self) {
        while self.runtime.is_job_pending() {
            if self.guard.fired.load(Ordering::Relaxed) {
                break;
            }
            if self.runtime.execute_pending_job().is_err() {
                continue;
            }
        }
    }

    fn classify<T>(&self, result: Result<T, String>) -> Result<T, CallFailure> {
        if self.guard.fired.load(Ordering::Relaxed) {
            return Err(CallFailure::TimeLimit);
        }
        // A dynamic import fails the call even when the module ignores or
        // catches the rejected promise: the module asked for something no
        // game may have.
        if let Some(problem) = self.sources.take_problem() {
            let message = match problem.into_error() {
                Ok(error) => error.to_string(),
                Err(message) => message,
            };
            return Err(CallFailure::Sandbox(message));
        }
        match result {
            Ok(value) => Ok(value),
            Err(message) if is_out_of_memory(&message) => Err(CallFailure::MemoryLimit),
            Err(message) => Err(CallFailure::Module(message)),
        }
    }
}

struct LoadOutcome {
    meta: String,
    bound: bool,
}

struct LoadFailure {
    message: String,
    shape: bool,
}

/// Keep the host functions of `host` (in `HostFn::ALL` order) in the
/// context's userdata, replacing any bound before.
fn bind_host<'js>(ctx: &Ctx<'js>, host: &Object<'js>) -> rquickjs::Result<()> {
    let mut fns =
        HostFn::ALL.iter().map(|f| host.get::<_, Function>(f.property())).collect::<rquickjs::Result<Vec<_>>>()?;
    fns.push(host.get("explain")?);
    fns.push(host.get("explainPart")?);
    store(ctx, fns)
}

/// Read `answer` as `function` answers (`Err`: the module's failure, as a
/// message). A value the reader is not certain of goes to the prelude's
/// `explain`, which answers its JSON text or throws the exact problem.
fn read_answer<'js>(
    ctx: &Ctx<'js>,
    function: HostFn,
    answer: Value<'js>,
    explain: &Function<'js>,
) -> rquickjs::Result<Result<Answer, String>> {
    let prototypes = ctx
        .userdata::<Vec<Object>>()
        .map(|p| DomainReader::new(&p[0], &p[1]))
        .ok_or_else(|| rquickjs::Error::new_from_js("module", "intrinsic prototypes"))?;
    match function.reading() {
        Reading::Text => Ok(Ok(Answer::Text(answer.get()?))),
        Reading::Value(slot) => Ok(match prototypes.read(&answer) {
            Some(value) => Ok(Answer::Value(value)),
            None => {
                let text: String = explain.call((slot, answer))?;
                gaos_json::parse(&text)
                    .map(Answer::Value)
                    .map_err(|e| format!("{} returned invalid JSON: {e}", function.export()))
            }
        }),
        Reading::Derived => {
            let list: Array = answer.get()?;
            let state: String = list.get(0)?;
            let mut parts = Vec::with_capacity(list.len().saturating_sub(1));
            for i in 1..list.len() {
                let part: Value = list.get(i)?;
                parts.push(match prototypes.read(&part) {
                    Some(value) => Ok(value),
                    None => read_view(&explain.call::<_, String>((i - 1, part))?),
                });
            }
            Ok(Ok(Answer::Derived { state, parts }))
        }
    }
}

/// A derived part as the prelude explains it: JSON text, or `!` and the
/// reason it is not a JSON value (the kernel's `invalid_view`).
pub(crate) fn read_view(part: &str) -> Result<gaos_json::Value, String> {
    match part.strip_prefix('!') {
        Some(problem) => Err(problem.to_owned()),
        // The prelude checked the value domain; this parse cannot fail on
        // its output, but a message beats a panic.
        None => gaos_json::parse(part).map_err(|e| format!("the view is not JSON the kernel accepts: {e}")),
    }
}

fn store<'js, U>(ctx: &Ctx<'js>, data: U) -> rquickjs::Result<()>
where
    U: rquickjs::JsLifetime<'js>,
    U::Changed<'static>: std::any::Any,
{
    let _ = ctx.remove_userdata::<U>();
    ctx.store_userdata(data).map_err(|e| rquickjs::Error::new_from_js_message("host", "userdata", e.to_string()))?;
    Ok(())
}

/// The script name of the prelude in stack traces.
const PRELUDE_NAME: &str = "gaos-prelude.js";

fn prelude_options() -> rquickjs::context::EvalOptions {
    // Non-exhaustive: built by assignment.
    let mut options = rquickjs::context::EvalOptions::default();
    options.filename = Some(PRELUDE_NAME.into());
    options
}

fn is_out_of_memory(message: &str) -> bool {
    message.contains("out of memory")
}

/// The text of a failed call: the thrown value's message (our own
/// `HostError`s already name the module and the call), and whether it is a
/// shape error of the module's exports.
fn exception_message(ctx: &Ctx<'_>, error: rquickjs::Error) -> (String, bool) {
    if !matches!(error, rquickjs::Error::Exception) {
        return (error.to_string(), false);
    }
    let thrown = ctx.catch();
    let Some(object) = thrown.as_object() else {
        let text = thrown
            .as_string()
            .and_then(|s| s.to_string().ok())
            .unwrap_or_else(|| format!("threw a {}", thrown.type_name()));
        return (text, false);
    };
    let text = |key: &str| -> Option<String> { object.get::<_, Option<String>>(key).ok().flatten() };
    let name = text("name").unwrap_or_else(|| "Error".into());
    let message = text("message").unwrap_or_default();
    let shape = object.get::<_, Option<bool>>("shape").ok().flatten().unwrap_or(false);
    if name == "HostError" {
        return (message, shape);
    }
    let mut out = if message.is_empty() { name } else { format!("{name}: {message}") };
    // Syntax errors and load-time throws: where (QuickJS puts it in `stack`).
    // The first frame in the module's own code, not in the prelude.
    if let Some(stack) = text("stack")
        && let Some(first) = stack.lines().map(str::trim).find(|l| !l.is_empty() && !l.contains(PRELUDE_NAME))
    {
        out.push_str(&format!(" ({first})"));
    }
    (out, false)
}
