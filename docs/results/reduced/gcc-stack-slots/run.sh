#!/bin/sh
# The false positive of runs 2058/4842 (c-testsuite 00143.c), reduced. See README.md.
# b/p.c is a/p.c plus the no-op `count = count;` in the loop (what
# insert_no_op generated before it required a definitely assigned variable).
# GCC -O0 drops the self-assignment, but it allocates stack slots in order of
# first use, so count and n swap slots: at the line before `count = 39;`
# count shows other garbage. Both debuggers are right both times.
set -e
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for d in a b; do
  gcc -O0 -g -o "$tmp/$d" $d/p.c
  line=$(grep -n 'count = 39;' $d/p.c | cut -d: -f1)
  echo "== $d (break at line $line)"
  gdb -q -batch -ex "break p.c:$line" -ex run -ex "info locals" -ex "p &count" -ex "p &n" "$tmp/$d" 2>&1 | grep -E '^(count|n|\$)'
  echo "-- lldb-22"
  lldb-22 -b -o "breakpoint set -f p.c -l $line" -o run -o "frame variable" -o "frame variable &count &n" "$tmp/$d" 2>&1 | grep -E '^\((int|int \*)\)'
done
echo "== objdump -d main, a vs b: the same code, count and n in swapped slots"
for d in a b; do gcc -O0 -g -c -o "$tmp/$d.o" $d/p.c; objdump -d --no-show-raw-insn "$tmp/$d.o" | sed -n '/<main>:/,$p' > "$tmp/$d.s"; done
diff "$tmp/a.s" "$tmp/b.s" || true
