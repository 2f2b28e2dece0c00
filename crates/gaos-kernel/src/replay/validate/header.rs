//! The header line: format and version, session, seeds and `perm`, the
//! integrity reservations, game, levels and totals.

use super::{Ctx, DMATH_ALGORITHM, Prefix, SIGNATURE_SCHEME, Validator, found};
use crate::event::SeedPolicy;
use crate::game::{AdapterRef, GameRef};
use crate::hash::{StableHashMap, new_map};
use crate::protocol::is_valid_participant_id;
use crate::replay::format::FormatVersion;
use crate::replay::model::{LevelResultView, LevelStatus, LevelView, ReplayView, TotalsView};
use crate::seed::run_level_seed;
use gaos_json::{Map, Value};

use super::keys::*;

impl Validator {
    /// The header line; `None` when it is too broken to describe the replay
    /// (problems say why).
    pub(crate) fn header(&mut self, h: &Map) -> Option<ReplayView> {
        let ctx = Ctx { line: 1, prefix: Prefix::Str("header") };
        self.keys(ctx, h, is_header_key, "a gaos.replay header");
        if h.get("kind").and_then(Value::as_str) != Some("header") {
            self.at(
                ctx,
                "kind",
                format!("must be \"header\" (the first line is the header), {}", found(h.get("kind"))),
            );
        }
        if h.get("format").and_then(Value::as_str) != Some(crate::replay::format::FORMAT_ID) {
            self.at(ctx, "format", format!("must be \"gaos.replay\", {}", found(h.get("format"))));
        }
        match h.get("formatVersion").and_then(Value::as_str).and_then(FormatVersion::parse) {
            Some(v) => self.version = v,
            None => self.at(
                ctx,
                "formatVersion",
                format!("must be one of 1.0, 1.1, 1.2, 1.3, 1.4, {}", found(h.get("formatVersion"))),
            ),
        }
        if self.version == FormatVersion::V1_0 {
            for key in ["seatKeys", "signaturePolicy", "timeoutPolicy"] {
                if h.contains_key(key) {
                    self.at(ctx, key, "integrity reservations need formatVersion 1.1 or later");
                }
            }
        }
        let session_id = self.string(ctx, h, "sessionId", true);
        let seed = self.u32(ctx, h, "seed");
        let seed_policy = match h.get("seedPolicy").and_then(Value::as_str) {
            Some("explicit") => Some(SeedPolicy::Explicit),
            Some("gaos.run-level-seed.v1") => Some(SeedPolicy::RunLevelSeedV1),
            _ => {
                let message =
                    format!("must be \"explicit\" or \"gaos.run-level-seed.v1\", {}", found(h.get("seedPolicy")));
                self.at(ctx, "seedPolicy", message);
                None
            }
        };
        self.perm(ctx, h.get("perm"));
        let visibility = match h.get("visibility") {
            None => None,
            Some(Value::String(s)) if s == "full" || s.strip_prefix("seat:").is_some_and(|seat| !seat.is_empty()) => {
                Some(s.clone())
            }
            other => {
                let message = format!("must be \"full\" or \"seat:<id>\", {}", found(other));
                self.at(ctx, "visibility", message);
                None
            }
        };
        let extensions = self.object(ctx, h, "extensions", false);
        if let Some(dmath) = extensions.and_then(|e| e.get("dmath"))
            && dmath.get("algorithm").and_then(Value::as_str) != Some(DMATH_ALGORITHM)
        {
            let message = format!(
                "must be \"{DMATH_ALGORITHM}\" (the only deterministic-math algorithm), {}",
                found(dmath.get("algorithm"))
            );
            self.at(ctx, "extensions.dmath.algorithm", message);
        }
        self.integrity_header(ctx, h);
        let game = self.game(ctx, h);
        let levels = self.levels(h, seed, seed_policy);
        let totals = self.totals(ctx, h);
        Some(ReplayView {
            version: self.version,
            session_id: session_id?,
            game: game?,
            seed: seed?,
            seed_policy: seed_policy?,
            perm: self.perm.clone(),
            levels: levels?,
            totals: totals?,
            visibility,
            timeout_window_ticks: self.timeout_window_ticks,
            signed: h.contains_key("seatKeys") && self.version.has_integrity_rules(),
            roster: self
                .version
                .has_integrity_rules()
                .then(|| h.get("seatKeys").filter(|_| h.contains_key("signaturePolicy")))
                .flatten()
                .and_then(|keys| crate::signing::Roster::from_value(keys).ok()),
            extensions: extensions.cloned(),
            grouped: false,
            records: Vec::new(),
        })
    }

