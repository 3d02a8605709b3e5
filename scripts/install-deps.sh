#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs the Debian packages vtrain-explorer builds with (skips what is already there).
set -euo pipefail
packages=(cmake ninja-build g++ qt6-base-dev qt6-svg-dev libqcustomplot-dev libtbb-dev nlohmann-json3-dev libgl1-mesa-dev xvfb xauth)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "installing: ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
