//! The recommendation of each problem class, as the report prints it: the setting that
//! meets the class's target on every instance at the least step time, its ties inside
//! the timing spread, the best setting of another method with the cost ratio, and, where
//! no setting covers the class, the best per instance (rule and cost definition:
//! [`driftlab_results::verdict`]).

use crate::data::{Order, Results, Run};
use crate::orders_table::Verdict as OrderVerdict;
use crate::role::Role;
use driftlab_results::verdict::{self, Candidate, ClassVerdict, Cost, Entry, Target};

/// A class's runs with their verdict.
pub(crate) struct ClassView<'a> {
    runs: Vec<&'a Run>,
    verdict: ClassVerdict,
    role: &'a Role<'a>,
    /// The experiment's fitted orders (a setting whose order falls below its declared one
    /// says so beside it).
    orders: &'a [Order],
}

impl<'a> ClassView<'a> {
    /// The verdict of `role` (`None`: no target).
    pub(crate) fn of(res: &'a Results, role: &'a Role<'a>) -> Option<Self> {
        let target = Target {
            value: role.spec.target?,
            higher_is_better: role.spec.higher_is_better,
        };
        let runs: Vec<&Run> = role
            .runs
            .iter()
            .copied()
            .filter(|r| r.ensemble_stats().is_none())
            .collect();
        let entries: Vec<Entry> = runs.iter().map(|r| entry(role, r)).collect();
        Some(Self {
            verdict: verdict::judge(&entries, target),
            runs,
            role,
            orders: &res.orders,
        })
    }

