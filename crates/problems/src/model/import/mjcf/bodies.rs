//! The `<worldbody>` tree as driftlab's kinematic tree, moving as MuJoCo's
//! `mj_kinematics` moves it: a body sits at `pos`/orientation in its parent's frame, then
//! each of its joints in order turns (hinge, ball) or shifts (slide) it about the joint's
//! anchor `pos`, a hinge or slide by `q − ref` (MuJoCo's `qpos − qpos0`); a free joint
//! places it in the world. In driftlab a joint moves its child about the joint frame's
//! origin, so each body's frame is MuJoCo's moved to its last joint's anchor (the
//! `offset`, subtracted from its inertia's centre and its children's positions), a
//! body with k > 1 joints becomes k − 1 massless frames and itself, and `ref` is folded
//! into the joint's placement (`R(a, q − ref) = R(a, −ref)·R(a, q)`), so driftlab's
//! joint coordinates equal MuJoCo's `qpos` for hinges and slides.

use super::super::super::spatial::{matrix_quat, sub, Inertia, Placement, V3};
use super::super::description::{default_v0, Body, Joint, JointKind, ModelError};
use super::compiler::{numbers, FromGeom};
use super::defaults::Styled;
use super::inertia::{bound, combine, geom_solid, geom_type, inertial, shifted, Solid};
use super::joint::{JointReader, JointSpec};
use super::schema::{check_attributes, check_children};
use super::tree::El;
use super::Reader;

/// The deepest body nesting read (MuJoCo models nest a few tens of levels).
pub const MAX_BODY_DEPTH: usize = 200;

/// A MuJoCo body as the equalities need it: its driftlab body (`None`: the world), the
/// shift of its driftlab frame, and its MuJoCo frame in the world at `qpos0`.
#[derive(Clone, Debug)]
pub struct BodyFrame {
    /// The driftlab body.
    pub body: Option<usize>,
    /// Its last joint's anchor in MuJoCo's body frame.
    pub offset: V3,
    /// MuJoCo's body frame at `qpos0`.
    pub world0: Placement,
}

impl BodyFrame {
    /// A frame given in MuJoCo's body frame, in the driftlab body's.
    pub fn local(&self, p: &Placement) -> Placement {
        Placement {
            pos: sub(p.pos, self.offset),
            rot: p.rot,
        }
    }
}

/// An element of a body, with the pose of the `<frame>`s around it and the class that
/// applies inside them.
struct Item<'a> {
    el: &'a El,
    pose: Placement,
    class: String,
}

const BODY_CHILDREN: [&str; 8] = [
    "body",
    "frame",
    "inertial",
    "joint",
    "freejoint",
    "geom",
    "site",
    "camera",
];

