#!/usr/bin/env bash
# Installs Debian packages for the optional components' scripts: as root directly, else
# through sudo; non-interactive, without recommended packages. Refuses (exit 2, naming
# the packages) where there is no apt-get.
# Usage: scripts/apt-install.sh PACKAGE...
set -euo pipefail
if ! command -v apt-get >/dev/null 2>&1; then
  echo "error: apt-get not found; install these packages yourself: $*" >&2
  exit 2
fi
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  sudo_cmd=(sudo)
fi
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y -qq --no-install-recommends "$@" >/dev/null
