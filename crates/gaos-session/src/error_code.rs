//! [`ErrorCode`]: the stable `code` of every refusal a GAOS host answers
//! (`{"error": message, "code": code}`), as one type shared by the host, the
//! client, the handles, the MCP server and the tests, with the one table
//! that gives each code its HTTP status.
//!
//! The strings on the wire are the contract; the enum only names them, so a
//! typo is a compile error instead of a code no client recognises. A code a
//! newer host sends that this build does not know reads as
//! [`ErrorCode::Unknown`] with its text kept.

use std::fmt;

macro_rules! error_codes {
    ($($(#[$doc:meta])* $variant:ident = $text:literal => $status:expr,)+) => {
        /// A host's stable error code (see the module documentation).
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum ErrorCode {
            $($(#[$doc])* $variant,)+
            /// A code this build does not know (a newer host's), kept as sent.
            Unknown(String),
        }

        impl ErrorCode {
            /// Every known code, in the table's order.
            pub const KNOWN: &'static [ErrorCode] = &[$(ErrorCode::$variant,)+];

            /// The code as it travels on the wire.
            pub fn as_str(&self) -> &str {
                match self {
                    $(ErrorCode::$variant => $text,)+
                    ErrorCode::Unknown(text) => text,
                }
            }

            /// Read a code off the wire; an unknown text is kept as
            /// [`ErrorCode::Unknown`].
            pub fn parse(text: &str) -> ErrorCode {
                match text {
                    $($text => ErrorCode::$variant,)+
                    other => ErrorCode::Unknown(other.to_owned()),
                }
            }

            /// The HTTP status a host answers this code with; `None` for the
            /// codes a client or the MCP server gives problems it finds
            /// itself (no host sends those) and for unknown codes.
            pub fn http_status(&self) -> Option<u16> {
                match self {
                    $(ErrorCode::$variant => $status,)+
                    ErrorCode::Unknown(_) => None,
                }
            }
        }
    };
}

error_codes! {
    // The request itself.
    /// A body, query or header that does not have its documented shape.
    InvalidRequest = "invalid_request" => Some(400),
    /// A request body over the host's body limit.
    PayloadTooLarge = "payload_too_large" => Some(413),
    /// A command over the host's `--max-command-bytes`.
    CommandTooLarge = "command_too_large" => Some(413),
    /// A body that is not `application/json`.
    UnsupportedMediaType = "unsupported_media_type" => Some(415),
    /// An `Accept` the route cannot answer.
    NotAcceptable = "not_acceptable" => Some(406),
    /// A route that does not take the method.
    MethodNotAllowed = "method_not_allowed" => Some(405),
    /// No such route (or resource of a route).
    NotFound = "not_found" => Some(404),
    /// A request target over the host's limit.
    UriTooLong = "uri_too_long" => Some(414),
    /// Request headers over the host's limit.
    HeadersTooLarge = "headers_too_large" => Some(431),
    /// Too many requests from one caller (a connection or stream limit).
    TooManyRequests = "too_many_requests" => Some(429),
    /// No credential, or one the host does not know.
    Unauthorized = "unauthorized" => Some(401),
    /// A credential that may not do this.
    Forbidden = "forbidden" => Some(403),

    // The collector's codes (lifecycle.md §1).
    /// Not a `gaos.ticks` 1.0 submission.
    InvalidProtocol = "invalid_protocol" => Some(400),
    /// A submission for another session.
    WrongSession = "wrong_session" => Some(400),
    /// A submission that does not address the open window.
    StaleTick = "stale_tick" => Some(409),
    /// A seat that is not a participant of the open window.
    UnknownParticipant = "unknown_participant" => Some(409),
    /// A malformed submission.
    InvalidSubmission = "invalid_submission" => Some(400),
    /// A command the game refused.
    IllegalCommand = "illegal_command" => Some(422),
    /// A submission identity reused with other content, or a second intent.
    ConflictingIntent = "conflicting_intent" => Some(409),
    /// A signed session's submission (or periodic seat signature) whose
    /// chain link or Ed25519 signature does not verify (RFC-010); nothing
    /// was persisted.
    InvalidSignature = "invalid_signature" => Some(400),
    /// A move in a signed session before every seat's key is known: the
    /// seats the create named in `seatKeysAtAttach` register theirs at
    /// attach first (each chain starts from the whole roster's hash).
    SeatKeysPending = "seat_keys_pending" => Some(409),
    /// An attach that registers another key for a seat whose key is already
    /// fixed (named at create or registered before); nothing changed.
    SeatKeyFixed = "seat_key_fixed" => Some(409),
    /// A create `timeoutPolicy` the host cannot run: a signed session's must
    /// be the tick-bounded form `{"mode":"ticks","windowTicks":N}` on ticks
    /// cadence with the game's timeout mapper (kernel spec §4.10).
    InvalidTimeoutPolicy = "invalid_timeout_policy" => Some(400),

    // The kernel's advance and history refusals.
    /// The game is over.
    Terminal = "terminal" => Some(409),
    /// The window cannot resolve yet.
    NotReady = "not_ready" => Some(409),
    /// An advance target behind the session.
    StaleTarget = "stale_target" => Some(409),
    /// An advance target the session cannot take.
    InvalidTarget = "invalid_target" => Some(409),
    /// A game view outside the value domain.
    InvalidView = "invalid_view" => Some(409),
    /// History below the retention floor: resynchronize from a snapshot.
    ResyncRequired = "resync_required" => Some(409),

    // Sessions.
    /// No session of that id on this host.
    UnknownSession = "unknown_session" => Some(404),
    /// A game this host does not serve.
    UnknownGame = "unknown_game" => Some(400),
    /// A seat the session does not have.
    UnknownSeat = "unknown_seat" => Some(404),
    /// A session id already in use.
    SessionExists = "session_exists" => Some(409),
    /// The session was finalized; it takes no more writes.
    SessionFinalized = "session_finalized" => Some(409),
    /// Finalize before the game ended.
    NotTerminal = "not_terminal" => Some(409),
    /// A result asked for before finalize.
    NotFinalized = "not_finalized" => Some(409),
    /// A second finalize with another request.
    FinalizeConflict = "finalize_conflict" => Some(409),
    /// The session's policy does not let this caller finalize.
    FinalizeNotPermitted = "finalize_not_permitted" => Some(409),
    /// The session was revoked; nothing can act on it again.
    Revoked = "revoked" => Some(410),
    /// A create `requestId` reused with another request.
    CreateRequestReused = "create_request_reused" => Some(409),
    /// An attach `requestId` reused with another request.
    AttachRequestReused = "attach_request_reused" => Some(409),
    /// The session's policy says it is not attachable.
    NotAttachable = "not_attachable" => Some(409),
    /// An attach whose controller differs from the pinned one.
    ControllerMismatch = "controller_mismatch" => Some(409),
    /// The session's game module changed since it was created.
    ModuleChanged = "module_changed" => Some(409),

    // Controller leases (lease.md).
    /// The seat's lease lapsed: renew and resend.
    LeaseExpired = "lease_expired" => Some(409),
    /// Another writer holds the seat.
    WriterConflict = "writer_conflict" => Some(409),
    /// The seat is paused.
    SessionPaused = "session_paused" => Some(409),
    /// A capability the lease does not grant.
    CapabilityRejected = "capability_rejected" => Some(403),

    // Multi-level runs.
    /// A reset while the level is still played.
    LevelInPlay = "level_in_play" => Some(409),
    /// A reset after the run's last level (or a lost win-to-advance level).
    RunOver = "run_over" => Some(409),
    /// A reset that names a seed: level seeds are fixed by the run seed.
    ResetSeedFixed = "reset_seed_fixed" => Some(409),
    /// A reset of a session that does not advance on reset.
    ResetNotAllowed = "reset_not_allowed" => Some(409),

    // Official evaluation.
    /// A manifest this host was not given.
    UnknownManifest = "unknown_manifest" => Some(422),
    /// A session that does not match its bound manifest.
    ManifestMismatch = "manifest_mismatch" => Some(422),
    /// A task or level the manifest does not plan.
    NotPlanned = "not_planned" => Some(422),
    /// A manifest scored by a plugin this host does not have.
    UnknownScoringPlugin = "unknown_scoring_plugin" => Some(422),
    /// A finalize of an official evaluation whose coverage is not met.
    CoverageUnmet = "coverage_unmet" => Some(409),

    // The host.
    /// A retention policy this host does not know.
    UnknownRetentionPolicy = "unknown_retention_policy" => Some(400),
    /// The seat's or host's stream limit is reached.
    TooManyStreams = "too_many_streams" => Some(503),
    /// The host cannot answer now (storage, shutdown): retry.
    Unavailable = "unavailable" => Some(503),
    /// This host no longer owns the session (another host took it over);
    /// nothing of the request was persisted here.
    Fenced = "fenced" => Some(503),
    /// A stored session that does not load (its configuration, state or
    /// transcript does not read back, or the game disagrees with it).
    RehydrateFailed = "rehydrate_failed" => Some(500),
    /// A bug or a broken invariant of the host.
    Internal = "internal" => Some(500),
    /// A retention-expired session: its records are gone.
    Expired = "expired" => Some(410),

    // The web routes.
    /// A replay the viewer cannot read.
    MalformedReplay = "malformed_replay" => Some(422),
    /// A benchmark bundle the report page cannot read.
    MalformedBundle = "malformed_bundle" => Some(422),
    /// A game without a `render` export.
    NoRenderer = "no_renderer" => Some(404),
    /// A game's `render` failed.
    RenderFailed = "render_failed" => Some(422),

    // Problems a client, a handle or the MCP server finds itself (no host
    // sends these).
    /// A tool or call argument that is wrong; nothing was sent.
    InvalidArgument = "invalid_argument" => None,
    /// The game is over for this handle (finalize fixes the result).
    GameOver = "game_over" => None,
    /// The host did not answer.
    HostUnreachable = "host_unreachable" => None,
    /// The host's answer broke the `gaos.ticks` contract.
    ProtocolError = "protocol_error" => None,
    /// The handle was closed.
    Closed = "closed" => None,
    /// The operation is not allowed in the handle's state.
    InvalidState = "invalid_state" => None,
    /// The handle's kind of host offers no such operation.
    Unsupported = "unsupported" => None,
    /// The seat has no legal action to take.
    NoLegalActions = "no_legal_actions" => None,
    /// An MCP tool this server does not have.
    UnknownTool = "unknown_tool" => None,
    /// Any other failure of a client.
    Error = "error" => None,
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<&str> for ErrorCode {
    fn from(text: &str) -> Self {
        ErrorCode::parse(text)
    }
}

impl PartialEq<str> for ErrorCode {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for ErrorCode {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<ErrorCode> for &str {
    fn eq(&self, other: &ErrorCode) -> bool {
        *self == other.as_str()
    }
}

impl serde::Serialize for ErrorCode {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for ErrorCode {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        Ok(ErrorCode::parse(&text))
    }
}

impl From<gaos_kernel::IntentErrorCode> for ErrorCode {
    fn from(code: gaos_kernel::IntentErrorCode) -> Self {
        use gaos_kernel::IntentErrorCode as K;
        match code {
            K::InvalidProtocol => ErrorCode::InvalidProtocol,
            K::WrongSession => ErrorCode::WrongSession,
            K::StaleTick => ErrorCode::StaleTick,
            K::UnknownParticipant => ErrorCode::UnknownParticipant,
            K::InvalidSubmission => ErrorCode::InvalidSubmission,
            K::IllegalCommand => ErrorCode::IllegalCommand,
            K::ConflictingIntent => ErrorCode::ConflictingIntent,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_known_code_reads_back_as_itself() {
        let mut seen = std::collections::HashSet::new();
        for code in ErrorCode::KNOWN {
            assert_eq!(&ErrorCode::parse(code.as_str()), code);
            assert!(seen.insert(code.as_str()), "{code} is listed twice");
            if let Some(status) = code.http_status() {
                assert!((400..600).contains(&status), "{code}");
            }
        }
    }

    #[test]
    fn an_unknown_code_is_kept() {
        let code = ErrorCode::parse("brand_new_code");
        assert_eq!(code, ErrorCode::Unknown("brand_new_code".into()));
        assert_eq!(code.as_str(), "brand_new_code");
        let read: ErrorCode = gaos_json::from_value(gaos_json::Value::from("stale_tick")).expect("a code");
        assert_eq!(read, ErrorCode::StaleTick);
        assert_eq!(
            gaos_json::to_value(&ErrorCode::LeaseExpired).expect("JSON"),
            gaos_json::Value::from("lease_expired")
        );
    }
}
