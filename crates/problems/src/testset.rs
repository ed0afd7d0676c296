//! Reading the embedded published datasets (`datasets/*.json`, numbers kept as decimal
//! strings exactly as published). A malformed dataset is a build defect, reported as a
//! typed error naming the file and key rather than a panic.

use driftlab_core::ParamError;

/// The parsed JSON of an embedded dataset.
pub struct Dataset {
    name: &'static str,
    root: serde_json::Value,
}

impl Dataset {
    /// Parse `text` (from `include_str!`) of dataset `name`.
    pub fn parse(name: &'static str, text: &str) -> Result<Self, ParamError> {
        let root = serde_json::from_str(text).map_err(|e| bad(name, &e.to_string()))?;
        Ok(Self { name, root })
    }

    fn get(&self, path: &[&str]) -> Result<&serde_json::Value, ParamError> {
        let mut v = &self.root;
        for k in path {
            v = v
                .get(k)
                .ok_or_else(|| bad(self.name, &format!("missing key {}", path.join("."))))?;
        }
        Ok(v)
    }

    /// The number stored as a string at `path`.
    pub fn num(&self, path: &[&str]) -> Result<f64, ParamError> {
        let v = self.get(path)?;
        v.as_str()
            .and_then(|s| s.trim().parse::<f64>().ok())
            .ok_or_else(|| {
                bad(
                    self.name,
                    &format!("{} is not a number string", path.join(".")),
                )
            })
    }

    /// The array of number strings at `path`.
    pub fn vec(&self, path: &[&str]) -> Result<Vec<f64>, ParamError> {
        let v = self.get(path)?;
        let arr = v
            .as_array()
            .ok_or_else(|| bad(self.name, &format!("{} is not an array", path.join("."))))?;
        arr.iter()
            .map(|x| {
                x.as_str()
                    .and_then(|s| s.trim().parse::<f64>().ok())
                    .ok_or_else(|| {
                        bad(self.name, &format!("{} holds a non-number", path.join(".")))
                    })
            })
            .collect()
    }

    /// The text at `path`.
    pub fn text(&self, path: &[&str]) -> Result<String, ParamError> {
        Ok(self.get(path)?.as_str().unwrap_or_default().to_string())
    }
}

fn bad(name: &str, message: &str) -> ParamError {
    ParamError::Invalid {
        kind: "dataset",
        id: name.to_string(),
        message: message.to_string(),
    }
}

/// The published datasets a catalog problem embeds (file name under `datasets/`, text),
/// so that a run's manifest can record their hashes beside the spec's.
/// The data files a problem with parameters `params` reads, as `(file, text)`: the Test
/// Set's (under `datasets/`), or the model file of `model` (a shipped robot's
/// repository path, or the user's file as given). For the run manifest's SHA-256 list.
pub fn datasets_read(problem_id: &str, params: &toml::Table) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = embedded_datasets(problem_id)
        .into_iter()
        .map(|(f, t)| (f.to_string(), t.to_string()))
        .collect();
    if problem_id == "model" {
        out.extend(model_params(params).and_then(|p| crate::model::source(&p).ok()));
    }
    out
}

/// The `model` problem's own parameters of `params` (the reserved keys removed).
fn model_params(params: &toml::Table) -> Option<crate::model::ModelParams> {
    let mut p = params.clone();
    for key in [
        crate::independent_rows::KEY,
        crate::independent_rows::TOL_KEY,
        "initial",
        "disturbance",
    ] {
        p.remove(key);
    }
    driftlab_core::params::parse::<crate::model::ModelParams>("problem", "model", &p).ok()
}

/// What reading the input of problem `problem_id` with `params` skipped or kept as
/// published, one line each: the [`crate::model::import::description::ModelNote`]s of a
/// model file (vendor elements, unphysical inertias, dropped mimics, a singular start).
/// Empty for the catalog's own problems, and for a model that does not load (its error
/// is reported where it is built).
pub fn input_notes(problem_id: &str, params: &toml::Table) -> Vec<String> {
    if problem_id != "model" {
        return Vec::new();
    }
    model_params(params)
        .and_then(|p| crate::model::build(&p).ok())
        .map(|sys| sys.model().notes.iter().map(ToString::to_string).collect())
        .unwrap_or_default()
}

/// The Test Set data a problem embeds, as `(file under datasets/, text)`.
pub fn embedded_datasets(problem_id: &str) -> Vec<(&'static str, &'static str)> {
    match problem_id {
        "andrews" => vec![(
            "ivptestset_andrews.json",
            crate::benchmarks::andrews::DATASET,
        )],
        "car-axis" => vec![(
            "ivptestset_caraxis.json",
            crate::benchmarks::car_axis::DATASET,
        )],
        "slider-crank" => vec![
            (
                "ivptestset_crank.json",
                crate::benchmarks::slider_crank::DATASET,
            ),
            (
                "ivptestset_crank_soln_fortran.json",
                crate::benchmarks::slider_crank::DATASET_FORTRAN,
            ),
        ],
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod embedded {
    /// Every embedded dataset names a file of `datasets/` whose text it is.
    #[test]
    fn embedded_datasets_are_the_files() {
        for id in ["andrews", "car-axis", "slider-crank"] {
            for (file, text) in super::embedded_datasets(id) {
                let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../datasets/");
                let on_disk = std::fs::read_to_string(format!("{path}{file}")).expect(file);
                assert_eq!(on_disk, text, "{file}");
            }
            assert!(!super::embedded_datasets(id).is_empty(), "{id}");
        }
    }
}
