//! The property sets of the header and every record kind (strict: any other
//! key is a problem).

/// Kinds a record may have.
pub(super) const RECORD_KINDS: &[&str] = &[
    "action",
    "resolution",
    "timeout",
    "extension",
    "interest",
    "interaction",
    "checkpoint",
    "commit-mismatch",
    "seat-signature",
];

pub(super) fn is_header_key(k: &str) -> bool {
    matches!(
        k,
        "kind"
            | "format"
            | "formatVersion"
            | "sessionId"
            | "game"
            | "seed"
            | "seedPolicy"
            | "perm"
            | "levels"
            | "totals"
            | "visibility"
            | "seatKeys"
            | "signaturePolicy"
            | "timeoutPolicy"
            | "extensions"
    )
}

pub(super) fn is_common_key(k: &str) -> bool {
    matches!(k, "kind" | "n" | "levelIndex" | "hostTime")
}

pub(super) fn is_resolution_key(k: &str) -> bool {
    is_common_key(k) || matches!(k, "tick" | "inputs" | "cause" | "systemInput")
}

pub(super) fn is_timeout_key(k: &str) -> bool {
    is_common_key(k)
        || matches!(k, "tick" | "timeoutId" | "windowRef" | "participantId" | "reason" | "timeoutPolicyRef")
}

pub(super) fn is_extension_key(k: &str) -> bool {
    is_common_key(k) || matches!(k, "lane" | "record")
}

pub(super) fn is_checkpoint_key(k: &str) -> bool {
    is_common_key(k) || matches!(k, "tick" | "digest")
}

pub(super) fn is_commit_mismatch_key(k: &str) -> bool {
    is_common_key(k)
        || matches!(
            k,
            "tick"
                | "participantId"
                | "submissionId"
                | "commitmentId"
                | "scheme"
                | "attemptedReveal"
                | "canonicalCommand"
                | "cursor"
                | "clientTime"
                | "prevChainHash"
                | "sig"
        )
}

pub(super) fn is_seat_signature_key(k: &str) -> bool {
    is_common_key(k) || matches!(k, "tick" | "participantId" | "clientTime" | "prevChainHash" | "sig")
}

pub(super) fn is_interest_key(k: &str) -> bool {
    is_common_key(k)
        || matches!(
            k,
            "tick"
                | "cursor"
                | "participantId"
                | "submissionId"
                | "scopeId"
                | "declaration"
                | "canonicalCommand"
                | "clientTime"
                | "prevChainHash"
                | "sig"
        )
}

pub(super) fn is_interaction_key(k: &str) -> bool {
    is_common_key(k)
        || matches!(
            k,
            "tick"
                | "cursor"
                | "participantId"
                | "submissionId"
                | "command"
                | "canonicalCommand"
                | "clientTime"
                | "prevChainHash"
                | "sig"
        )
}
