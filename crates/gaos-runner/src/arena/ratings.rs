//! Bradley–Terry ratings with percentile bootstrap intervals
//! (docs/arena.md, "How ratings are computed").
//!
//! Each entrant `i` has a strength `pᵢ > 0`; `i` beats `j` with
//! probability `pᵢ / (pᵢ + pⱼ)`. Strengths are the maximum-likelihood fit
//! of the pairwise games, found with Hunter's MM iteration (2004): a draw
//! counts half a win each way, and every entrant also plays `prior`
//! virtual games, all drawn, spread evenly over the other entrants, so an
//! entrant that never loses still has a finite rating. A rating is `400·log10(pᵢ)`,
//! shifted so the entrants' mean is 1000 (the Elo scale: 400 points is
//! odds of 10 to 1). The 95 % interval of an entrant is the 2.5th and
//! 97.5th percentile of its rating over `bootstrap` replicates, each a fit
//! of as many matches drawn with replacement (mulberry32 from the
//! manifest's seed) as were played, widened where needed to hold the fit
//! of all matches (a lopsided record can put every replicate on one side).
//!
//! Only IEEE-754 `+ − × ÷` and comparisons are used (the logarithm is a
//! fixed series, [`ln`]), in a fixed order, so the same matches give the
//! same numbers to the last digit on every machine.

use gaos_kernel::seed::Mulberry32;

/// Most MM iterations of one fit.
pub const MAX_ITERATIONS: usize = 10_000;

/// A fit stops when no strength moved by more than this, relatively.
pub const TOLERANCE: f64 = 1e-10;

/// `400 / ln(10)`: rating points per natural-log unit of strength.
const ELO_PER_LN: f64 = 173.717_792_761_300_73;

/// The natural logarithm of a positive finite `x`, with basic arithmetic
/// only: `x = m·2ᵉ` with `m` in `[√½, √2)`, then `ln m = 2·atanh(s)`,
/// `s = (m−1)/(m+1)`, by its series to the 29th power (`|s| ≤ 0.172`, so
/// the error is below one unit in the last place).
pub fn ln(x: f64) -> f64 {
    assert!(x > 0.0 && x.is_finite(), "ln of {x}");
    const LN2: f64 = std::f64::consts::LN_2;
    let mut x = x;
    let mut exponent: i64 = 0;
    if x < f64::MIN_POSITIVE {
        x *= 18_014_398_509_481_984.0; // 2^54: make a subnormal normal
        exponent -= 54;
    }
    let bits = x.to_bits();
    exponent += ((bits >> 52) & 0x7ff) as i64 - 1023;
    let mut m = f64::from_bits((bits & 0x000f_ffff_ffff_ffff) | 0x3ff0_0000_0000_0000);
    if m > std::f64::consts::SQRT_2 {
        m /= 2.0;
        exponent += 1;
    }
    let s = (m - 1.0) / (m + 1.0);
    let s2 = s * s;
    let mut term = s;
    let mut sum = 0.0;
    let mut k = 1.0;
    while k < 30.0 {
        sum += term / k;
        term *= s2;
        k += 2.0;
    }
    exponent as f64 * LN2 + 2.0 * sum
}

/// Wins and games between entrants, by index.
#[derive(Debug, Clone, PartialEq)]
pub struct Tally {
    n: usize,
    /// `score[i·n + j]`: what `i` scored against `j` (½ per draw).
    score: Vec<f64>,
    /// `games[i·n + j]`: games between `i` and `j` (symmetric).
    games: Vec<f64>,
}

impl Tally {
    /// No games between `n` entrants.
    pub fn new(n: usize) -> Self {
        Tally { n, score: vec![0.0; n * n], games: vec![0.0; n * n] }
    }

    /// `a` scored `score` (1, ½ or 0) against `b` in one game.
    pub fn add(&mut self, a: usize, b: usize, score: f64) {
        self.score[a * self.n + b] += score;
        self.score[b * self.n + a] += 1.0 - score;
        self.games[a * self.n + b] += 1.0;
        self.games[b * self.n + a] += 1.0;
    }

    /// Entrants.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Whether there are no entrants.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }
}

/// The ratings of a tally: Bradley–Terry strengths by MM, with `prior`
/// virtual games per entrant (drawn, spread evenly over the other
/// entrants), on the Elo scale, mean 1000.
///
/// The likelihood does not change when every strength is multiplied by
/// the same number, so strengths are rescaled to mean 1 after each step:
/// that changes no rating and keeps the iteration from drifting.
pub fn fit(tally: &Tally, prior: f64) -> Vec<f64> {
    let n = tally.n;
    if n < 2 {
        return vec![1000.0; n];
    }
    let virtual_games = prior / (n - 1) as f64;
    let wins: Vec<f64> = (0..n)
        .map(|i| (0..n).filter(|&j| j != i).fold(0.0, |sum, j| sum + tally.score[i * n + j] + virtual_games / 2.0))
        .collect();
    let mut p = vec![1.0f64; n];
    let mut next = vec![0.0f64; n];
    for _ in 0..MAX_ITERATIONS {
        for i in 0..n {
            let mut denominator = 0.0;
            for j in (0..n).filter(|&j| j != i) {
                denominator += (tally.games[i * n + j] + virtual_games) / (p[i] + p[j]);
            }
            next[i] = wins[i] / denominator;
        }
        let mean = next.iter().fold(0.0, |sum, x| sum + x) / n as f64;
        let mut moved = 0.0f64;
        for i in 0..n {
            next[i] /= mean;
            moved = moved.max((next[i] - p[i]).abs() / p[i]);
        }
        std::mem::swap(&mut p, &mut next);
        if moved < TOLERANCE {
            break;
        }
    }
    let raw: Vec<f64> = p.iter().map(|&s| ln(s) * ELO_PER_LN).collect();
    let mean = raw.iter().fold(0.0, |sum, r| sum + r) / n as f64;
    raw.iter().map(|r| r - mean + 1000.0).collect()
}

