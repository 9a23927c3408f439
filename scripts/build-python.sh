#!/usr/bin/env bash
# Builds and installs the Python package `torchx` (the extension, the CLI and the supervisor come
# with it) from this checkout: `pip install .` through scikit-build-core, reusing the build tree in
# build/python-* so that a rebuild only compiles what changed.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-build-isolation .
python3 -c "import torchx._torchx, torchx.runner" # fails loudly if the install is unusable
echo "build-python: installed torchx $(python3 -c 'import torchx; print(torchx.__version__)') into $(python3 -c 'import sys; print(sys.prefix)')" >&2
