//! The Newton kernel: the iteration control shared by the implicit methods.
//!
//! A method supplies one closure that performs an iteration — evaluates its residual,
//! solves with its (possibly frozen) Newton matrix, applies the correction — and returns
//! the norm of the correction, scaled so that 1 is the size the caller cares about
//! (e.g. `‖Δ / (atol + rtol |y|)‖`). The kernel owns the loop, the counters and the
//! decisions, by the rule of Hairer & Wanner (*Solving ODEs II*, 2nd ed., 1996, §IV.8,
//! eqs. (8.10)–(8.13), as RADAU5 implements it):
//!
//! * contraction `θ_k = ‖Δ_k‖ / ‖Δ_{k−1}‖` (from the third iteration on, the geometric
//!   mean `√(θ_k θ_{k−1})`), and `η = θ / (1 − θ)`;
//! * converged when `η ‖Δ_k‖ ≤ tol`; in the first iteration `η` is carried over from the
//!   previous solve as `max(η_old, ε)^0.8`, so a well-predicted step can stop after one
//!   iteration;
//! * **too slow**: `θ^(k_max − 1 − k) / (1 − θ) ‖Δ_k‖ > tol` predicts that the limit
//!   `k_max` will be reached first — give up now and suggest the step-size factor
//!   `0.8 · q^(−1/(4 + k_max − 1 − k))` with `q = min(20, max(1e-4, that ratio / tol))`
//!   (RADAU5's `DYTH` and `HHFAC`);
//! * **divergent**: `θ ≥ 0.99`;
//! * **round-off floor**: a correction below `floor` (the caller's scaled round-off
//!   level) ends the iteration as converged whatever `θ` says — at the floor the
//!   contraction estimate is noise.

/// Settings of the kernel.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NewtonOptions {
    /// Tolerance on the scaled correction (`η ‖Δ‖ ≤ tol`).
    pub tol: f64,
    /// Iteration limit `k_max`.
    pub max_iter: usize,
    /// Scaled round-off level: a correction below it has converged.
    pub floor: f64,
    /// Give up early when the contraction predicts no convergence within `max_iter`
    /// (error-controlled runs, which retry with a smaller step); fixed-step runs, which
    /// cannot, iterate to the limit.
    pub predict: bool,
    /// Carry `η` from the previous solve into the first iteration (simplified Newton
    /// with a frozen matrix, whose contraction changes slowly from step to step). Full
    /// Newton, whose first correction says nothing about the last solve, starts each solve
    /// with `η = 1`: its first iteration converges only if `‖Δ₁‖ ≤ tol`.
    pub carry_eta: bool,
    /// Stop as divergent when `θ ≥ 0.99` (simplified Newton, which only contracts
    /// linearly). `false`: iterate to the limit — full Newton far from the solution may
    /// grow before it converges quadratically; `η` then counts only while `θ < 1`.
    pub stop_on_growth: bool,
}

impl NewtonOptions {
    /// Full Newton (a fresh matrix every iteration) on a correction the caller scales so
    /// that 1 is converged: no carried `η`, no early "too slow" exit, iteration through
    /// growth up to `max_iter`.
    pub fn full(max_iter: usize) -> Self {
        Self {
            tol: 1.0,
            max_iter,
            floor: 0.0,
            predict: false,
            carry_eta: false,
            stop_on_growth: false,
        }
    }

    /// An iteration that stops on its own residual test, not on the correction: the
    /// kernel's η test is off (`tol` 0); the iteration reports 0 once its residual is
    /// within its tolerance, anything else to go on, for at most `max_updates` updates
    /// (the call after the last allowed update reports the failure). The projections
    /// (position, row by row, symmetric) run this way.
    pub fn residual_stop(max_updates: usize) -> Self {
        Self {
            tol: 0.0,
            max_iter: max_updates + 1,
            ..Self::full(0)
        }
    }
}

/// What a converged solve took.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NewtonReport {
    /// Iterations done.
    pub iterations: usize,
    /// Last contraction estimate (`NaN` after a single iteration).
    pub theta: f64,
}

