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
            if let Some(i) = vec.iter().position(|x| !x.is_finite()) {
                return Some((name, i));
            }
        }
        None
    }
}
