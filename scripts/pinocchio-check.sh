#!/usr/bin/env bash
# Pinocchio as a cross-check (issue 28). Sets up its own Python environment from PyPI
# (${CARGO_TARGET_DIR:-target}/pinocchio-venv, or $PINOCCHIO_VENV: pin 4.1.x, numpy),
# samples every shipped tree robot's joint-space dynamics with `driftlab model-dynamics`
# (M by CRBA and the free acceleration, damping and mimic rows off) at random states,
# recomputes both with Pinocchio's crba and aba from the same URDF
# (scripts/pinocchio_check.py: the conventions and the mapping of the free flyer), writes
# DIR/pinocchio_check.csv and prints it as a table. Target: 1e-10 relative for M and for
# the acceleration, every robot. Starts no service.
# Exit: 0 every robot within the target, 1 a robot misses it (or cannot be compared),
# 2 usage or setup errors.
# Usage: scripts/pinocchio-check.sh [--size quick|full] [--out DIR] [--driftlab BIN] [--robots DIR]
#   --size     quick: 10 states per robot, full (default): 100
#   --out      folder of the samples and the CSV (default reports/pinocchio-check; with
#              --loops the report root, default reports)
#   --driftlab the binary (default ${CARGO_TARGET_DIR:-target}/debug/driftlab, else
#              .../experiments/driftlab, else `cargo build -p driftlab-cli`)
#   --robots   folder of the URDFs Pinocchio reads (default datasets/robots, the files
#              driftlab embeds at compile time)
#   --bench    instead of the checks: the humanoid timing side by side — the criterion
#              bench crates/methods/benches/humanoid.rs (G1 in joint coordinates: CRBA,
#              RNEA, a generalized-α and a RATTLE step) and Pinocchio's crba, nle and aba on
#              the same URDF (scripts/pinocchio_bench.py), one after the other, ratios in
#              DIR/pinocchio_bench.csv
#   --loops    instead of the checks: Pinocchio's own Baumgarte corrector as peer rows of
#              experiments/cassie-loops.toml — driftlab runs the experiment into
#              DIR/cassie-loops (DIR: the report root, default reports), the same cells run
#              in Pinocchio (scripts/pinocchio_cassie_sim.py: Kp = ω_n², Kd = 2ξω_n,
#              driftlab's start; the Taylor update and semi-implicit Euler), the rows are
#              imported beside driftlab's (`driftlab import-peer`) and the report of DIR
#              rebuilt
#   --published instead of the checks: every URDF and SDF of PyPI's example-robot-data
#              6.0.0 as published (the wheel fetched from PyPI by pip, its SHA-256 checked,
#              the description files extracted into ${CARGO_TARGET_DIR:-target}/
#              example-robot-data, kept for the next call) through driftlab and Pinocchio
#              (scripts/published_robots.py): each loads in both and M and the free
#              acceleration agree within 1e-10, or both refuse it; DIR/published_robots.csv.
#              With --size quick, a sample of 12 files that carries every kind of
#              published defect (vendor elements, unphysical inertias, dangling and fixed
#              mimics, continuous joints, a singular start, files both refuse)
set -euo pipefail
cd "$(dirname "$0")/.."
usage="usage: scripts/pinocchio-check.sh [--size quick|full] [--out DIR] [--driftlab BIN] [--robots DIR] [--bench | --loops | --published]"
die() { echo "pinocchio-check: $*" >&2; exit 2; }
size=full
out=""
bin=""
bench=0
loops=0
published=0
robots=datasets/robots
target_dir="${CARGO_TARGET_DIR:-target}"
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) echo "$usage"; exit 0 ;;
    --bench) bench=1; shift ;;
    --published) published=1; shift ;;
    --loops) loops=1; shift ;;
    --size|--out|--driftlab|--robots)
      [ $# -ge 2 ] && [ -n "$2" ] || die "$1 needs a value; $usage"
      case "$1" in
        --size) size=$2 ;; --out) out=$2 ;; --driftlab) bin=$2 ;; --robots) robots=$2 ;;
      esac
      shift 2 ;;
    *) die "unknown argument $1; $usage" ;;
  esac
