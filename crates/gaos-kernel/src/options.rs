//! Kernel construction options and limits (`SessionKernelOptions`,
//! `SessionLimits`).

pub use crate::cadence::Cadence;
use std::sync::Arc;

use gaos_json::Value;

use crate::action::SubmittedAction;
use crate::dmath::{DMATH_ALGORITHM, Dmath};
use crate::error::{GameError, KernelError};
use crate::event::{SeedPolicy, SessionHeader};
use crate::game::{CommandContext, Game, GameRef, TimeoutContext, TimeoutInput};
use crate::protocol::is_valid_participant_id;
use crate::reducer::{DynReducer, StateIsolation, TickReducer};
use crate::signing::Roster;

/// `commandToAction(command, ctx)`.
pub type CommandMapper =
    Arc<dyn for<'a> Fn(&Value, &CommandContext<'a>) -> Result<SubmittedAction, GameError> + Send + Sync>;

/// `timeoutToAction(ctx, timeout)`.
pub type TimeoutMapper =
    Arc<dyn Fn(&TimeoutContext, &TimeoutInput) -> Result<SubmittedAction, GameError> + Send + Sync>;

/// Explicit host clock policy. The kernel never reads a clock itself.
#[derive(Clone, Default)]
pub enum HostTime {
    /// Omit `hostTime` from events (reproducible transcripts).
    #[default]
    None,
    /// A provider of UTC epoch milliseconds, called once per event.
    Provider(Arc<dyn Fn() -> i64 + Send + Sync>),
}

impl std::fmt::Debug for HostTime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HostTime::None => f.write_str("HostTime::None"),
            HostTime::Provider(_) => f.write_str("HostTime::Provider(..)"),
        }
    }
}

/// Optional overrides of the deterministic resource bounds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SessionLimits {
    pub max_future_ticks: Option<f64>,
    pub max_catch_up_ticks: Option<f64>,
    pub receipt_retention: Option<f64>,
    pub max_extension_bytes: Option<f64>,
    pub checkpoint_interval: Option<f64>,
    pub max_open_commitments_per_seat: Option<f64>,
}

impl SessionLimits {
    /// Read a limits object; unknown keys and non-numbers are type errors.
    pub fn from_value(value: &Value) -> Result<Self, String> {
        let map = value.as_object().ok_or("limits must be an object")?;
        let mut limits = SessionLimits::default();
        for (key, v) in map {
            let n = v.as_f64().ok_or_else(|| format!("limit {key} must be a number"))?;
            let slot = match key.as_str() {
                "maxFutureTicks" => &mut limits.max_future_ticks,
                "maxCatchUpTicks" => &mut limits.max_catch_up_ticks,
                "receiptRetention" => &mut limits.receipt_retention,
                "maxExtensionBytes" => &mut limits.max_extension_bytes,
                "checkpointInterval" => &mut limits.checkpoint_interval,
                "maxOpenCommitmentsPerSeat" => &mut limits.max_open_commitments_per_seat,
                other => return Err(format!("unknown limit {other}")),
            };
            *slot = Some(n);
        }
        Ok(limits)
    }
}

/// Limits after defaults, all validated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResolvedLimits {
    pub max_future_ticks: u64,
    pub max_catch_up_ticks: u64,
    pub receipt_retention: u64,
    pub max_extension_bytes: u64,
    pub checkpoint_interval: u64,
    pub max_open_commitments_per_seat: u64,
}

fn limit(name: &str, value: Option<f64>, default: f64, min: u64) -> Result<u64, KernelError> {
    let v = value.unwrap_or(default);
    if !(v.is_finite() && v.fract() == 0.0 && v <= gaos_json::MAX_SAFE_INTEGER) {
        return Err(KernelError::range_error(format!("{name} must be a safe integer, got {v}")));
    }
    if v < min as f64 {
        return Err(KernelError::range_error(format!("{name} must be at least {min}, got {v}")));
    }
    Ok(v as u64)
}

