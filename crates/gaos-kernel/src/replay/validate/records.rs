//! Body lines: record numbering and levels, the once-per-level submission
//! identities, tick order, and each record kind.

use gaos_json::{Map, Value, canonical_json};

use super::{Ctx, InputKind, Integrity, Prefix, TIMEOUT_POLICY_REF, Validator, action_number, found};
use crate::action::COMMIT_SCHEME;
use crate::event::ResolutionCause;
use crate::replay::model::{
    ChainFields, CommitMismatchView, InteractionView, RecordBody, RecordView, ResolutionView, TimeoutView,
};

use super::keys::*;

impl Validator {
    /// `levelIndex` of a line: in range and never going back.
    pub(super) fn level_index(&mut self, ctx: Ctx<'_>, map: &Map) -> Option<usize> {
        let value = map.get("levelIndex");
        match value.and_then(Value::as_u64) {
            Some(i) if (i as usize) < self.level_count || self.level_count == 0 => {
                let i = i as usize;
                if i < self.previous_level {
                    let message = format!(
                        "is {i}, but an earlier line already belongs to level {}: lines never return to an earlier level",
                        self.previous_level
                    );
                    self.at(ctx, "levelIndex", message);
                    None
                } else {
                    self.previous_level = i;
                    Some(i)
                }
            }
            _ => {
                let message =
                    format!("must be a level index in 0..{} (header.levels), {}", self.level_count, found(value));
                self.at(ctx, "levelIndex", message);
                None
            }
        }
    }

    /// Register `(levelIndex, seat, submissionId)`; a reuse is a problem.
    pub(super) fn identity(
        &mut self,
        ctx: Ctx<'_>,
        field: &str,
        level: Option<usize>,
        seat: Option<&str>,
        id: Option<&str>,
    ) {
        let (Some(level), Some(seat), Some(id)) = (level, seat, id) else {
            return;
        };
        if let Some(first) = self.identities.insert(level, seat, id, ctx.line) {
            self.at(
                ctx,
                field,
                format!(
                    "{seat}/{id} was already used on line {first}: a submission id is used once per seat and level"
                ),
            );
        }
    }

    /// Ticks of resolutions (and action lines) never go back within a level.
    pub(super) fn tick_order(&mut self, ctx: Ctx<'_>, level: Option<usize>, tick: Option<u64>, what: &str) {
        if let (Some(level), Some(tick)) = (level, tick) {
            match self.last_tick {
                Some((l, t, line)) if l == level && tick < t => self.at(
                    ctx,
                    "tick",
                    format!(
                        "is {tick}, but the level's previous {what} (line {line}) is at tick {t}: ticks never go back"
                    ),
                ),
                _ => self.last_tick = Some((level, tick, ctx.line)),
            }
        }
    }

    /// Action `index` (on physical `line`) of a legacy action-only body.
    pub(crate) fn action_line(&mut self, index: usize, line: usize, map: &Map) -> Option<RecordView> {
        let ctx = Ctx { line, prefix: Prefix::Str("action") };
        let base = *self.action_base.get_or_insert_with(|| match map.get("n").and_then(Value::as_u64) {
            Some(b @ (0 | 1)) => Some(b),
            _ => None,
        });
        if map.get("kind").and_then(Value::as_str) != Some("action") {
            let message = if self.version.has_records() {
                format!("must be \"action\" in an action-only body, {}", found(map.get("kind")))
            } else {
                format!("must be \"action\": formatVersion 1.0 has only action lines, {}", found(map.get("kind")))
            };
            self.at(ctx, "kind", message);
        }
        match base {
            Some(base) if map.get("n").and_then(Value::as_u64) != Some(base + index as u64) => {
                let message =
                    format!("must be {} (contiguous numbering), {}", base + index as u64, found(map.get("n")));
                self.at(ctx, "n", message);
            }
            Some(_) => {}
            None if index == 0 => {
                let message = format!("action numbering must start at 0 or 1, {}", found(map.get("n")));
                self.at(ctx, "n", message);
            }
            None => {}
        }
        let level = self.level_index(ctx, map);
        let tick = self.uint(ctx, map, "tick", false);
        self.tick_order(ctx, level, tick, "action");
        let input = self.input(ctx, map, InputKind::Line)?;
        self.identity(ctx, "submissionId", level, input.seat(), input.submission_id());
        Some(RecordView {
            line,
            level_index: level?,
            body: RecordBody::Action(ResolutionView {
                tick,
                cause: ResolutionCause::Complete,
                inputs: vec![input],
                system_input: None,
            }),
        })
    }