done
[ -n "$out" ] || { [ "$loops" = 1 ] && out=reports || out=reports/pinocchio-check; }
[ $((bench + loops + published)) -le 1 ] || die "give one of --bench, --loops and --published"
case "$size" in
  quick) states=10 ;;
  full) states=100 ;;
  *) die "--size $size: give quick or full" ;;
esac
target=1e-10
# Tree robots: name and root. damping=false (Pinocchio's ABA has no joint damping),
# mimic=false (Panda's second finger its own joint, as Pinocchio builds it by default).
specs=("double-pendulum fixed" "ur5 fixed" "panda fixed" "solo12 floating" "g1 floating")
for spec in "${specs[@]}"; do
  urdf="$robots/${spec%% *}.urdf"
  [ -f "$urdf" ] || die "$urdf not found (the shipped robots are in datasets/robots; give --robots DIR)"
done
[ -f "$robots/cassie.sdf" ] || die "$robots/cassie.sdf not found (give --robots DIR)"

if [ -n "$bin" ]; then
  [ -x "$bin" ] || die "--driftlab $bin is not an executable file"
elif [ -x "$target_dir/debug/driftlab" ]; then
  bin="$target_dir/debug/driftlab"
elif [ -x "$target_dir/experiments/driftlab" ]; then
  bin="$target_dir/experiments/driftlab"
else
  echo "pinocchio-check: no driftlab binary under $target_dir: cargo build -p driftlab-cli"
  cargo build -p driftlab-cli
  bin="$target_dir/debug/driftlab"
fi

venv="${PINOCCHIO_VENV:-$target_dir/pinocchio-venv}"
# pin 4.1.0's wheel links liburdfdom 6 and libtinyxml2 11 but requires only urdfdom >= 6:
# the libraries are held to the sonames it was built against (pin 3.9.0 with today's
# newest urdfdom fails at `import pinocchio`, measured).
pin_req=("pin>=4.1,<4.2" "cmeel-urdfdom>=6,<7" "cmeel-tinyxml2>=11,<12" "numpy>=1.24")
venv_ok() {
  "$venv/bin/python" -c "import numpy, pinocchio, sys; sys.exit(not pinocchio.__version__.startswith('4.1.'))" 2>/dev/null
}
if ! venv_ok; then
  echo "pinocchio-check: creating $venv with ${pin_req[*]} from PyPI"
  # A bare Debian has neither python3 nor its venv module (python3-venv carries ensurepip).
  if ! python3 -c "import venv, ensurepip" 2>/dev/null; then
    echo "pinocchio-check: installing python3 and python3-venv (Debian packages)"
    "$(dirname "$0")/apt-install.sh" python3 python3-venv
  fi
  t0=$(date +%s)
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check "${pin_req[@]}"
  venv_ok || die "$venv: \`import pinocchio\` fails after the install (see above)"
  echo "pinocchio-check: venv ready in $(( $(date +%s) - t0 )) s ($(du -sh "$venv" | cut -f1))"
fi
python=$(cd "$venv/bin" && pwd)/python
version=$("$python" -c "import pinocchio; print(pinocchio.__version__)")

if [ "$published" = 1 ]; then
  # The wheel of scripts/fetch-robots.sh (version and SHA-256 pinned there).
  version=6.0.0
  wheel=example_robot_data-6.0.0-0-py3-none-any.whl
  sha=424092a8093411ac2cd4ccc0572382bfc6b5eb4833aa984ef5e671dd67cd0a6e
  cache="$target_dir/example-robot-data/$version"
  if [ ! -f "$cache/.extracted" ]; then
    tmp=$(mktemp -d)
    t0=$(date +%s)
    python3 -m pip download -q --disable-pip-version-check "example-robot-data==$version" --no-deps -d "$tmp"
    got=$(sha256sum "$tmp/$wheel" | cut -d' ' -f1)
    [ "$got" = "$sha" ] || { rm -rf "$tmp"; die "$wheel has SHA-256 $got, expected $sha; refusing to use it"; }
    rm -rf "$cache"
    mkdir -p "$cache"
    python3 - "$tmp/$wheel" "$cache" <<'PY'
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
for n in z.namelist():
    if n.endswith((".urdf", ".sdf")):
        z.extract(n, sys.argv[2])
