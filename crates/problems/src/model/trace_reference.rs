//! A converged trajectory as the reference of a model without an exact solution
//! (`reference_trace`, issue 47): the trace `driftlab simulate --trace` writes of a run at a
//! fine step (columns `t, q0…, v0…, …`), with its accuracy measured by whoever made it (the
//! same method at twice the step: `reference_accuracy`). Between the trace's times, q is
//! the cubic Hermite interpolant of (q, v) and v that of (v, a) with `a` the central
//! difference of v (one-sided at the ends); at a trace time the stored state is returned
//! as written. The multipliers are not given (their error column stays null). A run past
//! the trace's end is outside the reference's domain.

use driftlab_core::{ExactSolution, MechanicalSystem, ParamError, ReferenceDomain};
use std::sync::Arc;

/// The largest trace read (a run of 2 s at h = 1e-4 of 30 coordinates is about 30 MB).
pub const MAX_TRACE_BYTES: u64 = 512 << 20;

/// A trajectory sampled at increasing times.
#[derive(Debug)]
pub struct Trace {
    n: usize,
    t: Vec<f64>,
    /// Row-major `q` (times × n).
    q: Vec<f64>,
    /// Row-major `v` (times × n).
    v: Vec<f64>,
    file: String,
}

fn invalid(message: String) -> ParamError {
    super::invalid(message)
}

impl Trace {
    /// Read the trace `path` of a model of `n` coordinates.
    pub fn read(path: &str, n: usize) -> Result<Self, ParamError> {
        let meta = std::fs::metadata(path).map_err(|e| invalid(format!("reference_trace = \"{path}\": {e}; give a trace written by `driftlab simulate --trace`")))?;
        if meta.len() > MAX_TRACE_BYTES {
            return Err(invalid(format!("reference_trace = \"{path}\" is {} bytes, above the {MAX_TRACE_BYTES} read; write the reference with a coarser step or a shorter end time", meta.len())));
        }
        let text = std::fs::read_to_string(path)
            .map_err(|e| invalid(format!("reference_trace = \"{path}\": {e}")))?;
        Self::parse(path, &text, n)
    }

    /// Parse the trace text of a model of `n` coordinates.
    pub fn parse(path: &str, text: &str, n: usize) -> Result<Self, ParamError> {
        let mut lines = text.lines();
        let header: Vec<&str> = lines
            .next()
            .unwrap_or("")
            .split(',')
            .map(str::trim)
            .collect();
        let col = |name: String| {
            header.iter().position(|h| *h == name).ok_or_else(|| invalid(format!("reference_trace = \"{path}\": no column `{name}` (the model has {n} coordinates); give the trace of this model written by `driftlab simulate --trace`")))
        };
        let tc = col("t".into())?;
        let qc = (0..n)
            .map(|k| col(format!("q{k}")))
            .collect::<Result<Vec<_>, _>>()?;
        let vc = (0..n)
            .map(|k| col(format!("v{k}")))
            .collect::<Result<Vec<_>, _>>()?;
        let mut tr = Trace {
            n,
            t: Vec::new(),
            q: Vec::new(),
            v: Vec::new(),
            file: path.to_string(),
        };
        for (k, line) in lines.enumerate() {
            let cells: Vec<&str> = line.split(',').collect();
            let num = |c: usize| -> Result<f64, ParamError> {
                cells.get(c).and_then(|s| s.trim().parse::<f64>().ok()).filter(|x| x.is_finite()).ok_or_else(|| invalid(format!("reference_trace = \"{path}\": line {}: column {} is not a finite number", k + 2, header[c])))
            };
            let t = num(tc)?;
            if tr.t.last().is_some_and(|&last| t <= last) {
                return Err(invalid(format!(
                    "reference_trace = \"{path}\": line {}: t = {t} does not increase",
                    k + 2
                )));
            }
            tr.t.push(t);
            for &c in &qc {
                tr.q.push(num(c)?);
            }
            for &c in &vc {
                tr.v.push(num(c)?);
            }
        }
        if tr.t.len() < 2 {
            return Err(invalid(format!(
                "reference_trace = \"{path}\": {} rows; give a trace of a whole run",
                tr.t.len()
            )));
        }
        Ok(tr)
    }