    pub(super) fn action_id(&mut self, ctx: Ctx<'_>, value: Option<&Value>, key: &str) -> Option<u32> {
        match value.and_then(Value::as_str).and_then(action_number) {
            Some(n) if n as usize <= self.perm.len() || !self.perm_valid => u32::try_from(n).ok(),
            _ => {
                let message =
                    format!("must be \"Action N\" with N in 1..={} (header.perm), {}", self.perm.len(), found(value));
                self.at(ctx, key, message);
                None
            }
        }
    }

    /// Record `n = index` (on physical `line`) of a grouped body.
    pub(crate) fn record(&mut self, index: usize, line: usize, map: &Map) -> Option<RecordView> {
        let kind = map.get("kind").and_then(Value::as_str).filter(|k| RECORD_KINDS.contains(k));
        let ctx = Ctx { line, prefix: Prefix::Str(kind.unwrap_or("record")) };
        if map.get("n").and_then(Value::as_u64) != Some(index as u64) {
            let message =
                format!("must be {index} (records are numbered 0, 1, ... in file order), {}", found(map.get("n")));
            self.at(ctx, "n", message);
        }
        let level = self.level_index(ctx, map);
        if kind != Some("action") {
            // Action records check these with their other input fields.
            self.uint(ctx, map, "hostTime", false);
            self.uint(ctx, map, "clientTime", false);
        }
        let Some(kind) = kind else {
            let message = format!("must be one of {}, {}", RECORD_KINDS.join(", "), found(map.get("kind")));
            self.at(ctx, "kind", message);
            return None;
        };
        let body = match kind {
            "action" => self.action_record(ctx, map, level),
            "resolution" => self.resolution(ctx, map, level),
            "timeout" => self.timeout(ctx, map),
            "extension" => self.extension(ctx, map),
            "checkpoint" => self.checkpoint(ctx, map),
            "commit-mismatch" => self.commit_mismatch(ctx, map, level),
            "seat-signature" => self.seat_signature(ctx, map),
            "interest" => self.interest(ctx, map, level),
            _ => self.interaction(ctx, map, level),
        };
        Some(RecordView { line, level_index: level?, body: body? })
    }

    pub(super) fn action_record(&mut self, ctx: Ctx<'_>, map: &Map, level: Option<usize>) -> Option<RecordBody> {
        let tick = self.uint(ctx, map, "tick", false);
        self.tick_order(ctx, level, tick, "resolution");
        let input = self.input(ctx, map, InputKind::Record)?;
        self.identity(ctx, "submissionId", level, input.seat(), input.submission_id());
        Some(RecordBody::Action(ResolutionView {
            tick,
            cause: ResolutionCause::Complete,
            inputs: vec![input],
            system_input: None,
        }))
    }

    pub(super) fn resolution(&mut self, ctx: Ctx<'_>, map: &Map, level: Option<usize>) -> Option<RecordBody> {
        self.keys(ctx, map, is_resolution_key, "a resolution record");
        let tick = self.uint(ctx, map, "tick", true);
        self.tick_order(ctx, level, tick, "resolution");
        let cause = match map.get("cause").and_then(Value::as_str) {
            Some("complete") => Some(ResolutionCause::Complete),
            Some("timeout") => Some(ResolutionCause::Timeout),
            Some("tick") => Some(ResolutionCause::Tick),
            _ => {
                let message = format!("must be complete, timeout or tick, {}", found(map.get("cause")));
                self.at(ctx, "cause", message);
                None
            }
        };
        let mut inputs = Vec::new();
        let mut raw: &[Value] = &[];
        let mut inputs_ok = true;
        match map.get("inputs") {
            Some(Value::Array(items)) => {
                raw = items;
                inputs.reserve_exact(items.len());
                for (j, item) in items.iter().enumerate() {
                    let ictx = Ctx { line: ctx.line, prefix: Prefix::Input(j) };
                    let Some(input_map) = item.as_object() else {
                        self.at(ictx, "", format!("must be an input object, {}", found(Some(item))));
                        inputs_ok = false;
                        continue;
                    };
                    match self.input(ictx, input_map, InputKind::Listed) {
                        Some(input) => {
                            self.identity(ictx, "submissionId", level, input.seat(), input.submission_id());
                            inputs.push(input);
                        }
                        None => inputs_ok = false,
                    }
                }
            }
            other => {
                self.at(ctx, "inputs", format!("must be an array of inputs, {}", found(other)));
                inputs_ok = false;
            }
        }
        let mut system_input = None;
        match (cause, map.get("systemInput")) {
            (Some(ResolutionCause::Timeout), None) => {
                self.at(ctx, "systemInput", "is required when the cause is timeout (the timeout's system input)")
            }
            (Some(ResolutionCause::Timeout), Some(value)) => {
                let sctx = Ctx { line: ctx.line, prefix: Prefix::Str("resolution.systemInput") };
                match value.as_object() {
                    Some(system) => {
                        self.input(sctx, system, InputKind::Listed);
                        system_input = raw.iter().rposition(|input| input == value);
                        if system_input.is_none() {
                            self.at(ctx, "systemInput", "must equal one of the resolution's inputs (canonically)");
                        }
                    }
                    None => self.at(ctx, "systemInput", format!("must be an input object, {}", found(Some(value)))),
                }
            }
            (Some(_), Some(_)) => self.at(ctx, "systemInput", "is only allowed when the cause is timeout"),
            _ => {}
        }
        if !inputs_ok {
            return None;
        }
        Some(RecordBody::Resolution(ResolutionView { tick: Some(tick?), cause: cause?, inputs, system_input }))
    }

