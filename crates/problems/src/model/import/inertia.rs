//! Inertias that no rigid body has, as published files carry them: a rotational inertia
//! that is not positive semidefinite, or whose principal moments break the triangle
//! inequality I₁ + I₂ ≥ I₃ (a body's density is nonnegative: Traversaro, Brossette,
//! Escande & Nori, "Identification of fully physical consistent inertial parameters using
//! optimization on manifolds", IROS 2016), or a massless body with rotational inertia.
//! Of PyPI's example-robot-data 6.0.0, 14 files carry such links (a camera, an antenna, a
//! foot frame of 1 µg); Pinocchio loads them as written.
//!
//! `inertia` chooses what becomes of them, as MuJoCo's `balanceinertia` and Pinocchio's
//! acceptance bracket it:
//!
//! * `keep` (default): loaded as published, each one listed as a [`ModelNote`] with its
//!   numbers (the joint-space mass matrix stays positive definite while the tree's
//!   composite inertias are; a model whose M is not is refused when it loads);
//! * `balance`: its principal moments set to their mean, `I ← (tr I / 3)·1`, MuJoCo's
//!   rule for `<compiler balanceinertia="true">` ("set all three diagonal elements to
//!   their average value whenever the condition is violated", MuJoCo XML reference); the
//!   change is listed;
//! * `refuse`: the first one refused, naming the link and its principal moments.
//!
//! Violations within the round-off of the published digits pass silently: a relative
//! slack of [`INERTIA_SLACK`] of the body's trace, and an absolute one of 1e-12 of the
//! model's largest principal moment (iCub's point masses carry ±2e-35).

use super::super::spatial::{symmetric_eigenvalues, Inertia, IDENTITY};
use super::description::{Model, ModelError, ModelNote};

/// Relative slack of the inertia checks: eigenvalues ≥ −tol·tr and the triangle
/// inequality `I₁ + I₂ ≥ I₃` to `tol·tr`, with `tol` = 1e-6 (CAD exports round their
/// inertias to about six digits; a physical body satisfies both exactly).
pub const INERTIA_SLACK: f64 = 1e-6;

/// What becomes of an inertia no rigid body has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// Loaded as published, with a note.
    Keep,
    /// Principal moments set to their mean, with a note.
    Balance,
    /// Refused.
    Refuse,
}

impl Policy {
    /// The policy named by the `inertia` parameter.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "keep" => Some(Self::Keep),
            "balance" => Some(Self::Balance),
            "refuse" => Some(Self::Refuse),
            _ => None,
        }
    }
}

/// Why `i` is no rigid body's inertia, with its numbers (`None`: it is one, to `slack`).
pub fn unphysical(i: &Inertia, slack: f64) -> Option<String> {
    let e = symmetric_eigenvalues(&i.rot);
    let tr = e.iter().sum::<f64>();
    let tol = INERTIA_SLACK * tr.abs() + slack;
    if i.mass == 0.0 && e[2] > tol {
        return Some(format!(
            "mass 0 with a rotational inertia of trace {tr:.3e}"
        ));
    }
    if e[0] < -tol {
        return Some(format!(
            "the rotational inertia is not positive semidefinite: principal moments [{:.4e}, {:.4e}, {:.4e}]",
            e[0], e[1], e[2]
        ));
    }
    if e[0] + e[1] < e[2] - tol {
        return Some(format!(
            "the principal moments [{:.4e}, {:.4e}, {:.4e}] violate the triangle inequality I₁ + I₂ ≥ I₃ ({:.4e} < {:.4e})",
            e[0], e[1], e[2], e[0] + e[1], e[2]
        ));
    }
    None
}

