#!/usr/bin/env bash
# Installs test262-harness (npm), pinned by crates/doppel-conform/js/package.json
# and package-lock.json, into $DOPPEL_ENGINES_DIR/test262-harness (default:
# <repo>/.engines, ignored by git). doppel-conform's harness check runs the
# emitted test262 tests with it on engine262 and node and compares its verdicts
# with doppel's. Idempotent: reinstalled only when the pin files changed (a
# stamp holds their hash), so a warm run takes well under a second.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
src="$repo/crates/doppel-conform/js"
dir=${DOPPEL_ENGINES_DIR:-$repo/.engines}/test262-harness
want=$(cat "$src/package.json" "$src/package-lock.json" | sha256sum | cut -d' ' -f1)
if [ -f "$dir/.stamp" ] && [ "$(cat "$dir/.stamp")" = "$want" ] && [ -x "$dir/node_modules/.bin/test262-harness" ]; then
  exit 0
fi
if ! command -v npm >/dev/null; then
  echo "setup-test262-harness: installing Debian's npm"
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends npm
fi
echo "setup-test262-harness: npm ci into $dir"
mkdir -p "$dir"
cp "$src/package.json" "$src/package-lock.json" "$dir/"
(cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
echo "$want" > "$dir/.stamp"
