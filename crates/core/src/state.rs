//! The state a method advances.

/// State of a run at time `t`.
///
/// For a [`crate::MechanicalSystem`]: positions `q`, velocities `v`, multipliers `lambda`
/// and accelerations `a`, where `lambda` and `a` are the method's values *at time `t`*
/// (a method that computes them at the start of a step refreshes them at its end).
///
/// For a [`crate::SemiExplicitDae`]: `q` holds the differential variables `x`, `lambda`
/// the algebraic variables `z`; `v` and `a` are empty.
#[derive(Debug, PartialEq)]
pub struct State {
    /// Time.
    pub t: f64,
    /// Positions (or differential variables `x` of an index-1 DAE).
    pub q: Vec<f64>,
    /// Velocities (empty for an index-1 DAE).
    pub v: Vec<f64>,
    /// Lagrange multipliers (or algebraic variables `z` of an index-1 DAE).
    pub lambda: Vec<f64>,
    /// Accelerations as the method computed them at `t` (empty for an index-1 DAE).
    pub a: Vec<f64>,
}

/// `clone_from` reuses the vectors' allocations: the time loop keeps the last good state
/// with it after every step, which the derived `Clone` (allocate, copy, free) made the
/// largest cost of a small system's step after the factorization (perf, ensembles of
/// pendula).
impl Clone for State {
    fn clone(&self) -> Self {
        Self {
            t: self.t,
            q: self.q.clone(),
            v: self.v.clone(),
            lambda: self.lambda.clone(),
            a: self.a.clone(),
        }
    }

    fn clone_from(&mut self, o: &Self) {
        self.t = o.t;
        self.q.clone_from(&o.q);
        self.v.clone_from(&o.v);
        self.lambda.clone_from(&o.lambda);
        self.a.clone_from(&o.a);
    }
}

impl State {
    /// A mechanical state with multipliers and accelerations not yet known (NaN); a
    /// method's `init` computes consistent values.
    pub fn mechanical(t: f64, q: Vec<f64>, v: Vec<f64>, m: usize) -> Self {
        let n = v.len();
        Self {
            t,
            q,
            v,
            lambda: vec![f64::NAN; m],
            a: vec![f64::NAN; n],
        }
    }

    /// An index-1 state `(x, z)`.
    pub fn semi_explicit(t: f64, x: Vec<f64>, z: Vec<f64>) -> Self {
        Self {
            t,
            q: x,
            v: Vec::new(),
            lambda: z,
            a: Vec::new(),
        }
    }

    /// First component that is not finite, as `(field, index)`.
    pub fn first_non_finite(&self) -> Option<(&'static str, usize)> {
        for (name, vec) in [
            ("q", &self.q),
            ("v", &self.v),
            ("lambda", &self.lambda),
            ("a", &self.a),
        ] {
            if all_finite(vec) {
                continue;
            }
            if let Some(i) = vec.iter().position(|x| !x.is_finite()) {
                return Some((name, i));
            }
        }
        None
    }
}

/// Whether every entry is finite: `x · 0` is 0 for a finite `x` and NaN otherwise, summed
/// over eight independent lanes so that the compiler vectorizes it (the time loop checks
/// every state after every step: the early-exit `position` took 2 % of a Baumgarte step on
/// a chain of 2·10⁵ links, perf).
fn all_finite(x: &[f64]) -> bool {
    let mut lanes = [0.0_f64; 8];
    let chunks = x.chunks_exact(8);
    let tail = chunks.remainder();
    for c in chunks {
        for (l, v) in lanes.iter_mut().zip(c) {
            *l += v * 0.0;
        }
    }
    let tail_sum: f64 = tail.iter().map(|v| v * 0.0).sum();
    (lanes.iter().sum::<f64>() + tail_sum) == 0.0
}

#[cfg(test)]
mod tests {
    use super::all_finite;

    #[test]
    fn all_finite_agrees_with_the_entrywise_check_at_every_position_and_length() {
        for len in [0, 1, 7, 8, 9, 17, 64] {
            let base: Vec<f64> = (0..len).map(|i| (i as f64 - 3.5) * 1e300).collect();
            assert!(all_finite(&base), "len {len}");
            for at in 0..len {
                for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
                    let mut x = base.clone();
                    x[at] = bad;
                    assert!(!all_finite(&x), "len {len}, {bad} at {at}");
                }
            }
        }
    }
}