    pub(super) fn timeout(&mut self, ctx: Ctx<'_>, map: &Map) -> Option<RecordBody> {
        self.keys(ctx, map, is_timeout_key, "a timeout record");
        let tick = self.uint(ctx, map, "tick", true);
        let reason = self.string(ctx, map, "reason", true);
        let timeout_id = self.string(ctx, map, "timeoutId", true);
        let window_ref = self.uint(ctx, map, "windowRef", true);
        let participant_id = match map.get("participantId") {
            Some(Value::Null) => Some(None),
            Some(Value::String(s)) if !s.is_empty() => Some(Some(s.clone())),
            other => {
                let message = format!("must be null or a non-empty seat id, {}", found(other));
                self.at(ctx, "participantId", message);
                None
            }
        };
        let policy_ref = self.string(ctx, map, "timeoutPolicyRef", false);
        if self.version.has_integrity_rules() {
            if !self.has_timeout_policy {
                if policy_ref.is_some() {
                    self.at(ctx, "timeoutPolicyRef", "needs header.timeoutPolicy (1.2+)");
                }
            } else if policy_ref.as_deref() != Some(TIMEOUT_POLICY_REF) {
                let message = format!("must be \"{TIMEOUT_POLICY_REF}\" when the header declares a timeout policy");
                self.at(ctx, "timeoutPolicyRef", message);
            } else if let (Some(window), Some(tick), Some(window_ref)) = (self.timeout_window_ticks, tick, window_ref)
                && tick != window_ref.saturating_add(window)
            {
                let message =
                    format!("must be windowRef + windowTicks = {}, found {tick}", window_ref.saturating_add(window));
                self.at(ctx, "tick", message);
            }
        }
        Some(RecordBody::Timeout(TimeoutView {
            tick: tick?,
            timeout_id: timeout_id?,
            window_ref: window_ref?,
            participant_id: participant_id?,
            reason: reason?,
            timeout_policy_ref: policy_ref,
        }))
    }

    pub(super) fn extension(&mut self, ctx: Ctx<'_>, map: &Map) -> Option<RecordBody> {
        self.keys(ctx, map, is_extension_key, "an extension record");
        let lane = self.string(ctx, map, "lane", true);
        let record = self.object(ctx, map, "record", true);
        Some(RecordBody::Extension { lane: lane?, record: record?.clone() })
    }

    pub(super) fn checkpoint(&mut self, ctx: Ctx<'_>, map: &Map) -> Option<RecordBody> {
        self.keys(ctx, map, is_checkpoint_key, "a checkpoint record");
        let tick = self.uint(ctx, map, "tick", true);
        let digest = self.u32(ctx, map, "digest");
        Some(RecordBody::Checkpoint { tick: tick?, digest: digest? })
    }

    pub(super) fn commit_mismatch(&mut self, ctx: Ctx<'_>, map: &Map, level: Option<usize>) -> Option<RecordBody> {
        self.keys(ctx, map, is_commit_mismatch_key, "a commit-mismatch record");
        let participant_id = self.string(ctx, map, "participantId", true);
        let submission_id = self.string(ctx, map, "submissionId", true);
        self.identity(ctx, "submissionId", level, participant_id.as_deref(), submission_id.as_deref());
        if self.version.has_integrity_rules() {
            self.integrity_fields(ctx, Integrity::of(map));
        }
        let tick = self.uint(ctx, map, "tick", true);
        let commitment_id = self.u32(ctx, map, "commitmentId");
        if map.get("scheme").and_then(Value::as_str) != Some(COMMIT_SCHEME) {
            self.at(ctx, "scheme", format!("must be \"{COMMIT_SCHEME}\", {}", found(map.get("scheme"))));
        }
        let attempted = map.get("attemptedReveal");
        if let Some(value) = attempted {
            self.reveal(ctx, "attemptedReveal", value, false);
        }
        Some(RecordBody::CommitMismatch(CommitMismatchView {
            tick: tick?,
            participant_id: participant_id?,
            submission_id: submission_id?,
            commitment_id: commitment_id?,
            attempted_reveal: attempted
                .and_then(|a| Some((a.get("salt")?.as_str()?.to_owned(), a.get("payload")?.clone()))),
            canonical_command: map.get("canonicalCommand").and_then(Value::as_str).map(str::to_owned),
            cursor: map.get("cursor").and_then(Value::as_u64),
            chain: ChainFields::of(map),
        }))
    }

