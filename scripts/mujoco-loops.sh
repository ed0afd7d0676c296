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
# With --file F.xml, the audit of your own MJCF model instead of the shipped ones: the spec
# is copied into OUT as mujoco-loops-STEM.toml with F.xml as its one problem (its
# redundant rows removed) and run as experiment mujoco-loops-STEM.
# Usage: scripts/mujoco-loops.sh [--size quick|full] [--out reports] [--driftlab BIN] [--file F.xml]
set -euo pipefail
cd "$(dirname "$0")/.."
size=full
out=reports
file=
bin="${CARGO_TARGET_DIR:-target}/experiments/driftlab"
while [ $# -gt 0 ]; do
  case "$1" in
    --size) size=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --driftlab) bin=$2; shift 2 ;;
    --file) file=$2; shift 2 ;;
    *) echo "mujoco-loops: unknown argument $1 (give --size, --out, --driftlab or --file)" >&2; exit 2 ;;
  esac
done
if [ ! -x "$bin" ]; then
  cargo build --profile experiments -p driftlab-cli
  bin="${CARGO_TARGET_DIR:-target}/experiments/driftlab"
fi
bin=$(realpath "$bin")
. "$(dirname "$0")/mujoco-venv.sh"
mujoco_venv mujoco-loops
spec=$(realpath experiments/optional/mujoco-loops.toml)
script=$(realpath scripts/mujoco_loops.py)
name=mujoco-loops
if [ -n "$file" ]; then
  [ -f "$file" ] || { echo "mujoco-loops: --file $file: no such file; give the path of an MJCF model" >&2; exit 2; }
  stem=$(basename "$file" .xml | tr -c 'A-Za-z0-9_\n-' '-')
  name="mujoco-loops-$stem"
  mkdir -p "$out"
  own="$out/$name.toml"
  if [ -e "$own" ] && ! grep -q '^# written by scripts/mujoco-loops.sh' "$own"; then
    echo "mujoco-loops: $own exists and was not written by this script; move it, or give another --out" >&2; exit 2
  fi
  # The shipped spec with its problems replaced by the user's file.
  python3 - "$spec" "$(realpath "$file")" "$name" > "$own.partial" <<'PY'
import re, sys
text, path, name = open(sys.argv[1]).read(), sys.argv[2], sys.argv[3]
text = re.sub(r'(?m)^\[\[problems\]\]\n(?:(?!\[).*\n)*', '', text)
text = re.sub(r'(?m)^name = ".*"$', f'name = "{name}"', text)
text = re.sub(r'(?m)^description = ".*"$', f'description = "MuJoCo\'s soft loop closures on {path} (timestep × integrator × solref × iterations) against RATTLE, projected Gauss and Radau on the same file: loop residual, energy error, trajectory error against a converged reference, time per step."', text)
problem = f'[[problems]]\nid = "model"\nparams = {{ file = {path!r}, redundant = "remove" }}\n\n'.replace("'", '"')
text = text.replace("[[methods]]", problem + "[[methods]]", 1)
print("# written by scripts/mujoco-loops.sh --file: the audit of one MJCF model\n" + text, end="")
PY
  mv "$own.partial" "$own"
  spec=$(realpath "$own")
fi
dir="$out/$name"
size_args=()
[ "$size" = full ] || size_args=(--size "$size")
# The converged references (the spec's reference method at its step, its accuracy
# measured against twice the step), written with a copy of the spec that measures every
# row's err_q against them (`reference_trace`): OUT/NAME-references/, owned by this script.
refs="$out/$name-references"
if [ -e "$refs" ] && [ ! -e "$refs/.written-by-mujoco-loops" ]; then
  echo "mujoco-loops: $refs exists and was not written by this script; move it, or give another --out" >&2; exit 2
fi
mkdir -p "$refs"
touch "$refs/.written-by-mujoco-loops"
"$python" "$script" --driftlab "$bin" --spec "$spec" --size "$size" --out /dev/null --table /dev/null \
  --prepare "$refs/$name.toml"
spec=$(realpath "$refs/$name.toml")
"$bin" run "$spec" "${size_args[@]}" --out "$dir" --force
# From the experiment's folder: MuJoCo writes its warnings to MUJOCO_LOG.TXT in the
# working directory, which belongs beside the rows it concerns.
(cd "$dir" && "$python" "$script" --driftlab "$bin" --spec "$spec" --size "$size" \
  --out peer-mujoco.jsonl --table mujoco_loops.csv)
"$bin" import-peer "$dir/peer-mujoco.jsonl" --into "$dir" --replace
"$bin" report --dir "$out" >/dev/null
echo "mujoco-loops ($name): MuJoCo $("$python" -c 'import mujoco; print(mujoco.__version__)') rows in $dir/runs.parquet, all measures in $dir/mujoco_loops.csv; report rebuilt in $out"
