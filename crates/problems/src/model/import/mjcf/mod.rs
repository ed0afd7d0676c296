//! MJCF import (MuJoCo's model format, <https://mujoco.readthedocs.io/en/stable/XMLreference.html>):
//! what MuJoCo's compiler makes of a file, as driftlab's [`Model`]. Read: `<include>`
//! ([`tree`]), `<compiler>` and the orientation forms ([`compiler`]), `<default>` classes
//! with `class`/`childclass` ([`defaults`]), `<option>` (gravity, timestep, integrator,
//! iterations, the `gravity` and `equality` flags), `<worldbody>` with `<frame>`s, bodies,
//! joints (hinge, slide, ball, free; several per body) and their inertia from
//! `<inertial>` or from the geoms ([`bodies`], [`inertia`]), fixed tendons, equalities
//! and actuators ([`equality`]). The schema's other elements are refused or skipped as
//! [`schema`] says; contact is not simulated: a model with colliding geoms says so once.
//!
//! Mapping to MuJoCo's state: a hinge or slide coordinate is MuJoCo's `qpos` entry and its
//! rate MuJoCo's `qvel` entry; a ball joint's four Euler parameters are its quaternion
//! (w first) and their rates ė give MuJoCo's `qvel`, the body angular velocity
//! ω = 2G(e)ė; a free joint's seven coordinates are MuJoCo's (world position, quaternion),
//! its rates the world linear velocity (MuJoCo's) and ė (ω as for a ball).

pub mod bodies;
pub mod compiler;
pub mod defaults;
pub mod equality;
pub mod inertia;
mod joint;
pub mod schema;
pub mod tree;

use super::super::spatial::Placement;
use super::description::{EngineOptions, Model, ModelError, ModelNote};
use bodies::BodyFrame;
use compiler::{keyword, numbers, Compiler};
use defaults::Defaults;
use std::collections::HashMap;
use tree::{El, Files, Loader};

/// The sections of `<mujoco>` without dynamics: skipped, each listed once.
const SKIPPED: [&str; 8] = [
    "size",
    "statistic",
    "visual",
    "sensor",
    "custom",
    "keyframe",
    "contact",
    "asset",
];

/// Everything being read.
pub(crate) struct Reader<'f> {
    files: &'f Files,
    defaults: Defaults,
    compiler: Compiler,
    model: Model,
    /// MuJoCo's bodies, the world first.
    frames: Vec<BodyFrame>,
    by_body: HashMap<String, usize>,
    sites: HashMap<String, (usize, Placement)>,
    /// Kind and `qpos0` of every joint by name.
    joint_info: HashMap<String, (super::description::JointKind, f64)>,
    tendons: HashMap<String, Vec<(String, f64)>>,
    contact_geoms: usize,
    notes: std::cell::RefCell<Vec<ModelNote>>,
}

impl Reader<'_> {
    fn note_at(&self, el: &El, what: impl Into<String>) {
        let mut notes = self.notes.borrow_mut();
        if notes.len() < super::xml::MAX_NOTES {
            notes.push(ModelNote {
                at: self.files.origin(el),
                what: what.into(),
            });
        }
    }
}

/// Read the MJCF model `file` (its text `text`), reading included files with `loader`.
pub fn read(file: &str, text: &str, loader: Loader) -> Result<Model, ModelError> {
    let (root, files) = tree::load(file, text, loader)?;
    schema::check_attributes(&files, &root, "mujoco", false)?;
    let dynamic = [
        "compiler",
        "option",
        "default",
        "worldbody",
        "tendon",
        "equality",
        "actuator",
    ];
    schema::check_children(&files, &root, &dynamic, &SKIPPED)?;
    let mut r = Reader {
        files: &files,
        defaults: Defaults::read(&files, &root)?,
        compiler: Compiler::read(&files, &root)?,
        model: Model {
            name: root.attr("model").unwrap_or("mjcf").to_string(),
            file: file.to_string(),
            gravity: [0.0, 0.0, -9.81],
            ..Model::default()
        },
        frames: vec![BodyFrame {
            body: None,
            offset: [0.0; 3],
            world0: Placement::IDENTITY,
        }],
        by_body: HashMap::from([("world".to_string(), 0)]),
        sites: HashMap::new(),
        joint_info: HashMap::new(),
        tendons: HashMap::new(),
        contact_geoms: 0,
        notes: Default::default(),
    };
    let flags = r.option(&root)?;
    for s in SKIPPED {
        if let Some(el) = root.all(s).next() {
            r.note_at(el, format!("<{s}> skipped: no dynamics"));
        }
    }
    for wb in root.all("worldbody") {
        r.worldbody(wb)?;
    }
    for t in root.all("tendon") {
        r.tendons(t)?;
    }
    for e in root.all("equality") {
        r.equalities(e)?;
    }
    for a in root.all("actuator") {
        r.actuators(a)?;
    }
    r.finish(&root, flags)
}

