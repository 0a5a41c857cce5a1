//! A tiny seeded generator (SplitMix64): the scheduler's choice among equal scores
//! (selectHost's reservoir draw) and the fake API server's fault injection and names.
//! Reproducible from a seed, no dependency, and uniform enough for both.

/// SplitMix64's increment: each draw adds it to the state.
const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// A SplitMix64 generator, counting its draws.
#[derive(Clone, Debug)]
pub struct Rng(u64, u64);

impl Rng {
    /// A generator that yields the same sequence for the same seed.
    pub fn new(seed: u64) -> Self {
        Self(seed, 0)
    }

    /// How many values were drawn so far.
    pub fn draws(&self) -> u64 {
        self.1
    }

    /// Moves on `n` draws without computing them: the state is where `n` calls of
    /// [`Self::below`] would leave it (each draw adds the same increment).
    pub fn skip(&mut self, n: u64) {
        self.0 = self.0.wrapping_add(GAMMA.wrapping_mul(n));
        self.1 = self.1.wrapping_add(n);
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.1 = self.1.wrapping_add(1);
        self.0 = self.0.wrapping_add(GAMMA);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A value in `0..n` (`n > 0`), by Lemire's multiply-shift (bias below 2^-32 for
    /// the small `n` a tie among nodes has).
    pub fn below(&mut self, n: usize) -> usize {
        let n = n.max(1) as u64;
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reproducible_and_in_range() {
        let mut a = Rng::new(7);
        let mut b = Rng::new(7);
        for n in 1..100 {
            let x = a.below(n);
            assert_eq!(x, b.below(n));
            assert!(x < n);
        }
    }

    #[test]
    fn skipping_lands_where_drawing_does() {
        let mut a = Rng::new(3);
        let mut b = Rng::new(3);
        for n in 1..20 {
            a.below(n);
        }
        b.skip(19);
        assert_eq!((a.draws(), a.below(1000)), (b.draws(), b.below(1000)));
    }

    #[test]
    fn roughly_uniform() {
        let mut r = Rng::new(1);
        let mut hits = [0u32; 4];
        for _ in 0..4000 {
            hits[r.below(4)] += 1;
        }
        assert!(hits.iter().all(|&h| (850..1150).contains(&h)), "{hits:?}");
    }
}