impl SessionLimits {
    /// Apply the reference defaults for `cadence` and check every bound.
    pub fn resolve(&self, cadence: &Cadence) -> Result<ResolvedLimits, KernelError> {
        let future_default = match cadence {
            Cadence::Turns => 1.0,
            Cadence::Ticks(rate) => 2.0 * rate.ticks_per_second,
        };
        Ok(ResolvedLimits {
            max_future_ticks: limit("maxFutureTicks", self.max_future_ticks, future_default, 1)?,
            max_catch_up_ticks: limit("maxCatchUpTicks", self.max_catch_up_ticks, 600.0, 1)?,
            receipt_retention: limit("receiptRetention", self.receipt_retention, 64.0, 0)?,
            max_extension_bytes: limit("maxExtensionBytes", self.max_extension_bytes, 65_536.0, 1)?,
            checkpoint_interval: limit("checkpointInterval", self.checkpoint_interval, 1.0, 1)?,
            max_open_commitments_per_seat: limit(
                "maxOpenCommitmentsPerSeat",
                self.max_open_commitments_per_seat,
                64.0,
                1,
            )?,
        })
    }
}

/// Everything a kernel is built from (`SessionKernelOptions`). Rehydration
/// builds a new kernel from the same options.
pub struct KernelOptions<R: TickReducer> {
    pub session_id: String,
    pub game: GameRef,
    pub level_id: String,
    /// A string or number.
    pub level_version: Option<Value>,
    pub reducer: R,
    pub level: Value,
    /// Host-generated, never client-supplied.
    pub seed: u32,
    pub seed_policy: SeedPolicy,
    /// Declared seats in declared order.
    pub seats: Vec<String>,
    pub cadence: Cadence,
    pub host_time: HostTime,
    /// Recorded in the header (`dmath`); the kernel never runs it.
    pub dmath: Option<Dmath>,
    pub command_to_action: CommandMapper,
    pub timeout_to_action: Option<TimeoutMapper>,
    pub limits: SessionLimits,
    /// Absent: `Clone` isolation.
    pub state_isolation: Option<Arc<dyn StateIsolation<R::State>>>,
    /// RFC-010 signed play: the seat roster (`seatKeys`, recorded with
    /// `signaturePolicy` in the header). Absent: an unsigned session.
    pub signing: Option<Roster>,
    /// `timeoutPolicy`, recorded in the header. A signed session's must be
    /// the tick-bounded form `{"mode":"ticks","windowTicks":N}` (ticks
    /// cadence, a timeout mapper), which the kernel then enforces: an
    /// incomplete window resolves only by a timeout at `cursor + N`.
    pub timeout_policy: Option<Value>,
}

impl<R: TickReducer + Clone> Clone for KernelOptions<R> {
    fn clone(&self) -> Self {
        KernelOptions {
            session_id: self.session_id.clone(),
            game: self.game.clone(),
            level_id: self.level_id.clone(),
            level_version: self.level_version.clone(),
            reducer: self.reducer.clone(),
            level: self.level.clone(),
            seed: self.seed,
            seed_policy: self.seed_policy,
            seats: self.seats.clone(),
            cadence: self.cadence,
            host_time: self.host_time.clone(),
            dmath: self.dmath.clone(),
            command_to_action: self.command_to_action.clone(),
            timeout_to_action: self.timeout_to_action.clone(),
            limits: self.limits,
            state_isolation: self.state_isolation.clone(),
            signing: self.signing.clone(),
            timeout_policy: self.timeout_policy.clone(),
        }
    }
}

impl<R: TickReducer> KernelOptions<R> {
    /// The level seed passed to `init` (derived for run-level-seed policy).
    pub fn init_seed(&self) -> u32 {
        match self.seed_policy {
            SeedPolicy::Explicit => self.seed,
            SeedPolicy::RunLevelSeedV1 => crate::seed::run_level_seed(self.seed, 0).expect("index 0 is exact"),
        }
    }

    /// `sessionHeaderFor(options)`.
    pub fn header(&self) -> SessionHeader {
        SessionHeader {
            session_id: self.session_id.clone(),
            game: self.game.clone(),
            level_id: self.level_id.clone(),
            level_version: self.level_version.clone(),
            level: self.level.clone(),
            seed: self.seed,
            seed_policy: self.seed_policy,
            seats: self.seats.clone(),
            cadence: self.cadence.header(),
            timeout_policy: self.timeout_policy.clone(),
            seat_keys: self.signing.as_ref().map(Roster::to_value),
            signature_policy: self.signing.as_ref().map(|_| crate::signing::signature_policy_value()),
            dmath: self.dmath.as_ref().map(Dmath::to_value),
        }
    }

