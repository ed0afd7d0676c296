//! The verdict of a problem class (issue 46): the **setting** — method with its
//! parameters, coordinate choice, and step or tolerance — that meets the class's target on
//! **every instance** of the class, at the least cost; the ties inside timing noise; the
//! best setting of a different method with its cost ratio; and, where no setting covers
//! every instance, the best setting per instance.
//!
//! Shared by the runner (which times the rows a verdict rests on with the cell alone,
//! repeated: [`rows_to_time`]) and the report (which prints it), so that both judge by one
//! rule.
//!
//! *Cost* is the step time (`step_seconds`: the method's steps with the loop's per-step
//! checks, without the set-up and the benchmark's own metric evaluation, which are not
//! the method's work); a setting's cost over the class is the sum over its instances of
//! the median, with the interval `[Σ min, Σ max]` of the repeated runs as its spread. Two
//! settings whose intervals overlap are a **tie**: neither is reported as faster. This is
//! the rule of work–precision benchmarks that time each configuration repeatedly and
//! compare distributions rather than single runs (DiffEqDevTools' `WorkPrecisionSet`
//! with `numruns`; SciMLBenchmarks).

use std::collections::BTreeMap;

/// The measured cost of one row, or the summed cost of a setting over its instances.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Cost {
    /// Median step time (s).
    pub median: f64,
    /// Smallest of the repeated runs (s).
    pub min: f64,
    /// Largest of the repeated runs (s).
    pub max: f64,
    /// Runs behind the times (the fewest over the instances of a setting).
    pub runs: usize,
    /// Whether every time was measured with the cell alone on the machine.
    pub alone: bool,
}

impl Cost {
    /// Whether the two intervals `[min, max]` overlap: a tie.
    pub fn overlaps(&self, other: &Cost) -> bool {
        self.min <= other.max && other.min <= self.max
    }

    fn add(&mut self, c: &Cost) {
        self.median += c.median;
        self.min += c.min;
        self.max += c.max;
        self.runs = self.runs.min(c.runs);
        self.alone &= c.alone;
    }
}

/// One run of a class's experiment, as the verdict sees it.
#[derive(Clone, Debug)]
pub struct Entry {
    /// The problem instance: problem id and parameters, less the setting's own
    /// ([`instance_and_setting`]).
    pub instance: String,
    /// The setting: method label and parameters, coordinate choice, step or tolerance.
    pub setting: String,
    /// The method id.
    pub method: String,
    /// The run reached its end time.
    pub ok: bool,
    /// The class's accuracy measure on the run (`None`: not measured or not finite).
    pub value: Option<f64>,
    /// Its cost.
    pub cost: Cost,
}

/// The class's accuracy target.
#[derive(Clone, Copy, Debug)]
pub struct Target {
    /// The value a run must reach.
    pub value: f64,
    /// The measure improves upwards (significant digits) rather than downwards (errors).
    pub higher_is_better: bool,
}

impl Target {
    /// Whether `e` is a successful run that reaches the target.
    pub fn met_by(&self, e: &Entry) -> bool {
        e.ok && e.value.is_some_and(|v| {
            if self.higher_is_better {
                v >= self.value
            } else {
                v <= self.value
            }
        })
    }
}

/// A setting that meets the target on the instances it is judged on.
#[derive(Clone, Debug)]
pub struct Candidate {
    /// The setting ([`Entry::setting`]).
    pub setting: String,
    /// Its method id.
    pub method: String,
    /// Its entries (indices into the judged entries), one per instance.
    pub entries: Vec<usize>,
    /// Its cost summed over those instances.
    pub cost: Cost,
}

/// The verdict of one class.
#[derive(Clone, Debug, Default)]
pub struct ClassVerdict {
    /// The instances of the class, in order of first appearance: those where some run
    /// has the measure.
    pub instances: Vec<String>,
    /// Instances where no run has the measure (no reference, say): not judged, named.
    pub unmeasured: Vec<String>,
    /// Settings that meet the target on every instance, cheapest (median) first.
    pub covering: Vec<Candidate>,
    /// Per instance: the settings meeting the target there, cheapest first.
    pub per_instance: Vec<(String, Vec<Candidate>)>,
}

impl ClassVerdict {
    /// The recommended setting: the cheapest covering one.
    pub fn winner(&self) -> Option<&Candidate> {
        self.covering.first()
    }

    /// The covering settings whose cost interval overlaps the winner's: ties.
    pub fn ties(&self) -> Vec<&Candidate> {
        let Some(w) = self.winner() else {
            return Vec::new();
        };
        self.covering[1..]
            .iter()
            .filter(|c| c.cost.overlaps(&w.cost))
            .collect()
    }

    /// The cheapest covering setting of another method than the winner's.
    pub fn best_other_method(&self) -> Option<&Candidate> {
        let w = self.winner()?;
        self.covering.iter().find(|c| c.method != w.method)
    }
}

