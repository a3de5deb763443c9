//! Where generators take their decisions from: the fuzzer's bytes (`arbitrary::Unstructured`)
//! or a seeded generator, so the same generator serves the fuzz targets and the seeded tests.

/// A source of decisions.
pub trait Choices {
    /// A number below `n` (0 when `n` is 0 or 1).
    fn below(&mut self, n: u64) -> u64;
    /// True `pct` percent of the time.
    fn chance(&mut self, pct: u64) -> bool {
        self.below(100) < pct
    }
    /// One of `items` (which must not be empty).
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

/// splitmix64: a small deterministic generator, so a failure reproduces from its seed.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// `n` random bytes: a fresh input for a fuzz target.
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

impl Choices for Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// The fuzzer's bytes: once they run out every decision is 0 (the first choice).
impl Choices for arbitrary::Unstructured<'_> {
    fn below(&mut self, n: u64) -> u64 {
        if n <= 1 {
            0
        } else {
            self.int_in_range(0..=n - 1).unwrap_or(0)
        }
    }
}
