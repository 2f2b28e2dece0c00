//! Seeds and the deterministic RNG helpers of the reference engine.

use gaos_json::{Value, fnv1a32};

use crate::error::KernelError;

/// A seed argument as a caller passed it: a u32 (`0..=0xFFFFFFFF`), else a
/// TypeError (kernel spec §4.14, "bad seed"). Lets a driver hand a wrongly
/// typed or out-of-range seed to the kernel's own check.
pub fn seed_from_value(value: &Value) -> Result<u32, KernelError> {
    value.as_u32().filter(|_| value.as_f64().is_some_and(gaos_json::is_safe_integer)).ok_or_else(|| {
        KernelError::type_error(format!("a seed must be a u32, not {}", gaos_json::canonical_json(value)))
    })
}

/// Largest level index `run_level_seed` accepts. Beyond it the reference's
/// double-precision product `0x9E3779B9 × (i+1)` is no longer exact and the
/// reference (TS) and its Python port disagree, so we refuse instead of
/// guessing.
pub const MAX_RUN_LEVEL_INDEX: u64 = 3_393_261;

/// `runLevelSeed(seed, levelIndex) = seed XOR (0x9E3779B9 × (i+1) mod 2^32)`.
pub fn run_level_seed(seed: u32, level_index: u64) -> Result<u32, String> {
    if level_index > MAX_RUN_LEVEL_INDEX {
        return Err(format!(
            "level index {level_index} is beyond {MAX_RUN_LEVEL_INDEX}, where run-level seeds stop being exact"
        ));
    }
    let factor = (level_index + 1) as u32;
    Ok(seed ^ 0x9E37_79B9u32.wrapping_mul(factor))
}

/// `mulberry32(seed)`: a generator of doubles in `[0, 1)`.
#[derive(Debug, Clone)]
pub struct Mulberry32 {
    state: u32,
}

impl Mulberry32 {
    pub fn new(seed: u32) -> Self {
        Mulberry32 { state: seed }
    }

    /// The next draw as a u32 (the draw is this divided by 2^32).
    pub fn next_u32(&mut self) -> u32 {
        self.state = self.state.wrapping_add(0x6D2B_79F5);
        let v = self.state;
        let mut m = (v ^ (v >> 15)).wrapping_mul(1 | v);
        m = (m.wrapping_add((m ^ (m >> 7)).wrapping_mul(61 | m))) ^ m;
        m ^ (m >> 14)
    }

    /// The next draw in `[0, 1)`.
    pub fn next_f64(&mut self) -> f64 {
        f64::from(self.next_u32()) / 4_294_967_296.0
    }
}

/// `mulberry32(seed)` as a closure-like generator.
pub fn mulberry32(seed: u32) -> Mulberry32 {
    Mulberry32::new(seed)
}

/// `roll(seed, key)`: the first draw of `mulberry32(seed XOR fnv1a(key))`.
pub fn roll(seed: u32, key: &str) -> f64 {
    Mulberry32::new(seed ^ fnv1a32(key)).next_f64()
}

/// `seededPermutation(n, seed)`: Fisher–Yates from `n−1` down to 1 with
/// `j = floor(draw × (i+1))`.
pub fn seeded_permutation(n: usize, seed: u32) -> Vec<usize> {
    let mut perm: Vec<usize> = (0..n).collect();
    let mut rng = Mulberry32::new(seed);
    for i in (1..n).rev() {
        let j = (rng.next_f64() * (i as f64 + 1.0)).floor() as usize;
        perm.swap(i, j);
    }
    perm
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_examples() {
        assert_eq!(run_level_seed(42, 0).unwrap(), 2654435731);
        assert_eq!(run_level_seed(0xFFFF_FFFF, 2).unwrap(), 626627284);
        assert!(run_level_seed(7, 10_000_000).is_err());
        let mut r = mulberry32(42);
        assert_eq!(r.next_f64(), 0.6011037519201636);
        assert_eq!(r.next_f64(), 0.44829055899754167);
        assert_eq!(roll(42, "draw:1"), 0.9457603672053665);
        assert_eq!(seeded_permutation(5, 42), vec![0, 4, 2, 1, 3]);
    }
}
