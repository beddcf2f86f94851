#!/usr/bin/env python3
"""Writes src-big.js next to this script: src.js followed by 400 one-line filler
functions (about 16 KB). Firefox's wrong function-grip URL was seen with this size
of source and not with src.js alone. Deterministic; run.sh calls it."""
import os

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "src.js")) as f:
    text = f.read()
text += "".join(f"function filler{i}(a) {{ return a + {i}; }}\n" for i in range(400))
with open(os.path.join(here, "src-big.js"), "w") as f:
    f.write(text)