impl Reader<'_> {
    /// Every body of `<worldbody>`.
    pub(super) fn worldbody(&mut self, wb: &El) -> Result<(), ModelError> {
        check_attributes(self.files, wb, "worldbody", false)?;
        let items = self.items(wb, Placement::IDENTITY, "main", 0)?;
        for it in &items {
            match it.el.tag.as_str() {
                "body" => self.body(it, 0, 1)?,
                "geom" => self.count_contact(it)?,
                "site" => self.site(it, 0)?,
                "joint" | "freejoint" | "inertial" => {
                    return Err(self.files.err(
                        it.el,
                        format!("<{}> in <worldbody>", it.el.tag),
                        "the world does not move: put it in a <body>",
                    ))
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// The elements of `el` with `<frame>`s flattened into their poses.
    fn items<'a>(
        &self, el: &'a El, pose: Placement, class: &str, depth: usize,
    ) -> Result<Vec<Item<'a>>, ModelError> {
        let mut allowed = BODY_CHILDREN.to_vec();
        allowed.push("light");
        check_children(self.files, el, &allowed, &[])?;
        let mut out = Vec::new();
        for c in &el.children {
            if c.tag == "frame" {
                if depth > MAX_BODY_DEPTH {
                    return Err(self.files.err(
                        c,
                        format!("frames nest deeper than {MAX_BODY_DEPTH}"),
                        "flatten the frames",
                    ));
                }
                check_attributes(self.files, c, "frame", false)?;
                let inner = self.class_of(c, "childclass", class)?;
                let p = pose.then(&self.pose(c)?);
                out.extend(self.items(c, p, &inner, depth + 1)?);
            } else {
                out.push(Item {
                    el: c,
                    pose,
                    class: class.to_string(),
                });
            }
        }
        Ok(out)
    }

    /// The class named by `attr` of `el` (checked), or `inherited`.
    fn class_of(&self, el: &El, attr: &str, inherited: &str) -> Result<String, ModelError> {
        match el.attr(attr) {
            Some(c) if !self.defaults.has(c) => Err(self.files.err(
                el,
                format!("default class \"{c}\" is not defined"),
                "define it in <default>, or fix the name",
            )),
            Some(c) => Ok(c.to_string()),
            None => Ok(inherited.to_string()),
        }
    }

    /// `pos` and orientation of `el` (its own attributes).
    fn pose(&self, el: &El) -> Result<Placement, ModelError> {
        let pos = el.attr("pos").map_or(Ok(vec![0.0; 3]), |p| {
            numbers(self.files, el, "pos", p, (3, 3))
        })?;
        let rot = self.compiler.orientation(self.files, el, |a| el.attr(a))?;
        Ok(Placement {
            pos: [pos[0], pos[1], pos[2]],
            rot,
        })
    }

    /// Body `it` (child of MuJoCo body `parent`) and its subtree.
    fn body(&mut self, it: &Item, parent: usize, depth: usize) -> Result<(), ModelError> {
        let el = it.el;
        if depth > MAX_BODY_DEPTH {
            return Err(self.files.err(
                el,
                format!("bodies nest deeper than {MAX_BODY_DEPTH}"),
                "a mechanism nests a few tens of bodies; check that this is the model file",
            ));
        }
        check_attributes(self.files, el, "body", false)?;
        if el
            .attr("gravcomp")
            .is_some_and(|g| g.trim().parse::<f64>() != Ok(0.0))
        {
            return Err(self.files.err(el, "gravcomp (gravity compensation) is not modelled", "remove gravcomp for this study (it adds a force −gravcomp·m·g MuJoCo applies and driftlab does not)"));
        }
        let class = self.class_of(el, "childclass", &it.class)?;
        let placement = it.pose.then(&self.pose(el)?);
        let name = match el.attr("name") {
            Some(n) if !n.is_empty() => n.to_string(),
            _ => format!("body{}", self.frames.len()),
        };
        let items = self.items(el, Placement::IDENTITY, &class, 0)?;
        let solid = self.solid(el, &items)?;
        let me = self.frames.len();
        let world0 = self.frames[parent].world0.then(&placement);
        let offset = self.joints(el, &name, &items, parent, &placement, &world0, solid)?;
        if self.by_body.insert(name.clone(), me).is_some() {
            return Err(self.files.err(
                el,
                format!("a second body named \"{name}\""),
                "give every body its own name",
            ));
        }
        let body = Some(self.model.bodies.len() - 1);
        self.frames.push(BodyFrame {
            body,
            offset,
            world0,
        });
        for c in &items {
            match c.el.tag.as_str() {
                "body" => self.body(c, me, depth + 1)?,
                "geom" => self.count_contact(c)?,
                "site" => self.site(c, me)?,
                _ => {}
            }
        }
        Ok(())
    }

    /// The body's solid: its `<inertial>`, or its geoms' (as `inertiafromgeom` says).
    fn solid(&self, el: &El, items: &[Item]) -> Result<Solid, ModelError> {
        let explicit = items
            .iter()
            .filter(|i| i.el.tag == "inertial")
            .collect::<Vec<_>>();
        if explicit.len() > 1 {
            return Err(self.files.err(
                explicit[1].el,
                "a second <inertial>",
                "a body has one <inertial>",
            ));
        }
        let from_geom = match (self.compiler.from_geom, explicit.first()) {
            (FromGeom::True, _) | (FromGeom::Auto, None) => true,
            (FromGeom::False, None) => {
                return Err(self.files.err(el, "a body without <inertial> under inertiafromgeom=\"false\"", "give the body an <inertial> (pos, mass, diaginertia), or set inertiafromgeom to auto"));
            }
            _ => false,
        };
        let s = if from_geom {
            let mut solids = Vec::new();
            for g in items.iter().filter(|i| i.el.tag == "geom") {
                let styled = Styled::new(self.files, &self.defaults, g.el, "geom", &g.class)?;
                let group = styled.get("group").map_or(Ok(vec![0.0]), |v| {
                    numbers(self.files, g.el, "group", v, (1, 1))
                })?[0] as i64;
                if group < self.compiler.groups[0] || group > self.compiler.groups[1] {
                    continue;
                }
                if let Some(s) = geom_solid(self.files, &styled, &self.compiler)? {
                    let at = g.pose.then(&Placement {
                        pos: s.com,
                        rot: s.rot,
                    });
                    let rot = super::super::super::spatial::matmul(
                        &super::super::super::spatial::matmul(&g.pose.rot, &s.rot),
                        &super::super::super::spatial::transpose(&g.pose.rot),
                    );
                    solids.push(Solid {
                        mass: s.mass,
                        com: at.pos,
                        rot,
                    });
                }
            }
            let solids: Vec<Solid> = solids.into_iter().filter(|s| s.mass > 1e-14).collect();
            if solids.is_empty() {
                Solid {
                    mass: 0.0,
                    com: [0.0; 3],
                    rot: [[0.0; 3]; 3],
                }
            } else {
                combine(&solids)
            }
        } else {
            let it = explicit[0];
            check_attributes(self.files, it.el, "inertial", false)?;
            let s = inertial(self.files, it.el, &self.compiler)?;
            let rot = super::super::super::spatial::matmul(
                &super::super::super::spatial::matmul(&it.pose.rot, &s.rot),
                &super::super::super::spatial::transpose(&it.pose.rot),
            );
            Solid {
                mass: s.mass,
                com: it.pose.point(s.com),
                rot,
            }
        };
        Ok(bound(s, &self.compiler))
    }

    /// Count a geom that collides in MuJoCo (contype or conaffinity nonzero), and check
    /// its attributes.
    fn count_contact(&mut self, it: &Item) -> Result<(), ModelError> {
        check_attributes(self.files, it.el, "geom", false)?;
        let g = Styled::new(self.files, &self.defaults, it.el, "geom", &it.class)?;
        geom_type(self.files, &g)?;
        let flag = |a: &str| {
            g.get(a).map_or(Ok(1.0), |v| {
                numbers(self.files, it.el, a, v, (1, 1)).map(|x| x[0])
            })
        };
        if flag("contype")? != 0.0 || flag("conaffinity")? != 0.0 {
            self.contact_geoms += 1;
        }
        Ok(())
    }

    /// Record site `it` of MuJoCo body `body` (for equalities on sites).
    fn site(&mut self, it: &Item, body: usize) -> Result<(), ModelError> {
        check_attributes(self.files, it.el, "site", false)?;
        let s = Styled::new(self.files, &self.defaults, it.el, "site", &it.class)?;
        let pos = s.get("pos").map_or(Ok(vec![0.0; 3]), |p| {
            numbers(self.files, it.el, "pos", p, (3, 3))
        })?;
        let rot = self.compiler.orientation(self.files, it.el, |a| s.get(a))?;
        let local = it.pose.then(&Placement {
            pos: [pos[0], pos[1], pos[2]],
            rot,
        });
        if let Some(n) = it.el.attr("name") {
            self.sites.insert(n.to_string(), (body, local));
        }
        Ok(())
    }

    /// The body's joints (a fixed joint when it has none) and its driftlab body; returns
    /// the frame offset.
    #[allow(clippy::too_many_arguments)]
    fn joints(
        &mut self, el: &El, name: &str, items: &[Item], parent: usize, placement: &Placement,
        world0: &Placement, solid: Solid,
    ) -> Result<V3, ModelError> {
        let joints: Vec<&Item> = items
            .iter()
            .filter(|i| i.el.tag == "joint" || i.el.tag == "freejoint")
            .collect();
        let pf = self.frames[parent].clone();
        let base = Placement {
            pos: sub(placement.pos, pf.offset),
            rot: placement.rot,
        };
        let origin = self.files.origin(el);
        if joints.is_empty() {
            // A body without joints is welded to its parent.
            self.push_body(name, shifted(&solid, [0.0; 3]), origin.clone());
            let child = self.model.bodies.len() - 1;
            let mut j = Joint::floating(format!("{name}:weld"), child, base, origin);
            (j.kind, j.parent, j.q0, j.v0) = (JointKind::Fixed, pf.body, Vec::new(), Vec::new());
            self.model.joints.push(j);
            return Ok([0.0; 3]);
        }
        let mut prev: Option<(V3, usize)> = None;
        for (k, it) in joints.iter().enumerate() {
            let spec = self.joint_spec(it)?;
            let last = k + 1 == joints.len();
            if spec.kind == JointKind::Floating && (joints.len() > 1 || parent != 0) {
                return Err(self.files.err(it.el, "a free joint that is not its body's only joint, or in a body that is not a child of the world", "a free joint moves a top-level body alone (MuJoCo refuses it elsewhere)"));
            }
            let inertia = if last {
                shifted(&solid, spec.anchor)
            } else {
                Inertia::default()
            };
            let body_name = if last {
                name.to_string()
            } else {
                format!("{name}:{}", spec.name)
            };
            self.push_body(&body_name, inertia, self.files.origin(it.el));
            let child = self.model.bodies.len() - 1;
            let (pre, parent_body) = match prev {
                None => (
                    base.then(&Placement {
                        pos: spec.anchor,
                        rot: super::super::super::spatial::IDENTITY,
                    }),
                    pf.body,
                ),
                Some((a, b)) => (
                    Placement {
                        pos: sub(spec.anchor, a),
                        rot: super::super::super::spatial::IDENTITY,
                    },
                    Some(b),
                ),
            };
            let j = tree_joint(
                &spec,
                child,
                parent_body,
                pre.then(&spec.unref),
                world0,
                self.files.origin(it.el),
            );
            self.joint_info
                .insert(spec.name.clone(), (spec.kind, spec.reference));
            self.model.joints.push(j);
            prev = Some((spec.anchor, child));
        }
        Ok(prev.map_or([0.0; 3], |(a, _)| a))
    }

    fn push_body(
        &mut self, name: &str, inertia: Inertia, origin: super::super::description::Origin,
    ) {
        self.model.bodies.push(Body {
            name: name.to_string(),
            inertia,
            origin,
        });
    }

    /// One `<joint>` or `<freejoint>` read through its class ([`super::joint`]).
    fn joint_spec(&mut self, it: &Item) -> Result<JointSpec, ModelError> {
        let el = it.el;
        let index = self.model.joints.len();
        let name = el
            .attr("name")
            .filter(|n| !n.is_empty())
            .map_or_else(|| format!("joint{index}"), str::to_string);
        if el.tag == "freejoint" {
            check_attributes(self.files, el, "freejoint", false)?;
            return Ok(JointSpec::free(name));
        }
        check_attributes(self.files, el, "joint", false)?;
        let j = Styled::new(self.files, &self.defaults, el, "joint", &it.class)?;
        let r = JointReader {
            files: self.files,
            el,
            j: &j,
            compiler: &self.compiler,
        };
        let spec = r.spec(name, &it.pose)?;
        let frictionloss = r.scalar("frictionloss")?;
        if frictionloss != 0.0 {
            self.note_at(el, format!("frictionloss {frictionloss} not modelled (MuJoCo enforces it as a constraint; the oracle turns it off)"));
        }
        Ok(spec)
    }
}

/// The tree joint of `spec` moving body `child` from `parent` (`None`: the world), its
/// frame at `placement` in the parent's; a free joint starts at the body's pose at qpos0,
/// `world0` (MuJoCo's qpos0 of a free joint), a hinge or slide at `ref`.
fn tree_joint(
    spec: &JointSpec, child: usize, parent: Option<usize>, placement: Placement,
    world0: &Placement, origin: super::super::description::Origin,
) -> Joint {
    let mut j = Joint::floating(spec.name.clone(), child, placement, origin);
    j.kind = spec.kind;
    j.parent = parent;
    j.axis = spec.axis;
    j.limits = spec.limits;
    j.stiffness = spec.stiffness;
    j.rest = spec.springref;
    j.damping = spec.damping;
    j.armature = spec.armature;
    j.q0 = match spec.kind {
        JointKind::Floating => {
            let q = matrix_quat(&world0.rot);
            vec![
                world0.pos[0],
                world0.pos[1],
                world0.pos[2],
                q[0],
                q[1],
                q[2],
                q[3],
            ]
        }
        JointKind::Spherical => vec![1.0, 0.0, 0.0, 0.0],
        _ => vec![spec.reference],
    };
    j.v0 = default_v0(spec.kind);
    if spec.kind == JointKind::Floating {
        j.placement = Placement::IDENTITY;
    }
    j
}