/// The `<option>` flags that change the model.
#[derive(Clone, Copy, Debug)]
struct Flags {
    gravity: bool,
    spring: bool,
    damper: bool,
    equality: bool,
    contact: bool,
}

impl Reader<'_> {
    /// `<option>`: gravity, timestep, integrator, iterations and the flags.
    fn option(&mut self, root: &El) -> Result<Flags, ModelError> {
        let mut o = EngineOptions {
            timestep: 0.002,
            integrator: "Euler".into(),
            iterations: 100,
            equalities: Vec::new(),
            contact_geoms: 0,
        };
        let mut flags = Flags {
            gravity: true,
            spring: true,
            damper: true,
            equality: true,
            contact: true,
        };
        let f = self.files;
        for el in root.all("option") {
            schema::check_attributes(f, el, "option", false)?;
            schema::check_children(f, el, &["flag"], &[])?;
            if let Some(g) = el.attr("gravity") {
                let g = numbers(f, el, "gravity", g, (3, 3))?;
                self.model.gravity = [g[0], g[1], g[2]];
            }
            if let Some(t) = el.attr("timestep") {
                o.timestep = numbers(f, el, "timestep", t, (1, 1))?[0];
                if o.timestep <= 0.0 {
                    return Err(f.err(
                        el,
                        format!("timestep {} ≤ 0", o.timestep),
                        "give a positive timestep (s)",
                    ));
                }
            }
            if let Some(i) = el.attr("integrator") {
                o.integrator = keyword(
                    f,
                    el,
                    "integrator",
                    i,
                    &["Euler", "RK4", "implicit", "implicitfast"],
                )?
                .to_string();
            }
            for fluid in ["density", "viscosity", "wind"] {
                if el.attr(fluid).is_some_and(|v| {
                    v.split_whitespace()
                        .any(|x| x.parse::<f64>().is_ok_and(|x| x != 0.0))
                }) {
                    self.note_at(el, format!("<option {fluid}>: fluid forces are not modelled (the oracle turns them off)"));
                }
            }
            if let Some(i) = el.attr("iterations") {
                o.iterations = numbers(f, el, "iterations", i, (1, 1))?[0].max(0.0) as u32;
            }
            for fl in el.all("flag") {
                schema::check_attributes(f, fl, "flag", false)?;
                for (k, v) in &fl.attrs {
                    let on = keyword(f, fl, k, v, &["enable", "disable"])? == "enable";
                    match k.as_str() {
                        "gravity" => flags.gravity = on,
                        "equality" | "constraint" => flags.equality &= on,
                        "contact" => flags.contact = on,
                        "spring" => flags.spring = on,
                        "damper" => flags.damper = on,
                        _ => {}
                    }
                }
            }
        }
        self.model.engine = Some(o);
        Ok(flags)
    }

    /// The flags, `settotalmass`, the contact note and the notes.
    fn finish(mut self, root: &El, flags: Flags) -> Result<Model, ModelError> {
        if !flags.gravity {
            self.model.gravity = [0.0; 3];
        }
        for j in &mut self.model.joints {
            if !flags.spring {
                j.stiffness = 0.0;
            }
            if !flags.damper {
                j.damping = 0.0;
            }
        }
        let constrained = !(self.model.closures.is_empty() && self.model.couplings.is_empty());
        if !flags.equality && constrained {
            self.note_at(
                root,
                "<flag equality=\"disable\">: the equalities are left out, as MuJoCo leaves them",
            );
            self.model.closures.clear();
            self.model.couplings.clear();
        }
        let total = self.compiler.settotalmass;
        if total > 0.0 {
            let m = self.model.mass();
            if m <= 0.0 {
                return Err(self.files.err(
                    root,
                    "settotalmass on a model without mass",
                    "give the bodies mass, or remove settotalmass",
                ));
            }
            let k = total / m;
            for b in &mut self.model.bodies {
                b.inertia.mass *= k;
                b.inertia.rot.iter_mut().flatten().for_each(|x| *x *= k);
            }
        }
        if flags.contact && self.contact_geoms > 0 {
            let n = self.contact_geoms;
            self.note_at(root, format!("{n} geoms collide in MuJoCo: contact is not simulated here (runs with contact off)"));
        }
        if let Some(o) = self.model.engine.as_mut() {
            o.contact_geoms = if flags.contact { self.contact_geoms } else { 0 };
        }
        self.model.notes = self.notes.into_inner();
        Ok(self.model)
    }
}
