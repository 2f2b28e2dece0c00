//! `random`: a uniformly random legal action, from a seeded `mulberry32`.

use gaos_kernel::seed::Mulberry32;

use crate::driver::{AgentDriver, Decision, DriverContext};
use crate::error::DriverError;
use gaos_session::BoxFuture;

/// Picks `legal_actions[floor(draw × len)]` with `draw` from `mulberry32(seed)`,
/// so the same seed and the same observations give the same commands.
/// `reset` keeps the generator running (it is not conversation context);
/// `resume_after(n)` skips the `n` draws already used.
#[derive(Debug, Clone)]
pub struct RandomDriver {
    rng: Mulberry32,
}

impl RandomDriver {
    /// A driver seeded with `seed`.
    pub fn new(seed: u32) -> Self {
        RandomDriver { rng: Mulberry32::new(seed) }
    }
}

impl AgentDriver for RandomDriver {
    fn id(&self) -> &str {
        "random"
    }

    fn label(&self) -> &str {
        "random legal action (seeded mulberry32)"
    }

    /// Draw (and drop) one number per decision already made: every
    /// decision of this driver draws exactly once.
    fn resume_after(&mut self, decisions: u64) {
        for _ in 0..decisions {
            self.rng.next_u32();
        }
    }

    fn act<'a>(&'a mut self, context: DriverContext<'a>) -> BoxFuture<'a, Result<Decision, DriverError>> {
        let legal = context.legal_actions;
        let decision = if legal.is_empty() {
            Err(DriverError::NoLegalActions)
        } else {
            let index = ((self.rng.next_f64() * legal.len() as f64) as usize).min(legal.len() - 1);
            Ok(Decision::action(legal[index].clone()))
        };
        Box::pin(std::future::ready(decision))
    }
}
