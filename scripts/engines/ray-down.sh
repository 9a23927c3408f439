#!/usr/bin/env bash
# ray-down.sh — stops the Ray cluster ray-up.sh started, and nothing else: every process whose
# environment carries the cluster's owner mark (TORCHX_ENGINE_OWNER, ray-env.sh), which ray-up.sh
# gives `ray start` and so the GCS, raylets, dashboard, agents, workers and job drivers Ray starts
# from it, and their descendants. A Ray cluster of anyone else's on this host is left running (`ray stop` would stop every
# Ray process of the user's).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=ray-env.sh
. "$HERE/ray-env.sh"
mark="TORCHX_ENGINE_OWNER=$TORCHX_RAY_OWNER"
# This script and its subshells are none of the cluster's, even when started by a process that
# carries the mark.
unset TORCHX_ENGINE_OWNER
# The marked processes and their descendants: a process that renames itself (Ray's workers,
# agents and dashboard modules, through setproctitle) overwrites the memory /proc shows as its
# environment, so those are found as children of a marked one.
ours() {
  local p pid ppid
  local -A marked=() parent=()
  for p in /proc/[0-9]*; do
    pid="${p#/proc/}"
    [ "$pid" = "$$" ] || [ "$pid" = "$BASHPID" ] && continue
    ppid="$({ awk '{print $4}' "$p/stat"; } 2>/dev/null)" || continue
    [ -n "$ppid" ] && parent[$pid]=$ppid
    { tr '\0' '\n' <"$p/environ"; } 2>/dev/null | grep -qxF "$mark" && marked[$pid]=1
  done
  local grew=1
  while [ "$grew" = 1 ]; do
    grew=0
    for pid in "${!parent[@]}"; do
      if [ -z "${marked[$pid]:-}" ] && [ -n "${marked[${parent[$pid]}]:-}" ]; then
        marked[$pid]=1
        grew=1
      fi
    done
  done
  for pid in "${!marked[@]}"; do echo "$pid"; done
}
if [ "${1:-}" = "--list" ]; then  # which processes it would stop, one pid a line
  ours
  exit 0
fi
pids="$(ours)"
[ -n "$pids" ] || { echo "[ray-down] nothing of $TORCHX_RAY_OWNER running" >&2; exit 0; }
# shellcheck disable=SC2086
kill -TERM $pids 2>/dev/null || true
for _ in $(seq 1 50); do
  pids="$(ours)"
  [ -n "$pids" ] || break
  sleep 0.2
done
# shellcheck disable=SC2086
[ -z "$pids" ] || kill -KILL $pids 2>/dev/null || true
echo "[ray-down] stopped $TORCHX_RAY_OWNER" >&2