    /// Construction checks that do not need the reducer's state.
    pub(crate) fn validate(&self) -> Result<ResolvedLimits, KernelError> {
        if self.session_id.trim().is_empty() {
            return Err(KernelError::type_error("sessionId must be a non-empty string"));
        }
        if self.level_id.is_empty() {
            return Err(KernelError::type_error("levelId must be a non-empty string"));
        }
        if let Some(v) = &self.level_version
            && !matches!(v, Value::String(_) | Value::Number(_))
        {
            return Err(KernelError::type_error("levelVersion must be a string or number"));
        }
        if self.seats.is_empty() {
            return Err(KernelError::type_error("a session needs at least one seat"));
        }
        for (i, seat) in self.seats.iter().enumerate() {
            if !is_valid_participant_id(seat) {
                return Err(KernelError::type_error(format!("invalid seat id {seat:?}")));
            }
            if self.seats[..i].contains(seat) {
                return Err(KernelError::type_error(format!("duplicate seat id {seat:?}")));
            }
        }
        if let Some(dmath) = &self.dmath
            && dmath.algorithm != DMATH_ALGORITHM
        {
            return Err(KernelError::type_error(format!(
                "dmath.algorithm must be \"{DMATH_ALGORITHM}\", got {:?}",
                dmath.algorithm
            )));
        }
        if let Some(roster) = &self.signing {
            let named =
                roster.keys().len() == self.seats.len() && self.seats.iter().all(|seat| roster.key(seat).is_some());
            if !named {
                return Err(KernelError::type_error("seatKeys must name every declared session seat exactly once"));
            }
        }
        if let Some(policy) = &self.timeout_policy {
            if !matches!(policy, Value::Object(_)) {
                return Err(KernelError::type_error("timeoutPolicy must be an object"));
            }
            if self.signing.is_some() {
                let map = policy.as_object().expect("an object");
                let bounded = map.len() == 2
                    && policy.get("mode").and_then(Value::as_str) == Some("ticks")
                    && policy.get("windowTicks").and_then(Value::as_u64).is_some_and(|w| w > 0);
                if !bounded {
                    return Err(KernelError::type_error(
                        "signed timeoutPolicy must be {\"mode\":\"ticks\",\"windowTicks\": a positive integer}",
                    ));
                }
                if !matches!(self.cadence, Cadence::Ticks(_)) {
                    return Err(KernelError::type_error("a tick-bounded timeoutPolicy requires ticks cadence"));
                }
                if self.timeout_to_action.is_none() {
                    return Err(KernelError::type_error("a tick-bounded timeoutPolicy requires timeoutToAction"));
                }
            }
        }
        if matches!(self.cadence, Cadence::Ticks(_)) && !self.reducer.supports_empty_ticks() {
            return Err(KernelError::type_error("ticks cadence requires a reducer with advance"));
        }
        self.limits.resolve(&self.cadence)
    }
}

impl KernelOptions<DynReducer> {
    /// Options for a registered game (its reducer and command mapper), built
    /// step by step:
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use gaos_kernel::{Cadence, Game, KernelOptions, SeedPolicy};
    /// # fn options(game: &Arc<dyn Game>) -> KernelOptions<gaos_kernel::DynReducer> {
    /// KernelOptions::builder(game, "session-1")
    ///     .level("level-1", gaos_json::Value::Null)
    ///     .seed(7, SeedPolicy::Explicit)
    ///     .seats(vec!["a".into(), "b".into()])
    ///     .cadence(Cadence::Turns)
    ///     .timeout_mapper(true)
    ///     .build()
    /// # }
    /// ```
    ///
    /// Unset: no level version, level id `""` and level `null` (construction
    /// refuses an empty level id), seed 0 with the explicit policy, the
    /// game's declared seats, turns cadence, no timeout mapper, default
    /// limits, no host time, no dmath declaration, clone isolation.
    pub fn builder(game: &Arc<dyn Game>, session_id: &str) -> GameOptionsBuilder {
        GameOptionsBuilder {
            game: Arc::clone(game),
            session_id: session_id.into(),
            level_id: String::new(),
            level_version: None,
            level: Value::Null,
            seed: 0,
            seed_policy: SeedPolicy::Explicit,
            seats: None,
            cadence: Cadence::Turns,
            with_timeout_mapper: false,
            host_time: HostTime::None,
            dmath: None,
            signing: None,
            timeout_policy: None,
        }
    }
}

