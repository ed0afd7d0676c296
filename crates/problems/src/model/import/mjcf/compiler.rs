//! `<compiler>` settings and the numbers MJCF attributes hold: angles in degrees unless
//! `angle="radian"` (MJCF's default is degrees), Euler sequences (`eulerseq`, lowercase
//! axes rotate with the body, uppercase are fixed: MuJoCo's `mjs_resolveOrientation`),
//! and the five orientation forms (`quat` w-first, `axisangle`, `xyaxes`, `zaxis`,
//! `euler`), each checked for a zero norm.

use super::super::super::spatial::{
    axis_angle, cross, dot, matmul, norm, quat_matrix, scale, sub, IDENTITY, M3, V3,
};
use super::super::description::ModelError;
use super::super::xml::clip;
use super::tree::{El, Files};

/// How `inertiafromgeom` says a body's inertia is found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FromGeom {
    /// Always from the geoms (an `<inertial>` is ignored).
    True,
    /// Never: every moving body needs an `<inertial>`.
    False,
    /// From the geoms where the body has no `<inertial>` (the default).
    Auto,
}

/// The `<compiler>` settings that change the model.
#[derive(Clone, Debug, PartialEq)]
pub struct Compiler {
    /// Angles in degrees (`angle="degree"`, the default).
    pub degree: bool,
    /// `eulerseq` (default `xyz`).
    pub eulerseq: [u8; 3],
    /// `autolimits`: a `range` alone makes a joint limited (default true).
    pub autolimits: bool,
    /// `inertiafromgeom`.
    pub from_geom: FromGeom,
    /// `inertiagrouprange`: geoms of these groups give mass.
    pub groups: [i64; 2],
    /// `boundmass`.
    pub boundmass: f64,
    /// `boundinertia`.
    pub boundinertia: f64,
    /// `balanceinertia`.
    pub balanceinertia: bool,
    /// `settotalmass` (≤ 0: off).
    pub settotalmass: f64,
}

impl Default for Compiler {
    fn default() -> Self {
        Self {
            degree: true,
            eulerseq: *b"xyz",
            autolimits: true,
            from_geom: FromGeom::Auto,
            groups: [0, 5],
            boundmass: 0.0,
            boundinertia: 0.0,
            balanceinertia: false,
            settotalmass: -1.0,
        }
    }
}

/// Numbers of an attribute's text, between `min` and `max` of them, each finite.
pub fn numbers(
    files: &Files, el: &El, attr: &str, text: &str, (min, max): (usize, usize),
) -> Result<Vec<f64>, ModelError> {
    let parts: Vec<&str> = text.split_whitespace().collect();
    if parts.len() < min || parts.len() > max {
        let want = if min == max {
            format!("{min}")
        } else {
            format!("{min} to {max}")
        };
        return Err(files.err(
            el,
            format!("`{attr}` = \"{}\" has {} numbers", clip(text), parts.len()),
            format!("give {want} numbers separated by spaces"),
        ));
    }
    parts
        .iter()
        .map(|p| match p.parse::<f64>() {
            Ok(x) if x.is_finite() => Ok(x),
            _ => Err(files.err(
                el,
                format!(
                    "`{attr}` = \"{}\": \"{}\" is not a finite number",
                    clip(text),
                    clip(p)
                ),
                "give decimal numbers (NaN and inf are refused)",
            )),
        })
        .collect()
}

/// A `true`/`false` attribute.
pub fn boolean(files: &Files, el: &El, attr: &str, text: &str) -> Result<bool, ModelError> {
    match text.trim() {
        "true" => Ok(true),
        "false" => Ok(false),
        other => Err(files.err(
            el,
            format!("`{attr}` = \"{}\"", clip(other)),
            "give true or false",
        )),
    }
}

/// One of `keywords`.
pub fn keyword<'k>(
    files: &Files, el: &El, attr: &str, text: &str, keywords: &[&'k str],
) -> Result<&'k str, ModelError> {
    keywords
        .iter()
        .find(|k| **k == text.trim())
        .copied()
        .ok_or_else(|| {
            files.err(
                el,
                format!(
                    "`{attr}` = \"{}\" is not a keyword MuJoCo knows",
                    clip(text)
                ),
                format!("give one of {}", keywords.join(", ")),
            )
        })
}

impl Compiler {
    /// The settings of every `<compiler>` of `root`, later ones overriding earlier ones.
    pub fn read(files: &Files, root: &El) -> Result<Self, ModelError> {
        let mut c = Compiler::default();
        for el in root.all("compiler") {
            super::schema::check_attributes(files, el, "compiler", false)?;
            super::schema::check_children(files, el, &[], &["lengthrange"])?;
            for (k, v) in &el.attrs {
                c.set(files, el, k, v)?;
            }
        }
        Ok(c)
    }

