"""A vectorized environment for reinforcement learning (seed 001 §3.6): ``num_envs``
copies of one problem and method with seeded perturbations, stepped in parallel in Rust
with the GIL released. Compatible with gymnasium's vector API (``gymnasium.vector.VectorEnv``,
autoreset mode "next step") where gymnasium is installed; it is not required."""

from __future__ import annotations

from typing import Any, Callable, Mapping, Optional, Union

import numpy as np

from . import _driftlab as _native
from ._driftlab import InputError
from ._toml import document as _toml_document
from .model import Model

try:  # gymnasium is optional: its spaces and base class where installed
    import gymnasium as _gym

    _Base: type = _gym.vector.VectorEnv
except ImportError:  # pragma: no cover - exercised where gymnasium is absent
    _gym = None
    _Base = object
try:  # gymnasium ≥ 1.1 names its autoreset modes; 1.0 autoresets at the next step too
    from gymnasium.vector import AutoresetMode as _AutoresetMode
except ImportError:  # pragma: no cover
    _AutoresetMode = None

U64 = 2**64

RewardFn = Callable[[np.ndarray, np.ndarray, dict], np.ndarray]


class VecEnv(_Base):  # type: ignore[misc, valid-type]
    """``num_envs`` environments of ``problem`` stepped by ``method`` at fixed steps ``h``.

    Each call of :meth:`step` holds every environment's action over ``substeps`` steps:
    ``action="force"`` adds a generalized force, ``M v' = f + u − Φ_qᵀλ``;
    ``action="velocity"`` replaces ``v`` by the command, first projected mass-orthogonally
    onto ``{v : Φ_q v + Φ_t = 0}`` when ``project_actions`` (seed 001 §3.6.3);
    ``action="actuators"`` drives the model file's motors (MJCF ``<motor>``): one control
    per actuator, clipped to its ``ctrlrange``, acting as ``gear · u`` on its joint (the
    action space's bounds are the control ranges; ``actuators`` lists them).

    Episode ``e`` of environment ``i`` is member ``e·num_envs + i`` of the ensemble with
    ``seed``: its initial-state noise (``initial={"q_sigma": …, "v_sigma": …}``), its
    constraint noise ``σ(t) = σ₀ e^{−t/τ}`` (``constraint_noise={"sigma0": …, "tau": …}``)
    and its curriculum strength (``curriculum={...}``, the spec's ``[ensemble]`` keys). With
    zero forces an episode is that member's rollout, bit for bit, on any number of threads.

    Observations are ``[q, v]`` per environment, shape ``(num_envs, 2n)``, float64. An
    episode ends when the method fails (``terminated``; ``info["fail_kind"]`` says why) or
    at ``t_end`` (``truncated``); the next call starts the next episode instead of stepping
    (``info["reset"]``). ``info`` holds per-environment arrays: ``drift`` (‖Φ‖∞ on the
    unperturbed constraints), ``vel_residual``, ``energy_error`` (it includes the work of
    the forces applied), ``t``, ``steps``, ``member`` (the episode's ensemble member,
    ``e·num_envs + i``), ``applied``, ``strength``, ``fail_kind``,
    ``fail_reason``. Rewards come from ``reward_fn(obs, actions, info)`` (zeros without).
    """

    def __init__(
        self,
        problem: Union[str, Model],
        method: str,
        num_envs: int,
        *,
        h: float,
        t_end: Optional[float] = None,
        params: Optional[Mapping[str, Any]] = None,
        method_params: Optional[Mapping[str, Any]] = None,
        projection: Union[bool, Mapping[str, Any], None] = None,
        seed: int = 0,
        initial: Optional[Mapping[str, float]] = None,
        constraint_noise: Optional[Mapping[str, Any]] = None,
        curriculum: Optional[Mapping[str, Any]] = None,
        action: str = "force",
        project_actions: bool = False,
        substeps: int = 1,
        reward_fn: Optional[RewardFn] = None,
        threads: int = 0,
    ) -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise InputError(f"num_envs = {num_envs!r}: give the number of environments, a whole number ≥ 1")
        if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or threads < 0:
            raise InputError(f"threads = {threads!r}: give a whole number ≥ 0 (0: all cores)")
        if reward_fn is not None and not callable(reward_fn):
            raise InputError(f"reward_fn = {reward_fn!r}: give a callable reward_fn(obs, actions, info) or None")
        _seed(seed, "seed")
        self.substeps = _substeps(substeps)
        self.reward_fn = reward_fn
        spec = _spec(problem, method, int(num_envs), h, t_end, params, method_params, projection,
                     seed, initial, constraint_noise, curriculum)
        self._env = _native.VecEnv(_toml_document(spec, "VecEnv"), action=action,
                                   project_actions=bool(project_actions), threads=int(threads))
        self.num_envs = self._env.num_envs
        self._last_obs: Optional[np.ndarray] = None
        self.closed = False
        self.render_mode = None
        self.metadata = {"autoreset_mode": _AutoresetMode.NEXT_STEP} if _AutoresetMode else {}
        if _gym is not None:
            n, d = self._env.action_dim, self._env.observation_dim
            box = _gym.spaces.Box
            self.single_observation_space = box(-np.inf, np.inf, (d,), np.float64)
            lo = np.full(n, -np.inf)
            hi = np.full(n, np.inf)
            if action == "actuators":
                lo = np.array([a[1] for a in self._env.actuators], dtype=np.float64)
                hi = np.array([a[2] for a in self._env.actuators], dtype=np.float64)
            self.single_action_space = box(lo, hi, (n,), np.float64)
            self.observation_space = box(-np.inf, np.inf, (self.num_envs, d), np.float64)
            self.action_space = box(np.tile(lo, (self.num_envs, 1)), np.tile(hi, (self.num_envs, 1)),
                                    (self.num_envs, n), np.float64)

    @property
    def action_dim(self) -> int:
        """Length of one action (the coordinates n, or the actuators)."""
        return self._env.action_dim

    @property
    def actuators(self) -> list:
        """With ``action="actuators"``: ``(name, lower, upper)`` per control (±inf where
        the file gives no range)."""
        return list(self._env.actuators)

    @property
    def observation_dim(self) -> int:
        """Length of one observation (2n: q then v)."""
        return self._env.observation_dim

    @property
    def episode_steps(self) -> int:
        """Steps of one episode (t_end / h)."""
        return self._env.episode_steps

    @property
    def h(self) -> float:
        """The fixed step."""
        return self._env.h

    @property
    def threads(self) -> int:
        """Threads stepping the environments."""
        return self._env.threads

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        """Start every environment's next episode: with ``seed``, episode 0 of that seed's
        ensemble again; without, the episodes go on (other perturbations).
        ``(observations, info)``."""
        if seed is not None:
            _seed(seed, "seed")
        if options:
            raise InputError(f"options = {options!r}: VecEnv.reset takes no options; give seed=")
        obs = self._env.reset(None if seed is None else int(seed))
        self._last_obs = obs
        return obs, self._env.infos()

    def step(self, actions):
        """Hold ``actions`` (shape ``(num_envs, action_dim)``) over ``substeps`` steps:
        ``(observations, rewards, terminated, truncated, info)``."""
        a = _actions(actions, self.num_envs, self._env.action_dim)
        obs = self._env.step(a, self.substeps)
        info = self._env.infos()
        rewards = self._rewards(obs, a, info)
        self._last_obs = obs
        return obs, rewards, info["terminated"], info["truncated"], info

    def _rewards(self, obs: np.ndarray, actions: np.ndarray, info: dict) -> np.ndarray:
        """``reward_fn``'s rewards, zero for the environments whose episode began at this
        call (gymnasium's next-step autoreset: the action was not applied)."""
        if self.reward_fn is None:
            return np.zeros(self.num_envs)
        try:
            r = self.reward_fn(obs, actions, info)
        except Exception as e:
            raise InputError(
                f"reward_fn raised {type(e).__name__}: {e}; fix the callable "
                "(it receives obs (num_envs, 2n), actions (num_envs, n) and info)"
            ) from e
        try:
            r = np.asarray(r, dtype=np.float64)
        except (TypeError, ValueError) as e:
            raise InputError(f"reward_fn returned {type(r).__name__} ({e}); return one number per environment") from None
        if r.shape != (self.num_envs,):
            raise InputError(
                f"reward_fn returned shape {r.shape}; return an array of shape ({self.num_envs},), one reward per environment"
            )
        return np.where(info["reset"], 0.0, r)

    def rust_seconds_per_call(self, calls: int = 100) -> float:
        """The seconds of one call of :meth:`step` (zero actions, ``substeps`` steps) timed
        inside Rust, without Python in the loop: the benchmark's reference for the cost of
        the Python boundary."""
        return self._env.rust_seconds_per_call(self.substeps, _substeps(calls))

    def close(self, **kwargs: Any) -> None:
        """Free the environments (their states, methods and thread pool) now; any later
        call raises :class:`InputError`. Closing twice is harmless (gymnasium's rule)."""
        self._env = None
        self.closed = True

    @property
    def _env(self):
        env = self.__dict__.get("_native_env")
        if env is None:
            raise InputError("this VecEnv is closed (VecEnv.close()); make a new one to go on")
        return env

    @_env.setter
    def _env(self, env) -> None:
        self.__dict__["_native_env"] = env

    def __repr__(self) -> str:
        if self.closed:
            return f"VecEnv(num_envs={self.num_envs}, closed)"
        return f"VecEnv(num_envs={self.num_envs}, action_dim={self.action_dim}, h={self.h}, substeps={self.substeps})"


