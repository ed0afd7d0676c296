#!/usr/bin/env bash
# Pinocchio as a cross-check (issue 28). Sets up its own Python environment from PyPI
# (target/pinocchio-venv: pin 3.9.0 with the urdfdom 4 and tinyxml2 10 libraries its
# binary links against, numpy), samples every shipped tree robot's joint-space dynamics
# with `driftlab model-dynamics` (M by CRBA, the free acceleration) at random states,
# recomputes both with Pinocchio's crba and aba from the same URDF
# (scripts/pinocchio_check.py), writes OUT/pinocchio_check.csv, and exits 1 when a robot
# misses the target 1e-10 relative. Starts no service.
# Usage: scripts/pinocchio-check.sh [--size quick|full] [--out DIR] [--driftlab BIN]
set -euo pipefail
cd "$(dirname "$0")/.."
size=full
out=reports/pinocchio-check
bin=""
while [ $# -gt 0 ]; do
  case "$1" in
    --size) size=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --driftlab) bin=$2; shift 2 ;;
    *) echo "pinocchio-check: unknown argument $1 (give --size, --out or --driftlab)" >&2; exit 2 ;;
  esac
done
case "$size" in quick) states=10 ;; full) states=100 ;; *) echo "pinocchio-check: --size $size: give quick or full" >&2; exit 2 ;; esac
target="${CARGO_TARGET_DIR:-target}"
if [ -z "$bin" ]; then
  cargo build -q -p driftlab-cli
  bin="$target/debug/driftlab"
fi
venv="${PINOCCHIO_VENV:-$target/pinocchio-venv}"
if ! "$venv/bin/python" -c "import pinocchio, numpy" 2>/dev/null; then
  echo "pinocchio-check: creating $venv with pin and numpy from PyPI"
  if ! python3 -c "import venv, ensurepip" 2>/dev/null; then
    "$(dirname "$0")/apt-install.sh" python3 python3-venv
  fi
  rm -rf "$venv"
  python3 -m venv "$venv"
  # pin 3.9.0's wheel links liburdfdom 4 and libtinyxml2 10; the newest cmeel packages
  # carry 6 and 11 (measured: `import pinocchio` fails without these pins).
  "$venv/bin/pip" install -q --disable-pip-version-check "pin==3.9.0" "cmeel-urdfdom>=4,<5" "cmeel-tinyxml2>=10,<11" "numpy>=1.24"
fi
mkdir -p "$out"
csv="$out/pinocchio_check.csv"
echo "robot,root,states,n,worst_mass_rel,worst_accel_rel,target,pass,pinocchio" > "$csv"
fail=0
for spec in "double-pendulum fixed" "ur5 fixed" "panda fixed" "solo12 floating" "g1 floating"; do
  set -- $spec
  json="$out/$1.json"
  "$bin" model-dynamics --set "robot=\"$1\"" --set "root=\"$2\"" --set damping=false --set mimic=false \
    --states "$states" --seed 1 --out "$json" >/dev/null
  row=$("$venv/bin/python" scripts/pinocchio_check.py "$json" "datasets/robots/$1.urdf" "$1")
  echo "$row" >> "$csv"
  case "$row" in *,false,*) fail=1 ;; esac
done
column -s, -t < "$csv" 2>/dev/null || cat "$csv"
if [ "$fail" = 1 ]; then
  echo "pinocchio-check: a robot misses the 1e-10 target (see $csv)" >&2
  exit 1
fi
echo "pinocchio-check: every robot within 1e-10 of Pinocchio ($csv)"
