#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Packs a built tree as a .deb, installs it, and runs the installed programs the way a new user would:
# from a folder outside the source tree, on an installed example. Fails on the first thing that is wrong.
# Removes the package again on exit (VTRAIN_KEEP_PACKAGE=1 keeps it).
#   scripts/test-package.sh [BUILD_DIR]    (default: build; it must be built already)
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(realpath "${1:-build}")
[ -f "$build/CPackConfig.cmake" ] || { echo "test-package: $build/CPackConfig.cmake missing (configure and build first)" >&2; exit 1; }

SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
fail() { echo "test-package: FAILED: $*" >&2; exit 1; }
step() { echo "== $*"; }

# dpkg-shlibdeps (dpkg-dev) computes the package's Depends; without it CPack quietly leaves them out.
if ! command -v dpkg-shlibdeps >/dev/null; then
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends dpkg-dev
fi

work=$(mktemp -d /tmp/vtrain-package.XXXXXX)
installed=0
cleanup() {
  if [ "$installed" = 1 ] && [ "${VTRAIN_KEEP_PACKAGE:-0}" != 1 ]; then
    $SUDO dpkg -r vtrain-explorer >/dev/null || echo "test-package: could not remove vtrain-explorer" >&2
  fi
  rm -rf "$work"
}
trap cleanup EXIT

step "cpack"
cpack --config "$build/CPackConfig.cmake" -B "$work/pkg" >"$work/cpack.log" 2>&1 || { cat "$work/cpack.log" >&2; fail "cpack"; }
deb=$(ls "$work"/pkg/vtrain-explorer_*.deb)
dpkg-deb -I "$deb"

step "contents"
depends=$(dpkg-deb -f "$deb" Depends)
for dep in libqt6widgets6 libqt6svg6 libqcustomplot qt6-qpa-plugins libtbb; do
  [[ "$depends" == *"$dep"* ]] || fail "Depends lacks $dep: $depends"
done
dpkg-deb -c "$deb" | awk '{print $6}' >"$work/files"
for f in ./usr/bin/vtrain ./usr/bin/vtrain-explorer ./usr/share/vtrain/profiles/a100-sxm4-80gb.json \
         ./usr/share/vtrain/examples/gpt-1.3b.json ./usr/share/applications/io.github.vtrain.Explorer.desktop \
         ./usr/share/metainfo/io.github.vtrain.Explorer.metainfo.xml \
         ./usr/share/icons/hicolor/scalable/apps/io.github.vtrain.Explorer.svg; do
  grep -qx -- "$f" "$work/files" || fail "$f is not in the package"
done
! grep -E '^\./usr/bin/(tst_|bench)' "$work/files" || fail "tests or benchmarks are in the package"

step "install"
installed=1 # from here on, remove it on exit even if half-installed
if ! $SUDO dpkg -i "$deb"; then
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get -f install -y -qq --no-install-recommends || fail "installing the dependencies"
fi
dpkg -s vtrain-explorer | grep -q '^Status: install ok installed' || fail "vtrain-explorer is not installed"

# A scratch home: no user profiles, settings or autosave of the person running this.
mkdir -m 700 "$work/home"
cd "$work/home"
export HOME="$work/home" XDG_CONFIG_HOME="$work/home/.config" XDG_RUNTIME_DIR="$work/home"
unset VTRAIN_PROFILE_PATH

step "vtrain --version"
/usr/bin/vtrain --version | tee "$work/out"
grep -Eq '^vtrain [0-9.]+ \(built .*, (release|debug)\)$' "$work/out" || fail "vtrain --version"

step "vtrain profiles"
/usr/bin/vtrain profiles
/usr/bin/vtrain profiles --json > "$work/out"
# Every profile comes from the installed share/vtrain/profiles, none from the source tree (the table
# has no file column; the JSON names each profile's file).
grep '"file":' "$work/out" > "$work/files" || true
[ "$(grep -vc '"/usr/share/vtrain/profiles/' "$work/files")" = 0 ] || fail "a profile came from outside /usr/share"
[ "$(wc -l < "$work/files")" -ge 4 ] || fail "fewer than 4 installed profiles"

step "vtrain simulate"
cp /usr/share/vtrain/examples/gpt-1.3b.json .
/usr/bin/vtrain simulate gpt-1.3b.json | tee "$work/out"
grep -q '^iteration time' "$work/out" || fail "vtrain simulate printed no iteration time"

step "vtrain-explorer (offscreen)"
/usr/bin/vtrain-explorer --version
# --screenshot runs the sweep, selects a plan, grabs the window and quits.
QT_QPA_PLATFORM=offscreen timeout 600 /usr/bin/vtrain-explorer --screenshot "$work/shots" gpt-1.3b.json \
  || fail "vtrain-explorer exited with status $?"
[ "$(head -c 8 "$work/shots/main-window.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] \
  || fail "vtrain-explorer wrote no main-window.png"

# Optional linters, where installed.
if command -v desktop-file-validate >/dev/null; then
  desktop-file-validate /usr/share/applications/io.github.vtrain.Explorer.desktop || fail "desktop entry"
fi
if command -v appstreamcli >/dev/null; then
  appstreamcli validate --no-net /usr/share/metainfo/io.github.vtrain.Explorer.metainfo.xml || fail "AppStream metadata"
fi
echo "test-package: OK ($(basename "$deb"))"
