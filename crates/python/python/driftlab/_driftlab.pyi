"""Typed stubs of the extension module (crates/python/src/py). Use the package's functions
(driftlab.simulate, driftlab.run, driftlab.VecEnv, …): they check and convert their
arguments and call these."""

from typing import Any, Callable, Optional

import numpy as np
import numpy.typing as npt

__version__: str
SCHEMA_VERSION: int

class InputError(ValueError):
    """Bad input: the message names the argument or field and the fix."""

class RunError(RuntimeError):
    """Results could not be written or read."""

def problems_json() -> str: ...
def methods_json() -> str: ...
def describe_json(id: str, params: Optional[str] = None) -> str: ...
def tune_json(params: str, h: float) -> str: ...
def simulate(
    problem: str,
    method: str,
    h: Optional[float] = None,
    rtol: Optional[float] = None,
    t_end: Optional[float] = None,
    params: Optional[str] = None,
    method_params: Optional[str] = None,
    projection: Optional[str] = None,
    stride: int = 1,
) -> dict[str, Any]: ...
def run(
    text: str,
    label: str,
    out: Optional[str] = None,
    threads: Optional[int] = None,
    size: Optional[str] = None,
    resume: bool = False,
    force: bool = False,
    cell_seconds: Optional[float] = None,
) -> str: ...
def report(dir: str) -> dict[str, Any]: ...
def check_folder(dir: str) -> Optional[str]: ...

class VecEnv:
    def __init__(self, spec: str, action: str = "force", project_actions: bool = False, threads: int = 0) -> None: ...
    @property
    def num_envs(self) -> int: ...
    @property
    def action_dim(self) -> int: ...
    @property
    def observation_dim(self) -> int: ...
    @property
    def episode_steps(self) -> int: ...
    @property
    def h(self) -> float: ...
    @property
    def threads(self) -> int: ...
    def reset(self, seed: Optional[int] = None) -> npt.NDArray[np.float64]: ...
    def step(self, actions: npt.NDArray[np.float64], substeps: int = 1) -> npt.NDArray[np.float64]: ...
    def infos(self) -> dict[str, Any]: ...
    def rust_seconds_per_call(self, substeps: int, calls: int) -> float: ...

class CallableProblem:
    def __init__(
        self,
        name: str,
        n: int,
        m: int,
        mass: Callable[..., Any],
        forces: Callable[..., Any],
        constraints: Callable[..., Any],
        jacobian: Callable[..., Any],
        gamma: Callable[..., Any],
        q0: list[float],
        v0: list[float],
        t_end: float,
        energy: Optional[Callable[..., Any]] = None,
        exact: Optional[Callable[..., Any]] = None,
        energy_scale: float = 1.0,
    ) -> None: ...

def simulate_callables(
    problem: CallableProblem,
    method: str,
    h: float,
    t_end: Optional[float] = None,
    method_params: Optional[str] = None,
    projection: Optional[str] = None,
    stride: int = 1,
) -> dict[str, Any]: ...
def check_callables(problem: CallableProblem) -> None: ...
def check_start(problem: CallableProblem) -> None: ...