    fn set(&mut self, files: &Files, el: &El, k: &str, v: &str) -> Result<(), ModelError> {
        let one = |v: &str| numbers(files, el, k, v, (1, 1)).map(|x| x[0]);
        match k {
            "angle" => self.degree = keyword(files, el, k, v, &["degree", "radian"])? == "degree",
            "eulerseq" => {
                let b = v.trim().as_bytes();
                if b.len() != 3 || !b.iter().all(|c| b"xyzXYZ".contains(c)) {
                    return Err(files.err(el, format!("eulerseq = \"{}\"", clip(v)), "give three of x, y, z (lowercase: axes that turn with the body; uppercase: fixed axes), e.g. \"xyz\""));
                }
                self.eulerseq = [b[0], b[1], b[2]];
            }
            "autolimits" => self.autolimits = boolean(files, el, k, v)?,
            "inertiafromgeom" => {
                self.from_geom = match keyword(files, el, k, v, &["true", "false", "auto"])? {
                    "true" => FromGeom::True,
                    "false" => FromGeom::False,
                    _ => FromGeom::Auto,
                }
            }
            "inertiagrouprange" => {
                let g = numbers(files, el, k, v, (2, 2))?;
                self.groups = [g[0] as i64, g[1] as i64];
            }
            "boundmass" => self.boundmass = one(v)?,
            "boundinertia" => self.boundinertia = one(v)?,
            "balanceinertia" => self.balanceinertia = boolean(files, el, k, v)?,
            "settotalmass" => self.settotalmass = one(v)?,
            "coordinate" if v.trim() == "global" => {
                return Err(files.err(el, "coordinate=\"global\"", "global coordinates were removed in MuJoCo 2.3.3: convert the file with MuJoCo 2.3.3 or older (load and save it)"));
            }
            _ => {}
        }
        Ok(())
    }

    /// An angle in radians.
    pub fn angle(&self, a: f64) -> f64 {
        if self.degree {
            a.to_radians()
        } else {
            a
        }
    }

    /// The rotation given by one of the orientation forms, read through `get` (an
    /// element's attribute or its class's); the identity when none is given.
    pub fn orientation<'a>(
        &self, files: &Files, el: &El, get: impl Fn(&str) -> Option<&'a str>,
    ) -> Result<M3, ModelError> {
        if let Some(t) = get("quat") {
            let q = numbers(files, el, "quat", t, (4, 4))?;
            let n = q.iter().map(|x| x * x).sum::<f64>().sqrt();
            if n < 1e-14 {
                return Err(files.err(
                    el,
                    format!("quat = \"{}\" has zero norm", clip(t)),
                    "give a nonzero quaternion (w x y z; \"1 0 0 0\" is no rotation)",
                ));
            }
            return Ok(quat_matrix(&[q[0] / n, q[1] / n, q[2] / n, q[3] / n]));
        }
        if let Some(t) = get("axisangle") {
            let a = numbers(files, el, "axisangle", t, (4, 4))?;
            let axis = unit(files, el, "axisangle", [a[0], a[1], a[2]])?;
            return Ok(axis_angle(axis, self.angle(a[3])));
        }
        if let Some(t) = get("xyaxes") {
            let a = numbers(files, el, "xyaxes", t, (6, 6))?;
            let x = unit(files, el, "xyaxes", [a[0], a[1], a[2]])?;
            let y0 = [a[3], a[4], a[5]];
            let y = unit(files, el, "xyaxes", sub(y0, scale(dot(x, y0), x)))?;
            let z = cross(x, y);
            return Ok([[x[0], y[0], z[0]], [x[1], y[1], z[1]], [x[2], y[2], z[2]]]);
        }
        if let Some(t) = get("zaxis") {
            let z = numbers(files, el, "zaxis", t, (3, 3))?;
            unit(files, el, "zaxis", [z[0], z[1], z[2]])?;
            return Ok(z_to([z[0], z[1], z[2]]));
        }
        if let Some(t) = get("euler") {
            let e = numbers(files, el, "euler", t, (3, 3))?;
            return Ok(self.euler([e[0], e[1], e[2]]));
        }
        Ok(IDENTITY)
    }

    /// The rotation of Euler angles in `eulerseq`: a lowercase axis turns with the body
    /// (`R ← R·R_k`), an uppercase one is fixed (`R ← R_k·R`).
    pub fn euler(&self, e: V3) -> M3 {
        let mut r = IDENTITY;
        for (k, &c) in self.eulerseq.iter().enumerate() {
            let axis = match c.to_ascii_lowercase() {
                b'x' => [1.0, 0.0, 0.0],
                b'y' => [0.0, 1.0, 0.0],
                _ => [0.0, 0.0, 1.0],
            };
            let rk = axis_angle(axis, self.angle(e[k]));
            r = if c.is_ascii_lowercase() {
                matmul(&r, &rk)
            } else {
                matmul(&rk, &r)
            };
        }
        r
    }
}

/// `v/|v|`, refusing a zero vector.
pub fn unit(files: &Files, el: &El, attr: &str, v: V3) -> Result<V3, ModelError> {
    let n = norm(v);
    if n < 1e-14 {
        return Err(files.err(
            el,
            format!("`{attr}` has a zero vector {v:?}"),
            "give a nonzero direction",
        ));
    }
    Ok(scale(1.0 / n, v))
}

/// The rotation taking z to `v`'s direction about `z × v` (MuJoCo's `mjuu_z2quat`; about
/// x when `v` is along ∓z).
pub fn z_to(v: V3) -> M3 {
    let a = cross([0.0, 0.0, 1.0], v);
    let s = norm(a);
    let axis = if s < 1e-10 {
        [1.0, 0.0, 0.0]
    } else {
        scale(1.0 / s, a)
    };
    axis_angle(axis, s.atan2(v[2]))
}