/// Builds [`KernelOptions`] for a registered game ([`KernelOptions::builder`]).
#[must_use = "call build() to get the options"]
pub struct GameOptionsBuilder {
    game: Arc<dyn Game>,
    session_id: String,
    level_id: String,
    level_version: Option<Value>,
    level: Value,
    seed: u32,
    seed_policy: SeedPolicy,
    seats: Option<Vec<String>>,
    cadence: Cadence,
    with_timeout_mapper: bool,
    host_time: HostTime,
    dmath: Option<Dmath>,
    signing: Option<Roster>,
    timeout_policy: Option<Value>,
}

impl GameOptionsBuilder {
    /// The level id and the reducer's level input.
    pub fn level(mut self, level_id: &str, level: Value) -> Self {
        self.level_id = level_id.into();
        self.level = level;
        self
    }

    /// The level version recorded in the header (`None`: omitted).
    pub fn level_version(mut self, version: Option<Value>) -> Self {
        self.level_version = version;
        self
    }

    /// The session seed and how the level seed derives from it.
    pub fn seed(mut self, seed: u32, policy: SeedPolicy) -> Self {
        self.seed = seed;
        self.seed_policy = policy;
        self
    }

    /// The declared seats (default: the game's own).
    pub fn seats(mut self, seats: Vec<String>) -> Self {
        self.seats = Some(seats);
        self
    }

    pub fn cadence(mut self, cadence: Cadence) -> Self {
        self.cadence = cadence;
        self
    }

    /// Configure the game's timeout mapper when it has one.
    pub fn timeout_mapper(mut self, enabled: bool) -> Self {
        self.with_timeout_mapper = enabled;
        self
    }

    /// The host clock policy (default [`HostTime::None`]: no `hostTime` on
    /// events). The kernel never reads a clock: a provider is the host's.
    pub fn host_time(mut self, host_time: HostTime) -> Self {
        self.host_time = host_time;
        self
    }

    /// The deterministic-math declaration recorded in the header (default none).
    pub fn dmath(mut self, dmath: Option<Dmath>) -> Self {
        self.dmath = dmath;
        self
    }

    /// `timeoutPolicy` (default none); see [`KernelOptions::timeout_policy`].
    pub fn timeout_policy(mut self, policy: Option<Value>) -> Self {
        self.timeout_policy = policy;
        self
    }

    /// RFC-010 signed play under `roster` (default: unsigned). The roster
    /// must name every declared seat exactly once (checked at construction).
    pub fn signing(mut self, roster: Option<Roster>) -> Self {
        self.signing = roster;
        self
    }