    /// The end time.
    pub fn end(&self) -> f64 {
        self.t[self.t.len() - 1]
    }

    fn row<'a>(&self, x: &'a [f64], k: usize) -> &'a [f64] {
        &x[k * self.n..(k + 1) * self.n]
    }

    /// `v`'s rate at sample `k` by central differences (one-sided at the ends).
    fn rate(&self, k: usize, i: usize) -> f64 {
        let (a, b) = (k.saturating_sub(1), (k + 1).min(self.t.len() - 1));
        (self.v[b * self.n + i] - self.v[a * self.n + i]) / (self.t[b] - self.t[a])
    }

    /// The state at `t`, within the trace's span (to a relative 1e-12).
    pub fn at(&self, t: f64) -> Option<ExactSolution> {
        let slack = 1e-12 * self.end().abs().max(1.0);
        if !(t >= self.t[0] - slack && t <= self.end() + slack) {
            return None;
        }
        let k = self
            .t
            .partition_point(|&s| s <= t)
            .clamp(1, self.t.len() - 1)
            - 1;
        for j in [k, k + 1] {
            if (self.t[j] - t).abs() <= slack {
                let lambda = Vec::new();
                return Some(ExactSolution {
                    q: self.row(&self.q, j).to_vec(),
                    v: self.row(&self.v, j).to_vec(),
                    lambda,
                });
            }
        }
        let (t0, t1) = (self.t[k], self.t[k + 1]);
        let dt = t1 - t0;
        let s = (t - t0) / dt;
        let (h00, h10, h01, h11) = (
            2.0 * s.powi(3) - 3.0 * s * s + 1.0,
            s.powi(3) - 2.0 * s * s + s,
            -2.0 * s.powi(3) + 3.0 * s * s,
            s.powi(3) - s * s,
        );
        let hermite = |y0: f64, d0: f64, y1: f64, d1: f64| {
            h00 * y0 + h10 * dt * d0 + h01 * y1 + h11 * dt * d1
        };
        let (q0, q1, v0, v1) = (
            self.row(&self.q, k),
            self.row(&self.q, k + 1),
            self.row(&self.v, k),
            self.row(&self.v, k + 1),
        );
        let q = (0..self.n)
            .map(|i| hermite(q0[i], v0[i], q1[i], v1[i]))
            .collect();
        let v = (0..self.n)
            .map(|i| hermite(v0[i], self.rate(k, i), v1[i], self.rate(k + 1, i)))
            .collect();
        Some(ExactSolution {
            q,
            v,
            lambda: Vec::new(),
        })
    }
}

/// `inner` with `trace` as its exact solution, good to `accuracy`.
pub struct TraceReferenced<S> {
    inner: S,
    trace: Arc<Trace>,
    accuracy: f64,
}

impl<S: MechanicalSystem> TraceReferenced<S> {
    /// `inner` referenced by `trace` (read for `inner`'s coordinates), whose own error is
    /// `accuracy` (absolute, in q).
    pub fn new(inner: S, trace: Trace, accuracy: f64) -> Result<Self, ParamError> {
        if !(accuracy.is_finite() && accuracy > 0.0) {
            return Err(invalid(format!("reference_accuracy = {accuracy}: give the trace's own error bound, > 0 (e.g. its largest |q| difference from the same method at twice the step)")));
        }
        Ok(Self {
            inner,
            trace: Arc::new(trace),
            accuracy,
        })
    }
}

