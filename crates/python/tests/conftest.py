"""Shared fixtures: the `driftlab` command line (for the same-numbers checks) and the
benchmark switch."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


def pytest_addoption(parser):
    parser.addoption("--benchmark", action="store_true", help="run the speed targets (tests/test_benchmarks.py)")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--benchmark"):
        return
    skip = pytest.mark.skip(reason="a benchmark: run with --benchmark")
    for item in items:
        if "benchmark" in item.keywords:
            item.add_marker(skip)


def _driftlab_binary() -> Path:
    """The CLI: $DRIFTLAB_BIN, else the workspace's experiments or debug build, else built."""
    given = os.environ.get("DRIFTLAB_BIN")
    if given:
        path = Path(given)
        return path if path.is_absolute() else ROOT / path
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    if not target.is_absolute():
        target = ROOT / target
    for profile in ("experiments", "debug"):
        b = target / profile / "driftlab"
        if b.exists():
            return b
    cargo = shutil.which("cargo")
    if cargo is None:
        pytest.skip("no driftlab binary and no cargo to build one")
    subprocess.run([cargo, "build", "--profile", "experiments", "-p", "driftlab-cli"], cwd=ROOT, check=True)
    return target / "experiments" / "driftlab"


@pytest.fixture(scope="session")
def cli() -> Path:
    return _driftlab_binary()


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT
