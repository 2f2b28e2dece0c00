//! Canonical planning: levels in manifest order, then seeds as authored,
//! then line-ups ([`lineups`]). A match's id names its place in the plan,
//! level, seed and entrants in seat order, so it is unique and readable.

use gaos_json::{Map, Value, fnv1a32};

use crate::arena::error::ArenaError;
use crate::arena::manifest::{ArenaManifest, ScheduleKind};

/// Most matches a manifest may plan (a bound on memory, journal and bundle).
pub const MAX_MATCHES: u64 = 1_000_000;

/// One planned match.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct MatchPlan {
    /// Position in the plan (from 0).
    pub index: u64,
    /// `<index>-<levelId>-<seed>-<entrant>-vs-<entrant>…` (characters
    /// outside `[A-Za-z0-9_.-]` replaced by `_`).
    pub id: String,
    /// The level played.
    pub level_id: String,
    /// The session seed.
    pub seed: u32,
    /// `(seat, entrant)` in the game's seat order.
    pub seats: Vec<(String, String)>,
}

impl MatchPlan {
    /// A seed for the match's built-in drivers, from its id alone, so
    /// results do not depend on `--jobs` or on which worker ran what.
    pub fn driver_seed(&self) -> u32 {
        fnv1a32(&self.id)
    }

    /// The entrant in `seat`.
    pub fn entrant(&self, seat: &str) -> Option<&str> {
        self.seats.iter().find(|(s, _)| s == seat).map(|(_, e)| e.as_str())
    }

    /// `{seat: entrant}`.
    pub fn seats_value(&self) -> Value {
        let map: Map = self.seats.iter().map(|(seat, entrant)| (seat.clone(), Value::from(entrant.as_str()))).collect();
        Value::Object(map)
    }

    /// The session id a host private to the run gives this match
    /// (`arena-<id>`, at most 128 characters).
    pub fn session_id(&self) -> String {
        format!("arena-{}", self.id).chars().take(128).collect()
    }

    /// The replay's path in a bundle (and under a run's directory).
    pub fn replay_file(&self) -> String {
        format!("replays/{}.gaos-replay.jsonl", self.id)
    }

    /// The log of the match's agent processes, in a bundle.
    pub fn log_file(&self) -> String {
        format!("logs/{}.log", self.id)
    }
}

/// Every k-combination of `0..n` in lexicographic order.
fn combinations(n: usize, k: usize) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    let mut current: Vec<usize> = (0..k).collect();
    if k > n {
        return out;
    }
    loop {
        out.push(current.clone());
        let Some(i) = (0..k).rev().find(|&i| current[i] < n - k + i) else { return out };
        current[i] += 1;
        for j in i + 1..k {
            current[j] = current[j - 1] + 1;
        }
    }
}

/// Every ordering of `items` in lexicographic order of positions.
fn permutations(items: &[usize]) -> Vec<Vec<usize>> {
    if items.len() <= 1 {
        return vec![items.to_vec()];
    }
    let mut out = Vec::new();
    for (i, first) in items.iter().enumerate() {
        let mut rest = items.to_vec();
        rest.remove(i);
        for mut tail in permutations(&rest) {
            tail.insert(0, *first);
            out.push(tail);
        }
    }
    out
}

/// How many line-ups a schedule gives, without building them.
fn lineup_count(manifest: &ArenaManifest, seats: u64) -> u64 {
    let n = manifest.entrants.len() as u64;
    match &manifest.schedule.kind {
        ScheduleKind::RoundRobin => {
            // n! / (n-k)! ordered, or that over k! unordered, without overflow.
            let ordered = (n - seats + 1..=n).fold(1u64, |acc, x| acc.saturating_mul(x));
            let orders = (1..=seats).fold(1u64, |acc, x| acc.saturating_mul(x));
            if manifest.schedule.rotate_seats { ordered } else { ordered / orders.max(1) }
        }
        ScheduleKind::Gauntlet { .. } => (n - 1) * if manifest.schedule.rotate_seats { seats } else { 1 },
    }
}

/// The line-ups of one level and seed, as entrant indexes in seat order.
///
/// Round robin: every combination of as many entrants as the game has
/// seats (lexicographic in manifest order), each in every seat order when
/// `rotateSeats` (lexicographic), else in manifest order. Gauntlet: every
/// other entrant (manifest order) in one seat and the baseline in the
/// others, the challenger in every seat when `rotateSeats`, else in the
/// first.
pub fn lineups(manifest: &ArenaManifest, seats: usize) -> Vec<Vec<usize>> {
    match &manifest.schedule.kind {
        ScheduleKind::RoundRobin => {
            let mut out = Vec::new();
            for combination in combinations(manifest.entrants.len(), seats) {
                if manifest.schedule.rotate_seats {
                    out.extend(permutations(&combination));
                } else {
                    out.push(combination);
                }
            }
            out
        }
        ScheduleKind::Gauntlet { baseline } => {
            let base = manifest.entrants.iter().position(|e| &e.id == baseline).unwrap_or(0);
            let positions = if manifest.schedule.rotate_seats { seats } else { 1 };
            let mut out = Vec::new();
            for challenger in (0..manifest.entrants.len()).filter(|&i| i != base) {
                for position in 0..positions {
                    let mut lineup = vec![base; seats];
                    lineup[position] = challenger;
                    out.push(lineup);
                }
            }
            out
        }
    }
}

