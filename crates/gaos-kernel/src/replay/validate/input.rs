//! One input object (of a resolution, or an action line): its keys, the
//! action fields, commit and reveal envelopes, targets and the RFC-010
//! integrity fields.

use super::{Ctx, InputFields, InputKind, Integrity, Validator, commit_envelope, found, is_salt, reveal_envelope};
use crate::action::{ActionTarget, COMMIT_SCHEME};
use crate::commitment::is_commitment_hash;
use crate::replay::format::{FormatVersion, describe};
use crate::replay::model::{ChainFields, InputDetails, InputView};
use gaos_json::{Map, Value};

impl Validator {
    /// One input object (resolution input, systemInput, or action line),
    /// its keys read in a single pass.
    pub(super) fn input(&mut self, ctx: Ctx<'_>, map: &Map, kind: InputKind) -> Option<InputView> {
        let mut f = InputFields::default();
        for (key, value) in map {
            let slot = match key.as_str() {
                "wireId" => &mut f.wire_id,
                "canonicalId" => &mut f.canonical_id,
                "payload" => &mut f.payload,
                "x" => &mut f.x,
                "y" => &mut f.y,
                "index" => &mut f.index,
                "boardId" => &mut f.board_id,
                "zoneId" => &mut f.zone_id,
                "seat" => &mut f.seat,
                "targets" => &mut f.targets,
                "commit" => &mut f.commit,
                "reveal" => &mut f.reveal,
                "verifiedPayload" => &mut f.verified_payload,
                "submissionId" => &mut f.integrity.submission_id,
                "canonicalCommand" => &mut f.integrity.canonical_command,
                "cursor" => &mut f.integrity.cursor,
                "clientTime" => &mut f.integrity.client_time,
                "prevChainHash" => &mut f.integrity.prev_chain_hash,
                "sig" => &mut f.integrity.sig,
                "hostTime" if kind != InputKind::Listed => &mut f.host_time,
                "kind" | "n" | "levelIndex" | "tick" if kind != InputKind::Listed => continue,
                _ => {
                    self.at(ctx, key, format!("unknown property (not part of {})", kind.what()));
                    continue;
                }
            };
            *slot = Some(value);
        }
        let wire = self.action_id(ctx, f.wire_id, "wireId");
        let canonical = self.action_id(ctx, f.canonical_id, "canonicalId");
        if let (Some(w), Some(c)) = (wire, canonical)
            && self.perm_valid
        {
            let mapped = self.perm[(w - 1) as usize] + 1;
            if mapped != c {
                let message =
                    format!("Action {w} maps to Action {mapped} under header.perm, but canonicalId is Action {c}");
                self.at(ctx, "wireId", message);
            }
        }
        let mut numbers = [None; 3];
        for ((slot, key), value) in numbers.iter_mut().zip(["x", "y", "index"]).zip([f.x, f.y, f.index]) {
            if let Some(v) = value {
                if v.as_i64().is_some() {
                    *slot = v.as_f64();
                } else {
                    self.at(ctx, key, format!("must be a safe integer, {}", found(Some(v))));
                }
            }
        }
        if let Some(v) = f.integrity.client_time
            && v.as_u64().is_none()
        {
            self.at(ctx, "clientTime", format!("must be a non-negative safe integer, {}", found(Some(v))));
        }
        if let Some(v) = f.host_time
            && v.as_u64().is_none()
        {
            self.at(ctx, "hostTime", format!("must be a non-negative safe integer, {}", found(Some(v))));
        }
        if self.version.has_integrity_rules() {
            self.integrity_fields(ctx, f.integrity);
        }
        let mut text = |key: &str, value: Option<&Value>| -> Option<Box<str>> {
            match value? {
                Value::String(s) if !s.is_empty() => Some(s.as_str().into()),
                other => {
                    let message = format!("must be a non-empty string, {}", found(Some(other)));
                    self.problems.at(ctx.line, ctx.field(key), message);
                    None
                }
            }
        };
        let board_id = text("boardId", f.board_id);
        let zone_id = text("zoneId", f.zone_id);
        let seat = text("seat", f.seat);
        if f.commit.is_some() && f.reveal.is_some() {
            self.at(ctx, "reveal", "an input either commits or reveals, not both");
        }
        if f.verified_payload.is_some() && f.reveal.is_none() {
            self.at(ctx, "verifiedPayload", "needs a reveal (it is the payload of a verified reveal)");
        }
        if let Some(commit) = f.commit {
            self.commit(ctx, commit);
        }
        if let Some(reveal) = f.reveal {
            self.reveal(ctx, "reveal", reveal, true);
        }
        let targets = f.targets.and_then(|targets| self.targets(ctx, targets));
        if kind == InputKind::Line && self.version == FormatVersion::V1_0 {
            let i = &f.integrity;
            for (key, value) in [
                ("commit", f.commit),
                ("reveal", f.reveal),
                ("verifiedPayload", f.verified_payload),
                ("submissionId", i.submission_id),
                ("canonicalCommand", i.canonical_command),
                ("cursor", i.cursor),
                ("clientTime", i.client_time),
                ("hostTime", f.host_time),
                ("prevChainHash", i.prev_chain_hash),
                ("sig", i.sig),
            ] {
                if value.is_some() {
                    self.at(ctx, key, "needs formatVersion 1.1 or later (1.0 has no commitment or submission fields)");
                }
            }
        }
        let rare = f.payload.is_some()
            || numbers[0].is_some()
            || numbers[1].is_some()
            || board_id.is_some()
            || zone_id.is_some()
            || targets.is_some()
            || f.commit.is_some()
            || f.reveal.is_some()
            || f.verified_payload.is_some();
        let details = rare.then(|| {
            Box::new(InputDetails {
                payload: f.payload.cloned(),
                x: numbers[0],
                y: numbers[1],
                board_id: board_id.map(String::from),
                zone_id: zone_id.map(String::from),
                targets,
                commit: f.commit.and_then(commit_envelope),
                reveal: f.reveal.and_then(reveal_envelope),
                verified_payload: f.verified_payload.cloned(),
            })
        });
        let boxed = |v: Option<&Value>| v.and_then(Value::as_str).map(Box::<str>::from);
        Some(InputView {
            wire_id: wire?,
            canonical_id: canonical?,
            seat,
            index: numbers[2],
            submission_id: boxed(f.integrity.submission_id),
            canonical_command: boxed(f.integrity.canonical_command),
            cursor: f.integrity.cursor.and_then(Value::as_u64),
            details,
            chain: ChainFields::read(f.integrity.client_time, f.integrity.prev_chain_hash, f.integrity.sig),
        })
    }

