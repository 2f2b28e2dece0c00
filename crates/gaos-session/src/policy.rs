//! `SessionPolicy` and `SessionControllerIdentity` (lifecycle spec §2): what a
//! host validates and pins when a session is created.

use gaos_json::{Map, Value, canonical_json, canonical_sha256_hex};
use serde::{Deserialize, Serialize};

/// Controller kinds RFC-018 names.
pub const CONTROLLER_KINDS: [&str; 5] = ["human", "provider", "cli", "local-agent", "mixed"];

/// `SessionControllerIdentity.kind`: what sort of controller drives a seat.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ControllerKind {
    /// A person at a UI or terminal.
    Human,
    /// A hosted model provider (an LLM API).
    Provider,
    /// An agent CLI process.
    Cli,
    /// An agent running in the caller's process (random, scripted, ...).
    LocalAgent,
    /// Several of the above (e.g. Coach play: a model with human takeover).
    Mixed,
}

impl ControllerKind {
    /// The wire name (`human`, `provider`, `cli`, `local-agent`, `mixed`).
    pub fn as_str(self) -> &'static str {
        match self {
            ControllerKind::Human => "human",
            ControllerKind::Provider => "provider",
            ControllerKind::Cli => "cli",
            ControllerKind::LocalAgent => "local-agent",
            ControllerKind::Mixed => "mixed",
        }
    }

    /// The kind with wire name `text`.
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "human" => ControllerKind::Human,
            "provider" => ControllerKind::Provider,
            "cli" => ControllerKind::Cli,
            "local-agent" => ControllerKind::LocalAgent,
            "mixed" => ControllerKind::Mixed,
            _ => return None,
        })
    }
}

/// `SessionControllerIdentity` (`{kind, id, provider?, model?, version?}`,
/// no other keys): who drives a seat. A host pins it at create (or at the
/// first attach that names one); a later attach may prove it matches but
/// never replaces it.
///
/// ```
/// use gaos_session::policy::{ControllerKind, SessionControllerIdentity};
///
/// let bot = SessionControllerIdentity::new(ControllerKind::Provider, "bot-1").with_model("gpt-x");
/// let value = bot.to_value();
/// assert_eq!(gaos_json::canonical_json(&value), r#"{"id":"bot-1","kind":"provider","model":"gpt-x"}"#);
/// assert_eq!(SessionControllerIdentity::from_value(&value), Ok(bot));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct SessionControllerIdentity {
    /// What sort of controller this is.
    pub kind: ControllerKind,
    /// A stable, non-blank id of the controller.
    pub id: String,
    /// The provider (e.g. an API vendor), when it matters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// The model name, for model-driven controllers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The controller's version.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

impl SessionControllerIdentity {
    /// An identity with only `kind` and `id`.
    pub fn new(kind: ControllerKind, id: impl Into<String>) -> Self {
        SessionControllerIdentity { kind, id: id.into(), provider: None, model: None, version: None }
    }

    /// Set `provider`.
    pub fn with_provider(mut self, provider: impl Into<String>) -> Self {
        self.provider = Some(provider.into());
        self
    }

    /// Set `model`.
    pub fn with_model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into());
        self
    }

    /// Set `version`.
    pub fn with_version(mut self, version: impl Into<String>) -> Self {
        self.version = Some(version.into());
        self
    }

    /// The JSON object (absent fields omitted).
    pub fn to_value(&self) -> Value {
        gaos_json::to_value(self).expect("strings are always JSON values")
    }

    /// Read and validate an identity object (see [`validate_controller`]).
    pub fn from_value(value: &Value) -> Result<Self, String> {
        validate_controller(value, "controller")?;
        let text = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
        let kind = text("kind").and_then(|k| ControllerKind::parse(&k)).ok_or("controller.kind is invalid")?;
        Ok(SessionControllerIdentity {
            kind,
            id: text("id").ok_or("controller.id is required")?,
            provider: text("provider"),
            model: text("model"),
            version: text("version"),
        })
    }
}

