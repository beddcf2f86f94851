#!/usr/bin/env bash
# Rebuild and re-run the reproduction matrix of README.md.
# Usage: ./check.sh [outdir]   (default: a fresh mktemp dir; nothing is written here)
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$(mktemp -d /tmp/paper-check.XXXXXX)}
mkdir -p "$out"
# prog  line  var  paper-level
cases="
fig1b.c 6 c 3
fig1c.c 5 b 3
fig3-llvm43893.c 6 l 2
fig4-gcc89463.c 8 i 3
fig9a-gcc92387.c 12 i 1
fig9b-gcc89792.c 12 i 3
fig9c-gcc90716.c 10 j 2
fig9d-llvm40827.c 9 b 2
fig9e-llvm43957.c 6 l_801 3
fig9f-llvm39874.c 5 i 1
fig11-llvm39869.c 8 l_30 1
"
gdbval() { # exe file line var
  timeout 60 gdb -q -batch -nx -ex "break $2:$3" -ex run -ex "print $4" -ex kill "$1" 2>&1 |
    awk -v L="$3" '/^Breakpoint 1(\.[0-9]+)?, /{hit=1; n=split($0,p,":"); at=p[n]} /^\$1 = /{sub(/^\$1 = /,""); v=$0} /No symbol/{v="<no symbol>"}
      END{ if(!hit) print "NOSTOP"; else { if(v=="") v="<none>"; if(at!=L) v=v" @line"at; print v } }'
}
lldbval() {
  timeout 60 lldb-22 -b -o "breakpoint set -f $2 -l $3" -o run -o "frame variable $4" -o kill "$1" 2>&1 |
    awk -v V="$4" -v L="$3" '/stop reason = breakpoint/{hit=1} hit && !at && /frame #0:/{ if (match($0, /\.[a-z]+:[0-9]+/)) { at=substr($0,RSTART,RLENGTH); sub(/^[^:]*:/,"",at) } }
      $0 ~ "^\\([^)]*\\) "V" = " {sub("^\\([^)]*\\) "V" = ",""); v=$0}
      /undeclared identifier/{ if(hit && v=="") v="<no such variable>" } /error:/{ if(hit && v=="") v="<err>" } /Crashed|crash|Segmentation|PLEASE submit/{c=1}
      END{ if(c) print "CRASH"; else if(!hit) print "NOSTOP"; else { if(v=="") v="<none>"; if(at!="" && at!=L) v=v" @line"at; print v } }'
}
printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' prog cc level gdb lldb line var
echo "$cases" | while read -r prog line var lvl; do
  [ -z "$prog" ] && continue
  for cc in gcc clang clang-16 clang-19; do
    for O in 0 "$lvl"; do
      exe="$out/${prog%.c}.$cc.O$O"
      ( cd "$here" && $cc -g -O$O -w "$prog" barrier/opt_me_not.c -o "$exe" ) 2>"$exe.cc.log" || { printf '%s\t%s\t-O%s\tBUILD-FAIL\n' "$prog" "$cc" "$O"; continue; }
      g=$(gdbval "$exe" "$prog" "$line" "$var")
      l=$(lldbval "$exe" "$prog" "$line" "$var")
      printf '%s\t%s\t-O%s\t%s\t%s\t%s\t%s\n' "$prog" "$cc" "$O" "$g" "$l" "$line" "$var"
    done
  done
done
# Figure 10 (Rust): opt_me_not.rs is a separate crate so the call cannot be optimised away.
if command -v rustc >/dev/null; then
  rdir="$out/fig10-rust"; mkdir -p "$rdir"; cp "$here"/fig10-rust/*.rs "$rdir"/
  for O in 0 1; do
    ( cd "$rdir" && rm -f libopt_me_not.rlib &&
      rustc --crate-type=lib opt_me_not.rs -g -C opt-level=$O &&
      rustc --edition 2018 main.rs --extern lib=libopt_me_not.rlib -g -C opt-level=$O -o main.O$O ) >"$rdir/build.O$O.log" 2>&1 ||
      { printf 'fig10-rust\trustc\topt-level=%s\tBUILD-FAIL\n' "$O"; continue; }
    g=$(gdbval "$rdir/main.O$O" main.rs 7 counter)
    l=$(lldbval "$rdir/main.O$O" main.rs 7 counter)
    printf 'fig10-rust/main.rs\trustc\topt-level=%s\t%s\t%s\t7\tcounter\n' "$O" "$g" "$l"
  done
fi
