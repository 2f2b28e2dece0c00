//! The extension keys of the session contract: the RFC-018 `gaos.session.*`
//! keys envelopes and answers carry, and the `gaos.host.*` keys of the
//! create and attach answers (credentials, controller lease). Hosts write
//! them, handles and clients read them: one definition for both.

/// `gaos.session.episode`: authoritative episode identity (`{id, index?}`).
pub const EXT_EPISODE: &str = "gaos.session.episode";
/// `gaos.session.finalization`: `{status: "terminal" | "finalized", ...}`.
pub const EXT_FINALIZATION: &str = "gaos.session.finalization";
/// `gaos.session.attach`: `{receiptDigest, sequence}` on attach answers.
pub const EXT_ATTACH: &str = "gaos.session.attach";
/// `gaos.session.policy`: the digest of the pinned policy.
pub const EXT_POLICY: &str = "gaos.session.policy";
/// `gaos.host.credentials`: the seat and spectator tokens of a create answer.
pub const EXT_CREDENTIALS: &str = "gaos.host.credentials";
/// `gaos.host.lease`: the controller lease a create or attach answer grants.
pub const EXT_LEASE: &str = "gaos.host.lease";
