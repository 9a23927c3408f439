#!/usr/bin/env bash
# ray-down.sh — stops the Ray cluster ray-up.sh started (every Ray process on this host).
set -euo pipefail
VENV="${RAY_VENV:-/var/cache/engines/ray-venv}"
[ -x "$VENV/bin/ray" ] || exit 0
"$VENV/bin/ray" stop --force >/dev/null 2>&1 || true
echo "[ray-down] stopped" >&2
