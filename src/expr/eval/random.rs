//! `rand(seed)` as Spark computes it: one `XORShiftRandom(seed + partition index)` per rand()
//! expression and partition, drawn once per row the expression is evaluated on, so `rand(42)`
//! gives Spark's rows where the partitions are Spark's (one file: partition 0).
//!
//! The generators of a partition live in a [`RandState`] that its operator owns and installs
//! for the length of one batch's evaluation ([`with_partition`]).

use std::cell::RefCell;

/// Spark's `org.apache.spark.util.random.XORShiftRandom` (shifts 21, 35, 4 over a Murmur3-hashed
/// seed) with `java.util.Random.nextDouble`.
#[derive(Debug, Clone)]
pub struct XorShiftRandom {
    seed: u64,
}

impl XorShiftRandom {
    /// A generator seeded as Spark seeds one.
    pub fn new(seed: i64) -> XorShiftRandom {
        XorShiftRandom { seed: hash_seed(seed) }
    }

    fn next(&mut self, bits: u32) -> u64 {
        let mut s = self.seed ^ (self.seed << 21);
        s ^= s >> 35;
        s ^= s << 4;
        self.seed = s;
        s & ((1u64 << bits) - 1)
    }

    /// Uniform in [0, 1), as `java.util.Random.nextDouble`.
    pub fn next_double(&mut self) -> f64 {
        let hi = self.next(26);
        let lo = self.next(27);
        ((hi << 27) + lo) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// Spark's `XORShiftRandom.hashSeed`: Scala's `MurmurHash3.bytesHash` of the seed's big-endian
/// bytes, twice.
fn hash_seed(seed: i64) -> u64 {
    let bytes = seed.to_be_bytes();
    let low = bytes_hash(&bytes, 0x3c07_4a61);
    let high = bytes_hash(&bytes, low);
    ((high as i32 as i64 as u64) << 32) | u64::from(low)
}

/// Scala's `scala.util.hashing.MurmurHash3.bytesHash` (32-bit Murmur3, little-endian words).
fn bytes_hash(data: &[u8], seed: u32) -> u32 {
    fn mix_last(h: u32, k: u32) -> u32 {
        h ^ k.wrapping_mul(0xcc9e_2d51).rotate_left(15).wrapping_mul(0x1b87_3593)
    }
    let mut h = seed;
    let mut words = data.chunks_exact(4);
    for w in &mut words {
        let k = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
        h = mix_last(h, k).rotate_left(13).wrapping_mul(5).wrapping_add(0xe654_6b64);
    }
    let tail = words.remainder();
    if !tail.is_empty() {
        let k = tail.iter().enumerate().fold(0u32, |k, (i, b)| k ^ (u32::from(*b) << (8 * i)));
        h = mix_last(h, k);
    }
    h ^= data.len() as u32;
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

/// The rand() generators of one partition of one operator, by expression.
#[derive(Debug, Default)]
pub struct RandState {
    partition: i64,
    generators: Vec<(usize, XorShiftRandom)>,
}

impl RandState {
    /// No generator yet, for partition `partition`.
    pub fn new(partition: usize) -> RandState {
        RandState { partition: partition as i64, generators: vec![] }
    }
}

thread_local! {
    static CURRENT: RefCell<Option<RandState>> = const { RefCell::new(None) };
}

/// Runs `f` (one batch's evaluation) with `state`'s generators installed for rand().
pub fn with_partition<R>(state: &mut RandState, f: impl FnOnce() -> R) -> R {
    let previous = CURRENT.with(|c| c.replace(Some(std::mem::take(state))));
    let out = f();
    if let Some(s) = CURRENT.with(|c| c.replace(previous)) {
        *state = s;
    }
    out
}

/// `n` draws of the rand() expression identified by `key`, seeded `seed`: from the installed
/// partition's generator, or (outside an operator, e.g. a one-row query) a fresh partition-0 one.
pub fn draws(key: usize, seed: i64, n: usize) -> Vec<f64> {
    CURRENT.with(|c| {
        let mut current = c.borrow_mut();
        let fresh = |partition: i64| XorShiftRandom::new(seed.wrapping_add(partition));
        match current.as_mut() {
            Some(state) => {
                let at = match state.generators.iter().position(|(k, _)| *k == key) {
                    Some(at) => at,
                    None => {
                        state.generators.push((key, fresh(state.partition)));
                        state.generators.len() - 1
                    }
                };
                let g = &mut state.generators[at].1;
                (0..n).map(|_| g.next_double()).collect()
            }
            None => {
                let mut g = fresh(0);
                (0..n).map(|_| g.next_double()).collect()
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_partition_continues_its_sequence_across_batches_and_partitions_differ() {
        let mut whole = XorShiftRandom::new(42);
        let expected: Vec<f64> = (0..5).map(|_| whole.next_double()).collect();
        let mut state = RandState::new(0);
        let first = with_partition(&mut state, || draws(1, 42, 2));
        let rest = with_partition(&mut state, || draws(1, 42, 3));
        assert_eq!([first, rest].concat(), expected);
        let other = with_partition(&mut RandState::new(1), || draws(1, 42, 1));
        assert_eq!(other, vec![XorShiftRandom::new(43).next_double()]);
        assert!(expected.iter().all(|v| (0.0..1.0).contains(v)));
    }

    #[test]
    fn two_rand_expressions_draw_from_their_own_generators() {
        let mut state = RandState::new(0);
        let (a, b) = with_partition(&mut state, || (draws(1, 7, 3), draws(2, 7, 3)));
        assert_eq!(a, b, "same seed, same partition, own generator each");
    }
}
