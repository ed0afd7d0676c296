#!/usr/bin/env bash
# Refresh datasets/robots/ from PyPI's example-robot-data (issue 28). Downloads the pinned
# wheel into a temporary folder (removed at exit), checks its SHA-256, extracts the
# selected robots, strips them to links, inertials and joints (scripts/strip_robot.py:
# no meshes) and writes them with their licences and SHA256SUMS. The output is committed:
# the project's commands never call this script and need no network.
# Usage: scripts/fetch-robots.sh
set -euo pipefail
cd "$(dirname "$0")/.."
version=6.0.0
wheel=example_robot_data-6.0.0-0-py3-none-any.whl
sha=424092a8093411ac2cd4ccc0572382bfc6b5eb4833aa984ef5e671dd67cd0a6e
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 -m pip download -q --disable-pip-version-check "example-robot-data==$version" --no-deps -d "$tmp"
got=$(sha256sum "$tmp/$wheel" | cut -d' ' -f1)
if [ "$got" != "$sha" ]; then
  echo "fetch-robots: $wheel has SHA-256 $got, expected $sha; refusing to use it" >&2
  exit 1
fi
(cd "$tmp" && python3 -m zipfile -e "$wheel" x)
src="$tmp/x/cmeel.prefix/share/example-robot-data/robots"
out=datasets/robots
mkdir -p "$out"
# source path in the wheel → output name
while read -r from to; do
  header="example-robot-data $version (PyPI wheel SHA-256 $sha), robots/$from; stripped of visual, collision and simulator elements by scripts/strip_robot.py"
  python3 scripts/strip_robot.py "$src/$from" "$out/$to" "$header"
done <<'LIST'
double_pendulum_description/urdf/double_pendulum.urdf double-pendulum.urdf
ur_description/urdf/ur5_robot.urdf ur5.urdf
panda_description/urdf/panda.urdf panda.urdf
solo_description/robots/solo12.urdf solo12.urdf
g1_description/urdf/g1_29dof_rev_1_0.urdf g1.urdf
cassie_description/robots/cassie_v2.sdf cassie.sdf
LIST
cp "$tmp/x/example_robot_data-$version.dist-info/licenses/LICENSE" "$out/LICENSE-example-robot-data"
cp "$src/panda_description/LICENSE" "$out/LICENSE-panda"
# Cassie's permission notice is the opening comment of its SDF: it travels with the copy.
python3 -c 'import re,sys; t=open(sys.argv[1]).read(); print(re.search(r"<!--(.*?)-->", t, re.S).group(1).strip())' \
  "$src/cassie_description/robots/cassie_v2.sdf" > "$out/LICENSE-cassie"
(cd "$out" && sha256sum ./*.urdf ./*.sdf > SHA256SUMS)
# and the sources' own hashes, for the provenance table in datasets/robots/README.md
while read -r from to; do
  echo "$(sha256sum "$src/$from" | cut -d' ' -f1)  robots/$from"
done > "$out/SOURCES.sha256" <<'LIST'
double_pendulum_description/urdf/double_pendulum.urdf
ur_description/urdf/ur5_robot.urdf
panda_description/urdf/panda.urdf
solo_description/robots/solo12.urdf
g1_description/urdf/g1_29dof_rev_1_0.urdf
cassie_description/robots/cassie_v2.sdf
LIST
echo "fetch-robots: $(ls "$out"/*.urdf "$out"/*.sdf | wc -l) robots in $out"
