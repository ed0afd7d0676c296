#!/usr/bin/env bash
# MuJoCo as the oracle on driftlab's MJCF reader (issue 47, item 3). Sets up its own Python
# environment from PyPI (${CARGO_TARGET_DIR:-target}/mujoco-venv, or $MUJOCO_VENV — the
# venv of scripts/mujoco-peer.sh: mujoco, numpy), samples every shipped MJCF model
# (datasets/mjcf/ID.xml, `robot = "ID"`) with `driftlab model-dynamics` at random states
# (q, q̇, M with armature, the constrained q̈ at zero torque with springs and damping), and
# recomputes them with MuJoCo compiling the same file (scripts/mjcf_oracle.py: the mapping
# of qpos/qvel, what is switched off — contact, actuation, friction loss, limits, fluid —
# and what is compared: mj_fullM; qacc_smooth and qfrc_passive − qfrc_bias for models
# without equalities; for models with equalities the exact constrained acceleration from
# MuJoCo's M, forces and efc_J rows, and the constraint force's angle to those rows).
# Writes the results as JSON (--out) and prints a table. Target: 1e-10 relative, every
# model. Starts no service.
#
# A model whose sampling fails in driftlab (`model-dynamics` refuses a state) is sampled
# seed by seed instead: the states that sample are compared, the row fails and names the
# seeds that did not.
#
# Exit: 0 every model within the target, 1 a model misses it (or cannot be compared),
# 2 usage or setup errors.
# Usage: scripts/mjcf-oracle.sh [--size quick|full] [--states N] [--models ID,ID,…]
#                               [--file F.xml]… [--set KEY=VALUE]… [--out FILE.json]
#                               [--driftlab BIN]
#   --size     quick: 5 states per model on a subset that carries every feature of the
#              shipped files (free joint, armature, damping, springs with springref, ref,
#              settotalmass, disabled gravity, tendon couplings); full (default): 100
#              states, all 25 models
#   --states   states per model (overrides the size's)
#   --models   comma-separated model ids (overrides the size's list; `none`: only --file)
#   --file     also an MJCF file of your own (read with `file = "…"`; repeatable)
#   --set      an extra `model-dynamics --set` for every model (e.g. redundant="remove"
#              for a planar loop, whose out-of-plane rows MuJoCo keeps)
#   --out      the JSON of the results (default reports/mjcf-oracle/mjcf_oracle.json); the
#              samples go beside it in samples/
#   --driftlab the binary (default ${CARGO_TARGET_DIR:-target}/debug/driftlab, else
#              .../experiments/driftlab, else `cargo build -p driftlab-cli`)
set -euo pipefail
cd "$(dirname "$0")/.."
usage="usage: scripts/mjcf-oracle.sh [--size quick|full] [--states N] [--models ID,…] [--file F.xml]… [--set KEY=VALUE]… [--out FILE.json] [--driftlab BIN]"
die() { echo "mjcf-oracle: $*" >&2; exit 2; }
size=full
states=""
models=""
files=()
sets=()
out=reports/mjcf-oracle/mjcf_oracle.json
bin=""
target_dir="${CARGO_TARGET_DIR:-target}"
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) echo "$usage"; exit 0 ;;
    --size|--states|--models|--file|--set|--out|--driftlab)
      [ $# -ge 2 ] && [ -n "$2" ] || die "$1 needs a value; $usage"
      case "$1" in
        --size) size=$2 ;; --states) states=$2 ;; --models) models=$2 ;;
        --file) files+=("$2") ;; --set) sets+=(--set "$2") ;; --out) out=$2 ;;
        --driftlab) bin=$2 ;;
      esac
      shift 2 ;;
    *) die "unknown argument $1; $usage" ;;
  esac
