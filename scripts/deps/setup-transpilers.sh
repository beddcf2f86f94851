#!/usr/bin/env bash
# Installs the transpilers doppel-engines runs as tools under test (issue 15
# part 7c: Babel with preset-env, SWC, esbuild, TypeScript), pinned by
# crates/doppel-engines/js-transpilers/package-lock.json, into
# $DOPPEL_ENGINES_DIR/transpilers/node_modules (default DOPPEL_ENGINES_DIR:
# <repo>/.engines, ignored by git). Needs Node 20 (setup-00-node.sh) and npm.
# Idempotent: reinstalled only when the pin files changed (a stamp holds
# their hash). Measured on 2026-12-02: 131 packages, 62 MiB, about 10 s.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
src="$repo/crates/doppel-engines/js-transpilers"
dir=${DOPPEL_ENGINES_DIR:-$repo/.engines}
mkdir -p "$dir/transpilers"

if ! command -v npm >/dev/null; then
  echo "setup-transpilers: installing Debian's npm"
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends npm
fi

pins=("$src/package.json" "$src/package-lock.json")
want=$(cat "${pins[@]}" | sha256sum | cut -d' ' -f1)
if [ -f "$dir/transpilers/.stamp" ] && [ "$(cat "$dir/transpilers/.stamp")" = "$want" ]; then
  echo "setup-transpilers: up to date in $dir/transpilers"
  exit 0
fi
echo "setup-transpilers: npm ci into $dir/transpilers"
cp "${pins[@]}" "$dir/transpilers/"
(cd "$dir/transpilers" && npm ci --no-audit --no-fund --loglevel=error)
echo "$want" > "$dir/transpilers/.stamp"
echo "setup-transpilers: transpilers in $dir/transpilers"
