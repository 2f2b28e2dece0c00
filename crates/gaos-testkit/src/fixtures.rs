//! Game fixtures and a schedule PRNG for end-to-end tests.

/// hilo's deal (GAMES.md): an LCG from `seed`, `hand_size` cards to alice,
/// then to bob, each `1 + next() mod max_card`.
pub fn hilo_deal(seed: u32, hand_size: usize, max_card: u32) -> (Vec<u64>, Vec<u64>) {
    let mut s = seed;
    let mut next = move || {
        s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        s
    };
    let alice: Vec<u64> = (0..hand_size).map(|_| u64::from(1 + next() % max_card)).collect();
    let bob: Vec<u64> = (0..hand_size).map(|_| u64::from(1 + next() % max_card)).collect();
    (alice, bob)
}

/// A small deterministic PRNG (xorshift64*) for schedules; print the seed.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }

    pub fn from_time() -> (Rng, u64) {
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1);
        let seed = std::env::var("GAOS_TEST_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(seed);
        (Rng::new(seed), seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in `lo..hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi - lo).max(1)
    }
}
