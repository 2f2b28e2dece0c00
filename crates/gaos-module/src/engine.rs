//! One engine instance: a QuickJS runtime with the sandbox prelude and one
//! module loaded, called through string-in, string-out host functions.
//!
//! Sessions share nothing a game can observe: the prelude freezes every
//! intrinsic before any module code runs, and each session (each isolated
//! game, see `realm.rs`) calls its own instance of the module graph, so
//! module-level variables are its own. States cross the boundary as JSON
//! text each time, so any engine can serve any session. After a call
//! crosses the time or memory limit the engine is thrown away: an
//! interrupted QuickJS call can leave the module's own objects half-updated.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rquickjs::function::Args;
use rquickjs::{Array, Context, Ctx, Function, Module, Object, Runtime, Value};

use crate::crossing::{Budget, DomainReader, Overrun};
use crate::error::ModuleError;
use crate::realm::{Instances, RealmKey, SHARED, instance_name};
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
    /// A value read out of the engine is larger than
    /// [`ModuleLimits::max_value_bytes`]; the string names it.
    ValueLimit(String),
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
    // The bound host functions of each module instance
    // (`Realms`), the prelude's `bind`
    // (`Option<Function>`) and, for an adapter, its entry object (`Object`)
    // live in the context's userdata, out of reach of the module's code.
    bound: bool,
    binding: Binding,
    level_key: Option<String>,
    /// The entry file's name in messages (`game.mjs`).
    file_label: String,
    /// The module instances of isolated games in this engine.
    instances: Instances,
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
        let file_label =
            sources.entry().file_name().map_or_else(|| sources.entry_name(), |n| n.to_string_lossy().into_owned());
        let mut engine = Engine {
            bound: false,
            binding,
            level_key: None,
            file_label,
            instances: Instances::default(),
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
        let source = sources.entry_source()?;
        let file_label = self.file_label.clone();
        self.guard.arm(self.limits.call_time_limit, "load");
        let guard = Arc::clone(&self.guard);
        let result = self.context.with(|ctx| -> Result<LoadOutcome, LoadFailure> {
            let run = || -> rquickjs::Result<LoadOutcome> {
                let log = Function::new(ctx.clone(), move |level: String, text: String| guard.console(&level, &text))?;
                let prelude: Function = ctx.eval_with_options(PRELUDE, script_options(PRELUDE_NAME))?;
                let entry_points: Object = prelude.call((log,))?;
                let prototypes: Vec<Object> = entry_points.get("prototypes")?;
                store(&ctx, prototypes)?;
                // Before any module code: what every session shares is frozen.
                let lockdown: Function = ctx.eval_with_options(LOCKDOWN, script_options(LOCKDOWN_NAME))?;
                lockdown.call::<_, ()>((entry_points.get::<_, Array>("shared")?,))?;
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
                        bind_host(&ctx, SHARED, &host)?;
                        store(&ctx, Some(bind))?;
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
                let _ = ctx.remove_userdata::<Realms>();
                let Some(bound) = bound.into_array() else { return Ok(None) };
                let meta: String = bound.get(0)?;
                let host: Object = bound.get(1)?;
                bind_host(&ctx, SHARED, &host)?;
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

    /// Run one host function under the time limit, in the module instance
    /// of `realm` (made first when this engine has none for it yet, within
    /// the same limit). An adapter has one instance.
    pub(crate) fn call(&mut self, realm: RealmKey, function: HostFn, args: &[Arg<'_>]) -> Result<Answer, CallFailure> {
        if !self.bound {
            return Err(CallFailure::Module("no reducer is bound for this level".into()));
        }
        let realm = if self.binding == Binding::Game { realm } else { SHARED };
        let index = HostFn::ALL.iter().position(|f| *f == function).expect("every host function is listed");
        self.guard.arm(self.limits.call_time_limit, function.export());
        if realm != SHARED && !self.instances.touch(realm) {
            let made = self.instantiate(realm);
            if let Err(failure) = self.classify(made) {
                self.drain_jobs();
                self.guard.disarm();
                return Err(failure);
            }
        }
        let max_value_bytes = self.limits.max_value_bytes;
        let guard = Arc::clone(&self.guard);
        let deadline = move || guard.should_interrupt();
        let result = self.context.with(|ctx| {
            let run = || -> rquickjs::Result<Result<Answer, CallFailure>> {
                let (f, explain) = ctx
                    .userdata::<Realms>()
                    .and_then(|realms| {
                        let realms = realms.borrow();
                        let fns = realms.get(&realm)?;
                        let explain =
                            if matches!(function.reading(), Reading::Derived) { EXPLAIN_PART } else { EXPLAIN };
                        Some((fns[index].clone(), fns[explain].clone()))
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
                let reading = AnswerReading { function, explain: &explain, max_value_bytes, deadline: &deadline };
                read_answer(&ctx, answer, &reading)
            };
            run().map_err(|e| exception_message(&ctx, e).0)
        });
        self.drain_jobs();
        self.guard.disarm();
        self.classify(result).and_then(|answer| answer)
    }

    /// A module instance of its own for `realm`: the module graph compiled
    /// and evaluated again under names only this realm's imports resolve to,
    /// and bound like the one loaded first. The least recently used instance
    /// beyond the bound is forgotten (its realm gets a new one when it calls
    /// again).
    fn instantiate(&mut self, realm: RealmKey) -> Result<(), String> {
        let source = self.sources.entry_source().map_err(|e| e.to_string())?;
        let name = instance_name(realm, &self.sources.entry_name());
        let file_label = self.file_label.clone();
        self.sources.unseal();
        let result = self.context.with(|ctx| {
            let run = || -> rquickjs::Result<()> {
                let bind = ctx
                    .userdata::<Option<Function>>()
                    .and_then(|bind| bind.clone())
                    .ok_or_else(|| rquickjs::Error::new_from_js("module", "prelude bind"))?;
                let module = Module::declare(ctx.clone(), name, source.as_bytes())?;
                let (module, promise) = module.eval()?;
                promise.finish::<()>()?;
                let bound: Array = bind.call((module.namespace()?, file_label.as_str()))?;
                let host: Object = bound.get(1)?;
                bind_host(&ctx, realm, &host)
            };
            run().map_err(|e| exception_message(&ctx, e).0)
        });
        self.sources.seal();
        result.map_err(|message| format!("a module instance of this session failed to load: {message}"))?;
        if let Some(forgotten) = self.instances.add(realm) {
            self.context.with(|ctx| {
                if let Some(realms) = ctx.userdata::<Realms>() {
                    realms.borrow_mut().remove(&forgotten);
                }
            });
        }
        // Measuring walks the whole heap: only every few instances.
        if self.instances.measure_now() {
            let used = usize::try_from(self.runtime.memory_usage().malloc_size).unwrap_or(usize::MAX);
            self.instances.note_memory(used, self.limits.memory_limit_bytes);
        }
        Ok(())
    }

    /// True once this engine should be replaced after its current call:
    /// module instances are only freed with their context, so an engine
    /// that made many (or grew past half its memory limit) makes way for a
    /// fresh one.
    pub(crate) fn spent(&self) -> bool {
        self.instances.spent()
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
/// context's userdata as `realm`'s, replacing any bound before.
fn bind_host<'js>(ctx: &Ctx<'js>, realm: RealmKey, host: &Object<'js>) -> rquickjs::Result<()> {
    let mut fns =
        HostFn::ALL.iter().map(|f| host.get::<_, Function>(f.property())).collect::<rquickjs::Result<Vec<_>>>()?;
    fns.push(host.get("explain")?);
    fns.push(host.get("explainPart")?);
    if let Some(realms) = ctx.userdata::<Realms>() {
        realms.borrow_mut().insert(realm, fns);
        return Ok(());
    }
    store(ctx, Realms::new(HashMap::from([(realm, fns)])))
}

/// The bound host functions of each module instance, by realm (userdata).
type Realms<'js> = RefCell<HashMap<RealmKey, Vec<Function<'js>>>>;

/// How one call's answer is read.
struct AnswerReading<'a, 'js> {
    function: HostFn,
    /// The prelude's `explain` (or `explainPart`) for values the reader is
    /// not certain of.
    explain: &'a Function<'js>,
    max_value_bytes: usize,
    deadline: &'a dyn Fn() -> bool,
}

impl AnswerReading<'_, '_> {
    fn budget(&self) -> Budget<'_> {
        Budget::new(self.max_value_bytes, self.deadline)
    }

    /// The failure of an overrun reading `what`.
    fn overrun(&self, overrun: Overrun, what: &str) -> CallFailure {
        match overrun {
            Overrun::Deadline => CallFailure::TimeLimit,
            Overrun::Budget => CallFailure::ValueLimit(what.to_owned()),
        }
    }

    /// A string answer, its length checked before it is copied out.
    fn text<'js>(&self, value: Value<'js>, what: &str) -> rquickjs::Result<Result<String, CallFailure>> {
        let Some(string) = value.as_string().cloned() else {
            // Not a string: the conversion's own error names the type.
            return Ok(Ok(value.get::<String>()?));
        };
        let text = rquickjs::CString::from_string(string)?;
        if let Err(overrun) = self.budget().charge_text(text.len()) {
            return Ok(Err(self.overrun(overrun, what)));
        }
        Ok(Ok(text.as_str().to_owned()))
    }
}

/// Read `answer` as the function answers (`Err`: the module's failure). A
/// value the reader is not certain of goes to the prelude's `explain`,
/// which answers its JSON text or throws the exact problem. Every value is
/// read under its own budget of `max_value_bytes`.
fn read_answer<'js>(
    ctx: &Ctx<'js>,
    answer: Value<'js>,
    reading: &AnswerReading<'_, 'js>,
) -> rquickjs::Result<Result<Answer, CallFailure>> {
    let prototypes = ctx
        .userdata::<Vec<Object>>()
        .map(|p| DomainReader::new(&p[0], &p[1]))
        .ok_or_else(|| rquickjs::Error::new_from_js("module", "intrinsic prototypes"))?;
    let function = reading.function;
    match function.reading() {
        Reading::Text => Ok(reading.text(answer, "its answer")?.map(Answer::Text)),
        Reading::Value(slot) => {
            let what = "its answer";
            match prototypes.read(&answer, &mut reading.budget()) {
                Ok(Some(value)) => Ok(Ok(Answer::Value(value))),
                Err(overrun) => Ok(Err(reading.overrun(overrun, what))),
                Ok(None) => {
                    let text: Value = reading.explain.call((slot, answer))?;
                    Ok(reading.text(text, what)?.and_then(|text| {
                        gaos_json::parse(&text).map(Answer::Value).map_err(|e| {
                            CallFailure::Module(format!("{} returned invalid JSON: {e}", function.export()))
                        })
                    }))
                }
            }
        }
        Reading::Derived => {
            let list: Array = answer.get()?;
            let state: String = list.get(0)?;
            let mut parts = Vec::with_capacity(list.len().saturating_sub(1));
            for i in 1..list.len() {
                let what = match i {
                    1 => "view(state)".to_owned(),
                    2 => "replayMetrics(state)".to_owned(),
                    n => format!("viewFor(state, seat) of the {}. seat", n - 2),
                };
                let part: Value = list.get(i)?;
                parts.push(match prototypes.read(&part, &mut reading.budget()) {
                    Ok(Some(value)) => Ok(value),
                    Err(overrun) => return Ok(Err(reading.overrun(overrun, &what))),
                    Ok(None) => {
                        let text: Value = reading.explain.call((i - 1, part))?;
                        match reading.text(text, &what)? {
                            Ok(text) => read_view(&text),
                            Err(failure) => return Ok(Err(failure)),
                        }
                    }
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

/// The script names of the prelude and the lockdown in stack traces.
const PRELUDE_NAME: &str = "gaos-prelude.js";
const LOCKDOWN_NAME: &str = "gaos-lockdown.js";

/// The freezing of what every session of an engine shares (see `lockdown.js`).
const LOCKDOWN: &str = include_str!("lockdown.js");

fn script_options(name: &str) -> rquickjs::context::EvalOptions {
    // Non-exhaustive: built by assignment.
    let mut options = rquickjs::context::EvalOptions::default();
    options.filename = Some(name.into());
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
        && let Some(first) = stack
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty() && !l.contains(PRELUDE_NAME) && !l.contains(LOCKDOWN_NAME))
    {
        out.push_str(&format!(" ({first})"));
    }
    (out, false)
}
