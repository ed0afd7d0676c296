//! A body's mass and inertia as MuJoCo's compiler finds them (`src/user/user_objects.cc`,
//! `mjCGeom::GetVolume`, `mjCGeom::SetInertia`, `mjCBody::InertiaFromGeom`): from an
//! explicit `<inertial>`, or from its geoms — each a solid of uniform density (default
//! 1000) or of the given `mass` — combined about the body's centre of mass. With `r` the
//! radius and `h` the full length of the cylinder part (2·size₁):
//!
//! ```text
//! sphere     V = 4/3 π r³           I = 2/5 m r² (each axis)
//! capsule    V = π r² h + 4/3 π r³   m_s = m·4r/(4r + 3h), m_c = m − m_s,
//!            I_x = I_y = m_c(3r² + h²)/12 + 2/5 m_s r² + m_s h(3r + 2h)/8,  I_z = m_c r²/2 + 2/5 m_s r²
//! cylinder   V = π r² h              I_x = I_y = m(3r² + h²)/12,  I_z = m r²/2
//! ellipsoid  V = 4/3 π a b c         I_x = m(b² + c²)/5, …
//! box        V = 8 a b c (half-sizes) I_x = m(b² + c²)/3, …
//! ```
//!
//! `fromto` places a capsule, cylinder, box or ellipsoid between two points: its centre at
//! their midpoint, its z axis along them (`mjuu_z2quat(from − to)`), its half-length half
//! their distance. Then `boundmass`/`boundinertia` bound the mass and principal moments,
//! `balanceinertia` sets moments that break the triangle inequality to their mean.

use super::super::super::spatial::{add, dot, matmul, mul, scale, sub, transpose, Inertia, M3, V3};
use super::super::description::ModelError;
use super::compiler::{numbers, z_to, Compiler};
use super::defaults::Styled;
use super::tree::{El, Files};
use std::f64::consts::PI;

/// One solid: mass, centre (body frame) and inertia about it (body frame).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Solid {
    /// Mass.
    pub mass: f64,
    /// Centre of mass in the body frame.
    pub com: V3,
    /// Rotational inertia about the centre, body axes.
    pub rot: M3,
}

/// The explicit `<inertial>`: `pos`, `mass`, and `diaginertia` with an orientation or
/// `fullinertia` (Ixx Iyy Izz Ixy Ixz Iyz).
pub fn inertial(files: &Files, el: &El, compiler: &Compiler) -> Result<Solid, ModelError> {
    let req = |a: &str| {
        el.attr(a).ok_or_else(|| {
            files.err(
                el,
                format!("<inertial> without `{a}`"),
                format!("give `{a}` (MuJoCo requires it)"),
            )
        })
    };
    let pos = numbers(files, el, "pos", req("pos")?, (3, 3))?;
    let mass = numbers(files, el, "mass", req("mass")?, (1, 1))?[0];
    let rot = match (el.attr("diaginertia"), el.attr("fullinertia")) {
        (Some(d), None) => {
            let d = numbers(files, el, "diaginertia", d, (3, 3))?;
            let r = compiler.orientation(files, el, |a| el.attr(a))?;
            let diag = [[d[0], 0.0, 0.0], [0.0, d[1], 0.0], [0.0, 0.0, d[2]]];
            matmul(&matmul(&r, &diag), &transpose(&r))
        }
        (None, Some(f)) => {
            if ["quat", "axisangle", "xyaxes", "zaxis", "euler"]
                .iter()
                .any(|a| el.attr(a).is_some())
            {
                return Err(files.err(el, "fullinertia with an orientation", "fullinertia is given in the body's axes: remove the orientation (MuJoCo refuses both)"));
            }
            let f = numbers(files, el, "fullinertia", f, (6, 6))?;
            [[f[0], f[3], f[4]], [f[3], f[1], f[5]], [f[4], f[5], f[2]]]
        }
        (Some(_), Some(_)) => {
            return Err(files.err(el, "both diaginertia and fullinertia", "give one"))
        }
        (None, None) => {
            return Err(files.err(
                el,
                "<inertial> without diaginertia or fullinertia",
                "give diaginertia=\"Ixx Iyy Izz\" (with an orientation) or fullinertia",
            ))
        }
    };
    if mass < 0.0 {
        return Err(files.err(el, format!("mass {mass} < 0"), "give a mass ≥ 0"));
    }
    Ok(Solid {
        mass,
        com: [pos[0], pos[1], pos[2]],
        rot,
    })
}

/// What a geom is for the inertia: its type, sizes and frame after `fromto`.
struct Shape {
    kind: &'static str,
    size: [f64; 3],
    pos: V3,
    rot: M3,
}

const TYPES: [&str; 9] = [
    "plane",
    "hfield",
    "sphere",
    "capsule",
    "ellipsoid",
    "cylinder",
    "box",
    "mesh",
    "sdf",
];