PY
    rm -rf "$tmp"
    touch "$cache/.extracted"
    echo "pinocchio-check: example-robot-data $version fetched and extracted in $(( $(date +%s) - t0 )) s"
  fi
  robots_dir="$cache/cmeel.prefix/share/example-robot-data/robots"
  files=()
  if [ "$size" = quick ]; then
    files=(--files "anymal_b_simple_description/robots/anymal.urdf,bolt_description/robots/bolt.urdf,hector_description/robots/quadrotor_base.urdf,icub_description/robots/icub.urdf,pr2_description/urdf/pr2.urdf,romeo_description/urdf/romeo_laas_small.urdf,talos_data/robots/talos_reduced.urdf,alex_description/urdf/alex_psyonic_hands.urdf,tiago_pro_description/robots/tiago_pro.urdf,ur_description/urdf/ur3.urdf,cassie_description/robots/cassie.sdf,cassie_description/robots/cassie_simple.sdf")
  fi
  mkdir -p "$out"
  "$python" scripts/published_robots.py --driftlab "$bin" --robots "$robots_dir" \
    --out "$out/published_robots.csv" --states "$states" "${files[@]}"
  exit $?
fi

if [ "$loops" = 1 ]; then
  dir="$out/cassie-loops"
  size_args=()
  [ "$size" = full ] || size_args=(--size "$size")
  "$bin" run experiments/cassie-loops.toml "${size_args[@]}" --out "$dir" --force >/dev/null
  "$python" scripts/pinocchio_cassie_sim.py --driftlab "$bin" --spec experiments/cassie-loops.toml \
    --size "$size" --sdf "$robots/cassie.sdf" --out "$dir/peer-pinocchio.jsonl"
  "$bin" import-peer "$dir/peer-pinocchio.jsonl" --into "$dir"
  "$bin" report --dir "$out" >/dev/null
  echo "pinocchio-check: Pinocchio $version corrector rows in $dir/runs.parquet; report rebuilt in $out"
  exit 0
fi

if [ "$bench" = 1 ]; then
  mkdir -p "$out"
  echo "pinocchio-check: cargo bench -p driftlab-methods --bench humanoid (criterion, release)"
  cargo bench -q -p driftlab-methods --bench humanoid -- --noplot >&2
  pin_json=$("$python" scripts/pinocchio_bench.py --urdf "$robots/g1.urdf")
  crit="$target_dir/criterion"
  "$python" - "$crit" "$pin_json" "$out/pinocchio_bench.csv" <<'PY'
import json, os, sys
crit, pin, out = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
def ours(group, name):
    path = os.path.join(crit, group, name, "new", "estimates.json")
    with open(path) as f:
        return json.load(f)["median"]["point_estimate"]
g = "g1 joint coordinates"
rows = [
    ("M (CRBA)", ours(g, "mass (CRBA)"), "crba", pin["ns"]["crba"]),
    ("bias (RNEA)", ours(g, "forces (RNEA)"), "nle", pin["ns"]["nle"]),
    ("M + bias", ours(g, "mass + forces"), "crba + nle", pin["ns"]["crba + nle"]),
    ("generalized-alpha step", ours(g + " step", "generalized-alpha"), "aba", pin["ns"]["aba"]),
    ("rattle step", ours(g + " step", "rattle"), "aba", pin["ns"]["aba"]),
]
with open(out, "w") as f:
    f.write("driftlab,driftlab_ns,pinocchio,pinocchio_ns,ratio,python_call_floor_ns,pinocchio_version\n")
    for a, x, b, y in rows:
        f.write(f"{a},{x:.0f},{b},{y:.0f},{x / y:.3f},{pin['ns']['python call floor']:.0f},{pin['pinocchio']}\n")
