//! 3-vectors, rotations, unit quaternions and Featherstone's spatial algebra (R.
//! Featherstone, *Rigid Body Dynamics Algorithms*, Springer 2008, ch. 2): the pieces the
//! joint-coordinate dynamics of a model is written in.
//!
//! A spatial motion vector is `(ω, v)` (angular first), a spatial force `(n, f)`; both in
//! the coordinates of one body's frame, about that frame's origin. A transform `X`
//! from frame A to frame B is `(E, r)`: `E` the rotation taking A-coordinates to
//! B-coordinates and `r` B's origin in A-coordinates, so that
//! `X m = (E ω, E (v − r × ω))` and `Xᵀ f = (Eᵀ n + r × Eᵀ f, Eᵀ f)` (RBDA eq. 2.24).

/// A 3-vector.
pub type V3 = [f64; 3];
/// A 3 × 3 matrix, rows first.
pub type M3 = [[f64; 3]; 3];
/// A spatial vector, angular part first.
pub type V6 = [f64; 6];

/// `a + b`.
pub fn add(a: V3, b: V3) -> V3 {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}
/// `a − b`.
pub fn sub(a: V3, b: V3) -> V3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}
/// `s a`.
pub fn scale(s: f64, a: V3) -> V3 {
    [s * a[0], s * a[1], s * a[2]]
}
/// `a · b`.
pub fn dot(a: V3, b: V3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}
/// `a × b`.
pub fn cross(a: V3, b: V3) -> V3 {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}
/// `|a|`.
pub fn norm(a: V3) -> f64 {
    dot(a, a).sqrt()
}
/// `A x`.
pub fn mul(a: &M3, x: V3) -> V3 {
    [dot(a[0], x), dot(a[1], x), dot(a[2], x)]
}
/// `Aᵀ x`.
pub fn mul_t(a: &M3, x: V3) -> V3 {
    [
        a[0][0] * x[0] + a[1][0] * x[1] + a[2][0] * x[2],
        a[0][1] * x[0] + a[1][1] * x[1] + a[2][1] * x[2],
        a[0][2] * x[0] + a[1][2] * x[1] + a[2][2] * x[2],
    ]
}
/// `A B`.
pub fn matmul(a: &M3, b: &M3) -> M3 {
    let mut c = [[0.0; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            c[i][j] = (0..3).map(|k| a[i][k] * b[k][j]).sum();
        }
    }
    c
}
/// `Aᵀ`.
pub fn transpose(a: &M3) -> M3 {
    let mut t = [[0.0; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            t[i][j] = a[j][i];
        }
    }
    t
}
/// The identity.
pub const IDENTITY: M3 = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];

/// The rotation of URDF's `rpy` (fixed axes X, Y, Z: `R = R_z(y) R_y(p) R_x(r)`; URDF
/// specification, `<origin>`; SDF `<pose>` uses the same convention).
pub fn rpy(r: V3) -> M3 {
    let (sr, cr) = r[0].sin_cos();
    let (sp, cp) = r[1].sin_cos();
    let (sy, cy) = r[2].sin_cos();
    [
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
        [-sp, cp * sr, cp * cr],
    ]
}

/// The rotation by `angle` about the unit `axis` (Rodrigues).
pub fn axis_angle(axis: V3, angle: f64) -> M3 {
    let (s, c) = angle.sin_cos();
    let k = 1.0 - c;
    let [x, y, z] = axis;
    [
        [c + k * x * x, k * x * y - s * z, k * x * z + s * y],
        [k * y * x + s * z, c + k * y * y, k * y * z - s * x],
        [k * z * x - s * y, k * z * y + s * x, c + k * z * z],
    ]
}