/// Why a solve failed.
#[derive(Clone, Debug, PartialEq)]
pub enum NewtonFailure<E> {
    /// The iteration closure failed (a singular matrix, a non-finite residual).
    Iteration(E),
    /// Contracting, but predicted not to converge within the limit; retry with
    /// `h · factor`.
    Slow {
        /// Iterations done.
        iterations: usize,
        /// Contraction estimate.
        theta: f64,
        /// Suggested step-size factor (< 1).
        factor: f64,
    },
    /// `θ ≥ 0.99`, a non-finite correction, or the limit reached.
    Diverged {
        /// Iterations done.
        iterations: usize,
        /// Contraction estimate.
        theta: f64,
        /// Last scaled correction.
        correction: f64,
    },
}

/// Cumulative counters of a kernel.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct NewtonCounters {
    /// Iterations (one linear solve each).
    pub iterations: usize,
    /// Solves that failed (slow, divergent or a failed iteration).
    pub failures: usize,
}

/// The kernel; one per method instance (it carries `η` from solve to solve).
#[derive(Clone, Debug)]
pub struct NewtonKernel {
    /// Settings.
    pub opts: NewtonOptions,
    eta: f64,
    /// Counters over all solves.
    pub counters: NewtonCounters,
}

/// Divergence threshold of the contraction estimate.
const THETA_DIVERGED: f64 = 0.99;

impl NewtonKernel {
    /// A kernel with `opts`.
    pub fn new(opts: NewtonOptions) -> Self {
        Self {
            opts,
            eta: 1.0,
            counters: NewtonCounters::default(),
        }
    }

    /// Run `iteration` (called with the iteration number 1, 2, …; it performs one
    /// iteration and returns the scaled norm of its correction) until the rule above
    /// stops it.
    pub fn solve<E>(
        &mut self, mut iteration: impl FnMut(usize) -> Result<f64, E>,
    ) -> Result<NewtonReport, NewtonFailure<E>> {
        let o = self.opts;
        self.eta = if o.carry_eta {
            self.eta.max(f64::EPSILON).powf(0.8)
        } else {
            1.0
        };
        let (mut prev, mut thq_old, mut theta) = (f64::NAN, f64::NAN, f64::NAN);
        for k in 1..=o.max_iter {
            self.counters.iterations += 1;
            let norm = match iteration(k) {
                Ok(n) => n,
                Err(e) => return Err(self.failed(NewtonFailure::Iteration(e))),
            };
            if !norm.is_finite() {
                return Err(self.diverged(k, theta, norm));
            }
            if norm <= o.floor {
                return Ok(NewtonReport {
                    iterations: k,
                    theta,
                });
            }
            if k > 1 {
                let thq = norm / prev;
                theta = if k == 2 { thq } else { (thq * thq_old).sqrt() };
                thq_old = thq;
                if theta >= THETA_DIVERGED {
                    if o.stop_on_growth {
                        return Err(self.diverged(k, theta, norm));
                    }
                    prev = norm.max(f64::EPSILON);
                    continue;
                }
                self.eta = theta / (1.0 - theta);
                let left = o.max_iter.saturating_sub(k + 1) as i32;
                let predicted = self.eta * norm * theta.powi(left) / o.tol;
                if o.predict && predicted >= 1.0 && k < o.max_iter {
                    let q = predicted.clamp(1e-4, 20.0);
                    let factor = 0.8 * q.powf(-1.0 / (4.0 + f64::from(left)));
                    return Err(self.failed(NewtonFailure::Slow {
                        iterations: k,
                        theta,
                        factor,
                    }));
                }
            }
            if self.eta * norm <= o.tol {
                return Ok(NewtonReport {
                    iterations: k,
                    theta,
                });
            }
            prev = norm.max(f64::EPSILON);
        }
        Err(self.diverged(o.max_iter, theta, prev))
    }

    /// Forget the carried `η` (after a new Jacobian, whose first contraction is unknown).
    pub fn reset_eta(&mut self) {
        self.eta = 1.0;
    }

    fn diverged<E>(&mut self, iterations: usize, theta: f64, correction: f64) -> NewtonFailure<E> {
        self.failed(NewtonFailure::Diverged {
            iterations,
            theta,
            correction,
        })
    }

