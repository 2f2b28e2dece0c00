//! `standings.json`: every entrant's record, rating and 95 % interval, the
//! pairwise results and the method, computed from match results alone (so
//! `gaos arena verify` recomputes it from the replays).
//!
//! ```json
//! {"entrants": [{"id", "matches", "wins", "draws", "losses", "score", "rating", "ci95": [lo, hi]}],
//!  "pairwise": {"a": {"b": {"games", "wins", "draws", "losses", "winRate"}}},
//!  "method": {"kind": "bradley-terry", ...}}
//! ```
//!
//! Wins, draws and losses are pairwise games ([`pairwise_games`]): one per
//! two-seat match, one per pair of seats in bigger ones. `score` counts a
//! win 1 and a draw ½; `winRate` is that score over the games. Ratings and
//! interval bounds are rounded to one decimal. Entrants are listed by
//! rating, then score, then id.

use std::collections::BTreeMap;

use gaos_json::{Map, Value};

use crate::arena::manifest::ArenaManifest;
use crate::arena::ratings::{Rating, rate};
use crate::arena::result::{MatchRecord, pairwise_games};

/// One entrant's line of the standings.
#[derive(Debug, Clone, PartialEq)]
pub struct Standing {
    /// The entrant.
    pub id: String,
    /// Matches it played.
    pub matches: u64,
    /// Pairwise games won.
    pub wins: u64,
    /// Pairwise games drawn.
    pub draws: u64,
    /// Pairwise games lost.
    pub losses: u64,
    /// `wins + draws / 2`.
    pub score: f64,
    /// Its rating and interval (rounded to 0.1).
    pub rating: Rating,
}

/// `a`'s record against `b`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Head {
    /// Games won.
    pub wins: u64,
    /// Games drawn.
    pub draws: u64,
    /// Games lost.
    pub losses: u64,
}

impl Head {
    /// Games played.
    pub fn games(&self) -> u64 {
        self.wins + self.draws + self.losses
    }

    /// `(wins + draws / 2) / games`.
    pub fn win_rate(&self) -> f64 {
        (self.wins as f64 + self.draws as f64 / 2.0) / self.games().max(1) as f64
    }

    fn count(&mut self, score: f64) {
        if score == 1.0 {
            self.wins += 1;
        } else if score == 0.0 {
            self.losses += 1;
        } else {
            self.draws += 1;
        }
    }
}

/// The standings of a tournament.
#[derive(Debug, Clone, PartialEq)]
pub struct Standings {
    /// Entrants, best first.
    pub entrants: Vec<Standing>,
    /// `pairwise[a][b]`: `a`'s record against `b` (pairs that met).
    pub pairwise: BTreeMap<String, BTreeMap<String, Head>>,
    /// The method, as written in `standings.json`.
    pub method: Value,
}