/// The rotation matrix of the Euler parameters `p = (e₀, e₁, e₂, e₃)` (unit or not: the
/// formula is the quadratic one, exact on |p| = 1; Nikravesh 1988, eq. 6.19).
pub fn quat_matrix(p: &[f64]) -> M3 {
    let (e0, e1, e2, e3) = (p[0], p[1], p[2], p[3]);
    [
        [
            2.0 * (e0 * e0 + e1 * e1) - 1.0,
            2.0 * (e1 * e2 - e0 * e3),
            2.0 * (e1 * e3 + e0 * e2),
        ],
        [
            2.0 * (e1 * e2 + e0 * e3),
            2.0 * (e0 * e0 + e2 * e2) - 1.0,
            2.0 * (e2 * e3 - e0 * e1),
        ],
        [
            2.0 * (e1 * e3 - e0 * e2),
            2.0 * (e2 * e3 + e0 * e1),
            2.0 * (e0 * e0 + e3 * e3) - 1.0,
        ],
    ]
}

/// `G(p)`, with the body angular velocity `ω' = 2 G(p) ṗ` and `G(ṗ) ṗ = 0` (Nikravesh
/// 1988, eqs. 6.22, 6.34).
pub fn quat_g(p: &[f64]) -> [[f64; 4]; 3] {
    let (e0, e1, e2, e3) = (p[0], p[1], p[2], p[3]);
    [[-e1, e0, e3, -e2], [-e2, -e3, e0, e1], [-e3, e2, -e1, e0]]
}

/// Unit quaternion of a rotation matrix (Shepperd's method, the largest pivot), sign
/// chosen with `e₀ ≥ 0`.
pub fn matrix_quat(r: &M3) -> [f64; 4] {
    let tr = r[0][0] + r[1][1] + r[2][2];
    let mut p = if tr >= r[0][0].max(r[1][1]).max(r[2][2]) {
        let s = 2.0 * (1.0 + tr).sqrt();
        [
            0.25 * s,
            (r[2][1] - r[1][2]) / s,
            (r[0][2] - r[2][0]) / s,
            (r[1][0] - r[0][1]) / s,
        ]
    } else if r[0][0] >= r[1][1] && r[0][0] >= r[2][2] {
        let s = 2.0 * (1.0 + r[0][0] - r[1][1] - r[2][2]).sqrt();
        [
            (r[2][1] - r[1][2]) / s,
            0.25 * s,
            (r[0][1] + r[1][0]) / s,
            (r[0][2] + r[2][0]) / s,
        ]
    } else if r[1][1] >= r[2][2] {
        let s = 2.0 * (1.0 + r[1][1] - r[0][0] - r[2][2]).sqrt();
        [
            (r[0][2] - r[2][0]) / s,
            (r[0][1] + r[1][0]) / s,
            0.25 * s,
            (r[1][2] + r[2][1]) / s,
        ]
    } else {
        let s = 2.0 * (1.0 + r[2][2] - r[0][0] - r[1][1]).sqrt();
        [
            (r[1][0] - r[0][1]) / s,
            (r[0][2] + r[2][0]) / s,
            (r[1][2] + r[2][1]) / s,
            0.25 * s,
        ]
    };
    if p[0] < 0.0 {
        p.iter_mut().for_each(|x| *x = -*x);
    }
    p
}

/// A rigid placement: `rot` has the child's axes as columns in parent coordinates and
/// `pos` is the child's origin in parent coordinates (a child point `x` is at
/// `pos + rot x` in the parent).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Placement {
    /// Child axes in parent coordinates.
    pub rot: M3,
    /// Child origin in parent coordinates.
    pub pos: V3,
}

impl Placement {
    /// The identity placement.
    pub const IDENTITY: Placement = Placement {
        rot: IDENTITY,
        pos: [0.0; 3],
    };
    /// From URDF's `xyz` and `rpy`.
    pub fn from_xyz_rpy(xyz: V3, r: V3) -> Self {
        Self {
            rot: rpy(r),
            pos: xyz,
        }
    }
    /// `self ∘ other`: `other` given in `self`'s child frame.
    pub fn then(&self, other: &Placement) -> Placement {
        Placement {
            rot: matmul(&self.rot, &other.rot),
            pos: add(self.pos, mul(&self.rot, other.pos)),
        }
    }
    /// A child point in parent coordinates.
    pub fn point(&self, x: V3) -> V3 {
        add(self.pos, mul(&self.rot, x))
    }
    /// The inverse placement.
    pub fn inverse(&self) -> Placement {
        let rt = transpose(&self.rot);
        Placement {
            rot: rt,
            pos: scale(-1.0, mul(&rt, self.pos)),
        }
    }
}