    pub(super) fn perm(&mut self, ctx: Ctx<'_>, value: Option<&Value>) {
        let Some(Value::Array(items)) = value else {
            self.at(ctx, "perm", format!("must be an array (a bijection on 0..n-1), {}", found(value)));
            return;
        };
        let mut seen = vec![false; items.len()];
        let mut perm = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            match item.as_u64().filter(|&p| (p as usize) < items.len()) {
                Some(p) if !seen[p as usize] => {
                    seen[p as usize] = true;
                    perm.push(p as u32);
                }
                Some(p) => {
                    let message = format!("repeats {p}: perm must be a bijection on 0..{}", items.len());
                    self.at(ctx, &format!("perm[{i}]"), message);
                    return;
                }
                None => {
                    let message = format!(
                        "must be an integer in 0..{} (perm is a bijection on 0..n-1), {}",
                        items.len(),
                        found(Some(item))
                    );
                    self.at(ctx, &format!("perm[{i}]"), message);
                    return;
                }
            }
        }
        self.perm = perm;
        self.perm_valid = true;
    }

    pub(super) fn integrity_header(&mut self, ctx: Ctx<'_>, h: &Map) {
        for key in ["signaturePolicy", "timeoutPolicy"] {
            self.object(ctx, h, key, false);
        }
        if !self.version.has_integrity_rules() {
            return;
        }
        let has_keys = h.contains_key("seatKeys");
        if has_keys != h.contains_key("signaturePolicy") {
            let missing = if has_keys { "signaturePolicy" } else { "seatKeys" };
            self.at(ctx, missing, "seatKeys and signaturePolicy are declared together (1.2+)");
        }
        if let Some(Value::Object(policy)) = h.get("signaturePolicy") {
            let pctx = Ctx { line: 1, prefix: Prefix::Str("header.signaturePolicy") };
            self.keys(pctx, policy, |k| k == "scheme", "a signature policy");
            if policy.get("scheme").and_then(Value::as_str) != Some(SIGNATURE_SCHEME) {
                self.at(pctx, "scheme", format!("must be \"{SIGNATURE_SCHEME}\", {}", found(policy.get("scheme"))));
            }
        }
        if let Some(keys) = h.get("seatKeys") {
            self.seat_keys(keys);
        }
        if let Some(Value::Object(policy)) = h.get("timeoutPolicy") {
            self.has_timeout_policy = true;
            let pctx = Ctx { line: 1, prefix: Prefix::Str("header.timeoutPolicy") };
            self.keys(pctx, policy, |k| k == "mode" || k == "windowTicks", "a timeout policy");
            if policy.get("mode").and_then(Value::as_str) != Some("ticks") {
                self.at(pctx, "mode", format!("must be \"ticks\", {}", found(policy.get("mode"))));
            }
            match policy.get("windowTicks").and_then(Value::as_u64).filter(|&w| w > 0) {
                Some(w) => self.timeout_window_ticks = Some(w),
                None => {
                    let message = format!("must be a positive safe integer, {}", found(policy.get("windowTicks")));
                    self.at(pctx, "windowTicks", message);
                }
            }
        }
    }

    pub(super) fn seat_keys(&mut self, keys: &Value) {
        let ctx = Ctx { line: 1, prefix: Prefix::Str("header") };
        let Some(entries) = keys.as_array().filter(|a| !a.is_empty()) else {
            self.at(ctx, "seatKeys", format!("must be a non-empty array, {}", found(Some(keys))));
            return;
        };
        let mut ids: Vec<&str> = Vec::new();
        for (i, entry) in entries.iter().enumerate() {
            let field = format!("seatKeys[{i}]");
            let Some(map) = entry.as_object() else {
                self.at(ctx, &field, format!("must be an object, {}", found(Some(entry))));
                continue;
            };
            for key in map.keys() {
                if !matches!(key.as_str(), "id" | "publicKey" | "alg" | "signingTier") {
                    self.at(ctx, &format!("{field}.{key}"), "unknown property (not part of a seat key)");
                }
            }
            match map.get("id").and_then(Value::as_str) {
                Some(id) if is_valid_participant_id(id) => {
                    if ids.contains(&id) {
                        self.at(ctx, &format!("{field}.id"), format!("seat {id} has two keys"));
                    }
                    ids.push(id);
                }
                _ => {
                    let message = format!("must be a participant id, {}", found(map.get("id")));
                    self.at(ctx, &format!("{field}.id"), message);
                }
            }
            let key_ok = map
                .get("publicKey")
                .and_then(Value::as_str)
                .is_some_and(|k| gaos_json::base64_decode_len(k, 32).is_ok());
            if !key_ok {
                self.at(ctx, &format!("{field}.publicKey"), "must be a padded base64 32-byte Ed25519 public key");
            }
            if map.get("alg").and_then(Value::as_str) != Some("Ed25519") {
                self.at(ctx, &format!("{field}.alg"), format!("must be \"Ed25519\", {}", found(map.get("alg"))));
            }
            let tier_ok = map
                .get("signingTier")
                .and_then(Value::as_object)
                .is_some_and(|t| t.len() == 1 && t.get("N").and_then(Value::as_u64).is_some_and(|n| n >= 1));
            if !tier_ok {
                self.at(ctx, &format!("{field}.signingTier"), "must be {\"N\": positive integer}");
            }
        }
    }

    pub(super) fn game(&mut self, ctx: Ctx<'_>, h: &Map) -> Option<GameRef> {
        let game = self.object(ctx, h, "game", true)?;
        let gctx = Ctx { line: 1, prefix: Prefix::Str("header.game") };
        self.keys(gctx, game, |k| matches!(k, "id" | "version" | "adapter"), "a game reference");
        let id = self.string(gctx, game, "id", true);
        let version = self.string(gctx, game, "version", true);
        let adapter = self.object(gctx, game, "adapter", true).and_then(|adapter| {
            let actx = Ctx { line: 1, prefix: Prefix::Str("header.game.adapter") };
            self.keys(actx, adapter, |k| k == "id" || k == "version", "an adapter reference");
            let id = self.string(actx, adapter, "id", true);
            let version = self.string(actx, adapter, "version", true);
            Some(AdapterRef { id: id?, version: version? })
        });
        Some(GameRef { id: id?, version: version?, adapter: adapter? })
    }

    pub(super) fn levels(&mut self, h: &Map, seed: Option<u32>, policy: Option<SeedPolicy>) -> Option<Vec<LevelView>> {
        let ctx = Ctx { line: 1, prefix: Prefix::Str("header") };
        let Some(entries) = h.get("levels").and_then(Value::as_array).filter(|l| !l.is_empty()) else {
            self.at(ctx, "levels", format!("must be a non-empty array, {}", found(h.get("levels"))));
            return None;
        };
        self.level_count = entries.len();
        let mut levels = Vec::with_capacity(entries.len());
        let mut ids: StableHashMap<&str, usize> = new_map();
        let mut complete = true;
        for (index, entry) in entries.iter().enumerate() {
            let lctx = Ctx { line: 1, prefix: Prefix::Level(index) };
            let Some(map) = entry.as_object() else {
                self.at(lctx, "", format!("must be an object, {}", found(Some(entry))));
                complete = false;
                continue;
            };
            self.keys(
                lctx,
                map,
                |k| matches!(k, "index" | "id" | "version" | "seed" | "level" | "result" | "extensions"),
                "a level entry",
            );
            if map.get("index").and_then(Value::as_u64) != Some(index as u64) {
                let message = format!("must be {index} (its position in levels), {}", found(map.get("index")));
                self.at(lctx, "index", message);
            }
            let id = self.string(lctx, map, "id", true);
            if let Some(id) = map.get("id").and_then(Value::as_str).filter(|id| !id.is_empty())
                && let Some(first) = ids.insert(id, index)
            {
                self.at(lctx, "id", format!("level id {id:?} is already used by levels[{first}]"));
            }
            let version = map.get("version");
            if let Some(v) = version
                && !matches!(v, Value::String(_) | Value::Number(_))
            {
                self.at(lctx, "version", format!("must be a string or number, {}", found(Some(v))));
            }
            let level_seed = self.u32(lctx, map, "seed");
            if let (Some(level_seed), Some(run_seed), Some(SeedPolicy::RunLevelSeedV1)) = (level_seed, seed, policy) {
                match run_level_seed(run_seed, index as u64) {
                    Ok(expected) if expected == level_seed => {}
                    Ok(expected) => self.at(
                        lctx,
                        "seed",
                        format!(
                            "is {level_seed}, but seedPolicy gaos.run-level-seed.v1 derives \
                             runLevelSeed({run_seed}, {index}) = {expected}"
                        ),
                    ),
                    Err(e) => self.at(lctx, "seed", e),
                }
            }
            let level = map.get("level");
            if level.is_none() {
                self.at(lctx, "level", "is required (the reducer's level input)");
            }
            self.object(lctx, map, "extensions", false);
            let result = self.level_result(index, map);
            match (id, level_seed, level, result) {
                (Some(id), Some(seed), Some(level), Some(result)) => {
                    levels.push(LevelView { index, id, version: version.cloned(), seed, level: level.clone(), result })
                }
                _ => complete = false,
            }
        }
        complete.then_some(levels)
    }

    pub(super) fn level_result(&mut self, index: usize, map: &Map) -> Option<LevelResultView> {
        let lctx = Ctx { line: 1, prefix: Prefix::Level(index) };
        let result = self.object(lctx, map, "result", true)?;
        let field = |name: &str| format!("header.levels[{index}].result.{name}");
        for key in result.keys() {
            if !matches!(key.as_str(), "status" | "stars" | "actionsUsed" | "extensions") {
                self.problems.at(1, field(key), "unknown property (not part of a level result)");
            }
        }
        let status = match result.get("status").and_then(Value::as_str) {
            Some("won") => Some(LevelStatus::Won),
            Some("failed") => Some(LevelStatus::Failed),
            Some("ended") if self.version.allows_ended() => Some(LevelStatus::Ended),
            _ => {
                let allowed = if self.version.allows_ended() {
                    "won, failed or ended"
                } else {
                    "won or failed (ended needs formatVersion 1.3)"
                };
                let message = format!("must be {allowed}, {}", found(result.get("status")));
                self.problems.at(1, field("status"), message);
                None
            }
        };
        let stars = match result.get("stars") {
            Some(Value::Null) => Some(None),
            Some(Value::Number(x)) => Some(Some(*x)),
            other => {
                self.problems.at(1, field("stars"), format!("must be a number or null, {}", found(other)));
                None
            }
        };
        if status == Some(LevelStatus::Ended) && matches!(stars, Some(Some(_))) {
            self.problems.at(1, field("stars"), "must be null when the status is ended");
        }
        let actions_used = result.get("actionsUsed").and_then(Value::as_u64);
        if actions_used.is_none() {
            let message = format!("must be a non-negative safe integer, {}", found(result.get("actionsUsed")));
            self.problems.at(1, field("actionsUsed"), message);
        }
        if let Some(ext) = result.get("extensions")
            && !ext.is_object()
        {
            self.problems.at(1, field("extensions"), format!("must be a JSON object, {}", found(Some(ext))));
        }
        Some(LevelResultView { status: status?, stars: stars?, actions_used: actions_used? })
    }

    pub(super) fn totals(&mut self, ctx: Ctx<'_>, h: &Map) -> Option<TotalsView> {
        let totals = self.object(ctx, h, "totals", true)?;
        let tctx = Ctx { line: 1, prefix: Prefix::Str("header.totals") };
        self.keys(tctx, totals, |k| matches!(k, "totalStars" | "totalActionsUsed" | "extensions"), "the totals");
        let stars = totals.get("totalStars").and_then(Value::as_f64);
        if stars.is_none() {
            self.at(tctx, "totalStars", format!("must be a number, {}", found(totals.get("totalStars"))));
        }
        let actions = self.uint(tctx, totals, "totalActionsUsed", true);
        self.object(tctx, totals, "extensions", false);
        Some(TotalsView { total_stars: stars?, total_actions_used: actions? })
    }
}
