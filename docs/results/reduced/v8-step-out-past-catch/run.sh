#!/bin/sh
# Step out (and, for 6, step over) past a catch that catches the exception. See README.md.
# ./run.sh            node only;    ./run.sh chromium   node and headless Chromium
cd "$(dirname "$0")"
R() { echo "\$ $*"; node --experimental-websocket ../v8-cdp/cdp.mjs "$@" 2>&1 | grep -v -i "experimental\|trace-warnings"; }
RC() { [ "${ENGINE:-}" = chromium ] || return 0; echo "\$ (chromium) $*"; node --experimental-websocket ../v8-cdp/cdp-chromium.mjs "$@" 2>&1 | grep -v -i "experimental\|trace-warnings"; }
[ "${1:-}" = chromium ] && ENGINE=chromium
echo "## 1. step out of a frame whose exception a caller catches (runs 10364, 10399)"
R stepout-throw5.js "b:11 start over";  RC stepout-throw5.js "b:11 start over"
R stepout-throw5.js "b:11 start out";   RC stepout-throw5.js "b:11 start out"
R stepout-throw2.js "b:10 start out out"
echo "## 2. the same, the exception from array destructuring in a callee's parameters (run 13529)"
R stepout-throw6.js "b:12 start over";  RC stepout-throw6.js "b:12 start over"
R stepout-throw6.js "b:12 start out";   RC stepout-throw6.js "b:12 start out"
BP_FILE=twoscripts2/test.js R twoscripts2/loader.js "b:2 start in b:3 out out"