done
target=1e-10
# The quick subset: gym-ant (free joint, armature, damping), gym-half-cheetah
# (settotalmass, springs, armature), gym-walker2d (a planar root with ref), dmc-finger
# (gravity disabled, ref), dmc-humanoid (free root, 21 hinges, springs, armature),
# dmc-manipulator (a tendon coupling, ref and springref, springs), dmc-quadruped (two free
# joints and four tendon couplings).
quick_models="gym-ant,gym-half-cheetah,gym-walker2d,dmc-finger,dmc-humanoid,dmc-manipulator,dmc-quadruped"
case "$size" in
  quick) default_states=5; default_models=$quick_models ;;
  full)
    default_states=100
    default_models=$(ls datasets/mjcf/*.xml | sed 's|.*/||; s|\.xml$||' | paste -sd, -) ;;
  *) die "--size $size: give quick or full" ;;
esac
states=${states:-$default_states}
case "$states" in ''|*[!0-9]*|0) die "--states $states: give a positive whole number" ;; esac
models=${models:-$default_models}
ids=()
[ "$models" = none ] || IFS=, read -r -a ids <<< "$models"
[ ${#ids[@]} -gt 0 ] || [ ${#files[@]} -gt 0 ] || die "--models none and no --file: nothing to check"
for id in ${ids[@]+"${ids[@]}"}; do
  [ -f "datasets/mjcf/$id.xml" ] || die "model $id: datasets/mjcf/$id.xml not found (the shipped MJCF models are there)"
done
for f in ${files[@]+"${files[@]}"}; do
  [ -f "$f" ] || die "--file $f: not found"
done

if [ -n "$bin" ]; then
  [ -x "$bin" ] || die "--driftlab $bin is not an executable file"
elif [ -x "$target_dir/debug/driftlab" ]; then
  bin="$target_dir/debug/driftlab"
elif [ -x "$target_dir/experiments/driftlab" ]; then
  bin="$target_dir/experiments/driftlab"
else
  echo "mjcf-oracle: no driftlab binary under $target_dir: cargo build -p driftlab-cli"
  cargo build -p driftlab-cli
  bin="$target_dir/debug/driftlab"
fi

. "$(dirname "$0")/mujoco-venv.sh"
mujoco_venv mjcf-oracle
version=$("$python" -c "import mujoco; print(mujoco.__version__)")

dir=$(dirname "$out")
mkdir -p "$dir/samples" || die "cannot create $dir/samples"
rows="$dir/samples/rows.jsonl"
: > "$rows"
fail=0
# MuJoCo writes its warnings (settotalmass is deprecated) to MUJOCO_LOG.TXT in the working
# directory: the script runs from the output folder so that they land beside the results.
abs() { (cd "$(dirname "$1")" && printf '%s/%s\n' "$(pwd)" "$(basename "$1")"); }
script_abs=$(abs scripts/mjcf_oracle.py)

# check_one NAME XML SET… : sample, compare, append the row.
check_one() {
  local name=$1 xml=$2 json="$dir/samples/$1.json" rc=0 row="" err unsampled="" s
  shift 2
  local spec=("$@")
  local samples=(--samples "$(abs "$json")") expect=(--states "$states")
  rm -f "$json" "$dir/samples/$name".seed*.json
  if ! err=$("$bin" model-dynamics "${spec[@]}" ${sets[@]+"${sets[@]}"} --states "$states" \
      --seed 1 --out "$json" 2>&1 >/dev/null); then
    # Seed by seed (state k of the batch is seed 1 + k): the states that sample are
    # compared, the others named.
    echo "mjcf-oracle: $name: driftlab model-dynamics failed; sampling seed by seed ($(printf '%s' "$err" | tr '\n' ' '))" >&2
    samples=()
    expect=()
    local got=0 bad=() why=""
    for ((s = 1; got < states && s <= 3 * states; s++)); do
      if err=$("$bin" model-dynamics "${spec[@]}" ${sets[@]+"${sets[@]}"} --states 1 \
          --seed "$s" --out "$dir/samples/$name.seed$s.json" 2>&1 >/dev/null); then
        samples+=(--samples "$(abs "$dir/samples/$name.seed$s.json")")
        got=$((got + 1))
      else
        bad+=("$s")
        [ -n "$why" ] || why=$(printf '%s' "$err" | tr '\n' ' ' | sed 's/^error: //')
      fi
    done
    local listed=("${bad[@]:0:12}")
    [ ${#bad[@]} -le 12 ] || listed+=("…")
    unsampled="${#bad[@]} of the $((s - 1)) seeds tried failed ($(IFS=,; echo "${listed[*]}")), the first: $why"
  fi
  if [ ${#samples[@]} -gt 0 ]; then
    local xml_abs
    xml_abs=$(abs "$xml")
    row=$(cd "$dir" && "$python" "$script_abs" "${samples[@]}" --xml "$xml_abs" \
      --robot "$name" ${expect[@]+"${expect[@]}"} --target "$target" \
      ${unsampled:+--unsampled "$unsampled"}) || rc=$?
  else
    rc=2
  fi
  if [ -z "$row" ]; then
    row=$("$python" -c 'import json, sys; print(json.dumps({"robot": sys.argv[1], "passed": False, "error": "driftlab sampled no state: " + sys.argv[2]}))' "$name" "$unsampled")
    rc=2
  fi
  [ "$rc" -eq 0 ] || fail=1
  printf '%s\n' "$row" >> "$rows"
}

for id in ${ids[@]+"${ids[@]}"}; do
  check_one "$id" "datasets/mjcf/$id.xml" --set "robot=\"$id\""
done
for f in ${files[@]+"${files[@]}"}; do
  name=$(basename "$f" .xml)
  check_one "$name" "$f" --set "file=\"$(abs "$f")\""
done

"$python" - "$rows" "$out" "$version" "$states" "$size" "$target" <<'PY'
import json, sys
rows_path, out, version, states, size, target = sys.argv[1:]
rows = [json.loads(l) for l in open(rows_path) if l.strip()]
doc = {
    "about": "driftlab's MJCF reader against MuJoCo on the same files (issue 47, item 3; "
             "scripts/mjcf_oracle.py): relative errors max|Δ|/max|ref|, worst over the states",
    "mujoco": version, "size": size, "states": int(states), "target": float(target),
    "passed": all(r.get("passed") for r in rows), "models": rows,
}
with open(out, "w") as f:
    json.dump(doc, f, indent=1)
    f.write("\n")
def e(r, k):
    x = r.get(k)
    return "-" if x is None else f"{x:.1e}"
head = ("model", "n", "nv", "rows", "states", "M", "qacc", "qacc·M/F", "bias/F", "forces/F",
        "qacc(KKT)", "qacc(KKT)·M/F", "Φ_q∠efc_J", "F∠rows", "pass")
table = [head]
for r in rows:
    ok = "yes" if r.get("passed") else "NO"
    if r.get("passed") and r.get("passed_by_backward"):
        ok = "yes (backward)"
    table.append((r["robot"], str(r.get("n", "-")), str(r.get("nv", "-")),
                  f"{r.get('dl_rows', '-')}/{r.get('mj_rows', '-')}", str(r.get("states", "-")),
                  e(r, "mass"), e(r, "accel"), e(r, "accel_backward"), e(r, "bias"),
                  e(r, "forces"), e(r, "kkt_accel"), e(r, "kkt_accel_backward"),
                  e(r, "row_angle"), e(r, "force_angle"), ok))
w = [max(len(t[i]) for t in table) for i in range(len(head))]
print()
for t in table:
    print("  ".join(c.ljust(w[i]) for i, c in enumerate(t)).rstrip())
for r in rows:
    if not r.get("passed"):
        print(f"mjcf-oracle: {r['robot']}: {r.get('error', 'failed')}", file=sys.stderr)
print("(rows: driftlab's equality rows / MuJoCo's efc_J equality rows; M, qacc: relative "
      "to max|ref|; ·M/F, bias/F: as forces, relative to the state's force scale F; forces/F: "
      "driftlab's generalized forces against qfrc_passive − qfrc_bias; Φ_q∠efc_J: sin of the "
      "largest principal angle between driftlab's constraint rows (in MuJoCo's dofs) and "
      "efc_J's equality rows, target 1e-9; F∠rows: sin of the angle of driftlab's "
      f"constraint force to MuJoCo's rows; {out})")
PY
if [ "$fail" = 1 ]; then
  echo "mjcf-oracle: a model misses the target $target of MuJoCo $version at $states states (above; $out)" >&2
  exit 1
fi
echo "mjcf-oracle: every model within $target of MuJoCo $version at $states states ($out)"
