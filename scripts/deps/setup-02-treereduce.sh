#!/usr/bin/env bash
# Installs treereduce-javascript 0.4.1 (treereduce with tree-sitter-javascript),
# the program reducer of JavaScript differential findings (issue 17 item 5:
# `doppel reduce`, `doppel diff --reduce`; C findings use C-Vise from apt.txt).
#
# Why: Debian 12 has no package of it; crates.io has it as a binary crate. On
# the 2-core development machine `cargo install` built it in about 7 minutes.
#
# What: `cargo install treereduce-javascript --version =0.4.1` into
# /opt/doppel/treereduce, linked from /usr/local/bin. Idempotent: nothing is
# done when `treereduce-javascript --version` answers 0.4.x. Without cargo the
# step says so and exits 0: JavaScript findings then keep their program
# (their reduced case notes that the reducer is missing).
set -euo pipefail
VERSION=0.4.1
if treereduce-javascript --version 2>/dev/null | grep -q ' 0\.4\.'; then
  exit 0
fi
if ! command -v cargo >/dev/null 2>&1; then
  echo "setup-treereduce: cargo is missing: JavaScript findings will not have their programs reduced" >&2
  exit 0
fi
echo "setup-treereduce: installing treereduce-javascript $VERSION into /opt/doppel/treereduce"
cargo install treereduce-javascript --version "=$VERSION" --root /opt/doppel/treereduce
ln -sf /opt/doppel/treereduce/bin/treereduce-javascript /usr/local/bin/treereduce-javascript
