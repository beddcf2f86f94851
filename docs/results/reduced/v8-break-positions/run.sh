#!/bin/sh
# V8 break positions that move with semantically neutral changes. See README.md.
# ./run.sh            node only;    ./run.sh chromium   node and headless Chromium
cd "$(dirname "$0")"
R() { echo "\$ $*"; node --experimental-websocket ../v8-cdp/cdp.mjs "$@" 2>&1 | grep -v -i "experimental\|trace-warnings"; }
RC() { [ "${ENGINE:-}" = chromium ] || return 0; echo "\$ (chromium) $*"; node --experimental-websocket ../v8-cdp/cdp-chromium.mjs "$@" 2>&1 | grep -v -i "experimental\|trace-warnings"; }
[ "${1:-}" = chromium ] && ENGINE=chromium
echo "## 1. a statement's break position moves to a later expression when its first bytecode is elided (runs 6173, 6612, 16037)"
for p in a b; do R return-ctx-$p.js "b:5:3 b:4 start in"; RC return-ctx-$p.js "b:5:3 b:4 start in"; done
for p in a b; do R param-$p.js "b:5:16 b:5 start over"; done
echo "## 2. a code-less statement takes the position of the next bytecode (runs 7450, 13218)"
for p in a b; do R dead-end-$p.js "b:2 start over over"; RC dead-end-$p.js "b:2 start over over"; done
for p in a b c; do R dead-class-$p.js "b:2 start over over"; done
echo "## 3. a self-assignment of a register variable has no break position (run 10927)"
for p in a b; do R self-assign-$p.js "b:3 start over b:4:3"; RC self-assign-$p.js "b:3 start over b:4:3"; done
