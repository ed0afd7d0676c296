#!/usr/bin/env python3
"""Pinocchio's side of the humanoid timing (issue 28): the G1 from the same URDF with a
free flyer, at one seeded configuration with every velocity 0.5 (the state of
crates/methods/benches/humanoid.rs is of the same kind, not bit-identical: the times of
these algorithms do not depend on the values). Times crba, nle, crba + nle and aba,
each the median over --repeats runs of --calls calls (time.perf_counter), and an empty
binding call (pinocchio's `neutral` on a 0-joint model) as the Python-call floor.
Prints one JSON object: {"pinocchio": version, "nv": ..., "ns": {name: median ns per call}}.
Usage: pinocchio_bench.py --urdf datasets/robots/g1.urdf [--calls N] [--repeats R]"""
import argparse
import json
import statistics
import sys
import time

import numpy as np
import pinocchio as pin


def per_call_ns(fn, calls, repeats):
    """Median over `repeats` of the time per call of `fn` over `calls` calls, in ns."""
    fn()
    runs = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        runs.append((time.perf_counter() - t0) / calls * 1e9)
    return statistics.median(runs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--urdf", required=True)
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--repeats", type=int, default=7)
    a = ap.parse_args()
    if a.calls < 1 or a.repeats < 1:
        print("pinocchio_bench: --calls and --repeats must be ≥ 1", file=sys.stderr)
        return 2
    model = pin.buildModelFromUrdf(a.urdf, pin.JointModelFreeFlyer())
    data = model.createData()
    np.random.seed(6)
    pin.seed(6)
    q = pin.randomConfiguration(model, -np.ones(model.nq), np.ones(model.nq))
    v = np.full(model.nv, 0.5)
    tau = np.zeros(model.nv)
    empty = pin.Model()
    k, r = a.calls, a.repeats
    ns = {
        "python call floor": per_call_ns(lambda: pin.neutral(empty), k, r),
        "crba": per_call_ns(lambda: pin.crba(model, data, q), k, r),
        "nle": per_call_ns(lambda: pin.nonLinearEffects(model, data, q, v), k, r),
        "crba + nle": per_call_ns(
            lambda: (pin.crba(model, data, q), pin.nonLinearEffects(model, data, q, v)), k, r
        ),
        "aba": per_call_ns(lambda: pin.aba(model, data, q, v, tau), k, r),
    }
    print(json.dumps({"pinocchio": pin.__version__, "nq": model.nq, "nv": model.nv, "ns": ns}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
