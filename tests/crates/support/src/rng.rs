//! A small deterministic generator for the tests that generate their
//! inputs (the oracle comparisons, the fuzz-like sweeps): SplitMix64, the
//! same sequence on every platform and with every crate version, and no
//! clock or global state, so that a seed reproduces a failure.

/// SplitMix64 seeded with its state.
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number below `n` (which must not be 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// One of `items` (which must not be empty).
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

#[cfg(test)]
mod tests {
    use super::Rng;

    /// The sequence is SplitMix64's: the first outputs of seed 0 are the
    /// published ones.
    #[test]
    fn the_sequence_is_splitmix64() {
        let mut r = Rng(0);
        assert_eq!(r.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(r.next_u64(), 0x6e78_9e6a_a1b9_65f4);
        let picked = *Rng(7).pick(&["a", "b", "c"]);
        assert!(["a", "b", "c"].contains(&picked));
    }
}
