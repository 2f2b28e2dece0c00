//! `gaos.arena-manifest.v1`: what a tournament plays (docs/arena.md).
//!
//! ```json
//! {"schema": "gaos.arena-manifest.v1",
//!  "arena": {"id": "duel-ladder", "version": "1.0.0", "adapter": "./duel.mjs"},
//!  "levels": [{"id": "standard", "seeds": [1, 2, 3]}],
//!  "entrants": [{"id": "random", "driver": "random"},
//!               {"id": "mine", "driver": "process", "command": ["python3", "bot.py"],
//!                "seatKey": "keys/mine.json"}],
//!  "schedule": {"kind": "round-robin", "rotateSeats": true},
//!  "illegalMoves": {"retries": 1, "then": "forfeit"},
//!  "maxSteps": 100,
//!  "rating": {"kind": "bradley-terry", "bootstrap": 200, "seed": 7}}
//! ```
//!
//! Validation is strict, like the benchmark manifest's: an unknown field, a
//! duplicate id or a value out of range is refused with the field's path,
//! so a typo never silently changes what a tournament means. Optional
//! sections take the defaults documented on each type.

use gaos_json::{Map, Value, canonical_sha256_hex};

use crate::arena::error::ArenaError;
use crate::drivers::DriverSpec;

/// The manifest schema id.
pub const ARENA_MANIFEST_SCHEMA: &str = "gaos.arena-manifest.v1";

/// Most entrants a tournament may have.
pub const MAX_ENTRANTS: usize = 256;

/// The longest an agent process may be given per decision (`deadlineMs`).
pub const MAX_DEADLINE_MS: u64 = 3_600_000;

/// Most bootstrap replicates (`rating.bootstrap`).
pub const MAX_BOOTSTRAP: u64 = 100_000;

/// Most re-asks per decision (`illegalMoves.retries`).
pub const MAX_RETRIES: u64 = 100;

/// `arena`: `{id, version, adapter, description?}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArenaIdentity {
    /// Tournament id.
    pub id: String,
    /// Tournament version.
    pub version: String,
    /// A game id, or a game module path relative to the manifest (`./duel.mjs`).
    pub adapter: String,
}

/// One `levels` entry: a level of the game and the seeds it is played with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArenaLevel {
    /// The game's level id.
    pub id: String,
    /// Session seeds, as authored (unique, each a u32).
    pub seeds: Vec<u32>,
}

/// One `entrants` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Entrant {
    /// The entrant id (`[A-Za-z0-9_.-]`, at most 64 characters).
    pub id: String,
    /// What plays for it: `random`, `random:SEED`, `first-legal`,
    /// `scripted:FILE` (relative to the manifest), `openai`, `openai:MODEL`,
    /// or `process` with `command`.
    pub driver: DriverSpec,
    /// `deadlineMs` of a `process` entrant (default 10 000).
    pub deadline_ms: u64,
    /// `seatKey`: a key file (`gaos keygen`'s format) relative to the
    /// manifest. Every match of this entrant is then a signed session
    /// (RFC-010) in which its moves are signed with this key.
    pub seat_key: Option<String>,
}

/// `schedule.kind`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScheduleKind {
    /// Every combination of entrants that fills the game's seats.
    RoundRobin,
    /// Every other entrant against the `baseline` entrant (which fills the
    /// remaining seats of a game of more than two).
    Gauntlet {
        /// The baseline entrant's id.
        baseline: String,
    },
}

/// `schedule`: `{kind, rotateSeats?, baseline?}` (default: round robin,
/// seats rotated).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    /// Round robin or gauntlet.
    pub kind: ScheduleKind,
    /// Play every line-up in every seat order (default true).
    pub rotate_seats: bool,
}

/// `illegalMoves.then`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AfterRetries {
    /// The seat loses the match (its remaining moves are played for it so
    /// the game, and its replay, reach the end).
    Forfeit,
    /// A random legal move is played for the seat this once.
    Random,
}

impl AfterRetries {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            AfterRetries::Forfeit => "forfeit",
            AfterRetries::Random => "random",
        }
    }
}

/// `illegalMoves`: `{retries?, then?}` (default: 1 re-ask, then forfeit).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct IllegalMoves {
    /// Re-asks of one decision after a refused or unreadable move.
    pub retries: u32,
    /// What happens when they are used up.
    pub then: AfterRetries,
}

