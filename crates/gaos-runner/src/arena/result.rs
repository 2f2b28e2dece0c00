//! A match's result and its `matches.jsonl` line ([`MatchRecord`]), and the
//! facts of a result that come from its replay: the game's ranking, the
//! moves the referee played ([`ReplayConduct`]), forfeits moved to the
//! bottom of the ranking ([`match_ranking`]), and the pairwise games a
//! match counts for ([`pairwise_games`]).

use std::collections::{BTreeMap, BTreeSet};

use gaos_json::{Map, Value};

use crate::arena::plan::MatchPlan;
use crate::arena::referee::{FORFEIT_TAG, RANDOM_TAG};

/// The game's ranking in an outcome (`{"ranking": [{seat, rank}]}`): every
/// seat of `seats` exactly once, each rank an integer ≥ 1.
pub fn game_ranking(outcome: &Value, seats: &[String]) -> Result<Vec<(String, u64)>, String> {
    let entries = outcome
        .get("ranking")
        .and_then(Value::as_array)
        .ok_or_else(|| format!("the game's outcome has no ranking ({outcome}); an arena needs ranked games"))?;
    let mut ranking = Vec::with_capacity(entries.len());
    for entry in entries {
        let seat = entry.get("seat").and_then(Value::as_str).ok_or("a ranking entry has no seat")?;
        let rank = entry
            .get("rank")
            .and_then(Value::as_u64)
            .filter(|r| *r >= 1)
            .ok_or_else(|| format!("seat {seat}'s rank is not an integer ≥ 1"))?;
        if !seats.iter().any(|s| s == seat) || ranking.iter().any(|(s, _)| s == seat) {
            return Err(format!("the ranking names seat {seat:?} twice or out of the match"));
        }
        ranking.push((seat.to_owned(), rank));
    }
    if ranking.len() != seats.len() {
        return Err(format!("the ranking ranks {} of the {} seats", ranking.len(), seats.len()));
    }
    Ok(ranking)
}

/// The match ranking: the game's, with every seat that forfeited below
/// every seat that did not (forfeiting seats share the last rank). A rank
/// is 1 + the number of seats ranked strictly better; sorted by rank, then seat.
pub fn match_ranking(game: &[(String, u64)], forfeits: &BTreeSet<String>) -> Vec<(String, u64)> {
    let standing: Vec<&(String, u64)> = game.iter().filter(|(s, _)| !forfeits.contains(s)).collect();
    let last = standing.len() as u64 + 1;
    let mut ranking: Vec<(String, u64)> = game
        .iter()
        .map(|(seat, rank)| {
            if forfeits.contains(seat) {
                (seat.clone(), last)
            } else {
                (seat.clone(), 1 + standing.iter().filter(|(_, other)| other < rank).count() as u64)
            }
        })
        .collect();
    ranking.sort_by(|a, b| a.1.cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
    ranking
}

/// What a replay says about the referee's moves.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ReplayConduct {
    /// Seats with a move tagged [`FORFEIT_TAG`].
    pub forfeits: BTreeSet<String>,
    /// Moves tagged [`RANDOM_TAG`], by seat.
    pub substitutions: BTreeMap<String, u64>,
    /// Accepted commands of every seat.
    pub steps: u64,
    /// Each seat's public key, when the match was signed (the header's
    /// `seatKeys` roster).
    pub seat_keys: BTreeMap<String, String>,
}

/// The `seatKeys` roster of a replay's header: public key by seat.
fn header_seat_keys(header: &str) -> Result<BTreeMap<String, String>, String> {
    let header = gaos_json::parse(header).map_err(|e| format!("the replay header is not JSON: {e}"))?;
    let mut keys = BTreeMap::new();
    for entry in header.get("seatKeys").and_then(Value::as_array).into_iter().flatten() {
        let (Some(seat), Some(key)) =
            (entry.get("id").and_then(Value::as_str), entry.get("publicKey").and_then(Value::as_str))
        else {
            return Err("a seatKeys entry of the replay header has no id or publicKey".into());
        };
        keys.insert(seat.to_owned(), key.to_owned());
    }
    Ok(keys)
}

