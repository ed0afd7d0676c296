#!/usr/bin/env bash
# The Python package `driftlab` (issue 31), built from this workspace into a venv of its own.
# Makes ${CARGO_TARGET_DIR:-target}/python-venv (or $DRIFTLAB_VENV) from PyPI — maturin,
# numpy, polars, pytest; with --extras also pandas, pyarrow (DataFrame.to_pandas) and
# gymnasium (VecEnv's spaces and base class) — builds the extension module with maturin
# (crates/python: feature `python`, profile `experiments`, an abi3 wheel for CPython ≥ 3.9,
# in ${CARGO_TARGET_DIR:-target}/wheels; the build shares the workspace's target folder: the
# first takes about 3.5 min on 2 cores, later ones 10-40 s) and installs the wheel into the
# venv. Then, with --test, runs the package's pytest suite; with --bench, its benchmarks.
# Starts no service. `pip install ./crates/python` also works, into any environment.
# Exit: 0 done, 1 a test failed, 2 usage or setup errors.
# Usage: scripts/python-setup.sh [--extras] [--test] [--bench] [--venv DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
usage="usage: scripts/python-setup.sh [--extras] [--test] [--bench] [--venv DIR]"
die() { echo "python-setup: $*" >&2; exit 2; }
target_dir="${CARGO_TARGET_DIR:-target}"
venv="${DRIFTLAB_VENV:-$target_dir/python-venv}"
extras=0; test=0; bench=0
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) echo "$usage"; exit 0 ;;
    --extras) extras=1; shift ;;
    --test) test=1; shift ;;
    --bench) bench=1; shift ;;
    --venv) [ $# -ge 2 ] && [ -n "$2" ] || die "--venv needs a folder; $usage"; venv=$2; shift 2 ;;
    *) die "unknown argument $1; $usage" ;;
  esac
done
command -v python3 >/dev/null || die "python3 not found; install CPython ≥ 3.9 (Debian: apt-get install python3 python3-venv)"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv" || die "cannot make a venv in $venv (Debian: apt-get install python3-venv)"
fi
venv="$(cd "$venv" && pwd)"
py="$venv/bin/python"
"$py" -m pip install -q --upgrade pip
"$py" -m pip install -q "maturin>=1.9,<2" "numpy>=1.24" "polars>=1.0" "pytest>=7" \
  || die "cannot install maturin, numpy, polars, pytest from PyPI"
if [ "$extras" = 1 ]; then
  "$py" -m pip install -q pandas pyarrow "gymnasium>=1.1" || die "cannot install pandas, pyarrow, gymnasium from PyPI"
fi
start=$(date +%s)
rm -f "$target_dir"/wheels/driftlab-*.whl
"$venv/bin/maturin" build -q -m crates/python/Cargo.toml --profile experiments \
  --interpreter "$py" --out "$target_dir/wheels" || die "maturin could not build the module"
"$py" -m pip install -q --force-reinstall --no-deps "$target_dir"/wheels/driftlab-*.whl
echo "python-setup: driftlab $("$py" -c 'import driftlab; print(driftlab.__version__)') in $venv (built in $(( $(date +%s) - start )) s)"
status=0
if [ "$test" = 1 ]; then
  (cd crates/python && DRIFTLAB_BIN="${DRIFTLAB_BIN:-}" "$py" -m pytest -q tests) || status=1
fi
if [ "$bench" = 1 ]; then
  (cd crates/python && "$py" -m pytest -q --benchmark tests/test_benchmarks.py -s) || status=1
fi
exit $status