/// `rating`: `{kind?, bootstrap?, seed?, prior?}` (default: Bradley–Terry,
/// 200 replicates, seed 0, one virtual game).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RatingSettings {
    /// Bootstrap replicates for the 95 % intervals (≥ 1).
    pub bootstrap: u32,
    /// The bootstrap's mulberry32 seed.
    pub seed: u32,
    /// Virtual games each entrant plays, all drawn and spread evenly over
    /// the other entrants (> 0), so every rating is finite.
    pub prior: f64,
}

/// A validated manifest. The JSON it was read from is kept: it is what the
/// digest covers and what a bundle's `manifest.json` holds.
#[derive(Debug, Clone, PartialEq)]
pub struct ArenaManifest {
    /// `arena`.
    pub arena: ArenaIdentity,
    /// `levels`, in authored order.
    pub levels: Vec<ArenaLevel>,
    /// `entrants`, in authored order.
    pub entrants: Vec<Entrant>,
    /// `schedule`.
    pub schedule: Schedule,
    /// `illegalMoves`.
    pub illegal_moves: IllegalMoves,
    /// `maxSteps`: the most decisions one seat makes in a match (default 1000).
    pub max_steps: u64,
    /// `rating`.
    pub rating: RatingSettings,
    value: Value,
}

/// An object being read at `path`: every lookup names its field on failure.
struct Fields<'a> {
    map: &'a Map,
    path: String,
}

impl<'a> Fields<'a> {
    /// `value` as an object with only the `known` keys.
    fn of(value: &'a Value, path: &str, known: &[&str]) -> Result<Self, ArenaError> {
        let Some(map) = value.as_object() else {
            let at = if path.is_empty() { "the manifest" } else { path };
            return Err(ArenaError::Manifest(format!("{at}: must be an object, not {}", value.type_name())));
        };
        let fields = Fields { map, path: path.to_owned() };
        if let Some(key) = map.keys().find(|k| !known.contains(&k.as_str())) {
            return Err(fields.bad(key, format!("unknown field (known: {})", known.join(", "))));
        }
        Ok(fields)
    }

    fn at(&self, key: &str) -> String {
        if self.path.is_empty() { key.to_owned() } else { format!("{}.{key}", self.path) }
    }

    fn bad(&self, key: &str, why: impl std::fmt::Display) -> ArenaError {
        ArenaError::Manifest(format!("{}: {why}", self.at(key)))
    }

    fn required(&self, key: &str) -> Result<&'a Value, ArenaError> {
        self.map.get(key).ok_or_else(|| self.bad(key, "is required"))
    }

    fn text(&self, key: &str) -> Result<String, ArenaError> {
        match self.required(key)? {
            Value::String(s) if !s.trim().is_empty() => Ok(s.clone()),
            other => Err(self.bad(key, format!("must be a non-empty string, found {other}"))),
        }
    }

    /// An optional integer in `min..=max`.
    fn integer(&self, key: &str, min: u64, max: u64) -> Result<Option<u64>, ArenaError> {
        let Some(value) = self.map.get(key) else { return Ok(None) };
        match value.as_u64().filter(|n| (min..=max).contains(n) && value.as_f64().is_some_and(|f| f.fract() == 0.0)) {
            Some(n) => Ok(Some(n)),
            None => Err(self.bad(key, format!("must be an integer in {min}..={max}, found {value}"))),
        }
    }

    fn flag(&self, key: &str) -> Result<Option<bool>, ArenaError> {
        match self.map.get(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(other) => Err(self.bad(key, format!("must be true or false, found {other}"))),
        }
    }

    fn list(&self, key: &str) -> Result<&'a [Value], ArenaError> {
        match self.required(key)? {
            Value::Array(items) if !items.is_empty() => Ok(items),
            Value::Array(_) => Err(self.bad(key, "must not be empty")),
            other => Err(self.bad(key, format!("must be an array, found {}", other.type_name()))),
        }
    }
}

/// An id usable in match ids and file names: 1–64 of `[A-Za-z0-9_.-]`.
fn plain_id(id: &str) -> bool {
    (1..=64).contains(&id.len())
        && !id.starts_with('.')
        && id.chars().all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c))
}

fn level(value: &Value, path: &str) -> Result<ArenaLevel, ArenaError> {
    let fields = Fields::of(value, path, &["id", "seeds"])?;
    let id = fields.text("id")?;
    let mut seeds: Vec<u32> = Vec::new();
    for (i, item) in fields.list("seeds")?.iter().enumerate() {
        let at = format!("seeds[{i}]");
        let seed = item
            .as_u32()
            .ok_or_else(|| fields.bad(&at, format!("must be an integer in 0..=4294967295, found {item}")))?;
        if seeds.contains(&seed) {
            return Err(fields.bad(&at, format!("seed {seed} appears twice in level {id:?}")));
        }
        seeds.push(seed);
    }
    Ok(ArenaLevel { id, seeds })
}