/// The geom's type, as written or from its class (default `sphere`).
pub fn geom_type(files: &Files, g: &Styled) -> Result<&'static str, ModelError> {
    let t = g.get("type").unwrap_or("sphere");
    super::compiler::keyword(files, g.el, "type", t, &TYPES)
}

/// The solid of geom `g` (`None`: it gives no mass, a plane).
pub fn geom_solid(
    files: &Files, g: &Styled, compiler: &Compiler,
) -> Result<Option<Solid>, ModelError> {
    let kind = geom_type(files, g)?;
    match kind {
        "plane" => return Ok(None),
        "mesh" | "hfield" | "sdf" => {
            return Err(files.err(g.el, format!("the body's inertia would come from a {kind} geom, whose volume needs its {kind} data"), "give the body an <inertial> (pos, mass, diaginertia), or set the geom's group outside inertiagrouprange"));
        }
        _ => {}
    }
    let shape = shape(files, g, kind, compiler)?;
    let volume = volume(&shape);
    let (mass, density) = match g.get("mass") {
        Some(m) => {
            let m = numbers(files, g.el, "mass", m, (1, 1))?[0];
            (m, if volume > 1e-14 { m / volume } else { 0.0 })
        }
        None => {
            let d = g.get("density").map_or(Ok(vec![1000.0]), |d| {
                numbers(files, g.el, "density", d, (1, 1))
            })?[0];
            (d * volume, d)
        }
    };
    if mass < 0.0 || density < 0.0 {
        return Err(files.err(
            g.el,
            format!("geom mass {mass} or density {density} < 0"),
            "give a mass or density ≥ 0",
        ));
    }
    if g.get("shellinertia").is_some_and(|v| v.trim() == "true") {
        return Err(files.err(
            g.el,
            "shellinertia=\"true\"",
            "a hollow geom's inertia is not read: give the body an <inertial>",
        ));
    }
    let local = principal(&shape, mass);
    let diag = [
        [local[0], 0.0, 0.0],
        [0.0, local[1], 0.0],
        [0.0, 0.0, local[2]],
    ];
    let rot = matmul(&matmul(&shape.rot, &diag), &transpose(&shape.rot));
    Ok(Some(Solid {
        mass,
        com: shape.pos,
        rot,
    }))
}

/// The geom's sizes and frame, `fromto` resolved.
fn shape(
    files: &Files, g: &Styled, kind: &'static str, compiler: &Compiler,
) -> Result<Shape, ModelError> {
    let need = match kind {
        "sphere" => 1,
        "capsule" | "cylinder" => 2,
        _ => 3,
    };
    let mut size = [0.0; 3];
    if let Some(s) = g.get("size") {
        for (k, x) in numbers(files, g.el, "size", s, (1, 3))?
            .into_iter()
            .enumerate()
        {
            size[k] = x;
        }
    }
    let Some(ft) = g.get("fromto") else {
        if size[..need].iter().any(|&s| s <= 0.0) {
            return Err(files.err(g.el, format!("a {kind} geom needs {need} positive sizes; it has {:?}", &size[..need]), "give size (radius; half-length for a capsule or cylinder; half-sizes for a box or ellipsoid), or fromto"));
        }
        let pos = g
            .get("pos")
            .map_or(Ok(vec![0.0; 3]), |p| numbers(files, g.el, "pos", p, (3, 3)))?;
        let rot = compiler.orientation(files, g.el, |a| g.get(a))?;
        return Ok(Shape {
            kind,
            size,
            pos: [pos[0], pos[1], pos[2]],
            rot,
        });
    };
    if kind == "sphere" {
        return Err(files.err(
            g.el,
            "fromto on a sphere",
            "fromto places a capsule, cylinder, box or ellipsoid; give a sphere pos",
        ));
    }
    if g.el.attr("pos").is_some()
        || ["quat", "axisangle", "xyaxes", "zaxis", "euler"]
            .iter()
            .any(|a| g.el.attr(a).is_some())
    {
        return Err(files.err(g.el, "fromto with pos or an orientation", "fromto gives the geom's position and orientation: remove pos and the orientation (MuJoCo refuses both)"));
    }
    let f = numbers(files, g.el, "fromto", ft, (6, 6))?;
    let (from, to) = ([f[0], f[1], f[2]], [f[3], f[4], f[5]]);
    let d = sub(from, to);
    let half = dot(d, d).sqrt() / 2.0;
    if half < 1e-14 {
        return Err(files.err(
            g.el,
            "fromto's two points coincide",
            "give two distinct points",
        ));
    }
    let axis = if need == 2 { 1 } else { 2 };
    size[axis] = half;
    if size[..need].iter().any(|&s| s <= 0.0) {
        return Err(files.err(
            g.el,
            format!("a {kind} geom with fromto needs its radius (size) > 0"),
            "give size",
        ));
    }
    Ok(Shape {
        kind,
        size,
        pos: scale(0.5, add(from, to)),
        rot: z_to(d),
    })
}