/// Read the tagged submission ids of a replay's resolutions (JSONL text),
/// and its header's signing roster.
pub fn replay_conduct(replay: &str) -> Result<ReplayConduct, String> {
    let mut conduct = ReplayConduct::default();
    if let Some(header) = replay.lines().next() {
        conduct.seat_keys = header_seat_keys(header)?;
    }
    for (number, line) in replay.lines().enumerate().skip(1) {
        if line.trim().is_empty() || !line.contains("\"resolution\"") {
            continue;
        }
        let record = gaos_json::parse(line).map_err(|e| format!("replay line {} is not JSON: {e}", number + 1))?;
        if record.get("kind").and_then(Value::as_str) != Some("resolution") {
            continue;
        }
        for input in record.get("inputs").and_then(Value::as_array).into_iter().flatten() {
            let (Some(seat), Some(id)) =
                (input.get("seat").and_then(Value::as_str), input.get("submissionId").and_then(Value::as_str))
            else {
                continue;
            };
            conduct.steps += 1;
            match id.split_once(':').map(|(tag, _)| tag) {
                Some(FORFEIT_TAG) => {
                    conduct.forfeits.insert(seat.to_owned());
                }
                Some(RANDOM_TAG) => *conduct.substitutions.entry(seat.to_owned()).or_default() += 1,
                _ => {}
            }
        }
    }
    Ok(conduct)
}

/// What verification recomputes of a match from its replay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatchResult {
    /// The match ranking ([`match_ranking`]).
    pub ranking: Vec<(String, u64)>,
    /// Seats that forfeited.
    pub forfeits: BTreeSet<String>,
    /// Random moves the referee played, by seat.
    pub substitutions: BTreeMap<String, u64>,
    /// Accepted commands of every seat.
    pub steps: u64,
    /// Each seat's public key in a signed match (empty when unsigned).
    pub seat_keys: BTreeMap<String, String>,
}

impl MatchResult {
    /// The result of a replay's game ranking and conduct.
    pub fn new(game: &[(String, u64)], conduct: ReplayConduct) -> Self {
        MatchResult {
            ranking: match_ranking(game, &conduct.forfeits),
            forfeits: conduct.forfeits,
            substitutions: conduct.substitutions,
            steps: conduct.steps,
            seat_keys: conduct.seat_keys,
        }
    }
}

/// One line of `matches.jsonl`.
#[derive(Debug, Clone, PartialEq)]
pub struct MatchRecord {
    /// The match id.
    pub id: String,
    /// The level played.
    pub level_id: String,
    /// The session seed.
    pub seed: u32,
    /// `(seat, entrant)` in seat order.
    pub seats: Vec<(String, String)>,
    /// The recorded result.
    pub result: MatchResult,
    /// Failed answers and refused moves by seat (self-reported).
    pub faults: BTreeMap<String, u64>,
    /// The replay's path in the bundle.
    pub replay: String,
    /// SHA-256 of the replay file.
    pub replay_sha256: String,
    /// Milliseconds the match took (self-reported).
    pub wall_clock_ms: u64,
}

fn counts(map: &BTreeMap<String, u64>) -> Value {
    Value::Object(map.iter().map(|(seat, n)| (seat.clone(), Value::from(*n))).collect())
}

impl MatchRecord {
    /// The line: `{match, levelId, seed, seats, ranking, forfeits,
    /// substitutions, faults, replay, replaySha256, steps, wallClockMs}`,
    /// and `seatKeys` (`{seat: publicKey}`) when the match was signed.
    pub fn to_value(&self) -> Value {
        let mut map = Map::new();
        map.insert("match".into(), self.id.clone().into());
        map.insert("levelId".into(), self.level_id.clone().into());
        map.insert("seed".into(), self.seed.into());
        map.insert(
            "seats".into(),
            Value::Object(self.seats.iter().map(|(s, e)| (s.clone(), Value::from(e.as_str()))).collect()),
        );
        let ranking = self.result.ranking.iter().map(|(seat, rank)| {
            let mut entry = Map::new();
            entry.insert("seat".into(), seat.clone().into());
            entry.insert("rank".into(), (*rank).into());
            Value::Object(entry)
        });
        map.insert("ranking".into(), Value::Array(ranking.collect()));
        map.insert("forfeits".into(), Value::Array(self.result.forfeits.iter().map(Value::from).collect()));
        map.insert("substitutions".into(), counts(&self.result.substitutions));
        map.insert("faults".into(), counts(&self.faults));
        map.insert("replay".into(), self.replay.clone().into());
        map.insert("replaySha256".into(), self.replay_sha256.clone().into());
        map.insert("steps".into(), self.result.steps.into());
        map.insert("wallClockMs".into(), self.wall_clock_ms.into());
        if !self.result.seat_keys.is_empty() {
            let keys = self.result.seat_keys.iter().map(|(seat, key)| (seat.clone(), Value::from(key.as_str())));
            map.insert("seatKeys".into(), Value::Object(keys.collect()));
        }
        Value::Object(map)
    }

