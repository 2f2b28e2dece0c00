//! A multi-level run (RFC-006 §3.5) a create request may ask for:
//! `"run": {"levels": [...], "advancePolicy"?: "win-to-advance" | "play-all-levels",
//! "advanceOn"?: "level-end" | "reset"}`.
//!
//! The advance policy says whether a level may be followed by the next (the
//! replay checks it); `advanceOn` says when the next one starts: as soon as
//! its predecessor ends, or only when a seat asks for it with `reset` (the
//! agent-recipe tool and `POST .../reset`). Finalizing instead of resetting
//! ends the run after the levels played, which the run replay allows.
//!
//! One kernel still owns exactly one level; the session actor composes the
//! levels (`actor/episodes.rs`). Level `i` is played with the explicit seed
//! `runLevelSeed(runSeed, i)`, which is what `finalize_run_replay` checks, so
//! the run replay verifies like any other.

use gaos_json::{Map, Value};
use gaos_kernel::GameStatus;
use gaos_kernel::replay::AdvancePolicy;
use gaos_kernel::{Game, LevelSpec, run_level_seed};

/// Most levels one run may hold (keeps every level seed exact, kernel spec §2.4).
pub(crate) const MAX_RUN_LEVELS: usize = 1_000;

/// One level of a run, resolved against the game at create.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RunLevel {
    pub id: String,
    pub version: Option<Value>,
    pub level: Value,
}

/// When the level after an ended one starts (when the policy lets it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum AdvanceOn {
    /// At once, in the transition that ended the level before.
    #[default]
    LevelEnd,
    /// When a seat resets (a new episode on request).
    Reset,
}

impl AdvanceOn {
    fn name(self) -> &'static str {
        match self {
            AdvanceOn::LevelEnd => "level-end",
            AdvanceOn::Reset => "reset",
        }
    }

    fn parse(text: &str) -> Option<Self> {
        match text {
            "level-end" => Some(AdvanceOn::LevelEnd),
            "reset" => Some(AdvanceOn::Reset),
            _ => None,
        }
    }
}

/// The levels of a run and when the next one starts.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RunSpec {
    pub levels: Vec<RunLevel>,
    pub advance: AdvancePolicy,
    pub advance_on: AdvanceOn,
}

fn policy_name(policy: AdvancePolicy) -> &'static str {
    match policy {
        AdvancePolicy::WinToAdvance => "win-to-advance",
        AdvancePolicy::PlayAllLevels => "play-all-levels",
    }
}

fn parse_policy(text: &str) -> Option<AdvancePolicy> {
    match text {
        "win-to-advance" => Some(AdvancePolicy::WinToAdvance),
        "play-all-levels" => Some(AdvancePolicy::PlayAllLevels),
        _ => None,
    }
}

impl RunSpec {
    /// Whether the level at `index`, ended with `status`, is followed by another.
    pub fn advances_after(&self, index: usize, status: GameStatus) -> bool {
        index + 1 < self.levels.len()
            && match self.advance {
                AdvancePolicy::WinToAdvance => status == GameStatus::Won,
                AdvancePolicy::PlayAllLevels => true,
            }
    }

    /// The explicit seed level `index` is played with.
    pub fn level_seed(run_seed: u32, index: usize) -> u32 {
        run_level_seed(run_seed, index as u64).expect("run levels are capped below the exact range")
    }

    /// As persisted in the session configuration.
    pub fn to_value(&self) -> Value {
        let levels = self
            .levels
            .iter()
            .map(|l| {
                let mut m = Map::new();
                m.insert("id".into(), l.id.clone().into());
                if let Some(v) = &l.version {
                    m.insert("version".into(), v.clone());
                }
                m.insert("level".into(), l.level.clone());
                Value::Object(m)
            })
            .collect();
        let mut m = Map::new();
        m.insert("levels".into(), Value::Array(levels));
        m.insert("advancePolicy".into(), policy_name(self.advance).into());
        // Written only when not the default, so runs stored before
        // `advanceOn` existed read back unchanged.
        if self.advance_on != AdvanceOn::LevelEnd {
            m.insert("advanceOn".into(), self.advance_on.name().into());
        }
        Value::Object(m)
    }