fn entrant(value: &Value, path: &str) -> Result<Entrant, ArenaError> {
    let fields = Fields::of(value, path, &["id", "driver", "command", "deadlineMs", "seatKey", "description"])?;
    let id = fields.text("id")?;
    if !plain_id(&id) {
        return Err(fields.bad("id", format!("{id:?} must be 1 to 64 of A-Z a-z 0-9 _ . - (it names files)")));
    }
    if fields.map.contains_key("description") {
        fields.text("description")?;
    }
    let text = fields.text("driver")?;
    let is_process = text == "process";
    let driver = if is_process {
        let items = fields.list("command")?;
        let command = items
            .iter()
            .enumerate()
            .map(|(i, item)| match item {
                Value::String(s) if !s.is_empty() => Ok(s.clone()),
                other => {
                    Err(fields.bad(&format!("command[{i}]"), format!("must be a non-empty string, found {other}")))
                }
            })
            .collect::<Result<Vec<_>, _>>()?;
        DriverSpec::Process { command }
    } else {
        match text.parse::<DriverSpec>() {
            Ok(DriverSpec::Human) => {
                return Err(fields.bad("driver", "human plays one match at a time: use `gaos play --driver human`"));
            }
            Ok(DriverSpec::Process { .. }) => {
                return Err(fields.bad(
                    "driver",
                    "write a process entrant as \"driver\": \"process\" with \"command\": [\"python3\", \"bot.py\"]",
                ));
            }
            Ok(spec) => spec,
            Err(e) => return Err(fields.bad("driver", e.replace("process:COMMAND", "process (with command)"))),
        }
    };
    for key in ["command", "deadlineMs"] {
        if !is_process && fields.map.contains_key(key) {
            return Err(fields.bad(key, format!("is only for \"driver\": \"process\", not {text:?}")));
        }
    }
    let deadline_ms = fields.integer("deadlineMs", 1, MAX_DEADLINE_MS)?.unwrap_or(10_000);
    let seat_key = fields.map.contains_key("seatKey").then(|| fields.text("seatKey")).transpose()?;
    Ok(Entrant { id, driver, deadline_ms, seat_key })
}

fn schedule(map: &Map, entrants: &[Entrant]) -> Result<Schedule, ArenaError> {
    let Some(value) = map.get("schedule") else {
        return Ok(Schedule { kind: ScheduleKind::RoundRobin, rotate_seats: true });
    };
    let fields = Fields::of(value, "schedule", &["kind", "rotateSeats", "baseline"])?;
    let rotate_seats = fields.flag("rotateSeats")?.unwrap_or(true);
    let kind = match fields.text("kind")?.as_str() {
        "round-robin" => {
            if fields.map.contains_key("baseline") {
                return Err(fields.bad("baseline", "is only for a gauntlet"));
            }
            ScheduleKind::RoundRobin
        }
        "gauntlet" => {
            let baseline = fields.text("baseline")?;
            if !entrants.iter().any(|e| e.id == baseline) {
                let ids: Vec<&str> = entrants.iter().map(|e| e.id.as_str()).collect();
                return Err(fields.bad("baseline", format!("{baseline:?} is not an entrant ({})", ids.join(", "))));
            }
            ScheduleKind::Gauntlet { baseline }
        }
        other => return Err(fields.bad("kind", format!("must be round-robin or gauntlet, found {other:?}"))),
    };
    Ok(Schedule { kind, rotate_seats })
}

fn illegal_moves(map: &Map) -> Result<IllegalMoves, ArenaError> {
    let Some(value) = map.get("illegalMoves") else {
        return Ok(IllegalMoves { retries: 1, then: AfterRetries::Forfeit });
    };
    let fields = Fields::of(value, "illegalMoves", &["retries", "then"])?;
    let retries = fields.integer("retries", 0, MAX_RETRIES)?.unwrap_or(1) as u32;
    let then = match fields.map.get("then") {
        None => AfterRetries::Forfeit,
        Some(_) => match fields.text("then")?.as_str() {
            "forfeit" => AfterRetries::Forfeit,
            "random" => AfterRetries::Random,
            other => return Err(fields.bad("then", format!("must be forfeit or random, found {other:?}"))),
        },
    };
    Ok(IllegalMoves { retries, then })
}