    /// Read a line (every field of [`MatchRecord::to_value`], nothing else).
    pub fn from_value(value: &Value) -> Result<Self, String> {
        const KEYS: [&str; 13] = [
            "match",
            "levelId",
            "seed",
            "seats",
            "ranking",
            "forfeits",
            "substitutions",
            "faults",
            "replay",
            "replaySha256",
            "steps",
            "wallClockMs",
            "seatKeys",
        ];
        let map = value.as_object().ok_or("a match line must be a JSON object")?;
        if let Some(key) = map.keys().find(|k| !KEYS.contains(&k.as_str())) {
            return Err(format!("unknown field {key:?}"));
        }
        let get = |key: &str| map.get(key).ok_or(format!("{key} is missing"));
        let text = |key: &str| get(key)?.as_str().map(str::to_owned).ok_or(format!("{key} must be a string"));
        let number = |key: &str| get(key)?.as_u64().ok_or(format!("{key} must be an integer ≥ 0"));
        let seat_counts = |key: &str| -> Result<BTreeMap<String, u64>, String> {
            let object = get(key)?.as_object().ok_or(format!("{key} must be an object"))?;
            object
                .iter()
                .map(|(seat, n)| Ok((seat.clone(), n.as_u64().ok_or(format!("{key}.{seat} must be an integer"))?)))
                .collect()
        };
        let seats = get("seats")?
            .as_object()
            .ok_or("seats must be an object")?
            .iter()
            .map(|(seat, e)| Ok((seat.clone(), e.as_str().ok_or(format!("seats.{seat} must be a string"))?.to_owned())))
            .collect::<Result<Vec<_>, String>>()?;
        let ranking = get("ranking")?
            .as_array()
            .ok_or("ranking must be an array")?
            .iter()
            .map(|entry| {
                let seat = entry.get("seat").and_then(Value::as_str).ok_or("a ranking entry has no seat")?;
                let rank = entry.get("rank").and_then(Value::as_u64).ok_or("a ranking entry has no integer rank")?;
                Ok((seat.to_owned(), rank))
            })
            .collect::<Result<Vec<_>, String>>()?;
        let forfeits = get("forfeits")?
            .as_array()
            .ok_or("forfeits must be an array")?
            .iter()
            .map(|s| s.as_str().map(str::to_owned).ok_or("forfeits must hold seat names"))
            .collect::<Result<BTreeSet<_>, _>>()?;
        let seat_keys = match map.get("seatKeys") {
            None => BTreeMap::new(),
            Some(keys) => keys
                .as_object()
                .ok_or("seatKeys must be an object")?
                .iter()
                .map(|(seat, k)| {
                    Ok((seat.clone(), k.as_str().ok_or(format!("seatKeys.{seat} must be a string"))?.into()))
                })
                .collect::<Result<_, String>>()?,
        };
        Ok(MatchRecord {
            id: text("match")?,
            level_id: text("levelId")?,
            seed: get("seed")?.as_u32().ok_or("seed must be a u32")?,
            seats,
            result: MatchResult {
                ranking,
                forfeits,
                substitutions: seat_counts("substitutions")?,
                steps: number("steps")?,
                seat_keys,
            },
            faults: seat_counts("faults")?,
            replay: text("replay")?,
            replay_sha256: text("replaySha256")?,
            wall_clock_ms: number("wallClockMs")?,
        })
    }