    pub(super) fn commit(&mut self, ctx: Ctx<'_>, value: &Value) {
        let Some(map) = value.as_object() else {
            self.at(ctx, "commit", format!("must be a commitment envelope object, {}", found(Some(value))));
            return;
        };
        for key in map.keys() {
            if !matches!(key.as_str(), "commitmentId" | "scheme" | "hash") {
                self.at(ctx, &format!("commit.{key}"), "unknown property (not part of a commitment envelope)");
            }
        }
        if map.get("commitmentId").and_then(Value::as_u32).is_none() {
            let message = format!("must be an unsigned 32-bit integer, {}", found(map.get("commitmentId")));
            self.at(ctx, "commit.commitmentId", message);
        }
        if map.get("scheme").and_then(Value::as_str) != Some(COMMIT_SCHEME) {
            self.at(ctx, "commit.scheme", format!("must be \"{COMMIT_SCHEME}\", {}", found(map.get("scheme"))));
        }
        if !map.get("hash").and_then(Value::as_str).is_some_and(is_commitment_hash) {
            self.at(ctx, "commit.hash", format!("must be 64 lowercase hex digits, {}", found(map.get("hash"))));
        }
    }

    pub(super) fn reveal(&mut self, ctx: Ctx<'_>, field: &str, value: &Value, with_id: bool) {
        let Some(map) = value.as_object() else {
            self.at(ctx, field, format!("must be a reveal object, {}", found(Some(value))));
            return;
        };
        for key in map.keys() {
            let known = matches!(key.as_str(), "salt" | "payload") || (with_id && key == "commitmentId");
            if !known {
                self.at(ctx, &format!("{field}.{key}"), "unknown property (not part of a reveal)");
            }
        }
        if with_id && map.get("commitmentId").and_then(Value::as_u32).is_none() {
            let message = format!("must be an unsigned 32-bit integer, {}", found(map.get("commitmentId")));
            self.at(ctx, &format!("{field}.commitmentId"), message);
        }
        if !map.get("salt").and_then(Value::as_str).is_some_and(is_salt) {
            let message = format!("must be 16..64 bytes of lowercase hex, {}", found(map.get("salt")));
            self.at(ctx, &format!("{field}.salt"), message);
        }
        if !map.contains_key("payload") {
            self.at(ctx, &format!("{field}.payload"), "is required");
        }
    }

