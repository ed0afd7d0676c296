//! Consistent initial data for problems whose published values need it (printed to a few
//! digits) or whose exact multipliers follow from one acceleration-level solve — through
//! the solver's one KKT path (`KktSolver`, `project_velocity`), not a second assembly.

use driftlab_core::MechanicalSystem;
use driftlab_solver::{
    project_velocity, ConstraintsAt, KktOptions, KktPattern, KktSolver, SolverError,
};

/// The KKT solver `[[M, Φ_qᵀ], [Φ_q, 0]]` of `sys` and `M(q)`.
pub fn kkt_at(sys: &dyn MechanicalSystem, q: &[f64]) -> Result<(KktSolver, Vec<f64>), SolverError> {
    let d = sys.dims();
    let mp = sys.mass_pattern();
    let pattern = KktPattern {
        n: d.n,
        m: d.m,
        a_lower: mp.entries.clone(),
        b: sys.jacobian_pattern().entries,
    };
    let mut mass = vec![0.0; mp.nnz()];
    sys.mass(q, &mut mass);
    Ok((KktSolver::new(&pattern, KktOptions::default())?, mass))
}

/// Move `v` onto `Φ_q v + Φ_t = 0` at `(t, q)` in the metric of `M` — the correction a
/// constraint impulse makes, and the one an index-2 integration makes in its first step.
pub fn project_initial_velocity(
    sys: &dyn MechanicalSystem, t: f64, q: &[f64], v: &mut [f64],
) -> Result<(), SolverError> {
    let (mut kkt, mass) = kkt_at(sys, q)?;
    project_velocity(&mut kkt, &mass, q, v, &mut ConstraintsAt { sys, t })?;
    Ok(())
}

/// The consistent `(a, λ)` at `(t, q, v)`: `[[M, Φ_qᵀ], [Φ_q, 0]] [a; λ] = [f; γ]`.
pub fn accelerations(
    sys: &dyn MechanicalSystem, t: f64, q: &[f64], v: &[f64],
) -> Result<(Vec<f64>, Vec<f64>), SolverError> {
    let d = sys.dims();
    let (mut kkt, mass) = kkt_at(sys, q)?;
    let mut jac = vec![0.0; sys.jacobian_pattern().nnz()];
    sys.jacobian(t, q, &mut jac);
    kkt.factorize(&mass, &jac, None)?;
    let mut rhs = vec![0.0; d.n + d.m];
    sys.forces(t, q, v, &mut rhs[..d.n]);
    sys.curvature(t, q, v, &mut rhs[d.n..]);
    kkt.solve(&mut rhs)?;
    let lambda = rhs.split_off(d.n);
    Ok((rhs, lambda))
}