fn safe(text: &str) -> String {
    text.chars().map(|c| if c.is_ascii_alphanumeric() || "_.-".contains(c) { c } else { '_' }).collect()
}

/// Plan the tournament for a game with `seats` (in declared order).
pub fn plan_matches(manifest: &ArenaManifest, game_id: &str, seats: &[String]) -> Result<Vec<MatchPlan>, ArenaError> {
    let k = seats.len();
    if k < 2 {
        return Err(ArenaError::Plan(format!(
            "arena.adapter: game {game_id} has {k} seat(s); a tournament needs a game of two or more seats"
        )));
    }
    let n = manifest.entrants.len();
    if matches!(manifest.schedule.kind, ScheduleKind::RoundRobin) && n < k {
        return Err(ArenaError::Plan(format!(
            "entrants: {n} entrants cannot fill the {k} seats of {game_id} ({}) in a round robin",
            seats.join(", ")
        )));
    }
    let per_seed = lineup_count(manifest, k as u64);
    let seeds: u64 = manifest.levels.iter().map(|l| l.seeds.len() as u64).sum();
    let total = per_seed.saturating_mul(seeds);
    if total > MAX_MATCHES {
        return Err(ArenaError::Plan(format!("the manifest plans {total} matches; at most {MAX_MATCHES} are allowed")));
    }
    let width = total.saturating_sub(1).to_string().len().max(3);
    let lineups = lineups(manifest, k);
    let mut plan = Vec::with_capacity(total as usize);
    for level in &manifest.levels {
        for &seed in &level.seeds {
            for lineup in &lineups {
                let index = plan.len() as u64;
                let names: Vec<&str> = lineup.iter().map(|&i| manifest.entrants[i].id.as_str()).collect();
                let id = safe(&format!("{index:0width$}-{}-{seed}-{}", level.id, names.join("-vs-")));
                let seats = seats.iter().cloned().zip(names.iter().map(|n| (*n).to_owned())).collect();
                plan.push(MatchPlan { index, id, level_id: level.id.clone(), seed, seats });
            }
        }
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(entrants: &[&str], schedule: &str) -> ArenaManifest {
        let entrants: Vec<String> = entrants.iter().map(|e| format!(r#"{{"id":"{e}","driver":"random"}}"#)).collect();
        ArenaManifest::parse(&format!(
            r#"{{"schema":"gaos.arena-manifest.v1","arena":{{"id":"t","version":"1","adapter":"g"}},
            "levels":[{{"id":"default","seeds":[1,2]}}],"entrants":[{}],"schedule":{schedule}}}"#,
            entrants.join(",")
        ))
        .expect("valid")
    }

    fn seats(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("s{i}")).collect()
    }

    #[test]
    fn round_robins_play_every_pairing_in_every_seat_order_on_every_seed() {
        let rotated = manifest(&["a", "b", "c"], r#"{"kind":"round-robin","rotateSeats":true}"#);
        let plan = plan_matches(&rotated, "g", &seats(2)).expect("plans");
        assert_eq!(plan.len(), 2 * 6);
        assert_eq!(plan[0].id, "000-default-1-a-vs-b");
        assert_eq!(plan[1].id, "001-default-1-b-vs-a");
        assert_eq!(plan[11].id, "011-default-2-c-vs-b");
        assert_eq!(plan[11].seats, vec![("s0".into(), "c".into()), ("s1".into(), "b".into())]);
        let fixed = manifest(&["a", "b", "c"], r#"{"kind":"round-robin","rotateSeats":false}"#);
        assert_eq!(plan_matches(&fixed, "g", &seats(2)).expect("plans").len(), 2 * 3);
        // Three seats from four entrants: 4 combinations, 6 orders each.
        let four = manifest(&["a", "b", "c", "d"], r#"{"kind":"round-robin"}"#);
        let plan = plan_matches(&four, "g", &seats(3)).expect("plans");
        assert_eq!(plan.len(), 2 * 4 * 6);
        let ids: std::collections::BTreeSet<&str> = plan.iter().map(|m| m.id.as_str()).collect();
        assert_eq!(ids.len(), plan.len(), "ids are unique");
        let error = plan_matches(&rotated, "g", &seats(4)).expect_err("too few entrants").to_string();
        assert!(error.starts_with("entrants: 3 entrants cannot fill the 4 seats"), "{error}");
        assert!(plan_matches(&rotated, "g", &seats(1)).is_err());
    }

    #[test]
    fn gauntlets_put_every_challenger_against_the_baseline() {
        let gauntlet = manifest(&["a", "base", "c"], r#"{"kind":"gauntlet","baseline":"base"}"#);
        let plan = plan_matches(&gauntlet, "g", &seats(2)).expect("plans");
        let ids: Vec<&str> = plan.iter().take(4).map(|m| m.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "000-default-1-a-vs-base",
                "001-default-1-base-vs-a",
                "002-default-1-c-vs-base",
                "003-default-1-base-vs-c"
            ]
        );
        assert_eq!(plan.len(), 8);
        let three = plan_matches(&gauntlet, "g", &seats(3)).expect("plans");
        assert_eq!(three.len(), 2 * 2 * 3);
        assert_eq!(three[1].id, "001-default-1-base-vs-a-vs-base");
    }
}