/// Judge `entries` against `target`.
pub fn judge(entries: &[Entry], target: Target) -> ClassVerdict {
    let (mut instances, mut unmeasured): (Vec<String>, Vec<String>) = (Vec::new(), Vec::new());
    for e in entries {
        if !instances.contains(&e.instance) && !unmeasured.contains(&e.instance) {
            unmeasured.push(e.instance.clone());
        }
        if e.value.is_some() && !instances.contains(&e.instance) {
            unmeasured.retain(|u| u != &e.instance);
            instances.push(e.instance.clone());
        }
    }
    // Keep the order of first appearance among the measured ones.
    let first = |i: &String| entries.iter().position(|e| &e.instance == i);
    instances.sort_by_key(first);
    // Per setting, its meeting entry on each instance (the first, should a setting
    // appear twice on one instance).
    let mut by_setting: BTreeMap<&str, BTreeMap<&str, usize>> = BTreeMap::new();
    for (k, e) in entries.iter().enumerate() {
        if target.met_by(e) {
            by_setting
                .entry(&e.setting)
                .or_default()
                .entry(&e.instance)
                .or_insert(k);
        }
    }
    let candidate = |setting: &str, rows: Vec<usize>| {
        let mut cost = Cost {
            runs: usize::MAX,
            alone: true,
            ..Cost::default()
        };
        rows.iter().for_each(|&k| cost.add(&entries[k].cost));
        Candidate {
            setting: setting.to_string(),
            method: entries[rows[0]].method.clone(),
            entries: rows,
            cost,
        }
    };
    let mut covering: Vec<Candidate> = by_setting
        .iter()
        .filter(|(_, on)| on.len() == instances.len())
        .map(|(s, on)| candidate(s, instances.iter().map(|i| on[i.as_str()]).collect()))
        .collect();
    sort_by_cost(&mut covering);
    let per_instance = instances
        .iter()
        .map(|i| {
            let mut here: Vec<Candidate> = by_setting
                .iter()
                .filter_map(|(s, on)| on.get(i.as_str()).map(|&k| candidate(s, vec![k])))
                .collect();
            sort_by_cost(&mut here);
            (i.clone(), here)
        })
        .collect();
    ClassVerdict {
        instances,
        unmeasured,
        covering,
        per_instance,
    }
}

fn sort_by_cost(c: &mut [Candidate]) {
    c.sort_by(|a, b| {
        a.cost
            .median
            .total_cmp(&b.cost.median)
            .then_with(|| a.setting.cmp(&b.setting))
    });
}

/// The entries a verdict rests on, whose times must be measured alone and repeated: the
/// cheapest covering setting and every covering setting within `band` × its cost (a
/// single side-by-side time may misorder those: the winner and its possible ties), and the
/// same for the cheapest covering setting of another method (the ratio the verdict
/// quotes); where no setting covers every instance, the same per instance. Indices into
/// the judged entries, sorted.
pub fn rows_to_time(v: &ClassVerdict, band: f64) -> Vec<usize> {
    let mut rows: Vec<usize> = Vec::new();
    let mut take = |list: &[Candidate]| {
        let Some(first) = list.first() else { return };
        let within = |c: &&Candidate, of: &Candidate| c.cost.median <= band * of.cost.median;
        rows.extend(
            list.iter()
                .filter(|c| within(c, first))
                .flat_map(|c| &c.entries),
        );
        let others: Vec<&Candidate> = list.iter().filter(|c| c.method != first.method).collect();
        if let Some(&other) = others.first() {
            rows.extend(
                others
                    .iter()
                    .filter(|c| within(c, other))
                    .flat_map(|c| &c.entries),
            );
        }
    };
    if v.covering.is_empty() {
        v.per_instance.iter().for_each(|(_, list)| take(list));
    } else {
        take(&v.covering);
    }
    rows.sort_unstable();
    rows.dedup();
    rows
}