fn object<'a>(value: &'a Value, path: &str) -> Result<&'a Map, String> {
    value.as_object().ok_or_else(|| format!("{path} must be an object"))
}

fn only_keys(map: &Map, path: &str, allowed: &[&str]) -> Result<(), String> {
    match map.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(key) => Err(format!("{path} has an unknown field {key:?} (allowed: {})", allowed.join(", "))),
        None => Ok(()),
    }
}

fn non_blank<'a>(map: &'a Map, key: &str, path: &str) -> Result<&'a str, String> {
    map.get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.trim().is_empty())
        .ok_or_else(|| format!("{path}.{key} must be a non-blank string"))
}

fn kind<'a>(map: &'a Map, path: &str) -> Result<&'a str, String> {
    map.get("kind").and_then(Value::as_str).ok_or_else(|| format!("{path}.kind must be a string"))
}

/// Validate a `SessionControllerIdentity` (`{kind, id, provider?, model?, version?}`).
pub fn validate_controller(value: &Value, path: &str) -> Result<(), String> {
    let map = object(value, path)?;
    only_keys(map, path, &["kind", "id", "provider", "model", "version"])?;
    let kind = kind(map, path)?;
    if !CONTROLLER_KINDS.contains(&kind) {
        return Err(format!("{path}.kind must be one of {}", CONTROLLER_KINDS.join(", ")));
    }
    non_blank(map, "id", path)?;
    for key in ["provider", "model", "version"] {
        if map.contains_key(key) {
            non_blank(map, key, path)?;
        }
    }
    Ok(())
}

/// `policy.evaluation.kind`: how a session's result is evaluated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EvaluationKind {
    /// Not evaluated.
    None,
    /// Practice evaluation (an optional evaluator).
    Practice,
    /// An official benchmark evaluation (benchmark id, version, manifest digest).
    Official,
}

impl EvaluationKind {
    /// The wire name (`none`, `practice`, `official`).
    pub fn as_str(self) -> &'static str {
        match self {
            EvaluationKind::None => "none",
            EvaluationKind::Practice => "practice",
            EvaluationKind::Official => "official",
        }
    }

    /// The kind with wire name `text`.
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "none" => EvaluationKind::None,
            "practice" => EvaluationKind::Practice,
            "official" => EvaluationKind::Official,
            _ => return None,
        })
    }
}

/// `policy.evidence.kind`: what evidence a finalized session keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EvidenceKind {
    /// No evidence.
    None,
    /// The replay.
    Replay,
    /// The replay plus verification material (attach receipts, verifier reference).
    Verification,
}

impl EvidenceKind {
    /// The wire name (`none`, `replay`, `verification`).
    pub fn as_str(self) -> &'static str {
        match self {
            EvidenceKind::None => "none",
            EvidenceKind::Replay => "replay",
            EvidenceKind::Verification => "verification",
        }
    }

    /// The kind with wire name `text`.
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "none" => EvidenceKind::None,
            "replay" => EvidenceKind::Replay,
            "verification" => EvidenceKind::Verification,
            _ => return None,
        })
    }
}

/// `policy.evaluation` as a type (`{kind:"none"} | {kind:"practice", evaluator?} |
/// {kind:"official", benchmarkId, benchmarkVersion, manifestDigest}`): the one
/// Rust shape of it, read from a validated [`SessionPolicy`] with
/// [`SessionPolicy::evaluation_policy`] and built into one with
/// [`SessionPolicy::with_evaluation`].
///
/// ```
/// use gaos_session::policy::{EvaluationPolicy, SessionPolicy};
///
/// let official = EvaluationPolicy::official("maze-bench", "1", "2c82…");
/// let policy = SessionPolicy::host_default().with_evaluation(&official);
/// assert_eq!(policy.evaluation_policy(), official);
/// assert_eq!(policy.evaluation_kind(), "official");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum EvaluationPolicy {
    /// Not evaluated.
    None,
    /// Practice: scores may be computed but are never publishable.
    Practice {
        /// The evaluator the product names, if any.
        #[serde(skip_serializing_if = "Option::is_none", default)]
        evaluator: Option<String>,
    },
    /// Official: the score is bound to one benchmark manifest by its digest.
    Official(OfficialEvaluation),
}

