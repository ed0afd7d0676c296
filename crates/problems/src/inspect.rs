//! What a problem looks like to a solver at its initial state (seed 001 §3.12 checklist:
//! "check the dimensions, the sparsity and the rank of the constraint Jacobian before
//! integrating"): sizes, nonzeros of `M` and `Φ_q`, and the numerical rank of `Φ_q` with
//! its extreme singular values (redundant rows, seed 001 §3.11 pitfall 2; singular
//! configurations, pitfall 4). `driftlab describe <problem>` prints it.

use crate::entry::Problem;
use driftlab_core::{Index1Jacobians, MechanicalSystem, SemiExplicitDae};
use driftlab_solver::{numerical_rank, RankReport, SolverError};

/// Largest `m · n` whose Jacobian is put through a dense SVD (32 MB of f64).
pub const MAX_DENSE_RANK_ENTRIES: usize = 4_000_000;

/// The structure of a problem at its initial state.
#[derive(Clone, Debug, PartialEq)]
pub struct Structure {
    /// Coordinates `n` (index-1: differential variables).
    pub n: usize,
    /// Constraint rows `m` (index-1: algebraic equations).
    pub m: usize,
    /// Of those, nonholonomic rows (velocity level only).
    pub nonholonomic: usize,
    /// Unilateral rows kept apart from Φ (joint limits, contacts).
    pub unilateral: usize,
    /// Stored entries of the lower triangle of `M` (index-1: none).
    pub mass_nonzeros: usize,
    /// Stored entries of `Φ_q` (index-1: of `g_z`).
    pub jacobian_nonzeros: usize,
    /// Numerical rank of `Φ_q` (index-1: of `g_z`) at the initial state, with its
    /// singular values; `None` when `m · n` exceeds [`MAX_DENSE_RANK_ENTRIES`].
    pub rank: Option<RankReport>,
}

impl Structure {
    /// Rank deficiency `m − rank` (0 when the rank was not computed).
    pub fn deficiency(&self) -> usize {
        self.rank.as_ref().map_or(0, |r| r.rows - r.rank)
    }

    /// `σ_max / σ_min` of the Jacobian over its nonzero singular values' range: the
    /// condition of the rows kept (∞ when rank deficient).
    pub fn condition(&self) -> Option<f64> {
        let r = self.rank.as_ref()?;
        // min(m, n) singular values: with more rows than columns the rows are dependent.
        let (first, last) = (r.singular_values.first()?, r.singular_values.last()?);
        Some(if r.rank == r.rows && *last > r.threshold {
            first / last
        } else {
            f64::INFINITY
        })
    }
}

/// The structure of `problem` at its initial state.
pub fn structure(problem: &Problem) -> Result<Structure, SolverError> {
    match problem {
        Problem::Mechanical(s) => mechanical(s.as_ref()),
        Problem::SemiExplicit(s) => semi_explicit(s.as_ref()),
        // No constraint rows: F_y′ is invertible by the form's assumption.
        Problem::Implicit(s) => Ok(Structure {
            n: s.dim(),
            m: 0,
            nonholonomic: 0,
            unilateral: 0,
            mass_nonzeros: 0,
            jacobian_nonzeros: 0,
            rank: None,
        }),
    }
}

fn mechanical(s: &dyn MechanicalSystem) -> Result<Structure, SolverError> {
    let d = s.dims();
    let y = s.initial_state();
    let jp = s.jacobian_pattern();
    let mut jac = vec![0.0; jp.nnz()];
    s.jacobian(y.t, &y.q, &mut jac);
    let rank = if d.m * d.n <= MAX_DENSE_RANK_ENTRIES && d.m > 0 {
        Some(numerical_rank(d.m, d.n, &jp.entries, &jac)?)
    } else {
        None
    };
    Ok(Structure {
        n: d.n,
        m: d.m,
        nonholonomic: s.nonholonomic_rows(),
        unilateral: s.unilateral().map_or(0, |u| u.rows()),
        mass_nonzeros: s.mass_pattern().nnz(),
        jacobian_nonzeros: jp.nnz(),
        rank,
    })
}

fn semi_explicit(s: &dyn SemiExplicitDae) -> Result<Structure, SolverError> {
    let (nx, nz) = s.dims();
    let y = s.initial_state();
    let mut jac = Index1Jacobians::zeros(nx, nz);
    s.jacobians(y.t, &y.q, &y.lambda, &mut jac);
    let entries: Vec<(usize, usize)> = (0..nz * nz).map(|k| (k / nz, k % nz)).collect();
    let rank = if nz > 0 {
        Some(numerical_rank(nz, nz, &entries, &jac.gz)?)
    } else {
        None
    };
    Ok(Structure {
        n: nx,
        m: nz,
        nonholonomic: 0,
        unilateral: 0,
        mass_nonzeros: 0,
        jacobian_nonzeros: jac.gz.iter().filter(|x| **x != 0.0).count(),
        rank,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn of(id: &str, params: &str) -> Structure {
        let p = crate::build(id, &params.parse().unwrap()).unwrap();
        structure(&p).unwrap()
    }

    #[test]
    fn pendulum_has_one_full_rank_row() {
        let s = of("pendulum", "");
        assert_eq!((s.n, s.m, s.deficiency()), (2, 1, 0));
        assert_eq!((s.mass_nonzeros, s.jacobian_nonzeros), (2, 2));
    }

    /// Bricard's mechanism (IFToMM A04): 1 degree of freedom although the Grübler count
    /// gives 0 — one redundant constraint row (seed 001 §3.11 pitfall 2).
    #[test]
    fn bricard_shows_its_redundant_row() {
        let s = of("bricard", "");
        assert_eq!(s.deficiency(), 1, "{s:?}");
        assert_eq!(s.condition(), Some(f64::INFINITY));
    }

    /// Seed 003's index-1 DAE: g_z = 1, rank 1.
    #[test]
    fn index1_structure_is_of_g_z() {
        let s = of("seed003-dae", "");
        assert_eq!((s.n, s.m, s.deficiency()), (1, 1, 0));
        assert_eq!(s.condition(), Some(1.0));
    }
}
