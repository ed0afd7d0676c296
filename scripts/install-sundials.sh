#!/usr/bin/env bash
# Installs what the optional `ida` feature (SUNDIALS IDA as catalog method `ida`) links
# against: Debian's runtime package libsundials-ida6 (SUNDIALS 6.4, 1.5 MB with its one
# dependency libgfortran5). It carries IDA with the serial vector, the dense matrix and the
# dense linear solver; driftlab declares the C interface itself, so neither the -dev
# package (which pulls in MPI, PETSc and hypre) nor bindgen/clang is needed.
# Other systems: build SUNDIALS 6.x, then set SUNDIALS_LIB_DIR (and SUNDIALS_IDA_LIB if
# the file is not libsundials_ida.so.6) when building with `--features ida`.
set -euo pipefail

lib=/usr/lib/x86_64-linux-gnu/libsundials_ida.so.6
if [ -e "$lib" ] || ldconfig -p 2>/dev/null | grep -q 'libsundials_ida\.so\.6 '; then
  echo "SUNDIALS IDA already installed"
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "error: apt-get not found; install SUNDIALS 6.x IDA yourself and set SUNDIALS_LIB_DIR" >&2
  exit 2
fi
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  sudo_cmd=(sudo)
fi
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq libsundials-ida6 >/dev/null
ldconfig -p | grep -q 'libsundials_ida\.so\.6 ' || {
  echo "error: libsundials_ida.so.6 not found after installing libsundials-ida6" >&2
  exit 1
}
echo "SUNDIALS IDA installed: $(ldconfig -p | grep 'libsundials_ida\.so\.6 ' | head -1)"
