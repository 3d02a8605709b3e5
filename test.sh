#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Sets up, builds and runs every test (CTest). Exit status 0 only if all pass.
set -euo pipefail
cd "$(dirname "$0")"
scripts/install-deps.sh
scripts/build.sh
# Benchmarks (label "bench") measure and print; they are run by hand, not as tests.
ctest --test-dir build --output-on-failure -j "$(nproc)" -LE bench