fn volume(s: &Shape) -> f64 {
    let [a, b, c] = s.size;
    match s.kind {
        "sphere" => 4.0 / 3.0 * PI * a.powi(3),
        "capsule" => PI * a * a * 2.0 * b + 4.0 / 3.0 * PI * a.powi(3),
        "cylinder" => PI * a * a * 2.0 * b,
        "ellipsoid" => 4.0 / 3.0 * PI * a * b * c,
        _ => 8.0 * a * b * c,
    }
}

/// Principal moments in the geom's frame.
fn principal(s: &Shape, m: f64) -> V3 {
    let [a, b, c] = s.size;
    match s.kind {
        "sphere" => [0.4 * m * a * a; 3],
        "capsule" => {
            let (r, h) = (a, 2.0 * b);
            let ms = m * 4.0 * r / (4.0 * r + 3.0 * h);
            let mc = m - ms;
            let x = mc * (3.0 * r * r + h * h) / 12.0
                + 0.4 * ms * r * r
                + ms * h * (3.0 * r + 2.0 * h) / 8.0;
            [x, x, mc * r * r / 2.0 + 0.4 * ms * r * r]
        }
        "cylinder" => {
            let (r, h) = (a, 2.0 * b);
            let x = m * (3.0 * r * r + h * h) / 12.0;
            [x, x, m * r * r / 2.0]
        }
        "ellipsoid" => [
            m * (b * b + c * c) / 5.0,
            m * (a * a + c * c) / 5.0,
            m * (a * a + b * b) / 5.0,
        ],
        _ => [
            m * (b * b + c * c) / 3.0,
            m * (a * a + c * c) / 3.0,
            m * (a * a + b * b) / 3.0,
        ],
    }
}

/// Solids combined about their common centre of mass (parallel axes, the same sum the
/// merge of fixed joints uses: [`super::super::merge::sum`]).
pub fn combine(solids: &[Solid]) -> Solid {
    let as_inertia = |s: &Solid| Inertia {
        mass: s.mass,
        com: s.com,
        rot: s.rot,
    };
    let total = solids
        .iter()
        .skip(1)
        .fold(as_inertia(&solids[0]), |acc, s| {
            super::super::merge::sum(&acc, &as_inertia(s))
        });
    Solid {
        mass: total.mass,
        com: total.com,
        rot: total.rot,
    }
}

/// `boundmass`, `boundinertia` and `balanceinertia` on one body's solid (principal
/// moments by Jacobi rotations; the axes kept).
pub fn bound(s: Solid, c: &Compiler) -> Solid {
    if c.boundmass <= 0.0 && c.boundinertia <= 0.0 && !c.balanceinertia {
        return s;
    }
    let (mut e, v) = eigen(&s.rot);
    e.iter_mut().for_each(|x| *x = x.max(c.boundinertia));
    if c.balanceinertia && (e[0] + e[1] < e[2] || e[0] + e[2] < e[1] || e[1] + e[2] < e[0]) {
        let mean = (e[0] + e[1] + e[2]) / 3.0;
        e = [mean; 3];
    }
    let diag = [[e[0], 0.0, 0.0], [0.0, e[1], 0.0], [0.0, 0.0, e[2]]];
    Solid {
        mass: s.mass.max(c.boundmass),
        com: s.com,
        rot: matmul(&matmul(&v, &diag), &transpose(&v)),
    }
}

/// Eigenvalues and eigenvectors (columns) of a symmetric 3 × 3 matrix by cyclic Jacobi
/// rotations.
pub fn eigen(a: &M3) -> (V3, M3) {
    let mut a = *a;
    let mut v = super::super::super::spatial::IDENTITY;
    for _ in 0..50 {
        let off = a[0][1].abs() + a[0][2].abs() + a[1][2].abs();
        if off < 1e-300 {
            break;
        }
        for (p, q) in [(0, 1), (0, 2), (1, 2)] {
            if a[p][q] == 0.0 {
                continue;
            }
            let theta = (a[q][q] - a[p][p]) / (2.0 * a[p][q]);
            let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
            let t = if theta == 0.0 { 1.0 } else { t };
            let (c, s) = (1.0 / (t * t + 1.0).sqrt(), t / (t * t + 1.0).sqrt());
            let mut j = super::super::super::spatial::IDENTITY;
            j[p][p] = c;
            j[q][q] = c;
            j[p][q] = s;
            j[q][p] = -s;
            a = matmul(&matmul(&transpose(&j), &a), &j);
            v = matmul(&v, &j);
        }
    }
    ([a[0][0], a[1][1], a[2][2]], v)
}

/// The driftlab inertia of a solid whose body frame is shifted by `offset` (the body's
/// last joint's anchor).
pub fn shifted(s: &Solid, offset: V3) -> Inertia {
    Inertia {
        mass: s.mass,
        com: sub(s.com, offset),
        rot: s.rot,
    }
}

/// `R x` for a rotation (re-exported for the body walk).
pub fn rotate(r: &M3, x: V3) -> V3 {
    mul(r, x)
}