/// A run's instance and setting keys from its stored columns: the instance is the problem
/// with its parameters less `coordinates` (a model's coordinate choice is part of what is
/// recommended, not of the mechanism); the setting is the method label, its parameters, the
/// coordinate choice, and the tolerance of an error-controlled run or else its step.
pub fn instance_and_setting(
    problem: &str, problem_params: &str, variant: &str, params: &str, h: f64, rtol: Option<f64>,
) -> (String, String) {
    let parsed = serde_json::from_str::<serde_json::Value>(problem_params).ok();
    let (instance, coordinates) = match parsed {
        Some(serde_json::Value::Object(mut o)) => {
            let c = o
                .remove("coordinates")
                .and_then(|c| c.as_str().map(String::from));
            (serde_json::Value::Object(o).to_string(), c)
        }
        _ => (problem_params.to_string(), None),
    };
    let step = match rtol {
        Some(r) => format!("rtol={r:e}"),
        None => format!("h={h:e}"),
    };
    (
        format!("{problem} {instance}"),
        format!(
            "{variant} {params} {}{step}",
            coordinates.map_or(String::new(), |c| format!("coordinates={c} "))
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(instance: &str, setting: &str, method: &str, value: f64, t: (f64, f64, f64)) -> Entry {
        Entry {
            instance: instance.into(),
            setting: setting.into(),
            method: method.into(),
            ok: value.is_finite(),
            value: Some(value),
            cost: Cost {
                median: t.0,
                min: t.1,
                max: t.2,
                runs: 5,
                alone: true,
            },
        }
    }

    const TARGET: Target = Target {
        value: 1e-3,
        higher_is_better: false,
    };

    #[test]
    fn a_setting_that_misses_one_instance_is_not_recommended_for_the_class() {
        // "fast" meets the target on A only (Bricard's case); "slow" on both.
        let e = vec![
            entry("A", "fast", "rattle", 1e-4, (0.1, 0.09, 0.11)),
            entry("B", "fast", "rattle", 1e-2, (0.1, 0.09, 0.11)),
            entry("A", "slow", "gauss", 1e-4, (0.5, 0.45, 0.55)),
            entry("B", "slow", "gauss", 1e-5, (0.7, 0.65, 0.75)),
        ];
        let v = judge(&e, TARGET);
        let w = v.winner().expect("a covering setting");
        assert_eq!(w.setting, "slow");
        assert_eq!(w.entries, vec![2, 3]);
        assert!((w.cost.median - 1.2).abs() < 1e-15 && (w.cost.min - 1.1).abs() < 1e-15);
        assert_eq!(v.per_instance[0].1[0].setting, "fast");
        assert!(v.per_instance[1].1.iter().all(|c| c.setting != "fast"));
        assert_eq!(v.best_other_method().map(|c| c.setting.as_str()), None);
    }

    #[test]
    fn overlapping_spreads_are_ties_and_separate_ones_are_not() {
        let e = vec![
            entry("A", "a", "gauss", 1e-4, (0.0038, 0.0036, 0.0041)),
            entry("A", "b", "radau", 1e-4, (0.0040, 0.0039, 0.0044)),
            entry("A", "c", "bdf", 1e-4, (0.0100, 0.0090, 0.0110)),
            entry("A", "d", "bdf", 1e-1, (0.0001, 0.0001, 0.0001)),
        ];
        let v = judge(&e, TARGET);
        assert_eq!(v.winner().map(|c| c.setting.as_str()), Some("a"));
        let ties: Vec<&str> = v.ties().iter().map(|c| c.setting.as_str()).collect();
        assert_eq!(ties, vec!["b"]);
        assert_eq!(
            v.best_other_method().map(|c| c.method.as_str()),
            Some("radau")
        );
        // The winner and its possible ties (within 1.25×: a, b), and the cheapest setting of
        // another method (b): not c, 2.6× the winner and of a third method.
        assert_eq!(rows_to_time(&v, 1.25), vec![0, 1]);
    }

    #[test]
    fn without_a_covering_setting_each_instance_has_its_own_best() {
        let e = vec![
            entry("A", "x", "moreau-jean", 1e-4, (0.2, 0.2, 0.2)),
            entry("B", "x", "moreau-jean", 5.7e-2, (0.2, 0.2, 0.2)),
            entry("B", "y", "moreau-jean", 1e-4, (0.9, 0.9, 0.9)),
            entry("A", "y", "moreau-jean", f64::NAN, (0.1, 0.1, 0.1)),
        ];
        let mut with_unmeasured = e.clone();
        let mut vakonomic = entry("C", "x", "moreau-jean", 1.0, (0.1, 0.1, 0.1));
        vakonomic.value = None;
        with_unmeasured.push(vakonomic);
        let v = judge(&with_unmeasured, TARGET);
        assert_eq!(
            v.unmeasured,
            vec!["C"],
            "an instance without the measure is not judged"
        );
        assert!(v.winner().is_none());
        assert_eq!(v.instances, vec!["A", "B"]);
        assert_eq!(v.per_instance[0].1[0].setting, "x");
        assert_eq!(v.per_instance[1].1[0].setting, "y");
        assert_eq!(rows_to_time(&v, 1.25), vec![0, 2]);
    }

    #[test]
    fn coordinates_belong_to_the_setting_and_the_step_or_tolerance_too() {
        let (i1, s1) = instance_and_setting(
            "model",
            r#"{"coordinates":"body","file":"a.urdf"}"#,
            "rattle",
            "{}",
            1e-3,
            None,
        );
        let (i2, s2) = instance_and_setting(
            "model",
            r#"{"coordinates":"joint","file":"a.urdf"}"#,
            "rattle",
            "{}",
            1e-3,
            None,
        );
        assert_eq!(i1, i2);
        assert_ne!(s1, s2);
        assert!(
            s1.contains("coordinates=body") && s1.ends_with("h=1e-3"),
            "{s1}"
        );
        let (_, a) = instance_and_setting("p", "{}", "radau", "{}", 0.01, Some(1e-6));
        let (_, b) = instance_and_setting("p", "{}", "radau", "{}", 0.02, Some(1e-6));
        assert_eq!(
            a, b,
            "an adaptive setting is its tolerance, not its mean step"
        );
    }
}
