//! The parameters every problem takes besides its own (`redundant`, `disturbance`,
//! `initial`, `copies`), taken out of the table before the problem's own build and
//! applied to the problem it built.

use crate::entry::{Problem, ProblemEntry};
use crate::{copies, disturbance, independent_rows, initial};
use driftlab_core::ParamError;

impl ProblemEntry {
    /// Build from `table`, with the reserved parameters taken out first and applied to
    /// the built problem: `redundant = "remove"` ([`independent_rows`]), a
    /// `disturbance` force pulse ([`disturbance`]), the `initial` table ([`initial`]: a
    /// user's start, checked and refused or projected) and then `copies = k`
    /// ([`copies`]: `k` independent copies stepped as one system).
    /// Every catalog and user problem gets them through this one function.
    pub fn instantiate(&self, table: &toml::Table) -> Result<Problem, ParamError> {
        let (mut params, start) = initial::split(self.id, table)?;
        let remove = independent_rows::split(self.id, &mut params)?;
        let pulse = disturbance::split(self.id, &mut params)?;
        let copies = copies::split(self.id, &mut params)?;
        let mut problem = (self.build)(&params)?;
        if let Some(tol) = remove {
            problem = independent_rows::apply(self.id, problem, tol)?;
        }
        if let Some(p) = pulse {
            problem = disturbance::apply(self.id, problem, p)?;
        }
        if let Some(s) = start {
            problem = initial::apply(self.id, problem, &s)?;
        }
        match copies {
            Some(k) => copies::apply(self.id, problem, k),
            None => Ok(problem),
        }
    }
}