/// Apply `policy` to every body of `model`: notes for `keep` and `balance`, the first
/// refusal for `refuse`.
pub fn apply(model: &mut Model, policy: Policy) -> Result<(), ModelError> {
    let largest = model
        .bodies
        .iter()
        .map(|b| symmetric_eigenvalues(&b.inertia.rot)[2].abs())
        .filter(|x| x.is_finite())
        .fold(0.0_f64, f64::max);
    let slack = 1e-12 * largest;
    for b in &mut model.bodies {
        let Some(why) = unphysical(&b.inertia, slack) else {
            continue;
        };
        let what = match policy {
            Policy::Refuse => {
                return Err(ModelError::at(
                    &model.file,
                    &b.origin,
                    why,
                    "no rigid body has this inertia: check its units and axes, or give inertia = \"keep\" (load it as published) or \"balance\" (its principal moments set to their mean, as MuJoCo's balanceinertia)",
                ))
            }
            Policy::Keep => format!("{why}: kept as published (inertia = \"keep\")"),
            Policy::Balance if b.inertia.mass <= 0.0 => format!(
                "{why}: kept as published, since balancing sets the moments, not the mass (give the link its mass)"
            ),
            Policy::Balance => {
                let mean = (b.inertia.rot[0][0] + b.inertia.rot[1][1] + b.inertia.rot[2][2]) / 3.0;
                let mean = mean.max(0.0);
                b.inertia.rot = IDENTITY.map(|row| row.map(|x| x * mean));
                format!("{why}: balanced to the isotropic inertia {mean:.4e}·1 (inertia = \"balance\")")
            }
        };
        model.notes.push(ModelNote {
            at: b.origin.clone(),
            what,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(rot: [[f64; 3]; 3], mass: f64) -> Inertia {
        Inertia {
            mass,
            com: [0.0; 3],
            rot,
        }
    }

    #[test]
    fn a_rod_breaks_the_triangle_and_a_box_does_not() {
        let rod = body([[1e-3, 0.0, 0.0], [0.0, 1e-3, 0.0], [0.0, 0.0, 1e-2]], 1.0);
        assert!(unphysical(&rod, 0.0).unwrap().contains("triangle"));
        // A 1 × 2 × 3 box of 1 kg: (m/12)(b² + c², …).
        let b = |a: f64, c: f64| (a * a + c * c) / 12.0;
        let boxed = body(
            [
                [b(2.0, 3.0), 0.0, 0.0],
                [0.0, b(1.0, 3.0), 0.0],
                [0.0, 0.0, b(1.0, 2.0)],
            ],
            1.0,
        );
        assert_eq!(unphysical(&boxed, 0.0), None);
        let massless = body([[1e-6, 0.0, 0.0], [0.0, 1e-6, 0.0], [0.0, 0.0, 1e-6]], 0.0);
        assert!(unphysical(&massless, 0.0).unwrap().contains("mass 0"));
    }

    #[test]
    fn balance_keeps_the_trace_and_makes_the_inertia_physical() {
        let mut m = Model::default();
        m.bodies.push(super::super::description::Body {
            name: "rod".into(),
            inertia: body([[1e-3, 0.0, 0.0], [0.0, 1e-3, 0.0], [0.0, 0.0, 1e-2]], 1.0),
            origin: Default::default(),
        });
        apply(&mut m, Policy::Balance).unwrap();
        let r = m.bodies[0].inertia.rot;
        assert!((r[0][0] + r[1][1] + r[2][2] - 1.2e-2).abs() < 1e-15);
        assert_eq!(unphysical(&m.bodies[0].inertia, 0.0), None);
        assert_eq!(m.notes.len(), 1);
        let mut refused = m.clone();
        refused.bodies[0].inertia.rot[2][2] = 1e-2;
        assert!(apply(&mut refused, Policy::Refuse).is_err());
    }

    #[test]
    fn balance_leaves_a_massless_body_s_inertia_and_says_why() {
        let mut m = Model::default();
        let rotor = [[1e-6, 0.0, 0.0], [0.0, 2e-6, 0.0], [0.0, 0.0, 4e-6]];
        m.bodies.push(super::super::description::Body {
            name: "rotor".into(),
            inertia: body(rotor, 0.0),
            origin: Default::default(),
        });
        apply(&mut m, Policy::Balance).unwrap();
        assert_eq!(m.bodies[0].inertia.rot, rotor);
        assert!(m.notes[0]
            .what
            .contains("balancing sets the moments, not the mass"));
    }
}
