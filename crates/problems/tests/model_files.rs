//! The model-file reference (`docs/model-file.md`) and the reader agree: every TOML
//! block of the reference is a model that loads and passes the checks, every parameter
//! row of its table is a field of `ModelParams`, and every field has a row.

use driftlab_problems::model::import::{check, toml_model};
use driftlab_problems::model::{build, ModelParams};

fn reference() -> String {
    std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/model-file.md"
    ))
    .expect("docs/model-file.md")
}

fn toml_blocks(text: &str) -> Vec<String> {
    text.split("```toml\n")
        .skip(1)
        .map(|b| b.split("```").next().unwrap_or("").to_string())
        .collect()
}

#[test]
fn every_toml_block_of_the_reference_is_a_model_that_loads() {
    let blocks = toml_blocks(&reference());
    assert!(!blocks.is_empty(), "the reference shows no TOML model");
    for (k, b) in blocks.iter().enumerate() {
        let model =
            toml_model::read(&format!("docs block {k}"), b).unwrap_or_else(|e| panic!("{e}"));
        check::check(&model).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            !model.closures.is_empty() || k > 0,
            "the first example shows a loop closure"
        );
        // And it runs: joint coordinates with the start projected onto the loop.
        let dir = std::env::temp_dir().join(format!("driftlab-docs-model-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let path = dir.join(format!("block{k}.toml"));
        std::fs::write(&path, b).expect("write");
        for coordinates in ["joint", "body", "natural"] {
            let p = ModelParams {
                file: path.display().to_string(),
                coordinates: coordinates.into(),
                ..ModelParams::default()
            };
            match coordinates {
                "joint" => {
                    build(&p).unwrap_or_else(|e| panic!("{e}"));
                }
                _ => {
                    driftlab_problems::model::build_problem(&p)
                        .unwrap_or_else(|e| panic!("{coordinates}: {e}"));
                }
            }
        }
    }
}

#[test]
fn the_parameter_table_lists_every_field() {
    let text = reference();
    let defaults = toml::Table::try_from(ModelParams::default()).expect("defaults");
    let mut fields: Vec<String> = defaults.keys().cloned().collect();
    fields.push("gravity".into()); // an Option, absent from the defaults
    for f in &fields {
        assert!(
            text.contains(&format!("| `{f}`")) || text.contains(&format!("`, `{f}`")),
            "docs/model-file.md has no row for `{f}`"
        );
    }
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("| `"))
        .flat_map(|l| l.split('|').nth(1))
        .flat_map(|cell| cell.split(',').map(|s| s.trim().trim_matches('`')))
        .collect();
    for r in rows {
        assert!(
            fields.iter().any(|f| f == r),
            "docs/model-file.md lists `{r}`, which ModelParams does not have"
        );
    }
}
