//! One MJCF `<joint>` read through its class, as MuJoCo's compiler reads it
//! (`mjCJoint::Compile`, `src/user/user_objects.cc`): `type` (hinge by default), `pos` and
//! `axis` in the body frame (through the `<frame>`s around it), `ref`, `range` and
//! `springref` in degrees for a hinge or ball unless `angle="radian"`, `limited` (`auto`:
//! limited when a range is given, under `autolimits`), `stiffness`, `damping`, `armature`.
//! A hinge range beyond a turn is refused as the sign of angles written in the other unit.

use super::super::super::spatial::{axis_angle, mul, scale, Placement, IDENTITY, V3};
use super::super::description::{JointKind, Limits, ModelError};
use super::super::xml::clip;
use super::compiler::{boolean, keyword, numbers, unit, Compiler};
use super::defaults::Styled;
use super::tree::{El, Files};
use std::f64::consts::PI;

/// A `<joint>` element and its class.
pub(super) struct JointReader<'a> {
    pub(super) files: &'a Files,
    pub(super) el: &'a El,
    pub(super) j: &'a Styled<'a>,
    pub(super) compiler: &'a Compiler,
}

impl JointReader<'_> {
    /// The joint as read, `pose` the `<frame>`s around it.
    pub(super) fn spec(&self, name: String, pose: &Placement) -> Result<JointSpec, ModelError> {
        let kind = keyword(
            self.files,
            self.el,
            "type",
            self.j.get("type").unwrap_or("hinge"),
            &["hinge", "slide", "ball", "free"],
        )?;
        if kind == "free" {
            return self.free(name);
        }
        if self.j.get("springdamper").is_some() {
            return Err(self.err(
                "springdamper is not read",
                "give stiffness and damping (MuJoCo's compiled model has them)",
            ));
        }
        let angular = kind == "hinge" || kind == "ball";
        let conv = |x: f64| if angular { self.compiler.angle(x) } else { x };
        let anchor = pose.point(self.vec3("pos", [0.0; 3])?);
        let axis = unit(
            self.files,
            self.el,
            "axis",
            mul(&pose.rot, self.vec3("axis", [0.0, 0.0, 1.0])?),
        )?;
        let reference = if kind == "ball" {
            0.0
        } else {
            conv(self.scalar("ref")?)
        };
        let limits = self.limits(kind, conv)?;
        let stiffness = self.poly("stiffness")?;
        if kind == "ball" && stiffness != 0.0 {
            return Err(self.err(
                "a ball joint with stiffness",
                "a ball joint's spring is not read: remove stiffness",
            ));
        }
        let (kind, unref) = match kind {
            "hinge" => {
                let k = if limits.is_some() {
                    JointKind::Revolute
                } else {
                    JointKind::Continuous
                };
                (
                    k,
                    Placement {
                        pos: [0.0; 3],
                        rot: axis_angle(axis, -reference),
                    },
                )
            }
            "slide" => (
                JointKind::Prismatic,
                Placement {
                    pos: scale(-reference, axis),
                    rot: IDENTITY,
                },
            ),
            _ => (JointKind::Spherical, Placement::IDENTITY),
        };
        Ok(JointSpec {
            name,
            kind,
            anchor,
            axis,
            reference,
            unref,
            limits,
            stiffness,
            springref: conv(self.scalar("springref")?),
            damping: self.poly("damping")?,
            armature: self.scalar("armature")?,
        })
    }

    /// A `<joint type="free">`: its class's damping and armature, as in MuJoCo; a spring
    /// refused.
    fn free(&self, name: String) -> Result<JointSpec, ModelError> {
        if self
            .j
            .get("stiffness")
            .is_some_and(|v| v.split_whitespace().any(|x| x.parse::<f64>() != Ok(0.0)))
        {
            return Err(self.err(
                "a free joint with stiffness",
                "a free joint's spring is not read: remove stiffness",
            ));
        }
        let mut spec = JointSpec::free(name);
        spec.damping = self.j.get("damping").map_or(Ok(vec![0.0]), |v| {
            numbers(self.files, self.el, "damping", v, (1, 3))
        })?[0];
        spec.armature = self.scalar("armature")?;
        Ok(spec)
    }

    /// The joint's limits: `range` (through `conv`, degrees to radians where angular) when
    /// `limited`, for hinges and slides (a ball's range is not kept).
    fn limits(&self, kind: &str, conv: impl Fn(f64) -> f64) -> Result<Option<Limits>, ModelError> {
        let range = match self.j.get("range") {
            Some(r) => Some(
                numbers(self.files, self.el, "range", r, (2, 2))?
                    .into_iter()
                    .map(conv)
                    .collect::<Vec<_>>(),
            ),
            None => None,
        };
        let limited = match self.j.get("limited").unwrap_or("auto") {
            "auto" => self.compiler.autolimits && range.is_some(),
            v => boolean(self.files, self.el, "limited", v)?,
        };
        let Some(r) = range.filter(|_| limited) else {
            if limited {
                return Err(self.err(
                    "limited=\"true\" without range",
                    "give range=\"lower upper\"",
                ));
            }
            return Ok(None);
        };
        if kind == "ball" {
            return Ok(None);
        }
        if kind == "hinge" && (r[0].abs() > 2.0 * PI + 1e-9 || r[1].abs() > 2.0 * PI + 1e-9) {
            let fix = if self.compiler.degree {
                "the range is read in degrees (MJCF's default): check the numbers"
            } else {
                "<compiler angle=\"radian\"> reads ranges in radians: write them in radians, or drop angle=\"radian\" for degrees"
            };
            return Err(self.err(
                format!(
                    "hinge range [{}, {}] rad reaches beyond a turn (2π)",
                    r[0], r[1]
                ),
                fix,
            ));
        }
        if r[0] > r[1] {
            return Err(self.err(
                format!("range lower {} > upper {}", r[0], r[1]),
                "swap the limits",
            ));
        }
        Ok(Some(Limits {
            lower: r[0],
            upper: r[1],
            effort: f64::INFINITY,
            velocity: f64::INFINITY,
        }))
    }

    fn err(&self, what: impl Into<String>, fix: impl Into<String>) -> ModelError {
        self.files.err(self.el, what, fix)
    }

    fn vec3(&self, a: &str, default: V3) -> Result<V3, ModelError> {
        self.j.get(a).map_or(Ok(default), |v| {
            numbers(self.files, self.el, a, v, (3, 3)).map(|x| [x[0], x[1], x[2]])
        })
    }

    /// A scalar attribute (0 when absent).
    pub(super) fn scalar(&self, a: &str) -> Result<f64, ModelError> {
        self.j.get(a).map_or(Ok(0.0), |v| {
            numbers(self.files, self.el, a, v, (1, 1)).map(|x| x[0])
        })
    }

    /// A polynomial attribute (MuJoCo 3.3's spring and damper polynomials) read as its
    /// linear coefficient, refusing higher ones.
    fn poly(&self, a: &str) -> Result<f64, ModelError> {
        let Some(v) = self.j.get(a) else {
            return Ok(0.0);
        };
        let c = numbers(self.files, self.el, a, v, (1, 3))?;
        if c[1..].iter().any(|x| *x != 0.0) {
            return Err(self.err(
                format!("`{a}` = \"{}\" is a polynomial", clip(v)),
                format!("driftlab reads a linear {a} (one coefficient)"),
            ));
        }
        Ok(c[0])
    }
}

/// A joint as read: kind, anchor and axis in the body frame, `ref` and its inverse motion.
pub(super) struct JointSpec {
    pub(super) name: String,
    pub(super) kind: JointKind,
    pub(super) anchor: V3,
    pub(super) axis: V3,
    pub(super) reference: f64,
    pub(super) unref: Placement,
    pub(super) limits: Option<Limits>,
    pub(super) stiffness: f64,
    pub(super) springref: f64,
    pub(super) damping: f64,
    pub(super) armature: f64,
}

impl JointSpec {
    /// A free joint (nothing but its name).
    pub(super) fn free(name: String) -> Self {
        Self {
            name,
            kind: JointKind::Floating,
            anchor: [0.0; 3],
            axis: [1.0, 0.0, 0.0],
            reference: 0.0,
            unref: Placement::IDENTITY,
            limits: None,
            stiffness: 0.0,
            springref: 0.0,
            damping: 0.0,
            armature: 0.0,
        }
    }
}
