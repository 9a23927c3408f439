#!/usr/bin/env bash
# bystander_cluster.sh start|check|stop — a Ray cluster of "the user's own" beside the project's
# test cluster, to prove that the test command leaves it alone (issue 52): a one-node head on Ray's
# defaults (GCS 6379, dashboard 8265, /tmp/ray), as `ray start --head` makes it, with a job running.
#   start  starts it and submits the job, unless a Ray dashboard answers on 8265 already (then a
#          user's real cluster is the bystander, and is only watched: never stopped here)
#   check  exits 1 unless every process it had and its job are still there
#   stop   stops what `start` started (ray-down.sh with its owner mark)
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
REPO="$(cd "$HERE/../../.." && pwd)"
VENV="${RAY_VENV:-/var/cache/engines/ray-venv}"
STATE="${TORCHX_BYSTANDER_STATE:-/tmp/torchx-bystander}"
DASH=127.0.0.1:8265
JOB=torchx-bystander-job
log() { echo "[bystander] $*" >&2; }
up() { curl -fsS -m 2 "http://$DASH/api/version" >/dev/null 2>&1; }
MARK=torchx-bystander
# The processes of the bystander this script started (its owner mark, as ray-down.sh finds them),
# or, for a cluster that was there already, those whose command line names Ray's default temp dir.
ray_pids() {
  local p
  if [ -f "$STATE/started" ]; then
    TORCHX_RAY_OWNER=$MARK bash "$REPO/scripts/engines/ray-down.sh" --list
    return 0
  fi
  for p in /proc/[0-9]*; do
    { tr '\0' '\n' <"$p/cmdline"; } 2>/dev/null | grep -qE "^(--[a-z_-]*=)?/tmp/ray(/|$)" && echo "${p#/proc/}"
  done
  return 0
}

case "${1:-}" in
  start)
    mkdir -p "$STATE"
    if up; then
      log "a Ray cluster answers on $DASH already: it is the bystander (watched, not stopped)"
      rm -f "$STATE/started"
    else
      TORCHX_ENGINE_OWNER=$MARK RAY_USAGE_STATS_ENABLED=0 "$VENV/bin/ray" start --head --num-cpus 1 --object-store-memory $((128 << 20)) \
        --include-dashboard true --dashboard-host 127.0.0.1 --disable-usage-stats >/dev/null
      for _ in $(seq 1 60); do up && break; sleep 1; done
      up || { log "its dashboard did not answer on $DASH"; exit 1; }
      "$VENV/bin/ray" job submit --address "http://$DASH" --no-wait --submission-id "$JOB" -- sleep 3600 >/dev/null
      for _ in $(seq 1 60); do  # running, so that its command is among the processes watched
        curl -fsS -m 5 "http://$DASH/api/jobs/$JOB" 2>/dev/null | grep -q '"status": *"RUNNING"' && break
        sleep 1
      done
      touch "$STATE/started"
    fi
    # The long-lived ones only: the GCS, raylet and dashboard, and the job's command (the raylet
    # ends idle workers of its own accord).
    for pid in $(ray_pids); do
      if { tr '\0' ' ' <"/proc/$pid/cmdline"; } 2>/dev/null | grep -qE "gcs_server|raylet/raylet|dashboard/dashboard.py|^sleep 3600"; then
        echo "$pid"
      fi
    done | sort >"$STATE/pids"
    log "up on $DASH: $(wc -l <"$STATE/pids") processes"
    ;;
  check)
    [ -f "$STATE/pids" ] || { log "not started"; exit 1; }
    up || { log "its dashboard on $DASH no longer answers"; exit 1; }
    gone=""
    while read -r pid; do
      [ -d "/proc/$pid" ] || gone+=" $pid"
    done <"$STATE/pids"
    [ -z "$gone" ] || { log "its processes were stopped:$gone"; exit 1; }
    if [ -f "$STATE/started" ]; then
      status="$(curl -fsS -m 5 "http://$DASH/api/jobs/$JOB" | python3 -c 'import json,sys; print(json.load(sys.stdin)["status"])')"
      [ "$status" = RUNNING ] || { log "its job is $status, not RUNNING"; exit 1; }
    fi
    log "untouched: $(wc -l <"$STATE/pids") processes${status:+, its job $status}"
    ;;
  stop)
    # Whatever carries its mark, even from a start that failed half-way (a user's own cluster
    # never does).
    TORCHX_RAY_OWNER=$MARK bash "$REPO/scripts/engines/ray-down.sh"
    rm -rf "$STATE"
    ;;
  *)
    echo "usage: $0 start|check|stop" >&2
    exit 2
    ;;
esac
