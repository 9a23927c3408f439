#!/usr/bin/env bash
# ray-up.sh — a real Ray cluster of two nodes on THIS host, for the integration tests of the
# launcher's `ray` scheduler (which speaks only Ray's Job Submission REST API).
#
# What you get (defaults; ray-env.sh has the addresses):
#   * a virtual env $RAY_VENV (default /var/cache/engines/ray-venv) with PyPI ray[default]==$RAY_VERSION
#     and the CPU build of torch==2.13.0 (with numpy) the test jobs import (pip takes it from this machine's disk);
#     jobs run with this env's python3 first on PATH.
#   * a head node (GCS on 127.0.0.1:6390, the dashboard and its job server on 127.0.0.1:8275) and
#     $RAY_WORKERS more nodes (default 1), each a raylet of its own with $RAY_CPUS_PER_NODE CPUs
#     (default 2) and a "torchx_node_<i>" resource, so a placement group really spreads over nodes
#     (they share one host: their node ids differ, their address does not).
#   * every port and the temp dir (/tmp/torchx-ray) its own, none of Ray's defaults: a cluster a
#     user started with `ray start --head` runs beside it untouched. The script refuses when one of
#     its ports is taken by a process that is not this cluster's, naming the process.
#   * usage statistics off, profiling on (the dashboard's stack traces: `torchx debug stack`); each node's object store capped at $RAY_OBJECT_STORE_MB (default 256) and
#     its `memory` resource at $RAY_MEMORY_MB (default 4096), to fit beside the other suites.
#
# Idempotent: exits 0 at once when the dashboard answers and all nodes are alive; starts only the
# worker nodes that were lost when the head answers. Loopback only.
# Prints the Ray version. Stop with ray-down.sh (this cluster's processes only). Timings on the
# 2-core box: install ~3 min (once), cluster up ~15 s.
set -euo pipefail
log() { echo "[ray-up] $*" >&2; }
trap 'echo "[ray-up] ERROR: command failed at line $LINENO" >&2' ERR

HERE="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=ray-env.sh
. "$HERE/ray-env.sh"
RAY_VERSION="${RAY_VERSION:-2.60.0}"
VENV="$TORCHX_RAY_VENV"
GCS_PORT="$TORCHX_RAY_GCS_PORT"
DASH_PORT="$TORCHX_RAY_DASHBOARD_PORT"
WORKERS="${RAY_WORKERS:-1}"
CPUS="${RAY_CPUS_PER_NODE:-2}"
OBJ_MB="${RAY_OBJECT_STORE_MB:-256}"
MEM_MB="${RAY_MEMORY_MB:-4096}"
TEMP="$TORCHX_RAY_TEMP"
export RAY_USAGE_STATS_ENABLED=0
# The dashboard's stack traces and CPU profiles (what `torchx debug stack`/`profile` ask each node's
# agent for) are off unless the head starts with this (Ray >= 2.5x; loopback only here).
export RAY_DASHBOARD_ENABLE_PROFILING=1
export PATH="$VENV/bin:$PATH"
# `ray start` runs with the cluster's owner mark, which every process of the cluster inherits
# (ray-down.sh finds them by it); this script's other commands do not carry it.
ray() { TORCHX_ENGINE_OWNER="$TORCHX_RAY_OWNER" command ray "$@"; }

# ---------------------------------------------------------------- the virtual env
if ! "$VENV/bin/python3" -c "import ray, torch, numpy, sys; sys.exit(ray.__version__ != '$RAY_VERSION')" 2>/dev/null; then
  log "installing ray[default]==$RAY_VERSION and torch==2.13.0 into $VENV"
  mkdir -p "$(dirname "$VENV")"
  [ -x "$VENV/bin/python3" ] || python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check "ray[default]==$RAY_VERSION" torch==2.13.0 numpy 2>&1 |
    grep -v "^WARNING: Location" >&2 || true
  "$VENV/bin/python3" -c "import ray, torch" || { log "ray or torch did not install into $VENV"; exit 1; }
fi
log "ray $("$VENV/bin/python3" -c 'import ray; print(ray.__version__)') in $VENV"