fn rating(map: &Map) -> Result<RatingSettings, ArenaError> {
    let defaults = RatingSettings { bootstrap: 200, seed: 0, prior: 1.0 };
    let Some(value) = map.get("rating") else { return Ok(defaults) };
    let fields = Fields::of(value, "rating", &["kind", "bootstrap", "seed", "prior"])?;
    if fields.map.contains_key("kind") && fields.text("kind")? != "bradley-terry" {
        return Err(fields.bad("kind", "must be bradley-terry (the only rating method)"));
    }
    let prior = match fields.map.get("prior") {
        None => defaults.prior,
        Some(Value::Number(p)) if *p > 0.0 && *p <= 1000.0 => *p,
        Some(other) => return Err(fields.bad("prior", format!("must be a number in (0, 1000], found {other}"))),
    };
    Ok(RatingSettings {
        bootstrap: fields.integer("bootstrap", 1, MAX_BOOTSTRAP)?.map_or(defaults.bootstrap, |n| n as u32),
        seed: fields.integer("seed", 0, u64::from(u32::MAX))?.map_or(defaults.seed, |n| n as u32),
        prior,
    })
}

impl ArenaManifest {
    /// Read and validate a manifest (see the module docs for the shape and
    /// the defaults). Whether it fits its game (seats, levels) is checked
    /// when the matches are planned.
    pub fn from_value(value: &Value) -> Result<Self, ArenaError> {
        let known = ["schema", "arena", "levels", "entrants", "schedule", "illegalMoves", "maxSteps", "rating"];
        let fields = Fields::of(value, "", &known)?;
        match fields.map.get("schema") {
            Some(Value::String(s)) if s == ARENA_MANIFEST_SCHEMA => {}
            Some(other) => {
                return Err(fields.bad("schema", format!("must be {ARENA_MANIFEST_SCHEMA:?}, found {other}")));
            }
            None => return Err(fields.bad("schema", format!("is required ({ARENA_MANIFEST_SCHEMA:?})"))),
        }
        let identity = Fields::of(fields.required("arena")?, "arena", &["id", "version", "adapter", "description"])?;
        if identity.map.contains_key("description") {
            identity.text("description")?;
        }
        let arena = ArenaIdentity {
            id: identity.text("id")?,
            version: identity.text("version")?,
            adapter: identity.text("adapter")?,
        };
        let mut levels: Vec<ArenaLevel> = Vec::new();
        for (i, item) in fields.list("levels")?.iter().enumerate() {
            let level = level(item, &format!("levels[{i}]"))?;
            if levels.iter().any(|l| l.id == level.id) {
                return Err(ArenaError::Manifest(format!("levels[{i}].id: level {:?} appears twice", level.id)));
            }
            levels.push(level);
        }
        let items = fields.list("entrants")?;
        if items.len() < 2 || items.len() > MAX_ENTRANTS {
            return Err(
                fields.bad("entrants", format!("must hold 2 to {MAX_ENTRANTS} entrants, found {}", items.len()))
            );
        }
        let mut entrants: Vec<Entrant> = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let entrant = entrant(item, &format!("entrants[{i}]"))?;
            if entrants.iter().any(|e| e.id == entrant.id) {
                return Err(ArenaError::Manifest(format!("entrants[{i}].id: entrant {:?} appears twice", entrant.id)));
            }
            entrants.push(entrant);
        }
        Ok(ArenaManifest {
            arena,
            levels,
            schedule: schedule(fields.map, &entrants)?,
            entrants,
            illegal_moves: illegal_moves(fields.map)?,
            max_steps: fields.integer("maxSteps", 1, 1_000_000)?.unwrap_or(1000),
            rating: rating(fields.map)?,
            value: value.clone(),
        })
    }

    /// Parse and validate manifest text.
    pub fn parse(text: &str) -> Result<Self, ArenaError> {
        let value = gaos_json::parse(text).map_err(|e| ArenaError::Manifest(format!("not JSON: {e}")))?;
        Self::from_value(&value)
    }

    /// The manifest as JSON (exactly what was read).
    pub fn value(&self) -> &Value {
        &self.value
    }

    /// `sha256hex(canonicalJson(manifest))`.
    pub fn digest(&self) -> String {
        canonical_sha256_hex(&self.value)
    }

    /// The entrant with id `id`.
    pub fn entrant(&self, id: &str) -> Option<&Entrant> {
        self.entrants.iter().find(|e| e.id == id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = r#"{"schema":"gaos.arena-manifest.v1","arena":{"id":"a","version":"1","adapter":"conformance/hilo"},
        "levels":[{"id":"default","seeds":[1]}],"entrants":[{"id":"r","driver":"random"},{"id":"f","driver":"first-legal"}]}"#;

    #[test]
    fn omitted_sections_take_their_documented_defaults() {
        let manifest = ArenaManifest::parse(MINIMAL).expect("valid");
        assert_eq!(manifest.schedule, Schedule { kind: ScheduleKind::RoundRobin, rotate_seats: true });
        assert_eq!(manifest.illegal_moves, IllegalMoves { retries: 1, then: AfterRetries::Forfeit });
        assert_eq!(manifest.max_steps, 1000);
        assert_eq!(manifest.rating, RatingSettings { bootstrap: 200, seed: 0, prior: 1.0 });
        assert_eq!(manifest.entrants[0].driver, DriverSpec::Random { seed: None });
        let models = MINIMAL.replace(r#""driver":"first-legal""#, r#""driver":"openai:gpt-4o-mini""#);
        let manifest = ArenaManifest::parse(&models).expect("a model entrant");
        assert_eq!(manifest.entrants[1].driver, DriverSpec::OpenAi { model: Some("gpt-4o-mini".into()) });
        let process = MINIMAL.replace(
            r#""driver":"first-legal""#,
            r#""driver":"process","command":["python3","bot.py"],"deadlineMs":250"#,
        );
        let manifest = ArenaManifest::parse(&process).expect("a process entrant");
        assert_eq!(
            manifest.entrants[1].driver,
            DriverSpec::Process { command: vec!["python3".into(), "bot.py".into()] }
        );
        assert_eq!(manifest.entrants[1].deadline_ms, 250);
        assert_eq!(manifest.entrants[1].seat_key, None);
        let keyed = MINIMAL.replace(r#""driver":"first-legal""#, r#""driver":"first-legal","seatKey":"keys/f.json""#);
        let manifest = ArenaManifest::parse(&keyed).expect("a keyed entrant");
        assert_eq!(manifest.entrants[1].seat_key.as_deref(), Some("keys/f.json"));
    }

    #[test]
    fn every_refusal_names_its_field() {
        let cases = [
            (r#""maxSteps":0"#, "maxSteps"),
            (r#""extra":1"#, "extra: unknown field"),
            (r#""schedule":{"kind":"swiss"}"#, "schedule.kind"),
            (r#""schedule":{"kind":"gauntlet","baseline":"nobody"}"#, "schedule.baseline"),
            (r#""schedule":{"kind":"round-robin","baseline":"r"}"#, "schedule.baseline"),
            (r#""illegalMoves":{"then":"resign"}"#, "illegalMoves.then"),
            (r#""illegalMoves":{"retries":-1}"#, "illegalMoves.retries"),
            (r#""rating":{"kind":"elo"}"#, "rating.kind"),
            (r#""rating":{"bootstrap":0}"#, "rating.bootstrap"),
            (r#""rating":{"prior":0}"#, "rating.prior"),
        ];
        for (extra, field) in cases {
            let text = MINIMAL.replacen('{', &format!("{{{extra},"), 1);
            let error = ArenaManifest::parse(&text).expect_err(extra).to_string();
            assert!(error.contains(field), "{extra}: {error}");
        }
        let entrant_cases = [
            (r#"{"id":"r","driver":"random"},{"id":"r","driver":"random"}"#, "entrants[1].id"),
            (r#"{"id":"a b","driver":"random"},{"id":"f","driver":"random"}"#, "entrants[0].id"),
            (r#"{"id":"h","driver":"human"},{"id":"f","driver":"random"}"#, "entrants[0].driver"),
            (r#"{"id":"p","driver":"process"},{"id":"f","driver":"random"}"#, "entrants[0].command"),
            (r#"{"id":"p","driver":"process:python3 x"},{"id":"f","driver":"random"}"#, "entrants[0].driver"),
            (r#"{"id":"p","driver":"random","command":["x"]},{"id":"f","driver":"random"}"#, "entrants[0].command"),
            (
                r#"{"id":"p","driver":"process","command":["x"],"deadlineMs":0},{"id":"f","driver":"random"}"#,
                "deadlineMs",
            ),
            (r#"{"id":"only","driver":"random"}"#, "entrants: must hold 2"),
            (r#"{"id":"k","driver":"random","seatKey":""},{"id":"f","driver":"random"}"#, "entrants[0].seatKey"),
        ];
        for (entrants, field) in entrant_cases {
            let text = MINIMAL.replace(r#"{"id":"r","driver":"random"},{"id":"f","driver":"first-legal"}"#, entrants);
            let error = ArenaManifest::parse(&text).expect_err(entrants).to_string();
            assert!(error.contains(field), "{entrants}: {error}");
        }
        let seeds = MINIMAL.replace("[1]", "[1, 1]");
        assert!(ArenaManifest::parse(&seeds).expect_err("twice").to_string().contains("levels[0].seeds[1]"));
    }
}
