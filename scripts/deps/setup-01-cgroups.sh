#!/usr/bin/env bash
# Mounts the cgroup file systems when none is mounted, so that doppel can confine
# programs under test (pids.max, memory limit, the group killed at the end of a
# run: docs/reliability.md) and its tests of that confinement run.
#
# Why: a machine booted by systemd has them (cgroup v2 at /sys/fs/cgroup, or a
# hybrid layout), but a container or a chroot often does not: /sys/fs/cgroup is
# then empty, doppel falls back to rlimits (and says so), and the tests that
# check the cgroup confinement fail. This is the case on the fresh Debian 12
# root of ../shared/tools/fresh-machine-check (a bind mount of /sys, without its
# submounts).
#
# What: the kernel's own layout, read from /proc/cgroups. Controllers bound to a
# v1 hierarchy (hierarchy id > 0) are mounted as those hierarchies (controllers
# sharing one id together, as the kernel requires) under a tmpfs at
# /sys/fs/cgroup, with cgroup v2 at /sys/fs/cgroup/unified (the hybrid layout);
# when every controller is v2's, cgroup v2 is mounted at /sys/fs/cgroup.
# Idempotent: nothing is done when a cgroup file system is mounted already.
set -euo pipefail
if grep -qE ' - cgroup2? ' /proc/self/mountinfo; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "setup-cgroups: no cgroup file system is mounted and this is not root: doppel will use rlimits only" >&2
  exit 0
fi
mkdir -p /sys/fs/cgroup
# hierarchy id -> controllers, for enabled controllers on a v1 hierarchy
declare -A v1=()
while read -r name hier _ enabled; do
  case "$name" in \#*) continue ;; esac
  [ "$enabled" = 1 ] && [ "$hier" != 0 ] || continue
  v1[$hier]=${v1[$hier]:+${v1[$hier]},}$name
done </proc/cgroups
if [ ${#v1[@]} -eq 0 ]; then
  mount -t cgroup2 cgroup2 /sys/fs/cgroup
  echo "setup-cgroups: mounted cgroup v2 at /sys/fs/cgroup"
  exit 0
fi
mount -t tmpfs -o mode=755 cgroup /sys/fs/cgroup
for h in "${!v1[@]}"; do
  dir=/sys/fs/cgroup/${v1[$h]}
  mkdir -p "$dir"
  mount -t cgroup -o "${v1[$h]}" cgroup "$dir"
done
mkdir -p /sys/fs/cgroup/unified
mount -t cgroup2 cgroup2 /sys/fs/cgroup/unified
echo "setup-cgroups: mounted the v1 hierarchies ${v1[*]} and cgroup v2 at /sys/fs/cgroup/unified"
