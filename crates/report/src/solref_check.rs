//! The tuning guide's MuJoCo conversion against MuJoCo itself: `solref_check.csv`, written
//! by `scripts/mujoco_peer.py` into the MuJoCo peer's experiment folder, holds the
//! pendulum row's measured response r(t)/r₀ to an initial violation r₀ (zero gravity, at
//! rest) in MuJoCo with the `solref` = (τ, ζ) the script used, with the impedance held at
//! d_max (solimp d₀ = d_width) and at MuJoCo's default. The report computes what the guide
//! promises itself: the solref from [`crate::tuning::solref`] and the response of the
//! error ODE r'' + 2ξω_n r' + ω_n² r = 0, r(0) = 1, r'(0) = 0 in closed form — and
//! judges the held-impedance rows against the error scale ω_n h of MuJoCo's first-order
//! (semi-implicit Euler) step.

use crate::book::Book;
use crate::data::Results;

/// The columns of `solref_check.csv` (written by `scripts/mujoco_peer.py`).
pub const COLUMNS: [&str; 8] = [
    "xi", "omega_n", "tau", "zeta", "h", "solimp", "t", "measured",
];

/// One sample of the check.
#[derive(Debug)]
struct Sample {
    xi: f64,
    wn: f64,
    tau: f64,
    zeta: f64,
    h: f64,
    solimp: String,
    t: f64,
    measured: f64,
}

/// r(t)/r₀ of r'' + 2ξω_n r' + ω_n² r = 0 with r'(0) = 0: under-, critically and
/// over-damped.
pub fn error_ode_response(xi: f64, wn: f64, t: f64) -> f64 {
    let decay = (-xi * wn * t).exp();
    if (xi - 1.0).abs() < 1e-12 {
        (1.0 + wn * t) * decay
    } else if xi < 1.0 {
        let s = (1.0 - xi * xi).sqrt();
        decay * ((s * wn * t).cos() + xi / s * (s * wn * t).sin())
    } else {
        let s = (xi * xi - 1.0).sqrt();
        decay * ((s * wn * t).cosh() + xi / s * (s * wn * t).sinh())
    }
}

/// The samples of `text`, or the first line that cannot be read (named).
fn parse(text: &str) -> Result<Vec<Sample>, String> {
    let mut lines = text.lines().enumerate();
    let header: Vec<&str> = lines
        .next()
        .map(|(_, l)| l.trim_end().split(',').collect())
        .unwrap_or_default();
    let idx = COLUMNS
        .iter()
        .map(|c| header.iter().position(|h| h == c).ok_or(*c))
        .collect::<Result<Vec<usize>, &str>>()
        .map_err(|c| {
            format!(
                "no column `{c}` in its header (expected {})",
                COLUMNS.join(",")
            )
        })?;
    lines
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(k, l)| {
            let f: Vec<&str> = l.trim_end().split(',').collect();
            let text = |c: usize| f.get(idx[c]).copied().unwrap_or("");
            let num = |c: usize| {
                text(c)
                    .parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite())
                    .ok_or_else(|| {
                        format!(
                            "line {}: `{}` = `{}` is not a finite number",
                            k + 1,
                            COLUMNS[c],
                            text(c)
                        )
                    })
            };
            Ok(Sample {
                xi: num(0)?,
                wn: num(1)?,
                tau: num(2)?,
                zeta: num(3)?,
                h: num(4)?,
                solimp: text(5).to_string(),
                t: num(6)?,
                measured: num(7)?,
            })
        })
        .collect()
}

/// Whether a `solimp` holds the impedance constant: d₀ = d_width (its first two numbers).
fn impedance_held(solimp: &str) -> bool {
    let d: Vec<f64> = solimp
        .split_whitespace()
        .take(2)
        .filter_map(|x| x.parse().ok())
        .collect();
    d.len() == 2 && (d[0] - d[1]).abs() <= 1e-12
}

impl Sample {
    /// The guide's promise at this sample.
    fn predicted(&self) -> f64 {
        error_ode_response(self.xi, self.wn, self.t)
    }
    /// Whether the script's solref is the guide's conversion of (ξ, ω_n).
    fn solref_is_the_guides(&self) -> bool {
        let (tau, zeta) = crate::tuning::solref(self.xi, self.wn);
        (self.tau - tau).abs() <= 1e-9 * tau && (self.zeta - zeta).abs() <= 1e-9
    }
    /// |measured − predicted| in units of the step's error scale ω_n h.
    fn deviation_in_steps(&self) -> f64 {
        (self.measured - self.predicted()).abs() / (self.wn * self.h)
    }
}

