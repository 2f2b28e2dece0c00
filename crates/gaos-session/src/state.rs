//! [`HandleState`]: where a session handle is in the lifecycle (`active → terminal → finalized`, any `→ closed`).

/// Where a handle is in the session lifecycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HandleState {
    /// The game runs; the seat may act.
    Active,
    /// The game ended; the session may be finalized.
    Terminal,
    /// This handle finalized the session.
    Finalized,
    /// The handle was closed (locally; the session is untouched).
    Closed,
}

impl HandleState {
    /// `active`, `terminal`, `finalized` or `closed`.
    pub fn as_str(self) -> &'static str {
        match self {
            HandleState::Active => "active",
            HandleState::Terminal => "terminal",
            HandleState::Finalized => "finalized",
            HandleState::Closed => "closed",
        }
    }
}
