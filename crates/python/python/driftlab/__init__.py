"""driftlab from Python: which constraint stabilization, with which parameters, at which
step size, and at what cost — for index-3 DAEs ``M v' = f − Φ_qᵀλ, Φ(t, q) = 0`` and
their relatives.

The same engine as the ``driftlab`` command line (the Rust workspace), reached through the
extension module ``driftlab._driftlab``:

* :func:`problems`, :func:`methods`, :func:`describe` — the catalogs;
* :func:`simulate` — one run, every step as NumPy arrays, the same numbers as
  ``driftlab simulate`` bit for bit;
* :func:`run`, :func:`report` — a spec (a TOML file or a dict) into a result folder,
  the runs table as a polars DataFrame (``.to_pandas()`` for pandas);
  :func:`traces`, :func:`orders`, :func:`members` read the other tables;
* :class:`Model` — a mechanism from a URDF, SDF or TOML model file, or a shipped robot;
* :class:`Problem` — a problem of your own from Python callables, for prototyping;
* :class:`VecEnv` — a vectorized environment for reinforcement learning.

Bad input raises :class:`InputError` (a ``ValueError``) naming the argument and the fix;
a method that fails on a problem is a result (``ok`` false, ``fail_kind``), not an error.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional, Union

import numpy as np

from . import _driftlab as _native
from ._driftlab import InputError, RunError, __version__
from ._toml import document as _toml_document
from .envs import VecEnv
from .model import Model
from .problem import Problem

__all__ = [
    "InputError",
    "Model",
    "Problem",
    "RunError",
    "Simulation",
    "VecEnv",
    "__version__",
    "describe",
    "members",
    "methods",
    "orders",
    "problems",
    "report",
    "run",
    "simulate",
    "traces",
    "tune",
]

PathLike = Union[str, "os.PathLike[str]"]


def problems() -> list[dict]:
    """Every problem of the catalog: ``id``, ``summary`` and its default ``defaults``."""
    return json.loads(_native.problems_json())


def methods() -> list[dict]:
    """Every method of the catalog with its declared properties (orders, the levels it
    enforces, family, citation, …) and default parameters."""
    return json.loads(_native.methods_json())


def describe(id: Union[str, Model], **params: Any) -> dict:
    """A problem built with ``params`` (its equations, citation, sizes ``n`` and ``m``, the
    rank and nonzeros of its Jacobian at t₀) or a method (its declared properties)."""
    problem, merged = _problem_of(id, params, "id")
    return json.loads(_native.describe_json(problem, _toml_document(merged or None, "params")))


def tune(model: Union[str, Model], h: float) -> dict:
    """The constraint stabilization the tuning guide recommends at step ``h`` for each loop
    closure and coupling of ``model`` (a :class:`Model`, a model file, or ``"robot:ID"``),
    in every engine's parameters: the law (``xi``, ``omega_n``: critically damped,
    ω_n = 1/(2h)), ``baumgarte`` (α, β), ``mujoco`` (``solref``), ``pinocchio`` (Kp, Kd),
    ``ode`` (ERP, CFM·m) and ``rapier`` (frequency, damping ratio); ``groups`` lists each
    group's rows, effective masses and ODE's CFM per row. As ``driftlab tune FILE --h H``
    (whose ``--write-mjcf`` writes the solref into a copy of an MJCF file)."""
    if isinstance(model, str):
        model = Model(robot=model[len("robot:"):]) if model.startswith("robot:") else Model(model)
    if not isinstance(model, Model):
        raise InputError(f"tune: model = {model!r}; give a Model, a model file or 'robot:ID'")
    if isinstance(h, bool) or not isinstance(h, (int, float)):
        raise InputError(f"tune: h = {h!r}; give the step in seconds, a number")
    return json.loads(_native.tune_json(_toml_document(dict(model.params), "params"), float(h)))


@dataclass
class Simulation:
    """One run: every kept step's state and metrics, and the summary row.

    ``q``, ``v``, ``lam`` have one row per kept step (index-1 problems: ``q`` holds the
    differential variables x, ``lam`` the algebraic ones z, ``v`` has no columns).
    """

    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    lam: np.ndarray
    pos_residual: np.ndarray
    vel_residual: np.ndarray
    energy_rel_error: np.ndarray
    summary: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """The run reached its end time."""
        return bool(self.summary.get("ok"))

    @property
    def fail_kind(self) -> Optional[str]:
        """The failure's tag (``None`` for a run that reached its end)."""
        return self.summary.get("fail_kind")


