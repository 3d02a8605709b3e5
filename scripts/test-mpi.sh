#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The MPI build (docs/mpi.md): installs Open MPI if missing, configures build-mpi/ (or
# $VTRAIN_MPI_BUILD_DIR) with -DVTRAIN_WITH_MPI=ON and no GUI, builds what the tests labelled mpi run
# (the CLI, the core shard test) and runs them: mpirun -n 2, oversubscribed, against a single process.
# ./test.sh does not need MPI; this script is the one that does.
set -euo pipefail
cd "$(dirname "$0")/.."
packages=(libopenmpi-dev openmpi-bin)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}" >&2
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
build="${VTRAIN_MPI_BUILD_DIR:-build-mpi}"
launcher=()
command -v ccache >/dev/null 2>&1 && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache) && export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
cmake -S . -B "$build" -G Ninja "${launcher[@]}" -DCMAKE_BUILD_TYPE=Release -DVTRAIN_WITH_MPI=ON -DVTRAIN_BUILD_GUI=OFF -DVTRAIN_BUILD_BENCH=OFF >/dev/null
cmake --build "$build" -j "$(nproc)" --target vtrain tst_explorer_shard
# Open MPI refuses to run as root (CI does) unless told twice; the tests set it too.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ctest --test-dir "$build" -L mpi --output-on-failure