def _substeps(k: Any) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise InputError(f"substeps = {k!r}: give the steps per call, a whole number ≥ 1")
    return int(k)


def _seed(seed: Any, name: str) -> None:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < U64:
        raise InputError(f"{name} = {seed!r}: give a whole number 0 ≤ seed < 2⁶⁴")


def _actions(actions: Any, num_envs: int, n: int) -> np.ndarray:
    """``actions`` as a C-contiguous float64 array of shape (num_envs, n), or the error."""
    if np.iscomplexobj(actions):
        raise InputError(f"actions: complex numbers; give a real float array of shape ({num_envs}, {n})")
    try:
        a = np.ascontiguousarray(actions, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise InputError(f"actions: {e}; give a float array of shape ({num_envs}, {n})") from None
    if a.shape != (num_envs, n):
        if a.shape == (num_envs * n,):
            a = a.reshape(num_envs, n)
        else:
            raise InputError(f"actions: shape {a.shape}; give an array of shape ({num_envs}, {n})")
    return a


def _single(params: Any, name: str) -> dict:
    """A parameter dict whose list values stay one value (a list in a spec sweeps)."""
    if params is None:
        return {}
    if not isinstance(params, Mapping):
        raise InputError(f"{name}: a {type(params).__name__}; give a dict")
    out = {}
    for k, v in params.items():
        if hasattr(v, "tolist") and getattr(v, "shape", ()) != ():
            v = v.tolist()
        out[k] = [list(v)] if isinstance(v, (list, tuple)) else v
    return out


def _positive(x: Any, name: str, optional: bool = False) -> Optional[float]:
    if x is None and optional:
        return None
    if isinstance(x, bool) or not isinstance(x, (int, float, np.floating, np.integer)) or not x > 0:
        raise InputError(f"{name} = {x!r}: give a number > 0")
    return float(x)


def _spec(problem, method, num_envs, h, t_end, params, method_params, projection, seed,
          initial, constraint_noise, curriculum) -> dict:
    """The one-cell spec with its ``[ensemble]`` table that the environment runs."""
    if isinstance(problem, Model):
        pid, pparams = "model", _single({**problem.params, **dict(params or {})}, "params")
    elif isinstance(problem, str):
        pid, pparams = problem, _single(params, "params")
    else:
        raise InputError(f"problem: a {type(problem).__name__}; give a catalog id or a driftlab.Model")
    if not isinstance(method, str):
        raise InputError(f"method: a {type(method).__name__}; give a catalog id (driftlab.methods())")
    ensemble: dict = {"members": num_envs, "seed": int(seed)}
    for key, value in (("initial", initial), ("constraint_noise", constraint_noise), ("curriculum", curriculum)):
        if value is not None:
            if not isinstance(value, Mapping):
                raise InputError(f"{key}: a {type(value).__name__}; give a dict of the spec's [ensemble] keys")
            ensemble[key] = dict(value)
    m: dict = {"id": method, "params": _single(method_params, "method_params")}
    if projection not in (None, False):
        if projection is not True and not isinstance(projection, Mapping):
            raise InputError(f"projection = {projection!r}: give True or a dict of the projection's parameters")
        m["projection"] = {} if projection is True else dict(projection)
    spec: dict = {
        "schema_version": _native.SCHEMA_VERSION,
        "name": "vecenv",
        "trace_stride": 0,
        "steps": {"h": [_positive(h, "h")]},
        "ensemble": ensemble,
        "problems": [{"id": pid, "params": pparams}],
        "methods": [m],
    }
    t_end = _positive(t_end, "t_end", optional=True)
    if t_end is not None:
        spec["t_end"] = t_end
    return spec