def simulate(
    problem: Union[str, Model, Problem],
    method: str,
    *,
    h: Optional[float] = None,
    t_end: Optional[float] = None,
    params: Optional[Mapping[str, Any]] = None,
    method_params: Optional[Mapping[str, Any]] = None,
    projection: Union[bool, Mapping[str, Any], None] = None,
    rtol: Optional[float] = None,
    stride: int = 1,
) -> Simulation:
    """Run ``method`` on ``problem`` at fixed steps ``h`` (or error-controlled at ``rtol``)
    to ``t_end`` (default: the problem's), wrapped in the projection decorator when
    ``projection`` is true or a dict of its parameters; keep every ``stride``-th step.

    The same cell as ``driftlab simulate --problem P --method M --h H``: the same numbers,
    bit for bit. Runs with the GIL released.
    """
    h, t_end, rtol = _real(h, "h"), _real(t_end, "t_end"), _real(rtol, "rtol")
    jp = {} if projection is True else (None if projection in (None, False) else projection)
    if isinstance(problem, Problem):
        if rtol is not None or h is None or params:
            raise InputError("a driftlab.Problem runs at fixed steps: give h (not rtol), and no params")
        d = _native.simulate_callables(
            problem._native, method, h, t_end=t_end,
            method_params=_toml_document(method_params, "method_params"),
            projection=_toml_document(jp, "projection"), stride=_count(stride, "stride"),
        )
        return Simulation(**d)
    pid, pparams = _problem_of(problem, dict(params or {}), "problem")
    d = _native.simulate(
        pid,
        method,
        h=h,
        rtol=rtol,
        t_end=t_end,
        params=_toml_document(pparams or None, "params"),
        method_params=_toml_document(method_params, "method_params"),
        projection=_toml_document(jp, "projection"),
        stride=_count(stride, "stride"),
    )
    return Simulation(**d)


def run(
    spec: Union[PathLike, Mapping[str, Any]],
    out: Optional[PathLike] = None,
    *,
    threads: Optional[int] = None,
    size: Optional[str] = None,
    resume: bool = False,
    force: bool = False,
    cell_seconds: Optional[float] = None,
):
    """Run the experiment ``spec`` (a TOML file, or a dict with the same keys) into the
    folder ``out`` (default ``reports/<name>``, as ``driftlab run``) and return its runs
    table as a polars DataFrame — the table ``runs.parquet`` holds.

    Ctrl-C stops the sweep (runs in progress finish and are recorded) and raises
    ``KeyboardInterrupt``; ``resume=True`` continues it.
    """
    import polars as pl

    if isinstance(spec, Mapping):
        text, label = _toml_document(spec, "spec"), "<dict>"
    elif isinstance(spec, (str, os.PathLike)):
        path = Path(spec)
        try:
            text, label = path.read_text(encoding="utf-8"), str(path)
        except OSError as e:
            raise InputError(f"spec: cannot read `{path}`: {e}; give a TOML file or a dict") from None
    else:
        raise InputError(f"spec: a {type(spec).__name__}; give a path to a TOML file or a dict")
    folder = _native.run(
        text,
        label,
        out=None if out is None else str(out),
        threads=None if threads is None else _count(threads, "threads"),
        size=size,
        resume=bool(resume),
        force=bool(force),
        cell_seconds=_real(cell_seconds, "cell_seconds"),
    )
    return pl.read_parquet(Path(folder) / "runs.parquet")


def traces(folder: PathLike):
    """The traces table of a result folder (``traces.parquet``) as a polars DataFrame."""
    return _table(folder, "traces.parquet")


def members(folder: PathLike):
    """The ensemble members of a result folder (``members.parquet``)."""
    return _table(folder, "members.parquet")


def orders(folder: PathLike):
    """The observed convergence orders of a result folder (``orders.csv``)."""
    return _table(folder, "orders.csv")


def report(dir: PathLike = "reports") -> dict:
    """Build the report of every complete run under ``dir`` (figures, tables, PDF, HTML);
    the files written per experiment, and the folders not drawn under ``"unfinished"``."""
    if not Path(dir).is_dir():
        raise InputError(f"dir = {str(dir)!r}: no such folder; give the folder that run() wrote into (or its parent)")
    return _native.report(str(dir))


def _table(folder: PathLike, name: str):
    import polars as pl

    if not isinstance(folder, (str, os.PathLike)):
        raise InputError(f"folder = {folder!r}: give the path of a result folder (what driftlab.run wrote)")
    path = Path(folder) / name
    if not path.exists():
        raise InputError(f"{path}: no such table; run the experiment first (driftlab.run), or check the folder")
    damage = _native.check_folder(str(folder))
    if damage:
        raise InputError(f"{folder}: damaged: {damage}; run its spec into the folder again (driftlab.run(spec, out=…, force=True))")
    try:
        return pl.read_csv(path) if name.endswith(".csv") else pl.read_parquet(path)
    except Exception as e:  # polars' own errors name no path
        raise InputError(f"{path}: not a readable table ({type(e).__name__}: {e}); rerun the experiment into the folder") from None


def _problem_of(problem: Union[str, Model], params: dict, what: str) -> tuple[str, dict]:
    if isinstance(problem, Model):
        return "model", {**problem.params, **params}
    if not isinstance(problem, str):
        raise InputError(f"{what}: a {type(problem).__name__}; give a catalog id (driftlab.problems()) or a driftlab.Model")
    return problem, params


def _real(x: Optional[float], name: str) -> Optional[float]:
    if x is None:
        return None
    if isinstance(x, bool) or not isinstance(x, (int, float, np.floating, np.integer)):
        raise InputError(f"{name} = {x!r}: give a number")
    return float(x)


def _count(x: int, name: str) -> int:
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)) or x < 1:
        raise InputError(f"{name} = {x!r}: give a whole number ≥ 1")
    return int(x)
