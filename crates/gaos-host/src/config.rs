//! Session configuration: what a create request asks for, validated against
//! the game, and what is persisted to rebuild the session after a restart.

use std::sync::Arc;

use gaos_json::{Map, Value};
use gaos_kernel::signing::{Roster, SeatKey};
use gaos_kernel::{Cadence, DynReducer, Game, KernelOptions, SeedPolicy, SessionLimits};
use gaos_session::policy::SessionPolicy;
use serde::{Deserialize, Serialize};

use crate::run_spec::RunSpec;

/// How attach receipts are issued.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ReceiptMode {
    /// `previousReceiptDigest` links every receipt to the one before.
    Chained,
    /// No links: each receipt verifies alone (the reference Python client
    /// checks every receipt as a one-element chain).
    Unlinked,
}

impl ReceiptMode {
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "chained" => ReceiptMode::Chained,
            "unlinked" => ReceiptMode::Unlinked,
            _ => return None,
        })
    }
}

/// The turn timeout of a session (`timeouts` of the create request).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Timeouts {
    /// Per-turn deadline in milliseconds (turns cadence, games with a timeout mapper).
    pub turn_ms: u64,
}

/// Everything that defines a session, persisted as canonical JSON (the
/// `config` column). Every field is typed: a stored configuration that does
/// not read back is a failed load (`rehydrate_failed`), never a default.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SessionConfig {
    pub session_id: String,
    pub game: String,
    pub level_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level_version: Option<Value>,
    pub level: Value,
    pub seed: u32,
    pub seed_policy: SeedPolicy,
    pub seats: Vec<String>,
    /// The seat of the creator (its envelope answers the create request).
    pub creator: String,
    #[serde(with = "stored")]
    pub cadence: Cadence,
    #[serde(default, skip_serializing_if = "Option::is_none", with = "stored_opt")]
    pub limits: Option<SessionLimits>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeouts: Option<Timeouts>,
    /// Receipt mode when receipts are issued.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receipts: Option<ReceiptMode>,
    #[serde(with = "stored")]
    pub policy: SessionPolicy,
    #[serde(rename = "createdAt")]
    pub created_at_ms: i64,
    /// Default lease duration of claims on this session (controller leases).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_ms: Option<u64>,
    /// The SHA-256 of the game module the session was created with (none
    /// for built-in and crate games): a host refuses to rehydrate the
    /// session with a module of another digest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub module_sha256: Option<String>,
    /// A multi-level run (`run_spec.rs`): then `seed` is the run seed and
    /// `level_*` name the first level.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "stored_opt")]
    pub run: Option<RunSpec>,
    /// The benchmark manifest an official evaluation is bound to
    /// (`manifests.rs`), kept so finalize scores against the same bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manifest: Option<Value>,
    /// RFC-010 signed play: the keys the create fixed, in the kernel
    /// header's `seatKeys` shape (`signing.rs`); every seat's unless some
    /// register theirs at attach.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "stored_opt")]
    pub seat_keys: Option<Roster>,
    /// The seats of a signed session that register their key at attach
    /// (`seatKeysAtAttach`); the session takes no move before they all have.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub seat_keys_at_attach: Vec<String>,
    /// The tick-bounded `timeoutPolicy` of a signed session (kernel spec §4.10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_policy: Option<Value>,
    /// Keys registered at attach so far: never part of the stored
    /// configuration (written at create, never rewritten) but the session
    /// state `seatKeys`, folded in when the session loads.
    #[serde(skip)]
    pub registered_keys: Vec<SeatKey>,
}

/// A type stored in the configuration through its own JSON reading and
/// writing (the kernel's and the contract's types keep their checks in one
/// place: a stored value is read by the same code a request is).
pub(crate) trait StoredAs: Sized {
    fn to_stored(&self) -> Value;
    fn from_stored(value: &Value) -> Result<Self, String>;
}

impl StoredAs for Cadence {
    fn to_stored(&self) -> Value {
        gaos_json::to_value(&self.header()).expect("a cadence header is JSON")
    }
    fn from_stored(value: &Value) -> Result<Self, String> {
        Cadence::from_value(value)
    }
}

impl StoredAs for SessionLimits {
    fn to_stored(&self) -> Value {
        let mut m = Map::new();
        for (key, limit) in [
            ("maxFutureTicks", self.max_future_ticks),
            ("maxCatchUpTicks", self.max_catch_up_ticks),
            ("receiptRetention", self.receipt_retention),
            ("maxExtensionBytes", self.max_extension_bytes),
            ("checkpointInterval", self.checkpoint_interval),
            ("maxOpenCommitmentsPerSeat", self.max_open_commitments_per_seat),
        ] {
            if let Some(limit) = limit {
                m.insert(key.into(), Value::Number(limit));
            }
        }
        Value::Object(m)
    }
    fn from_stored(value: &Value) -> Result<Self, String> {
        SessionLimits::from_value(value)
    }
}

impl StoredAs for SessionPolicy {
    fn to_stored(&self) -> Value {
        self.value().clone()
    }
    fn from_stored(value: &Value) -> Result<Self, String> {
        SessionPolicy::from_value(value)
    }
}

impl StoredAs for Roster {
    fn to_stored(&self) -> Value {
        self.to_value()
    }
    fn from_stored(value: &Value) -> Result<Self, String> {
        Roster::from_value(value)
    }
}