/// Spatial motion of `m` seen from the child of `x` (parent → child coordinates):
/// `(Eω, E(v − r × ω))` with `E = rotᵀ`, `r = pos`.
pub fn motion_to_child(x: &Placement, m: &V6) -> V6 {
    let w = [m[0], m[1], m[2]];
    let v = [m[3], m[4], m[5]];
    let a = mul_t(&x.rot, w);
    let b = mul_t(&x.rot, sub(v, cross(x.pos, w)));
    [a[0], a[1], a[2], b[0], b[1], b[2]]
}

/// A spatial force of the child expressed in the parent: `Xᵀ f = (Eᵀn + r × Eᵀf, Eᵀf)`.
pub fn force_to_parent(x: &Placement, f: &V6) -> V6 {
    let lin = mul(&x.rot, [f[3], f[4], f[5]]);
    let ang = add(mul(&x.rot, [f[0], f[1], f[2]]), cross(x.pos, lin));
    [ang[0], ang[1], ang[2], lin[0], lin[1], lin[2]]
}

/// Motion cross product `m₁ × m₂` (RBDA eq. 2.31).
pub fn cross_motion(a: &V6, b: &V6) -> V6 {
    let (w, v) = ([a[0], a[1], a[2]], [a[3], a[4], a[5]]);
    let (bw, bv) = ([b[0], b[1], b[2]], [b[3], b[4], b[5]]);
    let x = cross(w, bw);
    let y = add(cross(w, bv), cross(v, bw));
    [x[0], x[1], x[2], y[0], y[1], y[2]]
}

/// Force cross product `m × f` (RBDA eq. 2.32).
pub fn cross_force(a: &V6, f: &V6) -> V6 {
    let (w, v) = ([a[0], a[1], a[2]], [a[3], a[4], a[5]]);
    let (n, g) = ([f[0], f[1], f[2]], [f[3], f[4], f[5]]);
    let x = add(cross(w, n), cross(v, g));
    let y = cross(w, g);
    [x[0], x[1], x[2], y[0], y[1], y[2]]
}

/// A rigid body's inertia in its own frame: mass, centre of mass and the rotational
/// inertia about the centre of mass (body axes).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Inertia {
    /// Mass.
    pub mass: f64,
    /// Centre of mass in body coordinates.
    pub com: V3,
    /// Rotational inertia about the centre of mass, body axes.
    pub rot: M3,
}

impl Inertia {
    /// `I m`: the spatial momentum `(Ī_c ω + c × m(v + ω × c), m(v + ω × c))` of motion `m`.
    pub fn apply(&self, m: &V6) -> V6 {
        let w = [m[0], m[1], m[2]];
        let vc = add([m[3], m[4], m[5]], cross(w, self.com));
        let lin = scale(self.mass, vc);
        let ang = add(mul(&self.rot, w), cross(self.com, lin));
        [ang[0], ang[1], ang[2], lin[0], lin[1], lin[2]]
    }
    /// The 6 × 6 matrix of [`Self::apply`].
    pub fn matrix(&self) -> [[f64; 6]; 6] {
        let mut out = [[0.0; 6]; 6];
        for j in 0..6 {
            let mut e = [0.0; 6];
            e[j] = 1.0;
            let col = self.apply(&e);
            for i in 0..6 {
                out[i][j] = col[i];
            }
        }
        out
    }
}

/// The 6 × 6 matrix of [`motion_to_child`].
pub fn motion_matrix(x: &Placement) -> [[f64; 6]; 6] {
    let mut out = [[0.0; 6]; 6];
    for j in 0..6 {
        let mut e = [0.0; 6];
        e[j] = 1.0;
        let col = motion_to_child(x, &e);
        for i in 0..6 {
            out[i][j] = col[i];
        }
    }
    out
}

