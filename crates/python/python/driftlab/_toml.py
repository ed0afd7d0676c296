"""Python values written as TOML, so that numbers cross into driftlab exactly as the
command line reads them (``repr`` of a float is its shortest round-trip form)."""

from __future__ import annotations

import json
import math
from typing import Any, Mapping

from ._driftlab import InputError

_BARE = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def _key(k: Any, where: str) -> str:
    if not isinstance(k, str):
        raise InputError(f"{where}: key {k!r} is not a string; give string keys")
    return k if k and set(k) <= _BARE else json.dumps(k, ensure_ascii=False)


def value(x: Any, where: str) -> str:
    """One value as TOML; `where` names it in the error."""
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int):
        return str(x)
    if isinstance(x, float):
        if math.isnan(x):
            return "nan"
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
        return repr(float(x))  # a NumPy float's repr is "np.float64(…)" under NumPy 2
    if isinstance(x, str):
        return json.dumps(x, ensure_ascii=False)
    if hasattr(x, "item") and callable(x.item) and getattr(x, "shape", None) == ():
        return value(x.item(), where)  # a NumPy scalar
    if isinstance(x, Mapping):
        inner = ", ".join(f"{_key(k, where)} = {value(v, f'{where}.{k}')}" for k, v in x.items())
        return "{ " + inner + " }" if inner else "{}"
    if isinstance(x, (list, tuple)) or hasattr(x, "tolist"):
        items = x.tolist() if hasattr(x, "tolist") else x
        return "[" + ", ".join(value(v, f"{where}[{i}]") for i, v in enumerate(items)) + "]"
    if x is None:
        raise InputError(f"{where} = None: TOML has no null; leave the key out for its default")
    raise InputError(
        f"{where} = {x!r} ({type(x).__name__}): give a number, string, boolean, list or dict"
    )


def document(table: Mapping[str, Any] | None, where: str) -> str | None:
    """A dict as a TOML document (`None` stays `None`)."""
    if table is None:
        return None
    if not isinstance(table, Mapping):
        raise InputError(f"{where}: a {type(table).__name__}; give a dict")
    return "\n".join(f"{_key(k, where)} = {value(v, f'{where}.{k}')}" for k, v in table.items()) + "\n"
