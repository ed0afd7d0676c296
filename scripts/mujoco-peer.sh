#!/usr/bin/env bash
# MuJoCo as a measured peer (issue 15). Sets up its own Python environment from PyPI
# (target/mujoco-venv: mujoco, numpy), runs experiments/optional/mujoco-peer.toml with
# driftlab, runs MuJoCo on the same problems, steps and end time
# (scripts/mujoco_peer.py), adds MuJoCo's rows to that experiment's runs table
# (`driftlab import-peer`), writes the solref check for the tuning guide; then the same for
# the URDF robots of experiments/robots-coordinates.toml (scripts/mujoco_robots.py), and
# rebuilds the report of the output root. Starts no service.
# Usage: scripts/mujoco-peer.sh [--size quick|full] [--out reports] [--driftlab BIN]
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
    *) echo "mujoco-peer: unknown argument $1 (give --size, --out or --driftlab)" >&2; exit 2 ;;
  esac
done
if [ ! -x "$bin" ]; then
  cargo build --profile experiments -p driftlab-cli
  bin="${CARGO_TARGET_DIR:-target}/experiments/driftlab"
fi
. "$(dirname "$0")/mujoco-venv.sh"
mujoco_venv mujoco-peer
dir="$out/mujoco-peer"
size_args=()
[ "$size" = full ] || size_args=(--size "$size")
"$bin" run experiments/optional/mujoco-peer.toml "${size_args[@]}" --out "$dir"
# From the experiment's folder: MuJoCo writes its warnings to MUJOCO_LOG.TXT in the
# working directory, which belongs beside the rows it concerns.
(cd "$dir" && "$python" "$OLDPWD/scripts/mujoco_peer.py" --size "$size" \
  --out peer-mujoco.jsonl --solref-out solref_check.csv)
"$bin" import-peer "$dir/peer-mujoco.jsonl" --into "$dir"
# The URDF robots (issue 28): robots-coordinates run by driftlab, then MuJoCo on the same
# files, starts, step and end time (scripts/mujoco_robots.py), its rows imported beside
# driftlab's in that experiment's folder.
robots="$out/robots-coordinates"
"$bin" run experiments/robots-coordinates.toml "${size_args[@]}" --out "$robots" --force >/dev/null
(cd "$robots" && "$python" "$OLDPWD/scripts/mujoco_robots.py" --driftlab "$(cd "$OLDPWD" && realpath "$bin")" \
  --spec "$OLDPWD/experiments/robots-coordinates.toml" --size "$size" --out peer-mujoco.jsonl)
"$bin" import-peer "$robots/peer-mujoco.jsonl" --into "$robots"
"$bin" report --dir "$out" >/dev/null
echo "mujoco-peer: MuJoCo $("$python" -c 'import mujoco; print(mujoco.__version__)') rows in $dir/runs.parquet; report rebuilt in $out"
