# ray-env.sh — where the project's test Ray cluster lives, sourced by ray-up.sh, ray-down.sh and
# scripts/test.sh. Every port and the temporary directory are its own, none of Ray's defaults
# (GCS 6379, dashboard 8265, client server 10001, agent 52365, workers 10002-19999, /tmp/ray),
# so a Ray cluster a user runs on this host with `ray start --head` and this one run side by
# side, and neither script touches a process the other started.
TORCHX_RAY_VENV="${RAY_VENV:-/var/cache/engines/ray-venv}"
TORCHX_RAY_TEMP="${TORCHX_RAY_TEMP:-/tmp/torchx-ray}"
TORCHX_RAY_GCS_PORT="${RAY_GCS_PORT:-6390}"
TORCHX_RAY_DASHBOARD_PORT="${RAY_DASHBOARD_PORT:-8275}"
# Outside Ray's default worker range (10002-19999) and this cluster's own (20000 on).
TORCHX_RAY_CLIENT_PORT="${RAY_CLIENT_SERVER_PORT:-9201}"
# Per node i (0: the head): agent ports 52465+2i and 52466+2i, object and node managers
# 8176+2i and 8177+2i, metrics 8380+i, runtime-env agent 8390+i, workers 20000+1000i..20999+1000i.
TORCHX_RAY_DASHBOARD="127.0.0.1:$TORCHX_RAY_DASHBOARD_PORT"
# Every process of the cluster carries this in its environment (ray-up.sh sets it for `ray start`,
# whose processes, workers and job drivers inherit it): ray-down.sh stops those and no others.
TORCHX_RAY_OWNER="${TORCHX_RAY_OWNER:-ray-up:$TORCHX_RAY_TEMP}"