    /// The runs of the recommended setting, one per instance (the best per instance where
    /// no setting covers the class): what the class's key figure is drawn from.
    pub(crate) fn recommended_runs(&self) -> Vec<&'a Run> {
        let chosen: Vec<&Candidate> = match self.verdict.winner() {
            Some(w) => vec![w],
            None => self
                .verdict
                .per_instance
                .iter()
                .filter_map(|(_, list)| list.first())
                .collect(),
        };
        chosen
            .iter()
            .flat_map(|c| c.entries.iter().map(|&k| self.runs[k]))
            .collect()
    }

    /// The setting's label: method label, coordinate choice, step or tolerance.
    fn label(&self, c: &Candidate) -> String {
        let r = self.runs[c.entries[0]];
        let coordinates = serde_json::from_str::<serde_json::Value>(&r.problem_params)
            .ok()
            .and_then(|p| {
                p.get("coordinates")?
                    .as_str()
                    .map(|c| format!(" in {c} coordinates"))
            })
            .unwrap_or_default();
        let step = match r.rtol {
            Some(rtol) => format!("rtol = {rtol:.0e}"),
            None => format!("h = {:.1e}", r.h),
        };
        format!("{}{coordinates}, {step}", r.variant)
    }

    /// The worst value of the measure over the setting's instances.
    fn worst(&self, c: &Candidate) -> Option<f64> {
        let values = c
            .entries
            .iter()
            .filter_map(|&k| self.role.value(self.runs[k]));
        if self.role.spec.higher_is_better {
            values.reduce(f64::min)
        } else {
            values.reduce(f64::max)
        }
    }

    /// `label at cost (…), worst measure v`, and the orders the setting's method falls
    /// short of on this problem.
    fn describe(&self, c: &Candidate) -> String {
        self.describe_with(c, true)
    }

    /// [`Self::describe`], with or without the counters (the summary table leaves them to
    /// the class's sentences).
    fn describe_with(&self, c: &Candidate, counters: bool) -> String {
        let counters = if counters {
            format!(", {}", self.counters(c))
        } else {
            String::new()
        };
        format!(
            "{} at {}{counters} ({} {}){}",
            self.label(c),
            cost_text(&c.cost),
            if c.entries.len() > 1 { "worst" } else { "" },
            self.value_text(self.worst(c)),
            self.reduced_orders(c)
        )
        .replace("( ", "(")
    }

    /// The deterministic cost counters of the setting's runs, summed over its instances:
    /// steps, Jacobian evaluations, factorizations and Newton iterations (those that are
    /// not zero), which do not vary from run to run as times do.
    fn counters(&self, c: &Candidate) -> String {
        let sum = |f: fn(&Run) -> u64| -> u64 { c.entries.iter().map(|&k| f(self.runs[k])).sum() };
        let counts = [
            (sum(|r| r.steps), "steps"),
            (sum(|r| r.jacobian_evaluations), "Jacobians"),
            (sum(|r| r.factorizations), "factorizations"),
            (sum(|r| r.newton_iterations), "Newton iterations"),
        ];
        counts
            .iter()
            .filter(|(n, what)| *n > 0 || *what == "steps")
            .map(|(n, what)| format!("{n} {what}"))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// `; its observed order in v is 0.00 against the declared 4 (reduced)` for every
    /// quantity whose fit over the setting's method variant on its problems falls below the
    /// declared order (the orders table's verdict `reduced`).
    fn reduced_orders(&self, c: &Candidate) -> String {
        let mut out = String::new();
        for &k in &c.entries {
            let r = self.runs[k];
            let reduced = self.orders.iter().filter(|o| {
                o.variant == r.variant
                    && o.problem == r.problem
                    && o.problem_params == r.problem_params
                    && crate::orders_table::verdict(o) == OrderVerdict::Reduced
            });
            for o in reduced {
                out.push_str(&format!(
                    "; its observed order in {} is {:.2} against the declared {} (reduced: a finer step does not gain what the order promises)",
                    o.quantity,
                    o.observed_order.unwrap_or(f64::NAN),
                    o.expected_order.map_or("—".into(), |e| format!("{e}"))
                ));
            }
        }
        out
    }

    fn value_text(&self, v: Option<f64>) -> String {
        // Correct digits read as digits (scd = 5.23); errors in exponent form.
        let shown = match v {
            None => "—".into(),
            Some(v) if self.role.in_digits() => match reference_digits(&self.runs) {
                // Digits beyond what the reference itself supports are not the method's.
                Some(limit) if v > limit => {
                    format!("{v:.2}, beyond the reference's own {limit:.1} digits")
                }
                _ => format!("{v:.2}"),
            },
            Some(v) => format!("{v:.2e}"),
        };
        format!("{} = {shown}", self.role.spec.measure)
    }

    /// The instances, each as its problem and the parameters that tell it from the
    /// others.
    fn instances(&self) -> Vec<String> {
        distinguished(&self.verdict.instances)
    }

    /// The recommendation as sentences.
    pub(crate) fn sentences(&self, res: &Results) -> String {
        let instances = self.instances();
        let unit =
            match driftlab_results::schema::runs::find(&self.role.spec.measure).map(|c| c.unit) {
                Some("1") => ", relative",
                Some("digits") => ", significant correct digits",
                Some("problem") => ", in the problem's units (m, rad)",
                _ => "",
            };
        let why = self
            .role
            .spec
            .target_why
            .as_deref()
            .map(|w| format!(" Why this target: {}", w.trim()))
            .unwrap_or_default();
        let head = format!(
            "Target: {}{unit}, on every instance of the class ({}: {}; experiment {}).{why}",
            self.role.target_text(),
            instances.len(),
            instances.join("; "),
            res.name
        );
        let unmeasured = if self.verdict.unmeasured.is_empty() {
            String::new()
        } else {
            format!(
                " Not judged: {}, where no run has {} (no reference).",
                distinguished(&self.verdict.unmeasured).join("; "),
                self.role.spec.measure
            )
        };
        match self.verdict.winner() {
            Some(w) => format!("{head}{unmeasured} {}", self.covering_text(w)),
            None => format!("{head}{unmeasured} {}", self.per_instance_text()),
        }
    }

    fn covering_text(&self, w: &Candidate) -> String {
        let mut out = format!("Recommended: {}.", self.describe(w));
        let ties = self.verdict.ties();
        if !ties.is_empty() {
            let list: Vec<String> = ties.iter().map(|c| self.describe(c)).collect();
            out.push_str(&format!(
                " Tied with it (step-time ranges overlap, so neither is faster): {}.",
                list.join("; ")
            ));
        }
        out.push_str(&match self.verdict.best_other_method() {
            Some(o) => format!(
                " Best setting of another method: {}, {:.2}× the recommended step time.",
                self.describe(o),
                o.cost.median / w.cost.median
            ),
            None => " No other method meets the target on every instance.".into(),
        });
        out
    }

    fn per_instance_text(&self) -> String {
        let parts: Vec<String> = self
            .verdict
            .per_instance
            .iter()
            .zip(self.instances())
            .map(|((_, list), name)| match list.first() {
                Some(best) => {
                    let other = list.iter().find(|c| c.method != best.method);
                    format!(
                        "{name}: {}{}",
                        self.describe(best),
                        other.map_or(String::new(), |o| format!(
                            " (another method: {}, {:.2}×)",
                            self.describe(o),
                            o.cost.median / best.cost.median
                        ))
                    )
                }
                None => format!("{name}: no run meets the target"),
            })
            .collect();
        format!(
            "No setting meets the target on every instance; the best per instance — {}.",
            parts.join("; ")
        )
    }

    /// The class as a table row: class, experiment, target, instances, recommended, ties,
    /// best other method.
    pub(crate) fn row(&self, res: &Results) -> Vec<String> {
        let (recommended, ties, other) = match self.verdict.winner() {
            Some(w) => (
                self.describe_with(w, false),
                self.verdict
                    .ties()
                    .iter()
                    .map(|c| self.describe_with(c, false))
                    .collect::<Vec<_>>()
                    .join("; "),
                self.verdict
                    .best_other_method()
                    .map_or("none covers the class".into(), |o| {
                        format!(
                            "{} ({:.2}×)",
                            self.describe_with(o, false),
                            o.cost.median / w.cost.median
                        )
                    }),
            ),
            None => (
                "no setting covers every instance (best per instance in the text)".into(),
                String::new(),
                String::new(),
            ),
        };
        vec![
            self.role.spec.class.clone().unwrap_or_default(),
            res.name.clone(),
            self.role.target_text(),
            self.instances().len().to_string(),
            recommended,
            ties,
            other,
        ]
    }
}

