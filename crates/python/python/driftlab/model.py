"""A mechanism from a model file (URDF, SDF with loops, MJCF, driftlab's TOML) or one of the
shipped robots, as a problem for :func:`driftlab.simulate`, :func:`driftlab.describe`,
:class:`driftlab.VecEnv` and specs (``Model.problem()``)."""

from __future__ import annotations

import os
from typing import Any, Optional, Union

from ._driftlab import InputError


class Model:
    """The catalog problem ``model`` with its parameters: ``Model("arm.urdf")``,
    ``Model(robot="ur5", coordinates="natural")``, ``Model("linkage.toml", q0={"crank": 0.4})``.

    ``coordinates`` is ``joint`` (the tree's joint positions, loop closures as rows),
    ``body`` (a point and Euler parameters per body) or ``natural`` (a point and three unit
    axes per body); every other keyword is a parameter of the ``model`` problem
    (``root``, ``q0``, ``v0``, ``gravity``, ``limits``, ``damping``, ``inertia``, …;
    ``driftlab.describe("model")["defaults"]`` lists them). A file that does not exist is
    refused here; the file is read, and every error in it named with its element and
    line, when the model is first used.
    """

    def __init__(
        self,
        file: Union[str, "os.PathLike[str]", None] = None,
        *,
        robot: Optional[str] = None,
        coordinates: str = "joint",
        **params: Any,
    ) -> None:
        if (file is None) == (robot is None):
            raise InputError("Model: give a model file or robot=NAME (one of them)")
        self.params: dict[str, Any] = {"coordinates": coordinates, **params}
        if file is not None:
            if not isinstance(file, (str, os.PathLike)):
                raise InputError(f"Model: file = {file!r}; give the path of a .urdf, .sdf, .xml (MJCF) or .toml file")
            path = os.fspath(file)
            if not os.path.isfile(path):
                why = "it is a folder" if os.path.isdir(path) else "no such file"
                raise InputError(f"Model: file = {path!r}: {why}; give the path of a .urdf, .sdf, .xml (MJCF) or .toml model file")
            self.params["file"] = path
        else:
            self.params["robot"] = robot

    def problem(self) -> dict:
        """The ``[[problems]]`` entry of a spec dict."""
        return {"id": "model", "params": dict(self.params)}

    def describe(self) -> dict:
        """Sizes, rank and nonzeros of the mechanism in its coordinates (reads the file)."""
        from . import describe

        return describe(self)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"Model({args})"
