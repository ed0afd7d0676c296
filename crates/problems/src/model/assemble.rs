//! A model's start onto its loop closures, mimic rows and unit norms, in the mass metric
//! ([`crate::initial::project_start`]), robust to what real mechanisms bring:
//!
//! * **Redundant closure rows** (a planar four-bar closed by a ball or revolute joint:
//!   its out-of-plane rows are implied by the others): Φ_q is rank deficient and the
//!   projection's KKT matrix singular. When the projection onto every row fails, it runs
//!   on the rows independent at the start ([`independent_rows`] at [`ROUNDING_TOL`], the
//!   rounding of a file's printed digits), and the start is accepted when every row,
//!   removed ones included, then holds to [`ASSEMBLED_TOL`].
//! * **A seeded pose far from assembly** (`pose_seed`: every joint drawn within its
//!   limits, loops broken by radians): Newton from there may not converge. The start then
//!   moves from the file's assembled pose toward the drawn one by continuation — each
//!   step's pose projected before the next, the step halved where a projection fails —
//!   and ends at the drawn pose, or at the last assembled pose on the way (noted).
//!
//! A start whose projection onto every row converges is taken exactly as before: these
//! fallbacks change no number of a model that loaded without them. Both are bounded: the
//! row scan is dense (m·n ≤ [`independent_rows::MAX_DENSE_ENTRIES`]) and a continuation
//! tries at most 200 projections.

use super::import::description::{ModelNote, Origin};
use super::joint_coords::JointCoordinates;
use crate::independent_rows;
use driftlab_core::{MechanicalSystem, State};

/// Relative independence tolerance of the fallback projection: rows implied by the others
/// to a file's printed digits (about 6) count as redundant.
pub const ROUNDING_TOL: f64 = 1e-6;

/// `‖Φ‖∞` and `‖Φ_q v + Φ_t‖∞` a start must reach, relative to `1 + ‖q‖∞`.
pub const ASSEMBLED_TOL: f64 = 1e-10;

/// Smallest continuation step (as a fraction of the way) before it stops.
const SMALLEST_STEP: f64 = 1.0 / 1024.0;

/// Most projections one continuation tries (each a Newton projection of the whole model).
const MOST_PROJECTIONS: usize = 200;

/// Whether `st` satisfies every row of `sys` to [`ASSEMBLED_TOL`].
fn assembled(sys: &dyn MechanicalSystem, st: &State) -> bool {
    let (pos, vel) = crate::initial::mechanical_residuals(sys, st);
    let scale = 1.0 + st.q.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
    pos <= ASSEMBLED_TOL * scale && vel <= ASSEMBLED_TOL * scale
}

/// A projected start, and how far it holds the rows it was not projected onto.
pub struct Projected {
    /// The state.
    pub state: State,
    /// `(rows, ‖Φ‖∞)`: rows left out as redundant to the printed digits, and the largest
    /// residual of any row, when that is above [`ASSEMBLED_TOL`] (within [`LOOSE_TOL`]).
    pub loose: Option<(usize, f64)>,
}

/// The largest residual, relative to `1 + ‖q‖∞`, that rows left out of a projection may
/// keep: what a file's 5-digit angles leave in a loop closed redundantly (Cassie's
/// plantar four-bars: 3e-6 after a seeded pose), far below a row that is not redundant.
pub const LOOSE_TOL: f64 = 1e-4;

/// `st` projected onto `sys`'s rows: on all of them, else on those independent at the
/// assembled pose `near` (off the constraints, rows redundant by design need not look
/// redundant); the reason when neither assembles it.
pub fn project(sys: &JointCoordinates, st: &State, near: &State) -> Result<Projected, String> {
    // A projection onto every row that converges is taken as it is, as before this
    // module existed: the fallbacks change no start that projected.
    let mut full = st.clone();
    let first = match crate::initial::project_start(sys, &mut full) {
        Ok(()) => {
            return Ok(Projected {
                state: full,
                loose: None,
            })
        }
        Err(e) => e.to_string(),
    };
    let d = sys.dims();
    if d.m * d.n > independent_rows::MAX_DENSE_ENTRIES {
        return Err(format!(
            "{first}; the rows are too many to scan for redundant ones (m·n = {} > {})",
            d.m * d.n,
            independent_rows::MAX_DENSE_ENTRIES
        ));
    }
    let m = d.m;
    let rows = independent_rows::independent_at_state(sys, near, ROUNDING_TOL);
    if rows.len() == m {
        return Err(first);
    }
    let kept = rows.len();
    let view = independent_rows::view(sys, rows);
    let mut part = st.clone();
    crate::initial::project_start(&view, &mut part)
        .map_err(|e| format!("{first}; on the {kept} independent rows: {e}"))?;
    if assembled(sys, &part) {
        return Ok(Projected {
            state: part,
            loose: None,
        });
    }
    let (pos, vel) = crate::initial::mechanical_residuals(sys, &part);
    let scale = 1.0 + part.q.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
    if pos.max(vel) <= LOOSE_TOL * scale {
        return Ok(Projected {
            state: part,
            loose: Some((m - kept, pos.max(vel))),
        });
    }
    Err(format!("{first}; projected on the {kept} independent rows, the other {} keep ‖Φ‖∞ = {pos:.1e} (they are not redundant)", m - kept))
}

/// From the assembled `from` toward `target` (both of `sys`'s layout) by continuation:
/// the pose reached and the fraction of the way.
pub fn toward(sys: &JointCoordinates, from: &Projected, target: &State) -> (Projected, f64) {
    let (mut s, mut ds) = (0.0_f64, 0.25_f64);
    let mut reached = Projected {
        state: from.state.clone(),
        loose: from.loose,
    };
    let mut tries = 0;
    while s < 1.0 && ds >= SMALLEST_STEP && tries < MOST_PROJECTIONS {
        tries += 1;
        let next = (s + ds).min(1.0);
        let mut trial = reached.state.clone();
        for (k, q) in trial.q.iter_mut().enumerate() {
            *q += (next - s) * (target.q[k] - from.state.q[k]);
        }
        trial.v.clone_from(&target.v);
        match project(sys, &trial, &reached.state) {
            Ok(p) => {
                reached = p;
                s = next;
                ds *= 2.0;
            }
            Err(_) => ds *= 0.5,
        }
    }
    (reached, s)
}

/// A note of a start that holds some rows only to the printed digits.
pub fn loose_note(rows: usize, residual: f64) -> ModelNote {
    ModelNote {
        at: Origin {
            element: "the start".into(),
            line: None,
        },
        what: format!("{rows} constraint rows implied by the others to the file's printed digits hold to ‖Φ‖∞ = {residual:.1e} at the start, the others to round-off; give redundant = \"remove\" (redundant_tol = 1e-5) to drop them"),
    }
}

/// A note of where a seeded start ended when the drawn pose could not be assembled.
pub fn partway_note(fraction: f64, seed: u64) -> ModelNote {
    ModelNote {
        at: Origin {
            element: format!("pose_seed = {seed}"),
            line: None,
        },
        what: format!("the drawn pose does not assemble: the start is the assembled pose {:.1} % of the way from the file's pose to it", 100.0 * fraction),
    }
}