/// The correct digits a reference supports, −log₁₀ of its own relative error bound
/// (`reference_accuracy`), the smallest over `runs`; `None` where no run declares one.
/// Digits beyond it are not the method's: the report counts such runs, it does not rank
/// them.
pub(crate) fn reference_digits(runs: &[&Run]) -> Option<f64> {
    runs.iter()
        .filter_map(|r| r.reference_accuracy)
        .filter(|a| *a > 0.0 && a.is_finite())
        .map(|a| -a.log10())
        .reduce(f64::min)
}

/// Instance keys (`problem {json}`) shortened to the problem and the parameters whose
/// values differ between the instances of that problem (`model robot=ur5`,
/// `model robot=panda`).
fn distinguished(instances: &[String]) -> Vec<String> {
    let parsed: Vec<(&str, serde_json::Map<String, serde_json::Value>)> = instances
        .iter()
        .map(|i| {
            let (problem, json) = i.split_once(' ').unwrap_or((i.as_str(), "{}"));
            let params = serde_json::from_str::<serde_json::Value>(json)
                .ok()
                .and_then(|v| v.as_object().cloned())
                .unwrap_or_default();
            (problem, params)
        })
        .collect();
    // Among the instances of one problem, the parameters whose values differ.
    let differs = |problem: &str, key: &String| {
        let mut same = parsed.iter().filter(|(p, _)| *p == problem);
        let first = same.next().and_then(|(_, p)| p.get(key));
        same.any(|(_, p)| p.get(key) != first)
    };
    parsed
        .iter()
        .map(|(problem, params)| {
            let shown: Vec<String> = params
                .iter()
                .filter(|(k, _)| differs(problem, k))
                .map(|(k, v)| format!("{k}={}", v.to_string().trim_matches('"')))
                .collect();
            std::iter::once(problem.to_string())
                .chain(shown)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

/// The headers of [`ClassView::row`].
pub(crate) const HEADERS: [&str; 7] = [
    "class",
    "experiment",
    "target",
    "instances",
    "recommended (step time)",
    "tied with it",
    "best other method (ratio)",
];

/// A run as the verdict sees it.
fn entry(role: &Role, r: &Run) -> Entry {
    let (instance, setting) = verdict::instance_and_setting(
        &r.problem,
        &r.problem_params,
        &r.variant,
        &r.params,
        r.h,
        r.rtol,
    );
    let (lo, hi) = (r.step_seconds_min, r.step_seconds_max);
    Entry {
        instance,
        setting,
        method: r.method.clone(),
        ok: r.ok(),
        value: role.value(r),
        cost: Cost {
            median: r.step_seconds,
            min: lo.map_or(r.step_seconds, |x| x.min(r.step_seconds)),
            max: hi.map_or(r.step_seconds, |x| x.max(r.step_seconds)),
            runs: if r.timed_alone > 0 {
                r.timed_alone as usize
            } else {
                r.runs_behind_times() as usize
            },
            alone: r.timed_alone > 0,
        },
    }
}

/// A cost as printed: the median step time with its range and how it was measured.
pub(crate) fn cost_text(c: &Cost) -> String {
    let how = if c.alone {
        format!("alone, median of {}", c.runs)
    } else if c.runs > 1 {
        format!("side by side, median of {}", c.runs)
    } else {
        "side by side, one run".into()
    };
    if c.runs > 1 {
        format!(
            "{} s [{}–{}] step time, {how}",
            sig3(c.median),
            sig3(c.min),
            sig3(c.max)
        )
    } else {
        format!("{} s step time, {how}", sig3(c.median))
    }
}

/// `x` to three significant digits (0.00380, 3.36, 123).
pub(crate) fn sig3(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let decimals = (2 - x.abs().log10().floor() as i32).max(0) as usize;
    format!("{x:.decimals$}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instances_are_shown_by_what_tells_them_apart() {
        let keys = [
            r#"model {"limits":"enforce","robot":"ur5"}"#.to_string(),
            r#"model {"limits":"enforce","robot":"panda"}"#.to_string(),
            "knife-edge {}".to_string(),
        ];
        assert_eq!(
            distinguished(&keys),
            vec!["model robot=ur5", "model robot=panda", "knife-edge"]
        );
        assert_eq!(distinguished(&["andrews {}".to_string()]), vec!["andrews"]);
    }

    /// A class on correct digits whose reference supports 9.5 of them (3e-10 relative):
    /// the cheaper setting misses the target on one instance, so the other is
    /// recommended; its 10.4 digits are printed as beyond the reference, and the
    /// recommendation carries the runs' counters and the target's reason.
    #[test]
    fn a_recommendation_names_digits_beyond_its_reference_and_the_target_s_reason() {
        use driftlab_results::report_spec::ReportSpec;
        use driftlab_results::schema::runs;
        let run = |params: &str, variant: &str, scd: f64, seconds: f64| runs::Row {
            problem: "andrews".into(),
            problem_params: params.into(),
            variant: variant.into(),
            status: "ok".into(),
            scd: Some(scd),
            reference_accuracy: Some(3e-10),
            step_seconds: seconds,
            steps: 100,
            factorizations: 7,
            h: 1e-3,
            ..runs::Row::default()
        };
        let res = Results {
            name: "x".into(),
            runs: vec![
                run("{\"a\":1}", "fast", 9.6, 1.0),
                run("{\"a\":2}", "fast", 8.0, 1.0),
                run("{\"a\":1}", "slow", 10.4, 2.0),
                run("{\"a\":2}", "slow", 9.2, 2.0),
            ],
            report: Some(ReportSpec {
                class: Some("c".into()),
                measure: "scd".into(),
                target: Some(9.0),
                target_why: Some("the reason".into()),
                higher_is_better: true,
                ..ReportSpec::default()
            }),
            ..Results::default()
        };
        let role = Role::of(&res).expect("a role");
        let view = ClassView::of(&res, &role).expect("a verdict");
        let text = view.sentences(&res);
        assert!(text.contains("scd ≥ 9,"), "{text}");
        assert!(text.contains("Why this target: the reason"), "{text}");
        assert!(text.contains("Recommended: slow"), "{text}");
        assert!(text.contains("200 steps, 14 factorizations"), "{text}");
        assert!(text.contains("(worst scd = 9.20)"), "{text}");
        let best = view.value_text(Some(10.4));
        assert_eq!(best, "scd = 10.40, beyond the reference's own 9.5 digits");
    }

    #[test]
    fn three_significant_digits_and_a_cost_with_its_range() {
        assert_eq!(sig3(0.0038), "0.00380");
        assert_eq!(sig3(3.3615), "3.36");
        assert_eq!(sig3(123.4), "123");
        let c = Cost {
            median: 0.0040,
            min: 0.0038,
            max: 0.0043,
            runs: 5,
            alone: true,
        };
        assert_eq!(
            cost_text(&c),
            "0.00400 s [0.00380–0.00430] step time, alone, median of 5"
        );
        let once = Cost {
            runs: 1,
            alone: false,
            ..c
        };
        assert_eq!(
            cost_text(&once),
            "0.00400 s step time, side by side, one run"
        );
    }
}
