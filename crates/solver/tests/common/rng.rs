//! A small deterministic generator (xorshift64) for the solver's random instances, so
//! that proptest's shrinking keeps them reproducible from a seed.

/// Uniform numbers in [0, 1) from `seed`.
pub fn uniform(seed: u64) -> impl FnMut() -> f64 {
    let mut s = seed | 1;
    move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 11) as f64 / (1u64 << 53) as f64
    }
}
