//! MJCF `<tendon>` (fixed tendons), `<equality>` and `<actuator>` as MuJoCo's compiler
//! reads them (`mj_instantiateEquality`, `engine_core_constraint.c`; `engine_setconst.c`
//! for what is computed at `qpos0`):
//!
//! ```text
//! connect  body1's anchor and its image on body2 at qpos0 coincide      → ball closure (3 rows)
//! weld     body2's frame (at anchor) keeps its pose relpose in body1's;  → weld closure (6 rows)
//!          relpose with a zero quaternion (the default): the pose at qpos0
//! joint    q₁ − q₁⁰ = Σₖ cₖ (q₂ − q₂⁰)ᵏ   (q₁ = q₁⁰ + c₀ without joint2)   → coupling row
//! tendon   L₁ − L₁⁰ = Σₖ cₖ (L₂ − L₂⁰)ᵏ,  L = Σ coefᵢ qᵢ (fixed tendon)     → coupling row
//! ```
//!
//! `active="false"` leaves the equality out, as MuJoCo leaves it inactive, and says so.
//! Each equality's `solref`/`solimp` (its class's, else MuJoCo's defaults 0.02 1 and
//! 0.9 0.95 0.001 0.5 2) is kept for the MuJoCo rows and the audit.

use super::super::super::spatial::{quat_matrix, Placement, IDENTITY};
use super::super::description::{
    Actuator, Closure, ClosureKind, Coupling, ModelError, SoftEquality,
};
use super::compiler::{boolean, keyword, numbers};
use super::defaults::Styled;
use super::schema::{check_attributes, check_children};
use super::tree::El;
use super::Reader;

/// The two ends of a closure: MuJoCo body and the frame on it (MuJoCo's body frame).
type Ends = ((usize, Placement), (usize, Placement));

const SOLREF: [f64; 2] = [0.02, 1.0];
const SOLIMP: [f64; 5] = [0.9, 0.95, 0.001, 0.5, 2.0];

