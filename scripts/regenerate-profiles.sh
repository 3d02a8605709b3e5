#!/bin/sh
# SPDX-License-Identifier: MIT
# Rebuilds every shipped modeled profile from its source with `vtrain make-profile`:
# profiles/datasheets/<id>.json (vendor figures) and profiles/specs/<id>.json (derived or calibrated figures).
# tst_profiles checks that the committed profiles equal what this produces.
# usage: scripts/regenerate-profiles.sh [path/to/vtrain]   (default: build/app/cli/vtrain)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
here="$root/profiles"
vtrain=${1:-"$root/build/app/cli/vtrain"}
for sheet in "$here"/datasheets/*.json; do
    id=$(basename "$sheet" .json)
    "$vtrain" make-profile --from-datasheet "$sheet" -o "$here/$id.json"
    echo "$id (datasheet)"
done
for spec in "$here"/specs/*.json; do
    id=$(basename "$spec" .json)
    "$vtrain" make-profile "$spec" -o "$here/$id.json"
    echo "$id (spec)"
done
