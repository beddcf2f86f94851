#!/bin/sh
# V8 runs off its bytecode after removing a paused function's only breakpoint and setting another. See README.md.
# ./run.sh            node only;    ./run.sh chromium   node and headless Chromium
cd "$(dirname "$0")"
N() { echo "\$ $* node crash-node.mjs"; env "$@" SOURCE="$(cat program.js)" node --experimental-websocket crash-node.mjs 2>&1 | grep -v -i "experimental\|trace-warnings"; }
C() { echo "\$ $* node crash-chromium.mjs"; env "$@" SOURCE="$(cat program.js)" node --experimental-websocket crash-chromium.mjs 2>&1 | grep -v -i "experimental\|trace-warnings"; }
echo "## bug: pause at 2:11, remove that breakpoint, set one at 3:3, resume"
N MODE=breakpoint
echo "## control: the same without the removal"
N MODE=breakpoint KEEP=1
echo "## control: the same without the new breakpoint"
N MODE=breakpoint NOBP=1
echo "## doppel's sequence: the beforeScriptExecution instrumentation pause is removed, a breakpoint at the end is set"
MODE=instrumentation node --experimental-websocket crash-node.mjs 2>&1 | grep -v -i "experimental\|trace-warnings"
if [ "${1:-}" = chromium ]; then
  echo "## Chromium"
  C MODE=breakpoint
  C MODE=breakpoint KEEP=1
fi
