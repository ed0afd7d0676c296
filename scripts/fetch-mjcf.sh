#!/usr/bin/env bash
# Refresh datasets/mjcf/ from PyPI's gymnasium and dm_control wheels (issue 47). Downloads
# the pinned wheels into a temporary folder (removed at exit), checks their SHA-256, extracts
# the selected MJCF models, strips them to what their dynamics needs (scripts/strip_mjcf.py:
# no visuals, sensors or meshes) and writes them with their licences, SHA256SUMS and
# SOURCES.sha256. Then, where MuJoCo is importable, compiles every source and its stripped
# copy with MuJoCo, requires them to be identical and writes COMPILED.json
# (scripts/strip_mjcf.py --check). The output is committed: the project's commands never
# call this script and need no network.
# Usage: scripts/fetch-mjcf.sh    (MUJOCO_PYTHON=/path/to/python: the Python with mujoco)
set -euo pipefail
cd "$(dirname "$0")/.."
gym_version=1.4.0
gym_wheel=gymnasium-1.4.0-py3-none-any.whl
gym_sha=1cb947c59e7c72d8eabb2c2274c00cd20948e69f8452a9ef4092223be24fdf0e
dmc_version=1.0.52
dmc_wheel=dm_control-1.0.52-py3-none-any.whl
dmc_sha=342505f32e041532dcdda0368b61df935ca04efa853b27dae522f615877a0fc3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 -m pip download -q --disable-pip-version-check --only-binary=:all: --no-deps -d "$tmp" \
  "gymnasium==$gym_version" "dm_control==$dmc_version"
for pair in "$gym_wheel $gym_sha" "$dmc_wheel $dmc_sha"; do
  set -- $pair
  got=$(sha256sum "$tmp/$1" | cut -d' ' -f1)
  if [ "$got" != "$2" ]; then
    echo "fetch-mjcf: $1 has SHA-256 $got, expected $2; refusing to use it" >&2
    exit 1
  fi
done
# Only the models, the suite's common includes and the licences (dm_control's wheel is 56 MB).
python3 - "$tmp" "$gym_wheel" "$dmc_wheel" <<'PY'
import sys, zipfile
tmp = sys.argv[1]
for wheel in sys.argv[2:]:
    with zipfile.ZipFile(f"{tmp}/{wheel}") as z:
        for n in z.namelist():
            if n.startswith("gymnasium/envs/mujoco/assets/") or "dist-info/licenses/" in n \
                    or (n.startswith("dm_control/suite/") and n.count("/") <= 3
                        and n.endswith(".xml")):
                z.extract(n, f"{tmp}/x")
