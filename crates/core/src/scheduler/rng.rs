//! A tiny seeded generator (SplitMix64) for selectHost's choice among equal scores:
//! reproducible from a seed, no dependency, and uniform enough for a reservoir draw.

/// A SplitMix64 generator.
#[derive(Clone, Debug)]
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        Self(seed)
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A value in `0..n` (`n > 0`), by Lemire's multiply-shift (bias below 2^-32 for
    /// the small `n` a tie among nodes has).
    pub(crate) fn below(&mut self, n: usize) -> usize {
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
    fn roughly_uniform() {
        let mut r = Rng::new(1);
        let mut hits = [0u32; 4];
        for _ in 0..4000 {
            hits[r.below(4)] += 1;
        }
        assert!(hits.iter().all(|&h| (850..1150).contains(&h)), "{hits:?}");
    }
}
