#!/usr/bin/env bash
# Creates the reference TorchX in its own virtual env (.venv-torchx-ref, git-ignored) for the
# side-by-side benchmarks. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ! -x .venv-torchx-ref/bin/torchx ]]; then
  python3 -m venv .venv-torchx-ref
  .venv-torchx-ref/bin/pip install -q torchx
fi
# The kubernetes client TorchX's kubernetes scheduler imports (its `kubernetes` extra).
.venv-torchx-ref/bin/python -c "import kubernetes" 2>/dev/null || .venv-torchx-ref/bin/pip install -q "torchx[kubernetes]"
.venv-torchx-ref/bin/python -c "import torchx; print('reference torchx', torchx.__version__)"