    fn failed<E>(&mut self, f: NewtonFailure<E>) -> NewtonFailure<E> {
        self.counters.failures += 1;
        self.eta = 1.0;
        f
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts() -> NewtonOptions {
        NewtonOptions {
            tol: 1e-3,
            max_iter: 7,
            floor: 1e-14,
            predict: true,
            carry_eta: true,
            stop_on_growth: true,
        }
    }

    /// A linear contraction `Δ_k = θ^(k−1) Δ_1`.
    fn contraction(theta: f64, first: f64) -> impl FnMut(usize) -> Result<f64, ()> {
        move |k| Ok(first * theta.powi(k as i32 - 1))
    }

    #[test]
    fn converges_by_the_eta_rule() {
        let mut k = NewtonKernel::new(opts());
        // θ = 0.1, Δ1 = 1: η(2) = 0.111, Δ2 = 0.1 → 0.0111 > 1e-3; Δ3 = 0.01 → 1.1e-3 > 1e-3;
        // Δ4 = 1e-3 → 1.1e-4 ≤ 1e-3: four iterations.
        let r = k.solve(contraction(0.1, 1.0)).unwrap();
        assert_eq!(r.iterations, 4);
        assert!((r.theta - 0.1).abs() < 1e-12);
        assert_eq!(k.counters.iterations, 4);
    }

    #[test]
    fn carried_eta_lets_a_good_guess_stop_after_one_iteration() {
        let mut k = NewtonKernel::new(opts());
        k.solve(contraction(0.01, 1.0)).unwrap();
        // η ≈ 0.0101 carried as η^0.8 = 0.0253: Δ1 = 1e-2 gives 2.5e-4 ≤ 1e-3.
        let r = k.solve(contraction(0.01, 1e-2)).unwrap();
        assert_eq!(r.iterations, 1);
    }

    #[test]
    fn slow_contraction_is_given_up_early_with_a_factor() {
        let mut k = NewtonKernel::new(opts());
        match k.solve(contraction(0.8, 1.0)) {
            Err(NewtonFailure::Slow {
                iterations,
                theta,
                factor,
            }) => {
                assert_eq!(iterations, 2);
                assert!((theta - 0.8).abs() < 1e-12);
                // η = 4, Δ2 = 0.8, θ^(7−1−2) = 0.41: ratio 1311 → q = 20, factor 0.8·20^(−1/8).
                assert!(
                    (factor - 0.8 * 20f64.powf(-1.0 / 8.0)).abs() < 1e-12,
                    "{factor}"
                );
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(k.counters.failures, 1);
    }

    #[test]
    fn full_newton_may_grow_before_it_converges() {
        let mut o = opts();
        o.stop_on_growth = false;
        o.carry_eta = false;
        let mut k = NewtonKernel::new(o);
        // Δ = 1, 2, 1e-2, 1e-7: grows once, then quadratic; converges at the 4th.
        let seq = [1.0, 2.0, 1e-2, 1e-7];
        let r = k.solve(|i| Ok::<f64, ()>(seq[i - 1])).unwrap();
        assert_eq!(r.iterations, 4);
        let mut k = NewtonKernel::new(o);
        assert!(
            matches!(
                k.solve(|_| Ok::<f64, ()>(1.0)),
                Err(NewtonFailure::Diverged { iterations: 7, .. })
            ),
            "no convergence within the limit"
        );
    }

    #[test]
    fn growth_is_divergence_and_the_floor_is_convergence() {
        let mut k = NewtonKernel::new(opts());
        assert!(matches!(
            k.solve(contraction(1.5, 1.0)),
            Err(NewtonFailure::Diverged { iterations: 2, .. })
        ));
        let mut k = NewtonKernel::new(opts());
        let r = k.solve(contraction(1.0, 1e-15)).unwrap();
        assert_eq!(r.iterations, 1, "a correction at the floor has converged");
        let mut k = NewtonKernel::new(opts());
        assert!(matches!(
            k.solve(|_| Err::<f64, &str>("singular")),
            Err(NewtonFailure::Iteration("singular"))
        ));
        assert!(matches!(
            k.solve(|_| Ok::<f64, ()>(f64::NAN)),
            Err(NewtonFailure::Diverged { .. })
        ));
    }
}
