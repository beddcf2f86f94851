#!/usr/bin/env bash
# Installs the npm and PyPI JavaScript engines doppel-engines drives, pinned by
# crates/doppel-engines/js/package-lock.json and crates/doppel-engines/python/
# requirements*.txt, into $DOPPEL_ENGINES_DIR (default: <repo>/.engines, ignored
# by git):
#   npm/node_modules   engine262, quickjs-emscripten, hermes-engine-cli, acorn
#   venv               mini-racer (V8 14), pythonmonkey (SpiderMonkey 136), boabem (Boa)
#   venv-quickjs-ng    quickjs-ng (its module name clashes with PyPI quickjs)
# The Debian engines (jsc, js102, duk, njs, mujs, rhino) are in scripts/deps/apt.txt.
# Idempotent: each part is reinstalled only when its pin file changed (a stamp
# holds the pin file's hash), so a warm run takes well under a second.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
src="$repo/crates/doppel-engines"
dir=${DOPPEL_ENGINES_DIR:-$repo/.engines}
mkdir -p "$dir"

stamp_ok() { # stamp-file pin-files... : whether the stamp matches the pins
  local want
  want=$(cat "${@:2}" | sha256sum | cut -d' ' -f1)
  [ -f "$1" ] && [ "$(cat "$1")" = "$want" ]
}
stamp_write() { cat "${@:2}" | sha256sum | cut -d' ' -f1 > "$1"; }

# npm: the machine's Node.js may come without it (Debian's nodejs package has
# no npm; Debian's npm package brings it).
if ! command -v npm >/dev/null; then
  echo "setup-engines: installing Debian's npm"
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends npm
fi

# npm
if ! stamp_ok "$dir/npm/.stamp" "$src/js/package.json" "$src/js/package-lock.json"; then
  echo "setup-engines: npm ci into $dir/npm"
  mkdir -p "$dir/npm"
  cp "$src/js/package.json" "$src/js/package-lock.json" "$dir/npm/"
  (cd "$dir/npm" && npm ci --no-audit --no-fund --loglevel=error)
  stamp_write "$dir/npm/.stamp" "$src/js/package.json" "$src/js/package-lock.json"
fi

# PyPI, one venv per requirements file
venv() { # name requirements-file
  local v="$dir/$1" req="$2"
  if ! stamp_ok "$v/.stamp" "$req"; then
    echo "setup-engines: pip install -r $(basename "$req") into $v"
    [ -x "$v/bin/python" ] || python3 -m venv "$v"
    "$v/bin/python" -m pip install --quiet --disable-pip-version-check -r "$req"
    stamp_write "$v/.stamp" "$req"
  fi
}
venv venv "$src/python/requirements.txt"
venv venv-quickjs-ng "$src/python/requirements-quickjs-ng.txt"
echo "setup-engines: engines in $dir"
