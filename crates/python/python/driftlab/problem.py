"""A problem of your own from Python callables, for prototyping (dense matrices; every
model function is a call into Python, so a step costs what its calls cost: see
docs/python.md). For speed, write it in Rust: one file plus one line (docs/adding.md)."""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

import numpy as np

from . import _driftlab as _native
from ._driftlab import InputError


def _wrap(fn: Callable, name: str, shape: tuple) -> Callable:
    """`fn` returning a flat contiguous float64 vector of `shape`'s size, or raising an
    InputError that names `name` and the shape it must return."""
    size = int(np.prod(shape))

    def call(*args: Any) -> np.ndarray:
        try:
            r = fn(*args)
        except Exception as e:
            raise InputError(f"{name} raised {type(e).__name__}: {e}; fix the callable") from e
        if name == "exact":
            try:
                r = np.concatenate([np.ravel(np.asarray(x, dtype=np.float64)) for x in r])
            except (TypeError, ValueError) as e:
                raise InputError(f"exact returned {r!r} ({e}); return (q, v, lam)") from None
        try:
            a = np.asarray(r, dtype=np.float64)
        except (TypeError, ValueError) as e:
            raise InputError(f"{name} returned {type(r).__name__} ({e}); return a float array of shape {shape}") from None
        if a.shape != shape and a.size != size:
            raise InputError(f"{name} returned shape {a.shape}; return shape {shape}")
        if a.shape != shape and a.ndim > 1:
            raise InputError(f"{name} returned shape {a.shape}; return shape {shape}")
        return np.ascontiguousarray(a, dtype=np.float64).reshape(-1)

    return call


class Problem:
    """``M(q) v' = f(t, q, v) − Φ_qᵀλ, Φ(t, q) = 0`` from Python callables.

    ``mass(q) → (n, n)``, ``forces(t, q, v) → (n,)``, ``constraints(t, q) → (m,)``,
    ``jacobian(t, q) → (m, n)``, ``gamma(t, q, v) → (m,)`` with
    ``γ = −(Φ_q v)_q v − 2Φ_qt v − Φ_tt`` (so that ``Φ_q a = γ``); optionally
    ``energy(t, q, v) → float`` (its relative error is ``|H − H₀| / max(|H₀|, energy_scale)``)
    and ``exact(t) → (q, v, lam)``. ``q0``, ``v0``: a consistent
    start, checked when the problem is made with a symmetric positive definite ``M(q0)``
    and finite forces (an :class:`InputError` names what fails). :meth:`check` runs
    driftlab's conformance checks (finite-difference Jacobian and γ, SPD and symmetric
    mass matrix, finite forces at perturbed states, consistent start, the exact solution
    against the equations).
    """

    def __init__(
        self,
        *,
        n: int,
        m: int,
        mass: Callable,
        forces: Callable,
        constraints: Callable,
        jacobian: Callable,
        gamma: Callable,
        q0: Sequence[float],
        v0: Sequence[float],
        t_end: float = 1.0,
        energy: Optional[Callable] = None,
        exact: Optional[Callable] = None,
        energy_scale: float = 1.0,
        name: str = "python-problem",
    ) -> None:
        for what, k in (("n", n), ("m", m)):
            if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < (1 if what == "n" else 0):
                raise InputError(f"{what} = {k!r}: give the number of {'coordinates (≥ 1)' if what == 'n' else 'constraint rows (≥ 0)'}")
        given = dict(mass=mass, forces=forces, constraints=constraints, jacobian=jacobian, gamma=gamma)
        for what, f in {**given, "energy": energy, "exact": exact}.items():
            if f is not None and not callable(f):
                raise InputError(f"{what} = {f!r}: give a callable")
        start = {}
        for what, x in (("q0", q0), ("v0", v0)):
            try:
                start[what] = [float(v) for v in np.asarray(x, dtype=np.float64).reshape(-1)]
            except (TypeError, ValueError) as e:
                raise InputError(f"{what}: {e}; give {n} numbers") from None
        for what, x in (("t_end", t_end), ("energy_scale", energy_scale)):
            if isinstance(x, bool) or not isinstance(x, (int, float, np.floating, np.integer)) or not x > 0:
                raise InputError(f"{what} = {x!r}: give a number > 0")
        shapes = dict(mass=(n, n), forces=(n,), constraints=(m,), jacobian=(m, n), gamma=(m,))
        wrapped = {k: _wrap(f, k, shapes[k]) for k, f in given.items()}
        self.n, self.m, self.name = int(n), int(m), name
        self._native = _native.CallableProblem(
            name, int(n), int(m), wrapped["mass"], wrapped["forces"], wrapped["constraints"],
            wrapped["jacobian"], wrapped["gamma"], start["q0"], start["v0"], float(t_end),
            energy=None if energy is None else _wrap(energy, "energy", ()),
            exact=None if exact is None else _wrap(exact, "exact", (2 * n + m,)),
            energy_scale=float(energy_scale),
        )
        # As the catalog's problems are checked when built: a symmetric positive definite
        # M(q0), finite forces and a start on the constraints (InputError otherwise).
        _native.check_start(self._native)

    def check(self) -> None:
        """driftlab's conformance checks; raises :class:`InputError` with the first
        failure's numbers (the quantity, the index, the value and the finite difference)."""
        _native.check_callables(self._native)

    def __repr__(self) -> str:
        return f"Problem(name={self.name!r}, n={self.n}, m={self.m})"