# ---------------------------------------------------------------- the cluster
# Ray pushes the GCS's error messages (a node marked dead, say) to a driver's stdout: the count is
# taken from its marked line only.
alive_nodes() {
  local out
  out="$("$VENV/bin/python3" - "$GCS_PORT" <<'EOF' 2>/dev/null
import sys, logging
import ray
ray.init(address=f"127.0.0.1:{sys.argv[1]}", logging_level=logging.ERROR, log_to_driver=False)
print("alive_nodes=%d" % sum(1 for n in ray.nodes() if n["Alive"]))
EOF
)" || true
  out="$(sed -n 's/^alive_nodes=\([0-9][0-9]*\)$/\1/p' <<<"$out" | tail -n1)"
  echo "${out:-0}"
}
dashboard_up() { curl -fsS -m 2 "http://127.0.0.1:$DASH_PORT/api/version" >/dev/null 2>&1; }

common=(--num-cpus "$CPUS" --object-store-memory $((OBJ_MB * 1024 * 1024)) --memory $((MEM_MB * 1024 * 1024))
  --node-ip-address 127.0.0.1 --disable-usage-stats --temp-dir "$TEMP")
# Node i's own ports (ray-env.sh).
node_ports() {
  local i=$1
  echo --dashboard-agent-listen-port $((52465 + 2 * i)) --dashboard-agent-grpc-port $((52466 + 2 * i)) \
    --object-manager-port $((8176 + 2 * i)) --node-manager-port $((8177 + 2 * i)) \
    --metrics-export-port $((8380 + i)) --runtime-env-agent-port $((8390 + i)) \
    --min-worker-port $((20000 + 1000 * i)) --max-worker-port $((20999 + 1000 * i))
}
# Each port this cluster listens on must be free or this cluster's: another process on one (a
# user's own Ray, say) is named and left alone.
check_ports() {
  local port pid
  for port in "$GCS_PORT" "$DASH_PORT" "$TORCHX_RAY_CLIENT_PORT"; do
    pid="$(ss -Hltnp "sport = :$port" 2>/dev/null | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | head -n1)"
    [ -n "$pid" ] || continue
    if ! { tr '\0' '\n' <"/proc/$pid/environ"; } 2>/dev/null | grep -qxF "TORCHX_ENGINE_OWNER=$TORCHX_RAY_OWNER"; then
      log "port $port is taken by pid $pid ($(tr '\0' ' ' <"/proc/$pid/cmdline" | cut -c1-120)), not by this cluster;" \
        "set RAY_GCS_PORT, RAY_DASHBOARD_PORT or RAY_CLIENT_SERVER_PORT to free ones"
      exit 1
    fi
  done
}
want=$((WORKERS + 1))
restart=1
if dashboard_up; then
  have="$(alive_nodes)"
  if [ "$have" = "$want" ]; then
    log "already up: $want nodes, dashboard http://127.0.0.1:$DASH_PORT"
    exit 0
  fi
  if [ "$have" -ge 1 ] && [ "$have" -lt "$want" ]; then
    # The head answers but worker nodes were lost (a fault test kills one): start only those again.
    for i in $(seq "$have" "$WORKERS"); do
      log "worker node $i (again)"
      # shellcheck disable=SC2046
      ray start --address "127.0.0.1:$GCS_PORT" --resources "{\"torchx_node_$i\": 1}" "${common[@]}" \
        $(node_ports "$i") >/dev/null
    done
    restart=0
  fi
fi
if [ "$restart" = 1 ]; then
  bash "$HERE/ray-down.sh" 2>/dev/null  # what is left of this cluster only
  check_ports
  mkdir -p "$TEMP"

  log "head: gcs 127.0.0.1:$GCS_PORT, dashboard 127.0.0.1:$DASH_PORT, temp dir $TEMP"
  # shellcheck disable=SC2046
  ray start --head --port "$GCS_PORT" --dashboard-host 127.0.0.1 --dashboard-port "$DASH_PORT" --include-dashboard true \
    --ray-client-server-port "$TORCHX_RAY_CLIENT_PORT" --resources '{"torchx_node_0": 1}' "${common[@]}" \
    $(node_ports 0) >/dev/null
  for i in $(seq 1 "$WORKERS"); do
    log "worker node $i"
    # shellcheck disable=SC2046
    ray start --address "127.0.0.1:$GCS_PORT" --resources "{\"torchx_node_$i\": 1}" "${common[@]}" \
      $(node_ports "$i") >/dev/null
  done
fi

for _ in $(seq 1 120); do
  if dashboard_up && [ "$(alive_nodes)" = "$want" ]; then
    log "up: $want nodes, dashboard http://127.0.0.1:$DASH_PORT"
    exit 0
  fi
  sleep 1
done
log "the cluster did not come up within 120 s (logs: $TEMP/session_latest/logs)"
exit 1