    /// Whether the line belongs to `plan` (id, level, seed, seats).
    pub fn matches_plan(&self, plan: &MatchPlan) -> Result<(), String> {
        if self.id != plan.id {
            return Err(format!("the line is match {:?}, the plan's is {:?}", self.id, plan.id));
        }
        let mut planned = plan.seats.clone();
        planned.sort();
        let mut seats = self.seats.clone();
        seats.sort();
        if self.level_id != plan.level_id || self.seed != plan.seed || seats != planned {
            return Err("its level, seed or seats differ from the plan's".into());
        }
        if self.replay != plan.replay_file() {
            return Err(format!("its replay is {:?}, expected {:?}", self.replay, plan.replay_file()));
        }
        Ok(())
    }

    /// The entrant of a seat.
    pub fn entrant(&self, seat: &str) -> Option<&str> {
        self.seats.iter().find(|(s, _)| s == seat).map(|(_, e)| e.as_str())
    }
}

/// One pairwise game a match counts for: `a` scored `score` (1 win, ½
/// draw, 0 loss) against `b`.
#[derive(Debug, Clone, PartialEq)]
pub struct PairGame {
    /// An entrant.
    pub a: String,
    /// Its opponent.
    pub b: String,
    /// `a`'s score.
    pub score: f64,
}

/// Every pair of seats held by different entrants, compared by rank (a
/// two-seat match is one game: a win, draw or loss). Pairs in ranking order.
pub fn pairwise_games(record: &MatchRecord) -> Vec<PairGame> {
    let ranking = &record.result.ranking;
    let mut games = Vec::new();
    for (i, (seat_a, rank_a)) in ranking.iter().enumerate() {
        for (seat_b, rank_b) in &ranking[i + 1..] {
            let (Some(a), Some(b)) = (record.entrant(seat_a), record.entrant(seat_b)) else { continue };
            if a == b {
                continue;
            }
            let score = match rank_a.cmp(rank_b) {
                std::cmp::Ordering::Less => 1.0,
                std::cmp::Ordering::Equal => 0.5,
                std::cmp::Ordering::Greater => 0.0,
            };
            games.push(PairGame { a: a.to_owned(), b: b.to_owned(), score });
        }
    }
    games
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ranks(pairs: &[(&str, u64)]) -> Vec<(String, u64)> {
        pairs.iter().map(|(s, r)| ((*s).to_owned(), *r)).collect()
    }

    #[test]
    fn forfeits_fall_below_every_seat_that_played_on() {
        let game = ranks(&[("a", 1), ("b", 2), ("c", 3)]);
        let forfeits: BTreeSet<String> = ["a".to_owned()].into();
        assert_eq!(match_ranking(&game, &forfeits), ranks(&[("b", 1), ("c", 2), ("a", 3)]));
        let both: BTreeSet<String> = ["a".to_owned(), "c".to_owned()].into();
        assert_eq!(match_ranking(&game, &both), ranks(&[("b", 1), ("a", 2), ("c", 2)]));
        let tie = ranks(&[("x", 1), ("o", 1)]);
        assert_eq!(match_ranking(&tie, &BTreeSet::new()), ranks(&[("o", 1), ("x", 1)]));
    }

    #[test]
    fn tagged_submission_ids_are_read_back_from_the_replay() {
        let replay = [
            r#"{"kind":"header"}"#,
            r#"{"kind":"resolution","inputs":[{"seat":"a","submissionId":"a:s:0:0"},{"seat":"b","submissionId":"arena-random:b:s:0:0"}]}"#,
            r#"{"kind":"checkpoint"}"#,
            r#"{"kind":"resolution","inputs":[{"seat":"a","submissionId":"arena-forfeit:a:s:1:0"},{"seat":"b","submissionId":"arena-random:b:s:1:1"}]}"#,
        ]
        .join("\n");
        let conduct = replay_conduct(&replay).expect("reads");
        assert_eq!(conduct.steps, 4);
        assert_eq!(conduct.forfeits, ["a".to_owned()].into());
        assert_eq!(conduct.substitutions, [("b".to_owned(), 2)].into());
    }
}
