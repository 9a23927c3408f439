#!/usr/bin/env bash
# The README's main command: installs what is missing (build tools and libraries from apt; PyTorch
# CPU and the package's build and run dependencies into the project's venv, .venv), builds the
# package once (`pip install .`, whose build tree build/python-* a later `pip install .` reuses),
# and runs a real PyTorch DDP job (2 nodes x 2 processes, gloo on CPU) through the launcher it
# installed on the local scheduler, then shows its status (with each node's CPU and memory, sampled
# every second) and logs. Nothing is installed into the system interpreter.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)
TORCHX_WITH_DEV_TOOLS=0 TORCHX_WITH_BROWSER=0 TORCHX_WITH_KFP=0 TORCHX_WITH_TESTS=0 TORCHX_WITH_AX=0 \
  TORCHX_WITH_PJRT=0 bash scripts/install-deps.sh
# shellcheck source=venv.sh
. scripts/venv.sh
echo "run-example: what was missing installed in $(($(date +%s) - started))s" >&2

# One build: CMake's [n/N] progress on the terminal, pip's whole output in build/pip-install.log.
started=$(date +%s)
mkdir -p build
set +e
python3 -m pip install -v --no-build-isolation . 2>&1 | tee build/pip-install.log |
  grep --line-buffered -E '^ *\[[0-9]+/[0-9]+\] |^Successfully installed'
built=${PIPESTATUS[0]}
set -e
if [[ $built -ne 0 ]]; then
  tail -60 build/pip-install.log >&2
  echo "run-example: the build failed (all of its output: build/pip-install.log)" >&2
  exit 1
fi
echo "run-example: built and installed torchx into $TORCHX_VENV in $(($(date +%s) - started))s" >&2

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
echo "+ torchx run --wait -s local_cwd -cfg resource_interval=1 dist.torchrun -j 2x2 --script examples/ddp/train.py"
handle=$(torchx run --wait -s local_cwd -cfg resource_interval=1 dist.torchrun -j 2x2 --rdzv_port "$port" \
  --script examples/ddp/train.py | head -1)
echo "+ torchx status --resources $handle"
torchx status --resources "$handle"
echo "+ torchx log --regex 'rank=|trained' $handle"
torchx log --regex 'rank=|trained' "$handle"
echo "run-example: done; \`. $TORCHX_VENV/bin/activate\` puts this torchx on your PATH" >&2