    pub(super) fn targets(&mut self, ctx: Ctx<'_>, value: &Value) -> Option<Vec<ActionTarget>> {
        let Some(targets) = value.as_array() else {
            self.at(ctx, "targets", format!("must be an array, {}", found(Some(value))));
            return None;
        };
        let mut out = Vec::with_capacity(targets.len());
        for (i, target) in targets.iter().enumerate() {
            let parsed = target.as_object().and_then(|t| {
                let only_known = t.keys().all(|k| k == "container" || k == "coord");
                let container = t.get("container").and_then(Value::as_str).filter(|c| !c.is_empty())?;
                let coord = t.get("coord")?;
                only_known.then(|| ActionTarget { container: container.to_owned(), coord: coord.clone() })
            });
            match parsed {
                Some(target) => out.push(target),
                None => self.at(
                    ctx,
                    &format!("targets[{i}]"),
                    format!("must be {{\"container\": non-empty string, \"coord\": ...}}, {}", found(Some(target))),
                ),
            }
        }
        Some(out)
    }

    /// The 1.2+ integrity-field rules of an input or submission record.
    pub(super) fn integrity_fields(&mut self, ctx: Ctx<'_>, i: Integrity<'_>) {
        let identity =
            [("submissionId", i.submission_id), ("canonicalCommand", i.canonical_command), ("cursor", i.cursor)];
        let chain = [("clientTime", i.client_time), ("prevChainHash", i.prev_chain_hash)];
        let identity_count = identity.iter().filter(|(_, v)| v.is_some()).count();
        let chain_count = chain.iter().filter(|(_, v)| v.is_some()).count();
        if identity_count != 0 && identity_count != identity.len() {
            let missing = identity.iter().find(|(_, v)| v.is_none()).map_or("", |(k, _)| *k);
            self.at(
                ctx,
                missing,
                "is missing: submissionId, canonicalCommand and cursor come all together or not at all (1.2+)",
            );
        }
        if chain_count == 1 {
            let missing = chain.iter().find(|(_, v)| v.is_none()).map_or("", |(k, _)| *k);
            self.at(ctx, missing, "is missing: clientTime and prevChainHash come together or not at all (1.2+)");
        }
        if chain_count != 0 && identity_count != identity.len() {
            self.at(ctx, "clientTime", "chain fields need every submission identity field (1.2+)");
        }
        if i.sig.is_some() && (identity_count != identity.len() || chain_count != chain.len()) {
            self.at(ctx, "sig", "needs every submission identity and chain field (1.2+)");
        }
        if identity_count == identity.len() {
            if i.submission_id.and_then(Value::as_str).is_none_or(str::is_empty) {
                let message = format!("must be a non-empty string, {}", found(i.submission_id));
                self.at(ctx, "submissionId", message);
            }
            if i.cursor.and_then(Value::as_u64).is_none() {
                let message = format!("must be a non-negative safe integer, {}", found(i.cursor));
                self.at(ctx, "cursor", message);
            }
            match i.canonical_command {
                Some(Value::String(text)) => {
                    if let Err(message) = self.canonical_text(text) {
                        self.at(ctx, "canonicalCommand", message);
                    }
                }
                other => {
                    let message = format!("must be canonical JSON text, {}", found(other));
                    self.at(ctx, "canonicalCommand", message);
                }
            }
        }
        if chain_count == chain.len() {
            if i.client_time.and_then(Value::as_u64).is_none() {
                let message = format!("must be a non-negative safe integer, {}", found(i.client_time));
                self.at(ctx, "clientTime", message);
            }
            let ok =
                i.prev_chain_hash.and_then(Value::as_str).is_some_and(|h| gaos_json::base64_decode_len(h, 32).is_ok());
            if !ok {
                self.at(ctx, "prevChainHash", "must be padded base64 of 32 bytes");
            }
        }
        if let Some(sig) = i.sig
            && sig.as_str().is_none_or(|s| gaos_json::base64_decode_len(s, 64).is_err())
        {
            self.at(ctx, "sig", "must be padded base64 of a 64-byte Ed25519 signature");
        }
    }

    /// `text` must be the canonical JSON of what it parses to.
    pub(super) fn canonical_text(&mut self, text: &str) -> Result<(), String> {
        let value = gaos_json::parse(text).map_err(|e| format!("must be valid canonical JSON text: {e}"))?;
        self.buffer.clear();
        gaos_json::write_canonical(&value, &mut self.buffer);
        if self.buffer != text {
            return Err(format!(
                "must be canonical JSON bytes: {} is not canonical, its canonical form is {}",
                describe(&Value::from(text), 60),
                describe(&Value::from(self.buffer.as_str()), 60)
            ));
        }
        Ok(())
    }
}
