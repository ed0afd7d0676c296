//! One run of a catalog method on a catalog problem, for the integration tests: the
//! drive-and-observe lines every test needs, written once.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)] // each test uses a part

use driftlab_core::{
    drive, MethodStats, MetricsObserver, Observer, RunStatus, Schedule, State, SummaryMetrics,
    TrajectoryRecorder,
};

/// What a run gave.
pub struct Run {
    /// Ok or the failure.
    pub status: RunStatus,
    /// The summary metrics.
    pub summary: SummaryMetrics,
    /// The last state.
    pub final_state: State,
    /// The states every `sample` time units (with [`Case::sampled`]).
    pub states: Vec<State>,
    /// The method's counters.
    pub stats: MethodStats,
}

/// A problem, a method (with an optional projection) and a fixed step.
pub struct Case<'a> {
    pub problem: &'a str,
    pub problem_params: &'a str,
    pub method: &'a str,
    pub method_params: &'a str,
    pub projection: Option<&'a str>,
    pub h: f64,
    pub t_end: f64,
    /// Record the state every this many time units (0: none).
    pub sample: f64,
}

impl<'a> Case<'a> {
    /// `method` (default parameters, no projection) on `problem` (default parameters).
    pub fn new(problem: &'a str, method: &'a str, h: f64, t_end: f64) -> Self {
        Self {
            problem,
            problem_params: "",
            method,
            method_params: "",
            projection: None,
            h,
            t_end,
            sample: 0.0,
        }
    }
    /// With these problem parameters (TOML).
    pub fn problem_params(mut self, p: &'a str) -> Self {
        self.problem_params = p;
        self
    }
    /// With these method parameters (TOML).
    pub fn params(mut self, p: &'a str) -> Self {
        self.method_params = p;
        self
    }
    /// Under the projection decorator with these parameters (TOML).
    pub fn projection(mut self, p: &'a str) -> Self {
        self.projection = Some(p);
        self
    }
    /// Recording the state every `every` time units.
    pub fn sampled(mut self, every: f64) -> Self {
        self.sample = every;
        self
    }

    /// Run it.
    pub fn run(&self) -> Run {
        let table = |s: &str| -> toml::Table { s.parse().expect("valid toml") };
        let p = driftlab_problems::build(self.problem, &table(self.problem_params)).unwrap();
        let proj = self.projection.map(table);
        let mut m = driftlab_methods::build(self.method, &table(self.method_params), proj.as_ref())
            .unwrap();
        let mut obs = MetricsObserver::new(0);
        let stride = if self.sample > 0.0 {
            (self.sample / self.h).round() as usize
        } else {
            usize::MAX
        };
        let mut rec = TrajectoryRecorder::new(stride);
        let out = drive(
            p.as_system(),
            m.as_mut(),
            &Schedule::fixed(self.h, self.t_end),
            &mut [&mut obs as &mut dyn Observer, &mut rec],
        );
        Run {
            status: out.status,
            summary: obs.summary,
            final_state: out.final_state,
            stats: out.stats,
            states: rec.points.into_iter().map(|(s, _)| s).collect(),
        }
    }

    /// Run it and insist that it succeeds: the summary.
    pub fn ok(&self) -> SummaryMetrics {
        let r = self.run();
        assert_eq!(
            r.status,
            RunStatus::Ok,
            "{} on {}",
            self.method,
            self.problem
        );
        r.summary
    }
}

/// Least-squares slope of log e against log h (an observed order).
pub fn slope(hs: &[f64], es: &[f64]) -> f64 {
    let x: Vec<f64> = hs.iter().map(|h| h.ln()).collect();
    let y: Vec<f64> = es.iter().map(|e| e.ln()).collect();
    let n = x.len() as f64;
    let (mx, my) = (x.iter().sum::<f64>() / n, y.iter().sum::<f64>() / n);
    let sxy: f64 = x.iter().zip(&y).map(|(a, b)| (a - mx) * (b - my)).sum();
    let sxx: f64 = x.iter().map(|a| (a - mx) * (a - mx)).sum();
    sxy / sxx
}