impl StoredAs for RunSpec {
    fn to_stored(&self) -> Value {
        self.to_value()
    }
    fn from_stored(value: &Value) -> Result<Self, String> {
        RunSpec::from_value(value)
    }
}

/// `#[serde(with = "stored")]` for a [`StoredAs`] field.
mod stored {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::{StoredAs, Value};

    pub fn serialize<T: StoredAs, S: Serializer>(value: &T, serializer: S) -> Result<S::Ok, S::Error> {
        value.to_stored().serialize(serializer)
    }

    pub fn deserialize<'de, T: StoredAs, D: Deserializer<'de>>(deserializer: D) -> Result<T, D::Error> {
        T::from_stored(&Value::deserialize(deserializer)?).map_err(serde::de::Error::custom)
    }
}

/// `#[serde(with = "stored_opt")]` for an optional [`StoredAs`] field.
mod stored_opt {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::{StoredAs, Value};

    pub fn serialize<T: StoredAs, S: Serializer>(value: &Option<T>, serializer: S) -> Result<S::Ok, S::Error> {
        value.as_ref().map(T::to_stored).serialize(serializer)
    }

    pub fn deserialize<'de, T: StoredAs, D: Deserializer<'de>>(deserializer: D) -> Result<Option<T>, D::Error> {
        Option::<Value>::deserialize(deserializer)?
            .map(|value| T::from_stored(&value).map_err(serde::de::Error::custom))
            .transpose()
    }
}

impl SessionConfig {
    /// The configuration as stored (canonical JSON of this value).
    pub fn to_value(&self) -> Value {
        gaos_json::to_value(self).expect("a session configuration is JSON")
    }

    /// Read a stored configuration; any field that does not read is an
    /// error naming it.
    pub fn from_value(value: &Value) -> Result<Self, String> {
        gaos_json::from_value(value.clone()).map_err(|e| format!("the stored session configuration does not read: {e}"))
    }

    /// The per-turn deadline, if the session has one.
    pub fn turn_ms(&self) -> Option<u64> {
        self.timeouts.map(|t| t.turn_ms)
    }

    /// Whether the session is RFC-010 signed (its keys all known or not).
    pub fn is_signed(&self) -> bool {
        self.seat_keys.is_some() || !self.seat_keys_at_attach.is_empty()
    }

    /// The key `seat` signs with, once fixed (at create or by its attach).
    pub fn seat_key(&self, seat: &str) -> Option<&SeatKey> {
        self.seat_keys.as_ref().and_then(|r| r.key(seat)).or_else(|| self.registered_keys.iter().find(|k| k.id == seat))
    }

    /// Whether a signed session still waits for a seat's key.
    pub fn awaits_seat_keys(&self) -> bool {
        self.seat_keys_at_attach.iter().any(|seat| self.seat_key(seat).is_none())
    }

    /// The seats whose key a signed session still waits for, in declared order.
    pub fn awaiting_seat_keys(&self) -> Vec<String> {
        let seats = self.seats.iter().filter(|s| self.seat_keys_at_attach.contains(s));
        seats.filter(|seat| self.seat_key(seat).is_none()).cloned().collect()
    }

    /// The signed session's roster once every key is known: the create's
    /// keys in its order, then the registered ones in declared seat order
    /// (a function of the configuration and the registered set, not of the
    /// order the seats attached in).
    pub fn roster(&self) -> Option<Roster> {
        if !self.is_signed() || !self.awaiting_seat_keys().is_empty() {
            return None;
        }
        let mut keys: Vec<SeatKey> = self.seat_keys.as_ref().map(|r| r.keys().to_vec()).unwrap_or_default();
        for seat in self.seats.iter().filter(|s| self.seat_keys_at_attach.contains(s)) {
            keys.extend(self.registered_keys.iter().find(|k| &k.id == seat).cloned());
        }
        Some(Roster::new(keys).expect("a complete roster names each seat once"))
    }

    /// Kernel options for this session (of a run: its first level).
    pub fn kernel_options(&self, game: &Arc<dyn Game>) -> KernelOptions<DynReducer> {
        match &self.run {
            Some(_) => self.level_options(game, 0).expect("a run has a first level"),
            None => self.options_for(game, &self.level_id, self.level.clone(), self.level_version.clone(), self.seed),
        }
    }

    /// Kernel options for level `index` of a run (`None` past its last
    /// level, or for a session that is not a run).
    pub fn level_options(&self, game: &Arc<dyn Game>, index: usize) -> Option<KernelOptions<DynReducer>> {
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
    ) -> KernelOptions<DynReducer> {
        let roster = self.roster();
        let mut options = KernelOptions::builder(game, &self.session_id)
            .level(level_id, level)
            .level_version(level_version)
            .seed(seed, self.seed_policy)
            .seats(self.seats.clone())
            .cadence(self.cadence)
            .timeout_mapper(true)
            .signing(roster.clone())
            // Recorded (and enforced) once the session is signed: until its
            // roster is complete it takes no move (`actor/seat_keys.rs`).
            .timeout_policy(roster.and(self.timeout_policy.clone()))
            .build();
        if let Some(limits) = self.limits {
            options.limits = limits;
        }
        options
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
