#!/bin/sh
# LLDB findings on the repo's corpus programs, with GDB as the control. See README.md.
# Builds corpus/c/bitwise.c and corpus/c/inline.c with gcc -O0 -g into a temporary directory.
set -e
here=$(cd "$(dirname "$0")" && pwd)
corpus="$here/../../../../corpus/c"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gcc -O0 -g -o "$tmp/bitwise" "$corpus/bitwise.c"
gcc -O0 -g -o "$tmp/inline" "$corpus/inline.c"
L() { echo "\$ lldb-22 -b -s $1 $2"; lldb-22 -b -s "$here/$1" "$tmp/$2" 2>&1 | grep -E "^\(lldb\)|stop reason|frame #0|exited with|^\(int\)|edi =|^->" || true; }
G() { echo "\$ gdb -batch -x $1 $2"; gdb -q -batch -x "$here/$1" "$tmp/$2" 2>&1 | grep -E "^(\+[a-z]|Breakpoint [0-9],|[0-9]+\s|v = |edi |=> |\[Inferior)" || true; }
echo "## 1. re-stop: a continue after a step onto a breakpoint stops at that breakpoint again, without moving"
L restop.lldb bitwise
G restop.gdb bitwise
echo "## 2. interrupted step: a continue completes a step over that a breakpoint interrupted (reason step)"
L interrupted-step.lldb bitwise
G interrupted-step.gdb bitwise
echo "## 3. one-line function: a breakpoint on its line stops before the prologue; v reads garbage (lldb) vs the argument (gdb)"
L inline.lldb inline
G inline.gdb inline