/// The fields of `{kind:"official", ...}`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OfficialEvaluation {
    /// `benchmark.id` of the manifest.
    pub benchmark_id: String,
    /// `benchmark.version` of the manifest.
    pub benchmark_version: String,
    /// `sha256hex(canonicalJson(manifest))`.
    pub manifest_digest: String,
}

impl EvaluationPolicy {
    /// `{kind:"official", benchmarkId, benchmarkVersion, manifestDigest}`.
    pub fn official(benchmark_id: &str, benchmark_version: &str, manifest_digest: &str) -> Self {
        EvaluationPolicy::Official(OfficialEvaluation {
            benchmark_id: benchmark_id.to_owned(),
            benchmark_version: benchmark_version.to_owned(),
            manifest_digest: manifest_digest.to_owned(),
        })
    }

    /// The kind.
    pub fn kind(&self) -> EvaluationKind {
        match self {
            EvaluationPolicy::None => EvaluationKind::None,
            EvaluationPolicy::Practice { .. } => EvaluationKind::Practice,
            EvaluationPolicy::Official(_) => EvaluationKind::Official,
        }
    }

    /// The JSON object.
    pub fn to_value(&self) -> Value {
        gaos_json::to_value(self).expect("strings are always JSON values")
    }
}

/// `policy.evidence` as a type (`{kind:"none"} | {kind:"replay"} |
/// {kind:"verification", attachReceipts?, verifierReference?}`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum EvidencePolicy {
    /// No evidence.
    None,
    /// The replay.
    Replay,
    /// The replay plus verification material.
    Verification {
        /// Issue attach receipts.
        #[serde(rename = "attachReceipts", skip_serializing_if = "Option::is_none", default)]
        attach_receipts: Option<bool>,
        /// The verifier the result names (echoed in an official result).
        #[serde(rename = "verifierReference", skip_serializing_if = "Option::is_none", default)]
        verifier_reference: Option<Value>,
    },
}

/// `gaos.session.policy`, the one shape the host sends it in (create answers
/// and finalize results alike): `{digest}`, the SHA-256 hex of the pinned
/// policy's canonical JSON.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyExtension {
    /// [`SessionPolicy::digest`].
    pub digest: String,
}

impl PolicyExtension {
    /// The extension of `policy`.
    pub fn of(policy: &SessionPolicy) -> Self {
        PolicyExtension { digest: policy.digest() }
    }

    /// The JSON object.
    pub fn to_value(&self) -> Value {
        gaos_json::to_value(self).expect("strings are always JSON values")
    }
}

/// A validated session policy. The canonical JSON is what the host pins.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionPolicy {
    value: Value,
}

impl SessionPolicy {
    /// The policy a host applies when a create request carries none: no
    /// evaluation, attachable, replay evidence, no publication.
    pub fn host_default() -> Self {
        let text = r#"{"durability":{"attachable":true},"evaluation":{"kind":"none"},"evidence":{"kind":"replay"},"publication":{"kind":"none"}}"#;
        SessionPolicy { value: gaos_json::parse(text).expect("the default policy is valid JSON") }
    }

