"""Reference angles of the pendulum's exact solution, computed with mpmath at 40 digits.

theta(t) = 2 asin(k sn(K(k) - w t, k)), k = sin(theta0/2), w = sqrt(g/l), g = 9.81, l = 1
(the formula of crates/problems/src/planar/pendulum.rs), evaluated in 40-digit arithmetic at the
f64 times written, so that the test measures the f64 evaluation's own error. Regenerate
with `python3 pendulum_mpmath.py > pendulum_mpmath.txt` (mpmath 1.3.0 wrote the file).
Columns: theta0_deg, t (f64, round-trip), theta (25 digits).
"""
import mpmath as mp

mp.mp.dps = 40
w = mp.sqrt(mp.mpf("9.81"))
for th0 in ["1", "30", "90", "-135", "170", "179", "179.9", "179.99", "179.9999",
            "179.999999", "179.99999999"]:
    th = mp.mpf(th0) * mp.pi / 180
    k = mp.sin(th / 2)
    m = k * k
    K = mp.ellipk(m)
    T = 4 * K / w
    for frac in ["0", "0.1", "0.25", "0.5", "0.9", "3.3", "10.7", "21.2"]:
        tf = float(mp.mpf(frac) * T)
        sn = mp.ellipfun("sn", K - w * mp.mpf(tf), m=m)
        print(th0, repr(tf), mp.nstr(2 * mp.asin(k * sn), 25))