impl Reader<'_> {
    /// The fixed tendons of a `<tendon>` section.
    pub(super) fn tendons(&mut self, sec: &El) -> Result<(), ModelError> {
        check_children(self.files, sec, &["fixed"], &[])?;
        for t in &sec.children {
            check_attributes(self.files, t, "fixed", false)?;
            let styled = Styled::new(self.files, &self.defaults, t, "tendon", "main")?;
            for k in ["stiffness", "damping", "armature"] {
                if styled
                    .get(k)
                    .is_some_and(|v| v.split_whitespace().any(|x| x.parse::<f64>() != Ok(0.0)))
                {
                    return Err(self.files.err(
                        t,
                        format!("a fixed tendon with {k}"),
                        format!(
                            "a tendon's {k} is not modelled: remove it (or move it to the joints)"
                        ),
                    ));
                }
            }
            check_children(self.files, t, &["joint"], &[])?;
            let mut terms = Vec::new();
            for j in &t.children {
                check_attributes(self.files, j, "fixed-joint", false)?;
                let name = j.attr("joint").ok_or_else(|| {
                    self.files.err(
                        j,
                        "<joint> of a fixed tendon without `joint`",
                        "give joint=\"name\" and coef",
                    )
                })?;
                let coef =
                    numbers(self.files, j, "coef", j.attr("coef").unwrap_or("1"), (1, 1))?[0];
                self.scalar_joint(j, name)?;
                terms.push((name.to_string(), coef));
            }
            let name = t
                .attr("name")
                .map_or_else(|| format!("tendon{}", self.tendons.len()), str::to_string);
            self.tendons.insert(name, terms);
        }
        Ok(())
    }

    /// `qpos0` of 1-coordinate joint `name`, refusing another kind or an unknown name.
    fn scalar_joint(&self, el: &El, name: &str) -> Result<f64, ModelError> {
        match self.joint_info.get(name) {
            Some((k, q0)) if k.nq() == 1 => Ok(*q0),
            Some((k, _)) => Err(self.files.err(
                el,
                format!("joint \"{name}\" is a {} joint", k.name()),
                "name a hinge or slide joint",
            )),
            None => Err(self.files.err(
                el,
                format!("joint \"{name}\" is not in the model"),
                "name a joint of <worldbody>",
            )),
        }
    }

    /// The equalities of an `<equality>` section.
    pub(super) fn equalities(&mut self, sec: &El) -> Result<(), ModelError> {
        check_children(
            self.files,
            sec,
            &["connect", "weld", "joint", "tendon"],
            &[],
        )?;
        for e in &sec.children {
            let schema = match e.tag.as_str() {
                "joint" => "equality-joint",
                "tendon" => "equality-tendon",
                t => t,
            };
            check_attributes(self.files, e, schema, false)?;
            let s = Styled::new(self.files, &self.defaults, e, "equality", "main")?;
            let index = self.model.engine.as_ref().map_or(0, |o| o.equalities.len());
            let name = e
                .attr("name")
                .filter(|n| !n.is_empty())
                .map_or_else(|| format!("equality{index}"), str::to_string);
            let active = s
                .get("active")
                .map_or(Ok(true), |v| boolean(self.files, e, "active", v))?;
            let soft = SoftEquality {
                name: name.clone(),
                kind: e.tag.clone(),
                solref: fill(
                    numbers(
                        self.files,
                        e,
                        "solref",
                        s.get("solref").unwrap_or("0.02 1"),
                        (1, 2),
                    )?,
                    SOLREF,
                ),
                solimp: fill(
                    numbers(
                        self.files,
                        e,
                        "solimp",
                        s.get("solimp").unwrap_or("0.9 0.95 0.001 0.5 2"),
                        (1, 5),
                    )?,
                    SOLIMP,
                ),
                active,
            };
            if let Some(o) = self.model.engine.as_mut() {
                o.equalities.push(soft);
            }
            if !active {
                self.note_at(
                    e,
                    "active=\"false\": left out, as MuJoCo leaves it inactive",
                );
                continue;
            }
            match e.tag.as_str() {
                "connect" | "weld" => self.closure(e, name)?,
                _ => self.coupling(e, name)?,
            }
        }
        Ok(())
    }

    /// A `connect` or `weld` as a loop closure.
    fn closure(&mut self, e: &El, name: String) -> Result<(), ModelError> {
        let kind = if e.tag == "connect" {
            ClosureKind::Ball
        } else {
            ClosureKind::Weld
        };
        let ends = if e.attr("site1").is_some() || e.attr("site2").is_some() {
            self.site_ends(e)?
        } else {
            self.body_ends(e, kind)?
        };
        let ((a, fa), (b, fb)) = ends;
        if a == b {
            return Err(self.files.err(
                e,
                "the equality holds a body to itself",
                "name two different bodies (or sites on two bodies)",
            ));
        }
        let (ba, bb) = (self.frames[a].clone(), self.frames[b].clone());
        self.model.closures.push(Closure {
            name,
            kind,
            body_a: ba.body,
            frame_a: ba.local(&fa),
            body_b: bb.body,
            frame_b: bb.local(&fb),
            origin: self.files.origin(e),
        });
        Ok(())
    }

    /// The two ends of an equality on sites: each site's frame on its body (MuJoCo holds
    /// the sites together, with no pose computed at qpos0).
    fn site_ends(&self, e: &El) -> Result<Ends, ModelError> {
        if ["body1", "body2", "anchor", "relpose"]
            .iter()
            .any(|k| e.attr(k).is_some())
        {
            return Err(self.files.err(
                e,
                "sites mixed with body1/body2/anchor/relpose",
                "give site1 and site2, or bodies (MuJoCo refuses both)",
            ));
        }
        let site = |attr: &str| -> Result<(usize, Placement), ModelError> {
            let n = e.attr(attr).ok_or_else(|| {
                self.files
                    .err(e, format!("`{attr}` missing"), "give both site1 and site2")
            })?;
            self.sites.get(n).copied().ok_or_else(|| {
                self.files.err(
                    e,
                    format!("site \"{n}\" is not in the model"),
                    "name a site of <worldbody>",
                )
            })
        };
        Ok((site("site1")?, site("site2")?))
    }

    /// The two ends of an equality on bodies: a `connect`'s anchor on body1 and its image
    /// on body2 at qpos0; a `weld`'s anchor on body2 and its pose `relpose` (or the pose at
    /// qpos0, for a zero quaternion or none) on body1.
    fn body_ends(&self, e: &El, kind: ClosureKind) -> Result<Ends, ModelError> {
        let body = |attr: &str, required: bool| -> Result<usize, ModelError> {
            match e.attr(attr) {
                Some(n) => self.by_body.get(n).copied().ok_or_else(|| {
                    self.files.err(
                        e,
                        format!("{attr} \"{n}\" is not a body of the model"),
                        "name a body of <worldbody> (or \"world\")",
                    )
                }),
                None if required => Err(self.files.err(
                    e,
                    format!("`{attr}` missing"),
                    format!("give {attr} (or site1 and site2)"),
                )),
                None => Ok(0),
            }
        };
        let (b1, b2) = (body("body1", true)?, body("body2", false)?);
        let p = numbers(
            self.files,
            e,
            "anchor",
            e.attr("anchor").unwrap_or("0 0 0"),
            (3, 3),
        )?;
        let anchor = Placement {
            pos: [p[0], p[1], p[2]],
            rot: IDENTITY,
        };
        let (w1, w2) = (self.frames[b1].world0, self.frames[b2].world0);
        if kind == ClosureKind::Ball {
            return Ok(((b1, anchor), (b2, w2.inverse().then(&w1.then(&anchor)))));
        }
        let at_qpos0 = w1.inverse().then(&w2);
        let rel = match e.attr("relpose") {
            Some(t) => {
                let r = numbers(self.files, e, "relpose", t, (7, 7))?;
                let n = r[3..].iter().map(|x| x * x).sum::<f64>().sqrt();
                if n < 1e-14 {
                    at_qpos0
                } else {
                    Placement {
                        pos: [r[0], r[1], r[2]],
                        rot: quat_matrix(&[r[3] / n, r[4] / n, r[5] / n, r[6] / n]),
                    }
                }
            }
            None => at_qpos0,
        };
        Ok(((b1, rel.then(&anchor)), (b2, anchor)))
    }

    /// A `joint` or `tendon` equality as a coupling row.
    fn coupling(&mut self, e: &El, name: String) -> Result<(), ModelError> {
        let mut poly = [0.0, 1.0, 0.0, 0.0, 0.0];
        if let Some(p) = e.attr("polycoef") {
            for (k, c) in numbers(self.files, e, "polycoef", p, (1, 5))?
                .into_iter()
                .enumerate()
            {
                poly[k] = c;
            }
        }
        let terms = |attr: &str, required: bool| -> Result<(Vec<(String, f64)>, f64), ModelError> {
            let Some(n) = e.attr(attr) else {
                return if required {
                    Err(self
                        .files
                        .err(e, format!("`{attr}` missing"), format!("give {attr}")))
                } else {
                    Ok((Vec::new(), 0.0))
                };
            };
            if e.tag == "joint" {
                Ok((vec![(n.to_string(), 1.0)], self.scalar_joint(e, n)?))
            } else {
                let t = self.tendons.get(n).ok_or_else(|| {
                    self.files.err(
                        e,
                        format!("tendon \"{n}\" is not a fixed tendon of the model"),
                        "name a <fixed> tendon of <tendon>",
                    )
                })?;
                let l0 = t
                    .iter()
                    .map(|(j, c)| c * self.joint_info.get(j).map_or(0.0, |x| x.1))
                    .sum();
                Ok((t.clone(), l0))
            }
        };
        let (pa, pb) = if e.tag == "joint" {
            ("joint1", "joint2")
        } else {
            ("tendon1", "tendon2")
        };
        let ((a, a0), (b, b0)) = (terms(pa, true)?, terms(pb, false)?);
        self.model.couplings.push(Coupling {
            name,
            a,
            b,
            a0,
            b0,
            poly,
            origin: self.files.origin(e),
        });
        Ok(())
    }

    /// The actuators of an `<actuator>` section: motors and general actuators on a joint
    /// are read (the action space); others are listed and left out.
    pub(super) fn actuators(&mut self, sec: &El) -> Result<(), ModelError> {
        let read = [
            "motor",
            "general",
            "position",
            "velocity",
            "intvelocity",
            "damper",
            "cylinder",
        ];
        check_children(
            self.files,
            sec,
            &read,
            &["muscle", "adhesion", "dcmotor", "pid", "orientation"],
        )?;
        for a in &sec.children {
            let name = a.attr("name").map_or_else(
                || format!("actuator{}", self.model.actuators.len()),
                str::to_string,
            );
            if !read.contains(&a.tag.as_str()) {
                self.note_at(
                    a,
                    format!("<{}> actuator not modelled: not in the action space", a.tag),
                );
                continue;
            }
            check_attributes(self.files, a, &a.tag, false)?;
            let s = Styled::new(self.files, &self.defaults, a, "actuator", "main")?;
            if a.tag != "motor" && a.tag != "general" {
                self.note_at(a, format!("<{}> is a feedback actuator: not in the action space (passive runs apply no control)", a.tag));
                continue;
            }
            let shaped = ["dyntype", "biastype", "gaintype"].iter().any(|k| {
                s.get(k)
                    .is_some_and(|v| !matches!(v.trim(), "none" | "fixed"))
            });
            if shaped {
                self.note_at(a, "a general actuator with dynamics, a bias or a non-fixed gain: not in the action space (MuJoCo applies its bias force even at zero control; the oracle turns actuation off)");
                continue;
            }
            let Some(joint) = a.attr("joint") else {
                self.note_at(
                    a,
                    "an actuator on a tendon, site or body: not in the action space",
                );
                continue;
            };
            let motor = self.motor(a, &s, name, joint)?;
            self.model.actuators.push(motor);
        }
        Ok(())
    }
}