    /// Validate a policy object.
    pub fn from_value(value: &Value) -> Result<Self, String> {
        let map = object(value, "policy")?;
        only_keys(map, "policy", &["evaluation", "durability", "evidence", "publication", "controller", "extensions"])?;
        let field = |key: &str| map.get(key).ok_or_else(|| format!("policy.{key} is required"));

        let evaluation = object(field("evaluation")?, "policy.evaluation")?;
        let evaluation_kind = kind(evaluation, "policy.evaluation")?;
        match EvaluationKind::parse(evaluation_kind) {
            Some(EvaluationKind::None) => only_keys(evaluation, "policy.evaluation", &["kind"])?,
            Some(EvaluationKind::Practice) => only_keys(evaluation, "policy.evaluation", &["kind", "evaluator"])?,
            Some(EvaluationKind::Official) => {
                only_keys(
                    evaluation,
                    "policy.evaluation",
                    &["kind", "benchmarkId", "benchmarkVersion", "manifestDigest"],
                )?;
                non_blank(evaluation, "benchmarkId", "policy.evaluation")?;
                non_blank(evaluation, "benchmarkVersion", "policy.evaluation")?;
                non_blank(evaluation, "manifestDigest", "policy.evaluation")?;
            }
            None => {
                return Err(format!("policy.evaluation.kind {evaluation_kind:?} is not none, practice or official"));
            }
        }

        let durability = object(field("durability")?, "policy.durability")?;
        only_keys(durability, "policy.durability", &["attachable", "retention"])?;
        if !matches!(durability.get("attachable"), Some(Value::Bool(_))) {
            return Err("policy.durability.attachable must be a boolean".into());
        }
        if let Some(retention) = durability.get("retention") {
            let retention = object(retention, "policy.durability.retention")?;
            only_keys(retention, "policy.durability.retention", &["kind", "policyId"])?;
            if kind(retention, "policy.durability.retention")? != "host-policy" {
                return Err("policy.durability.retention.kind must be host-policy".into());
            }
            non_blank(retention, "policyId", "policy.durability.retention")?;
        }

        let evidence = object(field("evidence")?, "policy.evidence")?;
        let evidence_kind = kind(evidence, "policy.evidence")?;
        match EvidenceKind::parse(evidence_kind) {
            Some(EvidenceKind::None | EvidenceKind::Replay) => only_keys(evidence, "policy.evidence", &["kind"])?,
            Some(EvidenceKind::Verification) => {
                only_keys(evidence, "policy.evidence", &["kind", "attachReceipts", "verifierReference"])?;
                if let Some(v) = evidence.get("attachReceipts")
                    && !matches!(v, Value::Bool(_))
                {
                    return Err("policy.evidence.attachReceipts must be a boolean".into());
                }
                if let Some(v) = evidence.get("verifierReference") {
                    object(v, "policy.evidence.verifierReference")?;
                }
            }
            None => {
                return Err(format!("policy.evidence.kind {evidence_kind:?} is not none, replay or verification"));
            }
        }

        let publication = object(field("publication")?, "policy.publication")?;
        match kind(publication, "policy.publication")? {
            "none" => only_keys(publication, "policy.publication", &["kind"])?,
            "eligible" => {
                only_keys(publication, "policy.publication", &["kind", "policyId", "policyVersion"])?;
                non_blank(publication, "policyId", "policy.publication")?;
                non_blank(publication, "policyVersion", "policy.publication")?;
            }
            other => return Err(format!("policy.publication.kind {other:?} is not none or eligible")),
        }

        if let Some(controller) = map.get("controller") {
            validate_controller(controller, "policy.controller")?;
        }
        if let Some(extensions) = map.get("extensions") {
            object(extensions, "policy.extensions")?;
        }
        Ok(SessionPolicy { value: value.clone() })
    }

    /// The policy as JSON.
    pub fn value(&self) -> &Value {
        &self.value
    }

    /// The same policy with `controller` set (or replaced). Use it before
    /// create: a host pins the controller and never lets it change later.
    pub fn with_controller(&self, controller: &SessionControllerIdentity) -> Self {
        let mut value = self.value.clone();
        if let Some(map) = value.as_object_mut() {
            map.insert("controller".into(), controller.to_value());
        }
        SessionPolicy { value }
    }

    /// The same policy with `evaluation` replaced (validated again, so the
    /// result is always a valid policy).
    pub fn with_evaluation(&self, evaluation: &EvaluationPolicy) -> Self {
        let mut value = self.value.clone();
        if let Some(map) = value.as_object_mut() {
            map.insert("evaluation".into(), evaluation.to_value());
        }
        SessionPolicy::from_value(&value).unwrap_or_else(|_| self.clone())
    }

    /// `evaluation`, typed.
    pub fn evaluation_policy(&self) -> EvaluationPolicy {
        self.section("evaluation").and_then(|e| gaos_json::from_value(e.clone()).ok()).unwrap_or(EvaluationPolicy::None)
    }