/// `Xᵀ A X` for a symmetric 6 × 6 `A` (an inertia carried from child to parent).
pub fn congruence(x: &[[f64; 6]; 6], a: &[[f64; 6]; 6]) -> [[f64; 6]; 6] {
    let mut ax = [[0.0; 6]; 6];
    for i in 0..6 {
        for j in 0..6 {
            ax[i][j] = (0..6).map(|k| a[i][k] * x[k][j]).sum();
        }
    }
    let mut out = [[0.0; 6]; 6];
    for i in 0..6 {
        for j in 0..6 {
            out[i][j] = (0..6).map(|k| x[k][i] * ax[k][j]).sum();
        }
    }
    out
}

/// `A v` for a 6 × 6 `A`.
pub fn mat6_vec(a: &[[f64; 6]; 6], v: &V6) -> V6 {
    let mut out = [0.0; 6];
    for i in 0..6 {
        out[i] = (0..6).map(|k| a[i][k] * v[k]).sum();
    }
    out
}

/// `a · b` of two spatial vectors (a motion against a force: power).
pub fn dot6(a: &V6, b: &V6) -> f64 {
    (0..6).map(|k| a[k] * b[k]).sum()
}

/// Eigenvalues of a symmetric 3 × 3 matrix, ascending (the trigonometric closed form;
/// O. K. Smith, Comm. ACM 4 (1961) 168).
pub fn symmetric_eigenvalues(a: &M3) -> V3 {
    let p1 = a[0][1].powi(2) + a[0][2].powi(2) + a[1][2].powi(2);
    let q = (a[0][0] + a[1][1] + a[2][2]) / 3.0;
    if p1 == 0.0 {
        let mut d = [a[0][0], a[1][1], a[2][2]];
        d.sort_by(f64::total_cmp);
        return d;
    }
    let p2 = (a[0][0] - q).powi(2) + (a[1][1] - q).powi(2) + (a[2][2] - q).powi(2) + 2.0 * p1;
    let p = (p2 / 6.0).sqrt();
    let mut b = *a;
    for i in 0..3 {
        b[i][i] -= q;
    }
    let det = b[0][0] * (b[1][1] * b[2][2] - b[1][2] * b[2][1])
        - b[0][1] * (b[1][0] * b[2][2] - b[1][2] * b[2][0])
        + b[0][2] * (b[1][0] * b[2][1] - b[1][1] * b[2][0]);
    let r = (det / (2.0 * p.powi(3))).clamp(-1.0, 1.0);
    let phi = r.acos() / 3.0;
    let hi = q + 2.0 * p * phi.cos();
    let lo = q + 2.0 * p * (phi + 2.0 * std::f64::consts::PI / 3.0).cos();
    [lo, 3.0 * q - hi - lo, hi]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quaternion_and_matrix_round_trip() {
        let r = matmul(&rpy([0.3, -1.1, 2.5]), &axis_angle([0.0, 0.6, 0.8], 0.7));
        let p = matrix_quat(&r);
        let back = quat_matrix(&p);
        for i in 0..3 {
            for j in 0..3 {
                assert!((back[i][j] - r[i][j]).abs() < 1e-15, "{back:?} vs {r:?}");
            }
        }
    }

    #[test]
    fn force_transform_is_the_transpose_of_the_motion_transform() {
        let x = Placement {
            rot: rpy([0.2, 0.4, -0.9]),
            pos: [0.3, -0.2, 1.1],
        };
        let m = [0.1, -0.4, 0.7, 1.3, 0.2, -0.5];
        let f = [0.9, 0.3, -0.2, 0.5, -1.5, 0.8];
        let lhs = dot6(&motion_to_child(&x, &m), &f);
        let rhs = dot6(&m, &force_to_parent(&x, &f));
        assert!((lhs - rhs).abs() < 1e-14);
    }

    #[test]
    fn eigenvalues_of_a_rotated_diagonal_inertia() {
        let r = rpy([0.5, 0.1, -0.3]);
        let d = [[1.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 2.5]];
        let a = matmul(&matmul(&r, &d), &transpose(&r));
        let e = symmetric_eigenvalues(&a);
        for (x, y) in e.iter().zip([1.0, 2.0, 2.5]) {
            assert!((x - y).abs() < 1e-14, "{e:?}");
        }
    }
}