/// One entrant's rating and its 95 % interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rating {
    /// The fit of all matches.
    pub rating: f64,
    /// The 2.5th percentile of the bootstrap replicates (at most `rating`).
    pub low: f64,
    /// The 97.5th percentile of the bootstrap replicates (at least `rating`).
    pub high: f64,
}

/// The position of the `per_mille`‰ percentile among `b` sorted values:
/// the nearest rank, `⌈b·q⌉ − 1` (for 200 replicates: 4 and 194).
fn percentile_index(b: usize, per_mille: usize) -> usize {
    (b * per_mille).div_ceil(1000).saturating_sub(1).min(b.saturating_sub(1))
}

/// Ratings and intervals of `n` entrants from the pairwise games of each
/// match (`matches[m]`: `(a, b, score of a)`), with `replicates` bootstrap
/// replicates drawn from `mulberry32(seed)`: replicate `r` draws `M` match
/// indexes `⌊u32 · M / 2³²⌋` in turn.
pub fn rate(n: usize, matches: &[Vec<(usize, usize, f64)>], prior: f64, replicates: u32, seed: u32) -> Vec<Rating> {
    let tally_of = |picks: &mut dyn Iterator<Item = usize>| {
        let mut tally = Tally::new(n);
        for m in picks {
            for &(a, b, score) in &matches[m] {
                tally.add(a, b, score);
            }
        }
        tally
    };
    let point = fit(&tally_of(&mut (0..matches.len())), prior);
    let mut samples: Vec<Vec<f64>> = vec![Vec::with_capacity(replicates as usize); n];
    let mut rng = Mulberry32::new(seed);
    let count = matches.len() as u64;
    for _ in 0..replicates {
        let mut picks = (0..count).map(|_| ((u64::from(rng.next_u32()) * count) >> 32) as usize);
        let ratings = fit(&tally_of(&mut picks), prior);
        for (i, r) in ratings.into_iter().enumerate() {
            samples[i].push(r);
        }
    }
    let b = replicates as usize;
    point
        .into_iter()
        .zip(samples)
        .map(|(rating, mut sample)| {
            sample.sort_by(f64::total_cmp);
            let (low, high) = match sample.is_empty() {
                true => (rating, rating),
                false => (sample[percentile_index(b, 25)], sample[percentile_index(b, 975)]),
            };
            // A lopsided record (an entrant that won every game) can put every
            // replicate on one side of the fit: the interval still holds it.
            Rating { rating, low: low.min(rating), high: high.max(rating) }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_series_logarithm_matches_the_platforms_to_the_last_places() {
        for x in [1e-300, 1e-9, 0.001, 0.5, 0.70, 1.0, 1.41, 1.42, 2.0, 3.0, 10.0, 12345.678, 1e12, 1e300, 5e-324] {
            let ours = ln(x);
            let theirs = x.ln();
            assert!((ours - theirs).abs() <= 4.0 * f64::EPSILON * theirs.abs().max(1.0), "ln({x}): {ours} vs {theirs}");
        }
        assert_eq!(ln(1.0), 0.0);
    }

    #[test]
    fn percentiles_are_the_nearest_rank() {
        assert_eq!((percentile_index(200, 25), percentile_index(200, 975)), (4, 194));
        assert_eq!((percentile_index(1, 25), percentile_index(1, 975)), (0, 0));
        assert_eq!((percentile_index(1000, 25), percentile_index(1000, 975)), (24, 974));
    }

    #[test]
    fn an_entrant_that_never_loses_has_a_finite_rating_and_equal_records_rate_equally() {
        let mut tally = Tally::new(3);
        for _ in 0..10 {
            tally.add(0, 1, 1.0);
            tally.add(0, 2, 1.0);
            tally.add(1, 2, 0.5);
        }
        let ratings = fit(&tally, 1.0);
        assert!(ratings.iter().all(|r| r.is_finite()), "{ratings:?}");
        assert!(ratings[0] > ratings[1] + 300.0, "{ratings:?}");
        assert!((ratings[1] - ratings[2]).abs() < 1e-9, "{ratings:?}");
        assert!((ratings.iter().sum::<f64>() / 3.0 - 1000.0).abs() < 1e-9);
    }
}