fn tenth(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// Compute the standings of `records` under `manifest`'s rating settings.
pub fn standings(manifest: &ArenaManifest, records: &[MatchRecord]) -> Standings {
    let ids: Vec<&str> = manifest.entrants.iter().map(|e| e.id.as_str()).collect();
    let index = |id: &str| ids.iter().position(|e| *e == id);
    let mut played = vec![0u64; ids.len()];
    let mut pairwise: BTreeMap<String, BTreeMap<String, Head>> = BTreeMap::new();
    let mut games: Vec<Vec<(usize, usize, f64)>> = Vec::with_capacity(records.len());
    for record in records {
        let mut seen: Vec<usize> = record.seats.iter().filter_map(|(_, e)| index(e)).collect();
        seen.sort_unstable();
        seen.dedup();
        for i in seen {
            played[i] += 1;
        }
        let mut match_games = Vec::new();
        for game in pairwise_games(record) {
            let (Some(a), Some(b)) = (index(&game.a), index(&game.b)) else { continue };
            pairwise.entry(game.a.clone()).or_default().entry(game.b.clone()).or_default().count(game.score);
            pairwise.entry(game.b.clone()).or_default().entry(game.a.clone()).or_default().count(1.0 - game.score);
            match_games.push((a, b, game.score));
        }
        games.push(match_games);
    }
    let settings = manifest.rating;
    let ratings = rate(ids.len(), &games, settings.prior, settings.bootstrap, settings.seed);
    let mut entrants: Vec<Standing> = ids
        .iter()
        .zip(ratings)
        .zip(played)
        .map(|((id, rating), matches)| {
            let mut total = Head::default();
            for head in pairwise.get(*id).into_iter().flat_map(BTreeMap::values) {
                total.wins += head.wins;
                total.draws += head.draws;
                total.losses += head.losses;
            }
            Standing {
                id: (*id).to_owned(),
                matches,
                wins: total.wins,
                draws: total.draws,
                losses: total.losses,
                score: total.wins as f64 + total.draws as f64 / 2.0,
                rating: Rating { rating: tenth(rating.rating), low: tenth(rating.low), high: tenth(rating.high) },
            }
        })
        .collect();
    entrants.sort_by(|a, b| {
        b.rating.rating.total_cmp(&a.rating.rating).then(b.score.total_cmp(&a.score)).then_with(|| a.id.cmp(&b.id))
    });
    Standings { entrants, pairwise, method: method(manifest) }
}

/// `method`: what was computed, with the numbers that fix it.
fn method(manifest: &ArenaManifest) -> Value {
    let settings = manifest.rating;
    let mut map = Map::new();
    map.insert("kind".into(), "bradley-terry".into());
    map.insert("fit".into(), "maximum likelihood (MM iteration)".into());
    map.insert("draws".into(), "half a win each way".into());
    map.insert("pairs".into(), "every two seats of different entrants, compared by rank".into());
    map.insert("prior".into(), Value::Number(settings.prior));
    map.insert("priorMeaning".into(), "virtual games of each entrant, drawn, spread evenly over the others".into());
    map.insert("scale".into(), "400·log10(strength), shifted so the mean rating is 1000".into());
    map.insert("mean".into(), 1000.into());
    map.insert("interval".into(), "percentile bootstrap, 95 %, nearest rank, widened to hold the rating".into());
    map.insert("bootstrap".into(), settings.bootstrap.into());
    map.insert("resample".into(), "matches, with replacement".into());
    map.insert("rng".into(), "mulberry32".into());
    map.insert("seed".into(), settings.seed.into());
    map.insert("decimals".into(), 1.into());
    Value::Object(map)
}

impl Standings {
    /// `standings.json`'s value.
    pub fn to_value(&self) -> Value {
        let entrants = self.entrants.iter().map(|s| {
            let mut map = Map::new();
            map.insert("id".into(), s.id.clone().into());
            map.insert("matches".into(), s.matches.into());
            map.insert("wins".into(), s.wins.into());
            map.insert("draws".into(), s.draws.into());
            map.insert("losses".into(), s.losses.into());
            map.insert("score".into(), Value::Number(s.score));
            map.insert("rating".into(), Value::Number(s.rating.rating));
            map.insert("ci95".into(), Value::Array(vec![Value::Number(s.rating.low), Value::Number(s.rating.high)]));
            Value::Object(map)
        });
        let pairwise = self.pairwise.iter().map(|(a, row)| {
            let row = row.iter().map(|(b, head)| {
                let mut map = Map::new();
                map.insert("games".into(), head.games().into());
                map.insert("wins".into(), head.wins.into());
                map.insert("draws".into(), head.draws.into());
                map.insert("losses".into(), head.losses.into());
                map.insert("winRate".into(), Value::Number(head.win_rate()));
                (b.clone(), Value::Object(map))
            });
            (a.clone(), Value::Object(row.collect()))
        });
        let mut map = Map::new();
        map.insert("entrants".into(), Value::Array(entrants.collect()));
        map.insert("pairwise".into(), Value::Object(pairwise.collect()));
        map.insert("method".into(), self.method.clone());
        Value::Object(map)
    }
}
