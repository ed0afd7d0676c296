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
command -v apt-get >/dev/null 2>&1 \
  || echo "note: without apt-get, build SUNDIALS 6.x IDA yourself and set SUNDIALS_LIB_DIR" >&2
"$(dirname "$0")/apt-install.sh" libsundials-ida6
ldconfig -p | grep -q 'libsundials_ida\.so\.6 ' || {
  echo "error: libsundials_ida.so.6 not found after installing libsundials-ida6" >&2
  exit 1
}
echo "SUNDIALS IDA installed: $(ldconfig -p | grep 'libsundials_ida\.so\.6 ' | head -1)"
