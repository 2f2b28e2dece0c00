//! How a session advances ([`Cadence`]): by turns, or at a fixed tick rate.

use crate::event::HeaderCadence;
use crate::protocol::TickRate;
use gaos_json::Value;

/// Session cadence.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Cadence {
    /// Resolve per collection window (`prepare_advance()` without target).
    Turns,
    /// Fixed tick rate; windows resolve as they are when their tick is advanced.
    Ticks(TickRate),
}

impl Cadence {
    pub fn header(&self) -> HeaderCadence {
        match self {
            Cadence::Turns => HeaderCadence::Turns,
            Cadence::Ticks(rate) => HeaderCadence::Ticks { ticks_per_second: rate.ticks_per_second },
        }
    }

    /// Read `{"mode":"turns"}` or `{"mode":"ticks","ticksPerSecond":N}`.
    pub fn from_value(value: &Value) -> Result<Self, String> {
        match value.get("mode").and_then(Value::as_str) {
            Some("turns") => Ok(Cadence::Turns),
            Some("ticks") => {
                let tps = value
                    .get("ticksPerSecond")
                    .and_then(Value::as_f64)
                    .ok_or("ticks cadence needs a numeric ticksPerSecond")?;
                Ok(Cadence::Ticks(TickRate::new(tps)?))
            }
            _ => Err("cadence must be {\"mode\":\"turns\"} or {\"mode\":\"ticks\",\"ticksPerSecond\":N}".into()),
        }
    }
}
