//! Session configuration: what a create request asks for, validated against
//! the game, and what is persisted to rebuild the session after a restart.

use std::sync::Arc;

use gaos_json::{Map, Value};
use gaos_kernel::protocol::is_valid_participant_id;
use gaos_kernel::{Cadence, DynReducer, Game, KernelOptions, SeedPolicy, SessionLimits};
use gaos_session::policy::SessionPolicy;

use crate::error::HostError;
use crate::run_spec::RunSpec;

/// How attach receipts are issued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReceiptMode {
    /// `previousReceiptDigest` links every receipt to the one before.
    Chained,
    /// No links: each receipt verifies alone (the reference Python client
    /// checks every receipt as a one-element chain).
    Unlinked,
}

impl ReceiptMode {
    pub fn as_str(self) -> &'static str {
        match self {
            ReceiptMode::Chained => "chained",
            ReceiptMode::Unlinked => "unlinked",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "chained" => ReceiptMode::Chained,
            "unlinked" => ReceiptMode::Unlinked,
            _ => return None,
        })
    }
}

/// Everything that defines a session, persisted as canonical JSON.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SessionConfig {
    pub session_id: String,
    pub game: String,
    pub level_id: String,
    pub level_version: Option<Value>,
    pub level: Value,
    pub seed: u32,
    pub seed_policy: SeedPolicy,
    pub seats: Vec<String>,
    /// The seat of the creator (its envelope answers the create request).
    pub creator: String,
    pub cadence: Value,
    pub limits: Option<Value>,
    /// Per-turn deadline in milliseconds (turns cadence, games with a timeout mapper).
    pub turn_ms: Option<u64>,
    /// Receipt mode when receipts are issued.
    pub receipts: Option<ReceiptMode>,
    pub policy: Value,
    pub created_at_ms: i64,
    /// Default lease duration of claims on this session (controller leases).
    pub lease_ms: Option<u64>,
    /// The SHA-256 of the game module the session was created with (none
    /// for built-in and crate games): a host refuses to rehydrate the
    /// session with a module of another digest.
    pub module_sha256: Option<String>,
    /// A multi-level run (`run_spec.rs`): then `seed` is the run seed and
    /// `level_*` name the first level.
    pub run: Option<RunSpec>,
    /// The benchmark manifest an official evaluation is bound to
    /// (`manifests.rs`), kept so finalize scores against the same bytes.
    pub manifest: Option<Value>,
    /// RFC-010 signed play: the kernel header's `seatKeys` (`signing.rs`).
    pub seat_keys: Option<Value>,
}

fn bad(message: impl Into<String>) -> HostError {
    HostError::invalid_request(message)
}

impl SessionConfig {
    pub fn to_value(&self) -> Value {
        let mut m = Map::new();
        m.insert("sessionId".into(), self.session_id.clone().into());
        m.insert("game".into(), self.game.clone().into());
        m.insert("levelId".into(), self.level_id.clone().into());
        if let Some(v) = &self.level_version {
            m.insert("levelVersion".into(), v.clone());
        }
        m.insert("level".into(), self.level.clone());
        m.insert("seed".into(), self.seed.into());
        m.insert("seedPolicy".into(), self.seed_policy.as_str().into());
        m.insert("seats".into(), Value::Array(self.seats.iter().map(Value::from).collect()));
        m.insert("creator".into(), self.creator.clone().into());
        m.insert("cadence".into(), self.cadence.clone());
        if let Some(limits) = &self.limits {
            m.insert("limits".into(), limits.clone());
        }
        if let Some(ms) = self.turn_ms {
            let mut t = Map::new();
            t.insert("turnMs".into(), ms.into());
            m.insert("timeouts".into(), Value::Object(t));
        }
        if let Some(mode) = self.receipts {
            m.insert("receipts".into(), mode.as_str().into());
        }
        m.insert("policy".into(), self.policy.clone());
        m.insert("createdAt".into(), self.created_at_ms.into());
        if let Some(ms) = self.lease_ms {
            m.insert("leaseMs".into(), ms.into());
        }
        if let Some(sha256) = &self.module_sha256 {
            m.insert("moduleSha256".into(), sha256.clone().into());
        }
        if let Some(run) = &self.run {
            m.insert("run".into(), run.to_value());
        }
        if let Some(manifest) = &self.manifest {
            m.insert("manifest".into(), manifest.clone());
        }
        if let Some(keys) = &self.seat_keys {
            m.insert("seatKeys".into(), keys.clone());
        }
        Value::Object(m)
    }