    pub(super) fn seat_signature(&mut self, ctx: Ctx<'_>, map: &Map) -> Option<RecordBody> {
        self.keys(ctx, map, is_seat_signature_key, "a seat-signature record");
        let tick = self.uint(ctx, map, "tick", true);
        let participant_id = self.string(ctx, map, "participantId", true);
        if self.version.has_integrity_rules() {
            self.uint(ctx, map, "clientTime", true);
            let chain = map.get("prevChainHash").and_then(Value::as_str);
            if chain.is_none_or(|h| gaos_json::base64_decode_len(h, 32).is_err()) {
                self.at(ctx, "prevChainHash", "must be padded base64 of 32 bytes (1.2+)");
            }
            let sig = map.get("sig").and_then(Value::as_str);
            if sig.is_none_or(|s| gaos_json::base64_decode_len(s, 64).is_err()) {
                self.at(ctx, "sig", "must be padded base64 of a 64-byte Ed25519 signature (1.2+)");
            }
        }
        Some(RecordBody::SeatSignature { tick: tick?, participant_id: participant_id?, chain: ChainFields::of(map) })
    }

    pub(super) fn interest(&mut self, ctx: Ctx<'_>, map: &Map, level: Option<usize>) -> Option<RecordBody> {
        self.keys(ctx, map, is_interest_key, "an interest record");
        let participant_id = self.string(ctx, map, "participantId", true);
        let submission_id = self.string(ctx, map, "submissionId", true);
        self.identity(ctx, "submissionId", level, participant_id.as_deref(), submission_id.as_deref());
        if !self.version.has_integrity_rules() {
            self.at(ctx, "kind", "interest records need formatVersion 1.2 or later");
        }
        self.integrity_fields(ctx, Integrity::of(map));
        for key in ["clientTime", "prevChainHash", "sig"] {
            if !map.contains_key(key) {
                self.at(ctx, key, "is required on interest records");
            }
        }
        let tick = self.uint(ctx, map, "tick", true);
        self.uint(ctx, map, "cursor", true);
        let scope = self.string(ctx, map, "scopeId", true);
        match map.get("declaration") {
            None => self.at(ctx, "declaration", "is required"),
            Some(declaration) => {
                let mut expected = Map::new();
                expected.insert("kind".into(), "interest".into());
                expected.insert("scopeId".into(), scope.unwrap_or_default().into());
                expected.insert("declaration".into(), declaration.clone());
                let expected = canonical_json(&Value::Object(expected));
                if map.get("canonicalCommand").and_then(Value::as_str) != Some(expected.as_str()) {
                    let message = "must be the canonical JSON of {kind: \"interest\", scopeId, declaration}";
                    self.at(ctx, "canonicalCommand", message);
                }
            }
        }
        Some(RecordBody::Interest {
            tick: tick?,
            participant_id: participant_id?,
            submission_id: submission_id?,
            canonical_command: map.get("canonicalCommand").and_then(Value::as_str).map(str::to_owned),
            cursor: map.get("cursor").and_then(Value::as_u64),
            chain: ChainFields::of(map),
        })
    }

    pub(super) fn interaction(&mut self, ctx: Ctx<'_>, map: &Map, level: Option<usize>) -> Option<RecordBody> {
        self.keys(ctx, map, is_interaction_key, "an interaction record");
        let participant_id = self.string(ctx, map, "participantId", true);
        let submission_id = self.string(ctx, map, "submissionId", true);
        self.identity(ctx, "submissionId", level, participant_id.as_deref(), submission_id.as_deref());
        if !self.version.allows_interactions() {
            self.at(ctx, "kind", "interaction records need formatVersion 1.4");
        }
        let tick = self.uint(ctx, map, "tick", true);
        let cursor = self.uint(ctx, map, "cursor", true);
        let command = map.get("command");
        match command {
            None => self.at(ctx, "command", "is required"),
            Some(command) => {
                if map.get("canonicalCommand").and_then(Value::as_str) != Some(canonical_json(command).as_str()) {
                    self.at(ctx, "canonicalCommand", "must be the canonical JSON of command");
                }
            }
        }
        if self.version.has_integrity_rules() {
            self.integrity_fields(ctx, Integrity::of(map));
        }
        Some(RecordBody::Interaction(InteractionView {
            tick: tick?,
            cursor: cursor?,
            participant_id: participant_id?,
            submission_id: submission_id?,
            command: command?.clone(),
            canonical_command: map.get("canonicalCommand").and_then(Value::as_str).map(str::to_owned),
            chain: ChainFields::of(map),
        }))
    }
}