print(f"G1 (nv = {pin['nv']}), median ns per call; Pinocchio {pin['pinocchio']} through Python "
      f"(a bare binding call costs {pin['ns']['python call floor']:.0f} ns):")
for a, x, b, y in rows:
    print(f"  {a:<24} {x:>10.0f}   {b:<12} {y:>10.0f}   ratio {x / y:6.2f}")
print(f"({out})")
PY
  exit 0
fi

mkdir -p "$out"
csv="$out/pinocchio_check.csv"
header="robot,root,states,n,worst_mass_rel,worst_accel_rel,target,pass,pinocchio"
echo "$header" > "$csv.tmp"
fail=0
# One robot: driftlab's samples (the model-dynamics arguments after the first four), then
# the comparing script; a robot that cannot be compared is a failed row, the others run.
# check_one ROBOT ROOT TARGET SCRIPT-AND-ARGS… -- MODEL-DYNAMICS-SETS…
check_one() {
  local robot=$1 root=$2 tgt=$3 json="$out/$1.json" rc=0 row="" script=()
  shift 3
  while [ "$1" != "--" ]; do script+=("$1"); shift; done
  shift
  rm -f "$json"
  if "$bin" model-dynamics "$@" --states "$states" --seed 1 --out "$json" >/dev/null; then
    row=$("$python" "${script[@]}" --samples "$json" --robot "$robot" --states "$states" \
      --target "$tgt") || rc=$?
  else
    echo "pinocchio-check: $robot: driftlab model-dynamics failed (above)" >&2
    rc=2
  fi
  if [ "$rc" -ge 2 ] || [ -z "$row" ]; then
    # Not comparable (the reason is on stderr): a failed row, the others still run.
    row="$robot,$root,$states,,nan,nan,$tgt,false,$version"
  fi
  [ "$rc" -eq 0 ] || fail=1
  echo "$row" >> "$csv.tmp"
}
for spec in "${specs[@]}"; do
  robot=${spec%% *}
  root=${spec#* }
  check_one "$robot" "$root" "$target" scripts/pinocchio_check.py --urdf "$robots/$robot.urdf" -- \
    --set "robot=\"$robot\"" --set "root=\"$root\"" --set damping=false --set mimic=false
done
# Cassie (SDF with four ball closures): the constrained accelerations against Pinocchio's
# M, bias, constraint Jacobians and γ (scripts/pinocchio_cassie.py: the wheel has no SDF
# reader, so the script builds Pinocchio's model from the SDF itself, the closures as its
# CONTACT_3D constraint models), target 1e-9. Both sides leave out the two plantar
# four-bars' out-of-plane rows, redundant in the design and kept at σ ≈ 2e-12 only by the
# file's 5-digit angles (redundant_tol = 1e-5, crates/problems/src/independent_rows.rs).
check_one cassie fixed 1e-9 scripts/pinocchio_cassie.py --sdf "$robots/cassie.sdf" -- \
  --set 'robot="cassie"' --set 'redundant="remove"' --set redundant_tol=1e-5 --set damping=false
mv "$csv.tmp" "$csv"
echo
column -s, -t < "$csv" 2>/dev/null || cat "$csv"
if [ "$fail" = 1 ]; then
  echo "pinocchio-check: a target missed (Pinocchio $version, $states states; 1e-10 tree robots, 1e-9 Cassie):" >&2
  awk -F, 'NR > 1 && $8 != "true" {
    if ($5 == "nan") printf "  %s (%s root): not compared (the reason above)\n", $1, $2
    else printf "  %s (%s root): worst relative M %s, acceleration %s\n", $1, $2, $5, $6 }' "$csv" >&2
  echo "pinocchio-check: ($csv; note that driftlab embeds datasets/robots at compile time: a URDF edited since that build is not the one it used)" >&2
  exit 1
fi
echo "pinocchio-check: every robot within its target of Pinocchio $version at $states states ($csv)"
