#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Sets up, builds and runs vtrain-explorer on the default scenario (MT-NLG 530B on A100). Without a
# display it runs the command-line explorer on the same scenario instead.
set -euo pipefail
cd "$(dirname "$0")"
scripts/install-deps.sh
scripts/build.sh
if [ -x build/app/gui/vtrain-explorer ] && [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  exec build/app/gui/vtrain-explorer "$@"
fi
echo "(no display: running the command-line tool on examples/mt-nlg-530b.json)" >&2
if build/app/cli/vtrain explore --help >/dev/null 2>&1; then
  exec build/app/cli/vtrain explore examples/mt-nlg-530b.json "$@"
fi
exec build/app/cli/vtrain simulate examples/mt-nlg-530b.json "$@"