    /// Read a persisted configuration.
    pub fn from_value(value: &Value) -> Result<Self, String> {
        let text = |k: &str| value.get(k).and_then(Value::as_str).map(str::to_owned).ok_or(format!("config.{k}"));
        let seed_policy = match text("seedPolicy")?.as_str() {
            "explicit" => SeedPolicy::Explicit,
            "gaos.run-level-seed.v1" => SeedPolicy::RunLevelSeedV1,
            other => return Err(format!("config.seedPolicy {other:?}")),
        };
        Ok(SessionConfig {
            session_id: text("sessionId")?,
            game: text("game")?,
            level_id: text("levelId")?,
            level_version: value.get("levelVersion").cloned(),
            level: value.get("level").cloned().ok_or("config.level")?,
            seed: value.get("seed").and_then(Value::as_u32).ok_or("config.seed")?,
            seed_policy,
            seats: value
                .get("seats")
                .and_then(Value::as_array)
                .ok_or("config.seats")?
                .iter()
                .filter_map(|s| s.as_str().map(str::to_owned))
                .collect(),
            creator: text("creator")?,
            cadence: value.get("cadence").cloned().ok_or("config.cadence")?,
            limits: value.get("limits").cloned(),
            turn_ms: value.get("timeouts").and_then(|t| t.get("turnMs")).and_then(Value::as_u64),
            receipts: value.get("receipts").and_then(Value::as_str).and_then(ReceiptMode::parse),
            policy: value.get("policy").cloned().ok_or("config.policy")?,
            created_at_ms: value.get("createdAt").and_then(Value::as_i64).ok_or("config.createdAt")?,
            lease_ms: value.get("leaseMs").and_then(Value::as_u64),
            module_sha256: value.get("moduleSha256").and_then(Value::as_str).map(str::to_owned),
            run: value.get("run").map(RunSpec::from_value).transpose()?,
            manifest: value.get("manifest").cloned(),
            seat_keys: value.get("seatKeys").cloned(),
        })
    }

    pub fn cadence(&self) -> Result<Cadence, String> {
        Cadence::from_value(&self.cadence)
    }

    /// Kernel options for this session (of a run: its first level).
    pub fn kernel_options(&self, game: &Arc<dyn Game>) -> Result<KernelOptions<DynReducer>, String> {
        match &self.run {
            Some(_) => self.level_options(game, 0).expect("a run has a first level"),
            None => self.options_for(game, &self.level_id, self.level.clone(), self.level_version.clone(), self.seed),
        }
    }

    /// Kernel options for level `index` of a run (`None` past its last
    /// level, or for a session that is not a run).
    pub fn level_options(
        &self,
        game: &Arc<dyn Game>,
        index: usize,
    ) -> Option<Result<KernelOptions<DynReducer>, String>> {
        let level = self.run.as_ref()?.levels.get(index)?;
        let seed = RunSpec::level_seed(self.seed, index);
        Some(self.options_for(game, &level.id, level.level.clone(), level.version.clone(), seed))
    }

    fn options_for(
        &self,
        game: &Arc<dyn Game>,
        level_id: &str,
        level: Value,
        level_version: Option<Value>,
        seed: u32,
    ) -> Result<KernelOptions<DynReducer>, String> {
        let mut options = KernelOptions::builder(game, &self.session_id)
            .level(level_id, level)
            .level_version(level_version)
            .seed(seed, self.seed_policy)
            .seats(self.seats.clone())
            .cadence(self.cadence()?)
            .timeout_mapper(true)
            .signing(crate::signing::roster(self.seat_keys.as_ref())?)
            .build();
        if let Some(limits) = &self.limits {
            options.limits = SessionLimits::from_value(limits)?;
        }
        Ok(options)
    }

    pub fn policy(&self) -> SessionPolicy {
        SessionPolicy::from_value(&self.policy).unwrap_or_else(|_| SessionPolicy::host_default())
    }
}

/// Lease bounds of the host (`--lease-min-ms`, `--lease-max-ms`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeaseBounds {
    pub min_ms: u64,
    pub max_ms: u64,
    pub default_ms: u64,
}

