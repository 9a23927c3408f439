#!/usr/bin/env bash
# Creates the virtual envs (git-ignored) the benchmarks run Python in, every one with the same
# packages a PyTorch user has (torch==2.13.0, the CPU build, and numpy), so that the import and
# run() rows compare like with like (issue 39):
#   .venv-torchx-ref      PyPI `torchx` (0.7.0: what most users have)
#   .venv-torchx-nightly  PyPI `torchx-nightly` (TorchX HEAD)
#   .venv-bench-torch     ours: bench/bench.py links the package `pip install .` installed for the
#                         interpreter that runs it into this env before each run
# Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
user_packages() {  # <venv>: torch and numpy, as in a PyTorch user's env
  "$1/bin/python" -c "import torch, numpy" 2>/dev/null || "$1/bin/pip" install -q torch==2.13.0 numpy
}
make_ref() {  # <venv> <pip requirement>
  if [[ ! -x "$1/bin/torchx" ]]; then
    python3 -m venv "$1"
    "$1/bin/pip" install -q "$2"
  fi
  # The kubernetes client TorchX's kubernetes scheduler imports (its `kubernetes` extra).
  "$1/bin/python" -c "import kubernetes" 2>/dev/null || "$1/bin/pip" install -q kubernetes
  user_packages "$1"
  "$1/bin/python" -c "import torchx; print('$1:', torchx.__version__)"
}
make_ref .venv-torchx-ref torchx
make_ref .venv-torchx-nightly torchx-nightly
# Ours: the package's own dependencies (pyproject.toml) beside torch; the package itself is linked in.
[[ -x .venv-bench-torch/bin/python ]] || python3 -m venv .venv-bench-torch
user_packages .venv-bench-torch
.venv-bench-torch/bin/python -c "import docstring_parser, yaml, fsspec" 2>/dev/null ||
  .venv-bench-torch/bin/pip install -q docstring-parser pyyaml fsspec
echo ".venv-bench-torch: torch $(.venv-bench-torch/bin/python -c 'import torch; print(torch.__version__)')"
