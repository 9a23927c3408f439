#!/usr/bin/env bash
# The README's main command: installs what is missing (build tools, libraries, PyTorch CPU),
# builds the release CLI, and runs a real PyTorch DDP job (2 nodes x 2 processes, gloo on CPU)
# through the launcher on the local scheduler, then shows its status (with each node's CPU and
# memory, sampled every second) and logs.
set -euo pipefail
cd "$(dirname "$0")/.."
TORCHX_WITH_DEV_TOOLS=0 TORCHX_WITH_BROWSER=0 TORCHX_WITH_KFP=0 bash scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release
TORCHX=build/release/cli/torchx
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
echo "+ torchx run --wait -s local_cwd -cfg resource_interval=1 dist.torchrun -j 2x2 --script examples/ddp/train.py"
handle=$("$TORCHX" run --wait -s local_cwd -cfg resource_interval=1 dist.torchrun -j 2x2 --rdzv_port "$port" \
  --script examples/ddp/train.py | head -1)
echo "+ torchx status --resources $handle"
"$TORCHX" status --resources "$handle"
echo "+ torchx log --regex 'rank=|trained' $handle"
"$TORCHX" log --regex 'rank=|trained' "$handle"