PY
x="$tmp/x"
out=datasets/mjcf
mkdir -p "$out/common"
# package, source path in the wheel, output name. gymnasium: the files its v5 environments
# load (pusher_v5.xml, walker2d_v5.xml where a v4 file is also there). dm_control: the suite's
# files, in datasets/mjcf/ beside common/, so their `./common/…` includes resolve unchanged.
# Last: the three includes of the suite.
list() {
  cat <<'LIST'
gym gymnasium/envs/mujoco/assets/ant.xml gym-ant.xml
gym gymnasium/envs/mujoco/assets/half_cheetah.xml gym-half-cheetah.xml
gym gymnasium/envs/mujoco/assets/hopper.xml gym-hopper.xml
gym gymnasium/envs/mujoco/assets/humanoid.xml gym-humanoid.xml
gym gymnasium/envs/mujoco/assets/humanoidstandup.xml gym-humanoidstandup.xml
gym gymnasium/envs/mujoco/assets/inverted_pendulum.xml gym-inverted-pendulum.xml
gym gymnasium/envs/mujoco/assets/inverted_double_pendulum.xml gym-inverted-double-pendulum.xml
gym gymnasium/envs/mujoco/assets/pusher_v5.xml gym-pusher.xml
gym gymnasium/envs/mujoco/assets/reacher.xml gym-reacher.xml
gym gymnasium/envs/mujoco/assets/swimmer.xml gym-swimmer.xml
gym gymnasium/envs/mujoco/assets/walker2d_v5.xml gym-walker2d.xml
dmc dm_control/suite/acrobot.xml dmc-acrobot.xml
dmc dm_control/suite/cartpole.xml dmc-cartpole.xml
dmc dm_control/suite/cheetah.xml dmc-cheetah.xml
dmc dm_control/suite/finger.xml dmc-finger.xml
dmc dm_control/suite/hopper.xml dmc-hopper.xml
dmc dm_control/suite/humanoid.xml dmc-humanoid.xml
dmc dm_control/suite/humanoid_CMU.xml dmc-humanoid-cmu.xml
dmc dm_control/suite/manipulator.xml dmc-manipulator.xml
dmc dm_control/suite/pendulum.xml dmc-pendulum.xml
dmc dm_control/suite/point_mass.xml dmc-point-mass.xml
dmc dm_control/suite/quadruped.xml dmc-quadruped.xml
dmc dm_control/suite/reacher.xml dmc-reacher.xml
dmc dm_control/suite/swimmer.xml dmc-swimmer.xml
dmc dm_control/suite/walker.xml dmc-walker.xml
dmc dm_control/suite/common/materials.xml common/materials.xml
dmc dm_control/suite/common/skybox.xml common/skybox.xml
dmc dm_control/suite/common/visual.xml common/visual.xml
LIST
}
while read -r pkg from to; do
  if [ "$pkg" = gym ]; then
    origin="gymnasium $gym_version (PyPI wheel SHA-256 $gym_sha)"
  else
    origin="dm_control $dmc_version (PyPI wheel SHA-256 $dmc_sha)"
  fi
  case "$to" in
    # The suite's includes hold only textures, materials and <visual>: stripped they would be
    # empty, which MuJoCo refuses ("Empty include file"). They are copied unchanged.
    common/*) cp "$x/$from" "$out/$to" ;;
    *) header="$origin, $from; stripped of visual, sensor and decorative elements by scripts/strip_mjcf.py"
       python3 scripts/strip_mjcf.py "$x/$from" "$out/$to" "$header" ;;
  esac
done < <(list)
cp "$x/gymnasium-$gym_version.dist-info/licenses/LICENSE" "$out/LICENSE-gymnasium"
cp "$x/dm_control-$dmc_version.dist-info/licenses/LICENSE" "$out/LICENSE-dm-control"
cp "$x/dm_control-$dmc_version.dist-info/licenses/AUTHORS" "$out/AUTHORS-dm-control"
(cd "$out" && sha256sum ./*.xml ./common/*.xml > SHA256SUMS)
# and the sources' own hashes, for the provenance table in datasets/mjcf/README.md
while read -r pkg from to; do
  echo "$(sha256sum "$x/$from" | cut -d' ' -f1)  $from"
done < <(list) > "$out/SOURCES.sha256"
echo "fetch-mjcf: $(ls "$out"/*.xml | wc -l) models (and $(ls "$out"/common/*.xml | wc -l) dm_control includes) in $out"
# MuJoCo on every source and its stripped copy: identical compiled models, and COMPILED.json.
py=${MUJOCO_PYTHON:-python3}
if ! "$py" -c 'import mujoco' 2>/dev/null; then
  venv="${MUJOCO_VENV:-${CARGO_TARGET_DIR:-target}/mujoco-venv}"  # scripts/mujoco-peer.sh's
  if [ -z "${MUJOCO_PYTHON:-}" ] && "$venv/bin/python" -c 'import mujoco' 2>/dev/null; then
    py="$venv/bin/python"
  else
    echo "fetch-mjcf: $py cannot import mujoco; MuJoCo check skipped, $out/COMPILED.json left as it is (set MUJOCO_PYTHON to a Python with mujoco)"
    exit 0
  fi
fi
pairs=()
while read -r pkg from to; do
  case "$to" in common/*) continue ;; esac
  pairs+=("$x/$from" "$out/$to")
done < <(list)
"$py" scripts/strip_mjcf.py --check "$out/COMPILED.json" "${pairs[@]}"
echo "fetch-mjcf: MuJoCo $("$py" -c 'import mujoco; print(mujoco.__version__)') compiles every stripped file as its source; $out/COMPILED.json written"