    /// `evaluation` when it is official.
    pub fn official_evaluation(&self) -> Option<OfficialEvaluation> {
        match self.evaluation_policy() {
            EvaluationPolicy::Official(official) => Some(official),
            _ => None,
        }
    }

    /// `evidence`, typed.
    pub fn evidence_policy(&self) -> EvidencePolicy {
        self.section("evidence").and_then(|e| gaos_json::from_value(e.clone()).ok()).unwrap_or(EvidencePolicy::None)
    }

    /// `evidence.verifierReference`, when the policy names one.
    pub fn verifier_reference(&self) -> Option<Value> {
        match self.evidence_policy() {
            EvidencePolicy::Verification { verifier_reference, .. } => verifier_reference,
            _ => None,
        }
    }

    /// The policy's canonical JSON (what the host pins).
    pub fn canonical(&self) -> String {
        canonical_json(&self.value)
    }

    /// SHA-256 hex of the canonical policy (echoed as `gaos.session.policy`).
    pub fn digest(&self) -> String {
        canonical_sha256_hex(&self.value)
    }

    fn section(&self, key: &str) -> Option<&Value> {
        self.value.get(key)
    }

    /// `evaluation.kind`.
    pub fn evaluation(&self) -> EvaluationKind {
        self.section("evaluation")
            .and_then(|e| e.get("kind"))
            .and_then(Value::as_str)
            .and_then(EvaluationKind::parse)
            .unwrap_or(EvaluationKind::None)
    }