impl Default for LeaseBounds {
    fn default() -> Self {
        LeaseBounds { min_ms: 1_000, max_ms: 300_000, default_ms: 300_000 }
    }
}

impl LeaseBounds {
    /// Bounds with the default duration clamped into them.
    pub fn new(min_ms: u64, max_ms: u64) -> Result<Self, String> {
        if min_ms == 0 || min_ms > max_ms {
            return Err(format!("lease bounds must satisfy 0 < min ({min_ms}) <= max ({max_ms})"));
        }
        Ok(LeaseBounds { min_ms, max_ms, default_ms: 300_000u64.clamp(min_ms, max_ms) })
    }

    /// A requested duration, refused outside the bounds.
    pub fn check(&self, ms: u64) -> Result<u64, String> {
        if ms < self.min_ms || ms > self.max_ms {
            return Err(format!(
                "lease.durationMs must be between {} and {} (this host's --lease-min-ms / --lease-max-ms)",
                self.min_ms, self.max_ms
            ));
        }
        Ok(ms)
    }
}

/// The duration a create/attach `lease` field asks for: `None` when absent
/// or `{}` (the host default), the checked `durationMs` otherwise.
pub(crate) fn requested_lease_ms(lease: Option<&Value>, bounds: &LeaseBounds) -> Result<Option<u64>, String> {
    let Some(lease) = lease else { return Ok(None) };
    let map = lease.as_object().ok_or("lease must be an object like {\"durationMs\": N}")?;
    if let Some(key) = map.keys().find(|k| k.as_str() != "durationMs") {
        return Err(format!("unknown lease field {key:?} (known: durationMs)"));
    }
    match map.get("durationMs") {
        None => Ok(None),
        Some(v) => {
            let ms = v.as_u64().ok_or("lease.durationMs must be a non-negative integer")?;
            bounds.check(ms).map(Some)
        }
    }
}