    pub fn build(self) -> KernelOptions<DynReducer> {
        // The kernel's reducer and mappers serve this session only
        // (a game already isolated for it stays as it is).
        let game = crate::game::isolated(&self.game);
        let mapper_game = Arc::clone(&game);
        let command_to_action: CommandMapper =
            Arc::new(move |command, ctx| mapper_game.command_to_action(command, ctx));
        let timeout_to_action: Option<TimeoutMapper> =
            (self.with_timeout_mapper && game.has_timeout_mapper()).then(|| {
                let g = Arc::clone(&game);
                let mapper: TimeoutMapper = Arc::new(move |ctx, timeout| {
                    g.timeout_to_action(ctx, timeout)
                        .unwrap_or_else(|| Err(GameError::new("the game has no timeout mapper")))
                });
                mapper
            });
        KernelOptions {
            session_id: self.session_id,
            game: game.game_ref(),
            level_id: self.level_id,
            level_version: self.level_version,
            reducer: game.reducer(),
            level: self.level,
            seed: self.seed,
            seed_policy: self.seed_policy,
            seats: self.seats.unwrap_or_else(|| game.seats()),
            cadence: self.cadence,
            host_time: self.host_time,
            dmath: self.dmath,
            command_to_action,
            timeout_to_action,
            limits: SessionLimits::default(),
            state_isolation: None,
            signing: self.signing,
            timeout_policy: self.timeout_policy,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use gaos_json::{Value, obj};

    use super::*;
    use crate::error::ArgumentCode;
    use crate::game::GameRef;
    use crate::kernel::SessionKernel;
    use crate::reducer::{ActionReducer, ActionReducerAdapter};

    /// A one-seat-per-window game whose initial view is configurable.
    #[derive(Clone)]
    struct Fixed {
        view: Value,
        init_fails: bool,
    }

    impl TickReducer for Fixed {
        type State = ();
        fn init(&self, _level: &Value, _seed: u32) -> Result<(), GameError> {
            if self.init_fails { Err(GameError::new("no such level")) } else { Ok(()) }
        }
        fn advance(&self, state: (), _inputs: &[SubmittedAction]) -> Result<(), GameError> {
            Ok(state)
        }
        fn view(&self, _state: &()) -> Value {
            self.view.clone()
        }
    }

    fn playing() -> Value {
        obj! { "status" => "playing", "hud" => obj! { "actionsUsed" => 0u32 } }.into()
    }

    fn options_with<R: TickReducer>(reducer: R) -> KernelOptions<R> {
        KernelOptions {
            session_id: "s".into(),
            game: GameRef::conventional("tests/options"),
            level_id: "only".into(),
            level_version: None,
            reducer,
            level: Value::Null,
            seed: 0,
            seed_policy: SeedPolicy::Explicit,
            seats: vec!["red".into(), "blue".into()],
            cadence: Cadence::Turns,
            host_time: HostTime::None,
            dmath: None,
            command_to_action: Arc::new(|_, _| Ok(SubmittedAction::new("Action 1"))),
            timeout_to_action: None,
            limits: SessionLimits::default(),
            state_isolation: None,
            signing: None,
            timeout_policy: None,
        }
    }

    fn options() -> KernelOptions<Fixed> {
        options_with(Fixed { view: playing(), init_fails: false })
    }

    fn construction_error<R>(options: KernelOptions<R>) -> (&'static str, &'static str)
    where
        R: TickReducer,
        R::State: Clone + 'static,
    {
        let error = SessionKernel::new(options).err().expect("construction must fail");
        (error.kind(), error.code())
    }

    const TYPE: (&str, &str) = ("argument", "type");
    const RANGE: (&str, &str) = ("argument", "range");

    #[test]
    fn well_formed_options_construct() {
        let kernel = SessionKernel::new(options()).expect("valid");
        assert_eq!(kernel.window().participants, ["blue", "red"], "all seats, sorted");
        let limits = kernel.limits();
        assert_eq!(
            (limits.max_future_ticks, limits.max_catch_up_ticks, limits.receipt_retention),
            (1, 600, 64),
            "turns defaults"
        );
        assert_eq!(
            (limits.max_extension_bytes, limits.checkpoint_interval, limits.max_open_commitments_per_seat),
            (65_536, 1, 64)
        );
    }

    #[test]
    fn bad_seats_are_type_errors() {
        let seats: [&[&str]; 5] = [&[], &["red", "red"], &["red", "a b"], &[""], &["é"]];
        for seats in seats {
            let mut opts = options();
            opts.seats = seats.iter().map(|s| (*s).to_owned()).collect();
            assert_eq!(construction_error(opts), TYPE, "seats {seats:?}");
        }
        let mut opts = options();
        opts.seats = vec!["x".repeat(129)];
        assert_eq!(construction_error(opts), TYPE, "a 129-character seat id");
        let mut opts = options();
        opts.seats = vec!["x".repeat(128), "A-z_0.9:@".into()];
        assert!(SessionKernel::new(opts).is_ok(), "128 characters and every allowed symbol");
    }

    #[test]
    fn bad_identity_fields_are_type_errors() {
        let mut opts = options();
        opts.session_id = "  ".into();
        assert_eq!(construction_error(opts), TYPE);
        let mut opts = options();
        opts.level_id = String::new();
        assert_eq!(construction_error(opts), TYPE);
        let mut opts = options();
        opts.level_version = Some(Value::Bool(true));
        assert_eq!(construction_error(opts), TYPE);
        let mut opts = options();
        opts.level_version = Some(Value::from(2u32));
        assert!(SessionKernel::new(opts).is_ok(), "a numeric level version");
    }

    #[test]
    fn limits_out_of_range_are_range_errors() {
        let set = |f: fn(&mut SessionLimits, f64), v: f64| {
            let mut limits = SessionLimits::default();
            f(&mut limits, v);
            limits
        };
        type Setter = fn(&mut SessionLimits, f64);
        let fields: [(&str, Setter, f64); 6] = [
            ("maxFutureTicks", |l, v| l.max_future_ticks = Some(v), 1.0),
            ("maxCatchUpTicks", |l, v| l.max_catch_up_ticks = Some(v), 1.0),
            ("receiptRetention", |l, v| l.receipt_retention = Some(v), 0.0),
            ("maxExtensionBytes", |l, v| l.max_extension_bytes = Some(v), 1.0),
            ("checkpointInterval", |l, v| l.checkpoint_interval = Some(v), 1.0),
            ("maxOpenCommitmentsPerSeat", |l, v| l.max_open_commitments_per_seat = Some(v), 1.0),
        ];
        for (name, setter, min) in fields {
            assert!(set(setter, min).resolve(&Cadence::Turns).is_ok(), "{name} = {min} is the minimum");
            for bad in [min - 1.0, 1.5, f64::NAN, f64::INFINITY, gaos_json::MAX_SAFE_INTEGER + 2.0] {
                let error = set(setter, bad).resolve(&Cadence::Turns).expect_err(name);
                assert!(
                    matches!(error, KernelError::Argument { code: ArgumentCode::Range, .. }),
                    "{name} = {bad}: {error:?}"
                );
                assert!(error.to_string().contains(name), "the message names {name}: {error}");
                let mut opts = options();
                opts.limits = set(setter, bad);
                assert_eq!(construction_error(opts), RANGE, "{name} = {bad}");
            }
        }
    }

    #[test]
    fn the_ticks_default_future_bound_must_be_a_safe_integer() {
        let ticks = |tps| Cadence::Ticks(crate::protocol::TickRate::new(tps).expect("positive"));
        assert_eq!(SessionLimits::default().resolve(&ticks(0.5)).expect("2 x 0.5 = 1").max_future_ticks, 1);
        assert_eq!(SessionLimits::default().resolve(&ticks(30.0)).expect("60").max_future_ticks, 60);
        let error = SessionLimits::default().resolve(&ticks(0.3)).expect_err("2 x 0.3 is not an integer");
        assert_eq!(error.code(), "range");
        let explicit = SessionLimits { max_future_ticks: Some(4.0), ..SessionLimits::default() };
        assert_eq!(explicit.resolve(&ticks(0.3)).expect("explicit bound").max_future_ticks, 4);
    }

    #[test]
    fn limits_objects_reject_unknown_keys_and_non_numbers() {
        let limits = SessionLimits::from_value(&obj! { "receiptRetention" => 0u32 }.into()).expect("valid");
        assert_eq!(limits.receipt_retention, Some(0.0));
        assert!(SessionLimits::from_value(&obj! { "maxFutureTick" => 1u32 }.into()).is_err());
        assert!(SessionLimits::from_value(&obj! { "maxFutureTicks" => "1" }.into()).is_err());
        assert!(SessionLimits::from_value(&Value::from(1u32)).is_err());
    }

    #[test]
    fn ticks_cadence_needs_a_reducer_that_can_advance_empty_ticks() {
        #[derive(Clone)]
        struct Apply;
        impl ActionReducer for Apply {
            type State = ();
            fn init(&self, _level: &Value, _seed: u32) -> Result<(), GameError> {
                Ok(())
            }
            fn apply(&self, state: (), _action: &SubmittedAction) -> Result<(), GameError> {
                Ok(state)
            }
            fn view(&self, _state: &()) -> Value {
                playing()
            }
        }
        let mut opts = options_with(ActionReducerAdapter(Apply));
        opts.cadence = Cadence::Ticks(crate::protocol::TickRate::new(10.0).expect("positive"));
        assert_eq!(construction_error(opts), TYPE);
        assert!(SessionKernel::new(options_with(ActionReducerAdapter(Apply))).is_ok(), "turns is fine");
    }

    #[test]
    fn the_initial_state_and_view_are_checked() {
        let failing = options_with(Fixed { view: playing(), init_fails: true });
        assert_eq!(construction_error(failing), ("reducer", "reducer_failed"));
        const INVALID_VIEW: (&str, &str) = ("advance", "invalid_view");
        let hud = || obj! { "actionsUsed" => 0u32 };
        let cases: [(Value, (&str, &str)); 4] = [
            (obj! { "status" => "paused", "hud" => hud() }.into(), INVALID_VIEW),
            (obj! { "status" => "ended", "stars" => 1u32, "hud" => hud() }.into(), INVALID_VIEW),
            (obj! { "status" => "playing" }.into(), INVALID_VIEW),
            (obj! { "status" => "playing", "activeSeat" => "green", "hud" => hud() }.into(), TYPE),
        ];
        for (view, expected) in cases {
            let error = construction_error(options_with(Fixed { view: view.clone(), init_fails: false }));
            assert_eq!(error, expected, "initial view {view}");
        }
    }
}
