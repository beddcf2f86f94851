#!/bin/sh
# Firefox DevTools server findings (runs 6777, 20837, 6972). See README.md.
# One headless firefox-esr per command; each takes a few seconds.
cd "$(dirname "$0")"
R() { echo "\$ $*"; python3 "$@" 2>&1; }
echo "## 1. run 6777: a hit at the position where a step ended is dropped (control, then bug)"
R rdp_driver.py gen-return.js 3:4 resume,resume,resume,resume
R rdp_driver.py gen-return.js 3:4 resume,next,resume,resume,resume
R rdp_driver.py stepin.js 2:2,5:0 resume,resume,resume,resume
R rdp_driver.py stepin.js 2:2,5:0 step,resume,resume,resume
echo "## 2. run 20837: after 'finish' across a yield, a later 'next' skips the generator's end (control, then bug)"
R rdp_driver.py gen-finish.js 3:2,5:2 resume,next,next,next
R rdp_driver.py gen-finish.js 3:2,5:2 finish,resume,next,next,next
echo "## 3. run 6972: a function grip's location.url names the previous script (flaky: some of 8 loads)"
python3 fnurl/gen-src-big.py
echo "\$ TARGET=1 fnurl.py 8 6:2 shade fnurl/pre.js fnurl/src-big.js   # control: no first-statement pause"
TARGET=1 python3 fnurl.py 8 6:2 shade fnurl/pre.js fnurl/src-big.js 2>&1
echo "\$ FIRST_STATEMENT=1 TARGET=1 fnurl.py 8 6:2 shade fnurl/pre.js fnurl/src-big.js"
FIRST_STATEMENT=1 TARGET=1 python3 fnurl.py 8 6:2 shade fnurl/pre.js fnurl/src-big.js 2>&1
echo "\$ FIRST_STATEMENT=1 TARGET=1 fnurl.py 8 6:2 shade fnurl/pre.js fnurl/src.js   # control: small source"
FIRST_STATEMENT=1 TARGET=1 python3 fnurl.py 8 6:2 shade fnurl/pre.js fnurl/src.js 2>&1
