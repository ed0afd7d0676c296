#!/usr/bin/env bash
# MuJoCo's soft loop closures against the exact solution (issue 47, item 4). Sets up its
# own Python environment from PyPI (target/mujoco-venv or MUJOCO_VENV: mujoco, numpy), runs
# experiments/optional/mujoco-loops.toml with driftlab (RATTLE, projected Gauss, Radau and
# the converged reference on the closed-loop MJCF models and dm_control's manipulator),
# runs MuJoCo on the same files at the spec's steps × integrator × solref × iterations
# (scripts/mujoco_loops.py), adds MuJoCo's rows to that experiment's runs table
# (`driftlab import-peer`, replacing MuJoCo rows imported before), writes
# mujoco_loops.csv beside it (the measures the peer rows have no column for: final and
# velocity residuals, err_q against the reference, for MuJoCo and driftlab alike), and
# rebuilds the report of the output root. Starts no service.
# Usage: scripts/mujoco-loops.sh [--size quick|full] [--out reports] [--driftlab BIN]
set -euo pipefail
cd "$(dirname "$0")/.."
size=full
out=reports
bin="${CARGO_TARGET_DIR:-target}/experiments/driftlab"
while [ $# -gt 0 ]; do
  case "$1" in
    --size) size=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --driftlab) bin=$2; shift 2 ;;
    *) echo "mujoco-loops: unknown argument $1 (give --size, --out or --driftlab)" >&2; exit 2 ;;
  esac
done
if [ ! -x "$bin" ]; then
  cargo build --profile experiments -p driftlab-cli
  bin="${CARGO_TARGET_DIR:-target}/experiments/driftlab"
fi
bin=$(realpath "$bin")
venv="${MUJOCO_VENV:-${CARGO_TARGET_DIR:-target}/mujoco-venv}"
if ! "$venv/bin/python" -c "import mujoco, numpy" 2>/dev/null; then
  echo "mujoco-loops: creating $venv with mujoco and numpy from PyPI"
  # A bare Debian has neither python3 nor its venv module (python3-venv carries ensurepip).
  if ! python3 -c "import venv, ensurepip" 2>/dev/null; then
    echo "mujoco-loops: installing python3 and python3-venv (Debian packages)"
    "$(dirname "$0")/apt-install.sh" python3 python3-venv
  fi
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check "mujoco>=3,<5" "numpy>=1.24"
fi
python=$(cd "$venv/bin" && pwd)/python
spec=$(realpath experiments/optional/mujoco-loops.toml)
script=$(realpath scripts/mujoco_loops.py)
dir="$out/mujoco-loops"
size_args=()
[ "$size" = full ] || size_args=(--size "$size")
"$bin" run "$spec" "${size_args[@]}" --out "$dir" --force
# From the experiment's folder: MuJoCo writes its warnings to MUJOCO_LOG.TXT in the
# working directory, which belongs beside the rows it concerns.
(cd "$dir" && "$python" "$script" --driftlab "$bin" --spec "$spec" --size "$size" \
  --out peer-mujoco.jsonl --table mujoco_loops.csv)
"$bin" import-peer "$dir/peer-mujoco.jsonl" --into "$dir" --replace
"$bin" report --dir "$out" >/dev/null
echo "mujoco-loops: MuJoCo $("$python" -c 'import mujoco; print(mujoco.__version__)') rows in $dir/runs.parquet, all measures in $dir/mujoco_loops.csv; report rebuilt in $out"