impl Reader<'_> {
    /// A motor on `joint`: its gear and, where limited, its control range.
    fn motor(&self, a: &El, s: &Styled, name: String, joint: &str) -> Result<Actuator, ModelError> {
        self.scalar_joint(a, joint)?;
        let gear = numbers(self.files, a, "gear", s.get("gear").unwrap_or("1"), (1, 6))?[0];
        let range = s
            .get("ctrlrange")
            .map(|r| numbers(self.files, a, "ctrlrange", r, (2, 2)))
            .transpose()?;
        let limited = match s.get("ctrllimited").unwrap_or("auto") {
            "auto" => self.compiler.autolimits && range.is_some(),
            v => keyword(self.files, a, "ctrllimited", v, &["true", "false"])? == "true",
        };
        if limited && range.as_ref().is_none_or(|r| r[0] >= r[1]) {
            return Err(self.files.err(
                a,
                "ctrllimited without an increasing ctrlrange",
                "give ctrlrange=\"lower upper\" with lower < upper",
            ));
        }
        Ok(Actuator {
            name,
            joint: joint.to_string(),
            gear,
            ctrlrange: if limited {
                range.map(|r| [r[0], r[1]])
            } else {
                None
            },
            origin: self.files.origin(a),
        })
    }
}

/// `given` completed by `default`'s later entries.
fn fill<const N: usize>(given: Vec<f64>, default: [f64; N]) -> [f64; N] {
    let mut out = default;
    out[..given.len()].copy_from_slice(&given);
    out
}