/// What the samples show, in one paragraph computed from them.
fn verdict(s: &[Sample]) -> String {
    let worst = |held: bool| {
        s.iter()
            .filter(|x| held == impedance_held(&x.solimp))
            .map(|x| ((x.measured - x.predicted()).abs(), x.deviation_in_steps()))
            .fold(None, |m: Option<(f64, f64)>, (d, r)| {
                Some(m.map_or((d, r), |(md, mr)| (md.max(d), mr.max(r))))
            })
    };
    let foreign: Vec<&Sample> = s.iter().filter(|x| !x.solref_is_the_guides()).collect();
    let mut out = String::new();
    if let Some(x) = foreign.first() {
        out.push_str(&format!(
            "{} sample(s) ran a solref that is not the guide's conversion (first: ξ = {}, ω_n = {} ran ({}, {})); ",
            foreign.len(),
            x.xi,
            x.wn,
            x.tau,
            x.zeta
        ));
    }
    match worst(true) {
        Some((d, r)) => out.push_str(&format!(
            "with the impedance held at d_max the measured r(t)/r₀ is within {d:.3} of the error ODE's, {r:.2} × ω_n h \
             at worst — {} (rule: within ω_n h, the error scale of MuJoCo's first-order step)",
            if r <= 1.0 && foreign.is_empty() { "the conversion holds" } else { "the conversion does not hold" }
        )),
        None => out.push_str("no sample holds the impedance at d_max, so the conversion is not checked"),
    }
    if let Some((d, r)) = worst(false) {
        let ds: Vec<&str> = s
            .iter()
            .find(|x| !impedance_held(&x.solimp))
            .map(|x| x.solimp.split_whitespace().take(2).collect())
            .unwrap_or_default();
        out.push_str(&format!(
            "; with MuJoCo's default solimp (impedance from {} to {} with the violation, which the linear error ODE does \
             not model) it deviates by up to {d:.3} ({r:.2} × ω_n h).",
            ds.first().unwrap_or(&"?"),
            ds.get(1).unwrap_or(&"?")
        ));
    } else {
        out.push('.');
    }
    out
}

/// The check's table and what it shows, if an experiment folder holds one; a file that
/// cannot be read is said, not skipped.
pub fn write(b: &mut Book, all: &[Results]) {
    for res in all {
        let Ok(text) = std::fs::read_to_string(res.dir.join("solref_check.csv")) else {
            continue;
        };
        let s = match parse(&text) {
            Ok(s) if !s.is_empty() => s,
            Ok(_) => continue,
            Err(e) => {
                b.paragraph(&format!(
                    "solref_check.csv of experiment {} cannot be read: {e}.",
                    res.name
                ));
                continue;
            }
        };
        b.paragraph(&format!(
            "Checked in MuJoCo (experiment {}): the pendulum's row started with a violation r₀ at rest without gravity; {}",
            res.name,
            verdict(&s)
        ));
        b.table(
            &[
                "(ξ, ω_n)",
                "solref (τ, ζ)",
                "solimp",
                "ω_n t",
                "r/r₀ guide",
                "r/r₀ MuJoCo",
                "difference / ω_n h",
            ],
            &s.iter().map(row).collect::<Vec<_>>(),
        );
    }
}

/// One table row of a sample.
fn row(x: &Sample) -> Vec<String> {
    vec![
        format!("ξ = {}, ω_n = {}", x.xi, x.wn),
        format!("({:.3}, {})", x.tau, x.zeta),
        x.solimp.clone(),
        format!("{:.0}", x.t * x.wn),
        format!("{:.4}", x.predicted()),
        format!("{:.4}", x.measured),
        format!("{:+.2}", (x.measured - x.predicted()) / (x.wn * x.h)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_impedance_is_held_when_d0_equals_d_width() {
        assert!(impedance_held("0.95 0.95 0.001 0.5 2"));
        assert!(!impedance_held("0.9 0.95 0.001 0.5 2"));
        assert!(!impedance_held("0.9"));
    }

    /// The closed form against RK4 on the ODE (h = 1e-4, error O(h⁴)) in all three
    /// damping regimes.
    #[test]
    fn the_error_ode_response_solves_the_ode() {
        for (xi, wn) in [(0.3, 10.0), (1.0, 10.0), (2.5, 10.0)] {
            let f = |r: f64, v: f64| (v, -2.0 * xi * wn * v - wn * wn * r);
            let (mut r, mut v, h) = (1.0, 0.0, 1e-4);
            for k in 1..=4000u32 {
                let (a1, b1) = f(r, v);
                let (a2, b2) = f(r + h / 2.0 * a1, v + h / 2.0 * b1);
                let (a3, b3) = f(r + h / 2.0 * a2, v + h / 2.0 * b2);
                let (a4, b4) = f(r + h * a3, v + h * b3);
                r += h / 6.0 * (a1 + 2.0 * a2 + 2.0 * a3 + a4);
                v += h / 6.0 * (b1 + 2.0 * b2 + 2.0 * b3 + b4);
                if k.is_multiple_of(1000) {
                    let exact = error_ode_response(xi, wn, k as f64 * h);
                    assert!((r - exact).abs() < 1e-10, "ξ = {xi}: {r} vs {exact}");
                }
            }
        }
    }

    const HEADER: &str = "xi,omega_n,tau,zeta,h,solimp,t,measured\n";

    #[test]
    fn the_verdict_follows_the_rule_and_bad_files_are_named() {
        let t = 0.1;
        let p = error_ode_response(1.0, 10.0, t);
        let held = |m: f64| format!("1.0,10.0,0.1,1.0,0.001,0.95 0.95 0.001 0.5 2,{t},{m}\n");
        let ok = parse(&format!("{HEADER}{}", held(p + 0.005))).expect("parse");
        assert!(
            verdict(&ok).contains("the conversion holds"),
            "{}",
            verdict(&ok)
        );
        let off = parse(&format!("{HEADER}{}", held(p + 0.02))).expect("parse");
        assert!(verdict(&off).contains("does not hold"), "{}", verdict(&off));
        let foreign = parse(&format!(
            "{HEADER}1.0,10.0,0.2,1.0,0.001,0.95 0.95 0.001 0.5 2,{t},{p}\n"
        ))
        .expect("parse");
        assert!(verdict(&foreign).contains("does not hold"));
        let e = parse(&format!("{HEADER}{}", held(f64::NAN))).unwrap_err();
        assert!(e.contains("line 2") && e.contains("measured"), "{e}");
        let e = parse("xi,omega_n\n1,2\n").unwrap_err();
        assert!(e.contains("`tau`"), "{e}");
    }
}
