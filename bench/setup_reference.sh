#!/usr/bin/env bash
# Creates the two reference TorchX installs the benchmarks compare against, each in its own
# virtual env (git-ignored): .venv-torchx-ref (PyPI `torchx`, 0.7.0: what most users have) and
# .venv-torchx-nightly (PyPI `torchx-nightly`: TorchX HEAD). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
make_ref() {  # <venv> <pip requirement>
  if [[ ! -x "$1/bin/torchx" ]]; then
    python3 -m venv "$1"
    "$1/bin/pip" install -q "$2"
  fi
  # The kubernetes client TorchX's kubernetes scheduler imports (its `kubernetes` extra).
  "$1/bin/python" -c "import kubernetes" 2>/dev/null || "$1/bin/pip" install -q kubernetes
  "$1/bin/python" -c "import torchx; print('$1:', torchx.__version__)"
}
make_ref .venv-torchx-ref torchx
make_ref .venv-torchx-nightly torchx-nightly