impl<S: MechanicalSystem> MechanicalSystem for TraceReferenced<S> {
    driftlab_core::forward_mechanical!(inner;
        info, dims, mass_pattern, mass, forces, constraints, jacobian_pattern, jacobian,
        phi_t, curvature, constraint_hessian, tangent, energy, energy_scale,
        nonholonomic_rows, prioritized, unilateral, row_kinds, momentum, initial_state,
        actuators, threads);
    fn exact(&self, t: f64) -> Option<ExactSolution> {
        self.trace.at(t)
    }
    fn reference_domain(&self, t_end: f64) -> ReferenceDomain {
        if t_end > self.trace.end() * (1.0 + 1e-12) {
            return ReferenceDomain::Outside(format!(
                "the reference trace {} ends at t = {}, before t_end = {t_end}",
                self.trace.file,
                self.trace.end()
            ));
        }
        ReferenceDomain::Valid {
            accuracy: self.accuracy,
            basis: format!(
                "a converged trace ({}), its accuracy measured by its maker",
                self.trace.file
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// q = sin t sampled at h = 0.01: at the samples exact, between them the Hermite
    /// interpolant's error O(h⁴) and v's (through central-difference rates) O(h³).
    #[test]
    #[allow(clippy::float_cmp)] // a sample comes back as written, bit for bit
    fn a_trace_is_interpolated_to_its_order() {
        let mut text = String::from("t,q0,v0,lambda0\n");
        for k in 0..=100 {
            let t = 0.01 * k as f64;
            text += &format!("{t:e},{:e},{:e},0\n", t.sin(), t.cos());
        }
        let tr = Trace::parse("sin.csv", &text, 1).expect("parses");
        let at = tr.at(0.3).expect("inside");
        assert_eq!(at.q[0], 0.3_f64.sin());
        let mid = tr.at(0.455).expect("inside");
        assert!(
            (mid.q[0] - 0.455_f64.sin()).abs() < 1e-9,
            "{}",
            mid.q[0] - 0.455_f64.sin()
        );
        assert!(
            (mid.v[0] - 0.455_f64.cos()).abs() < 1e-6,
            "{}",
            mid.v[0] - 0.455_f64.cos()
        );
        assert!(mid.lambda.is_empty());
        assert!(tr.at(1.5).is_none(), "past the end");
        let bad = Trace::parse("x.csv", "t,q0,v0\n0,1,2\n0,1,2\n", 1).expect_err("t repeats");
        assert!(bad.to_string().contains("does not increase"), "{bad}");
        let missing = Trace::parse("x.csv", "t,q0\n0,1\n", 1).expect_err("no v0");
        assert!(missing.to_string().contains("no column `v0`"), "{missing}");
        for (text, says) in [
            (
                "t,q0,v0\n0,1,2\n1,NaN,2\n",
                "line 3: column q0 is not a finite number",
            ),
            (
                "t,q0,v0\n0,1,2\n1,abc,2\n",
                "line 3: column q0 is not a finite number",
            ),
            (
                "t,q0,v0\n0,1,2\n1,1\n",
                "line 3: column v0 is not a finite number",
            ),
            ("t,q0,v0\n0,1,2\n", "1 rows"),
        ] {
            let e = Trace::parse("x.csv", text, 1).expect_err(text);
            assert!(e.to_string().contains(says), "{e}");
        }
    }

    proptest::proptest! {
        /// Junk spliced into a trace: a trace or an error, never a panic.
        #[test]
        fn the_trace_reader_survives_hostile_input(at in 0usize..60, junk in "[-+.,eE0-9naifNA \n]{0,80}") {
            let base = "t,q0,v0\n0,0,1\n0.1,0.1,1\n0.2,0.2,1\n";
            let cut = at.min(base.len());
            let text = format!("{}{junk}{}", &base[..cut], &base[cut..]);
            if let Ok(tr) = Trace::parse("x.csv", &text, 1) {
                let _ = tr.at(0.05);
                let _ = tr.at(f64::NAN);
            }
        }
    }
}