    /// `evaluation.kind`'s wire name: `none`, `practice` or `official`.
    pub fn evaluation_kind(&self) -> &'static str {
        self.evaluation().as_str()
    }

    /// `durability.attachable`.
    pub fn attachable(&self) -> bool {
        self.section("durability").and_then(|d| d.get("attachable")).and_then(Value::as_bool).unwrap_or(true)
    }

    /// `evidence.kind`.
    pub fn evidence(&self) -> EvidenceKind {
        self.section("evidence")
            .and_then(|e| e.get("kind"))
            .and_then(Value::as_str)
            .and_then(EvidenceKind::parse)
            .unwrap_or(EvidenceKind::None)
    }

    /// `evidence.kind`'s wire name: `none`, `replay` or `verification`.
    pub fn evidence_kind(&self) -> &'static str {
        self.evidence().as_str()
    }

    /// `evidence: {kind: "verification", attachReceipts: true}`.
    pub fn wants_attach_receipts(&self) -> bool {
        self.evidence() == EvidenceKind::Verification
            && self.section("evidence").and_then(|e| e.get("attachReceipts")).and_then(Value::as_bool) == Some(true)
    }

    /// Whether finalize results include the replay.
    pub fn includes_replay(&self) -> bool {
        matches!(self.evidence(), EvidenceKind::Replay | EvidenceKind::Verification)
    }

    /// `controller`, as JSON.
    pub fn controller(&self) -> Option<&Value> {
        self.section("controller")
    }

    /// `controller`, typed (`None` when absent).
    pub fn controller_identity(&self) -> Option<SessionControllerIdentity> {
        self.controller().and_then(|c| SessionControllerIdentity::from_value(c).ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(text: &str) -> Result<SessionPolicy, String> {
        SessionPolicy::from_value(&gaos_json::parse(text).expect("test JSON"))
    }

    #[test]
    fn accepts_the_shapes_of_rfc_018() {
        let p = policy(
            r#"{"evaluation":{"kind":"official","benchmarkId":"b","benchmarkVersion":"1","manifestDigest":"d"},
                "durability":{"attachable":true,"retention":{"kind":"host-policy","policyId":"keep"}},
                "evidence":{"kind":"verification","attachReceipts":true,"verifierReference":{"x":1}},
                "publication":{"kind":"eligible","policyId":"p","policyVersion":"1"},
                "controller":{"kind":"local-agent","id":"bot","model":"m"},"extensions":{"x.y":1}}"#,
        )
        .unwrap();
        assert!(p.wants_attach_receipts());
        assert_eq!(p.evaluation_kind(), "official");
        assert_eq!((p.evaluation(), p.evidence()), (EvaluationKind::Official, EvidenceKind::Verification));
        assert!(SessionPolicy::host_default().includes_replay());
    }

    #[test]
    fn refuses_malformed_policies_with_the_field_named() {
        let base = r#""durability":{"attachable":true},"evidence":{"kind":"none"},"publication":{"kind":"none"}"#;
        let cases = [
            (format!(r#"{{"evaluation":{{"kind":"bogus"}},{base}}}"#), "policy.evaluation.kind"),
            (format!(r#"{{"evaluation":{{"kind":"none","x":1}},{base}}}"#), "unknown field \"x\""),
            (format!(r#"{{{base}}}"#), "policy.evaluation is required"),
            (
                format!(r#"{{"evaluation":{{"kind":"none"}},{base},"controller":{{"kind":"robot","id":"a"}}}}"#),
                "policy.controller.kind",
            ),
            (
                format!(r#"{{"evaluation":{{"kind":"none"}},{base},"controller":{{"kind":"cli","id":" "}}}}"#),
                "policy.controller.id",
            ),
            (format!(r#"{{"evaluation":{{"kind":"none"}},{base},"extra":1}}"#), "unknown field \"extra\""),
        ];
        for (text, needle) in cases {
            let err = policy(&text).unwrap_err();
            assert!(err.contains(needle), "{err:?} should mention {needle:?}");
        }
    }

    #[test]
    fn the_typed_sections_round_trip_the_spec_shapes() {
        let evaluations = [
            r#"{"kind":"none"}"#,
            r#"{"kind":"practice"}"#,
            r#"{"evaluator":"coach","kind":"practice"}"#,
            r#"{"benchmarkId":"b","benchmarkVersion":"1","kind":"official","manifestDigest":"d"}"#,
        ];
        for text in evaluations {
            let typed: EvaluationPolicy = gaos_json::from_value(gaos_json::parse(text).unwrap()).unwrap();
            assert_eq!(canonical_json(&typed.to_value()), text);
            let policy = SessionPolicy::host_default().with_evaluation(&typed);
            assert_eq!(policy.evaluation_policy(), typed);
            assert_eq!(canonical_json(policy.value().get("evaluation").unwrap()), text);
        }
        let evidence = [
            r#"{"kind":"none"}"#,
            r#"{"kind":"replay"}"#,
            r#"{"kind":"verification"}"#,
            r#"{"attachReceipts":true,"kind":"verification","verifierReference":{"uri":"v"}}"#,
        ];
        for text in evidence {
            let typed: EvidencePolicy = gaos_json::from_value(gaos_json::parse(text).unwrap()).unwrap();
            assert_eq!(canonical_json(&gaos_json::to_value(&typed).unwrap()), text);
        }
        let ext = PolicyExtension::of(&SessionPolicy::host_default());
        let back: PolicyExtension = gaos_json::from_value(ext.to_value()).unwrap();
        assert_eq!(back, ext);
        assert_eq!(
            canonical_json(&ext.to_value()),
            format!(r#"{{"digest":"{}"}}"#, SessionPolicy::host_default().digest())
        );
        // The typed reading refuses what validation refuses: an unknown key.
        let bad = gaos_json::parse(
            r#"{"kind":"official","benchmarkId":"b","benchmarkVersion":"1","manifestDigest":"d","x":1}"#,
        );
        assert!(gaos_json::from_value::<EvaluationPolicy>(bad.unwrap()).is_err());
        let p = policy(r#"{"evaluation":{"kind":"none"},"durability":{"attachable":true},"evidence":{"kind":"verification","verifierReference":{"uri":"v"}},"publication":{"kind":"none"}}"#).unwrap();
        assert_eq!(p.verifier_reference().map(|v| canonical_json(&v)), Some(r#"{"uri":"v"}"#.to_owned()));
        assert_eq!(p.official_evaluation(), None);
    }
}