/// Parse and validate a create request body against the game registry.
pub(crate) fn parse_create(
    body: &Value,
    game: &Arc<dyn Game>,
    session_id: String,
    generated_seed: u32,
    now_ms: i64,
    bounds: &LeaseBounds,
) -> Result<SessionConfig, HostError> {
    let map = body.as_object().ok_or_else(|| bad("the create body must be a JSON object"))?;
    const KNOWN: [&str; 19] = [
        "game",
        "requestId",
        "sessionId",
        "levelId",
        "levelVersion",
        "level",
        "seats",
        "participantId",
        "seed",
        "cadence",
        "timeouts",
        "receipts",
        "policy",
        "limits",
        "lease",
        "run",
        "manifest",
        "seatKeys",
        "signaturePolicy",
    ];
    if let Some(key) = map.keys().find(|k| !KNOWN.contains(&k.as_str())) {
        return Err(bad(format!("unknown create field {key:?} (known: {})", KNOWN.join(", "))));
    }
    let run = match map.get("run") {
        None => None,
        Some(_) if map.contains_key("levelId") || map.contains_key("level") => {
            return Err(bad("a create names its levels either in run.levels or in levelId/level, not both"));
        }
        Some(v) => Some(RunSpec::parse_request(v, game.as_ref()).map_err(bad)?),
    };
    let levels = game.levels();
    let first = run.as_ref().map(|r| r.levels[0].clone());
    let (level_id, level_version, level) = match (map.get("levelId"), map.get("level")) {
        _ if first.is_some() => {
            let first = first.expect("checked");
            (first.id, first.version, first.level)
        }
        (Some(id), Some(level)) => {
            let id = id.as_str().filter(|s| !s.is_empty()).ok_or_else(|| bad("levelId must be a non-empty string"))?;
            (id.to_owned(), map.get("levelVersion").cloned(), level.clone())
        }
        (None, Some(level)) => ("custom".to_owned(), map.get("levelVersion").cloned(), level.clone()),
        (Some(id), None) => {
            let id = id.as_str().ok_or_else(|| bad("levelId must be a string"))?;
            let spec = levels.iter().find(|l| l.id == id).ok_or_else(|| {
                let known: Vec<&str> = levels.iter().map(|l| l.id.as_str()).collect();
                bad(format!("game {} has no level {id:?} (levels: {})", game.game_ref().id, known.join(", ")))
            })?;
            (spec.id.clone(), spec.version.clone(), spec.level.clone())
        }
        (None, None) => {
            let spec = levels.first().ok_or_else(|| bad("the game ships no default level; pass level"))?;
            (spec.id.clone(), spec.version.clone(), spec.level.clone())
        }
    };
    if let Some(v) = &level_version
        && !matches!(v, Value::String(_) | Value::Number(_))
    {
        return Err(bad("levelVersion must be a string or a number"));
    }
    let seats: Vec<String> = match map.get("seats") {
        None => game.seats(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|s| s.as_str().map(str::to_owned).ok_or_else(|| bad("seats must be strings")))
            .collect::<Result<_, _>>()?,
        Some(_) => return Err(bad("seats must be an array of seat ids")),
    };
    if seats.is_empty() {
        return Err(bad("a session needs at least one seat"));
    }
    for (i, seat) in seats.iter().enumerate() {
        if !is_valid_participant_id(seat) {
            return Err(bad(format!("seat id {seat:?} must match ^[A-Za-z0-9_.:@-]{{1,128}}$")));
        }
        if seats[..i].contains(seat) {
            return Err(bad(format!("seat {seat:?} is declared twice")));
        }
    }
    let creator = match map.get("participantId") {
        None => seats[0].clone(),
        Some(Value::String(s)) if seats.contains(s) => s.clone(),
        Some(_) => return Err(bad(format!("participantId must be one of the seats ({})", seats.join(", ")))),
    };
    let seed = match map.get("seed") {
        None => generated_seed,
        Some(v) => v.as_u32().ok_or_else(|| bad("seed must be an integer in 0..=4294967295"))?,
    };
    let cadence = match map.get("cadence") {
        // A request that names no cadence gets the one the game offers.
        None => gaos_json::to_value(&game.cadence().header())
            .map_err(|e| HostError::internal(format!("the game's default cadence is not JSON: {e}")))?,
        Some(v) => {
            Cadence::from_value(v).map_err(bad)?;
            v.clone()
        }
    };
    let limits = match map.get("limits") {
        None => None,
        Some(v) => {
            SessionLimits::from_value(v).map_err(bad)?;
            Some(v.clone())
        }
    };
    let turn_ms = match map.get("timeouts") {
        None => None,
        Some(t) => {
            let t = t.as_object().ok_or_else(|| bad("timeouts must be an object like {\"turnMs\": 30000}"))?;
            if let Some(key) = t.keys().find(|k| k.as_str() != "turnMs") {
                return Err(bad(format!("unknown timeouts field {key:?} (known: turnMs)")));
            }
            let ms = t
                .get("turnMs")
                .and_then(Value::as_u64)
                .filter(|ms| (100..=86_400_000).contains(ms))
                .ok_or_else(|| bad("timeouts.turnMs must be an integer between 100 and 86400000"))?;
            if !game.has_timeout_mapper() {
                return Err(bad(format!(
                    "game {} has no timeout mapper, so the host cannot play for a seat whose turn times out",
                    game.game_ref().id
                )));
            }
            if Cadence::from_value(&cadence).map_err(bad)? != Cadence::Turns {
                return Err(bad("timeouts.turnMs applies to turns cadence; ticks sessions advance on their own"));
            }
            Some(ms)
        }
    };
    let receipts = match map.get("receipts") {
        None => None,
        Some(v) => Some(
            v.as_str()
                .and_then(ReceiptMode::parse)
                .ok_or_else(|| bad("receipts must be \"chained\" or \"unlinked\""))?,
        ),
    };
    let policy = match map.get("policy") {
        None => SessionPolicy::host_default(),
        Some(v) => SessionPolicy::from_value(v).map_err(bad)?,
    };
    let lease_ms = requested_lease_ms(map.get("lease"), bounds).map_err(bad)?;
    let seat_keys = crate::signing::parse_create_signing(map, &seats, run.is_some())?;
    Ok(SessionConfig {
        session_id,
        game: game.game_ref().id,
        level_id,
        level_version,
        level,
        seed,
        seed_policy: SeedPolicy::Explicit,
        seats,
        creator,
        cadence,
        limits,
        turn_ms,
        receipts,
        policy: policy.value().clone(),
        created_at_ms: now_ms,
        lease_ms,
        module_sha256: None,
        run,
        manifest: None,
        seat_keys,
    })
}
