# Sourced by the MuJoCo scripts (mujoco-peer.sh, mjcf-oracle.sh, mujoco-loops.sh): the
# project's MuJoCo environment from PyPI, made once and shared. `mujoco_venv TAG` makes
# ${MUJOCO_VENV:-${CARGO_TARGET_DIR:-target}/mujoco-venv} with mujoco (≥ 3.1, for
# mj_jacDot) and numpy when it lacks them — on a bare Debian first python3 and python3-venv
# from the Debian packages — and sets `python` to its interpreter; TAG prefixes messages.
# Exits 2 when it cannot. Starts no service.
mujoco_venv() {
  local tag=$1
  local venv="${MUJOCO_VENV:-${CARGO_TARGET_DIR:-target}/mujoco-venv}"
  local check="import mujoco, numpy, sys; sys.exit(not hasattr(mujoco, 'mj_jacDot'))"
  if ! "$venv/bin/python" -c "$check" 2>/dev/null; then
    echo "$tag: creating $venv with mujoco and numpy from PyPI"
    # A bare Debian has neither python3 nor its venv module (python3-venv carries ensurepip).
    if ! python3 -c "import venv, ensurepip" 2>/dev/null; then
      echo "$tag: installing python3 and python3-venv (Debian packages)"
      "$(dirname "${BASH_SOURCE[0]}")/apt-install.sh" python3 python3-venv
    fi
    rm -rf "$venv"
    python3 -m venv "$venv" || { echo "$tag: python3 -m venv $venv failed" >&2; exit 2; }
    "$venv/bin/pip" install -q --disable-pip-version-check "mujoco>=3.1,<5" "numpy>=1.24" \
      || { echo "$tag: pip install mujoco numpy into $venv failed" >&2; exit 2; }
    "$venv/bin/python" -c "$check" \
      || { echo "$tag: $venv: \`import mujoco\` fails after the install (see above)" >&2; exit 2; }
  fi
  python=$(cd "$venv/bin" && pwd)/python
}
