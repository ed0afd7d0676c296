//! What a problem read besides its parameters, for the run manifest: the published
//! datasets it embeds (the Test Set's, under `datasets/`, hashed beside the spec) and the
//! notes of a model file it loaded.

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

/// The published datasets a catalog problem embeds, as `(file under datasets/, text)`,
/// so that a run's manifest can record their hashes beside the spec's.
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