    /// Read a persisted run.
    pub fn from_value(value: &Value) -> Result<Self, String> {
        let levels = value
            .get("levels")
            .and_then(Value::as_array)
            .ok_or("config.run.levels")?
            .iter()
            .map(|l| {
                Ok(RunLevel {
                    id: l.get("id").and_then(Value::as_str).ok_or("config.run.levels[].id")?.to_owned(),
                    version: l.get("version").cloned(),
                    level: l.get("level").cloned().ok_or("config.run.levels[].level")?,
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        let advance = value
            .get("advancePolicy")
            .and_then(Value::as_str)
            .and_then(parse_policy)
            .ok_or("config.run.advancePolicy")?;
        let advance_on = match value.get("advanceOn") {
            None => AdvanceOn::LevelEnd,
            Some(v) => v.as_str().and_then(AdvanceOn::parse).ok_or("config.run.advanceOn")?,
        };
        Ok(RunSpec { levels, advance, advance_on })
    }

    /// Parse a create request's `run` against the game's levels. A level is
    /// a level id of the game (`"tiny"`) or an object `{levelId?, level?,
    /// levelVersion?}` as the top-level create fields take them.
    pub fn parse_request(value: &Value, game: &dyn Game) -> Result<Self, String> {
        let map = value
            .as_object()
            .ok_or(r#"run must be an object like {"levels": ["tiny", "small"], "advancePolicy": "win-to-advance"}"#)?;
        if let Some(key) = map.keys().find(|k| !["levels", "advancePolicy", "advanceOn"].contains(&k.as_str())) {
            return Err(format!("unknown run field {key:?} (known: levels, advancePolicy, advanceOn)"));
        }
        let advance = match map.get("advancePolicy") {
            None => AdvancePolicy::default(),
            Some(v) => v
                .as_str()
                .and_then(parse_policy)
                .ok_or("run.advancePolicy must be \"win-to-advance\" or \"play-all-levels\"")?,
        };
        let advance_on = match map.get("advanceOn") {
            None => AdvanceOn::LevelEnd,
            Some(v) => v.as_str().and_then(AdvanceOn::parse).ok_or(
                "run.advanceOn must be \"level-end\" (the next level starts at once) or \"reset\" (when a seat resets)",
            )?,
        };
        let items = map.get("levels").and_then(Value::as_array).ok_or("run.levels must be an array of levels")?;
        if items.is_empty() || items.len() > MAX_RUN_LEVELS {
            return Err(format!("run.levels must hold 1 to {MAX_RUN_LEVELS} levels"));
        }
        let known = game.levels();
        let mut levels: Vec<RunLevel> = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let level = parse_level(item, i, &known, &game.game_ref().id)?;
            if levels.iter().any(|l| l.id == level.id) {
                // Replay headers need unique level ids.
                return Err(format!("run.levels[{i}]: level id {:?} appears twice; give it its own levelId", level.id));
            }
            levels.push(level);
        }
        Ok(RunSpec { levels, advance, advance_on })
    }
}

fn parse_level(item: &Value, i: usize, known: &[LevelSpec], game_id: &str) -> Result<RunLevel, String> {
    let by_id = |id: &str| {
        known
            .iter()
            .find(|l| l.id == id)
            .map(|l| RunLevel { id: l.id.clone(), version: l.version.clone(), level: l.level.clone() })
            .ok_or_else(|| {
                let names: Vec<&str> = known.iter().map(|l| l.id.as_str()).collect();
                format!("run.levels[{i}]: game {game_id} has no level {id:?} (levels: {})", names.join(", "))
            })
    };
    let level = match item {
        Value::String(id) => by_id(id)?,
        Value::Object(map) => {
            if let Some(key) = map.keys().find(|k| !["levelId", "level", "levelVersion"].contains(&k.as_str())) {
                return Err(format!("run.levels[{i}]: unknown field {key:?} (known: levelId, level, levelVersion)"));
            }
            let id = match map.get("levelId") {
                None => None,
                Some(v) => Some(
                    v.as_str()
                        .filter(|s| !s.is_empty())
                        .ok_or(format!("run.levels[{i}].levelId must be a non-empty string"))?,
                ),
            };
            match (id, map.get("level")) {
                (Some(id), Some(level)) => {
                    RunLevel { id: id.to_owned(), version: map.get("levelVersion").cloned(), level: level.clone() }
                }
                (None, Some(level)) => RunLevel {
                    id: format!("level-{i}"),
                    version: map.get("levelVersion").cloned(),
                    level: level.clone(),
                },
                (Some(id), None) => by_id(id)?,
                (None, None) => return Err(format!("run.levels[{i}] needs levelId or level")),
            }
        }
        _ => return Err(format!("run.levels[{i}] must be a level id or an object {{levelId?, level?}}")),
    };
    if let Some(v) = &level.version
        && !matches!(v, Value::String(_) | Value::Number(_))
    {
        return Err(format!("run.levels[{i}].levelVersion must be a string or a number"));
    }
    Ok(level)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(text: &str) -> Value {
        gaos_json::parse(text).expect("test JSON")
    }

    fn counter() -> std::sync::Arc<dyn Game> {
        gaos_games::GameRegistry::builtin().get("conformance/counter").expect("counter")
    }

    #[test]
    fn levels_by_id_and_by_value_round_trip_through_the_config() {
        let run = RunSpec::parse_request(
            &json(
                r#"{"levels":["default",{"level":{"rounds":2}},{"levelId":"long"}],"advancePolicy":"play-all-levels"}"#,
            ),
            counter().as_ref(),
        )
        .expect("a run");
        let ids: Vec<&str> = run.levels.iter().map(|l| l.id.as_str()).collect();
        assert_eq!(ids, ["default", "level-1", "long"]);
        assert_eq!(run.levels[1].level, json(r#"{"rounds":2}"#));
        assert_eq!(run.advance, AdvancePolicy::PlayAllLevels);
        assert_eq!(RunSpec::from_value(&run.to_value()).expect("persisted"), run);
        assert_eq!(run.advance_on, AdvanceOn::LevelEnd);
        assert!(run.to_value().get("advanceOn").is_none(), "the default is not written");
        let on_reset =
            RunSpec::parse_request(&json(r#"{"levels":["default","long"],"advanceOn":"reset"}"#), counter().as_ref())
                .expect("a run");
        assert_eq!(on_reset.advance_on, AdvanceOn::Reset);
        assert_eq!(RunSpec::from_value(&on_reset.to_value()).expect("persisted"), on_reset);
    }

    #[test]
    fn bad_runs_are_refused_naming_the_field() {
        let game = counter();
        for (body, needle) in [
            (r#"{"levels":[]}"#, "1 to 1000"),
            (r#"{"levels":["nope"]}"#, "no level \"nope\""),
            (r#"{"levels":["default","default"]}"#, "appears twice"),
            (r#"{"levels":["default"],"advancePolicy":"sometimes"}"#, "advancePolicy"),
            (r#"{"levels":["default"],"extra":1}"#, "unknown run field"),
            (r#"{"levels":["default"],"advanceOn":"later"}"#, "advanceOn"),
            (r#"{"levels":[{}]}"#, "needs levelId or level"),
        ] {
            let error = RunSpec::parse_request(&json(body), game.as_ref()).expect_err(body);
            assert!(error.contains(needle), "{body}: {error}");
        }
    }

    #[test]
    fn win_to_advance_needs_a_win_and_no_run_goes_past_its_last_level() {
        let run = RunSpec::parse_request(&json(r#"{"levels":["default","long"]}"#), counter().as_ref()).expect("run");
        assert!(run.advances_after(0, GameStatus::Won));
        assert!(!run.advances_after(0, GameStatus::Ended));
        assert!(!run.advances_after(1, GameStatus::Won), "the last level ends the run");
        let all = RunSpec { advance: AdvancePolicy::PlayAllLevels, ..run };
        assert!(all.advances_after(0, GameStatus::Failed));
        assert_eq!(RunSpec::level_seed(42, 0), 2654435731);
    }
}
